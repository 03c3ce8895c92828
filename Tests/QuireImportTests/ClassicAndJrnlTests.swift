import Foundation
@_spi(Format) import Quire
import QuireDayOne
@_spi(Format) import QuireImport
import Testing

@Suite struct ClassicAndJrnlTests {
    /// A `My Journal.dayone` folder holding every `.doentry` of the corpus and the one photo.
    func classicJournal(_ dir: TemporaryDirectory) throws -> String {
        let root = dir.file("My Journal.dayone")
        try FileManager.default.createDirectory(atPath: root + "/entries", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: root + "/photos", withIntermediateDirectories: true)
        for f in try FileManager.default.contentsOfDirectory(atPath: samplesFolder) where f.hasSuffix(".doentry") {
            let name = f.components(separatedBy: "__").last!.replacingOccurrences(of: "dayone_entries_", with: "")
                .replacingOccurrences(of: "basic_", with: "").replacingOccurrences(of: "bug153.", with: "")
                .replacingOccurrences(of: "bug780.", with: "").replacingOccurrences(of: "dayone.", with: "")
            try FileManager.default.copyItem(atPath: samplesFolder + "/" + f, toPath: root + "/entries/" + name)
        }
        try FileManager.default.copyItem(atPath: samplesFolder + "/jpoehls__go-dayone__871D0F435D7B469C9429CD441A9E74B5.jpg",
                                         toPath: root + "/photos/871D0F435D7B469C9429CD441A9E74B5.jpg")
        return root
    }

    @Test func dayOneClassic() throws {
        let dir = TemporaryDirectory()
        let vault = try makeVault(dir)
        let report = try importJournal(.dayOneClassic, from: try classicJournal(dir), into: vault, options: ImportOptions(timeZone: "Europe/Stockholm"))
        // 10 files: one is not a property list (bug153 …D512), skipped with its reason.
        #expect(report.entriesAdded == 9)
        #expect(report.skipped.count == 1)
        #expect(report.skipped[0].item.hasSuffix("B40EE704E15846DE8D45C44118A4D512.doentry"))
        #expect(report.attachmentsStored == 1)
        #expect(report.journals == ["My Journal"])
        let e = try #require(try vault.entry(DayOneMapping.entryID(forUUID: "871D0F435D7B469C9429CD441A9E74B5")))
        #expect(e.body.text == "#title line\n\nbody line")
        #expect(e.body.tags == ["bjj", "fitness"])
        #expect(e.body.isStarred)
        #expect(e.body.timeZoneIdentifier == "America/Chicago")
        #expect(e.body.utcOffsetSeconds == Int64(-5 * 3600))
        #expect(e.body.createdMilliseconds == ImportDates.milliseconds(iso: "2014-09-24T01:52:11Z"))
        #expect(e.body.location?.placeName == "199 Address Ln")
        #expect(e.body.location?.latitude == 10.247248496409549)
        #expect(e.body.weather?.temperatureCelsius == 24)  // written as the string "24"
        #expect(e.body.weather?.conditions == "Clear")
        #expect(e.body.extra[text: "dayOneClassic"].flatMap { if case .map(let m) = $0 { m[text: "Step Count"] } else { nil } } == CBOR.int(Int64(1043)))
        // The photo named by the entry's UUID is attached, byte for byte.
        #expect(e.body.attachments.count == 1)
        #expect(e.body.attachments[0].mediaType == "image/jpeg")
        let photo = Array(try Data(contentsOf: URL(fileURLWithPath: samplesFolder + "/jpoehls__go-dayone__871D0F435D7B469C9429CD441A9E74B5.jpg")))
        #expect(try vault.openAttachment(e.body.attachments[0].blob).readAll() == photo)
        // An entry without a Time Zone (Journaley; jrnl-org/jrnl#89 crashed on one) is
        // shown in the import's zone, marked inferred and said (issue 16, family 5).
        let journaley = try #require(try vault.entry(DayOneMapping.entryID(forUUID: "48A25033B34047C591160A4480197D8B")))
        #expect(journaley.body.timeZoneIdentifier == "Europe/Stockholm" && journaley.body.extra[text: "inferredTimeZone"] == .text("import"))
        #expect(report.notes.contains { $0.item.hasSuffix("48A25033B34047C591160A4480197D8B.doentry: Time Zone") })
        #expect(journaley.body.text == "")
        // The legacy alias US/Pacific is a zone Foundation knows.
        let ketan = try #require(try vault.entry(DayOneMapping.entryID(forUUID: "FE8C4DDF45B14BAEBDD0E2988CD301E0")))
        #expect(ketan.body.timeZoneIdentifier == "US/Pacific")
        #expect(ketan.body.utcOffsetSeconds != nil)
        // Again: nothing new.
        let other = TemporaryDirectory()
        let again = try importJournal(.dayOneClassic, from: try classicJournal(other), into: vault, options: ImportOptions(timeZone: "Asia/Tokyo"))
        #expect(again.entriesAdded == 0 && again.entriesUpdated == 0 && again.entriesUnchanged == 9)
    }

    @Test func jrnl() throws {
        let dir = TemporaryDirectory()
        let vault = try makeVault(dir)
        let path = importFixtures + "/jrnl/marph91__jimmy-test-data__myjournal.json"
        let report = try importJournal(.jrnl, from: path, into: vault, options: ImportOptions(timeZone: "Europe/Berlin", journal: "myjournal"))
        #expect(report.entriesAdded == 5)
        #expect(report.journals == ["myjournal"])
        // Two entries at 09:00 on the 16th: ordered by text here.
        let entries = try vault.entries().sorted { ($0.body.createdMilliseconds, $0.body.text) < ($1.body.createdMilliseconds, $1.body.text) }
        #expect(entries.map(\.body.text) == [
            "Best day of my life.", "Called in sick.\nUsed the time to clean, and spent 4h on writing my book.",
            "I just met Steve Buscemi in a bar!\nWhat a nice guy.", "Had a wonderful day at the @beach with @Tom and @Anna.",
            "Best day of my life.",
        ])
        // Wall-clock times read in the zone given: 09:00 in Berlin (CEST) is 07:00 UTC.
        #expect(entries[1].body.createdMilliseconds == ImportDates.milliseconds(iso: "2024-06-16T07:00:00Z"))
        #expect(entries[1].body.utcOffsetSeconds == 7200)
        #expect(entries[3].body.tags == ["tom", "beach", "anna"])
        #expect(entries.map(\.body.isStarred) == [true, false, false, false, true])
        // The same title twice ("Best day of my life.") stays two entries; a re-import adds nothing.
        let again = try importJournal(.jrnl, from: path, into: vault, options: ImportOptions(timeZone: "Europe/Berlin", journal: "myjournal"))
        #expect(again.entriesAdded == 0 && again.entriesUnchanged == 5)
    }
}

/// jrnl exports are read as a stream (issue 16): a journal larger than the
/// old 16 MiB whole-file limit imports, and one damaged at its very end is
/// refused before anything is written.
@Suite struct JrnlStreamTests {
    static func write(_ path: String, entries: Int, bodyBytes: Int, tail: String = "]}") throws {
        _ = FileManager.default.createFile(atPath: path, contents: nil)
        let h = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        defer { try? h.close() }
        try h.write(contentsOf: Data("{\"tags\": {\"@walk\": \(entries)}, \"entries\": [".utf8))
        let filler = String(repeating: "word ", count: bodyBytes / 5)
        for n in 0..<entries {
            let day = n % 28 + 1, month = n / 28 % 12 + 1, year = 2000 + n / 336
            let entry = "\(n == 0 ? "" : ",")\n{\"title\": \"Entry \(n).\", \"body\": \"\(filler)\(n)\", \"date\": \"\(year)-\(String(format: "%02d-%02d", month, day))\", \"time\": \"09:30\", \"tags\": [\"@walk\"], \"starred\": \(n % 7 == 0)}"
            try h.write(contentsOf: Data(entry.utf8))
        }
        try h.write(contentsOf: Data(tail.utf8))
    }

    @Test func aJournalLargerThan16MiBImports() throws {
        let dir = TemporaryDirectory()
        let path = dir.file("big.json")
        try Self.write(path, entries: 2_000, bodyBytes: 9_000)
        #expect(try FileManager.default.attributesOfItem(atPath: path)[.size] as! Int > 17 << 20)
        let vault = try makeVault(dir)
        var calls = 0
        let report = try importJournal(.jrnl, from: path, into: vault, options: ImportOptions(timeZone: "UTC", journal: "big")) { _ in calls += 1 }
        #expect(report.entriesAdded == 2_000)
        #expect(report.skipped == [])
        #expect(calls >= 8)  // progress per batch of 256
        let entries = try vault.entries()
        #expect(entries.count == 2_000)
        #expect(entries.last?.body.text.hasSuffix("1999") == true)
        #expect(entries.filter(\.body.isStarred).count == (0..<2_000).filter { $0 % 7 == 0 }.count)
        let again = try importJournal(.jrnl, from: path, into: vault, options: ImportOptions(timeZone: "UTC", journal: "big"))
        #expect(again.entriesUnchanged == 2_000 && again.entriesAdded == 0)
    }

    @Test func damageAtTheEndWritesNothing() throws {
        let dir = TemporaryDirectory()
        let path = dir.file("damaged.json")
        try Self.write(path, entries: 600, bodyBytes: 100, tail: "]")
        let vault = try makeVault(dir)
        #expect(throws: ImportError.self) { _ = try importJournal(.jrnl, from: path, into: vault, options: ImportOptions(timeZone: "UTC")) }
        #expect(try vault.entries().isEmpty)
    }
}
