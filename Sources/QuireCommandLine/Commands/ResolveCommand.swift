import Foundation
@_spi(Format) import Quire

/// `quire resolve [VAULT]`: folds the conflicted copies beside it.
struct ResolveCommand: QuireCommand {
    static let configuration = CommandConfiguration(
        name: "resolve", abstract: "fold in the conflicted copies a sync tool left",
        discussion: """
            Folds the copies a sync tool made beside the vault, named like
            'Journal.sync-conflict-…' (Syncthing), 'Journal (… conflicted copy
            …)' (Dropbox), 'Journal_conflict-…' or 'Journal (conflicted copy …)'
            (Nextcloud, ownCloud) or 'Journal (conflict_on_…)' (Unison): merges
            each into the vault and deletes it once the vault holds all of it.
            Other copies of the vault (OneDrive-, iCloud- or Drive-like names such
            as 'Journal 2.quire', backups, renamed files) are never merged: a
            backup would bring back what the vault dropped (deleted text after a
            compaction). resolve lists them; to fold one, name it: 'quire merge
            VAULT FILE'. Symbolic links are never followed. A conflict copy that
            cannot be taken in whole (damaged) is renamed '….damaged' after what
            can be read is folded: keep it or delete it; no command mentions it
            again. Exit 1 when a copy could not be folded. Every other command
            says when conflict copies are waiting.

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
                c.out.line("not folded: \(name) (\(tool)): \(error.description)\(Self.setAside(copy))")
            } else if copy.merge == nil {
                c.out.line("left: \(name) (\(tool)): \(Self.fate(copy, vault: vault))")
            } else {
                let added = copy.merge?.framesAdded ?? 0
                c.out.line("folded \(name) (\(tool)): \(plural(added, "record")) added; \(Self.fate(copy, vault: vault))")
            }
            rows.append(
                ResolveJSON.Copy(
                    path: copy.copy.path, tool: copy.copy.tool?.rawValue, recordsAdded: copy.merge?.framesAdded ?? 0, deleted: copy.deleted,
                    keptBecause: copy.keptBecause?.rawValue, error: copy.error?.description, folded: copy.merge != nil,
                    setAsideAs: copy.setAsideAs))
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

    /// What became of a copy, in words: deleted, kept and why, or left
    /// unmerged and how to merge it.
    static func fate(_ copy: FoldReport.Copy, vault: String) -> String {
        switch copy.keptBecause {
        case nil: return "the copy was deleted"
        case .nameNotDistinctive?:
            return
                "not merged, and nothing in it is missing from the vault: its name is not a sync tool's conflict-copy name, so it may be a backup; delete it yourself if you do not need it"
        case .notAConflictCopy?:
            return
                "not merged: it holds records the vault does not, but its name is not a sync tool's conflict-copy name, so it may be a backup, which would bring back what the vault dropped (deleted text, compacted history); to fold it in anyway, run quire merge \(Self.quoted(vault)) \(Self.quoted(copy.copy.path))"
        case .onlyDamagedRecords?:
            let damage = copy.unreadable
            let what =
                damage.count == 1
                ? "the one record it holds that the vault does not is damaged (\(damage[0].description))"
                : "the \(damage.count) records it holds that the vault does not are all damaged (first: \(damage.first?.description ?? ""))"
            return
                "not merged: \(what), so merging it would add nothing readable. Its name is not a sync tool's conflict-copy name, so it may be a backup: run quire verify \(Self.quoted(copy.copy.path)) to see the damage, then keep it aside (move or rename it) or delete it if you do not need it"
        case .removeFailed?: return "its content is in the vault, but the copy could not be deleted"
        case .notAllTakenIn?, .mergeFailed?:
            let leftOut = copy.merge?.leftOut ?? []
            let why =
                leftOut.isEmpty
                ? "it holds records the vault could not take"
                : "\(plural(leftOut.count, "record")) in it could not be taken in, damaged or unverified (first: \(leftOut[0].description))"
            return "everything else in it is now in the vault, but \(why)\(setAside(copy))"
        }
    }

    /// `path` quoted for a POSIX shell when it needs to be.
    static func quoted(_ given: String) -> String {
        let path = given.hasPrefix("./") && given.count > 2 && !given.dropFirst(2).hasPrefix("-") ? String(given.dropFirst(2)) : given
        let plain = path.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "/._-+,:@".contains($0)) }
        return plain && !path.isEmpty ? path : "'" + path.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    /// Where a copy that cannot be folded was set aside, and what to do.
    static func setAside(_ copy: FoldReport.Copy) -> String {
        guard let moved = copy.setAsideAs else {
            return copy.error == nil ? "; the copy was kept: delete it, or rename it to keep it out of the way" : ""
        }
        let name = Paths.lastComponent(of: moved)
        return
            "; the copy is damaged and was set aside as \(name), which no command will mention again: delete it ('rm' it) if you do not need what could not be read, or keep it"
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
        let folded: Bool
        @OrNull var setAsideAs: String?
    }

    let vault: String
    let copies: [Copy]

    static var example: ResolveJSON {
        ResolveJSON(
            vault: "",
            copies: [
                Copy(path: "", tool: nil, recordsAdded: 0, deleted: false, keptBecause: nil, error: nil, folded: false, setAsideAs: nil)
            ])
    }
}
