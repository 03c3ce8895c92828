@_spi(Crypto) public import QuireCrypto
@_spi(Format) public import QuireFormat

/// Something that can open a vault (`Spec/keys.md §2`).
public enum Credential: Sendable {
    /// The recovery key.
    case recoveryKey(RecoveryKey)
    /// A passphrase, as UTF-8 bytes in guarded memory (an app passes the
    /// typed `String` to the static `passphrase(_:)` instead).
    @_spi(Crypto) case passphrase(SecureBytes)
    /// An enrolled device's Ed25519 key pair.
    @_spi(Format) case device(Ed25519.KeyPair)
    /// An escrow custodian's X25519 key pair.
    @_spi(Format) case escrow(X25519.KeyPair)
    /// A raw epoch key (and optionally the blob key), for tests and vectors.
    @_spi(Format) case epochKey(EpochKey)

    /// The passphrase the user typed, which opens the vault through its
    /// passphrase key slot (`Spec/keys.md §2.3`; mapped to Unicode NFC
    /// before Argon2id).
    ///
    /// The library copies the UTF-8 bytes into guarded memory and wipes
    /// the intermediate copy it makes. It cannot wipe `passphrase` itself:
    /// a Swift `String` may share, move and copy its storage, and offers no
    /// way to overwrite it. Drop the string (and the text field's value)
    /// as soon as this returns.
    ///
    /// - Throws: ``QuireError``: `.outOfSpace` (`out_of_guarded_memory`)
    ///   when guarded memory runs out.
    public static func passphrase(_ passphrase: String) throws(QuireError) -> Credential {
        .passphrase(try SecureBytes.guarded(utf8: passphrase))
    }

    /// The error for "this credential opens nothing".
    var wrongError: KeyError {
        switch self {
        case .recoveryKey: .wrongRecoveryKey
        case .passphrase: .wrongPassphrase
        case .device: .wrongDeviceKey
        case .escrow, .epochKey: .wrongKey
        }
    }

    /// The public key of ``signingKeyPair()``, if any.
    ///
    /// - Throws: ``KeyError/format(_:)`` (``FormatError/outOfGuardedMemory``).
    var signingPublicKey: [UInt8]? {
        get throws(KeyError) { try signingKeyPair()?.publicKey }
    }

    /// The key pair this credential authorizes keyrings with; nil for one
    /// that cannot sign (a passphrase, an escrow key, an epoch key).
    ///
    /// - Throws: ``KeyError/format(_:)`` (``FormatError/outOfGuardedMemory``)
    ///   when guarded memory runs out deriving the recovery key's, never
    ///   taken for a credential that cannot sign (`Spec/format.md §5.1`).
    package func signingKeyPair() throws(KeyError) -> Ed25519.KeyPair? {
        switch self {
        case .recoveryKey(let r):
            // Derivation fails only for want of guarded memory.
            do { return try r.signingKeyPair() } catch { throw .format(.outOfGuardedMemory) }
        case .device(let d): return d
        default: return nil
        }
    }
}
