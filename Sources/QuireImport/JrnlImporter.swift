import Foundation
import Quire
import QuireDayOne

/// Imports a jrnl JSON export (`jrnl --export json`): `{"tags": {…},
/// "entries": [{"title", "body", "date", "time", "tags", "starred"}]}`
/// (`Spec/import.md §9`).
enum JrnlImporter {
    /// The `extra` key holding the entry's jrnl fields (title, body, tags as
    /// written, date, time, and any other).
    static let extraKey = "jrnl"
    /// Largest export read, in bytes (256 MiB): jrnl keeps a journal in one file.
    static let maxByteCount: UInt64 = 256 << 20

    /// Throws ``ImportError/unreadableSource(path:reason:)`` when `source`
    /// is not a jrnl JSON export (nothing written).
    static func run(source: String, files: any ExportFiles, journal: String, timeZone: String, vault: Vault, progress: @escaping (ImportProgress) -> Void) throws(ImportError) -> ImportReport {
        var report = ImportReport()
        let expected = "not a jrnl JSON export (expected the JSON file jrnl --export json writes, {\"tags\": {…}, \"entries\": […]})"
        guard let path = files.isSingleFile ? files.files.first : files.files.first(where: { $0.lowercased().hasSuffix(".json") }) else {
            throw .unreadableSource(path: source, reason: "\(expected): no .json file in it")
        }
        let root: JSONValue
        do {
            let bytes = try ClassicImporter.readAll(files, path)
            if bytes.allSatisfy({ [0x20, 0x0A, 0x0D, 0x09].contains($0) }) { throw ImportError.unreadableSource(path: source, reason: "\(expected): the file is empty") }
            root = try JSONValue.parse(bytes)
        } catch let e as ImportError {
            throw e
        } catch {
            throw .unreadableSource(path: source, reason: "\(expected): \(error)")
        }
        guard let entries = root.objectValue?["entries"]?.arrayValue else {
            throw .unreadableSource(path: source, reason: "\(expected): no \"entries\" array")
        }
        var prepared: [PreparedEntry] = []
        var occurrences: [String: Int] = [:]
        for (n, value) in entries.enumerated() {
            guard let o = value.objectValue, let date = o["date"]?.stringValue else {
                report.skipped.append(SkippedItem(item: "\(path): entry #\(n + 1)", reason: "the entry has no \"date\""))
                continue
            }
            let time = o["time"]?.stringValue ?? "00:00"
            guard let local = ImportDates.milliseconds(iso: date + "T" + (time.count == 5 ? time + ":00" : time) + "Z") else {
                report.skipped.append(SkippedItem(item: "\(path): entry #\(n + 1)", reason: "the date \(date) \(time) is not YYYY-MM-DD HH:MM"))
                continue
            }
            // jrnl writes local wall-clock times without a zone: they are read in `timeZone`.
            let offset = ImportDates.utcOffsetSeconds(timeZone: timeZone, at: local) ?? 0
            var created = local - offset * 1000
            if let o2 = ImportDates.utcOffsetSeconds(timeZone: timeZone, at: created), o2 != offset { created = local - o2 * 1000 }
            let title = o["title"]?.stringValue ?? ""
            let bodyText = o["body"]?.stringValue ?? ""
            var body = EntryBody(created: created, timeZone: timeZone, journal: journal)
            body.utcOffsetSeconds = ImportDates.utcOffsetSeconds(timeZone: timeZone, at: created)
            body.text = bodyText.isEmpty ? title : title + "\n" + bodyText
            body.tags = (o["tags"]?.arrayValue ?? []).compactMap(\.stringValue).map { t in
                t.first == "@" || t.first == "#" ? String(t.dropFirst()) : t
            }
            body.isStarred = o["starred"]?.boolValue ?? false
            var kept = CBORMap()
            for m in o.members { kept[text: m.key] = JSONCBOR.cbor(m.value, depthBudget: 10) }
            body.extra[text: extraKey] = .map(kept)
            // No ids in jrnl: the id hashes the entry's own content (date,
            // time, title, body), with an occurrence number for exact repeats,
            // and never the file's path or the journal's name, so a re-import
            // from anywhere finds it (`Spec/import.md §9`).
            let key = "\(date)\u{0}\(time)\u{0}\(title)\u{0}\(bodyText)"
            let k = occurrences[key, default: 0]
            occurrences[key] = k + 1
            let id = EntryID(unchecked: BLAKE2b.hash(Array("quire.import.jrnl\u{0}\(key)\u{0}\(k)".utf8), byteCount: 16))
            prepared.append(PreparedEntry(label: "\(path): entry #\(n + 1)", id: id, body: body))
        }
        report.journals = [journal]
        let writer = EntryWriter(vault: vault, files: files, report: report, progress: progress)
        try writer.write(prepared)
        return writer.report
    }
}
