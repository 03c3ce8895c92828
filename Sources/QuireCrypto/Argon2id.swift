internal import CSodium

/// Argon2id v1.3 through `crypto_pwhash`, used by passphrase key slots
/// (`Spec/format.md §8.3`). Callers must bound the parameters before calling:
/// the work is proportional to them.
@_spi(Crypto) public enum Argon2id {
    /// Salt length in bytes.
    @_spi(Crypto) public static let saltByteCount = 16
    /// libsodium's "moderate" operations limit (3 passes).
    public static let moderateOpsLimit: UInt64 = 3
    /// libsodium's "moderate" memory limit (256 MiB).
    public static let moderateMemLimitBytes: UInt64 = 256 * 1024 * 1024

    /// Derives a 32-byte key from `passphrase` (UTF-8 bytes in guarded memory).
    ///
    /// - Parameters:
    ///   - opsLimit: passes over memory (1 or more).
    ///   - memLimitBytes: memory in bytes (8192 or more).
    /// - Throws: ``CryptoError/passwordHashFailed(opsLimit:memLimitBytes:)``.
    @_spi(Crypto) public static func deriveKey(
        passphrase: SecureBytes, salt: [UInt8], opsLimit: UInt64, memLimitBytes: UInt64
    ) throws(CryptoError) -> SymmetricKey {
        Sodium.ensure()
        guard salt.count == saltByteCount else {
            throw .wrongLength(what: "Argon2id salt", expected: saltByteCount, actual: salt.count)
        }
        let out = try SecureBytes(zeroedCount: SymmetricKey.byteCount)
        let rc = out.withUnsafeMutableBytes { o in
            passphrase.withUnsafeBytes { p in
                salt.withUnsafeBytes { s in
                    crypto_pwhash(
                        o.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(SymmetricKey.byteCount),
                        p.baseAddress!.assumingMemoryBound(to: CChar.self), UInt64(p.count),
                        s.baseAddress!.assumingMemoryBound(to: UInt8.self),
                        opsLimit, Int(memLimitBytes), crypto_pwhash_alg_argon2id13())
                }
            }
        }
        guard rc == 0 else { throw .passwordHashFailed(opsLimit: opsLimit, memLimitBytes: memLimitBytes) }
        return SymmetricKey(storage: out)
    }
}
