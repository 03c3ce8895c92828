public import QuireCrypto
public import QuireFormat

/// A change to who can open a vault (`Spec/keys.md §6`).
public enum KeyChange: Sendable {
    /// A new epoch key for the same people (after a suspected leak, say).
    case rotate
    /// Enroll the device with this Ed25519 public key (from its device code)
    /// under `name`. Same epoch: the device reads the whole history.
    case enroll(publicKey: [UInt8], name: String)
    /// Remove the device with this public key: a new epoch without it, and
    /// the device listed as removed for good.
    case remove(publicKey: [UInt8])
    /// Add a passphrase (UTF-8, NFC) with this Argon2id cost. Same epoch.
    case setPassphrase(SecureBytes, opsLimit: UInt64, memLimitBytes: UInt64)
    /// Replace the passphrase: a new epoch; the old one is retired.
    case changePassphrase(SecureBytes, opsLimit: UInt64, memLimitBytes: UInt64)
    /// Remove the passphrase: a new epoch; it is retired.
    case removePassphrase
    /// Wrap the keys to an escrow custodian (standard mode only). Replacing
    /// an escrow key starts a new epoch and retires the old key.
    case setEscrow(EscrowRecipient)
    /// Turn on escrow-free mode for good: a new epoch with no escrow slot.
    /// Needs a recovery method the user holds: the recovery key (signing, or
    /// given here as proof) or a second enrolled device.
    case enableEscrowFree(recoveryProof: RecoveryKey?)
    /// A rotation made by a compaction that seals every record again under
    /// the new epoch (`Spec/merge.md §6`), so that keys of earlier epochs
    /// open nothing in the new file. Like ``rotate`` it carries the earlier
    /// keys, sealed under the new one — only current readers hold those, and
    /// a device enrolled later needs them to check the older keyrings.
    case rekey

    /// The `reason` the new keyring records (`Spec/records.md §6.3`).
    public var reason: String {
        switch self {
        case .rotate: "rotate"
        case .enroll: "enroll"
        case .remove: "remove"
        case .setPassphrase, .changePassphrase, .removePassphrase: "passphrase"
        case .setEscrow: "escrow"
        case .enableEscrowFree: "escrow-free"
        case .rekey: "rekey"
        }
    }
}

/// A keyring ready to append: what a key operation produced.
public struct KeyringProposal: Sendable {
    /// The epoch it defines.
    public let epoch: UInt16
    /// The keyring body (without its trailer).
    public let body: [UInt8]
    /// Its epoch key.
    public let epochKey: EpochKey
    /// True when it starts a new epoch.
    public let isNewEpoch: Bool
    /// The keyring id it will have.
    public var id: KeyringID { KeyringBuilder.id(ofBody: body) }
}

/// Builds the keyrings that create a vault and change its keys
/// (`Spec/keys.md §6`). Pure: nothing is written here.
public enum KeyOperations {
    /// Settings for a new vault's first keyring.
    public struct RootSetup: Sendable {
        /// The recovery key (its public half becomes a member).
        public var recoveryKey: RecoveryKey
        /// The creating device, if a device creates the vault; otherwise the
        /// recovery key signs the first keyring.
        public var device: DeviceIdentity?
        /// An optional passphrase (UTF-8, NFC, in guarded memory) and its Argon2id cost.
        public var passphrase: (SecureBytes, opsLimit: UInt64, memLimitBytes: UInt64)?
        /// An escrow custodian (standard mode only).
        public var escrow: EscrowRecipient?
        /// Escrow-free from the start.
        public var isEscrowFree: Bool
        /// Milliseconds since the Unix epoch, UTC.
        public var now: Int64

        /// Settings with everything optional off.
        public init(recoveryKey: RecoveryKey, device: DeviceIdentity?, now: Int64) {
            self.recoveryKey = recoveryKey
            self.device = device
            passphrase = nil
            escrow = nil
            isEscrowFree = false
            self.now = now
        }
    }

    /// The first keyring of a new vault, and the vault id it derives
    /// (`Spec/format.md §8.4` rule 4).
    ///
    /// - Throws: ``KeyError/escrowRefused`` for an escrow key in escrow-free
    ///   mode; ``KeyError/kdfLimitsExceeded(opsLimit:memLimitBytes:)`` for a
    ///   passphrase cost outside the limits; ``KeyError/operationRefused(reason:)``.
    public static func root(_ setup: RootSetup, random: any RandomSource) throws(KeyError) -> (vaultID: VaultID, keyring: KeyringProposal, blobKey: SymmetricKey) {
        if setup.isEscrowFree && setup.escrow != nil { throw .escrowRefused }
        let epochKey: EpochKey, blobKey: SymmetricKey, recoverySigner: Ed25519.KeyPair
        do {
            epochKey = EpochKey(epoch: 1, key: try SymmetricKey(using: random))
            blobKey = try SymmetricKey(using: random)
            recoverySigner = try setup.recoveryKey.signingKeyPair()
        } catch {
            throw .operationRefused(reason: "\(error)")
        }
        let signer = setup.device?.keyPair ?? recoverySigner
        let vaultSalt = random.bytes(16)
        let vaultID = rootVaultID(signer: signer.publicKey, salt: vaultSalt)
        var members = [KeyringMember(role: "recovery", publicKey: recoverySigner.publicKey, name: "Recovery key", added: setup.now)]
        if let device = setup.device {
            members.append(KeyringMember(role: "device", publicKey: device.publicKey, name: device.name, added: setup.now))
        }
        var slots: [StoredSlot] = []
        for m in members {
            if let slot = try memberSlot(m, key: epochKey, vaultID: vaultID, random: random) { slots.append(StoredSlot(slot: slot)) }
        }
        if let (passphrase, ops, mem) = setup.passphrase {
            slots.append(StoredSlot(slot: try SlotCrypto.passphraseSlot(
                for: epochKey, passphrase: passphrase, opsLimit: ops, memLimitBytes: mem, vaultID: vaultID, random: random)))
        }
        if let escrow = setup.escrow {
            slots.append(StoredSlot(slot: try SlotCrypto.escrowSlot(for: epochKey, escrowPublicKey: escrow.publicKey, vaultID: vaultID, random: random)))
        }
        let content = KeyringContent(
            members: members, escrow: setup.escrow.map { [$0] } ?? [], blobKey: blobKey, created: setup.now, reason: "create")
        let body = KeyringBuilder.body(
            epochKey: epochKey, vaultID: vaultID,
            publicPart: KeyringPublic(parents: [], isEscrowFree: setup.isEscrowFree, slotEntries: slots, vaultSalt: vaultSalt),
            content: content, signer: signer, random: random)
        return (vaultID, KeyringProposal(epoch: 1, body: body, epochKey: epochKey, isNewEpoch: true), blobKey)
    }

    /// The keyring that makes `change` to `state`, signed by `signer`.
    ///
    /// A change that only adds a reader (enroll, a first passphrase, a first
    /// escrow key) keeps the epoch and copies the head's slots; every other
    /// change, and any change while the vault has several heads, starts a
    /// new epoch whose keyring names every head as a parent, wraps the new
    /// key to everyone who remains and carries every earlier key.
    ///
    /// - Parameter now: milliseconds since the Unix epoch, UTC.
    /// - Throws: ``KeyError/operationRefused(reason:)`` naming what is wrong
    ///   (not a member, already enrolled, removed before, no passphrase…);
    ///   ``KeyError/escrowRefused`` in an escrow-free vault;
    ///   ``KeyError/kdfLimitsExceeded(opsLimit:memLimitBytes:)``.
    public static func keyring(
        for change: KeyChange, state: KeyState, signer: Ed25519.KeyPair, now: Int64, random: any RandomSource
    ) throws(KeyError) -> KeyringProposal {
        guard let signerMember = state.member(withKey: signer.publicKey) else {
            throw .operationRefused(reason: "only an enrolled device or the recovery key can change the keys, and this key is neither")
        }
        var members = state.members
        var removed = state.removed
        var escrow = state.escrow
        var retired = state.retired
        var passphrases = state.passphrases
        var isEscrowFree = state.isEscrowFree
        var newEpoch = state.heads.count > 1
        var added: [KeySlot] = []
        var freshPassphrase: (SecureBytes, UInt64, UInt64)?

        func retire(_ key: [UInt8]) { if !retired.contains(key) { retired.append(key) } }
        func passphraseKeys() -> [[UInt8]] { passphrases.compactMap { if case let .passphrase(_, _, _, pk, _) = $0.slot { pk } else { nil } } }

        switch change {
        case .rotate, .rekey:
            newEpoch = true
        case let .enroll(publicKey, name):
            try DeviceIdentity.validateName(name)
            guard (try? Ed25519.agreementPublicKey(from: publicKey)) != nil else {
                throw .operationRefused(reason: "that device key is not a valid public key")
            }
            if let existing = state.member(withKey: publicKey) {
                throw .operationRefused(reason: "that device is already enrolled, as \"\(existing.name)\"")
            }
            if state.removed.contains(where: { $0.publicKey == publicKey }) {
                throw .operationRefused(reason: "that device key was removed from this vault and cannot come back; on that device, make a new device key and enroll it")
            }
            if let clash = members.first(where: { $0.name.lowercased() == name.lowercased() }) {
                throw .operationRefused(reason: "a member is already named \"\(clash.name)\"; choose another name")
            }
            let member = KeyringMember(role: "device", publicKey: publicKey, name: name, added: now)
            members.append(member)
            if let slot = try memberSlot(member, key: state.heads[0].epochKey!, vaultID: state.vaultID, random: random) { added.append(slot) }
        case let .remove(publicKey):
            guard let member = state.member(withKey: publicKey) else {
                throw .operationRefused(reason: "that device is not enrolled in this vault")
            }
            guard member.role == "device" else { throw .operationRefused(reason: "the recovery key cannot be removed") }
            guard publicKey != signer.publicKey else {
                throw .operationRefused(reason: "a device cannot remove itself; remove it from another device or with the recovery key")
            }
            members.removeAll { $0.publicKey == publicKey }
            removed.append(member)
            newEpoch = true
        case let .setPassphrase(passphrase, ops, mem):
            guard passphrases.isEmpty else { throw .operationRefused(reason: "a passphrase is already set; change it instead") }
            try SlotCrypto.checkLimits(opsLimit: ops, memLimitBytes: mem)
            freshPassphrase = (passphrase, ops, mem)
        case let .changePassphrase(passphrase, ops, mem):
            guard !passphrases.isEmpty else { throw .operationRefused(reason: "no passphrase is set; set one first") }
            try SlotCrypto.checkLimits(opsLimit: ops, memLimitBytes: mem)
            for k in passphraseKeys() { retire(k) }
            passphrases = []
            freshPassphrase = (passphrase, ops, mem)
            newEpoch = true
        case .removePassphrase:
            guard !passphrases.isEmpty else { throw .operationRefused(reason: "no passphrase is set") }
            for k in passphraseKeys() { retire(k) }
            passphrases = []
            newEpoch = true
        case let .setEscrow(recipient):
            guard !isEscrowFree else { throw .escrowRefused }
            if !recipient.label.isEmpty {
                do throws(KeyError) { try DeviceIdentity.validateName(recipient.label) } catch {
                    let d = error.description, p = "a device name "
                    throw .operationRefused(reason: "an escrow label " + (d.hasPrefix(p) ? String(d.dropFirst(p.count)) : d))
                }
            }
            guard recipient.publicKey.count == X25519.publicKeyByteCount else {
                throw .operationRefused(reason: "an escrow key is a \(X25519.publicKeyByteCount)-byte X25519 public key; this one has \(recipient.publicKey.count) bytes")
            }
            guard !retired.contains(recipient.publicKey) else {
                throw .operationRefused(reason: "that escrow key was taken out of use in this vault; ask the custodian for a new one")
            }
            if escrow.contains(where: { $0.publicKey == recipient.publicKey }) {
                throw .operationRefused(reason: "that escrow key is already set")
            }
            if !escrow.isEmpty {
                for e in escrow { retire(e.publicKey) }
                escrow = []
                newEpoch = true
            }
            escrow.append(recipient)
            if !newEpoch {
                added.append(try SlotCrypto.escrowSlot(for: state.heads[0].epochKey!, escrowPublicKey: recipient.publicKey, vaultID: state.vaultID, random: random))
            }
        case let .enableEscrowFree(proof):
            guard !isEscrowFree else { throw .operationRefused(reason: "the vault is already escrow-free") }
            let recovery = state.recoveryMember
            var holdsRecovery = signerMember.role == "recovery"
            if let proof {
                let proofKey = try proof.publicKey()
                guard let recovery, proofKey == recovery.publicKey else {
                    throw .operationRefused(reason: "that recovery key is not this vault's; escrow-free mode needs the vault's own recovery key or a second device")
                }
                holdsRecovery = true
            }
            guard holdsRecovery || state.devices.count >= 2 else {
                throw .operationRefused(reason: "escrow-free mode removes the escrow key, so you need a way back in that you hold: confirm the recovery key, or enroll a second device first")
            }
            for e in escrow { retire(e.publicKey) }
            escrow = []
            isEscrowFree = true
            newEpoch = true
        }

        let epochKey: EpochKey
        var slots: [StoredSlot]
        var history: [HistoricKey]
        if newEpoch {
            guard state.epoch < UInt16.max else {
                throw .operationRefused(reason: "the vault has used all 65,535 epochs; compact it with --rekey first")
            }
            do { epochKey = EpochKey(epoch: state.epoch + 1, key: try SymmetricKey(using: random)) } catch {
                throw .operationRefused(reason: "\(error)")
            }
            slots = []
            for m in members {
                if let slot = try memberSlot(m, key: epochKey, vaultID: state.vaultID, random: random) { slots.append(StoredSlot(slot: slot)) }
            }
            for p in passphrases {
                slots.append(StoredSlot(slot: try SlotCrypto.passphraseSlot(for: epochKey, rewrapping: p.slot, vaultID: state.vaultID, random: random), unknownFields: p.unknownFields))
            }
            for e in escrow {
                slots.append(StoredSlot(slot: try SlotCrypto.escrowSlot(for: epochKey, escrowPublicKey: e.publicKey, vaultID: state.vaultID, random: random)))
            }
            history = []
            for epoch in state.keys.epochs.keys.sorted() {
                for k in state.keys.keys(for: epoch) { history.append(HistoricKey(epoch: epoch, key: k.key)) }
            }
        } else {
            let head = state.heads[0]
            epochKey = head.epochKey!
            slots = head.record.publicPart.slotEntries
            for s in added { slots.append(StoredSlot(slot: s)) }
            history = head.content!.history
        }
        if let (passphrase, ops, mem) = freshPassphrase {
            slots.append(StoredSlot(slot: try SlotCrypto.passphraseSlot(
                for: epochKey, passphrase: passphrase, opsLimit: ops, memLimitBytes: mem, vaultID: state.vaultID, random: random)))
        }
        guard state.heads.count <= Limits.maxParentCount else {
            throw .operationRefused(reason: "the vault has \(state.heads.count) concurrent keyrings, more than one keyring may join (\(Limits.maxParentCount)); merge them in smaller steps")
        }
        guard slots.count <= Limits.maxSlotsPerKeyring, members.count <= Limits.maxKeyringListCount, escrow.count <= Limits.maxKeyringListCount,
            removed.count <= Limits.maxKeyringListCount, retired.count <= Limits.maxKeyringListCount,
            history.count <= Limits.maxKeyringListCount
        else {
            throw .operationRefused(reason: "the keyring would exceed its limits (\(Limits.maxSlotsPerKeyring) slots, \(Limits.maxKeyringListCount) list entries)")
        }
        let content = KeyringContent(
            members: members, removed: removed, escrow: escrow, history: history, retired: retired, blobKey: state.blobKey,
            created: now, reason: change.reason, unknownFields: state.heads[0].content!.unknownFields)
        let publicPart = KeyringPublic(
            parents: state.heads.map(\.id), isEscrowFree: isEscrowFree, slotEntries: slots,
            unknownFields: state.heads[0].record.publicPart.unknownFields)
        let body = KeyringBuilder.body(
            epochKey: epochKey, vaultID: state.vaultID, publicPart: publicPart, content: content, signer: signer, random: random)
        return KeyringProposal(epoch: epochKey.epoch, body: body, epochKey: epochKey, isNewEpoch: newEpoch)
    }

    /// The slot for a member: a device slot, the recovery slot, or none for
    /// a role this version does not know.
    static func memberSlot(_ member: KeyringMember, key: EpochKey, vaultID: VaultID, random: any RandomSource) throws(KeyError) -> KeySlot? {
        switch member.role {
        case "recovery": try SlotCrypto.recoverySlot(for: key, recoveryPublicKey: member.publicKey, vaultID: vaultID, random: random)
        case "device": try SlotCrypto.deviceSlot(for: key, devicePublicKey: member.publicKey, vaultID: vaultID, random: random)
        default: nil
        }
    }
}
