@_spi(Crypto) import QuireCrypto
@_spi(Format) import QuireFormat
@_spi(Format) import QuireKeys
import QuireVectors

/// Every vector, by name. Each builds its vault from a random stream seeded
/// with its own name, so generation is deterministic and one vector's change
/// never shifts another's bytes.
enum Catalog {
    typealias Make = () throws -> (String, VectorFile)

    static var all: [Make] {
        success + recovered + damaged + compression + padding + records + epochs + chunks + streams + keyrings + keyringRules
            + removal + attestations + criticalKinds + errors + attacks + chainAttacks + memoryAttacks
            + walkAttacks + attestationInPlace
    }

    static let english = "I lay long in bed, and then up and to the office, where all the morning, and at noon dined at home."
    /// Bytes a commit frame takes: header 16, body 200.
    static let commitLength = FrameHeader.byteCount + CommitChain.bodyByteCount

    // MARK: - Success

    static var success: [Make] {
        var list: [Make] = [
            {
                let b = try VectorBuilder("success-empty")
                return try b.vector(
                    "success", comment: "a new vault: the root keyring (twice) and the profile in one commit, attested by the recovery key")
            },
            {
                let b = try VectorBuilder("success-one-entry")
                try b.commit([.entry(b.entry(english, tags: ["office"]))])
                return try b.vector("success", comment: "one entry revision in its own commit")
            },
            {
                let b = try VectorBuilder("success-many-entries")
                try b.commit((0..<20).map { i in .entry(b.entry("Entry \(i): " + english)) })
                for i in 0..<5 { try b.commit([.entry(b.entry("Single \(i)"))]) }
                return try b.vector("success", comment: "twenty revisions in one commit, then five single-entry commits")
            },
            {
                let b = try VectorBuilder("success-unicode")
                try b.commit([
                    .entry(b.entry("晴。上午往教育部。下午訪季巿。", tags: ["日记"])),
                    .entry(b.entry("Утромъ писалъ. Вечеромъ гулялъ по саду.", tags: ["дневникъ"])),
                    .entry(b.entry("emoji 🌧️☕️, combining e\u{301}, RTL שלום, NUL \u{0}, and \\* escapes")),
                ])
                return try b.vector(
                    "success", comment: "Chinese, pre-1918 Russian, emoji, combining marks, RTL and NUL stored byte for byte")
            },
            {
                let b = try VectorBuilder("success-edit-and-tombstone")
                let first = b.entry("First draft")
                let second = b.entry("Second draft", parents: [first.revisionID], entryID: first.entryID)
                let gone = b.entry("", parents: [second.revisionID], entryID: first.entryID, deleted: true)
                try b.commit([.entry(first)])
                try b.commit([.entry(second)])
                try b.commit([.entry(gone)])
                return try b.vector("success", comment: "an entry edited once and then deleted (a tombstone revision)")
            },
            {
                let b = try VectorBuilder("success-large-entry")
                try b.commit([.entry(b.entry(String(repeating: english + " ", count: 2000)))])
                return try b.vector("success", comment: "a 200 KB entry, zstd-compressed (compressed flag set), padded after compression")
            },
            {
                let b = try VectorBuilder("success-incompressible-entry")
                var r = b.entry("random extra")
                r.body.extra = CBORMap(text: [("noise", .bytes(b.random.bytes(3000)))])
                try b.commit([.entry(r)])
                return try b.vector("success", comment: "an entry whose payload does not compress is stored uncompressed (flags 0x01)")
            },
            {
                let b = try VectorBuilder("success-unknown-fields")
                var r = b.entry("future fields")
                r.unknownFields = CBORMap(text: [("zzFuture", .text("kept")), ("aaFuture", .array([.unsigned(1), .null]))])
                r.body.unknownFields = CBORMap(text: [("colour", .text("teal"))])
                try b.commit([.entry(r)])
                return try b.vector("success", comment: "fields unknown to version 2 in a revision and its body are released unchanged")
            },
            {
                let b = try VectorBuilder("success-non-text-map-keys")
                var r = b.entry("integer and byte-string keys in extra")
                r.body.extra = CBORMap([(.unsigned(7), .text("seven")), (.bytes([1, 2]), .bool(true)), (.text("k"), .null)])
                try b.commit([.entry(r)])
                return try b.vector(
                    "success", comment: "non-text map keys are allowed in extra, kept and ordered by their encoding (records.md §1.1)")
            },
            {
                let b = try VectorBuilder("success-cbor-depth-16")
                var r = b.entry("deep but allowed")
                var v = CBOR.null
                for _ in 0..<15 { v = .array([v]) }
                r.unknownFields = CBORMap(text: [("deep", v)])
                try b.commit([.entry(r)])
                return try b.vector(
                    "success",
                    comment: "an unknown field nested so its innermost item is at depth 16 (the record map is depth 0): the deepest allowed"
                )
            },
            {
                let b = try VectorBuilder("success-profile-update")
                try b.commit([
                    .profile(
                        Profile(
                            name: "Renamed journal", about: "by S. P.",
                            clock: HybridLogicalClock(milliseconds: 1_767_225_700_000, counter: 0)))
                ])
                return try b.vector("success", comment: "a second profile record; the later clock wins")
            },
            {
                let b = try VectorBuilder("success-many-commits")
                for i in 0..<50 { try b.commit([.entry(b.entry("Day \(i)"))]) }
                return try b.vector("success", comment: "fifty commits, each chained to the one before and attested")
            },
            {
                let b = try VectorBuilder("success-empty-commit")
                // Writers skip empty commits, but readers accept them: one
                // built by hand, chained to the last commit and attested.
                let key = b.keys.writeKey!
                let d = Edit.digest(of: [])
                let previous = b.vault.structure.groups.last!.storedHead
                let frame = try Edit.commitFrame(
                    over: [], previous: previous, key: key, vaultID: b.vaultID,
                    attestation: CommitChain.attestation(
                        keyCommitment: key.commitment, previousHead: previous, digest: d, vaultID: b.vaultID, signer: b.signer))
                return try b.vector(
                    "success",
                    comment:
                        "a commit that covers no frames (D = BLAKE2b-256 of nothing) is valid: writers do not make them, readers accept them",
                    body: try b.bytes() + frame)
            },
            {
                let b = try VectorBuilder("success-epoch-rotation")
                try b.commit([.entry(b.entry("in epoch 1"))])
                try b.rotate(to: 2)
                try b.commit([.entry(b.entry("in epoch 2"))])
                return try b.vector(
                    "success",
                    comment:
                        "a second keyring starts epoch 2 with the root as its parent and carries the epoch 1 key in parentKeys; both epochs read"
                )
            },
            {
                let b = try VectorBuilder("success-three-epochs")
                for e: UInt32 in 2...3 {
                    try b.commit([.entry(b.entry("before epoch \(e)"))])
                    try b.rotate(to: e)
                }
                try b.commit([.entry(b.entry("in epoch 3"))])
                return try b.vector(
                    "success",
                    comment:
                        "three epochs in a chain: the epoch 3 keyring carries the epoch 2 key, whose keyring carries the epoch 1 key (keys by reference to parents)"
                )
            },
            {
                // Rule 4 (review of format 2, M1): a root has epoch 1, so an
                // epoch over the old u16 range is reached one rotation at a
                // time. The reader still reaches this root through its
                // recovery slot, whose payload ends in u32(70,000).
                let b = try VectorBuilder("error-root-wide-epoch", rootEpoch: 70_000)
                try b.commit([.entry(b.entry("in epoch 70000"))])
                return try b.vector(
                    "error",
                    comment:
                        "the only keyring is a root of epoch 70,000 (over the old u16 range), its vault id derived from its signer, keyCommit and salt: a root must be epoch 1 (rule 4), so it is rejected once reached (its slot carries u32(70,000)) and nothing is trusted",
                    error: "keyring_unauthenticated")
            },
            {
                // M1: the root's signer signs a second root with the vault's
                // first key and salt, at the highest epoch. Its vault id
                // matches; only rule 4's epoch clause rejects it.
                let b = try VectorBuilder("damaged-keyring-second-root-last-epoch")
                try b.commit([.entry(b.entry("in epoch 1"))])
                let root = b.ringKeys[b.rootID]!
                let last = EpochKey(epoch: UInt32.max, key: root.key, blobKey: b.blobKey)
                let body = try KeyringBuilder.body(
                    epochKey: last, vaultID: b.vaultID, parents: [], isEscrowFree: false, slots: try b.memberSlots(for: last),
                    vaultSalt: b.vaultSalt,
                    content: KeyringContent(members: b.members, blobKey: b.blobKey, created: b.now, reason: "create"), signer: b.signer,
                    random: b.random)
                let i = try b.addKeyring(last, body, trust: false)
                try b.commit([.entry(b.entry("still in epoch 1"))])
                return try b.vector(
                    "damaged",
                    comment:
                        "attack (review of format 2, M1): the root's signer signs a second root of epoch 4,294,967,295 with the vault's salt and first key, so its vault id matches; it would have become everyone's write key, left no room for a new epoch and made every commit of a lower epoch stale. A root must be epoch 1 (rule 4): it is rejected, and the vault reads on in epoch 1",
                    issues: [("keyring_unauthenticated", b.offset(i))])
            },
            {
                let b = try VectorBuilder("success-second-root-epoch-one")
                try b.commit([.entry(b.entry("under the first root"))])
                let root = b.ringKeys[b.rootID]!
                let body = try KeyringBuilder.body(
                    epochKey: root, vaultID: b.vaultID, parents: [], isEscrowFree: false, slots: try b.memberSlots(for: root),
                    vaultSalt: b.vaultSalt,
                    content: KeyringContent(members: b.members, blobKey: b.blobKey, created: b.now + 1, reason: "create"), signer: b.signer,
                    random: b.random)
                try b.addKeyring(root, body)
                try b.commit([.entry(b.entry("after the second root"))])
                return try b.vector(
                    "success",
                    comment:
                        "the root's signer signs a second root with the vault's salt and first key at epoch 1 (another nonce and content, so another keyring id): rule 4 accepts it as a second keyring of epoch 1, a head beside the first, like a child of the root would be"
                )
            },
            {
                let b = try VectorBuilder(
                    "success-passphrase",
                    extraSlots: { key, id, r in
                        var p = Array("correct horse battery staple".utf8)
                        return [
                            StoredSlot(
                                slot: try SlotCrypto.passphraseSlot(
                                    for: key, passphrase: SecureBytes(consuming: &p), opsLimit: 1, memLimitBytes: 8192, vaultID: id,
                                    random: r))
                        ]
                    })
                try b.commit([.entry(b.entry("opened with a passphrase"))])
                return try b.vector(
                    "success",
                    comment:
                        "opened through a passphrase slot (Argon2id opsLimit 1, memLimit 8192: below the writer floor, within the reader bounds, for speed)",
                    passphrase: "correct horse battery staple")
            },
            {
                // The slot is made from the NFC bytes; the vector gives the
                // passphrase in NFD (keys.md §2.3: the library normalises).
                let b = try VectorBuilder(
                    "success-passphrase-nfd",
                    extraSlots: { key, id, r in
                        var p = Array("Cr\u{E8}me br\u{FB}l\u{E9}e".utf8)
                        return [
                            StoredSlot(
                                slot: try SlotCrypto.passphraseSlot(
                                    for: key, passphrase: SecureBytes(consuming: &p), opsLimit: 1, memLimitBytes: 8192, vaultID: id,
                                    random: r))
                        ]
                    })
                try b.commit([.entry(b.entry("opened with a passphrase typed in NFD"))])
                return try b.vector(
                    "success",
                    comment:
                        "tenth review R10-5: the passphrase slot was made from \"Crème brûlée\" in NFC (U+00E8, U+00FB, U+00E9); the vector gives it in NFD (e U+0300, u U+0302, e U+0301), as another system's keyboard may. The library maps a passphrase to NFC before Argon2id (keys.md §2.3): it opens. A reader that takes the bytes as given fails [wrong_passphrase]",
                    passphrase: "Cre\u{300}me bru\u{302}le\u{301}e")
            },
            {
                let b = try VectorBuilder(
                    "success-passphrase-two-epochs",
                    extraSlots: { key, id, r in
                        var p = Array("correct horse battery staple".utf8)
                        return [
                            StoredSlot(
                                slot: try SlotCrypto.passphraseSlot(
                                    for: key, passphrase: SecureBytes(consuming: &p), opsLimit: 1, memLimitBytes: 8192, vaultID: id,
                                    random: r))
                        ]
                    })
                try b.commit([.entry(b.entry("epoch 1"))])
                let root = try KeyringRecord(body: b.frame(0).plaintextBody!, location: nil)
                let e2 = try b.freshKey(2)
                let passSlot = try SlotCrypto.passphraseSlot(
                    for: e2, rewrapping: root.publicPart.slots.last!, vaultID: b.vaultID, random: b.random)
                let body = try b.keyring(
                    e2, parents: [b.parent(b.rootID)], slots: try b.memberSlots(for: e2) + [StoredSlot(slot: passSlot)], members: b.members)
                try b.addKeyring(e2, body)
                try b.commit([.entry(b.entry("epoch 2"))])
                return try b.vector(
                    "success",
                    comment:
                        "a rotation rewraps the passphrase to its public key without knowing it (same salt and cost): the passphrase opens epoch 2 with one Argon2id run and reaches epoch 1 through parentKeys",
                    passphrase: "correct horse battery staple")
            },
            {
                // Five passphrase changes: each a new epoch whose keyring holds
                // only the new passphrase's slot. The budget goes to the newest
                // keyrings' triples (Spec/keys.md §2.3), not to the oldest ones
                // the bootstrap tries first (format.md §8.5 step 2).
                func slot(_ n: Int, _ key: EpochKey, _ id: VaultID, _ r: SeededRandom) throws -> StoredSlot {
                    var p = Array("passphrase \(n)".utf8)
                    return StoredSlot(
                        slot: try SlotCrypto.passphraseSlot(
                            for: key, passphrase: SecureBytes(consuming: &p), opsLimit: 1, memLimitBytes: 8192, vaultID: id, random: r))
                }
                let b = try VectorBuilder(
                    "success-passphrase-changed-five-times", extraSlots: { key, id, r in [try slot(1, key, id, r)] })
                try b.commit([.entry(b.entry("under passphrase 1"))])
                var previous = b.rootID
                for n in 2...6 {
                    let key = try b.freshKey(UInt32(n))
                    let body = try b.keyring(
                        key, parents: [b.parent(previous)], slots: try b.memberSlots(for: key) + [try slot(n, key, b.vaultID, b.random)],
                        members: b.members, reason: "passphrase")
                    try b.addKeyring(key, body)
                    previous = KeyringBuilder.id(ofBody: body)
                    try b.commit([.entry(b.entry("under passphrase \(n)"))])
                }
                return try b.vector(
                    "success",
                    comment:
                        "the passphrase changed five times, each change a new epoch whose keyring holds only the new passphrase's slot: the current passphrase opens with one Argon2id run (the derivation budget goes to the newest keyrings' slots first, whatever order slots are tried in), and reaches every epoch through parentKeys",
                    passphrase: "passphrase 6")
            },
            {
                let b = try VectorBuilder(
                    "success-device-and-escrow-slots",
                    extraSlots: { key, id, r in
                        let escrow = try X25519.KeyPair(seed: SecureBytes(randomCount: 32, using: r))
                        return [
                            StoredSlot(slot: try SlotCrypto.escrowSlot(for: key, escrowPublicKey: escrow.publicKey, vaultID: id, random: r))
                        ]
                    }, deviceSeed: [UInt8](repeating: 0x5c, count: 32))
                try b.commit([.entry(b.entry("standard mode"))])
                return try b.vector(
                    "success", comment: "a keyring with recovery, device and escrow slots (standard mode), opened with the recovery key")
            },
            {
                let seed = [UInt8](repeating: 0x5d, count: 32)
                let b = try VectorBuilder("success-device-open", deviceSeed: seed)
                try b.commit([.entry(b.entry("opened with the device key"))])
                return try b.vector(
                    "success", comment: "opened through a device slot with the device's Ed25519 key (converted to X25519); seed 5d×32",
                    deviceSeed: seed)
            },
            {
                let seed = [UInt8](repeating: 0x5e, count: 32)
                let b = try VectorBuilder("success-attested-by-device", deviceSeed: seed)
                b.attestation = .sign(try VectorBuilder.device(seed))
                try b.commit([.entry(b.entry("written and attested by the phone"))])
                return try b.vector(
                    "success",
                    comment:
                        "a commit attested by an enrolled device (a member of the root keyring): its records are attested; opened with the recovery key"
                )
            },
            {
                let b = try VectorBuilder("success-escrow-free", escrowFree: true)
                try b.commit([.entry(b.entry("nobody else"))])
                return try b.vector(
                    "success",
                    comment:
                        "an escrow-free keyring: exactly one recovery slot, one device slot per device member (none here), no escrow slot")
            },
            {
                let b = try VectorBuilder(
                    "success-escrow-free-with-device", escrowFree: true, deviceSeed: [UInt8](repeating: 0x5f, count: 32))
                try b.rotate(to: 2, escrowFree: true)
                try b.commit([.entry(b.entry("nobody else, two epochs"))])
                return try b.vector(
                    "success",
                    comment:
                        "escrow-free with a device: each keyring's device slots number exactly its device members, and the child stays escrow-free"
                )
            },
            {
                let b = try VectorBuilder("success-unknown-noncritical-kinds")
                let sealed = try SealedFrame.seal(
                    kind: RecordKind(rawValue: 0xbf), payload: Array("future".utf8), key: b.keys.writeKey!, vaultID: b.vaultID,
                    compress: false, random: b.random)
                try b.commit([
                    .raw(sealed, release: nil), .plaintext(RecordKind(rawValue: 0xbe), Array("plain future".utf8)),
                    .entry(b.entry("after them")),
                ])
                return try b.vector(
                    "success",
                    comment:
                        "non-critical kinds 0xbf (sealed) and 0xbe (plaintext, with its body hash) are skipped, not released, and do not stop the reader"
                )
            },
            {
                let b = try VectorBuilder("success-attachment-dedup")
                let photo = b.random.bytes(100_000)
                try b.commit([.blob(photo, mediaType: "image/jpeg")])
                try b.commit([.blob(photo, mediaType: "image/jpeg"), .entry(b.entry("the same photo again"))])
                return try b.vector(
                    "success", comment: "the same content under the same blob key is stored once (the second store appends nothing)")
            },
            {
                let b = try VectorBuilder("success-attachment-referenced")
                let photo = b.random.bytes(5000)
                let m = try b.commit([.blob(photo, mediaType: "image/png")])[0]!
                let manifest = try BlobManifest(decoding: b.released.first { $0.frame == m }!.payload)
                var r = b.entry("with a photo")
                r.body.attachments = [
                    AttachmentReference(id: [1, 2, 3, 4], blob: manifest.blob, mediaType: "image/png", fileName: "photo.png")
                ]
                try b.commit([.entry(r)])
                return try b.vector(
                    "success", comment: "an entry revision naming an attachment by blob id; the manifest and its chunks come first")
            },
            {
                let b = try VectorBuilder("success-manifest-aliases")
                let content = b.random.bytes(3000)
                let old = BlobID(unchecked: b.random.bytes(32))
                try b.commit([.blob(content, mediaType: "image/jpeg", aliases: [old])])
                return try b.vector(
                    "success",
                    comment:
                        "a manifest with an alias (an earlier blob id of the same content, written by a rekey): the attachment reads whole under its own blob id"
                )
            },
            {
                let b = try VectorBuilder(
                    "success-unknown-public-fields", unknownPublicFields: CBORMap(text: [("zzFuture", .text("kept in the public part"))]))
                try b.commit([.entry(b.entry("unknown keyring fields"))])
                return try b.vector(
                    "success",
                    comment:
                        "a keyring public part with a field version 2 does not know: kept, covered by the signature, and the keyring is trusted"
                )
            },
            {
                let b = try VectorBuilder(
                    "success-unknown-slot-kind",
                    extraSlots: { _, _, r in
                        [
                            StoredSlot(
                                slot: .unknown(
                                    kind: "ml-kem-768",
                                    fields: CBORMap(text: [("box", .bytes(r.bytes(120))), ("kind", .text("ml-kem-768"))])))
                        ]
                    })
                try b.commit([.entry(b.entry("a future slot kind in standard mode"))])
                return try b.vector("success", comment: "in standard mode a slot of a kind the reader does not know is kept and skipped")
            },
            {
                let b = try VectorBuilder("success-required-slot-kinds", requiredSlotKinds: ["recovery"])
                try b.rotate(to: 2, requiredSlotKinds: ["recovery"])
                try b.commit([.entry(b.entry("a required slot kind carried forward"))])
                return try b.vector(
                    "success",
                    comment:
                        "a root that requires the slot kind \"recovery\" and a child that carries the requirement (the hook a hybrid post-quantum slot will use)"
                )
            },
            {
                let b = try VectorBuilder("success-rekey-blob-key")
                let photo = b.random.bytes(70_000)
                try b.commit([.blob(photo, mediaType: "image/jpeg")])
                try b.rotate(to: 2, reason: "rekey", blobKey: try SymmetricKey(bytes: b.random.bytes(32)))
                try b.commit([.blob(b.random.bytes(2000), mediaType: "image/png"), .entry(b.entry("after the rekey"))])
                return try b.vector(
                    "success",
                    comment:
                        "a rekey keyring has a fresh blob key: the attachment before it reads under the epoch 1 blob key, the one after under the epoch 2 key"
                )
            },
            {
                let b = try VectorBuilder("success-same-epoch-child")
                let laptop = try VectorBuilder.device([UInt8](repeating: 0x5a, count: 32))
                let key = b.keys.writeKey!
                let members = b.members + [KeyringMember(role: "device", publicKey: laptop.publicKey, name: "Laptop", added: b.now)]
                let body = try b.keyring(
                    key, parents: [b.parent(b.rootID)], slots: try b.memberSlots(for: key, members: members), members: members,
                    reason: "enroll")
                try b.addKeyring(key, body, members: members)
                try b.commit([.entry(b.entry("after enrolling the laptop"))])
                return try b.vector(
                    "success",
                    comment:
                        "a same-epoch keyring (an enrolment): its parent's key, keyCommit and epoch, a link and parentKeys entry under that same key",
                    deviceSeed: [UInt8](repeating: 0x5a, count: 32))
            },
            {
                let b = try VectorBuilder("success-join-two-heads", deviceSeed: [UInt8](repeating: 0x41, count: 32))
                let phone = try VectorBuilder.device([UInt8](repeating: 0x41, count: 32))
                let e2a = try b.freshKey(2)
                let e2b = try b.freshKey(2)
                let a = try b.keyring(e2a, parents: [b.parent(b.rootID)], slots: try b.memberSlots(for: e2a), members: b.members)
                let c = try b.keyring(
                    e2b, parents: [b.parent(b.rootID)], slots: try b.memberSlots(for: e2b), members: b.members, signer: phone)
                try b.addKeyring(e2a, a)
                try b.commit([.entry(b.entry("under one epoch 2"))])
                try b.addKeyring(e2b, c)
                try b.commit([.entry(b.entry("under the other epoch 2"))])
                let e3 = try b.freshKey(3)
                let join = try b.keyring(
                    e3, parents: [b.parent(KeyringBuilder.id(ofBody: a)), b.parent(KeyringBuilder.id(ofBody: c))],
                    slots: try b.memberSlots(for: e3), members: b.members, reason: "join")
                try b.addKeyring(e3, join)
                try b.commit([.entry(b.entry("after the join"))])
                return try b.vector(
                    "success",
                    comment:
                        "two concurrent epoch-2 keyrings (one by the recovery key, one by the phone) joined by an epoch-3 keyring with both as parents"
                )
            },
            {
                let b = try VectorBuilder("success-join-64-heads")
                var parents: [KeyringBuilder.Parent] = []
                var items: [Item] = []
                for _ in 0..<64 {
                    let k = try b.freshKey(2)
                    let body = try b.keyring(k, parents: [b.parent(b.rootID)], slots: try b.memberSlots(for: k), members: b.members)
                    items.append(.keyring(k, body))
                    parents.append(KeyringBuilder.Parent(id: KeyringBuilder.id(ofBody: body), key: k))
                }
                // Made under the write key of the state it makes: of the
                // epoch-2 heads, the smallest key commitment (format.md §9.2).
                let write = parents.map(\.key).min { $0.commitment.lexicographicallyPrecedes($1.commitment) }!
                try b.commit(items, commitKey: write)
                for p in parents { b.adopt(p.key, id: p.id) }
                let e3 = try b.freshKey(3)
                try b.addKeyring(
                    e3, try b.keyring(e3, parents: parents, slots: try b.memberSlots(for: e3), members: b.members, reason: "join"))
                try b.commit([.entry(b.entry("after joining 64 heads"))])
                return try b.vector(
                    "success",
                    comment:
                        "64 concurrent epoch-2 heads (the limit of parents) joined by one epoch-3 keyring with 64 parents, 64 links and 64 parent keys"
                )
            },
        ]
        for size in [0, 1, 65_534, 65_535, 65_536, 65_537, 70_000, 131_071, 131_072, 200_000] {
            list.append {
                let b = try VectorBuilder("success-attachment-\(size)")
                let content = b.random.bytes(size)
                try b.commit([.blob(content, mediaType: "application/octet-stream"), .entry(b.entry("attachment of \(size) bytes"))])
                let stream = Padding.streamByteCount(contentByteCount: UInt64(size))
                let n = Padding.chunkCount(contentByteCount: UInt64(size))
                return try b.vector(
                    "success",
                    comment:
                        "an attachment of \(size) bytes: a padded stream of Padmé(\(size + 1)) = \(stream) bytes in \(n) chunk(s), every chunk but the last 65,536 bytes"
                )
            }
        }
        return list
    }

    // MARK: - Recovered (warnings only)

    static var recovered: [Make] {
        var list: [Make] = [
            {
                let b = try VectorBuilder("recovered-torn-tail-in-header")
                try b.commit([.entry(b.entry("committed"))])
                var bytes = try b.bytes()
                let end = UInt64(bytes.count)
                bytes += [0x10, 0x03, 0x01, 0x00, 0x80]
                return try b.vector(
                    "recovered", comment: "a write cut off inside a frame header", body: bytes, issues: [("torn_tail", end)])
            },
            {
                let b = try VectorBuilder("recovered-torn-tail-in-body")
                try b.commit([.entry(b.entry("committed"))])
                let end = UInt64(try b.bytes().count)
                try b.commit([.entry(b.entry("lost"))], expectReleased: false)
                let bytes = try b.bytes()
                return try b.vector(
                    "recovered", comment: "a write cut off inside a record body", body: Array(bytes[0..<(Int(end) + 30)]),
                    issues: [("torn_tail", end)])
            },
            {
                let b = try VectorBuilder("recovered-uncommitted-records")
                try b.commit([.entry(b.entry("committed"))])
                let end = UInt64(try b.bytes().count)
                try b.commit([.entry(b.entry("written but not committed")), .entry(b.entry("also"))], expectReleased: false)
                let bytes = try b.bytes()
                return try b.vector(
                    "recovered", comment: "whole records with no commit after them are not released",
                    body: Array(bytes[0..<(bytes.count - commitLength)]), issues: [("torn_tail", end)])
            },
            {
                let b = try VectorBuilder("recovered-torn-commit")
                try b.commit([.entry(b.entry("committed"))])
                let end = UInt64(try b.bytes().count)
                try b.commit([.entry(b.entry("commit cut off"))], expectReleased: false)
                let bytes = try b.bytes()
                return try b.vector(
                    "recovered", comment: "the commit frame itself is cut off: its records are not committed",
                    body: Array(bytes[0..<(bytes.count - 9)]), issues: [("torn_tail", end)])
            },
            {
                let b = try VectorBuilder("recovered-torn-tail-inside-attachment")
                try b.commit([.entry(b.entry("committed"))])
                let end = UInt64(try b.bytes().count)
                try b.commit([.blob(b.random.bytes(150_000), mediaType: "video/mp4")], expectReleased: false)
                let bytes = try b.bytes()
                return try b.vector(
                    "recovered", comment: "a write cut off in the second chunk of an attachment: no manifest, no commit, nothing released",
                    body: Array(bytes[0..<(Int(end) + 70_000)]), issues: [("torn_tail", end)])
            },
            {
                let b = try VectorBuilder("recovered-trailing-garbage")
                try b.commit([.entry(b.entry("committed"))])
                let bytes = try b.bytes()
                return try b.vector(
                    "recovered", comment: "random bytes after the last commit are a torn tail", body: bytes + b.random.bytes(100),
                    issues: [("torn_tail", UInt64(bytes.count))])
            },
            {
                let b = try VectorBuilder("recovered-trailing-zeros")
                try b.commit([.entry(b.entry("committed"))])
                let bytes = try b.bytes()
                return try b.vector(
                    "recovered", comment: "4096 zero bytes after the last commit (a file system's zero fill after a crash)",
                    body: bytes + [UInt8](repeating: 0, count: 4096), issues: [("torn_tail", UInt64(bytes.count))])
            },
            {
                let b = try VectorBuilder("recovered-header-copy-1-damaged")
                try b.commit([.entry(b.entry("still readable"))])
                var bytes = try b.bytes()
                Edit.flipBit(&bytes, byte: 20, bit: 3)
                return try b.vector(
                    "recovered", comment: "a flipped bit in the first header copy's vault id: the second copy is used", body: bytes,
                    issues: [("header_copy_damaged", 0)])
            },
            {
                let b = try VectorBuilder("recovered-header-copy-2-damaged")
                try b.commit([.entry(b.entry("still readable"))])
                var bytes = try b.bytes()
                Edit.flipBit(&bytes, byte: 32 + 29, bit: 0)
                return try b.vector(
                    "recovered", comment: "a flipped bit in the second header copy's check", body: bytes,
                    issues: [("header_copy_damaged", 32)])
            },
            {
                let b = try VectorBuilder("recovered-header-magic-damaged")
                try b.commit([.entry(b.entry("still readable"))])
                var bytes = try b.bytes()
                Edit.flipBit(&bytes, byte: 1, bit: 6)
                return try b.vector(
                    "recovered", comment: "a flipped bit in the first copy's magic bytes", body: bytes, issues: [("header_copy_damaged", 0)]
                )
            },
            {
                let b = try VectorBuilder("recovered-keyring-copy-damaged")
                try b.commit([.entry(b.entry("still readable"))])
                var bytes = try b.bytes()
                Edit.flipBit(&bytes, byte: Int(b.offset(0)) + 100, bit: 4)
                return try b.vector(
                    "recovered",
                    comment:
                        "a flipped bit in the body of the first copy of the root keyring: its body hash fails, its trailer names an intact keyring, so the second copy is used; the chain covers the stored body hash, so the commit still verifies",
                    body: bytes,
                    issues: [("keyring_copy_damaged", b.offset(0))])
            },
            {
                let b = try VectorBuilder("recovered-keyring-second-copy-damaged")
                try b.commit([.entry(b.entry("still readable"))])
                var bytes = try b.bytes()
                let copy = b.copies(ofKeyring: 0)[1]
                Edit.flipBit(&bytes, byte: Int(b.offset(copy)) + 60, bit: 2)
                return try b.vector(
                    "recovered",
                    comment: "a flipped bit in the body of the second copy of the root keyring: the first copy stands for both",
                    body: bytes,
                    issues: [("keyring_copy_damaged", b.offset(copy))])
            },
            {
                let b = try VectorBuilder("damaged-keyring-copy-trailer")
                try b.commit([.entry(b.entry("still readable"))])
                var bytes = try b.bytes()
                let copy = b.copies(ofKeyring: 0)[1]
                Edit.flipBit(&bytes, byte: Int(b.frame(copy).end) - 3, bit: 0)
                return try b.vector(
                    "damaged",
                    comment:
                        "a flipped bit in the body hash (the trailer) of the second keyring copy: recognised as a copy by the hash of its body; the trailer is in the commit chain, so that commit does not verify",
                    body: bytes,
                    issues: [("keyring_copy_damaged", b.offset(copy)), ("commit_mismatch", b.commitFrame(of: copy).location.offset)])
            },
            {
                let b = try VectorBuilder("damaged-keyring-copy-flags-set")
                try b.commit([.entry(b.entry("still readable"))])
                var bytes = try b.bytes()
                let at = Int(b.offset(0))
                bytes[at + 1] = FrameHeader.sealedFlag
                Edit.fixCheck(&bytes, frameAt: at)
                return try b.vector(
                    "damaged",
                    comment:
                        "the first copy of the root keyring given the sealed flag (check recomputed): it breaks its row, its trailer names an intact keyring, so it is a damaged copy and the second copy is used; the commit covering it no longer verifies",
                    body: bytes,
                    issues: [("keyring_copy_damaged", UInt64(at)), ("commit_mismatch", b.commitFrame(of: 0).location.offset)])
            },
            {
                let b = try VectorBuilder("recovered-commit-header-rebuilt")
                try b.commit([.entry(b.entry("first"))])
                try b.commit([.entry(b.entry("second")), .entry(b.entry("third"))])
                var bytes = try b.bytes()
                let commit = bytes.count - commitLength
                for i in 0..<12 { bytes[commit + i] ^= 0x5a }
                return try b.vector(
                    "recovered",
                    comment:
                        "the last commit's header overwritten beyond one-bit repair: rebuilt for each held key (kind 2, flags 0, its key id, length 168), its stored head verifies, so the commit is genuine (commit recovery) and its attestation is checked as usual",
                    body: bytes,
                    issues: [("frame_repaired", UInt64(commit))])
            },
            {
                let b = try VectorBuilder("recovered-commit-header-rebuilt-epoch-2")
                try b.commit([.entry(b.entry("first"))])
                try b.rotate(to: 2)
                try b.commit([.entry(b.entry("second, epoch 2"))])
                var bytes = try b.bytes()
                let commit = bytes.count - commitLength
                for i in 0..<16 { bytes[commit + i] = 0xee }
                return try b.vector(
                    "recovered",
                    comment:
                        "the whole header of the last commit overwritten after a rotation: the reader rebuilds it with each held key, highest epoch first, and the epoch-2 key's head matches",
                    body: bytes,
                    issues: [("frame_repaired", UInt64(commit))])
            },
            {
                let b = try VectorBuilder("recovered-commit-header-rebuilt-keyring")
                try b.commit([.entry(b.entry("first"))])
                try b.rotate(to: 2)
                var bytes = try b.bytes()
                let commit = bytes.count - commitLength
                for i in 0..<12 { bytes[commit + i] ^= 0x33 }
                return try b.vector(
                    "recovered",
                    comment:
                        "the commit holding the epoch-2 keyring has its header overwritten: commit recovery under the epoch-1 key (the key it was made with) commits the keyring again, and the reader unlocks once more",
                    body: bytes,
                    issues: [("frame_repaired", UInt64(commit))])
            },
            {
                let b = try VectorBuilder("recovered-torn-tail-not-a-commit")
                try b.commit([.entry(b.entry("committed"))])
                let end = UInt64(try b.bytes().count)
                try b.commit([.entry(b.entry("written, not committed"))], expectReleased: false)
                var bytes = try b.bytes()
                for i in (bytes.count - CommitChain.bodyByteCount)..<bytes.count { bytes[i] = 0 }
                for i in (bytes.count - commitLength)..<(bytes.count - CommitChain.bodyByteCount) { bytes[i] ^= 0xff }
                return try b.vector(
                    "recovered",
                    comment:
                        "the last 184 bytes do not parse and their head matches under no key: a torn write, not a damaged commit; its records are not released",
                    body: bytes,
                    issues: [("torn_tail", end)])
            },
            {
                let b = try VectorBuilder("recovered-commit-header-flip")
                try b.commit([.entry(b.entry("first"))])
                try b.commit([.entry(b.entry("second"))])
                var bytes = try b.bytes()
                let commit = bytes.count - commitLength
                Edit.flipBit(&bytes, byte: commit + 8, bit: 2)
                return try b.vector(
                    "recovered", comment: "a flipped bit in the last commit's length field is corrected, so nothing committed is lost",
                    body: bytes, issues: [("frame_repaired", UInt64(commit))])
            },
            {
                let b = try VectorBuilder("recovered-unknown-critical-kind-in-tail")
                try b.commit([.entry(b.entry("committed"))])
                let end = UInt64(try b.bytes().count)
                let frame = Edit.plaintextFrame(
                    kind: RecordKind(rawValue: 0x3f), keyID: b.keys.writeKey!.id, body: [UInt8](repeating: 7, count: 16))
                return try b.vector(
                    "recovered",
                    comment: "an unknown critical kind after the last commit is part of the torn tail, not an error: nobody committed it",
                    body: try b.bytes() + frame, issues: [("torn_tail", end)])
            },
        ]
        // One flipped bit in each field of the header of each kind of frame.
        let fields: [(String, Int, Int)] = [("kind", 0, 4), ("flags", 1, 1), ("key-id", 4, 0), ("length", 9, 3), ("check", 14, 7)]
        for (field, byte, bit) in fields {
            for target in ["entry", "keyring", "chunk", "manifest", "commit"] {
                list.append {
                    let b = try VectorBuilder("recovered-frame-header-flip-\(field)-\(target)")
                    let idx = try b.commit([
                        .blob(b.random.bytes(3000), mediaType: "image/jpeg"), .entry(b.entry("header hit")), .entry(b.entry("neighbour")),
                    ])
                    try b.commit([.entry(b.entry("next commit"))])
                    var bytes = try b.bytes()
                    let index =
                        switch target {
                        case "entry": idx[1]!
                        case "keyring": 0
                        case "chunk": idx[0]! - 1
                        case "manifest": idx[0]!
                        default: idx[2]! + 1
                        }
                    let offset = Int(b.offset(index))
                    Edit.flipBit(&bytes, byte: offset + byte, bit: bit)
                    return try b.vector(
                        "recovered",
                        comment:
                            "one flipped bit in the \(field) field of a\(target == "entry" ? "n" : "") \(target) frame's header is corrected (the corrected frame is confirmed by the next header); the chain covers the corrected header, so nothing is lost",
                        body: bytes, issues: [("frame_repaired", UInt64(offset))])
                }
            }
        }
        return list
    }

    // MARK: - Damaged: frames, commits, moves

    static var damaged: [Make] {
        var list: [Make] = []
        for (region, pick) in [("nonce", 16 + 3), ("ciphertext", 16 + 24 + 5), ("tag", -32 - 3), ("body-hash", -3)] as [(String, Int)] {
            list.append {
                let b = try VectorBuilder("damaged-flip-\(region)")
                let idx = try b.commit([.entry(b.entry("before")), .entry(b.entry("hit")), .entry(b.entry("after"))])
                var bytes = try b.bytes()
                let f = b.frame(idx[1]!)
                let at = pick >= 0 ? Int(f.location.offset) + pick : Int(f.end) + pick
                Edit.flipBit(&bytes, byte: at, bit: 5)
                b.lose(frame: idx[1]!)
                var issues = [("authentication_failed", f.location.offset)]
                if region == "body-hash" { issues.append(("commit_mismatch", b.commitFrame(of: idx[2]!).location.offset)) }
                let why =
                    region == "body-hash"
                    ? "; the body hash is what the commit chain covers, so the commit does not verify either"
                    : "; the chain covers the stored body hash, not the \(region), so the commit still verifies"
                return try b.vector(
                    "damaged", comment: "a flipped bit in a record's \(region) breaks its body hash: that record only is lost\(why)",
                    body: bytes, issues: issues)
            }
        }
        list += [
            {
                let b = try VectorBuilder("damaged-frame-header-overwritten")
                let idx = try b.commit([.entry(b.entry("before")), .entry(b.entry("hit")), .entry(b.entry("after"))])
                try b.commit([.entry(b.entry("next commit"))])
                var bytes = try b.bytes()
                let f = b.frame(idx[1]!)
                for i in 3..<8 { bytes[Int(f.location.offset) + i] ^= 0xa5 }
                b.lose(frame: idx[1]!)
                return try b.vector(
                    "damaged",
                    comment:
                        "five bytes of a header overwritten: the reader resynchronises at the next frame; only that record is lost, and its commit no longer verifies. The next commit links to it by its stored head, and nothing shows what the damaged commit chained from (a damaged region cannot be undone): the reader passes by only commits after the last one a current member attested, and the commit before it is attested, so it stays verified (format.md §9.3)",
                    body: bytes,
                    issues: [("frame_damaged", f.location.offset), ("commit_mismatch", b.commitFrame(of: idx[2]!).location.offset)])
            },
            {
                let b = try VectorBuilder("damaged-zero-run-over-a-frame")
                let idx = try b.commit([.entry(b.entry("before")), .entry(b.entry("zeroed")), .entry(b.entry("after"))])
                var bytes = try b.bytes()
                let f = b.frame(idx[1]!)
                for i in Int(f.location.offset)..<Int(f.end) { bytes[i] = 0 }
                b.lose(frame: idx[1]!)
                return try b.vector(
                    "damaged",
                    comment:
                        "a whole record overwritten with zeros (a block the file system lost): skipped a word at a time, resynchronised at the next frame",
                    body: bytes,
                    issues: [("frame_damaged", f.location.offset), ("commit_mismatch", b.commitFrame(of: idx[2]!).location.offset)])
            },
            {
                let b = try VectorBuilder("damaged-length-past-end-of-file")
                let idx = try b.commit([.entry(b.entry("before")), .entry(b.entry("hit")), .entry(b.entry("after"))])
                try b.commit([.entry(b.entry("next commit"))])
                var bytes = try b.bytes()
                let at = Int(b.offset(idx[1]!))
                Edit.setUInt32(&bytes, at: at + 8, UInt32(bytes.count))
                Edit.fixCheck(&bytes, frameAt: at)
                b.lose(frame: idx[1]!)
                return try b.vector(
                    "damaged",
                    comment:
                        "a length (check recomputed) that runs past the end of the file, with committed frames after it: not a torn tail — the scanner resynchronises and only that record is lost. Its commit does not verify; the next commit links to it, and the commit before it, attested by a current member, stays verified (format.md §9.3)",
                    body: bytes,
                    issues: [("frame_damaged", UInt64(at)), ("commit_mismatch", b.commitFrame(of: idx[2]!).location.offset)])
            },
            {
                // Pins format.md §10.3: only the next confirmed position after
                // a length past the end is tried (Python README item 12).
                let b = try VectorBuilder("recovered-length-past-end-next-position-only")
                let idx = try b.commit((0..<6).map { i in .entry(b.entry("m-\(i)")) })
                var bytes = try b.bytes()
                let at = Int(b.offset(idx[0]!))
                Edit.setUInt32(&bytes, at: at + 8, UInt32(bytes.count))
                Edit.fixCheck(&bytes, frameAt: at)
                // The fourth frame's header no longer checks: the frames read
                // from the next confirmed position (the second frame) stop
                // there, before the commit; from the fifth frame on, they
                // would reach it.
                bytes[Int(b.offset(idx[3]!)) + 1] ^= 0xff
                b.lose(from: idx[0]!)
                return try b.vector(
                    "recovered",
                    comment:
                        "a length (check recomputed) that runs past the end of the file, and two frames later a damaged header: from the next confirmed position the frames read by their headers stop at the damage, before any commit, so it is a torn write; a later confirmed position that reaches the commit is not tried (format.md §10.3)",
                    body: bytes,
                    issues: [("torn_tail", UInt64(at))])
            },
            {
                let b = try VectorBuilder("damaged-two-headers-intact-between")
                let idx = try b.commit((0..<6).map { i in .entry(b.entry("m-\(i)")) })
                var bytes = try b.bytes()
                let third = b.frame(idx[2]!)
                let fifth = b.frame(idx[4]!)
                bytes[Int(third.location.offset) + 1] ^= 0xff
                bytes[Int(fifth.location.offset) + 1] ^= 0xff
                b.lose(frame: idx[2]!)
                b.lose(frame: idx[4]!)
                return try b.vector(
                    "damaged",
                    comment:
                        "two damaged headers with an intact frame between them: the checked frame that fits between the damage and the next confirmed frame is kept",
                    body: bytes,
                    issues: [
                        ("frame_damaged", third.location.offset), ("frame_damaged", fifth.location.offset),
                        ("commit_mismatch", b.commitFrame(of: idx[5]!).location.offset),
                    ])
            },
            {
                let b = try VectorBuilder("damaged-length-over-limit")
                let idx = try b.commit([.entry(b.entry("hit")), .entry(b.entry("after"))])
                var bytes = try b.bytes()
                let at = Int(b.offset(idx[0]!))
                Edit.setUInt32(&bytes, at: at + 8, UInt32(Limits.maxFrameBodyByteCount + 1))
                Edit.fixCheck(&bytes, frameAt: at)
                b.lose(frame: idx[0]!)
                return try b.vector(
                    "damaged",
                    comment: "a body length of 17,825,793 (one over the limit) with a valid check is implausible: skipped as damage",
                    body: bytes,
                    issues: [("frame_damaged", UInt64(at)), ("commit_mismatch", b.commitFrame(of: idx[1]!).location.offset)])
            },
            {
                let b = try VectorBuilder("damaged-length-under-minimum")
                let idx = try b.commit([.entry(b.entry("hit")), .entry(b.entry("after"))])
                var bytes = try b.bytes()
                let at = Int(b.offset(idx[0]!))
                Edit.setUInt32(&bytes, at: at + 8, 31)
                Edit.fixCheck(&bytes, frameAt: at)
                b.lose(frame: idx[0]!)
                return try b.vector(
                    "damaged",
                    comment: "a body length of 31 (under the minimum of 32) with a valid check is implausible: skipped as damage",
                    body: bytes,
                    issues: [("frame_damaged", UInt64(at)), ("commit_mismatch", b.commitFrame(of: idx[1]!).location.offset)])
            },
            {
                let b = try VectorBuilder("damaged-reserved-flag")
                let idx = try b.commit([.entry(b.entry("hit")), .entry(b.entry("after"))])
                var bytes = try b.bytes()
                let at = Int(b.offset(idx[0]!))
                bytes[at + 1] |= 0x40
                Edit.fixCheck(&bytes, frameAt: at)
                b.lose(frame: idx[0]!)
                return try b.vector(
                    "damaged", comment: "a reserved flag bit set, check recomputed: implausible, skipped as damage", body: bytes,
                    issues: [("frame_damaged", UInt64(at)), ("commit_mismatch", b.commitFrame(of: idx[1]!).location.offset)])
            },
            {
                let b = try VectorBuilder("damaged-compressed-without-sealed")
                let idx = try b.commit([.entry(b.entry("hit")), .entry(b.entry("after"))])
                var bytes = try b.bytes()
                let at = Int(b.offset(idx[0]!))
                bytes[at + 1] = FrameHeader.compressedFlag
                Edit.fixCheck(&bytes, frameAt: at)
                b.lose(frame: idx[0]!)
                return try b.vector(
                    "damaged", comment: "the compressed flag without the sealed flag is implausible", body: bytes,
                    issues: [("frame_damaged", UInt64(at)), ("commit_mismatch", b.commitFrame(of: idx[1]!).location.offset)])
            },
            {
                let b = try VectorBuilder("damaged-entry-not-sealed")
                let idx = try b.commit([.entry(b.entry("hit")), .entry(b.entry("after"))])
                var bytes = try b.bytes()
                let at = Int(b.offset(idx[0]!))
                bytes[at + 1] = 0
                Edit.fixCheck(&bytes, frameAt: at)
                b.lose(frame: idx[0]!)
                return try b.vector(
                    "damaged", comment: "an entry revision frame without the sealed flag breaks its kind's row", body: bytes,
                    issues: [("malformed_frame", UInt64(at)), ("commit_mismatch", b.commitFrame(of: idx[1]!).location.offset)])
            },
            {
                let b = try VectorBuilder("damaged-sealed-record-too-short")
                let short = Edit.plaintextFrame(
                    kind: .entryRevision, flags: FrameHeader.sealedFlag, keyID: b.keys.writeKey!.id, body: b.random.bytes(40))
                let idx = try b.commit([.raw(short, release: nil), .entry(b.entry("after"))])
                return try b.vector(
                    "damaged", comment: "a sealed entry frame of 72 bytes, one under nonce + 1 + tag + body hash (73): malformed",
                    issues: [("malformed_frame", b.offset(idx[0]!))])
            },
            {
                let b = try VectorBuilder("damaged-profile-not-sealed")
                let frame = Edit.plaintextFrame(
                    kind: .profile, keyID: b.keys.writeKey!.id,
                    body: Profile(name: "plain", clock: HybridLogicalClock(rawValue: 5)).encoded())
                let idx = try b.commit([.raw(frame, release: nil), .entry(b.entry("after"))])
                return try b.vector(
                    "damaged",
                    comment: "a profile frame without the sealed flag (a plaintext profile) breaks its kind's row and is not released",
                    issues: [("malformed_frame", b.offset(idx[0]!))])
            },
            {
                let b = try VectorBuilder("damaged-commit-kind-wrong-length")
                try b.commit([.entry(b.entry("first"))])
                let idx = try b.commit([.entry(b.entry("second"))])
                var bytes = try b.bytes()
                let commitAt = Int(b.offset(idx[0]! + 1))
                let bogus = FrameHeader(kind: .commit, flags: 0, keyID: b.keys.writeKey!.id, bodyLength: 40).encoded() + b.random.bytes(40)
                bytes.insert(contentsOf: bogus, at: commitAt)
                return try b.vector(
                    "damaged", comment: "a commit-kind frame whose body is not 168 bytes is malformed and is not a commit boundary",
                    body: bytes,
                    issues: [("malformed_frame", UInt64(commitAt)), ("commit_mismatch", UInt64(commitAt + bogus.count))])
            },
            {
                let b = try VectorBuilder("damaged-commit-sealed-flag")
                let one = try b.commit([.entry(b.entry("first"))])
                let two = try b.commit([.entry(b.entry("second"))])
                var bytes = try b.bytes()
                let commitAt = Int(b.offset(one[0]! + 1))
                bytes[commitAt + 1] = FrameHeader.sealedFlag
                Edit.fixCheck(&bytes, frameAt: commitAt)
                return try b.vector(
                    "damaged",
                    comment:
                        "a commit frame given the sealed flag (check recomputed) breaks its row: it closes nothing, so the next commit covers both groups and does not verify (their records are released unverified)",
                    body: bytes,
                    issues: [("malformed_frame", UInt64(commitAt)), ("commit_mismatch", b.offset(two[0]! + 1))])
            },
            {
                let b = try VectorBuilder("damaged-record-from-other-vault")
                let other = try VectorBuilder("damaged-record-from-other-vault/other")
                let foreign = try SealedFrame.seal(
                    kind: .entryRevision, payload: other.entry("foreign").encoded(), key: other.keys.writeKey!, vaultID: other.vaultID,
                    compress: true, random: other.random)
                let idx = try b.commit([.entry(b.entry("mine")), .raw(foreign, release: nil), .entry(b.entry("mine too"))])
                return try b.vector(
                    "damaged", comment: "a sealed record copied from another vault: its key id names a key this reader does not hold",
                    issues: [("unknown_key", b.offset(idx[1]!))])
            },
            {
                let b = try VectorBuilder("damaged-record-bound-to-other-vault-id")
                let otherID = VaultID(using: b.random)
                let moved = try SealedFrame.seal(
                    kind: .entryRevision, payload: b.entry("sealed with this vault's key, another vault id").encoded(),
                    key: b.keys.writeKey!, vaultID: otherID, compress: true, random: b.random)
                let idx = try b.commit([.raw(moved, release: nil), .entry(b.entry("after"))])
                return try b.vector(
                    "damaged", comment: "the associated data binds the vault id: the right key under another vault id fails",
                    issues: [("authentication_failed", b.offset(idx[0]!))])
            },
            {
                let b = try VectorBuilder("damaged-record-header-rebound")
                let r = try SealedFrame.seal(
                    kind: .entryRevision, payload: b.entry("sealed as an entry, relabelled a profile").encoded(), key: b.keys.writeKey!,
                    vaultID: b.vaultID, compress: false, random: b.random)
                var frame = r
                frame[0] = RecordKind.profile.rawValue
                Edit.fixCheck(&frame, frameAt: 0)
                let idx = try b.commit([.raw(frame, release: nil), .entry(b.entry("after"))])
                return try b.vector(
                    "damaged",
                    comment:
                        "a record's kind byte changed (check recomputed) before it was committed: the header fields are associated data, so it does not authenticate",
                    issues: [("authentication_failed", b.offset(idx[0]!))])
            },
            {
                let b = try VectorBuilder("damaged-records-reordered")
                let idx = try b.commit([.entry(b.entry("one")), .entry(b.entry("two")), .entry(b.entry("three"))])
                var bytes = try b.bytes()
                let f1 = b.frame(idx[0]!)
                let f2 = b.frame(idx[1]!)
                let one = Array(bytes[Int(f1.location.offset)..<Int(f1.end)])
                let two = Array(bytes[Int(f2.location.offset)..<Int(f2.end)])
                bytes.replaceSubrange(Int(f1.location.offset)..<Int(f2.end), with: two + one)
                b.released.swapAt(b.released.count - 3, b.released.count - 2)
                return try b.vector(
                    "damaged", comment: "two committed records swapped: both still authenticate, the commit does not", body: bytes,
                    issues: [("commit_mismatch", b.commitFrame(of: idx[2]!).location.offset)])
            },
            {
                let b = try VectorBuilder("damaged-record-duplicated")
                let idx = try b.commit([.entry(b.entry("one")), .entry(b.entry("twice"))])
                var bytes = try b.bytes()
                let f = b.frame(idx[1]!)
                let copy = Array(bytes[Int(f.location.offset)..<Int(f.end)])
                bytes.insert(contentsOf: copy, at: Int(f.end))
                b.released.append(b.released.last!)
                return try b.vector(
                    "damaged", comment: "a committed record duplicated inside its commit: detected by the commit", body: bytes,
                    issues: [("commit_mismatch", f.end + UInt64(copy.count))])
            },
            {
                let b = try VectorBuilder("damaged-commit-replayed")
                try b.commit([.entry(b.entry("one"))])
                let idx = try b.commit([.entry(b.entry("replayed"))])
                var bytes = try b.bytes()
                let start = Int(b.offset(idx[0]!))
                let copy = Array(bytes[start...])
                bytes += copy
                b.released.append(b.released.last!)
                return try b.vector(
                    "damaged",
                    comment:
                        "the last commit appended again (a replay): the copy stores the same head as the original, so it takes no link and is off the chain (orphaned, its record unverified); the original stays verified (format.md §9.3). Nothing is lost",
                    body: bytes,
                    issues: [("commit_orphaned", UInt64(bytes.count - commitLength))])
            },
            {
                let b = try VectorBuilder("damaged-commit-tampered")
                let idx = try b.commit([.entry(b.entry("kept")), .entry(b.entry("deleted")), .entry(b.entry("kept too"))])
                try b.commit([.entry(b.entry("written after"))])
                var bytes = try b.bytes()
                let f = b.frame(idx[1]!)
                bytes.removeSubrange(Int(f.location.offset)..<Int(f.end))
                b.lose(frame: idx[1]!)
                let cut = UInt64(f.end - f.location.offset)
                return try b.vector(
                    "damaged",
                    comment:
                        "a committed record cut out of a commit after a later commit was written: the later commit still chains from its stored head, so that commit was intact when the later one was written, and nothing in its group looks damaged: it was tampered with (commit_tampered; writers refuse to write until a merge or a compaction rewrites the file). Nothing shows what it chained from, but the commit before it is attested by a current member, so the chain keeps it (format.md §9.3); every remaining record is released, those of the tampered commit as unverified",
                    body: bytes, issues: [("commit_tampered", b.offset(idx[2]! + 1) - cut)])
            },
            {
                let b = try VectorBuilder("damaged-record-deleted")
                let idx = try b.commit([.entry(b.entry("kept")), .entry(b.entry("deleted")), .entry(b.entry("kept too"))])
                var bytes = try b.bytes()
                let f = b.frame(idx[1]!)
                bytes.removeSubrange(Int(f.location.offset)..<Int(f.end))
                b.lose(frame: idx[1]!)
                return try b.vector(
                    "damaged", comment: "a committed record cut out: the commit no longer verifies", body: bytes,
                    issues: [("commit_mismatch", b.offset(idx[2]! + 1) - UInt64(f.end - f.location.offset))])
            },
            {
                let b = try VectorBuilder("damaged-commit-deleted")
                try b.commit([.entry(b.entry("one"))])
                let mid = try b.commit([.entry(b.entry("deleted with its commit"))])
                let last = try b.commit([.entry(b.entry("three"))])
                var bytes = try b.bytes()
                let start = Int(b.offset(mid[0]!))
                let end = Int(b.frame(mid[0]! + 1).end)
                bytes.removeSubrange(start..<end)
                b.lose(frame: mid[0]!)
                return try b.vector(
                    "damaged",
                    comment:
                        "a whole commit cut out: the next commit's head verifies, but the previous head it stores is no head of the file: the commit it extends was deleted, so it is tampered (commit_tampered, writers refuse to write; its record is unverified)",
                    body: bytes,
                    issues: [("commit_tampered", b.offset(last[0]! + 1) - UInt64(end - start))])
            },
            {
                let b = try VectorBuilder("damaged-spliced-from-other-vault")
                try b.commit([.entry(b.entry("mine"))])
                let other = try VectorBuilder("damaged-spliced-from-other-vault/other")
                let o = try other.commit([.entry(other.entry("theirs"))])
                let theirs = try other.bytes()
                let tail = Array(theirs[Int(other.offset(o[0]!))...])
                var bytes = try b.bytes()
                let at = UInt64(bytes.count)
                bytes += tail
                return try b.vector(
                    "damaged",
                    comment:
                        "a commit from another vault spliced on the end: its record and its commit name a key this reader does not hold",
                    body: bytes,
                    issues: [("unknown_key", at), ("commit_unverifiable", UInt64(bytes.count - commitLength))])
            },
            {
                let b = try VectorBuilder("damaged-commit-head-flipped")
                let one = try b.commit([.entry(b.entry("one"))])
                try b.commit([.entry(b.entry("two"))])
                var bytes = try b.bytes()
                let commit = b.frame(one[0]! + 1)
                Edit.flipBit(&bytes, byte: Int(commit.location.offset) + 16 + 7, bit: 1)
                return try b.vector(
                    "damaged",
                    comment:
                        "a flipped bit in a commit's stored head: that commit does not verify (its records are released unverified); the next commit links to its computed head, which shows what the damaged commit chained from, so the commit before it stays on the chain (format.md §9.3, links)",
                    body: bytes,
                    issues: [("commit_mismatch", commit.location.offset)])
            },
            {
                let b = try VectorBuilder("damaged-commit-previous-head-flipped")
                let one = try b.commit([.entry(b.entry("one"))])
                try b.commit([.entry(b.entry("two"))])
                var bytes = try b.bytes()
                let commit = b.frame(one[0]! + 1)
                Edit.flipBit(&bytes, byte: Int(commit.bodyOffset) + 32 + 5, bit: 0)
                return try b.vector(
                    "recovered",
                    comment:
                        "a flipped bit in a commit's stored previous head: its head does not verify from it, but does from the stored head of the commit before it in the file, which the reader tries next (format.md §9.3, heads step 2); the attestation is checked against that value, so nothing is lost, and the damaged field is reported",
                    body: bytes,
                    issues: [("frame_repaired", commit.location.offset)])
            },
            {
                let b = try VectorBuilder("damaged-body-hash-bridged")
                let one = try b.commit([.entry(b.entry("kept")), .entry(b.entry("its body hash is hit"))])
                try b.commit([.entry(b.entry("next commit"))])
                var bytes = try b.bytes()
                let hit = b.frame(one[1]!)
                Edit.flipBit(&bytes, byte: Int(hit.end) - 5, bit: 3)
                b.lose(frame: one[1]!)
                return try b.vector(
                    "damaged",
                    comment:
                        "a flipped bit in a record's body hash, with a commit written after: the record is lost and its commit does not verify, but with the body hash recomputed from the body its head verifies (the repaired digest), so the damage is bridged: the commit before it stays on the chain and nothing is orphaned (format.md §9.3)",
                    body: bytes,
                    issues: [
                        ("authentication_failed", hit.location.offset), ("commit_mismatch", b.commitFrame(of: one[0]!).location.offset),
                    ])
            },
            {
                let b = try VectorBuilder("damaged-commit-unknown-key-id")
                try b.commit([.entry(b.entry("one"))])
                let idx = try b.commit([.entry(b.entry("under a commit naming a key nobody holds"))])
                var bytes = try b.bytes()
                let at = Int(b.offset(idx[0]! + 1))
                for i in 2..<8 { bytes[at + i] = 0x99 }
                Edit.fixCheck(&bytes, frameAt: at)
                return try b.vector(
                    "damaged",
                    comment:
                        "a commit whose key id (check recomputed) matches no held key cannot be checked; its epoch-1 records are still current and released unverified",
                    body: bytes,
                    issues: [("commit_unverifiable", UInt64(at))])
            },
        ]
        return list
    }
}
