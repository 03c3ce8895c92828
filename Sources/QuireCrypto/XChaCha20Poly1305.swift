internal import CSodium

/// XChaCha20-Poly1305-IETF, the AEAD that seals every Quire record
/// (`Spec/format.md §5`).
///
/// Sealed layout produced by ``seal(_:into:key:nonce:authenticating:)``:
///
/// ```
/// +---------------------------+------------------+
/// | ciphertext (len(plain))   | tag (16 bytes)   |
/// +---------------------------+------------------+
/// ```
///
/// The 24-byte nonce is stored by the caller (Quire stores it in front of the
/// ciphertext). Random 192-bit nonces never repeat in practice.
@_spi(Crypto) public enum XChaCha20Poly1305 {
    /// Key length in bytes.
    public static let keyByteCount = 32
    /// Nonce length in bytes.
    public static let nonceByteCount = 24
    /// Tag length in bytes.
    public static let tagByteCount = 16

    /// The XChaCha20 keystream of `key` and a 24-byte `nonce` from block 0
    /// (libsodium's `crypto_stream_xchacha20`). Its first 32 bytes are the
    /// Poly1305 one-time key the AEAD uses with that key and nonce, and the
    /// AEAD encrypts with the bytes from offset 64 on. Only tests that build
    /// attacks on the construction need it (`Spec/format.md §5.2`).
    @_spi(Testing) public static func keystream(byteCount: Int, key: SymmetricKey, nonce: [UInt8]) -> [UInt8] {
        Sodium.ensure()
        precondition(nonce.count == nonceByteCount && byteCount >= 0)
        var out = [UInt8](repeating: 0, count: byteCount)
        key.withUnsafeBytes { k in
            _ = crypto_stream_xchacha20(&out, UInt64(byteCount), nonce, k.baseAddress!.assumingMemoryBound(to: UInt8.self))
        }
        return out
    }

    /// Seals `plaintext` into `output`, which must be exactly
    /// `plaintext.count + 16` bytes. `output` may alias `plaintext` (in place).
    ///
    /// - Parameters:
    ///   - nonce: 24 bytes, never reused with this key.
    ///   - associatedData: bytes authenticated but not encrypted.
    public static func seal(
        _ plaintext: UnsafeRawBufferPointer,
        into output: UnsafeMutableRawBufferPointer,
        key: SymmetricKey,
        nonce: UnsafeRawBufferPointer,
        authenticating associatedData: UnsafeRawBufferPointer
    ) {
        Sodium.ensure()
        precondition(nonce.count == nonceByteCount)
        precondition(output.count == plaintext.count + tagByteCount)
        var written: UInt64 = 0
        key.withUnsafeBytes { k in
            _ = crypto_aead_xchacha20poly1305_ietf_encrypt(
                output.baseAddress!.assumingMemoryBound(to: UInt8.self), &written,
                plaintext.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(plaintext.count),
                associatedData.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(associatedData.count),
                nil,
                nonce.baseAddress!.assumingMemoryBound(to: UInt8.self),
                k.baseAddress!.assumingMemoryBound(to: UInt8.self))
        }
    }

    /// Opens `sealed` (ciphertext followed by the 16-byte tag) into `output`,
    /// which must be exactly `sealed.count - 16` bytes. May be in place.
    ///
    /// - Throws: ``CryptoError/authenticationFailed`` when the tag does not
    ///   verify; `output` then holds nothing useful.
    public static func open(
        _ sealed: UnsafeRawBufferPointer,
        into output: UnsafeMutableRawBufferPointer,
        key: SymmetricKey,
        nonce: UnsafeRawBufferPointer,
        authenticating associatedData: UnsafeRawBufferPointer
    ) throws(CryptoError) {
        Sodium.ensure()
        guard nonce.count == nonceByteCount else {
            throw .wrongLength(what: "nonce", expected: nonceByteCount, actual: nonce.count)
        }
        guard sealed.count >= tagByteCount, output.count == sealed.count - tagByteCount else {
            throw .authenticationFailed
        }
        var written: UInt64 = 0
        let rc = key.withUnsafeBytes { k in
            crypto_aead_xchacha20poly1305_ietf_decrypt(
                output.baseAddress?.assumingMemoryBound(to: UInt8.self)
                    ?? UnsafeMutablePointer(mutating: nonce.baseAddress!.assumingMemoryBound(to: UInt8.self)),
                &written, nil,
                sealed.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(sealed.count),
                associatedData.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(associatedData.count),
                nonce.baseAddress!.assumingMemoryBound(to: UInt8.self),
                k.baseAddress!.assumingMemoryBound(to: UInt8.self))
        }
        guard rc == 0 else { throw .authenticationFailed }
    }

    /// Seals `plaintext` and returns ciphertext ‖ tag.
    public static func seal(
        _ plaintext: [UInt8], key: SymmetricKey, nonce: [UInt8], authenticating associatedData: [UInt8]
    ) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: plaintext.count + tagByteCount)
        plaintext.withUnsafeBytes { p in
            nonce.withUnsafeBytes { n in
                associatedData.withUnsafeBytes { a in
                    out.withUnsafeMutableBytes { o in
                        seal(p, into: o, key: key, nonce: n, authenticating: a)
                    }
                }
            }
        }
        return out
    }

    /// Opens ciphertext ‖ tag and returns the plaintext.
    ///
    /// - Throws: ``CryptoError/authenticationFailed``.
    public static func open(
        _ sealed: [UInt8], key: SymmetricKey, nonce: [UInt8], authenticating associatedData: [UInt8]
    ) throws(CryptoError) -> [UInt8] {
        guard nonce.count == nonceByteCount else {
            throw .wrongLength(what: "nonce", expected: nonceByteCount, actual: nonce.count)
        }
        guard sealed.count >= tagByteCount else { throw .authenticationFailed }
        var out = [UInt8](repeating: 0, count: sealed.count - tagByteCount)
        let opened = sealed.withUnsafeBytes { s in
            nonce.withUnsafeBytes { n in
                associatedData.withUnsafeBytes { a in
                    out.withUnsafeMutableBytes { o in
                        (try? open(s, into: o, key: key, nonce: n, authenticating: a)) != nil
                    }
                }
            }
        }
        guard opened else { throw .authenticationFailed }
        return out
    }
}
