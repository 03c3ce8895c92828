import Foundation
@_spi(Format) import Quire
import QuireDayOne
@_spi(Format) import QuireImport
import Testing

/// Makes an unzipped export in `dir`: the case's JSON files, and media files
/// (path → content) standing for the files the case's export would hold.
func makeExport(_ dir: TemporaryDirectory, jsons: [String], media: [String] = [], extra: [String: String] = [:]) throws -> String {
    let root = dir.file("export")
    try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
    for j in jsons {
        try FileManager.default.copyItem(atPath: j, toPath: root + "/" + URL(fileURLWithPath: j).lastPathComponent)
    }
    for (i, m) in (media.map { ($0, "media file \($0)\n") } + extra.map { ($0.key, $0.value) }).enumerated() {
        let path = root + "/" + m.0
        try FileManager.default.createDirectory(atPath: URL(fileURLWithPath: path).deletingLastPathComponent().path, withIntermediateDirectories: true)
        try Data((m.1 + String(repeating: "x", count: i)).utf8).write(to: URL(fileURLWithPath: path))
    }
    return root
}

func hex(_ b: [UInt8]) -> String { b.map { String(format: "%02x", $0) }.joined() }

/// Every case in `corpus/dayone-cases/`, each asserting what its `.md` says.
@Suite struct DayOneCaseTests {
    @Test func case01EscapedPunctuation() throws {
        let dir = TemporaryDirectory()
        let vault = try makeVault(dir)
        let report = try importJournal(.dayOne, from: casesFolder + "/01-escaped-punctuation.json", into: vault)
        #expect(report.entriesAdded == 1)
        let e = try #require(try entriesByUUID(vault)["00C0FFEE000000000000000000000001"])
        // The body keeps only the escapes that change rendering: list number, bullet and # at a line start, brackets.
        #expect(e.body.text == "# Test of Special-Characters\n\nTest entry of special characters (and words in parentheses). An e-reader for 30-minutes!\n\n1\\. not a list\n\\* not a bullet\n\\#notatag and a path C:\\Users\\me and a literal back\\slash.\n\nPrice: $5 + tax = 100% \\[approx\\].")
        // The plain text (search, titles) has none.
        #expect(MarkdownEscapes.remove(e.body.text, keepNeeded: false).text == "# Test of Special-Characters\n\nTest entry of special characters (and words in parentheses). An e-reader for 30-minutes!\n\n1. not a list\n* not a bullet\n#notatag and a path C:\\Users\\me and a literal back\\slash.\n\nPrice: $5 + tax = 100% [approx].")
        // `#notatag` is not a tag: tags come only from tags[] (none here).
        #expect(e.body.tags == [])
        // Literal backslashes survive (never "strip every backslash").
        #expect(e.body.text.contains("C:\\Users\\me"))
    }

    @Test func escapesNeverInsideCode() {
        let input = "Run `a\\.b` and\n\n```\nx\\.y\n```\n\n    indented\\.code\n\nbut not\\. here \\\\\\. \\(ok\\)"
        let (text, at) = MarkdownEscapes.remove(input)
        #expect(text == "Run `a\\.b` and\n\n```\nx\\.y\n```\n\n    indented\\.code\n\nbut not. here \\\\. (ok)")
        #expect(MarkdownEscapes.restore(text, at: at) == input)
    }

    @Test func androidExportsAreNotUnescaped() throws {
        let dir = TemporaryDirectory()
        let vault = try makeVault(dir)
        _ = try importJournal(.dayOne, from: samplesFolder + "/marph91__jimmy-test-data__Tagebuch.json", into: vault)
        let originals = try foundationEntries(samplesFolder + "/marph91__jimmy-test-data__Tagebuch.json")
        let byUUID = try entriesByUUID(vault)
        for o in originals {
            // Not one backslash removed (links between entries become quire-entry:// and come back).
            let uuid = o["uuid"] as! String
            let back = DayOneMapping.dayOneEntry(id: DayOneMapping.entryID(forUUID: uuid), body: byUUID[uuid]!.body)["text"]?.stringValue
            #expect(back == (o["text"] as? String), "\(uuid)")
            #expect(byUUID[uuid]!.body.text.filter { $0 == "\\" }.count == (o["text"] as? String ?? "").filter { $0 == "\\" }.count)
        }
    }

    @Test func case03MissingOrEmptyText() throws {
        let dir = TemporaryDirectory()
        let root = try makeExport(dir, jsons: [casesFolder + "/03-missing-or-empty-text.json"], media: ["photos/dead0000000000000000000000000005.jpeg"])
        let vault = try makeVault(dir)
        let report = try importJournal(.dayOne, from: root, into: vault)
        #expect(report.entriesAdded == 3)
        #expect(report.skipped == [])
        let byUUID = try entriesByUUID(vault)
        #expect(byUUID["00C0FFEE000000000000000000000003"]!.body.text == "")
        #expect(byUUID["00C0FFEE000000000000000000000004"]!.body.text == "")
        let photo = byUUID["00C0FFEE000000000000000000000005"]!.body
        #expect(photo.attachments.count == 1)
        #expect(photo.attachments[0].id == Array(repeating: 0, count: 0) + [0xFE, 0xED] + Array(repeating: 0, count: 13) + [0x05])
        #expect(photo.text == "![](quire-attachment://feed0000000000000000000000000005)")
        // No title baked into the body.
        #expect(!photo.text.contains("Untitled"))
    }

    @Test func case05MediaMetadataGaps() throws {
        let dir = TemporaryDirectory()
        let root = try makeExport(dir, jsons: [casesFolder + "/05-media-metadata-gaps.json"], media: [
            "photos/dead0000000000000000000000000007.jpeg", "audios/dead000000000000000000000000000a.m4a",
            "pdfs/dead000000000000000000000000000b.pdf",
        ])
        let vault = try makeVault(dir)
        let report = try importJournal(.dayOne, from: root, into: vault)
        #expect(report.entriesAdded == 1)
        #expect(report.attachmentsStored == 3)
        // The video without md5 and the photo whose file is missing: reported, not fatal.
        #expect(report.attachmentsMissing == 2)
        #expect(report.skipped == [])
        #expect(report.missingMedia.map(\.item) == [
            "05-media-metadata-gaps.json: entry 00C0FFEE000000000000000000000007: photos[1] FEED0000000000000000000000000009",
            "05-media-metadata-gaps.json: entry 00C0FFEE000000000000000000000007: videos[0] FEED0000000000000000000000000008",
        ])
        #expect(report.missingMedia[0].reason.contains("photos/dead0000000000000000000000000009.*"))
        let body = try entriesByUUID(vault)["00C0FFEE000000000000000000000007"]!.body
        // Photo without type found by md5 whatever the extension; audio "aac" is the .m4a; PDF without type.
        #expect(body.attachments.map(\.mediaType) == ["image/jpeg", "audio/mp4", "application/pdf"])
        #expect(body.attachments.map(\.fileName) == ["dead0000000000000000000000000007.jpeg", "dead000000000000000000000000000a.m4a", "dead000000000000000000000000000b.pdf"])
        // Attached links rewritten; links to missing media kept as they were, visible in the text.
        #expect(body.text == "Photo without type ![](quire-attachment://feed0000000000000000000000000007)\n\nVideo without md5 ![](dayone-moment:/video/FEED0000000000000000000000000008)\n\nPhoto whose file is missing ![](dayone-moment://FEED0000000000000000000000000009)\n\nAudio ![](quire-attachment://feed000000000000000000000000000a)\n\nPDF ![](quire-attachment://feed000000000000000000000000000b)")
    }

    @Test func case07UnreferencedMediaAndOrder() throws {
        let dir = TemporaryDirectory()
        let root = try makeExport(dir, jsons: [casesFolder + "/07-unreferenced-media-and-order.json"], media: [
            "photos/dead000000000000000000000000000f.jpeg", "photos/dead0000000000000000000000000010.jpeg",
            "photos/dead0000000000000000000000000011.jpeg", "videos/dead0000000000000000000000000012.mov",
        ])
        let vault = try makeVault(dir)
        let report = try importJournal(.dayOne, from: root, into: vault)
        #expect(report.attachmentsStored == 4)
        #expect(report.unreferencedAttachments == 3)
        let body = try entriesByUUID(vault)["00C0FFEE00000000000000000000000F"]!.body
        // All four kept: photos by orderInEntry (0, 1, 2), then the video.
        #expect(body.attachments.map { hex($0.id) } == [
            "feed0000000000000000000000000010", "feed0000000000000000000000000011", "feed000000000000000000000000000f",
            "feed0000000000000000000000000012",
        ])
        #expect(body.attachments.last!.mediaType == "video/quicktime")
        #expect(body.text == "Text mentions only one photo ![](quire-attachment://feed0000000000000000000000000010)")
    }

    @Test func case08AllDayEntries() throws {
        let dir = TemporaryDirectory()
        let vault = try makeVault(dir)
        _ = try importJournal(.dayOne, from: casesFolder + "/08-all-day-entries.json", into: vault)
        let byUUID = try entriesByUUID(vault)
        func date(_ suffix: String) -> (String, Bool, EntryBody) {
            let b = byUUID["00C0FFEE0000000000000000000000" + suffix]!.body
            return (ImportDates.calendarDate(milliseconds: b.createdMilliseconds, offsetSeconds: b.utcOffsetSeconds!), b.isAllDay, b)
        }
        #expect(date("13").0 == "2024-04-17" && date("13").1)
        #expect(date("14").0 == "2024-03-16" && date("14").1)
        #expect(date("15").0 == "2024-01-11" && date("15").1)
        let notAllDay = date("16").2
        #expect(!notAllDay.isAllDay)
        #expect(notAllDay.utcOffsetSeconds == Int64(13 * 3600))
        #expect(ImportDates.localDateTime(milliseconds: notAllDay.createdMilliseconds, offsetSeconds: 13 * 3600) == "2024-01-11 00:00:00")
        // The original instant is kept for the round trip.
        #expect(date("15").2.createdMilliseconds == ImportDates.milliseconds(iso: "2024-01-10T11:00:00Z"))
        #expect(date("15").2.timeZoneIdentifier == "Pacific/Auckland")
    }

    @Test func case11DuplicateUUID() throws {
        let dir = TemporaryDirectory()
        let vault = try makeVault(dir)
        let path = casesFolder + "/11-duplicate-uuid.json"
        let first = try importJournal(.dayOne, from: path, into: vault)
        #expect(first.entriesAdded == 1)
        #expect(first.duplicatesMerged == 1)
        let entries = try vault.entries()
        #expect(entries.count == 1)
        #expect(entries[0].body.text == "Final version")
        #expect(entries[0].revisionCount == 1)
        let again = try importJournal(.dayOne, from: path, into: vault)
        #expect(again.entriesAdded == 0)
        #expect(again.entriesUpdated == 0)
        #expect(try vault.entries()[0].revisionCount == 1)
    }

    @Test func case13MultiJournal() throws {
        let dir = TemporaryDirectory()
        let folder = casesFolder + "/13-multi-journal"
        let root = try makeExport(dir, jsons: [folder + "/Journal.json", folder + "/Journal 2.json", folder + "/README.md"],
                                  media: ["photos/dead0000000000000000000000000024.jpeg"],
                                  extra: ["__MACOSX/._Journal.json": "junk", "._Journal 2.json": "junk"])
        let vault = try makeVault(dir)
        let report = try importJournal(.dayOne, from: root, into: vault)
        #expect(Set(report.journals) == ["Journal", "Journal 2"])
        #expect(report.journals.count == 2)
        #expect(report.entriesAdded == 2)
        #expect(report.attachmentsStored == 1)
        #expect(report.skipped == [])
        let byUUID = try entriesByUUID(vault)
        let one = byUUID["00C0FFEE000000000000000000000024"]!.body, two = byUUID["00C0FFEE000000000000000000000025"]!.body
        #expect(one.journal == "Journal")
        #expect(two.journal == "Journal 2")
        #expect(one.attachments[0].blob == two.attachments[0].blob)
        #expect(one.attachments[0].id != two.attachments[0].id)
    }

    @Test func case13RefusesTraversalInAZip() throws {
        // Only unsafe names: nothing of Day One is left, so the import is refused.
        let dir = TemporaryDirectory()
        let vault = try makeVault(dir)
        let path = importFixtures + "/zip/unsafe-names.zip"
        #expect(throws: ImportError.unreadableSource(path: path, reason: "no Day One journal JSON found in \(path): expected a Day One export (a ZIP or its folder) with <Journal>.json files holding an \"entries\" array at its top level")) {
            _ = try importJournal(.dayOne, from: path, into: vault)
        }
        #expect(try vault.entries().isEmpty)
    }

    @Test func case15UnicodeOddities() throws {
        let dir = TemporaryDirectory()
        let vault = try makeVault(dir)
        let path = casesFolder + "/15-unicode-oddities.json"
        _ = try importJournal(.dayOne, from: path, into: vault)
        let o = try foundationEntries(path)[0]
        let body = try entriesByUUID(vault)["00C0FFEE000000000000000000000027"]!.body
        // Byte for byte: no NFC normalisation, U+200B, U+FFFC, U+2028 and U+20BB7 kept.
        #expect(Array(body.text.utf8) == Array((o["text"] as! String).utf8))
        #expect(body.text.unicodeScalars.contains("\u{200B}") && body.text.unicodeScalars.contains("\u{FFFC}") && body.text.unicodeScalars.contains("\u{2028}"))
        #expect(body.text.unicodeScalars.contains("\u{20BB7}"))
        // Both spellings of café kept as given (matching them is a search concern).
        #expect(body.tags.map { Array($0.utf8) } == [Array("café".utf8), Array("Cafe\u{301}".utf8), Array("🌋".utf8)])
        // The device name with U+F8FF kept in extra.
        let device = DayOneMapping.dayOneEntry(id: DayOneMapping.entryID(forUUID: "00C0FFEE000000000000000000000027"), body: body)["creationDevice"]
        #expect(device == .string("User’s \u{F8FF} (iPhone X)"))
    }

    @Test func case17OldSchema() throws {
        let dir = TemporaryDirectory()
        let root = try makeExport(dir, jsons: [casesFolder + "/17-old-2016-2017-schema.json"], media: [
            "photos/dead000000000000000000000000002b.jpeg", "photos/dead000000000000000000000000002c.jpeg",
        ])
        let vault = try makeVault(dir)
        let report = try importJournal(.dayOne, from: root, into: vault)
        #expect(report.entriesAdded == 2)
        #expect(report.attachmentsStored == 2)
        let byUUID = try entriesByUUID(vault)
        let one = byUUID["00C0FFEE00000000000000000000002B"]!.body
        #expect(one.modifiedMilliseconds == nil)  // modified = created when modifiedDate is absent
        #expect(one.isStarred)
        #expect(one.text == "Today is February 9th.\n\n![](quire-attachment://feed000000000000000000000000002b)")
        #expect(one.attachments[0].mediaType == "image/jpeg")  // no type: found as photos/<md5>.jpeg
        let two = byUUID["00C0FFEE00000000000000000000002C"]!.body
        #expect(ImportDates.localDateTime(milliseconds: two.createdMilliseconds, offsetSeconds: two.utcOffsetSeconds!) == "2017-07-08 12:00:00")
        #expect(two.utcOffsetSeconds == Int64(8 * 3600))
        // "(null)", "" and epoch-zero dates never become Quire values; they are kept only as the export had them.
        #expect(two.weather == nil)
        let media = DayOneMapping.dayOneEntry(id: DayOneMapping.entryID(forUUID: "00C0FFEE00000000000000000000002C"), body: two)["photos"]
        #expect(media?.arrayValue?.first?.objectValue?["fnumber"] == .string("(null)"))
        #expect(media?.arrayValue?.first?.objectValue?["weather"]?.objectValue?["sunriseDate"] == .string("1970-01-01T00:00:00Z"))
    }
}
