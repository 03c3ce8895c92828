import Dispatch
import QuireCrypto

/// Keyed BLAKE2b-256 of an attachment's content, computed on a second thread
/// while the calling thread seals or opens the chunks, so that the blob id
/// costs no extra time on a machine with two cores (`Spec/format.md §7.3`).
///
/// The caller hands over buffers with ``submit(_:slot:)`` and must not touch
/// a buffer again until ``wait(slot:)`` for the same slot returns; chunks
/// are hashed in the order they are submitted. Two slots let the caller
/// fill one buffer while the other is hashed.
// @unchecked Sendable: `hasher` and `pending` are touched by the hashing queue only between a
// submit(_:slot:) and the matching wait(slot:), whose semaphores order those accesses.
final class ParallelHasher: @unchecked Sendable {
    private var hasher: BLAKE2b.Hasher
    private let queue = DispatchQueue(label: "quire.blob-hash")
    private let done = [DispatchSemaphore(value: 0), DispatchSemaphore(value: 0)]
    private var pending = [false, false]

    /// A hasher keyed with `key` (the blob key), 32-byte output.
    init(key: SymmetricKey) {
        hasher = BLAKE2b.Hasher(byteCount: BlobID.byteCount, key: key)
    }

    /// Queues `bytes` for hashing. `slot` (0 or 1) names the buffer; it must
    /// not be pending already.
    func submit(_ bytes: UnsafeRawBufferPointer, slot: Int) {
        precondition(!pending[slot])
        pending[slot] = true
        let box = UncheckedBuffer(bytes)
        let signal = done[slot]
        queue.async { [self] in
            hasher.update(box.buffer)
            signal.signal()
        }
    }

    /// Waits until the buffer in `slot` has been hashed (returns at once
    /// when nothing is pending there).
    func wait(slot: Int) {
        guard pending[slot] else { return }
        done[slot].wait()
        pending[slot] = false
    }

    /// Waits for everything and returns the 32-byte digest. Call once.
    func finish() -> [UInt8] {
        wait(slot: 0)
        wait(slot: 1)
        return queue.sync { hasher.finalize() }
    }

    deinit {
        // Never leave a job reading a buffer the caller is about to free.
        if pending[0] { done[0].wait() }
        if pending[1] { done[1].wait() }
    }
}

/// A buffer pointer handed to the hashing thread; the protocol above keeps
/// the memory alive and unmodified until the job signals.
private struct UncheckedBuffer: @unchecked Sendable {
    let buffer: UnsafeRawBufferPointer
    init(_ buffer: UnsafeRawBufferPointer) { self.buffer = buffer }
}
