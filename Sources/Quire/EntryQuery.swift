public import Foundation
@_spi(Format) public import QuireFormat

/// Which entries a timeline (``Vault/entries(matching:after:)``) or a search
/// (``Vault/search(_:matching:after:)``) shows, in what order, and how many
/// per page. Every filter set must hold (they combine with AND); a filter
/// left nil or empty does not filter. Deleted entries are never shown.
///
/// Dates are those of each entry's own calendar: the calendar date of its
/// `created` instant at its `utcOffset`, or in its `timeZone` when it has
/// no offset, or in UTC when it has neither (`Spec/records.md §3.3`). An
/// entry written at 23:30 at UTC+10 belongs to that local day, wherever the
/// reader is.
///
/// ```swift
/// var query = EntryQuery(order: .newestFirst, limit: 50)
/// query.tags = ["travel"]
/// let first = try await vault.entries(matching: query)
/// let second = try await vault.entries(matching: query, after: first.next)
/// ```
///
/// A query is `Codable`, so an app can keep a saved filter or restore a
/// screen's query (with its ``EntryCursor``) between launches.
public struct EntryQuery: Sendable, Hashable, Codable {
    /// The order of rows, by the entry's date (`created`), then by entry id.
    public enum Order: Sendable, Hashable, Codable {
        /// The latest `created` first.
        case newestFirst
        /// The earliest `created` first.
        case oldestFirst
    }

    /// A date of the proleptic Gregorian calendar, as an entry's own
    /// calendar reads it (no time zone of its own). Days compare in
    /// calendar order.
    public struct Day: Sendable, Hashable, Comparable, Codable {
        /// The year (astronomical numbering: 0 is 1 BCE).
        public var year: Int
        /// The month, 1…12.
        public var month: Int
        /// The day of the month, 1…31. A day past the month's end rolls
        /// over into the next month in date ranges (February 30 is
        /// March 1 or 2); "on this day" compares month and day as given.
        public var day: Int

        /// The date `year`-`month`-`day`.
        public init(year: Int, month: Int, day: Int) {
            self.year = year
            self.month = month
            self.day = day
        }

        /// The calendar date of the instant `date` in `timeZone`, such as
        /// today on this device: `EntryQuery.Day(Date(), in: .current)`.
        public init(_ date: Date, in timeZone: TimeZone = .current) {
            let seconds = date.timeIntervalSince1970
            let ms = seconds.isFinite ? Int64(max(-9.2e15, min(9.2e15, (seconds * 1000).rounded(.down)))) : 0
            let offset = Int64(timeZone.secondsFromGMT(for: date))
            let d = CivilCalendar.date(fromDays: EntrySummary.localDay(created: ms, offsetSeconds: offset))
            self.init(year: d.year, month: d.month, day: d.day)
        }

        /// The date of `body` in its own calendar, the day a timeline files
        /// it under (``EntryQuery/from``, ``EntryQuery/through``): its
        /// `created` instant at its `utcOffset`, else in its `timeZone`,
        /// else in UTC. Shared with `ExportFilter`.
        package init(of body: EntryBody) {
            var offsets = UTCOffsets()
            let days = EntrySummary.localDay(created: body.createdMilliseconds, offsetSeconds: Int64(offsets.offset(of: body)))
            let d = CivilCalendar.date(fromDays: days)
            self.init(year: d.year, month: d.month, day: d.day)
        }

        /// Days since 1970-01-01.
        var dayNumber: Int64 { CivilCalendar.days(year: year, month: month, day: day) }

        /// Calendar order.
        @_spi(Format) public static func < (a: Day, b: Day) -> Bool { a.dayNumber < b.dayNumber }
    }

    /// The order of rows; default newest first.
    public var order: Order
    /// Rows per page, at least 1 (a smaller value counts as 1); default 50.
    public var limit: Int
    /// The earliest day shown (inclusive), in each entry's own calendar.
    public var from: Day?
    /// The latest day shown (inclusive), in each entry's own calendar.
    public var through: Day?
    /// "On this day": entries whose own calendar date has this month and
    /// day in an earlier year than this day's.
    public var onThisDay: Day?
    /// Entries with at least one of these tags, compared case-insensitively
    /// (`String.lowercased()`); empty: any.
    public var tags: Set<String>
    /// Entries of this journal, compared case-insensitively (`""` is the
    /// main journal); nil: any.
    public var journal: String?
    /// true: starred entries only; false: unstarred only; nil: either.
    public var isStarred: Bool?
    /// true: entries with at least one attachment; false: without; nil: either.
    public var hasAttachments: Bool?
    /// true: entries with at least one `image/…` attachment; false: without; nil: either.
    public var hasPhotos: Bool?
    /// true: entries with conflicting heads to resolve (`Spec/merge.md §5`);
    /// false: without; nil: either.
    public var hasConflicts: Bool?

    /// A query with no filter.
    public init(order: Order = .newestFirst, limit: Int = 50) {
        self.order = order
        self.limit = limit
        tags = []
    }
}

/// A place in a query's order, opaque to an app: where a page ended
/// (``EntryPage/next``), or at a row (``init(before:)``,
/// ``init(after:)``). The page after it holds the rows that follow it in
/// the query's order, so entries added or deleted between pages are
/// neither skipped nor repeated, and a cursor stays valid across a refresh
/// or a reopen. It is `Codable` (and `Hashable`), so an app can keep where
/// a list was scrolled to between launches and pass it back with the same
/// query.
///
/// A place is an entry's date and id, not an order: the same cursor pages
/// down a newest-first timeline and, with the order flipped
/// (``EntryQuery/Order/oldestFirst``), up it.
public struct EntryCursor: Sendable, Hashable, Codable {
    let key: EntrySortKey
    /// True for a cursor just before the row of `key` (``init(before:)``):
    /// the page after it starts with that row.
    let includesRow: Bool

    init(_ key: EntrySortKey, includesRow: Bool = false) {
        self.key = key
        self.includesRow = includesRow
    }

    /// The cursor just before `row`: the page after it starts with `row`
    /// itself, then the rows that follow it in the query's order. An app
    /// that shows an entry from a notification, a search hit or a widget's
    /// link opens the timeline there:
    /// `vault.entries(matching: query, after: EntryCursor(before: row))`.
    /// The rows on the other side are the page of the query with its order
    /// flipped after ``init(after:)`` of the same row.
    ///
    /// The cursor holds the row's date (its body's `created`) and id as the
    /// snapshot gives them: if the entry is later deleted, or its date
    /// edited, the page starts where the row stood. A row the query does
    /// not select (another journal, a filter) is a place all the same.
    public init(before row: EntrySnapshot) {
        self.init(EntrySortKey(created: row.body.createdMilliseconds, id: row.id), includesRow: true)
    }

    /// The cursor just after `row`: the page after it starts with the row
    /// that follows `row` in the query's order, without `row` — the cursor
    /// a page whose last row is `row` ends with (``EntryPage/next``). With
    /// the order flipped, it gives the rows before ``init(before:)`` of the
    /// same row, nearest first: what a timeline opened at `row` shows above
    /// it.
    public init(after row: EntrySnapshot) {
        self.init(EntrySortKey(created: row.body.createdMilliseconds, id: row.id))
    }

    /// The cursor just after the row with date `date` and id `entryID`.
    @_spi(Format) public init(date: Date, entryID: EntryID) {
        let ms = (date.timeIntervalSince1970 * 1000).rounded(.down)
        key = EntrySortKey(created: ms.isFinite ? Int64(max(-9.2e18, min(9.2e18, ms))) : 0, id: entryID)
        includesRow = false
    }

    /// The last row's date (its `created`, millisecond precision).
    @_spi(Format) public var date: Date { Date(timeIntervalSince1970: Double(key.created) / 1000) }
    /// The last row's entry id.
    @_spi(Format) public var entryID: EntryID { key.id }

    private enum CodingKeys: String, CodingKey {
        case created
        case entryID
        case includesRow
    }

    /// Decodes a cursor ``encode(to:)`` wrote: the row's `created`
    /// (milliseconds since the Unix epoch, UTC), its entry id (hex), and
    /// `includesRow: true` for a cursor before the row (absent: after it,
    /// as every cursor an earlier version kept).
    ///
    /// - Throws: `DecodingError` when one is missing or malformed.
    @_spi(Format) public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        key = EntrySortKey(
            created: try container.decode(Int64.self, forKey: .created), id: try container.decode(EntryID.self, forKey: .entryID))
        includesRow = try container.decodeIfPresent(Bool.self, forKey: .includesRow) ?? false
    }

    /// Encodes the cursor as the row's `created` (milliseconds since the
    /// Unix epoch, UTC) and its entry id, with `includesRow: true` for a
    /// cursor before the row.
    ///
    /// - Throws: the encoder's errors.
    @_spi(Format) public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(key.created, forKey: .created)
        try container.encode(key.id, forKey: .entryID)
        if includesRow { try container.encode(true, forKey: .includesRow) }
    }
}

/// One page of a query or a search; `Equatable`, so a view can skip a
/// page that did not change.
public struct EntryPage: Sendable, Equatable {
    /// The rows, in the query's order: at most the query's limit.
    public let entries: [EntrySnapshot]
    /// The cursor to pass for the next page; nil when no row follows.
    public let next: EntryCursor?
}
