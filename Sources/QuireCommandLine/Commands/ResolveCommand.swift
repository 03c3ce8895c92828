import Foundation
@_spi(Format) import Quire

/// `quire resolve [VAULT]`: folds the conflicted copies beside it.
struct ResolveCommand: QuireCommand {
    static let configuration = CommandConfiguration(
        name: "resolve", abstract: "fold in the conflicted copies a sync tool left",
        discussion: """
            Finds copies such as 'Journal.sync-conflict-…' (Syncthing),
            'Journal (… conflicted copy …)' (Dropbox), Nextcloud, OneDrive, iCloud
            and Google Drive names, or any file beside the vault that is a copy of
            it; merges each into the vault. A copy the vault then holds entirely
            is deleted only when its name is a Syncthing, Dropbox, Nextcloud or
            Unison conflict name; other copies (OneDrive-, iCloud- or Drive-like
            names, backups) are kept for you to delete. Exit 1 when a copy could
            not be folded. Every other command says when copies are waiting.

            An entry that both copies changed keeps both versions: 'quire list'
            marks it, 'quire versions ID' shows them.
            """,
        json: ResolveJSON.self, section: .file, unlocks: true)

    @VaultArgument var vault: String
    @OptionGroup var unlock: UnlockOptions
    @OptionGroup var output: JSONOption

    func run(_ c: CommandContext) throws(CLIFailure) -> ExitCode {
        let opened = try Unlock.open(vault, unlock, out: c.out, mentionCopies: false)
        let copies: [ConflictCopy]
        do { copies = try opened.vault.conflictCopies() } catch { throw .vault(error, path: vault) }
        if copies.isEmpty {
            c.out.line("no conflicted copies of \(vault)")
            c.out.emit(ResolveJSON(vault: vault, copies: []))
            return .success
        }
        let before = Set(((try? opened.vault.entries()) ?? []).filter { !$0.conflictingHeads.isEmpty }.map(\.id))
        let progress = ProgressBar("folding \(plural(copies.count, "copy", "copies")) into \(vault)")
        progress.start()
        let report: FoldReport
        do { report = try opened.vault.foldConflictCopies() } catch {
            progress.finish()
            throw .vault(error, path: vault)
        }
        progress.finish()
        if report.copies.contains(where: { $0.merge?.changed ?? false }) { Rewrites.sayWhenALinkWasFollowed(vault, c.out) }
        var failed = false
        var rows: [ResolveJSON.Copy] = []
        for left in report.copies.flatMap({ $0.merge?.temporariesLeft ?? [] }) {
            c.out.warning("\(left), a temporary file of this fold, could not be removed; the next quire write in its folder removes it")
        }
        for copy in report.copies {
            let name = Paths.lastComponent(of: copy.copy.path)
            let tool = copy.copy.tool?.rawValue ?? "unknown tool"
            if let error = copy.error {
                failed = true
                c.out.line("not folded: \(name) (\(tool)): \(error.description)")
            } else {
                let added = copy.merge?.framesAdded ?? 0
                c.out.line("folded \(name) (\(tool)): \(plural(added, "record")) added; \(Self.fate(copy))")
            }
            rows.append(
                ResolveJSON.Copy(
                    path: copy.copy.path, tool: copy.copy.tool?.rawValue, recordsAdded: copy.merge?.framesAdded ?? 0, deleted: copy.deleted,
                    keptBecause: copy.keptBecause?.rawValue, error: copy.error?.description))
        }
        let conflicted = ((try? opened.vault.entries()) ?? []).filter { !$0.conflictingHeads.isEmpty && !before.contains($0.id) }
        if !conflicted.isEmpty && !c.out.json {
            c.out.note(
                "\(plural(conflicted.count, "entry", "entries")) now \(conflicted.count == 1 ? "has" : "have") conflicting versions (changed on both sides): \(conflicted.prefix(5).map { EntryFormat.short($0.id) }.joined(separator: ", ")); 'quire versions ID' shows them"
            )
        }
        c.out.emit(ResolveJSON(vault: vault, copies: rows))
        if failed {
            c.out.failure(
                CLIFailure(
                    "some copies could not be folded; they were left in place",
                    hint: "see the lines above; 'quire merge \(vault) COPY' tells more"))
            return .failure
        }
        return .success
    }

    /// What became of a folded copy, in words: deleted, or kept and why.
    static func fate(_ copy: FoldReport.Copy) -> String {
        switch copy.keptBecause {
        case nil: "the copy was deleted"
        case .nameNotDistinctive?:
            "the copy was kept: its name is not a sync tool's conflict-copy name, so it may be a backup; delete it yourself if you do not need it"
        case .removeFailed?: "its content is in the vault, but the copy could not be deleted"
        case .notAllTakenIn?, .mergeFailed?: "the copy was kept (it holds records the vault could not take)"
        }
    }
}

/// What `quire resolve --json` prints.
struct ResolveJSON: JSONShape {
    struct Copy: Encodable {
        let path: String
        @OrNull var tool: String?
        let recordsAdded: Int
        let deleted: Bool
        @OrNull var keptBecause: String?
        @OrNull var error: String?
    }

    let vault: String
    let copies: [Copy]

    static var example: ResolveJSON {
        ResolveJSON(vault: "", copies: [Copy(path: "", tool: nil, recordsAdded: 0, deleted: false, keptBecause: nil, error: nil)])
    }
}
