import Foundation
@_spi(Format) import Quire

/// The entries the filter options select, in the order they are shown:
/// oldest first, or, with `--limit N`, the newest N, newest first.
struct EntryFilter {
    var since: Int64?
    var until: Int64?
    var tags: Set<String> = []
    var journals: Set<String> = []
    var starred = false
    var moods: ClosedRange<Int64>?
    var hasPhotos = false
    /// `MM-dd`: entries on this day of the year, in their own time zone.
    var dayOfYear: String?
    var limit: Int?

    /// The filter `options` (and `browse`, when the command has them) give.
    /// A natural date's reading is said on stderr (`--since 'last monday'`: …).
    ///
    /// - Throws: ``CLIFailure`` (exit 64) when `--since` is not before `--until`.
    init(_ options: EntryFilterOptions, _ browse: BrowseOptions? = nil, out: Output, command: String) throws(CLIFailure) {
        if let s = options.since {
            since = s.milliseconds
            if s.isNatural { out.note("--since '\(s.text)': from \(s.reading)") }
        }
        if let u = options.until {
            until = u.isDateOnly ? u.endOfDayMilliseconds : u.milliseconds
            if u.isNatural { out.note("--until '\(u.text)': up to \(u.isDateOnly ? "the end of " : "")\(u.reading)") }
        }
        if let since, let until, since >= until {
            throw CLIFailure.usage("--since is not before --until: no entry can match", command: command)
        }
        tags = Set(options.tag.map { $0.lowercased() })
        journals = Set(options.journal.map { $0.lowercased() })
        if let browse {
            starred = browse.starred
            moods = browse.mood?.range
            hasPhotos = browse.hasPhotos
            if browse.onThisDay { dayOfYear = Self.monthDay(NaturalDate.now, zoneName: TimeZone.current.identifier) }
            limit = browse.limit?.value
        }
    }

    init() {}

    /// True when any filter is set (so "nothing matches" is worth saying).
    var isFiltering: Bool {
        since != nil || until != nil || !tags.isEmpty || !journals.isEmpty || starred || moods != nil || hasPhotos || dayOfYear != nil
    }

    /// `MM-dd` of `ms` in the zone `zoneName` (UTC when unknown): the last
    /// five characters, as a year may have more than four digits or a sign.
    static func monthDay(_ ms: Int64, zoneName: String) -> String {
        String(DateText.day(ms, zoneName: zoneName).suffix(5))
    }

    func includes(_ e: EntrySnapshot) -> Bool {
        let b = e.body
        if let since, b.createdMilliseconds < since { return false }
        if let until, b.createdMilliseconds >= until { return false }
        if !tags.isEmpty && !b.tags.contains(where: { tags.contains($0.lowercased()) }) { return false }
        if !journals.isEmpty && !journals.contains(b.journal.lowercased()) { return false }
        if starred && !b.isStarred { return false }
        if let moods, !(b.moodRawValue.map { moods.contains($0) } ?? false) { return false }
        if hasPhotos && EntryFormat.photoCount(b) == 0 { return false }
        if let dayOfYear, Self.monthDay(b.createdMilliseconds, zoneName: b.timeZoneIdentifier) != dayOfYear { return false }
        return true
    }

    /// False when an entry's cached summary shows that ``includes(_:)``
    /// turns it down: its date (`--since`, `--until`), tags, journal and
    /// star, which the summary holds as the body has them (tags and journal
    /// lowercased, as compared here). The other filters are left to
    /// ``includes(_:)`` on the entry read. For a page of `quire search`,
    /// which then does not read such an entry's record.
    func mayInclude(_ s: EntrySummary) -> Bool {
        if let since, s.created < since { return false }
        if let until, s.created >= until { return false }
        if !tags.isEmpty && !s.tags.contains(where: { tags.contains($0) }) { return false }
        if !journals.isEmpty && !journals.contains(s.journal) { return false }
        if starred && !s.isStarred { return false }
        return true
    }

    /// `entries` (oldest first) filtered, then limited to the newest N.
    func apply(_ entries: [EntrySnapshot], extra: (EntrySnapshot) -> Bool) -> [EntrySnapshot] {
        limited(entries.filter { includes($0) && extra($0) })
    }

    /// `entries` (oldest first) filtered, then limited to the newest N;
    /// without filters, `entries` themselves (no copy of every entry).
    func apply(_ entries: [EntrySnapshot]) -> [EntrySnapshot] {
        limited(isFiltering ? entries.filter(includes) : entries)
    }

    private func limited(_ selected: [EntrySnapshot]) -> [EntrySnapshot] {
        guard let limit else { return selected }
        return Array(selected.suffix(limit).reversed())
    }
}
