import Foundation
@_spi(Format) @_spi(Crypto) import Quire
import QuireDayOne
@_spi(Format) import QuireImport
import Testing
import QuireTestSupport

@Suite(.tags(.slow), .skippedByMakeCheck) struct IdempotencyTests {
    func fileSize(_ path: String) throws -> Int {
        (try FileManager.default.attributesOfItem(atPath: path)[.size] as! NSNumber).intValue
    }

    @Test func reimportingPepysWritesNothing() throws {
        let dir = TemporaryDirectory()
        let vault = try makeVault(dir)
        let zip = fixturesRoot + "/pepys-dayone.zip"
        var updates: [ImportProgress] = []
        let first = try importJournal(.dayOne, from: zip, into: vault) { updates.append($0) }
        #expect(first.entriesAdded == 3413)
        // Batched: 3,413 entries in 14 commits of at most 256, with progress after each.
        #expect(updates.count == 14)
        #expect(updates.last == ImportProgress(done: 3413, total: nil))
        let size = try fileSize(dir.file("v.quire"))
        let second = try importJournal(.dayOne, from: zip, into: vault)
        #expect(second.entriesAdded == 0)
        #expect(second.entriesUpdated == 0)
        #expect(second.entriesUnchanged == 3413)
        #expect(second.attachmentsStored == 0)
        #expect(try fileSize(dir.file("v.quire")) == size)
        #expect(try vault.entries().count == 3413)
    }

    @Test func aChangedEntryBecomesARevision() throws {
        let dir = TemporaryDirectory()
        let vault = try makeVault(dir)
        let path = casesFolder + "/08-all-day-entries.json"
        _ = try importJournal(.dayOne, from: path, into: vault)
        // The same export, one entry edited later in Day One.
        var text = try String(contentsOfFile: path, encoding: .utf8)
        text = text.replacingOccurrences(of: "\"All day in Boston (EDT)\"", with: "\"All day in Boston, edited\"")
        text = text.replacingOccurrences(of: "\"modifiedDate\" : \"2024-03-16T04:00:00Z\"", with: "\"modifiedDate\" : \"2024-03-17T09:00:00Z\"")
        let changed = dir.file("08-all-day-entries.json")
        try text.write(toFile: changed, atomically: true, encoding: .utf8)
        let report = try importJournal(.dayOne, from: changed, into: vault)
        #expect(report.entriesUpdated == 1)
        #expect(report.entriesUnchanged == 3)
        let e = try vault.entry(DayOneMapping.entryID(forUUID: "00C0FFEE000000000000000000000014"))!
        #expect(e.body.text == "All day in Boston, edited")
        #expect(e.revisionCount == 2)
        #expect(e.conflictingHeads.isEmpty)
        // The older export again: the vault's newer version stays.
        let older = try importJournal(.dayOne, from: path, into: vault)
        #expect(older.entriesNotNewer == 1)
        #expect(older.entriesUpdated == 0)
        #expect(try vault.entry(e.id)!.body.text == "All day in Boston, edited")
    }

    @Test func aBadEntryIsSkippedNotFatal() throws {
        let dir = TemporaryDirectory()
        let vault = try makeVault(dir)
        let path = dir.file("Bad Entries.json")
        try """
            {"metadata":{"version":"1.0"},"entries":[
              {"uuid":"00C0FFEE0000000000000000000000A1","creationDate":"2024-01-01T10:00:00Z","text":"fine"},
              {"creationDate":"2024-01-01T10:00:00Z","text":"no uuid"},
              {"uuid":"00C0FFEE0000000000000000000000A3","creationDate":"yesterday","text":"bad date"},
              "not an object",
              {"uuid":"not-hex uuid","creationDate":"2024-01-02T10:00:00Z","text":"fine too"}
            ]}
            """.write(toFile: path, atomically: true, encoding: .utf8)
        let report = try importJournal(.dayOne, from: path, into: vault)
        #expect(report.entriesAdded == 2)
        #expect(report.skipped.map(\.item) == ["Bad Entries.json: entry #2", "Bad Entries.json: entry #3 00C0FFEE0000000000000000000000A3", "Bad Entries.json: entry #4"])
        #expect(report.skipped[1].reason == "the entry's creationDate \"yesterday\" is not an ISO 8601 date-time")
        // A non-hex uuid gets a stable id (namespaced BLAKE2b-128), and round-trips.
        let id = DayOneMapping.entryID(forUUID: "not-hex uuid")
        #expect(id == DayOneMapping.entryID(forUUID: "not-hex uuid"))
        let e = try #require(try vault.entry(id))
        #expect(DayOneMapping.dayOneEntry(id: id, body: e.body)["uuid"] == .string("not-hex uuid"))
    }

    @Test func aDamagedJournalChangesNothing() throws {
        // The syntax is checked in a first pass: a file cut short writes nothing.
        let dir = TemporaryDirectory()
        let vault = try makeVault(dir)
        let path = dir.file("Cut.json")
        let text = """
            {"metadata":{"version":"1.0"},"entries":[
              {"uuid":"00C0FFEE0000000000000000000000B1","creationDate":"2024-01-01T10:00:00Z","text":"one"},
              {"uuid":"00C0FFEE0000000000000000000000B2","creationDate":"2024-01-01T11:00:00Z","text":"tw
            """
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        #expect(throws: ImportError.unreadableSource(path: path, reason: "invalid JSON at byte \(text.utf8.count): unterminated string")) {
            _ = try importJournal(.dayOne, from: path, into: vault)
        }
        #expect(try vault.entries().isEmpty)
    }

    @Test func aZipBombAttachmentIsSkipped() throws {
        // An export whose only photo is the zip bomb: the entry imports, the photo is skipped.
        let dir = TemporaryDirectory()
        let vault = try makeVault(dir)
        let report = try importJournal(.dayOne, from: importFixtures + "/zip/bomb-export.zip", into: vault)
        #expect(report.entriesAdded == 1)
        #expect(report.attachmentsStored == 0)
        #expect(report.skipped.count == 1)
        #expect(report.skipped[0].item == "photos/0123456789abcdef0123456789abcdef.jpeg")
        #expect(report.skipped[0].reason.contains("larger than the limit"))
        let body = try vault.entries()[0].body
        #expect(body.attachments.isEmpty)
        #expect(body.text == "Boom ![](dayone-moment://ABCDEF0123456789ABCDEF0123456789)")
    }

    @Test func unreadableSourcesThrow() throws {
        let dir = TemporaryDirectory()
        let vault = try makeVault(dir)
        #expect(throws: ImportError.self) { _ = try importJournal(.dayOne, from: dir.file("nothing.zip"), into: vault) }
        #expect(throws: ImportError.self) { _ = try importJournal(.dayOne, from: fixturesRoot + "/README.md", into: vault) }
    }
}
