import Foundation
@_spi(Format) import Quire

/// A date given on the command line (`--date`, `--since`, `--until`), as
/// ``NaturalDate`` reads it, relative to the moment quire started.
struct When: ArgumentValue, Sendable {
    /// What was typed.
    let text: String
    /// The instant: milliseconds since 1970, UTC. For a day without a
    /// time, its first instant.
    let milliseconds: Int64
    /// True for a day without a time of day (`2026-03-01`, `yesterday`).
    let isDateOnly: Bool
    /// The end of that day (exclusive), for `--until` with a day.
    let endOfDayMilliseconds: Int64
    /// True for a form other than ISO 8601, whose reading quire shows back.
    let isNatural: Bool

    init(argument text: String) throws(ValueError) {
        guard let parsed = NaturalDate.parse(text, now: NaturalDate.now, zone: .current) else {
            throw ValueError(
                "'\(text)' is not a date I read",
                hint:
                    "write YYYY-MM-DD[THH:MM] (local time), ISO 8601 with an offset, or yesterday, yesterday 9pm, last monday, 3 days ago, 2 weeks ago, march 1"
            )
        }
        self = parsed
    }

    init(text: String, milliseconds: Int64, isDateOnly: Bool, endOfDayMilliseconds: Int64, isNatural: Bool) {
        self.text = text
        self.milliseconds = milliseconds
        self.isDateOnly = isDateOnly
        self.endOfDayMilliseconds = endOfDayMilliseconds
        self.isNatural = isNatural
    }

    static var placeholder: String { "WHEN" }

    /// How quire read it, in the local zone: `Monday 2026-11-30 21:00 (Europe/London)`,
    /// or `Monday 2026-11-30` for a day.
    var reading: String {
        let day = DateText.weekday(milliseconds) + " " + DateText.localDay(milliseconds)
        return isDateOnly ? day : day + " " + DateText.localTime(milliseconds) + " (\(TimeZone.current.identifier))"
    }
}

/// Dates as people type them, in a time zone, relative to a moment:
///
/// - ISO 8601: `2026-03-01`, `2026-03-01T08:30[:15]` (a space may replace
///   the `T`) in the zone, or with an offset (`Z`, `+01:00`, `+0100`;
///   fractional seconds allowed);
/// - `now`, `today`, `yesterday`, `tomorrow`, each with an optional time:
///   `yesterday 9pm`, `yesterday at 21:30`, `today noon`;
/// - a weekday: `monday` (the latest on or before today), `last monday`
///   (the latest before today), with an optional time;
/// - `3 days ago`, `2 weeks ago`, `a month ago`, `1 year ago` (a day),
///   `2 hours ago`, `30 minutes ago` (an instant); `last week`, `last
///   month`, `last year` (that day one unit back);
/// - `march 1`, `1 march`, `mar 1 2025`, `1 march 2025`, optionally with a
///   time; without a year, the latest such day on or before today;
/// - a time alone: `9pm`, `21:30` (today).
enum NaturalDate {
    /// The moment relative dates are read from: when quire started.
    static let now = Int64((Date().timeIntervalSince1970 * 1000).rounded())

    /// `text` read in `zone` relative to `now` (milliseconds since 1970);
    /// nil when it is none of the accepted forms or names no real date.
    static func parse(_ text: String, now: Int64, zone: TimeZone) -> When? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if let iso = parseISO(trimmed, zone: zone) { return iso }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let nowDate = Date(timeIntervalSince1970: Double(now) / 1000)
        var words = trimmed.lowercased().split(whereSeparator: { $0 == " " || $0 == "," }).map(String.init).filter {
            $0 != "at" && $0 != "on"
        }
        guard !words.isEmpty else { return nil }
        func make(_ day: DateComponents, time: (Int, Int, Int)?) -> When? {
            var c = day
            c.hour = time?.0 ?? 0
            c.minute = time?.1 ?? 0
            c.second = time?.2 ?? 0
            guard let date = calendar.date(from: c) else { return nil }
            let check = calendar.dateComponents([.year, .month, .day], from: date)
            guard check.year == day.year, check.month == day.month, check.day == day.day else { return nil }
            let ms = Int64((date.timeIntervalSince1970 * 1000).rounded())
            let start = calendar.startOfDay(for: date)
            let end = calendar.date(byAdding: .day, value: 1, to: start).map { Int64(($0.timeIntervalSince1970 * 1000).rounded()) } ?? ms
            return When(text: text, milliseconds: ms, isDateOnly: time == nil, endOfDayMilliseconds: end, isNatural: true)
        }
        func instant(_ date: Date) -> When {
            let ms = Int64((date.timeIntervalSince1970 * 1000).rounded())
            return When(text: text, milliseconds: ms, isDateOnly: false, endOfDayMilliseconds: ms, isNatural: true)
        }
        func dayOf(_ date: Date) -> DateComponents { calendar.dateComponents([.year, .month, .day], from: date) }

        func lastWeekday(_ target: Int, strictlyBefore: Bool, time: (Int, Int, Int)?) -> When? {
            let today = calendar.startOfDay(for: nowDate)
            let current = calendar.component(.weekday, from: today)
            var back = (current - target + 7) % 7
            if back == 0 && strictlyBefore { back = 7 }
            return calendar.date(byAdding: .day, value: -back, to: today).flatMap { make(dayOf($0), time: time) }
        }

        // "N units ago", "a week ago", "last week".
        if words.count >= 2, words.last == "ago" || (words.count == 2 && words[0] == "last") {
            let count: Int
            let unit: String
            if words[0] == "last" {
                count = 1
                unit = words[1]
            } else {
                guard words.count == 3, let n = number(words[0]) else { return nil }
                count = n
                unit = words[1]
            }
            guard count >= 0, count <= 100_000 else { return nil }
            let singular = unit.hasSuffix("s") ? String(unit.dropLast()) : unit
            switch singular {
            case "minute", "min": return calendar.date(byAdding: .minute, value: -count, to: nowDate).map(instant)
            case "hour": return calendar.date(byAdding: .hour, value: -count, to: nowDate).map(instant)
            case "day": return calendar.date(byAdding: .day, value: -count, to: nowDate).flatMap { make(dayOf($0), time: nil) }
            case "week": return calendar.date(byAdding: .day, value: -7 * count, to: nowDate).flatMap { make(dayOf($0), time: nil) }
            case "month": return calendar.date(byAdding: .month, value: -count, to: nowDate).flatMap { make(dayOf($0), time: nil) }
            case "year": return calendar.date(byAdding: .year, value: -count, to: nowDate).flatMap { make(dayOf($0), time: nil) }
            default:
                if words[0] == "last", let wd = weekday(unit) { return lastWeekday(wd, strictlyBefore: true, time: nil) }
                return nil
            }
        }
        if words == ["now"] { return instant(nowDate) }

        // A time at the end: "9pm", "9 pm", "21:30", "noon".
        var time: (Int, Int, Int)?
        if words.count >= 2, words.last == "am" || words.last == "pm", let t = clock(words[words.count - 2] + words[words.count - 1]) {
            time = t
            words.removeLast(2)
        } else if let last = words.last, let t = clock(last) {
            time = t
            words.removeLast()
        }

        switch words.count {
        case 0:
            return time == nil ? nil : make(dayOf(nowDate), time: time)
        case 1:
            switch words[0] {
            case "today": return make(dayOf(nowDate), time: time)
            case "yesterday": return calendar.date(byAdding: .day, value: -1, to: nowDate).flatMap { make(dayOf($0), time: time) }
            case "tomorrow": return calendar.date(byAdding: .day, value: 1, to: nowDate).flatMap { make(dayOf($0), time: time) }
            default:
                if let wd = weekday(words[0]) { return lastWeekday(wd, strictlyBefore: false, time: time) }
                if let iso = parseISO(words[0], zone: zone), iso.isDateOnly, let time {
                    let c = calendar.dateComponents(
                        [.year, .month, .day], from: Date(timeIntervalSince1970: Double(iso.milliseconds) / 1000))
                    return make(c, time: time)
                }
                return nil
            }
        case 2 where words[0] == "last" || words[0] == "this":
            guard let wd = weekday(words[1]) else { return nil }
            return lastWeekday(wd, strictlyBefore: words[0] == "last", time: time)
        case 2, 3:
            // "march 1 [2025]", "1 march [2025]"
            var month: Int?
            var day: Int?
            var year: Int?
            for w in words {
                if let m = monthNumber(w), month == nil {
                    month = m
                } else if let n = Int(w.trimmingCharacters(in: CharacterSet(charactersIn: "stndrh"))), n >= 1 {
                    if n <= 31 && day == nil {
                        day = n
                    } else if n >= 1000 && n <= 9999 && year == nil {
                        year = n
                    } else {
                        return nil
                    }
                } else {
                    return nil
                }
            }
            guard let month, let day else { return nil }
            if let year { return make(DateComponents(year: year, month: month, day: day), time: time) }
            let thisYear = calendar.component(.year, from: nowDate)
            if let candidate = make(DateComponents(year: thisYear, month: month, day: day), time: time), candidate.milliseconds <= now {
                return candidate
            }
            return make(DateComponents(year: thisYear - 1, month: month, day: day), time: time)
        default:
            return nil
        }
    }

    /// `3`, `a`, `an`, `one`…`twelve`.
    static func number(_ word: String) -> Int? {
        if let n = Int(word) { return n }
        let words = [
            "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10,
            "eleven": 11, "twelve": 12,
        ]
        return words[word]
    }

    /// Calendar weekday numbers (Sunday 1 … Saturday 7).
    static func weekday(_ word: String) -> Int? {
        let names = ["sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"]
        for (i, name) in names.enumerated() where word == name || (word.count >= 3 && name.hasPrefix(word) && word.count <= name.count) {
            return i + 1
        }
        return nil
    }

    static func monthNumber(_ word: String) -> Int? {
        let names = [
            "january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december",
        ]
        for (i, name) in names.enumerated() where word == name || (word.count >= 3 && name.hasPrefix(word)) { return i + 1 }
        if word == "sept" { return 9 }
        return nil
    }

    /// `9pm`, `9:30pm`, `12am`, `21:30`, `21:30:15`, `noon`, `midnight`.
    static func clock(_ word: String) -> (Int, Int, Int)? {
        if word == "noon" { return (12, 0, 0) }
        if word == "midnight" { return (0, 0, 0) }
        var w = Substring(word)
        var meridiem: String?
        if w.hasSuffix("am") || w.hasSuffix("pm") {
            meridiem = String(w.suffix(2))
            w = w.dropLast(2)
        }
        let parts = w.split(separator: ":", omittingEmptySubsequences: false)
        guard (1...3).contains(parts.count),
            parts.allSatisfy({ !$0.isEmpty && $0.count <= 2 && $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) })
        else {
            return nil
        }
        var h = Int(parts[0])!
        let m = parts.count > 1 ? Int(parts[1])! : 0
        let s = parts.count > 2 ? Int(parts[2])! : 0
        guard m <= 59, s <= 59 else { return nil }
        if let meridiem {
            guard (1...12).contains(h) else { return nil }
            if meridiem == "am" { h = h == 12 ? 0 : h } else { h = h == 12 ? 12 : h + 12 }
        } else {
            // A bare number is not a time ("3" could be anything); "21:30" is.
            guard parts.count >= 2, h <= 23 else { return nil }
        }
        return (h, m, s)
    }

    /// ISO 8601 forms: `YYYY-MM-DD` and `YYYY-MM-DDTHH:MM[:SS[.fff]]` in
    /// `zone`, or with an offset; nil for anything else.
    static func parseISO(_ text: String, zone: TimeZone) -> When? {
        let s = Array(text.utf8)
        func number(_ range: Range<Int>) -> Int? {
            guard range.upperBound <= s.count else { return nil }
            var n = 0
            for i in range {
                guard s[i] >= 0x30 && s[i] <= 0x39 else { return nil }
                n = n * 10 + Int(s[i] - 0x30)
            }
            return n
        }
        guard s.count >= 10, let year = number(0..<4), s[4] == 0x2d, let month = number(5..<7), s[7] == 0x2d, let day = number(8..<10)
        else {
            return nil
        }
        var hour = 0
        var minute = 0
        var second = 0
        var nanos = 0
        var i = 10
        var offset: Int?
        let dateOnly = s.count == 10
        if !dateOnly {
            guard s[10] == 0x54 || s[10] == 0x74 || s[10] == 0x20, let h = number(11..<13), s.count > 13, s[13] == 0x3a,
                let m = number(14..<16)
            else {
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
                        if digits < 9 {
                            nanos = nanos * 10 + Int(s[i] - 0x30)
                            digits += 1
                        }
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
        let end =
            calendar.date(byAdding: .day, value: 1, to: calendar.startOfDay(for: date)).map {
                Int64(($0.timeIntervalSince1970 * 1000).rounded())
            } ?? ms
        return When(text: text, milliseconds: ms, isDateOnly: dateOnly, endOfDayMilliseconds: end, isNatural: false)
    }
}

/// Formats instants for people (local time) and for JSON (ISO 8601).
///
/// Every function works the calendar out with integer arithmetic
/// (``CivilTime``) from the zone's offset at the instant, for every `Int64`
/// instant a record can hold (years −292,275,055 to 292,278,994): `list`
/// formats a date for every entry, and ICU's formatters cost more per entry
/// than reading the entry did. Dates are proleptic Gregorian, as in the
/// exports (`Spec/export-json.md §1`), with no Julian switch; a year is
/// written with at least four digits, a year before 1 as `0000`, `-0001`…
/// (astronomical numbering), one after 9999 with more digits
/// (`Spec/records.md §3.3`). Between 1600 and 9999 this is what
/// ``formatted(_:_:_:)`` and ``isoFormatted(_:zoneName:)`` print; outside
/// ICU's range (about ±5.8 million years) those clamp or print nothing.
enum DateText {
    static func date(_ ms: Int64) -> Date { Date(timeIntervalSince1970: Double(ms) / 1000) }

    /// `2026-03-01 08:30` in the local zone (`TZ`).
    static func local(_ ms: Int64) -> String { CivilTime(ms, zone: ZoneCache.local).text(date: true, time: .minutes) }

    /// `2026-03-01` in the local zone.
    static func localDay(_ ms: Int64) -> String { CivilTime(ms, zone: ZoneCache.local).text(date: true, time: nil) }

    /// `08:30` in the local zone.
    static func localTime(_ ms: Int64) -> String { CivilTime(ms, zone: ZoneCache.local).text(date: false, time: .minutes) }

    /// `Monday` in the local zone.
    static func weekday(_ ms: Int64) -> String {
        ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"][
            CivilCalendar.weekday(fromDays: CivilTime(ms, zone: ZoneCache.local).days)]
    }

    /// `2026-03-01` in the zone `zoneName` (the entry's own), else UTC.
    static func day(_ ms: Int64, zoneName: String) -> String {
        CivilTime(ms, zone: ZoneCache.shared.zone(zoneName)).text(date: true, time: nil)
    }

    /// The calendar date of `ms` in the zone `zoneName` (else UTC), as days
    /// since 1970-01-01: the day ``day(_:zoneName:)`` prints.
    static func dayNumber(_ ms: Int64, zoneName: String) -> Int64 { CivilTime(ms, zone: ZoneCache.shared.zone(zoneName)).days }

    /// The calendar date of `ms` in the local zone, as days since 1970-01-01.
    static func localDayNumber(_ ms: Int64) -> Int64 { CivilTime(ms, zone: ZoneCache.local).days }

    /// `2026-03-01` for a day count since 1970-01-01.
    static func day(number days: Int64) -> String {
        let (y, m, d) = CivilCalendar.date(fromDays: days)
        return CivilTime.year(y) + "-" + CivilTime.twoDigits(m) + "-" + CivilTime.twoDigits(d)
    }

    /// ISO 8601 with the offset of `zoneName` (an IANA name), or UTC (`Z`)
    /// when the name is empty or unknown: `2026-03-01T08:30:00+01:00`; an
    /// offset that is not whole minutes (local mean time) with its seconds,
    /// `1660-01-11T22:00:00-00:01:15`, as `ISO8601DateFormatter` writes it.
    static func iso(_ ms: Int64, zoneName: String = "UTC") -> String {
        let t = CivilTime(ms, zone: ZoneCache.shared.zone(zoneName))
        var s = t.text(date: true, time: .seconds, separator: "T")
        if t.offsetSeconds == 0 {
            s += "Z"
        } else {
            let o = abs(t.offsetSeconds)
            s += (t.offsetSeconds < 0 ? "-" : "+") + CivilTime.twoDigits(o / 3600) + ":" + CivilTime.twoDigits(o / 60 % 60)
            if o % 60 != 0 { s += ":" + CivilTime.twoDigits(o % 60) }
        }
        return s
    }

    /// `ms` formatted by a `DateFormatter` with `pattern` (en_US_POSIX,
    /// Gregorian) in `zone`: the reference the arithmetic is tested against.
    static func formatted(_ ms: Int64, _ pattern: String, _ zone: TimeZone) -> String {
        FormatterCache.shared.formatter(pattern, zone).string(from: date(ms))
    }

    /// ``iso(_:zoneName:)`` by an `ISO8601DateFormatter`: the reference the
    /// arithmetic is tested against.
    static func isoFormatted(_ ms: Int64, zoneName: String) -> String {
        FormatterCache.shared.iso(zoneName).string(from: date(ms))
    }
}

/// The calendar fields of an instant in a zone (proleptic Gregorian), by
/// integer arithmetic (``CivilCalendar``, the project's one days-to-civil conversion).
struct CivilTime {
    var year = 0
    var month = 0
    var day = 0
    var hour = 0
    var minute = 0
    var second = 0
    /// The local date as days since 1970-01-01.
    var days: Int64 = 0
    /// The zone's offset from UTC at the instant.
    var offsetSeconds = 0

    enum Precision {
        case minutes
        case seconds
    }

    /// The fields of `ms` (milliseconds since 1970) in `zone`, for every
    /// `Int64`: no step overflows (`ms / 1000` plus an offset of at most
    /// 18 hours; a zone claiming more is read as UTC, as `utcOffset` is in
    /// `Spec/records.md §3.3`).
    init(_ ms: Int64, zone: TimeZone) {
        let offset = zone.secondsFromGMT(for: DateText.date(ms))
        offsetSeconds = abs(offset) <= 64_800 ? offset : 0
        let seconds = CivilCalendar.floorDivide(ms, 1000).quotient + Int64(offsetSeconds)
        let (days, inDay) = CivilCalendar.floorDivide(seconds, 86_400)
        self.days = days
        (year, month, day) = CivilCalendar.date(fromDays: days)
        hour = Int(inDay / 3600)
        minute = Int(inDay / 60 % 60)
        second = Int(inDay % 60)
    }

    /// `2026-03-01`, `2026-03-01 08:30`, `2026-03-01T08:30:15`, `08:30`.
    func text(date: Bool, time: Precision?, separator: String = " ") -> String {
        var s = ""
        s.reserveCapacity(19)
        if date {
            s += Self.year(year) + "-" + Self.twoDigits(month) + "-" + Self.twoDigits(day)
            if time != nil { s += separator }
        }
        if let time {
            s += Self.twoDigits(hour) + ":" + Self.twoDigits(minute)
            if time == .seconds { s += ":" + Self.twoDigits(second) }
        }
        return s
    }

    static func twoDigits(_ n: Int) -> String { n < 10 ? "0" + String(n) : String(n) }

    /// At least four digits, `-` before a year before 1 (`0000`, `-0001`, `10000`).
    static func year(_ y: Int) -> String {
        if (1000...9999).contains(y) { return String(y) }
        let digits = String(y.magnitude)
        return (y < 0 ? "-" : "") + String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }
}

/// Time zones by name, looked up once each (an entry names its own zone;
/// a journal has few). An unknown or empty name is UTC, as in
/// ``DateText/day(_:zoneName:)``. At most 1,000 are kept.
// @unchecked Sendable: `zones` is read and written under `lock` only.
private final class ZoneCache: @unchecked Sendable {
    static let shared = ZoneCache()
    /// This process's zone (`TZ`), read once.
    static let local = TimeZone.current
    private let lock = NSLock()
    private var zones: [String: TimeZone] = [:]
    private let utc = TimeZone(identifier: "UTC")!

    func zone(_ name: String) -> TimeZone {
        lock.lock()
        defer { lock.unlock() }
        if let z = zones[name] { return z }
        let z = TimeZone(identifier: name) ?? utc
        if zones.count < 1000 { zones[name] = z }
        return z
    }
}

/// Date formatters by pattern and zone, made once each: making one costs
/// far more than formatting (listing 3,414 entries spent seconds making
/// them). At most 1,000 of each kind are kept.
// @unchecked Sendable: the formatter tables, and each formatter's use, are under `lock` only.
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
