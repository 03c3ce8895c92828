import Foundation
@_spi(Format) import Quire
import QuireDayOne
@_spi(Format) import QuireExport
@_spi(Format) import QuireImport
import QuireZip
import Testing

/// F2 — links between entries (`Tests/Fixtures/import/dayone-families/F2-*.md`).
@Suite struct DayOneEntryLinkTests {

    static func f2Vault(_ dir: TemporaryDirectory) throws -> (Vault, ImportReport) {
        let folder = familiesFolder + "/F2-links-between-entries"
        let root = try makeExport(dir, jsons: [folder + "/Journal.json", folder + "/Travel.json"])
        let vault = try makeVault(dir)
        return (vault, try importJournal(.dayOne, from: root, into: vault))
    }

    static func hexID(_ family: Int, _ n: Int) -> String { uuid(family, n).lowercased() }

    @Test func f2LinksBetweenEntriesBecomeQuireEntryLinks() throws {
        let dir = TemporaryDirectory()
        let (vault, report) = try Self.f2Vault(dir)
        #expect(report.entriesAdded == 4)
        let b = try bodies(vault)
        #expect(b[uuid(2, 1)]?.text == "See [Oct 12, 2016 at 6:38 PM](quire-entry://\(Self.hexID(2, 2))) and the older form <quire-entry://\(Self.hexID(2, 3))> and [a lost one](dayone2://view?entryId=\(uuid(2, 0xDEAD))).\n\nThe trip: [Lisbon](quire-entry://\(Self.hexID(2, 4)))")
        #expect(b[uuid(2, 3)]?.text == "Target three, linking back [to the first](quire-entry://\(Self.hexID(2, 1))).")
        #expect(b[uuid(2, 4)]?.text == "In Lisbon. Back home: [the first entry](quire-entry://\(Self.hexID(2, 1)))")
        // The link whose target is nowhere: kept, and said.
        #expect(report.notes.map(\.item) == ["Journal.json: entry \(uuid(2, 1)): link dayone2://view?entryId=\(uuid(2, 0xDEAD))"])
        #expect(report.notes.first?.reason.contains("not in the export") == true)
        for file in ["Journal.json", "Travel.json"] {
            #expect(try roundTripDifferences(familiesFolder + "/F2-links-between-entries/" + file, vault: vault) == [], "\(file)")
        }
        // A later import that links to an entry already in the vault resolves it too.
        let later = dir.file("later.json")
        try Data("""
            {"metadata": {"version": "1.0"}, "entries": [{"uuid": "0FA20000000000000000000000000099", "creationDate": "2017-01-01T00:00:00Z",
            "timeZone": "UTC", "text": "Back to [the trip](dayone2://view?entryId=\(uuid(2, 4)))"}]}
            """.utf8).write(to: URL(fileURLWithPath: later))
        _ = try importJournal(.dayOne, from: later, into: vault)
        #expect(try bodies(vault)[uuid(2, 0x99)]?.text == "Back to [the trip](quire-entry://\(Self.hexID(2, 4)))")
    }

    @Test func f2EveryExportRendersEntryLinks() throws {
        let dir = TemporaryDirectory()
        let (vault, _) = try Self.f2Vault(dir)
        let two = Self.hexID(2, 2), three = Self.hexID(2, 3), four = Self.hexID(2, 4)
        // HTML: in-document links; a link to no exported entry shows its text only.
        _ = try exportJournal(vault, format: .html, to: dir.file("out.html"), options: ExportOptions(locale: "en_GB"))
        let html = try String(contentsOfFile: dir.file("out.html"), encoding: .utf8)
        #expect(html.contains("See <a href=\"#e\(two)\">Oct 12, 2016 at 6:38 PM</a> and the older form <a href=\"#e\(three)\">linked entry</a> and a lost one."))
        #expect(html.contains("<article id=\"e\(two)\">"))
        // Filtered: the target is not in this export, so no dangling link.
        _ = try exportJournal(vault, format: .html, to: dir.file("one.html"), filter: ExportFilter(journals: ["Travel"]))
        let one = try String(contentsOfFile: dir.file("one.html"), encoding: .utf8)
        #expect(one.contains("Back home: the first entry</p>"))
        // EPUB: links to the chapter file and the entry's article.
        _ = try exportJournal(vault, format: .epub, to: dir.file("out.epub"))
        let chapter = String(decoding: try zipMember(dir.file("out.epub"), "OEBPS/text/c2016-10.xhtml"), as: UTF8.self)
        #expect(chapter.contains("<a href=\"c2016-10.xhtml#e\(two)\">Oct 12, 2016 at 6:38 PM</a>"))
        #expect(chapter.contains("<a href=\"c2016-11.xhtml#e\(four)\">Lisbon</a>"))
        // Markdown: a relative link to the entry's file, read back as the entry link.
        _ = try exportJournal(vault, format: .markdown, to: dir.file("md"))
        let first = try String(contentsOfFile: dir.file("md/2016/10/2016-10-12-see-oct-12-2016-at-6.md"), encoding: .utf8)
        #expect(first.contains("[Oct 12, 2016 at 6:38 PM](../../2016/10/2016-10-13-target-two.md)"))
        #expect(first.contains("[Lisbon](../../2016/11/2016-11-01-in-lisbon-back-home-the-first.md)"))
        #expect(first.contains("<../../2016/10/2016-10-14-target-three-linking-back-to-the.md>"))
        let copy = try makeVault(dir, name: "copy.quire")
        _ = try importJournal(.markdown, from: dir.file("md"), into: copy)
        #expect(try bodies(copy)[uuid(2, 1)]?.text == (try bodies(vault))[uuid(2, 1)]?.text)
        // Day One: dayone2:// again, each link exactly as written.
        _ = try exportJournal(vault, format: .dayOne, to: dir.file("out.zip"))
        let journal = try JSONValue.parse(try zipMember(dir.file("out.zip"), "Journal.json"))
        let text = journal.objectValue?["entries"]?.arrayValue?.first?.objectValue?["text"]?.stringValue
        #expect(text == "See [Oct 12, 2016 at 6:38 PM](dayone2://view?entryId=\(uuid(2, 2))) and the older form dayone://view?entryId=\(uuid(2, 3)) and [a lost one](dayone2://view?entryId=\(uuid(2, 0xDEAD)))\\.\n\nThe trip: [Lisbon](dayone2://view?entryId=\(uuid(2, 4)))")
    }
}
