public import QuireCrypto
public import QuireFormat

/// Assembles and signs keyring records (`Spec/format.md §8`).
public enum KeyringBuilder {
    /// The frame body (without trailer) of a keyring for `epochKey`.
    ///
    /// - Parameters:
    ///   - parents: ids of the keyrings this one succeeds (empty for the first).
    ///   - slots: the key slots, already wrapping `epochKey`.
    ///   - content: members, history, blob key and the rest of the sealed part.
    ///   - signer: a member of a parent keyring (or of this one, for a root).
    ///   - vaultSalt: for a root keyring, the salt that with `signer`
    ///     derives the vault id (``rootVaultID(signer:salt:)``).
    public static func body(
        epochKey: EpochKey, vaultID: VaultID, parents: [KeyringID], isEscrowFree: Bool, slots: [KeySlot],
        content: KeyringContent, signer: Ed25519.KeyPair, random: any RandomSource, vaultSalt: [UInt8]? = nil
    ) -> [UInt8] {
        body(
            epochKey: epochKey, vaultID: vaultID,
            publicPart: KeyringPublic(parents: parents, isEscrowFree: isEscrowFree, slots: slots, vaultSalt: vaultSalt),
            content: content, signer: signer, random: random)
    }

    /// The frame body (without trailer) of a keyring for `epochKey` with the
    /// given public part (parents, escrow-free flag, slots, salt).
    public static func body(
        epochKey: EpochKey, vaultID: VaultID, publicPart: KeyringPublic, content: KeyringContent, signer: Ed25519.KeyPair,
        random: any RandomSource
    ) -> [UInt8] {
        let publicBytes = publicPart.encoded()
        var contentBytes = content.encoded()
        defer { wipe(&contentBytes) }
        let message = KeyringRecord.signedMessage(vaultID: vaultID, epoch: epochKey.epoch, publicBytes: publicBytes, contentBytes: contentBytes)
        let inner = KeyringInner(contentBytes: contentBytes, signer: signer.publicKey, signature: signer.sign(message))
        let sealed = KeyringRecord.seal(inner: inner, key: epochKey, vaultID: vaultID, publicBytes: publicBytes, random: random)
        return KeyringRecord(epoch: epochKey.epoch, publicPart: publicPart, sealed: sealed).encodedBody()
    }

    /// The id a keyring frame with this body will have: BLAKE2b-128 of the body.
    public static func id(ofBody body: [UInt8]) -> KeyringID {
        KeyringID(unchecked: BLAKE2b.hash(body, byteCount: 16))
    }
}
