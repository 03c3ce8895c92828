import Foundation
@_spi(Format) import Quire
import QuireSystem
import Testing

/// Values a file carries never trap a command (issue 15).
@Suite struct ContentCrashTests {
    @Test func anOutOfRangeOffsetIsRefusedOnImportAndCannotCrashAnExport() throws {
        let box = try Sandbox()
        try box.makeVault()
        _ = try box.add("an entry", ["--date", "2026-01-01"])
        _ = try box.add("a fine entry", ["--date", "2026-01-02"])
        #expect(try box.quire(["export", "Journal.quire", "--format", "md", "-o", "md"]).status == 0)
        let file = try #require(FileManager.default.enumerator(atPath: box.path("md"))?.compactMap { $0 as? String }.first { $0.hasSuffix("an-entry.md") })
        let text = try String(contentsOfFile: box.path("md/" + file), encoding: .utf8)
        try text.replacingOccurrences(of: "utcOffset: 0\n", with: "utcOffset: -9223372036854775808\n").replacingOccurrences(of: "an entry", with: "hostile")
            .write(toFile: box.path("md/" + file), atomically: true, encoding: .utf8)
        #expect(try box.quire(["init", "Other.quire", "--recovery-key-file", "other-recovery.txt"]).status == 0)
        _ = try box.add("a normal entry", vault: "Other.quire")
        let imported = try box.quire(["import", "markdown", "md", "Other.quire"])
        #expect(imported.status == 0, "\(imported)")
        #expect(imported.stdout.contains("entries: 1 added"), "\(imported)")
        #expect(imported.stdout.contains("utcOffset -9223372036854775808 is not an offset from UTC"), "\(imported)")
        // A holder of an epoch key writes such an entry directly: every reader
        // reads the offset as absent (records.md §3.3), so no export traps.
        let code = try String(contentsOfFile: box.path("other-recovery.txt"), encoding: .utf8).trimmingCharacters(in: .newlines)
        let vault = try Vault.open(at: box.path("Other.quire"), credential: .recoveryKey(try RecoveryKey(code: code)))
        try vault.add(EntryBody(created: 1_767_225_600_000, timeZone: "Europe/London", utcOffsetSeconds: Int64.min, text: "written directly"))
        for format in ["md", "epub", "pdf", "html", "json"] {
            let r = try box.quire(["export", "Other.quire", "--format", format, "-o", "out-\(format)"])
            #expect(r.status == 0, "\(format): \(r)")
        }
    }
}
