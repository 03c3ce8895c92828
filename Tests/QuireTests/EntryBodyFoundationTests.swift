import Foundation
@_spi(Format) import Quire
import Testing

/// `Date`, `TimeZone`, `DateComponents` and ``EntryBody/Mood`` views of an
/// entry body's wire fields (`Spec/records.md §3.3`).
@Suite struct EntryBodyFoundationTests {
    /// 2026-01-01 13:30:00.123 UTC, in milliseconds.
    let instant: Int64 = 1_767_274_200_123

    @Test func createdAndModifiedAreTheWireMilliseconds() {
        var body = EntryBody(created: instant)
        #expect(body.created == Date(timeIntervalSince1970: 1_767_274_200.123))
        #expect(body.modified == nil)
        body.modified = Date(timeIntervalSince1970: 1_767_274_260.5)
        #expect(body.modifiedMilliseconds == 1_767_274_260_500)
        body.created = Date(timeIntervalSince1970: -1.5)
        #expect(body.createdMilliseconds == -1500)
        body.modified = nil
        #expect(body.modifiedMilliseconds == nil)
        // Every millisecond round-trips through Date, before 1970 too.
        for ms: Int64 in [0, 1, -1, 999, instant, -62_135_596_800_001, 253_402_300_799_999] {
            var b = EntryBody()
            b.created = EntryBody(created: ms).created
            #expect(b.createdMilliseconds == ms)
        }
        // A date out of Int64 milliseconds is clamped, not a trap.
        body.created = Date.distantFuture.addingTimeInterval(1e300)
        #expect(body.createdMilliseconds == 9_200_000_000_000_000_000)
    }

    @Test func timeZoneStoresTheIdentifierAndItsOffset() throws {
        var body = EntryBody(created: instant)
        #expect(body.timeZone == nil)
        body.timeZone = TimeZone(identifier: "Australia/Sydney")
        #expect(body.timeZoneIdentifier == "Australia/Sydney")
        #expect(body.utcOffsetSeconds == 39_600)  // daylight time in January
        #expect(body.timeZone?.identifier == "Australia/Sydney")
        // Moving the entry into winter recomputes the recorded offset.
        body.created = Date(timeIntervalSince1970: 1_783_000_000)  // 2026-07
        #expect(body.utcOffsetSeconds == 36_000)
        body.timeZoneIdentifier = "Not/AZone"
        #expect(body.timeZone == nil)
        body.timeZone = nil
        #expect(body.timeZoneIdentifier == "")
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
        #expect(body.mood == nil)
        body.mood = .good
        #expect(body.moodRawValue == 4)
        body.moodRawValue = -2
        #expect(body.mood == .other(-2))
        body.mood = body.mood
        #expect(body.moodRawValue == -2)
        body.mood = nil
        #expect(body.moodRawValue == nil)
        body.mood = .other(3)  // stored as 3, read back as the scale's case
        #expect(body.moodRawValue == 3 && body.mood == .neutral)
    }

    @Test func anUnknownMoodRoundTripsThroughTheVault() throws {
        let dir = TemporaryDirectory()
        let (vault, _) = try makeVault(dir)
        var body = EntryBody(created: 1, text: "odd mood")
        body.mood = .other(42)
        let added = try vault.add(body)
        #expect(try vault.entry(added.entryID)?.body.mood == .other(42))
    }

    @Test func theTextInitialiserIsWrittenNowInThisDevicesZone() throws {
        let before = Date()
        let body = EntryBody(text: "today")
        let after = Date()
        #expect(body.text == "today")
        #expect(body.created >= before.addingTimeInterval(-0.001))
        #expect(body.created <= after.addingTimeInterval(0.001))
        #expect(body.createdMilliseconds > 1_700_000_000_000)
        #expect(body.timeZoneIdentifier == TimeZone.current.identifier)
        #expect(body.utcOffsetSeconds == Int64(TimeZone.current.secondsFromGMT(for: body.created)))

        let zone = try #require(TimeZone(identifier: "America/New_York"))
        let given = EntryBody(text: "then", created: Date(timeIntervalSince1970: 1_767_274_200.123), timeZone: zone)
        #expect(given.createdMilliseconds == instant)
        #expect(given.timeZoneIdentifier == "America/New_York")
        #expect(given.utcOffsetSeconds == -18_000)
        #expect(given.tags.isEmpty && given.moodRawValue == nil && !given.isAllDay)
    }

    @Test func theFoundationInitialiserStoresEveryFieldInItsWireForm() throws {
        let zone = try #require(TimeZone(identifier: "Australia/Sydney"))
        let body = EntryBody(
            created: Date(timeIntervalSince1970: 1_767_274_200.123), modified: Date(timeIntervalSince1970: 1_767_274_260.5),
            timeZone: zone, isAllDay: true, text: "all of it", tags: ["a"], mood: .good, isStarred: true, isPinned: true,
            journal: "Travel")
        #expect(body.createdMilliseconds == instant && body.modifiedMilliseconds == 1_767_274_260_500)
        #expect(body.timeZoneIdentifier == "Australia/Sydney" && body.utcOffsetSeconds == 39_600)
        #expect(body.moodRawValue == 4 && body.mood == .good)
        #expect(body.isAllDay && body.text == "all of it" && body.tags == ["a"] && body.isStarred && body.isPinned)
        #expect(body.journal == "Travel")
        // The same fields through the wire initialiser give an equal body.
        #expect(
            body
                == EntryBody(
                    created: instant, modified: 1_767_274_260_500, timeZone: "Australia/Sydney", utcOffsetSeconds: 39_600, isAllDay: true,
                    text: "all of it", tags: ["a"], mood: 4, isStarred: true, isPinned: true, journal: "Travel"))
        // No zone: unknown, shown in UTC.
        let unzoned = EntryBody(created: Date(timeIntervalSince1970: 0), timeZone: nil, text: "x")
        #expect(unzoned.timeZoneIdentifier == "" && unzoned.utcOffsetSeconds == nil && unzoned.timeZone == nil)
    }
}
