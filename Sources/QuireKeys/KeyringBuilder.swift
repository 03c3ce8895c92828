@_spi(Crypto) package import QuireCrypto
@_spi(Format) package import QuireFormat

/// Builds keyring bodies (`Spec/format.md §8.1`): links to the parents under
/// their keys, the signature over public part, nonce and content, the sealed
/// and padded inner part.
package enum KeyringBuilder {
    /// One parent of a keyring being built: its id and its epoch key.
    public struct Parent: Sendable {
        /// The parent keyring's id.
        public let id: KeyringID
        /// The parent's epoch key.
        public let key: EpochKey

        /// A parent with the given id and key.
        public init(id: KeyringID, key: EpochKey) {
            self.id = id
            self.key = key
        }
    }

    /// The body (without its body hash) of a keyring of `epochKey`'s epoch.
    /// A root's `vaultSalt`, when given, goes into the sealed content `C`
    /// (`Spec/format.md §8.4` rule 4, tenth review R10-8), as the parents'
    /// keys go into its `parentKeys`.
    ///
    /// - Throws: ``KeyError/format(_:)`` (out of guarded memory).
    public static func body(
        epochKey: EpochKey, vaultID: VaultID, parents: [Parent], isEscrowFree: Bool, requiredSlotKinds: [String] = [],
        slots: [StoredSlot], vaultSalt: [UInt8]? = nil, unknownPublicFields: CBORMap = CBORMap(), content: KeyringContent,
        signer: Ed25519.KeyPair, random: any RandomSource
    ) throws(KeyError) -> [UInt8] {
        let links: [[UInt8]]
        do {
            links = try KeyringRecord.links(
                parents: parents.map { ($0.id, $0.key) }, signer: signer, vaultID: vaultID, epoch: epochKey.epoch,
                keyCommit: epochKey.commitment, random: random)
        } catch {
            throw .format(error)
        }
        var content = content
        content.parentKeys = parents.map(\.key.key)
        if let vaultSalt { content.vaultSalt = vaultSalt }
        let publicPart = KeyringPublic(
            epoch: epochKey.epoch, keyCommit: epochKey.commitment, parents: parents.map(\.id), links: links, isEscrowFree: isEscrowFree,
            requiredSlotKinds: requiredSlotKinds, slotEntries: slots, unknownFields: unknownPublicFields)
        do {
            return try KeyringRecord.seal(
                content: content, signer: signer, key: epochKey, vaultID: vaultID, publicPart: publicPart, random: random
            )
            .encodedBody()
        } catch {
            throw .format(error)
        }
    }

    /// The id of a keyring body (without its hash): `BLAKE2b-256(K)`.
    public static func id(ofBody body: [UInt8]) -> KeyringID {
        KeyringRecord.id(ofBody: body)
    }
}
