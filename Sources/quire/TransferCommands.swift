import Foundation
import Quire
import QuireExport
import QuireImport
import QuirePDF
import QuireSystem

/// `quire import FORMAT SOURCE VAULT`.
func importCommand(_ c: Context) throws(CLIFailure) -> ExitCode {
    let formatName = c.operand(0)!, source = c.operand(1)!, path = c.operand(2)!
    guard let format = ImportFormat(rawValue: formatName.lowercased()) else {
        throw c.usage("unknown import format '\(formatName)'; the formats are \(ImportFormat.allCases.map(\.rawValue).joined(separator: ", "))")
    }
    guard FileSystem.exists(source) else { throw CLIFailure("no file or folder at \(source)", hint: "check the SOURCE path", code: "not_found") }
    var options = ImportOptions(journal: c.args.value("journal"))
    if let zone = c.args.value("time-zone") {
        guard TimeZone(identifier: zone) != nil else {
            throw c.usage("unknown time zone '\(zone)'; give an IANA name such as Europe/London")
        }
        options.timeZone = zone
    }
    let opened = try Unlock.open(path, c.args, out: c.out)
    let progress = ProgressBar("importing \((source as NSString).lastPathComponent)")
    progress.start()
    let report: ImportReport
    do {
        report = try importJournal(format, from: source, into: opened.vault, options: options) { p in
            progress.update(done: p.done, total: p.total)
        }
    } catch {
        progress.finish()
        throw .importing(error)
    }
    progress.finish()
    c.out.line("imported \(format.rawValue) from \(source) into \(path):")
    var entries = "  entries: \(report.entriesAdded) added, \(report.entriesUpdated) updated, \(report.entriesUnchanged) unchanged"
    if report.entriesNotNewer > 0 { entries += ", \(report.entriesNotNewer) kept (the vault's version is newer)" }
    if report.duplicatesMerged > 0 { entries += ", \(report.duplicatesMerged) duplicates merged" }
    c.out.line(entries)
    var media = "  attachments: \(report.attachmentsStored) stored"
    if report.attachmentsDeduplicated > 0 { media += ", \(report.attachmentsDeduplicated) already held" }
    if report.attachmentsMissing > 0 { media += ", \(report.attachmentsMissing) missing from the export" }
    if report.unreferencedAttachments > 0 { media += ", \(report.unreferencedAttachments) not linked from the text (kept)" }
    c.out.line(media)
    if !report.journals.isEmpty { c.out.line("  journals: " + report.journals.joined(separator: ", ")) }
    c.out.line("  skipped: \(report.skipped.count)")
    for s in report.skipped { c.out.line("    \(s.item): \(s.reason)") }
    if !report.missingMedia.isEmpty {
        c.out.line("  media missing from the export (the entries keep their details): \(report.missingMedia.count)")
        for s in report.missingMedia { c.out.line("    \(s.item): \(s.reason)") }
    }
    c.out.emit([
        "format": format.rawValue, "source": source, "entriesAdded": report.entriesAdded, "entriesUpdated": report.entriesUpdated,
        "entriesUnchanged": report.entriesUnchanged, "entriesNotNewer": report.entriesNotNewer,
        "duplicatesMerged": report.duplicatesMerged, "attachmentsStored": report.attachmentsStored,
        "attachmentsDeduplicated": report.attachmentsDeduplicated, "attachmentsMissing": report.attachmentsMissing,
        "unreferencedAttachments": report.unreferencedAttachments, "journals": report.journals,
        "skipped": report.skipped.map { ["item": $0.item, "reason": $0.reason] },
        "missingMedia": report.missingMedia.map { ["item": $0.item, "reason": $0.reason] },
    ])
    return .success
}

/// `quire export VAULT --format F -o OUT [filters]`.
func exportCommand(_ c: Context) throws(CLIFailure) -> ExitCode {
    let path = c.operand(0)!
    guard let formatName = c.args.value("format") else { throw c.usage("--format is required: md, json, dayone, html, epub or pdf") }
    guard let output = c.args.value("output") else { throw c.usage("-o OUT is required: where to write the export") }
    let name = formatName.lowercased() == "markdown" ? "md" : formatName.lowercased()
    guard name == "pdf" || ExportFormat(rawValue: name) != nil else {
        throw c.usage("unknown export format '\(formatName)'; the formats are md, json, dayone, html, epub and pdf")
    }
    guard !output.isEmpty else { throw c.usage("-o OUT is empty: give the path of the file to write") }
    guard !FileSystem.nameExists(output) else { throw CLIFailure("\(output) already exists; nothing was written", hint: "choose a new name for -o") }
    try Paths.requireParentFolder(output)
    var filter = ExportFilter(tags: c.args.all("tag"), journals: c.args.all("journal"))
    if let s = c.args.value("since") { filter.since = try DateArgument.require(s, option: "since", command: "export").milliseconds }
    if let u = c.args.value("until") {
        let p = try DateArgument.require(u, option: "until", command: "export")
        filter.until = p.isDateOnly ? p.endOfDayMilliseconds : p.milliseconds
    }
    if let since = filter.since, let until = filter.until, since >= until { throw c.usage("--since is not before --until: no entry can match") }
    let opened = try Unlock.open(path, c.args, out: c.out, writable: false)
    // An export is complete or says it is not: records that cannot be read
    // refuse it (nothing written) unless --partial asks for what can be read.
    opened.vault.retainsEntryBodies = false
    let unread: UnreadRecords
    do { unread = try opened.vault.unreadRecords() } catch { throw .vault(error, path: path) }
    let partial = c.args.has("partial")
    if !unread.isEmpty && !partial {
        throw CLIFailure(
            "\(unreadSummary(unread.records, path: path)); nothing was exported",
            hint: "restore them from another copy ('quire merge \(path) COPY'; 'quire verify \(path)' lists them), or export what can be read with --partial",
            code: "records_unreadable")
    }
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
        throw .exporting(error)
    }
    progress.finish()
    let partText = unread.isEmpty ? "" : ": a PARTIAL export (--partial)"
    c.out.line("exported \(plural(report.entries, "entry", "entries")) and \(plural(report.attachments, "attachment")) to \(output) (\(formatBytes(report.bytes)))\(partText)")
    if !unread.isEmpty {
        c.out.warning("partial export: \(unreadSummary(unread.records, path: path)) and are not in \(output)")
    }
    let filtered = filter.since != nil || filter.until != nil || !filter.tags.isEmpty || !filter.journals.isEmpty
    if report.entries == 0 && filtered { c.out.warning("no entries match the filters; \(output) holds none") }
    if report.missingAttachments > 0 {
        c.out.warning("\(plural(report.missingAttachments, "attachment")) named by entries are not in this copy of the vault; their details were exported, their bytes could not be")
    }
    c.out.emit([
        "format": name, "path": output, "entries": report.entries, "attachments": report.attachments, "bytes": Int(report.bytes),
        "missingAttachments": report.missingAttachments, "partial": !unread.isEmpty, "unreadRecords": unreadJSON(unread),
    ])
    return .success
}
