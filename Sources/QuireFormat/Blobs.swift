public import QuireCrypto
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
    /// Stores the content `source` yields as an attachment: the padded
    /// stream `content ‖ 0x80 ‖ 0x00…` of `Padmé(N + 1)` bytes, cut into
    /// 64 KiB chunks sealed under this commit's key, then the manifest
    /// (`Spec/format.md §7`).
    ///
    /// Memory stays bounded (two batches of ``batchChunkCount`` chunks and one
    /// frame) whatever the size. The content is read a batch at a time; the
    /// blob id, the keyed hash tree of the content under the write key's
    /// blob key (a leaf per 64 KiB chunk, `Spec/format.md §7.3`), is
    /// computed on a second thread one batch at a time while this thread
    /// seals that batch's chunks and reads the next; when this thread is
    /// ahead it computes leaves too, so both cores share the hashing.
    /// (Handing the hashing thread one 64 KiB chunk at a time cost a wake-up
    /// per chunk, a thousand per 64 MiB.) When `isKnown` says the vault already holds
    /// that blob id, the chunks just written are dropped (they are not
    /// committed yet) and nothing is appended.
    ///
    /// - Throws: ``FormatError/sizeLimitExceeded(_:what:size:limit:)`` over
    ///   `maxByteCount` (or ``Limits/maxBlobByteCount``),
    ///   ``FormatError/notWritable(reason:)`` without a blob key, and the
    ///   source's errors (such as ``FormatError/sourceChanged(path:)``).
    ///   `aliases` are earlier blob ids of the same content (a rekey stores it
    ///   again under a new blob key).
    public func appendBlob(
        from source: any ByteSource, mediaType: String, maxByteCount: UInt64 = Limits.maxBlobByteCount, aliases: [BlobID] = [],
        isKnown: (BlobID) -> Bool = { _ in false }
    ) throws(FormatError) -> StoredBlob {
        guard let blobKey = key.blobKey else { throw .notWritable(reason: "no blob key is unlocked") }
        let start = mark()
        let stream = StreamID(using: random)
        let chunkSize = Limits.chunkByteCount
        let batchSize = chunkSize * Self.batchChunkCount
        let limit = min(maxByteCount, Limits.maxBlobByteCount)
        // Two batch buffers (one is hashed on the second thread while the
        // next is read and sealed) and one frame buffer; nothing is
        // allocated per chunk.
        let buffers = [UnsafeMutableRawBufferPointer.allocate(byteCount: batchSize, alignment: 16),
                       UnsafeMutableRawBufferPointer.allocate(byteCount: batchSize, alignment: 16)]
        let frame = UnsafeMutableRawBufferPointer.allocate(byteCount: FrameHeader.byteCount + SealedFrame.fullChunkBodyLength, alignment: 16)
        let hasher = ParallelHasher(key: blobKey)
        defer {
            hasher.wait(slot: 0)
            hasher.wait(slot: 1)
            for b in buffers { b.initializeMemory(as: UInt8.self, repeating: 0); b.deallocate() }
            frame.deallocate()
        }
        let vaultID = vault.vaultID
        var index: UInt32 = 0
        func emit(_ buffer: UnsafeMutableRawBufferPointer, at offset: Int, _ count: Int, isFinal: Bool) throws(FormatError) {
            let chunk = ChunkHeader(stream: stream, index: index, isFinal: isFinal)
            let out = UnsafeMutableRawBufferPointer(rebasing: frame[0..<(FrameHeader.byteCount + SealedFrame.chunkBodyLength(plaintextCount: count))])
            try SealedFrame.sealChunk(plaintext: UnsafeRawBufferPointer(rebasing: buffer[offset..<(offset + count)]), into: out,
                                      chunk: chunk, key: key, vaultID: vaultID, random: random)
            _ = try appendFrame(UnsafeRawBufferPointer(out), plaintextBody: nil, chunk: chunk)
            if !isFinal {
                guard index < UInt32.max else {
                    throw .sizeLimitExceeded(nil, what: "attachment chunk count", size: UInt64(index), limit: UInt64(UInt32.max))
                }
                index += 1
            }
        }
        var slot = 0
        var total: UInt64 = 0
        do throws(FormatError) {
            var fill = try Self.readFull(source, into: buffers[0], count: batchSize)
            total = UInt64(fill)
            guard total <= limit else { throw .sizeLimitExceeded(nil, what: "attachment", size: total, limit: limit) }
            // Whole batches: padding always follows the content (at least
            // the 0x80), so a chunk holding 64 KiB of content is never the
            // final one, and a full batch can be sealed at once.
            while true {
                hasher.submit(UnsafeRawBufferPointer(rebasing: buffers[slot][0..<fill]), slot: slot)
                if fill < batchSize { break }
                for c in 0..<Self.batchChunkCount { try emit(buffers[slot], at: c * chunkSize, chunkSize, isFinal: false) }
                slot = 1 - slot
                hasher.wait(slot: slot)
                fill = try Self.readFull(source, into: buffers[slot], count: batchSize)
                total += UInt64(fill)
                guard total <= limit else { throw .sizeLimitExceeded(nil, what: "attachment", size: total, limit: limit) }
            }
            // The last batch (being hashed) holds the end of the content:
            // its full chunks, then the rest of the content followed by the
            // padding, up to Padmé(N + 1) bytes in all. The padding is
            // written after the bytes being hashed (no overlap), and chunks
            // holding padding alone are built in the other buffer.
            var offset = 0
            while fill - offset >= chunkSize {
                try emit(buffers[slot], at: offset, chunkSize, isFinal: false)
                offset += chunkSize
            }
            var padding = Padding.streamByteCount(contentByteCount: total) - total
            var buffer = buffers[slot]
            var count = fill - offset
            var marker = true
            while true {
                let take = Int(min(UInt64(chunkSize - count), padding))
                if take > 0 {
                    buffer[offset + count] = marker ? 0x80 : 0
                    if take > 1 {
                        UnsafeMutableRawBufferPointer(rebasing: buffer[(offset + count + 1)..<(offset + count + take)])
                            .initializeMemory(as: UInt8.self, repeating: 0)
                    }
                    marker = false
                    count += take
                    padding -= UInt64(take)
                }
                let isFinal = padding == 0
                try emit(buffer, at: offset, count, isFinal: isFinal)
                if isFinal { break }
                hasher.wait(slot: 1 - slot)
                buffer = buffers[1 - slot]
                offset = 0
                count = 0
            }
        } catch {
            rollBack(to: start)
            throw error
        }
        let blob = BlobID(unchecked: hasher.finish())
        if isKnown(blob) {
            rollBack(to: start)
            return .deduplicated(blob, byteCount: total)
        }
        let manifest = BlobManifest(blob: blob, stream: stream, byteCount: total, mediaType: mediaType, aliases: Array(aliases.filter { $0 != blob }.prefix(Limits.maxAliasCount)))
        try appendSealed(kind: .blobManifest, payload: manifest.encoded(), compress: false)
        return .stored(manifest)
    }

    /// Chunks read, hashed and sealed as one batch when storing an
    /// attachment (1 MiB): a batch is one read of the source and one job for
    /// the hashing thread.
    static let batchChunkCount = 16

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
    /// `manifest` (`Spec/format.md §7.1`, §7.4): indices 0…n−1, each once, in
    /// order, only the last one final, n matching the size. Needs no key.
    ///
    /// Where several chunk frames carry one index and some opens under a
    /// held key, every one that does not is passed over; of the rest
    /// the stream takes the one of the highest standing — a commit a member attested, then another
    /// verified commit, then a commit that does not verify — and the first
    /// in file order among those; a second frame of that standing counts
    /// only if it is byte for byte the same. So a copy of a chunk appended
    /// after a junk commit, or in an unattested commit, does not break a
    /// stream.
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
        var releasable = (streamIndexLocked[manifest.stream] ?? []).filter { releaseVerdictLocked(frame: $0) == nil }
        // Of several candidates of one index, when some opens under a held
        // key of its key id, every one that does not is passed over,
        // whatever its key id: an altered copy, or one naming a key id no
        // key has, which anyone can append, neither wins nor counts as a
        // duplicate (Spec/format.md §7.4).
        let byIndex = Dictionary(grouping: releasable) { structure.frames[$0].chunk!.index }
        var dropped = Set<Int>()
        for (_, frames) in byIndex where frames.count > 1 {
            let failing = frames.filter { chunkAuthenticatesLocked(frame: $0) != true }
            if failing.count < frames.count { dropped.formUnion(failing) }
        }
        if !dropped.isEmpty { releasable.removeAll { dropped.contains($0) } }
        var chosen: [UInt32: (frame: Int, standing: Int)] = [:]
        for f in releasable {
            let index = structure.frames[f].chunk!.index
            let standing = standingLocked(ofFrame: f)
            guard let current = chosen[index] else {
                chosen[index] = (f, standing)
                continue
            }
            if standing > current.standing {
                chosen[index] = (f, standing)
            } else if standing == current.standing, !(try sameFrameLocked(current.frame, f)) {
                throw .chunkDuplicate(stream: s, index: index)
            }
        }
        let frames = chosen.values.map { $0.frame }.sorted()
        let chunks = frames.map { structure.frames[$0].chunk! }
        let seen = Set(chosen.keys)
        // Indices must be exactly 0…n−1: the first gap is the missing chunk.
        var expected: UInt32 = 0
        while seen.contains(expected) { expected += 1 }
        if Int(expected) != chunks.count { throw .chunkMissing(stream: s, index: expected) }
        if chunks.isEmpty { throw .chunkMissing(stream: s, index: 0) }
        for (position, c) in chunks.enumerated() where c.index != UInt32(position) {
            throw .chunkOutOfOrder(stream: s, index: c.index)
        }
        // The one canonical chunking, visible from frame lengths alone: every
        // chunk flagged non-final holds exactly 64 KiB of the stream.
        for (i, frame) in frames.enumerated() {
            let c = chunks[i], length = structure.frames[frame].header.bodyLength
            if !c.isFinal && length != UInt32(SealedFrame.fullChunkBodyLength) {
                throw .chunkNoncanonical(stream: s, index: c.index, reason: "a non-final chunk must hold exactly \(Limits.chunkByteCount) bytes")
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

    /// How far a commit vouches for frame `index`: 2 when its commit is
    /// verified and attested by a member, 1 when it is verified, 0 otherwise
    /// (`Spec/format.md §7.4`).
    public func standing(ofFrame index: Int) -> Int {
        lock.withLock { standingLocked(ofFrame: index) }
    }

    func standingLocked(ofFrame index: Int) -> Int {
        guard let g = structure.groupIndex(ofFrame: index), g < verdicts.statuses.count, verdicts.statuses[g] == .verified else { return 0 }
        // Only this group's attestation: reading `commits` would check every
        // group's, an Ed25519 verification each.
        checkAttestations(of: [g])
        return verdicts.isAttested(g) ? 2 : 1
    }

    /// True when frames `a` and `b` are the same bytes.
    func sameFrameLocked(_ a: Int, _ b: Int) throws(FormatError) -> Bool {
        let fa = structure.frames[a], fb = structure.frames[b]
        guard fa.headerBytes == fb.headerBytes, fa.trailer == fb.trailer else { return false }
        let count = Int(fa.header.bodyLength)
        let window = FileWindow(file: file, fileSize: structure.fileSize, preferredByteCount: 0)
        return try window.bytes(fa.bodyOffset, count) == window.bytes(fb.bodyOffset, count)
    }

    /// Whether chunk frame `index` authenticates under a held key of its key
    /// id: nil when no such key is held (`Spec/format.md §7.4`). Merge uses
    /// it to leave out a chunk that does not (`Spec/merge.md §3.2`).
    public func chunkAuthenticates(frame index: Int) -> Bool? {
        lock.withLock { chunkAuthenticatesLocked(frame: index) }
    }

    func chunkAuthenticatesLocked(frame index: Int) -> Bool? {
        let f = structure.frames[index]
        let keys = keys.keys(for: f.header.keyID)
        guard let chunk = f.chunk, !keys.isEmpty else { return keys.isEmpty ? nil : false }
        let window = FileWindow(file: file, fileSize: structure.fileSize, preferredByteCount: 0)
        return (try? window.withBytes(f.bodyOffset, Int(f.header.bodyLength)) { (body: UnsafeRawBufferPointer) throws(FormatError) -> Bool in
            let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: Limits.chunkByteCount, alignment: 16)
            defer {
                scratch.initializeMemory(as: UInt8.self, repeating: 0)
                scratch.deallocate()
            }
            _ = try SealedFrame.openChunk(
                body: body, header: f.header, chunk: chunk, location: f.location, keys: keys, vaultID: vaultID, into: scratch)
            return true
        }) ?? false
    }

    /// Opens an attachment for reading (`Spec/format.md §7`); `blobKey` is the
    /// blob key of the keyring whose key seals the manifest (nil skips the
    /// blob id check). When the content is read through `alias`, one of the
    /// manifest's `aliases`, reading to the end also checks that `alias` is
    /// the content's blob id (§7.3) under one of `aliasBlobKeys` (the blob
    /// keys of the trusted keyrings, §7.3): an alias nobody can vouch for
    /// does not substitute content.
    ///
    /// - Throws: the chunk structure errors of ``chunkFrames(for:)``.
    public func openBlob(
        _ manifest: BlobManifest, blobKey: SymmetricKey?, alias: BlobID? = nil, aliasBlobKeys: [SymmetricKey] = []
    ) throws(FormatError) -> BlobReader {
        BlobReader(
            vault: self, manifest: manifest, frames: try chunkFrames(for: manifest), blobKey: blobKey,
            alias: alias.map { ($0, aliasBlobKeys) })
    }
}
/// Reads one attachment's content chunk by chunk, checks the padding after
/// it, and checks its size and blob id at the end (`Spec/format.md §7.4`).
///
/// Memory stays bounded: one chunk body and two output buffers of
/// ``PendingCommit/batchChunkCount`` chunks. Chunks are opened a batch at a
/// time, and the leaves of each batch's content (`Spec/format.md §7.3`) are
/// computed on a second thread while the next batch is opened, and by this
/// thread too when it would otherwise wait. A chunk that does not open is
/// named on its own (the chunks before it in its batch are handed out
/// first); the blob id, the root over every leaf, is checked at the end. Bytes are handed out before the whole attachment
/// is checked: a caller that needs certainty reads to the end
/// (``readAll()``) before it trusts them.
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
    private var contentLeft: UInt64
    private var streamRead: UInt64 = 0
    private var markerSeen = false
    /// An error met after the first chunk of a batch: the chunks before it
    /// are handed out first, as if read one at a time.
    private var deferredError: FormatError?
    private var hasher: ParallelHasher?
    /// The alias the content is read through, and a hasher per blob key it
    /// may be the content's id under (`Spec/format.md §7.3`).
    private let alias: BlobID?
    private var aliasHashers: [ParallelHasher] = []

    init(vault: VaultFile, manifest: BlobManifest, frames: [Int], blobKey: SymmetricKey?, alias: (BlobID, [SymmetricKey])? = nil) {
        self.vault = vault
        self.manifest = manifest
        self.frames = frames
        contentLeft = manifest.byteCount
        body = UnsafeMutableRawBufferPointer.allocate(byteCount: SealedFrame.fullChunkBodyLength, alignment: 16)
        outputs = (0..<2).map { _ in
            UnsafeMutableRawBufferPointer.allocate(byteCount: Limits.chunkByteCount * PendingCommit.batchChunkCount, alignment: 16)
        }
        if let blobKey { hasher = ParallelHasher(key: blobKey) }
        self.alias = alias?.0
        aliasHashers = (alias?.1 ?? []).map { ParallelHasher(key: $0) }
    }

    deinit {
        // A hashing job may still be reading an output buffer: wait for it
        // before the buffers go.
        hasher?.wait(slot: 0)
        hasher?.wait(slot: 1)
        for h in aliasHashers {
            h.wait(slot: 0)
            h.wait(slot: 1)
        }
        body.deallocate()
        for o in outputs { o.initializeMemory(as: UInt8.self, repeating: 0); o.deallocate() }
    }

    /// How many chunks the stream has, padding included: the last ones may
    /// hold only padding.
    public var chunkCount: Int { frames.count }

    /// The content bytes of chunk `index`, opened alone: at most 64 KiB, the
    /// content from byte `index × 65,536` on. The padding that ends the stream
    /// is left out, so a chunk that holds only padding gives no bytes.
    ///
    /// The chunk is authenticated on its own; the attachment's size and blob
    /// id are checked only by reading it to the end (``readAll()``).
    ///
    /// - Throws: as ``read(into:)`` for one chunk.
    public func chunk(_ index: Int) throws(FormatError) -> [UInt8] {
        let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: Limits.chunkByteCount, alignment: 16)
        defer {
            scratch.initializeMemory(as: UInt8.self, repeating: 0)
            scratch.deallocate()
        }
        let n = try readChunk(index, into: scratch)
        let start = UInt64(index) * UInt64(Limits.chunkByteCount)
        let content = manifest.byteCount > start ? Int(min(UInt64(n), manifest.byteCount - start)) : 0
        return Array(scratch[0..<content])
    }

    func readChunk(_ index: Int, into output: UnsafeMutableRawBufferPointer) throws(FormatError) -> Int {
        try vault.lock.withLock { () throws(FormatError) -> Int in try readChunkLocked(index, into: output) }
    }

    func readChunkLocked(_ index: Int, into output: UnsafeMutableRawBufferPointer) throws(FormatError) -> Int {
        let frame = vault.structure.frames[frames[index]]
        if let verdict = vault.releaseVerdictLocked(frame: frame.location.index) { throw verdict }
        let keys = vault.candidateKeysLocked(for: frame)
        guard !keys.isEmpty else { throw .unknownKey(frame.location, keyID: frame.header.keyID) }
        let length = Int(frame.header.bodyLength)
        guard length <= body.count else {
            throw .chunkNoncanonical(stream: frame.chunk!.stream.description, index: frame.chunk!.index, reason: "holds more than one chunk of content")
        }
        let target = UnsafeMutableRawBufferPointer(rebasing: body[0..<length])
        let got: Int
        do { got = try vault.file.read(into: target, at: frame.bodyOffset) } catch { throw .io(error) }
        guard got == length else { throw .io(SystemError(operation: "pread", path: vault.path, code: 5)) }
        return try SealedFrame.openChunk(
            body: UnsafeRawBufferPointer(target), header: frame.header, chunk: frame.chunk!, location: frame.location, keys: keys,
            vaultID: vault.vaultID, into: output)
    }

    /// Copies up to `destination.count` content bytes and returns how many;
    /// 0 at the end. After the last chunk the padding, the size and the blob
    /// id have been checked.
    ///
    /// - Throws: ``FormatError/authenticationFailed(_:)``, ``FormatError/unknownKey(_:keyID:)``,
    ///   ``FormatError/blobPaddingInvalid(blob:)`` (also for a stream whose
    ///   length is not Padmé(N + 1)), ``FormatError/blobIDMismatch(blob:)``,
    ///   I/O errors.
    public func read(into destination: UnsafeMutableRawBufferPointer) throws(FormatError) -> Int {
        while bufferOffset == bufferCount {
            if let deferredError {
                self.deferredError = nil
                throw deferredError
            }
            guard nextChunk < frames.count else { return 0 }
            slot = 1 - slot
            hasher?.wait(slot: slot)  // that buffer's previous batch is hashed
            for h in aliasHashers { h.wait(slot: slot) }
            // A batch of chunks, their content one after another (padding
            // is checked where it lands, then overwritten by the next chunk).
            var filled = 0
            for position in 0..<PendingCommit.batchChunkCount {
                guard nextChunk < frames.count else { break }
                let target = UnsafeMutableRawBufferPointer(rebasing: outputs[slot][filled..<(filled + Limits.chunkByteCount)])
                do throws(FormatError) {
                    let plain = try readChunk(nextChunk, into: target)
                    let content = Int(min(UInt64(plain), contentLeft))
                    try checkPadding(UnsafeRawBufferPointer(rebasing: target[content..<plain]))
                    nextChunk += 1
                    streamRead += UInt64(plain)
                    contentLeft -= UInt64(content)
                    filled += content
                } catch {
                    guard position > 0 else { throw error }
                    deferredError = error
                    break
                }
            }
            bufferCount = filled
            bufferOffset = 0
            hasher?.submit(UnsafeRawBufferPointer(rebasing: outputs[slot][0..<filled]), slot: slot)
            for h in aliasHashers { h.submit(UnsafeRawBufferPointer(rebasing: outputs[slot][0..<filled]), slot: slot) }
            if deferredError == nil && nextChunk == frames.count { try finish() }
        }
        let n = min(destination.count, bufferCount - bufferOffset)
        destination.baseAddress!.copyMemory(from: outputs[slot].baseAddress!.advanced(by: bufferOffset), byteCount: n)
        bufferOffset += n
        return n
    }

    /// Bytes after the content: one `0x80`, then zeros.
    private func checkPadding(_ bytes: UnsafeRawBufferPointer) throws(FormatError) {
        for b in bytes {
            if !markerSeen {
                guard b == 0x80 else { throw .blobPaddingInvalid(blob: manifest.blob.description) }
                markerSeen = true
            } else if b != 0 {
                throw .blobPaddingInvalid(blob: manifest.blob.description)
            }
        }
    }

    /// After the last chunk: the stream has exactly its Padmé length with
    /// the marker at the manifest's size (`Spec/format.md §7.4` check 7),
    /// and the content hashes to the blob id (check 8).
    private func finish() throws(FormatError) {
        // The chunk count was checked before (blob_size_mismatch); a stream
        // too short for its content has a length other than Padmé(N + 1),
        // which is bad padding (Spec/format.md §7.4 step 7).
        guard contentLeft == 0, markerSeen, streamRead == Padding.streamByteCount(contentByteCount: manifest.byteCount) else {
            throw .blobPaddingInvalid(blob: manifest.blob.description)
        }
        if let h = hasher {
            hasher = nil
            guard constantTimeEqual(h.finish(), manifest.blob.bytes) else { throw .blobIDMismatch(blob: manifest.blob.description) }
        }
        if let alias {
            let hashers = aliasHashers
            aliasHashers = []
            guard hashers.map({ $0.finish() }).contains(where: { constantTimeEqual($0, alias.bytes) }) else {
                throw .blobIDMismatch(blob: alias.description)
            }
        }
    }

    /// The whole content, checked.
    ///
    /// - Throws: as ``read(into:)``.
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
