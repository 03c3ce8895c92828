internal import CSodium

/// X25519 sealed boxes (`crypto_box_seal`), used by device and escrow key
/// slots to wrap an epoch key to a public key (`Spec/format.md §8.3`).
///
/// Layout of a sealed box (48 bytes longer than the message):
///
/// ```
/// +----------------------+-------------------------------+
/// | ephemeral pk (32)    | crypto_box ciphertext ‖ MAC   |
/// +----------------------+-------------------------------+
/// ```
///
/// with nonce = BLAKE2b-192(ephemeral pk ‖ recipient pk). ``seal(_:to:using:)``
/// draws the ephemeral key from an injectable ``RandomSource`` so vectors are
/// repeatable; its output opens with libsodium's `crypto_box_seal_open`.
@_spi(Crypto) public enum X25519 {
    /// Public key length in bytes.
    public static let publicKeyByteCount = 32
    /// Secret key length in bytes.
    public static let secretKeyByteCount = 32
    /// Bytes a sealed box adds to its message.
    public static let sealOverheadByteCount = 48

    /// An X25519 key pair; the secret half is in guarded memory.
    public struct KeyPair: Sendable, CustomStringConvertible {
        /// The 32-byte public key.
        public let publicKey: [UInt8]
        let secretKey: SecureBytes

        init(publicKey: [UInt8], secretKey: SecureBytes) {
            self.publicKey = publicKey
            self.secretKey = secretKey
        }

        /// A key pair from a 32-byte seed (`crypto_box_seed_keypair`).
        ///
        /// - Throws: ``CryptoError/wrongLength(what:expected:actual:)`` or
        ///   ``CryptoError/outOfSecureMemory(byteCount:)``.
        public init(seed: SecureBytes) throws(CryptoError) {
            Sodium.ensure()
            guard seed.count == 32 else { throw .wrongLength(what: "X25519 seed", expected: 32, actual: seed.count) }
            let sk = try SecureBytes(zeroedCount: secretKeyByteCount)
            var pk = [UInt8](repeating: 0, count: publicKeyByteCount)
            pk.withUnsafeMutableBytes { p in
                sk.withUnsafeMutableBytes { s in
                    seed.withUnsafeBytes { sd in
                        _ = crypto_box_seed_keypair(
                            p.baseAddress!.assumingMemoryBound(to: UInt8.self),
                            s.baseAddress!.assumingMemoryBound(to: UInt8.self),
                            sd.baseAddress!.assumingMemoryBound(to: UInt8.self))
                    }
                }
            }
            publicKey = pk
            secretKey = sk
        }

        /// Opens a sealed box addressed to this key pair.
        ///
        /// - Throws: ``CryptoError/authenticationFailed`` when the box is not
        ///   for this key or was altered.
        public func open(_ box: [UInt8]) throws(CryptoError) -> SecureBytes {
            guard box.count >= sealOverheadByteCount else { throw .authenticationFailed }
            let out = try SecureBytes(zeroedCount: box.count - sealOverheadByteCount)
            let rc = out.withUnsafeMutableBytes { o in
                box.withUnsafeBytes { b in
                    secretKey.withUnsafeBytes { s in
                        crypto_box_seal_open(
                            o.baseAddress!.assumingMemoryBound(to: UInt8.self),
                            b.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(b.count),
                            publicKey, s.baseAddress!.assumingMemoryBound(to: UInt8.self))
                    }
                }
            }
            guard rc == 0 else { throw .authenticationFailed }
            return out
        }

        public var description: String { "X25519.KeyPair(public: \(hex(publicKey.prefix(8)))…)" }
    }

    /// Seals `message` to `recipient` (a 32-byte X25519 public key).
    ///
    /// - Throws: ``CryptoError/invalidPublicKey`` for a low-order or malformed
    ///   recipient key.
    public static func seal(_ message: SecureBytes, to recipient: [UInt8], using random: any RandomSource) throws(CryptoError) -> [UInt8] {
        Sodium.ensure()
        guard recipient.count == publicKeyByteCount else {
            throw .wrongLength(what: "X25519 public key", expected: publicKeyByteCount, actual: recipient.count)
        }
        let ephemeral = try KeyPair(seed: SecureBytes(randomCount: 32, using: random))
        var nonceInput = ephemeral.publicKey + recipient
        let nonce = BLAKE2b.hash(nonceInput, byteCount: 24)
        wipe(&nonceInput)
        var out = [UInt8](repeating: 0, count: message.count + sealOverheadByteCount)
        let rc = out.withUnsafeMutableBytes { o in
            o.baseAddress!.copyMemory(from: ephemeral.publicKey, byteCount: publicKeyByteCount)
            return message.withUnsafeBytes { m in
                ephemeral.secretKey.withUnsafeBytes { s in
                    crypto_box_easy(
                        o.baseAddress!.advanced(by: publicKeyByteCount).assumingMemoryBound(to: UInt8.self),
                        m.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(m.count),
                        nonce, recipient, s.baseAddress!.assumingMemoryBound(to: UInt8.self))
                }
            }
        }
        guard rc == 0 else { throw .invalidPublicKey }
        return out
    }
}
