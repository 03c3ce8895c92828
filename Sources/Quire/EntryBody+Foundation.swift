public import Foundation
@_spi(Format) public import QuireFormat

// Foundation views of an entry body's wire fields (`Spec/records.md §3.3`):
// the body keeps milliseconds, a zone name and an integer mood on the wire
// (`createdMilliseconds`, `timeZoneIdentifier`, `moodRawValue`…, SPI);
// an app reads and writes them as `Date`, `TimeZone` and ``Mood``.

extension EntryBody {
    /// A mood on the spec's scale from 1 (very bad) to 5 (very good)
    /// (`Spec/records.md §3.3`). Readers accept any integer, so a value
    /// outside the scale is kept as ``other(_:)`` and written back unchanged.
    /// Reading a body gives a case of the scale for 1…5 and ``other(_:)``
    /// only for a value outside it.
    public enum Mood: Sendable, Hashable {
        /// 1, the lowest mood of the scale.
        case veryBad
        /// 2.
        case bad
        /// 3, the middle of the scale.
        case neutral
        /// 4.
        case good
        /// 5, the highest mood of the scale.
        case veryGood
        /// A value outside 1…5, as another writer stored it.
        case other(Int64)

        /// The five moods of the scale, lowest first, such as for a picker.
        public static let scale: [Mood] = [.veryBad, .bad, .neutral, .good, .veryGood]

        /// The mood stored as `rawValue`: a case of the scale for 1…5,
        /// ``other(_:)`` for any other integer. Never fails.
        @_spi(Format) public init(rawValue: Int64) {
            switch rawValue {
            case 1: self = .veryBad
            case 2: self = .bad
            case 3: self = .neutral
            case 4: self = .good
            case 5: self = .veryGood
            default: self = .other(rawValue)
            }
        }

        /// The integer stored in the body's `mood` field: 1…5 for the scale.
        @_spi(Format) public var rawValue: Int64 {
            switch self {
            case .veryBad: 1
            case .bad: 2
            case .neutral: 3
            case .good: 4
            case .veryGood: 5
            case .other(let value): value
            }
        }
    }

    /// A body written now: `created` is `created` (default the current
    /// instant, stored to the millisecond) and the time zone is `timeZone`
    /// (default this device's), with its offset at that instant; every
    /// other field has its default. For the tools and tests: an app
    /// writes `EntryBody(created: Date(), text: text)`, the one public
    /// initialiser.
    @_spi(Format) public init(text: String, created: Date = Date(), timeZone: TimeZone = .current) {
        self.init(created: created.millisecondsSince1970, text: text)
        self.timeZone = timeZone
    }

    /// A body with the given fields. `created` is stored to the
    /// millisecond; `timeZone` is stored by its identifier (use an IANA
    /// zone, such as `"Europe/London"`; nil: unknown, shown in UTC), with
    /// its offset at `created`; `modified` is usually left nil (the
    /// library sets it when an entry is edited).
    public init(
        created: Date, modified: Date? = nil, timeZone: TimeZone? = .current, isAllDay: Bool = false, text: String = "",
        tags: [String] = [], mood: Mood? = nil, isStarred: Bool = false, isPinned: Bool = false, journal: String = "",
        location: Location? = nil, weather: Weather? = nil, attachments: [AttachmentReference] = []
    ) {
        self.init(
            created: created.millisecondsSince1970, modified: modified?.millisecondsSince1970, isAllDay: isAllDay, text: text,
            tags: tags, mood: mood?.rawValue, isStarred: isStarred, isPinned: isPinned, journal: journal, location: location,
            weather: weather, attachments: attachments)
        self.timeZone = timeZone
    }

    /// When the entry happened (millisecond precision). Setting it rounds
    /// to the nearest millisecond; when the body records an offset and a
    /// zone this device knows, the offset is recomputed for the new instant
    /// so the two agree.
    public var created: Date {
        get { Date(millisecondsSince1970: createdMilliseconds) }
        set {
            createdMilliseconds = newValue.millisecondsSince1970
            if utcOffsetSeconds != nil, let zone = timeZone {
                utcOffsetSeconds = Int64(zone.secondsFromGMT(for: newValue))
            }
        }
    }

    /// When the entry's content last changed (millisecond precision); nil
    /// when absent, in which case readers take it as equal to ``created``.
    /// The library sets it when an entry is edited or restored. Setting it
    /// rounds to the nearest millisecond.
    public var modified: Date? {
        get { modifiedMilliseconds.map { Date(millisecondsSince1970: $0) } }
        set { modifiedMilliseconds = newValue?.millisecondsSince1970 }
    }

    /// The time zone the entry was written in; nil when unknown (show it
    /// in UTC) or when its stored name is one this device's time-zone
    /// database does not know. Setting it stores the zone's identifier (use
    /// an IANA zone, such as `"Europe/London"`) and its offset at
    /// ``created``; setting nil clears both.
    public var timeZone: TimeZone? {
        get { timeZoneIdentifier.isEmpty ? nil : TimeZone(identifier: timeZoneIdentifier) }
        set {
            timeZoneIdentifier = newValue?.identifier ?? ""
            utcOffsetSeconds = newValue.map { Int64($0.secondsFromGMT(for: created)) }
        }
    }

    /// The entry's date in its own calendar, the day queries file it under
    /// (``EntryQuery``): the date of ``created`` at the offset the writer
    /// recorded, or in ``timeZone`` when there is none, or in UTC when there
    /// is neither
    /// (`Spec/records.md §3.3`). Holds `year` (proleptic Gregorian,
    /// astronomical numbering: 0 is 1 BCE), `month` 1…12, `day` 1…31,
    /// `weekday` 1 (Sunday)…7 and `timeZone`, the fixed offset the date was
    /// taken at.
    public var localDateComponents: DateComponents {
        var offsets = UTCOffsets()
        let offset = offsets.offset(of: self)
        let days = EntrySummary.localDay(created: createdMilliseconds, offsetSeconds: Int64(offset))
        let date = CivilCalendar.date(fromDays: days)
        var components = DateComponents(year: date.year, month: date.month, day: date.day)
        components.weekday = CivilCalendar.weekday(fromDays: days) + 1
        components.timeZone = TimeZone(secondsFromGMT: offset)
        return components
    }

    /// The mood; nil when not recorded. Setting it stores the mood's
    /// integer, 1…5 for the scale (nil removes the field).
    public var mood: Mood? {
        get { moodRawValue.map(Mood.init(rawValue:)) }
        set { moodRawValue = newValue?.rawValue }
    }
}

extension Date {
    /// The instant `milliseconds` after 1970-01-01 00:00 UTC.
    init(millisecondsSince1970 milliseconds: Int64) {
        self.init(timeIntervalSince1970: Double(milliseconds) / 1000)
    }

    /// Milliseconds since 1970-01-01 00:00 UTC, rounded to the nearest (so
    /// that `Date(millisecondsSince1970:)` round-trips), clamped to about
    /// ±292 million years; 0 for a date that is not finite.
    var millisecondsSince1970: Int64 {
        let ms = (timeIntervalSince1970 * 1000).rounded()
        return ms.isFinite ? Int64(max(-9.2e18, min(9.2e18, ms))) : 0
    }
}
