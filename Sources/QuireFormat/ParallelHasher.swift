import Dispatch
@_spi(Crypto) package import QuireCrypto
import QuireSystem
import Synchronization

/// The blob id of an attachment's content, the keyed hash tree of
/// `Spec/format.md §7.3`: a leaf per 64 KiB of content,
///
///     leaf_i  = MAC256(blob key, "quire-blob-leaf" ‖ u64(i) ‖ content[65,536·i ..< min(65,536·(i+1), N)])
///     blob id = MAC256(blob key, "quire-blob-root" ‖ leaf_0 ‖ … ‖ leaf_(c−1) ‖ u64(N) ‖ u64(c))
///
/// with `c = ⌈N / 65,536⌉` leaves (none for empty content). Leaves are
/// independent, so they are computed on several threads at once.
extension BlobID {
    static let leafLabel = Array("quire-blob-leaf".utf8)
    static let rootLabel = Array("quire-blob-root".utf8)

    /// The blob id of `content` under `blobKey` (`Spec/format.md §7.3`),
    /// computed on the calling thread.
    package init(content: [UInt8], blobKey: SymmetricKey) {
        var root = BLAKE2b.Hasher(byteCount: Self.byteCount, key: blobKey)
        root.update(Self.rootLabel)
        let chunk = Limits.chunkByteCount
        var count: UInt64 = 0
        content.withUnsafeBytes { all in
            var offset = 0
            while offset < all.count {
                let end = min(offset + chunk, all.count)
                root.update(Self.leaf(index: count, UnsafeRawBufferPointer(rebasing: all[offset..<end]), blobKey: blobKey))
                count += 1
                offset = end
            }
        }
        root.update(littleEndianBytes(UInt64(content.count)) + littleEndianBytes(count))
        self.init(unchecked: root.finalize())
    }

    /// `leaf_index` over one chunk's content (at most 64 KiB).
    static func leaf(index: UInt64, _ content: UnsafeRawBufferPointer, blobKey: SymmetricKey) -> [UInt8] {
        var h = BLAKE2b.Hasher(byteCount: byteCount, key: blobKey)
        h.update(leafLabel)
        h.update(littleEndianBytes(index))
        h.update(content)
        return h.finalize()
    }
}

/// The blob id (``BlobID/init(content:blobKey:)``) of content handed over a
/// batch at a time, its leaves computed (and the caller's per-chunk work
/// done) by one worker thread per processor while the calling thread reads
/// and writes, and by the calling thread too once it has nothing else to do
/// (``wait(slot:)``): the work is shared by every core (`Spec/format.md §7.3`).
///
/// The caller hands over buffers with ``submit(_:slot:)`` and must not touch
/// a buffer again until ``wait(slot:)`` for the same slot returns. Every
/// buffer but the last holds whole 64 KiB chunks of content, one after
/// another. Two slots let the caller fill one buffer while the other is
/// hashed.
// @unchecked Sendable: the root hasher, `jobs`, `order` and the counters are touched by the caller's thread
// only; each Job's state is handed to the hashing queue by submit(_:slot:) and back by the matching
// wait(slot:), whose semaphores order those accesses.
final class ParallelHasher: @unchecked Sendable {
    private let key: SymmetricKey
    private var root: BLAKE2b.Hasher
    private let queue = DispatchQueue(label: "quire.blob-hash", attributes: .concurrent)
    /// Worker threads that take a buffer's chunks beside the caller: one per
    /// processor (the caller mostly reads and writes).
    private let workers = min(8, ProcessStats.processorCount)
    private let done = [DispatchSemaphore(value: 0), DispatchSemaphore(value: 0)]
    private var jobs: [Job?] = [nil, nil]
    /// Jobs in the order submitted, not yet folded into the root.
    private var order: [Job] = []
    private var leafCount: UInt64 = 0
    private var byteCount: UInt64 = 0
    private var sawPartialChunk = false

    /// A hasher keyed with `key` (the blob key).
    init(key: SymmetricKey) {
        self.key = key
        root = BLAKE2b.Hasher(byteCount: BlobID.byteCount, key: key)
        root.update(BlobID.rootLabel)
    }

    /// Queues `bytes` (whole chunks of content; only the last buffer that is
    /// not empty may end with a shorter one) for hashing. `slot` (0 or 1) names the buffer; it must not be pending.
    ///
    /// With `work`, the buffer is `units` chunks of work (at least one per
    /// leaf): whichever thread claims chunk `i` runs `work(i)` and then
    /// computes leaf `i` (if the buffer has one), so the caller's per-chunk
    /// work (sealing or opening the chunk) is shared by every core with the
    /// hashing. `work` must touch only chunk `i`'s own memory; its effects
    /// are visible to the caller once ``wait(slot:)`` returns.
    func submit(_ bytes: UnsafeRawBufferPointer, slot: Int, units: Int = 0, work: ((Int) -> Void)? = nil) {
        precondition(jobs[slot] == nil && (bytes.isEmpty || !sawPartialChunk))
        let job = Job(bytes: bytes, slot: slot, firstLeaf: leafCount, key: key, units: units, work: work, workers: workers)
        leafCount += UInt64(job.leafCount)
        byteCount += UInt64(bytes.count)
        if bytes.count % Limits.chunkByteCount != 0 { sawPartialChunk = true }
        jobs[slot] = job
        order.append(job)
        let signal = done[slot]
        for _ in 0..<workers {
            queue.async {
                job.run()
                // The last worker out says the buffer is done.
                if job.running.subtract(1, ordering: .acquiringAndReleasing).newValue == 0 { signal.signal() }
            }
        }
    }

    /// Computes what is left of the buffer in `slot` on this thread, then
    /// waits until the workers are done with it (returns at once when
    /// nothing is pending there).
    func wait(slot: Int) {
        guard let job = jobs[slot] else { return }
        job.run()
        done[slot].wait()
        jobs[slot] = nil
        job.isDone = true
        while let first = order.first, first.isDone {
            root.update(UnsafeRawBufferPointer(rebasing: first.results[0..<(first.leafCount * BlobID.byteCount)]))
            order.removeFirst()
        }
    }

    /// Waits for everything and returns the 32-byte blob id. Call once.
    func finish() -> [UInt8] {
        // In the order submitted, so that the leaves reach the root in order.
        while let first = order.first { wait(slot: first.slot) }
        root.update(littleEndianBytes(byteCount) + littleEndianBytes(leafCount))
        return root.finalize()
    }

    deinit {
        // Never leave a job reading a buffer the caller is about to free.
        for slot in [0, 1] where jobs[slot] != nil { done[slot].wait() }
    }

    /// The chunks of one buffer (work and leaf), claimed one at a time by whichever thread
    /// gets there first.
    // @unchecked Sendable: each chunk index is claimed by one thread through the atomic `next`, which then writes
    // only that chunk's memory and its own 32 bytes of `results`; the caller reads them after wait(slot:).
    private final class Job: @unchecked Sendable {
        let bytes: UnsafeRawBufferPointer
        let slot: Int
        let firstLeaf: UInt64
        let leafCount: Int
        let unitCount: Int
        let work: ((Int) -> Void)?
        let key: SymmetricKey
        /// 32 bytes per leaf, each written by the thread that claimed it.
        let results: UnsafeMutableRawBufferPointer
        let next = Atomic<Int>(0)
        /// Workers that have not yet run out of chunks.
        let running: Atomic<Int>
        var isDone = false

        init(
            bytes: UnsafeRawBufferPointer, slot: Int, firstLeaf: UInt64, key: SymmetricKey, units: Int, work: ((Int) -> Void)?, workers: Int
        ) {
            running = Atomic(workers)
            self.bytes = bytes
            self.slot = slot
            self.firstLeaf = firstLeaf
            self.key = key
            leafCount = (bytes.count + Limits.chunkByteCount - 1) / Limits.chunkByteCount
            unitCount = max(leafCount, units)
            self.work = work
            results = .allocate(byteCount: max(1, leafCount * BlobID.byteCount), alignment: 8)
        }

        deinit { results.deallocate() }

        /// Runs unclaimed chunks of work, each followed by its leaf, until
        /// none is left.
        func run() {
            while true {
                let i = next.wrappingAdd(1, ordering: .relaxed).oldValue
                guard i < unitCount else { return }
                work?(i)
                guard i < leafCount else { continue }
                let start = i * Limits.chunkByteCount
                let end = min(start + Limits.chunkByteCount, bytes.count)
                let leaf = BlobID.leaf(index: firstLeaf + UInt64(i), UnsafeRawBufferPointer(rebasing: bytes[start..<end]), blobKey: key)
                leaf.withUnsafeBytes {
                    results.baseAddress!.advanced(by: i * BlobID.byteCount).copyMemory(from: $0.baseAddress!, byteCount: BlobID.byteCount)
                }
            }
        }
    }
}
