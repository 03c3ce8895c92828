@_spi(Format) public import Quire
import QuireDayOne
import QuireSystem
import QuireZip

/// How Quire entries become Day One JSON entry objects for the Day One
/// variant of the export (`Spec/export-json.md §7`).
///
/// ``exact`` is the only mapping the export uses: `QuireImport`'s
/// `DayOneMapping` run backwards, so an entry imported from Day One comes
/// back with every field it had (`Spec/import.md`, reverse mapping). The
/// type stays a pair of functions so that an app can substitute its own.
public struct DayOneMapper: Sendable {
    /// The JSON text of one Day One entry object for an entry (id, body),
    /// in a journal file of the Apple dialect (true: Markdown escaped as
    /// Apple writes it) or Android's (false).
    public var entryJSON: @Sendable (EntryID, EntryBody, Bool) -> String
    /// The folder (`photos`, `videos`, `audios`, `pdfs`) and file name an
    /// attachment's file gets in the archive.
    public var mediaFile: @Sendable (AttachmentReference) -> (folder: String, fileName: String)

    /// A mapping from the two functions.
    public init(
        entryJSON: @escaping @Sendable (EntryID, EntryBody, Bool) -> String,
        mediaFile: @escaping @Sendable (AttachmentReference) -> (folder: String, fileName: String)
    ) {
        self.entryJSON = entryJSON
        self.mediaFile = mediaFile
    }

    /// The import's exact inverse (`DayOneMapping.dayOneEntry(id:body:escaped:)`
    /// and `DayOneMapping.mediaFile(for:)`).
    public static let exact = DayOneMapper(
        entryJSON: { JSONValue.object(DayOneMapping.dayOneEntry(id: $0, body: $1, escaped: $2)).serialized },
        mediaFile: { DayOneMapping.mediaFile(for: $0) })
}

/// The Day One variant: a ZIP shaped like a Day One JSON export,
/// `<Journal>.json` per journal (`{"metadata": {…}, "entries": […]}`) and
/// the media in `photos/`, `videos/`, `audios/` and `pdfs/`. Streamed like
/// the EPUB. A journal imported from Day One gets its file's `metadata`
/// back (from the profile, `Spec/import.md §11`) and so its dialect (Apple
/// or Android), and its entries in their original order.
enum DayOneExporter {
    static func export(_ context: inout ExportContext, to path: String, mapper: DayOneMapper = .exact) throws(ExportError) {
        // Entries by journal, journals in order of first appearance.
        var journals: [(name: String, entries: [(index: Int, id: EntryID, previous: EntryID?)])] = []
        var byName: [String: Int] = [:]
        var media: [(path: String, blob: BlobID)] = []
        var mediaPaths = Set<String>()
        for (i, s) in context.entries.enumerated() {
            let name = s.body.journal.isEmpty ? context.title() : s.body.journal
            let item = (i, s.id, DayOneMapping.previousUUID(s.body).map(DayOneMapping.entryID(forUUID:)))
            if let k = byName[name] {
                journals[k].entries.append(item)
            } else {
                byName[name] = journals.count
                journals.append((name, [item]))
            }
            for r in s.body.attachments {
                let (folder, file) = mapper.mediaFile(r)
                let p = folder + "/" + file
                if mediaPaths.contains(p) { continue }
                guard context.canWrite(r.blob) else { continue }
                mediaPaths.insert(p)
                media.append((p, r.blob))
            }
        }
        if journals.isEmpty { journals.append((context.title(), [])) }
        let imported = importedMetadata(context.vault)

        try EPUBExporter.writeArchive(to: path, context: &context) { (zip, shared) throws(ZipError) in
            var used = Set<String>()
            for j in journals {
                var file = safeFileName(j.name)
                var n = 2
                while used.contains(file.lowercased()) {
                    file = safeFileName(j.name) + " \(n)"
                    n += 1
                }
                used.insert(file.lowercased())
                // The file's metadata as imported, else Apple's; its dialect follows the version.
                let metadata = imported[j.name] ?? .object(JSONObject([("version", .string("1.0"))]))
                let escaped = metadata.objectValue?["version"]?.stringValue.map { $0 == "1.0" } ?? true
                try zip.add(
                    file + ".json", compressed: true,
                    source: JournalSource(
                        entries: fileOrder(j.entries), metadata: metadata.serialized, escaped: escaped, shared: shared, mapper: mapper))
            }
            for m in media {
                let source = AttachmentSource(vault: shared.context.vault, blob: m.blob)
                try zip.add(m.path, compressed: true, source: source, byteCount: source.byteCount)
            }
            shared.context.report.attachments = media.count
        }
    }

    /// The `metadata` of each journal file the vault's Day One imports read,
    /// by journal name (profile `settings["dayOne"]`).
    static func importedMetadata(_ vault: Vault) -> [String: JSONValue] {
        guard let profile = try? vault.profile(), case .map(let d) = profile.settings[text: DayOneMapping.profileKey],
            case .map(let journals) = d[text: "journals"]
        else { return [:] }
        var out: [String: JSONValue] = [:]
        for e in journals {
            guard case .text(let name) = e.key, case .map(let j) = e.value, case .text(let text) = j[text: "metadata"],
                let value = try? JSONValue.parse(Array(text.utf8)), value.objectValue != nil
            else { continue }
            out[name] = value
        }
        return out
    }

    /// The order entries take in their journal file: each entry imported
    /// from Day One after the entry it followed in its file, chains of such
    /// entries, and every other entry, in the export's order (by creation,
    /// `Spec/import.md §11`). Returns positions in the export's selection.
    static func fileOrder(_ items: [(index: Int, id: EntryID, previous: EntryID?)]) -> [Int] {
        var position: [EntryID: Int] = [:]
        for (k, item) in items.enumerated() where position[item.id] == nil { position[item.id] = k }
        var successors: [Int: [Int]] = [:]
        var heads: [Int] = []
        for (k, item) in items.enumerated() {
            if let p = item.previous, p != item.id, let at = position[p] { successors[at, default: []].append(k) } else { heads.append(k) }
        }
        var out: [Int] = []
        var done = Set<Int>()
        for start in heads + Array(items.indices) where !done.contains(start) {
            var stack = [start]
            while let k = stack.popLast() {
                guard done.insert(k).inserted else { continue }
                out.append(items[k].index)
                stack += (successors[k] ?? []).reversed()
            }
        }
        return out
    }

    /// A journal name as a file name: `/`, `\`, `:`, controls and NUL become
    /// `_`; an empty name or one of dots becomes `Journal`; at most 100 characters.
    static func safeFileName(_ name: String) -> String {
        var out = String(
            String.UnicodeScalarView(
                name.unicodeScalars.map { u -> Unicode.Scalar in
                    u.value < 0x20 || u.value == 0x7F || u == "/" || u == "\\" || u == ":" ? "_" : u
                }
            ).prefix(100))
        if out.allSatisfy({ $0 == "." }) { out = "Journal" }
        return out
    }
}

/// One journal's `<Journal>.json`, an entry at a time as libzip reads it.
final class JournalSource: ByteSource {
    let entries: [Int]
    let escaped: Bool
    let shared: SharedContext
    let mapper: DayOneMapper
    private var pending: [UInt8]
    private var offset = 0
    private var next = 0
    private var finished = false

    init(entries: [Int], metadata: String, escaped: Bool, shared: SharedContext, mapper: DayOneMapper) {
        self.entries = entries
        self.escaped = escaped
        self.shared = shared
        self.mapper = mapper
        pending = Array("{\"metadata\": \(metadata), \"entries\": [".utf8)
    }

    func read(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        while offset == pending.count {
            pending.removeAll(keepingCapacity: true)
            offset = 0
            // A cancelled export stops adding entries; the archive is then
            // discarded before it is renamed into place (commitArchive).
            if next < entries.count, !VaultCancellation.isRequested {
                let s = shared.context.entries[entries[next]]
                pending = Array(((next == 0 ? "\n" : ",\n") + mapper.entryJSON(s.id, s.body, escaped)).utf8)
                next += 1
                shared.context.entryDone()
            } else if !finished {
                pending = Array((entries.isEmpty ? "]}\n" : "\n]}\n").utf8)
                finished = true
            } else {
                return 0
            }
        }
        let n = min(buffer.count, pending.count - offset)
        pending.withUnsafeBytes { buffer.baseAddress!.copyMemory(from: $0.baseAddress! + offset, byteCount: n) }
        offset += n
        return n
    }
}
