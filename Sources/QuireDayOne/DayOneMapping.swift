@_spi(Format) @_spi(Crypto) public import Quire
import QuireMarkdown

/// The mapping between a Day One JSON entry and a Quire entry, both ways
/// (`Spec/import.md §3`).
///
/// Forward (import): ``draft(_:journal:escaped:)`` reads one entry object;
/// the importer resolves and stores its media, then ``finish(_:attached:)``
/// makes the ``EntryBody``. Backward (the Day One variant of the JSON
/// export): ``dayOneEntry(id:body:)`` gives the entry object back, equal as a
/// JSON value to the one imported when the entry has not been changed since.
public enum DayOneMapping {
    /// The `extra` key holding the Day One mapping data of an entry
    /// (unmapped fields, key order, originals, escapes, unattached media).
    public static let extraKey = "dayOne"
    /// The profile setting holding what the Day One import keeps of each
    /// journal file (`{"journals": {<name>: {"metadata": <its JSON text>}}}`,
    /// `Spec/import.md §11`).
    public static let profileKey = "dayOne"
    /// The attachment reference `extra` key holding the Day One media object.
    public static let mediaKey = "dayOne"
    /// The attachment reference `extra` key naming the list (`photos`…).
    public static let mediaListKey = "dayOneList"
    /// The attachment reference `extra` key holding the position in the list.
    public static let mediaIndexKey = "dayOneIndex"
    /// The attachment reference `extra` key of media another entry lists
    /// (`{list, identifier, md5}`): referenced here by a link only.
    public static let linkedMediaKey = "dayOneLink"
    /// The text of a link to an attachment, before the reference id in hex (`Spec/records.md §3.6`).
    public static let attachmentLinkPrefix = "quire-attachment://"

    /// Top-level keys the mapping turns into Quire fields.
    static let mappedKeys: Set<String> = [
        "uuid", "creationDate", "modifiedDate", "timeZone", "text", "tags", "starred", "isPinned", "pinned", "isAllDay",
        "location", "weather", "photos", "videos", "audios", "pdfAttachments",
    ]
    /// The order keys are written in for an entry that did not come from Day One.
    static let defaultOrder = [
        "uuid", "creationDate", "modifiedDate", "timeZone", "starred", "isPinned", "isAllDay", "tags", "text", "location", "weather",
        "photos", "videos", "audios", "pdfAttachments",
    ]

    /// Why one entry object could not be mapped.
    public enum EntryProblem: Error, Sendable, Equatable, CustomStringConvertible {
        /// The value is not a JSON object.
        case notAnObject
        /// `uuid` is missing or not a non-empty string.
        case missingUUID
        /// `creationDate` is missing or not an ISO 8601 date-time.
        case badCreationDate(String?)

        public var description: String {
            switch self {
            case .notAnObject: "the entry is not a JSON object"
            case .missingUUID: "the entry has no \"uuid\" string"
            case .badCreationDate(let v):
                v.map { "the entry's creationDate \($0.debugDescription) is not an ISO 8601 date-time" } ?? "the entry has no creationDate"
            }
        }
    }

    /// One media item an entry lists.
    public struct MediaItem: Sendable, Equatable {
        /// Which list it is in.
        public var kind: DayOneMediaKind
        /// Its position in that list.
        public var index: Int
        /// The whole object as exported.
        public var object: JSONObject
        /// An item of `kind` at `index` in its list.
        public init(kind: DayOneMediaKind, index: Int, object: JSONObject) {
            self.kind = kind
            self.index = index
            self.object = object
        }
        /// `identifier`, if a string.
        public var identifier: String? { object["identifier"]?.stringValue }
        /// `md5`, lowercased, if a string.
        public var md5: String? { object["md5"]?.stringValue?.lowercased() }
        /// `type` (or `format` for audio without a type), if a string.
        public var type: String? {
            (object["type"]?.stringValue ?? (kind == .audios ? object["format"]?.stringValue : nil))
                .map { $0.hasPrefix(".") ? String($0.dropFirst()) : $0 }?.lowercased()
        }
    }

    /// An entry read but not yet finished: everything but its attachments.
    public struct Draft: Sendable {
        /// The Day One `uuid`.
        public var uuid: String
        /// The Quire entry id derived from it (``entryID(forUUID:)``).
        public var id: EntryID
        /// The body so far: no attachments, text still with `dayone-moment:` links.
        public var body: EntryBody
        /// The media the entry lists, in list order (photos, videos, audios, PDFs).
        public var media: [MediaItem]
        /// The original entry object (for the originals check).
        var original: JSONObject
        var fields: CBORMap
        var escapesAt: [Int]
        /// Mapped fields whose value could not be used as written (wrong
        /// type, unknown zone, over-long tag): each kept whole in
        /// `extra["dayOne"]`, with why, for the report.
        public var notes: [(field: String, reason: String)] = []
        /// What the mapping decided on the person's behalf (a time zone
        /// inferred, `Spec/import.md §4`): for the report's notes.
        public var remarks: [(field: String, reason: String)] = []
    }

    /// How to read one Day One journal file (`Spec/import.md §4, §5`).
    public struct ReadOptions: Sendable, Equatable {
        /// True for the Apple dialect, which backslash-escapes Markdown (code
        /// included); false for Android's, which does not.
        public var escaped: Bool
        /// The IANA zone of an entry that names none usable, neither itself
        /// nor in its location (the import's zone; the system's by default).
        public var defaultTimeZone: String
        /// Options with the given values.
        public init(escaped: Bool = true, defaultTimeZone: String) {
            self.escaped = escaped
            self.defaultTimeZone = defaultTimeZone
        }
    }

    /// The `extra` key of an entry body saying its time zone was inferred,
    /// and how: `"location"` (the location's `timeZoneName`) or `"import"`
    /// (the import's zone) (`Spec/import.md §4`).
    public static let inferredTimeZoneKey = "inferredTimeZone"

    /// Longest tag kept in ``EntryBody/tags``, in Unicode scalars; a longer
    /// tag is cut to this and the original list kept in `extra["dayOne"]`.
    public static let maxTagScalarCount = 256

    /// A media item stored in the vault.
    public struct Attached: Sendable {
        /// The item.
        public var item: MediaItem
        /// The stored content.
        public var blob: BlobID
        /// The media type.
        public var mediaType: String
        /// The file name in the export (`<md5>.<ext>`).
        public var fileName: String
        /// A reference for `item`.
        public init(item: MediaItem, blob: BlobID, mediaType: String, fileName: String) {
            self.item = item
            self.blob = blob
            self.mediaType = mediaType
            self.fileName = fileName
        }
    }

    /// The entry id for a Day One `uuid`: its 16 bytes when it is 32 hex
    /// digits (either case); otherwise the BLAKE2b-128 (QuireCrypto) of the
    /// UTF-8 bytes of `"quire.import.dayone.uuid\u{0}" + uuid`, a namespaced
    /// unkeyed hash, so the same uuid always gives the same id.
    public static func entryID(forUUID uuid: String) -> EntryID {
        if uuid.utf8.count == 32, let b = bytes(fromHex: uuid) { return EntryID(unchecked: b) }
        return EntryID(unchecked: BLAKE2b.hash(Array("quire.import.dayone.uuid\u{0}\(uuid)".utf8), byteCount: 16))
    }

    /// The reference id for a media identifier: its 16 bytes when it is 32
    /// hex digits, otherwise BLAKE2b-128 of `"quire.import.dayone.media\u{0}" + identifier`.
    public static func referenceID(forIdentifier identifier: String) -> [UInt8] {
        if identifier.utf8.count == 32, let b = bytes(fromHex: identifier) { return b }
        return BLAKE2b.hash(Array("quire.import.dayone.media\u{0}\(identifier)".utf8), byteCount: 16)
    }

    // MARK: Forward

    /// Reads one entry object of the journal `journal` as `options` say.
    ///
    /// - Throws: ``EntryProblem``.
    public static func draft(_ value: JSONValue, journal: String, options: ReadOptions) throws(EntryProblem) -> Draft {
        let escaped = options.escaped
        guard case .object(let o) = value else { throw .notAnObject }
        guard let uuid = o["uuid"]?.stringValue, !uuid.isEmpty else { throw .missingUUID }
        guard let createdText = o["creationDate"]?.stringValue else {
            throw .badCreationDate(o["creationDate"].map { $0.serialized })
        }
        guard let created = ImportDates.milliseconds(iso: createdText) else { throw .badCreationDate(createdText) }
        var body = EntryBody(created: created, journal: journal)
        var fields = CBORMap()
        var media: [MediaItem] = []
        var escapesAt: [Int] = []
        var notes: [(field: String, reason: String)] = []
        var remarks: [(field: String, reason: String)] = []
        func keep(_ key: String, _ v: JSONValue) { fields[text: key] = JSONCBOR.cbor(v, depthBudget: 10) }
        func wrongType(_ key: String, _ v: JSONValue, _ expected: String) {
            keep(key, v)
            notes.append((key, "\"\(key)\" is not \(expected): not imported into the entry; the value is kept in extra[\"dayOne\"]"))
        }
        for m in o.members {
            let v = m.value
            switch m.key {
            case "uuid", "creationDate": break
            case "modifiedDate":
                // A placeholder (the epoch) is no modification time.
                if isPlaceholder(v) { break }
                if let s = v.stringValue, let ms = ImportDates.milliseconds(iso: s) {
                    body.modifiedMilliseconds = ms
                } else {
                    keep(m.key, v)
                }
            case "timeZone":
                if isPlaceholder(v) { break }  // "" and "(null)": no zone; inferred below
                if let s = v.stringValue, ImportDates.utcOffsetSeconds(timeZone: s, at: created) != nil {
                    body.timeZoneIdentifier = s
                } else if let s = v.stringValue {
                    keep(m.key, v)
                    notes.append(
                        (
                            "timeZone",
                            "\(s.debugDescription) is not an IANA time zone: the entry's zone is inferred instead; the value is kept in extra[\"dayOne\"]"
                        ))
                } else {
                    wrongType(m.key, v, "a string")
                }
            case "text":
                if let s = v.stringValue {
                    if escaped {
                        // Apple escapes code too; richText, when present, shows what the author typed.
                        let undo = codeWasEscaped(s, richText: o["richText"]?.stringValue)
                        let (t, at) = MarkdownEscapes.remove(s, undoInCode: undo)
                        body.text = t
                        escapesAt = at
                    } else {
                        body.text = s
                    }
                } else {
                    wrongType(m.key, v, "a string")
                }
            case "tags":
                if let a = v.arrayValue {
                    body.tags = a.compactMap(\.stringValue).map { t in
                        t.unicodeScalars.count > maxTagScalarCount
                            ? String(String.UnicodeScalarView(t.unicodeScalars.prefix(maxTagScalarCount))) : t
                    }
                    if a.contains(where: { ($0.stringValue?.unicodeScalars.count ?? 0) > maxTagScalarCount }) {
                        keep(m.key, v)
                        notes.append(
                            (
                                "tags",
                                "a tag is longer than \(maxTagScalarCount) characters: it is cut to that; the full list is kept in extra[\"dayOne\"]"
                            ))
                    } else if a.contains(where: { $0.stringValue == nil }) {
                        wrongType(m.key, v, "an array of strings")
                    }
                } else {
                    wrongType(m.key, v, "an array of strings")
                }
            case "starred":
                if let b = v.boolValue { body.isStarred = b } else { keep(m.key, v) }
            case "isPinned", "pinned":
                if let b = v.boolValue { body.isPinned = body.isPinned || b } else { keep(m.key, v) }
            case "isAllDay":
                if let b = v.boolValue { body.isAllDay = b } else { keep(m.key, v) }
            case "location":
                if let lo = v.objectValue { body.location = location(lo) } else { keep(m.key, v) }
            case "weather":
                if let w = v.objectValue { body.weather = weather(w) } else { keep(m.key, v) }
            case "photos", "videos", "audios", "pdfAttachments":
                let kind = DayOneMediaKind(rawValue: m.key)!
                if let a = v.arrayValue, a.allSatisfy({ $0.objectValue != nil }) {
                    for (i, item) in a.enumerated() { media.append(MediaItem(kind: kind, index: i, object: item.objectValue!)) }
                } else {
                    keep(m.key, v)
                }
            default:
                keep(m.key, v)
            }
        }
        // No usable zone: the location's, else the import's; said either way.
        if body.timeZoneIdentifier.isEmpty {
            let label = o["timeZone"].map { isPlaceholder($0) ? "a placeholder time zone" : "an unknown time zone" } ?? "no time zone"
            if let name = o["location"]?.objectValue?["timeZoneName"]?.stringValue,
                ImportDates.utcOffsetSeconds(timeZone: name, at: created) != nil
            {
                body.timeZoneIdentifier = name
                body.extra[text: inferredTimeZoneKey] = .text("location")
                remarks.append(("timeZone", "the entry has \(label): shown in \(name), the time zone of its location"))
            } else {
                body.timeZoneIdentifier = options.defaultTimeZone
                body.extra[text: inferredTimeZoneKey] = .text("import")
                remarks.append(
                    (
                        "timeZone",
                        "the entry has \(label) and its location names none: shown in \(options.defaultTimeZone), the import's time zone (inferred)"
                    ))
            }
        }
        body.utcOffsetSeconds = ImportDates.utcOffsetSeconds(timeZone: body.timeZoneIdentifier, at: created)
        var d = Draft(
            uuid: uuid, id: entryID(forUUID: uuid), body: body, media: media, original: o, fields: fields, escapesAt: escapesAt,
            notes: notes)
        d.remarks = remarks
        return d
    }

    /// A media item another entry of the export lists, which this entry's
    /// text links to (Day One copies photos between entries): stored once,
    /// referenced here too (`Spec/import.md §3.1`).
    public struct Linked: Sendable {
        /// The kind of media (the link's form says it).
        public var kind: DayOneMediaKind
        /// The item's identifier, as the link writes it.
        public var identifier: String
        /// The md5 of the file, as the listing entry gives it.
        public var md5: String
        /// The stored content.
        public var blob: BlobID
        /// The media type.
        public var mediaType: String
        /// The file name in the export (`<md5>.<ext>`).
        public var fileName: String
        /// A linked item.
        public init(kind: DayOneMediaKind, identifier: String, md5: String, blob: BlobID, mediaType: String, fileName: String) {
            self.kind = kind
            self.identifier = identifier
            self.md5 = md5
            self.blob = blob
            self.mediaType = mediaType
            self.fileName = fileName
        }
    }

    /// What ``finish(_:attached:linked:entryTarget:previous:)`` left as written.
    public struct Unresolved: Sendable, Equatable {
        /// Identifiers of moment links whose media is neither attached nor linked.
        public var media: [String] = []
        /// Links to entries (`dayone2://view?entryId=…`) whose target is not known, as written.
        public var entries: [String] = []
    }

    /// Makes the entry body: attachment references for `attached` and
    /// `linked` (their links rewritten to `quire-attachment://<reference id
    /// hex>`), links to entries `entryTarget` knows rewritten to
    /// `quire-entry://<id hex>` (`Spec/import.md §3.4`), the other listed
    /// media kept in `extra` as unattached, and the mapping data in
    /// `extra["dayOne"]`, `previous` (the uuid of the entry before it in
    /// its file) included.
    ///
    /// - Returns: the body, and the links left as written.
    public static func finish(
        _ draft: Draft, attached: [Attached], linked: [Linked] = [], entryTarget: (String) -> EntryID? = { _ in nil },
        previous: String? = nil, escaped: Bool = true
    ) -> (body: EntryBody, unresolved: Unresolved) {
        var body = draft.body
        var refs: [AttachmentReference] = []
        var usedIDs = Set<[UInt8]>()
        var refByIdentifier: [String: [UInt8]] = [:]
        // Photos, videos, audio, PDFs; each by orderInEntry, then list position.
        let kinds = DayOneMediaKind.allCases
        let sorted = attached.sorted { a, b in
            let ka = kinds.firstIndex(of: a.item.kind)!
            let kb = kinds.firstIndex(of: b.item.kind)!
            if ka != kb { return ka < kb }
            let oa = a.item.object["orderInEntry"]?.doubleValue ?? Double(a.item.index)
            let ob = b.item.object["orderInEntry"]?.doubleValue ?? Double(b.item.index)
            return oa != ob ? oa < ob : a.item.index < b.item.index
        }
        for a in sorted {
            var rid = referenceID(forIdentifier: a.item.identifier ?? "\(a.item.kind.rawValue)#\(a.item.index)")
            if usedIDs.contains(rid) {
                rid = BLAKE2b.hash(
                    Array("quire.import.dayone.media\u{0}\(a.item.kind.rawValue)#\(a.item.index)\u{0}\(draft.uuid)".utf8), byteCount: 16)
            }
            usedIDs.insert(rid)
            if let ident = a.item.identifier, refByIdentifier[ident] == nil { refByIdentifier[ident] = rid }
            var extra = CBORMap()
            extra[text: mediaKey] = JSONCBOR.cbor(.object(a.item.object), depthBudget: 10)
            extra[text: mediaListKey] = .text(a.item.kind.rawValue)
            extra[text: mediaIndexKey] = .int(Int64(a.item.index))
            refs.append(AttachmentReference(id: rid, blob: a.blob, mediaType: a.mediaType, fileName: a.fileName, extra: extra))
        }
        // Media another entry lists: after the entry's own, in link order.
        for l in linked where refByIdentifier[l.identifier] == nil {
            var rid = referenceID(forIdentifier: l.identifier)
            if usedIDs.contains(rid) {
                rid = BLAKE2b.hash(Array("quire.import.dayone.link\u{0}\(l.identifier)\u{0}\(draft.uuid)".utf8), byteCount: 16)
            }
            usedIDs.insert(rid)
            refByIdentifier[l.identifier] = rid
            let extra = CBORMap(text: [
                (
                    linkedMediaKey,
                    .map(
                        CBORMap(text: [
                            ("list", .text(l.kind.rawValue)), ("identifier", .text(l.identifier)), ("md5", .text(l.md5)),
                        ]))
                )
            ])
            refs.append(AttachmentReference(id: rid, blob: l.blob, mediaType: l.mediaType, fileName: l.fileName, extra: extra))
        }
        body.attachments = refs
        let linkForm = body.text
        var unresolved = Unresolved()
        // Links to attached media become Quire links.
        var replacements: [(Range<Int>, String)] = []
        for link in MomentLink.find(in: body.text) {
            if let rid = refByIdentifier[link.identifier] {
                replacements.append((link.range, attachmentLinkPrefix + hex(rid)))
            } else {
                unresolved.media.append(link.identifier)
            }
        }
        body.text = replacing(body.text, replacements)
        // Links to entries, too.
        var entryLinks: [CBOR] = []
        replacements = []
        for link in EntryLink.find(in: body.text) {
            guard let target = entryTarget(link.uuid) else {
                unresolved.entries.append(link.url)
                continue
            }
            let quire = EntryLinks.entryLink(target.bytes)
            replacements.append((link.range, link.isBare ? "<" + quire + ">" : quire))
            entryLinks.append(.map(CBORMap(text: [("url", .text(link.url)), ("bare", .bool(link.isBare))])))
        }
        body.text = replacing(body.text, replacements)

        var hints = CBORMap()
        if draft.fields.count > 0 { hints[text: "fields"] = .map(draft.fields) }
        hints[text: "order"] = .array(draft.original.keys.map { .text($0) })
        if !draft.escapesAt.isEmpty {
            hints[text: "escapes"] = .map(
                CBORMap(text: [
                    ("at", .array(draft.escapesAt.map { .int(Int64($0)) })),
                    ("digest", .bytes(digest(linkForm))),
                ]))
        }
        if !entryLinks.isEmpty { hints[text: "entryLinks"] = .array(entryLinks) }
        if let previous { hints[text: "previous"] = .text(previous) }
        if !escaped { hints[text: "dialect"] = .text("android") }
        let attachedKeys = Set(attached.map { "\($0.item.kind.rawValue)#\($0.item.index)" })
        let unattached = draft.media.filter { !attachedKeys.contains("\($0.kind.rawValue)#\($0.index)") }
        if !unattached.isEmpty {
            hints[text: "unattached"] = .array(
                unattached.map { item in
                    .map(
                        CBORMap(text: [
                            ("list", .text(item.kind.rawValue)), ("index", .int(Int64(item.index))),
                            ("item", JSONCBOR.cbor(.object(item.object), depthBudget: 9)),
                        ]))
                })
        }
        body.extra[text: extraKey] = .map(hints)
        // Originals of mapped fields the reverse mapping would not give back.
        let produced = dayOneEntry(id: draft.id, body: body, escaped: escaped, useOriginals: false)
        var originals = CBORMap()
        for m in draft.original.members where mappedKeys.contains(m.key) && draft.fields[text: m.key] == nil {
            let back = produced[m.key]
            if back == nil || !back!.isSameValue(as: m.value) {
                originals[text: m.key] = .map(
                    CBORMap(text: [
                        ("value", JSONCBOR.cbor(m.value, depthBudget: 9)),
                        ("was", .bytes(digest(back.map { $0.serialized } ?? "<absent>"))),
                    ]))
            }
        }
        if originals.count > 0 {
            hints[text: "original"] = .map(originals)
            body.extra[text: extraKey] = .map(hints)
        }
        return (body, unresolved)
    }

    static func digest(_ text: String) -> [UInt8] { BLAKE2b.hash(Array(text.utf8), byteCount: 16) }

    /// Values Day One writes for "nothing": `null`, `""`, `"(null)"`, a date
    /// at the epoch (`1970-01-01T00:00:00Z`), and an object holding only
    /// such values (`{}` included). They are never Quire values (§2.3).
    public static func isPlaceholder(_ v: JSONValue) -> Bool {
        switch v {
        case .null: return true
        case .string(let s): return s.isEmpty || s == "(null)" || (s.hasPrefix("1970-01-01") && ImportDates.milliseconds(iso: s) == 0)
        case .object(let o): return o.members.allSatisfy { isPlaceholder($0.value) }
        default: return false
        }
    }

    /// The location of an entry object; nil when it holds only placeholders.
    static func location(_ o: JSONObject) -> Location? {
        var l = Location()
        var any = false
        for m in o.members where !isPlaceholder(m.value) {
            any = true
            switch (m.key, m.value) {
            case ("latitude", .int), ("latitude", .double): l.latitude = m.value.doubleValue
            case ("longitude", .int), ("longitude", .double): l.longitude = m.value.doubleValue
            case ("altitude", .int), ("altitude", .double): l.altitude = m.value.doubleValue
            case ("placeName", .string(let s)): l.placeName = s
            case ("localityName", .string(let s)): l.locality = s
            case ("administrativeArea", .string(let s)): l.region = s
            case ("country", .string(let s)): l.country = s
            default: l.extra[text: m.key] = JSONCBOR.cbor(m.value, depthBudget: 11)
            }
        }
        return any ? l : nil
    }

    /// The weather of an entry object; nil when it holds only placeholders.
    static func weather(_ o: JSONObject) -> Weather? {
        var w = Weather()
        var any = false
        for m in o.members where !isPlaceholder(m.value) {
            any = true
            switch (m.key, m.value) {
            case ("temperatureCelsius", .int), ("temperatureCelsius", .double): w.temperatureCelsius = m.value.doubleValue
            case ("conditionsDescription", .string(let s)): w.conditions = s
            default: w.extra[text: m.key] = JSONCBOR.cbor(m.value, depthBudget: 11)
            }
        }
        return any ? w : nil
    }

    /// Whether an Apple export escaped this entry's code: the entry's
    /// `richText` (what the author typed) holds the code with one escaping
    /// level undone rather than as exported; without a readable `richText`,
    /// Apple's rule (code escaped) holds.
    static func codeWasEscaped(_ markdown: String, richText: String?) -> Bool {
        let pieces = MarkdownEscapes.escapedCode(markdown)
        guard !pieces.isEmpty, let richText, let rich = try? JSONReader.parse(Array(richText.utf8)),
            let contents = rich.objectValue?["contents"]?.arrayValue
        else { return true }
        var code = ""
        for case .object(let run) in contents {
            let attributes = run["attributes"]?.objectValue
            let isCode = attributes?["inlineCode"]?.boolValue == true || attributes?["line"]?.objectValue?["codeBlock"]?.boolValue == true
            if isCode, let text = run["text"]?.stringValue { code += text }
        }
        guard !code.isEmpty else { return true }
        func trimmed(_ s: String) -> String { s.hasSuffix("\n") ? String(s.dropLast()) : s }
        var undone = 0
        var exported = 0
        for p in pieces {
            if code.contains(trimmed(p.undone)) { undone += 1 } else if code.contains(trimmed(p.exported)) { exported += 1 }
        }
        return undone >= exported
    }

    // MARK: Backward

    /// The Day One entry object for a Quire entry, in the dialect it was
    /// imported in (Apple unless it came from an Android export): the inverse
    /// of the import mapping for an entry imported from Day One and not
    /// changed since (equal as a JSON value to the object imported), and a
    /// plain Day One entry for any other (uuid = the entry id in uppercase
    /// hex, attachment links as `dayone-moment:` links, entry links as
    /// `dayone2://view?entryId=` links, code escaped one level in the Apple
    /// dialect).
    ///
    /// Media files go where ``mediaFile(for:)`` says. The journal is not part
    /// of the object: Day One puts each journal in its own `<journal>.json`.
    public static func dayOneEntry(id: EntryID, body: EntryBody) -> JSONObject {
        dayOneEntry(id: id, body: body, escaped: nil, useOriginals: true)
    }

    /// The Day One entry object for a Quire entry written in a journal file
    /// of the Apple dialect (`escaped`: Markdown escapes as Apple writes
    /// them) or Android's (no escapes) (`Spec/import.md §5, §11`).
    public static func dayOneEntry(id: EntryID, body: EntryBody, escaped: Bool) -> JSONObject {
        dayOneEntry(id: id, body: body, escaped: escaped, useOriginals: true)
    }

    /// True when the entry was imported from a Day One for Android export.
    public static func isAndroid(_ body: EntryBody) -> Bool {
        guard case .map(let h) = body.extra[text: extraKey], case .text(let d) = h[text: "dialect"] else { return false }
        return d == "android"
    }

    /// The uuid of the entry that came before this one in its Day One
    /// journal file, as imported (for the export's order, §11).
    public static func previousUUID(_ body: EntryBody) -> String? {
        guard case .map(let h) = body.extra[text: extraKey], case .text(let p) = h[text: "previous"] else { return nil }
        return p
    }

    static func dayOneEntry(id: EntryID, body: EntryBody, escaped: Bool?, useOriginals: Bool) -> JSONObject {
        let hints: CBORMap
        if case .map(let h) = body.extra[text: extraKey] { hints = h } else { hints = CBORMap() }
        let escaped = escaped ?? !isAndroid(body)
        var order: [String] = []
        if case .array(let a) = hints[text: "order"] {
            for case .text(let k) in a { order.append(k) }
        }
        let fromDayOne = !order.isEmpty
        if order.isEmpty { order = defaultOrder }
        let present = Set(order)
        var fields = CBORMap()
        if case .map(let f) = hints[text: "fields"] { fields = f }
        var values: [String: JSONValue] = [:]

        values["uuid"] = .string(hex(id.bytes).uppercased())
        values["creationDate"] = .string(ImportDates.iso(milliseconds: body.createdMilliseconds))
        if let m = body.modifiedMilliseconds { values["modifiedDate"] = .string(ImportDates.iso(milliseconds: m)) }
        // A zone the import inferred for an entry that had none is not written back.
        let inferredOnly = fromDayOne && !present.contains("timeZone") && body.extra[text: inferredTimeZoneKey] != nil
        if !inferredOnly, !body.timeZoneIdentifier.isEmpty || present.contains("timeZone") && fromDayOne {
            values["timeZone"] = .string(body.timeZoneIdentifier)
        }
        let text = reverseText(body, hints: hints, escaped: escaped)
        if !text.isEmpty || (fromDayOne && present.contains("text")) { values["text"] = .string(text) }
        if !body.tags.isEmpty || (fromDayOne && present.contains("tags")) { values["tags"] = .array(body.tags.map { .string($0) }) }
        if body.isStarred || fromDayOne && present.contains("starred") || !fromDayOne { values["starred"] = .bool(body.isStarred) }
        let pinKey = present.contains("pinned") && !present.contains("isPinned") ? "pinned" : "isPinned"
        if body.isPinned || present.contains(pinKey) { values[pinKey] = .bool(body.isPinned) }
        if body.isAllDay || present.contains("isAllDay") { values["isAllDay"] = .bool(body.isAllDay) }
        if let l = body.location { values["location"] = .object(reverseLocation(l)) }
        if let w = body.weather { values["weather"] = .object(reverseWeather(w)) }

        // Media lists: attached references and unattached items, by position.
        var lists: [DayOneMediaKind: [(Int, JSONObject)]] = [:]
        // (Media another entry lists is in that entry's lists, not this one's.)
        for (n, ref) in body.attachments.enumerated() where ref.extra[text: linkedMediaKey] == nil {
            let (kind, index, object) = mediaObject(ref, fallbackIndex: n)
            lists[kind, default: []].append((index, object))
        }
        if case .array(let un) = hints[text: "unattached"] {
            for case .map(let m) in un {
                guard case .text(let list) = m[text: "list"], let kind = DayOneMediaKind(rawValue: list),
                    let index = m[text: "index"]?.int64Value, let item = m[text: "item"], case .object(let o) = JSONCBOR.json(item)
                else { continue }
                lists[kind, default: []].append((Int(index), o))
            }
        }
        for kind in DayOneMediaKind.allCases {
            if let items = lists[kind], !items.isEmpty {
                values[kind.listKey] = .array(items.sorted { $0.0 < $1.0 }.map { .object($0.1) })
            } else if fromDayOne, present.contains(kind.listKey), fields[text: kind.listKey] == nil {
                values[kind.listKey] = .array([])
            }
        }
        for e in fields {
            if case .text(let k) = e.key { values[k] = JSONCBOR.json(e.value) }
        }
        if useOriginals, case .map(let originals) = hints[text: "original"] {
            for e in originals {
                guard case .text(let k) = e.key, case .map(let o) = e.value, let v = o[text: "value"], case .bytes(let was) = o[text: "was"]
                else { continue }
                let now = values[k].map { $0.serialized } ?? "<absent>"
                if digest(now) == was { values[k] = JSONCBOR.json(v) }
            }
        }
        var out = JSONObject()
        for k in order {
            if let v = values[k] {
                out[k] = v
                values[k] = nil
            }
        }
        for k in defaultOrder {
            if let v = values[k] {
                out[k] = v
                values[k] = nil
            }
        }
        for k in values.keys.sorted() { out[k] = values[k] }
        return out
    }

    /// The entry text with Day One links and escapes put back: for an
    /// entry imported in the Apple dialect and unchanged, exactly the text
    /// imported; for any other, Quire's text with its links in Day One's
    /// form and, when `escaped`, one escaping level added inside code (§5).
    static func reverseText(_ body: EntryBody, hints: CBORMap, escaped: Bool) -> String {
        var text = body.text
        // Quire entry links back to Day One's, each as it was written.
        var recorded: [(url: String, bare: Bool)] = []
        if case .array(let a) = hints[text: "entryLinks"] {
            for case .map(let m) in a {
                if case .text(let url) = m[text: "url"] { recorded.append((url, m[text: "bare"] == .bool(true))) }
            }
        }
        let b0 = Array(text.utf8)
        var replacements: [(Range<Int>, String)] = []
        for (k, link) in EntryLinks.entryLinks(in: text).enumerated() {
            let target = EntryID(unchecked: link.id)
            if k < recorded.count, let found = EntryLink.find(in: recorded[k].url).first, entryID(forUUID: found.uuid) == target {
                var range = link.range
                if recorded[k].bare, range.lowerBound > 0, range.upperBound < b0.count, b0[range.lowerBound - 1] == UInt8(ascii: "<"),
                    b0[range.upperBound] == UInt8(ascii: ">")
                {
                    range = range.lowerBound - 1..<range.upperBound + 1
                }
                replacements.append((range, recorded[k].url))
            } else {
                replacements.append((link.range, "dayone2://view?entryId=" + hex(link.id).uppercased()))
            }
        }
        text = replacing(text, replacements)
        // Quire attachment links back to dayone-moment links.
        let prefix = Array(attachmentLinkPrefix.utf8)
        let b = Array(text.utf8)
        replacements = []
        var i = 0
        func isHex(_ c: UInt8) -> Bool { (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66) }
        while i + prefix.count < b.count {
            if b[i] == prefix[0], b[i..<i + prefix.count].elementsEqual(prefix) {
                // A reference id of any length (Spec/records.md: the id in hex).
                var end = i + prefix.count
                while end < b.count, isHex(b[end]) { end += 1 }
                let hexRange = i + prefix.count..<end
                let digits = String(decoding: b[hexRange], as: UTF8.self)
                if let id = bytes(fromHex: digits), let ref = body.attachments.first(where: { $0.id == id }) {
                    let (kind, identifier) = linkTarget(ref)
                    replacements.append((i..<hexRange.upperBound, kind.linkPrefix + identifier))
                    i = hexRange.upperBound
                    continue
                }
            }
            i += 1
        }
        text = replacing(text, replacements)
        if case .map(let e) = hints[text: "escapes"], case .bytes(let d) = e[text: "digest"], case .array(let at) = e[text: "at"],
            digest(text) == d
        {
            // Imported and unchanged: the escapes exactly where they were.
            return escaped ? MarkdownEscapes.restore(text, at: at.compactMap { $0.int64Value.map(Int.init) }) : text
        }
        // Apple's readers undo one level inside code: add it, so the code comes back as it is.
        return escaped ? MarkdownEscapes.escapeCode(text) : text
    }

    /// The kind and identifier a moment link to `ref` writes.
    static func linkTarget(_ ref: AttachmentReference) -> (DayOneMediaKind, String) {
        if case .map(let l) = ref.extra[text: linkedMediaKey], case .text(let list) = l[text: "list"],
            let kind = DayOneMediaKind(rawValue: list), case .text(let identifier) = l[text: "identifier"]
        {
            return (kind, identifier)
        }
        let (kind, _, object) = mediaObject(ref, fallbackIndex: 0)
        return (kind, object["identifier"]?.stringValue ?? hex(ref.id).uppercased())
    }

    /// The Day One list, position and object for a reference: the object
    /// kept at import, or one made from the reference.
    static func mediaObject(_ ref: AttachmentReference, fallbackIndex: Int) -> (DayOneMediaKind, Int, JSONObject) {
        if let kept = ref.extra[text: mediaKey], case .object(let o) = JSONCBOR.json(kept),
            case .text(let list) = ref.extra[text: mediaListKey], let kind = DayOneMediaKind(rawValue: list)
        {
            let index = ref.extra[text: mediaIndexKey]?.int64Value.map(Int.init) ?? fallbackIndex
            return (kind, index, o)
        }
        let kind = DayOneMediaKind.forMediaType(ref.mediaType)
        let o = JSONObject([
            ("identifier", .string(hex(ref.id.isEmpty ? Array(ref.blob.bytes.prefix(16)) : ref.id).uppercased())),
            ("md5", .string(hex(Array(ref.blob.bytes.prefix(16))))),
            ("type", .string(MediaTypes.fileExtension(for: ref.mediaType))),
        ])
        return (kind, 1_000_000 + fallbackIndex, o)
    }

    /// Where the Day One variant of the export writes a reference's file:
    /// the folder (`photos`, `videos`, `audios`, `pdfs`) and the file name
    /// `<md5>.<extension>`. For media imported from Day One this is the file
    /// name it had in the export; for other attachments the "md5" is the
    /// first 16 bytes of the blob id in hex (not an MD5 of the content) and
    /// the extension comes from the media type.
    public static func mediaFile(for ref: AttachmentReference) -> (folder: String, fileName: String) {
        var (kind, _, object) = mediaObject(ref, fallbackIndex: 0)
        // Media another entry lists: the same file as that entry's.
        if case .map(let l) = ref.extra[text: linkedMediaKey], case .text(let list) = l[text: "list"],
            let k = DayOneMediaKind(rawValue: list),
            case .text(let md5) = l[text: "md5"]
        {
            kind = k
            object = JSONObject([("md5", .string(md5))])
        }
        let md5 = object["md5"]?.stringValue ?? hex(Array(ref.blob.bytes.prefix(16)))
        var ext = ""
        if let dot = ref.fileName.lastIndex(of: ".") { ext = String(ref.fileName[ref.fileName.index(after: dot)...]) }
        if ext.isEmpty { ext = MediaTypes.fileExtension(for: ref.mediaType) }
        return (kind.folder, md5 + "." + ext)
    }

    static func number(_ d: Double) -> JSONValue {
        if d == d.rounded(), abs(d) < 9.0e15 { return .int(Int64(d)) }
        return .double(d)
    }

    static func reverseLocation(_ l: Location) -> JSONObject {
        var o = JSONObject()
        if let v = l.latitude { o["latitude"] = number(v) }
        if let v = l.longitude { o["longitude"] = number(v) }
        if let v = l.altitude { o["altitude"] = number(v) }
        if !l.placeName.isEmpty { o["placeName"] = .string(l.placeName) }
        if !l.locality.isEmpty { o["localityName"] = .string(l.locality) }
        if !l.region.isEmpty { o["administrativeArea"] = .string(l.region) }
        if !l.country.isEmpty { o["country"] = .string(l.country) }
        for e in l.extra { if case .text(let k) = e.key { o[k] = JSONCBOR.json(e.value) } }
        return o
    }

    static func reverseWeather(_ w: Weather) -> JSONObject {
        var o = JSONObject()
        if !w.conditions.isEmpty { o["conditionsDescription"] = .string(w.conditions) }
        if let t = w.temperatureCelsius { o["temperatureCelsius"] = number(t) }
        for e in w.extra { if case .text(let k) = e.key { o[k] = JSONCBOR.json(e.value) } }
        return o
    }
}
