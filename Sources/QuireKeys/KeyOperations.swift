@_spi(Crypto) public import QuireCrypto
@_spi(Format) public import QuireFormat

/// A change to who holds the vault's keys (`Spec/keys.md §6`).
@_spi(Format) public enum KeyChange: Sendable {
    /// A new epoch for the same readers (also joins concurrent heads).
    case rotate
    /// Enroll a device by its Ed25519 public key, under a name.
    case enroll(publicKey: [UInt8], name: String)
    /// Remove the device member with this Ed25519 public key: a new epoch
    /// without it, whose parents leave out its branch.
    case remove(publicKey: [UInt8])
    /// Set the first passphrase.
    case setPassphrase(SecureBytes, opsLimit: UInt64, memLimitBytes: UInt64)
    /// Replace the passphrase in use (new epoch).
    case changePassphrase(SecureBytes, opsLimit: UInt64, memLimitBytes: UInt64)
    /// Remove the passphrase (new epoch).
    case removePassphrase
    /// Set or replace the escrow key.
    case setEscrow(EscrowRecipient)
    /// Turn on escrow-free mode, for good.
    case enableEscrowFree(recoveryProof: RecoveryKey?)
    /// A rotation written by compaction with a rekey: a fresh blob key too.
    case rekey
    /// Replace the recovery key with the one whose recovery signing public
    /// key is given; the old recovery key opens no later epoch.
    case replaceRecoveryKey(newRecoveryPublicKey: [UInt8])
    /// Remove several device members at once, signed by the recovery key
    /// (a *lockdown*, `Spec/keys.md §6.3`): a new epoch without them, whose
    /// parents leave out every keyring they signed. The recovery key may
    /// sign it even after a device replaced it, from a keyring in which it
    /// is still the recovery member (a fork).
    case lockdown(publicKeys: [[UInt8]])

    /// The `reason` a keyring made by this change records.
    public var reason: String {
        switch self {
        case .rotate: "rotate"
        case .enroll: "enroll"
        case .remove: "remove"
        case .lockdown(let keys): keys.count == 1 ? "remove" : "lockdown"
        case .setPassphrase, .changePassphrase, .removePassphrase: "passphrase"
        case .setEscrow: "escrow"
        case .enableEscrowFree: "escrow-free"
        case .rekey: "rekey"
        case .replaceRecoveryKey: "recovery"
        }
    }
}

/// One keyring an operation writes: its body, its epoch key, whether it
/// starts a new epoch.
package struct KeyringProposal: Sendable {
    /// The epoch it defines.
    public let epoch: UInt32
    /// Its body without the body hash.
    public let body: [UInt8]
    /// Its epoch key (with its blob key).
    public let epochKey: EpochKey
    /// True when it starts an epoch.
    public let isNewEpoch: Bool
    /// Its id.
    public var id: KeyringID { KeyringBuilder.id(ofBody: body) }
}

/// Builds the keyrings of the key operations (`Spec/keys.md §6`).
package enum KeyOperations {
    /// What a new vault starts with (`Spec/keys.md §6.1`).
    public struct RootSetup: Sendable {
        /// The new recovery key.
        public var recoveryKey: RecoveryKey
        /// The creating device, if any (otherwise the recovery key signs).
        public var device: DeviceIdentity?
        /// An optional passphrase and its Argon2id cost.
        public var passphrase: (SecureBytes, opsLimit: UInt64, memLimitBytes: UInt64)?
        /// An optional escrow recipient.
        public var escrow: EscrowRecipient?
        /// Escrow-free mode from the start.
        public var isEscrowFree: Bool
        /// Creation time, milliseconds since the Unix epoch, UTC.
        public var now: Int64

        /// A setup with no passphrase and no escrow.
        public init(recoveryKey: RecoveryKey, device: DeviceIdentity?, now: Int64) {
            self.recoveryKey = recoveryKey
            self.device = device
            passphrase = nil
            escrow = nil
            isEscrowFree = false
            self.now = now
        }
    }

    /// The root keyring of a new vault and the vault id it derives.
    ///
    /// - Throws: ``KeyError/escrowRefused`` (escrow key with escrow-free
    ///   mode), ``KeyError/kdfLimitsExceeded(opsLimit:memLimitBytes:)``,
    ///   ``KeyError/operationRefused(reason:)``.
    public static func root(_ setup: RootSetup, random: any RandomSource) throws(KeyError) -> (vaultID: VaultID, keyring: KeyringProposal) {
        if setup.isEscrowFree && setup.escrow != nil { throw .escrowRefused }
        let key: SymmetricKey
        let blobKey: SymmetricKey
        let recoverySigner: Ed25519.KeyPair
        do {
            key = try SymmetricKey(using: random)
            blobKey = try SymmetricKey(using: random)
            recoverySigner = try setup.recoveryKey.signingKeyPair()
        } catch {
            throw .operationRefused(reason: "\(error)")
        }
        let epochKey = EpochKey(epoch: 1, key: key, blobKey: blobKey)
        let signer = setup.device?.keyPair ?? recoverySigner
        let vaultSalt = random.bytes(16)
        let vaultID = rootVaultID(signer: signer.publicKey, keyCommit: epochKey.commitment, salt: vaultSalt)
        var members = [KeyringMember(role: "recovery", publicKey: recoverySigner.publicKey, name: "Recovery key", added: setup.now)]
        if let device = setup.device {
            members.append(KeyringMember(role: "device", publicKey: device.publicKey, name: device.name, added: setup.now))
        }
        var slots: [StoredSlot] = []
        for m in members {
            if let slot = try memberSlot(m, key: epochKey, vaultID: vaultID, random: random) { slots.append(StoredSlot(slot: slot)) }
        }
        if let (passphrase, ops, mem) = setup.passphrase {
            try SlotCrypto.checkWriterCost(opsLimit: ops, memLimitBytes: mem)
            slots.append(
                StoredSlot(
                    slot: try SlotCrypto.passphraseSlot(
                        for: epochKey, passphrase: passphrase, opsLimit: ops, memLimitBytes: mem, vaultID: vaultID, random: random)))
        }
        if let escrow = setup.escrow {
            slots.append(
                StoredSlot(
                    slot: try SlotCrypto.escrowSlot(for: epochKey, escrowPublicKey: escrow.publicKey, vaultID: vaultID, random: random)))
        }
        let content = KeyringContent(
            members: members, escrow: setup.escrow.map { [$0] } ?? [], blobKey: blobKey, created: setup.now, reason: "create")
        let body = try KeyringBuilder.body(
            epochKey: epochKey, vaultID: vaultID, parents: [], isEscrowFree: setup.isEscrowFree, slots: slots, vaultSalt: vaultSalt,
            content: content, signer: signer, random: random)
        return (vaultID, KeyringProposal(epoch: 1, body: body, epochKey: epochKey, isNewEpoch: true))
    }

    /// The keyrings that make `change`, signed by `signer`, in the order to
    /// append them: join keyrings first when more than 64 heads must be
    /// joined, then the operation's keyring.
    ///
    /// - Parameter replacement: for a device's removal (`.remove` signed by
    ///   a device) of a member that answers for a replacement of the
    ///   recovery key (``recoveryReplacements(by:in:)``), whose it was:
    ///   `.mine` (the default) builds on the current heads and keeps it;
    ///   `.notMine` builds on keyrings from before it, so that it is cut
    ///   (`Spec/keys.md §6.3`). Ignored by every other change.
    /// - Throws: ``KeyError/operationRefused(reason:)`` for anything keys.md
    ///   §6 refuses (the signer is not a member, a removed or enrolled key,
    ///   the recovery member removed, a required slot kind or key type this
    ///   writer does not know…), ``KeyError/escrowRefused``,
    ///   ``KeyError/kdfLimitsExceeded(opsLimit:memLimitBytes:)``.
    /// - Parameter keepRecoveryKey: when the heads hold several recovery
    ///   members (concurrent replacements, `Spec/keys.md §6.9`), the public
    ///   key of the one the user holds, which the join keeps; without it
    ///   (or with a key that is none of them) a change that starts an epoch
    ///   throws ``KeyError/recoveryKeyChoiceNeeded(_:)`` listing them.
    /// - Parameter writersByEpochKey: for a removal by the recovery key, the
    ///   members that attested a verified commit, by the key commitment of
    ///   the epoch key the commit is sealed under: a keyring a target signed
    ///   that starts an epoch another current member wrote under stays in
    ///   the removal's ancestry, so that its records stay readable
    ///   (`Spec/keys.md §6.3`). Ignored by every other change.
    /// - Parameter keepingEnrolled: for a removal by the recovery key, the
    ///   devices (Ed25519 keys) that only the targets, or devices they
    ///   enrolled, enrolled and that the user vouches for
    ///   (`enrolledBy(_:in:)` lists them): the removal keeps them; it
    ///   removes the others with the targets (`Spec/keys.md §6.3`). Ignored
    ///   by every other change.
    public static func keyrings(
        for change: KeyChange, state fullState: KeyState, signer: Ed25519.KeyPair, now: Int64, random: any RandomSource,
        replacement: RecoveryReplacementOwner = .mine, keepRecoveryKey: [UInt8]? = nil,
        writersByEpochKey: [[UInt8]: Set<[UInt8]>] = [:], keepingEnrolled: Set<[UInt8]> = []
    ) throws(KeyError) -> [KeyringProposal] {
        // A keyring listing a critical extension may be signed only by a
        // writer that understands it, and this version understands none
        // (Spec/format.md §8.2, `critical`; the heads carry every name of
        // their ancestors, rule 5.6) — unless the recovery key signs:
        // it drops the names (rule 5.6 does not bind it), so that a name
        // nobody understands cannot block the thief's removal (twelfth
        // review R12-1; ``droppedProtections(in:signer:)`` lists them).
        if fullState.member(withKey: signer.publicKey)?.role == "device",
            let name = fullState.heads.lazy.flatMap(\.record.publicPart.criticalExtensions).first
        {
            throw .operationRefused(
                reason:
                    "this vault uses the extension \"\(name)\", which this version of Quire does not understand, so it cannot change the keys; update Quire"
            )
        }
        // A removal by the recovery key chooses its own parents, and may be
        // signed by a recovery key that a device replaced (Spec/keys.md §6.3).
        switch change {
        case .lockdown(let keys):
            guard fullState.member(withKey: signer.publicKey)?.role != "device" else {
                throw .operationRefused(reason: "only the recovery key removes several members at once")
            }
            return try recoveryRemoval(
                of: keys, state: fullState, signer: signer, now: now, random: random, writers: writersByEpochKey, keeping: keepingEnrolled)
        case .remove(let key) where fullState.member(withKey: signer.publicKey)?.role != "device":
            return try recoveryRemoval(
                of: [key], state: fullState, signer: signer, now: now, random: random, writers: writersByEpochKey, keeping: keepingEnrolled)
        case .remove(let key) where replacement == .notMine && !recoveryReplacements(by: key, in: fullState).isEmpty:
            return try removalOverReplacement(of: key, state: fullState, signer: signer, now: now, random: random)
        default:
            return try build(change, state: fullState, signer: signer, now: now, random: random, keepRecoveryKey: keepRecoveryKey)
        }
    }

    /// The key a commit holding `proposals` is made under (`Spec/format.md
    /// §9.2`, seventh review R7-3): the write key of the state they make —
    /// of the proposals that start an epoch above `writeKey`'s, the key of
    /// the highest epoch (the smallest key commitment among equals) — or nil
    /// when none does (the commit keeps `writeKey`).
    /// A change that removes members: ``commitPlacement(for:state:writeKey:)``.
    package static func commitKey(for proposals: [KeyringProposal], writeKey: EpochKey) -> EpochKey? {
        let newer = proposals.map(\.epochKey).filter { $0.epoch > writeKey.epoch }
        return newer.min { a, b in KeySet.precedesAsWriteKey((a.epoch, a.commitment), (b.epoch, b.commitment)) }
    }

    /// Where the commit of a key change goes (`Spec/format.md §9.2`,
    /// `Spec/keys.md §6.3`): the key it is made under and the keys the
    /// state after it holds.
    package struct CommitPlacement: Sendable {
        /// The write key of the key state after the change, when it is not
        /// the write key before it; nil: the commit keeps the write key.
        package let commitKey: EpochKey?
        /// The keys of the keyrings trusted after the change, each at the
        /// highest epoch one of them claims for it (`Spec/format.md §5.1`),
        /// when the change cuts or restores keyrings; nil when it does
        /// neither (the commit extends the chain tip, `Spec/format.md §9.1`).
        /// A keyring it restores (one only an answer cut) was not trusted
        /// before it, so its key is taken from the keyring, not from the
        /// keys held before (review 34b G1).
        package let keptKeys: KeySet?
        /// The members the change removes.
        package let removed: Set<[UInt8]>
    }

    /// The placement of the commit that holds `proposals`, the keyrings of
    /// one change to `state`, whose write key is `writeKey`.
    ///
    /// The commit is made under the write key of the state after it
    /// (`Spec/format.md §9.2`): its heads are the proposals and the keyrings
    /// of `state` the change neither builds on nor cuts. A change that
    /// removes members cuts the trusted keyrings they signed outside its
    /// ancestry, and every keyring built on one (`Spec/format.md §8.4` rule
    /// 6): a removal that chooses its parents — a lockdown by the recovery
    /// key, a device's removal over a replacement — may leave out the
    /// keyring of the write key before it, and may start an epoch no higher
    /// than it (the lost device's removal or rotation and the lockdown both
    /// at epoch 2). Its commit is then made under the key it starts, not the
    /// lost device's; and it extends the tip of the chain a reader of the
    /// state after it walks (the caller: `VaultFile.chainTipHead`), since
    /// the commits under the keys it cuts become unverifiable
    /// (`Spec/keys.md §6.3`). A head it
    /// neither builds on nor cuts (a concurrent rotation of another
    /// member's) is weighed like its own: the higher epoch's key, then the
    /// smaller key commitment (`Spec/keys.md §5`).
    ///
    /// A change that removes nobody keeps the rule it always had: a
    /// proposal's key when it starts an epoch above `writeKey`'s.
    ///
    /// - Throws: ``KeyError/operationRefused(reason:)`` when a proposal does
    ///   not open under its own key (a builder bug).
    package static func commitPlacement(
        for proposals: [KeyringProposal], state: KeyState, writeKey: EpochKey
    ) throws(KeyError) -> CommitPlacement {
        let location = FrameLocation(offset: 0, index: 0)
        var records: [(proposal: KeyringProposal, record: KeyringRecord)] = []
        var removed = Set<[UInt8]>()
        for proposal in proposals {
            do throws(FormatError) {
                let record = try KeyringRecord(body: proposal.body, location: nil)
                let opened = try record.open(key: proposal.epochKey, vaultID: state.vaultID, location: location)
                removed.formUnion(opened.content.removed.map(\.publicKey))
                records.append((proposal, record))
            } catch {
                throw .operationRefused(reason: "a keyring this change built does not open under its own key; report this")
            }
        }
        guard !removed.isEmpty else {
            return CommitPlacement(commitKey: commitKey(for: proposals, writeKey: writeKey), keptKeys: nil, removed: [])
        }
        // The change's ancestry among the keyrings that passed rules 1–5,
        // trusted or not: a lockdown may build on a keyring only an answer
        // cut, which it restores (review 34 F2).
        let byID = Dictionary(
            state.keyrings.filter { $0.passesRules1To5 && $0.content != nil }.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        var ancestry = Set<KeyringID>()
        var stack = records.flatMap(\.record.publicPart.parents)
        while let id = stack.popLast() {
            guard ancestry.insert(id).inserted, let ring = byID[id] else { continue }
            stack += ring.parents
        }
        // Cut: signed by a member it removes outside its ancestry, or built
        // on such a keyring (to a fixed point: a merged file need not hold
        // every keyring after its parents).
        var cut = Set(
            state.trusted.filter { !ancestry.contains($0.id) && $0.signer.map(removed.contains) == true }.map(\.id))
        var grew = !cut.isEmpty
        while grew {
            grew = false
            for ring in state.trusted where !cut.contains(ring.id) && ring.parents.contains(where: cut.contains) {
                cut.insert(ring.id)
                grew = true
            }
        }
        let restored = ancestry.compactMap { byID[$0] }.filter { !$0.isTrusted }
        let survivors = state.trusted.filter { !cut.contains($0.id) } + restored
        var parentIDs = Set(records.flatMap(\.record.publicPart.parents))
        for ring in survivors { parentIDs.formUnion(ring.parents) }
        let proposalIDs = Set(proposals.map(\.id))
        // The heads after the change, as (epoch, key): the write key is the
        // highest epoch's, then the smallest key commitment (keys.md §5).
        var heads: [(epoch: UInt32, key: EpochKey)] = proposals.filter { !parentIDs.contains($0.id) }.map { ($0.epoch, $0.epochKey) }
        for ring in survivors where !parentIDs.contains(ring.id) && !proposalIDs.contains(ring.id) {
            if let key = ring.epochKey { heads.append((ring.epoch, key)) }
        }
        let write = heads.min { a, b in KeySet.precedesAsWriteKey((a.epoch, a.key.commitment), (b.epoch, b.key.commitment)) }
        let commitKey = write.flatMap { $0.key.sameKey(as: writeKey) ? nil : $0.key }
        guard !cut.isEmpty || !restored.isEmpty else {
            return CommitPlacement(commitKey: commitKey, keptKeys: nil, removed: removed)
        }
        let kept = KeySet(keysOf: survivors.sorted { $0.location.index < $1.location.index })
        return CommitPlacement(commitKey: commitKey, keptKeys: kept, removed: removed)
    }

    /// What a keyring `signer` signs on `state` drops of a newer version's
    /// protection, for the writer's warning: when the recovery key signs,
    /// every `critical` name of a trusted keyring, every `required` slot
    /// kind and every member key type this version does not know
    /// (`Spec/keys.md §6`, "Refusals for what a writer does not know";
    /// twelfth review R12-1); empty when a device signs (it refuses instead).
    /// The heads carry every name and kind of their ancestors (rule 5.6)
    /// until a keyring of the recovery key drops them.
    /// Each entry says what it is: `critical "name"`, `required "kind"`,
    /// `member "name" (keyType "type")`.
    package static func droppedProtections(in state: KeyState, signer: [UInt8]) -> [String] {
        guard state.member(withKey: signer)?.role != "device" else { return [] }
        var out: [String] = []
        for name in state.heads.flatMap(\.record.publicPart.criticalExtensions) where !out.contains("critical \"\(name)\"") {
            out.append("critical \"\(name)\"")
        }
        for kind in state.requiredSlotKinds where !knownSlotKinds.contains(kind) { out.append("required \"\(kind)\"") }
        for m in state.members where !m.isEd25519 && (m.role == "device" || m.role == "recovery") {
            out.append("member \"\(m.name)\" (keyType \"\(m.keyType)\")")
        }
        return out
    }

    /// The slot kinds this version makes (`Spec/format.md §8.3`).
    static let knownSlotKinds: Set<String> = ["device", "recovery", "passphrase", "escrow"]

    /// The recovery members of `state`'s heads when there is more than one
    /// (concurrent replacements that both stood), in head order, each with
    /// the trusted replacement that installed it; empty otherwise
    /// (`Spec/keys.md §6.9`).
    public static func recoveryKeyChoices(in state: KeyState) -> [RecoveryKeyChoice] {
        let replacements = trustedRecoveryReplacements(in: state)
        let byID = Dictionary(state.trusted.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        var seen = Set<[UInt8]>()
        var out: [RecoveryKeyChoice] = []
        for head in state.heads {
            guard let m = head.content?.members.first(where: { $0.role == "recovery" }), seen.insert(m.publicKey).inserted else { continue }
            let made = replacements.first { r in
                byID[r.keyringID]?.content?.members.first { $0.role == "recovery" }?.publicKey == m.publicKey
            }
            out.append(
                RecoveryKeyChoice(
                    publicKey: m.publicKey, createdMilliseconds: made?.created ?? m.addedMilliseconds, madeBy: made?.signerName ?? ""))
        }
        return out.count > 1 ? out : []
    }

    /// The keyrings of `change` on `fullState`, whose heads are the parents
    /// (a device's removal may leave some out).
    static func build(
        _ change: KeyChange, state fullState: KeyState, signer: Ed25519.KeyPair, now: Int64, random: any RandomSource,
        removingAgain again: [[UInt8]: KeyringMember] = [:], keepRecoveryKey: [UInt8]? = nil,
        keepingReaders honestReaders: Set<ReaderProvenance.Reader>? = nil
    ) throws(KeyError) -> [KeyringProposal] {
        guard let signerMember = fullState.member(withKey: signer.publicKey) else {
            throw .operationRefused(reason: "only an enrolled device or the recovery key can change the keys, and this key is neither")
        }
        // A removal keeps the removed member's heads as parents (so records
        // others sealed under their keys stay readable) unless they bring in
        // readers the other heads do not have, or there are too many heads to
        // join: then it leaves that branch out, and rule 6 cuts it
        // (Spec/keys.md §6.3).
        var state = fullState
        if case .remove(let publicKey) = change {
            let kept = fullState.heads.filter { $0.signer != publicKey }
            if !kept.isEmpty && kept.count < fullState.heads.count {
                let restricted = KeyState(
                    vaultID: fullState.vaultID, heads: kept, trusted: fullState.trusted, keys: fullState.keys, keyrings: fullState.keyrings)
                if fullState.heads.count > Limits.maxParentCount || !restricted.hasAllReaders(of: fullState, except: publicKey) {
                    state = restricted.answering(like: fullState)
                }
            }
        }
        // What this keyring (and each join before it) answers: nothing when
        // the recovery key signs; a device lists the keyrings of the member
        // it removes first, at most 4,096 (Spec/keys.md §6 "Who").
        if case .remove(let target) = change {
            state.answers = state.answers(signer: signerMember, removing: target)
        } else {
            state.answers = state.answers(signer: signerMember, removing: nil)
        }
        // Members of other roles cannot sign and get no slot: a new keyring
        // does not carry them, so no list a member padded elsewhere grows.
        var members = state.members.filter { $0.role == "device" || $0.role == "recovery" }
        // `removed` and `retired` list only what this keyring removes or
        // retires (Spec/keys.md §5): readers look for them in every ancestor.
        var removed: [KeyringMember] = []
        var escrow = state.escrow
        var retired: [[UInt8]] = []
        var passphrases = state.passphrases
        var isEscrowFree = state.isEscrowFree
        var newEpoch = state.heads.count > 1
        var added: [KeySlot] = []
        var freshPassphrase: (SecureBytes, UInt64, UInt64)?
        var freshBlobKey = false

        func retire(_ key: [UInt8]) { if !state.retired.contains(key) && !retired.contains(key) { retired.append(key) } }
        func passphraseKeys() -> [[UInt8]] {
            passphrases.compactMap { if case .passphrase(_, _, _, let pk, _) = $0.slot { pk } else { nil } }
        }
        // A lockdown (Spec/keys.md §6.3) keeps only the passphrase and
        // escrow readers that a keyring no suspect signed brought in: one a
        // suspect's keyring brought in (a thief's own passphrase) is
        // dropped, as its devices are, and retired, so that no keyring that
        // still carries it (an honest rotation on the thief's keyring,
        // concurrent with the lockdown, or a holder a later lockdown joins)
        // brings it back (review 24 R24-1).
        if let honestReaders {
            for pk in passphraseKeys() where !honestReaders.contains(.passphrase(pk)) { retire(pk) }
            passphrases = passphrases.filter {
                if case .passphrase(_, _, _, let pk, _) = $0.slot { honestReaders.contains(.passphrase(pk)) } else { false }
            }
            for e in escrow where !honestReaders.contains(.escrow(e.publicKey)) { retire(e.publicKey) }
            escrow = escrow.filter { honestReaders.contains(.escrow($0.publicKey)) }
        }

        switch change {
        case .rotate:
            newEpoch = true
        case .rekey:
            newEpoch = true
            freshBlobKey = true
        case .enroll(let publicKey, let name):
            try DeviceIdentity.validateName(name)
            guard (try? Ed25519.agreementPublicKey(from: publicKey)) != nil else {
                throw .operationRefused(reason: "that device key is not a valid public key")
            }
            if let existing = state.member(withKey: publicKey) {
                throw .operationRefused(reason: "that device is already enrolled, as \"\(existing.name)\"")
            }
            if state.removed.contains(where: { $0.publicKey == publicKey }) {
                throw .operationRefused(
                    reason:
                        "that device key was removed from this vault and cannot come back; on that device, make a new device key and enroll it"
                )
            }
            if let clash = members.first(where: { $0.name.lowercased() == name.lowercased() }) {
                throw .operationRefused(reason: "a member is already named \"\(clash.name)\"; choose another name")
            }
            let member = KeyringMember(role: "device", publicKey: publicKey, name: name, added: now)
            members.append(member)
            if !newEpoch, let slot = try memberSlot(member, key: state.heads[0].epochKey!, vaultID: state.vaultID, random: random) {
                added.append(slot)
            }
        case .lockdown(let keys):
            guard signerMember.role == "recovery" else {
                throw .operationRefused(reason: "only the recovery key removes several members at once")
            }
            for publicKey in keys {
                if let entry = again[publicKey], state.member(withKey: publicKey) == nil {
                    removed.append(entry)
                    continue
                }
                guard let member = state.member(withKey: publicKey), member.role == "device" else {
                    throw .operationRefused(reason: "only enrolled devices can be removed")
                }
                members.removeAll { $0.publicKey == publicKey }
                removed.append(member)
            }
            newEpoch = true
        case .remove(let publicKey):
            guard let member = state.member(withKey: publicKey) else {
                throw .operationRefused(reason: "that device is not enrolled in this vault")
            }
            guard member.role == "device" else { throw .operationRefused(reason: "the recovery key cannot be removed; replace it instead") }
            guard publicKey != signer.publicKey else {
                throw .operationRefused(reason: "a device cannot remove itself; remove it from another device or with the recovery key")
            }
            members.removeAll { $0.publicKey == publicKey }
            removed.append(member)
            newEpoch = true
        case .replaceRecoveryKey(let newKey):
            guard (try? Ed25519.agreementPublicKey(from: newKey)) != nil else {
                throw .operationRefused(reason: "the new recovery key is not a valid public key")
            }
            guard let old = state.recoveryMember else { throw .operationRefused(reason: "the vault lists no recovery member") }
            guard old.publicKey != newKey, !state.removed.contains(where: { $0.publicKey == newKey }), state.member(withKey: newKey) == nil
            else {
                throw .operationRefused(reason: "that recovery key is already, or was once, a member of this vault")
            }
            members.removeAll { $0.publicKey == old.publicKey }
            removed.append(old)
            members.insert(KeyringMember(role: "recovery", publicKey: newKey, name: "Recovery key", added: now), at: 0)
            newEpoch = true
        case .setPassphrase(let passphrase, let ops, let mem):
            guard passphrases.isEmpty else { throw .operationRefused(reason: "a passphrase is already set; change it instead") }
            try SlotCrypto.checkWriterCost(opsLimit: ops, memLimitBytes: mem)
            freshPassphrase = (passphrase, ops, mem)
        case .changePassphrase(let passphrase, let ops, let mem):
            guard !passphrases.isEmpty else { throw .operationRefused(reason: "no passphrase is set; set one first") }
            try SlotCrypto.checkWriterCost(opsLimit: ops, memLimitBytes: mem)
            for k in passphraseKeys() { retire(k) }
            passphrases = []
            freshPassphrase = (passphrase, ops, mem)
            newEpoch = true
        case .removePassphrase:
            guard !passphrases.isEmpty else { throw .operationRefused(reason: "no passphrase is set") }
            for k in passphraseKeys() { retire(k) }
            passphrases = []
            newEpoch = true
        case .setEscrow(let recipient):
            guard !isEscrowFree else { throw .escrowRefused }
            if !recipient.label.isEmpty {
                do throws(KeyError) { try DeviceIdentity.validateName(recipient.label) } catch {
                    let d = error.description
                    let p = "a device name "
                    throw .operationRefused(reason: "an escrow label " + (d.hasPrefix(p) ? String(d.dropFirst(p.count)) : d))
                }
            }
            guard recipient.publicKey.count == X25519.publicKeyByteCount else {
                throw .operationRefused(
                    reason:
                        "an escrow key is a \(X25519.publicKeyByteCount)-byte X25519 public key; this one has \(recipient.publicKey.count) bytes"
                )
            }
            guard !state.retired.contains(recipient.publicKey) else {
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
                added.append(
                    try SlotCrypto.escrowSlot(
                        for: state.heads[0].epochKey!, escrowPublicKey: recipient.publicKey, vaultID: state.vaultID, random: random))
            }
        case .enableEscrowFree(let proof):
            guard !isEscrowFree else { throw .operationRefused(reason: "the vault is already escrow-free") }
            let recovery = state.recoveryMember
            var holdsRecovery = signerMember.role == "recovery"
            if let proof {
                let proofKey = try proof.publicKey()
                guard let recovery, proofKey == recovery.publicKey else {
                    throw .operationRefused(
                        reason:
                            "that recovery key is not this vault's; escrow-free mode needs the vault's own recovery key or a second device")
                }
                holdsRecovery = true
            }
            guard holdsRecovery || state.devices.count >= 2 else {
                throw .operationRefused(
                    reason:
                        "escrow-free mode removes the escrow key, so you need a way back in that you hold: confirm the recovery key, or enroll a second device first"
                )
            }
            for e in escrow { retire(e.publicKey) }
            escrow = []
            isEscrowFree = true
            newEpoch = true
        }

        // What this keyring lists: its members and escrow recipients (the
        // readers), and only what it removes or retires itself.
        guard members.count <= Limits.maxKeyringListCount, escrow.count <= Limits.maxKeyringListCount,
            removed.count <= Limits.maxKeyringListCount, retired.count <= Limits.maxKeyringListCount
        else {
            throw .operationRefused(
                reason:
                    "the keyring would list more than \(Limits.maxKeyringListCount) members or escrow keys; remove the members you do not know first (the recovery key can remove several at once)"
            )
        }
        let vaultID = state.vaultID
        var isLockdown = false
        if case .lockdown = change { isLockdown = true }
        // A lockdown takes the blob key and unknown fields from its newest
        // parent listing the signer, not from a stale holder joined to
        // remove a device again, which may predate a rekey (review 24
        // R24-3).
        let listingSigner = state.heads.filter { $0.content!.members.contains { $0.publicKey == signer.publicKey } }
        let signerHead =
            (isLockdown ? listingSigner.max { $0.epochKey!.epoch < $1.epochKey!.epoch } : listingSigner.first) ?? state.writeHead
        let blobKey = signerHead.content!.blobKey
        let unknownContent = signerHead.content!.unknownFields
        let unknownPublic = signerHead.record.publicPart.unknownFields
        // Which recovery key a join of concurrent replacements keeps is the
        // user's to say: only they know which code they hold (third review,
        // item 7; Spec/keys.md §6.9). The operation's keyring carries it too.
        // A lockdown asks no choice: its signer is the recovery member of
        // its eligible parents, and a stale holder it joins to remove a
        // device again (review 23 R23-1) may still list a key replaced
        // since. Every other change asks whenever the heads differ (§6.9,
        // review 24 R24-2).
        let headRecoveries =
            isLockdown ? [] : Set(state.heads.compactMap { $0.content!.members.first { $0.role == "recovery" }?.publicKey })
        var keptRecovery: KeyringMember?
        if state.heads.count > 1 && headRecoveries.count > 1 {
            guard let keep = keepRecoveryKey, headRecoveries.contains(keep),
                let member = state.heads.lazy.compactMap({ $0.content!.members.first { $0.role == "recovery" && $0.publicKey == keep } })
                    .first
            else { throw .recoveryKeyChoiceNeeded(recoveryKeyChoices(in: state)) }
            keptRecovery = member
            if let i = members.firstIndex(where: { $0.role == "recovery" }), headRecoveries.contains(members[i].publicKey) {
                members[i] = member
            }
        }
        var template = Template(
            members: members, removed: removed, escrow: escrow, retired: retired, passphrases: passphrases, isEscrowFree: isEscrowFree,
            required: state.requiredSlotKinds, unknownContent: unknownContent, unknownPublic: unknownPublic, answers: state.answers,
            now: now)

        if !newEpoch {
            // Same epoch: the one head's key, its slots as stored, plus the new ones.
            let head = state.heads[0]
            let epochKey = head.epochKey!
            var slots = head.record.publicPart.slotEntries
            for s in added { slots.append(StoredSlot(slot: s)) }
            if let (passphrase, ops, mem) = freshPassphrase {
                slots.append(
                    StoredSlot(
                        slot: try SlotCrypto.passphraseSlot(
                            for: epochKey, passphrase: passphrase, opsLimit: ops, memLimitBytes: mem, vaultID: vaultID, random: random)))
            }
            guard slots.count <= Limits.maxSlotsPerKeyring else {
                throw .operationRefused(reason: "the keyring would hold more than \(Limits.maxSlotsPerKeyring) slots")
            }
            let content = template.content(blobKey: blobKey, reason: change.reason)
            try checkReaders(members: content.members, escrow: content.escrow, slots: slots)
            let body = try KeyringBuilder.body(
                epochKey: epochKey, vaultID: vaultID, parents: [KeyringBuilder.Parent(id: head.id, key: epochKey)],
                isEscrowFree: isEscrowFree,
                requiredSlotKinds: template.required, slots: slots, unknownPublicFields: unknownPublic, content: content, signer: signer,
                random: random)
            return [KeyringProposal(epoch: epochKey.epoch, body: body, epochKey: epochKey, isNewEpoch: false)]
        }

        // A new epoch: every reader rewrapped. A writer that does not know a
        // required slot kind or a member's key type would drop it: refuse —
        // unless the recovery key signs, which drops them (and removes such
        // members), so that nothing a thief lists can block its removal
        // (twelfth review R12-1, Spec/keys.md §6).
        let byRecovery = signerMember.role == "recovery"
        if byRecovery {
            template = template.droppingUnknown()
            members = template.members
        }
        let known = knownSlotKinds
        if let unknown = template.required.first(where: { !known.contains($0) }) {
            throw .operationRefused(
                reason: "this vault requires \"\(unknown)\" key slots, which this version of Quire cannot make; update Quire")
        }
        if let odd = members.first(where: { !$0.isEd25519 }) {
            throw .operationRefused(
                reason: "member \"\(odd.name)\" has a \(odd.keyType) key, which this version of Quire cannot wrap to; update Quire")
        }
        guard UInt64(state.epoch) + UInt64(state.heads.count / (Limits.maxParentCount - 1) + 2) < UInt64(Limits.maxEpoch) else {
            throw .operationRefused(reason: "the vault has used every epoch number; create a new vault")
        }
        var proposals: [KeyringProposal] = []
        var parents = state.heads.map { KeyringBuilder.Parent(id: $0.id, key: $0.epochKey!) }
        var epoch = state.epoch
        // Heads whose recovery members differ (concurrent replacements that
        // both stood) are joined first, by a join that keeps one and removes
        // the others (Spec/keys.md §6.9); more than 64 heads are joined in
        // steps (Spec/keys.md §6).
        let recoveries = headRecoveries
        if parents.count > Limits.maxParentCount || (parents.count > 1 && recoveries.count > 1) {
            // Join in steps, chained: the first join takes a head the signer
            // is a member of and up to 63 others; each later join takes the
            // previous join and 63 more; the operation's keyring then has the
            // last join as its parent. Each join holds the key state of its
            // own parents.
            var pending = state.heads.filter { $0.id != signerHead.id }
            var previous = (parent: KeyringBuilder.Parent(id: signerHead.id, key: signerHead.epochKey!), readers: JoinReaders(signerHead))
            while true {
                let take = min(Limits.maxParentCount - 1, pending.count)
                let group = Array(pending.prefix(take))
                pending.removeFirst(take)
                epoch += 1
                let readers = group.reduce(previous.readers) { $0.joined(with: JoinReaders($1)) }
                var joinTemplate = readers.template(
                    state: state, keep: keptRecovery?.publicKey, unknownContent: unknownContent, unknownPublic: unknownPublic, now: now)
                if byRecovery { joinTemplate = joinTemplate.droppingUnknown() }
                let join = try newEpochKeyring(
                    epoch: epoch, parents: [previous.parent] + group.map { KeyringBuilder.Parent(id: $0.id, key: $0.epochKey!) },
                    template: joinTemplate, blobKey: blobKey, reason: "join", freshPassphrase: nil, vaultID: vaultID, signer: signer,
                    random: random)
                proposals.append(join)
                previous = (KeyringBuilder.Parent(id: join.id, key: join.epochKey), readers)
                if pending.isEmpty { break }
            }
            parents = [previous.parent]
        }
        var finalBlobKey = blobKey
        if freshBlobKey {
            do { finalBlobKey = try SymmetricKey(using: random) } catch { throw .operationRefused(reason: "\(error)") }
        }
        let last = try newEpochKeyring(
            epoch: epoch + 1, parents: parents, template: template, blobKey: finalBlobKey, reason: change.reason,
            freshPassphrase: freshPassphrase,
            vaultID: vaultID, signer: signer, random: random)
        proposals.append(last)
        return proposals
    }

    /// A removal signed by the recovery key, of one member or several (a
    /// lockdown, `Spec/keys.md §6.3`). The *suspects* are the targets and
    /// every device or recovery member that only keyrings signed by
    /// suspects brought in (``ReaderProvenance``), but for the devices the
    /// caller keeps (`kept`) and the signer: the file cannot tell a
    /// thief's puppet from a device the user enrolled on the lost one, so
    /// the caller asks. The removal's parents are the latest *eligible*
    /// keyrings (passed rules 1–5, the signer their recovery member, cut if
    /// at all only by suspects' answers) that no suspect signed, or that a
    /// suspect signed and another member adopted (wrote a commit under the
    /// epoch key it starts, `writers`, by key commitment) and that are no
    /// answer; a suspect already removed on this side that signed outside
    /// that ancestry is removed again from a holder that still lists it. It
    /// removes the suspects that are members and the devices a suspect's
    /// eligible keyring removed, and keeps only the passphrase and escrow
    /// readers that a keyring no suspect signed brought in.
    ///
    /// - Throws: ``KeyError/operationRefused(reason:)`` when no target is
    ///   a member of what the signer can build on, a target is no device, a
    ///   kept device cannot be kept, or a removed suspect has no holder.
    static func recoveryRemoval(
        of targets: [[UInt8]], state: KeyState, signer: Ed25519.KeyPair, now: Int64, random: any RandomSource,
        writers: [[UInt8]: Set<[UInt8]>] = [:], keeping kept: Set<[UInt8]> = []
    ) throws(KeyError) -> [KeyringProposal] {
        guard !targets.isEmpty else { throw .operationRefused(reason: "name at least one device to remove") }
        let targetSet = Set(targets)
        guard !targetSet.contains(signer.publicKey) else {
            throw .operationRefused(reason: "the recovery key cannot remove itself; replace it instead")
        }
        guard kept.isDisjoint(with: targetSet) else {
            throw .operationRefused(reason: "a device cannot be both removed and kept; name it once")
        }
        let candidates = state.keyrings.filter { $0.passesRules1To5 && $0.content != nil }
        let graph = KeyGraph(candidates)
        let provenance = ReaderProvenance(candidates, targets: targetSet, keeping: kept, exempt: [signer.publicKey])
        let suspects = provenance.suspects
        let signedBySuspect = Set(candidates.indices.filter { suspects.contains(candidates[$0].signer ?? []) })
        let byID = Dictionary(candidates.enumerated().map { ($0.element.id, $0.offset) }, uniquingKeysWith: { a, _ in a })
        // A keyring a suspect signed after, or concurrently with, a removal
        // of its signer in force (a keyring no suspect signed and rule 6 did
        // not cut) — or one built on such a keyring — is that device's
        // answer, which counts for nothing (Spec/format.md §8.6): what it
        // removed, retired or cut comes back (format.md §8.4 scenario 8,
        // and a tie).
        let honestRemovals = candidates.indices.filter {
            !signedBySuspect.contains($0) && candidates[$0].isTrusted && !candidates[$0].content!.removed.isEmpty
        }
        func answersItsRemoval(_ j: Int) -> Bool {
            guard let signer = candidates[j].signer else { return false }
            return honestRemovals.contains { r in
                r != j && !graph.ancestors[r].contains(j) && candidates[r].content!.removed.contains { $0.publicKey == signer }
            }
        }
        // Computed once: each keyring's answer is asked for in the cut,
        // adoption and removal sets below.
        let answersDirectly = Set(signedBySuspect.filter(answersItsRemoval))
        let answers = Set(
            signedBySuspect.filter { k in
                answersDirectly.contains(k) || graph.ancestors[k].elements.contains(where: answersDirectly.contains)
            })
        func isAnswer(_ k: Int) -> Bool { answers.contains(k) }
        // What a suspect's keyring cut stays cut, as what it removed stays
        // out (below), unless it is an answer (review 19 R19-2: a fork of a
        // tablet the user removed from the lost phone must not come back).
        // An answer another member built on (a trusted keyring no suspect
        // signed descends from it) keeps its cut: building on it and on what
        // it cut would make the lockdown untrusted (review 21 R21-1).
        var builtOn = Set<Int>()
        for i in candidates.indices where !signedBySuspect.contains(i) {
            builtOn.formUnion(graph.ancestors[i].elements)
        }
        let cutByOthers = Set(
            candidates.indices.filter { i in
                candidates[i].cutBy.contains { byID[$0].map { !isAnswer($0) || builtOn.contains($0) } ?? true }
            })
        // Keys removed in each keyring or its ancestors.
        func removed(in i: Int) -> Set<[UInt8]> {
            var out = Set(candidates[i].content!.removed.map(\.publicKey))
            for a in graph.ancestors[i].elements { out.formUnion(candidates[a].content!.removed.map(\.publicKey)) }
            return out
        }
        let eligible = candidates.indices.filter { i in
            let c = candidates[i]
            guard c.content!.members.first(where: { $0.role == "recovery" })?.publicKey == signer.publicKey,
                !cutByOthers.contains(i), !graph.ancestors[i].elements.contains(where: { cutByOthers.contains($0) })
            else { return false }
            return !removed(in: i).contains(signer.publicKey)
        }
        func maximal(_ set: [Int]) -> [Int] { set.filter { i in !set.contains { $0 != i && graph.ancestors[$0].contains(i) } } }
        func ancestry(_ set: [Int]) -> Set<Int> {
            var out = Set(set)
            for p in set { out.formUnion(graph.ancestors[p].elements) }
            return out
        }
        func restrictedState(_ parents: [Int]) -> KeyState {
            KeyState(
                vaultID: state.vaultID, heads: parents.map { candidates[$0] }, trusted: ancestry(parents).sorted().map { candidates[$0] },
                keys: state.keys,
                keyrings: state.keyrings
            ).answering(like: state)
        }
        // Leave out every keyring a suspect signed, unless another member
        // adopted it: it starts an epoch (its key is no parent's) under
        // which a member of its state that is no suspect attested a commit.
        // Those records are that member's, so the removal keeps the keyring
        // (a `compact --rekey` or passphrase change the device made before
        // it was lost, which the others synced and wrote on). What it
        // removed or retired stands either way (below).
        // A keyring a suspect signed that first brought in a device the
        // user keeps (in file order: a later fork re-enrolling the key
        // vouches for nothing, review 18 R18-4) stays too.
        let vouched = kept.compactMap { key in
            eligible.first { i in signedBySuspect.contains(i) && !isAnswer(i) && provenance.bringsIn([key], at: i) }
        }
        let adoptedByWriters = eligible.filter { i in
            // An answer is never adopted: building on it would build on what
            // it cut (review 20 R20-3).
            guard signedBySuspect.contains(i), !isAnswer(i), let key = candidates[i].epochKey?.commitment, let wrote = writers[key]
            else { return false }
            let own = restrictedState([i])
            guard wrote.contains(where: { !suspects.contains($0) && own.member(withKey: $0) != nil }) else { return false }
            // Its key is its own: no other keyring that passed rules 1–5
            // starts or holds it, its own descendants aside (a suspect's
            // sibling reusing an honest member's key would otherwise be
            // adopted by that member's commits: seventeenth review F3; a
            // same-epoch enrolment after it keeps its key, review 17b G2).
            let commit = candidates[i].record.publicPart.keyCommit
            guard
                !candidates.indices.contains(where: { j in
                    j != i && candidates[j].record.publicPart.keyCommit == commit && !graph.ancestors[j].contains(i)
                })
            else { return false }
            let parents = candidates[i].parents.compactMap { byID[$0] }
            return !parents.isEmpty && !parents.contains(where: { candidates[$0].epochKey?.commitment == key })
        }
        let adopted = Set(vouched + adoptedByWriters)
        var parents = maximal(eligible.filter { !signedBySuspect.contains($0) || adopted.contains($0) })
        // When suspects signed every eligible keyring, build on the latest
        // of them: what they removed stands, and the readers they brought
        // in go (below).
        if parents.isEmpty { parents = maximal(eligible) }
        guard !parents.isEmpty else {
            throw .operationRefused(reason: "only an enrolled device or the recovery key can change the keys, and this key is neither")
        }
        // A target already removed on this side (a device removal it may
        // have answered from a fork) is removed again: the latest eligible
        // keyrings in which it is still a member join the parents, so that
        // every keyring it signed outside this removal's ancestry defies it
        // (Spec/format.md §8.4, scenario 5).
        let before = restrictedState(parents)
        let inAncestry = ancestry(parents)
        let removedBefore = Set(before.removed.map(\.publicKey))
        var again: [[UInt8]: KeyringMember] = [:]
        var heldBy: [Int] = []
        // The same for every other suspect already removed on this side
        // that signed a keyring outside the ancestry (a puppet removed by
        // the user that answered its removal): left a member there, its
        // branch would stand beside the lockdown and keep reading (review
        // 22 R22-1). A holder a suspect signed is allowed when it is
        // already in the ancestry.
        let signersOutside = Set(candidates.indices.filter { !inAncestry.contains($0) }.compactMap { candidates[$0].signer })
        let againKeys =
            targets + suspects.subtracting(targetSet).filter { signersOutside.contains($0) }.sorted { $0.lexicographicallyPrecedes($1) }
        for key in againKeys where before.member(withKey: key) == nil && removedBefore.contains(key) {
            // Keyrings that list it as a device and have not removed it: one
            // already in the ancestry, whatever its recovery member (the
            // recovery key may have been replaced since: review 23 R23-1;
            // rule 5.8 asks only one parent to have the signer as recovery
            // member), or an eligible one that no suspect signed and that
            // brings in no keyring a suspect signed beyond the ancestry.
            let holders = candidates.indices.filter { i in
                (inAncestry.contains(i)
                    || (eligible.contains(i) && !signedBySuspect.contains(i)
                        && graph.ancestors[i].elements.allSatisfy { !signedBySuspect.contains($0) || inAncestry.contains($0) }))
                    && candidates[i].content!.members.contains { $0.publicKey == key && $0.role == "device" }
                    && !removed(in: i).contains(key)
            }
            guard let entry = holders.lazy.compactMap({ i in candidates[i].content!.members.first { $0.publicKey == key } }).first else {
                // The removal that put it out had a parent listing it, in
                // the ancestry: a key with no holder was never a device
                // here. Refuse rather than leave its branch standing
                // unsaid (review 23 R23-1).
                let listed = inAncestry.contains { i in
                    candidates[i].content!.members.contains { $0.publicKey == key && $0.role == "device" }
                }
                guard !listed else {
                    throw .operationRefused(
                        reason: "a device already removed here cannot be removed again with the others, so its keyrings would stand; "
                            + "run 'quire verify' and report this")
                }
                continue
            }
            for h in maximal(holders) where !parents.contains(h) && !heldBy.contains(h) { heldBy.append(h) }
            again[key] = entry
        }
        // The eligible parents first, then the holders, each in file order:
        // the state's recovery member is its first head's, and a holder may
        // list another (a key replaced since, or one a thief's join kept
        // in the ancestry without removing it), which would leave the
        // signer no member of the state at all (review 25 R25-1).
        parents = parents.sorted() + heldBy.sorted()
        let restricted = restrictedState(parents)
        if let lost = kept.first(where: { restricted.member(withKey: $0) == nil && state.member(withKey: $0) != nil }) {
            let name = state.member(withKey: lost)!.name
            throw .operationRefused(
                reason: "\"\(name)\" cannot be kept: the keyring that enrolled it builds on a removal of one of your devices "
                    + "by a device being removed; remove it too, and enroll it again with a new device key")
        }
        let present = targets.filter { key in restricted.member(withKey: key) != nil || again[key] != nil }
        guard !present.isEmpty else {
            throw .operationRefused(
                reason: "none of those devices is a member of the keyrings the recovery key can build on; they are already out")
        }
        if let notDevice = present.compactMap({ restricted.member(withKey: $0) }).first(where: { $0.role != "device" }) {
            throw .operationRefused(reason: "\"\(notDevice.name)\" is not a device; the recovery key is replaced, not removed")
        }
        // The suspects that the state lists besides the targets (devices
        // only a suspect enrolled: a thief's puppets, or devices the user
        // enrolled on the lost one and did not keep) go with them, as rule 6
        // removes the puppets of the keyrings it cuts (Spec/format.md §8.4).
        let puppets = restricted.devices.map(\.publicKey).filter { suspects.contains($0) && !targetSet.contains($0) }
        // What an eligible keyring a suspect signed removed or retired
        // stays out, whether or not the lockdown builds on it: the file
        // cannot tell a device the user removed from the lost one (a lost
        // tablet) from one a thief removed, and keeping a device out never
        // lets anyone read (review 18 R18-2; a device the thief removed is
        // enrolled again with a new key). Cut keyrings do not count: a
        // removed device's answer on its fork removes nobody.
        let suspectSigned = eligible.filter { signedBySuspect.contains($0) && !isAnswer($0) }
        let removedBySuspects = Set(suspectSigned.flatMap { candidates[$0].content!.removed.map(\.publicKey) })
        let retiredBySuspects = Set(suspectSigned.flatMap { candidates[$0].content!.retired })
        let keptOut = restricted.devices.map(\.publicKey).filter {
            removedBySuspects.contains($0) && !targetSet.contains($0) && !puppets.contains($0)
        }
        if let lost = keptOut.first(where: { kept.contains($0) }), let name = restricted.member(withKey: lost)?.name {
            throw .operationRefused(
                reason: "\"\(name)\" cannot be kept: a device being removed removed it; enroll it again with a new device key")
        }
        let readers = provenance.honestReaders(in: inAncestry.union(parents)).filter { reader in
            switch reader {
            case .passphrase(let key), .escrow(let key): !retiredBySuspects.contains(key)
            case .device: true
            }
        }
        return try build(
            .lockdown(
                publicKeys: present + puppets + keptOut
                    + again.keys.filter { !targetSet.contains($0) }.sorted { $0.lexicographicallyPrecedes($1) }), state: restricted,
            signer: signer, now: now, random: random,
            removingAgain: again, keepingReaders: readers)
    }

    /// The names of the signers of the trusted keyrings of `state` that
    /// stand beside the removal by the recovery key `written` (outside its
    /// ancestry) and that a suspect of that removal signed — the targets
    /// and the devices only suspects brought in, but for `kept` and the
    /// recovery key `signer` (`Spec/keys.md §6.3`). Empty once the removal
    /// took; anything else is a removal that left a suspect's branch
    /// standing (review 23 R23-1), which the writer reports instead of
    /// success. Each signer by the name a keyring of `state` gives the key
    /// (its hex when none does), and whether some keyring lists it as a
    /// recovery member: a thief's recovery key kept in the ancestry by a
    /// join that did not remove it (review 26 R26-1), which has the
    /// recovery key's power in this vault.
    package static func suspectsBeside(
        _ written: KeyringID, removing targets: Set<[UInt8]>, keeping kept: Set<[UInt8]>, signer: [UInt8], in state: KeyState
    ) -> [(name: String, isRecoveryKey: Bool)] {
        let candidates = state.keyrings.filter { $0.passesRules1To5 && $0.content != nil }
        guard let w = candidates.firstIndex(where: { $0.id == written }) else { return [] }
        let suspects = ReaderProvenance(candidates, targets: targets, keeping: kept, exempt: [signer]).suspects
        let graph = KeyGraph(candidates)
        let beside = candidates.indices.filter { i in
            i != w && candidates[i].isTrusted && !graph.ancestors[w].contains(i) && candidates[i].signer.map(suspects.contains) == true
        }
        var out: [(name: String, isRecoveryKey: Bool)] = []
        for i in beside {
            let key = candidates[i].signer!
            let entries = candidates.compactMap { $0.content!.members.first { $0.publicKey == key } }
            let name = entries.first?.name ?? hex(key)
            if !out.contains(where: { $0.name == name }) { out.append((name, entries.contains { $0.role == "recovery" })) }
        }
        return out
    }

    /// The devices that a removal of `targets` by the recovery key removes
    /// with them unless the caller keeps them (`Spec/keys.md §6.3`): the
    /// current devices of `state` that only a target, or such a device,
    /// enrolled — in file order. `signer`, the recovery key that will sign
    /// the removal, is exempt as the removal exempts it.
    package static func enrolledBy(_ targets: Set<[UInt8]>, in state: KeyState, signer: [UInt8]? = nil) -> [KeyringMember] {
        let candidates = state.keyrings.filter { $0.passesRules1To5 && $0.content != nil }
        // The removal's own suspects: the signing recovery key is never one
        // (review 21 R21-3), or a thief listing it as a device would make
        // the user's keyrings' enrolments look like a suspect's.
        let suspects = ReaderProvenance(candidates, targets: targets, keeping: [], exempt: signer.map { [$0] } ?? []).suspects
        return state.devices.filter { suspects.contains($0.publicKey) && !targets.contains($0.publicKey) }
    }

    /// The replacements of the recovery key that `target` answers for, in
    /// file order: keyrings that passed rules 1–5, replaced the recovery
    /// key, and were signed by `target` or by a device it enrolled (or one
    /// those enrolled, and so on) — what a device's removal of `target`
    /// cuts when the caller says they were not the user's
    /// (`Spec/keys.md §6.3`). Empty when there is none.
    public static func recoveryReplacements(by target: [UInt8], in state: KeyState) -> [RecoveryKeyReplacement] {
        let rings = state.keyrings.filter { $0.passesRules1To5 && $0.content != nil }
        let line = enrolledLine(of: target, in: rings)
        return rings.filter { ring in ring.signer.map { line.keys.contains($0) } == true && isReplacement(ring) }.map { ring in
            let signer = ring.signer!
            let name = ring.content!.members.first { $0.publicKey == signer }?.name ?? ""
            return RecoveryKeyReplacement(
                keyringID: ring.id, created: ring.content!.created, signer: signer, signerName: name, enrolledBy: line[signer]!)
        }
    }

    /// The trusted keyrings of `state` that replaced the recovery key, in
    /// file order (``RecoveryKeyReplacement/enrolledBy`` nil). Compared
    /// before and after a removal, they say which replacement it cut: a
    /// writer warns of each (`Spec/keys.md §6.3`).
    public static func trustedRecoveryReplacements(in state: KeyState) -> [RecoveryKeyReplacement] {
        state.trusted.filter { $0.content != nil && $0.signer != nil && isReplacement($0) }.map { ring in
            let name = ring.content!.members.first { $0.publicKey == ring.signer! }?.name ?? ""
            return RecoveryKeyReplacement(
                keyringID: ring.id, created: ring.content!.created, signer: ring.signer!, signerName: name, enrolledBy: nil)
        }
    }

    /// `target` and every device enrolled, in a keyring of `rings`, by
    /// `target` or by a device already found; each mapped to the key that
    /// enrolled it (nil for `target`).
    static func enrolledLine(of target: [UInt8], in rings: [KeyringInfo]) -> [[UInt8]: [UInt8]?] {
        let byID = Dictionary(rings.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        var line: [[UInt8]: [UInt8]?] = [target: nil]
        var grew = true
        while grew {
            grew = false
            for ring in rings where ring.content?.reason == "enroll" {
                guard let signer = ring.signer, line.keys.contains(signer) else { continue }
                let before = Set(ring.parents.compactMap { byID[$0]?.content?.members.map(\.publicKey) }.joined())
                for m in ring.content!.members where m.role == "device" && !before.contains(m.publicKey) && !line.keys.contains(m.publicKey)
                {
                    line[m.publicKey] = .some(signer)
                    grew = true
                }
            }
        }
        return line
    }

    static func isReplacement(_ ring: KeyringInfo) -> Bool {
        ring.content?.reason == "recovery" && ring.content!.removed.contains { $0.role == "recovery" }
    }

    /// A device's removal of a member that answers for a replacement of
    /// the recovery key the caller says was not the user's
    /// (`Spec/keys.md §6.3`). Built on the head, it would descend from the
    /// replacement, and the replacing key could lock the remover out from a
    /// fork there with a keyring that is recovery-signed for the removal.
    /// So, as a lockdown does, its parents are the latest keyrings that
    /// passed rules 1–5 in which the signer is a device that may sign, that
    /// descend from no such replacement nor from the enrollment (in the
    /// target's line) of a device that signed one or enrolled one that did,
    /// whose ancestry was cut, if at all, only by the target's keyrings, and
    /// that the target did not sign: the replacement then defies the
    /// removal, or descends from an enrollment the target signed that does,
    /// and is cut.
    static func removalOverReplacement(
        of target: [UInt8], state: KeyState, signer: Ed25519.KeyPair, now: Int64, random: any RandomSource
    ) throws(KeyError) -> [KeyringProposal] {
        let candidates = state.keyrings.filter { $0.passesRules1To5 && $0.content != nil }
        let graph = KeyGraph(candidates)
        let byID = Dictionary(candidates.enumerated().map { ($0.element.id, $0.offset) }, uniquingKeysWith: { a, _ in a })
        let signedByTarget = Set(candidates.indices.filter { candidates[$0].signer == target })
        // The replacements the target answers for, and the enrollments (in
        // its line) of the devices that signed them or enrolled those: a
        // removal descending from any of them would keep a replacement.
        let line = enrolledLine(of: target, in: candidates)
        let replacers = Set(
            candidates.compactMap { ring in isReplacement(ring) ? ring.signer.flatMap { line.keys.contains($0) ? $0 : nil } : nil })
        var needed = replacers
        for key in replacers {
            var k = key
            while let up = line[k] ?? nil, up != target {
                needed.insert(up)
                k = up
            }
        }
        needed.remove(target)
        let replacements = Set(
            candidates.indices.filter { i in
                guard let signer = candidates[i].signer, line.keys.contains(signer) else { return false }
                if isReplacement(candidates[i]) { return true }
                guard candidates[i].content!.reason == "enroll" else { return false }
                let before = Set(
                    candidates[i].parents.compactMap { byID[$0].map { candidates[$0].content!.members.map(\.publicKey) } }.joined())
                return candidates[i].content!.members.contains { needed.contains($0.publicKey) && !before.contains($0.publicKey) }
            })
        let cutByOthers = Set(
            candidates.indices.filter { i in
                candidates[i].cutBy.contains { byID[$0].map { !signedByTarget.contains($0) } ?? true }
            })
        let eligible = candidates.indices.filter { i in
            let ancestry = [i] + graph.ancestors[i].elements
            guard !signedByTarget.contains(i), ancestry.allSatisfy({ !replacements.contains($0) && !cutByOthers.contains($0) }),
                candidates[i].content!.members.contains(where: { $0.publicKey == signer.publicKey && $0.role == "device" && $0.isEd25519 }),
                candidates[i].content!.members.contains(where: { $0.publicKey == target })
            else { return false }
            return !ancestry.contains {
                candidates[$0].content!.removed.contains { $0.publicKey == signer.publicKey || $0.publicKey == target }
            }
        }
        let parents = eligible.filter { i in !eligible.contains { $0 != i && graph.ancestors[$0].contains(i) } }
        guard !parents.isEmpty, parents.count <= Limits.maxParentCount else {
            return try build(.remove(publicKey: target), state: state, signer: signer, now: now, random: random)
        }
        var ancestry = Set(parents)
        for p in parents { ancestry.formUnion(graph.ancestors[p].elements) }
        let restricted = KeyState(
            vaultID: state.vaultID, heads: parents.map { candidates[$0] }, trusted: ancestry.sorted().map { candidates[$0] },
            keys: state.keys,
            keyrings: state.keyrings
        ).answering(like: state)
        return try build(.remove(publicKey: target), state: restricted, signer: signer, now: now, random: random)
    }

    /// The readers a join keyring carries: the union of its own parents'
    /// (`Spec/keys.md §6`, joining in steps).
    struct JoinReaders {
        var members: [KeyringMember] = []
        var escrow: [EscrowRecipient] = []
        var passphrases: [StoredSlot] = []
        var isEscrowFree = false
        var required: [String] = []

        init(_ head: KeyringInfo) {
            members = head.content!.members.filter { $0.role == "device" || $0.role == "recovery" }
            escrow = head.record.publicPart.slots.contains { if case .escrow = $0 { true } else { false } } ? head.content!.escrow : []
            passphrases = head.record.publicPart.slotEntries.filter { if case .passphrase = $0.slot { true } else { false } }
            isEscrowFree = head.record.publicPart.isEscrowFree
            required = head.record.publicPart.requiredSlotKinds
        }

        func joined(with other: JoinReaders) -> JoinReaders {
            var out = self
            for m in other.members where !out.members.contains(where: { $0.publicKey == m.publicKey }) { out.members.append(m) }
            for e in other.escrow where !out.escrow.contains(where: { $0.publicKey == e.publicKey }) { out.escrow.append(e) }
            for p in other.passphrases where !out.passphrases.contains(where: { $0.slot.passphraseKey == p.slot.passphraseKey }) {
                out.passphrases.append(p)
            }
            out.isEscrowFree = isEscrowFree || other.isEscrowFree
            for k in other.required where !out.required.contains(k) { out.required.append(k) }
            return out
        }

        /// The join's content: its parents' readers minus what the state
        /// removed or retired, one recovery member (the first), the others
        /// listed in `removed`.
        func template(state: KeyState, keep chosen: [UInt8]?, unknownContent: CBORMap, unknownPublic: CBORMap, now: Int64) -> Template {
            let removedKeys = Set(state.removed.map(\.publicKey))
            var kept = members.filter { !removedKeys.contains($0.publicKey) }
            // Keep the state's recovery member when this join has it, so the
            // operation's keyring after the last join has the same one.
            let recoveries = kept.filter { $0.role == "recovery" }
            var dropped: [KeyringMember] = []
            if recoveries.count > 1 {
                let keep = recoveries.first { $0.publicKey == (chosen ?? state.recoveryMember?.publicKey) } ?? recoveries[0]
                dropped = recoveries.filter { $0.publicKey != keep.publicKey }
                kept.removeAll { m in dropped.contains { $0.publicKey == m.publicKey } }
            }
            let retired = Set(state.retired)
            return Template(
                members: kept, removed: dropped, escrow: isEscrowFree ? [] : escrow.filter { !retired.contains($0.publicKey) }, retired: [],
                passphrases: passphrases.filter { !retired.contains($0.slot.passphraseKey ?? []) }, isEscrowFree: isEscrowFree,
                required: required, unknownContent: unknownContent, unknownPublic: unknownPublic, answers: state.answers, now: now)
        }
    }

    /// The readers and fields a new keyring carries.
    struct Template {
        var members: [KeyringMember]
        var removed: [KeyringMember]
        let escrow: [EscrowRecipient]
        let retired: [[UInt8]]
        let passphrases: [StoredSlot]
        let isEscrowFree: Bool
        var required: [String]
        let unknownContent: CBORMap
        let unknownPublic: CBORMap
        /// The keyrings the signer is behind (`Spec/format.md §8.6`).
        let answers: [KeyringID]
        let now: Int64

        /// The template of a new-epoch keyring the recovery key signs: the
        /// `required` slot kinds it does not know dropped, and the members
        /// of a key type it does not know removed (twelfth review R12-1).
        func droppingUnknown() -> Template {
            var out = self
            out.required = required.filter { KeyOperations.knownSlotKinds.contains($0) }
            let odd = members.filter { !$0.isEd25519 && ($0.role == "device" || $0.role == "recovery") }
            out.members.removeAll { m in odd.contains { $0.publicKey == m.publicKey } }
            for m in odd where !out.removed.contains(where: { $0.publicKey == m.publicKey }) { out.removed.append(m) }
            return out
        }

        func content(blobKey: SymmetricKey, reason: String) -> KeyringContent {
            KeyringContent(
                members: members, removed: removed, escrow: escrow, retired: retired, blobKey: blobKey, created: now, reason: reason,
                answers: answers, unknownFields: unknownContent)
        }
    }

    /// A keyring of a fresh key for `epoch`, wrapping to every reader.
    static func newEpochKeyring(
        epoch: UInt32, parents: [KeyringBuilder.Parent], template: Template, blobKey: SymmetricKey, reason: String,
        freshPassphrase: (SecureBytes, UInt64, UInt64)?, vaultID: VaultID, signer: Ed25519.KeyPair, random: any RandomSource
    ) throws(KeyError) -> KeyringProposal {
        let epochKey: EpochKey
        do { epochKey = EpochKey(epoch: epoch, key: try SymmetricKey(using: random), blobKey: blobKey) } catch {
            throw .operationRefused(reason: "\(error)")
        }
        var slots: [StoredSlot] = []
        for m in template.members {
            if let slot = try memberSlot(m, key: epochKey, vaultID: vaultID, random: random) { slots.append(StoredSlot(slot: slot)) }
        }
        for p in template.passphrases {
            slots.append(
                StoredSlot(
                    slot: try SlotCrypto.passphraseSlot(for: epochKey, rewrapping: p.slot, vaultID: vaultID, random: random),
                    unknownFields: p.unknownFields))
        }
        for e in template.escrow {
            slots.append(
                StoredSlot(slot: try SlotCrypto.escrowSlot(for: epochKey, escrowPublicKey: e.publicKey, vaultID: vaultID, random: random)))
        }
        if let (passphrase, ops, mem) = freshPassphrase {
            slots.append(
                StoredSlot(
                    slot: try SlotCrypto.passphraseSlot(
                        for: epochKey, passphrase: passphrase, opsLimit: ops, memLimitBytes: mem, vaultID: vaultID, random: random)))
        }
        guard slots.count <= Limits.maxSlotsPerKeyring else {
            throw .operationRefused(reason: "the keyring would hold more than \(Limits.maxSlotsPerKeyring) slots")
        }
        try checkReaders(members: template.members, escrow: template.escrow, slots: slots)
        let body = try KeyringBuilder.body(
            epochKey: epochKey, vaultID: vaultID, parents: parents, isEscrowFree: template.isEscrowFree,
            requiredSlotKinds: template.required,
            slots: slots, unknownPublicFields: template.unknownPublic, content: template.content(blobKey: blobKey, reason: reason),
            signer: signer, random: random)
        return KeyringProposal(epoch: epoch, body: body, epochKey: epochKey, isNewEpoch: true)
    }

    /// Refuses a keyring with more readers than a new epoch's slots hold
    /// (`Spec/format.md §8.4` rule 1): readers would reject it.
    static func checkReaders(members: [KeyringMember], escrow: [EscrowRecipient], slots: [StoredSlot]) throws(KeyError) {
        let readers = KeyringReaders.count(members: members, escrow: escrow, slots: slots.map(\.slot))
        guard readers <= Limits.maxReadersPerKeyring else {
            throw .operationRefused(
                reason:
                    "the keyring would have \(readers) readers (devices, escrow keys and passphrases); at most \(Limits.maxReadersPerKeyring) fit; remove some first"
            )
        }
    }

    /// The slot that wraps `key` to `member` (none for roles without slots).
    static func memberSlot(_ member: KeyringMember, key: EpochKey, vaultID: VaultID, random: any RandomSource) throws(KeyError) -> KeySlot?
    {
        guard member.isEd25519 else { return nil }
        switch member.role {
        case "recovery": return try SlotCrypto.recoverySlot(for: key, recoveryPublicKey: member.publicKey, vaultID: vaultID, random: random)
        case "device": return try SlotCrypto.deviceSlot(for: key, devicePublicKey: member.publicKey, vaultID: vaultID, random: random)
        default: return nil
        }
    }
}

extension KeySlot {
    /// The public key of a passphrase slot; nil for other kinds.
    var passphraseKey: [UInt8]? { if case .passphrase(_, _, _, let pk, _) = self { pk } else { nil } }
}
