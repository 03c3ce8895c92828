public import QuireCrypto
import QuireSystem

/// Seals record payloads into frames and opens them again
/// (`Spec/format.md §5`–`§7`).
///
/// Body of a sealed frame:
///
/// ```
/// +-------------+----------------------+-------------------------+---------+
/// | nonce (24)  | public header (P)    | ciphertext              | tag (16)|
/// +-------------+----------------------+-------------------------+---------+
/// ```
///
/// P is 21 for attachment chunks (``ChunkHeader``) and 0 for every other
/// kind. The associated data is `vault id (16) ‖ frame header bytes 0..<8 ‖
/// public header`. The plaintext is the payload, zstd-compressed when the
/// compressed flag is set, followed by padding (``Padding``); a non-final
/// attachment chunk is exactly ``Limits/chunkByteCount`` bytes with no padding.
public enum SealedFrame {
    /// Bytes a sealed frame adds around its padded plaintext: header, nonce
    /// and tag (52).
    public static let overheadByteCount = FrameHeader.byteCount + XChaCha20Poly1305.nonceByteCount
        + XChaCha20Poly1305.tagByteCount

    /// The associated data for a sealed frame.
    public static func associatedData(vaultID: VaultID, header: FrameHeader, publicHeader: [UInt8]) -> [UInt8] {
        vaultID.bytes + header.fieldBytes + publicHeader
    }

    /// Builds a whole sealed frame (header and body) for `payload`.
    ///
    /// - Parameters:
    ///   - compress: try zstd and keep it when it makes the payload smaller.
    /// - Throws: ``FormatError/recordTooLarge(byteCount:limit:)``.
    public static func seal(
        kind: RecordKind, payload: [UInt8], key: EpochKey, vaultID: VaultID, compress: Bool,
        random: any RandomSource
    ) throws(FormatError) -> [UInt8] {
        guard payload.count <= Limits.maxRecordByteCount else {
            throw .recordTooLarge(byteCount: payload.count, limit: Limits.maxRecordByteCount)
        }
        var flags = FrameHeader.sealedFlag
        var stored = payload
        if compress {
            let packed = Compression.compress(payload)
            if packed.count < payload.count {
                stored = packed
                flags |= FrameHeader.compressedFlag
            }
        }
        Padding.pad(&stored)
        let bodyLength = XChaCha20Poly1305.nonceByteCount + stored.count + XChaCha20Poly1305.tagByteCount
        precondition(bodyLength <= Limits.maxFrameBodyByteCount, "a 16 MiB payload always fits a frame")
        let header = FrameHeader(kind: kind, flags: flags, epoch: key.epoch, bodyLength: UInt32(bodyLength))
        let nonce = random.bytes(XChaCha20Poly1305.nonceByteCount)
        let ad = associatedData(vaultID: vaultID, header: header, publicHeader: [])
        var frame = header.encoded()
        frame.reserveCapacity(FrameHeader.byteCount + bodyLength)
        frame += nonce
        frame += XChaCha20Poly1305.seal(stored, key: key.recordKey, nonce: nonce, authenticating: ad)
        wipe(&stored)
        return frame
    }

    /// Opens the body of a sealed frame that has no public header and
    /// returns its payload (decompressed, padding removed).
    ///
    /// Each key in `keys` is tried in turn (an epoch may have several keys
    /// after concurrent rotations).
    ///
    /// - Throws: ``FormatError/authenticationFailed(_:)``,
    ///   ``FormatError/badPadding(_:)``, ``FormatError/decompressionFailed(_:reason:)``,
    ///   ``FormatError/sizeLimitExceeded(_:what:size:limit:)``,
    ///   ``FormatError/decompressedSizeMismatch(_:declared:actual:)``.
    public static func open(
        body: UnsafeRawBufferPointer, header: FrameHeader, location: FrameLocation, keys: [EpochKey],
        vaultID: VaultID, context: DecompressionContext
    ) throws(FormatError) -> [UInt8] {
        try open(body: body, header: header, associatedData: associatedData(vaultID: vaultID, header: header, publicHeader: []),
                 location: location, keys: keys, context: context)
    }

    /// ``open(body:header:location:keys:vaultID:context:)`` with the
    /// associated data already built (`vault id ‖ header bytes 0..<8`).
    static func open(
        body: UnsafeRawBufferPointer, header: FrameHeader, associatedData ad: [UInt8], location: FrameLocation, keys: [EpochKey],
        context: DecompressionContext
    ) throws(FormatError) -> [UInt8] {
        let plainCount = Int(header.bodyLength) - XChaCha20Poly1305.nonceByteCount - XChaCha20Poly1305.tagByteCount
        // The AEAD writes every byte, so the buffer need not be zeroed first.
        var plain = [UInt8](unsafeUninitializedCapacity: plainCount) { _, count in count = plainCount }
        try authenticate(body: body, publicHeaderCount: 0, ad: ad, keys: keys, into: &plain, location: location)
        let payloadCount = try plain.withBytes { (p: UnsafeRawBufferPointer) throws(FormatError) -> Int in
            guard let n = Padding.payloadCount(in: p) else { throw .badPadding(location) }
            return n
        }
        if header.isCompressed {
            defer { wipe(&plain) }
            return try plain.withBytes { (p: UnsafeRawBufferPointer) throws(FormatError) -> [UInt8] in
                try decompress(UnsafeRawBufferPointer(rebasing: p[0..<payloadCount]), location: location, context: context)
            }
        }
        // Padding is zeros: dropping it leaves only the payload, no copy.
        plain.removeSubrange(payloadCount...)
        return plain
    }

    /// Tries each key; on success `plain` holds the padded plaintext.
    static func authenticate(
        body: UnsafeRawBufferPointer, publicHeaderCount: Int, ad: [UInt8], keys: [EpochKey], into plain: inout [UInt8],
        location: FrameLocation
    ) throws(FormatError) {
        let nonceCount = XChaCha20Poly1305.nonceByteCount
        let nonce = UnsafeRawBufferPointer(rebasing: body[0..<nonceCount])
        let sealed = UnsafeRawBufferPointer(rebasing: body[(nonceCount + publicHeaderCount)...])
        for key in keys {
            let ok = plain.withUnsafeMutableBytes { p in
                ad.withUnsafeBytes { a in
                    (try? XChaCha20Poly1305.open(sealed, into: p, key: key.recordKey, nonce: nonce, authenticating: a)) != nil
                }
            }
            if ok { return }
        }
        throw .authenticationFailed(location)
    }

    /// Decompresses a payload after checking its declared size.
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

    /// Length of a chunk frame body holding `contentCount` bytes.
    public static func chunkBodyLength(contentCount: Int, isFinal: Bool) -> Int {
        let plain = isFinal ? Padding.paddedCount(forPayload: contentCount) : contentCount
        return XChaCha20Poly1305.nonceByteCount + ChunkHeader.byteCount + plain + XChaCha20Poly1305.tagByteCount
    }

    /// Largest plaintext of a chunk frame: a full final chunk with its padding.
    public static let maxChunkPlaintextByteCount = Padding.paddedCount(forPayload: Limits.chunkByteCount)

    /// Seals one attachment chunk into `frame`, which must be exactly
    /// `12 + chunkBodyLength(contentCount:isFinal:)` bytes and hold the
    /// content at offset `12 + 24 + 21`. Works in place.
    public static func sealChunk(
        frame: UnsafeMutableRawBufferPointer, contentCount: Int, chunk: ChunkHeader, key: EpochKey, vaultID: VaultID,
        random: any RandomSource
    ) {
        let plainStart = FrameHeader.byteCount + XChaCha20Poly1305.nonceByteCount + ChunkHeader.byteCount
        var plainCount = contentCount
        if chunk.isFinal {
            plainCount = Padding.paddedCount(forPayload: contentCount)
            frame[plainStart + contentCount] = 0x80
            for i in (plainStart + contentCount + 1)..<(plainStart + plainCount) { frame[i] = 0 }
        }
        sealChunk(plaintext: UnsafeRawBufferPointer(rebasing: frame[plainStart..<(plainStart + plainCount)]),
                  into: frame, chunk: chunk, key: key, vaultID: vaultID, random: random)
    }

    /// Seals one attachment chunk whose plaintext (the content, padded when
    /// final: ``Padding``) is `plaintext`, writing the whole frame into
    /// `frame`, which must be exactly `12 + 24 + 21 + plaintext.count + 16`
    /// bytes. `plaintext` may lie inside `frame` at its final place.
    public static func sealChunk(
        plaintext: UnsafeRawBufferPointer, into frame: UnsafeMutableRawBufferPointer, chunk: ChunkHeader, key: EpochKey,
        vaultID: VaultID, random: any RandomSource
    ) {
        let plainStart = FrameHeader.byteCount + XChaCha20Poly1305.nonceByteCount + ChunkHeader.byteCount
        let bodyLength = XChaCha20Poly1305.nonceByteCount + ChunkHeader.byteCount + plaintext.count + XChaCha20Poly1305.tagByteCount
        precondition(frame.count == FrameHeader.byteCount + bodyLength)
        let header = FrameHeader(kind: .blobChunk, flags: FrameHeader.sealedFlag, epoch: key.epoch, bodyLength: UInt32(bodyLength))
        let chunkBytes = chunk.encoded()
        UnsafeMutableRawBufferPointer(rebasing: frame[0..<FrameHeader.byteCount]).copyBytes(from: header.encoded())
        let nonceSlot = UnsafeMutableRawBufferPointer(rebasing: frame[12..<(12 + XChaCha20Poly1305.nonceByteCount)])
        random.fill(nonceSlot)
        UnsafeMutableRawBufferPointer(rebasing: frame[(12 + 24)..<plainStart]).copyBytes(from: chunkBytes)
        let ad = associatedData(vaultID: vaultID, header: header, publicHeader: chunkBytes)
        let out = UnsafeMutableRawBufferPointer(rebasing: frame[plainStart..<(plainStart + plaintext.count + XChaCha20Poly1305.tagByteCount)])
        ad.withUnsafeBytes { a in
            XChaCha20Poly1305.seal(plaintext, into: out, key: key.recordKey, nonce: UnsafeRawBufferPointer(nonceSlot), authenticating: a)
        }
    }

    /// Opens an attachment chunk body, decrypting straight into `output`
    /// (at least ``maxChunkPlaintextByteCount`` bytes), and returns the
    /// number of content bytes at its start.
    ///
    /// - Throws: ``FormatError/authenticationFailed(_:)``,
    ///   ``FormatError/badPadding(_:)``, ``FormatError/chunkNoncanonical(stream:index:reason:)``,
    ///   ``FormatError/malformedFrame(_:reason:)``.
    public static func openChunk(
        body: UnsafeRawBufferPointer, header: FrameHeader, chunk: ChunkHeader, location: FrameLocation, keys: [EpochKey],
        vaultID: VaultID, into output: UnsafeMutableRawBufferPointer
    ) throws(FormatError) -> Int {
        let fixed = XChaCha20Poly1305.nonceByteCount + ChunkHeader.byteCount + XChaCha20Poly1305.tagByteCount
        guard body.count >= fixed else { throw .malformedFrame(location, reason: "chunk body shorter than its fixed parts") }
        let plainCount = body.count - fixed
        guard plainCount <= maxChunkPlaintextByteCount else {
            throw .chunkNoncanonical(stream: chunk.stream.description, index: chunk.index, reason: "holds more than one chunk of content")
        }
        if !chunk.isFinal && plainCount != Limits.chunkByteCount {
            throw .chunkNoncanonical(stream: chunk.stream.description, index: chunk.index,
                                     reason: "a non-final chunk must hold exactly \(Limits.chunkByteCount) bytes, it holds \(plainCount)")
        }
        precondition(output.count >= plainCount)
        let ad = associatedData(vaultID: vaultID, header: header, publicHeader: chunk.encoded())
        let nonce = UnsafeRawBufferPointer(rebasing: body[0..<XChaCha20Poly1305.nonceByteCount])
        let sealed = UnsafeRawBufferPointer(rebasing: body[(XChaCha20Poly1305.nonceByteCount + ChunkHeader.byteCount)...])
        let plain = UnsafeMutableRawBufferPointer(rebasing: output[0..<plainCount])
        var opened = false
        for key in keys where !opened {
            opened = ad.withUnsafeBytes { a in
                (try? XChaCha20Poly1305.open(sealed, into: plain, key: key.recordKey, nonce: nonce, authenticating: a)) != nil
            }
        }
        guard opened else { throw .authenticationFailed(location) }
        guard chunk.isFinal else { return plainCount }
        guard let n = Padding.payloadCount(in: UnsafeRawBufferPointer(plain)) else { throw .badPadding(location) }
        guard n <= Limits.chunkByteCount else {
            throw .chunkNoncanonical(stream: chunk.stream.description, index: chunk.index, reason: "final chunk holds more than \(Limits.chunkByteCount) bytes")
        }
        if n == 0 && chunk.index != 0 {
            throw .chunkNoncanonical(stream: chunk.stream.description, index: chunk.index,
                                     reason: "an empty final chunk may only stand alone (for an empty attachment)")
        }
        return n
    }
}
