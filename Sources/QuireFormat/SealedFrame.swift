@_spi(Crypto) package import QuireCrypto
import QuireSystem

/// Seals record payloads into frames and opens them again
/// (`Spec/format.md §5`–`§7`).
///
/// Body of a sealed record (every sealed kind but an attachment chunk):
///
/// ```
/// +------------+--------------------------+----------+------------------+
/// | nonce (24) | ciphertext               | tag (16) | body hash (32)   |
/// +------------+--------------------------+----------+------------------+
/// ```
///
/// and of an attachment chunk:
///
/// ```
/// +------------+-------------------+--------------------------+----------+
/// | nonce (24) | chunk header (21) | ciphertext               | tag (16) |
/// +------------+-------------------+--------------------------+----------+
/// ```
///
/// The associated data is `vault id (16) ‖ header fields (12) ‖ public
/// header` (the chunk header, or nothing). The body hash is the BLAKE2b-256 of
/// the sealing key's 32-byte commitment followed by everything before it; the
/// commit chain covers it, so a key holder who rewrites a record keeping its
/// Poly1305 tag still breaks the chain, and a body opens under exactly one key
/// (XChaCha20-Poly1305 alone is not key-committing). A
/// record's plaintext is the payload, zstd-compressed when the compressed flag
/// is set, then padded (``Padding``); a chunk's plaintext is its slice of the
/// padded stream, as it is (`Spec/format.md §7`).
package enum SealedFrame {
    /// Bytes a sealed record adds around its padded plaintext: header, nonce,
    /// tag and body hash (88).
    public static let overheadByteCount =
        FrameHeader.byteCount + XChaCha20Poly1305.nonceByteCount
        + XChaCha20Poly1305.tagByteCount + FrameHeader.bodyHashByteCount

    /// Bytes a chunk body adds around its plaintext: nonce, chunk header, tag (61).
    public static let chunkOverheadByteCount =
        XChaCha20Poly1305.nonceByteCount + ChunkHeader.byteCount
        + XChaCha20Poly1305.tagByteCount

    /// The body length of a chunk holding `plaintextCount` bytes of the stream.
    public static func chunkBodyLength(plaintextCount: Int) -> Int { chunkOverheadByteCount + plaintextCount }

    /// Body length of a full (non-final) chunk: 65,597 bytes.
    public static let fullChunkBodyLength = chunkBodyLength(plaintextCount: Limits.chunkByteCount)

    /// The associated data for a sealed frame.
    public static func associatedData(vaultID: VaultID, header: FrameHeader, publicHeader: [UInt8]) -> [UInt8] {
        vaultID.bytes + header.fieldBytes + publicHeader
    }

    /// `BLAKE2b-256(body[0..<count−32])`, the body hash a frame ends with.
    public static func bodyHash(_ bodyWithoutHash: UnsafeRawBufferPointer) -> [UInt8] {
        BLAKE2b.hash(bodyWithoutHash, byteCount: FrameHeader.bodyHashByteCount)
    }

    /// `BLAKE2b-256(keyCommit ‖ body[0..<count−32])`, the body hash a sealed
    /// record ends with (`Spec/format.md §5.2`): it names the one key whose
    /// commitment is `keyCommit`.
    public static func sealedBodyHash(keyCommitment: [UInt8], _ bodyWithoutHash: UnsafeRawBufferPointer) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: FrameHeader.bodyHashByteCount) { out, count in
            keyCommitment.withUnsafeBytes { k in BLAKE2b.hash(k, bodyWithoutHash, into: UnsafeMutableRawBufferPointer(out)) }
            count = FrameHeader.bodyHashByteCount
        }
    }

    /// True when a sealed record `body` ends with its body hash under the key
    /// whose commitment is `keyCommitment`.
    public static func sealedBodyHashMatches(_ body: UnsafeRawBufferPointer, keyCommitment: [UInt8]) -> Bool {
        let n = FrameHeader.bodyHashByteCount
        guard body.count >= n else { return false }
        // On the stack: a reader checks one per record.
        return withUnsafeTemporaryAllocation(byteCount: n, alignment: 1) { computed in
            keyCommitment.withUnsafeBytes { k in
                BLAKE2b.hash(k, UnsafeRawBufferPointer(rebasing: body[0..<(body.count - n)]), into: computed)
            }
            return constantTimeEqual(UnsafeRawBufferPointer(computed), UnsafeRawBufferPointer(rebasing: body[(body.count - n)...]))
        }
    }

    /// True when `body` ends with the BLAKE2b-256 of the rest of it (a
    /// plaintext frame's body hash).
    public static func bodyHashMatches(_ body: UnsafeRawBufferPointer) -> Bool {
        let n = FrameHeader.bodyHashByteCount
        guard body.count >= n else { return false }
        let computed = bodyHash(UnsafeRawBufferPointer(rebasing: body[0..<(body.count - n)]))
        return constantTimeEqual(computed, UnsafeRawBufferPointer(rebasing: body[(body.count - n)...]))
    }

    /// Seals `payload` as one frame of `kind` under `key`.
    ///
    /// When `compress` is true the payload is zstd-compressed if that makes
    /// it smaller, and always for the kinds that carry the user's text
    /// (``RecordKind/isAlwaysCompressed``, `Spec/format.md §6.1`). Then the padding is appended, the plaintext sealed with a
    /// fresh random nonce, and the body hash (over `key`'s commitment and the
    /// body) appended.
    ///
    /// - Throws: ``FormatError/recordTooLarge(byteCount:limit:)`` for a
    ///   payload over ``Limits/maxRecordByteCount``;
    ///   ``FormatError/outOfGuardedMemory`` when the record key cannot be derived.
    ///   `context`, when given, is the zstd context to reuse (its caller's
    ///   alone while this runs).
    public static func seal(
        kind: RecordKind, payload: [UInt8], key: EpochKey, vaultID: VaultID, compress: Bool,
        random: any RandomSource, context: CompressionContext? = nil
    ) throws(FormatError) -> [UInt8] {
        guard payload.count <= Limits.maxRecordByteCount else {
            throw .recordTooLarge(byteCount: payload.count, limit: Limits.maxRecordByteCount)
        }
        let recordKey: SymmetricKey
        do { recordKey = try key.subkey(.record) } catch { throw .outOfGuardedMemory }
        var flags = FrameHeader.sealedFlag
        var packed: [UInt8] = []
        defer { wipe(&packed) }
        if compress {
            packed = Compression.compress(payload, context: context)
            if packed.count < payload.count || kind.isAlwaysCompressed { flags |= FrameHeader.compressedFlag }
        }
        let storedCount = flags & FrameHeader.compressedFlag != 0 ? packed.count : payload.count
        let paddedCount = Padding.paddedCount(forPayload: storedCount)
        let nonceCount = XChaCha20Poly1305.nonceByteCount
        let hashCount = FrameHeader.bodyHashByteCount
        let bodyLength = nonceCount + paddedCount + XChaCha20Poly1305.tagByteCount + hashCount
        precondition(bodyLength <= Limits.maxFrameBodyByteCount, "a 16 MiB payload always fits a frame")
        let header = FrameHeader(kind: kind, flags: flags, keyID: key.id, bodyLength: UInt32(bodyLength))
        let nonce = random.bytes(nonceCount)
        let ad = associatedData(vaultID: vaultID, header: header, publicHeader: [])
        let headerBytes = header.encoded()
        let h = headerBytes.count
        let total = h + bodyLength
        // The frame is written in one buffer of its final size: the padded
        // plaintext is put where its ciphertext goes and sealed in place, so
        // no other copy of it is made (nor left to wipe).
        return [UInt8](unsafeUninitializedCapacity: total) { buffer, count in
            let frame = UnsafeMutableRawBufferPointer(buffer)
            frame.copyBytes(from: headerBytes)
            UnsafeMutableRawBufferPointer(rebasing: frame[h..<(h + nonceCount)]).copyBytes(from: nonce)
            let plain = h + nonceCount
            if flags & FrameHeader.compressedFlag != 0 {
                UnsafeMutableRawBufferPointer(rebasing: frame[plain..<(plain + storedCount)]).copyBytes(from: packed)
            } else {
                UnsafeMutableRawBufferPointer(rebasing: frame[plain..<(plain + storedCount)]).copyBytes(from: payload)
            }
            frame[plain + storedCount] = 0x80
            let zeros = (plain + storedCount + 1)..<(plain + paddedCount)
            if !zeros.isEmpty { UnsafeMutableRawBufferPointer(rebasing: frame[zeros]).initializeMemory(as: UInt8.self, repeating: 0) }
            let sealedEnd = plain + paddedCount + XChaCha20Poly1305.tagByteCount
            ad.withUnsafeBytes { a in
                XChaCha20Poly1305.seal(
                    UnsafeRawBufferPointer(rebasing: frame[plain..<(plain + paddedCount)]),
                    into: UnsafeMutableRawBufferPointer(rebasing: frame[plain..<sealedEnd]), key: recordKey,
                    nonce: UnsafeRawBufferPointer(rebasing: frame[h..<(h + nonceCount)]), authenticating: a)
            }
            let hash = sealedBodyHash(keyCommitment: key.commitment, UnsafeRawBufferPointer(rebasing: frame[h..<sealedEnd]))
            UnsafeMutableRawBufferPointer(rebasing: frame[sealedEnd..<total]).copyBytes(from: hash)
            count = total
        }
    }

    /// Opens a sealed record body, removes its padding and decompresses it.
    ///
    /// - Throws: ``FormatError/authenticationFailed(_:)`` (body hash or AEAD),
    ///   ``FormatError/badPadding(_:)``, ``FormatError/decompressionFailed(_:reason:)``,
    ///   ``FormatError/sizeLimitExceeded(_:what:size:limit:)``,
    ///   ``FormatError/decompressedSizeMismatch(_:declared:actual:)``.
    public static func open(
        body: UnsafeRawBufferPointer, header: FrameHeader, location: FrameLocation, keys: [EpochKey],
        vaultID: VaultID, context: DecompressionContext
    ) throws(FormatError) -> [UInt8] {
        try open(
            body: body, header: header, associatedData: associatedData(vaultID: vaultID, header: header, publicHeader: []),
            location: location, keys: keys, context: context)
    }

    static func open(
        body: UnsafeRawBufferPointer, header: FrameHeader, associatedData ad: [UInt8], location: FrameLocation, keys: [EpochKey],
        context: DecompressionContext
    ) throws(FormatError) -> [UInt8] {
        let fixed = XChaCha20Poly1305.nonceByteCount + XChaCha20Poly1305.tagByteCount + FrameHeader.bodyHashByteCount
        guard body.count > fixed else { throw .malformedFrame(location, reason: "a sealed record body is shorter than its fixed parts") }
        // The body hash first: the chain vouches for it, and a body that does
        // not match it was altered even if its tag still verifies. It covers
        // the sealing key's full commitment, so it also names the one
        // candidate to try: a body made to open under two keys that share a
        // key id opens under the one it names (Spec/format.md §5.2).
        guard let key = keys.first(where: { sealedBodyHashMatches(body, keyCommitment: $0.commitment) }) else {
            throw .authenticationFailed(location)
        }
        let sealedEnd = body.count - FrameHeader.bodyHashByteCount
        let plainCount = sealedEnd - XChaCha20Poly1305.nonceByteCount - XChaCha20Poly1305.tagByteCount
        if header.isCompressed {
            // Opened into the context's buffer, reused from record to record
            // and wiped after each: only the decompressed payload is new.
            return try context.withScratch(plainCount) { (p: UnsafeMutableRawBufferPointer) throws(FormatError) -> [UInt8] in
                guard
                    openAny(body: UnsafeRawBufferPointer(rebasing: body[0..<sealedEnd]), publicHeaderCount: 0, ad: ad, keys: [key], into: p)
                else { throw .authenticationFailed(location) }
                guard let payloadCount = Padding.payloadCount(in: UnsafeRawBufferPointer(p)) else { throw .badPadding(location) }
                return try decompress(UnsafeRawBufferPointer(rebasing: p[0..<payloadCount]), location: location, context: context)
            }
        }
        // The AEAD writes every byte, so the buffer need not be zeroed first.
        var plain = [UInt8](unsafeUninitializedCapacity: plainCount) { _, count in count = plainCount }
        try authenticate(
            body: UnsafeRawBufferPointer(rebasing: body[0..<sealedEnd]), publicHeaderCount: 0, ad: ad, keys: [key],
            into: &plain, location: location)
        let payloadCount = try plain.withBytes { (p: UnsafeRawBufferPointer) throws(FormatError) -> Int in
            guard let n = Padding.payloadCount(in: p) else { throw .badPadding(location) }
            return n
        }
        // Padding is zeros: dropping it leaves only the payload, no copy.
        plain.removeSubrange(payloadCount...)
        return plain
    }

    /// Tries each key's record key on `body` (nonce ‖ public header ‖ sealed).
    static func authenticate(
        body: UnsafeRawBufferPointer, publicHeaderCount: Int, ad: [UInt8], keys: [EpochKey], into plain: inout [UInt8],
        location: FrameLocation
    ) throws(FormatError) {
        let ok = plain.withUnsafeMutableBytes { p in
            openAny(body: body, publicHeaderCount: publicHeaderCount, ad: ad, keys: keys, into: p)
        }
        if !ok { throw .authenticationFailed(location) }
    }

    /// Opens `body` into `output` with the first key that authenticates it.
    static func openAny(
        body: UnsafeRawBufferPointer, publicHeaderCount: Int, ad: [UInt8], keys: [EpochKey], into output: UnsafeMutableRawBufferPointer
    ) -> Bool {
        let nonceCount = XChaCha20Poly1305.nonceByteCount
        let nonce = UnsafeRawBufferPointer(rebasing: body[0..<nonceCount])
        let sealed = UnsafeRawBufferPointer(rebasing: body[(nonceCount + publicHeaderCount)...])
        for key in keys {
            guard let recordKey = try? key.subkey(.record) else { continue }
            let ok = ad.withUnsafeBytes { a in
                (try? XChaCha20Poly1305.open(sealed, into: output, key: recordKey, nonce: nonce, authenticating: a)) != nil
            }
            if ok { return true }
        }
        return false
    }

    static func decompress(
        _ payload: UnsafeRawBufferPointer, location: FrameLocation, context: DecompressionContext
    ) throws(FormatError) -> [UInt8] {
        do {
            let size = try Compression.declaredSize(payload, limit: Limits.maxRecordByteCount)
            // zstd checks that it fills exactly `size` bytes (Compression.decompress).
            var out = [UInt8](unsafeUninitializedCapacity: size) { _, count in count = size }
            let r: Result<Void, Compression.Failure> = out.withUnsafeMutableBytes { o in
                Result { () throws(Compression.Failure) in try Compression.decompress(payload, into: o, context: context) }
            }
            try r.get()
            return out
        } catch {
            switch error {
            case .invalid(let reason):
                throw .decompressionFailed(location, reason: reason)
            case .tooLarge(let declared, let limit):
                throw .sizeLimitExceeded(location, what: "declared decompressed size", size: declared, limit: limit)
            case .sizeMismatch(let declared, let actual):
                throw .decompressedSizeMismatch(location, declared: declared, actual: actual)
            }
        }
    }

    // MARK: Attachment chunks

    /// Seals one chunk of a padded stream, `plaintext` (1 … 65,536 bytes),
    /// writing the whole frame into `frame` (exactly 16 + 61 + plaintext
    /// bytes).
    ///
    /// - Throws: ``FormatError/outOfGuardedMemory``.
    public static func sealChunk(
        plaintext: UnsafeRawBufferPointer, into frame: UnsafeMutableRawBufferPointer, chunk: ChunkHeader, key: EpochKey,
        vaultID: VaultID, random: any RandomSource
    ) throws(FormatError) {
        let recordKey: SymmetricKey
        do { recordKey = try key.subkey(.record) } catch { throw .outOfGuardedMemory }
        let h = FrameHeader.byteCount
        let n = XChaCha20Poly1305.nonceByteCount
        random.fill(UnsafeMutableRawBufferPointer(rebasing: frame[h..<(h + n)]))
        sealChunk(plaintext: plaintext, into: frame, chunk: chunk, keyID: key.id, recordKey: recordKey, vaultID: vaultID)
    }

    /// ``sealChunk(plaintext:into:chunk:key:vaultID:random:)`` with the
    /// nonce already in place (`frame[16..<40]`) and the record subkey of
    /// the key whose id is `keyID`. Touches nothing but `frame`, so several
    /// threads seal different chunks at once.
    static func sealChunk(
        plaintext: UnsafeRawBufferPointer, into frame: UnsafeMutableRawBufferPointer, chunk: ChunkHeader, keyID: KeyID,
        recordKey: SymmetricKey, vaultID: VaultID
    ) {
        let h = FrameHeader.byteCount
        let n = XChaCha20Poly1305.nonceByteCount
        let plainStart = h + n + ChunkHeader.byteCount
        let bodyLength = chunkBodyLength(plaintextCount: plaintext.count)
        precondition(frame.count == h + bodyLength)
        let header = FrameHeader(kind: .blobChunk, flags: FrameHeader.sealedFlag, keyID: keyID, bodyLength: UInt32(bodyLength))
        let chunkBytes = chunk.encoded()
        UnsafeMutableRawBufferPointer(rebasing: frame[0..<h]).copyBytes(from: header.encoded())
        let nonceSlot = UnsafeMutableRawBufferPointer(rebasing: frame[h..<(h + n)])
        UnsafeMutableRawBufferPointer(rebasing: frame[(h + n)..<plainStart]).copyBytes(from: chunkBytes)
        let ad = associatedData(vaultID: vaultID, header: header, publicHeader: chunkBytes)
        let out = UnsafeMutableRawBufferPointer(
            rebasing: frame[plainStart..<(plainStart + plaintext.count + XChaCha20Poly1305.tagByteCount)])
        ad.withUnsafeBytes { a in
            XChaCha20Poly1305.seal(plaintext, into: out, key: recordKey, nonce: UnsafeRawBufferPointer(nonceSlot), authenticating: a)
        }
    }

    /// Opens one chunk body into `output` (at least 65,536 bytes) and returns
    /// how many stream bytes it held.
    ///
    /// - Throws: ``FormatError/chunkNoncanonical(stream:index:reason:)`` for a
    ///   body of the wrong length, ``FormatError/authenticationFailed(_:)``.
    public static func openChunk(
        body: UnsafeRawBufferPointer, header: FrameHeader, chunk: ChunkHeader, location: FrameLocation, keys: [EpochKey],
        vaultID: VaultID, into output: UnsafeMutableRawBufferPointer
    ) throws(FormatError) -> Int {
        guard body.count > chunkOverheadByteCount else {
            throw .malformedFrame(location, reason: "chunk body shorter than its fixed parts")
        }
        let plainCount = body.count - chunkOverheadByteCount
        guard plainCount <= Limits.chunkByteCount else {
            throw .chunkNoncanonical(stream: chunk.stream.description, index: chunk.index, reason: "holds more than one chunk of content")
        }
        if !chunk.isFinal && plainCount != Limits.chunkByteCount {
            throw .chunkNoncanonical(
                stream: chunk.stream.description, index: chunk.index,
                reason: "a non-final chunk must hold exactly \(Limits.chunkByteCount) bytes, it holds \(plainCount)")
        }
        precondition(output.count >= plainCount)
        let ad = associatedData(vaultID: vaultID, header: header, publicHeader: chunk.encoded())
        let plain = UnsafeMutableRawBufferPointer(rebasing: output[0..<plainCount])
        guard openAny(body: body, publicHeaderCount: ChunkHeader.byteCount, ad: ad, keys: keys, into: plain) else {
            throw .authenticationFailed(location)
        }
        return plainCount
    }
}
