internal import CSodium
import QuireSystem
import Synchronization

/// Bytes in guarded memory: allocated with `sodium_malloc` (guard pages,
/// `mlock`ed where the system allows), wiped and freed on release. Up to 64
/// bytes (keys, seeds) live in shared guarded blocks.
///
/// An app holds it and passes it on; only the library reads the bytes.
/// The type prints as `SecureBytes(32 bytes)` and never shows its
/// contents.
/// Equality is constant-time (`sodium_memcmp`).
// @unchecked Sendable: the pointer and count never change; the bytes are written only while
// the secret is made (before it is shared) and read afterwards, and freed in deinit alone.
public final class SecureBytes: @unchecked Sendable, Equatable, CustomStringConvertible {
    private let pointer: UnsafeMutableRawPointer
    /// True when the bytes live in a cell of ``GuardedArena`` rather than in a
    /// `sodium_malloc` region of their own.
    private let pooled: Bool
    /// The test ceiling this allocation counts against, if one was set
    /// (``GuardedMemory/budget``): the bytes go back to it on release.
    private let budget: GuardedMemory.Budget?
    /// Number of bytes held.
    @_spi(Crypto) public let count: Int

    /// Allocates `count` zero bytes of guarded memory.
    ///
    /// - Throws: ``CryptoError/outOfSecureMemory(byteCount:)``.
    @_spi(Crypto) public convenience init(zeroedCount count: Int) throws(CryptoError) {
        try self.init(allocating: count) { $0 }
    }

    /// Allocates `count` zero bytes of guarded memory; a failure is thrown
    /// as `mapped` makes it.
    private init<E: Error>(allocating count: Int, _ mapped: (CryptoError) -> E) throws(E) {
        Sodium.ensure()
        precondition(count >= 0)
        let charged = max(count, GuardedArena.cellByteCount)
        let budget = GuardedMemory.budget
        if let budget, !budget.take(charged) { throw mapped(.outOfSecureMemory(byteCount: count)) }
        self.budget = budget
        if count <= GuardedArena.cellByteCount {
            // Keys and other small secrets share guarded blocks: one
            // `sodium_malloc` (three memory mappings) per 1,024 of them, not per
            // key, so thousands of epoch keys cannot exhaust the kernel's
            // mapping limit.
            do { pointer = try GuardedArena.shared.allocate() } catch {
                budget?.give(charged)
                throw mapped(error)
            }
            pooled = true
        } else {
            guard let p = sodium_malloc(count) else {
                budget?.give(charged)
                throw mapped(.outOfSecureMemory(byteCount: count))
            }
            GuardedMemory.lock(p, byteCount: count)
            sodium_memzero(p, count)
            pointer = p
            pooled = false
        }
        self.count = count
    }

    /// Guarded memory holding a copy of `bytes` (the caller wipes its own copy).
    ///
    /// - Throws: ``QuireError``: `.outOfSpace` (`out_of_guarded_memory`)
    ///   when guarded memory runs out.
    @_spi(Crypto) public convenience init(copying bytes: UnsafeRawBufferPointer) throws(QuireError) {
        try self.init(allocating: bytes.count, QuireError.crypto)
        if let base = bytes.baseAddress, bytes.count > 0 {
            pointer.copyMemory(from: base, byteCount: bytes.count)
        }
    }

    /// Copies `bytes` into guarded memory and wipes the array it came from.
    ///
    /// - Throws: ``QuireError``: `.outOfSpace` (`out_of_guarded_memory`)
    ///   when guarded memory runs out.
    public convenience init(consuming bytes: inout [UInt8]) throws(QuireError) {
        try self.init(allocating: bytes.count, QuireError.crypto)
        bytes.withUnsafeMutableBytes { raw in
            if let base = raw.baseAddress, raw.count > 0 {
                pointer.copyMemory(from: base, byteCount: raw.count)
                sodium_memzero(base, raw.count)
            }
        }
    }

    /// ``init(copying:)`` with the crypto layer's error.
    ///
    /// - Throws: ``CryptoError/outOfSecureMemory(byteCount:)``.
    @_spi(Crypto) public convenience init(guardedCopying bytes: UnsafeRawBufferPointer) throws(CryptoError) {
        try self.init(zeroedCount: bytes.count)
        if let base = bytes.baseAddress, bytes.count > 0 {
            pointer.copyMemory(from: base, byteCount: bytes.count)
        }
    }

    /// The UTF-8 bytes of `text` in guarded memory; the array they pass
    /// through is wiped. `text` itself cannot be: a `String` offers no way
    /// to overwrite its storage.
    ///
    /// - Throws: ``QuireError``: `.outOfSpace` (`out_of_guarded_memory`)
    ///   when guarded memory runs out.
    package static func guarded(utf8 text: String) throws(QuireError) -> SecureBytes {
        var bytes = Array(text.utf8)
        defer { wipe(&bytes) }
        return try SecureBytes(consuming: &bytes)
    }

    /// ``init(consuming:)`` with the crypto layer's error.
    ///
    /// - Throws: ``CryptoError/outOfSecureMemory(byteCount:)``.
    @_spi(Crypto) public convenience init(guardedConsuming bytes: inout [UInt8]) throws(CryptoError) {
        try self.init(zeroedCount: bytes.count)
        bytes.withUnsafeMutableBytes { raw in
            if let base = raw.baseAddress, raw.count > 0 {
                pointer.copyMemory(from: base, byteCount: raw.count)
                sodium_memzero(base, raw.count)
            }
        }
    }

    /// Fills `count` bytes of guarded memory from `random`.
    ///
    /// - Throws: ``CryptoError/outOfSecureMemory(byteCount:)``.
    @_spi(Crypto) public convenience init(randomCount count: Int, using random: any RandomSource) throws(CryptoError) {
        try self.init(zeroedCount: count)
        random.fill(UnsafeMutableRawBufferPointer(start: pointer, count: count))
    }

    deinit {
        budget?.give(max(count, GuardedArena.cellByteCount))
        if pooled {
            GuardedArena.shared.release(pointer)
        } else {
            // sodium_free wipes the region before unmapping it.
            sodium_free(pointer)
        }
    }

    /// Calls `body` with a read-only view of the bytes. Do not let the
    /// pointer escape.
    @_spi(Crypto) public func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try body(UnsafeRawBufferPointer(start: pointer, count: count))
    }

    /// Calls `body` with a writable view of the bytes.
    @_spi(Crypto) public func withUnsafeMutableBytes<R, E: Error>(_ body: (UnsafeMutableRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try body(UnsafeMutableRawBufferPointer(start: pointer, count: count))
    }

    /// A copy of the bytes in ordinary memory, for writing them out (for
    /// example wrapped in a key slot). Overwrite the copy with zeros when done.
    public func copyBytes() -> [UInt8] {
        [UInt8](UnsafeRawBufferPointer(start: pointer, count: count))
    }

    /// Constant-time comparison of contents.
    @_spi(Crypto) public static func == (lhs: SecureBytes, rhs: SecureBytes) -> Bool {
        guard lhs.count == rhs.count else { return false }
        return sodium_memcmp(lhs.pointer, rhs.pointer, lhs.count) == 0
    }

    /// `SecureBytes(N bytes)`: the length, never the contents.
    @_spi(Crypto) public var description: String { "SecureBytes(\(count) bytes)" }
}

/// Overwrites `bytes` with zeros in a way the compiler cannot remove.
package func wipe(_ bytes: inout [UInt8]) {
    bytes.withUnsafeMutableBytes { raw in
        if let base = raw.baseAddress, raw.count > 0 { sodium_memzero(base, raw.count) }
    }
}

/// Overwrites the bytes at `bytes` with zeros in a way the compiler cannot remove.
package func wipe(_ bytes: UnsafeMutableRawBufferPointer) {
    if let base = bytes.baseAddress, bytes.count > 0 { sodium_memzero(base, bytes.count) }
}

/// Overwrites with zeros the storage `bytes` shares with other copies of
/// the same array — such as a byte string inside a decoded CBOR tree that
/// held a secret — without the copy-on-write a `var` would trigger. Use it
/// only on storage nobody reads afterwards.
package func wipeShared(_ bytes: [UInt8]) {
    bytes.withUnsafeBytes { raw in
        if let base = raw.baseAddress, raw.count > 0 { sodium_memzero(UnsafeMutableRawPointer(mutating: base), raw.count) }
    }
}

/// Constant-time comparison of two byte strings of equal length; false when
/// the lengths differ. Copies nothing (a reader compares a hash per record).
package func constantTimeEqual(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
    guard a.count == b.count else { return false }
    if a.isEmpty { return true }
    return sodium_memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0
}

/// Constant-time comparison of two byte strings of equal length; false when
/// the lengths differ.
package func constantTimeEqual(_ a: some Collection<UInt8>, _ b: some Collection<UInt8>) -> Bool {
    let x = Array(a)
    let y = Array(b)
    guard x.count == y.count else { return false }
    if x.isEmpty { return true }
    return x.withUnsafeBytes { xr in
        y.withUnsafeBytes { yr in sodium_memcmp(xr.baseAddress!, yr.baseAddress!, x.count) == 0 }
    }
}

/// Whether the system locked guarded memory in RAM.
///
/// `sodium_malloc` tries to `mlock` what it maps and goes on silently when
/// the system refuses (such as with `RLIMIT_MEMLOCK` at 0, and no
/// `CAP_IPC_LOCK`): the keys then work but may be swapped to disk. Each
/// guarded allocation is locked again with `sodium_mlock`, whose result is
/// known, so that the refusal can be said.
package enum GuardedMemory {
    private static let refused = Atomic<Bool>(false)

    /// True once the system has refused to lock any guarded memory in this
    /// process (keys may then be written to swap). Tell the user once.
    public static var lockWasRefused: Bool { refused.load(ordering: .relaxed) }

    /// Locks `byteCount` bytes at `pointer` (already locked by
    /// `sodium_malloc` when the system allowed; locking twice is harmless)
    /// and records a refusal.
    static func lock(_ pointer: UnsafeMutableRawPointer, byteCount: Int) {
        if sodium_mlock(pointer, byteCount) != 0 { refused.store(true, ordering: .relaxed) }
    }

    /// A ceiling, for tests, on the guarded memory that the secrets made
    /// while it is bound (``budget``) hold at once: an allocation over it
    /// fails as the system's would (``CryptoError/outOfSecureMemory(byteCount:)``),
    /// so that a test can run a reader out of guarded memory
    /// (`Spec/format.md §5.1`: `out_of_guarded_memory`, never a trap) without
    /// starving the rest of the process. A secret of up to 64 bytes counts
    /// as its 64-byte cell.
    package final class Budget: Sendable {
        /// The ceiling, in bytes.
        package let byteCount: Int
        private let used = Atomic<Int>(0)
        private let peak = Atomic<Int>(0)
        private let refused = Atomic<Int>(0)

        /// A ceiling of `byteCount` bytes.
        package init(byteCount: Int) { self.byteCount = byteCount }

        /// The most bytes held at once under this budget so far.
        package var peakByteCount: Int { peak.load(ordering: .relaxed) }
        /// How many allocations it refused.
        package var refusals: Int { refused.load(ordering: .relaxed) }

        /// Charges `n` bytes; false (nothing charged) when they would go over.
        func take(_ n: Int) -> Bool {
            var current = used.load(ordering: .relaxed)
            while true {
                guard current + n <= byteCount else {
                    refused.add(1, ordering: .relaxed)
                    return false
                }
                let (exchanged, original) = used.compareExchange(expected: current, desired: current + n, ordering: .relaxed)
                if exchanged {
                    peak.max(current + n, ordering: .relaxed)
                    return true
                }
                current = original
            }
        }

        /// Gives back `n` bytes charged before.
        func give(_ n: Int) { used.subtract(n, ordering: .relaxed) }
    }

    /// The ceiling the guarded allocations of the current task count
    /// against; nil (only the system's limits) unless a test binds one with
    /// `GuardedMemory.$budget.withValue(Budget(byteCount:)) { … }`. Work
    /// handed to other threads outside the task is not counted.
    @TaskLocal package static var budget: Budget?
}

/// Guarded memory for small secrets: blocks of 64 KiB from `sodium_malloc`
/// (guard pages around, `mlock`ed where the system allows), cut into 64-byte
/// cells. A released cell is wiped before it is reused; blocks live as long
/// as the process.
final class GuardedArena: Sendable {
    static let shared = GuardedArena()
    static let cellByteCount = 64
    static let blockByteCount = 64 * 1024

    private struct State {
        // Cell addresses, as integers so that the state stays Sendable.
        var free: [UInt] = []
        var blocks = 0
    }

    /// A pthread mutex rather than `Synchronization.Mutex`: every key made
    /// from any thread passes here, and ThreadSanitizer cannot see a
    /// contended `Mutex` being taken on Linux (its slow path is outside
    /// instrumented code), so it reported each access as a race (``Locked``).
    private let state = Locked(State())

    func allocate() throws(CryptoError) -> UnsafeMutableRawPointer {
        let result: UnsafeMutableRawPointer? = state.withLock { s -> UnsafeMutableRawPointer? in
            if s.free.isEmpty {
                guard let block = sodium_malloc(Self.blockByteCount) else { return nil }
                GuardedMemory.lock(block, byteCount: Self.blockByteCount)
                sodium_memzero(block, Self.blockByteCount)
                s.blocks += 1
                let cells = Self.blockByteCount / Self.cellByteCount
                s.free.reserveCapacity(s.free.count + cells)
                let base = UInt(bitPattern: block)
                for i in stride(from: cells - 1, through: 0, by: -1) { s.free.append(base + UInt(i * Self.cellByteCount)) }
            }
            return UnsafeMutableRawPointer(bitPattern: s.free.removeLast())
        }
        guard let p = result else { throw .outOfSecureMemory(byteCount: Self.blockByteCount) }
        return p
    }

    func release(_ cell: UnsafeMutableRawPointer) {
        sodium_memzero(cell, Self.cellByteCount)
        let address = UInt(bitPattern: cell)
        state.withLock { $0.free.append(address) }
    }

    /// How many 64 KiB blocks have been taken from the system (for tests).
    var blockCount: Int { state.withLock { $0.blocks } }
}
