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
        let deleted: [DeletedEntry]
        do { deleted = try opened.vault.deletedEntries() } catch { throw .vault(error, path: vault) }
        if list {
            var shown: [EntrySummaryJSON] = []
            for e in deleted {
                guard let body = e.body, let last = e.lastLive else { continue }
                let attested = ((try? opened.vault.attestations(of: e.id)) ?? [:])[last.revisionID] != nil
                shown.append(EntrySummaryJSON(id: e.id, body: body, conflict: false, attested: attested))
                c.out.line(
                    "\(EntryFormat.line(id: e.id, body: body, conflict: false, standing: attested ? nil : "unattested"))  (deleted \(DateText.local(Int64(e.tombstone.clock.milliseconds))))"
                )
            }
            if shown.isEmpty && !c.out.json { c.out.note("no deleted entry can be restored") }
            c.out.emit(
                EntryListJSON(
                    count: shown.count, entries: shown, unreadRecords: UnreadRecordsJSON(Reading.records(opened.vault), vault: opened.vault)
                ))
            return .success
        }
        let prefix = id!
        let id = try EntryFormat.resolve(prefix, matching: deleted.map(\.id).filter { prefix.matches($0) }, deleted: true)
        // The library's restore, as an app calls it: the body before the
        // deletion, or `not_restorable` when compaction left only the deletion.
        var restored: EntryRevision?
        do { try opened.vault.commit { tx in restored = try tx.restore(id) } } catch {
            guard error.code == "not_restorable" else { throw .vault(error, path: vault) }
            throw CLIFailure(
                "entry \(EntryFormat.short(id)) cannot be restored: the vault was compacted after it was deleted, so only the deletion is left",
                hint: CLIFailure.hint(for: error, path: vault), code: "not_restorable")
        }
        guard let revision = restored else { throw .vault(QuireError(.entryNotFound(id)), path: vault) }
        let body = revision.body
        c.out.line("restored \(EntryFormat.short(id)) (\(EntryFormat.title(body.text, limit: 40)))")
        c.out.emit(RestoreJSON(id: id.description, revision: revision.revisionID.description, restored: true))
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
