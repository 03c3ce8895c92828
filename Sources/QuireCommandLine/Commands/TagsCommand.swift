import Foundation
@_spi(Format) import Quire

/// `quire tags [VAULT]`: every tag, with how many entries carry it.
struct TagsCommand: QuireCommand {
    static let configuration = CommandConfiguration(
        name: "tags", abstract: "every tag, with how many entries carry it",
        discussion: """
            Tags are shown lowercased, as 'quire list --tag' compares them
            (Travel and travel are one tag), most entries first. Deleted entries
            are not counted; an entry in conflict counts once. With this device's
            index cache no entry is decrypted.
            """,
        json: TagsJSON.self, section: .browse, unlocks: true)

    @VaultArgument var vault: String
    @OptionGroup var pager: PagerOption
    @OptionGroup var unlock: UnlockOptions
    @OptionGroup var output: JSONOption

    func run(_ c: CommandContext) throws(CLIFailure) -> ExitCode {
        let opened = try Unlock.open(vault, unlock, out: c.out, writable: false)
        let counts: [String: Int]
        do { counts = try opened.vault.tagCounts() } catch { throw .vault(error, path: vault) }
        Reading.warnAboutUnreadRecords(opened.vault, entries: [], path: vault, out: c.out)
        let sorted = counts.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }
        c.out.usePager(!pager.noPager)
        for (tag, n) in sorted { c.out.line("\(String(n).padding(toLength: 6, withPad: " ", startingAt: 0))\("#" + tag, .tag)") }
        if sorted.isEmpty && !c.out.json { c.out.note("no entry has a tag") }
        c.out.emit(TagsJSON(tags: sorted.map { StatsJSON.Tag(tag: $0.key, entries: $0.value) }))
        return .success
    }
}

/// What `quire tags --json` prints.
struct TagsJSON: JSONShape {
    /// Most entries first, then by name.
    let tags: [StatsJSON.Tag]

    static var example: TagsJSON { TagsJSON(tags: [StatsJSON.Tag(tag: "", entries: 0)]) }
}
