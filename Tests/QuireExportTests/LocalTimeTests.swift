import Foundation
@_spi(Format) import Quire
import QuireExport
import Testing

@Suite struct LocalTimeTests {
    @Test func usesTheEntrysZone() {
        let london = LocalTime(of: EntryBody(created: utcMilliseconds(1660, 1, 11, 22, 1, 15), timeZone: "Europe/London"))
        #expect(london.dateString == "1660-01-11")
        #expect((london.hour, london.minute, london.second) == (22, 0, 0))
        #expect(london.offsetSeconds == -75)
        // RFC 3339 cannot write −0:01:15: UTC, so the instant is exact (a
        // new-user trial found the offset cut to −00:01, 15 s off).
        #expect(london.iso8601 == "1660-01-11T22:01:15Z")
        let moscow = LocalTime(of: EntryBody(created: utcMilliseconds(1852, 6, 1, 9, 29, 43), timeZone: "Europe/Moscow"))
        #expect(moscow.offsetSeconds == 9017)
        #expect(moscow.iso8601 == "1852-06-01T09:29:43Z")
        let tokyo = LocalTime(of: EntryBody(created: utcMilliseconds(2024, 2, 29, 20), timeZone: "Asia/Tokyo"))
        #expect(tokyo.iso8601 == "2024-03-01T05:00:00+09:00")
        let given = LocalTime(of: EntryBody(created: utcMilliseconds(2024, 1, 1), timeZone: "Asia/Tokyo", utcOffsetSeconds: -3600))
        #expect(given.iso8601 == "2023-12-31T23:00:00-01:00")
        #expect(LocalTime.utcString(-1) == "1969-12-31T23:59:59Z")
        #expect(LocalTime(of: EntryBody(created: 0, timeZone: "Not/AZone")).iso8601 == "1970-01-01T00:00:00+00:00")
    }

    /// Trial 25, F1: any `Int64` instant has a reading; the EPUB and HTML
    /// exporters trapped on `created = Int64.min` (naming its month went
    /// through milliseconds, which overflow) and on an offset with seconds
    /// at `Int64.max`.
    @Test func everyInt64InstantHasAReading() {
        let latest = LocalTime(milliseconds: .max, offsetSeconds: 0)
        #expect(latest.dateString == "292278994-08-17")
        #expect(latest.iso8601 == "292278994-08-17T07:12:55+00:00")
        let earliest = LocalTime(milliseconds: .min, offsetSeconds: 0)
        #expect(earliest.dateString == "-292275055-05-16")
        #expect((earliest.hour, earliest.minute, earliest.second) == (16, 47, 4))
        // An offset of one second is written as UTC: back to the instant
        // without going through milliseconds.
        #expect(LocalTime(milliseconds: .max, offsetSeconds: 1).iso8601 == "292278994-08-17T07:12:55Z")
        #expect(LocalTime(milliseconds: .min, offsetSeconds: -1).iso8601 == "-292275055-05-16T16:47:04Z")
        #expect(LocalTime(milliseconds: -62_135_596_800_001, offsetSeconds: 0).dateString == "0000-12-31")
        let locale = BookLocale(identifier: "en")
        #expect(locale.monthAndYear(year: earliest.year, month: earliest.month) == "May -292275055")
        #expect(locale.monthAndYear(year: latest.year, month: latest.month) == "August 292278994")
        let body = EntryBody(created: .min, timeZone: "Europe/London")
        #expect(LocalTime(of: body).dateString.hasPrefix("-292275055-05-16"))
    }
}
