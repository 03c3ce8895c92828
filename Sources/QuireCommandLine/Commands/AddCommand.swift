import Foundation
@_spi(Format) import Quire
import QuireSystem

/// `quire add [VAULT] [TEXT | -]`: a new entry.
struct AddCommand: QuireCommand {
    static let configuration = CommandConfiguration(
        name: "add", abstract: "write an entry; prints its id",
        discussion: """
            Without TEXT on a terminal, $VISUAL or $EDITOR opens on a private
            temporary file (mode 0600, in a per-user 0700 folder, in memory where
            the system has a place for it) that is wiped and removed afterwards;
            the editor sees the plaintext. Closing the editor on an empty file
            adds nothing.

            TEXT on the command line can be seen by other users of this computer
            in the process list (ps) while quire runs: prefer the editor, or
            '-' with the text on standard input (echo … | quire add -).

            WHEN: YYYY-MM-DD[THH:MM[:SS]] in local time, ISO 8601 with an offset,
            or yesterday, yesterday 9pm, last monday, 3 days ago, 2 weeks ago,
            march 1; a day without a time makes an all-day entry. The entry
            records the local time zone; quire says how it read a date in words.
            """,
        json: AddJSON.self, section: .journal, unlocks: true)

    @VaultArgument var vault: String
    @Argument(placeholder: "TEXT | -", help: "the text (Markdown); '-': from standard input; left out: the editor") var text: String?
    @Option(help: "when it happened (default: now)") var date: When?
    @Option(placeholder: "TAG", help: "a tag (--tag a --tag b for more)") var tag: [String]
    @Option(help: "mood from 1 (very bad) to 5 (very good)") var mood: Mood?
    @Option(placeholder: "NAME", help: "the journal (notebook) it belongs to") var journal: String?
    @Flag(help: "star it (a favourite)") var starred: Bool
    @Option(placeholder: "FILE", help: "attach files (photos, audio, PDF…): --attach a.jpg b.jpg", listed: AttachmentFiles.isAnotherFile)
    var attach: [FilePath]
    @OptionGroup var unlock: UnlockOptions
    @OptionGroup var output: JSONOption

    func run(_ c: CommandContext) throws(CLIFailure) -> ExitCode {
        var created = ProcessStats.wallClockMilliseconds()
        var allDay = false
        if let date {
            created = date.milliseconds
            allDay = date.isDateOnly
            if date.isNatural { c.out.note("--date '\(date.text)': \(date.reading)\(allDay ? " (all day)" : "")") }
        }
        try AttachmentFiles.check(attach)
        try Unlock.requireVault(vault)
        let body = try EntryText.from(text, initial: "", optional: false, done: "added", command: c.command)!
        guard !body.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty || !attach.isEmpty else {
            throw CLIFailure(
                "the entry is empty; nothing was added",
                hint: "give the text as TEXT, '-' to read it from standard input, or no TEXT on a terminal to open the editor",
                code: "empty_entry")
        }
        let opened = try Unlock.open(vault, unlock, out: c.out)
        let zone = TimeZone.current
        var entry = EntryBody(
            created: created, timeZone: zone.identifier, utcOffsetSeconds: Int64(zone.secondsFromGMT(for: DateText.date(created))),
            isAllDay: allDay, text: body, tags: tag, mood: mood?.value, isStarred: starred, journal: journal ?? "")
        var revision: EntryRevision?
        do {
            try opened.vault.commit { tx in
                entry.attachments = try AttachmentFiles.store(attach, in: tx)
                revision = try tx.add(entry)
            }
        } catch {
            if let other = error.underlyingError { throw CLIFailure("\(other)") }
            throw .vault(error, path: vault)
        }
        let id = revision!.entryID
        c.out.line("\(id.description)")
        c.out.emit(
            AddJSON(
                id: id.description, created: DateText.iso(created, zoneName: zone.identifier), timeZone: zone.identifier, allDay: allDay,
                attachments: entry.attachments.count))
        return .success
    }
}

/// What `quire add --json` prints.
struct AddJSON: JSONShape {
    let id: String
    let created: String
    let timeZone: String
    let allDay: Bool
    let attachments: Int

    static var example: AddJSON { AddJSON(id: "", created: "", timeZone: "", allDay: false, attachments: 0) }
}
