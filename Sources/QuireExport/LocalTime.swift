import Foundation
@_spi(Format) public import Quire
import Synchronization

/// A wall-clock reading in an entry's own time zone.
public struct LocalTime: Sendable, Equatable {
    /// Proleptic Gregorian year (may be before 1583).
    public var year: Int
    /// Month 1…12.
    public var month: Int
    /// Day of month 1…31.
    public var day: Int
    /// Hour 0…23.
    public var hour: Int
    /// Minute 0…59.
    public var minute: Int
    /// Second 0…59.
    public var second: Int
    /// The offset from UTC used, in seconds east.
    public var offsetSeconds: Int

    /// The local time of `body.createdMilliseconds`: the offset is `body.utcOffsetSeconds`
    /// when recorded, else the offset of `body.timeZoneIdentifier` (IANA) at that
    /// instant, else 0 (UTC).
    public init(of body: EntryBody) {
        self.init(milliseconds: body.createdMilliseconds, offsetSeconds: Self.offset(of: body))
    }

    /// The wall-clock reading at `milliseconds` (since 1970, UTC) shifted by
    /// `offsetSeconds` east.
    /// Every `Int64` instant has a reading (years −292,275,055 to
    /// 292,278,994, proleptic Gregorian): the arithmetic works in seconds
    /// and days, which cannot overflow for an offset within ±18 hours.
    public init(milliseconds: Int64, offsetSeconds: Int) {
        self.init(seconds: Self.floorDiv(milliseconds, 1000), offsetSeconds: offsetSeconds)
    }

    /// The wall-clock reading at `seconds` since 1970 (UTC) shifted by
    /// `offsetSeconds` east (within ±18 hours: ``offset(of:)``).
    init(seconds utcSeconds: Int64, offsetSeconds: Int) {
        let seconds = utcSeconds + Int64(offsetSeconds)
        let days = Self.floorDiv(seconds, 86_400)
        let secs = Int(seconds - days * 86_400)
        (year, month, day) = Self.civil(fromDays: days)
        hour = secs / 3600
        minute = secs / 60 % 60
        second = secs % 60
        self.offsetSeconds = offsetSeconds
    }

    /// Midnight of a calendar date, at offset 0 (for naming months and days):
    /// from its day count, never through milliseconds, which overflow for the
    /// first month of an instant near `Int64.min`.
    init(year: Int, month: Int, day: Int) {
        self.init(seconds: 0, offsetSeconds: 0)
        (self.year, self.month, self.day) = Self.civil(fromDays: Self.days(fromCivil: year, month, day))
    }

    /// The day of the week: 0 = Sunday … 6 = Saturday.
    public var weekday: Int { CivilCalendar.weekday(fromDays: Self.days(fromCivil: year, month, day)) }

    /// The offset in seconds east of UTC for `body.createdMilliseconds`.
    public static func offset(of body: EntryBody) -> Int {
        if let o = body.utcOffsetSeconds, abs(o) <= 18 * 3600 { return Int(o) }
        guard !body.timeZoneIdentifier.isEmpty, let zone = zone(named: body.timeZoneIdentifier) else { return 0 }
        let offset = zone.secondsFromGMT(for: Date(timeIntervalSince1970: Double(body.createdMilliseconds) / 1000))
        return abs(offset) <= 18 * 3600 ? offset : 0
    }

    /// Time zones by IANA name, made once each (at most 1,000 names kept).
    private static let zones = Mutex<[String: TimeZone?]>([:])

    static func zone(named name: String) -> TimeZone? {
        if let known = zones.withLock({ $0[name] }) { return known }
        let made = TimeZone(identifier: name)
        zones.withLock { cache in
            if cache.count < 1000 { cache[name] = made }
        }
        return made
    }

    /// `YYYY-MM-DD`.
    public var dateString: String { "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))" }

    /// RFC 3339 for the same instant: the local time with its offset, such as
    /// `2026-03-01T08:30:00+01:00`; when the offset is not a whole number of
    /// minutes (local mean time before standard zones, such as London's
    /// −0:01:15 in 1660), which RFC 3339 cannot write, the UTC time with `Z`,
    /// such as `1660-01-11T22:01:15Z`, so the instant is never off.
    public var iso8601: String {
        guard offsetSeconds % 60 == 0 else {
            // Back to the instant: days since 1970 of the local date, plus the
            // local time of day, minus the offset.
            let local = Self.days(fromCivil: year, month, day) * 86_400 + Int64(hour * 3600 + minute * 60 + second)
            let utc = LocalTime(seconds: local - Int64(offsetSeconds), offsetSeconds: 0)
            return "\(utc.dateString)T\(pad(utc.hour, 2)):\(pad(utc.minute, 2)):\(pad(utc.second, 2))Z"
        }
        let sign = offsetSeconds < 0 ? "-" : "+"
        let m = abs(offsetSeconds) / 60
        return "\(dateString)T\(pad(hour, 2)):\(pad(minute, 2)):\(pad(second, 2))\(sign)\(pad(m / 60, 2)):\(pad(m % 60, 2))"
    }

    /// English month name, such as `January`.
    public var monthName: String { Self.monthNames[month - 1] }

    /// English month names, January first.
    public static let monthNames = [
        "January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December",
    ]

    /// UTC ISO 8601 with seconds and `Z` for `milliseconds` since 1970.
    public static func utcString(_ milliseconds: Int64) -> String {
        let t = LocalTime(milliseconds: milliseconds, offsetSeconds: 0)
        return "\(t.dateString)T\(pad(t.hour, 2)):\(pad(t.minute, 2)):\(pad(t.second, 2))Z"
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date.
    static func days(fromCivil y: Int, _ m: Int, _ d: Int) -> Int64 { CivilCalendar.days(year: y, month: m, day: d) }

    static func floorDiv(_ a: Int64, _ b: Int64) -> Int64 { CivilCalendar.floorDivide(a, b).quotient }

    /// The date `z0` days after 1970-01-01.
    static func civil(fromDays z0: Int64) -> (Int, Int, Int) {
        let d = CivilCalendar.date(fromDays: z0)
        return (d.year, d.month, d.day)
    }
}

func pad(_ value: Int, _ width: Int) -> String {
    let s = String(abs(value))
    let padded = s.count >= width ? s : String(repeating: "0", count: width - s.count) + s
    return value < 0 ? "-" + padded : padded
}
