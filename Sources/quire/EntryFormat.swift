import Foundation
import Quire

/// Entry ids, lines and JSON objects as the commands print them.
enum EntryFormat {
    /// The first 8 hex digits of an id.
    static func short(_ id: some ByteIdentifier) -> String { String(id.description.prefix(8)) }

    /// The entry whose id starts with `prefix` (4 or more hex digits, unique).
    static func resolve(_ prefix: String, in entries: [EntrySnapshot]) throws(CLIFailure) -> EntrySnapshot {
        let p = prefix.lowercased()
        guard p.count >= 4, p.count <= 32, p.allSatisfy({ $0.isHexDigit }) else {
            throw CLIFailure("'\(prefix)' is not an entry id", hint: "give 4 or more hex digits of an id 'quire list' shows", code: "usage", exit: .usage)
        }
        let matches = entries.filter { $0.id.description.hasPrefix(p) }
        if matches.count == 1 { return matches[0] }
        if matches.isEmpty { throw CLIFailure("no entry has an id starting with \(p)", hint: "see the ids with 'quire list VAULT'", code: "entry_not_found") }
        let some = matches.prefix(5).map { short($0.id) + "…" }.joined(separator: ", ")
        throw CLIFailure("\(matches.count) entries have ids starting with \(p) (\(some))", hint: "give more hex digits", code: "ambiguous_id", exit: .usage)
    }

    /// The first non-empty line of `text`, at most `limit` characters.
    static func title(_ text: String, limit: Int = 60) -> String {
        let line = text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }.first { !$0.isEmpty } ?? ""
        return line.count > limit ? String(line.prefix(limit - 1)) + "…" : line
    }

    /// `a1b2c3d4  2026-03-01 08:30  First line…  #tag #other`.
    static func line(_ e: EntrySnapshot, out: Output) -> String {
        let b = e.body
        let date = b.isAllDay ? DateText.localDay(b.created) + "      " : DateText.local(b.created)
        var s = out.colour(short(e.id), "33") + "  " + date + "  " + title(b.text)
        if !b.tags.isEmpty { s += "  " + out.colour(b.tags.map { "#" + $0 }.joined(separator: " "), "36") }
        if !e.conflictingHeads.isEmpty { s += "  (conflict)" }
        return s
    }

    /// The summary object `list` and `search` print.
    static func summary(_ e: EntrySnapshot) -> [String: Any] {
        let b = e.body
        return [
            "id": e.id.description, "created": DateText.iso(b.created, zoneName: b.timeZone), "timeZone": b.timeZone,
            "title": title(b.text, limit: 200), "tags": b.tags, "journal": b.journal, "mood": b.mood.map { Int($0) as Any } ?? NSNull(),
            "starred": b.isStarred, "attachments": b.attachments.count, "conflict": !e.conflictingHeads.isEmpty,
        ]
    }

    /// The full object `show` prints.
    static func full(_ e: EntrySnapshot, vault: Vault) -> [String: Any] {
        let b = e.body
        var o: [String: Any] = [
            "id": e.id.description, "created": DateText.iso(b.created, zoneName: b.timeZone),
            "modified": b.modified.map { DateText.iso($0, zoneName: b.timeZone) as Any } ?? NSNull(),
            "timeZone": b.timeZone, "timeZoneInferred": b.extra[text: "inferredTimeZone"].flatMap { if case .text(let t) = $0 { t as Any } else { nil } } ?? NSNull(),
            "allDay": b.isAllDay, "text": b.text, "tags": b.tags, "journal": b.journal,
            "mood": b.mood.map { Int($0) as Any } ?? NSNull(), "starred": b.isStarred, "pinned": b.isPinned,
            "revisions": e.revisionCount, "conflictingRevisions": e.conflictingHeads.map(\.description), "verified": e.isVerified,
            "attachments": b.attachments.map { attachment($0, vault: vault) },
        ]
        if let l = b.location {
            var loc: [String: Any] = ["placeName": l.placeName, "locality": l.locality, "region": l.region, "country": l.country]
            if let v = l.latitude { loc["latitude"] = v }
            if let v = l.longitude { loc["longitude"] = v }
            if let v = l.altitude { loc["altitude"] = v }
            o["location"] = loc
        } else {
            o["location"] = NSNull()
        }
        if let w = b.weather {
            o["weather"] = ["conditions": w.conditions, "temperatureCelsius": w.temperatureCelsius.map { $0 as Any } ?? NSNull()]
        } else {
            o["weather"] = NSNull()
        }
        return o
    }

    static func attachment(_ ref: AttachmentReference, vault: Vault) -> [String: Any] {
        let size = (try? vault.attachment(ref.blob).byteCount).map { Int($0) as Any } ?? NSNull()
        return ["id": ref.blob.description, "mediaType": ref.mediaType, "fileName": ref.fileName, "byteCount": size]
    }

    /// The entries `--since`, `--until`, `--tag` and `--journal` select.
    static func filter(_ entries: [EntrySnapshot], _ c: Context) throws(CLIFailure) -> [EntrySnapshot] {
        let since = try c.args.value("since").map { (s: String) throws(CLIFailure) in try DateArgument.require(s, option: "since", command: c.spec.name).milliseconds }
        let until = try c.args.value("until").map { (s: String) throws(CLIFailure) -> Int64 in
            let p = try DateArgument.require(s, option: "until", command: c.spec.name)
            return p.isDateOnly ? p.endOfDayMilliseconds : p.milliseconds
        }
        if let since, let until, since >= until { throw c.usage("--since is not before --until: no entry can match") }
        let tags = Set(c.args.all("tag").map { $0.lowercased() })
        let journals = Set(c.args.all("journal").map { $0.lowercased() })
        return entries.filter { e in
            if let since, e.body.created < since { return false }
            if let until, e.body.created >= until { return false }
            if !tags.isEmpty && !e.body.tags.contains(where: { tags.contains($0.lowercased()) }) { return false }
            if !journals.isEmpty && !journals.contains(e.body.journal.lowercased()) { return false }
            return true
        }
    }

    /// A media type from a file name's extension.
    static func mediaType(forFile path: String) -> String {
        switch (path as NSString).pathExtension.lowercased() {
        case "jpg", "jpeg": "image/jpeg"
        case "png": "image/png"
        case "gif": "image/gif"
        case "heic": "image/heic"
        case "webp": "image/webp"
        case "tif", "tiff": "image/tiff"
        case "pdf": "application/pdf"
        case "mp3": "audio/mpeg"
        case "m4a": "audio/mp4"
        case "wav": "audio/wav"
        case "mp4", "m4v": "video/mp4"
        case "mov": "video/quicktime"
        case "txt": "text/plain"
        case "md": "text/markdown"
        default: "application/octet-stream"
        }
    }
}
