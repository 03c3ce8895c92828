public import Foundation
@_spi(Crypto) public import QuireCrypto
@_spi(Format) public import QuireFormat
@_spi(Format) public import QuireKeys

// Foundation views of the times a keyring and a device key store keep
// (`Spec/records.md §6.3`, `Spec/keys.md §3.3`): the wire keeps milliseconds since 1970, UTC
// (`addedMilliseconds`, `createdMilliseconds`, SPI); an app reads and
// writes them as `Date` (issue 13, need 6), as it does an entry's times.

extension KeyringMember {
    /// When the member was added to the vault, as its keyring records it
    /// (to the millisecond; field `added` of `Spec/records.md §6.3`).
    public var added: Date { Date(millisecondsSince1970: addedMilliseconds) }
}

extension DeviceIdentity {
    /// When this device's key was generated (to the millisecond), as its
    /// key store keeps it (`Spec/keys.md §3.3`).
    public var created: Date { Date(millisecondsSince1970: createdMilliseconds) }

    /// An identity rebuilt from the 32-byte secret seed that
    /// ``secretSeed()`` gave: for a ``DeviceKeyStore`` an app supplies,
    /// such as one in the platform keychain (`Spec/keys.md §3.3`). The
    /// same seed gives the same key pair, device code and fingerprint.
    ///
    /// - Parameters:
    ///   - seed: exactly 32 bytes, in guarded memory (copy them in with
    ///     `SecureBytes(copying:)` and wipe the platform's copy).
    ///   - name: 1–64 characters.
    ///   - created: when the key was generated, as first stored (kept to
    ///     the millisecond).
    /// - Throws: ``QuireError``: `.readOnly` (`operation_refused`) for a
    ///   seed that is not 32 bytes long, a bad name, or when guarded memory
    ///   runs out. A Keychain store reports it as damage of its item.
    public init(seed: SecureBytes, name: String, created: Date) throws(QuireError) {
        try self.init(seed: seed, name: name, created: created.millisecondsSince1970)
    }
}

extension RecoveryKeyChoice {
    /// When the keyring that installed this recovery key was signed (to the
    /// millisecond), as its signer wrote it; when the member was added if no
    /// trusted replacement installed it (`Spec/keys.md §6.9`).
    public var created: Date { Date(millisecondsSince1970: createdMilliseconds) }
}
