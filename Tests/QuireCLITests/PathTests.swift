import Foundation
import Testing

/// Paths as users type them: none may crash the tool.
@Suite struct PathTests {
    @Test func oneCharacterPathsWork() throws {
        let box = try Sandbox()
        let made = try box.quire(["init", "V", "--recovery-key-file", "k", "--device-name", "Laptop"])
        #expect(made.status == 0, "\(made)")
        #expect(FileManager.default.fileExists(atPath: box.path("V")))
        #expect(try box.quire(["add", "V", "x", "--date", "2026-03-01"]).status == 0)
        let export = try box.quire(["export", "./V", "--format", "json", "-o", "o"])
        #expect(export.status == 0, "\(export)")
        #expect(FileManager.default.fileExists(atPath: box.path("o")))
        let merged = try box.quire(["merge", "V", "V", "-o", "M"])
        #expect(merged.status == 0, "\(merged)")
        let md = try box.quire(["export", "V", "--format", "md", "-o", "m"])
        #expect(md.status == 0, "\(md)")
    }

    @Test func oddPathsAreErrorsNeverCrashes() throws {
        let box = try Sandbox()
        try box.makeVault()
        for path in ["/", ".", "..", "./", "-", "~", "a/", "//", "\u{1}"] {
            for args in [["init", path], ["list", path], ["export", "Journal.quire", "--format", "md", "-o", path], ["merge", "Journal.quire", "Journal.quire", "-o", path]] {
                let r = try box.quire(args)
                #expect([0, 1, 64].contains(r.status), "\(args): \(r)")
                if r.status != 0 { #expect(r.stderr.hasPrefix("quire: error: "), "\(args): \(r)") }
            }
        }
    }
}
