import Foundation
import Testing

/// What quire prints to a terminal carries no control sequences from the
/// journal or the command line; JSON stays exact.
@Suite struct TerminalSafetyTests {
    @Test func entryTextTagsAndNamesAreEscapedOnATerminal() throws {
        let box = try Sandbox()
        try box.makeVault()
        let text = "Before\u{1b}[2Jafter\u{7}\nsecond \u{202e}line"
        let id = try box.add(text, ["--date", "2026-03-01", "--tag", "t\u{1b}]0;title\u{7}", "--journal", "J\u{1b}[31m"])
        for args in [["list", "Journal.quire"], ["show", "Journal.quire", id], ["search", "Journal.quire", "before"]] {
            let r = try box.onTerminal(args, answers: [], env: ["NO_COLOR": "1"])
            #expect(r.exit == 0, "\(args): \(r.output)")
            #expect(!r.output.contains("\u{1b}"), "\(args): \(r.output.debugDescription)")
            #expect(!r.output.contains("\u{7}"), "\(args)")
            #expect(!r.output.contains("\u{202e}"), "\(args)")
            #expect(r.output.contains("Before\\u{1B}[2Jafter\\u{07}"), "\(args): \(r.output.debugDescription)")
        }
        let shown = try box.onTerminal(["show", "Journal.quire", id], answers: [], env: ["NO_COLOR": "1"])
        #expect(shown.output.contains("tags:     t\\u{1B}]0;title\\u{07}"), "\(shown.output.debugDescription)")
        #expect(shown.output.contains("second \\u{202E}line"), "\(shown.output.debugDescription)")
        // In a pipe and in JSON the text is exact.
        let json = try box.quire(["show", "Journal.quire", id, "--json"]).json()
        #expect(json["text"] as? String == text)
        #expect(try box.quire(["show", "Journal.quire", id]).stdout.contains(text))
    }

    @Test func aVaultNameInTheProgressLineIsEscaped() throws {
        let box = try Sandbox()
        let name = "J\u{1b}[2J.quire"
        #expect(try box.quire(["init", name, "--recovery-key-file", "rk.txt"]).status == 0)
        let r = try box.onTerminal(["verify", name], answers: [], env: ["NO_COLOR": "1"])
        #expect(r.exit == 0, "\(r.output)")
        #expect(r.output.contains("verifying J\\u{1B}[2J.quire"), "\(r.output.debugDescription)")
        #expect(!r.output.contains("\u{1b}[2J"), "\(r.output.debugDescription)")
    }

    @Test func aPathWithALineBreakCannotForgeAnErrorLine() throws {
        let box = try Sandbox()
        let r = try box.quire(["list", "nope\nquire: error: fake"])
        #expect(r.status == 1)
        #expect(!r.stderr.contains("\nquire: error: fake"), "\(r)")
        #expect(r.stderr.hasPrefix("quire: error: no vault at nope\\u{0A}quire: error: fake\n"), "\(r)")
        #expect(r.stderr.split(separator: "\n").count == 2, "\(r)")
    }
}
