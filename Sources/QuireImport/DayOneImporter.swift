import Foundation
@_spi(Format) import Quire
import QuireDayOne
import QuireZip

/// Imports a Day One JSON export (`Spec/import.md §2–§7`): every
/// `<Journal>.json` in it, entries streamed one at a time and committed in
/// batches, media streamed from the export into the vault.
final class DayOneImporter {
    /// Most entries in one commit.
    static let batchEntryCount = 256
    /// Most entry JSON, in bytes, gathered for one commit (8 MiB).
    static let batchJSONByteCount: UInt64 = 8 << 20
    /// Attachment bytes after which a commit is closed (64 MiB).
    static let batchAttachmentByteCount: UInt64 = 64 << 20

    let vault: Vault
    let files: any ExportFiles
    let progress: (ImportProgress) -> Void
    /// The zone of entries that name none usable (`Spec/import.md §4`).
    let defaultTimeZone: String
    var report = ImportReport()
    /// Every media item the export lists, by identifier (the first listing
    /// with an md5 wins), from the check pass: a moment link in any entry
    /// finds its file through it (`Spec/import.md §3.1`).
    var mediaByIdentifier: [String: DayOneMapping.MediaItem] = [:]
    /// Every entry uuid in the export, from the check pass: links between
    /// entries resolve against it (`Spec/import.md §3.4`).
    var uuids = Set<String>()
    /// md5 (lowercase) → export paths of media files with that name.
    var mediaIndex: [String: [String]] = [:]
    /// Export path → the blob stored (or found) for it during this import.
    var blobs: [String: (BlobID, String)] = [:]
    /// Export paths that could not be read; their items stay unattached.
    var badMedia: [String: String] = [:]
    /// Entries seen in this import.
    var seen = Set<EntryID>()
    var done = 0
    /// Revisions and blobs appended in the commit being built.
    var recordsWritten = 0

    init(vault: Vault, files: any ExportFiles, defaultTimeZone: String, progress: @escaping (ImportProgress) -> Void) {
        self.vault = vault
        self.files = files
        self.progress = progress
        self.defaultTimeZone = defaultTimeZone
        let folders = Set(DayOneMediaKind.allCases.map(\.folder))
        for path in files.files {
            let parts = path.split(separator: "/")
            guard let last = parts.last, !last.hasPrefix("._"), parts.dropLast().contains(where: { folders.contains(String($0)) }),
                !parts.contains("__MACOSX")
            else { continue }
            let stem = last.split(separator: ".", maxSplits: 1).first.map { String($0).lowercased() } ?? ""
            mediaIndex[stem, default: []].append(path)
        }
    }

    /// The candidate journal files (`Spec/import.md §1`): the `*.json`
    /// files at the top level of the export, or, when the top level holds
    /// no `*.json` and exactly one folder, at the top level of that folder.
    /// macOS junk (`__MACOSX/`, `._*`) is ignored.
    var journalFiles: [String] {
        func isJunk(_ parts: [Substring]) -> Bool { parts.contains("__MACOSX") || parts.last!.hasPrefix("._") }
        let all = files.files.map { $0.split(separator: "/") }.filter { !$0.isEmpty && !isJunk($0) }
        let top = all.filter { $0.count == 1 && $0[0].lowercased().hasSuffix(".json") }
        if !top.isEmpty { return top.map { $0.joined(separator: "/") } }
        let folders = Set(all.filter { $0.count > 1 }.map { $0[0] })
        guard folders.count == 1, all.allSatisfy({ $0.count > 1 }) else { return [] }
        return all.filter { $0.count == 2 && $0[1].lowercased().hasSuffix(".json") }.map { $0.joined(separator: "/") }
    }

    /// Checks a journal file in one streaming pass that builds one entry
    /// at a time: nil when it is well-formed JSON (RFC 8259, UTF-8) whose
    /// top-level object has an `"entries"` array, else why not. Nothing is
    /// written; the entries' uuids and media items are indexed.
    func check(_ path: String) -> String? {
        let stream: any ByteSource
        do { stream = try files.open(path) } catch { return "cannot be read: \(error)" }
        let reader = JSONReader { try stream.read(into: $0) }
        var hasEntries = false
        var entriesProblem: String?
        do {
            try reader.skipByteOrderMark()
            guard let first = try reader.skipSpace() else { return "not a Day One export: the file is empty" }
            guard first == UInt8(ascii: "{") else {
                try reader.skipValue()
                try reader.expectEnd()
                return "not a Day One export: the JSON is not an object with an \"entries\" array"
            }
            try reader.members { (key: String) throws -> Void in
                if key == "entries", try reader.skipSpace() == UInt8(ascii: "[") {
                    hasEntries = true
                    try reader.elements { (value: JSONValue) throws -> Void in self.index(value) }
                    return
                }
                if key == "entries" { entriesProblem = "not a Day One export: \"entries\" is not an array" }
                try reader.skipValue()
            }
            try reader.expectEnd()
        } catch {
            return "\(error)"
        }
        if let entriesProblem { return entriesProblem }
        return hasEntries ? nil : "not a Day One export: no \"entries\" array"
    }

    /// Adds an entry's uuid and media items to the export's indexes.
    func index(_ value: JSONValue) {
        guard let o = value.objectValue else { return }
        if let uuid = o["uuid"]?.stringValue { uuids.insert(uuid) }
        for kind in DayOneMediaKind.allCases {
            for (i, item) in (o[kind.listKey]?.arrayValue ?? []).enumerated() {
                guard let object = item.objectValue, let identifier = object["identifier"]?.stringValue else { continue }
                // Only what finding the file needs is kept.
                var kept = JSONObject()
                for key in ["identifier", "md5", "type", "format"] { if let v = object[key] { kept[key] = v } }
                let entry = DayOneMapping.MediaItem(kind: kind, index: i, object: kept)
                if let known = mediaByIdentifier[identifier], known.md5 != nil { continue }
                mediaByIdentifier[identifier] = entry
            }
        }
    }

    /// Imports every journal file that passes ``check(_:)``; the others are
    /// listed as skipped. Throws when none passes: for a single `.json`
    /// source, with that file's reason.
    func run(source: String, singleFile: Bool) throws(ImportError) -> ImportReport {
        report.skipped += files.refused
        var good: [String] = []
        var problems: [SkippedItem] = []
        for path in journalFiles {
            if let reason = check(path) { problems.append(SkippedItem(item: path, reason: reason)) } else { good.append(path) }
        }
        if singleFile, let p = problems.first { throw .unreadableSource(path: source, reason: p.reason) }
        if good.isEmpty {
            let seen =
                problems.isEmpty
                ? ""
                : " (" + problems.prefix(3).map { "\($0.item): \($0.reason)" }.joined(separator: "; ") + (problems.count > 3 ? "; …" : "")
                    + ")"
            throw .unreadableSource(
                path: source,
                reason:
                    "no Day One journal JSON found in \(source): expected a Day One export (a ZIP or its folder) with <Journal>.json files holding an \"entries\" array at its top level\(seen)"
            )
        }
        report.skipped += problems
        for path in good {
            let base = String(path.split(separator: "/").last!)
            let journal = String(base.dropLast(5))
            if !report.journals.contains(journal) { report.journals.append(journal) }
            try importJournalFile(path, journal: journal)
        }
        return report
    }

    /// One entry object read, and the uuid of the entry before it in its file.
    typealias Read = (value: JSONValue, previous: String?)

    private func importJournalFile(_ path: String, journal: String) throws(ImportError) {
        let stream: any ByteSource
        do { stream = try files.open(path) } catch {
            report.skipped.append(SkippedItem(item: path, reason: "cannot be read: \(error)"))
            return
        }
        let reader = JSONReader { try stream.read(into: $0) }
        // Apple exports say version "1.0" and escape Markdown; Day One for
        // Android writes its app version there and does not escape.
        var escaped = true
        var metadata: JSONValue?
        var batch: [Read] = []
        var previous: String?
        var batchStart: UInt64 = 0
        var sawEntries = false
        var vaultFailure: ImportError?
        do throws(any Error) {
            try reader.skipByteOrderMark()
            try reader.members { (key: String) throws -> Void in
                if key == "entries" {
                    sawEntries = true
                    batchStart = reader.offset
                    try reader.elements { (value: JSONValue) throws -> Void in
                        batch.append((value, previous))
                        previous = value.objectValue?["uuid"]?.stringValue ?? previous
                        if batch.count >= Self.batchEntryCount || reader.offset - batchStart >= Self.batchJSONByteCount {
                            do throws(ImportError) { try self.flush(&batch, file: path, journal: journal, escaped: escaped) } catch {
                                vaultFailure = error
                                throw error
                            }
                            batchStart = reader.offset
                        }
                    }
                } else {
                    let v = try reader.value()
                    if key == "metadata" {
                        metadata = v
                        if let version = v.objectValue?["version"]?.stringValue { escaped = version == "1.0" }
                    }
                }
            }
            do throws(ImportError) {
                try flush(&batch, file: path, journal: journal, escaped: escaped)
                try remember(metadata, journal: journal)
            } catch {
                vaultFailure = error
                throw error
            }
            if !sawEntries { report.skipped.append(SkippedItem(item: path, reason: "not a Day One journal: it has no \"entries\" array")) }
        } catch {
            if let vaultFailure { throw vaultFailure }
            // The document is damaged: keep what was read before the damage.
            try flush(&batch, file: path, journal: journal, escaped: escaped)
            report.skipped.append(SkippedItem(item: path, reason: "the rest of the journal was not read: \(error)"))
        }
    }

    /// Keeps a journal file's `metadata` in the profile, so that the Day One
    /// variant of the export writes it back (`Spec/import.md §11`); writes
    /// nothing when the profile already holds it.
    private func remember(_ metadata: JSONValue?, journal: String) throws(ImportError) {
        guard let metadata else { return }
        let profile: Profile?
        do { profile = try vault.profile() } catch { throw .vault(error) }
        var settings = profile?.settings ?? CBORMap()
        var dayOne = CBORMap()
        var journals = CBORMap()
        if case .map(let d) = settings[text: DayOneMapping.profileKey] { dayOne = d }
        if case .map(let j) = dayOne[text: "journals"] { journals = j }
        let text = CBOR.text(metadata.serialized)
        if case .map(let known) = journals[text: journal], known[text: "metadata"] == text { return }
        journals[text: journal] = .map(CBORMap(text: [("metadata", text)]))
        dayOne[text: "journals"] = .map(journals)
        settings[text: DayOneMapping.profileKey] = .map(dayOne)
        do {
            try vault.commit { tx in try tx.setProfile(name: profile?.name ?? "", about: profile?.about ?? "", settings: settings) }
        } catch {
            if let other = error.underlyingError { throw .unreadableSource(path: journal, reason: "\(other)") }
            throw .vault(error)
        }
    }

    /// A batch found nothing to write.
    struct NothingWritten: Error {}

    /// Commits `batch` (several commits if its attachments are large) and empties it.
    private func flush(_ batch: inout [Read], file: String, journal: String, escaped: Bool) throws(ImportError) {
        // The same uuid twice in a batch: only the version modified last
        // (the later one on a tie) is imported.
        var best: [String: (index: Int, modified: String)] = [:]
        for (i, read) in batch.enumerated() {
            guard let o = read.value.objectValue, let uuid = o["uuid"]?.stringValue else { continue }
            let modified =
                o["modifiedDate"]?.stringValue.flatMap(ImportDates.milliseconds(iso:)).map { String(format: "%020lld", $0 + (1 << 62)) }
                ?? ""
            if let b = best[uuid], b.modified > modified {
                report.duplicatesMerged += 1
                continue
            }
            if best[uuid] != nil { report.duplicatesMerged += 1 }
            best[uuid] = (i, modified)
        }
        if best.count < batch.count {
            let keep = Set(best.values.map(\.index))
            batch = batch.enumerated().filter { $0.element.value.objectValue?["uuid"]?.stringValue == nil || keep.contains($0.offset) }.map(
                \.element)
        }
        var next = 0
        while next < batch.count {
            var pending = ImportReport()
            var pendingBlobs: [String: (BlobID, String)] = [:]
            var pendingSeen = Set<EntryID>()
            var consumed = 0
            do {
                try vault.commit { tx in
                    self.recordsWritten = 0
                    var stored: UInt64 = 0
                    var i = next
                    while i < batch.count, stored < Self.batchAttachmentByteCount {
                        stored += try self.process(
                            batch[i], number: self.done + (i - next), file: file, journal: journal, escaped: escaped, tx: tx,
                            pending: &pending, pendingBlobs: &pendingBlobs, pendingSeen: &pendingSeen)
                        i += 1
                    }
                    consumed = i - next
                    // Nothing new: abandon the commit so not even a commit record is written.
                    if self.recordsWritten == 0 { throw NothingWritten() }
                }
            } catch {
                // The commit wraps what its closure threw of the importer's own.
                if error.underlyingError is NothingWritten {
                    // The report below still counts what was found unchanged.
                } else if let retry = error.underlyingError as? SourceFailure {
                    // A media file failed mid-stream: the commit is abandoned and redone without it.
                    badMedia[retry.path] = retry.reason
                    report.skipped.append(SkippedItem(item: retry.path, reason: "the file could not be read: \(retry.reason)"))
                    continue
                } else if let other = error.underlyingError {
                    throw .unreadableSource(path: file, reason: "\(other)")
                } else {
                    throw .vault(error)
                }
            }
            report.merge(pending)
            blobs.merge(pendingBlobs) { a, _ in a }
            seen.formUnion(pendingSeen)
            next += consumed
            done += consumed
            progress(ImportProgress(done: done, total: nil))
        }
        batch.removeAll(keepingCapacity: true)
    }

    /// Imports one entry inside a commit; returns the attachment bytes it stored.
    private func process(
        _ read: Read, number: Int, file: String, journal: String, escaped: Bool, tx: VaultTransaction,
        pending: inout ImportReport, pendingBlobs: inout [String: (BlobID, String)], pendingSeen: inout Set<EntryID>
    ) throws -> UInt64 {
        let value = read.value
        var draft: DayOneMapping.Draft
        do {
            draft = try DayOneMapping.draft(value, journal: journal, options: .init(escaped: escaped, defaultTimeZone: defaultTimeZone))
        } catch {
            let uuid = value.objectValue?["uuid"]?.stringValue.map { " \($0)" } ?? ""
            pending.skipped.append(SkippedItem(item: "\(file): entry #\(number + 1)\(uuid)", reason: error.description))
            return 0
        }
        let label = "\(file): entry \(draft.uuid)"
        for note in draft.notes { pending.skipped.append(SkippedItem(item: "\(label): \(note.field)", reason: note.reason)) }
        let isDuplicate = seen.contains(draft.id) || pendingSeen.contains(draft.id)
        if isDuplicate { pending.duplicatesMerged += 1 }
        pendingSeen.insert(draft.id)
        let current = try tx.currentRevision(of: draft.id)
        if let current {
            let theirs = current.body.modifiedMilliseconds ?? current.body.createdMilliseconds
            let mine = draft.body.modifiedMilliseconds ?? draft.body.createdMilliseconds
            if current.isDeleted || theirs > mine {
                if !isDuplicate { pending.entriesNotNewer += 1 }
                return 0
            }
            // A zone once inferred from the import's zone stays: importing
            // again on a machine in another zone changes nothing.
            let key = DayOneMapping.inferredTimeZoneKey
            if draft.body.extra[text: key] == .text("import"), current.body.extra[text: key] == .text("import"),
                !current.body.timeZoneIdentifier.isEmpty
            {
                draft.body.timeZoneIdentifier = current.body.timeZoneIdentifier
                draft.body.utcOffsetSeconds = ImportDates.utcOffsetSeconds(
                    timeZone: current.body.timeZoneIdentifier, at: draft.body.createdMilliseconds)
                draft.remarks = draft.remarks.map {
                    (
                        $0.field,
                        $0.field == "timeZone"
                            ? "the entry has no time zone of its own: shown in \(current.body.timeZoneIdentifier), as when it was first imported (inferred)"
                            : $0.reason
                    )
                }
            }
        }
        for remark in draft.remarks { pending.notes.append(SkippedItem(item: "\(label): \(remark.field)", reason: remark.reason)) }
        // Media: found by md5 anywhere in the export, stored once.
        var attached: [DayOneMapping.Attached] = []
        var storedBytes: UInt64 = 0
        let known = Self.knownBlobs(current?.body)
        /// The blob and media type for an export file, stored when new.
        func store(_ path: String, fallbackExtension: String) throws -> (blob: BlobID, mediaType: String, fileName: String) {
            let fileName = String(path.split(separator: "/").last!)
            let ext = fileName.split(separator: ".", maxSplits: 1).dropFirst().first.map(String.init) ?? fallbackExtension
            let mediaType = MediaTypes.forExtension(ext)
            if let (blob, type) = blobs[path] ?? pendingBlobs[path] { return (blob, type, fileName) }
            if let blob = known[fileName.lowercased()] {
                pendingBlobs[path] = (blob, mediaType)
                return (blob, mediaType, fileName)
            }
            let stored = try storeExportFile(files, path, mediaType: mediaType, tx: tx)
            switch stored {
            case .stored(let m):
                recordsWritten += 1
                pending.attachmentsStored += 1
                storedBytes += m.byteCount
            case .deduplicated:
                pending.attachmentsDeduplicated += 1
            }
            pendingBlobs[path] = (stored.blob, mediaType)
            return (stored.blob, mediaType, fileName)
        }
        for item in draft.media {
            let name = "\(item.kind.rawValue)[\(item.index)] \(item.identifier ?? "")"
            // The item's own md5, else the same identifier listed with one elsewhere in the export.
            let found = resolve(item) ?? item.identifier.flatMap { mediaByIdentifier[$0] }.flatMap(resolve)
            guard let path = found else {
                pending.attachmentsMissing += 1
                let expected = item.md5.map { "\(item.kind.folder)/\($0).*" } ?? "(the item has no md5)"
                pending.missingMedia.append(
                    SkippedItem(item: "\(label): \(name)", reason: "no file \(expected) in the export; the entry keeps the item's metadata")
                )
                continue
            }
            if badMedia[path] != nil { continue }
            let file = try store(path, fallbackExtension: item.kind.fallbackExtension(type: item.type))
            attached.append(.init(item: item, blob: file.blob, mediaType: file.mediaType, fileName: file.fileName))
        }
        // Links to media another entry lists (Day One copies photos between entries).
        let listed = Set(draft.media.compactMap(\.identifier))
        var linked: [DayOneMapping.Linked] = []
        var linkedSeen = Set<String>()
        for link in MomentLink.find(in: draft.body.text)
        where !listed.contains(link.identifier) && linkedSeen.insert(link.identifier).inserted {
            guard let item = mediaByIdentifier[link.identifier], let md5 = item.md5, let path = resolve(item), badMedia[path] == nil else {
                continue
            }
            let file = try store(path, fallbackExtension: item.kind.fallbackExtension(type: item.type))
            linked.append(
                .init(
                    kind: link.kind, identifier: link.identifier, md5: md5, blob: file.blob, mediaType: file.mediaType,
                    fileName: file.fileName))
        }
        // Links to entries: in the export, or already in the vault.
        let target = { (uuid: String) -> EntryID? in
            let id = DayOneMapping.entryID(forUUID: uuid)
            if self.uuids.contains(uuid) { return id }
            return (try? tx.currentRevision(of: id))??.isDeleted == false ? id : nil
        }
        let (body, unresolved) = DayOneMapping.finish(
            draft, attached: attached, linked: linked, entryTarget: target, previous: read.previous, escaped: escaped)
        for ident in unresolved.media where !listed.contains(ident) {
            pending.skipped.append(
                SkippedItem(
                    item: "\(label): link \(ident)",
                    reason: "the text links to media no entry of the export lists; the link is kept as it was"))
        }
        for url in unresolved.entries {
            pending.notes.append(
                SkippedItem(
                    item: "\(label): link \(url)",
                    reason:
                        "links to an entry that is not in the export or the vault (another journal not exported?); the link is kept as it was"
                ))
        }
        let linkedIdentifiers = Set(MomentLink.find(in: draft.body.text).map(\.identifier))
        pending.unreferencedAttachments += attached.filter { !linkedIdentifiers.contains($0.item.identifier ?? "") }.count
        if let current, !current.isDeleted, current.body == body {
            if !isDuplicate { pending.entriesUnchanged += 1 }
            return storedBytes
        }
        try tx.put(body, id: draft.id)
        recordsWritten += 1
        if current == nil {
            pending.entriesAdded += 1
        } else if !isDuplicate {
            pending.entriesUpdated += 1
        }
        return storedBytes
    }

    /// Blobs an earlier import of this entry used, by the export file name
    /// (`<md5>.<ext>`), so a re-import does not read the files again.
    static func knownBlobs(_ body: EntryBody?) -> [String: BlobID] {
        guard let body else { return [:] }
        var out: [String: BlobID] = [:]
        for ref in body.attachments where !ref.fileName.isEmpty { out[ref.fileName.lowercased()] = ref.blob }
        return out
    }

    /// The export file for a media item: a file named by its md5 in any
    /// folder, preferring its own kind's folder and then its type's extension.
    func resolve(_ item: DayOneMapping.MediaItem) -> String? {
        guard let md5 = item.md5, let candidates = mediaIndex[md5], !candidates.isEmpty else { return nil }
        let ext = item.kind.fallbackExtension(type: item.type)
        func score(_ p: String) -> Int {
            let parts = p.split(separator: "/")
            var s = 0
            if parts.dropLast().contains(where: { $0 == item.kind.folder }) { s += 2 }
            if p.lowercased().hasSuffix("." + ext) { s += 1 }
            return s
        }
        return candidates.max { score($0) < score($1) || (score($0) == score($1) && $0 > $1) }
    }
}

extension ImportReport {
    mutating func merge(_ other: ImportReport) {
        entriesAdded += other.entriesAdded
        entriesUpdated += other.entriesUpdated
        entriesUnchanged += other.entriesUnchanged
        entriesNotNewer += other.entriesNotNewer
        duplicatesMerged += other.duplicatesMerged
        attachmentsStored += other.attachmentsStored
        attachmentsDeduplicated += other.attachmentsDeduplicated
        attachmentsMissing += other.attachmentsMissing
        unreferencedAttachments += other.unreferencedAttachments
        for j in other.journals where !journals.contains(j) { journals.append(j) }
        skipped += other.skipped
        missingMedia += other.missingMedia
        notes += other.notes
    }
}
