import Foundation
@_spi(Format) @_spi(Crypto) import Quire

/// `quire restore [VAULT] ID`, `quire restore --list`.
struct RestoreCommand: QuireCommand {
    static let configuration = CommandConfiguration(
        name: "restore", abstract: "bring a deleted entry back (--list: the deleted entries)",
        discussion: """
            The vault is append-only: a deleted entry's earlier revisions stay in
            the file until 'quire compact', and restoring writes its last version
            again as a new revision. After compaction only the deletion is left.
            """,
        json: RestoreJSON.self, jsonNote: "(With --list: as 'quire list', the deleted entries, most recently deleted first.)",
        section: .journal, unlocks: true)

    @VaultArgument var vault: String
    @Argument(help: "the deleted entry's id (4 or more hex digits)") var id: EntryIDPrefix?
    @Flag(help: "list the deleted entries instead") var list: Bool
    @OptionGroup var unlock: UnlockOptions
    @OptionGroup var output: JSONOption

    func run(_ c: CommandContext) throws(CLIFailure) -> ExitCode {
        guard list || id != nil else { throw c.usage("'quire restore' needs ID, or --list to see the deleted entries") }
        let opened = try Unlock.open(vault, unlock, out: c.out, writable: !list)
        let deleted: [EntrySnapshot]
        do { deleted = try opened.vault.deletedEntries() } catch { throw .vault(error, path: vault) }
        var lastBodies: [EntryID: EntryBody] = [:]
        var lastAttested: [EntryID: Bool] = [:]
        for e in deleted {
            let revisions: [EntryRevision]
            do { revisions = try opened.vault.revisions(of: e.id) } catch { throw .vault(error, path: vault) }
            if let last = revisions.last(where: { !$0.isDeleted }) {
                lastBodies[e.id] = last.body
                if list { lastAttested[e.id] = ((try? opened.vault.attestations(of: e.id)) ?? [:])[last.revisionID] != nil }
            }
        }
        if list {
            var shown: [EntrySummaryJSON] = []
            for e in deleted {
                guard let body = lastBodies[e.id] else { continue }
                let attested = lastAttested[e.id] ?? false
                shown.append(EntrySummaryJSON(id: e.id, body: body, conflict: false, attested: attested))
                c.out.line(
                    "\(EntryFormat.line(id: e.id, body: body, conflict: false, standing: attested ? nil : "unattested"))  (deleted \(DateText.local(Int64(e.revision.clock.milliseconds))))"
                )
            }
            if shown.isEmpty && !c.out.json { c.out.note("no deleted entry can be restored") }
            c.out.emit(
                EntryListJSON(
                    count: shown.count, entries: shown, unreadRecords: UnreadRecordsJSON(Reading.records(opened.vault), vault: opened.vault)
                ))
            return .success
        }
        let e = try EntryFormat.resolve(id!, in: deleted, deleted: true)
        guard let body = lastBodies[e.id] else {
            throw CLIFailure(
                "entry \(EntryFormat.short(e.id)) cannot be restored: the vault was compacted after it was deleted, so only the deletion is left",
                hint: "a copy of the vault from before the compaction (a backup, another device's copy) still holds it",
                code: "not_restorable")
        }
        let revision: EntryRevision
        do { revision = try opened.vault.restore(e.id, body: body, replacing: EntryChange.base(of: e)) } catch {
            throw .vault(error, path: vault)
        }
        c.out.line("restored \(EntryFormat.short(e.id)) (\(EntryFormat.title(body.text, limit: 40)))")
        c.out.emit(RestoreJSON(id: e.id.description, revision: revision.revisionID.description, restored: true))
        return .success
    }
}

/// What `quire restore ID --json` prints.
struct RestoreJSON: JSONShape {
    let id: String
    let revision: String
    let restored: Bool

    static var example: RestoreJSON { RestoreJSON(id: "", revision: "", restored: true) }
}
