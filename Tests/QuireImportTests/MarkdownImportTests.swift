import Foundation
@_spi(Format) import Quire
@_spi(Format) import QuireImport
import Testing

/// The Markdown export's golden output (`Tests/Fixtures/import/markdown/sample-markdown.txt`,
/// from the export's tests: `==> path` then the file's bytes and a newline),
/// unpacked into a folder with its one media file.
func unpackMarkdownSample(_ dir: TemporaryDirectory) throws -> (root: String, files: [String: String]) {
    let combined = try String(contentsOfFile: importFixtures + "/markdown/sample-markdown.txt", encoding: .utf8)
    let root = dir.file("md")
    var files: [String: String] = [:]
    let parts = ("\n" + combined).components(separatedBy: "\n==> ").dropFirst()
    for (k, part) in parts.enumerated() {
        let nl = part.firstIndex(of: "\n")!
        let name = String(part[..<nl])
        var content = String(part[part.index(after: nl)...])
        if k == parts.count - 1 { content.removeLast() }  // the newline after the last file
        files[name] = content
        let path = root + "/" + name
        try FileManager.default.createDirectory(atPath: URL(fileURLWithPath: path).deletingLastPathComponent().path, withIntermediateDirectories: true)
        try Data(content.utf8).write(to: URL(fileURLWithPath: path))
    }
    try FileManager.default.createDirectory(atPath: root + "/media", withIntermediateDirectories: true)
    try FileManager.default.copyItem(atPath: fixturesRoot + "/photo.jpg", toPath: root + "/media/68a36c61d19ece728eaeed81bd407372.jpg")
    return (root, files)
}

@Suite struct MarkdownImportTests {
    @Test func readsBackTheMarkdownExport() throws {
        let dir = TemporaryDirectory()
        let (root, files) = try unpackMarkdownSample(dir)
        #expect(files.count == 5)
        let vault = try makeVault(dir)
        let report = try importJournal(.markdown, from: root, into: vault)
        #expect(report.entriesAdded == 5)
        #expect(report.attachmentsStored == 1)
        #expect(report.skipped == [])
        #expect(Set(report.journals) == ["Pepys Diary", "Tolstoy Diary", "J\"&<>'"])

        let pepys = try #require(try vault.entry(EntryID(hex: "ef1d5ea5e14d6db55112f6235a9ee84f")!)).body
        #expect(pepys.createdMilliseconds == -9781696725000)
        #expect(pepys.modifiedMilliseconds == -9781692705000)
        #expect(pepys.timeZoneIdentifier == "Europe/London")
        #expect(pepys.utcOffsetSeconds == nil)
        #expect(pepys.tags == ["1660", "church"])
        #expect(pepys.moodRawValue == 4)
        #expect(pepys.isStarred && !pepys.isPinned && !pepys.isAllDay)
        #expect(pepys.location == Location(latitude: 51.5098, longitude: -0.0796, placeName: "Seething Lane", locality: "London", country: "England"))
        #expect(pepys.weather == Weather(temperatureCelsius: -1.5, conditions: "Frost"))
        #expect(pepys.attachments.count == 1)
        let ref = pepys.attachments[0]
        #expect(ref.id == [1, 2, 3, 4])
        #expect(ref.mediaType == "image/jpeg")
        #expect(ref.fileName == "cover <1>.jpg")
        #expect(ref.extra == CBORMap(text: [("md5", .text("abc"))]))
        #expect(try vault.openAttachment(ref.blob).readAll() == Array(try Data(contentsOf: URL(fileURLWithPath: fixturesRoot + "/photo.jpg"))))
        // The media path in the text is the attachment link again.
        #expect(pepys.text.contains("![The portrait](quire-attachment://01020304)"))
        #expect(!pepys.text.contains("../../media/"))
        // Every CBOR shape of §3.4 read back.
        #expect(pepys.extra[text: "pi"] == .double(3.141592653589793))
        #expect(pepys.extra[text: "neg"] == .negative(41))
        #expect(pepys.extra[text: "raw"] == .bytes([0, 255, 16]))
        #expect(pepys.extra[text: "count"] == .unsigned(UInt64.max))
        #expect(pepys.extra[text: "whole"] == .double(2.0))
        #expect(pepys.extra[text: "tiny"] == .double(1e-300))
        #expect(pepys.extra[text: "none"] == .null)
        #expect(pepys.extra[text: "list"] == .array([.text("a\nb"), .unsigned(1)]))
        #expect(pepys.extra[text: "nested"] == .map(CBORMap([(.unsigned(7), .text("seven")), (.text("$x"), .bool(false))])))
        #expect(pepys.extra[text: "richText"] == .text("{\"a\":1}"))

        // The text after the front matter, byte for byte, for an entry without attachments.
        let odd = try #require(try vault.entry(EntryID(hex: "3bb23be32eaad5c40b658e5e561fc02f")!)).body
        let file = files["2024/02/2024-02-29-script-alert-x-y-script-b.md"]!
        #expect(odd.text == String(file[file.range(of: "\n---\n")!.upperBound...]))
        #expect(odd.journal == "J\"&<>'")
        #expect(odd.tags == ["<tag>&\"q\"", "work"])
        #expect(odd.isAllDay && odd.isPinned)
        let tolstoy = try #require(try vault.entry(EntryID(hex: "5eec907c522a5681751f9df7d895d2fb")!)).body
        #expect(tolstoy.text == "Іюня 1. Пятигорскъ. Утромъ писалъ.")

        // Reading the folder again changes nothing.
        let again = try importJournal(.markdown, from: root, into: vault)
        #expect(again.entriesAdded == 0 && again.entriesUpdated == 0 && again.entriesUnchanged == 5 && again.attachmentsStored == 0)
    }

    @Test func refusesFilesThatAreNotQuireMarkdown() throws {
        let dir = TemporaryDirectory()
        let root = dir.file("md")
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        try "just text\n".write(toFile: root + "/plain.md", atomically: true, encoding: .utf8)
        try "---\ntitle: x\n---\nbody".write(toFile: root + "/other.md", atomically: true, encoding: .utf8)
        try "---\nquire: 1\ncreated: 1\nattachments:\n  - {id: \"01\", blob: \"abababababababababababababababababababababababababababababababab\", path: \"../../../etc/passwd\"}\nextra: {}\n---\n".write(toFile: root + "/evil.md", atomically: true, encoding: .utf8)
        let vault = try makeVault(dir)
        let report = try importJournal(.markdown, from: root, into: vault)
        // The entry whose attachment path leaves the folder is imported; the file is never read.
        #expect(report.entriesAdded == 1)
        #expect(report.attachmentsStored == 0)
        #expect(report.skipped.map(\.item).sorted() == ["evil.md: ../../../etc/passwd", "other.md", "plain.md"])
    }
}
