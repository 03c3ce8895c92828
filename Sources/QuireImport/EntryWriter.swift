@_spi(Format) import Quire
import QuireDayOne
@_spi(Format) import QuireFormat

/// One entry ready to write, from an importer that needs no per-format
/// logic at commit time (Day One Classic, jrnl, Markdown folders).
struct PreparedEntry {
    /// Where it came from, for the report.
    var label: String
    /// Its stable id.
    var id: EntryID
    /// The body; the references `files` name get their blob once stored.
    var body: EntryBody
    /// Files to store: the index of the reference in `body.attachments`, the
    /// export path, and whether to drop the reference when the file cannot
    /// be read (true when its blob is a placeholder).
    var files: [(index: Int, path: String, dropIfUnreadable: Bool)] = []
}

/// Writes prepared entries in batched commits with the import rules of
/// `Spec/import.md §6`: unchanged entries write nothing, changed ones get a
/// revision, a vault version modified later is kept, a file that cannot be
/// read is skipped (its commit redone without it).
final class EntryWriter {
    let vault: Vault
    let files: any ExportFiles
    var report: ImportReport
    let progress: (ImportProgress) -> Void
    var blobs: [String: BlobID] = [:]
    var badFiles = Set<String>()
    var done = 0

    init(vault: Vault, files: any ExportFiles, report: ImportReport, progress: @escaping (ImportProgress) -> Void) {
        self.vault = vault
        self.files = files
        self.report = report
        self.progress = progress
    }

    struct Nothing: Error {}

    /// Writes `entries` in batches; progress counts every entry written by
    /// this writer, out of `total` (nil when unknown, as for a stream).
    func write(_ entries: [PreparedEntry], total: Int?) throws(ImportError) {
        var start = 0
        while start < entries.count {
            let batch = entries[start..<min(start + DayOneImporter.batchEntryCount, entries.count)]
            var pending = ImportReport()
            var pendingBlobs: [String: BlobID] = [:]
            do {
                try vault.commit { tx in
                    // A reference whose file the export lacks is kept (and
                    // reported as skipped): the vault may hold its content.
                    tx.keepsUnstoredReferences = true
                    var written = 0
                    for e in batch { written += try self.writeOne(e, tx: tx, pending: &pending, pendingBlobs: &pendingBlobs) }
                    if written == 0 { throw Nothing() }
                }
            } catch {
                // The commit wraps what its closure threw of the importer's own.
                if error.underlyingError is Nothing {
                } else if let r = error.underlyingError as? SourceFailure {
                    badFiles.insert(r.path)
                    report.skipped.append(SkippedItem(item: r.path, reason: "the file could not be read: \(r.reason)"))
                    continue
                } else if let other = error.underlyingError {
                    throw .unreadableSource(path: batch.first?.label ?? "", reason: "\(other)")
                } else {
                    throw .vault(error)
                }
            }
            report.merge(pending)
            blobs.merge(pendingBlobs) { a, _ in a }
            start += batch.count
            done += batch.count
            progress(ImportProgress(done: done, total: total))
        }
    }

    private func writeOne(_ e: PreparedEntry, tx: VaultTransaction, pending: inout ImportReport, pendingBlobs: inout [String: BlobID])
        throws -> Int
    {
        let current = try tx.currentRevision(of: e.id)
        if let current,
            current.isDeleted
                || (current.body.modifiedMilliseconds ?? current.body.createdMilliseconds)
                    > (e.body.modifiedMilliseconds ?? e.body.createdMilliseconds)
        {
            pending.entriesNotNewer += 1
            return 0
        }
        var body = e.body
        // A zone once inferred from the import's zone stays (importing again elsewhere changes nothing).
        let key = DayOneMapping.inferredTimeZoneKey
        if let current, body.extra[text: key] == .text("import"), current.body.extra[text: key] == .text("import"),
            !current.body.timeZoneIdentifier.isEmpty
        {
            body.timeZoneIdentifier = current.body.timeZoneIdentifier
            body.utcOffsetSeconds = ImportDates.utcOffsetSeconds(timeZone: body.timeZoneIdentifier, at: body.createdMilliseconds)
        }
        var written = 0
        var drop = Set<Int>()
        for (index, path, dropIfUnreadable) in e.files {
            if badFiles.contains(path) {
                if dropIfUnreadable { drop.insert(index) }
                continue
            }
            if let blob = blobs[path] ?? pendingBlobs[path] {
                body.attachments[index].blob = blob
                continue
            }
            let stored = try storeExportFile(files, path, mediaType: body.attachments[index].mediaType, tx: tx)
            if case .stored = stored {
                pending.attachmentsStored += 1
                written += 1
            } else {
                pending.attachmentsDeduplicated += 1
            }
            pendingBlobs[path] = stored.blob
            body.attachments[index].blob = stored.blob
        }
        if !drop.isEmpty { body.attachments = body.attachments.enumerated().filter { !drop.contains($0.offset) }.map(\.element) }
        if let current, current.body == body {
            pending.entriesUnchanged += 1
            return written
        }
        try tx.put(body, id: e.id)
        if current == nil { pending.entriesAdded += 1 } else { pending.entriesUpdated += 1 }
        return written + 1
    }
}
