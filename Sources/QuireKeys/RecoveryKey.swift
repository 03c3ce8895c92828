public import QuireCrypto
import QuireFormat

/// The recovery key: 256 random bits that open the vault on any device,
/// shown once as a human-typable code (`Spec/keys.md §3`, `Spec/format.md §8.3`).
///
/// The code is 35 bytes — the key and a 3-byte checksum, the first 3 bytes
/// of BLAKE2b-128(`"quire-recovery-v1"` ‖ key) — written as 56 Crockford
/// base32 characters in 14 groups of 4 joined by dashes. Parsing ignores
/// case, spaces and dashes, reads `I`/`L` as `1` and `O` as `0`, and checks
/// the checksum before any key derivation, so a typo is caught at once
/// (a random typo slips through with probability 2⁻²⁴).
public struct RecoveryKey: Sendable, CustomStringConvertible {
    /// The 32-byte secret.
    public let secret: SymmetricKey

    /// A fresh random recovery key.
    ///
    /// - Throws: ``CryptoError/outOfSecureMemory(byteCount:)``.
    public init(using random: any RandomSource) throws(CryptoError) {
        secret = try SymmetricKey(using: random)
    }

    /// Wraps a secret.
    public init(secret: SymmetricKey) { self.secret = secret }

    static let alphabet = Array("0123456789ABCDEFGHJKMNPQRSTVWXYZ".utf8)

    static func checksum(_ key: [UInt8]) -> [UInt8] {
        Array(BLAKE2b.hash(Array("quire-recovery-v1".utf8) + key, byteCount: 16).prefix(3))
    }

    /// The code to show the user once, such as `"7KQ4-…-M2ZD"` (70 characters).
    public func code() -> String {
        var bytes = secret.storage.copyBytes()
        defer { wipe(&bytes) }
        var data = bytes + Self.checksum(bytes)
        defer { wipe(&data) }
        var chars: [UInt8] = []
        var acc: UInt32 = 0
        var bits = 0
        for b in data {
            acc = acc << 8 | UInt32(b)
            bits += 8
            while bits >= 5 {
                bits -= 5
                chars.append(Self.alphabet[Int((acc >> UInt32(bits)) & 31)])
            }
        }
        var out = ""
        for (i, c) in chars.enumerated() {
            if i > 0 && i % 4 == 0 { out.append("-") }
            out.append(Character(Unicode.Scalar(c)))
        }
        return out
    }

    /// Parses a typed code.
    ///
    /// - Throws: ``KeyError/recoveryCodeInvalid(reason:)`` for a wrong
    ///   length, a character outside the alphabet, or a checksum mismatch.
    public init(code: String) throws(KeyError) {
        var values: [UInt8] = []
        for scalar in code.unicodeScalars {
            var c = scalar
            if c == " " || c == "-" || c == "\t" || c == "\n" || c == "\r" { continue }
            if ("a"..."z").contains(c) { c = Unicode.Scalar(c.value - 32)! }
            switch c {
            case "I", "L": c = "1"
            case "O": c = "0"
            default: break
            }
            guard c.isASCII, let v = Self.alphabet.firstIndex(of: UInt8(c.value)) else {
                let digits = String(scalar.value, radix: 16, uppercase: true)
                let codePoint = "U+" + String(repeating: "0", count: max(0, 4 - digits.count)) + digits
                throw .recoveryCodeInvalid(reason: "\"\(scalar)\" (\(codePoint)) is not a recovery-key character")
            }
            values.append(UInt8(v))
        }
        guard values.count == 56 else {
            throw .recoveryCodeInvalid(reason: "it has \(values.count) characters; a recovery key has 56 (not counting dashes)")
        }
        var data: [UInt8] = []
        var acc: UInt32 = 0
        var bits = 0
        for v in values {
            acc = acc << 5 | UInt32(v)
            bits += 5
            if bits >= 8 {
                bits -= 8
                data.append(UInt8((acc >> UInt32(bits)) & 0xff))
            }
        }
        defer { wipe(&data) }
        var key = Array(data[0..<32])
        defer { wipe(&key) }
        guard constantTimeEqual(Self.checksum(key), data[32..<35]) else {
            throw .recoveryCodeInvalid(reason: "its checksum does not match; check for a mistyped character")
        }
        do { secret = try SymmetricKey(bytes: key) } catch { throw .recoveryCodeInvalid(reason: "\(error)") }
    }

    /// The key that wraps epoch keys in recovery slots:
    /// `crypto_kdf_derive_from_key(32, 1, "quire rk", secret)`.
    public var wrappingKey: SymmetricKey { KeyDerivation.derive(from: secret, subkeyID: 1, context: "quire rk") }

    /// The Ed25519 key pair with which the recovery key authorizes keyrings:
    /// seed `crypto_kdf_derive_from_key(32, 2, "quire rk", secret)`.
    public func signingKeyPair() throws(CryptoError) -> Ed25519.KeyPair {
        let seed = KeyDerivation.derive(from: secret, subkeyID: 2, context: "quire rk")
        return try Ed25519.KeyPair(seed: seed.storage)
    }

    public var description: String { "RecoveryKey(hidden)" }
}
