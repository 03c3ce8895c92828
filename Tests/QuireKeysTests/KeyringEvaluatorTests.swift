@_spi(Crypto) import QuireCrypto
@_spi(Format) import QuireFormat
@_spi(Format) @_spi(Crypto) import QuireKeys
import Testing

@Suite struct KeyringEvaluatorTests {
    static let genesisLocation = FrameLocation(offset: 64, index: 0)

    @Test func genesisKeyringIsTrusted() throws {
        let v = KeyringVault(label: "genesis")
        let body = v.body(v.epoch1)
        try v.create([(v.epoch1, body)], extra: [Array("entry".utf8)])
        let unlocked = try v.unlock(.recoveryKey(v.recovery))
        #expect(unlocked.keyrings.count == 1)
        let ring = unlocked.keyrings[0]
        #expect(ring.isTrusted)
        #expect(ring.problem == nil)
        #expect(ring.location == Self.genesisLocation)
        #expect(ring.epoch == 1)
        #expect(ring.id == KeyringBuilder.id(ofBody: body))
        #expect(ring.id.bytes == BLAKE2b.hash(body, byteCount: 32))
        #expect(ring.signer == v.recoverySigner.publicKey)
        #expect(ring.epochKey?.sameKey(as: v.epoch1) == true)
        #expect(ring.content?.members == [v.recoveryMember])
        #expect(ring.content?.blobKey == v.blobKey)
        #expect(ring.content?.reason == "test")
        #expect(ring.record.publicPart.parents.isEmpty)
        #expect(ring.content?.vaultSalt == v.salt)
        #expect(ring.record.publicPart.unknownFields[text: "vaultSalt"] == nil)
        #expect(rootVaultID(signer: v.recoverySigner.publicKey, keyCommit: v.epoch1.commitment, salt: v.salt) == v.vaultID)
        #expect(unlocked.trustedKeyrings == [0: 1])
        #expect(unlocked.keys.key(commitment: v.epoch1.commitment) != nil)
        #expect(unlocked.keys.blobKey == v.blobKey)
        #expect(unlocked.keys.writeKey?.epoch == 1)
        #expect(unlocked.issues.isEmpty)
        #expect(unlocked.unreadableNewerEpoch == nil)
        #expect(unlocked.newestTrusted?.location == Self.genesisLocation)
        // The keys read the vault.
        let vault = try VaultFile(path: v.path)
        vault.verifyCommits(keys: unlocked.keys, trustedKeyrings: unlocked.trustedKeyrings, attestors: unlocked.attestors)
        #expect(vault.commits.allVerified)
        #expect(vault.commits.currentFloor == 1)
        var payloads: [[UInt8]] = []
        let issues = vault.forEachRecord(kinds: [.entryRevision, .keyring]) { r in
            payloads.append(r.payload)
            return true
        }
        #expect(issues.isEmpty)
        #expect(payloads == [body, Array("entry".utf8)])
    }

    @Test func wrongRecoveryKey() throws {
        let v = KeyringVault(label: "wrong recovery")
        try v.create([(v.epoch1, v.body(v.epoch1))])
        #expect(v.unlockError(.recoveryKey(recoveryKey("someone else"))) == .wrongRecoveryKey)
        #expect(v.unlockError(.passphrase(passphrase("guess"))) == .noPassphrase)  // it has no passphrase slot
        #expect(v.unlockError(.device(try Ed25519.KeyPair(using: SeededRandom(label: "stranger")))) == .wrongDeviceKey)
        #expect(v.unlockError(.escrow(try X25519.KeyPair(seed: secure(counting(32))))) == .wrongKey)
        #expect(v.unlockError(.epochKey(v.epoch2)) == .wrongKey)
        #expect(v.unlockError(.epochKey(EpochKey(epoch: 1, key: v.epoch2.key))) == .wrongKey)
    }

    @Test func everyCredentialKindOpensItsSlot() throws {
        let v = KeyringVault(label: "credentials")
        let device = try Ed25519.KeyPair(using: SeededRandom(label: "device"))
        let escrow = try X25519.KeyPair(seed: secure(SeededRandom(label: "escrow").bytes(32)))
        let slots: [KeySlot] = [
            v.recoverySlot(v.epoch1),
            try SlotCrypto.passphraseSlot(
                for: v.epoch1, passphrase: passphrase("open sesame"), opsLimit: tinyOps, memLimitBytes: tinyMem, vaultID: v.vaultID,
                random: v.random),
            try SlotCrypto.deviceSlot(for: v.epoch1, devicePublicKey: device.publicKey, vaultID: v.vaultID, random: v.random),
            try SlotCrypto.escrowSlot(for: v.epoch1, escrowPublicKey: escrow.publicKey, vaultID: v.vaultID, random: v.random),
        ]
        let members = [v.recoveryMember, KeyringMember(role: "device", publicKey: device.publicKey, name: "Phone", added: 5)]
        try v.create([(v.epoch1, v.body(v.epoch1, slots: slots, members: members))])
        let credentials: [Credential] = [
            .recoveryKey(v.recovery), .passphrase(passphrase("open sesame")), .device(device), .escrow(escrow),
            .epochKey(v.epoch1),
        ]
        for credential in credentials {
            let unlocked = try v.unlock(credential)
            #expect(unlocked.keyrings.map(\.isTrusted) == [true])
            #expect(unlocked.keyrings[0].signer == v.recoverySigner.publicKey)
            #expect(unlocked.keyrings[0].content?.members == members)
            #expect(unlocked.keys.key(commitment: v.epoch1.commitment) != nil)
            #expect(unlocked.keys.blobKey == v.blobKey)
            #expect(unlocked.issues.isEmpty)
        }
    }

    /// A device and the recovery key make their X25519 key pair once per
    /// unlock and keep it from slot to slot and keyring to keyring: here the
    /// device's own slot is the last one it tries, in the older keyring, and
    /// the recovery key's is the second of the newer one.
    @Test func credentialsFindTheirSlotAfterOthersInOlderKeyrings() throws {
        let v = KeyringVault(label: "slot order")
        let device = try Ed25519.KeyPair(using: SeededRandom(label: "device"))
        let stranger = try Ed25519.KeyPair(using: SeededRandom(label: "stranger"))
        func deviceSlot(_ pair: Ed25519.KeyPair, _ key: EpochKey) throws -> KeySlot {
            try SlotCrypto.deviceSlot(for: key, devicePublicKey: pair.publicKey, vaultID: v.vaultID, random: v.random)
        }
        let members = [
            v.recoveryMember, KeyringMember(role: "device", publicKey: stranger.publicKey, name: "Tablet", added: 5),
            KeyringMember(role: "device", publicKey: device.publicKey, name: "Phone", added: 6),
        ]
        let genesis = v.body(v.epoch1, slots: [v.recoverySlot(v.epoch1), try deviceSlot(stranger, v.epoch1), try deviceSlot(device, v.epoch1)],
                             members: members)
        let next = v.body(v.epoch2, parents: [(KeyringBuilder.id(ofBody: genesis), v.epoch1)],
                          slots: [try deviceSlot(stranger, v.epoch2), v.recoverySlot(v.epoch2)], members: members)
        try v.create([(v.epoch1, genesis), (v.epoch2, next)])

        let byDevice = try v.unlock(.device(device))
        #expect(byDevice.keyrings.map(\.isTrusted) == [true, false])
        #expect(byDevice.keys.key(commitment: v.epoch1.commitment) != nil)
        #expect(byDevice.keys.key(commitment: v.epoch2.commitment) == nil)
        #expect(byDevice.unreadableNewerEpoch == 2)

        let byRecovery = try v.unlock(.recoveryKey(v.recovery))
        #expect(byRecovery.keyrings.map(\.isTrusted) == [true, true])
        #expect(byRecovery.keys.key(commitment: v.epoch2.commitment) != nil)
        #expect(byRecovery.keys.key(commitment: v.epoch1.commitment) != nil)
        #expect(byRecovery.unreadableNewerEpoch == nil)

        let byStranger = try v.unlock(.device(stranger))
        #expect(byStranger.keyrings.map(\.isTrusted) == [true, true])
    }

    @Test func successorSignedByAMemberIsTrusted() throws {
        let v = KeyringVault(label: "successor")
        let genesis = v.body(v.epoch1)
        let next = v.body(v.epoch2, parents: [(KeyringBuilder.id(ofBody: genesis), v.epoch1)])
        try v.create([(v.epoch1, genesis)])
        try v.append([(v.epoch2, next)], commitKey: v.epoch2)
        let unlocked = try v.unlock(.recoveryKey(v.recovery))
        #expect(unlocked.keyrings.map(\.isTrusted) == [true, true])
        #expect(unlocked.trustedKeyrings == [0: 1, 2: 2])
        #expect(unlocked.keys.writeKey?.epoch == 2)
        #expect(unlocked.keys.writeKey?.sameKey(as: v.epoch2) == true)
        #expect(unlocked.keys.key(commitment: v.epoch1.commitment) != nil)
        #expect(unlocked.issues.isEmpty)
        #expect(unlocked.newestTrusted?.epoch == 2)
        let vault = try VaultFile(path: v.path)
        vault.verifyCommits(keys: unlocked.keys, trustedKeyrings: unlocked.trustedKeyrings, attestors: unlocked.attestors)
        #expect(vault.commits.allVerified)
        #expect(vault.commits.floors == [0, 1])
        #expect(vault.commits.currentFloor == 2)
    }

    @Test func successorSignedByANonMemberIsNotTrusted() throws {
        let v = KeyringVault(label: "non-member")
        let outsider = try Ed25519.KeyPair(using: SeededRandom(label: "outsider"))
        let genesis = v.body(v.epoch1)
        let forged = v.body(
            v.epoch2, parents: [(KeyringBuilder.id(ofBody: genesis), v.epoch1)],
            members: [v.recoveryMember, KeyringMember(role: "device", publicKey: outsider.publicKey, name: "Mallory", added: 9)], signer: outsider)
        try v.create([(v.epoch1, genesis)])
        try v.append([(v.epoch2, forged)])
        let unlocked = try v.unlock(.recoveryKey(v.recovery))
        let location = FrameLocation(offset: unlocked.keyrings[1].location.offset, index: 2)
        #expect(unlocked.keyrings[1].location == location)
        #expect(unlocked.keyrings.map(\.isTrusted) == [true, false])
        #expect(unlocked.keyrings[1].problem == .keyringUnauthenticated(location, reason: "its signer is not a member of a parent keyring"))
        #expect(unlocked.issues.contains(.keyringUnauthenticated(location, reason: "its signer is not a member of a parent keyring")))
        #expect(unlocked.trustedKeyrings == [0: 1])
        #expect(unlocked.keys.writeKey?.epoch == 1)
        #expect(unlocked.keys.key(commitment: v.epoch2.commitment) == nil)
        #expect(unlocked.newestTrusted?.epoch == 1)
    }

    @Test func otherBrokenSuccessors() throws {
        let v = KeyringVault(label: "broken successors")
        let genesis = v.body(v.epoch1)
        let parent = KeyringBuilder.id(ofBody: genesis)
        let epoch3 = EpochKey(epoch: 3, key: try SymmetricKey(using: SeededRandom(label: "e3")))
        let skipping = v.body(epoch3, parents: [(parent, v.epoch1)])
        let orphan = v.body(v.epoch2, parents: [(KeyringID(using: SeededRandom(label: "nobody")), v.epoch1)])
        let secondFirst = v.body(v.epoch2, signer: try Ed25519.KeyPair(using: SeededRandom(label: "pretender")))
        let sameEpochKey = EpochKey(epoch: 1, key: try SymmetricKey(using: SeededRandom(label: "same epoch other key")))
        let sameEpochOtherKey = v.body(sameEpochKey, parents: [(parent, v.epoch1)])
        try v.create([(v.epoch1, genesis), (epoch3, skipping), (v.epoch2, orphan), (v.epoch2, secondFirst), (sameEpochKey, sameEpochOtherKey)])
        let unlocked = try v.unlock(.recoveryKey(v.recovery))
        #expect(unlocked.keyrings.map(\.isTrusted) == [true, false, false, false, false])
        let reasons = unlocked.keyrings.map { ring -> String? in
            if case .keyringUnauthenticated(_, let reason)? = ring.problem { return reason }
            return nil
        }
        // The orphan (its parent is not in the file) and the second first
        // keyring (no parent) are never linked, so the recovery key does not
        // try their slots once it holds the root's key, and says nothing
        // about them (Spec/format.md §8.5 step 2, the gate; before: "a
        // parent keyring is missing or not trusted" and "it has no parent,
        // but its epoch is 2, not 1"). They are not trusted either way.
        #expect(reasons == [
            nil, "its epoch 3 does not follow its parents' epoch 1", nil, nil, "it reuses epoch 1 with a different key",
        ])
        #expect(unlocked.keyrings[2].content == nil && unlocked.keyrings[3].content == nil)
        #expect(unlocked.keys.writeKey?.epoch == 1)
        #expect(unlocked.keys.key(commitment: v.epoch1.commitment) != nil)
    }

    /// The root's signer (here the recovery key) signs more roots: one at
    /// the last epoch and one at epoch 1 with another key. With the vault id
    /// bound to the signer and salt alone both were trusted, and the one at
    /// epoch 2³² − 1 became the write key: every new epoch overflowed and
    /// commits under lower epochs went stale (review M1). Roots now have
    /// epoch 1 and the vault id binds the root's key commitment, so both are
    /// rejected; a root with the vault's own key is only a second keyring of
    /// epoch 1 (`Spec/format.md §8.4` rule 4).
    @Test func attackSecondRootAtTheLastEpoch() throws {
        let v = KeyringVault(label: "second root")
        let genesis = v.body(v.epoch1)
        let last = EpochKey(epoch: UInt32.max, key: try SymmetricKey(using: SeededRandom(label: "last epoch")))
        let other = EpochKey(epoch: 1, key: try SymmetricKey(using: SeededRandom(label: "other first key")))
        let sameKey = v.body(v.epoch1, reason: "second root, same key")
        try v.create([(v.epoch1, genesis)])
        try v.append([(last, v.body(last)), (other, v.body(other)), (v.epoch1, sameKey)])
        let unlocked = try v.unlock(.recoveryKey(v.recovery))
        #expect(unlocked.keyrings.map(\.isTrusted) == [true, false, false, true])
        let reasons = unlocked.keyrings.map { ring -> String? in
            if case .keyringUnauthenticated(_, let reason)? = ring.problem { return reason }
            return nil
        }
        // The two other roots are never linked (a root has no link) and do
        // not have the root's key, so once the recovery key holds the root's
        // key it does not try their slots and says nothing about them
        // (Spec/format.md §8.5 step 2, the gate; before: "it has no parent,
        // but its epoch is 4294967295, not 1" and "… do not derive this
        // vault's id"). They are not trusted either way, nor are their keys
        // held.
        #expect(reasons == [nil, nil, nil, nil])
        #expect(unlocked.keyrings[1].content == nil && unlocked.keyrings[2].content == nil)
        #expect(unlocked.keys.key(commitment: other.commitment) == nil)
        #expect(unlocked.keys.writeKey?.epoch == 1)
        #expect(unlocked.keys.key(commitment: last.commitment) == nil)
    }

    /// A member starts a new epoch with the key of an ancestor: the key's
    /// epoch would be the lowest, so every later commit would be stale, and
    /// every former holder of the old key would read the new epoch (review
    /// L2). Rule 5.4 now rejects it.
    @Test func attackNewEpochReusesAnAncestorsKey() throws {
        let v = KeyringVault(label: "reused key")
        let genesis = v.body(v.epoch1)
        let second = v.body(v.epoch2, parents: [(KeyringBuilder.id(ofBody: genesis), v.epoch1)])
        let reused = EpochKey(epoch: 3, key: v.epoch1.key)
        let third = v.body(reused, parents: [(KeyringBuilder.id(ofBody: second), v.epoch2)])
        try v.create([(v.epoch1, genesis), (v.epoch2, second), (reused, third)])
        let unlocked = try v.unlock(.recoveryKey(v.recovery))
        #expect(unlocked.keyrings.map(\.isTrusted) == [true, true, false])
        #expect(unlocked.keyrings[2].problem
            == .keyringUnauthenticated(unlocked.keyrings[2].location, reason: "it starts epoch 3 with the key of an earlier epoch"))
        #expect(unlocked.keys.writeKey?.epoch == 2)
    }

    /// A stolen phone, still a member, signs on a branch from the root a
    /// keyring of epoch 2 whose key is the current epoch-3 key (rule 5.4
    /// allows it: no ancestor has that key) and commits it, under that key,
    /// before the genuine epoch-2 and epoch-3 keyrings in the file. Before
    /// (ninth review R9-4, eighth review R8-6), the epoch-3 key took epoch 2
    /// (the Python reader took the lowest claim, this one the first in the
    /// file): the rotation's own commit was stale (below its own group's
    /// keyring) and the commit after it orphaned, until the phone was
    /// removed. A commit's key epoch is now that of the keyring of its key in
    /// its own group, else the one its line took, else the highest claim
    /// (`Spec/format.md §5.1`, §9.3), and both claims are reported
    /// [`key_epoch_claimed_twice`], naming their signers.
    @Test func attackStolenDeviceClaimsCurrentKeyAtOldEpoch() throws {
        let v = KeyringVault(label: "claims current key")
        let stolen = try Ed25519.KeyPair(using: SeededRandom(label: "stolen phone"))
        let phone = KeyringMember(role: "device", publicKey: stolen.publicKey, name: "Phone", added: 1)
        let members = [v.recoveryMember, phone]
        let genesis = v.body(v.epoch1, members: members)
        let rootID = KeyringBuilder.id(ofBody: genesis)
        let second = v.body(v.epoch2, parents: [(rootID, v.epoch1)], members: members)
        let epoch3 = EpochKey(epoch: 3, key: try SymmetricKey(using: SeededRandom(label: "current key")))
        let third = v.body(epoch3, parents: [(KeyringBuilder.id(ofBody: second), v.epoch2)], members: members)
        let claimed = EpochKey(epoch: 2, key: epoch3.key)
        let claim = v.body(claimed, parents: [(rootID, v.epoch1)], members: members, signer: stolen)
        try v.create([(v.epoch1, genesis)])
        // Every commit under the key of the keyring it holds (format.md
        // §9.2), chained in file order; the last holds no keyring.
        var writer = KeySet()
        for k in [v.epoch1, v.epoch2, epoch3] { writer.add(EpochKey(epoch: 1, key: k.key)) }
        writer.writeKey = EpochKey(epoch: 1, key: v.epoch1.key)
        for (key, body, signer) in [(claimed, claim, stolen), (v.epoch2, second, v.recoverySigner), (epoch3, third, v.recoverySigner)]
            + [(epoch3, [UInt8](), v.recoverySigner)]
        {
            let f = try VaultFile(path: v.path, writable: true)
            if body.isEmpty { writer.writeKey = EpochKey(epoch: 1, key: key.key) }
            f.verifyCommits(keys: writer, trustedKeyrings: [:], attestors: [])
            try f.commit(random: v.random, options: fast, attestWith: signer) { (tx: PendingCommit) throws(FormatError) in
                if body.isEmpty {
                    _ = try tx.appendSealed(kind: .entryRevision, payload: Array("after the rotation".utf8))
                } else {
                    try tx.appendPlaintext(kind: .keyring, keyID: key.id, epoch: key.epoch, body: body)
                    tx.commitKey = EpochKey(epoch: 1, key: key.key)
                }
            }
        }
        let unlocked = try v.unlock(.recoveryKey(v.recovery))
        #expect(unlocked.keyrings.map(\.isTrusted) == [true, true, true, true])
        #expect(unlocked.keys.key(commitment: epoch3.commitment)?.epoch == 3)
        #expect(unlocked.keys.writeKey?.commitment == epoch3.commitment)
        let claims = unlocked.issues.compactMap { issue -> (UInt64, UInt32, String)? in
            if case .keyEpochClaimedTwice(let l, let epoch, let others, let signer) = issue, others.count == 1 { return (l.offset, epoch, signer) }
            return nil
        }
        #expect(claims.map(\.1) == [2, 3])
        #expect(claims.map(\.2) == ["the device \"Phone\"", "the recovery key"])
        #expect(claims.map(\.0) == [unlocked.keyrings[1].location.offset, unlocked.keyrings[3].location.offset])
        #expect(unlocked.issues.allSatisfy { $0.isWarning })
        let f = try VaultFile(path: v.path)
        f.verifyCommits(keys: unlocked.keys, trustedKeyrings: unlocked.trustedKeyrings, attestors: unlocked.attestors)
        #expect(f.commits.statuses == [.verified, .verified, .verified, .verified, .verified])
        #expect(f.commitIssues.isEmpty)
        #expect(f.commits.epochs == [1, 2, 2, 3, 3])
    }

    /// A member signs a keyring that "removes" a key that was never a
    /// member. Rule 5.10 used to ask only for one new entry in `removed`, and
    /// lists were carried forward: 4,096 such removals, joined, filled every
    /// later keyring's list to its limit and froze every removal, the
    /// recovery key's included (review H5). A removed key must now be a
    /// member of a parent, and lists are no longer carried forward.
    @Test func attackRemovingAKeyThatWasNeverAMember() throws {
        let v = KeyringVault(label: "remove a stranger")
        let genesis = v.body(v.epoch1)
        let stranger = KeyringMember(role: "device", publicKey: try Ed25519.KeyPair(using: SeededRandom(label: "stranger")).publicKey, name: "X", added: 1)
        let padding = v.body(v.epoch2, parents: [(KeyringBuilder.id(ofBody: genesis), v.epoch1)], removed: [stranger], reason: "remove")
        try v.create([(v.epoch1, genesis), (v.epoch2, padding)])
        let unlocked = try v.unlock(.recoveryKey(v.recovery))
        #expect(unlocked.keyrings.map(\.isTrusted) == [true, false])
        #expect(unlocked.keyrings[1].problem
            == .keyringUnauthenticated(unlocked.keyrings[1].location, reason: "it removes a key that is not a member of any of its parents"))
    }

    /// Removal is sticky through the whole ancestry, not through lists each
    /// keyring copies: a grandchild of a removal that lists the removed
    /// device again is rejected, though its parent does not list it in
    /// `removed` (`Spec/format.md §8.4` rule 5.9).
    @Test func removalIsStickyThroughAncestors() throws {
        let v = KeyringVault(label: "sticky ancestors")
        let phone = KeyringMember(role: "device", publicKey: try Ed25519.KeyPair(using: SeededRandom(label: "phone")).publicKey, name: "Phone", added: 1)
        let genesis = v.body(v.epoch1, members: [v.recoveryMember, phone])
        let removal = v.body(v.epoch2, parents: [(KeyringBuilder.id(ofBody: genesis), v.epoch1)], removed: [phone], reason: "remove")
        let epoch3 = EpochKey(epoch: 3, key: try SymmetricKey(using: SeededRandom(label: "epoch 3")))
        let rotation = v.body(epoch3, parents: [(KeyringBuilder.id(ofBody: removal), v.epoch2)], reason: "rotate")
        let epoch4 = EpochKey(epoch: 4, key: try SymmetricKey(using: SeededRandom(label: "epoch 4")))
        let readmits = v.body(epoch4, parents: [(KeyringBuilder.id(ofBody: rotation), epoch3)], members: [v.recoveryMember, phone], reason: "enroll")
        try v.create([(v.epoch1, genesis), (v.epoch2, removal), (epoch3, rotation), (epoch4, readmits)])
        let unlocked = try v.unlock(.recoveryKey(v.recovery))
        #expect(unlocked.keyrings.map(\.isTrusted) == [true, true, true, false])
        #expect(unlocked.keyrings[3].problem == .removedDeviceSlot(unlocked.keyrings[3].location))
    }

    @Test func rootSignedByAnotherKeyIsRejected() throws {
        let v = KeyringVault(label: "bad genesis")
        let outsider = try Ed25519.KeyPair(using: SeededRandom(label: "outsider"))
        let members = [v.recoveryMember, KeyringMember(role: "device", publicKey: outsider.publicKey, name: "Outsider", added: 1)]
        try v.create([(v.epoch1, v.body(v.epoch1, members: members, signer: outsider))])
        #expect(v.unlockError(.recoveryKey(v.recovery))
            == .keyringUnauthenticated(Self.genesisLocation, reason: "it has no parent, but its signer, key commitment and salt do not derive this vault's id"))
    }

    @Test func rootSignedByANonMemberIsRejected() throws {
        let v = KeyringVault(label: "non-member root")
        let device = try Ed25519.KeyPair(using: SeededRandom(label: "device"))
        let otherRecovery = try recoveryKey("another recovery").publicKey()
        let members = [
            KeyringMember(role: "recovery", publicKey: otherRecovery, name: "Recovery key", added: 1),
            KeyringMember(role: "device", publicKey: device.publicKey, name: "Phone", added: 1),
        ]
        try v.create([(v.epoch1, v.body(v.epoch1, members: members))])
        #expect(v.unlockError(.recoveryKey(v.recovery))
            == .keyringUnauthenticated(Self.genesisLocation, reason: "the root keyring is not signed by one of its own members"))
    }

    @Test func escrowSlotInAnEscrowFreeGenesisIsForbidden() throws {
        let v = KeyringVault(label: "escrow genesis")
        let escrow = try X25519.KeyPair(seed: secure(SeededRandom(label: "custodian").bytes(32)))
        let slots = [
            v.recoverySlot(v.epoch1),
            try SlotCrypto.escrowSlot(for: v.epoch1, escrowPublicKey: escrow.publicKey, vaultID: v.vaultID, random: v.random),
        ]
        try v.create([(v.epoch1, v.body(v.epoch1, isEscrowFree: true, slots: slots))])
        #expect(v.unlockError(.recoveryKey(v.recovery)) == .escrowForbidden(Self.genesisLocation))
        #expect(v.unlockError(.escrow(escrow)) == .escrowForbidden(Self.genesisLocation))
    }

    /// Spec/format.md §8.5: a keyring rejected by rule 2 from its public part
    /// has its slots tried, so when none opens for the credential the
    /// credential is wrong (vector error-every-keyring-escrow-forbidden).
    @Test func escrowForbiddenEverywhereWithAnotherRecoveryKeyIsWrongRecoveryKey() throws {
        let v = KeyringVault(label: "escrow genesis, another key")
        let escrow = try X25519.KeyPair(seed: secure(SeededRandom(label: "custodian").bytes(32)))
        let slots = [
            v.recoverySlot(v.epoch1),
            try SlotCrypto.escrowSlot(for: v.epoch1, escrowPublicKey: escrow.publicKey, vaultID: v.vaultID, random: v.random),
        ]
        try v.create([(v.epoch1, v.body(v.epoch1, isEscrowFree: true, slots: slots))])
        #expect(v.unlockError(.recoveryKey(recoveryKey("someone else"))) == .wrongRecoveryKey)
    }

    /// Spec/format.md §8.5 step 3: a parent key that does not match its
    /// parent is rule 5.2, reported in rule 5's order: when that parent
    /// failed rule 1 (here its frame header's key id is wrong), the child
    /// fails rule 5.1 first (vector
    /// damaged-keyring-parent-fails-rule-1-stops-parent-keys).
    @Test func parentKeyMismatchUnderAnUntrustedParentFailsRule51First() throws {
        let v = KeyringVault(label: "mismatch under a rule-1 failure")
        let root = v.body(v.epoch1)
        let rootID = KeyringBuilder.id(ofBody: root)
        let parent = v.body(v.epoch2, parents: [(rootID, v.epoch1)])
        let epoch3 = EpochKey(epoch: 3, key: try SymmetricKey(using: v.random))
        let wrong = EpochKey(epoch: 2, key: try SymmetricKey(using: v.random))
        let child = v.body(epoch3, parents: [(KeyringBuilder.id(ofBody: parent), wrong), (rootID, v.epoch1)])
        // The parent is written under the epoch-1 key's id: rule 1 rejects it.
        try v.create([(v.epoch1, root), (v.epoch1, parent), (epoch3, child)])
        let unlocked = try v.unlock(.recoveryKey(v.recovery))
        let location = unlocked.keyrings[2].location
        #expect(unlocked.keyrings.map(\.isTrusted) == [true, false, false])
        #expect(unlocked.keyrings[2].problem == .keyringUnauthenticated(location, reason: "a parent keyring is missing or not trusted"))
        #expect(!unlocked.issues.contains(.malformedKeyring(location, reason: "a parent key does not match its parent's key commitment")))
    }

    @Test func escrowSlotInAnEscrowFreeSuccessorIsForbidden() throws {
        let v = KeyringVault(label: "escrow successor")
        let escrow = try X25519.KeyPair(seed: secure(SeededRandom(label: "custodian").bytes(32)))
        let genesis = v.body(v.epoch1)
        let slots = [
            v.recoverySlot(v.epoch2),
            try SlotCrypto.escrowSlot(for: v.epoch2, escrowPublicKey: escrow.publicKey, vaultID: v.vaultID, random: v.random),
        ]
        let next = v.body(v.epoch2, parents: [(KeyringBuilder.id(ofBody: genesis), v.epoch1)], isEscrowFree: true, slots: slots)
        try v.create([(v.epoch1, genesis), (v.epoch2, next)])
        let unlocked = try v.unlock(.recoveryKey(v.recovery))
        let location = unlocked.keyrings[1].location
        #expect(location.index == 1)
        #expect(unlocked.keyrings.map(\.isTrusted) == [true, false])
        #expect(unlocked.keyrings[1].problem == .escrowForbidden(location))
        #expect(unlocked.issues.contains(.escrowForbidden(location)))
        #expect(unlocked.keys.writeKey?.epoch == 1)
        // The same slots without the escrow-free flag are fine.
        let w = KeyringVault(label: "escrow allowed")
        let g2 = w.body(w.epoch1)
        // The parent keys carry epoch 1, so the custodian can check the chain
        // back to the first keyring.
        let allowed = w.body(w.epoch2, parents: [(KeyringBuilder.id(ofBody: g2), w.epoch1)], isEscrowFree: false, slots: [
            w.recoverySlot(w.epoch2),
            try SlotCrypto.escrowSlot(for: w.epoch2, escrowPublicKey: escrow.publicKey, vaultID: w.vaultID, random: w.random),
        ])
        try w.create([(w.epoch1, g2), (w.epoch2, allowed)])
        #expect(try w.unlock(.recoveryKey(w.recovery)).keyrings.map(\.isTrusted) == [true, true])
        #expect(try w.unlock(.escrow(escrow)).keys.writeKey?.epoch == 2)
    }

    /// Spec/format.md §8.5 steps 2 and 3 (Python README open reading 7): a
    /// keyring rejected by rule 2 from its public part contributes no key.
    /// A slot of it that opens reaches the keyring and not its key, so a
    /// device whose only slot is there does not reach the root through its
    /// parent keys (vector error-escrow-forbidden-keyring-reaches-no-key).
    @Test func escrowForbiddenKeyringsSlotReachesNoKey() throws {
        let v = KeyringVault(label: "escrow-forbidden slot")
        let escrow = try X25519.KeyPair(seed: secure(SeededRandom(label: "custodian").bytes(32)))
        let tablet = try Ed25519.KeyPair(seed: secure(SeededRandom(label: "tablet").bytes(32)))
        let genesis = v.body(v.epoch1)
        let members = [v.recoveryMember, KeyringMember(role: "device", publicKey: tablet.publicKey, name: "Tablet", added: 1_000)]
        let slots = [
            v.recoverySlot(v.epoch2),
            try SlotCrypto.deviceSlot(for: v.epoch2, devicePublicKey: tablet.publicKey, vaultID: v.vaultID, random: v.random),
            try SlotCrypto.escrowSlot(for: v.epoch2, escrowPublicKey: escrow.publicKey, vaultID: v.vaultID, random: v.random),
        ]
        let next = v.body(
            v.epoch2, parents: [(KeyringBuilder.id(ofBody: genesis), v.epoch1)], isEscrowFree: true, slots: slots, members: members)
        try v.create([(v.epoch1, genesis), (v.epoch2, next)])
        // Before: the tablet's slot reached the epoch-2 key, the keyring was
        // opened, and its parent key opened the root: the vault opened.
        let location = try v.unlock(.recoveryKey(v.recovery)).keyrings[1].location
        #expect(v.unlockError(.device(tablet)) == .escrowForbidden(location))
        #expect(v.unlockError(.escrow(escrow)) == .escrowForbidden(location))
    }

    /// Spec/format.md §8.5 step 3 (open reading 7): a keyring rejected by
    /// rule 2 from its public part whose key is reached another way (here a
    /// child's parent keys) is not opened either.
    @Test func escrowForbiddenKeyringIsNotOpenedWhenItsKeyIsReachedByAChild() throws {
        let v = KeyringVault(label: "escrow-forbidden parent key")
        let escrow = try X25519.KeyPair(seed: secure(SeededRandom(label: "custodian").bytes(32)))
        let genesis = v.body(v.epoch1)
        let rootID = KeyringBuilder.id(ofBody: genesis)
        let slots = [
            v.recoverySlot(v.epoch2),
            try SlotCrypto.escrowSlot(for: v.epoch2, escrowPublicKey: escrow.publicKey, vaultID: v.vaultID, random: v.random),
        ]
        let rejected = v.body(v.epoch2, parents: [(rootID, v.epoch1)], isEscrowFree: true, slots: slots)
        let epoch3 = EpochKey(epoch: 3, key: try SymmetricKey(using: v.random))
        let child = v.body(epoch3, parents: [(rootID, v.epoch1), (KeyringBuilder.id(ofBody: rejected), v.epoch2)], isEscrowFree: true)
        try v.create([(v.epoch1, genesis), (v.epoch2, rejected), (epoch3, child)])
        let unlocked = try v.unlock(.recoveryKey(v.recovery))
        #expect(unlocked.keyrings.map(\.isTrusted) == [true, false, false])
        #expect(unlocked.keyrings[1].problem == .escrowForbidden(unlocked.keyrings[1].location))
        // Before: the child's parent key opened it.
        #expect(unlocked.keyrings[1].content == nil)
        #expect(unlocked.keyrings[1].epochKey == nil)
        #expect(unlocked.keyrings[2].content != nil)
        #expect(unlocked.keys.writeKey?.epoch == 1)
    }

    @Test func passphraseSlotOverTheLimitsIsReportedWhenItIsTheOnlyWayIn() throws {
        let v = KeyringVault(label: "kdf limits")
        // A slot no writer of this library would make (the builder refuses
        // ops 9), put together by hand.
        let r = SeededRandom(label: "hostile slot")
        let hostile = KeySlot.passphrase(salt: r.bytes(16), opsLimit: 9, memLimitBytes: 8192, publicKey: r.bytes(32), box: r.bytes(100))
        try v.create([(v.epoch1, v.body(v.epoch1, slots: [hostile]))])
        #expect(v.unlockError(.passphrase(passphrase("anything"))) == .kdfLimitsExceeded(opsLimit: 9, memLimitBytes: 8192))
        // Other credentials ignore the slot.
        #expect(v.unlockError(.recoveryKey(v.recovery)) == .wrongRecoveryKey)
    }

    @Test func passphraseSlotOverTheLimitsIsSkippedWhenAnotherOpens() throws {
        let v = KeyringVault(label: "kdf limits mixed")
        let r = SeededRandom(label: "hostile slot")
        let hostile = KeySlot.passphrase(salt: r.bytes(16), opsLimit: 1, memLimitBytes: (1 << 30) + 1, publicKey: r.bytes(32), box: r.bytes(100))
        let good = try SlotCrypto.passphraseSlot(
            for: v.epoch1, passphrase: passphrase("pw"), opsLimit: tinyOps, memLimitBytes: tinyMem, vaultID: v.vaultID, random: v.random)
        try v.create([(v.epoch1, v.body(v.epoch1, slots: [hostile, good]))])
        let unlocked = try v.unlock(.passphrase(passphrase("pw")))
        #expect(unlocked.keyrings.map(\.isTrusted) == [true])
        // A warning at the keyring that holds the slot (Spec/format.md §8.5).
        #expect(unlocked.issues == [.kdfLimitsExceededInKeyring(unlocked.keyrings[0].location, opsLimit: 1, memLimitBytes: (1 << 30) + 1)])
        #expect(unlocked.issues.allSatisfy { $0.isWarning })
        #expect(unlocked.issues.map(\.code) == ["kdf_limits_exceeded"])
        #expect(v.unlockError(.passphrase(passphrase("wrong"))) == .kdfLimitsExceeded(opsLimit: 1, memLimitBytes: (1 << 30) + 1))
    }

    @Test func aMalformedKeyringWrittenTwiceIsReportedOnce() throws {
        let v = KeyringVault(label: "malformed twice")
        // A keyring body whose public part lacks its epoch: both copies
        // share one id, so they are one keyring with one issue.
        let p = CBOREncoder.encode(.map(CBORMap(text: [("keyCommit", .bytes(v.random.bytes(32)))])))
        let bad = CBOREncoder.encode(.map(CBORMap(text: [("nonce", .bytes(v.random.bytes(24))), ("public", .bytes(p)), ("sealed", .bytes(v.random.bytes(40)))])))
        let badKey = EpochKey(epoch: 2, key: try SymmetricKey(using: v.random))
        try v.create([(v.epoch1, v.body(v.epoch1)), (badKey, bad), (badKey, bad)])
        let unlocked = try v.unlock(.recoveryKey(v.recovery))
        #expect(unlocked.issues.map(\.code) == ["malformed_keyring"])
        #expect(unlocked.keyrings.map(\.isTrusted) == [true])
    }

    @Test func passphraseSlotsOverTheLimitsAreReportedOncePerKeyring() throws {
        let v = KeyringVault(label: "kdf limits twice")
        let r = SeededRandom(label: "hostile slots")
        let hostile = (0..<3).map { _ in
            KeySlot.passphrase(salt: r.bytes(16), opsLimit: 9, memLimitBytes: 8192, publicKey: r.bytes(32), box: r.bytes(100))
        }
        let good = try SlotCrypto.passphraseSlot(
            for: v.epoch1, passphrase: passphrase("pw"), opsLimit: tinyOps, memLimitBytes: tinyMem, vaultID: v.vaultID, random: v.random)
        try v.create([(v.epoch1, v.body(v.epoch1, slots: hostile + [good]))])
        let unlocked = try v.unlock(.passphrase(passphrase("pw")))
        #expect(unlocked.issues == [.kdfLimitsExceededInKeyring(unlocked.keyrings[0].location, opsLimit: 9, memLimitBytes: 8192)])
    }

    @Test func memberKeyThatIsNotAPointMakesTheKeyringMalformed() throws {
        let v = KeyringVault(label: "bad point")
        var notAPoint = [UInt8](repeating: 0xff, count: 32)
        notAPoint[31] = 0x7f
        let members = [v.recoveryMember, KeyringMember(role: "device", publicKey: notAPoint, name: "Ghost", added: 1)]
        try v.create([(v.epoch1, v.body(v.epoch1, members: members))])
        #expect(v.unlockError(.recoveryKey(v.recovery))
            == .malformedKeyring(Self.genesisLocation, reason: "a member's key is not a valid Ed25519 public key"))
    }

    /// Member keys are checked once per unlock: a key that is not a point,
    /// met first in a later keyring, is still caught there.
    @Test func memberKeyThatIsNotAPointInASuccessorMakesItMalformed() throws {
        let v = KeyringVault(label: "bad point later")
        var notAPoint = [UInt8](repeating: 0xff, count: 32)
        notAPoint[31] = 0x7f
        let genesis = v.body(v.epoch1)
        let next = v.body(v.epoch2, parents: [(KeyringBuilder.id(ofBody: genesis), v.epoch1)],
                          members: [v.recoveryMember, KeyringMember(role: "device", publicKey: notAPoint, name: "Ghost", added: 1)])
        try v.create([(v.epoch1, genesis), (v.epoch2, next)])
        let unlocked = try v.unlock(.recoveryKey(v.recovery))
        #expect(unlocked.keyrings.map(\.isTrusted) == [true, false])
        #expect(unlocked.keyrings[1].problem
            == .malformedKeyring(unlocked.keyrings[1].location, reason: "a member's key is not a valid Ed25519 public key"))
    }

    /// Thirteenth review R13-2: a slot of a kind this version does not know
    /// named its member in `member` by the member's public key, in the
    /// public part, so a device code (which carries the key) found the
    /// device's slot without any key. `member` is now the member's tag under
    /// the epoch key: the raw key is refused, the tag is trusted, and the
    /// public part holds no member's key.
    @Test func escrowFreeSlotMemberIsATagUnderTheEpochKeyNotTheKey() throws {
        let kind = "hybrid-x25519-ml-kem"
        func vault(_ label: String, member: (KeyringVault) -> [UInt8]) throws -> KeyringVault {
            let v = KeyringVault(label: label)
            let future = KeySlot.unknown(
                kind: kind,
                fields: CBORMap(text: [("box", .bytes(v.random.bytes(1200))), ("kind", .text(kind)), ("member", .bytes(member(v)))]))
            let content = KeyringContent(members: [v.recoveryMember], blobKey: v.blobKey, created: 2_000, reason: "test")
            let body = try KeyringBuilder.body(
                epochKey: v.epoch1, vaultID: v.vaultID, parents: [], isEscrowFree: true, requiredSlotKinds: [kind],
                slots: [v.recoverySlot(v.epoch1), future].map { StoredSlot(slot: $0) }, vaultSalt: v.salt, content: content,
                signer: v.recoverySigner, random: v.random)
            try v.create([(v.epoch1, body)])
            return v
        }
        let raw = try vault("slot member raw key") { $0.recoverySigner.publicKey }
        #expect(raw.unlockError(.recoveryKey(raw.recovery)) == .escrowForbidden(Self.genesisLocation))
        let tagged = try vault("slot member tag") {
            $0.epoch1.slotMemberTag(vaultID: $0.vaultID, memberKey: $0.recoverySigner.publicKey, kind: kind)
        }
        let unlocked = try tagged.unlock(.recoveryKey(tagged.recovery))
        #expect(unlocked.keyrings.map(\.isTrusted) == [true])
        let publicBytes = unlocked.keyrings[0].record.publicBytes
        let key = tagged.recoverySigner.publicKey
        #expect(!(0...(publicBytes.count - key.count)).contains { Array(publicBytes[$0..<($0 + key.count)]) == key })
        #expect(unlocked.keyrings[0].record.publicPart.slots.compactMap(\.memberKey)
            == [tagged.epoch1.slotMemberTag(vaultID: tagged.vaultID, memberKey: key, kind: kind)])
    }

    /// Fourteenth review R14-4: one member's slots of two unknown kinds
    /// carried one tag, so the public part showed that they belong to one
    /// member. The tag now covers the slot's kind: two kinds give two tags,
    /// and a tag computed for the other kind names no member.
    @Test func escrowFreeSlotMemberTagCoversTheSlotKind() throws {
        let kinds = ["hybrid-x25519-ml-kem", "hybrid-x25519-hqc"]
        func vault(_ label: String, tagKinds: [String]) throws -> KeyringVault {
            let v = KeyringVault(label: label)
            let future = zip(kinds, tagKinds).map { kind, tagKind in
                KeySlot.unknown(
                    kind: kind,
                    fields: CBORMap(text: [
                        ("box", .bytes(v.random.bytes(1200))), ("kind", .text(kind)),
                        ("member", .bytes(v.epoch1.slotMemberTag(vaultID: v.vaultID, memberKey: v.recoverySigner.publicKey, kind: tagKind))),
                    ]))
            }
            let content = KeyringContent(members: [v.recoveryMember], blobKey: v.blobKey, created: 2_000, reason: "test")
            let body = try KeyringBuilder.body(
                epochKey: v.epoch1, vaultID: v.vaultID, parents: [], isEscrowFree: true, requiredSlotKinds: kinds,
                slots: ([v.recoverySlot(v.epoch1)] + future).map { StoredSlot(slot: $0) }, vaultSalt: v.salt, content: content,
                signer: v.recoverySigner, random: v.random)
            try v.create([(v.epoch1, body)])
            return v
        }
        let own = try vault("slot member tag per kind", tagKinds: kinds)
        let unlocked = try own.unlock(.recoveryKey(own.recovery))
        #expect(unlocked.keyrings.map(\.isTrusted) == [true])
        let tags = unlocked.keyrings[0].record.publicPart.slots.compactMap(\.memberKey)
        #expect(tags.count == 2 && tags[0] != tags[1])
        let key = own.recoverySigner.publicKey
        #expect(tags == kinds.map { own.epoch1.slotMemberTag(vaultID: own.vaultID, memberKey: key, kind: $0) })
        let shared = try vault("slot member tag of another kind", tagKinds: [kinds[0], kinds[0]])
        #expect(shared.unlockError(.recoveryKey(shared.recovery)) == .escrowForbidden(Self.genesisLocation))
    }

    @Test func slotThatOpensButDoesNotOpenTheSealedPart() throws {
        let v = KeyringVault(label: "mismatched slot")
        let other = EpochKey(epoch: 1, key: v.epoch2.key)
        try v.create([(v.epoch1, v.body(v.epoch1, slots: [v.recoverySlot(other)]))])
        // The key commitment catches it before any decryption.
        #expect(v.unlockError(.recoveryKey(v.recovery))
            == .malformedKeyring(Self.genesisLocation, reason: "a slot opened a key that is not the one its key commitment names"))
    }

    /// Decoy passphrase slots cost at most eight Argon2id runs, four in
    /// each of the budget's two passes (`Spec/keys.md §2.3`).
    @Test func passphraseDerivationsAreBudgeted() throws {
        func decoys(_ v: KeyringVault) throws -> [KeySlot] {
            try (0..<8).map { i in
                try SlotCrypto.passphraseSlot(
                    for: v.epoch1, passphrase: passphrase("decoy \(i)"), opsLimit: tinyOps, memLimitBytes: tinyMem, vaultID: v.vaultID, random: v.random)
            }
        }
        let v = KeyringVault(label: "kdf budget")
        let real = try SlotCrypto.passphraseSlot(
            for: v.epoch1, passphrase: passphrase("pw"), opsLimit: tinyOps, memLimitBytes: tinyMem, vaultID: v.vaultID, random: v.random)
        // Behind eight decoys in its keyring, the real slot is never tried:
        // the first pass runs the first four, the second the next four
        // (before the second pass, four were enough).
        try v.create([(v.epoch1, v.body(v.epoch1, slots: try decoys(v) + [real, v.recoverySlot(v.epoch1)]))])
        #expect(v.unlockError(.passphrase(passphrase("pw"))) == .kdfBudgetExceeded(untried: 1))
        #expect(KeyError.kdfBudgetExceeded(untried: 1).code == "kdf_limits_exceeded")
        // The recovery key still opens it.
        #expect(try v.unlock(.recoveryKey(v.recovery)).keys.writeKey?.epoch == 1)
        // In front of them, it opens on the first run.
        let w = KeyringVault(label: "kdf budget first")
        let first = try SlotCrypto.passphraseSlot(
            for: w.epoch1, passphrase: passphrase("pw"), opsLimit: tinyOps, memLimitBytes: tinyMem, vaultID: w.vaultID, random: w.random)
        try w.create([(w.epoch1, w.body(w.epoch1, slots: [first] + (try decoys(w))))])
        #expect(try w.unlock(.passphrase(passphrase("pw"))).keys.writeKey?.epoch == 1)
    }

    @Test func noKeyring() throws {
        let v = KeyringVault(label: "no keyring")
        try v.create([], extra: [[1, 2, 3]])
        #expect(v.unlockError(.recoveryKey(v.recovery)) == .noKeyring)
    }

    @Test func damagedKeyringIsNotUsed() throws {
        let v = KeyringVault(label: "damaged keyring")
        let body = v.body(v.epoch1)
        try v.create([(v.epoch1, body)])
        // Flip a byte inside the keyring body (not its header or checksum).
        let file = try SystemFileAccess(path: v.path)
        try file.flip(at: 64 + 12 + 10)
        let vault = try VaultFile(path: v.path)
        #expect(vault.structure.frames[0].checksumIntact == false)
        // The damaged keyring held the only slot: that is reported, not a wrong key.
        #expect(v.unlockError(.recoveryKey(v.recovery)) == .malformedKeyring(Self.genesisLocation, reason: "its body hash does not match (damaged)"))
    }

    /// Format 2 carries each parent's key in its child, so any reader of the
    /// newest keyring can check the chain back to the root.
    @Test func escrowCustodianChecksTheChainThroughParentKeys() throws {
        let v = KeyringVault(label: "escrow parent keys")
        let escrow = try X25519.KeyPair(seed: secure(SeededRandom(label: "custodian").bytes(32)))
        let genesis = v.body(v.epoch1)
        let next = v.body(v.epoch2, parents: [(KeyringBuilder.id(ofBody: genesis), v.epoch1)], slots: [
            v.recoverySlot(v.epoch2),
            try SlotCrypto.escrowSlot(for: v.epoch2, escrowPublicKey: escrow.publicKey, vaultID: v.vaultID, random: v.random),
        ])
        try v.create([(v.epoch1, genesis), (v.epoch2, next)])
        let unlocked = try v.unlock(.escrow(escrow))
        #expect(unlocked.keyrings.map(\.isTrusted) == [true, true])
        #expect(unlocked.keys.key(commitment: v.epoch1.commitment)?.epoch == 1)
        #expect(unlocked.keys.writeKey?.epoch == 2)
    }

    @Test func keyringFromAnotherVaultDoesNotOpen() throws {
        let a = KeyringVault(label: "vault a")
        let b = KeyringVault(label: "vault b")
        // b's keyring body, with a's keys and slots, moved into b's file: the
        // slots and the sealed part are bound to a's vault id.
        try b.create([(a.epoch1, a.body(a.epoch1))])
        #expect(b.unlockError(.recoveryKey(a.recovery)) == .wrongRecoveryKey)
        // A raw epoch key that the keyring's commitment names but that does
        // not open it (it is bound to another vault id) finds it malformed.
        #expect(b.unlockError(.epochKey(a.epoch1))?.code == "malformed_keyring")
    }
}
