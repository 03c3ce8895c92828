import Foundation
@_spi(Format) @_spi(Crypto) import Quire
import QuireDayOne
import QuireMarkdown

/// Imports a folder in the Markdown export's shape (`Spec/export-json.md §3`,
/// `Spec/import.md §10`): `YYYY/MM/*.md` files whose front matter holds
/// every body field, and `media/` files linked by relative paths. Import ∘
/// export is the identity on content: the same entry id, the same body.
enum MarkdownImporter {
    /// Largest `.md` file read, in bytes (16 MiB, a record's limit).
    static let maxFileByteCount: UInt64 = 16 << 20

    /// Throws ``ImportError/unreadableSource(path:reason:)`` when `source`
    /// holds no `.md` file that is a Quire Markdown entry (nothing written).
    static func run(source: String, files: any ExportFiles, vault: Vault, progress: @escaping (ImportProgress) -> Void) throws(ImportError)
        -> ImportReport
    {
        var report = ImportReport()
        var markdownFiles = 0
        report.skipped += files.refused
        let present = Set(files.files)
        var prepared: [PreparedEntry] = []
        for path in files.files where path.lowercased().hasSuffix(".md") && !path.split(separator: "/").last!.hasPrefix("._") {
            markdownFiles += 1
            let text: String
            do {
                let bytes = try ClassicImporter.readAll(files, path)
                guard UInt64(bytes.count) <= maxFileByteCount, let s = String(validating: bytes, as: UTF8.self) else {
                    report.skipped.append(SkippedItem(item: path, reason: "not UTF-8 text of at most \(maxFileByteCount) bytes"))
                    continue
                }
                text = s
            } catch {
                report.skipped.append(SkippedItem(item: path, reason: "cannot be read: \(error)"))
                continue
            }
            do {
                var entry = try parse(text, path: path)
                // Media: resolve each path against the entry's folder; keep it inside the export.
                entry.prepared.body.attachments = entry.references.map(\.0)
                for (index, (_, relative)) in entry.references.enumerated() {
                    guard let relative else { continue }
                    if let resolved = resolve(relative, from: path), present.contains(resolved) {
                        entry.prepared.files.append((index, resolved, false))
                    } else {
                        report.skipped.append(
                            SkippedItem(
                                item: "\(path): \(relative)", reason: "the attachment file is not in the folder; the reference is kept"))
                    }
                }
                if !entry.prepared.body.journal.isEmpty, !report.journals.contains(entry.prepared.body.journal) {
                    report.journals.append(entry.prepared.body.journal)
                }
                prepared.append(entry.prepared)
            } catch {
                report.skipped.append(SkippedItem(item: path, reason: "\(error)"))
            }
        }
        let expected =
            "not a Quire Markdown export (expected a folder of .md files with YAML front matter, as quire export markdown writes)"
        if markdownFiles == 0 { throw .unreadableSource(path: source, reason: "\(expected): no .md file in it") }
        if prepared.isEmpty {
            let first = report.skipped.first { $0.item.lowercased().hasSuffix(".md") }.map { "; \($0.item): \($0.reason)" } ?? ""
            throw .unreadableSource(
                path: source, reason: "\(expected): none of its \(markdownFiles) .md files is a Quire Markdown entry\(first)")
        }
        // Links between entries: the export wrote each `quire-entry://` link
        // as the relative path of that entry's file; read them back.
        var idOfPath: [String: EntryID] = [:]
        for p in prepared { idOfPath[p.label] = p.id }
        for k in prepared.indices { prepared[k].body.text = entryLinks(prepared[k].body.text, from: prepared[k].label, ids: idOfPath) }
        let writer = EntryWriter(vault: vault, files: files, report: report, progress: progress)
        try writer.write(prepared, total: prepared.count)
        return writer.report
    }

    /// `text` with each relative path (`../../YYYY/MM/<name>.md`) to a file
    /// of the folder holding an entry replaced by that entry's
    /// `quire-entry://` link (`Spec/export-json.md §3.2`).
    static func entryLinks(_ text: String, from file: String, ids: [String: EntryID]) -> String {
        let b = Array(text.utf8)
        let start = Array("../../".utf8)
        guard b.count > start.count else { return text }
        func isPathByte(_ c: UInt8) -> Bool { MomentLink.isIdentifierByte(c) || c == UInt8(ascii: ".") || c == UInt8(ascii: "/") }
        var out: [UInt8] = []
        var at = 0
        var i = 0
        while i + start.count <= b.count {
            guard b[i] == start[0], b[i..<i + start.count].elementsEqual(start), i == 0 || !isPathByte(b[i - 1]) else {
                i += 1
                continue
            }
            var j = i
            while j < b.count, isPathByte(b[j]) { j += 1 }
            let relative = String(decoding: b[i..<j], as: UTF8.self)
            if relative.hasSuffix(".md"), let target = resolve(relative, from: file), let id = ids[target] {
                out += b[at..<i]
                out += Array(EntryLinks.entryLink(id.bytes).utf8)
                at = j
            }
            i = j
        }
        guard at > 0 else { return text }
        out += b[at...]
        return String(decoding: out, as: UTF8.self)
    }

    struct Parsed {
        var prepared: PreparedEntry
        var references: [(AttachmentReference, String?)]
    }

    struct Problem: Error, CustomStringConvertible {
        let description: String
    }

    /// `relative` resolved from the folder of `file`, or nil when it leaves the export.
    static func resolve(_ relative: String, from file: String) -> String? {
        guard ZipPathCheck.isRelative(relative) else { return nil }
        var parts = file.split(separator: "/").dropLast().map(String.init)
        for c in relative.split(separator: "/") {
            if c == ".." {
                guard !parts.isEmpty else { return nil }
                parts.removeLast()
            } else if c != "." {
                parts.append(String(c))
            }
        }
        return parts.joined(separator: "/")
    }

    /// Reads one file: front matter then text.
    static func parse(_ source: String, path: String) throws -> Parsed {
        guard source.hasPrefix("---\n") else { throw Problem(description: "no front matter (a Quire Markdown file starts with ---)") }
        let afterOpen = source.index(source.startIndex, offsetBy: 4)
        guard
            let close = source.range(of: "\n---\n", range: afterOpen..<source.endIndex)
                ?? (source[afterOpen...].hasPrefix("---\n") ? afterOpen..<source.index(afterOpen, offsetBy: 4) : nil)
        else { throw Problem(description: "the front matter does not end with ---") }
        let yaml = close.lowerBound == afterOpen ? "" : source[afterOpen..<close.lowerBound]
        let bodyText = String(source[close.upperBound...])
        var fields: [String: CBOR] = [:]
        var attachments: [CBOR] = []
        var inAttachments = false
        for line in yaml.split(separator: "\n", omittingEmptySubsequences: true) {
            if inAttachments, line.hasPrefix("  - ") {
                attachments.append(try FrontMatterParser.value(line.dropFirst(4)))
                continue
            }
            inAttachments = false
            guard let colon = line.firstIndex(of: ":") else {
                throw Problem(description: "front matter line without a key: \(line.prefix(40))")
            }
            let key = String(line[..<colon])
            let rest = line[line.index(after: colon)...].drop { $0 == " " }
            if key == "attachments", rest.isEmpty {
                inAttachments = true
                continue
            }
            fields[key] = try FrontMatterParser.value(rest)
        }
        guard fields["quire"] != nil else { throw Problem(description: "the front matter has no quire key: not a Quire Markdown export") }
        if case .array(let a) = fields["attachments"] { attachments += a }
        func text(_ k: String) -> String? { if case .text(let s) = fields[k] { s } else { nil } }
        func bool(_ k: String) -> Bool { if case .bool(let b) = fields[k] { b } else { false } }
        func map(_ v: CBOR?) -> CBORMap { if case .map(let m) = v { m } else { CBORMap() } }
        guard let created = fields["created"]?.int64Value else { throw Problem(description: "the front matter has no created time") }
        var body = EntryBody(created: created)
        body.modifiedMilliseconds = fields["modified"]?.int64Value
        body.timeZoneIdentifier = text("timeZone") ?? ""
        body.utcOffsetSeconds = fields["utcOffset"]?.int64Value
        if let offset = body.utcOffsetSeconds, !EntryBody.utcOffsetRange.contains(offset) {
            throw Problem(description: "utcOffset \(offset) is not an offset from UTC (at most 18 hours, 64800 seconds, either way)")
        }
        body.isAllDay = bool("allDay")
        if case .array(let tags) = fields["tags"] { body.tags = tags.compactMap { if case .text(let s) = $0 { s } else { nil } } }
        body.moodRawValue = fields["mood"]?.int64Value
        body.isStarred = bool("starred")
        body.isPinned = bool("pinned")
        body.journal = text("journal") ?? ""
        if case .map(let l) = fields["location"] {
            body.location = Location(
                latitude: double(l[text: "latitude"]), longitude: double(l[text: "longitude"]), altitude: double(l[text: "altitude"]),
                placeName: string(l[text: "placeName"]), locality: string(l[text: "locality"]), region: string(l[text: "region"]),
                country: string(l[text: "country"]), extra: map(l[text: "extra"]), unknownFields: map(l[text: "unknownFields"]))
        }
        if case .map(let w) = fields["weather"] {
            body.weather = Weather(
                temperatureCelsius: double(w[text: "temperatureC"]), conditions: string(w[text: "conditions"]),
                extra: map(w[text: "extra"]), unknownFields: map(w[text: "unknownFields"]))
        }
        body.extra = map(fields["extra"])
        body.unknownFields = map(fields["unknownFields"])
        var refs: [(AttachmentReference, String?)] = []
        var textOut = bodyText
        for case .map(let a) in attachments {
            let id = bytes(fromHex: string(a[text: "id"])) ?? []
            guard let blobBytes = bytes(fromHex: string(a[text: "blob"])), blobBytes.count == BlobID.byteCount else {
                throw Problem(description: "an attachment has no blob id")
            }
            let ref = AttachmentReference(
                id: id, blob: BlobID(unchecked: blobBytes),
                mediaType: string(a[text: "type"]).isEmpty ? "application/octet-stream" : string(a[text: "type"]),
                fileName: string(a[text: "name"]), extra: map(a[text: "extra"]), unknownFields: map(a[text: "unknownFields"]))
            let p = a[text: "path"].flatMap { if case .text(let s) = $0 { s } else { nil } }
            // The export wrote the media path in place of each link; put the link back.
            if let p, !id.isEmpty { textOut = textOut.replacingOccurrences(of: p, with: DayOneMapping.attachmentLinkPrefix + hex(id)) }
            refs.append((ref, p))
        }
        body.text = textOut
        let id: EntryID
        if let hex = text("id"), let e = EntryID(hex: hex) {
            id = e
        } else {
            id = EntryID(unchecked: BLAKE2b.hash(Array("quire.import.markdown\u{0}\(path)".utf8), byteCount: 16))
        }
        return Parsed(prepared: PreparedEntry(label: path, id: id, body: body), references: refs)
    }

    static func double(_ v: CBOR?) -> Double? {
        switch v {
        case .double(let d): d
        case .some(let x): x.int64Value.map(Double.init)
        case .none: nil
        }
    }

    static func string(_ v: CBOR?) -> String { if case .text(let s) = v { s } else { "" } }
}

/// Path checks shared with the ZIP reader's rules.
enum ZipPathCheck {
    /// A relative `/`-separated path without NUL, backslash or an absolute start.
    static func isRelative(_ p: String) -> Bool {
        !p.isEmpty && !p.hasPrefix("/") && !p.contains("\\") && !p.unicodeScalars.contains { $0.value < 0x20 }
    }
}
