@_spi(Crypto) import QuireCrypto
@_spi(Format) import QuireFormat
import Testing

/// Encodes a map of text keys.
func encodeMap(_ pairs: [(String, CBOR)]) -> [UInt8] {
    CBOREncoder.encode(.map(CBORMap(text: pairs)))
}

func isMalformedRecord(_ error: FormatError) -> Bool {
    if case .malformedRecord = error { return true }
    return false
}

@Suite struct EntryRevisionTests {
    static let random = SeededRandom(label: "records")

    static func fullRevision() -> EntryRevision {
        let r = SeededRandom(label: "full revision")
        var extra = CBORMap()
        extra[text: "richText"] = .text("{\"ops\":[]}")
        extra[.unsigned(1)] = .bytes([1, 2])
        let body = EntryBody(
            created: 1_700_000_000_123, modified: 1_700_000_999_000, timeZone: "Europe/London", utcOffsetSeconds: -3600,
            isAllDay: true, text: "Up betimes. *Markdown* and ✍️ emoji.", tags: ["work", "navy", "ü"], mood: 4, isStarred: true,
            isPinned: true, journal: "Diary",
            location: Location(
                latitude: 51.5098, longitude: -0.0766, altitude: 12.5, placeName: "Seething Lane", locality: "London",
                region: "Greater London", country: "England", extra: CBORMap(text: [("accuracy", .double(5))]),
                unknownFields: CBORMap(text: [("zLocation", .bool(true))])),
            weather: Weather(
                temperatureCelsius: -2.5, conditions: "Snow", extra: CBORMap(text: [("code", .unsigned(71))]),
                unknownFields: CBORMap(text: [("wind", .text("NE"))])),
            attachments: [
                AttachmentReference(
                    id: [9, 9, 9], blob: BlobID(using: r), mediaType: "image/jpeg", fileName: "fire.jpg",
                    extra: CBORMap(text: [("exif", .bytes([0xff]))]), unknownFields: CBORMap(text: [("caption", .text("The fire"))])),
                AttachmentReference(id: [], blob: BlobID(using: r)),
            ],
            extra: extra,
            unknownFields: CBORMap(text: [("future", .array([.unsigned(1), .null]))]))
        return EntryRevision(
            entryID: EntryID(using: r), revisionID: RevisionID(using: r), parents: [RevisionID(using: r), RevisionID(using: r)],
            clock: HybridLogicalClock(milliseconds: 1_700_000_000_123, counter: 7), device: DeviceID(using: r), isDeleted: true,
            body: body, unknownFields: CBORMap([(.text("zz"), .text("kept")), (.negative(4), .bool(false))]))
    }

    @Test func roundTripWithAllFields() throws {
        let revision = Self.fullRevision()
        let encoded = revision.encoded()
        let decoded = try EntryRevision(decoding: encoded)
        #expect(decoded == revision)
        #expect(decoded.body.location?.placeName == "Seething Lane")
        #expect(decoded.body.attachments.count == 2)
        #expect(decoded.body.attachments[1].mediaType == "application/octet-stream")
        #expect(decoded.unknownFields[text: "zz"] == .text("kept"))
        #expect(decoded.encoded() == encoded)
        // Canonical: the decoder accepts it and re-encoding is stable.
        #expect(CBOREncoder.encode(try CBORDecoder.decode(encoded)) == encoded)
    }

    @Test func minimalEncodingKnownAnswer() throws {
        let revision = EntryRevision(
            entryID: try EntryID(bytes: counting(16)), revisionID: try RevisionID(bytes: counting(16, from: 16)),
            clock: HybridLogicalClock(rawValue: 0))
        // {"entry": h'00…0f', "revision": h'10…1f'}; defaults are left out.
        #expect(hex(revision.encoded()) == "a2" + "65656e747279" + "50" + hex(counting(16)) + "687265766973696f6e" + "50" + hex(counting(16, from: 16)))
        let decoded = try EntryRevision(decoding: revision.encoded())
        #expect(decoded.parents == [])
        #expect(decoded.clock == HybridLogicalClock(rawValue: 0))
        #expect(decoded.device == nil)
        #expect(!decoded.isDeleted)
        #expect(decoded.body == EntryBody())
        #expect(decoded.unknownFields.count == 0)
    }

    @Test func emptyBodyFieldsTakeDefaults() throws {
        let bytes = encodeMap([
            ("entry", .bytes(counting(16))), ("revision", .bytes(counting(16))), ("body", .map(CBORMap())),
        ])
        let body = try EntryRevision(decoding: bytes).body
        #expect(body.createdMilliseconds == 0)
        #expect(body.modifiedMilliseconds == nil)
        #expect(body.timeZoneIdentifier == "")
        #expect(body.utcOffsetSeconds == nil)
        #expect(!body.isAllDay)
        #expect(body.text == "")
        #expect(body.tags == [])
        #expect(body.moodRawValue == nil)
        #expect(!body.isStarred && !body.isPinned)
        #expect(body.journal == "")
        #expect(body.location == nil && body.weather == nil)
        #expect(body.attachments == [])
        #expect(body.extra.count == 0 && body.unknownFields.count == 0)
        // An empty body is left out when encoding again.
        let again = try EntryRevision(decoding: bytes).encoded()
        #expect(again == encodeMap([("entry", .bytes(counting(16))), ("revision", .bytes(counting(16)))]))
    }

    @Test func unknownFieldsAreKeptByteForByte() throws {
        // A canonical record written by a newer version, with unknown fields
        // at every level (and no field holding its default).
        let attachment = CBORMap(text: [
            ("blob", .bytes(counting(32))), ("type", .text("audio/ogg")), ("duration", .double(12.5)),
        ])
        let location = CBORMap(text: [("latitude", .double(1.5)), ("floor", .unsigned(3))])
        let weather = CBORMap(text: [("conditions", .text("Fog")), ("visibility", .unsigned(200))])
        let body = CBORMap(text: [
            ("text", .text("x")), ("attachments", .array([.map(attachment)])), ("location", .map(location)),
            ("weather", .map(weather)), ("sentiment", .double(0.25)),
        ])
        var top = CBORMap(text: [
            ("entry", .bytes(counting(16))), ("revision", .bytes(counting(16, from: 1))), ("body", .map(body)),
            ("clock", .unsigned(99)), ("aaa", .text("first")), ("zzzz", .map(CBORMap(text: [("nested", .null)]))),
        ])
        top[.unsigned(5)] = .text("integer key")
        top[.bytes([1])] = .bool(true)
        let input = CBOREncoder.encode(.map(top))
        let revision = try EntryRevision(decoding: input)
        #expect(revision.unknownFields.count == 4)
        #expect(revision.unknownFields[text: "aaa"] == .text("first"))
        #expect(revision.unknownFields[.unsigned(5)] == .text("integer key"))
        #expect(revision.body.unknownFields[text: "sentiment"] == .double(0.25))
        #expect(revision.body.location?.unknownFields[text: "floor"] == .unsigned(3))
        #expect(revision.body.weather?.unknownFields[text: "visibility"] == .unsigned(200))
        #expect(revision.body.attachments[0].unknownFields[text: "duration"] == .double(12.5))
        #expect(revision.encoded() == input)
    }

    static let wrongTypes: [(String, CBOR)] = [
        ("entry", .text("not bytes")),
        ("entry", .bytes(counting(15))),
        ("revision", .bytes(counting(17))),
        ("parents", .bytes(counting(16))),
        ("parents", .array([.bytes(counting(15))])),
        ("parents", .array([.text("x")])),
        ("clock", .text("now")),
        ("clock", .negative(0)),
        ("device", .bytes(counting(32))),
        ("deleted", .unsigned(1)),
        ("body", .array([])),
        ("body", .text("hello")),
    ]

    @Test(arguments: wrongTypes)
    func wrongTopLevelTypesAreMalformed(field: String, value: CBOR) {
        var map = CBORMap(text: [("entry", .bytes(counting(16))), ("revision", .bytes(counting(16)))])
        map[text: field] = value
        let error = #expect(throws: FormatError.self) {
            try EntryRevision(decoding: CBOREncoder.encode(.map(map)))
        }
        #expect(error.map(isMalformedRecord) == true, "\(String(describing: error))")
    }

    static let wrongBodyTypes: [(String, CBOR)] = [
        ("created", .text("yesterday")), ("created", .unsigned(UInt64(Int64.max) + 1)), ("modified", .double(1)),
        ("timeZone", .unsigned(0)), ("utcOffset", .text("+01:00")), ("allDay", .null), ("text", .bytes([])),
        ("tags", .text("work")), ("tags", .array([.unsigned(1)])), ("mood", .bool(true)), ("starred", .unsigned(1)),
        ("pinned", .text("yes")), ("journal", .array([])), ("location", .text("London")),
        ("location", .map(CBORMap(text: [("latitude", .text("51"))]))), ("weather", .map(CBORMap(text: [("temperatureC", .null)]))),
        ("attachments", .map(CBORMap())), ("attachments", .array([.map(CBORMap())])),
        ("attachments", .array([.map(CBORMap(text: [("blob", .bytes(counting(16)))]))])),
        ("attachments", .array([.map(CBORMap(text: [("blob", .bytes(counting(32))), ("name", .unsigned(1))]))])),
        ("extra", .array([])),
    ]

    @Test(arguments: wrongBodyTypes)
    func wrongBodyTypesAreMalformed(field: String, value: CBOR) {
        let bytes = encodeMap([
            ("entry", .bytes(counting(16))), ("revision", .bytes(counting(16))), ("body", .map(CBORMap(text: [(field, value)]))),
        ])
        let error = #expect(throws: FormatError.self) {
            try EntryRevision(decoding: bytes)
        }
        #expect(error.map(isMalformedRecord) == true, "\(String(describing: error))")
    }

    @Test func missingIDsAreMalformed() {
        let location = FrameLocation(offset: 100, index: 3)
        #expect(throws: FormatError.malformedRecord(location, reason: "entry revision has no \"entry\" id")) {
            try EntryRevision(decoding: encodeMap([("revision", .bytes(counting(16)))]), location: location)
        }
        #expect(throws: FormatError.malformedRecord(nil, reason: "entry revision has no \"revision\" id")) {
            try EntryRevision(decoding: encodeMap([("entry", .bytes(counting(16)))]))
        }
        #expect(throws: FormatError.malformedRecord(nil, reason: "entry revision must be a map")) {
            try EntryRevision(decoding: CBOREncoder.encode(.array([])))
        }
        #expect(throws: FormatError.malformedRecord(nil, reason: "entry revision field \"entry\" must be 16 bytes")) {
            try EntryRevision(decoding: encodeMap([("entry", .bytes(counting(15))), ("revision", .bytes(counting(16)))]))
        }
    }

    @Test func nonCanonicalBytesAreMalformed() {
        // Keys out of order: "revision" before "entry".
        let bad = hexBytes("a2" + "687265766973696f6e" + "50" + hex(counting(16)) + "65656e747279" + "50" + hex(counting(16)))
        #expect(throws: FormatError.malformedRecord(nil, reason: "map keys are duplicated or not in canonical order at byte 27")) {
            try EntryRevision(decoding: bad)
        }
        #expect(throws: FormatError.malformedRecord(nil, reason: "unexpected end of input at byte 0")) {
            try EntryRevision(decoding: [])
        }
    }

    @Test func tooManyParentsAreMalformed() {
        let parents = CBOR.array((0..<65).map { _ in .bytes(counting(16)) })
        #expect(throws: FormatError.sizeLimitExceeded(nil, what: "entry revision \"parents\" count", size: 65, limit: 64)) {
            try EntryRevision(decoding: encodeMap([("entry", .bytes(counting(16))), ("revision", .bytes(counting(16))), ("parents", parents)]))
        }
        let ok = CBOR.array((0..<64).map { .bytes(counting(16, from: $0)) })
        let decoded = try? EntryRevision(decoding: encodeMap([("entry", .bytes(counting(16))), ("revision", .bytes(counting(16))), ("parents", ok)]))
        #expect(decoded?.parents.count == 64)
    }

    @Test func floatFieldsAcceptIntegers() throws {
        let location = CBORMap(text: [("latitude", .unsigned(51)), ("longitude", .negative(0)), ("altitude", .int(-430))])
        let bytes = encodeMap([
            ("entry", .bytes(counting(16))), ("revision", .bytes(counting(16))), ("body", .map(CBORMap(text: [("location", .map(location))]))),
        ])
        let loc = try #require(try EntryRevision(decoding: bytes).body.location)
        #expect(loc.latitude == 51)
        #expect(loc.longitude == -1)
        #expect(loc.altitude == -430)
    }

    @Test
    func floatFieldsAcceptLargeNegativeIntegers() throws {
        let location = CBORMap(text: [("latitude", .negative(UInt64.max))])
        let bytes = encodeMap([
            ("entry", .bytes(counting(16))), ("revision", .bytes(counting(16))), ("body", .map(CBORMap(text: [("location", .map(location))]))),
        ])
        let loc = try #require(try EntryRevision(decoding: bytes).body.location)
        #expect(loc.latitude == -18_446_744_073_709_551_616.0)
    }
}

@Suite struct BlobManifestTests {
    @Test func roundTripWithAllFields() throws {
        let r = SeededRandom(label: "manifest")
        let m = BlobManifest(
            blob: BlobID(using: r), stream: StreamID(using: r), byteCount: 200_000, mediaType: "image/png",
            unknownFields: CBORMap(text: [("width", .unsigned(640))]))
        let decoded = try BlobManifest(decoding: m.encoded())
        #expect(decoded == m)
        #expect(decoded.encoded() == m.encoded())
    }

    @Test func defaultsAndKnownAnswer() throws {
        let m = BlobManifest(blob: try BlobID(bytes: counting(32)), stream: try StreamID(bytes: counting(16)), byteCount: 0)
        // {"blob": h'00…1f', "stream": h'00…0f'}: size 0 and the default type are left out.
        #expect(hex(m.encoded()) == "a2" + "64626c6f62" + "5820" + hex(counting(32)) + "6673747265616d" + "50" + hex(counting(16)))
        let decoded = try BlobManifest(decoding: m.encoded())
        #expect(decoded.byteCount == 0)
        #expect(decoded.mediaType == "application/octet-stream")
        #expect(decoded.unknownFields.count == 0)
    }

    // ⌈Padmé(size + 1) / 65,536⌉: the whole stream, content ‖ 0x80 ‖ zeros,
    // is cut into chunks (Spec/format.md §7.1). Padmé values by hand: 65,537
    // → 67,584; 196,609 → 200,704; 196,608 → 196,608; 2⁴⁰ + 1 → 2⁴⁰ + 2³⁴.
    static let chunkCounts: [(UInt64, UInt64)] = [
        (0, 1), (1, 1), (65535, 1), (65536, 2), (65537, 2), (131_071, 2), (196_607, 3), (196_608, 4), (196_609, 4),
        (1 << 40, (1 << 24) + (1 << 18)),
    ]

    @Test(arguments: chunkCounts)
    func chunkCount(size: UInt64, chunks: UInt64) throws {
        let m = BlobManifest(blob: try BlobID(bytes: counting(32)), stream: try StreamID(bytes: counting(16)), byteCount: size)
        #expect(m.chunkCount == chunks)
        #expect(Padding.chunkCount(contentByteCount: size) == chunks)
        if size < 1 << 30 { #expect(UInt64(referencePadme(Int(size) + 1) + 65535) / 65536 == chunks) }
    }

    @Test func aliases() throws {
        let r = SeededRandom(label: "aliases")
        let blob = BlobID(using: r), old1 = BlobID(using: r), old2 = BlobID(using: r)
        let m = BlobManifest(blob: blob, stream: StreamID(using: r), byteCount: 10, aliases: [old1, old2])
        let decoded = try BlobManifest(decoding: m.encoded())
        #expect(decoded == m)
        #expect(decoded.aliases == [old1, old2])
        #expect(m.answers(to: blob) && m.answers(to: old1) && m.answers(to: old2))
        #expect(!m.answers(to: BlobID(using: r)))
        // Empty aliases are left out; the field is "aliases".
        let plain = BlobManifest(blob: blob, stream: m.stream, byteCount: 10)
        #expect(try CBORDecoder.decode(plain.encoded()) == .map(CBORMap(text: [
            ("blob", .bytes(blob.bytes)), ("stream", .bytes(m.stream.bytes)), ("size", .unsigned(10)),
        ])))
        #expect(try CBORDecoder.decode(m.encoded()) == .map(CBORMap(text: [
            ("aliases", .array([.bytes(old1.bytes), .bytes(old2.bytes)])), ("blob", .bytes(blob.bytes)), ("stream", .bytes(m.stream.bytes)),
            ("size", .unsigned(10)),
        ])))
        // At most 64, each 32 bytes.
        let base = [("blob", CBOR.bytes(counting(32))), ("stream", CBOR.bytes(counting(16)))]
        let sixtyFour = CBOR.array((0..<64).map { .bytes(counting(32, from: $0)) })
        #expect(try BlobManifest(decoding: encodeMap(base + [("aliases", sixtyFour)])).aliases.count == 64)
        let sixtyFive = CBOR.array((0..<65).map { .bytes(counting(32, from: $0)) })
        #expect(throws: FormatError.sizeLimitExceeded(nil, what: "attachment manifest \"aliases\" count", size: 65, limit: 64)) {
            try BlobManifest(decoding: encodeMap(base + [("aliases", sixtyFive)]))
        }
        #expect(throws: FormatError.malformedRecord(nil, reason: "attachment manifest field \"aliases\" must be a list of 32-byte ids")) {
            try BlobManifest(decoding: encodeMap(base + [("aliases", .array([.bytes(counting(16))]))]))
        }
    }

    @Test func unknownFieldsKeptByteForByte() throws {
        var map = CBORMap(text: [
            ("blob", .bytes(counting(32))), ("stream", .bytes(counting(16))), ("size", .unsigned(5)), ("type", .text("text/plain")),
            ("sha256", .bytes(counting(32, from: 7))), ("a", .null),
        ])
        map[.unsigned(0)] = .unsigned(0)
        let input = CBOREncoder.encode(.map(map))
        let m = try BlobManifest(decoding: input)
        #expect(m.unknownFields.count == 3)
        #expect(m.encoded() == input)
    }

    @Test func malformedManifests() {
        let blob = CBOR.bytes(counting(32)), stream = CBOR.bytes(counting(16))
        #expect(throws: FormatError.malformedRecord(nil, reason: "attachment manifest needs \"blob\" and \"stream\"")) {
            try BlobManifest(decoding: encodeMap([("stream", stream)]))
        }
        #expect(throws: FormatError.malformedRecord(nil, reason: "attachment manifest needs \"blob\" and \"stream\"")) {
            try BlobManifest(decoding: encodeMap([("blob", blob)]))
        }
        #expect(throws: FormatError.malformedRecord(nil, reason: "attachment manifest field \"blob\" must be 32 bytes")) {
            try BlobManifest(decoding: encodeMap([("blob", .bytes(counting(16))), ("stream", stream)]))
        }
        #expect(throws: FormatError.malformedRecord(nil, reason: "attachment manifest field \"size\" must be an unsigned integer")) {
            try BlobManifest(decoding: encodeMap([("blob", blob), ("stream", stream), ("size", .negative(0))]))
        }
        #expect(throws: FormatError.malformedRecord(nil, reason: "attachment manifest field \"type\" must be text")) {
            try BlobManifest(decoding: encodeMap([("blob", blob), ("stream", stream), ("type", .bytes([]))]))
        }
        #expect(throws: FormatError.sizeLimitExceeded(nil, what: "attachment size", size: (1 << 40) + 1, limit: 1 << 40)) {
            try BlobManifest(decoding: encodeMap([("blob", blob), ("stream", stream), ("size", .unsigned((1 << 40) + 1))]))
        }
        #expect((try? BlobManifest(decoding: encodeMap([("blob", blob), ("stream", stream), ("size", .unsigned(1 << 40))])))?.byteCount == 1 << 40)
    }
}

@Suite struct ProfileTests {
    @Test func roundTripWithAllFields() throws {
        let p = Profile(
            name: "Pepys", about: "Diary of Samuel Pepys", settings: CBORMap(text: [("theme", .text("dark")), ("fontSize", .unsigned(14))]),
            clock: HybridLogicalClock(milliseconds: 1_000, counter: 2), device: DeviceID(using: SeededRandom(label: "profile")),
            unknownFields: CBORMap(text: [("avatar", .bytes([1, 2, 3]))]))
        let decoded = try Profile(decoding: p.encoded())
        #expect(decoded == p)
        #expect(decoded.encoded() == p.encoded())
    }

    @Test func defaults() throws {
        let p = try Profile(decoding: encodeMap([]))
        #expect(p == Profile(name: "", clock: HybridLogicalClock(rawValue: 0)))
        #expect(p.encoded() == [0xa0])
        #expect(try Profile(decoding: encodeMap([("name", .text("J"))])).name == "J")
    }

    @Test func unknownFieldsKeptAndWrongTypes() throws {
        let input = encodeMap([("name", .text("J")), ("zzz", .array([.unsigned(1)])), ("clock", .unsigned(5)), ("about", .text("a"))])
        let p = try Profile(decoding: input)
        #expect(p.unknownFields[text: "zzz"] == .array([.unsigned(1)]))
        #expect(p.encoded() == input)
        for (field, value) in [("name", CBOR.unsigned(1)), ("about", .null), ("settings", .array([])), ("clock", .text("x")), ("device", .bytes([1]))] {
            let error = #expect(throws: FormatError.self) {
                try Profile(decoding: encodeMap([(field, value)]))
            }
            #expect(error.map(isMalformedRecord) == true, "\(String(describing: error))")
        }
    }
}

/// Decodes keyring content from bytes.
func decodeContent(_ bytes: [UInt8]) -> Result<KeyringContent, FormatError> {
    bytes.withUnsafeBytes { raw in
        Result { () throws(FormatError) -> KeyringContent in try KeyringContent(decoding: raw, location: nil) }
    }
}

@Suite struct KeyringRecordTests {
    static let location = FrameLocation(offset: 64, index: 0)
    /// The signer: Ed25519 key pair of seed 60…7f.
    static let signer = keyPair(seed: counting(32, from: 0x60))

    static func allSlots() -> [KeySlot] {
        let r = SeededRandom(label: "slots")
        return [
            .device(box: r.bytes(100)),
            .recovery(box: r.bytes(100)),
            .passphrase(salt: r.bytes(16), opsLimit: 3, memLimitBytes: 1 << 28, publicKey: r.bytes(32), box: r.bytes(100)),
            .escrow(box: r.bytes(100)),
            .unknown(kind: "hardware", fields: CBORMap(text: [("kind", .text("hardware")), ("serial", .unsigned(42))])),
        ]
    }

    static func publicPart(key: EpochKey, parents: [KeyringID] = [], links: [[UInt8]] = [], slots: [KeySlot] = KeyringRecordTests.allSlots()) -> KeyringPublic {
        KeyringPublic(
            epoch: key.epoch, keyCommit: key.commitment, parents: parents, links: links, isEscrowFree: false,
            slotEntries: slots.map { StoredSlot(slot: $0) })
    }

    @Test func slotConstantsAndKinds() {
        // A box seals K (32) ‖ vault id (16) ‖ u32(epoch) (4) with 48 bytes of overhead.
        #expect(KeySlot.boxByteCount == 100)
        #expect(Self.allSlots().map(\.kind) == ["device", "recovery", "passphrase", "escrow", "hardware"])
        #expect(Self.allSlots().map { $0.box?.count } == [100, 100, 100, 100, nil])
    }

    @Test func publicPartRoundTripWithAllFields() throws {
        let r = SeededRandom(label: "public")
        let pub = KeyringPublic(
            epoch: 4_294_967_295, keyCommit: r.bytes(32), parents: [KeyringID(using: r), KeyringID(using: r)],
            links: [r.bytes(KeyringRecord.linkByteCount), r.bytes(KeyringRecord.linkByteCount)], isEscrowFree: true,
            requiredSlotKinds: ["pq-hybrid"],
            slotEntries: Self.allSlots().map { StoredSlot(slot: $0) } + [StoredSlot(slot: .device(box: r.bytes(100)), unknownFields: CBORMap(text: [("hint", .text("phone"))]))],
            unknownFields: CBORMap(text: [("policy", .text("strict"))]))
        let encoded = pub.encoded()
        let decoded = try KeyringPublic(decoding: encoded, location: nil)
        #expect(decoded == pub)
        #expect(decoded.epoch == UInt32.max)
        #expect(decoded.slotEntries.last?.unknownFields[text: "hint"] == .text("phone"))
        #expect(decoded.encoded() == encoded)
    }

    @Test func publicPartDefaults() throws {
        // Only epoch and keyCommit are required (Spec/records.md §6.1).
        let minimal = try KeyringPublic(decoding: encodeMap([("epoch", .unsigned(1)), ("keyCommit", .bytes(counting(32)))]), location: nil)
        #expect(minimal == KeyringPublic(epoch: 1, keyCommit: counting(32), parents: [], links: [], isEscrowFree: false, slotEntries: []))
        #expect(minimal.requiredSlotKinds.isEmpty && minimal.unknownFields.count == 0)
    }

    @Test func publicPartUnknownFieldsKeptByteForByte() throws {
        let input = encodeMap([
            ("epoch", .unsigned(2)), ("keyCommit", .bytes(counting(32))),
            ("slots", .array([.map(CBORMap(text: [("kind", .text("future")), ("data", .bytes([1]))]))])),
            ("escrowFree", .bool(true)), ("quorum", .unsigned(2)),
        ])
        let pub = try KeyringPublic(decoding: input, location: nil)
        #expect(pub.slots == [.unknown(kind: "future", fields: CBORMap(text: [("kind", .text("future")), ("data", .bytes([1]))]))])
        #expect(pub.unknownFields[text: "quorum"] == .unsigned(2))
        #expect(pub.encoded() == input)
    }

    @Test func publicPartRules() {
        let commit = ("keyCommit", CBOR.bytes(counting(32)))
        func decode(_ pairs: [(String, CBOR)]) -> Result<KeyringPublic, FormatError> {
            Result { () throws(FormatError) -> KeyringPublic in try KeyringPublic(decoding: encodeMap(pairs), location: nil) }
        }
        let noEpoch = FormatError.malformedRecord(nil, reason: "a keyring needs an epoch from 1 to 4294967295")
        #expect(decode([commit]) == .failure(noEpoch))
        #expect(decode([("epoch", .unsigned(0)), commit]) == .failure(noEpoch))
        #expect(decode([("epoch", .unsigned(1 << 32)), commit]) == .failure(noEpoch))
        #expect(decode([("epoch", .unsigned(1))]) == .failure(.malformedRecord(nil, reason: "a keyring needs a 32-byte keyCommit")))
        #expect(decode([("epoch", .unsigned(1)), ("keyCommit", .bytes(counting(31)))])
            == .failure(.malformedRecord(nil, reason: "keyring field \"keyCommit\" must be 32 bytes")))
        let p1 = CBOR.bytes(counting(32)), p2 = CBOR.bytes(counting(32, from: 1))
        let link = CBOR.bytes(counting(KeyringRecord.linkByteCount))
        #expect(decode([("epoch", .unsigned(2)), commit, ("parents", .array([p1, p1])), ("links", .array([link, link]))])
            == .failure(.malformedRecord(nil, reason: "a keyring names a parent twice")))
        #expect(decode([("epoch", .unsigned(2)), commit, ("parents", .array([p1, p2])), ("links", .array([link]))])
            == .failure(.malformedRecord(nil, reason: "a keyring needs one link per parent (2), it has 1")))
        #expect(decode([("epoch", .unsigned(2)), commit, ("links", .array([link]))])
            == .failure(.malformedRecord(nil, reason: "a keyring needs one link per parent (0), it has 1")))
        #expect(decode([("epoch", .unsigned(2)), commit, ("parents", .array([p1])), ("links", .array([.bytes(counting(32))]))])
            == .failure(.malformedRecord(nil, reason: "a keyring link must be \(KeyringRecord.linkByteCount) bytes")))
        #expect(decode([("epoch", .unsigned(2)), commit, ("parents", .array([.bytes(counting(16))])), ("links", .array([link]))])
            == .failure(.malformedRecord(nil, reason: "keyring field \"parents\" must be a list of 32-byte ids")))
        let tooManyParents = CBOR.array((0..<65).map { .bytes(counting(32, from: $0)) })
        #expect(decode([("epoch", .unsigned(2)), commit, ("parents", tooManyParents)])
            == .failure(.sizeLimitExceeded(nil, what: "keyring \"parents\" count", size: 65, limit: 64)))
        let required = CBOR.array((0..<17).map { .text("kind\($0)") })
        #expect(decode([("epoch", .unsigned(1)), commit, ("required", required)])
            == .failure(.sizeLimitExceeded(nil, what: "required slot kind count", size: 17, limit: 16)))
        // The vault salt is sealed in C since the tenth review's R10-8: in P
        // it is a field this version does not define, kept and not checked.
        let publicSalt = try? decode([("epoch", .unsigned(1)), commit, ("vaultSalt", .bytes(counting(15)))]).get()
        #expect(publicSalt?.unknownFields[text: "vaultSalt"] == .bytes(counting(15)))
        #expect(decode([("epoch", .unsigned(1)), commit, ("escrowFree", .unsigned(1))])
            == .failure(.malformedRecord(nil, reason: "keyring field \"escrowFree\" must be true or false")))
    }

    @Test func malformedSlots() {
        func decode(_ slot: CBORMap) -> Result<KeyringPublic, FormatError> {
            Result { () throws(FormatError) -> KeyringPublic in
                try KeyringPublic(
                    decoding: encodeMap([("epoch", .unsigned(1)), ("keyCommit", .bytes(counting(32))), ("slots", .array([.map(slot)]))]), location: nil)
            }
        }
        #expect(decode(CBORMap(text: [("box", .bytes(counting(100)))])) == .failure(.malformedRecord(nil, reason: "key slot has no \"kind\"")))
        #expect(decode(CBORMap(text: [("kind", .text("device")), ("box", .bytes(counting(99)))]))
            == .failure(.malformedRecord(nil, reason: "key slot field \"box\" must be 100 bytes")))
        #expect(decode(CBORMap(text: [("kind", .text("device")), ("box", .bytes(counting(98)))]))
            == .failure(.malformedRecord(nil, reason: "key slot field \"box\" must be 100 bytes")))
        #expect(decode(CBORMap(text: [("kind", .text("escrow"))]))
            == .failure(.malformedRecord(nil, reason: "escrow slot needs a 100-byte \"box\"")))
        #expect(decode(CBORMap(text: [("kind", .text("recovery")), ("nonce", .bytes(counting(24)))]))
            == .failure(.malformedRecord(nil, reason: "recovery slot needs a 100-byte \"box\"")))
        #expect(decode(CBORMap(text: [
            ("kind", .text("passphrase")), ("salt", .bytes(counting(16))), ("memLimit", .unsigned(8192)), ("publicKey", .bytes(counting(32))),
            ("box", .bytes(counting(100))),
        ])) == .failure(.malformedRecord(nil, reason: "passphrase slot needs salt, opsLimit, memLimit, publicKey and box")))
        #expect(decode(CBORMap(text: [
            ("kind", .text("passphrase")), ("salt", .bytes(counting(16))), ("opsLimit", .unsigned(1)), ("memLimit", .unsigned(8192)),
            ("publicKey", .bytes(counting(31))), ("box", .bytes(counting(100))),
        ])) == .failure(.malformedRecord(nil, reason: "key slot field \"publicKey\" must be 32 bytes")))
        #expect(decode(CBORMap(text: [("kind", .unsigned(1))])) == .failure(.malformedRecord(nil, reason: "key slot field \"kind\" must be text")))
        let tooMany = encodeMap([
            ("epoch", .unsigned(1)), ("keyCommit", .bytes(counting(32))),
            ("slots", .array((0..<257).map { _ in .map(CBORMap(text: [("kind", .text("x"))])) })),
        ])
        #expect(throws: FormatError.sizeLimitExceeded(nil, what: "key slot count", size: 257, limit: 256)) {
            try KeyringPublic(decoding: tooMany, location: nil)
        }
    }

    static func content() -> KeyringContent {
        let r = SeededRandom(label: "content")
        return KeyringContent(
            members: [
                KeyringMember(role: "recovery", publicKey: r.bytes(32), name: "Recovery key", added: 1_000),
                KeyringMember(role: "device", publicKey: r.bytes(32), name: "Sam's phone", added: 2_000,
                              unknownFields: CBORMap(text: [("platform", .text("iOS"))])),
                KeyringMember(role: "device", publicKey: r.bytes(32), keyType: "ml-dsa-65+ed25519", name: "Future laptop", added: 2_500),
            ],
            removed: [KeyringMember(role: "device", publicKey: r.bytes(32), name: "Old laptop", added: 500)],
            escrow: [EscrowRecipient(publicKey: r.bytes(32), label: "Employer IT")],
            retired: [r.bytes(32)],
            parentKeys: [try! SymmetricKey(using: r), try! SymmetricKey(using: r)],
            blobKey: try! SymmetricKey(using: r), created: 3_000, reason: "rotate", vaultSalt: r.bytes(16),
            unknownFields: CBORMap(text: [("note", .text("hello"))]))
    }

    static func expectEqual(_ a: KeyringContent, _ b: KeyringContent, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(a.members == b.members, sourceLocation: sourceLocation)
        #expect(a.removed == b.removed, sourceLocation: sourceLocation)
        #expect(a.escrow == b.escrow, sourceLocation: sourceLocation)
        #expect(a.retired == b.retired, sourceLocation: sourceLocation)
        #expect(a.parentKeys == b.parentKeys, sourceLocation: sourceLocation)
        #expect(a.blobKey == b.blobKey, sourceLocation: sourceLocation)
        #expect(a.created == b.created, sourceLocation: sourceLocation)
        #expect(a.reason == b.reason, sourceLocation: sourceLocation)
        #expect(a.vaultSalt == b.vaultSalt, sourceLocation: sourceLocation)
        #expect(a.unknownFields == b.unknownFields, sourceLocation: sourceLocation)
    }

    @Test func contentRoundTripWithAllFields() throws {
        let content = Self.content()
        let encoded = content.encoded()
        let decoded = try decodeContent(encoded).get()
        Self.expectEqual(decoded, content)
        #expect(decoded.members[1].unknownFields[text: "platform"] == .text("iOS"))
        #expect(decoded.members[2].keyType == "ml-dsa-65+ed25519" && !decoded.members[2].isEd25519)
        #expect(decoded.members[0].isEd25519)
        #expect(decoded.encoded() == encoded)
    }

    @Test func contentDefaultsAndUnknownFields() throws {
        let input = encodeMap([
            ("blobKey", .bytes(counting(32))), ("members", .array([.map(CBORMap(text: [("key", .bytes(counting(32, from: 1)))]))])),
            ("zeta", .unsigned(1)),
        ])
        let c = try decodeContent(input).get()
        #expect(c.members == [KeyringMember(role: "device", publicKey: counting(32, from: 1), keyType: "ed25519", name: "", added: 0)])
        #expect(c.removed.isEmpty && c.escrow.isEmpty && c.retired.isEmpty && c.parentKeys.isEmpty)
        #expect(c.blobKey == countingKey())
        #expect(c.created == 0 && c.reason == "" && c.vaultSalt == nil)
        #expect(c.unknownFields[text: "zeta"] == .unsigned(1))
        #expect(c.encoded() == input)
    }

    @Test func malformedContent() {
        let blob = ("blobKey", CBOR.bytes(counting(32)))
        func decode(_ pairs: [(String, CBOR)]) -> Result<Int, FormatError> {
            decodeContent(encodeMap(pairs)).map(\.members.count)
        }
        #expect(decode([]) == .failure(.malformedRecord(nil, reason: "keyring content has no 32-byte blobKey")))
        #expect(decode([("blobKey", .bytes(counting(31)))]) == .failure(.malformedRecord(nil, reason: "keyring content field \"blobKey\" must be 32 bytes")))
        #expect(decode([blob, ("members", .array([.map(CBORMap())]))]) == .failure(.malformedRecord(nil, reason: "keyring member needs a 32-byte key")))
        #expect(decode([blob, ("parentKeys", .array([.bytes(counting(31))]))])
            == .failure(.malformedRecord(nil, reason: "a parent key must be 32 bytes")))
        #expect(decode([blob, ("parentKeys", .array((0..<65).map { _ in .bytes(counting(32)) }))])
            == .failure(.sizeLimitExceeded(nil, what: "parent key count", size: 65, limit: 64)))
        #expect(decode([blob, ("retired", .array([.bytes(counting(33))]))])
            == .failure(.malformedRecord(nil, reason: "a retired key must be 32 bytes")))
        #expect(decode([blob, ("escrow", .array([.map(CBORMap(text: [("key", .bytes(counting(31)))]))]))])
            == .failure(.malformedRecord(nil, reason: "escrow recipient field \"key\" must be 32 bytes")))
        #expect(decode([blob, ("members", .text("all"))]) == .failure(.malformedRecord(nil, reason: "keyring content field \"members\" must be an array")))
        #expect(decode([blob, ("vaultSalt", .bytes(counting(15)))])
            == .failure(.malformedRecord(nil, reason: "keyring content field \"vaultSalt\" must be 16 bytes")))
        let many = CBOR.array((0..<4097).map { _ in .null })
        #expect(decode([blob, ("removed", many)]) == .failure(.sizeLimitExceeded(nil, what: "keyring removed count", size: 4097, limit: 4096)))
    }

    @Test func recordRoundTripFromTheSpecLayout() throws {
        let key = testEpochKey(epoch: 3)
        let pub = Self.publicPart(key: key)
        let content = Self.content()
        let record = try KeyringRecord.seal(
            content: content, signer: Self.signer, key: key, vaultID: countingVaultID, publicPart: pub, random: SeededRandom(label: "ring"))
        #expect(record.nonce == SeededRandom(label: "ring").bytes(24))
        #expect(record.publicBytes == pub.encoded())
        #expect(record.epoch == 3)
        // K = {"nonce", "public", "sealed"}, canonical, nothing else.
        let body = record.encodedBody()
        #expect(body == encodeMap([("nonce", .bytes(record.nonce)), ("public", .bytes(pub.encoded())), ("sealed", .bytes(record.sealed))]))
        #expect(Array(body.prefix(9)) == [0xa3, 0x65] + Array("nonce".utf8) + [0x58, 0x18])
        // The keyring id is BLAKE2b-256 of K (32 bytes).
        #expect(KeyringRecord.id(ofBody: body).bytes == BLAKE2b.hash(body, byteCount: 32))
        #expect(KeyringID.byteCount == 32)
        // S = AEAD(KDF(K, 3, "quire v2"), nonce, pad(I), vault id ‖ P), with
        // I = {"content": C, "signature": Ed25519 over "quire-keyring-v2" ‖
        // vault id ‖ H256(P) ‖ nonce ‖ H256(C), "signer": public key}.
        let contentBytes = content.encoded()
        let signature = Self.signer.sign(
            Array("quire-keyring-v2".utf8) + counting(16) + BLAKE2b.hash(pub.encoded(), byteCount: 32) + record.nonce
                + BLAKE2b.hash(contentBytes, byteCount: 32))
        let inner = encodeMap([("content", .bytes(contentBytes)), ("signature", .bytes(signature)), ("signer", .bytes(Self.signer.publicKey))])
        let keyringKey = try KeyDerivation.derive(from: key.key, subkeyID: 3, context: "quire v2")
        #expect(record.sealed == XChaCha20Poly1305.seal(padded(inner), key: keyringKey, nonce: record.nonce, authenticating: counting(16) + pub.encoded()))

        // Parsed back and opened.
        let parsed = try KeyringRecord(body: body, location: nil)
        #expect(parsed == record)
        #expect(parsed.publicPart == pub)
        let opened = try parsed.open(key: key, vaultID: countingVaultID, location: Self.location)
        #expect(opened.signer == Self.signer.publicKey)
        #expect(opened.signatureValid)
        Self.expectEqual(opened.content, content)
        // Another key, another vault, another public part: nothing opens.
        #expect(throws: FormatError.authenticationFailed(Self.location)) {
            try parsed.open(key: testEpochKey(epoch: 3, from: 1), vaultID: countingVaultID, location: Self.location)
        }
        #expect(throws: FormatError.authenticationFailed(Self.location)) {
            try parsed.open(key: key, vaultID: try VaultID(bytes: counting(16, from: 2)), location: Self.location)
        }
        var otherPublic = pub
        otherPublic.isEscrowFree = true
        #expect(throws: FormatError.authenticationFailed(Self.location)) {
            try KeyringRecord(publicPart: otherPublic, nonce: record.nonce, sealed: record.sealed).open(key: key, vaultID: countingVaultID, location: Self.location)
        }
    }

    @Test func signedMessageAndAssociatedDataLayouts() {
        // "quire-keyring-v2" ‖ vault id ‖ H256(P) ‖ nonce ‖ H256(C); AD = vault id ‖ P.
        #expect(KeyringRecord.signedMessage(vaultID: countingVaultID, publicBytes: [7], nonce: counting(24, from: 1), contentHash: counting(32, from: 2))
            == Array("quire-keyring-v2".utf8) + counting(16) + BLAKE2b.hash([7], byteCount: 32) + counting(24, from: 1) + counting(32, from: 2))
        #expect(KeyringRecord.associatedData(vaultID: countingVaultID, publicBytes: [7]) == counting(16) + [7])
    }

    @Test func sealingIsDeterministicGivenTheNonce() throws {
        // The id covers exactly what is signed: same inputs, same K, same id;
        // a new nonce, a new id (Spec/format.md §8.1).
        let key = testEpochKey(epoch: 1)
        let pub = Self.publicPart(key: key)
        func seal(_ label: String) throws -> [UInt8] {
            try KeyringRecord.seal(
                content: Self.content(), signer: Self.signer, key: key, vaultID: countingVaultID, publicPart: pub, random: SeededRandom(label: label)
            ).encodedBody()
        }
        #expect(try seal("a") == (try seal("a")))
        #expect(KeyringRecord.id(ofBody: try seal("a")) != KeyringRecord.id(ofBody: try seal("b")))
    }

    /// K with the given fields (canonical CBOR), from a sealed record.
    static func body(_ record: KeyringRecord, extra: [(CBOR, CBOR)] = [], dropping: String? = nil) -> [UInt8] {
        var map = CBORMap(text: [("nonce", .bytes(record.nonce)), ("public", .bytes(record.publicBytes)), ("sealed", .bytes(record.sealed))])
        if let dropping { map[text: dropping] = nil }
        for (k, v) in extra { map[k] = v }
        return CBOREncoder.encode(.map(map))
    }

    @Test func outerMapHasExactlyItsThreeFields() throws {
        // An extra field in K would give one keyring a second id without
        // changing what is signed: malformed (Spec/records.md §6).
        let key = testEpochKey()
        let record = try KeyringRecord.seal(
            content: Self.content(), signer: Self.signer, key: key, vaultID: countingVaultID, publicPart: Self.publicPart(key: key),
            random: SeededRandom(label: "exact"))
        #expect(try KeyringRecord(body: Self.body(record), location: nil) == record)
        let extra = FormatError.malformedRecord(nil, reason: "keyring body has fields besides nonce, public and sealed")
        for field: (CBOR, CBOR) in [(.text("zz"), .bytes([])), (.text("a"), .null), (.text("signer"), .bytes(counting(32))), (.unsigned(1), .bytes([1]))] {
            #expect(throws: extra) { try KeyringRecord(body: Self.body(record, extra: [field]), location: nil) }
        }
        let missing = FormatError.malformedRecord(nil, reason: "keyring body needs \"public\", a 24-byte \"nonce\" and \"sealed\"")
        for field in ["nonce", "public", "sealed"] {
            #expect(throws: missing) { try KeyringRecord(body: Self.body(record, dropping: field), location: nil) }
        }
        #expect(throws: FormatError.malformedRecord(nil, reason: "keyring body field \"nonce\" must be 24 bytes")) {
            try KeyringRecord(body: Self.body(record, extra: [(.text("nonce"), .bytes(counting(23)))]), location: nil)
        }
        #expect(throws: FormatError.malformedRecord(nil, reason: "keyring body field \"public\" must be a byte string")) {
            try KeyringRecord(body: Self.body(record, extra: [(.text("public"), .map(CBORMap()))]), location: nil)
        }
        #expect(throws: FormatError.malformedRecord(nil, reason: "keyring sealed part is too short")) {
            try KeyringRecord(body: Self.body(record, extra: [(.text("sealed"), .bytes(counting(16)))]), location: nil)
        }
        #expect(throws: FormatError.malformedRecord(nil, reason: "floats must be encoded in 8 bytes at byte 1")) {
            try KeyringRecord(body: Self.body(record, extra: [(.text("public"), .bytes([0xf9, 0, 0]))]), location: nil)
        }
        // A K that is not canonical (keys out of order) is not a keyring.
        var reordered = [UInt8]([0xa3])
        reordered += CBOREncoder.encode(.text("public")) + CBOREncoder.encode(.bytes(record.publicBytes))
        reordered += CBOREncoder.encode(.text("nonce")) + CBOREncoder.encode(.bytes(record.nonce))
        reordered += CBOREncoder.encode(.text("sealed")) + CBOREncoder.encode(.bytes(record.sealed))
        let error = #expect(throws: FormatError.self) { try KeyringRecord(body: reordered, location: nil) }
        #expect(error.map(isMalformedRecord) == true)
    }

    /// A record whose sealed part is `plaintext`, sealed by hand under the
    /// keyring key of `key` (Spec/format.md §8.1).
    static func handSealed(_ plaintext: [UInt8], key: EpochKey) throws -> KeyringRecord {
        let pub = Self.publicPart(key: key)
        let nonce = counting(24, from: 0x90)
        let keyringKey = try KeyDerivation.derive(from: key.key, subkeyID: 3, context: "quire v2")
        let sealed = XChaCha20Poly1305.seal(plaintext, key: keyringKey, nonce: nonce, authenticating: counting(16) + pub.encoded())
        return KeyringRecord(publicPart: pub, nonce: nonce, sealed: sealed)
    }

    @Test func innerMapHasExactlyItsThreeFields() throws {
        let key = testEpochKey()
        let contentBytes = Self.content().encoded()
        let signature = counting(64), signer = counting(32, from: 0x40)
        func open(_ pairs: [(CBOR, CBOR)], pad: Bool = true) throws -> Result<OpenedKeyring, FormatError> {
            let inner = CBOREncoder.encode(.map(CBORMap(pairs)))
            let record = try Self.handSealed(pad ? padded(inner) : inner, key: key)
            return Result { () throws(FormatError) -> OpenedKeyring in try record.open(key: key, vaultID: countingVaultID, location: Self.location) }
        }
        func failure(_ result: Result<OpenedKeyring, FormatError>) -> FormatError? {
            if case .failure(let error) = result { return error }
            return nil
        }
        let fields: [(CBOR, CBOR)] = [(.text("content"), .bytes(contentBytes)), (.text("signature"), .bytes(signature)), (.text("signer"), .bytes(signer))]
        // Control: it opens (the signature is not valid, which is rule 3's to judge).
        let control = try open(fields).get()
        #expect(control.signer == signer)
        #expect(!control.signatureValid)
        Self.expectEqual(control.content, Self.content())
        let exactly = FormatError.malformedRecord(Self.location, reason: "keyring inner part needs exactly content, a 64-byte signature and a 32-byte signer")
        #expect(try failure(open(fields + [(.text("zz"), .bytes([]))])) == exactly)
        #expect(try failure(open(fields + [(.text("nonce"), .bytes(counting(24)))])) == exactly)
        #expect(try failure(open(Array(fields.dropLast()))) == exactly)
        #expect(try failure(open([fields[0], (.text("signature"), .bytes(counting(63))), fields[2]])) == exactly)
        #expect(try failure(open([fields[0], fields[1], (.text("signer"), .bytes(counting(33)))])) == exactly)
        // Not a map of byte strings.
        for bad: [(CBOR, CBOR)] in [fields + [(.text("zz"), .unsigned(1))], fields + [(.unsigned(1), .bytes([]))]] {
            guard case .failure(.malformedRecord(let loc, let reason)) = try open(bad) else {
                Issue.record("expected malformedRecord")
                continue
            }
            #expect(loc == Self.location)
            #expect(reason.hasPrefix("keyring inner part: "))
        }
        // pad(I) must be canonical.
        let inner = CBOREncoder.encode(.map(CBORMap(fields)))
        let record = try Self.handSealed(padded(inner) + [0], key: key)
        #expect(throws: FormatError.badPadding(Self.location)) { try record.open(key: key, vaultID: countingVaultID, location: Self.location) }
        #expect(try failure(open(fields, pad: false)) == .badPadding(Self.location))
    }

    @Test func signatureCoversPublicPartNonceAndContent() throws {
        let key = testEpochKey()
        let pub = Self.publicPart(key: key)
        let record = try KeyringRecord.seal(
            content: Self.content(), signer: Self.signer, key: key, vaultID: countingVaultID, publicPart: pub, random: SeededRandom(label: "sig"))
        #expect(try record.open(key: key, vaultID: countingVaultID, location: Self.location).signatureValid)
        // The same inner part sealed again under a new nonce (what someone
        // holding the epoch key could do): it opens, but the signature no
        // longer verifies.
        let keyringKey = try KeyDerivation.derive(from: key.key, subkeyID: 3, context: "quire v2")
        let inner = try XChaCha20Poly1305.open(record.sealed, key: keyringKey, nonce: record.nonce, authenticating: counting(16) + pub.encoded())
        let nonce = counting(24, from: 1)
        let resealed = KeyringRecord(
            publicPart: pub, nonce: nonce,
            sealed: XChaCha20Poly1305.seal(inner, key: keyringKey, nonce: nonce, authenticating: counting(16) + pub.encoded()))
        let opened = try resealed.open(key: key, vaultID: countingVaultID, location: Self.location)
        #expect(opened.signer == Self.signer.publicKey)
        #expect(!opened.signatureValid)
    }

    @Test func linksNameTheirSignerToParentKeyHolders() throws {
        // The library's links (see KeyringRecord.links): the signer's key and
        // signature sealed under each parent's link key.
        let parentA = testEpochKey(epoch: 1, from: 1), parentB = testEpochKey(epoch: 1, from: 2)
        let ids = [try KeyringID(bytes: counting(32, from: 1)), try KeyringID(bytes: counting(32, from: 2))]
        let child = testEpochKey(epoch: 2, from: 3)
        let links = try KeyringRecord.links(
            parents: [(ids[0], parentA), (ids[1], parentB)], signer: Self.signer, vaultID: countingVaultID, epoch: 2,
            keyCommit: child.commitment, random: SeededRandom(label: "links"))
        #expect(links.map(\.count) == [KeyringRecord.linkByteCount, KeyringRecord.linkByteCount])
        #expect(KeyringRecord.linkByteCount == 24 + 32 + 64 + 16)
        let record = try KeyringRecord.seal(
            content: Self.content(), signer: Self.signer, key: child, vaultID: countingVaultID,
            publicPart: Self.publicPart(key: child, parents: ids, links: links), random: SeededRandom(label: "child"))
        let parsed = try KeyringRecord(body: record.encodedBody(), location: nil)
        #expect(parsed.linkSigner(parentIndex: 0, parentKey: parentA, vaultID: countingVaultID) == Self.signer.publicKey)
        #expect(parsed.linkSigner(parentIndex: 1, parentKey: parentB, vaultID: countingVaultID) == Self.signer.publicKey)
        // Each link opens under its own parent's key only, in this vault.
        #expect(parsed.linkSigner(parentIndex: 0, parentKey: parentB, vaultID: countingVaultID) == nil)
        #expect(parsed.linkSigner(parentIndex: 0, parentKey: child, vaultID: countingVaultID) == nil)
        #expect(parsed.linkSigner(parentIndex: 0, parentKey: parentA, vaultID: try VaultID(bytes: counting(16, from: 5))) == nil)
        #expect(parsed.linkSigner(parentIndex: 2, parentKey: parentA, vaultID: countingVaultID) == nil)
        // A link moved to another keyring (another key commitment) does not open.
        let moved = try KeyringRecord.seal(
            content: Self.content(), signer: Self.signer, key: parentB, vaultID: countingVaultID,
            publicPart: KeyringPublic(
                epoch: 1, keyCommit: parentB.commitment, parents: [ids[0]], links: [links[0]], isEscrowFree: false, slotEntries: []),
            random: SeededRandom(label: "moved"))
        #expect(moved.linkSigner(parentIndex: 0, parentKey: parentA, vaultID: countingVaultID) == nil)
    }

    @Test func rootVaultIDDerivation() {
        // BLAKE2b-128("quire-vault-id-v2" ‖ signer ‖ keyCommit ‖ vaultSalt) (Spec/format.md §8.4 rule 4).
        let commit = counting(32, from: 0x50)
        let id = rootVaultID(signer: Self.signer.publicKey, keyCommit: commit, salt: counting(16, from: 0x30))
        #expect(id.bytes == BLAKE2b.hash(Array("quire-vault-id-v2".utf8) + Self.signer.publicKey + commit + counting(16, from: 0x30), byteCount: 16))
        #expect(id != rootVaultID(signer: Self.signer.publicKey, keyCommit: commit, salt: counting(16, from: 0x31)))
        #expect(id != rootVaultID(signer: Self.signer.publicKey, keyCommit: counting(32, from: 0x51), salt: counting(16, from: 0x30)))
    }
}

@Suite struct IdentifierTests {
    @Test func lengthsAreChecked() {
        #expect(throws: FormatError.malformedRecord(nil, reason: "vault id must be 16 bytes, got 15")) { try VaultID(bytes: counting(15)) }
        #expect(throws: FormatError.malformedRecord(nil, reason: "blob id must be 32 bytes, got 16")) { try BlobID(bytes: counting(16)) }
        #expect(throws: FormatError.malformedRecord(nil, reason: "entry id must be 16 bytes, got 0")) { try EntryID(bytes: []) }
        #expect(VaultID.byteCount == 16 && BlobID.byteCount == 32 && KeyringID.byteCount == 32 && DeviceID.byteCount == 16)
    }

    @Test func hexDescriptionAndOrder() throws {
        let id = try EntryID(bytes: counting(16))
        #expect(id.description == "000102030405060708090a0b0c0d0e0f")
        #expect(EntryID(hex: "000102030405060708090A0B0C0D0E0F") == id)
        #expect(EntryID(hex: "000102030405060708090a0b0c0d0e") == nil)
        #expect(EntryID(hex: "zz0102030405060708090a0b0c0d0e0f") == nil)
        let bigger = try EntryID(bytes: counting(16, from: 1))
        #expect(id < bigger)
        #expect([bigger, id].sorted() == [id, bigger])
        #expect(EntryID(using: SeededRandom(label: "abc")).bytes == hexBytes("21d86eb84c726d83797601c16ccfe6fe"))
    }

    @Test func deviceIDFromPublicKey() {
        let pk = counting(32)
        #expect(DeviceID(publicKey: pk).bytes == Array(BLAKE2b.hash(pk, byteCount: 32).prefix(16)))
    }
}

@Suite struct HybridLogicalClockTests {
    @Test func packing() {
        let c = HybridLogicalClock(milliseconds: 1_700_000_000_123, counter: 7)
        #expect(c.milliseconds == 1_700_000_000_123)
        #expect(c.counter == 7)
        #expect(c.rawValue == 1_700_000_000_123 << 16 | 7)
        #expect(c.description == "1700000000123.7")
        // Out-of-range milliseconds are clamped, never wrapped (a wrap would
        // let a clock go backwards).
        #expect(HybridLogicalClock(milliseconds: 1 << 48 | 5, counter: 0).milliseconds == HybridLogicalClock.maxMilliseconds)
        #expect(HybridLogicalClock(milliseconds: 1, counter: 0) > HybridLogicalClock(milliseconds: 0, counter: .max))
    }

    @Test func tickWithLaterWallClock() {
        let c = HybridLogicalClock(milliseconds: 1000, counter: 9)
        #expect(c.tick(now: 2000) == HybridLogicalClock(milliseconds: 2000, counter: 0))
        #expect(c.tick(now: 1001) == HybridLogicalClock(milliseconds: 1001, counter: 0))
    }

    @Test func tickWithSameOrEarlierWallClock() {
        let c = HybridLogicalClock(milliseconds: 1000, counter: 9)
        #expect(c.tick(now: 1000) == HybridLogicalClock(milliseconds: 1000, counter: 10))
        #expect(c.tick(now: 10) == HybridLogicalClock(milliseconds: 1000, counter: 10))
        #expect(c.tick(now: 0) > c)
    }

    @Test func tickCounterOverflow() {
        let c = HybridLogicalClock(milliseconds: 1000, counter: .max)
        #expect(c.tick(now: 500) == HybridLogicalClock(milliseconds: 1001, counter: 0))
        #expect(c.tick(now: 1000) == HybridLogicalClock(milliseconds: 1001, counter: 0))
        #expect(c.tick(now: 1001) == HybridLogicalClock(milliseconds: 1001, counter: 0))
    }

    @Test func ticksAreStrictlyMonotonic() {
        var clock = HybridLogicalClock(rawValue: 0)
        let walls: [UInt64] = [5, 5, 5, 3, 100, 99, 99, 101, 0, 101, 2000]
        for now in walls + Array(repeating: 7, count: 70_000) {
            let next = clock.tick(now: now)
            #expect(next > clock)
            #expect(next.milliseconds >= now || next.milliseconds >= clock.milliseconds)
            clock = next
        }
        #expect(clock.milliseconds == 2001)
    }
}

@Suite struct NestedUnknownFieldTests {
    @Test
    func unknownFieldsInsideAKnownSlotAreKept() throws {
        let slot = CBORMap(text: [("kind", .text("recovery")), ("box", .bytes(counting(100))), ("hint", .text("safe"))])
        let input = encodeMap([("epoch", .unsigned(1)), ("keyCommit", .bytes(counting(32))), ("slots", .array([.map(slot)]))])
        let pub = try KeyringPublic(decoding: input, location: nil)
        #expect(pub.slotEntries[0].unknownFields == CBORMap(text: [("hint", .text("safe"))]))
        #expect(pub.encoded() == input)
    }

    @Test
    func unknownFieldsInsideEscrowAndMemberEntriesAreKept() throws {
        // Format 2 has no "history": a field of that name is unknown, and kept.
        let input = encodeMap([
            ("blobKey", .bytes(counting(32))),
            ("escrow", .array([.map(CBORMap(text: [("key", .bytes(counting(32))), ("label", .text("IT")), ("contact", .text("it@example.org"))]))])),
            ("history", .array([.map(CBORMap(text: [("epoch", .unsigned(1)), ("key", .bytes(counting(32, from: 1)))]))])),
            ("members", .array([.map(CBORMap(text: [("key", .bytes(counting(32, from: 2))), ("zone", .text("home"))]))])),
        ])
        let content = try decodeContent(input).get()
        #expect(content.escrow[0].unknownFields[text: "contact"] == .text("it@example.org"))
        #expect(content.members[0].unknownFields[text: "zone"] == .text("home"))
        #expect(content.unknownFields[text: "history"] != nil)
        #expect(content.encoded() == input)
    }
}

@Suite struct ByteCursorTests {
    @Test func readsLittleEndian() throws {
        let bytes: [UInt8] = [0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10]
        var r = ByteReader(bytes)
        #expect(try r.peekUInt8() == 0x01)
        #expect(try r.readUInt8() == 0x01)
        #expect(try r.readUInt16() == 0x0302)
        #expect(try r.readUInt32() == 0x0706_0504)
        #expect(try r.readUInt64() == 0x0f0e_0d0c_0b0a_0908)
        #expect(r.remaining == 1)
        #expect(!r.isAtEnd)
        #expect(throws: ByteCursorError.shortInput(needed: 2, available: 1)) { try r.readUInt16() }
        #expect(try r.readBytes(1) == [0x10])
        #expect(r.isAtEnd)
        #expect(throws: ByteCursorError.shortInput(needed: 1, available: 0)) { try r.readUInt8() }
        #expect(throws: ByteCursorError.shortInput(needed: 1, available: 0)) { try r.peekUInt8() }
    }

    @Test func readsFromSlicesWithIndicesFromZero() throws {
        let big = counting(40)
        var r = ByteReader(big[10..<20])
        #expect(r.bytes == counting(10, from: 10))
        #expect(r.position == 0)
        try r.skip(2)
        #expect(try r.readSlice(3) == counting(3, from: 12)[...])
        #expect(try r.readUInt32() == 0x1211_100f)
        #expect(throws: ByteCursorError.shortInput(needed: -1, available: 1)) { try r.readBytes(-1) }
        #expect(throws: ByteCursorError.shortInput(needed: 2, available: 1)) { try r.skip(2) }
        #expect(r.position == 9)
    }

    @Test func writerRoundTrip() throws {
        var w = ByteWriter(capacity: 4)
        w.writeUInt8(0xff)
        w.writeUInt16(0xbeef)
        w.writeUInt32(0xdead_beef)
        w.writeUInt64(0x0123_4567_89ab_cdef)
        w.writeBytes(counting(3)[1...])
        #expect(hex(w.bytes) == "ffefbeefbeaddeefcdab8967452301" + "0102")
        var r = ByteReader(w.bytes)
        #expect(try r.readUInt8() == 0xff)
        #expect(try r.readUInt16() == 0xbeef)
        #expect(try r.readUInt32() == 0xdead_beef)
        #expect(try r.readUInt64() == 0x0123_4567_89ab_cdef)
        #expect(try r.readBytes(2) == [1, 2])
        #expect(r.isAtEnd)
    }
}

@Suite struct HybridLogicalClockEdgeTests {
    @Test
    func tickNeverGoesBackwardsForOutOfRangeWallClocks() {
        let c = HybridLogicalClock(milliseconds: 1_700_000_000_000, counter: 3)
        // A wall clock read in microseconds by mistake, or simply bogus.
        for now: UInt64 in [1 << 48, 1_700_000_000_000_000, UInt64.max] {
            #expect(c.tick(now: now) > c, "now = \(now)")
        }
    }
}
