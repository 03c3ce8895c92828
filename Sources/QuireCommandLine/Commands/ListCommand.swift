import Foundation
@_spi(Format) import Quire

/// `quire list [VAULT]`.
struct ListCommand: QuireCommand {
    static let configuration = CommandConfiguration(
        name: "list", abstract: "one line per entry: id, date, first line, tags, marks",
        discussion: """
            Oldest first; with --limit N, the newest N, newest first. Dates are
            local (TZ); an all-day entry shows its day alone. Marks say when an
            entry is starred, has a mood or photos, has conflicting versions
            ('quire versions ID'), or shows a version no member vouches for
            ('unattested': a removed device, a passphrase or another program
            wrote it; 'unverified': its commit did not verify). Ids are shown
            by their first 8 hex digits; every command that takes an entry id
            accepts any unique prefix of 4 or more. DATE takes the forms --date
            does ('quire help add'). On a terminal, output longer than the
            screen goes through the pager.
            """,
        json: EntryListJSON.self, section: .browse, unlocks: true)

    @VaultArgument var vault: String
    @OptionGroup var filters: EntryFilterOptions
    @OptionGroup var browse: BrowseOptions
    @OptionGroup var pager: PagerOption
    @OptionGroup var unlock: UnlockOptions
    @OptionGroup var output: JSONOption

    func run(_ c: CommandContext) throws(CLIFailure) -> ExitCode {
        let filter = try EntryFilter(filters, browse, out: c.out, command: c.command)
        if let limit = filter.limit, !filter.isFiltering { return try newest(limit, c) }
        let (opened, entries) = try Reading.entries(vault, unlock, out: c.out)
        let shown = filter.apply(entries)
        Listing.print(shown, c.out, pager: !pager.noPager, vault: opened.vault)
        Reading.sayNothingMatched(shown.count, total: entries.count, filtered: filter.isFiltering, vault: opened.vault, out: c.out)
        return .success
    }

    /// `--limit N` alone: the newest N through the library's query, which
    /// reads only their records when it answers from this device's index
    /// cache. The output is the full listing's newest N, newest first.
    private func newest(_ limit: Int, _ c: CommandContext) throws(CLIFailure) -> ExitCode {
        let opened = try Unlock.open(vault, unlock, out: c.out, writable: false)
        let v = opened.vault
        let page: EntryPage
        do { page = try v.entries(matching: EntryQuery(limit: limit)) } catch { throw .vault(error, path: vault) }
        // From the cache every commit verified: the warnings about all
        // entries are those about the page (Spec/index-cache.md §5).
        let all: [EntrySnapshot]
        if v.answersFromIndexCache {
            all = page.entries
        } else {
            do { all = try v.entries() } catch { throw .vault(error, path: vault) }
        }
        Reading.warnAboutUnreadRecords(v, entries: all, path: vault, out: c.out)
        Listing.print(page.entries, c.out, pager: !pager.noPager, vault: v)
        Reading.sayNothingMatched(page.entries.count, total: all.count, filtered: false, vault: v, out: c.out)
        return .success
    }
}

/// Entry lines on stdout, or their JSON.
enum Listing {
    static func print(_ entries: [EntrySnapshot], _ out: Output, pager: Bool, vault: Vault) {
        out.usePager(pager)
        // Lines are made only for text, summaries only for JSON.
        if out.json {
            out.emit(
                EntryListJSON(
                    count: entries.count, entries: entries.map(EntrySummaryJSON.init),
                    unreadRecords: UnreadRecordsJSON(Reading.records(vault), vault: vault)))
        } else {
            for e in entries { out.line(EntryFormat.line(e)) }
        }
    }
}
