internal import CSodium

/// Bytes in guarded memory: allocated with `sodium_malloc` (guard pages,
/// `mlock`ed where the system allows), wiped and freed on release.
///
/// The bytes are reachable only through ``withUnsafeBytes(_:)``; the type
/// prints as `SecureBytes(32 bytes)` and never shows its contents.
/// Equality is constant-time (`sodium_memcmp`).
public final class SecureBytes: @unchecked Sendable, Equatable, CustomStringConvertible {
    private let pointer: UnsafeMutableRawPointer
    /// Number of bytes held.
    public let count: Int

    /// Allocates `count` zero bytes of guarded memory.
    ///
    /// - Throws: ``CryptoError/outOfSecureMemory(byteCount:)``.
    public init(zeroedCount count: Int) throws(CryptoError) {
        Sodium.ensure()
        precondition(count >= 0)
        guard let p = sodium_malloc(max(count, 1)) else { throw .outOfSecureMemory(byteCount: count) }
        sodium_memzero(p, max(count, 1))
        pointer = p
        self.count = count
    }

    /// Copies `bytes` into guarded memory. The caller should wipe its own copy.
    ///
    /// - Throws: ``CryptoError/outOfSecureMemory(byteCount:)``.
    public convenience init(copying bytes: UnsafeRawBufferPointer) throws(CryptoError) {
        try self.init(zeroedCount: bytes.count)
        if let base = bytes.baseAddress, bytes.count > 0 {
            pointer.copyMemory(from: base, byteCount: bytes.count)
        }
    }

    /// Copies `bytes` into guarded memory and wipes the array it came from.
    ///
    /// - Throws: ``CryptoError/outOfSecureMemory(byteCount:)``.
    public convenience init(consuming bytes: inout [UInt8]) throws(CryptoError) {
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
    public convenience init(randomCount count: Int, using random: any RandomSource) throws(CryptoError) {
        try self.init(zeroedCount: count)
        random.fill(UnsafeMutableRawBufferPointer(start: pointer, count: count))
    }

    deinit {
        // sodium_free wipes the region before unmapping it.
        sodium_free(pointer)
    }

    /// Calls `body` with a read-only view of the bytes. Do not let the
    /// pointer escape.
    public func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try body(UnsafeRawBufferPointer(start: pointer, count: count))
    }

    /// Calls `body` with a writable view of the bytes.
    public func withUnsafeMutableBytes<R, E: Error>(_ body: (UnsafeMutableRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try body(UnsafeMutableRawBufferPointer(start: pointer, count: count))
    }

    /// A copy of the bytes in ordinary memory, for writing them out (for
    /// example wrapped in a key slot). Wipe the copy with ``wipe(_:)``.
    public func copyBytes() -> [UInt8] {
        [UInt8](UnsafeRawBufferPointer(start: pointer, count: count))
    }

    /// Constant-time comparison of contents.
    public static func == (lhs: SecureBytes, rhs: SecureBytes) -> Bool {
        guard lhs.count == rhs.count else { return false }
        return sodium_memcmp(lhs.pointer, rhs.pointer, lhs.count) == 0
    }

    public var description: String { "SecureBytes(\(count) bytes)" }
}

/// Overwrites `bytes` with zeros in a way the compiler cannot remove.
public func wipe(_ bytes: inout [UInt8]) {
    bytes.withUnsafeMutableBytes { raw in
        if let base = raw.baseAddress, raw.count > 0 { sodium_memzero(base, raw.count) }
    }
}

/// Overwrites with zeros the storage `bytes` shares with other copies of
/// the same array — such as a byte string inside a decoded CBOR tree that
/// held a secret — without the copy-on-write a `var` would trigger. Use it
/// only on storage nobody reads afterwards.
public func wipeShared(_ bytes: [UInt8]) {
    bytes.withUnsafeBytes { raw in
        if let base = raw.baseAddress, raw.count > 0 { sodium_memzero(UnsafeMutableRawPointer(mutating: base), raw.count) }
    }
}

/// Constant-time comparison of two byte strings of equal length; false when
/// the lengths differ.
public func constantTimeEqual(_ a: some Collection<UInt8>, _ b: some Collection<UInt8>) -> Bool {
    let x = Array(a), y = Array(b)
    guard x.count == y.count else { return false }
    if x.isEmpty { return true }
    return x.withUnsafeBytes { xr in
        y.withUnsafeBytes { yr in sodium_memcmp(xr.baseAddress!, yr.baseAddress!, x.count) == 0 }
    }
}
