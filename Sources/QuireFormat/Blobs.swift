@_spi(Crypto) public import QuireCrypto
import QuireSystem

/// Where attachment content comes from when it is stored.
///
/// A source is not `Sendable` (it reads from where it is): an app makes
/// its own inside the `commit` closure that stores it. A file the app
/// already has is stored from its `URL`, and bytes in memory as an array,
/// both `Sendable` and so capturable by that closure.
public protocol ByteSource: AnyObject {
    /// Reads up to `buffer.count` bytes; returns 0 only at the end.
    ///
    /// A source of the app's (a photo library asset, an `InputStream`) that
    /// fails throws ``QuireError/sourceFailed(_:)`` (`.unavailable`,
    /// `source_failed`), or any other ``QuireError``: the attachment is not
    /// stored, the commit that stores it writes nothing, and the error
    /// reaches the commit's caller unchanged. Returning 0 instead would
    /// store the content read so far as if it were whole.
    ///
    /// - Throws: ``QuireError``.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws(QuireError) -> Int
}

/// Reads a file from the start, in order.
///
/// A regular file is checked at the end: if it is not the size it had when
/// opened, it changed while being read and ``FormatError/sourceChanged(path:)``
/// is thrown, so a half-written file is never stored as complete. A pipe or
/// device is read until its end (while the vault's write lock is held).
package final class FileByteSource: ByteSource {
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
    /// - Throws: ``QuireError`` of ``FormatError/io(_:)``, ``FormatError/sourceChanged(path:)``.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(QuireError) -> Int {
        let n: Int
        do { n = try file.read(into: buffer, at: offset) } catch { throw .fromFormat(.io(error)) }
        offset += UInt64(n)
        if let expected = sizeAtOpen, n == 0 || offset > expected {
            let now = (try? file.size()) ?? 0
            if offset != expected || now != expected { throw .fromFormat(.sourceChanged(path: file.path)) }
        }
        return n
    }
}

/// Serves bytes held in memory.
@_spi(Format) public final class MemoryByteSource: ByteSource {
    private let bytes: [UInt8]
    private var offset = 0

    /// A source over `bytes`.
    public init(_ bytes: [UInt8]) { self.bytes = bytes }

    /// Copies the next bytes; 0 at the end. Never throws.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(QuireError) -> Int {
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

/// What storing an attachment did: pass it to
/// `AttachmentReference(_:mediaType:fileName:)`, which names the content in
/// an entry. Its id and size are for the library's own tools (an app reads
/// an attachment through its reference's `blob`).
public enum StoredBlob: Sendable, Equatable {
    /// The content was new: its chunks and manifest were appended.
    @_spi(Format) case stored(BlobManifest)
    /// The vault already holds this content; nothing was appended.
    @_spi(Format) case deduplicated(BlobID, byteCount: UInt64)

    /// The content's id.
    @_spi(Format) public var blob: BlobID {
        switch self {
        case .stored(let m): m.blob
        case .deduplicated(let id, _): id
        }
    }

    /// The content's size in bytes.
    @_spi(Format) public var byteCount: UInt64 {
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
    /// Memory stays bounded (two batches of ``batchChunkCount`` chunks read
    /// and two batches of their sealed frames) whatever the size. The
    /// content is read a batch at a time and goes through a pipeline: while
    /// this thread writes batch k − 1 and reads batch k + 1, the chunks of
    /// batch k are sealed and the leaves of the blob id (the keyed hash tree
    /// of the content under the write key's blob key, `Spec/format.md §7.3`)
    /// computed, each chunk by whichever thread claims it first (a worker
    /// per processor, and this one when it would wait), so every core shares
    /// the AEAD and the hashing. The padding goes through the same pipeline
    /// in the batches after the content's last. Nonces are drawn on this
    /// thread in chunk order. When `isKnown` says the vault already holds
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
        // Two batch buffers (one is hashed by the workers while the
        // next is read); nothing is allocated per chunk.
        let buffers = [
            UnsafeMutableRawBufferPointer.allocate(byteCount: batchSize, alignment: 16),
            UnsafeMutableRawBufferPointer.allocate(byteCount: batchSize, alignment: 16),
        ]
        let frameLength = FrameHeader.byteCount + SealedFrame.fullChunkBodyLength
        // A whole batch's frames, sealed by the workers, written at once.
        let sealed = [
            UnsafeMutableRawBufferPointer.allocate(byteCount: frameLength * Self.batchChunkCount, alignment: 16),
            UnsafeMutableRawBufferPointer.allocate(byteCount: frameLength * Self.batchChunkCount, alignment: 16),
        ]
        let hasher = ParallelHasher(key: blobKey)
        defer {
            hasher.wait(slot: 0)
            hasher.wait(slot: 1)
            for b in buffers {
                b.initializeMemory(as: UInt8.self, repeating: 0)
                b.deallocate()
            }
            for b in sealed { b.deallocate() }
        }
        let vaultID = vault.vaultID
        var index: UInt32 = 0
        // The chunk headers of the batch sealed in each slot.
        var batchChunks: [[ChunkHeader]] = [[], []]
        // The bytes of sealed frames in each slot (the last frame of the
        // stream may be short).
        var sealedCounts = [0, 0]
        /// Queues the batch in `buffers[s]`: `count` stream bytes, of which
        /// the first `contentCount` are content (the rest padding), the last
        /// chunk the stream's final one when `isLast`. Its nonces are drawn
        /// here, in chunk order (the same draws as one chunk at a time), then
        /// the workers (and this thread) seal its chunks into `sealed[s]` and
        /// hash the leaves of its content.
        func submitBatch(_ s: Int, count: Int, contentCount: Int, isLast: Bool) throws(FormatError) {
            let recordKey: SymmetricKey
            do { recordKey = try key.subkey(.record) } catch { throw .outOfGuardedMemory }
            let chunkCount = (count + chunkSize - 1) / chunkSize
            var headers: [ChunkHeader] = []
            headers.reserveCapacity(chunkCount)
            for c in 0..<chunkCount {
                let isFinal = isLast && c == chunkCount - 1
                headers.append(ChunkHeader(stream: stream, index: index, isFinal: isFinal))
                if !isFinal {
                    guard index < UInt32.max else {
                        throw .sizeLimitExceeded(nil, what: "attachment chunk count", size: UInt64(index), limit: UInt64(UInt32.max))
                    }
                    index += 1
                }
                let nonce = c * frameLength + FrameHeader.byteCount
                random.fill(UnsafeMutableRawBufferPointer(rebasing: sealed[s][nonce..<(nonce + XChaCha20Poly1305.nonceByteCount)]))
            }
            batchChunks[s] = headers
            func frameByteCount(_ plain: Int) -> Int { FrameHeader.byteCount + SealedFrame.chunkBodyLength(plaintextCount: plain) }
            sealedCounts[s] = (chunkCount - 1) * frameLength + frameByteCount(count - (chunkCount - 1) * chunkSize)
            let input = UnsafeRawBufferPointer(buffers[s])
            let output = sealed[s]
            let keyID = key.id
            hasher.submit(UnsafeRawBufferPointer(rebasing: input[0..<contentCount]), slot: s, units: chunkCount) { c in
                let plain = min(chunkSize, count - c * chunkSize)
                let frameStart = c * frameLength
                SealedFrame.sealChunk(
                    plaintext: UnsafeRawBufferPointer(rebasing: input[(c * chunkSize)..<(c * chunkSize + plain)]),
                    into: UnsafeMutableRawBufferPointer(rebasing: output[frameStart..<(frameStart + frameByteCount(plain))]),
                    chunk: headers[c], keyID: keyID, recordKey: recordKey, vaultID: vaultID)
            }
        }
        /// Waits for the batch in slot `s` (helping) and writes its frames.
        func writeBatch(_ s: Int) throws(FormatError) {
            hasher.wait(slot: s)
            try appendChunkFrames(
                UnsafeRawBufferPointer(rebasing: sealed[s][0..<sealedCounts[s]]), frameLength: frameLength, chunks: batchChunks[s])
        }
        var slot = 0
        var total: UInt64 = 0
        do throws(FormatError) {
            // A pipeline: batch k is sealed and hashed (by the workers)
            // while this thread writes batch k − 1 and reads batch k + 1.
            // Padding always follows the content (at least the 0x80), so a
            // batch full of content never holds the final chunk. The batch
            // the content ends in is filled up with padding, and so are as
            // many more as the padding needs (up to Padmé(N + 1) bytes in
            // all): the padding is sealed on every core and written from the
            // sealed buffers like the content, not chunk by chunk.
            var previous: Int?
            var padding: UInt64?
            var marker = true
            while true {
                var fill = 0
                if padding == nil {
                    fill = try Self.readFull(source, into: buffers[slot], count: batchSize)
                    total += UInt64(fill)
                    guard total <= limit else { throw .sizeLimitExceeded(nil, what: "attachment", size: total, limit: limit) }
                }
                var count = fill
                if fill < batchSize {
                    // The content has ended: padding fills the rest.
                    var left = padding ?? (Padding.streamByteCount(contentByteCount: total) - total)
                    let take = Int(min(UInt64(batchSize - fill), left))
                    if take > 0 {
                        let buffer = buffers[slot]
                        buffer[fill] = marker ? 0x80 : 0
                        if take > 1 {
                            UnsafeMutableRawBufferPointer(rebasing: buffer[(fill + 1)..<(fill + take)])
                                .initializeMemory(as: UInt8.self, repeating: 0)
                        }
                        marker = false
                    }
                    count += take
                    left -= UInt64(take)
                    padding = left
                }
                let isLast = padding == 0
                try submitBatch(slot, count: count, contentCount: fill, isLast: isLast)
                if let p = previous { try writeBatch(p) }
                previous = slot
                slot = 1 - slot
                if isLast { break }
            }
            if let p = previous { try writeBatch(p) }
        } catch {
            rollBack(to: start)
            throw error
        }
        let blob = BlobID(unchecked: hasher.finish())
        if isKnown(blob) {
            rollBack(to: start)
            return .deduplicated(blob, byteCount: total)
        }
        let manifest = BlobManifest(
            blob: blob, stream: stream, byteCount: total, mediaType: mediaType,
            aliases: Array(aliases.filter { $0 != blob }.prefix(Limits.maxAliasCount)))
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
            let n: Int
            do {
                n = try source.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[done..<count]))
            } catch {
                // The package's own sources fail with a container error;
                // an app's with whatever it threw, carried unchanged.
                if let e = error.layer as? FormatError { throw e }
                throw .source(error)
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
        lock.withLock { streamIndexLocked }
    }

    var streamIndexLocked: [StreamID: [Int]] {
        if let cached = streamIndexCache { return cached }
        var index: [StreamID: [Int]] = [:]
        // By index: a frame of a packed prefix is built only if it is a
        // chunk (a frame's malformation is nil there).
        for i in 0..<structure.committedFrameCount where structure.frames.kind(at: i) == .blobChunk {
            let frame = structure.frames[i]
            if let c = frame.chunk, frame.malformation == nil { index[c.stream, default: []].append(i) }
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
        let byIndex = Dictionary(grouping: releasable) { structure.frames.chunk(at: $0)!.index }
        var dropped = Set<Int>()
        for (_, frames) in byIndex where frames.count > 1 {
            let failing = frames.filter { chunkAuthenticatesLocked(frame: $0) != true }
            if failing.count < frames.count { dropped.formUnion(failing) }
        }
        if !dropped.isEmpty { releasable.removeAll { dropped.contains($0) } }
        var chosen: [UInt32: (frame: Int, standing: Int)] = [:]
        for f in releasable {
            let index = structure.frames.chunk(at: f)!.index
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
        let chunks = frames.map { structure.frames.chunk(at: $0)! }
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
            let c = chunks[i]
            let length = structure.frames.header(at: frame).bodyLength
            if !c.isFinal && length != UInt32(SealedFrame.fullChunkBodyLength) {
                throw .chunkNoncanonical(
                    stream: s, index: c.index, reason: "a non-final chunk must hold exactly \(Limits.chunkByteCount) bytes")
            }
        }
        for c in chunks.dropLast() where c.isFinal { throw .chunkFinalRepeated(stream: s, index: c.index) }
        if !chunks.last!.isFinal { throw .chunkFinalMissing(stream: s) }
        if UInt64(frames.count) != manifest.chunkCount {
            let capacity = UInt64(frames.count) * UInt64(Limits.chunkByteCount)
            throw .blobSizeMismatch(
                blob: manifest.blob.description, expected: manifest.byteCount, actual: min(capacity, manifest.byteCount))
        }
        return frames
    }

    /// How far a commit vouches for frame `index`: 2 when its commit is
    /// verified and ranks with a current member's standing (attested by a
    /// current member, or by a removed member before its removal,
    /// `Spec/format.md §9.4` step 5), 1 when it is verified, 0 otherwise
    /// (`Spec/format.md §7.4`, `Spec/merge.md §5`).
    public func standing(ofFrame index: Int) -> Int {
        lock.withLock { standingLocked(ofFrame: index) }
    }

    func standingLocked(ofFrame index: Int) -> Int {
        guard let g = structure.groupIndex(ofFrame: index), g < verdicts.statuses.count, verdicts.statuses[g] == .verified else { return 0 }
        // Only this group's attestation: reading `commits` would check every
        // group's, an Ed25519 verification each.
        checkAttestations(of: [g])
        findRemovalAncestorsLocked()
        return verdicts.ranksAsMember(g) ? 2 : 1
    }

    /// True when frames `a` and `b` are the same bytes.
    func sameFrameLocked(_ a: Int, _ b: Int) throws(FormatError) -> Bool {
        let fa = structure.frames[a]
        let fb = structure.frames[b]
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
        return
            (try? window.withBytes(f.bodyOffset, Int(f.header.bodyLength)) { (body: UnsafeRawBufferPointer) throws(FormatError) -> Bool in
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
/// Memory stays bounded: two batches of chunk bodies (the size of a
/// writer's batch) and two output buffers of as many chunks. A pipeline: while
/// the caller takes one batch's content, the next batch's chunks are read
/// and then opened, with the leaves of their content (`Spec/format.md §7.3`)
/// computed beside, by a worker thread per processor, and by this thread too when it
/// would otherwise wait. A chunk that does not open is named on its own
/// (the chunks before it are handed out first), and every later read
/// throws the same error; the blob id, the root over every leaf, is checked
/// at the end. Bytes are handed out before the whole attachment is checked:
/// a caller that needs certainty reads to the end (``readAll()``) before it
/// trusts them.
///
/// Blocking: for the CLI, the exporters and the tests. An app reads an
/// attachment through the `async` forms of `Vault` (`attachmentStream`,
/// `writeAttachment`), which run on the handle's executor.
@_spi(Format) public final class BlobReader {
    let vault: VaultFile
    /// The manifest being read.
    @_spi(Format) public let manifest: BlobManifest
    let frames: [Int]
    private let bodies: [UnsafeMutableRawBufferPointer]
    private let outputs: [UnsafeMutableRawBufferPointer]
    /// The batch read and submitted in each slot, not yet handed out.
    private var batches: [Batch?] = [nil, nil]
    /// The slot whose content is handed out.
    private var slot = 1
    private var bufferCount = 0
    private var bufferOffset = 0
    /// The first chunk not yet read into a batch.
    private var nextLaunch = 0
    /// Chunks handed out (their content) so far.
    private var nextChunk = 0
    private var contentLeft: UInt64
    private var streamRead: UInt64 = 0
    private var markerSeen = false
    /// The first error met: the chunks before it are handed out first, and
    /// then every read throws it.
    private var failure: FormatError?
    private var failurePending = false
    private var hasher: ParallelHasher?
    /// The alias the content is read through, and a hasher per blob key it
    /// may be the content's id under (`Spec/format.md §7.3`).
    private let alias: BlobID?
    private var aliasHashers: [ParallelHasher] = []

    /// One batch of chunks: bodies read, then opened (by either thread).
    // @unchecked Sendable: each chunk of a batch is opened by the one thread that claimed it, into its own memory;
    // the reading thread touches the batch again only after the hasher's wait(slot:) for it.
    private final class Batch: @unchecked Sendable {
        let first: Int
        /// Chunks read; an error at chunk `first + count` ends the batch.
        let count: Int
        let stopError: FormatError?
        /// Per chunk: stream bytes opened, or why it did not open; each
        /// written by the thread that opened the chunk.
        let outcomes: UnsafeMutableBufferPointer<Result<Int, FormatError>>

        init(first: Int, count: Int, stopError: FormatError?) {
            self.first = first
            self.count = count
            self.stopError = stopError
            outcomes = .allocate(capacity: max(1, count))
            outcomes.initialize(repeating: .success(0))
        }

        deinit {
            outcomes.deinitialize()
            outcomes.deallocate()
        }
    }

    init(vault: VaultFile, manifest: BlobManifest, frames: [Int], blobKey: SymmetricKey?, alias: (BlobID, [SymmetricKey])? = nil) {
        self.vault = vault
        self.manifest = manifest
        self.frames = frames
        contentLeft = manifest.byteCount
        bodies = (0..<2).map { _ in
            UnsafeMutableRawBufferPointer.allocate(
                byteCount: SealedFrame.fullChunkBodyLength * PendingCommit.batchChunkCount, alignment: 16)
        }
        outputs = (0..<2).map { _ in
            UnsafeMutableRawBufferPointer.allocate(byteCount: Limits.chunkByteCount * PendingCommit.batchChunkCount, alignment: 16)
        }
        if let blobKey { hasher = ParallelHasher(key: blobKey) }
        self.alias = alias?.0
        aliasHashers = (alias?.1 ?? []).map { ParallelHasher(key: $0) }
    }

    deinit {
        // A job may still be opening or hashing a batch: wait for it before
        // the buffers go.
        for s in [0, 1] {
            hasher?.wait(slot: s)
            for h in aliasHashers { h.wait(slot: s) }
        }
        for b in bodies { b.deallocate() }
        for o in outputs {
            o.initializeMemory(as: UInt8.self, repeating: 0)
            o.deallocate()
        }
    }

    /// How many chunks the stream has, padding included: the last ones may
    /// hold only padding.
    @_spi(Format) public var chunkCount: Int { frames.count }

    /// The content bytes of chunk `index`, opened alone: at most 64 KiB, the
    /// content from byte `index × 65,536` on. The padding that ends the stream
    /// is left out, so a chunk that holds only padding gives no bytes.
    ///
    /// The chunk is authenticated on its own; the attachment's size and blob
    /// id are checked only by reading it to the end (``readAll()``).
    ///
    /// - Throws: as ``read(into:)`` for one chunk.
    @_spi(Format) public func chunk(_ index: Int) throws(FormatError) -> [UInt8] {
        let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: Limits.chunkByteCount, alignment: 16)
        let body = UnsafeMutableRawBufferPointer.allocate(byteCount: SealedFrame.fullChunkBodyLength, alignment: 16)
        defer {
            scratch.initializeMemory(as: UInt8.self, repeating: 0)
            scratch.deallocate()
            body.deallocate()
        }
        let n = try vault.lock.withLock { () throws(FormatError) -> Int in
            let (frame, keys) = try readBodyLocked(index, into: body)
            return try SealedFrame.openChunk(
                body: UnsafeRawBufferPointer(rebasing: body[0..<Int(frame.header.bodyLength)]), header: frame.header, chunk: frame.chunk!,
                location: frame.location, keys: keys, vaultID: vault.vaultID, into: scratch)
        }
        let start = UInt64(index) * UInt64(Limits.chunkByteCount)
        let content = manifest.byteCount > start ? Int(min(UInt64(n), manifest.byteCount - start)) : 0
        return Array(scratch[0..<content])
    }

    /// Reads chunk `index`'s body into the start of `body` (at least one
    /// full chunk body) after the checks that need the vault: the release
    /// rules, a key for its key id, its length. Returns the frame and the
    /// keys to open it with.
    private func readBodyLocked(_ index: Int, into body: UnsafeMutableRawBufferPointer) throws(FormatError) -> (ScannedFrame, [EpochKey]) {
        let frame = vault.structure.frames[frames[index]]
        if let verdict = vault.releaseVerdictLocked(frame: frame.location.index) { throw verdict }
        let keys = vault.candidateKeysLocked(for: frame)
        guard !keys.isEmpty else { throw .unknownKey(frame.location, keyID: frame.header.keyID) }
        let length = Int(frame.header.bodyLength)
        guard length <= SealedFrame.fullChunkBodyLength else {
            throw .chunkNoncanonical(
                stream: frame.chunk!.stream.description, index: frame.chunk!.index, reason: "holds more than one chunk of content")
        }
        let target = UnsafeMutableRawBufferPointer(rebasing: body[0..<length])
        let got: Int
        do { got = try vault.file.read(into: target, at: frame.bodyOffset) } catch { throw .io(error) }
        guard got == length else { throw .io(SystemError(operation: "pread", path: vault.path, code: 5)) }
        return (frame, keys)
    }

    /// Reads the next batch of chunk bodies into slot `s` and hands their
    /// opening and hashing to the workers.
    private func launch(_ s: Int) {
        for h in aliasHashers { h.wait(slot: s) }  // done with outputs[s]
        let first = nextLaunch
        var reads: [(ScannedFrame, [EpochKey])] = []
        var stop: FormatError?
        vault.lock.withLock {
            for position in 0..<PendingCommit.batchChunkCount where first + position < frames.count {
                let body = UnsafeMutableRawBufferPointer(
                    rebasing: bodies[s][(position * SealedFrame.fullChunkBodyLength)..<((position + 1) * SealedFrame.fullChunkBodyLength)])
                do throws(FormatError) { reads.append(try readBodyLocked(first + position, into: body)) } catch {
                    stop = error
                    return
                }
            }
        }
        let batch = Batch(first: first, count: reads.count, stopError: stop)
        nextLaunch = stop == nil ? first + reads.count : frames.count
        batches[s] = batch
        // The content these chunks hold when whole: every chunk but the
        // last holding content is full, so it lies at the start of outputs[s].
        let start = UInt64(first) * UInt64(Limits.chunkByteCount)
        let expected = manifest.byteCount > start ? Int(min(UInt64(reads.count * Limits.chunkByteCount), manifest.byteCount - start)) : 0
        let input = bodies[s]
        let output = outputs[s]
        let vaultID = vault.vaultID
        let work = { (p: Int) in
            let (frame, keys) = reads[p]
            let body = UnsafeRawBufferPointer(
                rebasing: input[
                    (p * SealedFrame.fullChunkBodyLength)..<(p * SealedFrame.fullChunkBodyLength + Int(frame.header.bodyLength))])
            let target = UnsafeMutableRawBufferPointer(rebasing: output[(p * Limits.chunkByteCount)..<((p + 1) * Limits.chunkByteCount)])
            batch.outcomes[p] = Result { () throws(FormatError) -> Int in
                try SealedFrame.openChunk(
                    body: body, header: frame.header, chunk: frame.chunk!, location: frame.location, keys: keys, vaultID: vaultID,
                    into: target)
            }
        }
        if let hasher {
            hasher.submit(UnsafeRawBufferPointer(rebasing: output[0..<expected]), slot: s, units: reads.count, work: work)
        } else {
            for p in 0..<reads.count { work(p) }
        }
    }

    /// Copies up to `destination.count` content bytes and returns how many;
    /// 0 at the end. After the last chunk the padding, the size and the blob
    /// id have been checked.
    ///
    /// - Throws: ``QuireError``: `.damaged` when a chunk does not verify
    ///   (`authentication_failed`, `unknown_key`, `bad_padding` — also for a
    ///   stream whose length is not Padmé(N + 1) — `blob_id_mismatch`),
    ///   `.unavailable` or `.outOfSpace` when the file cannot be read
    ///   (`io`); a missing chunk (`chunk_missing`) is `.damaged` too.
    @_spi(Format) public func read(into destination: UnsafeMutableRawBufferPointer) throws(QuireError) -> Int {
        do { return try readChecked(into: destination) } catch { throw .fromFormat(error) }
    }

    /// ``read(into:)`` with the container layer's error.
    ///
    /// - Throws: ``FormatError/authenticationFailed(_:)``, ``FormatError/unknownKey(_:keyID:)``,
    ///   ``FormatError/blobPaddingInvalid(blob:)``, ``FormatError/blobIDMismatch(blob:)``,
    ///   I/O errors.
    @_spi(Format) public func readChecked(into destination: UnsafeMutableRawBufferPointer) throws(FormatError) -> Int {
        guard try loadBatchIfUsedUp() else { return 0 }
        let n = min(destination.count, bufferCount - bufferOffset)
        destination.baseAddress!.copyMemory(from: outputs[slot].baseAddress!.advanced(by: bufferOffset), byteCount: n)
        bufferOffset += n
        return n
    }

    /// The next content bytes in place, up to one batch (1 MiB), without a
    /// copy; empty at the end. They stay valid until the next call to a
    /// reading method of this reader (or its release), which may reuse the
    /// memory. The same bytes and checks as ``readChecked(into:)``: after
    /// the last piece the padding, the size and the blob id have been
    /// checked.
    ///
    /// - Throws: as ``readChecked(into:)``.
    @_spi(Format) public func nextContent() throws(FormatError) -> UnsafeRawBufferPointer {
        guard try loadBatchIfUsedUp() else { return UnsafeRawBufferPointer(start: nil, count: 0) }
        let piece = UnsafeRawBufferPointer(rebasing: outputs[slot][bufferOffset..<bufferCount])
        bufferOffset = bufferCount
        return piece
    }

    /// When every byte of the current batch has been handed out, waits for
    /// the next one (and starts the one after it); false at the end.
    private func loadBatchIfUsedUp() throws(FormatError) -> Bool {
        while bufferOffset == bufferCount {
            if let failure, failurePending { throw failure }
            let s = 1 - slot
            if batches[s] == nil {
                guard nextLaunch < frames.count else { return false }
                launch(s)
            }
            // The batch after it is read and handed to the workers into the
            // slot just handed out, before this one is waited for: the
            // workers never wait for this thread's reads.
            if batches[slot] == nil && nextLaunch < frames.count { launch(slot) }
            let batch = batches[s]!
            batches[s] = nil
            hasher?.wait(slot: s)
            slot = s
            // In order: the content of each chunk that opened, its padding
            // checked where it lands (then overwritten by the next chunk's
            // content, which is where it starts).
            var filled = 0
            var error = batch.stopError
            for p in 0..<batch.count {
                guard case .success(let plain) = batch.outcomes[p] else {
                    if case .failure(let e) = batch.outcomes[p] { error = e }
                    break
                }
                let content = Int(min(UInt64(plain), contentLeft))
                let target = outputs[s][(p * Limits.chunkByteCount)..<(p * Limits.chunkByteCount + plain)]
                do throws(FormatError) {
                    try checkPadding(UnsafeRawBufferPointer(rebasing: target[(target.startIndex + content)...]))
                } catch let e {
                    error = e
                    break
                }
                if filled != p * Limits.chunkByteCount {
                    // Content after a short chunk: moved up to follow it.
                    UnsafeMutableRawBufferPointer(rebasing: outputs[s][filled..<(filled + content)])
                        .copyMemory(from: UnsafeRawBufferPointer(rebasing: target[target.startIndex..<(target.startIndex + content)]))
                }
                nextChunk += 1
                streamRead += UInt64(plain)
                contentLeft -= UInt64(content)
                filled += content
            }
            bufferCount = filled
            bufferOffset = 0
            if let error {
                failure = error
                failurePending = true
                nextLaunch = frames.count
                if filled == 0 { throw error }
                break
            }
            for h in aliasHashers { h.submit(UnsafeRawBufferPointer(rebasing: outputs[s][0..<filled]), slot: s) }
            if nextChunk == frames.count { try finish() }
        }
        return true
    }

    /// Bytes after the content: one `0x80`, then zeros.
    private func checkPadding(_ bytes: UnsafeRawBufferPointer) throws(FormatError) {
        guard !bytes.isEmpty else { return }
        var zeros = bytes
        if !markerSeen {
            guard bytes[0] == 0x80 else { throw .blobPaddingInvalid(blob: manifest.blob.description) }
            markerSeen = true
            zeros = UnsafeRawBufferPointer(rebasing: bytes[1...])
        }
        guard Self.isAllZero(zeros) else { throw .blobPaddingInvalid(blob: manifest.blob.description) }
    }

    /// True when every byte of `bytes` is 0, read eight at a time (padding
    /// runs to megabytes; it is not secret).
    static func isAllZero(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var any: UInt64 = 0
        var i = 0
        while i + 8 <= bytes.count {
            any |= bytes.loadUnaligned(fromByteOffset: i, as: UInt64.self)
            i += 8
        }
        while i < bytes.count {
            any |= UInt64(bytes[i])
            i += 1
        }
        return any == 0
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
    public func readAll() throws(QuireError) -> [UInt8] {
        do { return try readAllChecked() } catch { throw .fromFormat(error) }
    }

    /// ``readAll()`` with the container layer's error.
    ///
    /// - Throws: as ``readChecked(into:)``.
    @_spi(Format) public func readAllChecked() throws(FormatError) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(Int(min(manifest.byteCount, 1 << 30)))
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: Limits.chunkByteCount, alignment: 16)
        defer { chunk.deallocate() }
        while true {
            let n = try readChecked(into: chunk)
            if n == 0 { break }
            out.append(contentsOf: UnsafeRawBufferPointer(rebasing: chunk[0..<n]))
        }
        return out
    }
}
