import QuireCrypto
import QuireSystem

/// Where attachment content comes from when it is stored.
public protocol ByteSource: AnyObject {
    /// Reads up to `buffer.count` bytes; returns 0 only at the end.
    ///
    /// - Throws: ``FormatError/io(_:)``.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws(FormatError) -> Int
}

/// Reads a file from the start, in order.
public final class FileByteSource: ByteSource {
    private let file: SystemFile
    private var offset: UInt64 = 0

    /// Opens `path` for reading.
    ///
    /// - Throws: ``FormatError/io(_:)``.
    public init(path: String) throws(FormatError) {
        do { file = try SystemFile(path: path, mode: .readOnly) } catch { throw .io(error) }
    }

    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(FormatError) -> Int {
        let n: Int
        do { n = try file.read(into: buffer, at: offset) } catch { throw .io(error) }
        offset += UInt64(n)
        return n
    }
}

/// Serves bytes held in memory.
public final class MemoryByteSource: ByteSource {
    private let bytes: [UInt8]
    private var offset = 0

    /// A source over `bytes`.
    public init(_ bytes: [UInt8]) { self.bytes = bytes }

    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(FormatError) -> Int {
        let n = min(buffer.count, bytes.count - offset)
        if n > 0 {
            bytes.withUnsafeBytes { src in
                buffer.baseAddress!.copyMemory(from: src.baseAddress!.advanced(by: offset), byteCount: n)
            }
        }
        offset += n
        return n
    }
}

/// What storing an attachment did.
public enum StoredBlob: Sendable, Equatable {
    /// The content was new: its chunks and manifest were appended.
    case stored(BlobManifest)
    /// The vault already holds this content; nothing was appended.
    case deduplicated(BlobID, byteCount: UInt64)

    /// The content's id.
    public var blob: BlobID {
        switch self {
        case .stored(let m): m.blob
        case .deduplicated(let id, _): id
        }
    }

    /// The content's size in bytes.
    public var byteCount: UInt64 {
        switch self {
        case .stored(let m): m.byteCount
        case .deduplicated(_, let n): n
        }
    }
}

extension PendingCommit {
    /// Streams `source` into the vault as an attachment (`Spec/format.md §7`):
    /// 64 KiB chunks sealed as they are read, then the manifest. Memory stays
    /// near two chunks whatever the size.
    ///
    /// The blob id (keyed BLAKE2b-256 of the content) is known only at the
    /// end; if `isKnown` says the vault already holds it, the chunks just
    /// written are dropped and nothing is appended.
    ///
    /// - Throws: ``FormatError/notWritable(reason:)`` without a blob key,
    ///   ``FormatError/sizeLimitExceeded(_:what:size:limit:)``, ``FormatError/io(_:)``.
    public func appendBlob(from source: any ByteSource, mediaType: String, isKnown: (BlobID) -> Bool = { _ in false }) throws(FormatError) -> StoredBlob {
        guard let blobKey = vault.keys.blobKey else { throw .notWritable(reason: "no blob key is unlocked") }
        let start = mark()
        let stream = StreamID(using: random)
        let chunkSize = Limits.chunkByteCount
        let plainStart = FrameHeader.byteCount + XChaCha20Poly1305.nonceByteCount + ChunkHeader.byteCount
        let capacity = FrameHeader.byteCount + SealedFrame.chunkBodyLength(contentCount: chunkSize, isFinal: true)
        var current = [UInt8](repeating: 0, count: capacity)
        var next = [UInt8](repeating: 0, count: capacity)
        var hasher = BLAKE2b.Hasher(byteCount: BlobID.byteCount, key: blobKey)
        var count = try Self.readFull(source, into: &current, at: plainStart, count: chunkSize)
        var index: UInt32 = 0
        var total: UInt64 = 0
        let vaultID = vault.vaultID
        while true {
            var isFinal = count < chunkSize
            var nextCount = 0
            if !isFinal {
                nextCount = try Self.readFull(source, into: &next, at: plainStart, count: chunkSize)
                isFinal = nextCount == 0
            }
            total += UInt64(count)
            guard total <= Limits.maxBlobByteCount else {
                rollBack(to: start)
                throw .sizeLimitExceeded(nil, what: "attachment", size: total, limit: Limits.maxBlobByteCount)
            }
            current.withUnsafeBytes { hasher.update(UnsafeRawBufferPointer(rebasing: $0[plainStart..<(plainStart + count)])) }
            let frameLength = FrameHeader.byteCount + SealedFrame.chunkBodyLength(contentCount: count, isFinal: isFinal)
            let chunk = ChunkHeader(stream: stream, index: index, isFinal: isFinal)
            let contentCount = count
            let r = random
            let k = key
            current.withUnsafeMutableBytes { raw in
                SealedFrame.sealChunk(
                    frame: UnsafeMutableRawBufferPointer(rebasing: raw[0..<frameLength]), contentCount: contentCount,
                    chunk: chunk, key: k, vaultID: vaultID, random: r)
            }
            let result: Result<FrameLocation, FormatError> = current.withUnsafeBytes { raw in
                Result { () throws(FormatError) -> FrameLocation in
                    try appendFrame(UnsafeRawBufferPointer(rebasing: raw[0..<frameLength]), plaintextBody: nil, chunk: chunk)
                }
            }
            _ = try result.get()
            if isFinal { break }
            guard index < UInt32.max else { throw .sizeLimitExceeded(nil, what: "attachment chunk count", size: UInt64(index), limit: UInt64(UInt32.max)) }
            swap(&current, &next)
            count = nextCount
            index += 1
        }
        let blob = BlobID(unchecked: hasher.finalize())
        if isKnown(blob) {
            rollBack(to: start)
            return .deduplicated(blob, byteCount: total)
        }
        let manifest = BlobManifest(blob: blob, stream: stream, byteCount: total, mediaType: mediaType)
        try appendSealed(kind: .blobManifest, payload: manifest.encoded(), compress: false)
        return .stored(manifest)
    }

    /// Reads until `count` bytes are in `buffer` at `offset` or the source ends.
    static func readFull(_ source: any ByteSource, into buffer: inout [UInt8], at offset: Int, count: Int) throws(FormatError) -> Int {
        var done = 0
        while done < count {
            let n = try buffer.withMutableBytes { (raw: UnsafeMutableRawBufferPointer) throws(FormatError) -> Int in
                try source.read(into: UnsafeMutableRawBufferPointer(rebasing: raw[(offset + done)..<(offset + count)]))
            }
            if n == 0 { break }
            done += n
        }
        return done
    }
}

extension VaultFile {
    /// Committed chunk frames by stream, in file order (built without a key).
    public var streamIndex: [StreamID: [Int]] {
        if let cached = streamIndexCache { return cached }
        var index: [StreamID: [Int]] = [:]
        for frame in structure.frames[0..<structure.committedFrameCount] {
            if let c = frame.chunk, frame.malformation == nil { index[c.stream, default: []].append(frame.location.index) }
        }
        streamIndexCache = index
        return index
    }

    /// Checks that a stream's chunks form the one canonical chunking of
    /// `manifest` (`Spec/format.md §7.1`): indices 0…n−1, each once, in
    /// order, only the last one final, n matching the size. Needs no key.
    ///
    /// - Returns: the chunk frame indices in order.
    /// - Throws: ``FormatError/chunkMissing(stream:index:)``,
    ///   ``FormatError/chunkDuplicate(stream:index:)``, ``FormatError/chunkOutOfOrder(stream:index:)``,
    ///   ``FormatError/chunkFinalMissing(stream:)``, ``FormatError/chunkFinalRepeated(stream:index:)``,
    ///   ``FormatError/blobSizeMismatch(blob:expected:actual:)``.
    public func chunkFrames(for manifest: BlobManifest) throws(FormatError) -> [Int] {
        let s = manifest.stream.description
        let frames = streamIndex[manifest.stream] ?? []
        let chunks = frames.map { structure.frames[$0].chunk! }
        var seen = Set<UInt32>()
        for c in chunks where !seen.insert(c.index).inserted { throw .chunkDuplicate(stream: s, index: c.index) }
        // Indices must be exactly 0…n−1: the first gap is the missing chunk.
        var expected: UInt32 = 0
        while seen.contains(expected) { expected += 1 }
        if Int(expected) != chunks.count { throw .chunkMissing(stream: s, index: expected) }
        if chunks.isEmpty { throw .chunkMissing(stream: s, index: 0) }
        for (position, c) in chunks.enumerated() where c.index != UInt32(position) {
            throw .chunkOutOfOrder(stream: s, index: c.index)
        }
        // The one canonical chunking, visible from frame lengths alone: every
        // non-final chunk holds exactly 64 KiB, and an empty final chunk
        // stands alone.
        let full = UInt32(SealedFrame.chunkBodyLength(contentCount: Limits.chunkByteCount, isFinal: false))
        let empty = UInt32(SealedFrame.chunkBodyLength(contentCount: 0, isFinal: true))
        for (i, frame) in frames.enumerated() {
            let c = chunks[i], length = structure.frames[frame].header.bodyLength
            if !c.isFinal && length != full {
                throw .chunkNoncanonical(stream: s, index: c.index, reason: "a non-final chunk must hold exactly \(Limits.chunkByteCount) bytes")
            }
            if c.isFinal && c.index > 0 && length == empty {
                throw .chunkNoncanonical(stream: s, index: c.index, reason: "an empty final chunk may only stand alone (for an empty attachment)")
            }
        }
        for c in chunks.dropLast() where c.isFinal { throw .chunkFinalRepeated(stream: s, index: c.index) }
        if !chunks.last!.isFinal { throw .chunkFinalMissing(stream: s) }
        if UInt64(frames.count) != manifest.chunkCount {
            let capacity = UInt64(frames.count) * UInt64(Limits.chunkByteCount)
            throw .blobSizeMismatch(blob: manifest.blob.description, expected: manifest.byteCount, actual: min(capacity, manifest.byteCount))
        }
        return frames
    }

    /// Opens an attachment for reading (`Spec/format.md §7`).
    ///
    /// - Throws: the chunk structure errors of ``chunkFrames(for:)``.
    public func openBlob(_ manifest: BlobManifest) throws(FormatError) -> BlobReader {
        BlobReader(vault: self, manifest: manifest, frames: try chunkFrames(for: manifest))
    }
}

/// Reads one attachment, a chunk at a time or as a stream, with memory
/// bounded by one chunk. Every chunk is authenticated before any of its bytes
/// are returned; a stream read to its end is also checked against its size
/// and its blob id.
public final class BlobReader {
    let vault: VaultFile
    /// The manifest being read.
    public let manifest: BlobManifest
    let frames: [Int]
    private var buffer: [UInt8] = []
    private var bufferCount = 0
    private var bufferOffset = 0
    private var nextChunk = 0
    private var total: UInt64 = 0
    private var hasher: BLAKE2b.Hasher?

    init(vault: VaultFile, manifest: BlobManifest, frames: [Int]) {
        self.vault = vault
        self.manifest = manifest
        self.frames = frames
    }

    /// Number of chunks.
    public var chunkCount: Int { frames.count }

    /// The content of chunk `index` alone (at most 64 KiB).
    ///
    /// - Throws: ``FormatError/authenticationFailed(_:)``, ``FormatError/unknownEpoch(_:epoch:)``,
    ///   ``FormatError/staleEpoch(_:epoch:currentEpoch:)``, ``FormatError/badPadding(_:)``,
    ///   ``FormatError/chunkNoncanonical(stream:index:reason:)``, ``FormatError/io(_:)``.
    public func chunk(_ index: Int) throws(FormatError) -> [UInt8] {
        var out: [UInt8] = []
        let n = try readChunk(index, into: &out)
        return Array(out[0..<n])
    }

    func readChunk(_ index: Int, into output: inout [UInt8]) throws(FormatError) -> Int {
        let frame = vault.structure.frames[frames[index]]
        if let verdict = vault.releaseVerdict(frame: frame.location.index) { throw verdict }
        let keys = vault.keys.keys(for: frame.header.epoch)
        guard !keys.isEmpty else { throw .unknownEpoch(frame.location, epoch: frame.header.epoch) }
        let body: [UInt8]
        do { body = try vault.file.read(count: Int(frame.header.bodyLength), at: frame.bodyOffset) } catch { throw .io(error) }
        guard body.count == Int(frame.header.bodyLength) else { throw .io(SystemError(operation: "pread", path: vault.path, code: 5)) }
        let id = vault.vaultID
        return try body.withBytes { (raw: UnsafeRawBufferPointer) throws(FormatError) -> Int in
            try SealedFrame.openChunk(body: raw, header: frame.header, chunk: frame.chunk!, location: frame.location, keys: keys, vaultID: id, into: &output)
        }
    }

    /// Reads the next bytes of the content into `buffer`; returns 0 at the
    /// end. When the end is reached the total size and the blob id are
    /// checked.
    ///
    /// - Throws: the errors of ``chunk(_:)``, ``FormatError/blobSizeMismatch(blob:expected:actual:)``,
    ///   ``FormatError/blobIDMismatch(blob:)``.
    public func read(into destination: UnsafeMutableRawBufferPointer) throws(FormatError) -> Int {
        if bufferOffset == bufferCount {
            guard nextChunk < frames.count else { return 0 }
            if nextChunk == 0, let key = vault.keys.blobKey { hasher = BLAKE2b.Hasher(byteCount: BlobID.byteCount, key: key) }
            bufferCount = try readChunk(nextChunk, into: &buffer)
            bufferOffset = 0
            nextChunk += 1
            total += UInt64(bufferCount)
            buffer.withUnsafeBytes { raw in hasher?.update(UnsafeRawBufferPointer(rebasing: raw[0..<bufferCount])) }
            if nextChunk == frames.count {
                guard total == manifest.byteCount else {
                    throw .blobSizeMismatch(blob: manifest.blob.description, expected: manifest.byteCount, actual: total)
                }
                if hasher != nil {
                    let digest = hasher!.finalize()
                    hasher = nil
                    guard constantTimeEqual(digest, manifest.blob.bytes) else { throw .blobIDMismatch(blob: manifest.blob.description) }
                }
            }
            if bufferCount == 0 { return 0 }
        }
        let n = min(destination.count, bufferCount - bufferOffset)
        buffer.withUnsafeBytes { raw in
            destination.baseAddress!.copyMemory(from: raw.baseAddress!.advanced(by: bufferOffset), byteCount: n)
        }
        bufferOffset += n
        return n
    }

    /// The whole content in memory (for small attachments).
    ///
    /// - Throws: the errors of ``read(into:)``.
    public func readAll() throws(FormatError) -> [UInt8] {
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: Limits.chunkByteCount)
        while true {
            let n = try chunk.withMutableBytes { (raw: UnsafeMutableRawBufferPointer) throws(FormatError) -> Int in try read(into: raw) }
            if n == 0 { break }
            out += chunk[0..<n]
        }
        return out
    }
}
