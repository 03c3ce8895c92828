import Foundation
@_spi(Format) import Quire
import QuireSystem
import QuireZip

/// The EPUB 3 export (`Spec/export-json.md §6`): a title page, a table of
/// contents (`nav.xhtml`) by year and month, one XHTML chapter per month
/// with the photos in place (JPEG, PNG and GIF; other attachments are named).
///
/// The ZIP is written through libzip with `mimetype` first and stored, every
/// other member deflated, and one fixed timestamp (1980-01-01 00:00), so the
/// same vault and filter give byte-identical books. Chapters are rendered
/// and images decrypted while the archive is written, one entry or one
/// 64 KiB chunk at a time, so memory does not grow with the journal beyond
/// one index per selected entry.
enum EPUBExporter {
    static let imageTypes: Set<String> = ["image/jpeg", "image/png", "image/gif"]

    static let style = """
        body { font-family: serif; line-height: 1.45; }
        h1 { text-align: center; margin: 1em 0; }
        h2 { font-size: 1.15em; margin: 1.5em 0 0.3em 0; }
        .meta { color: #555; font-size: 0.85em; margin-top: 0; }
        .photo { text-align: center; margin: 1em 0; }
        .photo img { max-width: 100%; height: auto; }
        blockquote { margin: 0.5em 1.5em; font-style: italic; }
        .title { text-align: center; margin-top: 30%; }
        .subtitle { text-align: center; color: #555; }
        pre { white-space: pre-wrap; font-size: 0.9em; }
        table { border-collapse: collapse; margin: 1em 0; }
        th, td { border: 1px solid #999; padding: 0.2em 0.5em; }
        .left { text-align: left; } .center { text-align: center; } .right { text-align: right; }
        ul.tasks { list-style: none; padding-left: 1em; }
        """

    /// A month's chapter: its key, its file name and its entries (indices into the selection).
    struct Chapter {
        let year: Int
        let month: Int
        var entries: [Int]
        var id: String { Self.id(year: year, month: month) }
        /// The chapter file's name without extension for a month: `cYYYY-MM`.
        static func id(year: Int, month: Int) -> String { "c\(year < 0 ? "m" : "")\(pad(abs(year), 4))-\(pad(month, 2))" }
        var href: String { "text/\(id).xhtml" }
        /// The chapter's title: the month and year in the book's locale.
        let title: String
    }

    static func export(_ context: inout ExportContext, to path: String) throws(ExportError) {
        // Group the entries by local month; chapters in calendar order.
        var byKey: [Int: Int] = [:]
        var chapters: [Chapter] = []
        var images: [(name: String, blob: BlobID, type: String)] = []
        var imageNames = Set<String>()
        // Where each entry is, for links between entries: its chapter's file.
        var chapterFiles: [EntryID: String] = [:]
        for (i, snapshot) in context.entries.enumerated() {
            let t = LocalTime(of: snapshot.body)
            let key = t.year * 12 + t.month - 1
            chapterFiles[snapshot.id] = Chapter.id(year: t.year, month: t.month) + ".xhtml"
            if let c = byKey[key] {
                chapters[c].entries.append(i)
            } else {
                byKey[key] = chapters.count
                chapters.append(
                    Chapter(year: t.year, month: t.month, entries: [i], title: context.locale.monthAndYear(year: t.year, month: t.month)))
            }
            for r in snapshot.body.attachments where imageTypes.contains(r.mediaType.lowercased()) {
                let name = MediaFiles.fileName(for: r)
                if imageNames.contains(name) { continue }
                guard !context.options.unreadableAttachments.contains(r.blob), MediaFiles.exists(context.vault, r.blob) else { continue }
                imageNames.insert(name)
                images.append((name, r.blob, r.mediaType.lowercased()))
            }
        }
        chapters.sort { ($0.year, $0.month) < ($1.year, $1.month) }

        let language = Markup.escape(context.language())
        let title = Markup.escape(context.title())
        try writeArchive(to: path, context: &context) { (zip, shared) throws(ZipError) in
            try zip.add("mimetype", compressed: false, bytes: Array("application/epub+zip".utf8))
            try zip.add("META-INF/container.xml", compressed: true, bytes: Array(containerXML.utf8))
            try zip.add(
                "OEBPS/content.opf", compressed: true,
                bytes: Array(packageDocument(shared.context, title: title, language: language, chapters: chapters, images: images).utf8))
            try zip.add(
                "OEBPS/nav.xhtml", compressed: true,
                bytes: Array(navigation(title: title, language: language, chapters: chapters, locale: shared.context.locale).utf8))
            try zip.add(
                "OEBPS/title.xhtml", compressed: true, bytes: Array(titlePage(shared.context, title: title, language: language).utf8))
            try zip.add("OEBPS/style.css", compressed: true, bytes: Array(style.utf8))
            for chapter in chapters {
                try zip.add(
                    "OEBPS/" + chapter.href, compressed: true,
                    source: ChapterSource(
                        chapter: chapter, language: language, shared: shared, imageNames: imageNames, entryFiles: chapterFiles))
            }
            for image in images {
                let source = AttachmentSource(vault: shared.context.vault, blob: image.blob)
                try zip.add("OEBPS/images/" + image.name, compressed: true, source: source, byteCount: source.byteCount)
            }
            shared.context.report.attachments = images.count
        }
    }

    static let containerXML = """
        <?xml version="1.0" encoding="UTF-8"?>
        <container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container">
          <rootfiles>
            <rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/>
          </rootfiles>
        </container>

        """

    static func xhtmlHead(title: String, language: String, stylesheet: String) -> String {
        """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE html>
        <html xmlns="http://www.w3.org/1999/xhtml" xmlns:epub="http://www.idpf.org/2007/ops" xml:lang="\(language)" lang="\(language)">
        <head>
        <meta charset="utf-8"/>
        <title>\(title)</title>
        <link rel="stylesheet" type="text/css" href="\(stylesheet)"/>
        </head>

        """
    }

    static func packageDocument(
        _ context: ExportContext, title: String, language: String, chapters: [Chapter], images: [(name: String, blob: BlobID, type: String)]
    ) -> String {
        let id = context.vault.vaultID.bytes.map { String($0, radix: 16) }.map { $0.count == 1 ? "0" + $0 : $0 }
        let uuid =
            id[0..<4].joined() + "-" + id[4..<6].joined() + "-" + id[6..<8].joined() + "-" + id[8..<10].joined() + "-"
            + id[10..<16].joined()
        // The book changes only when its entries do: the latest modification.
        let latest = context.entries.map { $0.body.modifiedMilliseconds ?? $0.body.createdMilliseconds }.max()
        let modified = latest.map { LocalTime.utcString(max(0, $0)) } ?? "1980-01-01T00:00:00Z"
        var s = """
            <?xml version="1.0" encoding="UTF-8"?>
            <package xmlns="http://www.idpf.org/2007/opf" version="3.0" unique-identifier="uid" xml:lang="\(language)">
            <metadata xmlns:dc="http://purl.org/dc/elements/1.1/">
            <dc:identifier id="uid">urn:uuid:\(uuid)</dc:identifier>
            <dc:title>\(title)</dc:title>
            <dc:language>\(language)</dc:language>
            <meta property="dcterms:modified">\(modified)</meta>
            </metadata>
            <manifest>
            <item id="nav" href="nav.xhtml" media-type="application/xhtml+xml" properties="nav"/>
            <item id="title" href="title.xhtml" media-type="application/xhtml+xml"/>
            <item id="css" href="style.css" media-type="text/css"/>

            """
        for c in chapters { s += "<item id=\"\(c.id)\" href=\"\(c.href)\" media-type=\"application/xhtml+xml\"/>\n" }
        for i in images { s += "<item id=\"i\(i.name.split(separator: ".")[0])\" href=\"images/\(i.name)\" media-type=\"\(i.type)\"/>\n" }
        s += "</manifest>\n<spine>\n<itemref idref=\"title\"/>\n<itemref idref=\"nav\"/>\n"
        for c in chapters { s += "<itemref idref=\"\(c.id)\"/>\n" }
        s += "</spine>\n</package>\n"
        return s
    }

    static func navigation(title: String, language: String, chapters: [Chapter], locale: BookLocale) -> String {
        let contents = Markup.escape(locale.contents)
        var s = xhtmlHead(title: contents, language: language, stylesheet: "style.css")
        s += "<body>\n<nav epub:type=\"toc\" id=\"toc\">\n<h1>\(contents)</h1>\n<ol>\n"
        if chapters.isEmpty { s += "<li><a href=\"title.xhtml\">\(title)</a></li>\n" }
        var k = 0
        while k < chapters.count {
            let year = chapters[k].year
            s += "<li><a href=\"\(chapters[k].href)\">\(year)</a>\n<ol>\n"
            while k < chapters.count, chapters[k].year == year {
                s += "<li><a href=\"\(chapters[k].href)\">\(Markup.escape(locale.monthName(chapters[k].month)))</a></li>\n"
                k += 1
            }
            s += "</ol>\n</li>\n"
        }
        s += "</ol>\n</nav>\n</body>\n</html>\n"
        return s
    }

    static func titlePage(_ context: ExportContext, title: String, language: String) -> String {
        var s = xhtmlHead(title: title, language: language, stylesheet: "style.css")
        s += "<body>\n<section epub:type=\"titlepage\">\n<h1 class=\"title\">\(title)</h1>\n"
        if let first = context.entries.first, let last = context.entries.last {
            let a = LocalTime(of: first.body)
            let b = LocalTime(of: last.body)
            s += "<p class=\"subtitle\">\(Markup.escape(context.locale.date(a))) – \(Markup.escape(context.locale.date(b)))</p>\n"
        }
        s += "<p class=\"subtitle\">\(Markup.escape(context.locale.entryCount(context.entries.count)))</p>\n</section>\n</body>\n</html>\n"
        return s
    }

    /// Writes a ZIP archive at `path` (EPUB, the Day One variant) through a
    /// temporary name beside it: `fill` adds the members, whose sources are
    /// read while libzip writes; the archive is renamed into place when
    /// complete. On any failure the temporary is removed and nothing is left
    /// at `path`.
    ///
    /// - Throws: ``ExportError/cannotWrite(path:reason:)``, ``ExportError/zip(_:)``,
    ///   or the error a member's source met (such as ``ExportError/vault(_:)``).
    static func writeArchive(
        to path: String, context: inout ExportContext, _ fill: (ZipWriter, SharedContext) throws(ZipError) -> Void
    ) throws(ExportError) {
        guard FileSystem.nameExists(FileSystem.directory(of: path)) else {
            let missing = SystemError(operation: "stat", path: FileSystem.directory(of: path), code: ENOENT)
            throw .cannotWrite(path: path, reason: "its folder does not exist: \(missing.reason)")
        }
        let temporary = temporaryName(beside: path)
        let shared = SharedContext(context)
        do throws(ExportError) {
            let zip: ZipWriter
            do { zip = try ZipWriter(path: temporary) } catch { throw .zip(error) }
            do throws(ZipError) {
                try fill(zip, shared)
                try zip.close()
            } catch {
                zip.discard()
                // A member's source failed: the vault could not be read.
                if let e = zip.sourceError { throw .vault(.format(e)) }
                throw .zip(error)
            }
            try commitArchive(temporary, to: path, context: &shared.context)
        } catch {
            try? FileSystem.remove(temporary)
            throw error
        }
        context = shared.context
    }

    /// Renames the finished archive into place and records its size.
    static func commitArchive(_ temporary: String, to path: String, context: inout ExportContext) throws(ExportError) {
        try ExportContext.checkCancelled()
        do {
            context.report.bytes = try FileSystem.size(temporary)
            try FileSystem.rename(temporary, to: path)
        } catch {
            throw .cannotWrite(path: path, reason: "\(error)")
        }
    }
}

/// The export context, shared with the sources libzip reads during `close`.
final class SharedContext {
    var context: ExportContext
    init(_ context: ExportContext) { self.context = context }
}

/// One month's chapter, rendered an entry at a time as libzip reads it.
final class ChapterSource: ByteSource {
    let chapter: EPUBExporter.Chapter
    let language: String
    let shared: SharedContext
    let imageNames: Set<String>
    private var pending: [UInt8]
    private var offset = 0
    private var next = 0
    private var finished = false
    private var renderer = EntryRenderer(entryHeadingLevel: 2, imageTypes: EPUBExporter.imageTypes)

    init(chapter: EPUBExporter.Chapter, language: String, shared: SharedContext, imageNames: Set<String>, entryFiles: [EntryID: String]) {
        self.chapter = chapter
        self.language = language
        self.shared = shared
        self.imageNames = imageNames
        // Links to entries of the book: their chapter file (beside this one) and article.
        renderer.entryLink = { id in entryFiles[id].map { $0 + "#e" + hex(id.bytes) } }
        renderer.linkedEntryLabel = shared.context.locale.linkedEntry
        pending = Array(EPUBExporter.xhtmlHead(title: Markup.escape(chapter.title), language: language, stylesheet: "../style.css").utf8)
        pending += Array("<body>\n<section epub:type=\"chapter\">\n<h1>\(Markup.escape(chapter.title))</h1>\n".utf8)
    }

    func read(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        while offset == pending.count {
            pending.removeAll(keepingCapacity: true)
            offset = 0
            // A cancelled export stops adding entries; the archive is then
            // discarded before it is renamed into place (commitArchive).
            if next < chapter.entries.count, !VaultCancellation.isRequested {
                pending = Array(render(shared.context.entries[chapter.entries[next]]).utf8)
                next += 1
                shared.context.entryDone()
            } else if !finished {
                pending = Array("</section>\n</body>\n</html>\n".utf8)
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

    func render(_ snapshot: EntrySnapshot) -> String {
        let body = snapshot.body
        var s =
            "<article id=\"e\(hex(snapshot.id.bytes))\">\n<h2>\(Markup.escape(EntryRenderer.headingText(body, locale: shared.context.locale)))</h2>\n"
        let meta = EntryRenderer.metaLine(body, locale: shared.context.locale)
        if !meta.isEmpty { s += "<p class=\"meta\">\(meta)</p>\n" }
        for piece in renderer.render(body) {
            switch piece {
            case .markup(let m): s += m
            case .image(let ref, let alt):
                let name = MediaFiles.fileName(for: ref)
                if imageNames.contains(name) {
                    s += "<img src=\"../images/\(name)\" alt=\"\(Markup.escape(alt))\"/>"
                } else {
                    if !shared.context.options.unreadableAttachments.contains(ref.blob) { shared.context.report.missingAttachments += 1 }
                    s += "<span class=\"attachment\">[" + Markup.escape(alt) + "]</span>"
                }
            }
        }
        return s + "</article>\n"
    }
}

/// An attachment's content, decrypted chunk by chunk as libzip reads it
/// (the blob is opened at the first read, so only one is open at a time).
final class AttachmentSource: ByteSource {
    let vault: Vault
    let blob: BlobID
    private var reader: BlobReader?

    init(vault: Vault, blob: BlobID) {
        self.vault = vault
        self.blob = blob
    }

    /// The content's size, when the vault holds it.
    var byteCount: UInt64? { (try? vault.attachment(blob))?.byteCount }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws(QuireError) -> Int {
        if reader == nil {
            do { reader = try vault.openAttachment(blob) } catch {
                if case .format = error.detail { throw error }
                throw .format(.blobNotFound(blob: blob.description))
            }
        }
        return try reader!.read(into: buffer)
    }
}
