import Foundation
@_spi(Format) import Quire

/// Entry ids, lines and JSON objects as the commands print them.
enum EntryFormat {
    /// The first 8 hex digits of an id (of its first 4 bytes alone: `list`
    /// shows one for every entry).
    static func short(_ id: some ByteIdentifier) -> String { hex(Array(id.bytes.prefix(4))) }

    /// The entry whose id starts with `prefix` (unique).
    ///
    /// - Throws: ``CLIFailure`` (`entry_not_found`, or `ambiguous_id` with exit 64).
    static func resolve(_ prefix: EntryIDPrefix, in entries: [EntrySnapshot], deleted: Bool = false) throws(CLIFailure) -> EntrySnapshot {
        let matches = entries.filter { prefix.matches($0.id) }
        if matches.count == 1 { return matches[0] }
        try refuse(prefix, matches: matches.map(\.id), deleted: deleted)
        return matches[0]
    }

    /// The one id of `ids` (those whose hex starts with `prefix`, in
    /// listing order) when there is one; otherwise the error
    /// ``resolve(_:in:deleted:)`` throws.
    static func resolve(_ prefix: EntryIDPrefix, matching ids: [EntryID], deleted: Bool = false) throws(CLIFailure) -> EntryID {
        if ids.count == 1 { return ids[0] }
        try refuse(prefix, matches: ids, deleted: deleted)
        return ids[0]
    }

    /// Throws why `matches` (not one id) do not name an entry.
    private static func refuse(_ prefix: EntryIDPrefix, matches: [EntryID], deleted: Bool) throws(CLIFailure) {
        let p = prefix.prefix
        if matches.isEmpty {
            throw CLIFailure(
                deleted ? "no deleted entry has an id starting with \(p)" : "no entry has an id starting with \(p)",
                hint: deleted ? "'quire restore --list' shows the deleted entries" : "see the ids with 'quire list'",
                code: "entry_not_found")
        }
        let some = matches.prefix(5).map { short($0) + "…" }.joined(separator: ", ")
        throw CLIFailure(
            "\(matches.count) entries have ids starting with \(p) (\(some))", hint: "give more hex digits", code: "ambiguous_id",
            exit: .usage)
    }

    /// True when the lower-case hex digits of `bytes` start with `prefix`
    /// (lower-case hex digits), without writing them all out.
    static func hasHexPrefix(_ bytes: [UInt8], _ prefix: String) -> Bool {
        let digits = Array("0123456789abcdef".utf8)
        var i = 0
        for c in prefix.utf8 {
            guard i / 2 < bytes.count else { return false }
            let b = bytes[i / 2]
            guard c == digits[Int(i % 2 == 0 ? b >> 4 : b & 15)] else { return false }
            i += 1
        }
        return true
    }

    /// The first non-empty line of `text`, at most `limit` characters.
    ///
    /// Works on the UTF-8 bytes (lines end at LF or CR; spaces and tabs are
    /// trimmed) and counts characters only up to `limit`: a journal entry is
    /// often one long paragraph, and `list` makes a title for every entry.
    static func title(_ text: String, limit: Int = 60) -> String {
        let bytes = text.utf8
        var lineStart = bytes.startIndex
        while lineStart < bytes.endIndex {
            let lineEnd = bytes[lineStart...].firstIndex { $0 == 0x0a || $0 == 0x0d } ?? bytes.endIndex
            var first = lineStart
            var last = lineEnd
            while first < last, bytes[first] == 0x20 || bytes[first] == 0x09 { first = bytes.index(after: first) }
            while last > first {
                let before = bytes.index(before: last)
                guard bytes[before] == 0x20 || bytes[before] == 0x09 else { break }
                last = before
            }
            if first < last {
                let line = Substring(text[first..<last])
                guard let cut = line.index(line.startIndex, offsetBy: limit, limitedBy: line.endIndex), cut < line.endIndex else {
                    return String(line)
                }
                return String(line[..<line.index(before: cut)]) + "…"
            }
            lineStart = lineEnd < bytes.endIndex ? bytes.index(after: lineEnd) : lineEnd
        }
        return ""
    }

    /// The number of photos (image attachments) of an entry.
    static func photoCount(_ b: EntryBody) -> Int {
        var n = 0
        for a in b.attachments where a.mediaType.hasPrefix("image/") { n += 1 }
        return n
    }

    /// `2026-03-01 08:30`, or the day alone (padded) for an all-day entry.
    static func date(_ b: EntryBody) -> String {
        b.isAllDay ? DateText.day(b.createdMilliseconds, zoneName: b.timeZoneIdentifier) + "      " : DateText.local(b.createdMilliseconds)
    }

    /// `a1b2c3d4  2026-03-01 08:30  First line…  #tag #other  (starred, mood 4, 2 photos, conflict, unattested)`.
    static func line(_ e: EntrySnapshot) -> ShownText {
        line(id: e.id, body: e.body, conflict: !e.conflictingHeads.isEmpty, standing: standing(e))
    }

    /// How far the version shown is vouched for, as a mark: nil when a
    /// member attested it, `"unverified"` when its commit did not verify,
    /// `"unattested"` otherwise — a removed device, a passphrase, an escrow
    /// key or another program wrote it (`Spec/format.md §9.4`).
    static func standing(_ e: EntrySnapshot) -> String? {
        e.isAttested ? nil : e.isVerified ? "unattested" : "unverified"
    }

    /// The line of entry `id` with content `b`.
    ///
    /// Its parts are appended in place (`list` makes one for every entry);
    /// the text is the same as
    /// `"\(short(id), .id)  \(date(b))  \(title(b.text))"`, then
    /// `"  #tag #other"` (tags styled) and `"  (marks)"` when there are any.
    static func line(id: EntryID, body b: EntryBody, conflict: Bool, standing: String? = nil) -> ShownText {
        var parts: [ShownText.Part] = []
        parts.reserveCapacity(8 + 2 * b.tags.count)
        parts.append(.value(short(id), multiline: false, style: .id))
        parts.append(.literal("  "))
        parts.append(.value(date(b), multiline: false, style: nil))
        parts.append(.literal("  "))
        parts.append(.value(title(b.text), multiline: false, style: nil))
        for (i, tag) in b.tags.enumerated() {
            parts.append(.literal(i == 0 ? "  " : " "))
            parts.append(.value("#" + tag, multiline: false, style: .tag))
        }
        var marks: [String] = []
        if b.isStarred { marks.append("starred") }
        if let m = b.moodRawValue { marks.append("mood \(m)") }
        let photos = photoCount(b)
        if photos > 0 { marks.append(plural(photos, "photo")) }
        if conflict { marks.append("conflict") }
        if let standing { marks.append(standing) }
        if !marks.isEmpty {
            parts.append(.literal("  ("))
            parts.append(.value(marks.joined(separator: ", "), multiline: false, style: nil))
            parts.append(.literal(")"))
        }
        return ShownText(parts: parts)
    }

    /// The id an attachment is known by everywhere: the id the entry's text
    /// links to (`quire-attachment://ID`), or, for a reference without one,
    /// its content's id.
    static func attachmentID(_ ref: AttachmentReference) -> String {
        ref.id.isEmpty ? ref.blob.description : hex(ref.id)
    }

    /// Lower-case hex digits of `bytes`.
    static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        for b in bytes {
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 15)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// A media type from a file name's extension.
    static func mediaType(forFile path: String) -> String {
        switch Paths.pathExtension(of: path).lowercased() {
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

    /// A file name extension for a media type (`jpg` for `image/jpeg`), or `""`.
    static func fileExtension(forMediaType type: String) -> String {
        switch type.lowercased() {
        case "image/jpeg": "jpg"
        case "image/png": "png"
        case "image/gif": "gif"
        case "image/heic": "heic"
        case "image/webp": "webp"
        case "image/tiff": "tif"
        case "application/pdf": "pdf"
        case "audio/mpeg": "mp3"
        case "audio/mp4": "m4a"
        case "audio/wav": "wav"
        case "video/mp4": "mp4"
        case "video/quicktime": "mov"
        case "text/plain": "txt"
        case "text/markdown": "md"
        default: ""
        }
    }
}

/// One entry in `list`, `search` and `on-this-day` (`Spec/cli-json.md §3.2`).
struct EntrySummaryJSON: PrettyJSONWritable {
    let id: String
    let created: String
    let timeZone: String
    let allDay: Bool
    let title: String
    let tags: [String]
    let journal: String
    @OrNull var mood: Int64?
    let starred: Bool
    let attachments: Int
    let conflict: Bool
    /// True when a member attested the version shown (`Spec/format.md §9.4`).
    let attested: Bool

    init(_ e: EntrySnapshot) { self.init(id: e.id, body: e.body, conflict: !e.conflictingHeads.isEmpty, attested: e.isAttested) }

    init(id entryID: EntryID, body b: EntryBody, conflict isConflicted: Bool, attested isAttested: Bool) {
        id = entryID.description
        created = DateText.iso(b.createdMilliseconds, zoneName: b.timeZoneIdentifier)
        timeZone = b.timeZoneIdentifier
        allDay = b.isAllDay
        title = EntryFormat.title(b.text, limit: 200)
        tags = b.tags
        journal = b.journal
        mood = b.moodRawValue
        starred = b.isStarred
        attachments = b.attachments.count
        conflict = isConflicted
        attested = isAttested
    }

    init(example: Void) {
        id = ""
        created = ""
        timeZone = ""
        allDay = false
        title = ""
        tags = []
        journal = ""
        mood = nil
        starred = false
        attachments = 0
        conflict = false
        attested = false
    }

    func write(to json: inout PrettyJSON) {
        json.object { j in
            j.key("allDay")
            j.bool(allDay)
            j.key("attachments")
            j.number(attachments)
            j.key("attested")
            j.bool(attested)
            j.key("conflict")
            j.bool(conflict)
            j.key("created")
            j.string(created)
            j.key("id")
            j.string(id)
            j.key("journal")
            j.string(journal)
            j.key("mood")
            j.number(orNull: mood)
            j.key("starred")
            j.bool(starred)
            j.key("tags")
            j.strings(tags)
            j.key("timeZone")
            j.string(timeZone)
            j.key("title")
            j.string(title)
        }
    }
}

/// `{"count", "entries": [entry]}`: what `list`, `search` and `on-this-day` print.
struct EntryListJSON: JSONShape, PrettyJSONWritable {
    let count: Int
    let entries: [EntrySummaryJSON]
    /// The records the entries shown leave out (``UnreadRecordsJSON``).
    let unreadRecords: UnreadRecordsJSON

    func write(to json: inout PrettyJSON) {
        json.object { j in
            j.key("count")
            j.number(count)
            j.key("entries")
            j.array(entries) { $1.write(to: &$0) }
            j.key("unreadRecords")
            unreadRecords.write(to: &j)
        }
    }

    static var example: EntryListJSON {
        EntryListJSON(count: 0, entries: [EntrySummaryJSON(example: ())], unreadRecords: .example)
    }
}

/// An attachment (`Spec/cli-json.md §3.2`).
struct AttachmentJSON: Encodable {
    /// The id the entry's text links to (``EntryFormat/attachmentID(_:)``).
    let id: String
    let mediaType: String
    let fileName: String
    /// Null when the content is missing from the file.
    @OrNull var byteCount: UInt64?
    /// True when the content is in the file but cannot be read (a damaged
    /// chunk: ``Reading/damagedAttachments(_:)``).
    let damaged: Bool

    /// `ref`, with its size from `vault` and `damaged` when `damaged`
    /// (``Reading/damagedAttachments(_:)``, asked once for all of an
    /// entry's references: asking it for each made an entry of 4,000
    /// references take 30 s, trial 25 F4) holds its blob.
    init(_ ref: AttachmentReference, vault: Vault, damaged: [BlobID: UnreadRecords.Record]) {
        id = EntryFormat.attachmentID(ref)
        mediaType = ref.mediaType
        fileName = ref.fileName
        byteCount = try? vault.attachment(ref.blob).byteCount
        self.damaged = damaged[ref.blob] != nil
    }

    /// Each of `refs`, in order: the damaged attachments are read once.
    static func list(_ refs: [AttachmentReference], vault: Vault) -> [AttachmentJSON] {
        let damaged = Reading.damagedAttachments(vault)
        return refs.map { AttachmentJSON($0, vault: vault, damaged: damaged) }
    }

    init(example: Void) {
        id = ""
        mediaType = ""
        fileName = ""
        byteCount = nil
        damaged = false
    }
}
