internal import CSodium

/// Ed25519 signatures (`crypto_sign`), used to authenticate keyrings
/// (`Spec/format.md §8`).
@_spi(Crypto) public enum Ed25519 {
    /// Public key length in bytes.
    public static let publicKeyByteCount = 32
    /// Seed length in bytes.
    public static let seedByteCount = 32
    /// Signature length in bytes.
    public static let signatureByteCount = 64

    /// A signing key pair. The 64-byte secret key is held in guarded memory.
    public struct KeyPair: Sendable, CustomStringConvertible {
        /// The 32-byte public key.
        public let publicKey: [UInt8]
        let secretKey: SecureBytes

        /// Derives the key pair from a 32-byte seed (`crypto_sign_seed_keypair`).
        ///
        /// - Throws: ``CryptoError/wrongLength(what:expected:actual:)`` or
        ///   ``CryptoError/outOfSecureMemory(byteCount:)``.
        public init(seed: SecureBytes) throws(CryptoError) {
            Sodium.ensure()
            guard seed.count == seedByteCount else {
                throw .wrongLength(what: "Ed25519 seed", expected: seedByteCount, actual: seed.count)
            }
            let sk = try SecureBytes(zeroedCount: Int(crypto_sign_secretkeybytes()))
            var pk = [UInt8](repeating: 0, count: publicKeyByteCount)
            pk.withUnsafeMutableBytes { p in
                sk.withUnsafeMutableBytes { s in
                    seed.withUnsafeBytes { sd in
                        _ = crypto_sign_seed_keypair(
                            p.baseAddress!.assumingMemoryBound(to: UInt8.self),
                            s.baseAddress!.assumingMemoryBound(to: UInt8.self),
                            sd.baseAddress!.assumingMemoryBound(to: UInt8.self))
                    }
                }
            }
            publicKey = pk
            secretKey = sk
        }

        /// A fresh key pair from `random`.
        ///
        /// - Throws: ``CryptoError/outOfSecureMemory(byteCount:)``.
        public init(using random: any RandomSource) throws(CryptoError) {
            try self.init(seed: SecureBytes(randomCount: seedByteCount, using: random))
        }

        /// The 32-byte seed this key pair derives from
        /// (`crypto_sign_ed25519_sk_to_seed`), in guarded memory: what a
        /// device key store persists.
        ///
        /// - Throws: ``CryptoError/outOfSecureMemory(byteCount:)``.
        public func seed() throws(CryptoError) -> SecureBytes {
            let seed = try SecureBytes(zeroedCount: seedByteCount)
            seed.withUnsafeMutableBytes { s in
                secretKey.withUnsafeBytes { k in
                    _ = crypto_sign_ed25519_sk_to_seed(
                        s.baseAddress!.assumingMemoryBound(to: UInt8.self), k.baseAddress!.assumingMemoryBound(to: UInt8.self))
                }
            }
            return seed
        }

        /// The 64-byte detached signature of `message`.
        public func sign(_ message: [UInt8]) -> [UInt8] {
            var sig = [UInt8](repeating: 0, count: signatureByteCount)
            sig.withUnsafeMutableBytes { s in
                message.withUnsafeBytes { m in
                    secretKey.withUnsafeBytes { k in
                        _ = crypto_sign_detached(
                            s.baseAddress!.assumingMemoryBound(to: UInt8.self), nil,
                            m.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(m.count),
                            k.baseAddress!.assumingMemoryBound(to: UInt8.self))
                    }
                }
            }
            return sig
        }

        /// The X25519 key pair converted from this Ed25519 key pair
        /// (`crypto_sign_ed25519_sk_to_curve25519`), for opening sealed boxes.
        ///
        /// - Throws: ``CryptoError/invalidPublicKey``.
        public func agreementKeyPair() throws(CryptoError) -> X25519.KeyPair {
            let pk = try Ed25519.agreementPublicKey(from: publicKey)
            let sk = try SecureBytes(zeroedCount: X25519.secretKeyByteCount)
            sk.withUnsafeMutableBytes { x in
                secretKey.withUnsafeBytes { e in
                    _ = crypto_sign_ed25519_sk_to_curve25519(
                        x.baseAddress!.assumingMemoryBound(to: UInt8.self),
                        e.baseAddress!.assumingMemoryBound(to: UInt8.self))
                }
            }
            return X25519.KeyPair(publicKey: pk, secretKey: sk)
        }

        public var description: String { "Ed25519.KeyPair(public: \(hex(publicKey.prefix(8)))…)" }
    }

    /// True when `signature` is a valid Ed25519 signature of `message` under
    /// `publicKey`. Wrong lengths give false.
    public static func verify(signature: [UInt8], message: [UInt8], publicKey: [UInt8]) -> Bool {
        Sodium.ensure()
        guard signature.count == signatureByteCount, publicKey.count == publicKeyByteCount else { return false }
        return signature.withUnsafeBytes { s in
            message.withUnsafeBytes { m in
                publicKey.withUnsafeBytes { p in
                    crypto_sign_verify_detached(
                        s.baseAddress!.assumingMemoryBound(to: UInt8.self),
                        m.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(m.count),
                        p.baseAddress!.assumingMemoryBound(to: UInt8.self)) == 0
                }
            }
        }
    }

    /// The X25519 public key for an Ed25519 public key
    /// (`crypto_sign_ed25519_pk_to_curve25519`).
    ///
    /// - Throws: ``CryptoError/invalidPublicKey`` for a non-point or small-order key.
    public static func agreementPublicKey(from publicKey: [UInt8]) throws(CryptoError) -> [UInt8] {
        Sodium.ensure()
        guard publicKey.count == publicKeyByteCount else {
            throw .wrongLength(what: "Ed25519 public key", expected: publicKeyByteCount, actual: publicKey.count)
        }
        var out = [UInt8](repeating: 0, count: X25519.publicKeyByteCount)
        let rc = out.withUnsafeMutableBytes { o in
            publicKey.withUnsafeBytes { p in
                crypto_sign_ed25519_pk_to_curve25519(
                    o.baseAddress!.assumingMemoryBound(to: UInt8.self), p.baseAddress!.assumingMemoryBound(to: UInt8.self))
            }
        }
        guard rc == 0 else { throw .invalidPublicKey }
        return out
    }
}

/// Lowercase hexadecimal of `bytes`.
package func hex(_ bytes: some Sequence<UInt8>) -> String {
    let digits: [Character] = Array("0123456789abcdef")
    var s = ""
    for b in bytes {
        s.append(digits[Int(b >> 4)])
        s.append(digits[Int(b & 0x0f)])
    }
    return s
}

/// Bytes from a hexadecimal string (either case), or nil if it is not hex.
@_spi(Crypto) public func bytes(fromHex text: some StringProtocol) -> [UInt8]? {
    let chars = Array(text.utf8)
    guard chars.count % 2 == 0 else { return nil }
    func nibble(_ c: UInt8) -> UInt8? {
        switch c {
        case 0x30...0x39: return c - 0x30
        case 0x61...0x66: return c - 0x61 + 10
        case 0x41...0x46: return c - 0x41 + 10
        default: return nil
        }
    }
    var out: [UInt8] = []
    out.reserveCapacity(chars.count / 2)
    var i = 0
    while i < chars.count {
        guard let hi = nibble(chars[i]), let lo = nibble(chars[i + 1]) else { return nil }
        out.append(hi << 4 | lo)
        i += 2
    }
    return out
}
