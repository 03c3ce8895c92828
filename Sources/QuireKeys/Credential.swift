@_spi(Crypto) public import QuireCrypto
@_spi(Format) public import QuireFormat

/// Something that can open a vault (`Spec/keys.md §2`).
public enum Credential: Sendable {
    /// The recovery key.
    case recoveryKey(RecoveryKey)
    /// A passphrase, as UTF-8 bytes in guarded memory.
    case passphrase(SecureBytes)
    /// An enrolled device's Ed25519 key pair.
    @_spi(Format) case device(Ed25519.KeyPair)
    /// An escrow custodian's X25519 key pair.
    @_spi(Format) case escrow(X25519.KeyPair)
    /// A raw epoch key (and optionally the blob key), for tests and vectors.
    @_spi(Format) case epochKey(EpochKey)

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
    var signingPublicKey: [UInt8]? { signingKeyPair()?.publicKey }

    /// The key pair this credential authorizes keyrings with, if any.
    package func signingKeyPair() -> Ed25519.KeyPair? {
        switch self {
        case .recoveryKey(let r): try? r.signingKeyPair()
        case .device(let d): d
        default: nil
        }
    }
}
