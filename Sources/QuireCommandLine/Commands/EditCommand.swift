import Foundation
@_spi(Format) import Quire

/// `quire edit [VAULT] ID [TEXT | -]`.
struct EditCommand: QuireCommand {
    static let configuration = CommandConfiguration(
        name: "edit", abstract: "change an entry's text, tags, date, mood or photos",
        discussion: """
            Without TEXT and without other changes, the editor opens with the
            current text, as for 'quire add'; closing it unchanged changes nothing,
            and emptying it changes nothing either (to delete: 'quire rm').
            An edit that changes nothing writes nothing ("changed": false).

            An edit is a new revision made from the version you read: if another
            device or another quire changed the entry meanwhile, both versions are
            kept as a conflict ('quire versions ID' shows them). Editing a
            conflicted entry, or --resolve, keeps your version as the one.
            Older revisions stay in the file until 'quire compact'.
            """,
        json: EditJSON.self, jsonNote: "(\"changed\" is false when nothing differed and nothing was written.)", section: .journal,
        unlocks: true)

    @VaultArgument var vault: String
    @Argument(help: "the entry's id (4 or more hex digits)") var id: EntryIDPrefix
    @Argument(placeholder: "TEXT | -", help: "the new text; '-': from standard input; left out: the editor") var text: String?
    @Option(help: "change when it happened") var date: When?
    @Option(placeholder: "TAG", help: "replace the tags (--tag a --tag b)") var tag: [String]
    @Option(help: "change the mood (1–5)") var mood: Mood?
    @Option(placeholder: "NAME", help: "move it to this journal (notebook)") var journal: String?
    @Option(placeholder: "FILE", help: "add files to it: --attach a.jpg b.jpg", listed: AttachmentFiles.isAnotherFile) var attach:
        [FilePath]
    @Flag(help: "make this the only version of a conflicted entry, even when nothing changed") var resolve: Bool
    @OptionGroup var unlock: UnlockOptions
    @OptionGroup var output: JSONOption

    func run(_ c: CommandContext) throws(CLIFailure) -> ExitCode {
        let changesFields = date != nil || !tag.isEmpty || mood != nil || journal != nil || !attach.isEmpty || resolve
        if let date, date.isNatural { c.out.note("--date '\(date.text)': \(date.reading)\(date.isDateOnly ? " (all day)" : "")") }
        try AttachmentFiles.check(attach)
        try Unlock.requireVault(vault)
        let opened = try Unlock.open(vault, unlock, out: c.out)
        let entries: [EntrySnapshot]
        do { entries = try opened.vault.entries() } catch { throw .vault(error, path: vault) }
        Reading.warnAboutUnreadRecords(opened.vault, entries: entries, path: vault, out: c.out)
        let e = try EntryFormat.resolve(id, in: entries)
        var body = e.body
        if let newText = try EntryText.from(text, initial: body.text, optional: changesFields, done: "changed", command: c.command) {
            body.text = newText
        } else if !changesFields {
            throw c.usage("nothing to change: give TEXT, '-', --tag, --date, --mood, --journal or --attach")
        }
        if let mood { body.moodRawValue = mood.value }
        if let date {
            body.createdMilliseconds = date.milliseconds
            body.isAllDay = date.isDateOnly
            body.timeZoneIdentifier = TimeZone.current.identifier
            body.utcOffsetSeconds = Int64(TimeZone.current.secondsFromGMT(for: DateText.date(date.milliseconds)))
        }
        if !tag.isEmpty { body.tags = tag }
        if let journal { body.journal = journal }
        guard !body.text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty || !body.attachments.isEmpty || !attach.isEmpty else {
            throw CLIFailure(
                "the entry would be empty; nothing was changed",
                hint: "to delete the entry, run 'quire rm \(vault) \(EntryFormat.short(e.id))'",
                code: "empty_entry")
        }
        // Compared before `modified` is stamped: an edit that changes nothing writes nothing.
        guard body != e.body || !attach.isEmpty || (resolve && !e.conflictingHeads.isEmpty) else {
            c.out.line("unchanged: \(EntryFormat.short(e.id))")
            if !e.conflictingHeads.isEmpty && !c.out.json {
                c.out.note(
                    "it has \(plural(e.conflictingHeads.count, "conflicting version")): 'quire versions \(EntryFormat.short(e.id))' shows them; change it, or pass --resolve to keep this one"
                )
            }
            c.out.emit(EditJSON(id: e.id.description, revision: e.revision.revisionID.description, changed: false))
            return .success
        }
        let revision = try EntryChange.write(body, of: e, attach: attach, in: opened.vault, path: vault)
        let resolved = e.conflictingHeads.isEmpty ? "" : " (its \(plural(e.conflictingHeads.count + 1, "version")) are one again)"
        c.out.line("edited \(EntryFormat.short(e.id))\(resolved)")
        c.out.emit(EditJSON(id: e.id.description, revision: revision.revisionID.description, changed: true))
        return .success
    }
}
