internal import CSodium

/// Subkey derivation with libsodium's `crypto_kdf_derive_from_key`
/// (BLAKE2b with the subkey id as salt and an 8-byte context as
/// personalization), as `Spec/format.md §1` prescribes.
package enum KeyDerivation {
    /// Length of a context string, in bytes.
    public static let contextByteCount = 8

    /// Derives a 32-byte subkey of `key` for `subkeyID` under `context`.
    ///
    /// - Parameter context: exactly 8 ASCII bytes, such as `"quire v2"`.
    /// - Throws: ``CryptoError/outOfSecureMemory(byteCount:)`` when guarded memory runs out.
    public static func derive(from key: SymmetricKey, subkeyID: UInt64, context: String) throws(CryptoError) -> SymmetricKey {
        Sodium.ensure()
        let ctx = Array(context.utf8)
        precondition(ctx.count == contextByteCount, "a KDF context is exactly 8 bytes")
        let out = try SecureBytes(zeroedCount: SymmetricKey.byteCount)
        let cString: [CChar] = ctx.map { CChar(bitPattern: $0) } + [0]
        out.withUnsafeMutableBytes { o in
            key.withUnsafeBytes { k in
                _ = crypto_kdf_derive_from_key(
                    o.baseAddress!.assumingMemoryBound(to: UInt8.self), SymmetricKey.byteCount, subkeyID, cString,
                    k.baseAddress!.assumingMemoryBound(to: UInt8.self))
            }
        }
        return SymmetricKey(storage: out)
    }
}
