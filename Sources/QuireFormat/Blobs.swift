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
///
/// A regular file is checked at the end: if it is not the size it had when
/// opened, it changed while being read and ``FormatError/sourceChanged(path:)``
/// is thrown, so a half-written file is never stored as complete. A pipe or
/// device is read until its end (while the vault's write lock is held).
public final class FileByteSource: ByteSource {
    private let file: SystemFile
    private var offset: UInt64 = 0
    private let sizeAtOpen: UInt64?

    /// Opens `path` for reading.
    ///
    /// - Throws: ``FormatError/io(_:)``.
    public init(path: String) throws(FormatError) {
        do {
            file = try SystemFile(path: path, mode: .readOnly, allowNonRegular: true)
            let size = try file.size()
            sizeAtOpen = FileSystem.isRegularFile(path) ? size : nil
        } catch {
            throw .io(error)
        }
    }

    /// Reads the next bytes of the file; 0 at its end.
    ///
    /// - Throws: ``FormatError/io(_:)``, ``FormatError/sourceChanged(path:)``.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(FormatError) -> Int {
        let n: Int
        do { n = try file.read(into: buffer, at: offset) } catch { throw .io(error) }
        offset += UInt64(n)
        if let expected = sizeAtOpen, n == 0 || offset > expected {
            let now = (try? file.size()) ?? 0
            if offset != expected || now != expected { throw .sourceChanged(path: file.path) }
        }
        return n
    }
}

/// Serves bytes held in memory.
public final class MemoryByteSource: ByteSource {
    private let bytes: [UInt8]
    private var offset = 0

    /// A source over `bytes`.
    public init(_ bytes: [UInt8]) { self.bytes = bytes }

    /// Copies the next bytes; 0 at the end. Never throws.
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
    ///
    /// - Parameter maxByteCount: refuse content longer than this (default
    ///   ``Limits/maxBlobByteCount``), so an endless source cannot fill the disk.
    public func appendBlob(
        from source: any ByteSource, mediaType: String, maxByteCount: UInt64 = Limits.maxBlobByteCount,
        isKnown: (BlobID) -> Bool = { _ in false }
    ) throws(FormatError) -> StoredBlob {
        guard let blobKey = vault.keys.blobKey else { throw .notWritable(reason: "no blob key is unlocked") }
        let start = mark()
        let stream = StreamID(using: random)
        let chunkSize = Limits.chunkByteCount
        let plainCapacity = SealedFrame.maxChunkPlaintextByteCount
        let frameCapacity = FrameHeader.byteCount + SealedFrame.chunkBodyLength(contentCount: chunkSize, isFinal: true)
        // Two content buffers (one is hashed on the second thread while the
        // next is read) and one frame buffer; nothing is allocated per chunk.
        let contents = [UnsafeMutableRawBufferPointer.allocate(byteCount: plainCapacity, alignment: 16),
                        UnsafeMutableRawBufferPointer.allocate(byteCount: plainCapacity, alignment: 16)]
        let frame = UnsafeMutableRawBufferPointer.allocate(byteCount: frameCapacity, alignment: 16)
        let hasher = ParallelHasher(key: blobKey)
        defer {
            hasher.wait(slot: 0)
            hasher.wait(slot: 1)
            for c in contents { c.initializeMemory(as: UInt8.self, repeating: 0); c.deallocate() }
            frame.deallocate()
        }
        var slot = 0
        var count = try Self.readFull(source, into: contents[0], count: chunkSize)
        var index: UInt32 = 0
        var total: UInt64 = 0
        let vaultID = vault.vaultID
        while true {
            total += UInt64(count)
            let limit = min(maxByteCount, Limits.maxBlobByteCount)
            guard total <= limit else {
                rollBack(to: start)
                throw .sizeLimitExceeded(nil, what: "attachment", size: total, limit: limit)
            }
            hasher.submit(UnsafeRawBufferPointer(rebasing: contents[slot][0..<count]), slot: slot)
            var isFinal = count < chunkSize
            var nextCount = 0
            if !isFinal {
                hasher.wait(slot: 1 - slot)
                nextCount = try Self.readFull(source, into: contents[1 - slot], count: chunkSize)
                isFinal = nextCount == 0
            }
            var plainCount = count
            if isFinal {
                // The padding lies after the bytes being hashed: no overlap.
                plainCount = Padding.paddedCount(forPayload: count)
                contents[slot][count] = 0x80
                for i in (count + 1)..<plainCount { contents[slot][i] = 0 }
            }
            let frameLength = FrameHeader.byteCount + XChaCha20Poly1305.nonceByteCount + ChunkHeader.byteCount + plainCount + XChaCha20Poly1305.tagByteCount
            let chunk = ChunkHeader(stream: stream, index: index, isFinal: isFinal)
            let out = UnsafeMutableRawBufferPointer(rebasing: frame[0..<frameLength])
            SealedFrame.sealChunk(plaintext: UnsafeRawBufferPointer(rebasing: contents[slot][0..<plainCount]), into: out,
                                  chunk: chunk, key: key, vaultID: vaultID, random: random)
            _ = try appendFrame(UnsafeRawBufferPointer(out), plaintextBody: nil, chunk: chunk)
            if isFinal { break }
            guard index < UInt32.max else {
                rollBack(to: start)
                throw .sizeLimitExceeded(nil, what: "attachment chunk count", size: UInt64(index), limit: UInt64(UInt32.max))
            }
            slot = 1 - slot
            count = nextCount
            index += 1
        }
        let blob = BlobID(unchecked: hasher.finish())
        if isKnown(blob) {
            rollBack(to: start)
            return .deduplicated(blob, byteCount: total)
        }
        let manifest = BlobManifest(blob: blob, stream: stream, byteCount: total, mediaType: mediaType)
        try appendSealed(kind: .blobManifest, payload: manifest.encoded(), compress: false)
        return .stored(manifest)
    }

    /// Reads until `count` bytes are at the start of `buffer` or the source ends.
    static func readFull(_ source: any ByteSource, into buffer: UnsafeMutableRawBufferPointer, count: Int) throws(FormatError) -> Int {
        var done = 0
        while done < count {
            let n = try source.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[done..<count]))
            if n == 0 { break }
            done += n
        }
        return done
    }

}

extension VaultFile {
    /// Committed chunk frames by stream, in file order (built without a key).
    public var streamIndex: [StreamID: [Int]] {
        lock.withLock { streamIndexLocked }
    }

    var streamIndexLocked: [StreamID: [Int]] {
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
        try lock.withLock { () throws(FormatError) -> [Int] in try chunkFramesLocked(for: manifest) }
    }

    func chunkFramesLocked(for manifest: BlobManifest) throws(FormatError) -> [Int] {
        let s = manifest.stream.description
        // Only chunks the release rules allow count (Spec/format.md §9.3):
        // a stale chunk cannot break or join a stream.
        let frames = (streamIndexLocked[manifest.stream] ?? []).filter { releaseVerdictLocked(frame: $0) == nil }
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
        let largestFinal = UInt32(SealedFrame.chunkBodyLength(contentCount: Limits.chunkByteCount, isFinal: true))
        for (i, frame) in frames.enumerated() {
            let c = chunks[i], length = structure.frames[frame].header.bodyLength
            if !c.isFinal && length != full {
                throw .chunkNoncanonical(stream: s, index: c.index, reason: "a non-final chunk must hold exactly \(Limits.chunkByteCount) bytes")
            }
            if c.isFinal && length > largestFinal {
                throw .chunkNoncanonical(stream: s, index: c.index, reason: "a final chunk holds more than \(Limits.chunkByteCount) bytes")
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
/// bounded by a few chunks. Every chunk is authenticated before any of its
/// bytes are returned; a stream read to its end is also checked against its
/// size and its blob id (hashed on a second thread while the next chunk is
/// decrypted).
public final class BlobReader {
    let vault: VaultFile
    /// The manifest being read.
    public let manifest: BlobManifest
    let frames: [Int]
    private let body: UnsafeMutableRawBufferPointer
    private let outputs: [UnsafeMutableRawBufferPointer]
    private var slot = 0
    private var bufferCount = 0
    private var bufferOffset = 0
    private var nextChunk = 0
    private var total: UInt64 = 0
    private var hasher: ParallelHasher?

    init(vault: VaultFile, manifest: BlobManifest, frames: [Int]) {
        self.vault = vault
        self.manifest = manifest
        self.frames = frames
        body = UnsafeMutableRawBufferPointer.allocate(byteCount: SealedFrame.chunkBodyLength(contentCount: Limits.chunkByteCount, isFinal: true), alignment: 16)
        outputs = (0..<2).map { _ in UnsafeMutableRawBufferPointer.allocate(byteCount: SealedFrame.maxChunkPlaintextByteCount, alignment: 16) }
        if let key = vault.keys.blobKey { hasher = ParallelHasher(key: key) }
    }

    deinit {
        // A hashing job may still be reading an output buffer: wait for it
        // before the buffers go.
        hasher?.wait(slot: 0)
        hasher?.wait(slot: 1)
        body.deallocate()
        for o in outputs { o.initializeMemory(as: UInt8.self, repeating: 0); o.deallocate() }
    }

    /// Number of chunks.
    public var chunkCount: Int { frames.count }

    /// The content of chunk `index` alone (at most 64 KiB).
    ///
    /// - Throws: ``FormatError/authenticationFailed(_:)``, ``FormatError/unknownEpoch(_:epoch:)``,
    ///   ``FormatError/staleEpoch(_:epoch:currentEpoch:)``, ``FormatError/badPadding(_:)``,
    ///   ``FormatError/chunkNoncanonical(stream:index:reason:)``, ``FormatError/io(_:)``.
    public func chunk(_ index: Int) throws(FormatError) -> [UInt8] {
        let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: SealedFrame.maxChunkPlaintextByteCount, alignment: 16)
        defer { scratch.deallocate() }
        let n = try readChunk(index, into: scratch)
        return Array(scratch[0..<n])
    }

    func readChunk(_ index: Int, into output: UnsafeMutableRawBufferPointer) throws(FormatError) -> Int {
        try vault.lock.withLock { () throws(FormatError) -> Int in try readChunkLocked(index, into: output) }
    }

    func readChunkLocked(_ index: Int, into output: UnsafeMutableRawBufferPointer) throws(FormatError) -> Int {
        let frame = vault.structure.frames[frames[index]]
        if let verdict = vault.releaseVerdictLocked(frame: frame.location.index) { throw verdict }
        let keys = vault.keys.keys(for: frame.header.epoch)
        guard !keys.isEmpty else { throw .unknownEpoch(frame.location, epoch: frame.header.epoch) }
        let length = Int(frame.header.bodyLength)
        guard length <= body.count else { throw .chunkNoncanonical(stream: frame.chunk!.stream.description, index: frame.chunk!.index, reason: "holds more than one chunk of content") }
        let target = UnsafeMutableRawBufferPointer(rebasing: body[0..<length])
        let got: Int
        do { got = try vault.file.read(into: target, at: frame.bodyOffset) } catch { throw .io(error) }
        guard got == length else { throw .io(SystemError(operation: "pread", path: vault.path, code: 5)) }
        return try SealedFrame.openChunk(
            body: UnsafeRawBufferPointer(target), header: frame.header, chunk: frame.chunk!, location: frame.location, keys: keys,
            vaultID: vault.vaultID, into: output)
    }

    /// Reads the next bytes of the content into `destination`; returns 0
    /// at the end. When the end is reached the total size and the blob id
    /// are checked.
    ///
    /// - Throws: the errors of ``chunk(_:)``, ``FormatError/blobSizeMismatch(blob:expected:actual:)``,
    ///   ``FormatError/blobIDMismatch(blob:)``.
    public func read(into destination: UnsafeMutableRawBufferPointer) throws(FormatError) -> Int {
        if bufferOffset == bufferCount {
            guard nextChunk < frames.count else { return 0 }
            slot = 1 - slot
            hasher?.wait(slot: slot)  // that buffer's previous chunk is hashed
            bufferCount = try readChunk(nextChunk, into: outputs[slot])
            bufferOffset = 0
            nextChunk += 1
            total += UInt64(bufferCount)
            hasher?.submit(UnsafeRawBufferPointer(rebasing: outputs[slot][0..<bufferCount]), slot: slot)
            if nextChunk == frames.count {
                guard total == manifest.byteCount else {
                    throw .blobSizeMismatch(blob: manifest.blob.description, expected: manifest.byteCount, actual: total)
                }
                if let h = hasher {
                    hasher = nil
                    guard constantTimeEqual(h.finish(), manifest.blob.bytes) else { throw .blobIDMismatch(blob: manifest.blob.description) }
                }
            }
            if bufferCount == 0 { return 0 }
        }
        let n = min(destination.count, bufferCount - bufferOffset)
        destination.baseAddress!.copyMemory(from: outputs[slot].baseAddress!.advanced(by: bufferOffset), byteCount: n)
        bufferOffset += n
        return n
    }

    /// The whole content in memory (for small attachments).
    ///
    /// - Throws: the errors of ``read(into:)``.
    public func readAll() throws(FormatError) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(Int(min(manifest.byteCount, 1 << 30)))
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: Limits.chunkByteCount, alignment: 16)
        defer { chunk.deallocate() }
        while true {
            let n = try read(into: chunk)
            if n == 0 { break }
            out.append(contentsOf: UnsafeRawBufferPointer(rebasing: chunk[0..<n]))
        }
        return out
    }
}
