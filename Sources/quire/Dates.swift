import Foundation

/// Dates on the command line (`--date`, `--since`, `--until`) and in output.
///
/// Accepted: `YYYY-MM-DD` and `YYYY-MM-DDTHH:MM[:SS]` (also with a space for
/// the `T`) in the local time zone (`TZ`), and ISO 8601 with an offset
/// (`…Z`, `…+01:00`, `…+0100`, optional fractional seconds).
enum DateArgument {
    struct Parsed {
        /// Milliseconds since 1970, UTC.
        let milliseconds: Int64
        /// True for a bare `YYYY-MM-DD`.
        let isDateOnly: Bool
        /// The end of that day (exclusive), for `--until` with a bare date.
        let endOfDayMilliseconds: Int64
    }

    /// Parses `text`; nil when it is not one of the accepted forms or names
    /// a date that does not exist.
    static func parse(_ text: String, zone: TimeZone = .current) -> Parsed? {
        let s = Array(text.trimmingCharacters(in: .whitespaces).utf8)
        func number(_ range: Range<Int>) -> Int? {
            guard range.upperBound <= s.count else { return nil }
            var n = 0
            for i in range {
                guard s[i] >= 0x30 && s[i] <= 0x39 else { return nil }
                n = n * 10 + Int(s[i] - 0x30)
            }
            return n
        }
        guard s.count >= 10, let year = number(0..<4), s[4] == 0x2d, let month = number(5..<7), s[7] == 0x2d, let day = number(8..<10) else {
            return nil
        }
        var hour = 0, minute = 0, second = 0, nanos = 0
        var i = 10
        var offset: Int? = nil
        let dateOnly = s.count == 10
        if !dateOnly {
            guard s[10] == 0x54 || s[10] == 0x74 || s[10] == 0x20, let h = number(11..<13), s.count > 13, s[13] == 0x3a, let m = number(14..<16) else {
                return nil
            }
            hour = h
            minute = m
            i = 16
            if i < s.count, s[i] == 0x3a {
                guard let sec = number(i + 1..<i + 3) else { return nil }
                second = sec
                i += 3
                if i < s.count, s[i] == 0x2e || s[i] == 0x2c {
                    i += 1
                    var digits = 0
                    while i < s.count, s[i] >= 0x30 && s[i] <= 0x39 {
                        if digits < 9 { nanos = nanos * 10 + Int(s[i] - 0x30); digits += 1 }
                        i += 1
                    }
                    guard digits > 0 else { return nil }
                    for _ in digits..<9 { nanos *= 10 }
                }
            }
            if i < s.count {
                if s[i] == 0x5a || s[i] == 0x7a {
                    offset = 0
                    i += 1
                } else if s[i] == 0x2b || s[i] == 0x2d {
                    let sign = s[i] == 0x2d ? -1 : 1
                    guard let oh = number(i + 1..<i + 3) else { return nil }
                    var j = i + 3
                    if j < s.count, s[j] == 0x3a { j += 1 }
                    guard let om = number(j..<j + 2), oh <= 23, om <= 59 else { return nil }
                    offset = sign * (oh * 3600 + om * 60)
                    i = j + 2
                } else {
                    return nil
                }
            }
            guard i == s.count else { return nil }
        }
        guard (1...12).contains(month), (1...31).contains(day), hour <= 23, minute <= 59, second <= 60 else { return nil }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = offset.flatMap { TimeZone(secondsFromGMT: $0) } ?? zone
        let parts = DateComponents(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
        guard let date = calendar.date(from: parts) else { return nil }
        let check = calendar.dateComponents([.year, .month, .day], from: date)
        guard check.year == year, check.month == month, check.day == day else { return nil }
        let ms = Int64((date.timeIntervalSince1970 * 1000).rounded()) + Int64(nanos / 1_000_000)
        let end = calendar.date(byAdding: .day, value: 1, to: calendar.startOfDay(for: date)).map { Int64(($0.timeIntervalSince1970 * 1000).rounded()) } ?? ms
        return Parsed(milliseconds: ms, isDateOnly: dateOnly, endOfDayMilliseconds: end)
    }

    /// `text` parsed for the option `option`, or a usage error.
    static func require(_ text: String, option: String, command: String) throws(CLIFailure) -> Parsed {
        guard let parsed = parse(text) else {
            throw CLIFailure(
                "--\(option) '\(text)' is not a date I read", hint: "write YYYY-MM-DD, YYYY-MM-DDTHH:MM[:SS] (local time) or ISO 8601 with an offset, such as 2026-03-01T08:30+01:00",
                code: "usage", exit: .usage)
        }
        return parsed
    }
}

/// Formats instants for people (local time) and for JSON (ISO 8601).
enum DateText {
    static func date(_ ms: Int64) -> Date { Date(timeIntervalSince1970: Double(ms) / 1000) }

    /// `2026-03-01 08:30` in the local zone (`TZ`).
    static func local(_ ms: Int64) -> String { formatter("yyyy-MM-dd HH:mm", .current).string(from: date(ms)) }

    /// `2026-03-01` in the local zone.
    static func localDay(_ ms: Int64) -> String { formatter("yyyy-MM-dd", .current).string(from: date(ms)) }

    /// `2026-03-01` in UTC.
    static func utcDay(_ ms: Int64) -> String { formatter("yyyy-MM-dd", TimeZone(identifier: "UTC")!).string(from: date(ms)) }

    /// ISO 8601 with the offset of `zoneName` (an IANA name), or UTC (`Z`)
    /// when the name is empty or unknown: `2026-03-01T08:30:00+01:00`.
    static func iso(_ ms: Int64, zoneName: String = "UTC") -> String {
        FormatterCache.shared.iso(zoneName).string(from: date(ms))
    }

    private static func formatter(_ pattern: String, _ zone: TimeZone) -> DateFormatter {
        FormatterCache.shared.formatter(pattern, zone)
    }
}

/// Date formatters by pattern and zone, made once each: making one costs
/// far more than formatting (listing 3,414 entries spent seconds making
/// them). At most 1,000 of each kind are kept.
private final class FormatterCache: @unchecked Sendable {
    static let shared = FormatterCache()
    private let lock = NSLock()
    private var formatters: [String: DateFormatter] = [:]
    private var isoFormatters: [String: ISO8601DateFormatter] = [:]

    func formatter(_ pattern: String, _ zone: TimeZone) -> DateFormatter {
        lock.lock()
        defer { lock.unlock() }
        let key = pattern + "\u{0}" + zone.identifier
        if let f = formatters[key] { return f }
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.calendar = Calendar(identifier: .gregorian)
        f.timeZone = zone
        f.dateFormat = pattern
        if formatters.count < 1000 { formatters[key] = f }
        return f
    }

    func iso(_ zoneName: String) -> ISO8601DateFormatter {
        lock.lock()
        defer { lock.unlock() }
        if let f = isoFormatters[zoneName] { return f }
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime]
        f.timeZone = TimeZone(identifier: zoneName) ?? TimeZone(identifier: "UTC")!
        if isoFormatters.count < 1000 { isoFormatters[zoneName] = f }
        return f
    }
}
