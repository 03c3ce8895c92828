import Foundation
@_spi(Format) import Quire

/// `quire search [VAULT] QUERY...`.
struct SearchCommand: QuireCommand {
    static let configuration = CommandConfiguration(
        name: "search", abstract: "entries holding every word of QUERY, in any order",
        discussion: """
            Words match anywhere in the text, tags, journal, place, weather and
            attachment names, ignoring case and accents (cafe finds Café); a
            "quoted phrase" matches those words in that order; #tag matches a
            tag. Text without spaces between words (Chinese, Japanese) is found
            by any run of its characters. Prints lines as 'quire list' does, and
            says so when nothing matches.

            The search runs on this device: the vault is decrypted here and
            nothing leaves it. QUERY on the command line can be seen by other
            users of this computer in the process list (ps) while quire runs.
            """,
        json: EntryListJSON.self, section: .browse, unlocks: true)

    @VaultArgument var vault: String
    @Argument(placeholder: "QUERY", oneOrMore: true, help: "words, \"phrases\" and #tags to look for") var query: [String]
    @OptionGroup var filters: EntryFilterOptions
    @OptionGroup var browse: BrowseOptions
    @OptionGroup var pager: PagerOption
    @OptionGroup var unlock: UnlockOptions
    @OptionGroup var output: JSONOption

    func run(_ c: CommandContext) throws(CLIFailure) -> ExitCode {
        let search = try SearchQuery(query)
        let filter = try EntryFilter(filters, browse, out: c.out, command: c.command)
        let opened = try Unlock.open(vault, unlock, out: c.out, writable: false)
        // From this device's index cache, only the entries its word index
        // says may hold the terms are read (every commit then verified, so
        // the warnings are those of a full read: Spec/index-cache.md §5);
        // each is still matched here, so the output is the full scan's. A
        // page (-n N) reads them newest first until it is full.
        let vault = opened.vault
        let found: [EntrySnapshot]
        let readWhole: [EntrySnapshot]?
        let rowMayMatch: ((EntrySummary) -> Bool)? = filter.isFiltering ? { filter.mayInclude($0) } : nil
        if let limit = filter.limit,
            let page = vault.cachedLiveEntries(
                mayContain: search.foldedTerms, newestFirst: limit, rowMayMatch: rowMayMatch,
                where: { filter.includes($0) && search.matches($0) })
        {
            Reading.warnAboutUnreadRecords(vault, entries: page, path: self.vault, out: c.out)
            (found, readWhole) = (page, nil)
        } else if let some = vault.cachedLiveEntries(mayContain: search.foldedTerms) {
            Reading.warnAboutUnreadRecords(vault, entries: some, path: self.vault, out: c.out)
            (found, readWhole) = (filter.apply(some, extra: search.matches), nil)
        } else {
            let all: [EntrySnapshot]
            do {
                all = try vault.entries()
                // The next search reads only what the index names.
                try vault.prepareSearchIndex()
            } catch { throw .vault(error, path: self.vault) }
            Reading.warnAboutUnreadRecords(vault, entries: all, path: self.vault, out: c.out)
            (found, readWhole) = (filter.apply(all, extra: search.matches), all)
        }
        Listing.print(found, c.out, pager: !pager.noPager, vault: vault)
        let what = "'\(query.joined(separator: " "))'" + (filter.isFiltering ? " with these filters" : "")
        // Counted only when said: from the cache, it reads every row.
        Reading.sayNothingMatched(
            found.count, total: readWhole?.count ?? ((try? vault.liveEntryCount()) ?? 0), filtered: true, what: what, out: c.out)
        return .success
    }
}
