import Foundation
@_spi(Format) import Quire
import QuireDayOne
@_spi(Format) import QuireImport
import Testing
import QuireTestSupport

/// The real Day One JSON exports of `corpus/dayone/` (SOURCES.md): entry
/// count and media items listed (their files were not copied, so every one
/// is reported missing and kept as metadata).
/// `unlisted`: links in the text to media the entry does not list.
let dayOneSamples: [(file: String, entries: Int, media: Int, unlisted: Int)] = [
    ("MarcDonald__obsidian-day-one-importer__Dev Journal.json", 5, 6, 0),
    ("MarcDonald__obsidian-day-one-importer__test-data.json", 4, 9, 0),
    ("bsingr__dayone2-textbundle__demo.json", 4, 1, 0),
    ("edoardob90__obsidian-day-one-importer__PDF.json", 1, 1, 0),
    ("ergebnis__day-one-to-obsidian-converter__Example.json", 54, 132, 34),
    ("gokuvinoth__Cairns__app.js-tripExportData.json", 12, 12, 0),
    ("kulapard__dayone-to-obsidian__MyJournal.json", 1, 4, 0),
    ("marph91__jimmy-test-data__Tagebuch.json", 7, 1, 1),
    ("zizyzhang__zizy-blog__import-dayone.js-dayOne.json", 7, 8, 0),
]

/// Compares every entry object of the Day One JSON at `jsonPath` with the
/// reverse mapping of the entry the vault holds; returns the differences
/// as "uuid: key" strings. Of a uuid appearing twice, the version modified
/// last is the one expected.
func roundTripDifferences(_ jsonPath: String, vault: Vault) throws -> [String] {
    let root = try JSONValue.parse(Array(try Data(contentsOf: URL(fileURLWithPath: jsonPath))))
    var expected: [String: JSONObject] = [:]
    var order: [String] = []
    for case .object(let o) in root.objectValue?["entries"]?.arrayValue ?? [] {
        let uuid = o["uuid"]!.stringValue!
        if let seen = expected[uuid], (seen["modifiedDate"]?.stringValue ?? "") > (o["modifiedDate"]?.stringValue ?? "") { continue }
        if expected[uuid] == nil { order.append(uuid) }
        expected[uuid] = o
    }
    var differences: [String] = []
    for uuid in order {
        let id = DayOneMapping.entryID(forUUID: uuid)
        guard let snapshot = try vault.entry(id) else { differences.append("\(uuid): not imported"); continue }
        let back = DayOneMapping.dayOneEntry(id: id, body: snapshot.body)
        let original = expected[uuid]!
        for key in Set(original.keys).union(back.keys) where !(original[key].map { v in back[key].map { v.isSameValue(as: $0) } ?? false } ?? false) {
            differences.append("\(uuid): \(key)")
        }
    }
    return differences
}

@Suite(.tags(.slow), .skippedByMakeCheck) struct DayOneSampleTests {
    @Test(arguments: dayOneSamples.map(\.file))
    func importsTheRealSample(_ file: String) throws {
        let expected = dayOneSamples.first { $0.file == file }!
        let dir = TemporaryDirectory()
        let vault = try makeVault(dir)
        let report = try importJournal(.dayOne, from: samplesFolder + "/" + file, into: vault)
        #expect(report.entriesAdded == expected.entries)
        #expect(try vault.entries().count == expected.entries)
        #expect(report.attachmentsMissing == expected.media)
        // Besides missing files, only links to media the entry does not list (real exports have them) are reported.
        #expect(report.skipped.filter { !$0.reason.hasPrefix("the text links to media") }.map(\.item) == [])
        #expect(report.skipped.count == expected.unlisted)
        #expect(report.missingMedia.count == expected.media)
        #expect(report.missingMedia.allSatisfy { $0.reason.hasPrefix("no file") })
        #expect(report.journals == [String(file.dropLast(5))])
        // Lossless: Day One JSON → Quire → Day One JSON gives every field back.
        #expect(try roundTripDifferences(samplesFolder + "/" + file, vault: vault) == [])
        // Importing it again adds nothing.
        let again = try importJournal(.dayOne, from: samplesFolder + "/" + file, into: vault)
        #expect(again.entriesAdded == 0 && again.entriesUpdated == 0)
        #expect(again.entriesUnchanged == expected.entries)
    }

    @Test func roundTripsEveryCase() throws {
        let cases: [(String, [String])] = [
            ("01-escaped-punctuation.json", []), ("03-missing-or-empty-text.json", ["photos/dead0000000000000000000000000005.jpeg"]),
            ("05-media-metadata-gaps.json", ["photos/dead0000000000000000000000000007.jpeg", "audios/dead000000000000000000000000000a.m4a", "pdfs/dead000000000000000000000000000b.pdf"]),
            ("07-unreferenced-media-and-order.json", ["photos/dead000000000000000000000000000f.jpeg", "photos/dead0000000000000000000000000010.jpeg", "photos/dead0000000000000000000000000011.jpeg", "videos/dead0000000000000000000000000012.mov"]),
            ("08-all-day-entries.json", []), ("11-duplicate-uuid.json", []), ("15-unicode-oddities.json", []),
            ("17-old-2016-2017-schema.json", ["photos/dead000000000000000000000000002b.jpeg", "photos/dead000000000000000000000000002c.jpeg"]),
            ("13-multi-journal/Journal.json", ["photos/dead0000000000000000000000000024.jpeg"]),
            ("13-multi-journal/Journal 2.json", ["photos/dead0000000000000000000000000024.jpeg"]),
        ]
        for (file, media) in cases {
            let dir = TemporaryDirectory()
            let root = try makeExport(dir, jsons: [casesFolder + "/" + file], media: media)
            let vault = try makeVault(dir)
            _ = try importJournal(.dayOne, from: root, into: vault)
            #expect(try roundTripDifferences(casesFolder + "/" + file, vault: vault) == [], "\(file)")
        }
    }

    @Test func roundTripsPepysWithItsPhotos() throws {
        let dir = TemporaryDirectory()
        let vault = try makeVault(dir)
        _ = try importJournal(.dayOne, from: fixturesRoot + "/pepys-dayone.zip", into: vault)
        let json = dir.file("Pepys Diary.json")
        try Data(try zipMember(fixturesRoot + "/pepys-dayone.zip", "Pepys Diary.json")).write(to: URL(fileURLWithPath: json))
        #expect(try roundTripDifferences(json, vault: vault) == [])
        // Where the export variant puts the photo files: the names they had.
        let photo = try vault.entries().first { !$0.body.attachments.isEmpty }!.body.attachments[0]
        #expect(DayOneMapping.mediaFile(for: photo) == ("photos", "fc1ec2f3c17037ab8c691028bb62471f.jpeg"))
    }
}
