import Foundation
@_spi(Format) import Quire

/// `quire attachments [VAULT] ID`.
struct AttachmentsCommand: QuireCommand {
    static let configuration = CommandConfiguration(
        name: "attachments", abstract: "an entry's attachments and their ids",
        discussion: """
            An attachment's id is the one the entry's text links to
            (![](quire-attachment://ID)); 'quire extract' takes it, or a prefix of
            4 or more of its hex digits.
            """,
        json: AttachmentsJSON.self, section: .journal, unlocks: true)

    @VaultArgument var vault: String
    @Argument(help: "the entry's id (4 or more hex digits)") var id: EntryIDPrefix
    @OptionGroup var unlock: UnlockOptions
    @OptionGroup var output: JSONOption

    func run(_ c: CommandContext) throws(CLIFailure) -> ExitCode {
        let (opened, entries) = try Reading.entries(vault, unlock, out: c.out)
        let e = try EntryFormat.resolve(id, in: entries)
        Reading.include(e.body.attachments)
        // An attachment that cannot be read is said, as 'show' says it
        // (Spec/cli-json.md §2): a warning, and DAMAGED on its line.
        let damaged = Reading.damagedAttachments(opened.vault)
        let damagedHere = e.body.attachments.compactMap { damaged[$0.blob] }
        if !damagedHere.isEmpty {
            c.out.warning("\(Reading.summary(damagedHere, path: vault)); what is shown leaves them out. Run 'quire verify \(vault)'")
        }
        for ref in e.body.attachments {
            var size = (try? opened.vault.attachment(ref.blob).byteCount).map(formatBytes) ?? "missing"
            if damaged[ref.blob] != nil { size = "DAMAGED (cannot be read; see 'quire verify') " + size }
            c.out.line("\(EntryFormat.attachmentID(ref), .id)  \(ref.mediaType)  \(size)\(ref.fileName.isEmpty ? "" : "  ")\(ref.fileName)")
        }
        if e.body.attachments.isEmpty && !c.out.json { c.out.note("entry \(EntryFormat.short(e.id)) has no attachments") }
        c.out.emit(
            AttachmentsJSON(
                entry: e.id.description, attachments: AttachmentJSON.list(e.body.attachments, vault: opened.vault),
                unreadRecords: UnreadRecordsJSON(Reading.records(opened.vault), vault: opened.vault)))
        return .success
    }
}

/// What `quire attachments --json` prints.
struct AttachmentsJSON: JSONShape {
    let entry: String
    let attachments: [AttachmentJSON]
    /// The records the entries shown leave out (``UnreadRecordsJSON``).
    let unreadRecords: UnreadRecordsJSON

    static var example: AttachmentsJSON { AttachmentsJSON(entry: "", attachments: [AttachmentJSON(example: ())], unreadRecords: .example) }
}
