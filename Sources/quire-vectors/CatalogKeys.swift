@_spi(Crypto) import QuireCrypto
@_spi(Format) import QuireFormat
@_spi(Format) import QuireKeys
import QuireVectors

/// Keyrings: layout, trust rules 1–5, removal (rule 6), and the errors that
/// stop a reader before any record.
extension Catalog {
    static let sam = [UInt8](repeating: 0x51, count: 32)  // a device that stays
    static let lost = [UInt8](repeating: 0x52, count: 32)  // a device that is removed

    static func recoveryMember(_ b: VectorBuilder) -> KeyringMember {
        KeyringMember(role: "recovery", publicKey: b.signer.publicKey, name: "Recovery key", added: b.now)
    }

    /// An epoch-2 keyring, child of the root, made by the recovery key with
    /// `edit` applied to its members/removed/slots before it is built.
    static func child(
        _ b: VectorBuilder, epoch: UInt32 = 2, members: [KeyringMember]? = nil, removed: [KeyringMember] = [],
        extraSlots: [StoredSlot] = [],
        reason: String = "rotate", escrowFree: Bool = false, signer: Ed25519.KeyPair? = nil, parents: [KeyringBuilder.Parent]? = nil,
        required: [String] = [], escrow: [EscrowRecipient] = [], blobKey: SymmetricKey? = nil, answers: [KeyringID] = []
    ) throws -> (EpochKey, [UInt8]) {
        let key = try b.freshKey(epoch, blobKey: blobKey)
        let list = members ?? b.members
        let body = try b.keyring(
            key, parents: parents ?? [b.parent(b.rootID)], slots: try b.memberSlots(for: key, members: list) + extraSlots,
            members: list, removed: removed, signer: signer, reason: reason, escrowFree: escrowFree, requiredSlotKinds: required,
            escrow: escrow,
            answers: answers)
        return (key, body)
    }

    /// An epoch-2 keyring, child of the root, signed by the recovery key and
    /// assembled part by part so that one part can break a rule: its links
    /// (or who signs them), its epoch, its public part, its parent keys, its
    /// signature (given the public part's bytes and the content's), or its
    /// inner part (transformed, or left unpadded).
    static func forgedChild(
        _ b: VectorBuilder, key given: EpochKey? = nil, links: [[UInt8]]? = nil, linkSigner: Ed25519.KeyPair? = nil, epoch: UInt32? = nil,
        editPublic: ((inout CBORMap) -> Void)? = nil, parentKeys: [SymmetricKey]? = nil,
        signature: ((_ publicBytes: [UInt8], _ content: [UInt8]) -> [UInt8])? = nil, transformInner: (([UInt8]) -> [UInt8])? = nil,
        pad: Bool = true
    ) throws -> (EpochKey, [UInt8]) {
        let key = try given ?? b.freshKey(2)
        let pub = try KeyringForge.publicPart(
            key: key, parents: [b.parent(b.rootID)], vaultID: b.vaultID, slots: try b.memberSlots(for: key),
            signer: linkSigner ?? b.signer, random: b.random, links: links, epoch: epoch)
        var publicBytes = pub.encoded()
        if let editPublic, case .map(var m) = try CBORDecoder.decode(publicBytes) {
            editPublic(&m)
            publicBytes = CBOREncoder.encode(.map(m))
        }
        var content = KeyringContent(members: b.members, blobKey: b.blobKey, created: b.now, reason: "rotate")
        content.parentKeys = parentKeys ?? [b.ringKeys[b.rootID]!.key]
        let c = content.encoded()
        return (
            key,
            try KeyringForge.body(
                publicBytes: publicBytes, content: c, key: key, vaultID: b.vaultID, signer: b.signer, random: b.random,
                signature: signature?(publicBytes, c), transformInner: transformInner, pad: pad)
        )
    }

    /// A vector whose only news is one keyring, committed (twice) after an
    /// entry; the keyring is reported with `code`.
    static func keyringVector(
        _ name: String, code: String, comment: String, builder: ((String) throws -> VectorBuilder)? = nil,
        make: @escaping (VectorBuilder) throws -> (EpochKey, [UInt8]), after: Bool = true, deviceSeed: [UInt8]? = nil
    ) -> Make {
        {
            let b = try builder?(name) ?? VectorBuilder(name)
            try b.commit([.entry(b.entry("epoch 1"))])
            let (key, body) = try make(b)
            let index = try b.addKeyring(key, body, trust: false)
            if after { try b.commit([.entry(b.entry("still under epoch 1"))]) }
            // No code: the reader never tries the keyring (format.md §8.5
            // step 2, the gate), so it reports nothing about it.
            if code.isEmpty { return try b.vector("success", comment: comment, deviceSeed: deviceSeed) }
            return try b.vector("damaged", comment: comment, issues: [(code, b.offset(index))], deviceSeed: deviceSeed)
        }
    }

    // MARK: - Keyrings: layout and rule 1, escrow-free

    static var keyrings: [Make] {
        [
            keyringVector(
                "damaged-keyring-escrow-slot-in-escrow-free", code: "escrow_forbidden",
                comment: "a keyring that declares the vault escrow-free but holds an escrow slot is rejected from its public part"
            ) { b in
                let escrow = try X25519.KeyPair(seed: SecureBytes(randomCount: 32, using: b.random))
                let key = try b.freshKey(2)
                let slot = StoredSlot(
                    slot: try SlotCrypto.escrowSlot(for: key, escrowPublicKey: escrow.publicKey, vaultID: b.vaultID, random: b.random))
                let body = try b.keyring(
                    key, parents: [b.parent(b.rootID)], slots: try b.memberSlots(for: key) + [slot], members: b.members,
                    reason: "escrow-free", escrowFree: true)
                return (key, body)
            },
            keyringVector(
                "damaged-keyring-escrow-forbidden-unreached", code: "escrow_forbidden",
                comment:
                    "an escrow-free keyring whose only slot is an escrow slot is rejected from its public part alone, though no credential reaches it"
            ) { b in
                let escrow = try X25519.KeyPair(seed: SecureBytes(randomCount: 32, using: b.random))
                let key = try b.freshKey(2)
                let slot = StoredSlot(
                    slot: try SlotCrypto.escrowSlot(for: key, escrowPublicKey: escrow.publicKey, vaultID: b.vaultID, random: b.random))
                return (
                    key,
                    try b.keyring(
                        key, parents: [b.parent(b.rootID)], slots: [slot], members: b.members, reason: "escrow-free", escrowFree: true)
                )
            },
            keyringVector(
                "damaged-keyring-escrow-free-dropped", code: "escrow_forbidden",
                comment: "escrow-free is for good: a child of an escrow-free keyring that drops the flag is rejected (rule 5)",
                builder: { try VectorBuilder($0, escrowFree: true) },
                make: { b in try child(b) }),
            keyringVector(
                "damaged-keyring-escrow-free-two-recovery-slots", code: "escrow_forbidden",
                comment: "an escrow-free keyring must hold exactly one recovery slot; a second one (to any key) is rejected once opened"
            ) { b in
                let key = try b.freshKey(2)
                let other = try Ed25519.KeyPair(seed: SecureBytes(randomCount: 32, using: b.random))
                let slot = StoredSlot(
                    slot: try SlotCrypto.recoverySlot(for: key, recoveryPublicKey: other.publicKey, vaultID: b.vaultID, random: b.random))
                return (
                    key,
                    try b.keyring(
                        key, parents: [b.parent(b.rootID)], slots: try b.memberSlots(for: key) + [slot], members: b.members,
                        reason: "escrow-free", escrowFree: true)
                )
            },
            keyringVector(
                "damaged-keyring-escrow-free-missing-device-slot", code: "escrow_forbidden",
                comment:
                    "an escrow-free keyring listing a device member but holding no device slot: its device slots must number exactly its device members",
                builder: { try VectorBuilder($0, deviceSeed: [UInt8](repeating: 0x53, count: 32)) },
                make: { b in
                    let key = try b.freshKey(2)
                    let slots = try b.memberSlots(for: key, members: [recoveryMember(b)])
                    return (
                        key,
                        try b.keyring(
                            key, parents: [b.parent(b.rootID)], slots: slots, members: b.members, reason: "escrow-free", escrowFree: true)
                    )
                }),
            keyringVector(
                "damaged-keyring-escrow-free-duplicate-passphrase", code: "escrow_forbidden",
                comment:
                    "an escrow-free keyring with two passphrase slots of one public key (a second reader could hide behind the first's key) is rejected"
            ) { b in
                let key = try b.freshKey(2)
                var p = Array("one passphrase".utf8)
                let first = try SlotCrypto.passphraseSlot(
                    for: key, passphrase: SecureBytes(consuming: &p), opsLimit: 1, memLimitBytes: 8192, vaultID: b.vaultID, random: b.random
                )
                let second = try SlotCrypto.passphraseSlot(for: key, rewrapping: first, vaultID: b.vaultID, random: b.random)
                return (
                    key,
                    try b.keyring(
                        key, parents: [b.parent(b.rootID)],
                        slots: try b.memberSlots(for: key) + [StoredSlot(slot: first), StoredSlot(slot: second)],
                        members: b.members, reason: "escrow-free", escrowFree: true)
                )
            },
            keyringVector(
                "damaged-keyring-member-not-a-point", code: "malformed_keyring",
                comment: "a keyring naming a member whose key is not a valid Ed25519 point (nothing could be wrapped to it) is malformed"
            ) { b in
                var notAPoint = [UInt8](repeating: 0xff, count: 32)
                notAPoint[31] = 0x7f
                let key = try b.freshKey(2)
                let members = b.members + [KeyringMember(role: "device", publicKey: notAPoint, name: "Ghost", added: b.now)]
                return (key, try b.keyring(key, parents: [b.parent(b.rootID)], slots: try b.memberSlots(for: key), members: members))
            },
            keyringVector(
                "damaged-keyring-slot-mismatch", code: "malformed_keyring",
                comment:
                    "a keyring whose recovery slot opens to a key other than the one its keyCommit names (the key commitment check) is malformed"
            ) { b in
                let key = try b.freshKey(2)
                let other = try b.freshKey(2)
                return (key, try b.keyring(key, parents: [b.parent(b.rootID)], slots: try b.memberSlots(for: other), members: b.members))
            },
            keyringVector(
                "damaged-keyring-two-recovery-members", code: "malformed_keyring",
                comment: "a keyring must list exactly one recovery member; this one lists two"
            ) { b in
                let other = try Ed25519.KeyPair(seed: SecureBytes(randomCount: 32, using: b.random))
                return try child(
                    b,
                    members: b.members + [
                        KeyringMember(role: "recovery", publicKey: other.publicKey, name: "Second recovery key", added: b.now)
                    ])
            },
            keyringVector(
                "damaged-keyring-no-recovery-member", code: "malformed_keyring",
                comment: "a keyring that lists no recovery member is malformed (its recovery slot opens, its content does not pass rule 1)"
            ) { b in
                let key = try b.freshKey(2)
                let laptop = try VectorBuilder.device([UInt8](repeating: 0x54, count: 32))
                let members = [KeyringMember(role: "device", publicKey: laptop.publicKey, name: "Laptop", added: b.now)]
                return (key, try b.keyring(key, parents: [b.parent(b.rootID)], slots: try b.memberSlots(for: key), members: members))
            },
            keyringVector(
                "damaged-keyring-parent-key-mismatch", code: "malformed_keyring",
                comment:
                    "a keyring whose parentKeys entry does not hash to its parent's keyCommit (its link opens under the root's key, so the gate tries it): a parent key does not match its parent"
            ) { b in
                try forgedChild(b, parentKeys: [try b.freshKey(1).key])
            },
            keyringVector(
                "damaged-keyring-parent-key-count", code: "malformed_keyring",
                comment: "a keyring with one parent but no parentKeys entry: the counts must agree"
            ) { b in
                try forgedChild(b, parentKeys: [])
            },
            keyringVector(
                "damaged-keyring-links-count", code: "malformed_keyring",
                comment: "a keyring with one parent and no link: |links| must equal |parents| (checked from the public part)"
            ) { b in
                try forgedChild(b, links: [])
            },
            keyringVector(
                "damaged-keyring-link-wrong-length", code: "malformed_keyring",
                comment:
                    "a keyring whose link is 32 bytes (version 2's first draft, a MAC): a link is nonce ‖ sealed(signer ‖ signature), 136 bytes"
            ) { b in
                try forgedChild(b, links: [b.random.bytes(32)])
            },
            keyringVector(
                "damaged-keyring-parent-twice", code: "malformed_keyring",
                comment: "a keyring naming the same parent twice: parents must be distinct"
            ) { b in
                let key = try b.freshKey(2)
                return (
                    key,
                    try b.keyring(
                        key, parents: [b.parent(b.rootID), b.parent(b.rootID)], slots: try b.memberSlots(for: key), members: b.members)
                )
            },
            keyringVector(
                "damaged-keyring-epoch-zero", code: "malformed_keyring",
                comment: "a keyring of epoch 0: epochs run from 1"
            ) { b in
                try forgedChild(b, epoch: 0)
            },
            keyringVector(
                "damaged-keyring-epoch-over-u32", code: "malformed_keyring",
                comment: "a keyring whose epoch is 2³² (one past the largest u32): malformed"
            ) { b in
                try forgedChild(b, editPublic: { $0[text: "epoch"] = .unsigned(1 << 32) })
            },
            keyringVector(
                "damaged-keyring-too-many-slots", code: "malformed_keyring",
                comment: "a keyring with 257 key slots, one over the limit"
            ) { b in
                let key = try b.freshKey(2)
                var slots = try b.memberSlots(for: key)
                while slots.count < 257 { slots.append(StoredSlot(slot: .escrow(box: b.random.bytes(KeySlot.boxByteCount)))) }
                return (key, try b.keyring(key, parents: [b.parent(b.rootID)], slots: slots, members: b.members))
            },
            keyringVector(
                "damaged-keyring-inner-not-padded", code: "malformed_keyring",
                comment: "a keyring whose sealed inner part is not padded (pad(I) must be canonical Padmé padding)"
            ) { b in
                try forgedChild(b, pad: false)
            },
            keyringVector(
                "damaged-keyring-inner-extra-field", code: "malformed_keyring",
                comment: "a keyring whose inner part has a fourth field: I must hold exactly content, signature and signer"
            ) { b in
                try forgedChild(
                    b,
                    transformInner: { i in
                        guard case .map(var m)? = try? CBORDecoder.decode(i) else { return i }
                        m[text: "extra"] = .bytes([1])
                        return CBOREncoder.encode(.map(m))
                    })
            },
            keyringVector(
                "damaged-keyring-sealed-part-altered", code: "malformed_keyring",
                comment: "a keyring whose sealed part was altered before it was written (body hash consistent): its key does not open it"
            ) { b in
                let (key, body) = try child(b)
                let p = try KeyringForge.parts(of: body)
                var sealed = p.sealed
                sealed[10] ^= 0x01
                return (key, KeyringForge.assemble(publicBytes: p.publicBytes, nonce: p.nonce, sealed: sealed))
            },
            {
                let b = try VectorBuilder("damaged-keyring-key-id-mismatch")
                try b.commit([.entry(b.entry("epoch 1"))])
                let (key, body) = try child(b)
                let frame = Edit.plaintextFrame(kind: .keyring, keyID: b.keys.writeKey!.id, body: body)
                let idx = try b.commit([.raw(frame, release: nil)])
                _ = key
                return try b.vector(
                    "damaged", comment: "a keyring frame whose header key id is not the first six bytes of its keyCommit is malformed",
                    issues: [("malformed_keyring", b.offset(idx[0]!))])
            },
            {
                // Pins format.md §8.5 step 3 (Python README item 6): a keyring
                // that fails rule 1 but whose public part decodes is "a
                // keyring of the file", so a parent key that does not match it
                // stops the child's parent keys; the child fails rule 5.1.
                let b = try VectorBuilder("damaged-keyring-parent-fails-rule-1-stops-parent-keys", deviceSeed: sam)
                try b.commit([.entry(b.entry("epoch 1"))])
                // X: a child of the root with no slot for the recovery key.
                let xKey = try b.freshKey(2)
                let xBody = try b.keyring(
                    xKey, parents: [b.parent(b.rootID)],
                    slots: try b.memberSlots(for: xKey, members: b.members.filter { $0.role == "device" }),
                    members: b.members)
                let x = try b.addKeyring(xKey, xBody, trust: false)
                // P: a child of the root whose frame header's key id is wrong (rule 1).
                let (_, pBody) = try child(b)
                let p = try b.commit([.raw(Edit.plaintextFrame(kind: .keyring, keyID: b.keys.writeKey!.id, body: pBody), release: nil)])[0]!
                // C: parents P (with a key that is not P's) then X (with X's key).
                let cKey = try b.freshKey(3)
                let cBody = try b.keyring(
                    cKey,
                    parents: [
                        KeyringBuilder.Parent(id: KeyringBuilder.id(ofBody: pBody), key: try b.freshKey(2)),
                        b.parent(KeyringBuilder.id(ofBody: xBody)),
                    ],
                    slots: try b.memberSlots(for: cKey), members: b.members)
                let c = try b.addKeyring(cKey, cBody, trust: false)
                // A record sealed under X's key, in a commit under epoch 1's.
                var plain = b.entry("sealed under X's key").encoded()
                Padding.pad(&plain)
                let sealed = try Edit.sealedFrame(
                    kind: .entryRevision, flags: FrameHeader.sealedFlag, key: xKey, vaultID: b.vaultID, plaintext: plain, random: b.random)
                let idx = try b.commit([.raw(sealed, release: nil), .entry(b.entry("still under epoch 1"))])
                _ = x
                return try b.vector(
                    "damaged",
                    comment:
                        "a keyring P fails rule 1 (its frame header's key id is wrong) but is indexed; a keyring C names P with a key that is not P's, then X, a child of the root the recovery key has no slot in: C's parent keys stop at P, so X's key is never reached and the record sealed under it is unknown_key; C fails rule 5.1 first (keyring_unauthenticated, not rule 5.2's malformed_keyring) (format.md §8.5 step 3, §8.4 rule 5)",
                    issues: [
                        ("malformed_keyring", b.offset(p)), ("keyring_unauthenticated", b.offset(c)), ("unknown_key", b.offset(idx[0]!)),
                    ])
            },
            {
                let b = try VectorBuilder("damaged-keyring-malformed")
                let idx = try b.commit([.plaintext(.keyring, [0xa1, 0x66] + Array("public".utf8) + [0x40]), .entry(b.entry("fine"))])
                return try b.vector(
                    "damaged", comment: "a keyring body that is not a valid keyring (body hash intact) is reported and ignored",
                    issues: [("malformed_keyring", b.offset(idx[0]!))])
            },
            {
                let b = try VectorBuilder("damaged-keyring-body-hash")
                try b.commit([.entry(b.entry("epoch 1"))])
                let k = try b.rotate(to: 2)
                let idx = try b.commit([.entry(b.entry("epoch 2, now unreadable"))])
                var bytes = try b.bytes()
                Edit.damageKeyring(&bytes, b, frame: k)
                b.lose(frame: idx[0]!)
                let copies = b.copies(ofKeyring: k)
                return try b.vector(
                    "damaged",
                    comment:
                        "both copies of the epoch-2 keyring damaged: their body hashes fail and neither names an intact keyring, so epoch 2 cannot be unlocked; epoch-1 records still read. The keyring's own commit is made under the epoch-2 key it starts (format.md §9.2), so it is unverifiable too",
                    body: bytes,
                    issues: [
                        ("malformed_keyring", b.offset(copies[0])), ("malformed_keyring", b.offset(copies[1])),
                        ("commit_unverifiable", b.offset(k + 2)),
                        ("unknown_key", b.offset(idx[0]!)), ("commit_unverifiable", b.offset(idx[0]! + 1)),
                    ])
            },
            {
                let b = try VectorBuilder("damaged-slot-bound-to-other-vault")
                try b.commit([.entry(b.entry("epoch 1"))])
                let key = try b.freshKey(2)
                let otherVault = VaultID(using: b.random)
                let slot = StoredSlot(
                    slot: try SlotCrypto.recoverySlot(for: key, recovery: b.recovery, vaultID: otherVault, random: b.random))
                let body = try b.keyring(key, parents: [b.parent(b.rootID)], slots: [slot], members: b.members)
                try b.addKeyring(key, body, trust: false)
                b.writeWith(key)
                let idx = try b.commit([.entry(b.entry("under the epoch-2 key"))], expectReleased: false)
                return try b.vector(
                    "damaged",
                    comment:
                        "a recovery slot whose payload names another vault id does not open (payload = key ‖ vault id ‖ epoch): epoch 2 is not reached, its keyring neither trusted nor rejected",
                    issues: [("unknown_key", b.offset(idx[0]!)), ("commit_unverifiable", b.offset(idx[0]! + 1))])
            },
            {
                let b = try VectorBuilder("damaged-slot-bound-to-other-epoch")
                try b.commit([.entry(b.entry("epoch 1"))])
                let key = try b.freshKey(2)
                let wrongEpoch = EpochKey(epoch: 3, key: key.key)
                let slot = StoredSlot(
                    slot: try SlotCrypto.recoverySlot(for: wrongEpoch, recovery: b.recovery, vaultID: b.vaultID, random: b.random))
                let body = try b.keyring(key, parents: [b.parent(b.rootID)], slots: [slot], members: b.members)
                try b.addKeyring(key, body, trust: false)
                b.writeWith(key)
                let idx = try b.commit([.entry(b.entry("under the epoch-2 key"))], expectReleased: false)
                return try b.vector(
                    "damaged",
                    comment: "a recovery slot whose payload names epoch 3 in an epoch-2 keyring does not open: epoch 2 is not reached",
                    issues: [("unknown_key", b.offset(idx[0]!)), ("commit_unverifiable", b.offset(idx[0]! + 1))])
            },
        ]
    }

    // MARK: - Keyrings: rules 3–5

    static var keyringRules: [Make] {
        [
            keyringVector(
                "damaged-keyring-blob-key-changed", code: "keyring_unauthenticated",
                comment:
                    "a keyring whose blob key differs from its parent's and whose reason is not \"rekey\" is not trusted (only a rekey rotates the blob key)"
            ) { b in
                try child(b, blobKey: try SymmetricKey(bytes: b.random.bytes(32)))
            },
            keyringVector(
                "damaged-keyring-signed-by-outsider", code: "keyring_unauthenticated",
                comment: "a keyring signed by a key that is no member of its parent is not trusted"
            ) { b in
                try child(b, signer: try Ed25519.KeyPair(seed: SecureBytes(randomCount: 32, using: b.random)))
            },
            keyringVector(
                "damaged-keyring-unknown-parent", code: "keyring_unauthenticated",
                comment:
                    "a keyring naming the root and a parent that is not in the vault is not trusted (its link to the root opens, so the gate tries it; one naming only a missing parent is never linked, and nothing is reported about it)"
            ) { b in
                try child(
                    b,
                    parents: [
                        b.parent(b.rootID), KeyringBuilder.Parent(id: KeyringID(unchecked: b.random.bytes(32)), key: try b.freshKey(1)),
                    ])
            },
            keyringVector(
                "damaged-keyring-epoch-skips", code: "keyring_unauthenticated",
                comment: "a keyring of epoch 3 whose parent is of epoch 1 skips an epoch and is not trusted"
            ) { b in try child(b, epoch: 3) },
            keyringVector(
                "damaged-keyring-link-garbage", code: "",
                comment:
                    "a keyring whose link is 136 random bytes: every link must open under its parent's link key and carry the keyring's signer's signature (rule 5.11), so it can never be trusted. It is not linked, so the gate (format.md §8.5 step 2) never tries its slots and nothing is reported about it (before the gate: keyring_unauthenticated at it)"
            ) { b in
                try forgedChild(b, links: [b.random.bytes(KeyringRecord.linkByteCount)])
            },
            keyringVector(
                "damaged-keyring-link-other-signer", code: "keyring_unauthenticated",
                comment:
                    "a keyring signed by the recovery key whose link carries another member's signature (the phone's): the link's signer must be the keyring's signer",
                builder: { try VectorBuilder($0, deviceSeed: sam) },
                make: { b in
                    try forgedChild(b, linkSigner: try VectorBuilder.device(sam))
                }),
            keyringVector(
                "damaged-keyring-link-other-parents", code: "keyring_unauthenticated",
                comment:
                    "a keyring whose link signs another parent list (the links' signature covers H256 of every parent id): a link cannot be moved to a keyring with other parents"
            ) { b in
                let key = try b.freshKey(2)
                let links = try KeyringRecord.links(
                    parents: [(b.rootID, b.ringKeys[b.rootID]!), (KeyringID(unchecked: b.random.bytes(32)), b.ringKeys[b.rootID]!)],
                    signer: b.signer, vaultID: b.vaultID, epoch: 2, keyCommit: key.commitment, random: b.random)
                return try forgedChild(b, key: key, links: [links[0]])
            },
            keyringVector(
                "damaged-keyring-same-epoch-other-key", code: "keyring_unauthenticated",
                comment:
                    "a keyring of its parent's epoch but with a key of its own: a same-epoch child must share its parent's key commitment"
            ) { b in try child(b, epoch: 1) },
            keyringVector(
                "damaged-keyring-bad-signature", code: "keyring_unauthenticated",
                comment: "a keyring whose signature does not verify (rule 3)"
            ) { b in
                var sig = b.signer.sign(Array("not the keyring".utf8))
                sig[0] ^= 1
                return try forgedChild(b, signature: { _, _ in sig })
            },
            keyringVector(
                "damaged-keyring-signature-without-nonce", code: "keyring_unauthenticated",
                comment:
                    "a keyring signed over H256(P) ‖ H256(C) without its nonce (the version-1 shape, which let anyone holding the key re-seal it): the signature must cover the nonce"
            ) { b in
                try forgedChild(
                    b,
                    signature: { p, c in
                        b.signer.sign(
                            Array("quire-keyring-v2".utf8) + b.vaultID.bytes + BLAKE2b.hash(p, byteCount: 32)
                                + BLAKE2b.hash(c, byteCount: 32))
                    })
            },
            keyringVector(
                "damaged-keyring-recovery-member-swapped", code: "keyring_unauthenticated",
                comment:
                    "a keyring whose recovery member is not its parent's, without reason \"recovery\" and without listing the old one as removed"
            ) { b in
                let other = try Ed25519.KeyPair(seed: SecureBytes(randomCount: 32, using: b.random))
                let key = try b.freshKey(2)
                let members = [KeyringMember(role: "recovery", publicKey: other.publicKey, name: "Recovery key", added: b.now)]
                // A second recovery slot, for the old key, so the reader reaches it.
                let slots = try b.memberSlots(for: key, members: members) + b.memberSlots(for: key, members: [recoveryMember(b)])
                return (key, try b.keyring(key, parents: [b.parent(b.rootID)], slots: slots, members: members))
            },
            keyringVector(
                "damaged-keyring-recovery-replaced-old-kept", code: "keyring_unauthenticated",
                comment:
                    "a recovery replacement (reason \"recovery\") that does not list the old recovery member as removed: the old key would keep reading"
            ) { b in
                let other = try Ed25519.KeyPair(seed: SecureBytes(randomCount: 32, using: b.random))
                let key = try b.freshKey(2)
                let members = [KeyringMember(role: "recovery", publicKey: other.publicKey, name: "Recovery key", added: b.now)]
                let slots = try b.memberSlots(for: key, members: members) + b.memberSlots(for: key, members: [recoveryMember(b)])
                return (key, try b.keyring(key, parents: [b.parent(b.rootID)], slots: slots, members: members, reason: "recovery"))
            },
            keyringVector(
                "damaged-keyring-removes-two", code: "keyring_unauthenticated",
                comment:
                    "a keyring signed by a device that removes two members at once: a removal removes exactly one, unless a recovery member signs it (a lockdown, rule 5.10)",
                builder: { try VectorBuilder($0, deviceSeed: sam, moreDeviceSeeds: [lost, [UInt8](repeating: 0x55, count: 32)]) },
                make: { b in
                    try child(
                        b, members: [b.members[0], b.members[1]], removed: [b.members[2], b.members[3]], reason: "lockdown",
                        signer: try VectorBuilder.device(sam))
                }),
            {
                let b = try VectorBuilder(
                    "success-lockdown-removes-two", deviceSeed: sam, moreDeviceSeeds: [lost, [UInt8](repeating: 0x55, count: 32)])
                try b.commit([.entry(b.entry("before the lockdown"))])
                let kept = [b.members[0], b.members[1]]
                let (k2, body) = try child(b, members: kept, removed: [b.members[2], b.members[3]], reason: "lockdown")
                try b.addKeyring(k2, body, members: kept)
                try b.commit([.entry(b.entry("after the lockdown"))])
                return try b.vector(
                    "success",
                    comment:
                        "a lockdown: the recovery key removes two devices in one keyring of a new epoch (rule 5.10 lets a keyring signed by a recovery member remove several members of its parents); opened by the device that stays",
                    deviceSeed: sam)
            },
            keyringVector(
                "damaged-keyring-removes-a-non-member", code: "keyring_unauthenticated",
                comment:
                    "a keyring (signed by the recovery key) that lists in removed a key that no parent lists as a member: a removed key must be a member of a parent (rule 5.10), so nobody can fill removed with keys that never were members",
                builder: { try VectorBuilder($0, deviceSeed: sam) },
                make: { b in
                    let stranger = try Ed25519.KeyPair(seed: SecureBytes(randomCount: 32, using: b.random))
                    return try child(
                        b, removed: [KeyringMember(role: "device", publicKey: stranger.publicKey, name: "never a member", added: b.now)],
                        reason: "remove")
                }),
            keyringVector(
                "damaged-keyring-new-epoch-reuses-key", code: "keyring_unauthenticated",
                comment:
                    "a keyring of epoch 2 whose key is its parent's (the root's): a new epoch has a new key, never an ancestor's (rule 5.4), or every former holder of the old key would read it"
            ) { b in
                let root = b.ringKeys[b.rootID]!
                let key = EpochKey(epoch: 2, key: root.key, blobKey: b.blobKey)
                return (key, try b.keyring(key, parents: [b.parent(b.rootID)], slots: try b.memberSlots(for: key), members: b.members))
            },
            keyringVector(
                "damaged-keyring-removal-keeps-the-epoch", code: "keyring_unauthenticated",
                comment:
                    "a keyring that removes a device but keeps its parent's epoch and key (epoch 1, the root's key): a removal starts a new epoch (rule 5.10), or the member it removes would keep the key of every commit and record after it (eighth review R8-2 item 4)",
                builder: { try VectorBuilder($0, deviceSeed: sam, moreDeviceSeeds: [lost]) },
                make: { b in
                    let root = b.ringKeys[b.rootID]!
                    let key = EpochKey(epoch: 1, key: root.key, blobKey: b.blobKey)
                    let kept = [b.members[0], b.members[1]]
                    return (
                        key,
                        try b.keyring(
                            key, parents: [b.parent(b.rootID)], slots: try b.memberSlots(for: key, members: kept), members: kept,
                            removed: [b.members[2]], reason: "remove")
                    )
                }),
            keyringVector(
                "damaged-keyring-removal-adds-member", code: "keyring_unauthenticated",
                comment: "a keyring that removes one device and enrols another in the same step: a removal adds no reader",
                builder: { try VectorBuilder($0, deviceSeed: sam, moreDeviceSeeds: [lost]) },
                make: { b in
                    let newcomer = try VectorBuilder.device([UInt8](repeating: 0x56, count: 32))
                    return try child(
                        b,
                        members: [
                            b.members[0], b.members[1],
                            KeyringMember(role: "device", publicKey: newcomer.publicKey, name: "New", added: b.now),
                        ],
                        removed: [b.members[2]], reason: "remove")
                }),
            keyringVector(
                "damaged-keyring-removal-adds-escrow", code: "keyring_unauthenticated",
                comment: "a keyring that removes a device and adds an escrow recipient in the same step",
                builder: { try VectorBuilder($0, deviceSeed: sam, moreDeviceSeeds: [lost]) },
                make: { b in
                    let escrow = try X25519.KeyPair(seed: SecureBytes(randomCount: 32, using: b.random))
                    let key = try b.freshKey(2)
                    let members = [b.members[0], b.members[1]]
                    let slots =
                        try b.memberSlots(for: key, members: members) + [
                            StoredSlot(
                                slot: try SlotCrypto.escrowSlot(
                                    for: key, escrowPublicKey: escrow.publicKey, vaultID: b.vaultID, random: b.random))
                        ]
                    return (
                        key,
                        try b.keyring(
                            key, parents: [b.parent(b.rootID)], slots: slots, members: members, removed: [b.members[2]], reason: "remove",
                            escrow: [EscrowRecipient(publicKey: escrow.publicKey, label: "Employer")])
                    )
                }),
            keyringVector(
                "damaged-keyring-removal-adds-passphrase", code: "keyring_unauthenticated",
                comment: "a keyring that removes a device and adds a passphrase slot in the same step",
                builder: { try VectorBuilder($0, deviceSeed: sam, moreDeviceSeeds: [lost]) },
                make: { b in
                    let key = try b.freshKey(2)
                    var p = Array("sneaky".utf8)
                    let slot = try SlotCrypto.passphraseSlot(
                        for: key, passphrase: SecureBytes(consuming: &p), opsLimit: 1, memLimitBytes: 8192, vaultID: b.vaultID,
                        random: b.random
                    )
                    let members = [b.members[0], b.members[1]]
                    return (
                        key,
                        try b.keyring(
                            key, parents: [b.parent(b.rootID)],
                            slots: try b.memberSlots(for: key, members: members) + [StoredSlot(slot: slot)],
                            members: members, removed: [b.members[2]], reason: "remove")
                    )
                }),
            keyringVector(
                "damaged-keyring-removal-adds-slot-kind", code: "keyring_unauthenticated",
                comment: "a keyring that removes a device and adds a slot of a kind its parents lack (which a reader cannot check)",
                builder: { try VectorBuilder($0, deviceSeed: sam, moreDeviceSeeds: [lost]) },
                make: { b in
                    let members = [b.members[0], b.members[1]]
                    let future = StoredSlot(
                        slot: .unknown(
                            kind: "ml-kem-768", fields: CBORMap(text: [("box", .bytes(b.random.bytes(64))), ("kind", .text("ml-kem-768"))]))
                    )
                    return try child(b, members: members, removed: [b.members[2]], extraSlots: [future], reason: "remove")
                }),
            keyringVector(
                "damaged-keyring-member-also-removed", code: "removed_device_slot",
                comment: "a keyring that lists one key both as a member and as removed",
                builder: { try VectorBuilder($0, deviceSeed: sam, moreDeviceSeeds: [lost]) },
                make: { b in
                    try child(b, removed: [b.members[2]], reason: "remove")
                }),
            {
                let b = try VectorBuilder("success-keyring-parent-later-in-file")
                try b.commit([.entry(b.entry("epoch 1"))])
                let (k2, later) = try child(b)
                let k3 = try b.freshKey(3)
                let early = try b.keyring(
                    k3, parents: [KeyringBuilder.Parent(id: KeyringBuilder.id(ofBody: later), key: k2)], slots: try b.memberSlots(for: k3),
                    members: b.members)
                // One commit holds the child before its parent.
                try b.commit([.keyring(k3, early), .keyring(k2, later)], commitKey: k3)
                b.adopt(k2, id: KeyringBuilder.id(ofBody: later))
                b.adopt(k3, id: KeyringBuilder.id(ofBody: early))
                try b.commit([.entry(b.entry("epoch 3"))])
                return try b.vector(
                    "success",
                    comment:
                        "a keyring whose parent comes later in the file (the child first in its commit): where a keyring stands plays no part in its trust (rule 5.1, a topological order), so both are trusted and epoch 3 reads"
                )
            },
            {
                let b = try VectorBuilder("damaged-keyring-child-of-untrusted")
                try b.commit([.entry(b.entry("epoch 1"))])
                let outsider = try Ed25519.KeyPair(seed: SecureBytes(randomCount: 32, using: b.random))
                let (k2, bad) = try child(b, signer: outsider)
                let i2 = try b.addKeyring(k2, bad, trust: false)
                let (k3, next) = try child(b, epoch: 3, parents: [KeyringBuilder.Parent(id: KeyringBuilder.id(ofBody: bad), key: k2)])
                let i3 = try b.addKeyring(k3, next, trust: false)
                return try b.vector(
                    "damaged",
                    comment:
                        "a keyring signed by an outsider is not trusted, and neither is its child, though the recovery key signed the child",
                    issues: [("keyring_unauthenticated", b.offset(i2)), ("keyring_unauthenticated", b.offset(i3))])
            },
            {
                let b = try VectorBuilder("damaged-keyring-second-root-no-salt")
                try b.commit([.entry(b.entry("epoch 1"))])
                let key = try b.freshKey(1)
                let body = try b.keyring(key, parents: [], slots: try b.memberSlots(for: key), members: b.members, reason: "create")
                let i = try b.addKeyring(key, body, trust: false)
                _ = i
                return try b.vector(
                    "success",
                    comment:
                        "a second root keyring (no parents) without a vault salt, signed by the recovery key: a root must derive the vault id from its signer and salt, so it can never be trusted. A root is never linked, and once the first root's key is reached the gate (format.md §8.5 step 2) tries no other root: nothing is reported about it (before the gate: keyring_unauthenticated at it)"
                )
            },
            {
                let b = try VectorBuilder("damaged-keyring-signer-removed-by-ancestor", deviceSeed: sam, moreDeviceSeeds: [lost])
                try b.commit([.entry(b.entry("before the removal"))])
                let lostKey = try VectorBuilder.device(lost)
                let kept = [b.members[0], b.members[1]]
                let (k2, removal) = try child(b, members: kept, removed: [b.members[2]], reason: "remove")
                try b.addKeyring(k2, removal, members: kept)
                try b.rotate(to: 3)
                let k4 = try b.freshKey(4)
                let body = try b.keyring(
                    k4, parents: [b.parent(b.rootID), b.parent(b.keyringIDs[3]!)],
                    slots: try b.memberSlots(for: k4, members: [recoveryMember(b)]),
                    members: [recoveryMember(b)], signer: lostKey)
                let i = try b.addKeyring(k4, body, trust: false)
                return try b.vector(
                    "damaged",
                    comment:
                        "a keyring signed by a device that a grandparent removed: its parents are the root (where the device is a member) and a rotation after the removal, which does not copy the removal; readers look in every ancestor (rule 5.3), so it is not trusted",
                    issues: [("keyring_unauthenticated", b.offset(i))])
            },
            {
                let b = try VectorBuilder("damaged-keyring-member-removed-by-ancestor", deviceSeed: sam, moreDeviceSeeds: [lost])
                try b.commit([.entry(b.entry("before the removal"))])
                let kept = [b.members[0], b.members[1]]
                let gone = b.members[2]
                let (k2, removal) = try child(b, members: kept, removed: [gone], reason: "remove")
                try b.addKeyring(k2, removal, members: kept)
                try b.rotate(to: 3)
                let all = kept + [gone]
                let (k4, body) = try child(b, epoch: 4, members: all, parents: [b.parent(b.keyringIDs[3]!)])
                let i = try b.addKeyring(k4, body, trust: false)
                try b.commit([.entry(b.entry("still in epoch 3"))])
                return try b.vector(
                    "damaged",
                    comment:
                        "a keyring that lists again a device its grandparent removed: removal is sticky through every ancestor, not only the parents, since no keyring copies its parents' removed list (rule 5.9)",
                    issues: [("removed_device_slot", b.offset(i))])
            },
            {
                let b = try VectorBuilder("damaged-keyring-signer-removed-in-parent", deviceSeed: sam, moreDeviceSeeds: [lost])
                try b.commit([.entry(b.entry("before the removal"))])
                let lostKey = try VectorBuilder.device(lost)
                let (k2, removal) = try child(b, members: [b.members[0], b.members[1]], removed: [b.members[2]], reason: "remove")
                try b.addKeyring(k2, removal, members: [b.members[0], b.members[1]])
                let k3 = try b.freshKey(3)
                let body = try b.keyring(
                    k3, parents: [b.parent(b.rootID), b.parent(b.keyringIDs[2]!)],
                    slots: try b.memberSlots(for: k3, members: [recoveryMember(b)]),
                    members: [recoveryMember(b)], signer: lostKey)
                let i = try b.addKeyring(k3, body, trust: false)
                return try b.vector(
                    "damaged",
                    comment:
                        "a keyring signed by a device that one of its parents lists as removed (rule 5): not trusted, though the device is a member of its other parent",
                    issues: [("keyring_unauthenticated", b.offset(i))])
            },
        ]
    }

    // MARK: - Removal (rule 6) and roots

    /// A vault with devices `sam` and `lost`, then a keyring (epoch 2) that
    /// removes `lost`, wrapping to `sam` and the recovery key.
    static func removalVault(_ name: String, lostKeepsSlot: Bool = false) throws -> (VectorBuilder, removal: Int) {
        let b = try VectorBuilder(name, deviceSeed: sam, moreDeviceSeeds: [lost])
        try b.commit([.entry(b.entry("before the phone was lost"))])
        let lostKey = try VectorBuilder.device(lost)
        let kept = [b.members[0], b.members[1]]
        let key = try b.freshKey(2)
        var slots = try b.memberSlots(for: key, members: kept)
        if lostKeepsSlot {
            slots.append(
                StoredSlot(
                    slot: try SlotCrypto.deviceSlot(for: key, devicePublicKey: lostKey.publicKey, vaultID: b.vaultID, random: b.random)))
        }
        let body = try b.keyring(key, parents: [b.parent(b.rootID)], slots: slots, members: kept, removed: [b.members[2]], reason: "remove")
        let index = try b.addKeyring(key, body, members: kept)
        try b.commit([.entry(b.entry("after the removal"))])
        return (b, index)
    }

    static var removal: [Make] {
        [
            {
                let (b, _) = try removalVault("damaged-removed-device-signs-keyring")
                // The lost laptop, which holds epoch 1 and is a member of the
                // root, makes a concurrent epoch 2 of its own and wraps it to
                // Sam's phone, hoping to be trusted again.
                let lostKey = try VectorBuilder.device(lost)
                let (forged, body) = try child(
                    b,
                    members: [
                        recoveryMember(b), b.members[1],
                        KeyringMember(role: "device", publicKey: lostKey.publicKey, name: "laptop", added: b.now),
                    ], signer: lostKey)
                let i = try b.addKeyring(forged, body, trust: false)
                return try b.vector(
                    "damaged",
                    comment:
                        "sticky removal: a keyring signed by a member that another keyring (signed by the recovery key) removes, and not its ancestor, is cut (rule 6); opened by the remaining device",
                    issues: [("keyring_unauthenticated", b.offset(i))], deviceSeed: sam)
            },
            {
                let (b, _) = try removalVault("damaged-removed-device-descendants-cut")
                let lostKey = try VectorBuilder.device(lost)
                let all = [
                    recoveryMember(b), b.members[1],
                    KeyringMember(role: "device", publicKey: lostKey.publicKey, name: "laptop", added: b.now),
                ]
                let (forged, body) = try child(b, members: all, signer: lostKey)
                let i = try b.addKeyring(forged, body, trust: false)
                let (k3, next) = try child(
                    b, epoch: 3, members: all, parents: [KeyringBuilder.Parent(id: KeyringBuilder.id(ofBody: body), key: forged)])
                let j = try b.addKeyring(k3, next, trust: false)
                return try b.vector(
                    "damaged",
                    comment:
                        "a keyring the removed device signed is cut, and so is its child, even one the recovery key signed: a parent is not trusted",
                    issues: [("keyring_unauthenticated", b.offset(i)), ("keyring_unauthenticated", b.offset(j))])
            },
            {
                let (b, _) = try removalVault("damaged-removed-device-listed-again")
                let lostKey = try VectorBuilder.device(lost)
                let (k3, body) = try child(
                    b, epoch: 3,
                    members: [
                        recoveryMember(b), KeyringMember(role: "device", publicKey: lostKey.publicKey, name: "laptop again", added: b.now),
                    ],
                    parents: [b.parent(b.keyringIDs[2]!)])
                let i = try b.addKeyring(k3, body, trust: false)
                return try b.vector(
                    "damaged", comment: "a keyring after a removal that lists the removed device again is rejected",
                    issues: [("removed_device_slot", b.offset(i))])
            },
            {
                let (b, _) = try removalVault("success-removed-device-own-view", lostKeepsSlot: true)
                // The removal keyring wrongly still wraps to the lost laptop.
                return try b.vector(
                    "success",
                    comment:
                        "a removal keyring that still wraps to the device it removes: the device reads everything (a reader's view; it finds itself listed in removed, so the library refuses to let it write, format.md §8.6)",
                    deviceSeed: lost)
            },
            {
                let (b, _) = try removalVault("damaged-removal-by-removed-member-cuts-nothing")
                let lostKey = try VectorBuilder.device(lost)
                let samKey = try VectorBuilder.device(sam)
                // The lost laptop, from before its removal, removes Sam's
                // phone; the phone meanwhile made a keyring of its own.
                let (kr, revenge) = try child(
                    b,
                    members: [
                        recoveryMember(b), KeyringMember(role: "device", publicKey: lostKey.publicKey, name: "laptop", added: b.now),
                    ],
                    removed: [b.members[1]], reason: "remove", signer: lostKey)
                let ir = try b.addKeyring(kr, revenge, trust: false)
                let (ks, samRing) = try child(b, members: [recoveryMember(b), b.members[1]], signer: samKey)
                try b.addKeyring(ks, samRing, trust: false)
                return try b.vector(
                    "damaged",
                    comment:
                        "a removal made by a member who was itself removed (a fork from before its removal) is cut and cuts nothing: the phone's own later keyring, which defies it, stays trusted",
                    issues: [("keyring_unauthenticated", b.offset(ir))])
            },
            {
                let b = try VectorBuilder("damaged-removal-recovery-wins", deviceSeed: sam, moreDeviceSeeds: [lost])
                try b.commit([.entry(b.entry("before"))])
                let lostKey = try VectorBuilder.device(lost)
                // The recovery key removes the laptop while the laptop removes the phone.
                let m = b.members
                let (k1, byRecovery) = try child(b, members: [m[0], m[1]], removed: [m[2]], reason: "remove")
                try b.addKeyring(k1, byRecovery, members: [m[0], m[1]])
                let (k2, byLaptop) = try child(
                    b, members: [m[0], m[2].withName("laptop")], removed: [m[1]], reason: "remove", signer: lostKey)
                let i = try b.addKeyring(k2, byLaptop, trust: false)
                return try b.vector(
                    "damaged",
                    comment:
                        "a device's removal of another device, concurrent with the recovery key's removal of that device: the recovery key's removal wins, the device's is cut",
                    issues: [("keyring_unauthenticated", b.offset(i))])
            },
            {
                // Someone who can write the file inserts a forged root
                // keyring (and a commit of their own) right after the header.
                let b = try VectorBuilder("damaged-forged-root-at-start", deviceSeed: sam)
                try b.commit([.entry(b.entry("real"))])
                let samKey = try VectorBuilder.device(sam)
                let attacker = try Ed25519.KeyPair(seed: SecureBytes(randomCount: 32, using: b.random))
                let fake = try b.freshKey(1)
                let members = [
                    KeyringMember(role: "recovery", publicKey: attacker.publicKey, name: "x", added: b.now),
                    KeyringMember(role: "device", publicKey: samKey.publicKey, name: "Sam", added: b.now),
                ]
                let body = try KeyringBuilder.body(
                    epochKey: fake, vaultID: b.vaultID, parents: [], isEscrowFree: false,
                    slots: [
                        StoredSlot(
                            slot: try SlotCrypto.deviceSlot(
                                for: fake, devicePublicKey: samKey.publicKey, vaultID: b.vaultID, random: b.random))
                    ],
                    vaultSalt: b.random.bytes(16),
                    content: KeyringContent(members: members, blobKey: b.blobKey, created: b.now, reason: "create"),
                    signer: attacker, random: b.random)
                let frame = Edit.plaintextFrame(kind: .keyring, keyID: fake.id, body: body)
                let commit = try Edit.commitFrame(
                    over: [frame], previous: CommitChain.genesisHead, key: fake, vaultID: b.vaultID,
                    attestation: CommitChain.attestation(
                        keyCommitment: fake.commitment, previousHead: CommitChain.genesisHead, digest: Edit.digest(of: [frame]),
                        vaultID: b.vaultID, signer: attacker))
                var bytes = try b.bytes()
                bytes.insert(contentsOf: frame + commit, at: 64)
                return try b.vector(
                    "damaged",
                    comment:
                        "a forged root keyring and its commit inserted before the real root: its signer and salt do not derive the vault id, so it is not trusted and its commit names a key nobody holds; the real first commit then verifies against the computed head (h_0)",
                    body: bytes, issues: [("keyring_unauthenticated", 64), ("commit_unverifiable", UInt64(64 + frame.count))],
                    deviceSeed: sam)
            },
        ]
    }

    // MARK: - Errors

    static var errors: [Make] {
        func simple(
            _ name: String, _ code: String, _ comment: String, _ edit: @escaping (VectorBuilder, inout [UInt8]) throws -> Void,
            key: String? = nil, passphrase: String? = nil,
            builder: ((String) throws -> VectorBuilder)? = nil
        ) -> Make {
            {
                let b = try builder?("error-\(name)") ?? VectorBuilder("error-\(name)")
                try b.commit([.entry(b.entry("unreachable"))])
                var bytes = try b.bytes()
                try edit(b, &bytes)
                return try b.vector("error", comment: comment, body: bytes, error: code, key: key, passphrase: passphrase)
            }
        }
        return [
            simple("empty-file", "truncated_header", "an empty file", { _, b in b = [] }),
            simple("header-cut", "truncated_header", "63 bytes: shorter than the header", { _, b in b = Array(b[0..<63]) }),
            simple("not-a-vault-random", "not_a_vault", "random bytes", { v, b in b = v.random.bytes(4096) }),
            simple(
                "not-a-vault-zip", "not_a_vault", "a ZIP file",
                { _, b in b = [0x50, 0x4b, 0x03, 0x04] + [UInt8](repeating: 0, count: 100) }),
            simple(
                "not-a-vault-text", "not_a_vault", "a text file", { _, b in b = Array(String(repeating: "Dear diary,\n", count: 20).utf8) }),
            simple(
                "unsupported-version-1", "unsupported_version",
                "format version 1 in both header copies, checks valid: a development version, no vault of it exists outside Quire's history, no migration",
                { _, b in
                    b[8] = 1
                    b[40] = 1
                    Edit.fixHeaderCheck(&b, copy: 0)
                    Edit.fixHeaderCheck(&b, copy: 1)
                }),
            simple(
                "unsupported-version-3", "unsupported_version", "format version 3 in both header copies, checks valid",
                { _, b in
                    b[8] = 3
                    b[40] = 3
                    Edit.fixHeaderCheck(&b, copy: 0)
                    Edit.fixHeaderCheck(&b, copy: 1)
                }),
            simple(
                "unsupported-feature", "unsupported_feature", "a header feature flag this reader does not know",
                { _, b in
                    b[10] = 1
                    b[42] = 1
                    Edit.fixHeaderCheck(&b, copy: 0)
                    Edit.fixHeaderCheck(&b, copy: 1)
                }),
            simple(
                "header-both-copies-damaged", "header_damaged", "both header copies fail their check",
                { _, b in
                    b[20] ^= 1
                    b[52] ^= 1
                }),
            simple(
                "header-copies-differ", "header_copies_differ", "both header copies are intact but name different vaults",
                { _, b in
                    b[52] ^= 1
                    Edit.fixHeaderCheck(&b, copy: 1)
                }),
            {
                let b = try VectorBuilder("error-no-keyring", profile: false)
                let bytes = Array(try b.bytes()[0..<64])
                return try b.vector("error", comment: "a header and nothing else: no keyring", body: bytes, error: "no_keyring")
            },
            {
                let b = try VectorBuilder("error-keyring-only-in-torn-tail")
                let bytes = try b.bytes()
                return try b.vector(
                    "error", comment: "the first commit is cut off: its keyring is in the torn tail, not committed, so there is no keyring",
                    body: Array(bytes[0..<(bytes.count - 10)]), error: "no_keyring")
            },
            simple(
                "keyring-damaged", "malformed_keyring", "both copies of the only keyring are damaged",
                { v, b in Edit.damageKeyring(&b, v, frame: 0, at: 30) }),
            {
                let b = try VectorBuilder("error-root-slot-wrong-key", profile: false)
                let rootKey = b.keys.writeKey!
                let other = try b.freshKey(1)
                let members = b.members
                let pub = try KeyringForge.publicPart(
                    key: rootKey, parents: [], vaultID: b.vaultID, slots: try b.memberSlots(for: other, members: members), signer: b.signer,
                    random: b.random)
                let content = KeyringContent(members: members, blobKey: b.blobKey, created: b.now, reason: "create", vaultSalt: b.vaultSalt)
                let body = try KeyringForge.body(
                    publicBytes: pub.encoded(), content: content.encoded(), key: rootKey, vaultID: b.vaultID, signer: b.signer,
                    random: b.random)
                let file = try b.singleRootFile(key: rootKey, body: body)
                return try b.vector(
                    "error",
                    comment:
                        "the only keyring's recovery slot opens to a key whose commitment is not its keyCommit: the keyring the credential reached is malformed",
                    body: file, error: "malformed_keyring")
            },
            {
                // Pins format.md §8.5 step 2: the reader stops at a keyring's
                // first slot whose box opens, even when its key then fails
                // the commitment (Python README item 5).
                let b = try VectorBuilder("error-slot-fails-commitment-later-slot-untried", profile: false, deviceSeed: sam)
                let rootKey = b.keys.writeKey!
                let other = try b.freshKey(1)
                let salt = b.vaultSalt
                let recoveryOnly = b.members.filter { $0.role == "recovery" }
                let content = KeyringContent(members: b.members, blobKey: b.blobKey, created: b.now, reason: "create", vaultSalt: salt)
                // The first root: two recovery slots, the first to another
                // key, the second to the root key.
                let pub = try KeyringForge.publicPart(
                    key: rootKey, parents: [], vaultID: b.vaultID,
                    slots: try b.memberSlots(for: other, members: recoveryOnly) + b.memberSlots(for: rootKey, members: recoveryOnly),
                    signer: b.signer, random: b.random)
                let first = try KeyringForge.body(
                    publicBytes: pub.encoded(), content: content.encoded(), key: rootKey, vaultID: b.vaultID, signer: b.signer,
                    random: b.random)
                // The second root, of the same key: a device slot only.
                let second = try KeyringBuilder.body(
                    epochKey: rootKey, vaultID: b.vaultID, parents: [], isEscrowFree: false,
                    slots: try b.memberSlots(for: rootKey, members: b.members.filter { $0.role == "device" }), vaultSalt: salt,
                    content: content, signer: b.signer, random: b.random)
                let frames = [first, first, second, second].map { Edit.plaintextFrame(kind: .keyring, keyID: rootKey.id, body: $0) }
                let commit = try Edit.commitFrame(
                    over: frames, previous: CommitChain.genesisHead, key: rootKey, vaultID: b.vaultID,
                    attestation: CommitChain.attestation(
                        keyCommitment: rootKey.commitment, previousHead: CommitChain.genesisHead, digest: Edit.digest(of: frames),
                        vaultID: b.vaultID, signer: b.signer))
                return try b.vector(
                    "error",
                    comment:
                        "the first root's first recovery slot opens to a key that fails its commitment, its second to the root key; a second root of the same key has no recovery slot: the reader stops at the first slot whose box opens, so no key is reached and the keyring it reached is malformed (format.md §8.5 step 2)",
                    body: FileHeader(vaultID: b.vaultID).encoded() + frames.joined() + commit, error: "malformed_keyring")
            },
            {
                // The root keyring lists a device both as a member and as removed.
                let b = try VectorBuilder("error-root-lists-removed-member", profile: false, deviceSeed: sam)
                let key = b.keys.writeKey!
                let body = try KeyringBuilder.body(
                    epochKey: key, vaultID: b.vaultID, parents: [], isEscrowFree: false, slots: try b.memberSlots(for: key),
                    vaultSalt: b.vaultSalt,
                    content: KeyringContent(
                        members: b.members, removed: [b.members[1]], blobKey: b.blobKey, created: b.now, reason: "create"),
                    signer: b.signer, random: b.random)
                let file = try b.singleRootFile(key: key, body: body)
                return try b.vector(
                    "error",
                    comment:
                        "the only keyring, the root, lists a device both as a member and as removed: the one keyring the credential reached is rejected for it",
                    body: file, error: "removed_device_slot")
            },
            {
                // Tenth review R10-8: the root keyring of the layout before the
                // fix, its salt in the public part P (now an unknown field) and
                // none in the sealed content C.
                let b = try VectorBuilder("attack-root-salt-in-public-part", profile: false)
                let key = b.keys.writeKey!
                let body = try KeyringBuilder.body(
                    epochKey: key, vaultID: b.vaultID, parents: [], isEscrowFree: false, slots: try b.memberSlots(for: key),
                    unknownPublicFields: CBORMap(text: [("vaultSalt", .bytes(b.vaultSalt))]),
                    content: KeyringContent(members: b.members, blobKey: b.blobKey, created: b.now, reason: "create"),
                    signer: b.signer, random: b.random)
                let file = try b.singleRootFile(key: key, body: body)
                return try b.vector(
                    "error",
                    comment:
                        "attack (tenth review R10-8): the only root keyring carries its vault salt in the public part, as the layout before the fix did, so anyone who holds a device code or the recovery member's public key can test whether that key created the vault. The salt now lives only in the sealed content C (format.md §8.4 rule 4): a public vaultSalt is an unknown field, kept and ignored, and a root whose C has none is not trusted, so a writer that still publishes the salt makes a vault no reader opens",
                    body: file, error: "keyring_unauthenticated")
            },
            {
                // The root keyring lists in removed a key that is not its member.
                let b = try VectorBuilder("error-root-removes-a-key", profile: false)
                let key = b.keys.writeKey!
                let stranger = try Ed25519.KeyPair(seed: SecureBytes(randomCount: 32, using: b.random))
                let removed = [KeyringMember(role: "device", publicKey: stranger.publicKey, name: "never a member", added: b.now)]
                let body = try KeyringBuilder.body(
                    epochKey: key, vaultID: b.vaultID, parents: [], isEscrowFree: false, slots: try b.memberSlots(for: key),
                    vaultSalt: b.vaultSalt,
                    content: KeyringContent(members: b.members, removed: removed, blobKey: b.blobKey, created: b.now, reason: "create"),
                    signer: b.signer, random: b.random)
                let file = try b.singleRootFile(key: key, body: body)
                return try b.vector(
                    "error",
                    comment:
                        "the only keyring, the root, lists in removed a key that is not one of its members: a root removes nobody (rule 4; a removed key must be a member of a parent, and a root has none)",
                    body: file, error: "keyring_unauthenticated")
            },
            simple(
                "wrong-recovery-key", "wrong_recovery_key", "a valid recovery code, for another vault", { _, _ in },
                key: RecoveryKey(secret: try! SymmetricKey(bytes: [UInt8](repeating: 42, count: 32))).code()),
            {
                let b = try VectorBuilder("error-recovery-code-typo")
                return try b.vector(
                    "error",
                    comment: "the right recovery code with one character changed: the checksum catches it before any key derivation",
                    error: "recovery_code_invalid", key: typo(b.recovery.code()))
            },
            {
                let b = try VectorBuilder("error-recovery-code-is-device-code")
                let code = DeviceCode.encode(publicKey: b.signer.publicKey)
                return try b.vector(
                    "error", comment: "a device code typed where the recovery code was asked for: recognised by its checksum and refused",
                    error: "recovery_code_invalid", key: code)
            },
            {
                let b = try VectorBuilder("error-wrong-device-key", deviceSeed: [UInt8](repeating: 0x5d, count: 32))
                return try b.vector(
                    "error", comment: "a device that was never enrolled (seed 5e×32) opens no slot", error: "wrong_device_key",
                    deviceSeed: [UInt8](repeating: 0x5e, count: 32))
            },
            simple(
                "wrong-passphrase", "wrong_passphrase", "the wrong passphrase", { _, _ in }, passphrase: "hunter3",
                builder: passphraseBuilder(1, 8192)),
            simple(
                "kdf-ops-over-limit", "kdf_limits_exceeded",
                "a passphrase slot asking for Argon2id opsLimit 9 (over the reader bound of 8): refused before running", { _, _ in },
                passphrase: "hunter2", builder: passphraseBuilder(9, 8192)),
            simple(
                "kdf-ops-zero", "kdf_limits_exceeded", "a passphrase slot asking for Argon2id opsLimit 0: refused", { _, _ in },
                passphrase: "hunter2", builder: passphraseBuilder(0, 8192)),
            simple(
                "kdf-memory-under-limit", "kdf_limits_exceeded",
                "a passphrase slot asking for 4 KiB of memory (under the 8 KiB bound): refused", { _, _ in }, passphrase: "hunter2",
                builder: passphraseBuilder(1, 4096)),
            simple(
                "kdf-decoy-slots", "kdf_limits_exceeded",
                "eight decoy passphrase slots, each with its own salt, before the real one in one keyring: the reader runs Argon2id for the first four (newest keyring first, slot order), then, none naming the derived key, for four more in file order, skipping those run, and stops: eight runs, the derivation budget with its second pass (keys.md §2.3)",
                { _, _ in }, passphrase: "hunter2",
                builder: { name in
                    try VectorBuilder(
                        name,
                        extraSlots: { key, id, r in
                            var slots: [StoredSlot] = []
                            for word in (1...8).map({ "decoy \($0)" }) + ["hunter2"] {
                                var p = Array(word.utf8)
                                slots.append(
                                    StoredSlot(
                                        slot: try SlotCrypto.passphraseSlot(
                                            for: key, passphrase: SecureBytes(consuming: &p), opsLimit: 1, memLimitBytes: 8192, vaultID: id,
                                            random: r)))
                            }
                            return slots
                        })
                }),
            {
                let b = try VectorBuilder(
                    "error-escrow-slot-in-escrow-free-vault", escrowFree: true,
                    extraSlots: { key, id, r in
                        let escrow = try X25519.KeyPair(seed: SecureBytes(randomCount: 32, using: r))
                        return [
                            StoredSlot(slot: try SlotCrypto.escrowSlot(for: key, escrowPublicKey: escrow.publicKey, vaultID: id, random: r))
                        ]
                    })
                return try b.vector(
                    "error", comment: "the root keyring declares the vault escrow-free yet holds an escrow slot: no other keyring is left",
                    error: "escrow_forbidden")
            },
            {
                // Pins format.md §8.5, the fatal errors (Python README item
                // 4): a keyring rejected by rule 2 from its public part is
                // not a problem there; its slots were tried, so a credential
                // none of them opens is a wrong credential.
                let b = try VectorBuilder(
                    "error-every-keyring-escrow-forbidden", escrowFree: true,
                    extraSlots: { key, id, r in
                        let escrow = try X25519.KeyPair(seed: SecureBytes(randomCount: 32, using: r))
                        return [
                            StoredSlot(slot: try SlotCrypto.escrowSlot(for: key, escrowPublicKey: escrow.publicKey, vaultID: id, random: r))
                        ]
                    })
                let escrow = try X25519.KeyPair(seed: SecureBytes(randomCount: 32, using: b.random))
                let key = try b.freshKey(2)
                let slot = StoredSlot(
                    slot: try SlotCrypto.escrowSlot(for: key, escrowPublicKey: escrow.publicKey, vaultID: b.vaultID, random: b.random))
                let body = try b.keyring(
                    key, parents: [b.parent(b.rootID)], slots: try b.memberSlots(for: key) + [slot], members: b.members,
                    reason: "escrow-free", escrowFree: true)
                _ = try b.addKeyring(key, body, trust: false)
                return try b.vector(
                    "error",
                    comment:
                        "both keyrings are escrow-free and hold an escrow slot (rejected by rule 2 from the public part, nothing else wrong), and the recovery code is another vault's: their slots were tried and none opens, so no keyring is reached and the credential is wrong (format.md §8.5), not escrow_forbidden or malformed_keyring",
                    error: "wrong_recovery_key",
                    key: RecoveryKey(secret: try SymmetricKey(bytes: [UInt8](repeating: 42, count: 32))).code())
            },
            {
                // Pins format.md §8.5 steps 2 and 3 (Python README open
                // reading 7): a keyring rejected by rule 2 from its public
                // part contributes no key, however its key is reached.
                let tabletSeed = [UInt8](repeating: 0x7b, count: 32)
                let b = try VectorBuilder("error-escrow-forbidden-keyring-reaches-no-key")
                try b.commit([.entry(b.entry("epoch 1, before the tablet"))])
                let tablet = KeyringMember(
                    role: "device", publicKey: try VectorBuilder.device(tabletSeed).publicKey, name: "Sam's tablet", added: b.now)
                let escrow = try X25519.KeyPair(seed: SecureBytes(randomCount: 32, using: b.random))
                let key = try b.freshKey(2)
                let slot = StoredSlot(
                    slot: try SlotCrypto.escrowSlot(for: key, escrowPublicKey: escrow.publicKey, vaultID: b.vaultID, random: b.random))
                let body = try b.keyring(
                    key, parents: [b.parent(b.rootID)], slots: try b.memberSlots(for: key, members: b.members + [tablet]) + [slot],
                    members: b.members + [tablet], reason: "escrow-free", escrowFree: true)
                _ = try b.addKeyring(key, body, trust: false)
                return try b.vector(
                    "error",
                    comment:
                        "an escrow-free keyring of epoch 2, signed by the recovery key, holds an escrow slot (rejected by rule 2 from the public part) and the only slot of a tablet, and carries the root's key in parentKeys. The tablet's slot opens: the keyring is reached, its key is not, and it is never opened, so its parent key reaches nothing (format.md §8.5 steps 2 and 3: a keyring rejected by rule 2 from its public part contributes no key). Keyrings were reached and none is trusted: escrow_forbidden, the reason of the first rejected keyring reached. Before, the reference opened the keyring with the key the slot held and the root through its parent key, and released the epoch-1 records to the tablet",
                    error: "escrow_forbidden", deviceSeed: tabletSeed)
            },
            {
                // Someone who can write the file but holds no key damages the
                // root keyring and appends a parentless keyring of their own
                // that wraps a key to the device's (public) key.
                let seed = [UInt8](repeating: 0x6a, count: 32)
                let b = try VectorBuilder("error-first-keyring-replaced", deviceSeed: seed)
                var bytes = try b.bytes()
                Edit.damageKeyring(&bytes, b, frame: 0)
                let device = try VectorBuilder.device(seed)
                let attacker = try Ed25519.KeyPair(seed: SecureBytes(randomCount: 32, using: b.random))
                let key = try b.freshKey(1)
                let members = [KeyringMember(role: "recovery", publicKey: attacker.publicKey, name: "evil", added: b.now)]
                let body = try KeyringBuilder.body(
                    epochKey: key, vaultID: b.vaultID, parents: [], isEscrowFree: false,
                    slots: [
                        StoredSlot(
                            slot: try SlotCrypto.deviceSlot(
                                for: key, devicePublicKey: device.publicKey, vaultID: b.vaultID, random: b.random))
                    ],
                    vaultSalt: b.random.bytes(16),
                    content: KeyringContent(members: members, blobKey: b.blobKey, created: b.now, reason: "create"),
                    signer: attacker, random: b.random)
                let frame = Edit.plaintextFrame(kind: .keyring, keyID: key.id, body: body)
                bytes += frame + CommitChain.commitHeader(keyID: key.id).encoded() + b.random.bytes(CommitChain.bodyByteCount)
                return try b.vector(
                    "error",
                    comment:
                        "both copies of the root keyring damaged and a forged root appended: a root must be signed by the key its vault id derives from",
                    body: bytes, error: "keyring_unauthenticated", deviceSeed: seed)
            },
            {
                // The only root keyring is signed by a key that does not derive the vault id.
                let b = try VectorBuilder("error-first-keyring-not-self-signed", profile: false)
                let stranger = try Ed25519.KeyPair(seed: SecureBytes(randomCount: 32, using: b.random))
                let key = b.keys.writeKey!
                let body = try KeyringBuilder.body(
                    epochKey: key, vaultID: b.vaultID, parents: [], isEscrowFree: false, slots: try b.memberSlots(for: key),
                    vaultSalt: b.random.bytes(16),
                    content: KeyringContent(members: b.members, blobKey: b.blobKey, created: b.now, reason: "create"), signer: stranger,
                    random: b.random)
                let frame = Edit.plaintextFrame(kind: .keyring, keyID: key.id, body: body)
                let commit = try Edit.commitFrame(
                    over: [frame, frame], previous: CommitChain.genesisHead, key: key, vaultID: b.vaultID,
                    attestation: CommitChain.unattested)
                return try b.vector(
                    "error",
                    comment:
                        "the only root keyring is signed by a key that is neither one of its members nor the one whose salt-derived id is this vault's",
                    body: FileHeader(vaultID: b.vaultID).encoded() + frame + frame + commit, error: "keyring_unauthenticated")
            },
        ]
    }

    /// A builder whose root keyring holds a passphrase slot of the given
    /// cost for "hunter2" (written by hand when the library refuses the cost).
    static func passphraseBuilder(_ ops: UInt64, _ mem: UInt64) -> (String) throws -> VectorBuilder {
        { name in
            try VectorBuilder(
                name,
                extraSlots: { key, id, r in
                    let salt = r.bytes(16)
                    if ops < 1 || ops > Limits.maxArgon2OpsLimit || mem < Limits.minArgon2MemLimitBytes
                        || mem > Limits.maxArgon2MemLimitBytes
                    {
                        return [
                            StoredSlot(
                                slot: .passphrase(
                                    salt: salt, opsLimit: ops, memLimitBytes: mem, publicKey: r.bytes(32),
                                    box: r.bytes(KeySlot.boxByteCount)))
                        ]
                    }
                    var p = Array("hunter2".utf8)
                    return [
                        StoredSlot(
                            slot: try SlotCrypto.passphraseSlot(
                                for: key, passphrase: SecureBytes(consuming: &p), opsLimit: ops, memLimitBytes: mem, vaultID: id, random: r)
                        )
                    ]
                })
        }
    }

    /// Replaces one character of a recovery code (for the typo vector).
    static func typo(_ code: String) -> String {
        var chars = Array(code)
        chars[5] = chars[5] == "7" ? "8" : "7"
        return String(chars)
    }
}

extension KeyringMember {
    /// The same member under another name.
    func withName(_ name: String) -> KeyringMember {
        KeyringMember(
            role: role, publicKey: publicKey, keyType: keyType, name: name, added: addedMilliseconds, unknownFields: unknownFields)
    }
}
