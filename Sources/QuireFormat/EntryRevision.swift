/// One revision of a journal entry: the entry revision record
/// (`Spec/records.md §3`).
///
/// Every change to an entry appends a revision naming the revisions it
/// replaces (`parents`). A revision with ``isDeleted`` set is a tombstone.
/// Fields this version does not know are kept and written back
/// unchanged.
public struct EntryRevision: Sendable, Equatable {
    /// The entry this revision belongs to.
    public var entryID: EntryID
    /// This revision's own id.
    public var revisionID: RevisionID
    /// The revisions this one replaces; empty for an entry's first revision.
    @_spi(Format) public var parents: [RevisionID]
    /// When the revision was made, as a hybrid logical clock reading.
    package var clock: HybridLogicalClock
    /// The device (or recovery key) its writer claims made the revision, if
    /// recorded. Anyone who holds an epoch key can write any id here: show
    /// as the author the member whose attestation covers its commit
    /// (`EntrySnapshot.attestedBy`), never this field (`Spec/records.md §3.1`).
    @_spi(Format) public var device: DeviceID?
    /// True for a tombstone: the entry is deleted as of this revision.
    public var isDeleted: Bool
    /// The entry's content as of this revision (empty for a tombstone).
    public var body: EntryBody
    /// Fields of the revision map this version does not know.
    @_spi(Format) public var unknownFields: CBORMap

    /// A revision with the given fields.
    @_spi(Format) public init(
        entryID: EntryID, revisionID: RevisionID, parents: [RevisionID] = [], clock: HybridLogicalClock,
        device: DeviceID? = nil, isDeleted: Bool = false, body: EntryBody = EntryBody(), unknownFields: CBORMap = CBORMap()
    ) {
        self.entryID = entryID
        self.revisionID = revisionID
        self.parents = parents
        self.clock = clock
        self.device = device
        self.isDeleted = isDeleted
        self.body = body
        self.unknownFields = unknownFields
    }

    /// Decodes a revision body.
    ///
    /// - Throws: ``FormatError/malformedRecord(_:reason:)`` for bytes that
    ///   are not canonical CBOR, a missing `entry` or `revision`, or a field
    ///   of the wrong type.
    @_spi(Format) public init(decoding bytes: [UInt8], location: FrameLocation? = nil) throws(FormatError) {
        var r = try FieldReader(decodeBody(bytes, location: location), context: "entry revision", location: location)
        guard let entry = try r.id("entry", as: EntryID.self) else {
            throw .malformedRecord(location, reason: "entry revision has no \"entry\" id")
        }
        guard let revision = try r.id("revision", as: RevisionID.self) else {
            throw .malformedRecord(location, reason: "entry revision has no \"revision\" id")
        }
        entryID = entry
        revisionID = revision
        parents = try r.ids("parents", as: RevisionID.self, limit: Limits.maxParentCount) ?? []
        clock = HybridLogicalClock(rawValue: try r.unsigned("clock") ?? 0)
        device = try r.id("device", as: DeviceID.self)
        isDeleted = try r.bool("deleted") ?? false
        if let b = try r.value("body").map({ (v: CBOR) throws(FormatError) -> EntryBody in try EntryBody(v, location: location) }) {
            body = b
        } else {
            body = EntryBody()
        }
        unknownFields = r.unknown
    }

    /// The canonical CBOR encoding.
    @_spi(Format) public func encoded() -> [UInt8] {
        var w = FieldWriter(unknown: unknownFields)
        w.id("entry", entryID)
        w.id("revision", revisionID)
        w.ids("parents", parents)
        w.unsigned("clock", clock.rawValue, default: 0)
        w.id("device", device)
        w.bool("deleted", isDeleted)
        let b = body.value
        if case .map(let m) = b, m.count > 0 { w.set("body", b) }
        return w.encoded
    }

    /// The heads of one entry's revisions (`Spec/merge.md §5`): those no
    /// revision of the entry retires. A revision retires the revisions it
    /// names as parents, except that one not attested by a current member
    /// does not retire one that is: whoever holds only an epoch key cannot
    /// make a member's attested content stop being a head (and so be
    /// dropped by compaction). Order is kept.
    ///
    /// - Parameters:
    ///   - list: the entry's revisions, one per revision id.
    ///   - id: an element's revision id.
    ///   - parents: the revision ids an element names as parents.
    ///   - attested: true when an element was released from a commit a
    ///     current member attested.
    package static func heads<T>(
        of list: [T], id: (T) -> RevisionID, parents: (T) -> [RevisionID], attested: (T) -> Bool
    ) -> [T] {
        var byAttested = Set<RevisionID>()
        var byOthers = Set<RevisionID>()
        for item in list {
            if attested(item) { byAttested.formUnion(parents(item)) } else { byOthers.formUnion(parents(item)) }
        }
        return list.filter { item in
            !byAttested.contains(id(item)) && (attested(item) || !byOthers.contains(id(item)))
        }
    }
}

/// The content of an entry (`Spec/records.md §3.3`). Every field has a
/// default, so a reader accepts a body missing any of them.
public struct EntryBody: Sendable, Equatable {
    /// When the entry happened, as the body's `created` field stores it:
    /// milliseconds since the Unix epoch, UTC. Default 0. An app reads and
    /// writes it as a `Date` (`created`, in the Quire module).
    @_spi(Format) public var createdMilliseconds: Int64
    /// When the entry's content last changed, as the `modified` field
    /// stores it: milliseconds since the Unix epoch, UTC. Default: equal to
    /// `createdMilliseconds`.
    @_spi(Format) public var modifiedMilliseconds: Int64?
    /// The IANA time zone the entry was written in, as the `timeZone` field
    /// stores it, such as `"Europe/London"`. Default `""` (unknown; show in
    /// UTC).
    @_spi(Format) public var timeZoneIdentifier: String
    /// The zone's offset from UTC at `createdMilliseconds`, in seconds
    /// east, as the writer computed it (the `utcOffset` field). Default:
    /// nil (compute from `timeZoneIdentifier`).
    @_spi(Format) public var utcOffsetSeconds: Int64?
    /// The offsets a reader accepts, in seconds: ±18 hours (`Spec/records.md
    /// §3.3`); a `utcOffset` outside it is read as absent.
    @_spi(Format) public static let utcOffsetRange: ClosedRange<Int64> = -64_800...64_800
    /// True when the entry is for a whole day: its date is the calendar date
    /// of its creation instant in its time zone, and the time of day is
    /// meaningless.
    public var isAllDay: Bool
    /// The text, in Markdown (UTF-8, stored byte for byte). Default `""`.
    public var text: String
    /// Tags, in the writer's order. Default empty.
    public var tags: [String]
    /// The `mood` field: from 1 (very bad) to 5 (very good), any other
    /// integer kept as written; nil when not recorded.
    @_spi(Format) public var moodRawValue: Int64?
    /// Starred (a favourite). Default false.
    public var isStarred: Bool
    /// Pinned to the top of the journal. Default false.
    public var isPinned: Bool
    /// The journal (notebook) the entry belongs to. Default `""`, the main one.
    public var journal: String
    /// Where the entry was written.
    public var location: Location?
    /// The weather when the entry was written.
    public var weather: Weather?
    /// Attachments referenced by the entry.
    public var attachments: [AttachmentReference]
    /// Fields an importer could not map, kept so that the import is
    /// lossless (for example Day One's `"richText"`). Default empty.
    @_spi(Format) public var extra: CBORMap
    /// Fields of the body map this version does not know.
    @_spi(Format) public var unknownFields: CBORMap

    /// A body with the given fields in their wire forms; every one has a
    /// default, so `EntryBody()` is an empty body. `created` and `modified`
    /// are milliseconds since 1970 (UTC), `timeZone` an IANA zone name,
    /// `utcOffsetSeconds` the writer's offset from UTC, `mood` the raw mood
    /// value (`Spec/records.md §3.3`).
    @_spi(Format) public init(
        created: Int64 = 0, modified: Int64? = nil, timeZone: String = "", utcOffsetSeconds: Int64? = nil,
        isAllDay: Bool = false, text: String = "", tags: [String] = [], mood: Int64? = nil, isStarred: Bool = false,
        isPinned: Bool = false, journal: String = "", location: Location? = nil, weather: Weather? = nil,
        attachments: [AttachmentReference] = []
    ) {
        self.init(
            created: created, modified: modified, timeZone: timeZone, utcOffsetSeconds: utcOffsetSeconds, isAllDay: isAllDay,
            text: text, tags: tags, mood: mood, isStarred: isStarred, isPinned: isPinned, journal: journal, location: location,
            weather: weather, attachments: attachments, extra: CBORMap())
    }

    /// A body with the given fields and the importer's `extra` fields
    /// (and, when re-encoding a body read from a file, its unknown fields).
    @_spi(Format) public init(
        created: Int64 = 0, modified: Int64? = nil, timeZone: String = "", utcOffsetSeconds: Int64? = nil,
        isAllDay: Bool = false, text: String = "", tags: [String] = [], mood: Int64? = nil, isStarred: Bool = false,
        isPinned: Bool = false, journal: String = "", location: Location? = nil, weather: Weather? = nil,
        attachments: [AttachmentReference] = [], extra: CBORMap, unknownFields: CBORMap = CBORMap()
    ) {
        self.createdMilliseconds = created
        self.modifiedMilliseconds = modified
        self.timeZoneIdentifier = timeZone
        self.utcOffsetSeconds = utcOffsetSeconds
        self.isAllDay = isAllDay
        self.text = text
        self.tags = tags
        self.moodRawValue = mood
        self.isStarred = isStarred
        self.isPinned = isPinned
        self.journal = journal
        self.location = location
        self.weather = weather
        self.attachments = attachments
        self.extra = extra
        self.unknownFields = unknownFields
    }

    init(_ value: CBOR, location: FrameLocation?) throws(FormatError) {
        var r = try FieldReader(value, context: "entry body", location: location)
        createdMilliseconds = try r.int("created") ?? 0
        modifiedMilliseconds = try r.int("modified")
        timeZoneIdentifier = try r.text("timeZone") ?? ""
        utcOffsetSeconds = try r.int("utcOffset")
        // records.md §3.3: an offset no zone has is read as absent, so no
        // reader meets one (abs(Int64.min) traps).
        if let offset = utcOffsetSeconds, !Self.utcOffsetRange.contains(offset) { utcOffsetSeconds = nil }
        isAllDay = try r.bool("allDay") ?? false
        text = try r.text("text") ?? ""
        tags = try r.texts("tags") ?? []
        moodRawValue = try r.int("mood")
        isStarred = try r.bool("starred") ?? false
        isPinned = try r.bool("pinned") ?? false
        journal = try r.text("journal") ?? ""
        self.location = try r.value("location").map { (v: CBOR) throws(FormatError) -> Location in try Location(v, location: location) }
        weather = try r.value("weather").map { (v: CBOR) throws(FormatError) -> Weather in try Weather(v, location: location) }
        var refs: [AttachmentReference] = []
        for item in try r.array("attachments") ?? [] { refs.append(try AttachmentReference(item, location: location)) }
        attachments = refs
        extra = try r.map("extra") ?? CBORMap()
        unknownFields = r.unknown
    }

    var value: CBOR {
        var w = FieldWriter(unknown: unknownFields)
        w.int("created", createdMilliseconds, default: 0)
        w.int("modified", modifiedMilliseconds)
        w.text("timeZone", timeZoneIdentifier)
        w.int("utcOffset", utcOffsetSeconds)
        w.bool("allDay", isAllDay)
        w.text("text", text)
        w.texts("tags", tags)
        w.int("mood", moodRawValue)
        w.bool("starred", isStarred)
        w.bool("pinned", isPinned)
        w.text("journal", journal)
        w.set("location", location?.value)
        w.set("weather", weather?.value)
        if !attachments.isEmpty { w.set("attachments", .array(attachments.map(\.value))) }
        w.map("extra", extra)
        return w.value
    }
}

/// Where an entry was written (`Spec/records.md §3.4`).
public struct Location: Sendable, Equatable {
    /// Degrees north, WGS 84.
    public var latitude: Double?
    /// Degrees east, WGS 84.
    public var longitude: Double?
    /// Metres above sea level.
    public var altitude: Double?
    /// A place name, such as `"Seething Lane"`.
    public var placeName: String
    /// Town or city.
    public var locality: String
    /// State, county or province.
    public var region: String
    /// Country.
    public var country: String
    /// Fields an importer could not map.
    @_spi(Format) public var extra: CBORMap
    /// Fields this version does not know.
    @_spi(Format) public var unknownFields: CBORMap

    /// A location with the given fields: degrees (WGS 84), metres, names.
    public init(
        latitude: Double? = nil, longitude: Double? = nil, altitude: Double? = nil, placeName: String = "",
        locality: String = "", region: String = "", country: String = ""
    ) {
        self.init(
            latitude: latitude, longitude: longitude, altitude: altitude, placeName: placeName, locality: locality, region: region,
            country: country, extra: CBORMap())
    }

    /// A location with the given fields and the importer's `extra` fields.
    @_spi(Format) public init(
        latitude: Double? = nil, longitude: Double? = nil, altitude: Double? = nil, placeName: String = "",
        locality: String = "", region: String = "", country: String = "", extra: CBORMap,
        unknownFields: CBORMap = CBORMap()
    ) {
        self.latitude = latitude
        self.longitude = longitude
        self.altitude = altitude
        self.placeName = placeName
        self.locality = locality
        self.region = region
        self.country = country
        self.extra = extra
        self.unknownFields = unknownFields
    }

    init(_ value: CBOR, location: FrameLocation?) throws(FormatError) {
        var r = try FieldReader(value, context: "location", location: location)
        latitude = try r.double("latitude")
        longitude = try r.double("longitude")
        altitude = try r.double("altitude")
        placeName = try r.text("placeName") ?? ""
        locality = try r.text("locality") ?? ""
        region = try r.text("region") ?? ""
        country = try r.text("country") ?? ""
        extra = try r.map("extra") ?? CBORMap()
        unknownFields = r.unknown
    }

    var value: CBOR {
        var w = FieldWriter(unknown: unknownFields)
        w.double("latitude", latitude)
        w.double("longitude", longitude)
        w.double("altitude", altitude)
        w.text("placeName", placeName)
        w.text("locality", locality)
        w.text("region", region)
        w.text("country", country)
        w.map("extra", extra)
        return w.value
    }
}

/// The weather when an entry was written (`Spec/records.md §3.5`).
public struct Weather: Sendable, Equatable {
    /// Temperature in degrees Celsius.
    public var temperatureCelsius: Double?
    /// A description, such as `"Light rain"`.
    public var conditions: String
    /// Fields an importer could not map (for example a provider's code).
    @_spi(Format) public var extra: CBORMap
    /// Fields this version does not know.
    @_spi(Format) public var unknownFields: CBORMap

    /// Weather with the given fields: degrees Celsius, a description.
    public init(temperatureCelsius: Double? = nil, conditions: String = "") {
        self.init(temperatureCelsius: temperatureCelsius, conditions: conditions, extra: CBORMap())
    }

    /// Weather with the given fields and the importer's `extra` fields.
    @_spi(Format) public init(
        temperatureCelsius: Double? = nil, conditions: String = "", extra: CBORMap, unknownFields: CBORMap = CBORMap()
    ) {
        self.temperatureCelsius = temperatureCelsius
        self.conditions = conditions
        self.extra = extra
        self.unknownFields = unknownFields
    }

    init(_ value: CBOR, location: FrameLocation?) throws(FormatError) {
        var r = try FieldReader(value, context: "weather", location: location)
        temperatureCelsius = try r.double("temperatureC")
        conditions = try r.text("conditions") ?? ""
        extra = try r.map("extra") ?? CBORMap()
        unknownFields = r.unknown
    }

    var value: CBOR {
        var w = FieldWriter(unknown: unknownFields)
        w.double("temperatureC", temperatureCelsius)
        w.text("conditions", conditions)
        w.map("extra", extra)
        return w.value
    }
}

/// An entry's reference to an attachment (`Spec/records.md §3.6`).
public struct AttachmentReference: Sendable, Equatable {
    /// The reference's own id, unique within the entry; text links to the
    /// attachment as `quire-attachment://<hex id>`. Made by the library
    /// when an app makes a reference.
    @_spi(Format) public var id: [UInt8]
    /// The content's blob id.
    public var blob: BlobID
    /// The media type, such as `"image/jpeg"`. Default `"application/octet-stream"`.
    public var mediaType: String
    /// The original file name. Default `""`.
    public var fileName: String
    /// Fields an importer could not map (for example Day One's photo metadata).
    @_spi(Format) public var extra: CBORMap
    /// Fields this version does not know.
    @_spi(Format) public var unknownFields: CBORMap

    /// A reference with the given fields.
    @_spi(Format) public init(
        id: [UInt8], blob: BlobID, mediaType: String = "application/octet-stream", fileName: String = "",
        extra: CBORMap = CBORMap(), unknownFields: CBORMap = CBORMap()
    ) {
        self.id = id
        self.blob = blob
        self.mediaType = mediaType
        self.fileName = fileName
        self.extra = extra
        self.unknownFields = unknownFields
    }

    init(_ value: CBOR, location: FrameLocation?) throws(FormatError) {
        var r = try FieldReader(value, context: "attachment reference", location: location)
        guard let blob = try r.id("blob", as: BlobID.self) else {
            throw .malformedRecord(location, reason: "attachment reference has no \"blob\" id")
        }
        id = try r.bytes("id") ?? []
        self.blob = blob
        mediaType = try r.text("type") ?? "application/octet-stream"
        fileName = try r.text("name") ?? ""
        extra = try r.map("extra") ?? CBORMap()
        unknownFields = r.unknown
    }

    var value: CBOR {
        var w = FieldWriter(unknown: unknownFields)
        if !id.isEmpty { w.bytes("id", id) }
        w.id("blob", blob)
        w.text("type", mediaType, default: "application/octet-stream")
        w.text("name", fileName)
        w.map("extra", extra)
        return w.value
    }
}
