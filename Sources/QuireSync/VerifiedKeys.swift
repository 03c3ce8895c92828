@_spi(Format) package import QuireFormat
@_spi(Format) package import QuireKeys

extension UnlockedKeys {
    /// The Ed25519 public keys that a trusted keyring lists as removed: their
    /// attestations are reported as a removed member's, never counted as a
    /// member's (`Spec/format.md §9.4`).
    package var removedMembers: Set<[UInt8]> {
        // A removal's puppets count as removed (Spec/format.md §8.4 rule 6).
        Set(keyrings.filter(\.isTrusted).flatMap { ($0.content?.removed ?? []) + $0.removedPuppets }.map(\.publicKey))
    }
}

extension VaultFile {
    /// Verifies the commits with what `unlocked` holds: its keys, its trusted
    /// keyrings (for the floor), its members (who may attest) and the
    /// members its trusted keyrings removed (`Spec/format.md §9.3`, §9.4).
    package func verifyCommits(with unlocked: UnlockedKeys) {
        verifyCommits(
            keys: unlocked.keys, trustedKeyrings: unlocked.trustedKeyrings, attestors: unlocked.attestors,
            removedMembers: unlocked.removedMembers)
    }
}
