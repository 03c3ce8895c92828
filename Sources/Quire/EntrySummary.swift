import Foundation
@_spi(Format) import QuireFormat

/// What queries need to know of one entry without its body: the winning
/// head's date, calendar, tags, journal and flags (`Spec/records.md §3.3`,
/// `Spec/merge.md §5`). A plain value of fixed fields, so that a
/// device-local cache can later store it and a cold open can page a
/// timeline before decrypting any body.
///
/// Tags and journal are kept lowercased (`String.lowercased()`), the form
/// the filters compare; the entry's own spelling is in its body.
package struct EntrySummary: Sendable, Equatable {
    /// The entry.
    package var id: EntryID
    /// The winning head's `created`: milliseconds since the Unix epoch, UTC.
    package var created: Int64
    /// The offset from UTC of the entry's own calendar at `created`, in
    /// seconds east: the body's `utcOffset` when present, else its
    /// `timeZone`'s offset at that instant, else 0 (UTC).
    package var utcOffsetSeconds: Int32
    /// The winning head's tags, lowercased, in the writer's order.
    package var tags: [String]
    /// The winning head's journal, lowercased (`""` is the main one).
    package var journal: String
    /// Starred.
    package var isStarred: Bool
    /// At least one attachment.
    package var hasAttachments: Bool
    /// At least one attachment whose media type is `image/…`.
    package var hasPhotos: Bool
    /// The winning head is a tombstone.
    package var isDeleted: Bool
    /// The entry has more than one head (a conflict to resolve).
    package var hasConflict: Bool
    /// The winning head's standing: 2 attested by a member, 1 verified, 0
    /// unverified (`Spec/format.md §9.4`).
    package var standing: UInt8
    /// The frame holding the winning revision, where its body is read.
    package var frame: Int

    /// The summary of an entry whose winning head is `winner`.
    init(id: EntryID, winner: EntryRevision, frame: Int, headCount: Int, standing: Int, offsets: inout UTCOffsets) {
        let body = winner.body
        self.id = id
        created = body.createdMilliseconds
        utcOffsetSeconds = Int32(offsets.offset(of: body))
        tags = body.tags.map { $0.lowercased() }
        journal = body.journal.lowercased()
        isStarred = body.isStarred
        hasAttachments = !body.attachments.isEmpty
        hasPhotos = body.attachments.contains { $0.mediaType.lowercased().hasPrefix("image/") }
        isDeleted = winner.isDeleted
        hasConflict = headCount > 1
        self.standing = UInt8(clamping: standing)
        self.frame = frame
    }

    /// The sort key: the entry's date, then its id.
    var key: EntrySortKey { EntrySortKey(created: created, id: id) }

    /// The entry's calendar date as days since 1970-01-01 in its own
    /// calendar (the local date of `created` at `utcOffsetSeconds`).
    var localDay: Int64 { Self.localDay(created: created, offsetSeconds: Int64(utcOffsetSeconds)) }

    /// Days since 1970-01-01 of the wall-clock date of `created` at an offset.
    static func localDay(created: Int64, offsetSeconds: Int64) -> Int64 {
        // created + offset cannot overflow: created is a real instant's
        // milliseconds only by convention, so saturate.
        let (shifted, overflow) = created.addingReportingOverflow(offsetSeconds * 1000)
        let ms = overflow ? (offsetSeconds > 0 ? Int64.max : Int64.min) : shifted
        return CivilCalendar.floorDivide(ms, 86_400_000).quotient
    }
}

/// The order of queries: by date (`created`, milliseconds UTC), then by
/// entry id (bytewise), so that two entries never tie.
struct EntrySortKey: Sendable, Hashable, Comparable {
    var created: Int64
    var id: EntryID

    static func < (a: EntrySortKey, b: EntrySortKey) -> Bool {
        a.created != b.created ? a.created < b.created : a.id < b.id
    }
}

/// Offsets of IANA time zones at instants, through Foundation's time-zone
/// database, remembering for each zone the last span between transitions it
/// looked up, so that entries read in date order cost one lookup per
/// daylight-saving span rather than one per entry.
struct UTCOffsets {
    private struct Span {
        let zone: TimeZone?
        var start: Int64 = 0
        var end: Int64 = 0
        var offset: Int = 0
    }

    private var spans: [String: Span] = [:]

    /// The offset in seconds east of UTC of `body`'s calendar at
    /// `body.createdMilliseconds`: `utcOffsetSeconds` when recorded (`Spec/records.md
    /// §3.3`), else its `timeZone`'s offset, else 0.
    mutating func offset(of body: EntryBody) -> Int {
        if let o = body.utcOffsetSeconds, EntryBody.utcOffsetRange.contains(o) { return Int(o) }
        guard !body.timeZoneIdentifier.isEmpty else { return 0 }
        return offset(zone: body.timeZoneIdentifier, at: body.createdMilliseconds)
    }

    /// The offset of the zone named `name` at `ms` (milliseconds since 1970, UTC).
    mutating func offset(zone name: String, at ms: Int64) -> Int {
        var span = spans[name] ?? Span(zone: TimeZone(identifier: name))
        guard let zone = span.zone else {
            if spans.count < 1000 { spans[name] = span }
            return 0
        }
        if ms >= span.start && ms < span.end { return span.offset }
        let date = Date(timeIntervalSince1970: Double(ms) / 1000)
        let offset = zone.secondsFromGMT(for: date)
        span.offset = offset
        span.start = ms
        if let next = zone.nextDaylightSavingTimeTransition(after: date) {
            let end = next.timeIntervalSince1970 * 1000
            span.end = end.isFinite && end < 9.2e18 ? Int64(end.rounded(.down)) : Int64.max
        } else {
            span.end = Int64.max
        }
        if span.end <= ms { span.end = ms &+ 1 }
        if spans.count < 1000 || spans[name] != nil { spans[name] = span }
        return offset
    }
}
