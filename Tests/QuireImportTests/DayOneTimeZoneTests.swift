import Foundation
@_spi(Format) import Quire
import QuireDayOne
@_spi(Format) import QuireExport
@_spi(Format) import QuireImport
import QuireZip
import Testing

/// F5 — missing or odd time zones (`Tests/Fixtures/import/dayone-families/F5-*.md`).
@Suite struct DayOneTimeZoneTests {

    @Test func f5MissingZonesComeFromTheLocationOrAreMarkedInferred() throws {
        let dir = TemporaryDirectory()
        let vault = try makeVault(dir)
        let path = familiesFolder + "/F5-missing-time-zones.json"
        let report = try importJournal(.dayOne, from: path, into: vault, options: ImportOptions(timeZone: "Asia/Tokyo"))
        let b = try bodies(vault)
        func zone(_ n: Int) -> (String, Int64?, CBOR?) {
            let body = b[uuid(5, n)]!
            return (body.timeZoneIdentifier, body.utcOffsetSeconds, body.extra[text: "inferredTimeZone"])
        }
        #expect(zone(1) == ("America/Denver", -7 * 3600, .text("location")))
        #expect(zone(2) == ("Asia/Tokyo", 9 * 3600, .text("import")))
        #expect(zone(3) == ("Europe/Paris", 3600, .text("location")))
        #expect(zone(4) == ("Asia/Tokyo", 9 * 3600, .text("import")))
        #expect(zone(5) == ("Asia/Kolkata", 19_800, .text("location")))
        // The report says so, entry by entry (the unknown name is also noted as before).
        #expect(report.notes.map(\.item) == (1...5).map { "F5-missing-time-zones.json: entry \(uuid(5, $0)): timeZone" })
        #expect(report.notes.first?.reason.contains("America/Denver") == true)
        #expect(report.notes.dropFirst().first?.reason.contains("Asia/Tokyo") == true)
        #expect(report.skipped.map(\.item) == ["F5-missing-time-zones.json: entry \(uuid(5, 5)): timeZone"])
        // The JSON export says it.
        _ = try exportJournal(vault, format: .json, to: dir.file("out.json"))
        let json = try String(contentsOfFile: dir.file("out.json"), encoding: .utf8)
        #expect(json.contains("\"timeZone\": \"America/Denver\", \"timeZoneInferred\": \"location\""))
        #expect(json.contains("\"timeZone\": \"Asia/Tokyo\", \"timeZoneInferred\": \"import\""))
        // Importing again elsewhere (another zone) changes nothing.
        let again = try importJournal(.dayOne, from: path, into: vault, options: ImportOptions(timeZone: "Europe/Berlin"))
        #expect(again.entriesUnchanged == 5 && again.entriesUpdated == 0)
        #expect(try roundTripDifferences(path, vault: vault) == [])
    }
}
