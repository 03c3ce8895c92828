import Foundation
@_spi(Format) import Quire
@_spi(Format) import QuireFormat
import Testing

/// `Vault.entries(matching:after:)`: order, each filter, "on this day" in
/// the entries' own calendars, and cursors across inserts and deletes.
@Suite struct EntryQueryTests {
    /// Milliseconds since 1970 of a UTC date and time.
    static func ms(_ y: Int, _ mo: Int, _ d: Int, _ h: Int = 12, _ mi: Int = 0) -> Int64 {
        (CivilCalendar.days(year: y, month: mo, day: d) * 86_400 + Int64(h * 3600 + mi * 60)) * 1000
    }

    /// The texts of a page's rows.
    static func texts(_ page: EntryPage) -> [String] { page.entries.map(\.body.text) }

    @Test func ordersByDateNewestOrOldestFirstThenByID() throws {
        let dir = TemporaryDirectory()
        let (vault, _) = try makeVault(dir)
        for (text, day) in [("c", 3), ("a", 1), ("e", 5), ("b", 2), ("d", 4)] {
            try vault.add(EntryBody(created: Self.ms(2024, 1, day), text: text))
        }
        // Two entries at the same instant: ordered by entry id.
        let low = EntryID(unchecked: Array(repeating: 1, count: 16))
        let high = EntryID(unchecked: Array(repeating: 2, count: 16))
        try vault.add(EntryBody(created: Self.ms(2024, 1, 6), text: "f-high"), id: high)
        try vault.add(EntryBody(created: Self.ms(2024, 1, 6), text: "f-low"), id: low)

        let newest = try vault.entries(matching: EntryQuery())
        #expect(Self.texts(newest) == ["f-high", "f-low", "e", "d", "c", "b", "a"])
        #expect(newest.next == nil)
        let oldest = try vault.entries(matching: EntryQuery(order: .oldestFirst))
        #expect(Self.texts(oldest) == ["a", "b", "c", "d", "e", "f-low", "f-high"])

        let first = try vault.entries(matching: EntryQuery(limit: 2))
        #expect(Self.texts(first) == ["f-high", "f-low"])
        #expect(first.next?.entryID == low)
        #expect(first.next?.date == Date(timeIntervalSince1970: Double(Self.ms(2024, 1, 6)) / 1000))
        let second = try vault.entries(matching: EntryQuery(limit: 2), after: first.next)
        #expect(Self.texts(second) == ["e", "d"])
        // The last page says no row follows.
        let last = try vault.entries(matching: EntryQuery(limit: 3), after: second.next)
        #expect(Self.texts(last) == ["c", "b", "a"])
        #expect(last.next == nil)
    }

    @Test func eachFilterSelectsItsEntries() throws {
        let dir = TemporaryDirectory()
        let (vault, _) = try makeVault(dir)
        var blob = BlobID(unchecked: [])
        try vault.commit { tx in blob = try tx.storeAttachment([1, 2, 3], mediaType: "image/jpeg").blob }
        let photo = AttachmentReference(id: [1], blob: blob, mediaType: "image/jpeg", fileName: "a.jpg")
        let pdf = AttachmentReference(id: [2], blob: blob, mediaType: "application/pdf", fileName: "b.pdf")
        try vault.add(EntryBody(created: Self.ms(2024, 2, 1), text: "plain"))
        try vault.add(EntryBody(created: Self.ms(2024, 2, 2), text: "tagged", tags: ["Travel", "food"]))
        try vault.add(EntryBody(created: Self.ms(2024, 2, 3), text: "starred", isStarred: true))
        try vault.add(EntryBody(created: Self.ms(2024, 2, 4), text: "work journal", journal: "Work"))
        try vault.add(EntryBody(created: Self.ms(2024, 2, 5), text: "photo", attachments: [photo]))
        try vault.add(EntryBody(created: Self.ms(2024, 2, 6), text: "pdf", tags: ["travel"], attachments: [pdf]))
        let gone = try vault.add(EntryBody(created: Self.ms(2024, 2, 7), text: "deleted", tags: ["travel"], isStarred: true))
        try vault.delete(gone.entryID)

        func run(_ change: (inout EntryQuery) -> Void) throws -> [String] {
            var q = EntryQuery(order: .oldestFirst)
            change(&q)
            return Self.texts(try vault.entries(matching: q))
        }
        #expect(try run { _ in } == ["plain", "tagged", "starred", "work journal", "photo", "pdf"])
        #expect(try run { $0.tags = ["TRAVEL"] } == ["tagged", "pdf"])
        #expect(try run { $0.tags = ["food", "nothing"] } == ["tagged"])
        #expect(try run { $0.journal = "work" } == ["work journal"])
        #expect(try run { $0.journal = "" } == ["plain", "tagged", "starred", "photo", "pdf"])
        #expect(try run { $0.isStarred = true } == ["starred"])
        #expect(try run { $0.hasAttachments = true } == ["photo", "pdf"])
        #expect(try run { $0.hasPhotos = true } == ["photo"])
        #expect(try run { $0.hasPhotos = false; $0.tags = ["travel"] } == ["tagged", "pdf"])
        #expect(try run { $0.hasConflicts = true } == [])
        #expect(try run { $0.from = .init(year: 2024, month: 2, day: 3); $0.through = .init(year: 2024, month: 2, day: 5) } == [
            "starred", "work journal", "photo",
        ])
        #expect(try run { $0.from = .init(year: 2024, month: 2, day: 6) } == ["pdf"])
        #expect(try run { $0.through = .init(year: 2024, month: 2, day: 1) } == ["plain"])
        #expect(try run { $0.from = .init(year: 2024, month: 2, day: 5); $0.through = .init(year: 2024, month: 2, day: 4) } == [])
    }

    @Test func datesAreThoseOfTheEntrysOwnCalendar() throws {
        let dir = TemporaryDirectory()
        let (vault, _) = try makeVault(dir)
        // 23:30 on 14 March at UTC+10 is 13:30 UTC the same day.
        try vault.add(EntryBody(created: Self.ms(2020, 3, 14, 13, 30), utcOffsetSeconds: 36_000, text: "2020 late evening at +10"))
        // 00:30 on 15 March at UTC+10 is 14:30 UTC on the 14th: the 15th locally.
        try vault.add(EntryBody(created: Self.ms(2021, 3, 14, 14, 30), utcOffsetSeconds: 36_000, text: "2021 just after midnight at +10"))
        // 20:00 on 14 March at UTC−5 is 01:00 UTC on the 15th: the 14th locally.
        try vault.add(EntryBody(created: Self.ms(2019, 3, 15, 1, 0), utcOffsetSeconds: -18_000, text: "2019 evening at -5"))
        // No offset recorded: Sydney's daylight time (+11) gives 23:30 on the 14th.
        try vault.add(EntryBody(created: Self.ms(2022, 3, 14, 12, 30), timeZone: "Australia/Sydney", text: "2022 Sydney by zone"))
        // No offset and no zone: UTC.
        try vault.add(EntryBody(created: Self.ms(2018, 3, 14, 23, 59), text: "2018 UTC"))
        try vault.add(EntryBody(created: Self.ms(2017, 3, 15, 0, 0), text: "2017 UTC next day"))
        // The same day this year is not "on this day".
        try vault.add(EntryBody(created: Self.ms(2024, 3, 14), utcOffsetSeconds: 0, text: "2024 today"))

        var q = EntryQuery()
        q.onThisDay = EntryQuery.Day(year: 2024, month: 3, day: 14)
        #expect(Self.texts(try vault.entries(matching: q)) == [
            "2022 Sydney by zone", "2020 late evening at +10", "2019 evening at -5", "2018 UTC",
        ])
        q.onThisDay = EntryQuery.Day(year: 2024, month: 3, day: 15)
        #expect(Self.texts(try vault.entries(matching: q)) == ["2021 just after midnight at +10", "2017 UTC next day"])

        var range = EntryQuery(order: .oldestFirst)
        range.from = EntryQuery.Day(year: 2021, month: 3, day: 15)
        range.through = EntryQuery.Day(year: 2021, month: 3, day: 15)
        #expect(Self.texts(try vault.entries(matching: range)) == ["2021 just after midnight at +10"])
        range.from = EntryQuery.Day(year: 2019, month: 3, day: 14)
        range.through = EntryQuery.Day(year: 2019, month: 3, day: 14)
        #expect(Self.texts(try vault.entries(matching: range)) == ["2019 evening at -5"])

        // A day from an instant and a zone: 16:00 UTC on the 14th is 01:00 on
        // the 15th in Tokyo and noon on the 14th in New York.
        let instant = Date(timeIntervalSince1970: Double(Self.ms(2024, 3, 14, 16, 0)) / 1000)
        #expect(EntryQuery.Day(instant, in: TimeZone(identifier: "Asia/Tokyo")!) == EntryQuery.Day(year: 2024, month: 3, day: 15))
        #expect(EntryQuery.Day(instant, in: TimeZone(identifier: "America/New_York")!) == EntryQuery.Day(year: 2024, month: 3, day: 14))
    }

    @Test func aConflictIsFoundAndItsResolutionSeen() throws {
        let dir = TemporaryDirectory()
        let (vault, _) = try makeVault(dir)
        let a = try vault.add(EntryBody(created: Self.ms(2024, 8, 1), text: "a"))
        try vault.add(EntryBody(created: Self.ms(2024, 8, 2), text: "b"))
        var q = EntryQuery()
        q.hasConflicts = true
        #expect(try vault.entries(matching: q).entries.isEmpty)
        // Two edits from the same base: two heads, kept as a conflict.
        try vault.edit(a.entryID, body: EntryBody(created: Self.ms(2024, 8, 1), text: "a, one way"), replacing: [a.revisionID])
        try vault.edit(a.entryID, body: EntryBody(created: Self.ms(2024, 8, 1), text: "a, another"), replacing: [a.revisionID])
        let conflicted = try vault.entries(matching: q)
        #expect(conflicted.entries.map(\.id) == [a.entryID])
        #expect(conflicted.entries.first?.conflictingHeads.count == 1)
        // Resolved by an edit naming both heads.
        try vault.edit(a.entryID, body: EntryBody(created: Self.ms(2024, 8, 1), text: "a, resolved"))
        #expect(try vault.entries(matching: q).entries.isEmpty)
        q.hasConflicts = false
        #expect(Self.texts(try vault.entries(matching: q)) == ["b", "a, resolved"])
    }

    @Test func queriesAndSearchesFromManyTasksWhileWriting() async throws {
        let dir = TemporaryDirectory()
        let (vault, _) = try makeVault(dir)
        for i in 0..<40 { try vault.add(EntryBody(created: Int64(i) * 1000, text: "entry \(i) river")) }
        try await withThrowingTaskGroup(of: Int.self) { group in
            group.addTask {
                for i in 40..<80 { try vault.add(EntryBody(created: Int64(i) * 1000, text: "entry \(i) river")) }
                return 0
            }
            for t in 0..<6 {
                group.addTask {
                    var seen = 0
                    for _ in 0..<20 {
                        let page = t % 2 == 0 ? try vault.search("river", matching: EntryQuery(limit: 10)) : try vault.entries(matching: EntryQuery(limit: 10))
                        #expect(page.entries.count == 10)
                        // Newest first, strictly.
                        #expect(zip(page.entries, page.entries.dropFirst()).allSatisfy { $0.body.createdMilliseconds > $1.body.createdMilliseconds })
                        seen += page.entries.count
                    }
                    return seen
                }
            }
            for try await _ in group {}
        }
        #expect(try await vault.search("river", matching: EntryQuery(limit: 100)).entries.count == 80)
        #expect(try await vault.entries(matching: EntryQuery(limit: 100)).entries.count == 80)
    }

    @Test func aZoneWithoutOffsetFollowsDaylightSavingTime() throws {
        let dir = TemporaryDirectory()
        let (vault, _) = try makeVault(dir)
        // Europe/London: BST (+1) from 31 March 01:00 UTC to 27 October 01:00 UTC 2024.
        try vault.add(EntryBody(created: Self.ms(2024, 10, 27, 23, 30), timeZone: "Europe/London", text: "27 Oct 23:30 GMT"))
        try vault.add(EntryBody(created: Self.ms(2024, 3, 30, 23, 30), timeZone: "Europe/London", text: "30 Mar 23:30 GMT"))
        try vault.add(EntryBody(created: Self.ms(2024, 10, 26, 23, 30), timeZone: "Europe/London", text: "27 Oct 00:30 BST"))
        func day(_ m: Int, _ d: Int) throws -> [String] {
            var q = EntryQuery(order: .oldestFirst)
            q.from = EntryQuery.Day(year: 2024, month: m, day: d)
            q.through = q.from
            return Self.texts(try vault.entries(matching: q))
        }
        #expect(try day(10, 27) == ["27 Oct 00:30 BST", "27 Oct 23:30 GMT"])
        #expect(try day(10, 26) == [])
        #expect(try day(3, 30) == ["30 Mar 23:30 GMT"])
        // Added after the summaries were built: 23:30 UTC on 31 March is 00:30 BST on 1 April.
        try vault.add(EntryBody(created: Self.ms(2024, 3, 31, 23, 30), timeZone: "Europe/London", text: "1 Apr 00:30 BST"))
        #expect(try day(4, 1) == ["1 Apr 00:30 BST"])
        #expect(try day(3, 31) == [])
    }

    @Test func aCursorSurvivesInsertsAndDeletesBetweenPages() throws {
        let dir = TemporaryDirectory()
        let (vault, _) = try makeVault(dir)
        var ids: [Int: EntryID] = [:]
        for day in 1...10 { ids[day] = try vault.add(EntryBody(created: Self.ms(2024, 5, day), text: "day \(day)")).entryID }
        let q = EntryQuery(limit: 3)
        let first = try vault.entries(matching: q)
        #expect(Self.texts(first) == ["day 10", "day 9", "day 8"])

        // Between pages: a newer entry (belongs before the cursor), an older
        // one (belongs after it), the cursor's own row and a row of the next
        // page deleted.
        try vault.add(EntryBody(created: Self.ms(2024, 5, 20), text: "day 20"))
        try vault.add(EntryBody(created: Self.ms(2024, 5, 6, 18), text: "day 6 evening"))
        try vault.delete(ids[8]!)
        try vault.delete(ids[7]!)

        let second = try vault.entries(matching: q, after: first.next)
        #expect(Self.texts(second) == ["day 6 evening", "day 6", "day 5"])
        let third = try vault.entries(matching: q, after: second.next)
        #expect(Self.texts(third) == ["day 4", "day 3", "day 2"])
        let fourth = try vault.entries(matching: q, after: third.next)
        #expect(Self.texts(fourth) == ["day 1"])
        #expect(fourth.next == nil)

        // The same cursor, oldest first, goes the other way; and survives a reload.
        try vault.reload()
        let back = try vault.entries(matching: EntryQuery(order: .oldestFirst, limit: 5), after: second.next)
        #expect(Self.texts(back) == ["day 6", "day 6 evening", "day 9", "day 10", "day 20"])
    }

    @Test func anEditMovesAnEntryAndChangesWhatFiltersSee() throws {
        let dir = TemporaryDirectory()
        let (vault, recovery) = try makeVault(dir)
        let a = try vault.add(EntryBody(created: Self.ms(2024, 7, 1), text: "a", tags: ["x"]))
        try vault.add(EntryBody(created: Self.ms(2024, 7, 2), text: "b"))
        var q = EntryQuery()
        q.tags = ["x"]
        #expect(Self.texts(try vault.entries(matching: q)) == ["a"])
        try vault.edit(a.entryID, body: EntryBody(created: Self.ms(2024, 7, 3), text: "a moved", tags: ["y"]))
        #expect(Self.texts(try vault.entries(matching: q)) == [])
        #expect(Self.texts(try vault.entries(matching: EntryQuery())) == ["a moved", "b"])

        // Another handle's write is seen once this handle has read it.
        let other = try Vault.open(at: dir.file("v.quire"), credential: .recoveryKey(recovery), options: fast)
        try other.add(EntryBody(created: Self.ms(2024, 7, 4), text: "from another handle", tags: ["x"]))
        try vault.commit { _ in }
        #expect(Self.texts(try vault.entries(matching: q)) == ["from another handle"])
    }
}
