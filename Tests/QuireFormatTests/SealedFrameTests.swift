import QuireCrypto
import QuireFormat
import Testing

/// Opens a whole sealed frame (header and body) with `keys`.
func openFrame(_ frame: [UInt8], keys: [EpochKey], vaultID: VaultID = countingVaultID, header override: FrameHeader? = nil)
    -> Result<[UInt8], FormatError>
{
    guard let parsed = frame.withUnsafeBytes({ FrameHeader.parseChecked($0, at: 0) }) else {
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

@Suite struct SealedFrameTests {
    static let location = FrameLocation(offset: 64, index: 0)
    static let payloadSizes = [0, 1, 100, 100_000]

    static func compressible(_ n: Int) -> [UInt8] {
        let line = Array("Dined at home with my wife; then to the office again. ".utf8)
        return (0..<n).map { line[$0 % line.count] }
    }

    @Test func knownAnswer() throws {
        // Independent computation: header (kind 0x10, sealed, epoch 1, body 46)
        // ‖ nonce (first 24 bytes of SeededRandom "frame") ‖ XChaCha20-Poly1305
        // under the record key of key 00…1f, AD = vault id ‖ header[0..<8],
        // of "hello" ‖ 0x80 (Padmé(6) = 6).
        let frame = try SealedFrame.seal(
            kind: .entryRevision, payload: Array("hello".utf8), key: testEpochKey(), vaultID: countingVaultID, compress: false,
            random: SeededRandom(label: "frame"))
        #expect(hex(frame) == """
            100101002e0000005a0ea837eb4560ecbb141f083e5563d0fd86f9d99f798bd2389c26c0b87ebfc0feca7cf5fe2a731f984ecd98a4fef7b6b4b9
            """)
        #expect(openFrame(frame, keys: [testEpochKey()]) == .success(Array("hello".utf8)))
        #expect(SealedFrame.overheadByteCount == 52)
    }

    @Test(arguments: payloadSizes, [false, true])
    func roundTrip(size: Int, compress: Bool) throws {
        for (label, payload) in [("random", SeededRandom(label: "payload \(size)").bytes(size)), ("text", Self.compressible(size))] {
            let key = testEpochKey(epoch: 3)
            let frame = try SealedFrame.seal(
                kind: .entryRevision, payload: payload, key: key, vaultID: countingVaultID, compress: compress,
                random: SeededRandom(label: "nonce"))
            let header = try #require(frame.withUnsafeBytes { FrameHeader.parseChecked($0, at: 0) })
            let packed = Compression.compress(payload)
            let expectCompressed = compress && packed.count < payload.count
            let stored = expectCompressed ? packed.count : payload.count
            #expect(header.kind == .entryRevision)
            #expect(header.epoch == 3)
            #expect(header.isSealed)
            #expect(header.isCompressed == expectCompressed, "\(label) \(size)")
            #expect(Int(header.bodyLength) == 24 + Padding.paddedCount(forPayload: stored) + 16)
            #expect(frame.count == 12 + Int(header.bodyLength))
            #expect(Array(frame[12..<36]) == SeededRandom(label: "nonce").bytes(24))
            #expect(openFrame(frame, keys: [key]) == .success(payload), "\(label) \(size)")
        }
        if compress && size >= 100 {
            let frame = try SealedFrame.seal(
                kind: .profile, payload: Self.compressible(size), key: testEpochKey(), vaultID: countingVaultID, compress: true,
                random: SeededRandom(label: "n"))
            #expect(frame[1] == 0x03)
        }
    }

    @Test func associatedDataLayout() {
        let header = FrameHeader(kind: .blobChunk, flags: 1, epoch: 2, bodyLength: 99)
        #expect(SealedFrame.associatedData(vaultID: countingVaultID, header: header, publicHeader: [9, 9])
            == counting(16) + header.fieldBytes + [9, 9])
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
        let frame = try SealedFrame.seal(
            kind: .entryRevision, payload: payload, key: testEpochKey(epoch: 5), vaultID: countingVaultID, compress: true,
            random: SeededRandom(label: "fields"))
        let h = try #require(frame.withUnsafeBytes { FrameHeader.parseChecked($0, at: 0) })
        #expect(h.isCompressed)
        let key = testEpochKey(epoch: 5)
        let changed = [
            FrameHeader(kind: .profile, flags: h.flags, epoch: h.epoch, bodyLength: h.bodyLength),
            FrameHeader(kind: .blobManifest, flags: h.flags, epoch: h.epoch, bodyLength: h.bodyLength),
            FrameHeader(kind: h.kind, flags: FrameHeader.sealedFlag, epoch: h.epoch, bodyLength: h.bodyLength),
            FrameHeader(kind: h.kind, flags: h.flags, epoch: 4, bodyLength: h.bodyLength),
            FrameHeader(kind: h.kind, flags: h.flags, epoch: 5 + 256, bodyLength: h.bodyLength),
            FrameHeader(kind: h.kind, flags: h.flags, epoch: h.epoch, bodyLength: h.bodyLength - 1),
            FrameHeader(kind: h.kind, flags: h.flags, epoch: h.epoch, bodyLength: h.bodyLength + 1),
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
        let h = try #require(frame.withUnsafeBytes { FrameHeader.parseChecked($0, at: 0) })
        for i in 12..<frame.count {
            #expect(openFrame(flipped(frame, at: i, bit: i % 8), keys: [key], header: h) == .failure(.authenticationFailed(Self.location)), "byte \(i)")
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

    @Test func recordSizeLimit() throws {
        #expect(throws: FormatError.recordTooLarge(byteCount: Limits.maxRecordByteCount + 1, limit: Limits.maxRecordByteCount)) {
            try SealedFrame.seal(
                kind: .entryRevision, payload: [UInt8](repeating: 0, count: Limits.maxRecordByteCount + 1), key: testEpochKey(),
                vaultID: countingVaultID, compress: true, random: SeededRandom(label: "big"))
        }
        // Exactly at the limit, uncompressed: padding, nonce and tag still fit
        // the frame limit (16 MiB + 1 MiB).
        let maximal = [UInt8](repeating: 0, count: Limits.maxRecordByteCount)
        let raw = try SealedFrame.seal(
            kind: .entryRevision, payload: maximal, key: testEpochKey(), vaultID: countingVaultID, compress: false,
            random: SeededRandom(label: "big"))
        #expect(raw.count == 12 + 24 + Padding.paddedCount(forPayload: Limits.maxRecordByteCount) + 16)
        #expect(raw.count - 12 <= Limits.maxFrameBodyByteCount)
        // Compressed, it fits too and opens back to 16 MiB.
        let frame = try SealedFrame.seal(
            kind: .entryRevision, payload: maximal, key: testEpochKey(), vaultID: countingVaultID, compress: true,
            random: SeededRandom(label: "big"))
        #expect(frame.count < 10_000)
        #expect(openFrame(frame, keys: [testEpochKey()]) == .success(maximal))
    }

    // MARK: Hand-made frames that authenticate but break the payload rules

    /// A sealed frame around an arbitrary padded plaintext.
    static func handSealed(plaintext: [UInt8], flags: UInt8 = FrameHeader.sealedFlag) -> [UInt8] {
        let key = testEpochKey()
        let header = FrameHeader(kind: .entryRevision, flags: flags, epoch: 1, bodyLength: UInt32(24 + plaintext.count + 16))
        let nonce = counting(24, from: 200)
        let ad = SealedFrame.associatedData(vaultID: countingVaultID, header: header, publicHeader: [])
        return header.encoded() + nonce + XChaCha20Poly1305.seal(plaintext, key: key.recordKey, nonce: nonce, authenticating: ad)
    }

    @Test func handSealedControl() {
        #expect(openFrame(Self.handSealed(plaintext: [1, 2, 3, 0x80]), keys: [testEpochKey()]) == .success([1, 2, 3]))
    }

    @Test func badPaddingIsReported() {
        for plain: [UInt8] in [[1, 2, 3, 4], [1, 2, 3, 0], [0x80, 0, 0, 0], [1, 0x80, 0, 1], []] {
            #expect(openFrame(Self.handSealed(plaintext: plain), keys: [testEpochKey()]) == .failure(.badPadding(Self.location)), "\(plain)")
        }
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

    // MARK: Attachment chunks

    static func sealChunk(_ content: [UInt8], _ chunk: ChunkHeader, key: EpochKey = testEpochKey(), vaultID: VaultID = countingVaultID) -> [UInt8] {
        let length = FrameHeader.byteCount + SealedFrame.chunkBodyLength(contentCount: content.count, isFinal: chunk.isFinal)
        var frame = [UInt8](repeating: 0xa5, count: length)  // garbage where the padding goes
        frame.replaceSubrange(57..<(57 + content.count), with: content)
        frame.withUnsafeMutableBytes { raw in
            SealedFrame.sealChunk(
                frame: raw, contentCount: content.count, chunk: chunk, key: key, vaultID: vaultID, random: SeededRandom(label: "chunk nonce"))
        }
        return frame
    }

    static func openChunk(_ frame: [UInt8], _ chunk: ChunkHeader, keys: [EpochKey] = [testEpochKey()], vaultID: VaultID = countingVaultID, output: inout [UInt8])
        -> Result<Int, FormatError>
    {
        guard let header = frame.withUnsafeBytes({ FrameHeader.parseChecked($0, at: 0) }) else {
            return .failure(.malformedFrame(location, reason: "test: header does not parse"))
        }
        let body = Array(frame[12...])
        // The library decrypts into a caller's buffer of the largest chunk
        // plaintext; the content is its first n bytes.
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: SealedFrame.maxChunkPlaintextByteCount, alignment: 16)
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
        #expect(SealedFrame.chunkBodyLength(contentCount: 65536, isFinal: false) == 24 + 21 + 65536 + 16)
        #expect(SealedFrame.chunkBodyLength(contentCount: 0, isFinal: true) == 24 + 21 + 1 + 16)
        #expect(SealedFrame.chunkBodyLength(contentCount: 100, isFinal: true) == 24 + 21 + 104 + 16)
        #expect(SealedFrame.chunkBodyLength(contentCount: 65536, isFinal: true) == 24 + 21 + 67584 + 16)
    }

    @Test(arguments: [
        (UInt32(0), true, 0), (0, true, 1), (0, true, 1000), (0, false, 65536), (0, true, 65536), (1, true, 1), (7, true, 65535),
        (7, false, 65536), (UInt32.max, true, 65536),
    ])
    func chunkRoundTrip(index: UInt32, isFinal: Bool, count: Int) throws {
        let content = SeededRandom(label: "chunk \(index) \(count)").bytes(count)
        let chunk = ChunkHeader(stream: Self.stream, index: index, isFinal: isFinal)
        let frame = Self.sealChunk(content, chunk)
        let header = try #require(frame.withUnsafeBytes { FrameHeader.parseChecked($0, at: 0) })
        #expect(header == FrameHeader(
            kind: .blobChunk, flags: FrameHeader.sealedFlag, epoch: 1,
            bodyLength: UInt32(SealedFrame.chunkBodyLength(contentCount: count, isFinal: isFinal))))
        #expect(Array(frame[12..<36]) == SeededRandom(label: "chunk nonce").bytes(24))
        #expect(Array(frame[36..<57]) == chunk.encoded())
        var output: [UInt8] = []
        #expect(Self.openChunk(frame, chunk, output: &output) == .success(count))
        #expect(Array(output[0..<count]) == content)
        #expect(output.count >= count)
    }

    @Test func chunkDecryptsIntoTheCallersBuffer() throws {
        // openChunk writes the padded plaintext at the start of the caller's
        // buffer and touches nothing past it.
        let chunk = ChunkHeader(stream: Self.stream, index: 0, isFinal: true)
        let frame = Self.sealChunk(counting(10), chunk)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: SealedFrame.maxChunkPlaintextByteCount, alignment: 16)
        defer { buffer.deallocate() }
        buffer.initializeMemory(as: UInt8.self, repeating: 0xee)
        let header = try #require(frame.withUnsafeBytes { FrameHeader.parseChecked($0, at: 0) })
        let n = try Array(frame[12...]).withUnsafeBytes { raw in
            try SealedFrame.openChunk(body: raw, header: header, chunk: chunk, location: Self.location, keys: [testEpochKey()], vaultID: countingVaultID, into: buffer)
        }
        #expect(n == 10)
        #expect(Array(buffer[0..<10]) == counting(10))
        let padded = Padding.paddedCount(forPayload: 10)
        #expect(buffer[10] == 0x80)
        #expect(buffer[padded] == 0xee)
    }

    @Test(arguments: [0, 1, 65535, 65537])
    func nonFinalChunkMustBeExactlyOneChunk(count: Int) {
        let chunk = ChunkHeader(stream: Self.stream, index: 2, isFinal: false)
        let frame = Self.sealChunk([UInt8](repeating: 1, count: count), chunk)
        var out: [UInt8] = []
        #expect(Self.openChunk(frame, chunk, output: &out) == .failure(.chunkNoncanonical(
            stream: Self.stream.description, index: 2,
            reason: "a non-final chunk must hold exactly 65536 bytes, it holds \(count)")))
    }

    @Test func emptyFinalChunkOnlyAtIndexZero() {
        var out: [UInt8] = []
        let first = ChunkHeader(stream: Self.stream, index: 0, isFinal: true)
        #expect(Self.openChunk(Self.sealChunk([], first), first, output: &out) == .success(0))
        for index: UInt32 in [1, 2, 1000] {
            let later = ChunkHeader(stream: Self.stream, index: index, isFinal: true)
            #expect(Self.openChunk(Self.sealChunk([], later), later, output: &out) == .failure(.chunkNoncanonical(
                stream: Self.stream.description, index: index,
                reason: "an empty final chunk may only stand alone (for an empty attachment)")))
        }
    }

    @Test func finalChunkOverOneChunkOfContent() {
        // 65537 bytes padded to Padmé(65538) = 67584: the size fits the frame
        // limit for a final chunk, but the content is over 64 KiB.
        let chunk = ChunkHeader(stream: Self.stream, index: 0, isFinal: true)
        let frame = Self.sealChunk([UInt8](repeating: 3, count: 65537), chunk)
        var out: [UInt8] = []
        #expect(Self.openChunk(frame, chunk, output: &out) == .failure(.chunkNoncanonical(
            stream: Self.stream.description, index: 0, reason: "final chunk holds more than 65536 bytes")))
    }

    @Test func chunkHeaderVaultAndKeyAreBound() throws {
        let chunk = ChunkHeader(stream: Self.stream, index: 4, isFinal: true)
        let frame = Self.sealChunk(counting(77), chunk)
        var out: [UInt8] = []
        let fail = Result<Int, FormatError>.failure(.authenticationFailed(Self.location))
        #expect(Self.openChunk(frame, ChunkHeader(stream: Self.stream, index: 5, isFinal: true), output: &out) == fail)
        #expect(Self.openChunk(frame, ChunkHeader(stream: try StreamID(bytes: counting(16)), index: 4, isFinal: true), output: &out) == fail)
        #expect(Self.openChunk(frame, chunk, vaultID: try VaultID(bytes: counting(16, from: 9)), output: &out) == fail)
        #expect(Self.openChunk(frame, chunk, keys: [testEpochKey(from: 1)], output: &out) == fail)
        // Every body byte counts, the public chunk header included once a
        // reader takes the chunk header from the body, as the scanner does.
        for i in stride(from: 12, to: frame.count, by: 3) {
            let damaged = flipped(frame, at: i)
            let parsed = ChunkHeader.parse(damaged[36..<57]) ?? ChunkHeader(stream: Self.stream, index: 999, isFinal: false)
            let result = Self.openChunk(damaged, parsed, output: &out)
            #expect(result != .success(77), "byte \(i)")
            if i < 36 || i >= 57 { #expect(result == fail, "byte \(i)") }
        }
        #expect(Self.openChunk(frame, chunk, output: &out) == .success(77))
    }

    @Test func shortChunkBodyIsMalformed() {
        let header = FrameHeader(kind: .blobChunk, flags: 1, epoch: 1, bodyLength: 60)
        let chunk = ChunkHeader(stream: Self.stream, index: 0, isFinal: true)
        let out = UnsafeMutableRawBufferPointer.allocate(byteCount: SealedFrame.maxChunkPlaintextByteCount, alignment: 16)
        defer { out.deallocate() }
        let result = [UInt8](repeating: 0, count: 60).withUnsafeBytes { raw in
            Result { () throws(FormatError) -> Int in
                try SealedFrame.openChunk(
                    body: raw, header: header, chunk: chunk, location: Self.location, keys: [testEpochKey()], vaultID: countingVaultID, into: out)
            }
        }
        #expect(result == .failure(.malformedFrame(Self.location, reason: "chunk body shorter than its fixed parts")))
    }
}

@Suite struct CommitChainTests {
    static let header = FrameHeader(kind: .entryRevision, flags: 1, epoch: 1, bodyLength: 100)

    @Test func knownAnswer() {
        // Independent: D = BLAKE2b-256(00…0b ‖ 64…73); h = BLAKE2b-128 keyed with
        // the commit key of epoch key 00…1f over vault id ‖ 0¹⁶ ‖ D ‖ commit header[0..<8].
        var digest = CommitChain.Digest()
        digest.add(header: counting(12), trailer: counting(16, from: 100))
        #expect(digest.frameCount == 1)
        let d = digest.finalize()
        #expect(hex(d) == "b857e64dfab1c5d61a1c595e8cac60b4ec55a8ee7316007e5f0e579ca5828d1a")
        let head = CommitChain.head(
            commitKey: testEpochKey().commitKey, vaultID: countingVaultID, previousHead: CommitChain.genesisHead, digest: d,
            commitHeader: CommitChain.commitHeader(epoch: 1))
        #expect(hex(head) == "21ac4463ee7bc4a43e7e7d1422d7a8bd")
    }

    @Test func digestIsTheHashOfTheSummaries() {
        var digest = CommitChain.Digest()
        let h1 = Self.header.encoded(), t1 = counting(16)
        let h2 = CommitChain.commitHeader(epoch: 9).encoded(), t2 = counting(16, from: 50)
        digest.add(header: h1, trailer: t1)
        digest.add(header: h2, trailer: t2)
        #expect(digest.frameCount == 2)
        let d = digest.finalize()
        #expect(d == BLAKE2b.hash(h1 + t1 + h2 + t2, byteCount: 32))
        let empty = CommitChain.Digest()
        let e = empty.finalize()
        #expect(e == BLAKE2b.hash([], byteCount: 32))
    }

    @Test func headDependsOnEveryInput() throws {
        let key = testEpochKey()
        let d = BLAKE2b.hash(counting(10), byteCount: 32)
        let base = CommitChain.head(
            commitKey: key.commitKey, vaultID: countingVaultID, previousHead: CommitChain.genesisHead, digest: d,
            commitHeader: CommitChain.commitHeader(epoch: 1))
        #expect(base.count == 16)
        let variants: [[UInt8]] = [
            CommitChain.head(commitKey: testEpochKey(from: 1).commitKey, vaultID: countingVaultID, previousHead: CommitChain.genesisHead, digest: d, commitHeader: CommitChain.commitHeader(epoch: 1)),
            CommitChain.head(commitKey: key.recordKey, vaultID: countingVaultID, previousHead: CommitChain.genesisHead, digest: d, commitHeader: CommitChain.commitHeader(epoch: 1)),
            CommitChain.head(commitKey: key.commitKey, vaultID: try VaultID(bytes: counting(16, from: 1)), previousHead: CommitChain.genesisHead, digest: d, commitHeader: CommitChain.commitHeader(epoch: 1)),
            CommitChain.head(commitKey: key.commitKey, vaultID: countingVaultID, previousHead: flipped(CommitChain.genesisHead, at: 15), digest: d, commitHeader: CommitChain.commitHeader(epoch: 1)),
            CommitChain.head(commitKey: key.commitKey, vaultID: countingVaultID, previousHead: CommitChain.genesisHead, digest: flipped(d, at: 0), commitHeader: CommitChain.commitHeader(epoch: 1)),
            CommitChain.head(commitKey: key.commitKey, vaultID: countingVaultID, previousHead: CommitChain.genesisHead, digest: d, commitHeader: CommitChain.commitHeader(epoch: 2)),
            CommitChain.head(commitKey: key.commitKey, vaultID: countingVaultID, previousHead: CommitChain.genesisHead, digest: d, commitHeader: FrameHeader(kind: .commit, flags: 0, epoch: 1, bodyLength: 17)),
        ]
        for (i, v) in variants.enumerated() { #expect(v != base, "variant \(i)") }
        #expect(Set(variants).count == variants.count)
        // And it is deterministic.
        #expect(base == CommitChain.head(
            commitKey: testEpochKey().commitKey, vaultID: countingVaultID, previousHead: CommitChain.genesisHead, digest: d,
            commitHeader: CommitChain.commitHeader(epoch: 1)))
    }

    @Test func digestDependsOnOrderAndContent() {
        func digest(_ pairs: [([UInt8], [UInt8])]) -> [UInt8] {
            var d = CommitChain.Digest()
            for (h, t) in pairs { d.add(header: h, trailer: t) }
            return d.finalize()
        }
        let a = (counting(12), counting(16)), b = (counting(12, from: 1), counting(16, from: 1))
        #expect(digest([a, b]) != digest([b, a]))
        #expect(digest([a, b]) != digest([a]))
        #expect(digest([a, a]) != digest([a]))
    }

    @Test func constants() {
        #expect(CommitChain.commitHeader(epoch: 5) == FrameHeader(kind: .commit, flags: 0, epoch: 5, bodyLength: 16))
        #expect(CommitChain.genesisHead == [UInt8](repeating: 0, count: 16))
        #expect(CommitChain.headByteCount == 16 && CommitChain.digestByteCount == 32)
    }
}

@Suite struct EpochKeyTests {
    @Test func subkeysKnownAnswers() {
        let k = testEpochKey(epoch: 1)
        #expect(hex(k.recordKey.storage.copyBytes()) == "433bb94d82e49a4d8d2256595e8e4b6a5aebe010c0ebb54974c5dfc7256d9388")
        #expect(hex(k.commitKey.storage.copyBytes()) == "657537b78be713cd70a7f31f9cd9dcd70a6e2a213a224fd7b5141865181a1a5d")
        #expect(hex(k.keyringKey.storage.copyBytes()) == "df50a3b0a5bca0203b964ddfb682ba935f1209bb7c3805a7eb98e17330417cc4")
        #expect(k.key == countingKey())
        // The epoch number is not an input of the derivation.
        #expect(testEpochKey(epoch: 9).recordKey == k.recordKey)
        #expect(k.description == "EpochKey(epoch 1, hidden)")
        #expect(EpochKey.context == "quire v1")
    }

    @Test func keySet() {
        var set = KeySet(single: testEpochKey(epoch: 2), blobKey: countingKey())
        #expect(set.keys(for: 2).map(\.key) == [countingKey()])
        #expect(set.writeKey?.epoch == 2)
        #expect(set.blobKey == countingKey())
        #expect(set.newestEpoch == 2)
        set.add(testEpochKey(epoch: 2))
        #expect(set.keys(for: 2).count == 1)
        set.add(testEpochKey(epoch: 2, from: 5))
        #expect(set.keys(for: 2).count == 2)
        set.add(testEpochKey(epoch: 7, from: 9))
        #expect(set.newestEpoch == 7)
        #expect(set.writeKey?.epoch == 2)
        #expect(set.keys(for: 3).isEmpty)
        #expect(KeySet().newestEpoch == nil)
        #expect(KeySet().writeKey == nil)
    }
}
