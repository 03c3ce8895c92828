public import Quire
import QuireSystem
import QuireZip

/// How Quire entries become Day One JSON entry objects for the Day One
/// variant of the export (`Spec/export-json.md §7`).
///
/// ``builtIn`` is the minimal mapping in this module. The import side
/// (`QuireImport`'s `DayOneMapping`) holds the exact inverse of the Day One
/// import; plug it in with
/// `DayOneMapper(entryJSON: { DayOneMapping.dayOneEntry(id: $0, body: $1).serialized }, mediaFile: DayOneMapping.mediaFile(for:))`.
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

    /// The minimal mapping: `uuid` (the entry id, uppercase hex),
    /// `creationDate`/`modifiedDate` (UTC, `YYYY-MM-DDTHH:MM:SSZ`),
    /// `timeZone`, `starred`, `isPinned`, `isAllDay`, `tags`, `text` (links
    /// `quire-attachment://<id>` become `dayone-moment://<IDENTIFIER>`),
    /// `location`, `weather`, and `photos`/`videos`/`audios`/`pdfAttachments`
    /// objects (`identifier` = reference id in uppercase hex, `md5`, `type`,
    /// `orderInEntry`). `extra` is not written.
    public static let builtIn = DayOneMapper(entryJSON: builtInEntry, mediaFile: builtInMediaFile)

    static func kind(_ ref: AttachmentReference) -> (list: String, folder: String) {
        let t = ref.mediaType.lowercased()
        if t.hasPrefix("video/") { return ("videos", "videos") }
        if t.hasPrefix("audio/") { return ("audios", "audios") }
        if t == "application/pdf" { return ("pdfAttachments", "pdfs") }
        return ("photos", "photos")
    }

    /// `md5` from the reference's `extra["md5"]` when it is 32 hex digits,
    /// else the first 16 bytes of the blob id in hex (not an MD5).
    static func md5(_ ref: AttachmentReference) -> String {
        if case .text(let s)? = ref.extra[text: "md5"], s.count == 32, s.allSatisfy(\.isHexDigit) { return s.lowercased() }
        return hexString(Array(ref.blob.bytes.prefix(16)))
    }

    static func typeName(_ ref: AttachmentReference) -> String {
        let ext = MediaFiles.fileExtension(for: ref)
        return ext == "jpg" ? "jpeg" : ext
    }

    @Sendable static func builtInMediaFile(_ ref: AttachmentReference) -> (folder: String, fileName: String) {
        (kind(ref).folder, md5(ref) + "." + typeName(ref))
    }

    @Sendable static func builtInEntry(_ id: EntryID, _ b: EntryBody) -> String {
        var m: [(String, String)] = [("uuid", JSONWriter.string(hexString(id.bytes).uppercased()))]
        m.append(("creationDate", JSONWriter.string(LocalTime.utcString(b.created))))
        m.append(("modifiedDate", JSONWriter.string(LocalTime.utcString(b.modified ?? b.created))))
        if !b.timeZone.isEmpty { m.append(("timeZone", JSONWriter.string(b.timeZone))) }
        m.append(("starred", String(b.isStarred)))
        m.append(("isPinned", String(b.isPinned)))
        m.append(("isAllDay", String(b.isAllDay)))
        if !b.tags.isEmpty { m.append(("tags", "[" + b.tags.map(JSONWriter.string).joined(separator: ", ") + "]")) }
        let text = rewriteAttachmentLinks(b.text, references: b.attachments) { "dayone-moment://" + hexString($0.id).uppercased() }
        m.append(("text", JSONWriter.string(text)))
        if let l = b.location {
            var f: [(String, String)] = []
            if let v = l.latitude { f.append(("latitude", YAMLWriter.floatText(v))) }
            if let v = l.longitude { f.append(("longitude", YAMLWriter.floatText(v))) }
            if let v = l.altitude { f.append(("altitude", YAMLWriter.floatText(v))) }
            if !l.placeName.isEmpty { f.append(("placeName", JSONWriter.string(l.placeName))) }
            if !l.locality.isEmpty { f.append(("localityName", JSONWriter.string(l.locality))) }
            if !l.region.isEmpty { f.append(("administrativeArea", JSONWriter.string(l.region))) }
            if !l.country.isEmpty { f.append(("country", JSONWriter.string(l.country))) }
            m.append(("location", JSONWriter.object(f)))
        }
        if let w = b.weather {
            var f: [(String, String)] = []
            if let t = w.temperatureCelsius { f.append(("temperatureCelsius", YAMLWriter.floatText(t))) }
            if !w.conditions.isEmpty { f.append(("conditionsDescription", JSONWriter.string(w.conditions))) }
            m.append(("weather", JSONWriter.object(f)))
        }
        var lists: [String: [String]] = [:]
        var order: [String] = []
        for (n, r) in b.attachments.enumerated() {
            let list = kind(r).list
            if lists[list] == nil { order.append(list) }
            let object = JSONWriter.object([
                ("identifier", JSONWriter.string(hexString(r.id).uppercased())), ("md5", JSONWriter.string(md5(r))),
                ("type", JSONWriter.string(typeName(r))), ("orderInEntry", String(n)),
            ])
            lists[list, default: []].append(object)
        }
        for list in order { m.append((list, "[" + lists[list]!.joined(separator: ", ") + "]")) }
        return JSONWriter.object(m)
    }
}

/// The Day One variant: a ZIP shaped like a Day One JSON export,
/// `<Journal>.json` per journal (`{"metadata": {"version": "1.0"},
/// "entries": […]}`) and the media in `photos/`, `videos/`, `audios/` and
/// `pdfs/`. Streamed like the EPUB.
enum DayOneExporter {
    static func export(_ context: inout ExportContext, to path: String, mapper: DayOneMapper = .builtIn) throws(ExportError) {
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

        guard FileSystem.nameExists(FileSystem.directory(of: path)) else {
            throw .cannotWrite(path: path, reason: "its folder does not exist")
        }
        let temporary = temporaryName(beside: path)
        let shared = SharedContext(context)
        do throws(ExportError) {
            let zip: ZipWriter
            do { zip = try ZipWriter(path: temporary) } catch { throw .zip(error) }
            do throws(ZipError) {
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
                    try zip.add(m.path, compressed: true, source: AttachmentSource(vault: context.vault, blob: m.blob))
                }
                try zip.close()
            } catch {
                zip.discard()
                if let e = zip.sourceError as? ExportError { throw e }
                throw .zip(error)
            }
            shared.context.report.attachments = media.count
            try EPUBExporter.commitArchive(temporary, to: path, context: &shared.context)
        } catch {
            try? FileSystem.remove(temporary)
            throw error
        }
        context = shared.context
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
final class JournalSource: ZipMemberSource {
    let entries: [Int]
    let shared: SharedContext
    let mapper: DayOneMapper
    private var pending: [UInt8] = []
    private var offset = 0
    private var next = 0
    private var finished = false

    init(entries: [Int], shared: SharedContext, mapper: DayOneMapper) {
        self.entries = entries
        self.shared = shared
        self.mapper = mapper
    }

    func open() {
        pending = Array("{\"metadata\": {\"version\": \"1.0\"}, \"entries\": [".utf8)
        offset = 0
        next = 0
        finished = false
    }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
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
