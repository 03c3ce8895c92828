import Foundation
import Testing

/// `--attach` says what is wrong with what it was given.
@Suite struct AttachErrorTests {
    @Test func attachingSomethingThatIsNotAFileSaysSo() throws {
        let box = try Sandbox()
        try box.makeVault()
        let r = try box.quire(["add", "Journal.quire", "text", "--attach", "/dev/zero"])
        #expect(r.status == 1)
        #expect(r.stderr.contains("cannot attach /dev/zero: it is not a regular file"), "\(r)")
        #expect(!r.stderr.contains("no such file"), "\(r)")
        let missing = try box.quire(["add", "Journal.quire", "text", "--attach", "nothing.jpg"])
        #expect(missing.stderr.contains("cannot attach nothing.jpg: no such file"), "\(missing)")
    }
}
