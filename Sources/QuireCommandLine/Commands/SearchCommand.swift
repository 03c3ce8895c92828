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
        // each is still matched here, so the output is the full scan's.
        let candidates: [EntrySnapshot]
        let total: Int
        if let (some, live) = opened.vault.cachedLiveEntries(mayContain: search.foldedTerms) {
            Reading.warnAboutUnreadRecords(opened.vault, entries: some, path: vault, out: c.out)
            (candidates, total) = (some, live)
        } else {
            do {
                candidates = try opened.vault.entries()
                // The next search reads only what the index names.
                try opened.vault.prepareSearchIndex()
            } catch { throw .vault(error, path: vault) }
            Reading.warnAboutUnreadRecords(opened.vault, entries: candidates, path: vault, out: c.out)
            total = candidates.count
        }
        let found = filter.apply(candidates, extra: search.matches)
        Listing.print(found, c.out, pager: !pager.noPager, vault: opened.vault)
        let what = "'\(query.joined(separator: " "))'" + (filter.isFiltering ? " with these filters" : "")
        Reading.sayNothingMatched(found.count, total: total, filtered: true, what: what, out: c.out)
        return .success
    }
}
