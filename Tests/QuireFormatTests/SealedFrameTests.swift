@_spi(Crypto) import QuireCrypto
@_spi(Format) import QuireFormat
import Testing

/// Opens a whole sealed frame (header and body) with `keys`.
func openFrame(_ frame: [UInt8], keys: [EpochKey], vaultID: VaultID = countingVaultID, header override: FrameHeader? = nil)
    -> Result<[UInt8], FormatError>
{
    guard let parsed = parsedHeader(frame) else {
        return .failure(.malformedFrame(FrameLocation(offset: 0, index: 0), reason: "test: header does not parse"))
    }
    let header = override ?? parsed
    let body = Array(frame[FrameHeader.byteCount...])
    return body.withUnsafeBytes { raw in
        Result { () throws(FormatError) -> [UInt8] in
            try SealedFrame.open(
                body: raw, header: header, location: SealedFrameTests.location, keys: keys, vaultID: vaultID,
                context: DecompressionContext())
        }
    }
}

/// `frame` with its last 32 bytes replaced by its body hash: for a sealed
/// frame the BLAKE2b-256 of `key`'s commitment and the body before them, for
/// a plaintext frame of the body alone (`Spec/format.md §4.2`). A body hash
/// that matches whatever the body now holds.
func withBodyHashRecomputed(_ frame: [UInt8], key: EpochKey = testEpochKey()) -> [UInt8] {
    let body = Array(frame[16..<(frame.count - 32)])
    let sealed = frame[1] & FrameHeader.sealedFlag != 0
    return Array(frame[0..<(frame.count - 32)]) + BLAKE2b.hash((sealed ? key.commitment : []) + body, byteCount: 32)
}

/// An Ed25519 key pair from a fixed 32-byte seed.
func keyPair(seed: [UInt8]) -> Ed25519.KeyPair {
    var copy = seed
    return try! Ed25519.KeyPair(seed: SecureBytes(consuming: &copy))
}

@Suite struct SealedFrameTests {
    static let location = FrameLocation(offset: 64, index: 0)
    static let payloadSizes = [0, 1, 100, 100_000]

    static func compressible(_ n: Int) -> [UInt8] {
        let line = Array("Dined at home with my wife; then to the office again. ".utf8)
        return (0..<n).map { line[$0 % line.count] }
    }

    @Test func knownAnswer() throws {
        // Independent computation (Spec/format.md §4.1, §5.2): header (kind
        // 0x10, sealed, key id bd64f74aa85f of key 00…1f, body 78, check) ‖
        // nonce (first 24 bytes of SeededRandom "frame") ‖ XChaCha20-Poly1305
        // under KDF(key, 1, "quire v2"), AD = vault id ‖ header[0..<12], of
        // "hello" ‖ 0x80 (Padmé(6) = 6) ‖ BLAKE2b-256(key commitment ‖ nonce ‖
        // ciphertext ‖ tag).
        let frame = try SealedFrame.seal(
            kind: .entryRevision, payload: Array("hello".utf8), key: testEpochKey(), vaultID: countingVaultID, compress: false,
            random: SeededRandom(label: "frame"))
        #expect(hex(frame) == """
            1001bd64f74aa85f4e0000005e94f38eeb4560ecbb141f083e5563d0fd86f9d99f798bd2389c26c039acd0b9d31fdec8051420508644342896\
            793ab08cc16a1fe3c7b8be909119521caecf90f456e7e4880aa7826f5cff67fa97dc313f10
            """)
        #expect(frame.count == 16 + 78)
        #expect(openFrame(frame, keys: [testEpochKey()]) == .success(Array("hello".utf8)))
        #expect(SealedFrame.overheadByteCount == 16 + 24 + 16 + 32)
    }

    @Test(arguments: payloadSizes, [false, true])
    func roundTrip(size: Int, compress: Bool) throws {
        for (label, payload) in [("random", SeededRandom(label: "payload \(size)").bytes(size)), ("text", Self.compressible(size))] {
            let key = testEpochKey(epoch: 3)
            let frame = try SealedFrame.seal(
                kind: .entryRevision, payload: payload, key: key, vaultID: countingVaultID, compress: compress,
                random: SeededRandom(label: "nonce"))
            let header = try #require(parsedHeader(frame))
            let packed = Compression.compress(payload)
            // Entry revisions are always stored compressed, even when zstd
            // does not make them smaller (Spec/format.md §6.1, R10-6).
            let expectCompressed = compress
            let stored = expectCompressed ? packed.count : payload.count
            #expect(header.kind == .entryRevision)
            #expect(header.keyID == key.id)
            #expect(header.isSealed)
            #expect(header.isCompressed == expectCompressed, "\(label) \(size)")
            #expect(Int(header.bodyLength) == 24 + referencePadme(stored + 1) + 16 + 32)
            #expect(frame.count == 16 + Int(header.bodyLength))
            #expect(Array(frame[16..<40]) == SeededRandom(label: "nonce").bytes(24))
            // The body ends with the BLAKE2b-256 of the key's commitment and
            // everything before it (Spec/format.md §5.2).
            #expect(Array(frame.suffix(32)) == BLAKE2b.hash(key.commitment + Array(frame[16..<(frame.count - 32)]), byteCount: 32))
            #expect(openFrame(frame, keys: [key]) == .success(payload), "\(label) \(size)")
        }
        if compress && size >= 100 {
            let frame = try SealedFrame.seal(
                kind: .profile, payload: Self.compressible(size), key: testEpochKey(), vaultID: countingVaultID, compress: true,
                random: SeededRandom(label: "n"))
            #expect(frame[1] == 0x03)
        }
    }

    /// A tiny or incompressible entry revision or profile is stored with
    /// the compressed flag set, so that the public flag says nothing about
    /// how compressible the user's text is (Spec/format.md §6.1, R10-6); a
    /// manifest is kept uncompressed when zstd does not help.
    @Test func userTextKindsAreAlwaysCompressed() throws {
        for payload in [[], Array("a".utf8), SeededRandom(label: "incompressible").bytes(3000)] {
            #expect(Compression.compress(payload).count >= payload.count)
            for kind in [RecordKind.entryRevision, .profile, .blobManifest] {
                let frame = try SealedFrame.seal(
                    kind: kind, payload: payload, key: testEpochKey(), vaultID: countingVaultID, compress: true,
                    random: SeededRandom(label: "always"))
                let header = try #require(parsedHeader(frame))
                #expect(header.isCompressed == (kind != .blobManifest), "\(kind) \(payload.count)")
                #expect(openFrame(frame, keys: [testEpochKey()]) == .success(payload))
            }
        }
    }

    @Test func associatedDataLayout() {
        let header = FrameHeader(kind: .blobChunk, flags: 1, keyID: KeyID(rawValue: 0x0605_0403_0201), bodyLength: 99)
        let ad = SealedFrame.associatedData(vaultID: countingVaultID, header: header, publicHeader: [9, 9])
        #expect(ad == counting(16) + [0x12, 0x01, 1, 2, 3, 4, 5, 6, 99, 0, 0, 0] + [9, 9])
        #expect(ad == counting(16) + header.fieldBytes + [9, 9])
    }

    @Test func vaultIDIsBound() throws {
        let frame = try SealedFrame.seal(
            kind: .entryRevision, payload: counting(50), key: testEpochKey(), vaultID: countingVaultID, compress: false,
            random: SeededRandom(label: "vault id"))
        let other = try VaultID(bytes: counting(16, from: 1))
        #expect(openFrame(frame, keys: [testEpochKey()], vaultID: other) == .failure(.authenticationFailed(Self.location)))
        #expect(openFrame(frame, keys: [testEpochKey()]) == .success(counting(50)))
    }

    @Test func everyHeaderFieldIsBound() throws {
        let payload = Self.compressible(2000)
        let key = testEpochKey(epoch: 5)
        let frame = try SealedFrame.seal(
            kind: .entryRevision, payload: payload, key: key, vaultID: countingVaultID, compress: true,
            random: SeededRandom(label: "fields"))
        let h = try #require(parsedHeader(frame))
        #expect(h.isCompressed)
        let id = h.keyID.rawValue
        let changed = [
            FrameHeader(kind: .profile, flags: h.flags, keyID: h.keyID, bodyLength: h.bodyLength),
            FrameHeader(kind: .blobManifest, flags: h.flags, keyID: h.keyID, bodyLength: h.bodyLength),
            FrameHeader(kind: h.kind, flags: FrameHeader.sealedFlag, keyID: h.keyID, bodyLength: h.bodyLength),
            // Every byte of the key id counts (the first and the last).
            FrameHeader(kind: h.kind, flags: h.flags, keyID: KeyID(rawValue: id ^ 0x01), bodyLength: h.bodyLength),
            FrameHeader(kind: h.kind, flags: h.flags, keyID: KeyID(rawValue: id ^ 0x8000_0000_0000), bodyLength: h.bodyLength),
            FrameHeader(kind: h.kind, flags: h.flags, keyID: testEpochKey(epoch: 5, from: 1).id, bodyLength: h.bodyLength),
            FrameHeader(kind: h.kind, flags: h.flags, keyID: h.keyID, bodyLength: h.bodyLength - 1),
            FrameHeader(kind: h.kind, flags: h.flags, keyID: h.keyID, bodyLength: h.bodyLength + 1),
        ]
        for c in changed {
            #expect(openFrame(frame, keys: [key], header: c) == .failure(.authenticationFailed(Self.location)), "\(c)")
        }
        #expect(openFrame(frame, keys: [key], header: h) == .success(payload))
    }

    @Test func everyBodyByteIsAuthenticated() throws {
        let key = testEpochKey()
        let frame = try SealedFrame.seal(
            kind: .entryRevision, payload: counting(30), key: key, vaultID: countingVaultID, compress: false,
            random: SeededRandom(label: "tamper"))
        let h = try #require(parsedHeader(frame))
        for i in 16..<frame.count {
            let damaged = flipped(frame, at: i, bit: i % 8)
            // The body hash catches every change…
            #expect(openFrame(damaged, keys: [key], header: h) == .failure(.authenticationFailed(Self.location)), "byte \(i)")
            // …and with the hash made to match, the AEAD catches every change
            // to the nonce, ciphertext or tag.
            if i < frame.count - 32 {
                #expect(openFrame(withBodyHashRecomputed(damaged), keys: [key], header: h)
                    == .failure(.authenticationFailed(Self.location)), "byte \(i), hash recomputed")
            }
        }
    }

    @Test func keysAreTriedInTurn() throws {
        let right = testEpochKey(epoch: 2, from: 0)
        let wrong = testEpochKey(epoch: 2, from: 1)
        let frame = try SealedFrame.seal(
            kind: .profile, payload: counting(10), key: right, vaultID: countingVaultID, compress: false, random: SeededRandom(label: "k"))
        #expect(openFrame(frame, keys: [wrong, right]) == .success(counting(10)))
        #expect(openFrame(frame, keys: [right, wrong]) == .success(counting(10)))
        #expect(openFrame(frame, keys: [wrong]) == .failure(.authenticationFailed(Self.location)))
        #expect(openFrame(frame, keys: []) == .failure(.authenticationFailed(Self.location)))
    }

    @Test func collidingKeysAreBothTried() throws {
        // Two keys with one key id: the frame names only the id, so a reader
        // holding both must try each (Spec/format.md §5.1).
        let first = CollidingKeys.first(), second = CollidingKeys.second()
        #expect(first.id == CollidingKeys.id && second.id == CollidingKeys.id)
        #expect(first.commitment != second.commitment)
        for (sealer, other) in [(first, second), (second, first)] {
            let frame = try SealedFrame.seal(
                kind: .entryRevision, payload: counting(20), key: sealer, vaultID: countingVaultID, compress: false,
                random: SeededRandom(label: "collision"))
            #expect(parsedHeader(frame)?.keyID == CollidingKeys.id)
            #expect(openFrame(frame, keys: [other, sealer]) == .success(counting(20)))
            #expect(openFrame(frame, keys: [sealer, other]) == .success(counting(20)))
            #expect(openFrame(frame, keys: [other]) == .failure(.authenticationFailed(Self.location)))
        }
    }

    @Test func recordSizeLimit() throws {
        #expect(throws: FormatError.recordTooLarge(byteCount: Limits.maxRecordByteCount + 1, limit: Limits.maxRecordByteCount)) {
            try SealedFrame.seal(
                kind: .entryRevision, payload: [UInt8](repeating: 0, count: Limits.maxRecordByteCount + 1), key: testEpochKey(),
                vaultID: countingVaultID, compress: true, random: SeededRandom(label: "big"))
        }
        // Exactly at the limit, uncompressed: padding, nonce, tag and body
        // hash still fit the frame limit (16 MiB + 1 MiB).
        #expect(Limits.maxRecordByteCount == 16_777_216)
        let maximal = [UInt8](repeating: 0, count: Limits.maxRecordByteCount)
        let raw = try SealedFrame.seal(
            kind: .entryRevision, payload: maximal, key: testEpochKey(), vaultID: countingVaultID, compress: false,
            random: SeededRandom(label: "big"))
        #expect(raw.count == 16 + 24 + 17_301_504 + 16 + 32)
        #expect(raw.count - 16 <= 17_825_792)
        // Compressed, it fits too and opens back to 16 MiB.
        let frame = try SealedFrame.seal(
            kind: .entryRevision, payload: maximal, key: testEpochKey(), vaultID: countingVaultID, compress: true,
            random: SeededRandom(label: "big"))
        #expect(frame.count < 10_000)
        #expect(openFrame(frame, keys: [testEpochKey()]) == .success(maximal))
    }

    // MARK: Hand-made frames that authenticate but break the payload rules

    /// A sealed frame around an arbitrary padded plaintext, built from
    /// `Spec/format.md §5.2` with the primitives alone.
    static func handSealed(plaintext: [UInt8], flags: UInt8 = FrameHeader.sealedFlag, key: EpochKey = testEpochKey()) -> [UInt8] {
        let header = rawFrameHeader(kind: 0x10, flags: flags, keyID: key.id.bytes, length: UInt32(24 + plaintext.count + 16 + 32))
        let nonce = counting(24, from: 200)
        let ad = counting(16) + header[0..<12]
        let recordKey = try! KeyDerivation.derive(from: key.key, subkeyID: 1, context: "quire v2")
        let sealed = nonce + XChaCha20Poly1305.seal(plaintext, key: recordKey, nonce: nonce, authenticating: Array(ad))
        return header + sealed + BLAKE2b.hash(key.commitment + sealed, byteCount: 32)
    }

    @Test func handSealedControl() {
        #expect(openFrame(Self.handSealed(plaintext: [1, 2, 3, 0x80]), keys: [testEpochKey()]) == .success([1, 2, 3]))
    }

    @Test func badPaddingIsReported() {
        for plain: [UInt8] in [[1, 2, 3, 4], [1, 2, 3, 0], [0x80, 0, 0, 0], [1, 0x80, 0, 1], [0x80, 0]] {
            #expect(openFrame(Self.handSealed(plaintext: plain), keys: [testEpochKey()]) == .failure(.badPadding(Self.location)), "\(plain)")
        }
        // No plaintext at all: the body is shorter than its kind's row allows
        // (24 + 1 + 16 + 32 = 73 bytes, Spec/format.md §4.3).
        #expect(openFrame(Self.handSealed(plaintext: []), keys: [testEpochKey()])
            == .failure(.malformedFrame(Self.location, reason: "a sealed record body is shorter than its fixed parts")))
    }

    @Test func compressedPayloadProblemsAreReported() {
        let flags = FrameHeader.sealedFlag | FrameHeader.compressedFlag
        func padded(_ b: [UInt8]) -> [UInt8] {
            var p = b
            Padding.pad(&p)
            return p
        }
        // Not a zstd frame.
        #expect(openFrame(Self.handSealed(plaintext: padded(Array("plain text".utf8)), flags: flags), keys: [testEpochKey()])
            == .failure(.decompressionFailed(Self.location, reason: "not a zstd frame")))
        // A frame that does not declare its size.
        let noSize: [UInt8] = [0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x00, 0x29, 0x00, 0x00] + Array("hello".utf8)
        #expect(openFrame(Self.handSealed(plaintext: padded(noSize), flags: flags), keys: [testEpochKey()])
            == .failure(.decompressionFailed(Self.location, reason: "the zstd frame does not declare its size")))
        // A declared size over the record limit (a decompression bomb).
        let bomb: [UInt8] = [0x28, 0xb5, 0x2f, 0xfd, 0xe0, 0, 0, 0, 0, 0, 1, 0, 0, 0x29, 0x00, 0x00] + Array("hello".utf8)
        #expect(openFrame(Self.handSealed(plaintext: padded(bomb), flags: flags), keys: [testEpochKey()])
            == .failure(.sizeLimitExceeded(Self.location, what: "declared decompressed size", size: 1 << 40, limit: UInt64(Limits.maxRecordByteCount))))
        // Trailing bytes after the zstd frame.
        let trailing = Compression.compress(Self.compressible(300)) + [0]
        #expect(openFrame(Self.handSealed(plaintext: padded(trailing), flags: flags), keys: [testEpochKey()])
            == .failure(.decompressionFailed(Self.location, reason: "1 bytes follow the zstd frame")))
        // A valid compressed payload, as control.
        let good = Compression.compress(Self.compressible(300))
        #expect(openFrame(Self.handSealed(plaintext: padded(good), flags: flags), keys: [testEpochKey()]) == .success(Self.compressible(300)))
        // Declares 3 bytes, holds 5.
        let liar: [UInt8] = [0x28, 0xb5, 0x2f, 0xfd, 0x20, 0x03, 0x29, 0x00, 0x00] + Array("hello".utf8)
        switch openFrame(Self.handSealed(plaintext: padded(liar), flags: flags), keys: [testEpochKey()]) {
        case .failure(.decompressedSizeMismatch(let loc, let declared, _)):
            #expect(loc == Self.location)
            #expect(declared == 3)
        case .failure(.decompressionFailed(let loc, _)):
            #expect(loc == Self.location)
        case let other:
            Issue.record("expected a decompression error, got \(other)")
        }
    }

    // MARK: The body hash (Spec/format.md §4.2)

    /// The hand-sealed frame of `counting(100)` (padded to 104 bytes), as an
    /// independent computation gives it.
    static let rewriteOriginalHex = """
        1001bd64f74aa85fb0000000fe4c523ac8c9cacbcccdcecfd0d1d2d3d4d5d6d7d8d9dadbdcdddedfdd9067da3efc7f6d5c465c8fe03e41223f\
        8689c4f1d9e2e389c9546df6376ed0c8a0b030f1ffcdbf59aec2f6666148b5f428c74523aec36752cabe9df69b0c16674f450157887be23990\
        d1a2a287663e44a2f3270d6150e4fdc22803876b51e1b14a399d5d55dd5c72f565e526b973545991223a8b942164cde6cf4e4d8f53b96fe67c\
        0aa8bffbf8ff8204f9591895ee19317bb88b5eb351
        """

    /// A rewrite of that frame by someone who holds the key: ciphertext
    /// blocks 1 and 3 replaced so that the Poly1305 tag stays the same
    /// (computed offline from the one-time Poly1305 key: d₁·r⁶ + d₃·r⁴ ≡ 0
    /// mod 2¹³⁰ − 5). Header, nonce, tag and body hash are the original's.
    static func keyHolderRewrite(of original: [UInt8]) -> [UInt8] {
        var forged = original
        forged.replaceSubrange(56..<72, with: hexBytes("f2bfc7027ba222ff11e9ef5fe2a9877b"))
        forged.replaceSubrange(88..<104, with: hexBytes("55d83d1bb4d6729dff355e232179e400"))
        return forged
    }

    @Test func ciphertextAlteredKeepingItsTagIsCaughtByTheBodyHash() throws {
        let original = Self.handSealed(plaintext: padded(counting(100)))
        #expect(hex(original) == Self.rewriteOriginalHex)
        #expect(openFrame(original, keys: [testEpochKey()]) == .success(counting(100)))
        let forged = Self.keyHolderRewrite(of: original)
        #expect(forged != original)
        // Same tag (the 16 bytes before the body hash), same body hash.
        #expect(Array(forged[(forged.count - 48)...]) == Array(original[(original.count - 48)...]))
        // The AEAD alone accepts the rewrite: it opens to other content.
        let recordKey = try testEpochKey().subkey(.record)
        let ad = counting(16) + Array(original[0..<12])
        let altered = try XChaCha20Poly1305.open(
            Array(forged[40..<(forged.count - 32)]), key: recordKey, nonce: Array(forged[16..<40]), authenticating: ad)
        #expect(altered.count == 104 && altered != padded(counting(100)))
        #expect(Array(altered[100...]) == [0x80, 0, 0, 0])
        // The body hash does not: the frame is not released.
        #expect(openFrame(forged, keys: [testEpochKey()]) == .failure(.authenticationFailed(Self.location)))
        // With a matching body hash it would open (and the changed body hash
        // is what breaks the commit chain instead, VaultFileTests).
        #expect(openFrame(withBodyHashRecomputed(forged), keys: [testEpochKey()]) == .success(Array(altered[0..<100])))
    }

    @Test func resealedContentUnderTheOldBodyHashIsRejected() throws {
        // A key holder seals other content (a valid AEAD) but keeps the old
        // body hash, which is all the commit chain sees of the body.
        let original = Self.handSealed(plaintext: padded(counting(100)))
        let other = Self.handSealed(plaintext: padded(counting(100, from: 1)))
        #expect(openFrame(other, keys: [testEpochKey()]) == .success(counting(100, from: 1)))
        let spliced = Array(other[0..<(other.count - 32)]) + Array(original.suffix(32))
        #expect(openFrame(spliced, keys: [testEpochKey()]) == .failure(.authenticationFailed(Self.location)))
        // Only the hash is wrong: the same bytes with the right hash open.
        #expect(withBodyHashRecomputed(spliced) == other)
    }

    @Test func bodyHashHelpers() {
        let body = counting(40) + BLAKE2b.hash(counting(40), byteCount: 32)
        #expect(body.withUnsafeBytes { SealedFrame.bodyHashMatches($0) })
        #expect(!flipped(body, at: 0).withUnsafeBytes { SealedFrame.bodyHashMatches($0) })
        #expect(!flipped(body, at: 71).withUnsafeBytes { SealedFrame.bodyHashMatches($0) })
        #expect(!counting(31).withUnsafeBytes { SealedFrame.bodyHashMatches($0) })
        // An empty body before the hash: the hash of nothing.
        #expect(BLAKE2b.hash([], byteCount: 32).withUnsafeBytes { SealedFrame.bodyHashMatches($0) })
        #expect(counting(40).withUnsafeBytes { SealedFrame.bodyHash($0) } == BLAKE2b.hash(counting(40), byteCount: 32))
    }

    // MARK: Attachment chunks

    static func sealChunk(
        _ plaintext: [UInt8], _ chunk: ChunkHeader, key: EpochKey = testEpochKey(), vaultID: VaultID = countingVaultID,
        random: any RandomSource = SeededRandom(label: "chunk nonce")
    ) throws -> [UInt8] {
        var frame = [UInt8](repeating: 0xa5, count: FrameHeader.byteCount + SealedFrame.chunkBodyLength(plaintextCount: plaintext.count))
        try plaintext.withUnsafeBytes { p in
            try frame.withUnsafeMutableBytes { raw in
                try SealedFrame.sealChunk(plaintext: p, into: raw, chunk: chunk, key: key, vaultID: vaultID, random: random)
            }
        }
        return frame
    }

    static func openChunk(_ frame: [UInt8], _ chunk: ChunkHeader, keys: [EpochKey] = [testEpochKey()], vaultID: VaultID = countingVaultID, output: inout [UInt8])
        -> Result<Int, FormatError>
    {
        guard let header = parsedHeader(frame) else {
            return .failure(.malformedFrame(location, reason: "test: header does not parse"))
        }
        let body = Array(frame[16...])
        // The library decrypts into a caller's buffer of one chunk of the
        // stream; the chunk's bytes are its first n.
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 65536, alignment: 16)
        defer { buffer.deallocate() }
        let result = body.withUnsafeBytes { raw in
            Result { () throws(FormatError) -> Int in
                try SealedFrame.openChunk(body: raw, header: header, chunk: chunk, location: location, keys: keys, vaultID: vaultID, into: buffer)
            }
        }
        if case .success(let n) = result { output = Array(buffer[0..<n]) }
        return result
    }

    static let stream = try! StreamID(bytes: counting(16, from: 0x40))

    @Test func chunkBodyLengths() {
        // nonce (24) ‖ chunk header (21) ‖ stream bytes ‖ tag (16): no padding.
        #expect(SealedFrame.chunkOverheadByteCount == 61)
        #expect(SealedFrame.chunkBodyLength(plaintextCount: 65536) == 24 + 21 + 65536 + 16)
        #expect(SealedFrame.fullChunkBodyLength == 65_597)
        #expect(SealedFrame.chunkBodyLength(plaintextCount: 1) == 62)
        #expect(SealedFrame.chunkBodyLength(plaintextCount: 100) == 24 + 21 + 100 + 16)
        #expect(Limits.chunkByteCount == 65536)
    }

    @Test(arguments: [
        (UInt32(0), true, 1), (0, true, 1000), (0, false, 65536), (0, true, 65536), (1, true, 1), (7, true, 65535),
        (7, false, 65536), (UInt32.max, true, 65536),
    ])
    func chunkRoundTrip(index: UInt32, isFinal: Bool, count: Int) throws {
        let plaintext = SeededRandom(label: "chunk \(index) \(count)").bytes(count)
        let chunk = ChunkHeader(stream: Self.stream, index: index, isFinal: isFinal)
        let key = testEpochKey()
        let frame = try Self.sealChunk(plaintext, chunk, key: key)
        let header = try #require(parsedHeader(frame))
        #expect(header == FrameHeader(kind: .blobChunk, flags: FrameHeader.sealedFlag, keyID: key.id, bodyLength: UInt32(61 + count)))
        #expect(frame.count == 16 + 61 + count)
        #expect(Array(frame[16..<40]) == SeededRandom(label: "chunk nonce").bytes(24))
        #expect(Array(frame[40..<61]) == chunk.encoded())
        // No body hash: the frame ends with the AEAD tag of the stream bytes,
        // whose associated data is vault id ‖ header fields ‖ chunk header.
        let ad = counting(16) + header.fieldBytes + chunk.encoded()
        let recordKey = try KeyDerivation.derive(from: key.key, subkeyID: 1, context: "quire v2")
        #expect(Array(frame[61...]) == XChaCha20Poly1305.seal(plaintext, key: recordKey, nonce: Array(frame[16..<40]), authenticating: ad))
        var output: [UInt8] = []
        #expect(Self.openChunk(frame, chunk, output: &output) == .success(count))
        #expect(output == plaintext)
    }

    @Test func chunkDecryptsIntoTheCallersBuffer() throws {
        // openChunk writes the chunk's stream bytes at the start of the
        // caller's buffer and touches nothing past them.
        let chunk = ChunkHeader(stream: Self.stream, index: 0, isFinal: true)
        let frame = try Self.sealChunk(counting(10) + [0x80, 0], chunk)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 65536, alignment: 16)
        defer { buffer.deallocate() }
        buffer.initializeMemory(as: UInt8.self, repeating: 0xee)
        let header = try #require(parsedHeader(frame))
        let n = try Array(frame[16...]).withUnsafeBytes { raw in
            try SealedFrame.openChunk(body: raw, header: header, chunk: chunk, location: Self.location, keys: [testEpochKey()], vaultID: countingVaultID, into: buffer)
        }
        #expect(n == 12)
        #expect(Array(buffer[0..<12]) == counting(10) + [0x80, 0])
        #expect(buffer[12] == 0xee)
    }

    @Test(arguments: [1, 1000, 65535])
    func nonFinalChunkMustBeExactlyOneChunk(count: Int) throws {
        let chunk = ChunkHeader(stream: Self.stream, index: 2, isFinal: false)
        let frame = try Self.sealChunk([UInt8](repeating: 1, count: count), chunk)
        var out: [UInt8] = []
        #expect(Self.openChunk(frame, chunk, output: &out) == .failure(.chunkNoncanonical(
            stream: Self.stream.description, index: 2,
            reason: "a non-final chunk must hold exactly 65536 bytes, it holds \(count)")))
    }

    @Test func emptyChunkIsMalformed() throws {
        // Format 2 has no per-chunk padding: an empty attachment is one chunk
        // holding the byte 0x80 (Spec/format.md §7.1), so a chunk holding no
        // stream bytes at all (61-byte body) breaks the row 62 … 65,597.
        var out: [UInt8] = []
        for index: UInt32 in [0, 1, 1000] {
            let chunk = ChunkHeader(stream: Self.stream, index: index, isFinal: true)
            #expect(Self.openChunk(try Self.sealChunk([], chunk), chunk, output: &out)
                == .failure(.malformedFrame(Self.location, reason: "chunk body shorter than its fixed parts")))
        }
        let empty = ChunkHeader(stream: Self.stream, index: 0, isFinal: true)
        #expect(Self.openChunk(try Self.sealChunk([0x80], empty), empty, output: &out) == .success(1))
        #expect(out == [0x80])
    }

    @Test func chunkOverOneChunkOfTheStream() throws {
        // 65,537 stream bytes fit the frame limit, but no chunk holds more
        // than 64 KiB of the stream, final or not.
        for isFinal in [true, false] {
            let chunk = ChunkHeader(stream: Self.stream, index: 0, isFinal: isFinal)
            let frame = try Self.sealChunk([UInt8](repeating: 3, count: 65537), chunk)
            var out: [UInt8] = []
            #expect(Self.openChunk(frame, chunk, output: &out) == .failure(.chunkNoncanonical(
                stream: Self.stream.description, index: 0, reason: "holds more than one chunk of content")))
        }
    }

    @Test func chunkHeaderVaultAndKeyAreBound() throws {
        let chunk = ChunkHeader(stream: Self.stream, index: 4, isFinal: true)
        let frame = try Self.sealChunk(counting(77), chunk)
        var out: [UInt8] = []
        let fail = Result<Int, FormatError>.failure(.authenticationFailed(Self.location))
        #expect(Self.openChunk(frame, ChunkHeader(stream: Self.stream, index: 5, isFinal: true), output: &out) == fail)
        #expect(Self.openChunk(frame, ChunkHeader(stream: try StreamID(bytes: counting(16)), index: 4, isFinal: true), output: &out) == fail)
        #expect(Self.openChunk(frame, chunk, vaultID: try VaultID(bytes: counting(16, from: 9)), output: &out) == fail)
        #expect(Self.openChunk(frame, chunk, keys: [testEpochKey(from: 1)], output: &out) == fail)
        // Every body byte counts, the public chunk header included once a
        // reader takes the chunk header from the body, as the scanner does.
        for i in stride(from: 16, to: frame.count, by: 3) {
            let damaged = flipped(frame, at: i)
            let parsed = ChunkHeader.parse(damaged[40..<61]) ?? ChunkHeader(stream: Self.stream, index: 999, isFinal: false)
            let result = Self.openChunk(damaged, parsed, output: &out)
            #expect(result != .success(77), "byte \(i)")
            if i < 40 || i >= 61 { #expect(result == fail, "byte \(i)") }
        }
        #expect(Self.openChunk(frame, chunk, output: &out) == .success(77))
    }

    @Test func shortChunkBodyIsMalformed() {
        let chunk = ChunkHeader(stream: Self.stream, index: 0, isFinal: true)
        let out = UnsafeMutableRawBufferPointer.allocate(byteCount: 65536, alignment: 16)
        defer { out.deallocate() }
        for length in [32, 60, 61] {
            let header = FrameHeader(kind: .blobChunk, flags: 1, keyID: testEpochKey().id, bodyLength: UInt32(length))
            let result = [UInt8](repeating: 0, count: length).withUnsafeBytes { raw in
                Result { () throws(FormatError) -> Int in
                    try SealedFrame.openChunk(
                        body: raw, header: header, chunk: chunk, location: Self.location, keys: [testEpochKey()], vaultID: countingVaultID, into: out)
                }
            }
            #expect(result == .failure(.malformedFrame(Self.location, reason: "chunk body shorter than its fixed parts")), "\(length)")
        }
    }
}

/// `bytes ‖ 0x80 ‖ 0x00…` of length Padmé(n + 1), written from the definition.
func padded(_ bytes: [UInt8]) -> [UInt8] {
    bytes + [0x80] + [UInt8](repeating: 0, count: referencePadme(bytes.count + 1) - bytes.count - 1)
}

@Suite struct CommitChainTests {
    static let header = FrameHeader(kind: .entryRevision, flags: 1, keyID: testEpochKey().id, bodyLength: 100)

    /// Key pair of seed 20…3f; public key 29acbae1… (computed independently).
    static let signer = keyPair(seed: counting(32, from: 0x20))

    /// The digest of one summary (header 00…0f, trailer 64…83), and the head
    /// of the unattested commit over it extending h_0, under key 00…1f and
    /// vault 00…0f, from an independent computation (PyNaCl, from
    /// Spec/format.md §9.2).
    static let digestHex = "bbb44d5c8acea0fe30ad4e8a59858d9bc1cb20ecf1abd9243ff43eded2678abb"
    static let headHex = "f210be9225e41b97ec802fa73bbbd8d7b6a5f0c4f299ca939e1d21487255565e"
    /// The head of the commit over the same group attested by ``signer``.
    static let attestedHeadHex = "cc917eaf6546b4038af46a268fe5dc54e6182472fb8ef0b682e7a946fa315273"

    static func knownDigest() -> [UInt8] {
        var digest = CommitChain.Digest()
        digest.add(header: counting(16), trailer: counting(32, from: 100))
        return digest.finalize()
    }

    /// The head of the unattested commit over ``knownDigest()`` extending h_0.
    static func knownHead() throws -> [UInt8] {
        Array(try body(CommitChain.unattested)[0..<32])
    }

    @Test func knownAnswer() throws {
        // D = BLAKE2b-256(00…0f ‖ 64…83); h = BLAKE2b-256 keyed with
        // KDF(key, 2, "quire v2") over "quire-chain-v3" ‖ vault id ‖ 0³² ‖ D ‖
        // commit header[0..<12] (kind 2, flags 0, key id, length 200) ‖ the
        // stored attestation (nonce ‖ sealed 0⁹⁶, below).
        var digest = CommitChain.Digest()
        digest.add(header: counting(16), trailer: counting(32, from: 100))
        #expect(digest.frameCount == 1)
        let d = digest.finalize()
        #expect(hex(d) == Self.digestHex)
        #expect(hex(CommitChain.commitHeader(keyID: testEpochKey().id).encoded()) == "0200bd64f74aa85fc8000000" + "31cd3047")
        #expect(hex(try Self.knownHead()) == Self.headHex)
    }

    @Test func commitBodyKnownAnswers() throws {
        // head ‖ previous head ‖ nonce ‖ AEAD(attestation key, nonce, A, ad),
        // ad = vault id ‖ commit header[0..<12] ‖ previous head ‖ D, nonce =
        // BLAKE2b-192 keyed with the nonce key KDF(key, 6, "quire v2") of
        // "quire-commit-nonce-v3" ‖ ad ‖ A, and the head over nonce ‖ sealed
        // (sixth review R6-1); computed independently (PyNaCl, from
        // Spec/format.md §9.2) for A = 0⁹⁶ and for A = signer ‖ Ed25519
        // signature of "quire-commit-v2" ‖ vault id ‖ key commitment ‖
        // previous head ‖ D, previous head h_0.
        let key = testEpochKey()
        let header = CommitChain.commitHeader(keyID: key.id)
        let previous = CommitChain.genesisHead
        let unattested = try CommitChain.body(
            previousHead: previous, digest: Self.knownDigest(), attestation: CommitChain.unattested, key: key, vaultID: countingVaultID, commitHeader: header)
        #expect(hex(unattested) == Self.headHex + hex(previous) + """
            0864751901427e9de1ea5104a0ad22dad4d1ea2d4effce38b03ae3c49fed991e9b30dcb0a602ede364245d7af158f3a93fb92e4bf839936e\
            9455186012f635e88d5ef14eb2499a9315fc0c2bc99946c2065319b86ab22b07de0c7ff329f5a7c8b8d7b92882ea3a23dc8f32c6648fa181\
            6e7d8a5bc5d3941d34f24705692bdc734b6c83e8a0d1be1e
            """)
        #expect(hex(Self.signer.publicKey) == "29acbae141bccaf0b22e1a94d34d0bc7361e526d0bfe12c89794bc9322966dd7")
        let a = CommitChain.attestation(keyCommitment: testEpochKey().commitment, previousHead: previous, digest: Self.knownDigest(), vaultID: countingVaultID, signer: Self.signer)
        #expect(a.count == 96 && Array(a[0..<32]) == Self.signer.publicKey)
        let attested = try CommitChain.body(previousHead: previous, digest: Self.knownDigest(), attestation: a, key: key, vaultID: countingVaultID, commitHeader: header)
        #expect(hex(attested) == Self.attestedHeadHex + hex(previous) + """
            5bc51e927ac80145ad5655fd01b591c3b041e7593df01622491861ec6cbe38923bb0710671e6082f096cfb1ec7c48d41b80254c5b4574387\
            c39533cf53fe63fc5e180d9eacf24e976445a922d37c9ad4c1c620afd3b55ca4703d10f59632b72faa4852d1f1563523bdb98bb44a2e2496\
            42989ddd12f5bde8a2feffd67b004a6e0375643a3c75df3e
            """)
        #expect(unattested.count == 200 && attested.count == 200)
        #expect(CommitChain.storedPreviousHead(body: attested) == previous)
    }

    @Test func digestIsTheHashOfTheSummaries() {
        var digest = CommitChain.Digest()
        let h1 = Self.header.encoded(), t1 = counting(32)
        let h2 = FrameHeader(kind: .blobChunk, flags: 1, keyID: testEpochKey().id, bodyLength: 62).encoded(), t2 = counting(16, from: 50)
        digest.add(header: h1, trailer: t1)
        digest.add(header: h2, trailer: t2)
        #expect(digest.frameCount == 2)
        let d = digest.finalize()
        #expect(d == BLAKE2b.hash(h1 + t1 + h2 + t2, byteCount: 32))
        let empty = CommitChain.Digest()
        let e = empty.finalize()
        #expect(e == BLAKE2b.hash([], byteCount: 32))
        var taken = CommitChain.Digest()
        taken.add(header: h1, trailer: t1)
        #expect(taken.take() == BLAKE2b.hash(h1 + t1, byteCount: 32))
        #expect(taken.frameCount == 0)
        #expect(taken.take() == e)
    }

    @Test func headIsTheKeyedHashOfItsInputs() throws {
        // Spec/format.md §9.2, with the commit key derived independently.
        let key = testEpochKey(from: 3)
        let d = BLAKE2b.hash(counting(10), byteCount: 32)
        let previous = counting(32, from: 77)
        let header = CommitChain.commitHeader(keyID: key.id)
        let stored = counting(136, from: 9)
        let head = try CommitChain.head(key: key, vaultID: countingVaultID, previousHead: previous, digest: d, commitHeader: header, storedAttestation: stored)
        let message = Array("quire-chain-v3".utf8) + counting(16) + previous + d + header.fieldBytes + stored
        let commitKey = try KeyDerivation.derive(from: key.key, subkeyID: 2, context: "quire v2")
        #expect(head == BLAKE2b.mac(message, key: commitKey, byteCount: 32))
        let recordKey = try KeyDerivation.derive(from: key.key, subkeyID: 1, context: "quire v2")
        #expect(head != BLAKE2b.mac(message, key: recordKey, byteCount: 32))
    }

    @Test func headDependsOnEveryInput() throws {
        let key = testEpochKey()
        let d = BLAKE2b.hash(counting(10), byteCount: 32)
        let h1 = CommitChain.commitHeader(keyID: key.id)
        let stored = counting(136, from: 3)
        func head(_ k: EpochKey?, vault: VaultID?, previous: [UInt8]?, digest: [UInt8]?, header: FrameHeader?, attestation: [UInt8]? = nil) throws -> [UInt8] {
            try CommitChain.head(
                key: k ?? key, vaultID: vault ?? countingVaultID, previousHead: previous ?? CommitChain.genesisHead, digest: digest ?? d,
                commitHeader: header ?? h1, storedAttestation: attestation ?? stored)
        }
        let base = try head(nil, vault: nil, previous: nil, digest: nil, header: nil)
        #expect(base.count == 32)
        let variants: [[UInt8]] = [
            try head(testEpochKey(from: 1), vault: nil, previous: nil, digest: nil, header: nil),
            try head(nil, vault: try VaultID(bytes: counting(16, from: 1)), previous: nil, digest: nil, header: nil),
            try head(nil, vault: nil, previous: flipped(CommitChain.genesisHead, at: 31), digest: nil, header: nil),
            try head(nil, vault: nil, previous: nil, digest: flipped(d, at: 0), header: nil),
            try head(nil, vault: nil, previous: nil, digest: nil, header: CommitChain.commitHeader(keyID: testEpochKey(from: 1).id)),
            try head(nil, vault: nil, previous: nil, digest: nil, header: FrameHeader(kind: .commit, flags: 0, keyID: key.id, bodyLength: 201)),
            try head(nil, vault: nil, previous: nil, digest: nil, header: FrameHeader(kind: .commit, flags: 1, keyID: key.id, bodyLength: 200)),
            // The stored attestation (body 64..<200): its first and last byte
            // (sixth review R6-1: it was covered by nothing).
            try head(nil, vault: nil, previous: nil, digest: nil, header: nil, attestation: flipped(stored, at: 0)),
            try head(nil, vault: nil, previous: nil, digest: nil, header: nil, attestation: flipped(stored, at: 135)),
        ]
        for (i, v) in variants.enumerated() { #expect(v != base, "variant \(i)") }
        #expect(Set(variants).count == variants.count)
        // The epoch number is not an input, and it is deterministic.
        #expect(try head(testEpochKey(epoch: 9), vault: nil, previous: nil, digest: nil, header: nil) == base)
        #expect(try head(nil, vault: nil, previous: nil, digest: nil, header: nil) == base)
    }

    @Test func digestDependsOnOrderAndContent() {
        func digest(_ pairs: [([UInt8], [UInt8])]) -> [UInt8] {
            var d = CommitChain.Digest()
            for (h, t) in pairs { d.add(header: h, trailer: t) }
            return d.finalize()
        }
        let a = (counting(16), counting(32)), b = (counting(16, from: 1), counting(32, from: 1))
        #expect(digest([a, b]) != digest([b, a]))
        #expect(digest([a, b]) != digest([a]))
        #expect(digest([a, a]) != digest([a]))
    }

    @Test func constants() {
        let id = testEpochKey().id
        #expect(CommitChain.commitHeader(keyID: id) == FrameHeader(kind: .commit, flags: 0, keyID: id, bodyLength: 200))
        #expect(CommitChain.genesisHead == [UInt8](repeating: 0, count: 32))
        #expect(CommitChain.headByteCount == 32 && CommitChain.digestByteCount == 32)
        #expect(CommitChain.attestationByteCount == 96)
        #expect(CommitChain.bodyByteCount == 32 + 32 + 24 + 96 + 16)
        #expect(CommitChain.unattested == [UInt8](repeating: 0, count: 96))
        #expect(CommitChain.signedMessage(vaultID: countingVaultID, keyCommitment: counting(32, from: 80), previousHead: counting(32, from: 40), digest: counting(32, from: 5))
            == Array("quire-commit-v2".utf8) + counting(16) + counting(32, from: 80) + counting(32, from: 40) + counting(32, from: 5))
    }

    // MARK: Attestation (Spec/format.md §9.2, §9.4)

    static func check(_ body: [UInt8], previous: [UInt8] = CommitChain.genesisHead, digest: [UInt8]? = nil, key: EpochKey = testEpochKey(),
                      vaultID: VaultID = countingVaultID, header: FrameHeader? = nil) -> CommitChain.Attestation {
        CommitChain.checkAttestation(
            body: body, previousHead: previous, digest: digest ?? knownDigest(), key: key, vaultID: vaultID,
            commitHeader: header ?? CommitChain.commitHeader(keyID: key.id))
    }

    static func body(_ attestation: [UInt8]) throws -> [UInt8] {
        try CommitChain.body(
            previousHead: CommitChain.genesisHead, digest: knownDigest(), attestation: attestation, key: testEpochKey(), vaultID: countingVaultID,
            commitHeader: CommitChain.commitHeader(keyID: testEpochKey().id))
    }

    /// A commit body whose attestation is sealed under `nonce` rather than
    /// the synthetic nonce.
    static func bodyWithNonce(_ nonce: [UInt8], attestation: [UInt8]) throws -> [UInt8] {
        let key = testEpochKey()
        let header = CommitChain.commitHeader(keyID: key.id)
        let ad = counting(16) + header.fieldBytes + CommitChain.genesisHead + knownDigest()
        let attestationKey = try KeyDerivation.derive(from: key.key, subkeyID: 4, context: "quire v2")
        let stored = nonce + XChaCha20Poly1305.seal(attestation, key: attestationKey, nonce: nonce, authenticating: ad)
        let head = try CommitChain.head(
            key: key, vaultID: countingVaultID, previousHead: CommitChain.genesisHead, digest: knownDigest(), commitHeader: header, storedAttestation: stored)
        return head + CommitChain.genesisHead + stored
    }

    @Test func attestedAndUnattested() throws {
        let signed = CommitChain.attestation(keyCommitment: testEpochKey().commitment, previousHead: CommitChain.genesisHead, digest: Self.knownDigest(), vaultID: countingVaultID, signer: Self.signer)
        #expect(Ed25519.verify(
            signature: Array(signed[32...]), message: Array("quire-commit-v2".utf8) + counting(16) + testEpochKey().commitment + CommitChain.genesisHead + Self.knownDigest(),
            publicKey: Self.signer.publicKey))
        #expect(Self.check(try Self.body(signed)) == .signed(signer: Self.signer.publicKey))
        #expect(Self.check(try Self.body(CommitChain.unattested)) == .unattested)
        // What merge carries: the plaintext attestation.
        let header = CommitChain.commitHeader(keyID: testEpochKey().id)
        let h0 = CommitChain.genesisHead, d = Self.knownDigest()
        #expect(CommitChain.openAttestation(body: try Self.body(signed), previousHead: h0, digest: d, key: testEpochKey(), vaultID: countingVaultID, commitHeader: header) == signed)
        #expect(CommitChain.openAttestation(body: try Self.body(signed), previousHead: h0, digest: d, key: testEpochKey(from: 1), vaultID: countingVaultID, commitHeader: header) == nil)
        #expect(CommitChain.openAttestation(body: try Self.body(signed), previousHead: counting(32), digest: d, key: testEpochKey(), vaultID: countingVaultID, commitHeader: header) == nil)
    }

    @Test func everyFlippedAttestationByteFails() throws {
        let signed = try Self.body(CommitChain.attestation(keyCommitment: testEpochKey().commitment, previousHead: CommitChain.genesisHead, digest: Self.knownDigest(), vaultID: countingVaultID, signer: Self.signer))
        // Nonce and sealed attestation: the box no longer opens. (The box's
        // associated data holds the previous head and the digest the reader
        // passes, not the stored head: the stored head covers the box, §9.2.)
        for i in 64..<200 {
            #expect(Self.check(flipped(signed, at: i, bit: i % 8)) == .failed(reason: "the sealed attestation does not open"), "byte \(i)")
        }
        let unattested = try Self.body(CommitChain.unattested)
        for i in stride(from: 64, to: 200, by: 7) {
            #expect(Self.check(flipped(unattested, at: i)) == .failed(reason: "the sealed attestation does not open"), "byte \(i)")
        }
    }

    @Test func attestationIsBoundToVaultKeyAndHeader() throws {
        let signed = try Self.body(CommitChain.attestation(keyCommitment: testEpochKey().commitment, previousHead: CommitChain.genesisHead, digest: Self.knownDigest(), vaultID: countingVaultID, signer: Self.signer))
        let fail = CommitChain.Attestation.failed(reason: "the sealed attestation does not open")
        #expect(Self.check(signed, key: testEpochKey(from: 1), header: CommitChain.commitHeader(keyID: testEpochKey().id)) == fail)
        #expect(Self.check(signed, vaultID: try VaultID(bytes: counting(16, from: 1))) == fail)
        #expect(Self.check(signed, header: FrameHeader(kind: .commit, flags: 0, keyID: KeyID(rawValue: 1), bodyLength: 200)) == fail)
        #expect(Self.check(Array(signed.dropLast())) == .failed(reason: "the commit body is not 200 bytes"))
    }

    @Test func signatureOverAnotherGroupFails() throws {
        // Signed over another digest (a group the signer never saw), or by a
        // key that is not the one named.
        let other = CommitChain.attestation(keyCommitment: testEpochKey().commitment, previousHead: CommitChain.genesisHead, digest: flipped(Self.knownDigest(), at: 3), vaultID: countingVaultID, signer: Self.signer)
        #expect(Self.check(try Self.body(other)) == .failed(reason: "the signature does not verify"))
        // The same group checked as extending another head (a group moved,
        // or heads recomputed after an insertion): the signature covers
        // h_(k−1) (Spec/format.md §9.2, third review item 4).
        let here = CommitChain.attestation(keyCommitment: testEpochKey().commitment, previousHead: CommitChain.genesisHead, digest: Self.knownDigest(), vaultID: countingVaultID, signer: Self.signer)
        #expect(Self.check(try Self.body(here)) == .signed(signer: Self.signer.publicKey))
        #expect(Self.check(try Self.body(here), previous: counting(32, from: 1)) == .failed(reason: "the sealed attestation does not open"))
        #expect(CommitChain.attestationSigns(here, keyCommitment: testEpochKey().commitment, previousHead: CommitChain.genesisHead, digest: Self.knownDigest(), vaultID: countingVaultID))
        #expect(!CommitChain.attestationSigns(here, keyCommitment: testEpochKey().commitment, previousHead: counting(32, from: 1), digest: Self.knownDigest(), vaultID: countingVaultID))
        let otherSigner = keyPair(seed: counting(32, from: 0x40))
        var named = CommitChain.attestation(keyCommitment: testEpochKey().commitment, previousHead: CommitChain.genesisHead, digest: Self.knownDigest(), vaultID: countingVaultID, signer: Self.signer)
        named.replaceSubrange(0..<32, with: otherSigner.publicKey)
        #expect(Self.check(try Self.body(named)) == .failed(reason: "the signature does not verify"))
        // Another vault's signature over the same digest.
        let elsewhere = CommitChain.attestation(keyCommitment: testEpochKey().commitment, previousHead: CommitChain.genesisHead, digest: Self.knownDigest(), vaultID: try VaultID(bytes: counting(16, from: 1)), signer: Self.signer)
        #expect(Self.check(try Self.body(elsewhere)) == .failed(reason: "the signature does not verify"))
        // A different signer that signs properly is a valid signature: who
        // may attest is decided by the reader's member list (VaultFileTests).
        let byOther = CommitChain.attestation(keyCommitment: testEpochKey().commitment, previousHead: CommitChain.genesisHead, digest: Self.knownDigest(), vaultID: countingVaultID, signer: otherSigner)
        #expect(Self.check(try Self.body(byOther)) == .signed(signer: otherSigner.publicKey))
    }

    /// Fourth review C2: a member's `A`, sealed again in a commit under
    /// another key (which an epoch-key holder can compute, with the same
    /// previous head and digest), no longer verifies: the signature covers
    /// the key commitment of the commit's key (Spec/format.md §9.2).
    @Test func attackAttestationResealedUnderAnotherKey() throws {
        let here = CommitChain.attestation(keyCommitment: testEpochKey().commitment, previousHead: CommitChain.genesisHead, digest: Self.knownDigest(), vaultID: countingVaultID, signer: Self.signer)
        let other = testEpochKey(from: 1)
        let header = CommitChain.commitHeader(keyID: other.id)
        let resealed = try CommitChain.body(previousHead: CommitChain.genesisHead, digest: Self.knownDigest(), attestation: here, key: other, vaultID: countingVaultID, commitHeader: header)
        #expect(Self.check(resealed, key: other, header: header) == .failed(reason: "the signature does not verify"))
        #expect(!CommitChain.attestationSigns(here, keyCommitment: other.commitment, previousHead: CommitChain.genesisHead, digest: Self.knownDigest(), vaultID: countingVaultID))
        // Signed for that key, it verifies.
        let there = CommitChain.attestation(keyCommitment: other.commitment, previousHead: CommitChain.genesisHead, digest: Self.knownDigest(), vaultID: countingVaultID, signer: Self.signer)
        let signed = try CommitChain.body(previousHead: CommitChain.genesisHead, digest: Self.knownDigest(), attestation: there, key: other, vaultID: countingVaultID, commitHeader: header)
        #expect(Self.check(signed, key: other, header: header) == .signed(signer: Self.signer.publicKey))
    }

    @Test func nonSyntheticNonceFails() throws {
        let signed = CommitChain.attestation(keyCommitment: testEpochKey().commitment, previousHead: CommitChain.genesisHead, digest: Self.knownDigest(), vaultID: countingVaultID, signer: Self.signer)
        let good = try Self.body(signed)
        // Control: the synthetic nonce, sealed by hand, is the library's body.
        let synthetic = Array(good[64..<88])
        let nonceKey = try KeyDerivation.derive(from: testEpochKey().key, subkeyID: 6, context: "quire v2")
        let ad = counting(16) + CommitChain.commitHeader(keyID: testEpochKey().id).fieldBytes + CommitChain.genesisHead + Self.knownDigest()
        #expect(synthetic == BLAKE2b.mac(Array("quire-commit-nonce-v3".utf8) + ad + signed, key: nonceKey, byteCount: 24))
        #expect(try Self.bodyWithNonce(synthetic, attestation: signed) == good)
        // Another nonce: the box opens, but the commit is not deterministic.
        let random = try Self.bodyWithNonce(counting(24, from: 9), attestation: signed)
        #expect(Self.check(random) == .failed(reason: "the attestation's nonce is not derived from it"))
    }

    @Test func zeroAttestationUnderAnotherNonceFails() throws {
        // Spec/format.md §9.4 checks in order: the box opens; the nonce is
        // derived from the plaintext (for zeros too); then A = 0⁹⁶ is
        // unattested; then the signature and signer. An unattested commit
        // sealed under another nonce is a failed attestation.
        let random = try Self.bodyWithNonce(counting(24, from: 9), attestation: CommitChain.unattested)
        #expect(Self.check(random) == .failed(reason: "the attestation's nonce is not derived from it"))
    }
}

@Suite struct EpochKeyTests {
    @Test func subkeysKnownAnswers() throws {
        // KDF(00…1f, id, "quire v2") for ids 1…6, computed independently.
        let k = testEpochKey(epoch: 1)
        #expect(hex(try k.subkey(.record).storage.copyBytes()) == "c1e4e4bf0c9e6de4af42a57f7b5a07a2889c6c6fc9b9b813029ed68496878286")
        #expect(hex(try k.subkey(.commit).storage.copyBytes()) == "566a43084034828a6a1abc90f7b3e71ab3c63253c20ac6838b0487820dc00276")
        #expect(hex(try k.subkey(.keyring).storage.copyBytes()) == "cde5f0b66730076b4273e58cad7f82854b57faad2f09b8848f537284f3c61a32")
        #expect(hex(try k.subkey(.attestation).storage.copyBytes()) == "b7cbb0dbfcd9c2d5806528b03ae64f9e6e463e434e6fa6cfe5007de113d4407e")
        #expect(hex(try k.subkey(.link).storage.copyBytes()) == "845b66940dc89ad2fb9e92bb2fdf33ae6154f098161f088b1d42c59c8b7e4b17")
        #expect(hex(try k.subkey(.commitNonce).storage.copyBytes()) == "bc4533b25648ead24be89300c1fb8113fd691cdca65d4a7376e6c032d0eb1428")
        #expect(EpochKey.Subkey.allCases.map(\.rawValue) == [1, 2, 3, 4, 5, 6])
        // Cached: asking twice gives the same key.
        #expect(try k.subkey(.record) == (try k.subkey(.record)))
        #expect(k.key == countingKey())
        #expect(hex(k.commitment) == "bd64f74aa85fedaf65cd6e247a97b94d7d0ac91d2a1863d4fba0702ff8431168")
        #expect(EpochKey.commitment(of: countingKey()) == k.commitment)
        #expect(EpochKey.commitmentLabel == Array("quire-key-commitment-v2".utf8))
        // The epoch number is not an input of the derivation.
        #expect(try testEpochKey(epoch: 9).subkey(.record) == (try k.subkey(.record)))
        #expect(testEpochKey(epoch: 9).commitment == k.commitment)
        #expect(k.description == "EpochKey(epoch 1, id bd64f74aa85f, hidden)")
        #expect(EpochKey.context == "quire v2")
    }

    @Test func epochsAreThirtyTwoBits() {
        let k = EpochKey(epoch: 4_294_967_295, key: countingKey())
        #expect(k.epoch == UInt32.max)
        #expect(Limits.maxEpoch == 4_294_967_295)
        #expect(k.description == "EpochKey(epoch 4294967295, id bd64f74aa85f, hidden)")
    }

    @Test func sameKeyAndBlobKey() {
        let k = testEpochKey(epoch: 2)
        #expect(k.blobKey == nil)
        let withBlob = k.withBlobKey(try! SymmetricKey(bytes: counting(32, from: 7)))
        #expect(withBlob.blobKey == (try! SymmetricKey(bytes: counting(32, from: 7))))
        #expect(withBlob.epoch == 2 && withBlob.key == k.key && withBlob.id == k.id)
        #expect(withBlob.sameKey(as: k))
        #expect(!testEpochKey(epoch: 2, from: 1).sameKey(as: k))
        // Same id, different keys: not the same key.
        #expect(!CollidingKeys.first().sameKey(as: CollidingKeys.second()))
    }

    @Test func keySet() {
        let blob = countingKey()
        let write = testEpochKey(epoch: 2, blobKey: blob)
        var set = KeySet(single: write)
        #expect(set.keys(for: write.id).map(\.key) == [countingKey()])
        #expect(set.writeKey?.epoch == 2)
        #expect(set.blobKey == blob)
        #expect(set.newestEpoch == 2)
        #expect(set.key(commitment: write.commitment)?.key == countingKey())
        // The same key again is held once.
        set.add(testEpochKey(epoch: 2))
        #expect(set.keys(for: write.id).count == 1)
        #expect(set.all.count == 1)
        let other = testEpochKey(epoch: 2, from: 5)
        set.add(other)
        #expect(set.keys(for: other.id).map(\.commitment) == [other.commitment])
        #expect(set.keys(for: write.id).count == 1)
        set.add(testEpochKey(epoch: 7, from: 9))
        #expect(set.newestEpoch == 7)
        #expect(set.all.count == 3)
        #expect(set.writeKey?.epoch == 2)
        #expect(set.keys(for: KeyID(rawValue: 3)).isEmpty)
        #expect(set.key(commitment: counting(32)) == nil)
        #expect(KeySet().newestEpoch == nil)
        #expect(KeySet().writeKey == nil)
        #expect(KeySet().blobKey == nil)
        #expect(KeySet(single: testEpochKey()).blobKey == nil)
    }

    @Test func collidingKeyIDsAreBothHeld() {
        let first = CollidingKeys.first(epoch: 1), second = CollidingKeys.second(epoch: 2)
        #expect(hex(first.commitment) == "1ce7db40bb82d717e1702fc2fe19b6259e46826275ba7f93441ce7380b65836e")
        #expect(hex(second.commitment) == "1ce7db40bb828a4e8f11b510493e82aa95f904f016dfe967fe0d413b77a6365b")
        var set = KeySet()
        set.add(first)
        set.add(second)
        #expect(set.keys(for: CollidingKeys.id).count == 2)
        #expect(Set(set.keys(for: CollidingKeys.id).map(\.commitment)) == [first.commitment, second.commitment])
        #expect(set.all.count == 2)
        // Found by commitment, each its own.
        #expect(set.key(commitment: first.commitment)?.epoch == 1)
        #expect(set.key(commitment: second.commitment)?.epoch == 2)
        #expect(set.key(commitment: Array(first.commitment.prefix(6)) + counting(26)) == nil)
    }

    @Test func collidingKeysAreTriedInAscendingCommitmentOrder() {
        // Spec/format.md §5.1: candidates are tried in ascending order of key
        // commitment, whatever order they were added in (…8a4e… < …d717…).
        let first = CollidingKeys.first(epoch: 1), second = CollidingKeys.second(epoch: 2)
        for order in [[first, second], [second, first]] {
            var set = KeySet()
            for k in order { set.add(k) }
            #expect(set.keys(for: CollidingKeys.id).map(\.epoch) == [2, 1])
        }
    }
}
