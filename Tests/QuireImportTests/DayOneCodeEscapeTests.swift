import Foundation
@_spi(Format) import Quire
import QuireDayOne
@_spi(Format) import QuireExport
@_spi(Format) import QuireImport
import QuireZip
import Testing

/// F4 — escapes inside code (`Tests/Fixtures/import/dayone-families/F4-*.md`).
@Suite struct DayOneCodeEscapeTests {

    @Test func f4AppleExportsUndoOneEscapingLevelInsideCode() throws {
        let dir = TemporaryDirectory()
        let vault = try makeVault(dir)
        let path = familiesFolder + "/F4-escapes-in-code.json"
        _ = try importJournal(.dayOne, from: path, into: vault)
        let b = try bodies(vault)
        #expect(b[uuid(4, 1)]?.text == "Match files with `^\\d+\\.txt$` like this.\n\n```\nC:\\Users\\me\\notes.txt\nprint(\"hi\")\n```")
        #expect(b[uuid(4, 2)]?.text == "No richText: `a\\.b` and\n\n    indented\\path.x\n\nafter.")
        // richText shows this code as exported: nothing undone there.
        #expect(b[uuid(4, 3)]?.text == "Kept as typed: `x\\.y`")
        #expect(try roundTripDifferences(path, vault: vault) == [])
    }

    @Test func f4AndroidExportsAreNeverUnescaped() throws {
        let dir = TemporaryDirectory()
        let vault = try makeVault(dir)
        let path = familiesFolder + "/F4-escapes-in-code-android.json"
        _ = try importJournal(.dayOne, from: path, into: vault)
        #expect(try bodies(vault)[uuid(4, 4)]?.text == "Regex `\\d+\\.txt` and a path C:\\temp\\.cache and 1\\. typed\n")
        #expect(try roundTripDifferences(path, vault: vault) == [])
    }

    /// Quire → Day One → Quire gives code with backslashes back.
    @Test func f4CodeRoundTripsFromQuireToo() throws {
        let dir = TemporaryDirectory()
        let vault = try makeVault(dir)
        let text = "Paths `C:\\Users\\me` and `\\d+\\.txt`:\n\n```\nprintf(\"a\\\\b\\n\");\n```\n\n    indented \\\\ code"
        try vault.add(EntryBody(created: 1_700_000_000_000, timeZone: "UTC", text: text, journal: "Notes"))
        _ = try exportJournal(vault, format: .dayOne, to: dir.file("out.zip"))
        let copy = try makeVault(dir, name: "copy.quire")
        _ = try importJournal(.dayOne, from: dir.file("out.zip"), into: copy)
        #expect(try copy.entries().map(\.body.text) == [text])
    }
}
