import Foundation
import Quire
import QuireExport
import QuirePDF
import QuireSystem

/// `quire export [VAULT] -o OUT [--format F] [filters]`.
struct ExportCommand: QuireCommand {
    static let configuration = CommandConfiguration(
        name: "export", abstract: "export md, json, dayone, html, epub or pdf",
        discussion: """
            Decrypted on this device; nothing but OUT is written (mode 0600, or a
            0700 folder for md). Without --format, OUT's extension names it
            (.pdf, .epub, .html, .json; .zip: dayone).
            """,
        json: ExportJSON.self, section: .file, unlocks: true)

    @VaultArgument var vault: String
    @Option(help: "md, json, dayone, html, epub or pdf (default: from OUT's extension)") var format: ExportFormatName?
    @Option(short: "o", placeholder: "OUT", help: "the file (or folder, for md) to write; it must not exist") var output: String?
    @OptionGroup var filters: EntryFilterOptions
    @OptionGroup var unlock: UnlockOptions
    @OptionGroup var json: JSONOption

    func run(_ c: CommandContext) throws(CLIFailure) -> ExitCode {
        guard let output else { throw c.usage("-o OUT is required: where to write the export") }
        guard !output.isEmpty else { throw c.usage("-o OUT is empty: give the path of the file to write") }
        guard let name = (format ?? ExportFormatName.forOutput(output))?.name else {
            throw c.usage("--format is required (md, json, dayone, html, epub or pdf): \(output)'s extension names no format")
        }
        guard !FileSystem.nameExists(output) else {
            throw CLIFailure("\(output) already exists; nothing was written", hint: "choose a new name for -o")
        }
        try Paths.requireParentFolder(output)
        let selection = try EntryFilter(filters, out: c.out, command: c.command)
        var filter = ExportFilter(tags: filters.tag, journals: filters.journal)
        filter.since = selection.since
        filter.until = selection.until
        let opened = try Unlock.open(vault, unlock, out: c.out, writable: false)
        let progress = ProgressBar("exporting \(name)")
        progress.start()
        let report: ExportReport
        do {
            if name == "pdf" {
                report = try exportPDFBook(opened.vault, to: output, filter: filter) { p in progress.update(done: p.done, total: p.total) }
            } else {
                report = try exportJournal(opened.vault, format: ExportFormat(rawValue: name)!, to: output, filter: filter) { p in
                    progress.update(done: p.done, total: p.total)
                }
            }
        } catch {
            progress.finish()
            throw .exporting(error, path: vault)
        }
        progress.finish()
        c.out.line(
            "exported \(plural(report.entries, "entry", "entries")) and \(plural(report.attachments, "attachment")) to \(output) (\(formatBytes(report.bytes)))"
        )
        if report.entries == 0 && selection.isFiltering { c.out.warning("no entries match the filters; \(output) holds none") }
        if report.missingAttachments > 0 {
            c.out.warning(
                "\(plural(report.missingAttachments, "attachment")) named by entries are not in this copy of the vault; their details were exported, their bytes could not be"
            )
        }
        c.out.emit(
            ExportJSON(
                format: name, path: output, entries: report.entries, attachments: report.attachments, bytes: report.bytes,
                missingAttachments: report.missingAttachments))
        return .success
    }
}

/// What `quire export --json` prints.
struct ExportJSON: JSONShape {
    let format: String
    let path: String
    let entries: Int
    let attachments: Int
    let bytes: UInt64
    let missingAttachments: Int

    static var example: ExportJSON { ExportJSON(format: "", path: "", entries: 0, attachments: 0, bytes: 0, missingAttachments: 0) }
}
