/// What can go wrong in a cryptographic operation.
///
/// Messages never contain key material or plaintext. An authentication
/// failure says only that: it cannot tell a wrong key from altered bytes.
@_spi(Crypto) public enum CryptoError: Error, Sendable, Equatable, CustomStringConvertible {
    /// An AEAD tag, a sealed box or a MAC did not verify: the key is wrong or
    /// the bytes were altered.
    case authenticationFailed
    /// A signature did not verify against the given public key.
    case badSignature
    /// An input had the wrong length for the primitive.
    case wrongLength(what: String, expected: Int, actual: Int)
    /// A public key is not a valid curve point.
    case invalidPublicKey
    /// Argon2id parameters outside what libsodium accepts, or the KDF ran out
    /// of memory.
    case passwordHashFailed(opsLimit: UInt64, memLimitBytes: UInt64)
    /// Guarded memory (`sodium_malloc`) could not be allocated.
    case outOfSecureMemory(byteCount: Int)

    public var description: String {
        switch self {
        case .authenticationFailed:
            return "authentication failed: wrong key or altered data"
        case .badSignature:
            return "signature does not verify"
        case .wrongLength(let what, let expected, let actual):
            return "\(what) must be \(expected) bytes, got \(actual)"
        case .invalidPublicKey:
            return "public key is not a valid curve point"
        case .passwordHashFailed(let ops, let mem):
            return "Argon2id failed with opslimit \(ops) and memlimit \(mem) bytes"
        case .outOfSecureMemory(let count):
            return "could not allocate \(count) bytes of guarded memory"
        }
    }
}
