/// A 256-bit secret key in guarded memory.
///
/// `init(using:)` makes a fresh random key; `init(bytes:)` validates and
/// copies. The key never prints its bytes.
@_spi(Crypto) public struct SymmetricKey: Sendable, Equatable, CustomStringConvertible {
    /// Length of every Quire symmetric key, in bytes.
    public static let byteCount = 32

    /// The guarded bytes.
    public let storage: SecureBytes

    /// A fresh random key from `random`.
    ///
    /// - Throws: ``CryptoError/outOfSecureMemory(byteCount:)``.
    public init(using random: any RandomSource = SystemRandom()) throws(CryptoError) {
        storage = try SecureBytes(randomCount: Self.byteCount, using: random)
    }

    /// A key from exactly 32 bytes; the caller should wipe its copy.
    ///
    /// - Throws: ``CryptoError/wrongLength(what:expected:actual:)``.
    public init(bytes: some Collection<UInt8>) throws(CryptoError) {
        var copy = Array(bytes)
        defer { wipe(&copy) }
        guard copy.count == Self.byteCount else {
            throw .wrongLength(what: "key", expected: Self.byteCount, actual: copy.count)
        }
        storage = try SecureBytes(guardedConsuming: &copy)
    }

    /// Wraps guarded bytes that already hold a 32-byte key.
    public init(storage: SecureBytes) {
        precondition(storage.count == Self.byteCount)
        self.storage = storage
    }

    /// Calls `body` with the key bytes.
    public func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try storage.withUnsafeBytes(body)
    }

    public var description: String { "SymmetricKey(hidden)" }
}
