import Foundation
@_spi(Format) import Quire
@_spi(Format) import QuireImport
import QuireSystem

/// `quire import FORMAT SOURCE [VAULT]`.
struct ImportCommand: QuireCommand {
    static let configuration = CommandConfiguration(
        name: "import", abstract: "import dayone, dayone-classic, jrnl or markdown",
        discussion: """
            FORMAT: dayone (a Day One JSON export, zipped or not), dayone-classic,
            jrnl (jrnl --export json), markdown (a folder with front matter).
            Everything happens on this device. Importing again updates changed
            entries and skips unchanged ones; an entry the vault holds in a
            newer version is left as it is. One bad entry or file never stops
            the import: it is skipped and listed with its reason.
            """,
        json: ImportJSON.self, jsonNote: "(Counts are those of ImportReport: Spec/import.md.)", section: .file, unlocks: true)

    @Argument(help: "dayone, dayone-classic, jrnl or markdown") var format: ImportFormat
    @Argument(placeholder: "SOURCE", help: "the export file or folder") var source: String
    @VaultArgument var vault: String
    @Option(placeholder: "NAME", help: "journal name for jrnl and Classic entries (default: the file name)") var journal: String?
    @Option(help: "IANA zone for times without one, as in jrnl (default: this system's)") var timeZone: ZoneName?
    @OptionGroup var unlock: UnlockOptions
    @OptionGroup var output: JSONOption

    func run(_ c: CommandContext) throws(CLIFailure) -> ExitCode {
        guard FileSystem.exists(source) else {
            throw CLIFailure("no file or folder at \(source)", hint: "check the SOURCE path", code: "not_found")
        }
        var options = ImportOptions(journal: journal)
        if let timeZone { options.timeZone = timeZone.identifier }
        // The import's memory must not grow with the vault's text (Spec/import.md §7).
        let opened = try Unlock.open(vault, unlock, out: c.out, retainsEntryBodies: false)
        let progress = ProgressBar("importing \(Paths.lastComponent(of: source))")
        progress.start()
        let report: ImportReport
        do {
            report = try importJournal(format, from: source, into: opened.vault, options: options) { p in
                progress.update(done: p.done, total: p.total)
            }
        } catch {
            progress.finish()
            throw .importing(error, path: vault)
        }
        progress.finish()
        let out = c.out
        out.line("imported \(format.rawValue) from \(source) into \(vault):")
        var entries = "  entries: \(report.entriesAdded) added, \(report.entriesUpdated) updated, \(report.entriesUnchanged) unchanged"
        if report.entriesNotNewer > 0 { entries += ", \(report.entriesNotNewer) kept (the vault's version is newer)" }
        if report.duplicatesMerged > 0 { entries += ", \(report.duplicatesMerged) duplicates merged" }
        out.line("\(entries)")
        var media = "  attachments: \(report.attachmentsStored) stored"
        if report.attachmentsDeduplicated > 0 { media += ", \(report.attachmentsDeduplicated) already held" }
        if report.attachmentsMissing > 0 { media += ", \(report.attachmentsMissing) missing from the export" }
        if report.unreferencedAttachments > 0 { media += ", \(report.unreferencedAttachments) not linked from the text (kept)" }
        out.line("\(media)")
        if !report.journals.isEmpty { out.line("  journals: \(report.journals.joined(separator: ", "))") }
        out.line("  skipped: \(report.skipped.count)")
        for s in report.skipped { out.line("    \(s.item): \(s.reason)") }
        if !report.missingMedia.isEmpty {
            out.line("  media missing from the export (the entries keep their details): \(report.missingMedia.count)")
            for s in report.missingMedia { out.line("    \(s.item): \(s.reason)") }
        }
        if !report.notes.isEmpty {
            out.line("  notes (time zones inferred, links kept as written): \(report.notes.count)")
            for s in report.notes { out.line("    \(s.item): \(s.reason)") }
        }
        out.emit(
            ImportJSON(
                format: format.rawValue, source: source, entriesAdded: report.entriesAdded, entriesUpdated: report.entriesUpdated,
                entriesUnchanged: report.entriesUnchanged, entriesNotNewer: report.entriesNotNewer,
                duplicatesMerged: report.duplicatesMerged,
                attachmentsStored: report.attachmentsStored, attachmentsDeduplicated: report.attachmentsDeduplicated,
                attachmentsMissing: report.attachmentsMissing, unreferencedAttachments: report.unreferencedAttachments,
                journals: report.journals,
                skipped: report.skipped.map { .init(item: $0.item, reason: $0.reason) },
                missingMedia: report.missingMedia.map { .init(item: $0.item, reason: $0.reason) },
                notes: report.notes.map { .init(item: $0.item, reason: $0.reason) }))
        return .success
    }
}

/// What `quire import --json` prints.
struct ImportJSON: JSONShape {
    struct Item: Encodable {
        let item: String
        let reason: String
    }

    let format: String
    let source: String
    let entriesAdded: Int
    let entriesUpdated: Int
    let entriesUnchanged: Int
    let entriesNotNewer: Int
    let duplicatesMerged: Int
    let attachmentsStored: Int
    let attachmentsDeduplicated: Int
    let attachmentsMissing: Int
    let unreferencedAttachments: Int
    let journals: [String]
    let skipped: [Item]
    let missingMedia: [Item]
    let notes: [Item]

    static var example: ImportJSON {
        ImportJSON(
            format: "", source: "", entriesAdded: 0, entriesUpdated: 0, entriesUnchanged: 0, entriesNotNewer: 0, duplicatesMerged: 0,
            attachmentsStored: 0,
            attachmentsDeduplicated: 0, attachmentsMissing: 0, unreferencedAttachments: 0, journals: [],
            skipped: [Item(item: "", reason: "")],
            missingMedia: [Item(item: "", reason: "")], notes: [Item(item: "", reason: "")])
    }
}
