import Foundation
@_spi(Format) import Quire
import QuireMarkdown

/// What every exporter works from: the selected entries, the options, the
/// report being filled and the progress callback.
struct ExportContext {
    let vault: Vault
    let entries: EntryCatalog
    let options: ExportOptions
    let progress: (ExportProgress) -> Void
    /// The language of the book's words and dates (HTML, EPUB).
    let locale: BookLocale
    var report = ExportReport()

    init(vault: Vault, entries: EntryCatalog, options: ExportOptions, progress: @escaping (ExportProgress) -> Void) {
        self.vault = vault
        self.entries = entries
        self.options = options
        self.progress = progress
        locale = BookLocale.forVault(vault, option: options.locale)
    }

    /// True when the bytes of `blob` can be written: the vault holds them and
    /// they are not among ``ExportOptions/unreadableAttachments``. One the
    /// vault does not hold is counted in ``ExportReport/missingAttachments``.
    mutating func canWrite(_ blob: BlobID) -> Bool {
        if options.unreadableAttachments.contains(blob) { return false }
        guard MediaFiles.exists(vault, blob) else {
            report.missingAttachments += 1
            return false
        }
        return true
    }

    /// Counts one entry written and reports progress.
    mutating func entryDone() {
        report.entries += 1
        progress(ExportProgress(done: report.entries, total: entries.count))
    }

    /// Throws when the export was cancelled (its `Task`, or a progress
    /// handler that answered ``ProgressReply/cancel``): checked after each
    /// entry and before the output is renamed into place, so a cancelled
    /// export leaves nothing at its path.
    ///
    /// - Throws: ``ExportError/vault(_:)`` with ``QuireError/cancelled``.
    static func checkCancelled() throws(ExportError) {
        if VaultCancellation.isRequested { throw .vault(.cancelled) }
    }

    /// The book title: the option, else the profile name, else "Journal".
    func title() -> String {
        if let t = options.title, !t.isEmpty { return t }
        if let p = try? vault.profile(), !p.name.isEmpty { return p.name }
        return "Journal"
    }

    /// The language: the option, else guessed from the first 200 entries'
    /// letters (Han → `zh`, kana → `ja`, Hangul → `ko`, Cyrillic → `ru`,
    /// Greek → `el`, Arabic → `ar`, Hebrew → `he`, Latin → `en`, none → `und`).
    func language() -> String {
        if let l = options.language, !l.isEmpty { return l }
        var counts: [String: Int] = [:]
        for e in entries.prefix(200) {
            for u in e.body.text.unicodeScalars.prefix(2000) {
                let v = u.value
                let script: String?
                switch v {
                case 0x3040...0x30FF: script = "ja"
                case 0x4E00...0x9FFF, 0x3400...0x4DBF: script = "zh"
                case 0xAC00...0xD7AF: script = "ko"
                case 0x0400...0x04FF: script = "ru"
                case 0x0370...0x03FF: script = "el"
                case 0x0600...0x06FF: script = "ar"
                case 0x0590...0x05FF: script = "he"
                case 0x41...0x5A, 0x61...0x7A: script = "en"
                default: script = nil
                }
                if let script { counts[script, default: 0] += 1 }
            }
        }
        if let ja = counts["ja"], ja > 0, (counts["zh"] ?? 0) > 0 { counts["ja"] = ja + counts["zh"]! }
        return counts.max { a, b in a.value != b.value ? a.value < b.value : a.key > b.key }?.key ?? "und"
    }
}

/// File names and extensions for attachment content.
enum MediaFiles {
    /// `<first 32 hex digits of the blob id>.<ext>`: one file per distinct
    /// content and extension (`Spec/export-json.md §3.4`).
    static func fileName(for reference: AttachmentReference) -> String {
        String(hex(reference.blob.bytes).prefix(32)) + "." + fileExtension(for: reference)
    }

    /// The extension for the media type, else the original name's (ASCII
    /// letters and digits, up to 8), else `bin`; always lowercase.
    static func fileExtension(for reference: AttachmentReference) -> String {
        if let known = byType[reference.mediaType.lowercased()] { return known }
        if let dot = reference.fileName.lastIndex(of: ".") {
            let ext = reference.fileName[reference.fileName.index(after: dot)...].lowercased()
            if (1...8).contains(ext.count), ext.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) { return ext }
        }
        return "bin"
    }

    static let byType: [String: String] = [
        "image/jpeg": "jpg", "image/png": "png", "image/gif": "gif", "image/webp": "webp", "image/heic": "heic",
        "image/heif": "heif", "image/tiff": "tiff", "image/svg+xml": "svg", "video/mp4": "mp4", "video/quicktime": "mov",
        "audio/mpeg": "mp3", "audio/mp4": "m4a", "audio/aac": "aac", "audio/wav": "wav", "audio/x-wav": "wav",
        "application/pdf": "pdf", "text/plain": "txt",
    ]

    /// Streams the content of `blob` to `sink` in chunks of at most 64 KiB.
    /// Returns false (writing nothing) when the vault does not hold it.
    ///
    /// - Throws: ``ExportError/vault(_:)`` for damage, or what `sink` throws.
    static func stream(
        _ vault: Vault, blob: BlobID, to sink: (UnsafeRawBufferPointer) throws(ExportError) -> Void
    ) throws(ExportError) -> Bool {
        let reader: BlobReader
        do { reader = try vault.openAttachment(blob) } catch {
            if case .attachmentNotFound = error.detail { return false }
            throw .vault(error)
        }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 16)
        defer {
            buffer.initializeMemory(as: UInt8.self, repeating: 0)
            buffer.deallocate()
        }
        while true {
            let n: Int
            do { n = try reader.read(into: buffer) } catch { throw .vault(error) }
            if n == 0 { break }
            try sink(UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
        }
        return true
    }

    /// True when the vault holds `blob`.
    static func exists(_ vault: Vault, _ blob: BlobID) -> Bool { (try? vault.attachment(blob)) != nil }
}

/// Replaces every `quire-attachment://<hex id>` link of `references` in
/// `text` by `target(reference)` (when it returns a value).
func rewriteAttachmentLinks(_ text: String, references: [AttachmentReference], target: (AttachmentReference) -> String?) -> String {
    guard !references.isEmpty, containsAttachmentLink(text) else { return text }
    var out = text
    for r in references where !r.id.isEmpty {
        guard let t = target(r) else { continue }
        out = out.replacingOccurrences(of: "quire-attachment://" + hex(r.id), with: t)
    }
    return out
}

/// Replaces every `quire-entry://<hex id>` link in `text` by
/// `target(id)` (when it returns a value).
func rewriteEntryLinks(_ text: String, target: (EntryID) -> String?) -> String {
    let links = EntryLinks.entryLinks(in: text)
    guard !links.isEmpty else { return text }
    let b = Array(text.utf8)
    var out: [UInt8] = []
    var at = 0
    for link in links {
        guard let t = target(EntryID(unchecked: link.id)) else { continue }
        out += b[at..<link.range.lowerBound]
        out += Array(t.utf8)
        at = link.range.upperBound
    }
    out += b[at...]
    return String(decoding: out, as: UTF8.self)
}

/// True when `text` holds `quire-attachment://` (a byte search).
func containsAttachmentLink(_ text: String) -> Bool {
    let needle = Array("quire-attachment://".utf8)
    var text = text
    return text.withUTF8 { hay -> Bool in
        guard hay.count >= needle.count else { return false }
        var i = 0
        let last = hay.count - needle.count
        while i <= last {
            if hay[i] == needle[0] {
                var k = 1
                while k < needle.count, hay[i + k] == needle[k] { k += 1 }
                if k == needle.count { return true }
            }
            i += 1
        }
        return false
    }
}
