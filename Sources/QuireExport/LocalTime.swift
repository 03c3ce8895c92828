import Foundation
import Synchronization
public import Quire

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

    /// The local time of `body.created`: the offset is `body.utcOffsetSeconds`
    /// when recorded, else the offset of `body.timeZone` (IANA) at that
    /// instant, else 0 (UTC).
    public init(of body: EntryBody) {
        self.init(milliseconds: body.created, offsetSeconds: Self.offset(of: body))
    }

    /// The wall-clock reading at `milliseconds` (since 1970, UTC) shifted by
    /// `offsetSeconds` east.
    public init(milliseconds: Int64, offsetSeconds: Int) {
        let seconds = Self.floorDiv(milliseconds, 1000) + Int64(offsetSeconds)
        let days = Self.floorDiv(seconds, 86_400)
        let secs = Int(seconds - days * 86_400)
        (year, month, day) = Self.civil(fromDays: days)
        hour = secs / 3600
        minute = secs / 60 % 60
        second = secs % 60
        self.offsetSeconds = offsetSeconds
    }

    /// The offset in seconds east of UTC for `body.created`.
    public static func offset(of body: EntryBody) -> Int {
        if let o = body.utcOffsetSeconds, abs(o) <= 18 * 3600 { return Int(o) }
        guard !body.timeZone.isEmpty, let zone = zone(named: body.timeZone) else { return 0 }
        return zone.secondsFromGMT(for: Date(timeIntervalSince1970: Double(body.created) / 1000))
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

    /// ISO 8601 / RFC 3339 with the offset, such as `1660-01-11T22:00:00-00:01`
    /// (the offset rounded towards zero to whole minutes, as RFC 3339 requires).
    public var iso8601: String {
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

    static func floorDiv(_ a: Int64, _ b: Int64) -> Int64 {
        let q = a / b
        return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q
    }

    /// Days since 1970-01-01 to a proleptic Gregorian date (H. Hinnant's algorithm).
    static func civil(fromDays z0: Int64) -> (Int, Int, Int) {
        let z = z0 + 719_468
        let era = floorDiv(z, 146_097)
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        let y = yoe + era * 400 + (m <= 2 ? 1 : 0)
        return (Int(y), Int(m), Int(d))
    }
}

/// `value` in decimal, zero-padded to `width` digits (a minus sign first).
func pad(_ value: Int, _ width: Int) -> String {
    let s = String(abs(value))
    let padded = s.count >= width ? s : String(repeating: "0", count: width - s.count) + s
    return value < 0 ? "-" + padded : padded
}
