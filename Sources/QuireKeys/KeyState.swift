import QuireCrypto
public import QuireFormat

/// Who holds keys to a vault now, as its trusted keyrings say
/// (`Spec/keys.md §5`): the state every key operation starts from.
///
/// When devices changed the keys concurrently and their copies were merged,
/// the vault has several *heads* (trusted keyrings that no trusted keyring
/// follows). The state joins them: members of any head, minus every device
/// removed in any head; passphrases and escrow keys of any head, minus every
/// key retired in any head; escrow-free when any head is.
public struct KeyState: Sendable {
    /// The vault id.
    public let vaultID: VaultID
    /// The trusted keyrings no trusted keyring names as a parent, in file order.
    public let heads: [KeyringInfo]
    /// Every trusted keyring, in file order.
    public let trusted: [KeyringInfo]
    /// Members now: devices and the recovery key.
    public let members: [KeyringMember]
    /// Members removed so far.
    public let removed: [KeyringMember]
    /// Escrow recipients now (none when escrow-free).
    public let escrow: [EscrowRecipient]
    /// X25519 keys of passphrases and escrow recipients taken out of use.
    public let retired: [[UInt8]]
    /// The passphrase slots in use now, one per passphrase (by public key),
    /// with the fields their kind does not define.
    public let passphrases: [StoredSlot]
    /// True when any head is escrow-free.
    public let isEscrowFree: Bool
    /// The highest epoch of a head.
    public let epoch: UInt16
    /// Every epoch key the credential holds, for the history of a new keyring.
    let keys: KeySet
    /// The blob key (the same in every keyring).
    let blobKey: SymmetricKey

    /// The state the trusted keyrings of `unlocked` describe.
    ///
    /// - Throws: ``KeyError/operationRefused(reason:)`` when no keyring is trusted.
    public init(_ unlocked: UnlockedKeys, vaultID: VaultID) throws(KeyError) {
        self.vaultID = vaultID
        let trusted = unlocked.keyrings.filter { $0.isTrusted && $0.content != nil }
        guard !trusted.isEmpty, let blobKey = unlocked.keys.blobKey else {
            throw .operationRefused(reason: "no trusted keyring: the vault's keys cannot be changed")
        }
        var parentIDs = Set<KeyringID>()
        for ring in trusted { parentIDs.formUnion(ring.record.publicPart.parents) }
        let heads = trusted.filter { !parentIDs.contains($0.id) }
        self.trusted = trusted
        self.heads = heads
        self.keys = unlocked.keys
        self.blobKey = blobKey

        var removed: [KeyringMember] = []
        var retired: [[UInt8]] = []
        for head in heads {
            for m in head.content!.removed where !removed.contains(where: { $0.publicKey == m.publicKey }) { removed.append(m) }
            for k in head.content!.retired where !retired.contains(k) { retired.append(k) }
        }
        var members: [KeyringMember] = []
        for head in heads {
            for m in head.content!.members
            where !members.contains(where: { $0.publicKey == m.publicKey }) && !removed.contains(where: { $0.publicKey == m.publicKey }) {
                members.append(m)
            }
        }
        isEscrowFree = heads.contains { $0.record.publicPart.isEscrowFree }
        var escrow: [EscrowRecipient] = []
        if !isEscrowFree {
            for head in heads {
                for e in head.content!.escrow where !escrow.contains(where: { $0.publicKey == e.publicKey }) && !retired.contains(e.publicKey) {
                    escrow.append(e)
                }
            }
        }
        var passphrases: [StoredSlot] = []
        for head in heads {
            for entry in head.record.publicPart.slotEntries {
                guard case let .passphrase(_, _, _, publicKey, _) = entry.slot, !retired.contains(publicKey) else { continue }
                let known = passphrases.contains { if case let .passphrase(_, _, _, pk, _) = $0.slot { pk == publicKey } else { false } }
                if !known { passphrases.append(entry) }
            }
        }
        self.members = members
        self.removed = removed
        self.retired = retired
        self.escrow = escrow
        self.passphrases = passphrases
        epoch = heads.map(\.epoch).max()!
    }

    /// The member with this Ed25519 public key, if any.
    public func member(withKey publicKey: [UInt8]) -> KeyringMember? {
        members.first { $0.publicKey == publicKey }
    }

    /// The enrolled devices (members with role `device`).
    public var devices: [KeyringMember] { members.filter { $0.role == "device" } }

    /// The recovery key's member entry, if the vault has one.
    public var recoveryMember: KeyringMember? { members.first { $0.role == "recovery" } }

    /// True when `ring` wraps its epoch key to exactly the readers this
    /// state has: the same members, the same passphrases, the same escrow
    /// keys (none when escrow-free) — so that writing under its epoch tells
    /// no one more, and no one less, than the state says.
    public func wrapsExactly(_ ring: KeyringInfo) -> Bool {
        guard let c = ring.content else { return false }
        let slots = ring.record.publicPart.slots
        let passphraseKeys = Set(slots.compactMap { if case .passphrase(_, _, _, let pk, _) = $0 { pk } else { nil } })
        let hasEscrowSlot = slots.contains { if case .escrow = $0 { true } else { false } }
        return Set(c.members.map(\.publicKey)) == Set(members.map(\.publicKey))
            && passphraseKeys == Set(passphrases.compactMap { if case .passphrase(_, _, _, let pk, _) = $0.slot { pk } else { nil } })
            && (hasEscrowSlot ? Set(c.escrow.map(\.publicKey)) : []) == Set(escrow.map(\.publicKey))
            && ring.record.publicPart.isEscrowFree == isEscrowFree
    }
}
