@_spi(Crypto) import QuireCrypto
@_spi(Format) import QuireFormat
import Testing

@Suite struct FileHeaderTests {
    // Copy: magic ‖ version 2 ‖ flags 0 ‖ vault id 00…0f ‖ first 4 bytes of
    // BLAKE2b-128 of the 28 bytes before (computed independently).
    static let copyHex = "8951554952450d0a02000000000102030405060708090a0b0c0d0e0f4f8ff013"

    /// One 32-byte copy with the given fields and a correct check value.
    static func copy(magic: [UInt8] = FileHeader.magic, version: UInt16 = 2, flags: UInt16 = 0, id: [UInt8] = counting(16)) -> [UInt8] {
        let first = magic + [UInt8(version & 0xff), UInt8(version >> 8), UInt8(flags & 0xff), UInt8(flags >> 8)] + id
        return first + Array(BLAKE2b.hash(first, byteCount: 16).prefix(4))
    }

    static func parse(_ bytes: [UInt8]) -> Result<FileHeader, FormatError> {
        Result { () throws(FormatError) -> FileHeader in try FileHeader.parse(bytes).0 }
    }

    @Test func encodedKnownAnswer() {
        let encoded = FileHeader(vaultID: countingVaultID).encoded()
        #expect(encoded.count == 64)
        #expect(hex(encoded) == Self.copyHex + Self.copyHex)
        #expect(Self.copy() == hexBytes(Self.copyHex))
        #expect(FileHeader.magic == [0x89, 0x51, 0x55, 0x49, 0x52, 0x45, 0x0d, 0x0a])
        #expect(FileHeader.byteCount == 64 && FileHeader.copyByteCount == 32 && FileHeader.currentVersion == 2)
    }

    @Test func roundTrip() throws {
        let id = VaultID(using: SeededRandom(label: "file header"))
        let encoded = FileHeader(vaultID: id).encoded()
        let (header, damage) = try FileHeader.parse(encoded)
        #expect(header == FileHeader(vaultID: id))
        #expect(header.vaultID == id)
        #expect(header.version == 2)
        #expect(header.flags == 0)
        #expect(damage == .none)
        // Bytes after the header (the frames) are ignored.
        #expect(try FileHeader.parse(encoded + counting(100)).0.vaultID == id)
    }

    @Test func damageToEitherCopyIsSurvived() throws {
        let encoded = FileHeader(vaultID: countingVaultID).encoded()
        for i in 0..<32 {
            let (h0, d0) = try FileHeader.parse(flipped(encoded, at: i, bit: i % 8))
            #expect(h0.vaultID == countingVaultID)
            #expect(d0 == .copyDamaged(index: 0), "byte \(i)")
            let (h1, d1) = try FileHeader.parse(flipped(encoded, at: 32 + i, bit: i % 8))
            #expect(h1.vaultID == countingVaultID)
            #expect(d1 == .copyDamaged(index: 1), "byte \(32 + i)")
        }
        // A copy overwritten with zeros.
        let zeroed = [UInt8](repeating: 0, count: 32) + Array(encoded[32...])
        #expect(try FileHeader.parse(zeroed) == (FileHeader(vaultID: countingVaultID), .copyDamaged(index: 0)))
    }

    @Test func damageToBothCopiesIsHeaderDamaged() {
        let encoded = FileHeader(vaultID: countingVaultID).encoded()
        #expect(Self.parse(flipped(flipped(encoded, at: 20), at: 52)) == .failure(.headerDamaged))
        #expect(Self.parse(flipped(flipped(encoded, at: 30), at: 40)) == .failure(.headerDamaged))
        // One copy keeps its magic, the other not: still damage, not "not a vault".
        #expect(Self.parse(flipped(flipped(encoded, at: 0), at: 60)) == .failure(.headerDamaged))
    }

    @Test func badMagicInBothIsNotAVault() {
        #expect(Self.parse([UInt8](repeating: 0, count: 64)) == .failure(.notAVault))
        #expect(Self.parse(counting(64)) == .failure(.notAVault))
        let encoded = FileHeader(vaultID: countingVaultID).encoded()
        #expect(Self.parse(flipped(flipped(encoded, at: 1), at: 33)) == .failure(.notAVault))
        // Both copies intact by their check value but with another magic.
        let other = Self.copy(magic: Array("NOTQUIRE".utf8))
        #expect(Self.parse(other + other) == .failure(.notAVault))
        // CR LF converted to LF by a text transfer shifts everything.
        var converted = encoded
        converted.remove(at: 6)
        converted.remove(at: 37)
        converted += [0, 0]
        #expect(Self.parse(converted) == .failure(.notAVault))
    }

    @Test(arguments: [0, 1, 31, 32, 63])
    func shortIsTruncated(count: Int) {
        let encoded = FileHeader(vaultID: countingVaultID).encoded()
        #expect(Self.parse(Array(encoded.prefix(count))) == .failure(.truncatedHeader(fileByteCount: UInt64(count))))
    }

    @Test func unsupportedVersion() {
        let v3 = Self.copy(version: 3)
        #expect(Self.parse(v3 + v3) == .failure(.unsupportedVersion(3)))
        // With the other copy damaged, the intact one still decides.
        #expect(Self.parse(v3 + flipped(v3, at: 3)) == .failure(.unsupportedVersion(3)))
        let v0 = Self.copy(version: 0)
        #expect(Self.parse(v0 + v0) == .failure(.unsupportedVersion(0)))
        let vmax = Self.copy(version: 0xffff)
        #expect(Self.parse(vmax + vmax) == .failure(.unsupportedVersion(0xffff)))
        #expect(FormatError.unsupportedVersion(3).description
            == "vault format version 3 is not supported by this reader (it reads version 2); update Quire")
    }

    @Test func versionOneIsTheDevelopmentVersion() {
        // Spec/format.md §3 rule 5: version 1 is rejected, and the message
        // says it was a development version with no vault outside Quire's
        // history (so there is nothing to migrate, and no update helps).
        let v1 = Self.copy(version: 1)
        #expect(Self.parse(v1 + v1) == .failure(.unsupportedVersion(1)))
        #expect(Self.parse(flipped(v1, at: 9) + v1) == .failure(.unsupportedVersion(1)))
        let error = FormatError.unsupportedVersion(1)
        #expect(error.code == "unsupported_version")
        #expect(error.description.contains("development version"))
        #expect(error.description.contains("no vault of version 1 exists outside Quire's own history"))
        #expect(!error.description.contains("update Quire"))
    }

    @Test(arguments: [UInt16(1), 2, 0x100, 0x8000])
    func unsupportedFeature(flags: UInt16) {
        let c = Self.copy(flags: flags)
        #expect(Self.parse(c + c) == .failure(.unsupportedFeature(flags: flags)))
    }

    @Test func copiesThatDifferAreTampering() {
        let a = Self.copy(id: counting(16))
        let b = Self.copy(id: counting(16, from: 1))
        #expect(Self.parse(a + b) == .failure(.headerCopiesDiffer))
        #expect(Self.parse(a + Self.copy(version: 3)) == .failure(.headerCopiesDiffer))
        #expect(Self.parse(a + Self.copy(version: 1)) == .failure(.headerCopiesDiffer))
    }
}

@Suite struct FrameHeaderTests {
    static func parse(_ bytes: [UInt8], at offset: Int = 0) -> FrameHeader? {
        bytes.withUnsafeBytes { FrameHeader.parseChecked($0, at: offset) }
    }

    static let keyID = KeyID(rawValue: 0x0605_0403_0201)

    @Test func encodedKnownAnswer() {
        // kind 10 ‖ flags 01 ‖ key id 01…06 ‖ length 03 02 01 00 ‖ first 4
        // bytes of BLAKE2b-128 of the 12 bytes before (computed independently).
        let h = FrameHeader(kind: .entryRevision, flags: 1, keyID: Self.keyID, bodyLength: 0x0001_0203)
        #expect(hex(h.encoded()) == "100101020304050603020100" + "0269578a")
        #expect(h.fieldBytes == Array(h.encoded()[0..<12]))
        #expect(h.fieldBytes.count == 12)
        #expect(h.encoded() == rawFrameHeader(kind: 0x10, flags: 1, keyID: counting(6, from: 1), length: 0x0001_0203))
        #expect(Self.parse(h.encoded()) == h)
        #expect(FrameHeader.byteCount == 16 && FrameHeader.fieldByteCount == 12)
        #expect(FrameHeader.bodyHashByteCount == 32 && FrameHeader.tagByteCount == 16)
    }

    @Test func trailerIsTheTagForChunksAndTheBodyHashOtherwise() {
        // Spec/format.md §9.2: a chunk is summarised by its 16-byte tag,
        // every other frame by its last 32 bytes.
        for raw: UInt8 in [0x01, 0x02, 0x10, 0x11, 0x12, 0x13, 0x7f, 0x80, 0x81, 0xfe] {
            let h = FrameHeader(kind: RecordKind(rawValue: raw), flags: 0, keyID: Self.keyID, bodyLength: 100)
            #expect(h.trailerByteCount == (raw == 0x12 ? 16 : 32), "kind \(raw)")
        }
    }

    @Test func roundTripAtOffsets() {
        let random = SeededRandom(label: "frame headers")
        let kinds: [RecordKind] = [.keyring, .commit, .entryRevision, .blobManifest, .blobChunk, .profile, RecordKind(rawValue: 0x81), RecordKind(rawValue: 0x99)]
        for (i, kind) in kinds.enumerated() {
            let sealed = kind.isSealedKind
            let id = KeyID(commitment: random.bytes(32))
            let h = FrameHeader(kind: kind, flags: sealed ? (i % 2 == 0 ? 1 : 3) : 0, keyID: id, bodyLength: UInt32(40 + i * 77_777))
            let prefix = random.bytes(i * 3)
            let buffer = prefix + h.encoded() + random.bytes(5)
            let parsed = Self.parse(buffer, at: prefix.count)
            #expect(parsed == h)
            #expect(parsed?.keyID == id)
            #expect(parsed?.isSealed == sealed)
            #expect(parsed?.isCompressed == (sealed && i % 2 == 1))
        }
    }

    @Test func everySingleBitFlipFailsTheCheck() {
        let headers = [
            FrameHeader(kind: .entryRevision, flags: 1, keyID: Self.keyID, bodyLength: 100),
            FrameHeader(kind: .commit, flags: 0, keyID: KeyID(rawValue: 0xffff_ffff_ffff), bodyLength: 168),
            FrameHeader(kind: .blobChunk, flags: 1, keyID: KeyID(rawValue: 0), bodyLength: 65_597),
        ]
        for h in headers {
            let encoded = h.encoded()
            #expect(encoded.count == 16)
            #expect(Self.parse(encoded) == h)
            for bit in 0..<128 {
                #expect(Self.parse(flipped(encoded, at: bit / 8, bit: bit % 8)) == nil, "\(h.kind) bit \(bit)")
            }
        }
    }

    @Test func tooFewBytesAtOffset() {
        let encoded = FrameHeader(kind: .entryRevision, flags: 1, keyID: Self.keyID, bodyLength: 100).encoded()
        #expect(Self.parse(Array(encoded.dropLast())) == nil)
        #expect(Self.parse([0] + encoded, at: 2) == nil)
        #expect(Self.parse([]) == nil)
    }

    @Test func plausibilityRules() {
        func plausible(_ flags: UInt8, _ length: UInt32) -> Bool {
            FrameHeader(kind: .entryRevision, flags: flags, keyID: Self.keyID, bodyLength: length).isPlausible
        }
        // Reserved flag bits.
        for bit in 2..<8 {
            #expect(!plausible(1 | UInt8(1 << bit), 100), "flag bit \(bit)")
            #expect(!plausible(UInt8(1 << bit), 100), "flag bit \(bit)")
        }
        // Compressed only when sealed.
        #expect(!plausible(FrameHeader.compressedFlag, 100))
        #expect(plausible(FrameHeader.compressedFlag | FrameHeader.sealedFlag, 100))
        // Every body ends with a 32-byte body hash, or a chunk with nonce,
        // header and tag: 32 bytes at least, sealed or not (Spec/format.md §4.2).
        for flags: UInt8 in [0, 1, 3] {
            #expect(!plausible(flags, 31), "flags \(flags)")
            #expect(plausible(flags, 32), "flags \(flags)")
            #expect(!plausible(flags, 0), "flags \(flags)")
        }
        // The length limit: 16 MiB + 1 MiB.
        #expect(Limits.maxFrameBodyByteCount == 17_825_792)
        #expect(Limits.minFrameBodyByteCount == 32)
        #expect(plausible(1, 17_825_792))
        #expect(!plausible(1, 17_825_793))
        #expect(!plausible(0, UInt32.max))
        #expect(FrameHeader.reservedFlags == 0xfc)
    }

    @Test func zeroLengthBytesAreNeverPlausible() {
        // Spec/format.md §4.2: a header whose bytes 8..<12 are zero is never
        // plausible, whatever the other bytes (so zero runs can be skipped).
        let random = SeededRandom(label: "zero length")
        for _ in 0..<200 {
            var fields = random.bytes(12)
            fields.replaceSubrange(8..<12, with: [0, 0, 0, 0])
            fields[1] &= 0x03
            let encoded = fields + BLAKE2b.hash(fields, byteCount: 16).prefix(4)
            #expect(Self.parse(encoded) == nil)
        }
        #expect(Self.parse([UInt8](repeating: 0, count: 16)) == nil)
    }

    @Test func implausibleHeaderWithAValidCheckIsRejected() {
        let implausible = FrameHeader(kind: .entryRevision, flags: 0x05, keyID: Self.keyID, bodyLength: 100)
        #expect(Self.parse(implausible.encoded()) == nil)
        let tooLong = FrameHeader(kind: .entryRevision, flags: 1, keyID: Self.keyID, bodyLength: 1 << 25)
        #expect(Self.parse(tooLong.encoded()) == nil)
        let tooShort = FrameHeader(kind: .keyring, flags: 0, keyID: Self.keyID, bodyLength: 31)
        #expect(Self.parse(tooShort.encoded()) == nil)
    }
}

@Suite struct KeyIDTests {
    @Test func firstSixBytesOfTheCommitment() {
        let commitment = counting(32, from: 0xa0)
        let id = KeyID(commitment: commitment)
        #expect(id.bytes == counting(6, from: 0xa0))
        #expect(id.rawValue == 0xa5a4_a3a2_a1a0)
        #expect(id.description == "a0a1a2a3a4a5")
        #expect(KeyID.byteCount == 6)
        #expect(KeyID(rawValue: 0xa5a4_a3a2_a1a0) == id)
        // Only the first six bytes count.
        #expect(KeyID(commitment: counting(6, from: 0xa0) + counting(26)) == id)
        #expect(KeyID(commitment: flipped(commitment, at: 5, bit: 7)) != id)
    }

    @Test func epochKeyIDIsItsCommitmentPrefix() {
        // Key 00…1f: commitment = BLAKE2b-256(key = K, "quire-key-commitment-v2"),
        // computed independently.
        let key = testEpochKey()
        #expect(hex(key.commitment) == "bd64f74aa85fedaf65cd6e247a97b94d7d0ac91d2a1863d4fba0702ff8431168")
        #expect(key.id.description == "bd64f74aa85f")
        #expect(key.id == KeyID(commitment: key.commitment))
        // In a header, the id is bytes 2..<8.
        let h = FrameHeader(kind: .profile, flags: 1, keyID: key.id, bodyLength: 100)
        #expect(Array(h.encoded()[2..<8]) == hexBytes("bd64f74aa85f"))
    }

    @Test func orderAndLimits() {
        #expect(KeyID(rawValue: 1) < KeyID(rawValue: 2))
        #expect(KeyID(rawValue: 0xffff_ffff_ffff).bytes == [UInt8](repeating: 0xff, count: 6))
        #expect(KeyID(rawValue: 0).bytes == [UInt8](repeating: 0, count: 6))
        #expect(KeyID(commitment: []).rawValue == 0)
    }
}

@Suite struct RecordKindTests {
    @Test func properties() {
        let expectations: [(RecordKind, UInt8, Bool, Bool, String)] = [
            (.keyring, 0x01, true, false, "keyring"),
            (.commit, 0x02, true, false, "commit"),
            (.entryRevision, 0x10, true, true, "entry revision"),
            (.blobManifest, 0x11, true, true, "attachment manifest"),
            (.blobChunk, 0x12, true, true, "attachment chunk"),
            (.profile, 0x80, false, true, "profile"),
        ]
        for (kind, raw, critical, sealed, name) in expectations {
            #expect(kind.rawValue == raw)
            #expect(kind.isCritical == critical)
            #expect(kind.isSealedKind == sealed)
            #expect(kind.isKnown)
            #expect(kind.description == name)
        }
        #expect(RecordKind.known.count == 6)
        // 0x81 (an enrollment request in drafts) is not a kind of version 2.
        #expect(!RecordKind(rawValue: 0x81).isKnown)
        let unknownCritical = RecordKind(rawValue: 0x7f)
        #expect(!unknownCritical.isKnown && unknownCritical.isCritical)
        #expect(unknownCritical.description == "kind 0x7f")
        let unknownSkippable = RecordKind(rawValue: 0xfe)
        #expect(!unknownSkippable.isKnown && !unknownSkippable.isCritical)
        #expect(RecordKind(rawValue: 0x00).description == "kind 0x0")
    }
}

@Suite struct ChunkHeaderTests {
    @Test func encodeKnownAnswerAndParse() throws {
        let stream = try StreamID(bytes: counting(16))
        let h = ChunkHeader(stream: stream, index: 0x0102_0304, isFinal: true)
        let encoded = h.encoded()
        #expect(hex(encoded) == "000102030405060708090a0b0c0d0e0f" + "04030201" + "01")
        #expect(ChunkHeader.parse(encoded) == h)
        let notFinal = ChunkHeader(stream: stream, index: 0, isFinal: false)
        #expect(hex(notFinal.encoded()) == "000102030405060708090a0b0c0d0e0f" + "00000000" + "00")
        #expect(ChunkHeader.parse(notFinal.encoded()) == notFinal)
        #expect(ChunkHeader.byteCount == 21)
    }

    @Test func parseFromSlices() throws {
        let h = ChunkHeader(stream: StreamID(using: SeededRandom(label: "chunk")), index: UInt32.max, isFinal: false)
        let buffer = counting(7) + h.encoded() + counting(9)
        #expect(ChunkHeader.parse(buffer[7..<28]) == h)
        #expect(ChunkHeader.parse(buffer[7..<28].lazy.map { $0 }) == h)
        #expect(ChunkHeader.parse(buffer[6..<27]) != h)
    }

    @Test func parseRejects() throws {
        let encoded = ChunkHeader(stream: try StreamID(bytes: counting(16)), index: 5, isFinal: true).encoded()
        var two = encoded
        two[20] = 2
        #expect(ChunkHeader.parse(two) == nil)
        var ff = encoded
        ff[20] = 0xff
        #expect(ChunkHeader.parse(ff) == nil)
        #expect(ChunkHeader.parse(encoded.dropLast()) == nil)
        #expect(ChunkHeader.parse(encoded + [0]) == nil)
        #expect(ChunkHeader.parse([UInt8]()) == nil)
    }
}
