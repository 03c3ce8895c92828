@_spi(Crypto) import QuireCrypto
@_spi(Format) import QuireFormat
@_spi(Format) import QuireKeys
import QuireVectors

/// One vector per attack of issue 12, named `attack-…`. Each is a file
/// that format 1 read the attacker's way; its comment says what the attack
/// is and what holds in format 2. Attacks that only the library can show
/// (device memory, a refused write) are tests named `attack…` in
/// `Tests/QuireTests/AttackTests.swift`.
extension Catalog {
    static let phoneSeed = [UInt8](repeating: 0x50, count: 32)
    static let seedA = [UInt8](repeating: 0xa4, count: 32), seedB = [UInt8](repeating: 0xb4, count: 32)
    static let seedC = [UInt8](repeating: 0xc4, count: 32), seedD = [UInt8](repeating: 0xd4, count: 32)

    /// Thirteenth review R13-1: the bytes of keyring frame `index` under
    /// another key id (the header check recomputed; the id, the body hash,
    /// does not cover the header), then a junk commit under a key id nobody
    /// holds: a group a writer holding no key can insert anywhere.
    static func headerShadow(_ b: VectorBuilder, keyring index: Int) throws -> (group: [UInt8], commitAt: Int) {
        let raw = try b.bytes()
        var copy = Array(raw[Int(b.offset(index))..<Int(b.vault.structure.frames.end(at: index))])
        for i in 2..<8 { copy[i] ^= 0xff }
        Edit.fixCheck(&copy, frameAt: 0)
        let junk = CommitChain.commitHeader(keyID: KeyID(rawValue: 0x9999_9999_9999)).encoded() + b.random.bytes(CommitChain.bodyByteCount)
        return (copy + junk, copy.count)
    }

    static var attacks: [Make] {
        [
            {
                let b = try VectorBuilder("attack-keyring-header-shadow-root")
                try b.commit([.entry(b.entry("the journal"))])
                let root = (0..<b.vault.structure.frames.count).first { b.frame($0).header.kind == .keyring }!
                let (shadow, commitAt) = try headerShadow(b, keyring: root)
                let at = Int(b.offset(root))
                let raw = try b.bytes()
                return try b.vector(
                    "damaged",
                    comment:
                        "attack (thirteenth review R13-1): a writer holding no key copies the root keyring's frame with its header's key id changed (check recomputed) and inserts it, with a junk commit, right after the file header. The keyring id is the body hash and does not cover the header, so the copy is intact and was the root's first intact copy, which rule 1 rejects: every credential was refused [malformed_keyring]. Now the copy used is the first intact one whose header's key id is its keyCommit[0..<6] (format.md §8.1): the shadow is a damaged copy and the vault opens",
                    body: Array(raw[..<at]) + shadow + Array(raw[at...]),
                    issues: [("keyring_copy_damaged", UInt64(at)), ("commit_unverifiable", UInt64(at + commitAt))])
            },
            {
                let b = try VectorBuilder("attack-keyring-header-shadow-removal", deviceSeed: phoneSeed)
                try b.commit([.entry(b.entry("before the removal"))])
                let before = try b.bytes()
                // The phone's commit, chained from the head before its
                // removal, under the epoch-1 key it still holds, attested by
                // itself: written after the removal by the removed phone.
                let phone = try VectorBuilder.device(phoneSeed)
                try b.commit([.entry(b.entry("the removed phone's"))], expectReleased: false, attest: .sign(phone))
                let phoneGroup = Array(try b.bytes()[before.count...])
                try b.replaceFile(with: before)
                let kept = [recoveryMember(b)]
                let (k2, removal) = try child(b, members: kept, removed: [b.members[1]], reason: "remove")
                let ri = try b.addKeyring(k2, removal, members: kept)
                try b.commit([.entry(b.entry("after the removal"))])
                let (shadow, commitAt) = try headerShadow(b, keyring: ri)
                let at = Int(b.offset(ri))
                let raw = try b.bytes()
                let phoneAt = raw.count + shadow.count
                return try b.vector(
                    "damaged",
                    comment:
                        "attack (thirteenth review R13-1): the recovery key removes the phone; the removed phone, which can write the file, copies the removal's keyring frame under another key id (check recomputed) into a junk group just before the removal's group, then appends a commit under the epoch-1 key it still holds, chained from the head before the removal and attested by itself. Before, the shadow was the removal's first intact copy and failed rule 1: the removal and its epoch were untrusted, and the phone's record was released as attested by a current member to every reader without device memory (this one opens with the recovery key). Now the shadow is a damaged copy (format.md §8.1): the removal stands and the phone's commit is stale, its record not released",
                    body: Array(raw[..<at]) + shadow + Array(raw[at...]) + phoneGroup,
                    issues: [
                        ("keyring_copy_damaged", UInt64(at)), ("commit_unverifiable", UInt64(at + commitAt)),
                        ("stale_epoch", UInt64(phoneAt)), ("commit_orphaned", UInt64(raw.count + shadow.count + phoneGroup.count - 216)),
                    ])
            },
            {
                let b = try VectorBuilder("attack-reseal-keyring-copies")
                try b.commit([.entry(b.entry("before"))])
                let k2 = try b.freshKey(2)
                let body = try b.keyring(k2, parents: [b.parent(b.rootID)], slots: try b.memberSlots(for: k2), members: b.members)
                try b.addKeyring(k2, body)
                // Anyone holding the epoch-2 key (a passphrase holder, an
                // escrow custodian) re-seals the keyring under fresh nonces.
                var copies: [Item] = []
                for _ in 0..<8 {
                    copies.append(.plaintext(.keyring, try KeyringForge.reseal(body, key: k2, vaultID: b.vaultID, random: b.random)))
                }
                let idx = try b.commit(copies, attest: CommitAttestation.none)
                try b.commit([.entry(b.entry("after"))])
                return try b.vector(
                    "damaged",
                    comment:
                        "attack: a holder of the epoch key (not of the signer's key) re-seals a trusted keyring under 8 fresh nonces. Format 1 signed neither nonce nor key, so each copy got a new id and became a trusted head (65 froze every new epoch). Now the signature covers the nonce: each copy is keyring_unauthenticated, no extra head appears",
                    issues: idx.map { ("keyring_unauthenticated", b.offset($0!)) })
            },
            {
                let b = try VectorBuilder("attack-member-flood-heads", deviceSeed: phoneSeed)
                try b.commit([.entry(b.entry("before the phone went rogue"))])
                let phone = try VectorBuilder.device(phoneSeed)
                var flood: [Item] = []
                for _ in 0..<70 {
                    let k = try b.freshKey(2)
                    flood.append(
                        .plaintext(
                            .keyring,
                            try b.keyring(
                                k, parents: [b.parent(b.rootID)], slots: try b.memberSlots(for: k), members: b.members, signer: phone)))
                }
                let idx = try b.commit(flood, attest: .sign(phone))
                // The recovery key removes the phone, with a parent that
                // leaves the phone's 70 keyrings out.
                let kept = [recoveryMember(b)]
                let (k2, removal) = try child(b, members: kept, removed: [b.members[1]], reason: "remove")
                try b.addKeyring(k2, removal, members: kept)
                try b.commit([.entry(b.entry("after the removal"))])
                return try b.vector(
                    "damaged",
                    comment:
                        "attack: an enrolled phone writes 70 sibling epoch-2 keyrings, 70 trusted heads. Format 1 then refused every new-epoch operation over 64 heads, so the phone could not be removed. Now a removal chooses its parents (here the root, leaving the phone's branch out) and the recovery key's removal always wins: all 70 are cut (rule 6), one head remains",
                    issues: idx.map { ("keyring_unauthenticated", b.offset($0!)) })
            },
            {
                let b = try VectorBuilder(
                    "attack-history-flood",
                    extraSlots: { key, id, r in
                        var p = Array("correct horse battery staple".utf8)
                        return [
                            StoredSlot(
                                slot: try SlotCrypto.passphraseSlot(
                                    for: key, passphrase: SecureBytes(consuming: &p), opsLimit: 1, memLimitBytes: 8192, vaultID: id,
                                    random: r))
                        ]
                    })
                try b.commit([.entry(b.entry("the journal"))])
                let root = try KeyringRecord(body: b.frame(0).plaintextBody!, location: nil)
                guard case .passphrase(let salt, let ops, let mem, let pk, _) = root.publicPart.slots.last! else { fatalError() }
                // Built from public data only: the root's id, its passphrase
                // slot's salt and cost, random keys and boxes.
                var frames: [[UInt8]] = []
                let huge = KeyringPublic(
                    epoch: 2, keyCommit: b.random.bytes(32), parents: (0..<100).map { _ in KeyringID(unchecked: b.random.bytes(32)) },
                    links: (0..<100).map { _ in b.random.bytes(KeyringRecord.linkByteCount) }, isEscrowFree: false, slotEntries: [])
                let hugeBody = KeyringForge.assemble(publicBytes: huge.encoded(), nonce: b.random.bytes(24), sealed: b.random.bytes(64))
                frames.append(Edit.plaintextFrame(kind: .keyring, keyID: KeyID(commitment: huge.keyCommit), body: hugeBody))
                for _ in 0..<300 {
                    let pub = KeyringPublic(
                        epoch: 2, keyCommit: b.random.bytes(32), parents: [b.rootID], links: [b.random.bytes(KeyringRecord.linkByteCount)],
                        isEscrowFree: false,
                        slotEntries: [
                            StoredSlot(
                                slot: .passphrase(
                                    salt: salt, opsLimit: ops, memLimitBytes: mem, publicKey: pk, box: b.random.bytes(KeySlot.boxByteCount))
                            )
                        ])
                    let body = KeyringForge.assemble(publicBytes: pub.encoded(), nonce: b.random.bytes(24), sealed: b.random.bytes(17))
                    frames.append(Edit.plaintextFrame(kind: .keyring, keyID: KeyID(commitment: pub.keyCommit), body: body))
                }
                var bytes = try b.bytes()
                let start = UInt64(bytes.count)
                for f in frames { bytes += f }
                let commitAt = UInt64(bytes.count)
                bytes += CommitChain.commitHeader(keyID: b.keys.writeKey!.id).encoded() + b.random.bytes(CommitChain.bodyByteCount)
                return try b.vector(
                    "damaged",
                    comment:
                        "attack: from public data alone, a keyring naming 100 parents and 300 unopenable keyrings whose passphrase slots copy the real slot's salt and cost. Format 1 tried every history key of every keyring by trial decryption (minutes with a passphrase). Now keys are found by commitment: the 100-parent keyring is malformed (over 64), the 300 are never opened (neither trusted nor rejected), each of their slots costs one sealed-box open and no Argon2id run; the vault opens, with issues",
                    body: bytes,
                    issues: [("malformed_keyring", start), ("commit_mismatch", commitAt)], passphrase: "correct horse battery staple")
            },
            {
                let b = try VectorBuilder("attack-rewrite-body-keep-tag")
                var r = b.entry("Paid the builder 10 pounds for the roof.")
                r.body.extra = CBORMap(text: [("noise", .bytes(b.random.bytes(160)))])
                let idx = try b.commit([
                    .sealed(.entryRevision, r.encoded(), compress: false), .entry(b.entry("a neighbour in the same commit")),
                ])
                var bytes = try b.bytes()
                let f = b.frame(idx[0]!)
                // A holder of the record key rewrites "10" as "90" and keeps
                // the Poly1305 tag (TagForgery), then fixes the body hash.
                let key = try b.keys.writeKey!.subkey(.record)
                let bodyStart = Int(f.bodyOffset)
                let nonce = Array(bytes[bodyStart..<(bodyStart + 24)])
                let sealedEnd = Int(f.end) - 32
                let ciphertext = Array(bytes[(bodyStart + 24)..<(sealedEnd - 16)])
                var plaintext = r.encoded()
                Padding.pad(&plaintext)
                let textAt = find(Array("10 pounds".utf8), in: plaintext)!
                var forgedPlain = plaintext
                forgedPlain[textAt] = UInt8(ascii: "9")
                let noiseAt = find(Array("noise".utf8), in: plaintext)! + 5 + 2
                let j = textAt / 16
                let candidates = Array(((noiseAt + 15) / 16)..<((noiseAt + 160) / 16))
                guard
                    let forged = TagForgery.rewrite(
                        ciphertext: ciphertext, plaintext: plaintext, key: key, nonce: nonce, block: j,
                        newBlock: Array(forgedPlain[(j * 16)..<(j * 16 + 16)]), candidates: candidates)
                else { fatalError("no forgery") }
                bytes.replaceSubrange((bodyStart + 24)..<(sealedEnd - 16), with: forged)
                Edit.fixBodyHash(&bytes, frameAt: Int(f.location.offset), keyCommitment: b.keys.writeKey!.commitment)
                let ad = SealedFrame.associatedData(vaultID: b.vaultID, header: f.header, publicHeader: [])
                let opened = try XChaCha20Poly1305.open(
                    Array(bytes[(bodyStart + 24)..<sealedEnd]), key: key, nonce: nonce, authenticating: ad)
                guard let n = opened.lastIndex(where: { $0 != 0 }) else { fatalError() }
                let payload = Array(opened[0..<n])
                guard let rewritten = try? EntryRevision(decoding: payload), rewritten.body.text.contains("90 pounds") else {
                    fatalError("the forged record does not decode")
                }
                b.released[b.released.firstIndex { $0.frame == idx[0]! }!] = (
                    frame: idx[0]!, kind: RecordKind.entryRevision.rawValue, payload: payload
                )
                return try b.vector(
                    "damaged",
                    comment:
                        "attack: a key holder rewrites a record (\"10 pounds\" becomes \"90 pounds\", a noise field absorbs the difference) so that it keeps its Poly1305 tag, and recomputes the body hash. Format 1's chain covered header and tag only, so the forgery stayed verified. Now the chain covers the body hash: the commit does not verify, and the rewritten record and its neighbour are released unverified",
                    body: bytes,
                    issues: [("commit_mismatch", b.commitFrame(of: idx[0]!).location.offset)])
            },
            {
                let b = try VectorBuilder(
                    "attack-passphrase-writes-unattested",
                    extraSlots: { key, id, r in
                        var p = Array("correct horse battery staple".utf8)
                        return [
                            StoredSlot(
                                slot: try SlotCrypto.passphraseSlot(
                                    for: key, passphrase: SecureBytes(consuming: &p), opsLimit: 1, memLimitBytes: 8192, vaultID: id,
                                    random: r))
                        ]
                    })
                try b.commit([.entry(b.entry("written by a member"))])
                // The passphrase holder (who can read) appends an entry that
                // claims to come from the recovery key's device id, in a
                // commit whose head is valid but which no member attests.
                try b.commit(
                    [.entry(b.entry("written by the passphrase holder, claiming to be the owner"))], attest: CommitAttestation.none)
                return try b.vector(
                    "success",
                    comment:
                        "attack: a passphrase holder (read-only in the README) appends an entry with any device field. Format 1 released it verified, as if a device wrote it. Now every member signs its commits inside the sealed part: this commit verifies but is not attested, so its record is released unattested (unattested: 1) and must not be shown as written by a member"
                )
            },
            {
                let b = try VectorBuilder("attack-keyless-critical-kind")
                try b.commit([.entry(b.entry("the journal"))])
                var bytes = try b.bytes()
                let at = UInt64(bytes.count)
                let frame = Edit.plaintextFrame(kind: RecordKind(rawValue: 0x01 ^ 0x20), keyID: b.keys.writeKey!.id, body: [])
                bytes += frame
                let commitAt = UInt64(bytes.count)
                bytes += CommitChain.commitHeader(keyID: b.keys.writeKey!.id).encoded() + b.random.bytes(CommitChain.bodyByteCount)
                return try b.vector(
                    "damaged",
                    comment:
                        "attack: a writer holding no key appends a 48-byte frame of unknown critical kind 0x21 and a junk commit (232 bytes). Format 1 refused to open the vault with every credential (\"update Quire\"). Now a critical kind stops a reader only inside a verified, attested commit: here it is a per-frame issue and the vault opens",
                    body: bytes,
                    issues: [("unknown_critical_kind", at), ("commit_mismatch", commitAt)])
            },
            {
                let b = try VectorBuilder("attack-forged-newer-keyring", deviceSeed: phoneSeed)
                try b.commit([.entry(b.entry("the journal"))])
                // A keyless writer forges an epoch-2 keyring naming the root
                // as parent, with a slot for the phone and a random link.
                let pub = KeyringPublic(
                    epoch: 2, keyCommit: b.random.bytes(32), parents: [b.rootID], links: [b.random.bytes(KeyringRecord.linkByteCount)],
                    isEscrowFree: false,
                    slotEntries: [StoredSlot(slot: .device(box: b.random.bytes(KeySlot.boxByteCount)))])
                let frame = Edit.plaintextFrame(
                    kind: .keyring, keyID: KeyID(commitment: pub.keyCommit),
                    body: KeyringForge.assemble(publicBytes: pub.encoded(), nonce: b.random.bytes(24), sealed: b.random.bytes(300)))
                var bytes = try b.bytes()
                bytes += frame
                let commitAt = UInt64(bytes.count)
                bytes += CommitChain.commitHeader(keyID: b.keys.writeKey!.id).encoded() + b.random.bytes(CommitChain.bodyByteCount)
                return try b.vector(
                    "damaged",
                    comment:
                        "attack: a keyless writer appends an epoch-2 keyring nobody can open. Format 1 took any newer unreadable keyring as this device's removal and stopped every device from writing. Now only a keyring whose link to a trusted parent verifies under that parent's link key counts (test attackForgedNewerKeyring…): this one is neither trusted nor rejected and the vault opens",
                    body: bytes,
                    issues: [("commit_mismatch", commitAt)], deviceSeed: phoneSeed)
            },
            gatedSlot("attack-keyless-slot-that-opens", behind: false),
            gatedSlot("attack-keyless-costly-slot", behind: false),
            gatedSlot("attack-keyless-costly-slot-behind", behind: true),
            insertedSlotFlood("attack-inserted-slot-flood", credential: .device),
            insertedSlotFlood("attack-inserted-slot-flood-recovery-key", credential: .recoveryKey),
            insertedSlotFlood("attack-inserted-slot-flood-passphrase", credential: .passphrase),
            appendedPassphraseDecoys("attack-appended-passphrase-decoys"),
            mutualRemoval("attack-mutual-removal-order-ab", aFirst: true),
            mutualRemoval("attack-mutual-removal-order-ba", aFirst: false),
            {
                // Scenario 4 of format.md §8.4: the thief holds device B.
                let thiefSeed = [UInt8](repeating: 0xb2, count: 32)
                let b = try VectorBuilder("attack-removed-device-puppet", deviceSeed: sam, moreDeviceSeeds: [thiefSeed])
                try b.commit([.entry(b.entry("before the theft"))])
                let thief = try VectorBuilder.device(thiefSeed)
                let m = b.members
                let rootKey = b.ringKeys[b.rootID]!
                // The user removes B with the recovery key.
                let (kq, rq) = try child(b, members: [m[0], m[1]], removed: [m[2]], reason: "remove")
                try b.addKeyring(kq, rq, members: [m[0], m[1]])
                try b.commit([.entry(b.entry("after removing the stolen device"))])
                // From before the removal, B enrols a key E of its own (same epoch)…
                let puppet = try Ed25519.KeyPair(seed: SecureBytes(randomCount: 32, using: b.random))
                let withE = m + [KeyringMember(role: "device", publicKey: puppet.publicKey, name: "Tablet", added: b.now)]
                let x = try b.keyring(
                    rootKey, parents: [b.parent(b.rootID)], slots: try b.memberSlots(for: rootKey, members: withE), members: withE,
                    signer: thief, reason: "enroll")
                b.writeWith(rootKey)
                let ix = try b.addKeyring(rootKey, x, trust: false)
                // …and E replaces the recovery key with the thief's own.
                let thiefRecovery = try Ed25519.KeyPair(seed: SecureBytes(randomCount: 32, using: b.random))
                let yMembers =
                    [KeyringMember(role: "recovery", publicKey: thiefRecovery.publicKey, name: "Recovery key", added: b.now)]
                    + Array(withE.dropFirst())
                let ky = try b.freshKey(2)
                let y = try b.keyring(
                    ky, parents: [KeyringBuilder.Parent(id: KeyringBuilder.id(ofBody: x), key: rootKey)],
                    slots: try b.memberSlots(for: ky, members: yMembers),
                    members: yMembers, removed: [m[0]], signer: puppet, reason: "recovery")
                let iy = try b.addKeyring(ky, y, trust: false)
                return try b.vector(
                    "damaged",
                    comment:
                        "attack (proposed in threat-model §6.3): a thief holding device B, removed by the recovery key, forks from before the removal, enrols a key E of its own, and has E replace the recovery key. E's keyring is behind the removal (its ancestor, B's, defies it), so it neither contests nor cuts the recovery key's removal; B's keyring is cut, and E's with it. Opened by the remaining device; the thief's commits are stale",
                    issues: [
                        ("keyring_unauthenticated", b.offset(ix)), ("stale_epoch", b.commitFrame(of: ix).location.offset),
                        ("keyring_unauthenticated", b.offset(iy)), ("stale_epoch", b.commitFrame(of: iy).location.offset),
                    ],
                    deviceSeed: sam)
            },
            {
                // Third review, item 1 (a): format.md §8.4 scenario 9.
                let (b, a, d, m, mainLine, ix, iy, (kr, r)) = try scenarioNineStart("attack-puppet-silences-later-removal")
                // Later, A removes D (Z2) while D enrols a device of its own (W).
                let rParent = KeyringBuilder.Parent(id: KeyringBuilder.id(ofBody: r), key: kr)
                let tablet = KeyringMember(
                    role: "device", publicKey: try Ed25519.KeyPair(seed: SecureBytes(randomCount: 32, using: b.random)).publicKey,
                    name: "D's tablet", added: b.now)
                let (kw, w) = try child(b, epoch: 3, members: mainLine + [tablet], reason: "enroll", signer: d, parents: [rParent])
                let iw = try b.addKeyring(kw, w, trust: false)
                let zMembers = [m[0], m[1], m[3]]
                let (kz, z) = try child(b, epoch: 3, members: zMembers, removed: [m[4]], reason: "remove", signer: a, parents: [rParent])
                try b.addKeyring(kz, z, members: zMembers)
                try b.commit([.entry(b.entry("after removing D"))])
                return try b.vector(
                    "damaged",
                    comment:
                        "attack (third review, item 1): A removes the stolen B (R); B forks from the root, enrols E (X), and E removes A (Y), which nobody can contest. Every keyring after R defied Y, so with one pass the main line was behind Y and silenced: A's later removal of D (Z2) cut nothing and D's concurrent enrollment (W) stood. Now Y, itself behind the uncontested R, is not primary: nothing is behind it. X is cut, Y with it, and W is cut by Z2 (format.md §8.4 scenario 9)",
                    issues: [
                        ("keyring_unauthenticated", b.offset(ix)), ("keyring_unauthenticated", b.offset(iy)),
                        ("keyring_unauthenticated", b.offset(iw)),
                    ])
            },
            {
                // Third review, item 1 (b): format.md §8.4 scenario 10.
                let b = try VectorBuilder(
                    "attack-mutual-join-silences-later-removal", deviceSeed: seedA, moreDeviceSeeds: [seedB, seedC, seedD])
                try b.commit([.entry(b.entry("before"))])
                let a = try VectorBuilder.device(seedA)
                let bb = try VectorBuilder.device(seedB)
                let c = try VectorBuilder.device(seedC)
                let d = try VectorBuilder.device(seedD)
                let m = b.members  // Q, A, B, C, D
                let (ka, ra) = try child(b, members: [m[0], m[1], m[3], m[4]], removed: [m[2]], reason: "remove", signer: a)
                let (kb, rb) = try child(b, members: [m[0], m[2], m[3], m[4]], removed: [m[1]], reason: "remove", signer: bb)
                let iab = try b.commit([.keyring(ka, ra), .keyring(kb, rb)], commitKey: VectorBuilder.writeKey(of: [ka, kb]))
                b.writeWith(ka)
                // C joins the two removals (keys.md §6.8).
                let joined = [m[0], m[3], m[4]]
                let (kj, j) = try child(
                    b, epoch: 3, members: joined, reason: "join", signer: c,
                    parents: [
                        KeyringBuilder.Parent(id: KeyringBuilder.id(ofBody: ra), key: ka),
                        KeyringBuilder.Parent(id: KeyringBuilder.id(ofBody: rb), key: kb),
                    ])
                try b.addKeyring(kj, j, members: joined)
                let jParent = KeyringBuilder.Parent(id: KeyringBuilder.id(ofBody: j), key: kj)
                // D enrols a device of its own (W) while C removes D (Z).
                let tablet = KeyringMember(
                    role: "device", publicKey: try Ed25519.KeyPair(seed: SecureBytes(randomCount: 32, using: b.random)).publicKey,
                    name: "D's tablet", added: b.now)
                let (kw, w) = try child(b, epoch: 4, members: joined + [tablet], reason: "enroll", signer: d, parents: [jParent])
                let iw = try b.addKeyring(kw, w, trust: false)
                let zMembers = [m[0], m[3]]
                let (kz, z) = try child(b, epoch: 4, members: zMembers, removed: [m[4]], reason: "remove", signer: c, parents: [jParent])
                try b.addKeyring(kz, z, members: zMembers)
                try b.commit([.entry(b.entry("after removing D"))])
                return try b.vector(
                    "damaged",
                    comment:
                        "attack (third review, item 1): A and B remove each other (RA, RB, mutual) and C joins them (J). J has RB as an ancestor, which defies RA, so with one pass J and everything after it were behind RA and silenced: C's removal of D (Z) cut nothing and D's concurrent enrollment (W) stood. A keyring mutual with a removal now starts no branch behind it: W is cut (format.md §8.4 scenario 10)",
                    issues: [
                        ("removal_mutual", b.offset(iab[0]!)), ("removal_mutual", b.offset(iab[1]!)),
                        ("keyring_unauthenticated", b.offset(iw)),
                    ])
            },
            {
                // Third review, item 2: a removed device answers its own removal.
                let b = try VectorBuilder("attack-removed-device-answers-its-removal", deviceSeed: seedA, moreDeviceSeeds: [seedB])
                try b.commit([.entry(b.entry("before"))])
                let a = try VectorBuilder.device(seedA)
                let bb = try VectorBuilder.device(seedB)
                let m = b.members  // Q, A, B
                let (kr, r) = try child(b, members: [m[0], m[1]], removed: [m[2]], reason: "remove", signer: a)
                try b.addKeyring(kr, r, members: [m[0], m[1]])
                // B cannot open R, so it is behind R and may remove R's
                // signer (format.md §8.6); its writer lists R in answers.
                let (kx, x) = try child(
                    b, members: [m[0], m[2]], removed: [m[1]], reason: "remove", signer: bb, answers: [KeyringBuilder.id(ofBody: r)])
                let ix = try b.addKeyring(kx, x, trust: false)
                try b.commit([.entry(b.entry("after"))])
                return try b.vector(
                    "damaged",
                    comment:
                        "attack (third review, item 2): A removes the stolen B (R); B, behind R, signs X removing A. X and R defy each other (mutual), so both stood and A was removed too. X lists R in its signed answers, and R removed X's signer: rule 5.3 rejects X (keyring_unauthenticated); A stays a member",
                    issues: [("keyring_unauthenticated", b.offset(ix))])
            },
            {
                // Third review, item 8: more readers than a key change can wrap.
                let b = try VectorBuilder("attack-readers-exceed-slots", deviceSeed: phoneSeed)
                try b.commit([.entry(b.entry("before"))])
                let rootKey = b.ringKeys[b.rootID]!
                var many = b.members
                for n in 0..<255 {
                    let pair = try Ed25519.KeyPair(seed: SecureBytes(randomCount: 32, using: b.random))
                    many.append(KeyringMember(role: "device", publicKey: pair.publicKey, name: "Reader \(n)", added: b.now))
                }
                // A same-epoch keyring listing 256 devices, with slots for two members only.
                let body = try b.keyring(
                    rootKey, parents: [b.parent(b.rootID)], slots: try b.memberSlots(for: rootKey), members: many, reason: "enroll")
                let i = try b.addKeyring(rootKey, body, trust: false)
                try b.commit([.entry(b.entry("after"))])
                return try b.vector(
                    "damaged",
                    comment:
                        "attack (third review, item 8): a same-epoch keyring lists 256 device members (with 2 slots; 4,096 members were allowed). Every new epoch must wrap to each reader, and a keyring holds at most 256 slots, so no device could change the keys again. Now a keyring's device members, escrow recipients and passphrase slots number at most 255 together (rule 1): malformed_keyring",
                    issues: [("malformed_keyring", b.offset(i))])
            },
            {
                // Third review, item 5: the verdict the writer's removal relies on.
                let b = try VectorBuilder("attack-thief-replacement-vs-device-removal", deviceSeed: seedC, moreDeviceSeeds: [seedA, seedB])
                try b.commit([.entry(b.entry("before the theft"))])
                let a = try VectorBuilder.device(seedA)
                let thief = try VectorBuilder.device(seedB)
                let m = b.members  // Q, C, A, B
                // The thief's B replaces the recovery key with its own Q2 (Y).
                let q2 = try Ed25519.KeyPair(seed: SecureBytes(randomCount: 32, using: b.random))
                let q2Member = KeyringMember(role: "recovery", publicKey: q2.publicKey, name: "Recovery key", added: b.now)
                let yMembers = [q2Member, m[1], m[2], m[3]]
                let (ky, y) = try child(b, members: yMembers, removed: [m[0]], reason: "recovery", signer: thief)
                let iy = try b.addKeyring(ky, y, trust: false)
                // A removes B from before the replacement (R), as the writer does.
                let kept = [m[0], m[1], m[2]]
                let (kr, r) = try child(b, members: kept, removed: [m[3]], reason: "remove", signer: a)
                try b.addKeyring(kr, r, members: kept)
                // Q2 locks A and C out from a fork at Y (L2).
                let lMembers = [q2Member, m[3]]
                let (kl, l) = try child(
                    b, epoch: 3, members: lMembers, removed: [m[1], m[2]], reason: "lockdown", signer: q2,
                    parents: [KeyringBuilder.Parent(id: KeyringBuilder.id(ofBody: y), key: ky)])
                _ = try b.addKeyring(kl, l, trust: false)
                try b.commit([.entry(b.entry("after removing the thief"))])
                return try b.vector(
                    "damaged",
                    comment:
                        "attack (third review, item 5): the thief's device B replaces the recovery key with its own (Y); the user, code lost, removes B with device A. Built on Y, that removal was cut by the lockdown of A and C the thief's key signs on a fork at Y (L2, recovery-signed for it). The writer now builds it on the keyrings before the replacement (R): Y defies R and is cut, L2 with it. Opened by C, which cannot open L2 (not reported: not its to judge)",
                    issues: [("keyring_unauthenticated", b.offset(iy))], deviceSeed: seedC)
            },
            {
                // Fourth review, K1: format.md §8.4 scenario 9, then the
                // puppet of the removed D removes A, the remover.
                let (b, a, d, m, mainLine, ix, iy, (kr, r)) = try scenarioNineStart("attack-puppet-answers-later-removal")
                // Later, A removes D (Z2) while D enrols a device of its own
                // (W), and that device removes A (W2), answering Z2.
                let rParent = KeyringBuilder.Parent(id: KeyringBuilder.id(ofBody: r), key: kr)
                let zMembers = [m[0], m[1], m[3]]
                let (kz, z) = try child(b, epoch: 3, members: zMembers, removed: [m[4]], reason: "remove", signer: a, parents: [rParent])
                let tabletPair = try Ed25519.KeyPair(seed: SecureBytes(randomCount: 32, using: b.random))
                let tablet = KeyringMember(role: "device", publicKey: tabletPair.publicKey, name: "D's tablet", added: b.now)
                let (kw, w) = try child(b, epoch: 3, members: mainLine + [tablet], reason: "enroll", signer: d, parents: [rParent])
                let iw = try b.addKeyring(kw, w, trust: false)
                let w2Members = [m[0], m[3], m[4], tablet]
                let (kw2, w2) = try child(
                    b, epoch: 4, members: w2Members, removed: [m[1]], reason: "remove", signer: tabletPair,
                    parents: [KeyringBuilder.Parent(id: KeyringBuilder.id(ofBody: w), key: kw)], answers: [KeyringBuilder.id(ofBody: z)])
                let iw2 = try b.addKeyring(kw2, w2, trust: false)
                try b.addKeyring(kz, z, members: zMembers)
                try b.commit([.entry(b.entry("after removing D"))])
                return try b.vector(
                    "damaged",
                    comment:
                        "attack (fourth review, K1): scenario 9 (A removes the stolen B with R; B's puppet E removes A with Y on B's fork X; A removes D with Z2 while D enrols a tablet with W), then D's tablet removes A (W2, answering Z2). With two passes the whole line after R was silenced in the first by Y, so Z2 was not primary, W2 was behind nothing, and W2 cut Z2. Repeated until the primary removals are stable, Y is not primary, Z2 is, and W2 is behind Z2 and silenced: Z2 stands, W is cut and W2 with it (format.md §8.4 scenario 11)",
                    issues: [
                        ("keyring_unauthenticated", b.offset(ix)), ("keyring_unauthenticated", b.offset(iy)),
                        ("keyring_unauthenticated", b.offset(iw)),
                        ("keyring_unauthenticated", b.offset(iw2)),
                    ])
            },
            {
                // Fourth review, K1: format.md §8.4 scenario 10, then the
                // puppet of the removed D removes C, the remover.
                let b = try VectorBuilder(
                    "attack-puppet-answers-removal-after-mutual-join", deviceSeed: seedA, moreDeviceSeeds: [seedB, seedC, seedD])
                try b.commit([.entry(b.entry("before"))])
                let a = try VectorBuilder.device(seedA)
                let bb = try VectorBuilder.device(seedB)
                let c = try VectorBuilder.device(seedC)
                let d = try VectorBuilder.device(seedD)
                let m = b.members  // Q, A, B, C, D
                let (ka, ra) = try child(b, members: [m[0], m[1], m[3], m[4]], removed: [m[2]], reason: "remove", signer: a)
                let (kb, rb) = try child(b, members: [m[0], m[2], m[3], m[4]], removed: [m[1]], reason: "remove", signer: bb)
                let iab = try b.commit([.keyring(ka, ra), .keyring(kb, rb)], commitKey: VectorBuilder.writeKey(of: [ka, kb]))
                b.writeWith(ka)
                // C joins the two removals (keys.md §6.8).
                let joined = [m[0], m[3], m[4]]
                let (kj, j) = try child(
                    b, epoch: 3, members: joined, reason: "join", signer: c,
                    parents: [
                        KeyringBuilder.Parent(id: KeyringBuilder.id(ofBody: ra), key: ka),
                        KeyringBuilder.Parent(id: KeyringBuilder.id(ofBody: rb), key: kb),
                    ])
                try b.addKeyring(kj, j, members: joined)
                let jParent = KeyringBuilder.Parent(id: KeyringBuilder.id(ofBody: j), key: kj)
                // C removes D (Z) while D enrols a tablet (W), and the tablet
                // removes C (W2), answering Z.
                let zMembers = [m[0], m[3]]
                let (kz, z) = try child(b, epoch: 4, members: zMembers, removed: [m[4]], reason: "remove", signer: c, parents: [jParent])
                let tabletPair = try Ed25519.KeyPair(seed: SecureBytes(randomCount: 32, using: b.random))
                let tablet = KeyringMember(role: "device", publicKey: tabletPair.publicKey, name: "D's tablet", added: b.now)
                let (kw, w) = try child(b, epoch: 4, members: joined + [tablet], reason: "enroll", signer: d, parents: [jParent])
                let iw = try b.addKeyring(kw, w, trust: false)
                let w2Members = [m[0], m[4], tablet]
                let (kw2, w2) = try child(
                    b, epoch: 5, members: w2Members, removed: [m[3]], reason: "remove", signer: tabletPair,
                    parents: [KeyringBuilder.Parent(id: KeyringBuilder.id(ofBody: w), key: kw)], answers: [KeyringBuilder.id(ofBody: z)])
                let iw2 = try b.addKeyring(kw2, w2, trust: false)
                try b.addKeyring(kz, z, members: zMembers)
                try b.commit([.entry(b.entry("after removing D"))])
                return try b.vector(
                    "damaged",
                    comment:
                        "attack (fourth review, K1): scenario 10 (A and B remove each other, C joins them with J, C removes D with Z while D enrols a tablet with W), then D's tablet removes C (W2, answering Z). With two passes J descended from RB, which defied the uncontested RA in the first pass, so Z was not primary, W2 was behind nothing, and W2 cut Z. With the mutual exception in every pass Z is primary and W2 is behind it and silenced: Z stands, W is cut and W2 with it (format.md §8.4 scenario 11)",
                    issues: [
                        ("removal_mutual", b.offset(iab[0]!)), ("removal_mutual", b.offset(iab[1]!)),
                        ("keyring_unauthenticated", b.offset(iw)),
                        ("keyring_unauthenticated", b.offset(iw2)),
                    ])
            },
            {
                // Sixth review, R6-3: the cycle of format.md §8.4
                // "Termination" (scenario 12), with the removed device's
                // puppets. C signs Y1 and A then removes the stolen B (R0);
                // B forks from the root, enrols its puppet P (KB), P
                // removes C (R2), and B, removed, enrols a second puppet P2
                // (K3) and writes under K3's key.
                let b = try VectorBuilder("attack-removed-device-tie-puppet", deviceSeed: seedA, moreDeviceSeeds: [seedB, seedC, seedD])
                try b.commit([.entry(b.entry("before the theft"))])
                let a = try VectorBuilder.device(seedA)
                let thief = try VectorBuilder.device(seedB)
                let c = try VectorBuilder.device(seedC)
                let m = b.members  // Q, A, B, C, D
                let (ky, y1) = try child(b, members: m, reason: "rotate", signer: c)
                try b.addKeyring(ky, y1, members: m)
                let mainLine = [m[0], m[1], m[3], m[4]]
                let (kr, r0) = try child(
                    b, epoch: 3, members: mainLine, removed: [m[2]], reason: "remove", signer: a,
                    parents: [KeyringBuilder.Parent(id: KeyringBuilder.id(ofBody: y1), key: ky)])
                let ir0 = try b.addKeyring(kr, r0, members: mainLine)
                let puppet = try Ed25519.KeyPair(seed: SecureBytes(randomCount: 32, using: b.random))
                let withP = m + [KeyringMember(role: "device", publicKey: puppet.publicKey, name: "Tablet", added: b.now)]
                let (kb, kbBody) = try child(b, members: withP, reason: "enroll", signer: thief)
                // The thief's keyrings, in commits it attests (as B, removed).
                _ = try b.commit([.keyring(kb, kbBody)], attest: .sign(thief))
                let r2Members = withP.filter { $0.publicKey != m[3].publicKey }
                let (k2, r2) = try child(
                    b, epoch: 3, members: r2Members, removed: [m[3]], reason: "remove", signer: puppet,
                    parents: [KeyringBuilder.Parent(id: KeyringBuilder.id(ofBody: kbBody), key: kb)])
                let ir2 = try b.commit([.keyring(k2, r2)], attest: .sign(thief))[0]!
                let second = KeyringMember(
                    role: "device", publicKey: try Ed25519.KeyPair(seed: SecureBytes(randomCount: 32, using: b.random)).publicKey,
                    name: "Second tablet", added: b.now)
                let (k3, k3Body) = try child(
                    b, epoch: 4, members: r2Members + [second], reason: "enroll", signer: thief,
                    parents: [KeyringBuilder.Parent(id: KeyringBuilder.id(ofBody: r2), key: k2)])
                let ik3 = try b.commit([.keyring(k3, k3Body)], attest: .sign(thief))[0]!
                b.writeWith(kr)
                try b.commit([.entry(b.entry("after removing B"))], attest: .sign(a))
                b.writeWith(k3)
                let idx = try b.commit([.entry(b.entry("B under its second puppet's epoch"))], expectReleased: false, attest: .sign(thief))
                return try b.vector(
                    "damaged",
                    comment:
                        "attack (sixth review, R6-3): C signs Y1 and A then removes the stolen B (R0); B forks from the root, enrols its puppet P (KB), P removes C (R2), then B enrols a second puppet (K3) and writes under K3's key. R0 lies on C's branch and R2 on B's, neither mutual: the passes alternate (format.md §8.4 scenario 12). The last pass took both as primary, so both were silenced and cut nothing: K3 stood, the second puppet was a current member, and B's record was released. The last pass now treats the two removals as mutual: both stand (B and C removed) and both are reported (removal_tie), and R0 cuts K3, so B's record is under a key no reader holds. P, enrolled before R2, is B's puppet, removed with it (seventh review R7-2)",
                    issues: [
                        ("removal_tie", b.offset(ir0)), ("removal_tie", b.offset(ir2)), ("keyring_unauthenticated", b.offset(ik3)),
                        ("unknown_key", b.offset(idx[0]!)), ("commit_unverifiable", b.offset(idx[0]! + 1)),
                    ])
            },
            {
                // Seventh review, R7-1 (format.md §8.4 scenario 13): C signs
                // Y1 and A then removes the stolen B (R); B answers from an
                // old copy with one keyring, X, removing C.
                let b = try VectorBuilder(
                    "attack-removed-device-one-keyring-answer", deviceSeed: seedA, moreDeviceSeeds: [seedB, seedC, seedD])
                try b.commit([.entry(b.entry("before the theft"))])
                let a = try VectorBuilder.device(seedA)
                let thief = try VectorBuilder.device(seedB)
                let c = try VectorBuilder.device(seedC)
                let m = b.members  // Q, A, B, C, D
                let (ky, y1) = try child(b, members: m, reason: "rotate", signer: c)
                try b.addKeyring(ky, y1, members: m)
                let mainLine = [m[0], m[1], m[3], m[4]]
                let (kr, r) = try child(
                    b, epoch: 3, members: mainLine, removed: [m[2]], reason: "remove", signer: a,
                    parents: [KeyringBuilder.Parent(id: KeyringBuilder.id(ofBody: y1), key: ky)])
                let ir = try b.addKeyring(kr, r, members: mainLine)
                let (kx, x) = try child(
                    b, members: m.filter { $0.publicKey != m[3].publicKey }, removed: [m[3]], reason: "remove", signer: thief)
                let ix = try b.commit([.keyring(kx, x)], attest: .sign(thief))[0]!
                b.writeWith(kr)
                try b.commit([.entry(b.entry("after removing B"))], attest: .sign(a))
                return try b.vector(
                    "recovered",
                    comment:
                        "attack (seventh review, R7-1): C signs Y1 and A then removes the stolen B (R); B, from an old copy, answers with one keyring, X, removing C (format.md §8.4 scenario 13, scenario 5 mirrored). Only ancestors counted for behind: X lay on no branch against R, R lay on C's branch against X and was silenced, X cut Y1 and R went with it: B was a current member again and A's record after R was under a key no reader held. The keyring itself now counts: each removal lies on the other's removed member's branch, a tie; both stand (B and C removed), both are reported (removal_tie), and A's record is released",
                    issues: [("removal_tie", b.offset(ir)), ("removal_tie", b.offset(ix))])
            },
            {
                // Seventh review, R7-2: the tie of scenario 12; the puppet P,
                // which B enrolled on its fork before its answer, enrols a
                // key of its own after the tie (K4) and writes under it.
                let b = try VectorBuilder("attack-tie-shelters-puppet", deviceSeed: seedA, moreDeviceSeeds: [seedB, seedC, seedD])
                try b.commit([.entry(b.entry("before the theft"))])
                let a = try VectorBuilder.device(seedA)
                let thief = try VectorBuilder.device(seedB)
                let c = try VectorBuilder.device(seedC)
                let m = b.members  // Q, A, B, C, D
                let (ky, y1) = try child(b, members: m, reason: "rotate", signer: c)
                try b.addKeyring(ky, y1, members: m)
                let mainLine = [m[0], m[1], m[3], m[4]]
                let (kr, r0) = try child(
                    b, epoch: 3, members: mainLine, removed: [m[2]], reason: "remove", signer: a,
                    parents: [KeyringBuilder.Parent(id: KeyringBuilder.id(ofBody: y1), key: ky)])
                let ir0 = try b.addKeyring(kr, r0, members: mainLine)
                let puppet = try Ed25519.KeyPair(seed: SecureBytes(randomCount: 32, using: b.random))
                let withP = m + [KeyringMember(role: "device", publicKey: puppet.publicKey, name: "Tablet", added: b.now)]
                let (kb, kbBody) = try child(b, members: withP, reason: "enroll", signer: thief)
                _ = try b.commit([.keyring(kb, kbBody)], attest: .sign(thief))
                let r2Members = withP.filter { $0.publicKey != m[3].publicKey }
                let (k2, r2) = try child(
                    b, epoch: 3, members: r2Members, removed: [m[3]], reason: "remove", signer: puppet,
                    parents: [KeyringBuilder.Parent(id: KeyringBuilder.id(ofBody: kbBody), key: kb)])
                let ir2 = try b.commit([.keyring(k2, r2)], attest: .sign(thief))[0]!
                let third = KeyringMember(
                    role: "device", publicKey: try Ed25519.KeyPair(seed: SecureBytes(randomCount: 32, using: b.random)).publicKey,
                    name: "Phone", added: b.now)
                let (k4, k4Body) = try child(
                    b, epoch: 4, members: r2Members + [third], reason: "enroll", signer: puppet,
                    parents: [KeyringBuilder.Parent(id: KeyringBuilder.id(ofBody: r2), key: k2)])
                let ik4 = try b.commit([.keyring(k4, k4Body)], attest: .sign(puppet))[0]!
                b.writeWith(kr)
                try b.commit([.entry(b.entry("after removing B"))], attest: .sign(a))
                b.writeWith(k4)
                let idx = try b.commit([.entry(b.entry("the puppet under its own key"))], expectReleased: false, attest: .sign(puppet))
                return try b.vector(
                    "damaged",
                    comment:
                        "attack (seventh review, R7-2): the tie of format.md §8.4 scenario 12 (C signs Y1, A removes the stolen B with R0; B enrols its puppet P on a fork, KB, and P removes C, R2); then P enrols a key of its own (K4) and writes under K4's key. P, enrolled before the answer, stayed a current member, so K4 stood and P's record was released. A removal now removes its removed member's puppets (keys it enrolled where the removal did not see them): R0 removes P, K4 defies R0 and is cut, and P's record is under a key no reader holds",
                    issues: [
                        ("removal_tie", b.offset(ir0)), ("removal_tie", b.offset(ir2)), ("keyring_unauthenticated", b.offset(ik4)),
                        ("unknown_key", b.offset(idx[0]!)), ("commit_unverifiable", b.offset(idx[0]! + 1)),
                    ])
            },
            {
                // Eighth review, R8-1 (a) (format.md §8.4 scenario 14): C
                // enrols D (EN); A removes the stolen B (R); B, from an old
                // copy, enrols D's public key on a fork (X); D rotates (K2).
                let b = try VectorBuilder(
                    "attack-removed-device-enrols-honest-device", deviceSeed: seedA, moreDeviceSeeds: [seedB, seedC])
                try b.commit([.entry(b.entry("before the theft"))])
                let a = try VectorBuilder.device(seedA)
                let thief = try VectorBuilder.device(seedB)
                let c = try VectorBuilder.device(seedC)
                let d = try VectorBuilder.device(seedD)
                let rootKey = b.ringKeys[b.rootID]!
                let m = b.members  // Q, A, B, C
                let withD = m + [KeyringMember(role: "device", publicKey: d.publicKey, name: "Sam's tablet", added: b.now)]
                let en = try b.keyring(
                    rootKey, parents: [b.parent(b.rootID)], slots: try b.memberSlots(for: rootKey, members: withD), members: withD,
                    signer: c, reason: "enroll")
                try b.addKeyring(rootKey, en, members: withD)
                let mainLine = withD.filter { $0.publicKey != m[2].publicKey }
                let (kr, r) = try child(
                    b, members: mainLine, removed: [m[2]], reason: "remove", signer: a,
                    parents: [KeyringBuilder.Parent(id: KeyringBuilder.id(ofBody: en), key: rootKey)])
                try b.addKeyring(kr, r, members: mainLine)
                try b.commit([.entry(b.entry("after removing B"))], attest: .sign(a))
                let x = try b.keyring(
                    rootKey, parents: [b.parent(b.rootID)], slots: try b.memberSlots(for: rootKey, members: withD), members: withD,
                    signer: thief, reason: "enroll")
                let ix = try b.commit([.keyring(rootKey, x)], attest: .sign(thief))[0]!
                let (k2, k2Body) = try child(
                    b, epoch: 3, members: mainLine, reason: "rotate", signer: d,
                    parents: [KeyringBuilder.Parent(id: KeyringBuilder.id(ofBody: r), key: kr)])
                try b.addKeyring(k2, k2Body, members: mainLine)
                try b.commit([.entry(b.entry("after D's rotation"))], attest: .sign(d))
                return try b.vector(
                    "damaged",
                    comment:
                        "attack (eighth review, R8-1 (a)): C enrols D (EN); A removes the stolen B (R, after EN); B, from an old copy, forks from the root and enrols D's public key (X) — enrolling needs only a public key. A removal's puppets were every key enrolled by a keyring its removed member signed outside its ancestors, so D became B's puppet: out of the key state, and D's rotation (K2) cut with every record after it, with no warning. A key the removal saw (listed by R, an ancestor, or a clean descendant) is now never its puppet: only X is cut (format.md §8.4 scenario 14)",
                    issues: [("keyring_unauthenticated", b.offset(ix))], deviceSeed: seedA)
            },
            {
                // Eighth review, R8-1 (d) (format.md §8.4 scenario 14): the
                // vault's first device B enrols A and C (EN); B is stolen; A
                // and C both remove it, concurrently (R1, R2); B, from an
                // old copy, enrols A and C on a fork from the root (X).
                let b = try VectorBuilder("attack-removed-device-enrols-both-removers", deviceSeed: seedB)
                try b.commit([.entry(b.entry("before the theft"))])
                let a = try VectorBuilder.device(seedA)
                let thief = try VectorBuilder.device(seedB)
                let c = try VectorBuilder.device(seedC)
                let rootKey = b.ringKeys[b.rootID]!
                let m = b.members  // Q, B
                let all =
                    m + [
                        KeyringMember(role: "device", publicKey: a.publicKey, name: "Sam's laptop", added: b.now),
                        KeyringMember(role: "device", publicKey: c.publicKey, name: "Sam's tablet", added: b.now),
                    ]
                let en = try b.keyring(
                    rootKey, parents: [b.parent(b.rootID)], slots: try b.memberSlots(for: rootKey, members: all), members: all,
                    signer: thief, reason: "enroll")
                try b.addKeyring(rootKey, en, members: all)
                try b.commit([.entry(b.entry("three devices"))], attest: .sign(thief))
                let kept = all.filter { $0.publicKey != thief.publicKey }
                let enParent = KeyringBuilder.Parent(id: KeyringBuilder.id(ofBody: en), key: rootKey)
                let (k1, r1) = try child(b, members: kept, removed: [m[1]], reason: "remove", signer: a, parents: [enParent])
                try b.addKeyring(k1, r1, members: kept)
                try b.commit([.entry(b.entry("A removed B"))], attest: .sign(a))
                let (k2, r2) = try child(b, members: kept, removed: [m[1]], reason: "remove", signer: c, parents: [enParent])
                try b.addKeyring(k2, r2, members: kept)
                try b.commit([.entry(b.entry("C removed B too"))], attest: .sign(c))
                let x = try b.keyring(
                    rootKey, parents: [b.parent(b.rootID)], slots: try b.memberSlots(for: rootKey, members: all), members: all,
                    signer: thief, reason: "enroll")
                let ix = try b.commit([.keyring(rootKey, x)], attest: .sign(thief))[0]!
                return try b.vector(
                    "damaged",
                    comment:
                        "attack (eighth review, R8-1 (d)): the vault's first device B enrols A and C (EN); B is stolen, and A and C both remove it before they sync (R1, R2, concurrent); B, from an old copy, forks from the root and enrols A's and C's public keys (X). A and C were puppets of each other's removal, so R1 and R2 were both cut, with no warning: the trusted heads were EN and B a current member again, holding the write key. A key the removal saw (listed by R, an ancestor, or a clean descendant) is now never its puppet: both removals stand and only X is cut (format.md §8.4 scenario 14)",
                    issues: [("keyring_unauthenticated", b.offset(ix))], deviceSeed: seedA)
            },
            {
                // Ninth review, R9-1 (format.md §8.4 scenario 15): A removes
                // the stolen B (R); B, from an old copy, enrols P1 (X1) and
                // P2 (X2) on forks from the root, P1 enrols P2 (X3), P2
                // enrols P1 (X4), and B answers, removing A (X, a join of X3
                // and X4). C joins R and X listing P1 and P2 (J, the key
                // state before the fix), and P1 rotates (K) and writes.
                let b = try VectorBuilder(
                    "attack-removed-device-puppets-enrol-each-other", deviceSeed: seedA, moreDeviceSeeds: [seedB, seedC])
                try b.commit([.entry(b.entry("before the theft"))])
                let a = try VectorBuilder.device(seedA)
                let thief = try VectorBuilder.device(seedB)
                let c = try VectorBuilder.device(seedC)
                let rootKey = b.ringKeys[b.rootID]!
                let m = b.members  // Q, A, B, C
                let mainLine = m.filter { $0.publicKey != thief.publicKey }
                let (kr, r) = try child(b, members: mainLine, removed: [m[2]], reason: "remove", signer: a)
                let ir = try b.addKeyring(kr, r, members: mainLine)
                try b.commit([.entry(b.entry("after removing B"))], attest: .sign(a))
                let p1 = try Ed25519.KeyPair(seed: SecureBytes(randomCount: 32, using: b.random))
                let p2 = try Ed25519.KeyPair(seed: SecureBytes(randomCount: 32, using: b.random))
                let mp1 = KeyringMember(role: "device", publicKey: p1.publicKey, name: "Tablet", added: b.now)
                let mp2 = KeyringMember(role: "device", publicKey: p2.publicKey, name: "Phone", added: b.now)
                func fork(_ members: [KeyringMember], after parent: KeyringBuilder.Parent, signer: Ed25519.KeyPair) throws
                    -> KeyringBuilder.Parent
                {
                    let body = try b.keyring(
                        rootKey, parents: [parent],
                        slots: try b.memberSlots(for: rootKey, members: members), members: members, signer: signer, reason: "enroll")
                    _ = try b.commit([.keyring(rootKey, body)], attest: .sign(thief))
                    return KeyringBuilder.Parent(id: KeyringBuilder.id(ofBody: body), key: rootKey)
                }
                let x1 = try fork(m + [mp1], after: b.parent(b.rootID), signer: thief)
                let x2 = try fork(m + [mp2], after: b.parent(b.rootID), signer: thief)
                let both = m + [mp1, mp2]
                let x3 = try fork(both, after: x1, signer: p1)
                let x4 = try fork(both, after: x2, signer: p2)
                let answer = both.filter { $0.publicKey != a.publicKey }
                let (kx, x) = try child(b, members: answer, removed: [m[1]], reason: "remove", signer: thief, parents: [x3, x4])
                let ix = try b.commit([.keyring(kx, x)], attest: .sign(thief))[0]!
                let joined = [m[0], m[3], mp1, mp2]
                let (kj, j) = try child(
                    b, epoch: 3, members: joined, reason: "rotate", signer: c,
                    parents: [
                        KeyringBuilder.Parent(id: KeyringBuilder.id(ofBody: r), key: kr),
                        KeyringBuilder.Parent(id: KeyringBuilder.id(ofBody: x), key: kx),
                    ])
                try b.addKeyring(kj, j, members: joined)
                try b.commit([.entry(b.entry("after C's join"))], attest: .sign(c))
                let (kk, k) = try child(
                    b, epoch: 4, members: joined, reason: "rotate", signer: p1,
                    parents: [KeyringBuilder.Parent(id: KeyringBuilder.id(ofBody: j), key: kj)])
                let ik = try b.commit([.keyring(kk, k)], attest: .sign(p1))[0]!
                b.writeWith(kk)
                let idx = try b.commit([.entry(b.entry("the puppet under its own key"))], expectReleased: false, attest: .sign(p1))
                return try b.vector(
                    "damaged",
                    comment:
                        "attack (ninth review, R9-1): A removes the stolen B (R); B, from an old copy, enrols P1 (X1) and P2 (X2) on forks from the root, P1 enrols P2 (X3) and P2 enrols P1 (X4), and B answers, removing A (X, a join of X3 and X4); C joins R and X listing P1 and P2 (J) and P1 rotates (K) and writes under K's key. The puppets were the smallest set of keys whose every enrolment outside R's ancestors a removed key or a puppet signed: X4 kept P1 out until P2 was in, and X3 the reverse, so neither was a puppet: both stayed current members, K stood and P1's record was released. A key is now a puppet unless a key R keeps vouches for it: P1 and P2 are removed, K is cut, and P1's record is under a key no reader holds (format.md §8.4 scenario 15)",
                    issues: [
                        ("removal_mutual", b.offset(ir)), ("removal_mutual", b.offset(ix)), ("keyring_unauthenticated", b.offset(ik)),
                        ("unknown_key", b.offset(idx[0]!)), ("commit_unverifiable", b.offset(idx[0]! + 1)),
                    ],
                    deviceSeed: seedC)
            },
            {
                let b = try VectorBuilder("attack-attachment-size")
                let small = b.random.bytes(66_000)
                let large = b.random.bytes(67_500)
                try b.commit([.blob(small, mediaType: "image/jpeg")])
                try b.commit([.blob(large, mediaType: "image/jpeg")])
                return try b.vector(
                    "success",
                    comment:
                        "attack: an observer reads attachment sizes from chunk lengths. Format 1 padded only the final chunk, so a 10 MB photo's size showed to within 2 KiB. Now the whole stream is padded to Padmé(N + 1): 66,000 and 67,500 bytes both become a 67,584-byte stream, a full chunk and a final chunk of 2,048 bytes, frame for frame the same lengths"
                )
            },
            {
                let b = try VectorBuilder("attack-escrow-free-unknown-slot", escrowFree: true, deviceSeed: phoneSeed)
                try b.commit([.entry(b.entry("escrow-free"))])
                let phone = try VectorBuilder.device(phoneSeed)
                let future = StoredSlot(
                    slot: .unknown(
                        kind: "escrow-v9", fields: CBORMap(text: [("box", .bytes(b.random.bytes(100))), ("kind", .text("escrow-v9"))])))
                let (k2, body) = try child(b, extraSlots: [future], escrowFree: true, signer: phone)
                let i = try b.addKeyring(k2, body, trust: false)
                return try b.vector(
                    "damaged",
                    comment:
                        "attack: a member of an escrow-free vault wraps the key in a slot of a kind readers do not know (an escrow in disguise). Format 1 skipped unknown kinds. Now an escrow-free keyring may hold a slot of a kind the reader does not know only when its required lists the kind and the slot names a device or recovery member in member (format.md §8.4 rule 2, tenth review R10-4); this one does neither: escrow_forbidden from its public part",
                    issues: [("escrow_forbidden", b.offset(i))])
            },
            {
                // Tenth review R10-4: the allowed form, with a member of
                // another key type, which rule 2 does not count among the
                // device slots.
                let b = try VectorBuilder("success-escrow-free-unknown-slot-of-member", escrowFree: true, deviceSeed: phoneSeed)
                try b.commit([.entry(b.entry("escrow-free, epoch 1"))])
                let phone = try VectorBuilder.device(phoneSeed)
                let kind = "hybrid-x25519-ml-kem"
                let tablet = KeyringMember(
                    role: "device", publicKey: b.random.bytes(32), keyType: "hybrid-ed25519-ml-dsa", name: "Tablet", added: b.now)
                let k2 = try b.freshKey(2)
                // Thirteenth review R13-2: `member` is the member's tag under
                // the epoch key, not its key.
                let tag = k2.slotMemberTag(vaultID: b.vaultID, memberKey: tablet.publicKey, kind: kind)
                let future = StoredSlot(
                    slot: .unknown(
                        kind: kind,
                        fields: CBORMap(text: [
                            ("box", .bytes(b.random.bytes(1200))), ("kind", .text(kind)), ("member", .bytes(tag)),
                        ])))
                let body = try b.keyring(
                    k2, parents: [b.parent(b.rootID)], slots: try b.memberSlots(for: k2) + [future], members: b.members + [tablet],
                    signer: phone, escrowFree: true, requiredSlotKinds: [kind])
                _ = try b.addKeyring(k2, body, members: b.members + [tablet])
                try b.commit([.entry(b.entry("escrow-free, epoch 2, with a post-quantum slot"))])
                return try b.vector(
                    "success",
                    comment:
                        "tenth review R10-4: an escrow-free keyring lists a hybrid post-quantum slot kind in required and holds one slot of it whose member field names a member of role device and key type hybrid-ed25519-ml-dsa (a tablet of a later version) by its tag under the epoch key, MAC256(K, quire-slot-member-v3 || vault id || key || kind) (thirteenth review R13-2: not the key itself, which the public part would show; fourteenth review R14-4: over the slot's kind). Readers that do not know the kind check from the public part that it is required and carries a 32-byte member, and once opened that it is the tag of a device or recovery member (one slot per member and kind); the device slots number the members of role device and key type ed25519 only (the phone), so the tablet needs none. Before, any unknown kind made an escrow-free keyring escrow_forbidden, and the device slots were counted by role"
                )
            },
            {
                // Fourteenth review R14-4: one member's slots of two unknown
                // kinds carry two tags, since the tag covers the kind.
                let b = try VectorBuilder("success-escrow-free-unknown-slots-of-two-kinds", escrowFree: true, deviceSeed: phoneSeed)
                try b.commit([.entry(b.entry("escrow-free, epoch 1"))])
                let phone = try VectorBuilder.device(phoneSeed)
                let kinds = ["hybrid-x25519-ml-kem", "hybrid-x25519-hqc"]
                let tablet = KeyringMember(
                    role: "device", publicKey: b.random.bytes(32), keyType: "hybrid-ed25519-ml-dsa", name: "Tablet", added: b.now)
                let k2 = try b.freshKey(2)
                let future = kinds.map { kind in
                    StoredSlot(
                        slot: .unknown(
                            kind: kind,
                            fields: CBORMap(text: [
                                ("box", .bytes(b.random.bytes(1200))), ("kind", .text(kind)),
                                ("member", .bytes(k2.slotMemberTag(vaultID: b.vaultID, memberKey: tablet.publicKey, kind: kind))),
                            ])))
                }
                let body = try b.keyring(
                    k2, parents: [b.parent(b.rootID)], slots: try b.memberSlots(for: k2) + future, members: b.members + [tablet],
                    signer: phone, escrowFree: true, requiredSlotKinds: kinds)
                _ = try b.addKeyring(k2, body, members: b.members + [tablet])
                try b.commit([.entry(b.entry("escrow-free, epoch 2, with two post-quantum slots of one member"))])
                return try b.vector(
                    "success",
                    comment:
                        "fourteenth review R14-4: an escrow-free keyring requires two hybrid slot kinds and holds one slot of each for the same member (the tablet, key type hybrid-ed25519-ml-dsa). The member tag covers the slot's kind, MAC256(K, quire-slot-member-v3 || vault id || key || kind), so the two slots carry two unrelated tags and the public part does not show that they belong to one member (with the tag of quire-slot-member-v2, over vault id || key only, they carried the same tag). Once opened, rule 2 finds each slot's tag among the device and recovery members' tags for that slot's kind"
                )
            },
            {
                // R14-4: a tag computed for another kind names no member.
                let b = try VectorBuilder("attack-escrow-free-slot-member-tag-of-another-kind", escrowFree: true, deviceSeed: phoneSeed)
                try b.commit([.entry(b.entry("escrow-free, epoch 1"))])
                let phone = try VectorBuilder.device(phoneSeed)
                let kinds = ["hybrid-x25519-ml-kem", "hybrid-x25519-hqc"]
                let tablet = KeyringMember(
                    role: "device", publicKey: b.random.bytes(32), keyType: "hybrid-ed25519-ml-dsa", name: "Tablet", added: b.now)
                let k2 = try b.freshKey(2)
                let tag = k2.slotMemberTag(vaultID: b.vaultID, memberKey: tablet.publicKey, kind: kinds[0])
                let future = kinds.map { kind in
                    StoredSlot(
                        slot: .unknown(
                            kind: kind,
                            fields: CBORMap(text: [("box", .bytes(b.random.bytes(1200))), ("kind", .text(kind)), ("member", .bytes(tag))])))
                }
                let body = try b.keyring(
                    k2, parents: [b.parent(b.rootID)], slots: try b.memberSlots(for: k2) + future, members: b.members + [tablet],
                    signer: phone, escrowFree: true, requiredSlotKinds: kinds)
                let i = try b.addKeyring(k2, body, trust: false, members: b.members + [tablet])
                return try b.vector(
                    "damaged",
                    comment:
                        "attack (fourteenth review R14-4): the same as success-escrow-free-unknown-slots-of-two-kinds, except that the slot of kind hybrid-x25519-hqc carries the tablet's tag for hybrid-x25519-ml-kem, the same tag as the other slot, as the tag over vault id || key only made it. The tag covers the slot's kind (format.md §5.1, §8.4 rule 2), so it is the tag of no member for this kind: escrow_forbidden once opened",
                    issues: [("escrow_forbidden", b.offset(i))])
            },
            {
                // Thirteenth review R13-2: the layout before, `member` the
                // member's raw key in the public part.
                let b = try VectorBuilder("attack-escrow-free-slot-member-is-a-public-key", escrowFree: true, deviceSeed: phoneSeed)
                try b.commit([.entry(b.entry("escrow-free"))])
                let phone = try VectorBuilder.device(phoneSeed)
                let kind = "hybrid-x25519-ml-kem"
                let future = StoredSlot(
                    slot: .unknown(
                        kind: kind,
                        fields: CBORMap(text: [
                            ("box", .bytes(b.random.bytes(1200))), ("kind", .text(kind)), ("member", .bytes(phone.publicKey)),
                        ])))
                let (k2, body) = try child(b, extraSlots: [future], escrowFree: true, signer: phone, required: [kind])
                let i = try b.addKeyring(k2, body, trust: false)
                return try b.vector(
                    "damaged",
                    comment:
                        "attack (thirteenth review R13-2): an escrow-free keyring holds a slot of a required kind readers do not know whose member is the raw public key of the phone, a device member, as the layout before the fix wrote it. The public part is public, and a device code carries the device's key, so anyone holding one could find the device's slot and learn that it belongs to the vault. member is now MAC256(K, quire-slot-member-v3 || vault id || key || kind) under the keyring's epoch key (format.md §5.1, §8.4 rule 2); a raw key is the tag of no member: escrow_forbidden once opened (before: trusted)",
                    issues: [("escrow_forbidden", b.offset(i))])
            },
            {
                let b = try VectorBuilder("attack-escrow-free-unknown-slot-not-a-member", escrowFree: true, deviceSeed: phoneSeed)
                try b.commit([.entry(b.entry("escrow-free"))])
                let phone = try VectorBuilder.device(phoneSeed)
                let kind = "hybrid-x25519-ml-kem"
                let future = StoredSlot(
                    slot: .unknown(
                        kind: kind,
                        fields: CBORMap(text: [
                            ("box", .bytes(b.random.bytes(1200))), ("kind", .text(kind)), ("member", .bytes(b.random.bytes(32))),
                        ])))
                let (k2, body) = try child(b, extraSlots: [future], escrowFree: true, signer: phone, required: [kind])
                let i = try b.addKeyring(k2, body, trust: false)
                return try b.vector(
                    "damaged",
                    comment:
                        "attack (tenth review R10-4): a member of an escrow-free vault wraps the key in a slot of a required kind readers do not know, and carries in member 32 bytes that are the tag of no member (a custodian's key). The public check passes (required, 32-byte member); once opened, rule 2 finds no device or recovery member with that tag: escrow_forbidden",
                    issues: [("escrow_forbidden", b.offset(i))])
            },
            {
                // Tenth review R10-4: critical, the must-understand marker.
                let critical = CBORMap(text: [("critical", .array([.text("x-retention-policy")]))])
                let b = try VectorBuilder("success-keyring-critical-extension", deviceSeed: phoneSeed, unknownPublicFields: critical)
                try b.commit([.entry(b.entry("epoch 1"))])
                let k2 = try b.freshKey(2)
                let body = try b.keyring(
                    k2, parents: [b.parent(b.rootID)], slots: try b.memberSlots(for: k2), members: b.members,
                    signer: try VectorBuilder.device(phoneSeed), unknownPublicFields: critical)
                _ = try b.addKeyring(k2, body)
                try b.commit([.entry(b.entry("epoch 2"))])
                return try b.vector(
                    "success",
                    comment:
                        "tenth review R10-4: the root lists the extension name x-retention-policy in critical (format.md §8.2) and its child carries it forward (rule 5.6). Readers need not understand it; a writer that does not must refuse to sign any keyring of the vault"
                )
            },
            {
                let critical = CBORMap(text: [("critical", .array([.text("x-retention-policy")]))])
                let b = try VectorBuilder("attack-critical-extension-dropped", deviceSeed: phoneSeed, unknownPublicFields: critical)
                try b.commit([.entry(b.entry("epoch 1"))])
                let (k2, body) = try child(b, signer: try VectorBuilder.device(phoneSeed))
                let i = try b.addKeyring(k2, body, trust: false)
                return try b.vector(
                    "damaged",
                    comment:
                        "attack (tenth review R10-4): the root lists x-retention-policy in critical; a member's writer that does not understand it signs a new epoch without it, silently dropping the policy. Rule 5.6: critical ⊇ every parent's critical, or the keyring is not trusted",
                    issues: [("keyring_unauthenticated", b.offset(i))])
            },
            thiefBlocksRemoval(
                "attack-thief-critical-name-blocks-removal", critical: ["x-anything"],
                comment:
                    "twelfth review R12-1: the phone, stolen and still a member, signs a same-epoch keyring listing the made-up name x-anything in critical (format.md §8.2). Every writer that does not understand it refused to sign any keyring, the recovery key's lockdown included, and no version will ever understand a made-up name, so the thief could never be removed. Now the recovery key's keyring is exempt from the refusal and from rule 5.6: its removal of the phone, which drops the name, is trusted and the phone is removed; the phone's own epoch-2 keyring dropping the name is still keyring_unauthenticated (rule 5.6)"
            ),
            thiefBlocksRemoval(
                "attack-thief-required-kind-blocks-removal", required: ["x-made-up"],
                comment:
                    "twelfth review R12-1: the phone, stolen and still a member, signs a same-epoch keyring listing the made-up slot kind x-made-up in required (format.md §8.2). Every writer that does not know the kind refused every new-epoch keyring, so no removal could be written, the recovery key's lockdown included. Now the recovery key's keyring is exempt from the refusal and from rule 5.6: its removal of the phone, which drops the kind, is trusted and the phone is removed; the phone's own epoch-2 keyring dropping the kind is still keyring_unauthenticated (rule 5.6)"
            ),
            {
                let b = try VectorBuilder("attack-escrow-free-extra-device-slot", escrowFree: true, deviceSeed: phoneSeed)
                try b.commit([.entry(b.entry("escrow-free"))])
                let phone = try VectorBuilder.device(phoneSeed)
                let custodian = try VectorBuilder.device([UInt8](repeating: 0x57, count: 32))
                let extra = StoredSlot(
                    slot: try SlotCrypto.deviceSlot(
                        for: try b.freshKey(2), devicePublicKey: custodian.publicKey, vaultID: b.vaultID, random: b.random))
                let k2 = try b.freshKey(2)
                let slots =
                    try b.memberSlots(for: k2) + [
                        StoredSlot(
                            slot: try SlotCrypto.deviceSlot(
                                for: k2, devicePublicKey: custodian.publicKey, vaultID: b.vaultID, random: b.random))
                    ]
                _ = extra
                let body = try b.keyring(
                    k2, parents: [b.parent(b.rootID)], slots: slots, members: b.members, signer: phone, escrowFree: true)
                let i = try b.addKeyring(k2, body, trust: false)
                return try b.vector(
                    "damaged",
                    comment:
                        "attack: a member of an escrow-free vault adds a device slot for a custodian who is not a listed member. Format 1 did not count device slots. Now an escrow-free keyring's device slots number exactly its device members: escrow_forbidden",
                    issues: [("escrow_forbidden", b.offset(i))])
            },
            recoveryReplaced("attack-recovery-key-replaced", .oldCode),
            recoveryReplaced("attack-recovery-key-replaced-old-code-signs", .oldCodeSigns),
            recoveryReplaced("success-recovery-key-replaced", .newCode),
            {
                let b = try passphraseBuilder(1, Limits.maxArgon2MemLimitBytes * 2)("attack-passphrase-cost")
                return try b.vector(
                    "error",
                    comment:
                        "attack: a slot asks Argon2id for 512 MiB, which a phone cannot give. Format 1 allowed up to 1 GiB. Now readers run Argon2id only up to 256 MiB and 8 passes (writers use at least 64 MiB and 2 passes): kdf_limits_exceeded before any work",
                    error: "kdf_limits_exceeded", passphrase: "hunter2")
            },
            {
                let b = try VectorBuilder(
                    "recovered-passphrase-slot-over-cap",
                    extraSlots: { key, id, r in
                        var p = Array("hunter2".utf8)
                        return [
                            StoredSlot(
                                slot: try SlotCrypto.passphraseSlot(
                                    for: key, passphrase: SecureBytes(consuming: &p), opsLimit: 1, memLimitBytes: 8192, vaultID: id,
                                    random: r))
                        ]
                    })
                try b.commit([.entry(b.entry("epoch 1"))])
                let root = try KeyringRecord(body: b.frame(0).plaintextBody!, location: nil)
                let k2 = try b.freshKey(2)
                let overCap = StoredSlot(
                    slot: .passphrase(
                        salt: b.random.bytes(16), opsLimit: 3, memLimitBytes: 1 << 30, publicKey: b.random.bytes(32),
                        box: b.random.bytes(KeySlot.boxByteCount)))
                let good = StoredSlot(
                    slot: try SlotCrypto.passphraseSlot(
                        for: k2, rewrapping: root.publicPart.slots.last!, vaultID: b.vaultID, random: b.random))
                let body = try b.keyring(
                    k2, parents: [b.parent(b.rootID)], slots: try b.memberSlots(for: k2) + [overCap, good], members: b.members)
                let i = try b.addKeyring(k2, body)
                try b.commit([.entry(b.entry("epoch 2"))])
                return try b.vector(
                    "recovered",
                    comment:
                        "a keyring holds a passphrase slot over the reader bounds (1 GiB) before the real one: that slot is refused for its cost, a warning at the keyring, and the passphrase opens the next slot; nothing is lost",
                    issues: [("kdf_limits_exceeded", b.offset(i))], passphrase: "hunter2")
            },
            {
                // The over-cost slot is in the root, and the passphrase's slot
                // in its child. The bootstrap goes in file order (Spec/format.md
                // §8.5 step 2), so the root's slots are tried first and the
                // over-cost one is refused, a warning at the root; the child's
                // slot then opens and its parentKeys reach the root's key.
                let overCap: (EpochKey, VaultID, SeededRandom) throws -> [StoredSlot] = { _, _, r in
                    [
                        StoredSlot(
                            slot: .passphrase(
                                salt: r.bytes(16), opsLimit: 3, memLimitBytes: 1 << 30, publicKey: r.bytes(32),
                                box: r.bytes(KeySlot.boxByteCount)))
                    ]
                }
                let b = try VectorBuilder("recovered-over-cap-root-slot-tried-first", extraSlots: overCap)
                try b.commit([.entry(b.entry("epoch 1"))])
                let k2 = try b.freshKey(2)
                var p = Array("hunter2".utf8)
                let good = StoredSlot(
                    slot: try SlotCrypto.passphraseSlot(
                        for: k2, passphrase: SecureBytes(consuming: &p), opsLimit: 1, memLimitBytes: 8192, vaultID: b.vaultID,
                        random: b.random))
                let body = try b.keyring(k2, parents: [b.parent(b.rootID)], slots: try b.memberSlots(for: k2) + [good], members: b.members)
                _ = try b.addKeyring(k2, body)
                try b.commit([.entry(b.entry("epoch 2"))])
                return try b.vector(
                    "recovered",
                    comment:
                        "the root holds a passphrase slot over the reader bounds (1 GiB), and its child the passphrase's slot. The bootstrap goes in file order (format.md §8.5 step 2), so the root's slots are tried first: the over-cap slot is refused and reported as a warning; the child is linked under nothing yet, so the bootstrap goes on to it, its slot opens and its parentKeys reach the root's key; both epochs are read (before the gate, newest first: the child first, the root skipped, nothing reported)",
                    issues: [("kdf_limits_exceeded", b.offset(0))], passphrase: "hunter2")
            },
            {
                let b = try VectorBuilder(
                    "attack-required-kind-dropped", requiredSlotKinds: ["hybrid-x25519-ml-kem"],
                    extraSlots: { _, _, r in
                        [
                            StoredSlot(
                                slot: .unknown(
                                    kind: "hybrid-x25519-ml-kem",
                                    fields: CBORMap(text: [("box", .bytes(r.bytes(1200))), ("kind", .text("hybrid-x25519-ml-kem"))])))
                        ]
                    }, deviceSeed: phoneSeed)
                try b.commit([.entry(b.entry("protected by a post-quantum slot"))])
                let phone = try VectorBuilder.device(phoneSeed)
                let (k2, body) = try child(b, signer: phone)
                let i = try b.addKeyring(k2, body, trust: false)
                return try b.vector(
                    "damaged",
                    comment:
                        "attack: the root requires a hybrid post-quantum slot kind (carried under the signature); a member's writer that does not know it makes a new epoch without it, silently downgrading the vault. Format 1 had no such field. Now required ⊇ every parent's required, or the keyring is not trusted",
                    issues: [("keyring_unauthenticated", b.offset(i))])
            },
            chunkCopyAtTheSameStanding(
                "attack-altered-chunk-copy",
                // A copy of chunk 0 with one body byte changed.
                copy: { chunk, bytes in
                    var copy = Array(bytes[Int(chunk.location.offset)..<Int(chunk.end)])
                    copy[Int(chunk.bodyOffset - chunk.location.offset) + 100] ^= 0x01
                    return copy
                },
                comment:
                    "attack: a member's attachment whose commit no longer verifies stands as unverified; anyone can append an altered copy of one of its chunks, with a junk commit, at the same standing. Before, two different candidates of one index at one standing were a duplicate, and the stream failed with chunk_duplicate for good. Now, of several candidates of one index, those that do not open are passed over first (format.md §7.4): the attachment reads whole"
            ),
            chunkCopyAtTheSameStanding(
                "attack-keyless-chunk-unknown-key-id",
                // A copy of chunk 0 whose public header names a key id no
                // keyring has.
                copy: { chunk, bytes in
                    FrameHeader(
                        kind: chunk.header.kind, flags: chunk.header.flags, keyID: KeyID(rawValue: 0x0000_5a5a_5a5a_5a5a),
                        bodyLength: chunk.header.bodyLength
                    ).encoded() + Array(bytes[Int(chunk.bodyOffset)..<Int(chunk.end)])
                },
                comment:
                    "attack (fourth review, item 14): as attack-altered-chunk-copy, but the appended copy of chunk 0 names in its public header a key id that matches no key. Before, a candidate whose key the reader does not hold stayed, and at the genuine chunk's (unverified) standing it was a duplicate: chunk_duplicate for good. Now, when some candidate of an index opens, every candidate that does not is passed over, whatever its key id (format.md §7.4): the attachment reads whole"
            ),
            {
                let b = try VectorBuilder("attack-dedup-after-rekey")
                let photo = b.random.bytes(30_000)
                let m1 = try b.commit([.blob(photo, mediaType: "image/jpeg")])[0]!
                let oldID = try BlobManifest(decoding: b.released.first { $0.frame == m1 }!.payload).blob
                try b.rotate(to: 2, reason: "rekey", blobKey: try SymmetricKey(bytes: b.random.bytes(32)))
                // What a rekeying compaction or merge writes: the content
                // stored again under the new blob key, the old id an alias.
                let m2 = try b.commit([.blob(photo, mediaType: "image/jpeg", aliases: [oldID])])[0]!
                let newID = try BlobManifest(decoding: b.released.first { $0.frame == m2 }!.payload).blob
                precondition(newID != oldID)
                var r = b.entry("the photo, by its old id")
                r.body.attachments = [AttachmentReference(id: [9], blob: oldID, mediaType: "image/jpeg")]
                try b.commit([.entry(r)])
                return try b.vector(
                    "success",
                    comment:
                        "attack: dedup lets whoever watches the file and can make you store a known file tell whether it was already there, and a former reader keeps the blob key to compute ids of new content. Format 1 kept one blob key for life. Now a rekey keyring has a fresh blob key: the same photo's blob id after the rekey differs from before, the re-stored manifest lists the old id as an alias (so references by it still resolve), and both attachments read whole"
                )
            },
        ]
    }

    /// The start of format.md §8.4 scenario 9, shared by its vectors: A
    /// removes the stolen B (R); B forks from the root and enrols E (X);
    /// E removes A (Y). Returns the builder, A's and D's key pairs, the
    /// members (Q, A, B, C, D), the main line's members, the indices of X
    /// and Y, and R with its key.
    static func scenarioNineStart(_ name: String) throws -> (
        VectorBuilder, Ed25519.KeyPair, Ed25519.KeyPair, [KeyringMember], [KeyringMember], Int, Int, (EpochKey, [UInt8])
    ) {
        let b = try VectorBuilder(name, deviceSeed: seedA, moreDeviceSeeds: [seedB, seedC, seedD])
        try b.commit([.entry(b.entry("before the theft"))])
        let a = try VectorBuilder.device(seedA)
        let thief = try VectorBuilder.device(seedB)
        let d = try VectorBuilder.device(seedD)
        let m = b.members  // Q, A, B, C, D
        let rootKey = b.ringKeys[b.rootID]!
        let mainLine = [m[0], m[1], m[3], m[4]]
        let (kr, r) = try child(b, members: mainLine, removed: [m[2]], reason: "remove", signer: a)
        try b.addKeyring(kr, r, members: mainLine)
        let puppet = try Ed25519.KeyPair(seed: SecureBytes(randomCount: 32, using: b.random))
        let withE = m + [KeyringMember(role: "device", publicKey: puppet.publicKey, name: "Tablet", added: b.now)]
        let x = try b.keyring(
            rootKey, parents: [b.parent(b.rootID)], slots: try b.memberSlots(for: rootKey, members: withE), members: withE, signer: thief,
            reason: "enroll")
        let ix = try b.addKeyring(rootKey, x, trust: false)
        let yMembers = withE.filter { $0.publicKey != m[1].publicKey }
        let ky = try b.freshKey(2)
        let y = try b.keyring(
            ky, parents: [KeyringBuilder.Parent(id: KeyringBuilder.id(ofBody: x), key: rootKey)],
            slots: try b.memberSlots(for: ky, members: yMembers),
            members: yMembers, removed: [m[1]], signer: puppet, reason: "remove")
        let iy = try b.addKeyring(ky, y, trust: false)
        return (b, a, d, m, mainLine, ix, iy, (kr, r))
    }

    /// A member's attachment whose commit no longer verifies (its stored
    /// head damaged) stands as unverified; anyone appends `copy` of its
    /// chunk 0, then a junk commit: a candidate at the same standing
    /// (`Spec/format.md §7.4`). The attachment must read whole.
    static func chunkCopyAtTheSameStanding(_ name: String, copy: @escaping (ScannedFrame, [UInt8]) -> [UInt8], comment: String) -> Make {
        {
            let b = try VectorBuilder(name)
            let idx = try b.commit([.blob(b.random.bytes(70_000), mediaType: "image/jpeg")])
            var bytes = try b.bytes()
            let commit = b.commitFrame(of: idx[0]!)
            bytes[Int(commit.bodyOffset)] ^= 0x01
            let chunk = b.vault.structure.frames.first { $0.chunk != nil }!
            let copied = copy(chunk, bytes)
            let junkAt = UInt64(bytes.count + copied.count)
            let junk =
                FrameHeader(kind: .commit, flags: 0, keyID: b.keys.writeKey!.id, bodyLength: UInt32(CommitChain.bodyByteCount)).encoded()
                + [UInt8](repeating: 0x33, count: CommitChain.bodyByteCount)
            bytes += copied + junk
            return try b.vector(
                "damaged", comment: comment, body: bytes,
                issues: [("commit_mismatch", commit.location.offset), ("commit_mismatch", junkAt)])
        }
    }

    /// The phone, stolen and still a member, signs a same-epoch keyring
    /// listing a made-up `critical` name or `required` kind (twelfth review
    /// R12-1); its own epoch-2 keyring dropping it is rejected (rule 5.6),
    /// and the recovery key's removal of it, dropping it too, is trusted.
    static func thiefBlocksRemoval(_ name: String, critical: [String] = [], required: [String] = [], comment: String) -> Make {
        {
            let b = try VectorBuilder(name, deviceSeed: phoneSeed)
            try b.commit([.entry(b.entry("before the phone was stolen"))])
            let phone = try VectorBuilder.device(phoneSeed)
            let k1 = b.ringKeys[b.rootID]!
            let extra = critical.isEmpty ? CBORMap() : CBORMap(text: [("critical", .array(critical.map { .text($0) }))])
            let marked = try b.keyring(
                k1, parents: [b.parent(b.rootID)], slots: try b.memberSlots(for: k1), members: b.members, signer: phone,
                requiredSlotKinds: required, unknownPublicFields: extra)
            _ = try b.addKeyring(k1, marked)
            let markedParent = b.parent(KeyringBuilder.id(ofBody: marked))
            let (kd, dropped) = try child(b, signer: phone, parents: [markedParent])
            let i = try b.addKeyring(kd, dropped, trust: false)
            let kept = [recoveryMember(b)]
            let (k2, removal) = try child(b, members: kept, removed: [b.members[1]], reason: "remove", parents: [markedParent])
            try b.addKeyring(k2, removal, members: kept)
            try b.commit([.entry(b.entry("after the removal"))])
            return try b.vector("damaged", comment: comment, issues: [("keyring_unauthenticated", b.offset(i))])
        }
    }

    /// Devices A and B remove each other concurrently; A then writes a
    /// keyring of its own. `aFirst` says which removal comes first in the file.
    static func mutualRemoval(_ name: String, aFirst: Bool) -> Make {
        {
            let seedA = [UInt8](repeating: 0xa1, count: 32)
            let seedB = [UInt8](repeating: 0xb1, count: 32)
            // Both orders share one random stream, so both files hold the same keyrings.
            let b = try VectorBuilder("attack-mutual-removal-order", deviceSeed: seedA, moreDeviceSeeds: [seedB])
            let a = try VectorBuilder.device(seedA)
            let bb = try VectorBuilder.device(seedB)
            try b.commit([.entry(b.entry("before"))])
            let recovery = recoveryMember(b)
            let memberA = b.members[1].withName("Device A")
            let memberB = b.members[2].withName("Device B")
            let (kA, byA) = try child(b, members: [recovery, memberA], removed: [memberB], reason: "remove", signer: a)
            let (kB, byB) = try child(b, members: [recovery, memberB], removed: [memberA], reason: "remove", signer: bb)
            // Both removals in one commit (as a merge writes concurrent
            // keyrings), in either order.
            let first = aFirst ? (kA, byA) : (kB, byB)
            let second = aFirst ? (kB, byB) : (kA, byA)
            let pair = try b.commit(
                [.keyring(first.0, first.1), .keyring(second.0, second.1)], commitKey: VectorBuilder.writeKey(of: [kA, kB]))
            b.writeWith(kA)
            try b.commit([.entry(b.entry("A writes under its epoch 2"))], attest: .sign(a))
            b.writeWith(kB)
            try b.commit([.entry(b.entry("B writes under its epoch 2"))], attest: .sign(bb))
            // A, removed by B, goes on: its next keyring is cut.
            let k3 = try b.freshKey(3)
            let next = try b.keyring(
                k3, parents: [KeyringBuilder.Parent(id: KeyringBuilder.id(ofBody: byA), key: kA)],
                slots: try b.memberSlots(for: k3, members: [recovery, memberA]),
                members: [recovery, memberA], signer: a)
            b.writeWith(kA)
            let i3 = try b.addKeyring(k3, next, trust: false)
            b.writeWith(k3)
            let idx = try b.commit([.entry(b.entry("A under its cut epoch 3"))], expectReleased: false, attest: .sign(a))
            var v = try b.vector(
                "damaged",
                comment:
                    "attack: devices A and B remove each other at the same time (\(aFirst ? "A's removal first in the file" : "B's removal first in the file")). Format 1 decided by file order, which a thief can grind and a keyless writer can reorder. Now rule 6 decides from the keyrings alone: both removals stand (mutual, each reported removal_mutual), records written under either epoch 2 are read, and A's later keyring is cut; the other vector of the pair has the keyrings in the other order and the same records, issues and offsets",
                issues: [
                    ("removal_mutual", b.offset(pair[0]!)), ("removal_mutual", b.offset(pair[1]!)),
                    ("keyring_unauthenticated", b.offset(i3)), ("unknown_key", b.offset(idx[0]!)),
                    ("commit_unverifiable", b.offset(idx[0]! + 1)),
                ])
            v.0 = name
            return v
        }
    }

    /// A device replaces the recovery key; then the vault is opened with the
    /// old code (which reads epoch 1 only), with the new one, or — after the
    /// old code signed a keyring of its own — with the phone.
    enum RecoveryView { case oldCode, newCode, oldCodeSigns }

    static func recoveryReplaced(_ name: String, _ view: RecoveryView) -> Make {
        {
            // All three views share one random stream, so one vault.
            let b = try VectorBuilder("recovery-key-replaced", deviceSeed: phoneSeed)
            try b.commit([.entry(b.entry("before the replacement"))])
            let phone = try VectorBuilder.device(phoneSeed)
            let newRecovery = RecoveryKey(secret: try SymmetricKey(bytes: b.random.bytes(32)))
            let newMember = KeyringMember(role: "recovery", publicKey: try newRecovery.publicKey(), name: "Recovery key", added: b.now)
            let oldMember = b.members[0]
            let members = [newMember, b.members[1]]
            let (k2, body) = try child(b, members: members, removed: [oldMember], reason: "recovery", signer: phone)
            let replacement = try b.addKeyring(k2, body, members: members)
            b.attestation = .sign(phone)
            let idx = try b.commit([.entry(b.entry("after the replacement"))], expectReleased: view == .newCode)
            var v: (String, VectorFile)
            switch view {
            case .newCode:
                v = try b.vector(
                    "success",
                    comment:
                        "the phone replaced the recovery key (reason \"recovery\": a new recovery member, the old one removed, a new epoch); the new recovery code opens both epochs",
                    key: newRecovery.code())
            case .oldCode:
                v = try b.vector(
                    "damaged",
                    comment:
                        "attack: a recovery code that leaked (or was lost) can never be replaced in format 1. Now a member replaces it: the old code still reads epoch 1 but opens no later epoch (its slot is gone and it is listed as removed); what it signs afterwards is cut for every current member (attack-recovery-key-replaced-old-code-signs)",
                    issues: [
                        ("commit_unverifiable", b.offset(replacement + 2)), ("unknown_key", b.offset(idx[0]!)),
                        ("commit_unverifiable", b.offset(idx[0]! + 1)),
                    ])
            case .oldCodeSigns:
                // The old code, holding only epoch 1, signs a keyring of its own.
                let root = b.ringKeys[b.rootID]!
                b.writeWith(root)
                let (k3, late) = try child(b, members: [oldMember, members[1]], signer: b.signer)
                // Committed under its own key, as a writer starting an epoch
                // does (format.md §9.2, seventh review R7-3).
                try b.commit([.keyring(k3, late)], commitKey: k3)
                v = try b.vector(
                    "damaged",
                    comment:
                        "attack, and the limit it shows (threat model §3.6): after the phone replaced the recovery key, the old code signs a keyring of its own from the root, concurrent with the replacement. A replacement defies every concurrent keyring of the key it replaces and loses to it (rule 6: the recovery key's keyrings win), so the replacement is cut and the phone's entry under its epoch is unknown_key (its commit unverifiable); the old code's keyring stands, committed after that commit. It extends the unverifiable commit, so nothing shows what it chains from: the reader passes by only commits after the last one a current member attested, and the replacement's commit was attested by the old recovery key, still a member here, so it stays verified (format.md §9.3). A replacement protects against a holder of the old code who cannot write the file. Opened by the phone",
                    issues: [
                        ("keyring_unauthenticated", b.offset(replacement)), ("commit_unverifiable", b.offset(replacement + 2)),
                        ("unknown_key", b.offset(idx[0]!)), ("commit_unverifiable", b.offset(idx[0]! + 1)),
                    ],
                    deviceSeed: phoneSeed)
            }
            v.0 = name
            return v
        }
    }

    /// The first offset of `needle` in `haystack`.
    static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard needle.count <= haystack.count else { return nil }
        for i in 0...(haystack.count - needle.count) where Array(haystack[i..<(i + needle.count)]) == needle { return i }
        return nil
    }

    /// `Spec/format.md §8.5` step 2, the gate: a keyless writer appends a
    /// keyring, naming the root as parent with a random link, holding one
    /// passphrase slot — a real box to the real slot's public key (what
    /// anyone can seal: it wraps the writer's own key, whose sealed part is
    /// random), or a slot asking for an absurd Argon2id cost. Before the
    /// gate the passphrase tried it: `malformed_keyring` (its key does not
    /// open its sealed part) or `kdf_limits_exceeded` (a warning). Now it is
    /// not linked and goes untried, unless the fallback runs: with
    /// `behind`, a member first adds a keyring without a passphrase slot
    /// (linked, and the passphrase cannot open it), so every slot is tried.
    static func gatedSlot(_ name: String, behind: Bool) -> Make {
        {
            let b = try VectorBuilder(
                name,
                extraSlots: { key, id, r in
                    var p = Array("correct horse battery staple".utf8)
                    return [
                        StoredSlot(
                            slot: try SlotCrypto.passphraseSlot(
                                for: key, passphrase: SecureBytes(consuming: &p), opsLimit: 1, memLimitBytes: 8192, vaultID: id, random: r))
                    ]
                })
            try b.commit([.entry(b.entry("the journal"))])
            if behind {
                let (key, body) = try child(b)
                _ = try b.addKeyring(key, body, trust: false)
                try b.commit([.entry(b.entry("after a keyring the passphrase cannot open"))])
            }
            let root = try KeyringRecord(body: b.frame(0).plaintextBody!, location: nil)
            let real = root.publicPart.slots.last!
            let junk = try b.freshKey(2)
            let slot: KeySlot =
                name.hasSuffix("opens")
                ? try SlotCrypto.passphraseSlot(for: junk, rewrapping: real, vaultID: b.vaultID, random: b.random)
                : .passphrase(
                    salt: b.random.bytes(16), opsLimit: 1_000, memLimitBytes: 1 << 40, publicKey: b.random.bytes(32),
                    box: b.random.bytes(KeySlot.boxByteCount))
            let pub = KeyringPublic(
                epoch: 2, keyCommit: EpochKey.commitment(of: junk.key), parents: [b.rootID],
                links: [b.random.bytes(KeyringRecord.linkByteCount)], isEscrowFree: false, slotEntries: [StoredSlot(slot: slot)])
            var bytes = try b.bytes()
            let at = UInt64(bytes.count)
            bytes += Edit.plaintextFrame(
                kind: .keyring, keyID: KeyID(commitment: pub.keyCommit),
                body: KeyringForge.assemble(publicBytes: pub.encoded(), nonce: b.random.bytes(24), sealed: b.random.bytes(80)))
            let commitAt = UInt64(bytes.count)
            bytes += CommitChain.commitHeader(keyID: b.keys.writeKey!.id).encoded() + b.random.bytes(CommitChain.bodyByteCount)
            let what =
                name.hasSuffix("opens")
                ? "a passphrase slot that opens (a box sealed to the real slot's public key, wrapping the writer's own key)"
                : "a passphrase slot asking for an absurd Argon2id cost"
            if behind {
                return try b.vector(
                    "damaged",
                    comment:
                        "gate (format.md §8.5 step 2): a member adds a keyring without a passphrase slot, then a keyless writer appends a keyring naming the root with a random link and \(what). The member's keyring is linked and the passphrase cannot open it, so after the gate the fallback tries every keyring: the costly slot is refused and reported",
                    body: bytes, issues: [("kdf_limits_exceeded", at), ("commit_mismatch", commitAt)],
                    passphrase: "correct horse battery staple")
            }
            return try b.vector(
                "damaged",
                comment:
                    "attack: a keyless writer appends a keyring naming the root with a random link and \(what). Before the gate (format.md §8.5 step 2) the passphrase tried it and reported it (\(name.hasSuffix("opens") ? "malformed_keyring: its key does not open its sealed part" : "kdf_limits_exceeded, a warning")); now it is not linked, so it is never tried and nothing is reported about it",
                body: bytes, issues: [("commit_mismatch", commitAt)], passphrase: "correct horse battery staple")
        }
    }

    /// Eleventh review R11-4: a keyless writer appends one keyring of four
    /// made-up passphrase triples. The derivation budget's first pass
    /// (newest keyring first) runs them, none names the derived key, and the
    /// second pass (file order, `Spec/keys.md §2.3`) runs the root's triple:
    /// the right passphrase opens. Before the second pass it was refused
    /// [`kdf_limits_exceeded`].
    static func appendedPassphraseDecoys(_ name: String) -> Make {
        {
            let passphrase = "correct horse battery staple"
            let b = try VectorBuilder(
                name,
                extraSlots: { key, id, r in
                    var p = Array(passphrase.utf8)
                    return [
                        StoredSlot(
                            slot: try SlotCrypto.passphraseSlot(
                                for: key, passphrase: SecureBytes(consuming: &p), opsLimit: 1, memLimitBytes: 8192, vaultID: id, random: r))
                    ]
                })
            try b.commit([.entry(b.entry("the journal"))])
            let junk = try b.freshKey(2)
            let slots: [KeySlot] = (0..<4).map { _ in
                .passphrase(
                    salt: b.random.bytes(16), opsLimit: 1, memLimitBytes: 8192, publicKey: b.random.bytes(32),
                    box: b.random.bytes(KeySlot.boxByteCount))
            }
            let pub = KeyringPublic(
                epoch: 2, keyCommit: EpochKey.commitment(of: junk.key), parents: [b.rootID],
                links: [b.random.bytes(KeyringRecord.linkByteCount)], isEscrowFree: false, slotEntries: slots.map { StoredSlot(slot: $0) })
            var bytes = try b.bytes()
            bytes += Edit.plaintextFrame(
                kind: .keyring, keyID: KeyID(commitment: pub.keyCommit),
                body: KeyringForge.assemble(publicBytes: pub.encoded(), nonce: b.random.bytes(24), sealed: b.random.bytes(80)))
            let commitAt = UInt64(bytes.count)
            bytes += CommitChain.commitHeader(keyID: b.keys.writeKey!.id).encoded() + b.random.bytes(CommitChain.bodyByteCount)
            return try b.vector(
                "damaged",
                comment:
                    "attack (eleventh review R11-4): a keyless writer appends a keyring naming the root with a random link and four passphrase slots of made-up triples (random salts, public keys and boxes). The derivation budget's first pass, newest keyring first, runs Argon2id for the four decoy triples and none names the derived key; the second pass, in file order, skipping triples already run, runs the root's triple, which names it (keys.md §2.3): the right passphrase opens with five runs. Before the second pass the decoys spent the budget and it was refused [kdf_limits_exceeded]. The decoy keyring is not linked, so it is never tried; the only report is the junk commit",
                body: bytes, issues: [("commit_mismatch", commitAt)], passphrase: passphrase)
        }
    }

    /// The credential an inserted-flood vector opens with.
    enum FloodCredential { case device, recoveryKey, passphrase }

    /// Ninth review R9-3: a keyless writer inserts, right after the file
    /// header, four made-up keyrings (random key commitments, no parents,
    /// 8 device slots, 8 recovery slots and 8 passphrase slots copying the
    /// real slot's salt, cost and public key, all with random boxes) and a
    /// junk commit of random bytes under a random key id. The bootstrap
    /// goes in file order (`Spec/format.md §8.5` step 2), so every
    /// credential tries each made-up slot of its kind (32 more sealed
    /// boxes) before it reaches the root; the vault opens with all three,
    /// and nothing is reported but the junk commit.
    static func insertedSlotFlood(_ name: String, credential: FloodCredential) -> Make {
        {
            let passphrase = "correct horse battery staple"
            let b = try VectorBuilder(
                name,
                extraSlots: { key, id, r in
                    var p = Array(passphrase.utf8)
                    return [
                        StoredSlot(
                            slot: try SlotCrypto.passphraseSlot(
                                for: key, passphrase: SecureBytes(consuming: &p), opsLimit: 1, memLimitBytes: 8192, vaultID: id, random: r))
                    ]
                }, deviceSeed: phoneSeed)
            try b.commit([.entry(b.entry("the journal"))])
            let root = try KeyringRecord(body: b.frame(0).plaintextBody!, location: nil)
            guard case .passphrase(let salt, let ops, let mem, let pk, _) = root.publicPart.slots.last! else { fatalError() }
            var flood: [UInt8] = []
            for _ in 0..<4 {
                var slots: [KeySlot] = []
                for _ in 0..<8 {
                    slots.append(.device(box: b.random.bytes(KeySlot.boxByteCount)))
                    slots.append(.recovery(box: b.random.bytes(KeySlot.boxByteCount)))
                    slots.append(
                        .passphrase(salt: salt, opsLimit: ops, memLimitBytes: mem, publicKey: pk, box: b.random.bytes(KeySlot.boxByteCount))
                    )
                }
                let pub = KeyringPublic(
                    epoch: 1, keyCommit: b.random.bytes(32), parents: [], links: [], isEscrowFree: false,
                    slotEntries: slots.map { StoredSlot(slot: $0) })
                flood += Edit.plaintextFrame(
                    kind: .keyring, keyID: KeyID(commitment: pub.keyCommit),
                    body: KeyringForge.assemble(publicBytes: pub.encoded(), nonce: b.random.bytes(24), sealed: b.random.bytes(64)))
            }
            let commitAt = UInt64(FileHeader.byteCount + flood.count)
            flood +=
                CommitChain.commitHeader(keyID: KeyID(commitment: b.random.bytes(6))).encoded() + b.random.bytes(CommitChain.bodyByteCount)
            let clean = try b.bytes()
            let bytes = Array(clean[..<FileHeader.byteCount]) + flood + Array(clean[FileHeader.byteCount...])
            let kind: String
            switch credential {
            case .device: kind = "device"
            case .recoveryKey: kind = "recovery"
            case .passphrase: kind = "passphrase"
            }
            let comment =
                "attack (ninth review R9-3): a keyless writer inserts, right after the file header, four made-up keyrings of 8 device, 8 recovery and 8 copied passphrase slots (random boxes) and a junk commit under a random key id. The bootstrap tries keyrings in file order until the root key (format.md §8.5 step 2), so the \(kind) credential tries each of the 32 made-up slots of its kind, one sealed box each, before the root: the gate bounds what is placed after the first keyring that opens, not what is inserted before it. The vault opens as before, with every credential; the only report is the junk commit"
            let issues = [("commit_unverifiable", commitAt)]
            switch credential {
            case .device: return try b.vector("damaged", comment: comment, body: bytes, issues: issues, deviceSeed: phoneSeed)
            case .recoveryKey: return try b.vector("damaged", comment: comment, body: bytes, issues: issues)
            case .passphrase: return try b.vector("damaged", comment: comment, body: bytes, issues: issues, passphrase: passphrase)
            }
        }
    }
}
