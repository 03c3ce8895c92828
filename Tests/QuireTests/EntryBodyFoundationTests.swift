import Foundation
@_spi(Format) import Quire
import Testing

/// `Date`, `TimeZone`, `DateComponents` and ``EntryBody/Mood`` views of an
/// entry body's wire fields (`Spec/records.md §3.3`).
@Suite struct EntryBodyFoundationTests {
    /// 2026-01-01 13:30:00.123 UTC, in milliseconds.
    let instant: Int64 = 1_767_274_200_123

    @Test func createdAndModifiedDatesAreTheWireMilliseconds() {
        var body = EntryBody(created: instant)
        #expect(body.createdDate == Date(timeIntervalSince1970: 1_767_274_200.123))
        #expect(body.modifiedDate == nil)
        body.modifiedDate = Date(timeIntervalSince1970: 1_767_274_260.5)
        #expect(body.modified == 1_767_274_260_500)
        body.createdDate = Date(timeIntervalSince1970: -1.5)
        #expect(body.created == -1500)
        body.modifiedDate = nil
        #expect(body.modified == nil)
        // Every millisecond round-trips through Date, before 1970 too.
        for ms: Int64 in [0, 1, -1, 999, instant, -62_135_596_800_001, 253_402_300_799_999] {
            var b = EntryBody()
            b.createdDate = EntryBody(created: ms).createdDate
            #expect(b.created == ms)
        }
        // A date out of Int64 milliseconds is clamped, not a trap.
        body.createdDate = Date.distantFuture.addingTimeInterval(1e300)
        #expect(body.created == 9_200_000_000_000_000_000)
    }

    @Test func timeZoneValueStoresTheIdentifierAndItsOffset() throws {
        var body = EntryBody(created: instant)
        #expect(body.timeZoneValue == nil)
        body.timeZoneValue = TimeZone(identifier: "Australia/Sydney")
        #expect(body.timeZone == "Australia/Sydney")
        #expect(body.utcOffsetSeconds == 39_600)  // daylight time in January
        #expect(body.timeZoneValue?.identifier == "Australia/Sydney")
        // Moving the entry into winter recomputes the recorded offset.
        body.createdDate = Date(timeIntervalSince1970: 1_783_000_000)  // 2026-07
        #expect(body.utcOffsetSeconds == 36_000)
        body.timeZone = "Not/AZone"
        #expect(body.timeZoneValue == nil)
        body.timeZoneValue = nil
        #expect(body.timeZone == "")
        #expect(body.utcOffsetSeconds == nil)
    }

    @Test func localDateComponentsAreTheEntrysOwnCalendarDay() throws {
        // 13:30 UTC on 1 January is 00:30 on Friday 2 January in Sydney.
        var body = EntryBody(created: instant, timeZone: "Australia/Sydney")
        var c = body.localDateComponents
        #expect([c.year, c.month, c.day, c.weekday] == [2026, 1, 2, 6])
        #expect(c.timeZone?.secondsFromGMT() == 39_600)
        // A recorded offset wins over the zone (records.md §3.3).
        body.utcOffsetSeconds = -18_000
        c = body.localDateComponents
        #expect([c.year, c.month, c.day, c.weekday] == [2026, 1, 1, 5])
        // Neither: UTC. Before 1970 and before 1 CE use the proleptic calendar.
        c = EntryBody(created: -1).localDateComponents
        #expect([c.year, c.month, c.day] == [1969, 12, 31])
        c = EntryBody(created: -62_167_219_200_000).localDateComponents  // 0000-01-01
        #expect([c.year, c.month, c.day] == [0, 1, 1])
    }

    @Test func localDateComponentsAgreeWithTheQueryDay() throws {
        let dir = TemporaryDirectory()
        let (vault, _) = try makeVault(dir)
        let body = EntryBody(created: instant, timeZone: "Australia/Sydney", text: "late")
        let added = try vault.add(body)
        let c = body.localDateComponents
        let day = EntryQuery.Day(year: c.year!, month: c.month!, day: c.day!)
        var query = EntryQuery()
        query.from = day
        query.through = day
        #expect(try vault.entries(matching: query).entries.map(\.id) == [added.entryID])
        query.from = EntryQuery.Day(year: 2026, month: 1, day: 1)
        query.through = query.from
        #expect(try vault.entries(matching: query).entries.isEmpty)
    }

    @Test func moodIsTheScaleAndKeepsOtherValues() {
        #expect(EntryBody.Mood.scale.map(\.rawValue) == [1, 2, 3, 4, 5])
        #expect(EntryBody.Mood(rawValue: 1) == .veryBad)
        #expect(EntryBody.Mood(rawValue: 5) == .veryGood)
        #expect(EntryBody.Mood(rawValue: 7) == .other(7))
        #expect(EntryBody.Mood.other(3) != .neutral)  // a plain enum: the reader normalises
        #expect(Set([EntryBody.Mood.other(7), .other(7), .neutral]).count == 2)
        var body = EntryBody()
        #expect(body.moodValue == nil)
        body.moodValue = .good
        #expect(body.mood == 4)
        body.mood = -2
        #expect(body.moodValue == .other(-2))
        body.moodValue = body.moodValue
        #expect(body.mood == -2)
        body.moodValue = nil
        #expect(body.mood == nil)
        body.moodValue = .other(3)  // stored as 3, read back as the scale's case
        #expect(body.mood == 3 && body.moodValue == .neutral)
    }

    @Test func anUnknownMoodRoundTripsThroughTheVault() throws {
        let dir = TemporaryDirectory()
        let (vault, _) = try makeVault(dir)
        var body = EntryBody(created: 1, text: "odd mood")
        body.moodValue = .other(42)
        let added = try vault.add(body)
        #expect(try vault.entry(added.entryID)?.body.moodValue == .other(42))
    }

    @Test func theTextInitialiserIsWrittenNowInThisDevicesZone() throws {
        let before = Date()
        let body = EntryBody(text: "today")
        let after = Date()
        #expect(body.text == "today")
        #expect(body.createdDate >= before.addingTimeInterval(-0.001))
        #expect(body.createdDate <= after.addingTimeInterval(0.001))
        #expect(body.created > 1_700_000_000_000)
        #expect(body.timeZone == TimeZone.current.identifier)
        #expect(body.utcOffsetSeconds == Int64(TimeZone.current.secondsFromGMT(for: body.createdDate)))

        let zone = try #require(TimeZone(identifier: "America/New_York"))
        let given = EntryBody(text: "then", created: Date(timeIntervalSince1970: 1_767_274_200.123), timeZone: zone)
        #expect(given.created == instant)
        #expect(given.timeZone == "America/New_York")
        #expect(given.utcOffsetSeconds == -18_000)
        #expect(given.tags.isEmpty && given.mood == nil && !given.isAllDay)
    }
}
