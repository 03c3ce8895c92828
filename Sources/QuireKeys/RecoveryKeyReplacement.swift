@_spi(Format) public import QuireFormat

/// Whose replacement of the recovery key a device's removal should treat
/// as the user's own (`Spec/keys.md §6.3`). The file cannot tell the user's
/// replacement (a leaked code replaced from the device now being removed)
/// from a thief's (the stolen device replaced it): only the person can.
@_spi(Format) public enum RecoveryReplacementOwner: Sendable, Equatable {
    /// The user made it: the removal builds on the current heads and the
    /// replacement, its recovery key and every later keyring stay.
    case mine
    /// Not the user's (a thief's): the removal builds on keyrings from
    /// before it, and the replacement is cut with everything after it —
    /// the previous recovery key is the recovery member again, devices
    /// enrolled after it are gone, and records sealed under epochs only
    /// those keyrings define become unreadable (`unknown_key`).
    case notMine
}

/// A replacement of the recovery key that a device's removal of `target`
/// would cut if it was not the user's (``KeyOperations/recoveryReplacements(by:in:)``).
@_spi(Format) public struct RecoveryKeyReplacement: Sendable, Equatable {
    /// The keyring that replaced the recovery key.
    @_spi(Format) public let keyringID: KeyringID
    /// Its `created` time: milliseconds since 1970, UTC, as its signer wrote it.
    public let created: Int64
    /// The Ed25519 public key (32 bytes) of the device that signed it.
    @_spi(Format) public let signer: [UInt8]
    /// That device's name in the keyring, "" when unknown.
    public let signerName: String
    /// The key of the device that enrolled the signer when the signer is
    /// not the removal's target itself (a device the target enrolled, or
    /// one of theirs); nil when the target signed it.
    @_spi(Format) public let enrolledBy: [UInt8]?
}

/// One of the recovery keys that concurrent replacements left among the
/// keyring heads (`Spec/keys.md §6.9`): a join keeps one of them and removes
/// the others, and only the user knows which code they hold, so a writer
/// asks (`.needsMerge`, `recovery_key_choice_needed`) instead of choosing.
public struct RecoveryKeyChoice: Sendable, Equatable {
    /// The recovery member's Ed25519 public key (32 bytes), which its code
    /// derives (`Spec/keys.md §4`).
    public let publicKey: [UInt8]
    /// When the keyring that installed it was signed: milliseconds since
    /// 1970, UTC, as its signer wrote it (the member's `added` when no
    /// trusted replacement installed it). An app reads `created` as a `Date`.
    @_spi(Format) public let createdMilliseconds: Int64
    /// The name of the device that installed it, "" when unknown (the key
    /// the vault was created with).
    public let madeBy: String

    /// A choice with the given fields.
    @_spi(Format) public init(publicKey: [UInt8], createdMilliseconds: Int64, madeBy: String) {
        self.publicKey = publicKey
        self.createdMilliseconds = createdMilliseconds
        self.madeBy = madeBy
    }
}
