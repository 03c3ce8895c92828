@_spi(Crypto) public import QuireCrypto
@_spi(Format) public import QuireFormat

/// This device's identity: an Ed25519 key pair generated on the device and
/// a human name (`Spec/keys.md §3`).
///
/// One Ed25519 key serves both roles: it signs keyrings, and its X25519 form
/// (libsodium's `crypto_sign_ed25519_sk_to_curve25519`) opens the device's
/// key slots. One secret to store, one fingerprint to compare, and a device
/// code that carries a single 32-byte key. The private key never enters a
/// vault; only the public key does, in the members of a keyring. It
/// prints as its name and fingerprint, never key bytes.
public struct DeviceIdentity: Sendable, CustomStringConvertible {
    /// The device's key pair; the secret half is in guarded memory.
    @_spi(Format) public let keyPair: Ed25519.KeyPair
    /// The name the device gives itself, such as `"Sam's laptop"`.
    public var name: String
    /// When the key was generated: milliseconds since the Unix epoch, UTC
    /// (an app reads `created` as a `Date`).
    @_spi(Format) public let createdMilliseconds: Int64

    /// An identity from an existing key pair.
    ///
    /// - Throws: ``KeyError/operationRefused(reason:)`` for a name that
    ///   ``DeviceIdentity/validateName(_:)`` rejects.
    @_spi(Format) public init(keyPair: Ed25519.KeyPair, name: String, created: Int64) throws(KeyError) {
        try Self.validateName(name)
        self.keyPair = keyPair
        self.name = name
        self.createdMilliseconds = created
    }

    /// A new identity with a fresh key pair from `random`.
    ///
    /// - Parameters:
    ///   - name: 1–64 characters, no control characters.
    ///   - now: milliseconds since the Unix epoch, UTC.
    /// - Throws: ``QuireError``: `.readOnly` (`operation_refused`) for a bad
    ///   name or when guarded memory runs out.
    @_spi(Format)
    public static func generate(name: String, now: Int64, using random: any RandomSource) throws(QuireError) -> DeviceIdentity {
        do { return try generateChecked(name: name, now: now, using: random) } catch { throw .fromKeys(error) }
    }

    /// ``generate(name:now:using:)`` with the key layer's error.
    ///
    /// - Throws: ``KeyError/operationRefused(reason:)``.
    package static func generateChecked(name: String, now: Int64, using random: any RandomSource) throws(KeyError) -> DeviceIdentity {
        let pair: Ed25519.KeyPair
        do { pair = try Ed25519.KeyPair(using: random) } catch { throw .operationRefused(reason: "\(error)") }
        return try DeviceIdentity(keyPair: pair, name: name, created: now)
    }

    /// An identity rebuilt from the 32-byte secret seed that
    /// ``secretSeed()`` gave: for a ``DeviceKeyStore`` an app supplies,
    /// such as one in the platform keychain (`Spec/keys.md §3.3`). The
    /// same seed gives the same key pair, device code and fingerprint.
    ///
    /// - Parameters:
    ///   - seed: exactly 32 bytes, in guarded memory (copy them in with
    ///     `SecureBytes(copying:)` and wipe the platform's copy).
    ///   - name: 1–64 characters.
    ///   - created: milliseconds since the Unix epoch, UTC, as first stored.
    /// - Throws: ``QuireError``: `.readOnly` (`operation_refused`) for a
    ///   seed that is not 32 bytes long, a bad name, or when guarded memory
    ///   runs out. A Keychain store reports it as damage of its item.
    @_spi(Format) public init(seed: SecureBytes, name: String, created: Int64) throws(QuireError) {
        do throws(KeyError) {
            let pair: Ed25519.KeyPair
            do { pair = try Ed25519.KeyPair(seed: seed) } catch { throw .operationRefused(reason: "\(error)") }
            self = try DeviceIdentity(keyPair: pair, name: name, created: created)
        } catch {
            throw .fromKeys(error)
        }
    }

    /// The 32-byte Ed25519 seed this identity's key pair derives from, in
    /// guarded memory: what a ``DeviceKeyStore`` backed by the platform
    /// keychain stores, and ``init(seed:name:created:)`` takes back. It is
    /// the device's whole secret: keep it only where the platform protects
    /// secrets (never in a file others can read, a log or a backup that
    /// leaves the device), and wipe any copy made of it.
    ///
    /// - Throws: ``QuireError``: `.outOfSpace` (`out_of_guarded_memory`)
    ///   when guarded memory runs out.
    public func secretSeed() throws(QuireError) -> SecureBytes {
        do { return try keyPair.seed() } catch { throw .crypto(error) }
    }

    /// The 32-byte Ed25519 public key.
    public var publicKey: [UInt8] { keyPair.publicKey }
    /// The device id: the first 16 bytes of BLAKE2b-256 of the public key.
    @_spi(Format) public var id: DeviceID { DeviceID(publicKey: publicKey) }
    /// The short fingerprint the user compares on both devices when enrolling.
    public var fingerprint: String { DeviceCode.fingerprint(of: publicKey) }
    /// The device code another device enrolls this one with.
    public var code: String { DeviceCode.encode(publicKey: publicKey) }

    /// Checks a device or member name (`Spec/keys.md §3.1`): 1–64 Unicode
    /// scalars, none a control, format, line- or paragraph-separator
    /// character (so names print on one line and cannot forge output), and
    /// at least one visible character.
    ///
    /// - Throws: ``KeyError/operationRefused(reason:)``.
    @_spi(Format) public static func validateName(_ name: String) throws(KeyError) {
        let count = name.unicodeScalars.count
        guard count >= 1, count <= 64 else {
            throw .operationRefused(reason: "a device name must be 1 to 64 characters long (this one has \(count))")
        }
        for s in name.unicodeScalars where isLineBreaking(s) {
            let hexDigits = String(s.value, radix: 16, uppercase: true)
            throw .operationRefused(
                reason:
                    "a device name cannot contain the invisible or control character U+\(String(repeating: "0", count: max(0, 4 - hexDigits.count)) + hexDigits)"
            )
        }
        guard name.unicodeScalars.contains(where: { !isBlank($0) }) else {
            throw .operationRefused(reason: "a device name needs at least one visible character")
        }
    }

    /// The name and fingerprint; never key bytes.
    @_spi(Format) public var description: String { "DeviceIdentity(\(name), \(fingerprint))" }

    /// True for a control, format, line- or paragraph-separator character
    /// (Cc, Cf, Zl, Zp): what could break a name out of its line or hide
    /// text (`Spec/keys.md §3.1`, §8). Names refuse them; the privacy
    /// statement escapes them in names read from a file.
    static func isLineBreaking(_ s: Unicode.Scalar) -> Bool {
        switch s.properties.generalCategory {
        case .control, .format, .lineSeparator, .paragraphSeparator: true
        default: false
        }
    }

    /// True for a scalar that prints as nothing on its own: white space, a
    /// default-ignorable code point (such as U+3164 HANGUL FILLER), a
    /// combining mark, or U+2800 BRAILLE PATTERN BLANK.
    static func isBlank(_ s: Unicode.Scalar) -> Bool {
        let p = s.properties
        switch p.generalCategory {
        case .nonspacingMark, .spacingMark, .enclosingMark, .spaceSeparator: return true
        default: return p.isWhitespace || p.isDefaultIgnorableCodePoint || s.value == 0x2800
        }
    }
}

/// Device codes and fingerprints (`Spec/keys.md §3.2`).
///
/// ```
/// device code  = Crockford base32 of (public key (32) ‖ BLAKE2b-128("quire-device-code-v1" ‖ public key)[0..<3])
///                56 characters in 14 groups of 4, like the recovery key
/// fingerprint  = Crockford base32 of BLAKE2b-256("quire-device-fingerprint-v1" ‖ public key)[0..<10]
///                16 characters in 4 groups of 4 (80 bits)
/// ```
public enum DeviceCode {
    static func checksum(_ publicKey: [UInt8]) -> [UInt8] {
        Array(BLAKE2b.hash(Array("quire-device-code-v1".utf8) + publicKey, byteCount: 16).prefix(3))
    }

    /// The code for an Ed25519 public key, such as `"3J8K-…-Q0ZT"` (69 characters).
    @_spi(Format) public static func encode(publicKey: [UInt8]) -> String {
        CrockfordCode.encode(publicKey + checksum(publicKey))
    }

    /// The 16-character fingerprint of a public key, such as `"7Q2M-X0KD-4HNB-91VC"`.
    @_spi(Format) public static func fingerprint(of publicKey: [UInt8]) -> String {
        CrockfordCode.encode(Array(BLAKE2b.hash(Array("quire-device-fingerprint-v1".utf8) + publicKey, byteCount: 32).prefix(10)))
    }

    /// The fingerprint of the device whose code the user typed: show it
    /// beside the one the new device shows, and enroll only when both match.
    ///
    /// - Throws: ``QuireError``: `.wrongCredential` (`device_code_invalid`)
    ///   for a mistyped code (a wrong length, a bad character, a checksum
    ///   mismatch, or a recovery key given by mistake); ``QuireError/message``
    ///   says which.
    public static func fingerprint(ofCode code: String) throws(QuireError) -> String {
        do { return fingerprint(of: try parse(code)) } catch { throw .fromKeys(error) }
    }

    /// The Ed25519 public key in a typed device code. Case, spaces and dashes
    /// do not matter; a typo is caught by the checksum.
    ///
    /// - Throws: ``KeyError/deviceCodeInvalid(reason:)`` for a wrong length,
    ///   a bad character, a checksum mismatch (naming a recovery key given by
    ///   mistake) or a key that is not a valid Ed25519 point.
    @_spi(Format) public static func parse(_ code: String) throws(KeyError) -> [UInt8] {
        let data: [UInt8]
        do {
            data = try CrockfordCode.decode(code, characterCount: 56)
        } catch {
            throw .deviceCodeInvalid(reason: error.reason(character: "device-code", code: "a device code", characterCount: 56))
        }
        // What was typed may be a recovery key given by mistake: wipe the
        // decoded bytes (the owners themselves, not copy-on-write copies)
        // unless they are a device code, which is public.
        let key = Array(data[0..<32])
        guard constantTimeEqual(checksum(key), data[32..<35]) else {
            defer {
                wipeShared(key)
                wipeShared(data)
            }
            if constantTimeEqual(RecoveryKey.checksum(key), data[32..<35]) {
                throw .deviceCodeInvalid(
                    reason:
                        "this is a recovery key, not a device code: keep it secret, and type the code the new device shows for itself instead"
                )
            }
            throw .deviceCodeInvalid(reason: "its checksum does not match; check for a mistyped character")
        }
        guard (try? Ed25519.agreementPublicKey(from: key)) != nil else {
            throw .deviceCodeInvalid(reason: "it does not hold a valid public key")
        }
        return key
    }
}

extension KeyringMember {
    /// The member's 16-character fingerprint, such as
    /// `"7Q2M-X0KD-4HNB-91VC"` (`Spec/keys.md §3.2`): what a devices screen
    /// shows beside ``name``, and the same text the device itself shows as
    /// `DeviceIdentity.fingerprint`, so that a person can tell two devices
    /// of one name apart and check which one they remove.
    public var fingerprint: String { DeviceCode.fingerprint(of: publicKey) }
}
