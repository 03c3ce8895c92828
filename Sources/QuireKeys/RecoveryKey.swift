@_spi(Crypto) public import QuireCrypto
@_spi(Format) import QuireFormat

/// The recovery key: 256 random bits that open the vault on any device,
/// shown once as a human-typable code (`Spec/keys.md §4`, `Spec/records.md §6.4`).
///
/// The code is 35 bytes — the key and a 3-byte checksum, the first 3 bytes
/// of BLAKE2b-128(`"quire-recovery-v1"` ‖ key) — written as 56 Crockford
/// base32 characters in 14 groups of 4 joined by dashes. Parsing ignores
/// case, spaces and dashes, reads `I`/`L` as `1` and `O` as `0`, and checks
/// the checksum before any key derivation, so a typo is caught at once
/// (a random typo slips through with probability 2⁻²⁴). It prints as
/// `RecoveryKey(hidden)`, never the key.
public struct RecoveryKey: Sendable, CustomStringConvertible {
    /// The 32-byte secret.
    @_spi(Format) public let secret: SymmetricKey

    /// A fresh recovery key: 32 bytes from the system's secure random
    /// source, in guarded memory. Show its ``code()`` to the user once.
    ///
    /// - Throws: ``QuireError``: `.outOfSpace` (`out_of_guarded_memory`)
    ///   when guarded memory runs out.
    public init() throws(QuireError) {
        try self.init(using: SystemRandom())
    }

    /// A fresh recovery key from `random` (vectors and tests fix the source).
    ///
    /// - Throws: ``QuireError``: `.outOfSpace` (`out_of_guarded_memory`)
    ///   when guarded memory runs out.
    @_spi(Crypto) public init(using random: any RandomSource) throws(QuireError) {
        do { secret = try SymmetricKey(using: random) } catch { throw .crypto(error) }
    }

    /// Wraps a secret.
    @_spi(Format) public init(secret: SymmetricKey) { self.secret = secret }

    static func checksum(_ key: [UInt8]) -> [UInt8] {
        // The hashed message holds the secret: wipe it.
        var message = Array("quire-recovery-v1".utf8)
        message.reserveCapacity(message.count + key.count)
        message.append(contentsOf: key)
        defer { wipe(&message) }
        return Array(BLAKE2b.hash(message, byteCount: 16).prefix(3))
    }

    /// The code to show the user once, such as `"7KQ4-…-M2ZD"` (69 characters).
    public func code() -> String {
        var bytes = secret.storage.copyBytes()
        defer { wipe(&bytes) }
        var data = bytes + Self.checksum(bytes)
        defer { wipe(&data) }
        return CrockfordCode.encode(data)
    }

    /// Parses a typed code.
    ///
    /// - Throws: ``QuireError``: `.wrongCredential` (`recovery_code_invalid`)
    ///   for a wrong length, a character outside the alphabet, or a checksum
    ///   mismatch; ``QuireError/message`` says which, and names a device
    ///   code given by mistake as such.
    public init(code: String) throws(QuireError) {
        do throws(KeyError) {
            var data: [UInt8]
            do {
                data = try CrockfordCode.decode(code, characterCount: 56)
            } catch {
                throw .recoveryCodeInvalid(reason: error.reason(character: "recovery-key", code: "a recovery key", characterCount: 56))
            }
            self = try RecoveryKey(decoded: &data)
        } catch {
            throw .fromKeys(error)
        }
    }

    /// Parses a code typed or read from a file as UTF-8 bytes, without
    /// making a `String` of it (a `String` cannot be wiped and lingers in
    /// freed memory). The caller wipes `codeBytes`. Leading and trailing
    /// spaces and line breaks are ignored like the dashes.
    ///
    /// - Throws: ``KeyError/recoveryCodeInvalid(reason:)`` as ``init(code:)``.
    @_spi(Format) public init(codeBytes: [UInt8]) throws(KeyError) {
        var data: [UInt8]
        do {
            data = try CrockfordCode.decode(utf8: codeBytes, characterCount: 56)
        } catch {
            throw .recoveryCodeInvalid(reason: error.reason(character: "recovery-key", code: "a recovery key", characterCount: 56))
        }
        try self.init(decoded: &data)
    }

    /// The key in a decoded code (key ‖ checksum); wipes `data`.
    private init(decoded data: inout [UInt8]) throws(KeyError) {
        defer { wipe(&data) }
        var key = Array(data[0..<32])
        defer { wipe(&key) }
        guard constantTimeEqual(Self.checksum(key), data[32..<35]) else {
            if constantTimeEqual(DeviceCode.checksum(key), data[32..<35]) {
                throw .recoveryCodeInvalid(reason: "this is a device code (a device shows it to be enrolled), not a recovery key")
            }
            throw .recoveryCodeInvalid(reason: "its checksum does not match; check for a mistyped character")
        }
        do { secret = try SymmetricKey(bytes: key) } catch { throw .recoveryCodeInvalid(reason: "\(error)") }
    }

    /// The Ed25519 key pair with which the recovery key authorizes keyrings:
    /// seed `crypto_kdf_derive_from_key(32, 2, "quire rk", secret)`.
    @_spi(Format) public func signingKeyPair() throws(CryptoError) -> Ed25519.KeyPair {
        let seed = try KeyDerivation.derive(from: secret, subkeyID: 2, context: "quire rk")
        return try Ed25519.KeyPair(seed: seed.storage)
    }

    /// The recovery member's Ed25519 public key: the public half of
    /// ``signingKeyPair()``. Recovery slots are sealed to its X25519 form.
    ///
    /// - Throws: ``KeyError/operationRefused(reason:)`` when guarded memory runs out.
    @_spi(Format) public func publicKey() throws(KeyError) -> [UInt8] {
        do { return try signingKeyPair().publicKey } catch { throw .operationRefused(reason: "\(error)") }
    }

    /// Never the key: `RecoveryKey(hidden)`.
    @_spi(Format) public var description: String { "RecoveryKey(hidden)" }
}
