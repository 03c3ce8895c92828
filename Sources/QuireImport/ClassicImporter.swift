import Foundation
@_spi(Format) import Quire
import QuireDayOne

/// Imports Day One Classic: a `Journal.dayone` folder whose `entries/`
/// hold one XML property list (`<UUID>.doentry`) per entry and whose
/// `photos/` hold at most one photo per entry, named by the entry's UUID
/// (`Spec/import.md §8`). The path may also be the `entries` folder or a
/// single `.doentry` file.
enum ClassicImporter {
    /// Largest `.doentry` file read, in bytes (16 MiB).
    static let maxEntryByteCount: UInt64 = 16 << 20
    /// The `extra` key holding the Classic fields not mapped.
    static let extraKey = "dayOneClassic"

    /// Throws ``ImportError/unreadableSource(path:reason:)`` when `source`
    /// holds no `.doentry` file that reads as an entry (nothing written).
    static func run(
        source: String, files: any ExportFiles, journal: String, defaultTimeZone: String, vault: Vault,
        progress: @escaping (ImportProgress) -> Void
    ) throws(ImportError) -> ImportReport {
        var report = ImportReport()
        var entryFiles = 0
        report.skipped += files.refused
        var photos: [String: String] = [:]  // entry UUID (uppercase) → photo path
        for p in files.files where p.split(separator: "/").dropLast().last == "photos" {
            let name = String(p.split(separator: "/").last!)
            photos[name.split(separator: ".").first.map { String($0).uppercased() } ?? name] = p
        }
        var prepared: [PreparedEntry] = []
        var seen = Set<EntryID>()
        for path in files.files where path.lowercased().hasSuffix(".doentry") && !path.split(separator: "/").last!.hasPrefix("._") {
            entryFiles += 1
            let bytes: [UInt8]
            do { bytes = try readAll(files, path) } catch {
                report.skipped.append(SkippedItem(item: path, reason: "cannot be read: \(error)"))
                continue
            }
            guard let plist = try? PropertyListSerialization.propertyList(from: Data(bytes), options: [], format: nil) as? [String: Any]
            else {
                report.skipped.append(SkippedItem(item: path, reason: "not a property list dictionary; a Day One Classic entry is one"))
                continue
            }
            guard let created = plist["Creation Date"] as? Date else {
                report.skipped.append(SkippedItem(item: path, reason: "the entry has no Creation Date"))
                continue
            }
            let stem = String(path.split(separator: "/").last!.dropLast(".doentry".count))
            let uuid = (plist["UUID"] as? String) ?? stem
            let id = DayOneMapping.entryID(forUUID: uuid)
            if !seen.insert(id).inserted {
                report.duplicatesMerged += 1
                report.skipped.append(SkippedItem(item: path, reason: "another file already holds the entry \(uuid)"))
                continue
            }
            let ms = Int64((created.timeIntervalSince1970 * 1000).rounded())
            var body = EntryBody(created: ms, journal: journal)
            var rest = CBORMap()
            for (key, value) in plist {
                switch (key, value) {
                case ("Creation Date", _): break
                case ("UUID", let s as String) where s == uuid: rest[text: key] = .text(s)
                case ("Time Zone", let s as String): body.timeZoneIdentifier = s
                case ("Entry Text", let s as String): body.text = s
                case ("Tags", let a as [Any]) where a.allSatisfy({ $0 is String }): body.tags = a.map { $0 as! String }
                case ("Starred", _) where isBool(value): body.isStarred = (value as? Bool) ?? false
                case ("Location", let d as [AnyHashable: Any]): body.location = location(d)
                case ("Weather", let d as [AnyHashable: Any]): body.weather = weather(d)
                default: rest[text: key] = cbor(value, depth: 9)
                }
            }
            // No zone (Journaley and old Day One wrote entries without one):
            // the import's, marked inferred and said (`Spec/import.md §8`).
            if body.timeZoneIdentifier.isEmpty || ImportDates.utcOffsetSeconds(timeZone: body.timeZoneIdentifier, at: ms) == nil {
                let had = body.timeZoneIdentifier
                if !had.isEmpty { rest[text: "Time Zone"] = .text(had) }
                body.timeZoneIdentifier = defaultTimeZone
                body.extra[text: DayOneMapping.inferredTimeZoneKey] = .text("import")
                report.notes.append(
                    SkippedItem(
                        item: "\(path): Time Zone",
                        reason: (had.isEmpty
                            ? "the entry has no time zone" : "\(had.debugDescription) is not an IANA time zone (kept in extra)")
                            + ": shown in \(defaultTimeZone), the import's time zone (inferred)"))
            }
            body.utcOffsetSeconds = ImportDates.utcOffsetSeconds(timeZone: body.timeZoneIdentifier, at: ms)
            body.extra[text: extraKey] = .map(rest)
            var entry = PreparedEntry(label: path, id: id, body: body)
            if let photo = photos[uuid.uppercased()] ?? photos[stem.uppercased()] {
                let name = String(photo.split(separator: "/").last!)
                let ext = name.split(separator: ".").dropFirst().last.map(String.init) ?? "jpg"
                let ref = AttachmentReference(
                    id: Array(id.bytes), blob: BlobID(unchecked: [UInt8](repeating: 0, count: BlobID.byteCount)),
                    mediaType: MediaTypes.forExtension(ext), fileName: name)
                entry.body.attachments.append(ref)
                entry.files.append((0, photo, true))
            }
            prepared.append(entry)
        }
        let expected = "not a Day One Classic journal (expected a Journal.dayone folder whose entries/ hold .doentry property lists)"
        if entryFiles == 0 { throw .unreadableSource(path: source, reason: "\(expected): no .doentry file in it") }
        if prepared.isEmpty {
            let first = report.skipped.first { $0.item.lowercased().hasSuffix(".doentry") }.map { "; \($0.item): \($0.reason)" } ?? ""
            throw .unreadableSource(path: source, reason: "\(expected): none of its \(entryFiles) .doentry files is an entry\(first)")
        }
        report.journals.append(journal)
        let writer = EntryWriter(vault: vault, files: files, report: report, progress: progress)
        try writer.write(prepared.sorted { $0.body.createdMilliseconds < $1.body.createdMilliseconds }, total: prepared.count)
        return writer.report
    }

    static func readAll(_ files: any ExportFiles, _ path: String) throws -> [UInt8] {
        let stream = try files.open(path)
        var out: [UInt8] = []
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 16, alignment: 8)
        defer { buffer.deallocate() }
        while true {
            let n = try stream.read(into: buffer)
            if n == 0 { return out }
            out += UnsafeRawBufferPointer(rebasing: buffer[0..<n])
            guard UInt64(out.count) <= maxEntryByteCount else {
                throw ImportError.unreadableSource(path: path, reason: "larger than \(maxEntryByteCount) bytes")
            }
        }
    }

    static func isBool(_ v: Any) -> Bool {
        if type(of: v) == Bool.self { return true }
        if let n = v as? NSNumber { return String(cString: n.objCType) == "c" }
        return false
    }

    /// A property-list value as CBOR: dates as ISO 8601 text, data as bytes.
    static func cbor(_ v: Any, depth: Int) -> CBOR {
        if isBool(v) { return .bool((v as? Bool) ?? ((v as? NSNumber)?.boolValue ?? false)) }
        switch v {
        case let s as String: return .text(s)
        case let d as Date: return .text(ImportDates.iso(milliseconds: Int64((d.timeIntervalSince1970 * 1000).rounded())))
        case let data as Data: return .bytes(Array(data))
        case let n as NSNumber:
            let t = String(cString: n.objCType)
            if t == "d" || t == "f" { return .double(n.doubleValue) }
            return .int(n.int64Value)
        case let a as [Any]:
            return depth <= 0 ? .text("\(a)") : .array(a.map { cbor($0, depth: depth - 1) })
        case let d as [AnyHashable: Any]:
            if depth <= 0 { return .text("\(d)") }
            return .map(CBORMap(d.map { (CBOR.text("\($0.key)"), cbor($0.value, depth: depth - 1)) }))
        default:
            return .text("\(v)")
        }
    }

    static func number(_ v: Any?) -> Double? {
        if let v, isBool(v) { return nil }
        if let n = v as? NSNumber { return n.doubleValue }
        if let s = v as? String { return Double(s) }
        return nil
    }

    static func location(_ d: [AnyHashable: Any]) -> Location {
        var l = Location()
        for (k, v) in d {
            let key = "\(k)"
            switch key {
            case "Latitude" where number(v) != nil && !(v is String): l.latitude = number(v)
            case "Longitude" where number(v) != nil && !(v is String): l.longitude = number(v)
            case "Place Name" where v is String: l.placeName = v as! String
            case "Locality" where v is String: l.locality = v as! String
            case "Administrative Area" where v is String: l.region = v as! String
            case "Country" where v is String: l.country = v as! String
            default: l.extra[text: key] = cbor(v, depth: 8)
            }
        }
        return l
    }

    static func weather(_ d: [AnyHashable: Any]) -> Weather {
        var w = Weather()
        for (k, v) in d {
            let key = "\(k)"
            switch key {
            case "Description" where v is String: w.conditions = v as! String
            case "Celsius" where number(v) != nil:
                w.temperatureCelsius = number(v)
                // Kept as written too (some versions write it as a string).
                w.extra[text: key] = cbor(v, depth: 8)
            default: w.extra[text: key] = cbor(v, depth: 8)
            }
        }
        return w
    }
}
