import Foundation
@_spi(Format) import Quire
import QuireDayOne
import QuireExport
@_spi(Format) import QuireImport
import QuireZip
import Testing

/// F3 — empty objects and placeholders (`Tests/Fixtures/import/dayone-families/F3-*.md`).
@Suite struct DayOnePlaceholderTests {

    @Test func f3EmptyObjectsAndPlaceholdersAreAbsent() throws {
        let dir = TemporaryDirectory()
        let vault = try makeVault(dir)
        let path = familiesFolder + "/F3-empty-and-placeholder-values.json"
        let report = try importJournal(.dayOne, from: path, into: vault)
        #expect(report.entriesAdded == 5)
        let b = try bodies(vault)
        let empty = try #require(b[uuid(3, 1)])
        #expect(empty.weather == nil && empty.location == nil)
        let coordinates = try #require(b[uuid(3, 2)]?.location)
        #expect(coordinates == Location(latitude: 51.5098, longitude: -0.0796))
        #expect(EntryDisplay.place(coordinates) == "51.50980° N, 0.07960° W")
        let placeholders = try #require(b[uuid(3, 3)])
        #expect(placeholders.weather == Weather(temperatureCelsius: 12, extra: CBORMap(text: [("weatherServiceName", .text("HAMweather"))])))
        #expect(placeholders.location == Location(latitude: 48.85, longitude: 2.35, country: "France"))
        let nothing = try #require(b[uuid(3, 4)])
        #expect(nothing.weather == nil && nothing.modifiedMilliseconds == nil)
        let real = try #require(b[uuid(3, 5)]?.location)
        #expect(real.locality == "Greenwood Village" && real.region == "CO" && real.extra[text: "region"] != nil)
        #expect(real.extra[text: "timeZoneName"] == .text("America/Denver"))
        // Every value is back in the round trip.
        #expect(try roundTripDifferences(path, vault: vault) == [])
    }
}
