public import QuireFormat

/// What can go wrong with keys, slots and keyrings (`Spec/format.md §12`,
/// the key rows of the error table).
///
/// A wrong credential is always reported as such, never as damage: a
/// keyring whose checksum verifies but whose slots the credential does not
/// open means the credential is wrong. Messages never contain secrets.
public enum KeyError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The vault holds no intact, committed keyring.
    case noKeyring
    /// The recovery code is not 56 Crockford base32 characters, or its
    /// checksum does not match (a typo).
    case recoveryCodeInvalid(reason: String)
    /// The recovery key opens no slot of this vault.
    case wrongRecoveryKey
    /// The passphrase opens no slot of this vault.
    case wrongPassphrase
    /// This device's key opens no slot: it was never enrolled, or was removed.
    case wrongDeviceKey
    /// The raw epoch key given opens nothing.
    case wrongKey
    /// A passphrase slot asks for more Argon2id work than the limits allow;
    /// it was not run.
    case kdfLimitsExceeded(opsLimit: UInt64, memLimitBytes: UInt64)
    /// A keyring is not signed by a member of a keyring before it (or by a
    /// removed member), so its keys and slots are not trusted.
    case keyringUnauthenticated(FrameLocation, reason: String)
    /// An escrow slot in a keyring that declares the vault escrow-free.
    case escrowForbidden(FrameLocation)
    /// An escrow key was asked for in an escrow-free vault.
    case escrowRefused
    /// A slot in a keyring made after a device was removed still opens for
    /// that device.
    case removedDeviceSlot(FrameLocation)
    /// The keyring's structure is invalid.
    case malformedKeyring(FrameLocation, reason: String)
    /// One of the two copies of a keyring is damaged; the other was used.
    /// A warning: nothing is lost.
    case keyringCopyDamaged(FrameLocation)
    /// No passphrase is set, or no recovery method remains.
    case operationRefused(reason: String)
    /// An error of the container layer.
    case format(FormatError)

    /// The stable, machine-readable name used by `Vectors/` and `--json`.
    public var code: String {
        switch self {
        case .noKeyring: "no_keyring"
        case .recoveryCodeInvalid: "recovery_code_invalid"
        case .wrongRecoveryKey: "wrong_recovery_key"
        case .wrongPassphrase: "wrong_passphrase"
        case .wrongDeviceKey: "wrong_device_key"
        case .wrongKey: "wrong_key"
        case .kdfLimitsExceeded: "kdf_limits_exceeded"
        case .keyringUnauthenticated: "keyring_unauthenticated"
        case .escrowForbidden: "escrow_forbidden"
        case .escrowRefused: "escrow_refused"
        case .removedDeviceSlot: "removed_device_slot"
        case .malformedKeyring: "malformed_keyring"
        case .keyringCopyDamaged: "keyring_copy_damaged"
        case .operationRefused: "operation_refused"
        case .format(let e): e.code
        }
    }

    /// True for ``malformedKeyring(_:reason:)``.
    public var isMalformedKeyring: Bool {
        switch self {
        case .malformedKeyring: true
        default: false
        }
    }

    /// True for warnings: the error cost nothing (``keyringCopyDamaged(_:)``).
    public var isWarning: Bool {
        switch self {
        case .keyringCopyDamaged: true
        default: false
        }
    }

    /// True for errors that mean "this credential is wrong" rather than
    /// "the file is damaged".
    public var isWrongCredential: Bool {
        switch self {
        case .wrongRecoveryKey, .wrongPassphrase, .wrongDeviceKey, .wrongKey, .recoveryCodeInvalid: true
        default: false
        }
    }

    public var description: String {
        switch self {
        case .noKeyring:
            return "the vault holds no intact keyring, so nothing in it can be unlocked"
        case .recoveryCodeInvalid(let reason):
            return "that recovery key is not valid: \(reason)"
        case .wrongRecoveryKey:
            return "that recovery key does not open this vault (it is a valid key, but for another vault or a replaced one)"
        case .wrongPassphrase:
            return "wrong passphrase"
        case .wrongDeviceKey:
            return "this device is not enrolled in this vault (or was removed)"
        case .wrongKey:
            return "that key does not open this vault"
        case let .kdfLimitsExceeded(ops, mem):
            return "a passphrase slot asks for Argon2id with opslimit \(ops) and \(mem) bytes of memory, over the limits (opslimit ≤ 8, memory ≤ 1 GiB); it was not run"
        case let .keyringUnauthenticated(loc, reason):
            return "keyring \(loc) is not trusted: \(reason)"
        case .escrowForbidden(let loc):
            return "keyring \(loc) has an escrow slot although the vault is escrow-free; the keyring is rejected"
        case .escrowRefused:
            return "this vault is escrow-free: an escrow key cannot be added (turn escrow-free off first)"
        case .removedDeviceSlot(let loc):
            return "keyring \(loc) wraps a key to a device that was removed; the keyring is rejected"
        case let .malformedKeyring(loc, reason):
            return "keyring \(loc) is malformed: \(reason)"
        case .keyringCopyDamaged(let loc):
            return "keyring \(loc) is damaged, but it is a copy of an intact keyring, which was used"
        case .operationRefused(let reason):
            return reason
        case .format(let e):
            return e.description
        }
    }
}
