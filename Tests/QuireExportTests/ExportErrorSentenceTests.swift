import Foundation
import QuireExport
import Testing

/// The sentence an alert shows for an export whose output cannot be
/// written (``ExportError/cannotWrite(path:reason:)``).
@Suite struct ExportErrorSentenceTests {
    /// Each way an output cannot be written says what to do, naming the
    /// file only (third iOS trial, session 42: the sentence held the full
    /// path and the system's errno text).
    @Test func anOutputThatCannotBeWrittenSaysWhy() {
        func sentence(_ code: Int32) -> String {
            // A system call's reason, as the exporters keep it.
            let reason = "\(String(cString: strerror(code))) (errno \(code))"
            return ExportError.cannotWrite(path: "/private/var/Documents/out.pdf", reason: reason).localizedDescription
        }
        let name = "\u{201C}out.pdf\u{201D}"
        #expect(
            sentence(ENOSPC)
                == "Nothing was saved: there is not enough storage space for \(name). Free some space, or choose another place.")
        #expect(sentence(EDQUOT) == sentence(ENOSPC))
        #expect(sentence(EACCES) == "Nothing was saved: \(name) cannot be written in that folder. Choose a folder you can write to.")
        #expect(sentence(EROFS) == sentence(EACCES))
        #expect(sentence(ENOENT) == "Nothing was saved: the folder chosen for \(name) is not there. Choose a folder that exists.")
        #expect(sentence(EEXIST) == "Nothing was saved: something named \(name) is already there. Choose another name.")
        #expect(
            sentence(EIO)
                == "Nothing was saved: \(name) could not be written. Choose a folder that exists and that you can write to, with space free."
        )
        for code in [ENOSPC, EACCES, ENOENT, EEXIST, EIO] {
            #expect(!sentence(code).contains("/") && !sentence(code).contains("errno"), "\(sentence(code))")
        }
    }
}
