import Foundation
@_spi(Format) import Quire
@_spi(Format) import QuireExport
import QuireSystem

/// `quire export [VAULT] -o OUT [--format F] [filters]`.
struct ExportCommand: QuireCommand {
    static let configuration = CommandConfiguration(
        name: "export", abstract: "export md, json, dayone, html, epub or pdf",
        discussion: """
            Decrypted on this device; nothing but OUT is written (mode 0600, or a
            0700 folder for md). Without --format, OUT's extension names it
            (.pdf, .epub, .html, .json; .zip: dayone); md is a folder, asked for
            with --format md. When records cannot be read
            (damage: see 'quire verify'), nothing is exported unless --partial is
            given; the output then says it is partial.
            """,
        json: ExportJSON.self, section: .file, unlocks: true)

    @VaultArgument var vault: String
    @Option(help: "md, json, dayone, html, epub or pdf (default: from OUT's extension)") var format: ExportFormatName?
    @Option(short: "o", placeholder: "OUT", help: "the file (or folder, for md) to write; it must not exist") var output: String?
    @Flag(help: "export what can be read when some records cannot be") var partial: Bool
    @OptionGroup var filters: EntryFilterOptions
    @OptionGroup var unlock: UnlockOptions
    @OptionGroup var json: JSONOption

    func run(_ c: CommandContext) throws(CLIFailure) -> ExitCode {
        guard let output else { throw c.usage("-o OUT is required: where to write the export") }
        guard !output.isEmpty else { throw c.usage("-o OUT is empty: give the path of the file to write") }
        if format == nil, ["md", "markdown"].contains(Paths.pathExtension(of: output).lowercased()) {
            throw c.usage("a Markdown export is a folder of files, not one \(output): give --format md -o FOLDER")
        }
        guard let name = (format ?? ExportFormatName.forOutput(output))?.name else {
            throw c.usage("--format is required (md, json, dayone, html, epub or pdf): \(output)'s extension names no format")
        }
        // The PDF stack is linked into the quire-book helper only: it takes
        // over this process, with the same arguments, before anything is read.
        var book: BookRenderer?
        if name == "pdf" {
            guard let renderer = c.book else { try BookHelper.run() }
            book = renderer
        }
        guard !FileSystem.nameExists(output) else {
            throw CLIFailure("\(output) already exists; nothing was written", hint: "choose a new name for -o")
        }
        try Paths.requireParentFolder(output)
        let selection = try EntryFilter(filters, out: c.out, command: c.command)
        var filter = ExportFilter(tags: filters.tag, journals: filters.journal)
        filter.sinceMilliseconds = selection.since
        filter.untilMilliseconds = selection.until
        // Memory independent of the journal's size: the index keeps no body.
        let opened = try Unlock.open(vault, unlock, out: c.out, writable: false, retainsEntryBodies: false)
        // An export is complete or says it is not: records that cannot be read
        // refuse it (nothing written) unless --partial asks for what can be read.
        let unread: UnreadRecords
        do { _ = try opened.vault.unreadRecords() } catch { throw .vault(error, path: vault) }
        // An attachment that cannot be read is an unread record too: a
        // partial export leaves its bytes out.
        // A JSON export describes attachments without their bytes
        // (Spec/export-json.md §4.4): counted here, so that its line does not
        // say "0 attachments" as if the entries had none (trial 28).
        let described: Int
        do {
            let readable = (try? opened.vault.entries()) ?? []
            Reading.include(readable.flatMap(\.body.attachments))
            described =
                name == "json" ? Set(readable.filter { filter.accepts($0.body) }.flatMap { $0.body.attachments.map(\.blob) }).count : 0
        }
        unread = Reading.records(opened.vault)
        // Records whose commit's attestation failed are read and exported;
        // they are said, but do not make the export partial.
        let leftOut = unread.records.filter { $0.code != "attestation_failed" }
        var options = ExportOptions()
        options.unreadableAttachments = Set(Reading.damagedAttachments(opened.vault).keys)
        if !leftOut.isEmpty && !partial {
            throw CLIFailure(
                "\(Reading.summary(leftOut, path: vault)); nothing was exported",
                hint:
                    "restore them from another copy ('quire merge \(vault) COPY'; 'quire verify \(vault)' lists them), or export what can be read with --partial",
                code: "records_unreadable")
        }
        let progress = ProgressBar("exporting \(name)")
        progress.start()
        // Told to stop (SIGTERM, SIGINT, SIGHUP) while the decrypted export is
        // being written: stop at the next entry, remove the temporary file
        // (or folder), then end by the same signal.
        let stop = SignalTrap([.hangup, .terminate, .interrupt])
        let stopped = CancellationFlag(alsoSetWhen: { stop.hasCaught })
        let outcome: Result<ExportReport, ExportError> = VaultCancellation.with(stopped) { () -> Result<ExportReport, ExportError> in
            do throws(ExportError) {
                if let book {
                    return .success(try book(opened.vault, output, filter) { p in progress.update(done: p.done, total: p.total) })
                }
                return .success(
                    try exportJournal(opened.vault, format: ExportFormat(rawValue: name)!, to: output, filter: filter, options: options) {
                        p in
                        progress.update(done: p.done, total: p.total)
                    })
            } catch {
                return .failure(error)
            }
        }
        progress.finish()
        stop.restore()
        if let signal = stop.takeCaught(), case .failure = outcome {
            c.out.warning("stopped: nothing was written to \(output)")
            SignalTrap.die(of: signal.rawValue)
        }
        let report: ExportReport
        switch outcome {
        case .success(let r): report = r
        case .failure(let error): throw .exporting(error, path: vault)
        }
        let partText = leftOut.isEmpty ? "" : ": a PARTIAL export (--partial)"
        if report.attachments == 0 && described > 0 {
            c.out.line(
                "exported \(plural(report.entries, "entry", "entries")) to \(output) (\(formatBytes(report.bytes)))\(partText); "
                    + "\(plural(described, "attachment")) \(described == 1 ? "is" : "are") described there without \(described == 1 ? "its" : "their") bytes, "
                    + "which a JSON export leaves out (the md, html, epub and dayone exports hold them)")
        } else {
            c.out.line(
                "exported \(plural(report.entries, "entry", "entries")) and \(plural(report.attachments, "attachment")) to \(output) (\(formatBytes(report.bytes)))\(partText)"
            )
        }
        if !leftOut.isEmpty {
            c.out.warning("partial export: \(Reading.summary(leftOut, path: vault)) and are not in \(output)")
        }
        if !unread.untrusted.isEmpty {
            c.out.warning(
                "\(Reading.summary(unread.untrusted, path: vault, what: "trusted")): the attestation of the commit holding them is damaged; "
                    + "they are in \(output) but no member vouches for them. Run 'quire verify \(vault)'")
        }
        if report.attachmentsNotShown > 0 {
            c.out.warning(
                "\(plural(report.attachmentsNotShown, "attachment")) could not be drawn in \(output) and \(report.attachmentsNotShown == 1 ? "is" : "are") only named there: the book draws JPEG and PNG images that can be read; other files, damaged images and files whose content is not the image their type says are not drawn (EPUB, HTML and the other formats keep them)"
            )
        }
        if report.entries == 0 && selection.isFiltering { c.out.warning("no entries match the filters; \(output) holds none") }
        if report.missingAttachments > 0 {
            c.out.warning(
                "\(plural(report.missingAttachments, "attachment")) named by entries are not in this copy of the vault; their details were exported, their bytes could not be"
            )
        }
        c.out.emit(
            ExportJSON(
                format: name, path: output, entries: report.entries, attachments: report.attachments, bytes: report.bytes,
                missingAttachments: report.missingAttachments, partial: !leftOut.isEmpty,
                unreadRecords: UnreadRecordsJSON(unread, vault: opened.vault)))
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
    /// True when records could not be read and `--partial` exported the rest.
    let partial: Bool
    /// The records the export leaves out (``UnreadRecordsJSON``).
    let unreadRecords: UnreadRecordsJSON

    static var example: ExportJSON {
        ExportJSON(
            format: "", path: "", entries: 0, attachments: 0, bytes: 0, missingAttachments: 0, partial: false, unreadRecords: .example)
    }
}
