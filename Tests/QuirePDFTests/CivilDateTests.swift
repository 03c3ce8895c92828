import Quire
import Testing
@testable import QuirePDF

@Suite struct CivilDateTests {
    @Test func datesInTheEntrysOwnZone() {
        let d = CivilDate(milliseconds: instant("1660-01-11", offset: 0), offsetSeconds: 0)
        #expect(d.longDate == "Sunday 11 January 1660" && d.timeOfDay == "22:00")
        // 06:00 on 5 February in Shanghai is still 4 February in UTC.
        let ms = instant("2024-02-05", hour: 6, offset: 28_800)
        #expect(CivilDate(milliseconds: ms, offsetSeconds: 0).longDate == "Sunday 4 February 2024")
        #expect(CivilDate(milliseconds: ms, offsetSeconds: 28_800).longDate == "Monday 5 February 2024")
        #expect(CivilDate(milliseconds: -1, offsetSeconds: 0) == CivilDate(milliseconds: instant("1969-12-31", hour: 23, offset: 0) + 3_599_999, offsetSeconds: 0))
        #expect(CivilDate(milliseconds: -1, offsetSeconds: 0).mediumDate == "31 December 1969")
        #expect(CivilDate(milliseconds: 951_782_400_000, offsetSeconds: 0).longDate == "Tuesday 29 February 2000")
    }

    /// The book places an entry in time by the export's one rule (LocalTime.offset(of:)).
    @Test func offsetFromZoneNameWhenNotRecorded() {
        let ms = instant("2024-07-01", hour: 12, offset: 0)
        #expect(CivilDate(of: EntryBody(created: ms, timeZone: "Europe/Moscow")).hour == 15)
        #expect(CivilDate(of: EntryBody(created: ms, timeZone: "Europe/Moscow", utcOffsetSeconds: -3600)).hour == 11)
        #expect(CivilDate(of: EntryBody(created: ms, timeZone: "Not/AZone")).hour == 12)
        #expect(pdfMetadataDate(milliseconds: 1_700_000_000_000) == "2023-11-14T22:13:00Z")
    }
}
