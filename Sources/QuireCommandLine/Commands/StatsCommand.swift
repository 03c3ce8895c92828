import Foundation
@_spi(Format) import Quire

/// `quire stats [VAULT]`: counts, words, streaks and tags.
struct StatsCommand: QuireCommand {
    static let configuration = CommandConfiguration(
        name: "stats", abstract: "entries per year and month, words, streaks, tags",
        discussion: """
            A streak is a run of consecutive days with at least one entry, each
            entry counted on its day in the time zone it was written in; the
            current streak is the one that reaches today or yesterday. Words
            are runs of letters and digits; a run of Chinese or Japanese
            characters counts one word per character. Tags are counted
            lowercased, as 'quire tags' and 'list --tag' compare them.
            """,
        json: StatsJSON.self, section: .browse, unlocks: true)

    @VaultArgument var vault: String
    @OptionGroup var filters: EntryFilterOptions
    @OptionGroup var pager: PagerOption
    @OptionGroup var unlock: UnlockOptions
    @OptionGroup var output: JSONOption

    func run(_ c: CommandContext) throws(CLIFailure) -> ExitCode {
        let filter = try EntryFilter(filters, out: c.out, command: c.command)
        let (opened, entries) = try Reading.entries(vault, unlock, out: c.out)
        let stats = JournalStats(filter.apply(entries), today: DateText.localDayNumber(NaturalDate.now))
        c.out.usePager(!pager.noPager)
        stats.print(c.out)
        c.out.emit(stats.json(unreadRecords: UnreadRecordsJSON(Reading.records(opened.vault), vault: opened.vault)))
        return .success
    }
}

/// The numbers `quire stats` shows.
struct JournalStats {
    var entries = 0
    var words = 0
    var starred = 0
    var withPhotos = 0
    var first: Int64?
    var last: Int64?
    /// Year → 12 monthly counts.
    var months: [Int: [Int]] = [:]
    var tags: [String: Int] = [:]
    var moods: [Int64: Int] = [:]
    var longest: (days: Int, from: String, until: String) = (0, "", "")
    var current: (days: Int, from: String, until: String) = (0, "", "")

    /// The numbers of `list`; `today` is the local date as days since
    /// 1970-01-01 (``DateText/localDayNumber(_:)``). Days are counted as
    /// numbers, not parsed back from text, so any `created` a record can
    /// hold (`Int64`) is counted on its proleptic Gregorian day.
    init(_ list: [EntrySnapshot], today: Int64) {
        var days = Set<Int64>()
        for e in list {
            let b = e.body
            entries += 1
            words += Self.wordCount(b.text)
            if b.isStarred { starred += 1 }
            if EntryFormat.photoCount(b) > 0 { withPhotos += 1 }
            first = min(first ?? b.createdMilliseconds, b.createdMilliseconds)
            last = max(last ?? b.createdMilliseconds, b.createdMilliseconds)
            let day = DateText.dayNumber(b.createdMilliseconds, zoneName: b.timeZoneIdentifier)
            days.insert(day)
            let (year, month, _) = CivilCalendar.date(fromDays: day)
            months[year, default: Array(repeating: 0, count: 12)][month - 1] += 1
            // Folded as `quire tags` and `list --tag` fold them: once per entry per folded tag.
            for t in Set(b.tags.map { $0.lowercased() }) { tags[t, default: 0] += 1 }
            if let m = b.moodRawValue { moods[m, default: 0] += 1 }
        }
        // Streaks over the sorted days: consecutive when one day follows the other.
        let sorted = days.sorted()
        var runStart = 0
        for i in sorted.indices {
            if i > 0 && sorted[i - 1] + 1 != sorted[i] { runStart = i }
            let length = i - runStart + 1
            if length > longest.days { longest = (length, DateText.day(number: sorted[runStart]), DateText.day(number: sorted[i])) }
        }
        if let lastDay = sorted.last, lastDay == today || lastDay + 1 == today {
            var start = sorted.count - 1
            while start > 0 && sorted[start - 1] + 1 == sorted[start] { start -= 1 }
            current = (sorted.count - start, DateText.day(number: sorted[start]), DateText.day(number: lastDay))
        }
    }

    /// Words: runs of letters and digits; each Han, kana or Hangul
    /// character counts as one.
    static func wordCount(_ text: String) -> Int {
        var count = 0
        var inWord = false
        for s in text.unicodeScalars {
            let v = s.value
            let ideograph =
                (0x3040...0x30ff).contains(v) || (0x3400...0x9fff).contains(v) || (0xac00...0xd7af).contains(v)
                || (0xf900...0xfaff).contains(v)
                || (0x20000...0x2ffff).contains(v)
            if ideograph {
                count += 1
                inWord = false
            } else if s.properties.isAlphabetic || ("0"..."9").contains(s) {
                if !inWord { count += 1 }
                inWord = true
            } else if s != "'" && s != "’" && s != "-" {
                inWord = false
            }
        }
        return count
    }

    func print(_ out: Output) {
        guard entries > 0, let first, let last else {
            out.line("no entries")
            return
        }
        out.line("entries:  \(entries), from \(DateText.localDay(first)) to \(DateText.localDay(last))")
        out.line("words:    \(words) (\(words / entries) an entry on average)")
        if starred > 0 || withPhotos > 0 { out.line("marked:   \(starred) starred, \(withPhotos) with photos") }
        out.line(
            "streaks:  longest \(plural(longest.days, "day")) (\(longest.from) to \(longest.until)); current \(current.days == 0 ? "none" : plural(current.days, "day") + " (since \(current.from))")"
        )
        if !moods.isEmpty {
            out.line("moods:    \((1...5).map { "\($0): \(moods[Int64($0)] ?? 0)" }.joined(separator: ", "))")
        }
        out.line()
        let names = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        out.line("\("year   " + names.map { $0.padding(toLength: 5, withPad: " ", startingAt: 0) }.joined() + "total", .heading)")
        for year in months.keys.sorted() {
            let counts = months[year]!
            let cells = counts.map { ($0 == 0 ? "·" : String($0)).padding(toLength: 5, withPad: " ", startingAt: 0) }.joined()
            // A year of more than six characters (`-292275055`) is not cut.
            let name = String(year)
            out.line("\(name + String(repeating: " ", count: max(1, 7 - name.count)) + cells + String(counts.reduce(0, +)))")
        }
        if !tags.isEmpty {
            out.line()
            out.line("\("tags", .heading)")
            for (tag, n) in sortedTags { out.line("  \(String(n).padding(toLength: 6, withPad: " ", startingAt: 0))\("#" + tag, .tag)") }
        }
    }

    var sortedTags: [(String, Int)] { tags.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key } }

    /// The JSON of these numbers; `unreadRecords`: the records they leave
    /// out because they could not be read (as `list --json` says them).
    func json(unreadRecords: UnreadRecordsJSON) -> StatsJSON {
        StatsJSON(
            entries: entries, words: words, starred: starred, withPhotos: withPhotos, first: first.map { DateText.iso($0) },
            last: last.map { DateText.iso($0) },
            years: months.keys.sorted().map { StatsJSON.Year(year: $0, entries: months[$0]!.reduce(0, +), months: months[$0]!) },
            longestStreak: .init(days: longest.days, from: longest.from, until: longest.until),
            currentStreak: .init(days: current.days, from: current.from, until: current.until),
            tags: sortedTags.map { StatsJSON.Tag(tag: $0.0, entries: $0.1) },
            moods: NamedMap(
                values: Dictionary(uniqueKeysWithValues: moods.map { (String($0.key), $0.value) }), keyName: "mood", valueName: "entries"),
            unreadRecords: unreadRecords)
    }
}

/// What `quire stats --json` prints.
struct StatsJSON: JSONShape {
    struct Year: Encodable {
        let year: Int
        let entries: Int
        /// Twelve counts, January first.
        let months: [Int]
    }

    struct Streak: Encodable {
        let days: Int
        /// `yyyy-MM-dd`, or `""` when there is none.
        let from: String
        let until: String
    }

    struct Tag: Encodable {
        let tag: String
        let entries: Int
    }

    let entries: Int
    let words: Int
    let starred: Int
    let withPhotos: Int
    @OrNull var first: String?
    @OrNull var last: String?
    let years: [Year]
    let longestStreak: Streak
    let currentStreak: Streak
    let tags: [Tag]
    let moods: NamedMap<Int>
    /// The records the counts leave out because they could not be read
    /// (``UnreadRecordsJSON``, as in `list --json`).
    let unreadRecords: UnreadRecordsJSON

    static var example: StatsJSON {
        StatsJSON(
            entries: 0, words: 0, starred: 0, withPhotos: 0, first: nil, last: nil, years: [Year(year: 0, entries: 0, months: [])],
            longestStreak: Streak(days: 0, from: "", until: ""), currentStreak: Streak(days: 0, from: "", until: ""),
            tags: [Tag(tag: "", entries: 0)], moods: NamedMap(values: [:], keyName: "mood", valueName: "entries"),
            unreadRecords: .example)
    }
}
