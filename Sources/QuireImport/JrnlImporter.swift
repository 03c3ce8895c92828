import Foundation
@_spi(Format) @_spi(Crypto) import Quire
import QuireDayOne

/// Imports a jrnl JSON export (`jrnl --export json`): `{"tags": {…},
/// "entries": [{"title", "body", "date", "time", "tags", "starred"}]}`
/// (`Spec/import.md §9`).
///
/// The export is read as a stream, twice: a first pass checks that the
/// whole file is JSON of that shape, building no values, so a file damaged
/// anywhere writes nothing; the second reads one entry at a time and
/// commits them in batches of 256. Memory is the read buffer, one batch
/// and 24 bytes per distinct entry content (for the repeat count of ids),
/// whatever the size of the file (a 50,000-entry export is 35 MB).
enum JrnlImporter {
    /// The `extra` key holding the entry's jrnl fields (title, body, tags as
    /// written, date, time, and any other).
    static let extraKey = "jrnl"

    /// Throws ``ImportError/unreadableSource(path:reason:)`` when `source`
    /// is not a jrnl JSON export (nothing written).
    static func run(
        source: String, files: any ExportFiles, journal: String, timeZone: String, vault: Vault,
        progress: @escaping (ImportProgress) -> Void
    ) throws(ImportError) -> ImportReport {
        var report = ImportReport()
        let expected = "not a jrnl JSON export (expected the JSON file jrnl --export json writes, {\"tags\": {…}, \"entries\": […]})"
        guard let path = files.isSingleFile ? files.files.first : files.files.first(where: { $0.lowercased().hasSuffix(".json") }) else {
            throw .unreadableSource(path: source, reason: "\(expected): no .json file in it")
        }
        if let problem = check(files, path) { throw .unreadableSource(path: source, reason: "\(expected): \(problem)") }
        report.journals = [journal]
        let writer = EntryWriter(vault: vault, files: files, report: report, progress: progress)
        var batch: [PreparedEntry] = []
        var occurrences: [[UInt8]: Int] = [:]
        var number = 0
        var failure: ImportError?
        do throws(any Error) {
            let stream = try files.open(path)
            let reader = JSONReader { try stream.read(into: $0) }
            try reader.skipByteOrderMark()
            try reader.members { (key: String) throws -> Void in
                guard key == "entries" else {
                    try reader.skipValue()
                    return
                }
                try reader.elements { (value: JSONValue) throws -> Void in
                    number += 1
                    if let entry = prepare(
                        value, number: number, path: path, journal: journal, timeZone: timeZone, occurrences: &occurrences,
                        report: &writer.report)
                    {
                        batch.append(entry)
                    }
                    if batch.count >= DayOneImporter.batchEntryCount {
                        do throws(ImportError) { try writer.write(batch, total: nil) } catch {
                            failure = error
                            throw error
                        }
                        batch.removeAll(keepingCapacity: true)
                    }
                }
            }
        } catch {
            if let failure { throw failure }
            // The check passed, so the file changed or could not be read since: keep what was written.
            writer.report.skipped.append(SkippedItem(item: path, reason: "the rest of the journal was not read: \(error)"))
        }
        try writer.write(batch, total: nil)
        return writer.report
    }

    /// Why `path` is not a jrnl export, or nil: one streaming pass that
    /// builds no values (RFC 8259 JSON whose top level is an object with an
    /// `"entries"` array).
    static func check(_ files: any ExportFiles, _ path: String) -> String? {
        let stream: any ByteSource
        do { stream = try files.open(path) } catch { return "cannot be read: \(error)" }
        let reader = JSONReader { try stream.read(into: $0) }
        var hasEntries = false
        do {
            try reader.skipByteOrderMark()
            guard let first = try reader.skipSpace() else { return "the file is empty" }
            guard first == UInt8(ascii: "{") else {
                try reader.skipValue()
                try reader.expectEnd()
                return "no \"entries\" array"
            }
            try reader.members { (key: String) throws -> Void in
                if key == "entries", try reader.skipSpace() == UInt8(ascii: "[") { hasEntries = true }
                try reader.skipValue()
            }
            try reader.expectEnd()
        } catch {
            return "\(error)"
        }
        return hasEntries ? nil : "no \"entries\" array"
    }

    /// One jrnl entry as a Quire entry, or nil (listed in the report) when
    /// it has no readable date.
    static func prepare(
        _ value: JSONValue, number n: Int, path: String, journal: String, timeZone: String, occurrences: inout [[UInt8]: Int],
        report: inout ImportReport
    ) -> PreparedEntry? {
        guard let o = value.objectValue, let date = o["date"]?.stringValue else {
            report.skipped.append(SkippedItem(item: "\(path): entry #\(n)", reason: "the entry has no \"date\""))
            return nil
        }
        let time = o["time"]?.stringValue ?? "00:00"
        guard let local = ImportDates.milliseconds(iso: date + "T" + (time.count == 5 ? time + ":00" : time) + "Z") else {
            report.skipped.append(SkippedItem(item: "\(path): entry #\(n)", reason: "the date \(date) \(time) is not YYYY-MM-DD HH:MM"))
            return nil
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
        // from anywhere finds it (`Spec/import.md §9`). Repeats are counted
        // by a digest of that content, not the content itself.
        let key = "\(date)\u{0}\(time)\u{0}\(title)\u{0}\(bodyText)"
        let digest = BLAKE2b.hash(Array(key.utf8), byteCount: 16)
        let k = occurrences[digest, default: 0]
        occurrences[digest] = k + 1
        let id = EntryID(unchecked: BLAKE2b.hash(Array("quire.import.jrnl\u{0}\(key)\u{0}\(k)".utf8), byteCount: 16))
        return PreparedEntry(label: "\(path): entry #\(n)", id: id, body: body)
    }
}
