import Foundation
@_spi(Format) import Quire

/// Stars or unstars an entry: `quire star` and `quire unstar`.
enum Starring {
    static func run(_ starred: Bool, vault: String, id: EntryIDPrefix, unlock: UnlockOptions, _ c: CommandContext) throws(CLIFailure)
        -> ExitCode
    {
        let opened = try Unlock.open(vault, unlock, out: c.out)
        let entries: [EntrySnapshot]
        do { entries = try opened.vault.entries() } catch { throw .vault(error, path: vault) }
        Reading.warnAboutUnreadRecords(opened.vault, entries: entries, path: vault, out: c.out)
        let e = try EntryFormat.resolve(id, in: entries)
        let word = starred ? "starred" : "not starred"
        guard e.body.isStarred != starred else {
            c.out.line("already \(word): \(EntryFormat.short(e.id))")
            c.out.emit(EditJSON(id: e.id.description, revision: e.revision.revisionID.description, changed: false))
            return .success
        }
        var body = e.body
        body.isStarred = starred
        let revision = try EntryChange.write(body, of: e, in: opened.vault, path: vault)
        c.out.line("\(starred ? "starred" : "unstarred") \(EntryFormat.short(e.id)) (\(EntryFormat.title(body.text, limit: 40)))")
        c.out.emit(EditJSON(id: e.id.description, revision: revision.revisionID.description, changed: true))
        return .success
    }
}

/// `quire star [VAULT] ID`.
struct StarCommand: QuireCommand {
    static let configuration = CommandConfiguration(
        name: "star", abstract: "star an entry (a favourite; 'quire list --starred')", json: EditJSON.self, section: .journal, unlocks: true
    )

    @VaultArgument var vault: String
    @Argument(help: "the entry's id (4 or more hex digits)") var id: EntryIDPrefix
    @OptionGroup var unlock: UnlockOptions
    @OptionGroup var output: JSONOption

    func run(_ c: CommandContext) throws(CLIFailure) -> ExitCode { try Starring.run(true, vault: vault, id: id, unlock: unlock, c) }
}

/// `quire unstar [VAULT] ID`.
struct UnstarCommand: QuireCommand {
    static let configuration = CommandConfiguration(
        name: "unstar", abstract: "take an entry's star away", json: EditJSON.self, section: .journal, unlocks: true)

    @VaultArgument var vault: String
    @Argument(help: "the entry's id (4 or more hex digits)") var id: EntryIDPrefix
    @OptionGroup var unlock: UnlockOptions
    @OptionGroup var output: JSONOption

    func run(_ c: CommandContext) throws(CLIFailure) -> ExitCode { try Starring.run(false, vault: vault, id: id, unlock: unlock, c) }
}
