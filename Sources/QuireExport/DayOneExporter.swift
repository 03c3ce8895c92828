public import Quire
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
    /// The JSON text of one Day One entry object for an entry (id, body).
    public var entryJSON: @Sendable (EntryID, EntryBody) -> String
    /// The folder (`photos`, `videos`, `audios`, `pdfs`) and file name an
    /// attachment's file gets in the archive.
    public var mediaFile: @Sendable (AttachmentReference) -> (folder: String, fileName: String)

    /// A mapping from the two functions.
    public init(
        entryJSON: @escaping @Sendable (EntryID, EntryBody) -> String,
        mediaFile: @escaping @Sendable (AttachmentReference) -> (folder: String, fileName: String)
    ) {
        self.entryJSON = entryJSON
        self.mediaFile = mediaFile
    }

    /// The import's exact inverse (`DayOneMapping.dayOneEntry(id:body:)` and
    /// `DayOneMapping.mediaFile(for:)`).
    public static let exact = DayOneMapper(
        entryJSON: { JSONValue.object(DayOneMapping.dayOneEntry(id: $0, body: $1)).serialized },
        mediaFile: { DayOneMapping.mediaFile(for: $0) })
}

/// The Day One variant: a ZIP shaped like a Day One JSON export,
/// `<Journal>.json` per journal (`{"metadata": {"version": "1.0"},
/// "entries": […]}`) and the media in `photos/`, `videos/`, `audios/` and
/// `pdfs/`. Streamed like the EPUB.
enum DayOneExporter {
    static func export(_ context: inout ExportContext, to path: String, mapper: DayOneMapper = .exact) throws(ExportError) {
        // Entries by journal, journals in order of first appearance.
        var journals: [(name: String, entries: [Int])] = []
        var byName: [String: Int] = [:]
        var media: [(path: String, blob: BlobID)] = []
        var mediaPaths = Set<String>()
        for (i, s) in context.entries.enumerated() {
            let name = s.body.journal.isEmpty ? context.title() : s.body.journal
            if let k = byName[name] { journals[k].entries.append(i) } else {
                byName[name] = journals.count
                journals.append((name, [i]))
            }
            for r in s.body.attachments {
                let (folder, file) = mapper.mediaFile(r)
                let p = folder + "/" + file
                if mediaPaths.contains(p) { continue }
                guard MediaFiles.exists(context.vault, r.blob) else {
                    context.report.missingAttachments += 1
                    continue
                }
                mediaPaths.insert(p)
                media.append((p, r.blob))
            }
        }
        if journals.isEmpty { journals.append((context.title(), [])) }

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
                try zip.add(file + ".json", compressed: true, source: JournalSource(entries: j.entries, shared: shared, mapper: mapper))
            }
            for m in media {
                let source = AttachmentSource(vault: shared.context.vault, blob: m.blob)
                try zip.add(m.path, compressed: true, source: source, byteCount: source.byteCount)
            }
            shared.context.report.attachments = media.count
        }
    }

    /// A journal name as a file name: `/`, `\`, `:`, controls and NUL become
    /// `_`; an empty name or one of dots becomes `Journal`; at most 100 characters.
    static func safeFileName(_ name: String) -> String {
        var out = String(String.UnicodeScalarView(name.unicodeScalars.map { u -> Unicode.Scalar in
            u.value < 0x20 || u.value == 0x7F || u == "/" || u == "\\" || u == ":" ? "_" : u
        }).prefix(100))
        if out.allSatisfy({ $0 == "." }) { out = "Journal" }
        return out
    }
}

/// One journal's `<Journal>.json`, an entry at a time as libzip reads it.
final class JournalSource: ByteSource {
    let entries: [Int]
    let shared: SharedContext
    let mapper: DayOneMapper
    private var pending: [UInt8] = Array("{\"metadata\": {\"version\": \"1.0\"}, \"entries\": [".utf8)
    private var offset = 0
    private var next = 0
    private var finished = false

    init(entries: [Int], shared: SharedContext, mapper: DayOneMapper) {
        self.entries = entries
        self.shared = shared
        self.mapper = mapper
    }

    func read(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        while offset == pending.count {
            pending.removeAll(keepingCapacity: true)
            offset = 0
            if next < entries.count {
                let s = shared.context.entries[entries[next]]
                pending = Array(((next == 0 ? "\n" : ",\n") + mapper.entryJSON(s.id, s.body)).utf8)
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
