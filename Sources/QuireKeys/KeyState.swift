import QuireCrypto
@_spi(Format) public import QuireFormat

/// The key state a keyring operation starts from (`Spec/keys.md §5`),
/// computed from the keyrings the reader trusts.
public struct KeyState: Sendable {
    /// The vault id.
    @_spi(Format) public let vaultID: VaultID
    /// The trusted keyrings no trusted keyring names as a parent, in file order.
    package let heads: [KeyringInfo]
    /// Every trusted keyring, in file order.
    package let trusted: [KeyringInfo]
    /// Current members: the heads' members (first occurrence kept), minus
    /// removed; the recovery key too. An app lists ``devices``.
    @_spi(Format) public let members: [KeyringMember]
    /// Every member removed in any trusted keyring, in file order: keyrings
    /// list only whom they remove, and removal is for good.
    public let removed: [KeyringMember]
    /// Current escrow recipients (none in escrow-free mode), minus retired keys.
    @_spi(Format) public let escrow: [EscrowRecipient]
    /// Passphrase and escrow public keys retired in any trusted keyring.
    @_spi(Format) public let retired: [[UInt8]]
    /// The passphrase slots in use, one per public key, minus retired ones.
    package let passphrases: [StoredSlot]
    /// True when any head is escrow-free.
    @_spi(Format) public let isEscrowFree: Bool
    /// Slot kinds some head requires.
    @_spi(Format) public let requiredSlotKinds: [String]
    /// The highest epoch of a head.
    @_spi(Format) public let epoch: UInt32
    /// The keyrings the credential is behind (`Spec/format.md §8.6`), in
    /// file order: a keyring a device signs lists them in `answers`
    /// (``answers(signer:removing:)``).
    @_spi(Format) public internal(set) var answers: [KeyringID] = []
    /// The member whose link made each keyring of ``answers``.
    var answerSigners: [KeyringID: [UInt8]] = [:]
    let keys: KeySet
    /// Every keyring of the file, in file order, trusted or not: a removal
    /// by the recovery key chooses its parents among those that passed
    /// rules 1–5 (`Spec/keys.md §6.3`).
    let keyrings: [KeyringInfo]

    /// The state of `unlocked`.
    ///
    /// - Throws: ``KeyError/operationRefused(reason:)`` when nothing is trusted.
    package init(_ unlocked: UnlockedKeys, vaultID: VaultID) throws(KeyError) {
        let trusted = unlocked.keyrings.filter { $0.isTrusted && $0.content != nil }
        guard !trusted.isEmpty else {
            throw .operationRefused(reason: "no trusted keyring: the vault's keys cannot be changed")
        }
        var parentIDs = Set<KeyringID>()
        for ring in trusted { parentIDs.formUnion(ring.parents) }
        self.init(
            vaultID: vaultID, heads: trusted.filter { !parentIDs.contains($0.id) }, trusted: trusted, keys: unlocked.keys,
            keyrings: unlocked.keyrings)
        answers = unlocked.newerKeyrings.map(\.id)
        for ring in unlocked.newerKeyrings { answerSigners[ring.id] = ring.signer?.publicKey }
    }

    /// What a keyring signed by `signer` lists in `answers` (`Spec/keys.md §6`
    /// "Who"): nothing when a recovery member signs (rule 5.3 does not read
    /// it, and no flood of keyrings may make its removal too long to
    /// write); otherwise the keyrings this credential is behind, those
    /// signed by `target` (the member it removes) first, at most
    /// ``answersLimit`` (``Limits/maxKeyringListCount``).
    func answers(signer: KeyringMember, removing target: [UInt8]?) -> [KeyringID] {
        guard signer.role != "recovery" else { return [] }
        let first = answers.filter { target != nil && answerSigners[$0] == target }
        let rest = answers.filter { !(target != nil && answerSigners[$0] == target) }
        return Array((first + rest).prefix(Self.answersLimit))
    }

    /// The most ids a writer lists in `answers`: the list's limit,
    /// ``Limits/maxKeyringListCount``; tests lower it to exercise the cap
    /// without building 4,097 keyrings.
    @TaskLocal package static var answersLimit = Limits.maxKeyringListCount

    /// This state with its answers carried over from `other`.
    func answering(like other: KeyState) -> KeyState {
        var out = self
        out.answers = other.answers
        out.answerSigners = other.answerSigners
        return out
    }

    /// The state as if `heads` were the only heads (a removal leaves out the
    /// removed member's branch).
    init(vaultID: VaultID, heads: [KeyringInfo], trusted: [KeyringInfo], keys: KeySet, keyrings: [KeyringInfo]) {
        self.keyrings = keyrings
        self.vaultID = vaultID
        self.trusted = trusted
        self.heads = heads
        self.keys = keys
        var removed: [KeyringMember] = []
        var retired: [[UInt8]] = []
        var seenRemoved = Set<[UInt8]>()
        var seenRetired = Set<[UInt8]>()
        let trustedMembers = Set(trusted.flatMap { $0.content!.members.map(\.publicKey) })
        for ring in trusted {
            for m in ring.content!.removed where seenRemoved.insert(m.publicKey).inserted { removed.append(m) }
            // A removal's puppets that a trusted keyring lists leave with it
            // (Spec/format.md §8.4 rule 6, Spec/keys.md §5).
            for m in ring.removedPuppets where trustedMembers.contains(m.publicKey) && seenRemoved.insert(m.publicKey).inserted {
                removed.append(m)
            }
            for k in ring.content!.retired where seenRetired.insert(k).inserted { retired.append(k) }
        }
        var members: [KeyringMember] = []
        var seenMembers = seenRemoved
        for head in heads {
            for m in head.content!.members where seenMembers.insert(m.publicKey).inserted { members.append(m) }
        }
        // One recovery member: the first head's (concurrent replacements that
        // both stood leave several; a join keeps one).
        if let first = members.firstIndex(where: { $0.role == "recovery" }) {
            members = members.enumerated().filter { $0.offset == first || $0.element.role != "recovery" }.map(\.element)
        }
        isEscrowFree = heads.contains { $0.record.publicPart.isEscrowFree }
        var escrow: [EscrowRecipient] = []
        if !isEscrowFree {
            for head in heads {
                for e in head.content!.escrow
                where !escrow.contains(where: { $0.publicKey == e.publicKey }) && !seenRetired.contains(e.publicKey) {
                    escrow.append(e)
                }
            }
        }
        var passphrases: [StoredSlot] = []
        for head in heads {
            for entry in head.record.publicPart.slotEntries {
                guard case .passphrase(_, _, _, let publicKey, _) = entry.slot, !seenRetired.contains(publicKey) else { continue }
                let known = passphrases.contains { if case .passphrase(_, _, _, let pk, _) = $0.slot { pk == publicKey } else { false } }
                if !known { passphrases.append(entry) }
            }
        }
        var required: [String] = []
        for head in heads {
            for kind in head.record.publicPart.requiredSlotKinds where !required.contains(kind) { required.append(kind) }
        }
        self.members = members
        self.removed = removed
        self.retired = retired
        self.escrow = escrow
        self.passphrases = passphrases
        requiredSlotKinds = required
        epoch = heads.map(\.epoch).max() ?? 0
    }

    /// The current member with this public key, if any.
    @_spi(Format) public func member(withKey publicKey: [UInt8]) -> KeyringMember? {
        members.first { $0.publicKey == publicKey }
    }

    /// The enrolled devices: the current members but the recovery key,
    /// what a devices screen lists (each by its ``KeyringMember/name`` and
    /// ``KeyringMember/fingerprint``).
    public var devices: [KeyringMember] { members.filter { $0.role == "device" } }

    /// The recovery member.
    @_spi(Format) public var recoveryMember: KeyringMember? { members.first { $0.role == "recovery" } }

    /// The head new records are sealed under: the newest head of the highest
    /// epoch (ties: the smallest key commitment).
    package var writeHead: KeyringInfo {
        heads.filter { $0.epoch == epoch }.min { $0.record.publicPart.keyCommit.lexicographicallyPrecedes($1.record.publicPart.keyCommit) }!
    }

    /// True when `ring` wraps to exactly the readers of this state
    /// (`Spec/keys.md §6.8`).
    package func wrapsExactly(_ ring: KeyringInfo) -> Bool {
        guard let c = ring.content else { return false }
        let slots = ring.record.publicPart.slots
        let passphraseKeys = Set(slots.compactMap { if case .passphrase(_, _, _, let pk, _) = $0 { pk } else { nil } })
        let hasEscrowSlot = slots.contains { if case .escrow = $0 { true } else { false } }
        return Set(c.members.map(\.publicKey)) == Set(members.map(\.publicKey))
            && passphraseKeys == Set(passphrases.compactMap { if case .passphrase(_, _, _, let pk, _) = $0.slot { pk } else { nil } })
            && (hasEscrowSlot ? Set(c.escrow.map(\.publicKey)) : []) == Set(escrow.map(\.publicKey))
            && ring.record.publicPart.isEscrowFree == isEscrowFree
    }

    /// True when every reader of `other` (members, escrow recipients,
    /// passphrases), apart from the member `except`, is a reader here too.
    func hasAllReaders(of other: KeyState, except: [UInt8]) -> Bool {
        let mine = Set(members.map(\.publicKey) + escrow.map(\.publicKey) + passphraseKeys)
        let theirs = Set(other.members.map(\.publicKey) + other.escrow.map(\.publicKey) + other.passphraseKeys).subtracting([except])
        return theirs.isSubset(of: mine)
    }

    /// The public keys of ``passphrases``.
    package var passphraseKeys: [[UInt8]] {
        passphrases.compactMap { if case .passphrase(_, _, _, let pk, _) = $0.slot { pk } else { nil } }
    }
}
