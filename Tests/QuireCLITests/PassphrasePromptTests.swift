import Foundation
import Testing
import QuireTestSupport

/// What may be typed at the unlock prompt, and what an error may show of it.
@Suite(.tags(.slow), .skippedByMakeCheck) struct PassphrasePromptTests {
    @Test func aPassphraseOf56LettersAndDigitsCanBeTypedAndNoSecretIsEchoedInErrors() throws {
        let box = try Sandbox()
        let phrase = "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb3dEf6hIj9kLm2nOp5qRs8t"
        #expect(phrase.count == 56)
        try box.write("pass.txt", phrase + "\n")
        let made = try box.quire(["init", "Journal.quire", "--passphrase-file", "pass.txt", "--recovery-key-file", "recovery.txt"])
        #expect(made.status == 0, "\(made)")
        _ = try box.add("opened by the long passphrase")
        let r = try box.onTerminal(["list", "Journal.quire"], answers: [phrase], env: ["QUIRE_HOME": box.path("new-device")])
        #expect(r.exit == 0, "\(r.output)")
        #expect(r.output.contains("opened by the long passphrase"), "\(r.output)")
        // A mistyped secret of the same shape: an error that quotes none of it.
        let typo = "U" + String(phrase.dropFirst())
        let wrong = try box.onTerminal(["list", "Journal.quire"], answers: [typo], env: ["QUIRE_HOME": box.path("new-device")])
        #expect(wrong.exit == 1, "\(wrong.output)")
        #expect(wrong.output.contains("quire: error: "), "\(wrong.output)")
        #expect(!wrong.output.contains("\"U\""), "\(wrong.output)")
        #expect(!wrong.output.contains("U+0055"), "\(wrong.output)")
        // A recovery key typed with a slip: said without quoting a character.
        let code = try PromptSafetyTests.recoveryCode(box)
        let slip = String(code.dropLast()) + "U"
        let bad = try box.onTerminal(["list", "Journal.quire"], answers: [slip], env: ["QUIRE_HOME": box.path("new-device")])
        #expect(bad.exit == 1, "\(bad.output)")
        #expect(!bad.output.contains("U+0055") && !bad.output.contains("\"U\""), "\(bad.output)")
    }
}
