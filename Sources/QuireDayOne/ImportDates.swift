import Foundation
@_spi(Format) import Quire

/// Instants and calendar dates as importers read and write them
/// (`Spec/import.md §4`). Calendar arithmetic is the proleptic Gregorian
/// calendar in UTC, done here so that dates before 1583 (or Pepys's 1660s)
/// never pass through a Julian switch-over.
public enum ImportDates {
    /// Milliseconds since the Unix epoch (UTC) for an ISO 8601 / RFC 3339
    /// date-time such as `2024-07-20T09:15:00Z`, `2024-07-20T09:15:00.250Z`
    /// or `2024-07-20T10:15:00+01:00`; nil when `text` is not one.
    public static func milliseconds(iso text: String) -> Int64? {
        let b = Array(text.utf8)
        func num(_ from: Int, _ count: Int) -> Int64? {
            guard from + count <= b.count else { return nil }
            var v: Int64 = 0
            for i in from..<from + count {
                guard b[i] >= 0x30, b[i] <= 0x39 else { return nil }
                v = v * 10 + Int64(b[i] - 0x30)
            }
            return v
        }
        guard b.count >= 19, b[4] == UInt8(ascii: "-"), b[7] == UInt8(ascii: "-"),
            b[10] == UInt8(ascii: "T") || b[10] == UInt8(ascii: " ") || b[10] == UInt8(ascii: "t"),
            b[13] == UInt8(ascii: ":"), b[16] == UInt8(ascii: ":"),
            let y = num(0, 4), let mo = num(5, 2), let d = num(8, 2), let h = num(11, 2), let mi = num(14, 2), let s = num(17, 2),
            (1...12).contains(mo), (1...31).contains(d), h < 24, mi < 60, s < 61
        else { return nil }
        // A day the month does not have (2020-02-30) is refused, not rolled over.
        let leap = y % 4 == 0 && (y % 100 != 0 || y % 400 == 0)
        let monthDays: [Int64] = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        guard d <= monthDays[Int(mo) - 1] else { return nil }
        var i = 19
        var ms: Int64 = 0
        if i < b.count, b[i] == UInt8(ascii: ".") {
            i += 1
            var digits = 0
            while i < b.count, b[i] >= 0x30, b[i] <= 0x39 {
                if digits < 3 { ms = ms * 10 + Int64(b[i] - 0x30) }
                digits += 1
                i += 1
            }
            guard digits > 0 else { return nil }
            for _ in digits..<max(digits, 3) { ms *= 10 }
        }
        var offset: Int64 = 0
        if i < b.count, b[i] == UInt8(ascii: "Z") || b[i] == UInt8(ascii: "z") {
            i += 1
        } else if i < b.count, b[i] == UInt8(ascii: "+") || b[i] == UInt8(ascii: "-") {
            let sign: Int64 = b[i] == UInt8(ascii: "-") ? -1 : 1
            guard let oh = num(i + 1, 2) else { return nil }
            var j = i + 3
            var om: Int64 = 0
            if j < b.count, b[j] == UInt8(ascii: ":") { j += 1 }
            if j < b.count {
                guard let m = num(j, 2) else { return nil }
                om = m
                j += 2
            }
            offset = sign * (oh * 3600 + om * 60)
            i = j
        } else {
            return nil
        }
        guard i == b.count else { return nil }
        let days = daysFromCivil(year: y, month: mo, day: d)
        return ((days * 86400 + h * 3600 + mi * 60 + s) - offset) * 1000 + ms
    }

    /// `YYYY-MM-DDTHH:MM:SSZ` in UTC for `ms` (with `.sss` when the
    /// milliseconds are not zero), the shape Day One writes.
    public static func iso(milliseconds ms: Int64) -> String {
        let (secs, rest) = ms.quotientAndRemainder(dividingBy: 1000)
        let (seconds, millis) = rest < 0 ? (secs - 1, rest + 1000) : (secs, rest)
        var (days, t) = seconds.quotientAndRemainder(dividingBy: 86400)
        if t < 0 {
            days -= 1
            t += 86400
        }
        let (y, m, d) = civil(fromDays: days)
        var out =
            pad(y, 4) + "-" + pad(m, 2) + "-" + pad(d, 2) + "T" + pad(t / 3600, 2) + ":" + pad(t % 3600 / 60, 2) + ":" + pad(t % 60, 2)
        if millis != 0 { out += "." + pad(millis, 3) }
        return out + "Z"
    }

    /// The offset of the IANA zone `timeZone` from UTC at the instant `ms`
    /// (milliseconds since the epoch), in seconds east, from Foundation's
    /// time zone database (local mean time before a zone's first rule); nil
    /// for an unknown zone.
    public static func utcOffsetSeconds(timeZone: String, at ms: Int64) -> Int64? {
        guard !timeZone.isEmpty, let zone = TimeZone(identifier: timeZone) else { return nil }
        return Int64(zone.secondsFromGMT(for: Date(timeIntervalSince1970: Double(ms) / 1000)))
    }

    /// The calendar date `YYYY-MM-DD` of the instant `ms` at `offsetSeconds` east of UTC.
    public static func calendarDate(milliseconds ms: Int64, offsetSeconds: Int64) -> String {
        let local = ms / 1000 + offsetSeconds - (ms % 1000 < 0 ? 1 : 0)
        var days = local / 86400
        if local % 86400 < 0 { days -= 1 }
        let (y, m, d) = civil(fromDays: days)
        return pad(y, 4) + "-" + pad(m, 2) + "-" + pad(d, 2)
    }

    /// The local date and time `YYYY-MM-DD HH:MM:SS` of the instant `ms` at `offsetSeconds` east of UTC.
    public static func localDateTime(milliseconds ms: Int64, offsetSeconds: Int64) -> String {
        let shifted = iso(milliseconds: ms - ms % 1000 + offsetSeconds * 1000)
        return String(shifted.prefix(10)) + " " + String(shifted.dropFirst(11).prefix(8))
    }

    private static func pad(_ v: Int64, _ width: Int) -> String {
        let s = String(abs(v))
        return (v < 0 ? "-" : "") + String(repeating: "0", count: max(0, width - s.count)) + s
    }

    /// Days since 1970-01-01 in the proleptic Gregorian calendar.
    static func daysFromCivil(year: Int64, month: Int64, day: Int64) -> Int64 {
        CivilCalendar.days(year: Int(year), month: Int(month), day: Int(day))
    }

    static func civil(fromDays days: Int64) -> (Int64, Int64, Int64) {
        let d = CivilCalendar.date(fromDays: days)
        return (Int64(d.year), Int64(d.month), Int64(d.day))
    }
}
