import Foundation
@_spi(Format) import Quire

/// `quire rm [VAULT] ID`.
struct RemoveCommand: QuireCommand {
    static let configuration = CommandConfiguration(
        name: "rm", abstract: "delete an entry (asks first on a terminal)",
        discussion: """
            Appends a deletion mark; the entry's earlier revisions stay in the file,
            so 'quire restore ID' brings it back until 'quire compact' removes them.
            """,
        json: RemoveJSON.self, section: .journal, unlocks: true)

    @VaultArgument var vault: String
    @Argument(help: "the entry's id (4 or more hex digits)") var id: EntryIDPrefix
    @Flag(short: "y", help: "do not ask") var yes: Bool
    @OptionGroup var unlock: UnlockOptions
    @OptionGroup var output: JSONOption

    func run(_ c: CommandContext) throws(CLIFailure) -> ExitCode {
        let opened = try Unlock.open(vault, unlock, out: c.out)
        let entries: [EntrySnapshot]
        do { entries = try opened.vault.entries() } catch { throw .vault(error, path: vault) }
        Reading.warnAboutUnreadRecords(opened.vault, entries: entries, path: vault, out: c.out)
        let e = try EntryFormat.resolve(id, in: entries)
        let title = EntryFormat.title(e.body.text, limit: 40)
        if Prompt.isInteractive && !yes {
            guard
                try Prompt.confirm(
                    "Delete \(EntryFormat.short(e.id)) (\(EntryFormat.date(e.body).trimmingCharacters(in: .whitespaces)): \(title))?")
            else {
                throw CLIFailure("nothing was deleted", hint: "pass --yes to delete without a question", code: "cancelled")
            }
        }
        do { try opened.vault.delete(e.id) } catch { throw .vault(error, path: vault) }
        c.out.line("deleted \(EntryFormat.short(e.id)) (\(title))")
        if !c.out.json { c.out.note("'quire restore \(EntryFormat.short(e.id))' brings it back until the vault is compacted") }
        c.out.emit(RemoveJSON(id: e.id.description, deleted: true))
        return .success
    }
}

/// What `quire rm --json` prints.
struct RemoveJSON: JSONShape {
    let id: String
    let deleted: Bool

    static var example: RemoveJSON { RemoveJSON(id: "", deleted: true) }
}
