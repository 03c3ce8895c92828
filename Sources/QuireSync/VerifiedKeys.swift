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

extension UnlockedKeys {
    /// The keys each trusted keyring that removes members lists in
    /// `removed`, by keyring id (its puppets are not listed: a puppet's
    /// commits never rank as a current member's, `Spec/format.md §9.4`
    /// step 5).
    package var removingKeyrings: [KeyringID: Set<[UInt8]>] {
        var out: [KeyringID: Set<[UInt8]>] = [:]
        for ring in keyrings where ring.isTrusted {
            if let removed = ring.content?.removed, !removed.isEmpty { out[ring.id] = Set(removed.map(\.publicKey)) }
        }
        return out
    }
}

extension VaultFile {
    /// The frame index of every intact committed copy of a keyring in
    /// `removing` → the keys it removes (what
    /// ``verifyCommits(keys:trustedKeyrings:attestors:removedMembers:removals:)`` takes).
    /// An intact copy has its own key id (`keyCommit[0..<6]`): a copy under
    /// another key id is damaged and counts for nothing, in §9.4 step 5 too
    /// (`Spec/format.md §8.1`, fourteenth review R14-3).
    package func removals(of removing: [KeyringID: Set<[UInt8]>]) -> [Int: Set<[UInt8]>] {
        guard !removing.isEmpty else { return [:] }
        let s = structure
        var out: [Int: Set<[UInt8]>] = [:]
        for f in s.frames[0..<s.committedFrameCount] where f.header.kind == .keyring && f.malformation == nil && f.checksumIntact == true {
            guard let keys = removing[KeyringID(unchecked: f.trailer)], let body = f.plaintextBody,
                let record = try? KeyringRecord(body: body, location: f.location),
                f.header.keyID == KeyID(commitment: record.publicPart.keyCommit)
            else { continue }
            out[f.location.index] = keys
        }
        return out
    }
}

extension UnlockedKeys {
    /// True when `ring`, a keyring this credential did not open, was made
    /// by a member: one of its links opens under the key of a trusted
    /// parent and carries the signature of a member of that parent, removed
    /// since or not — the check of `Spec/format.md §8.6`, which only a
    /// member's key passes (`Spec/merge.md §3.2`, eighth review R8-3) —
    /// and its public epoch is at most one above its highest trusted
    /// parent's (rule 5.4 from the public part): a made-up epoch would make
    /// every later merge and compaction refuse [`behind_newer_keyring`]
    /// (ninth review R9-2).
    ///
    /// - Throws: ``KeyError/format(_:)`` (``FormatError/outOfGuardedMemory``)
    ///   when a parent's link key cannot be derived: a link that does not
    ///   open would leave out a keyring a member made (`Spec/format.md §5.1`).
    package func memberMade(_ ring: KeyringInfo, vaultID: VaultID) throws(KeyError) -> Bool {
        guard ring.content == nil, ring.problem == nil else { return false }
        let parentEpochs = ring.parents.compactMap { p in keyrings.first(where: { $0.id == p && $0.isTrusted })?.epoch }
        guard let top = parentEpochs.max(), UInt64(ring.epoch) <= UInt64(top) + 1 else { return false }
        for (index, p) in ring.parents.enumerated() {
            guard let parent = keyrings.first(where: { $0.id == p }), parent.isTrusted, let parentKey = parent.epochKey,
                let content = parent.content
            else { continue }
            // Derived (and kept with the key) here: `linkSigner` cannot tell
            // running out of guarded memory from a link that does not open.
            do { _ = try parentKey.subkey(.link) } catch { throw .format(.outOfGuardedMemory) }
            guard let linker = ring.record.linkSigner(parentIndex: index, parentKey: parentKey, vaultID: vaultID) else { continue }
            // A member of the parent, whether a later keyring removed it or not.
            if content.members.contains(where: { $0.publicKey == linker && $0.isEd25519 && ($0.role == "device" || $0.role == "recovery") })
            {
                return true
            }
        }
        return false
    }
}

extension VaultFile {
    /// Verifies the commits with what `unlocked` holds: its keys, its trusted
    /// keyrings (for the floor), its members (who may attest) and the
    /// members its trusted keyrings removed (`Spec/format.md §9.3`, §9.4).
    package func verifyCommits(with unlocked: UnlockedKeys) {
        verifyCommits(
            keys: unlocked.keys, trustedKeyrings: unlocked.trustedKeyrings, attestors: unlocked.attestors,
            removedMembers: unlocked.removedMembers, removals: removals(of: unlocked.removingKeyrings))
    }
}
