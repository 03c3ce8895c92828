import Foundation
@_spi(Testing) @_spi(Crypto) import QuireCrypto
@_spi(Format) import QuireFormat
import QuireSystem
import Testing

// Findings of the review of format 2 about commits and sealed records
// (`Spec/threat-model.md §6.4`), each as an attack that failed before its fix.
@Suite struct ChainAttackTests {
    /// L5: the attestation key sealed `A` and also keyed the BLAKE2b that
    /// derives the commit's synthetic nonce. The nonce now comes from its own
    /// subkey, `KDF(K, 6, "quire v2")` (`Spec/format.md §5.1`, §9.2).
    @Test func attackAttestationKeyDoublesAsNonceKey() throws {
        let key = testEpochKey()
        let header = CommitChain.commitHeader(keyID: key.id)
        let digest = counting(32, from: 7)
        let signer = try Ed25519.KeyPair(using: SeededRandom(label: "L5 signer"))
        let attestation = CommitChain.attestation(keyCommitment: key.commitment, previousHead: CommitChain.genesisHead, digest: digest, vaultID: countingVaultID, signer: signer)
        for plain in [CommitChain.unattested, attestation] {
            let body = try CommitChain.body(
                previousHead: CommitChain.genesisHead, digest: digest, attestation: plain, key: key, vaultID: countingVaultID, commitHeader: header)
            let nonce = Array(body[64..<88])
            let ad = countingVaultID.bytes + header.fieldBytes + CommitChain.genesisHead + digest
            let message = Array("quire-commit-nonce-v3".utf8) + ad + plain
            let nonceKey = try KeyDerivation.derive(from: key.key, subkeyID: 6, context: "quire v2")
            #expect(nonce == BLAKE2b.mac(message, key: nonceKey, byteCount: 24))
            #expect(nonce != BLAKE2b.mac(message, key: try key.subkey(.attestation), byteCount: 24))
        }
    }

    /// L1: XChaCha20-Poly1305 is not key-committing. A member that grinds two
    /// epoch keys sharing a key id (here `CollidingKeys`) builds one sealed
    /// body that authenticates under both, to two payloads: with a body hash
    /// over the body alone, a reader holding both keys shows one payload and a
    /// reader holding the other shows the other. The body hash now covers the
    /// full key commitment (`Spec/format.md §5.2`), so the body opens under
    /// the one key it names, whatever keys the reader holds.
    @Test func attackRecordOpensUnderTwoKeys() throws {
        let k1 = CollidingKeys.first(), k2 = CollidingKeys.second()
        #expect(k1.id == k2.id)
        let header = FrameHeader(kind: .entryRevision, flags: FrameHeader.sealedFlag, keyID: k1.id, bodyLength: UInt32(24 + 32 + 16 + 32))
        let ad = countingVaultID.bytes + header.fieldBytes
        let rk1 = try k1.subkey(.record), rk2 = try k2.subkey(.record)
        let made = try #require(TwoKeyCiphertext.make(key1: rk1, key2: rk2, ad: ad, tail: Array("reader one sees".utf8)))
        // The primitive: one nonce, ciphertext and tag; two keys; two plaintexts.
        let p1 = try XChaCha20Poly1305.open(made.sealed, key: rk1, nonce: made.nonce, authenticating: ad)
        let p2 = try XChaCha20Poly1305.open(made.sealed, key: rk2, nonce: made.nonce, authenticating: ad)
        #expect(p1 != p2 && p1.last == 0x80 && p2.last == 0x80)
        // The frame as the holder of k1 writes it: the body hash names k1.
        let sealedPart = made.nonce + made.sealed
        let body = sealedPart + BLAKE2b.hash(k1.commitment + sealedPart, byteCount: 32)
        let location = FrameLocation(offset: 64, index: 0)
        func open(_ keys: [EpochKey]) throws -> [UInt8] {
            try body.withUnsafeBytes { raw in
                try SealedFrame.open(body: raw, header: header, location: location, keys: keys, vaultID: countingVaultID, context: DecompressionContext())
            }
        }
        // k2 has the smaller commitment, so a reader holding both tries it first.
        #expect(try open([k2, k1]) == Array(p1.dropLast()))
        #expect(try open([k1]) == Array(p1.dropLast()))
        do {
            _ = try open([k2])
            Issue.record("the body opened under a key its body hash does not name")
        } catch let error as FormatError {
            #expect(error == .authenticationFailed(location))
        }
    }

    // MARK: The chain (Spec/format.md §9.3): inserted, deleted and junk groups

    /// The vault `v` with one more commit of `payloads` inserted after its
    /// group `after`: what a holder of its key writes into the file's middle,
    /// chained from the stored head before it.
    static func insertGroup(_ v: RawKeyVault, after: Int, payloads: [[UInt8]], attestedBy signer: Ed25519.KeyPair?, label: String) throws {
        let original = try fileBytes(v.path)
        let s = try v.open().structure
        let cut = Int(s.frames[s.groups[after].commitFrame].end)
        let scratch = v.dir.file("prefix-\(label).quire")
        try Data(original[0..<cut]).write(to: URL(fileURLWithPath: scratch))
        let prefix = try VaultFile(path: scratch, writable: true)
        prefix.verifyCommits(keys: v.keys, trustedKeyrings: [:], attestors: [v.member.publicKey])
        try prefix.commit(random: SeededRandom(label: label), options: fast, attestWith: signer) { (tx: PendingCommit) throws(FormatError) in
            for p in payloads { try tx.appendSealed(kind: .entryRevision, payload: p, compress: false) }
        }
        let inserted = Array(try fileBytes(scratch)[cut...])
        try Data(Array(original[0..<cut]) + inserted + Array(original[cut...])).write(to: URL(fileURLWithPath: v.path))
    }

    /// Appends one commit of `payloads` to `v`, attested by its member.
    static func append(_ v: RawKeyVault, _ payloads: [[UInt8]], label: String) throws {
        let f = try v.open(writable: true)
        try f.commit(random: SeededRandom(label: label), options: fast, attestWith: v.member) { (tx: PendingCommit) throws(FormatError) in
            for p in payloads { try tx.appendSealed(kind: .entryRevision, payload: p, compress: false) }
        }
    }

    /// H3 at the format level: a group inserted before a later commit and
    /// chained from the stored head before it verifies by its own head, but
    /// the commit after it links to the commit before it. The inserted
    /// commit, which no current member attested (here an epoch-key holder
    /// who is not a member), is orphaned (its records unverified, its
    /// attestation not counted), and the genuine commit after it still
    /// verifies.
    @Test func insertedGroupsAreOrphaned() throws {
        let v = RawKeyVault(label: "inserted group")
        try v.create([[0]])
        try Self.append(v, [[1]], label: "second")
        try Self.append(v, [[2]], label: "third")
        try Self.insertGroup(v, after: 0, payloads: [[9]], attestedBy: nil, label: "x1")
        try Self.insertGroup(v, after: 1, payloads: [[8]], attestedBy: nil, label: "x2")
        let vault = try v.open()
        #expect(vault.commits.statuses == [.verified, .orphaned, .orphaned, .verified, .verified])
        #expect(vault.commits.attestations[1] == .notChecked && vault.commits.attestations[2] == .notChecked)
        #expect(vault.commitIssues.map(\.code) == ["commit_orphaned", "commit_orphaned"])
        let released = releasedRecords(vault)
        #expect(released.map(\.payload) == [[0], [9], [8], [1], [2]])
        #expect(released.map(\.commitVerified) == [true, false, false, true, true])
        #expect(released.map { $0.attestedBy != nil } == [true, false, false, true, true])
    }

    /// Third review, item 3, and fourth review, C3: a commit that links past
    /// a commit a current member attested is a fork. When a current member
    /// attested it too, both lines stay verified (`commit_fork`, a warning)
    /// and the chain goes on from the later one in the walk; before, the
    /// genuine commit written before the inserted group, now after it in
    /// the file, was orphaned with what extends it, and writers chained
    /// from the inserted group.
    @Test func commitLinkingPastAMembersCommitIsAFork() throws {
        let v = RawKeyVault(label: "fork")
        try v.create([[0]])
        try Self.append(v, [[1]], label: "second")
        try Self.insertGroup(v, after: 0, payloads: [[9]], attestedBy: v.member, label: "x1")
        let vault = try v.open()
        #expect(vault.commits.statuses == [.verified, .verified, .verified])
        #expect(vault.commitIssues.map(\.code) == ["commit_fork"])
        // Siblings are walked by stored head (fifth review F3): the one
        // visited second is the member's fork and the chain's tip.
        let groups = vault.structure.groups
        let insertedFirst = groups[1].storedHead.lexicographicallyPrecedes(groups[2].storedHead)
        #expect(vault.commits.forks == [insertedFirst ? 2 : 1])
        // A writer chains from the last commit the walk put on the chain.
        try Self.append(v, [[2]], label: "after the fork")
        let after = try v.open()
        #expect(after.commits.statuses == [.verified, .verified, .verified, .verified])
        #expect(after.structure.groups[3].storedPreviousHead == after.structure.groups[insertedFirst ? 2 : 1].storedHead)
    }

    /// Fourth review, C3: a stolen device (a current member) inserts a group
    /// X after the first commit; writers that took X as their tip (as every
    /// writer did before, when the genuine commit after X was the orphaned
    /// fork) chain from it; then the device is removed. X is now attested
    /// by a removed member, so the genuine commit passes it by, and the
    /// commits chained from X extend a commit off the chain. Before, they
    /// were orphaned for good; now a commit a current member attested that
    /// extends a commit whose head verifies is verified (`commit_fork`).
    @Test func attackMemberInsertThenRemoved() throws {
        let v = RawKeyVault(label: "member insert")
        try v.create([[0]])
        try Self.append(v, [[1]], label: "genuine")
        let thief = try Ed25519.KeyPair(using: SeededRandom(label: "stolen device"))
        try Self.insertGroup(v, after: 0, payloads: [[9]], attestedBy: thief, label: "x")
        // A member's commit chained from X, moved to the end of the file
        // (links do not depend on where a group lies), then one more.
        try Self.insertGroup(v, after: 1, payloads: [[2]], attestedBy: v.member, label: "from x")
        var bytes = try fileBytes(v.path)
        let w = try v.open().structure
        let start = Int(w.frames[w.groups[2].members.lowerBound].location.offset), end = Int(w.frames[w.groups[2].commitFrame].end)
        let moved = Array(bytes[start..<end])
        bytes.removeSubrange(start..<end)
        try Data(bytes + moved).write(to: URL(fileURLWithPath: v.path))
        try Self.append(v, [[3]], label: "after that")
        let s = try v.open().structure
        #expect(s.groups[3].storedPreviousHead == s.groups[1].storedHead)
        let f = try VaultFile(path: v.path)
        f.verifyCommits(keys: v.keys, trustedKeyrings: [:], attestors: [v.member.publicKey, thief.publicKey], removedMembers: [thief.publicKey])
        // X and the genuine commit are siblings, walked by stored head
        // (fifth review F3). X first: X and the member's commit from it join,
        // and the genuine commit, linking past that member's commit, is the
        // member's fork (X keeps its verdict, attested by a removed member).
        // The genuine commit first: X, linking past it, is a fork no current
        // member attested (orphaned), and the commit from X a member's fork.
        let xFirst = s.groups[1].storedHead.lexicographicallyPrecedes(s.groups[2].storedHead)
        if xFirst {
            #expect(f.commits.statuses == [.verified, .verified, .verified, .verified, .verified])
            #expect(f.commitIssues.map(\.code) == ["commit_fork"])
            #expect(f.commits.forks == [2])
        } else {
            #expect(f.commits.statuses == [.verified, .orphaned, .verified, .verified, .verified])
            #expect(f.commitIssues.map(\.code) == ["commit_orphaned", "commit_fork"])
            #expect(f.commits.forks == [3])
        }
        #expect(f.chainTipHead == s.groups[4].storedHead)
        // Before its removal, the device's group is a member's: whichever
        // sibling the walk visits second is the member's fork.
        f.verifyCommits(keys: v.keys, trustedKeyrings: [:], attestors: [v.member.publicKey, thief.publicKey])
        #expect(f.commits.statuses == [.verified, .verified, .verified, .verified, .verified])
        #expect(f.commits.forks == [xFirst ? 2 : 1])
    }

    /// Third review, item 3: a keyless copy of an earlier group and its
    /// commit frame, appended at the end, is off the chain; before, it
    /// linked to the commit before the original through the look-back and
    /// orphaned every commit from the original on, and writers chained
    /// from it.
    @Test func attackKeylessCopyOfAnEarlierGroup() throws {
        let v = RawKeyVault(label: "copy")
        try v.create([[0]])
        for i in 1...3 { try Self.append(v, [[UInt8(i)]], label: "commit \(i)") }
        let s = try v.open().structure
        let bytes = try fileBytes(v.path)
        let start = Int(s.frames[s.groups[1].members.lowerBound].location.offset), end = Int(s.frames[s.groups[1].commitFrame].end)
        try appendToFile(v.path, Array(bytes[start..<end]))
        let vault = try v.open()
        #expect(vault.commits.statuses == [.verified, .verified, .verified, .verified, .orphaned])
        try Self.append(v, [[4]], label: "after the copy")
        let after = try v.open()
        #expect(after.commits.statuses == [.verified, .verified, .verified, .verified, .orphaned, .verified])
        #expect(after.structure.groups[5].storedPreviousHead == after.structure.groups[3].storedHead)
        #expect(releasedRecords(after).map(\.commitVerified) == [true, true, true, true, false, true])
    }

    /// Fourth review, C1 (b): a keyless writer swaps the last two commit
    /// groups, then a member writes. Before, the first of the swapped pair
    /// named a head stored only after it (tampered, writes refused), and a
    /// writer took its tip in file order. Now links resolve forward and the
    /// walk follows them: every commit verifies, and the tip is the last
    /// commit of the walk (the genuine last commit, now second to last in
    /// the file), so the writer's commit extends it and passes nothing by.
    @Test func attackKeylessSwapOfTheLastTwoGroupsThenWrite() throws {
        let v = RawKeyVault(label: "swap")
        try v.create([[0]])
        for i in 1...3 { try Self.append(v, [[UInt8(i)]], label: "commit \(i)") }
        let s = try v.open().structure
        let lastHead = s.groups[3].storedHead
        var bytes = try fileBytes(v.path)
        let start = Int(s.frames[s.groups[2].members.lowerBound].location.offset)
        let middle = Int(s.frames[s.groups[2].commitFrame].end), end = Int(s.frames[s.groups[3].commitFrame].end)
        bytes.replaceSubrange(start..<end, with: Array(bytes[middle..<end]) + Array(bytes[start..<middle]))
        try Data(bytes).write(to: URL(fileURLWithPath: v.path))
        let vault = try v.open()
        #expect(vault.commits.statuses == [.verified, .verified, .verified, .verified])
        #expect(vault.commitIssues.isEmpty)
        #expect(vault.chainTipHead == lastHead)
        #expect(releasedRecords(vault).map(\.payload) == [[0], [1], [3], [2]])
        try Self.append(v, [[4]], label: "after the swap")
        let after = try v.open()
        #expect(after.commits.statuses == Array(repeating: .verified, count: 5))
        #expect(after.structure.groups[4].storedPreviousHead == lastHead)
        #expect((0..<5).allSatisfy { after.commits.isAttested($0) })
    }

    /// Fourth review, C1 (a): a keyless byte copy of a group placed before
    /// the commit it extends. Before, the copy named a head stored only
    /// later (tampered) and the original, a copy of it, was orphaned with
    /// every commit after. Now the original is the commit that stands in
    /// its place: only the inserted copy is orphaned.
    @Test func attackKeylessCopyBeforeItsOriginal() throws {
        let v = RawKeyVault(label: "copy before")
        try v.create([[0]])
        for i in 1...4 { try Self.append(v, [[UInt8(i)]], label: "commit \(i)") }
        let s = try v.open().structure
        var bytes = try fileBytes(v.path)
        let start = Int(s.frames[s.groups[3].members.lowerBound].location.offset), end = Int(s.frames[s.groups[3].commitFrame].end)
        bytes.insert(contentsOf: Array(bytes[start..<end]), at: Int(s.frames[s.groups[0].commitFrame].end))
        try Data(bytes).write(to: URL(fileURLWithPath: v.path))
        let vault = try v.open()
        #expect(vault.commits.statuses == [.verified, .orphaned, .verified, .verified, .verified, .verified])
        #expect(vault.tamperedCommits.isEmpty)
        #expect(releasedRecords(vault).map(\.commitVerified) == [true, false, true, true, true, true])
    }

    /// Fifth review, F1 (1a): the head did not cover the commit body's
    /// bytes 64..<200. A keyless copy of a member's group with those bytes
    /// randomised, inserted right after the commit it extends, stood in
    /// its place first, so it was the original (its attestation failed,
    /// treated as unattested) and the member's commit the copy: the
    /// member's record read as unattested. Now the head covers those bytes
    /// (sixth review R6-1): the altered copy's head does not verify, so it
    /// is a mismatch that displaces nothing.
    @Test func attackKeylessCopyWithRandomisedAttestation() throws {
        let v = RawKeyVault(label: "copy randomised")
        try v.create([[0]])
        for i in 1...2 { try Self.append(v, [[UInt8(i)]], label: "commit \(i)") }
        let s = try v.open().structure
        var bytes = try fileBytes(v.path)
        let start = Int(s.frames[s.groups[1].members.lowerBound].location.offset), end = Int(s.frames[s.groups[1].commitFrame].end)
        var copy = Array(bytes[start..<end])
        for i in (copy.count - 136)..<copy.count { copy[i] = UInt8(truncatingIfNeeded: i &* 29 &+ 3) }
        bytes.insert(contentsOf: copy, at: Int(s.frames[s.groups[0].commitFrame].end))
        try Data(bytes).write(to: URL(fileURLWithPath: v.path))
        let vault = try v.open()
        #expect(vault.commits.statuses == [.verified, .mismatch, .verified, .verified])
        let released = releasedRecords(vault)
        #expect(released.map(\.payload) == [[0], [1], [1], [2]])
        #expect(released.map(\.commitVerified) == [true, false, true, true])
        #expect(released.map { $0.attestedBy == v.member.publicKey } == [true, false, true, true])
        #expect(!vault.commitIssues.contains { if case .attestationFailed = $0 { return true } else { return false } })
    }

    /// Fifth review, F1 (1b): a holder of the commit key seals a member's
    /// commit again as unattested (same previous head and group; since the
    /// head covers the attestation, sixth review R6-1, a head of its own),
    /// inserts that group before the original and an empty commit after it
    /// chained from the commit before. The re-seal was the original, the
    /// empty commit passed it by, the member's commit was a copy and the
    /// commit after it a member's fork: the member's record unverified. Now
    /// the member's commit is the original and passes the empty one by.
    @Test func attackEpochKeyUnattestedCopyThenEmptyCommit() throws {
        let v = RawKeyVault(label: "copy resealed")
        try v.create([[0]])
        for i in 1...2 { try Self.append(v, [[UInt8(i)]], label: "commit \(i)") }
        let s = try v.open().structure
        var bytes = try fileBytes(v.path)
        let g = s.groups[1]
        let start = Int(s.frames[g.members.lowerBound].location.offset), framesEnd = Int(s.frames[g.commitFrame].location.offset)
        let header = CommitChain.commitHeader(keyID: v.epochKey.id)
        // The head covers the attestation (sixth review R6-1): the re-seal
        // has a head of its own, a sibling of the member's commit.
        let resealed = header.encoded() + (try CommitChain.body(previousHead: g.storedPreviousHead, digest: g.digest, attestation: CommitChain.unattested, key: v.epochKey, vaultID: v.vaultID, commitHeader: header))
        let empty = CommitChain.Digest().finalize()
        let z = header.encoded() + (try CommitChain.body(previousHead: g.storedPreviousHead, digest: empty, attestation: CommitChain.unattested, key: v.epochKey, vaultID: v.vaultID, commitHeader: header))
        bytes.insert(contentsOf: Array(bytes[start..<framesEnd]) + resealed + z, at: Int(s.frames[s.groups[0].commitFrame].end))
        try Data(bytes).write(to: URL(fileURLWithPath: v.path))
        let vault = try v.open()
        #expect(vault.commits.statuses == [.verified, .orphaned, .orphaned, .verified, .verified])
        #expect(vault.commits.forks.isEmpty)
        let released = releasedRecords(vault)
        #expect(released.map(\.payload) == [[0], [1], [1], [2]])
        #expect(released.map(\.commitVerified) == [true, false, true, true])
        #expect(released.map { $0.attestedBy == v.member.publicKey } == [true, false, true, true])
    }

    /// Fifth review, F2: a current member inserts, right after the first
    /// commit and chained from it, a commit it attests under a newer epoch.
    /// Before, the floor was taken over the walk: it rose to that epoch, so
    /// every later commit of the older epoch was stale and nothing in it
    /// released. Now staleness is judged along each commit's own line: the
    /// genuine commit after the insertion links to the first commit, is not
    /// stale, and links past the member's commit: a member's fork, verified.
    @Test func attackMemberCommitOfANewerEpochInsertedEarly() throws {
        let v = RawKeyVault(label: "early epoch")
        try v.create([[0]])
        for i in 1...2 { try Self.append(v, [[UInt8(i)]], label: "commit \(i)") }
        let (both, original, inserted, cut) = try Self.newerEpochGroup(v, payload: [9])
        try Data(Array(original[0..<cut]) + inserted + Array(original[cut...])).write(to: URL(fileURLWithPath: v.path))
        let vault = try v.open(keys: both)
        #expect(vault.commits.statuses == [.verified, .verified, .verified, .verified])
        // Siblings by stored head (F3): whichever is visited second is the
        // member's fork; neither line is stale.
        let g = vault.structure.groups
        #expect(vault.commits.forks == [g[1].storedHead.lexicographicallyPrecedes(g[2].storedHead) ? 2 : 1])
        let released = releasedRecords(vault)
        #expect(released.map(\.payload) == [[0], [9], [1], [2]])
        #expect(released.map(\.commitVerified) == [true, true, true, true])
    }

    /// A group holding one record (`payload`) that `v`'s member commits
    /// under a new epoch-2 key, chained from the first commit and attested
    /// by itself (what a stolen device writes), not yet in the file. Returns
    /// `v`'s keys with the epoch-2 key added, the file's bytes, the group's
    /// bytes, and the offset after the first commit's group.
    static func newerEpochGroup(_ v: RawKeyVault, payload: [UInt8]) throws -> (keys: KeySet, original: [UInt8], inserted: [UInt8], cut: Int) {
        var both = v.keys
        let newer = EpochKey(epoch: 2, key: try SymmetricKey(using: SeededRandom(label: "epoch 2")), blobKey: nil)
        both.add(newer)
        both.writeKey = newer
        let original = try fileBytes(v.path)
        let s = try v.open().structure
        let cut = Int(s.frames[s.groups[0].commitFrame].end)
        let scratch = v.dir.file("prefix-newer.quire")
        try Data(original[0..<cut]).write(to: URL(fileURLWithPath: scratch))
        let prefix = try VaultFile(path: scratch, writable: true)
        prefix.verifyCommits(keys: both, trustedKeyrings: [:], attestors: [v.member.publicKey])
        try prefix.commit(random: SeededRandom(label: "newer"), options: fast, attestWith: v.member) { (tx: PendingCommit) throws(FormatError) in
            try tx.appendSealed(kind: .entryRevision, payload: payload, compress: false)
        }
        return (both, original, Array(try fileBytes(scratch)[cut...]), cut)
    }

    /// Eighth review, R8-2 item 3: a commit made under a new epoch's key
    /// (one that carries a keyring starting it, format.md §9.2) with a
    /// record sealed under the old key, which a member the keyring removes
    /// still holds. The writer refuses it with a typed error, and nothing is
    /// written.
    @Test func recordsUnderTheOldKeyInAKeyChangeCommitAreRefused() throws {
        let v = RawKeyVault(label: "record in key change")
        try v.create([[0]])
        let before = try fileBytes(v.path)
        let file = try v.open(writable: true)
        let newer = EpochKey(epoch: 2, key: try SymmetricKey(using: SeededRandom(label: "epoch 2 commit")), blobKey: nil)
        var refused = false
        do {
            try file.commit(random: SeededRandom(label: "mixed"), options: fast, attestWith: v.member) { (tx: PendingCommit) throws(FormatError) in
                try tx.appendSealed(kind: .entryRevision, payload: [1], compress: false)
                tx.commitKey = newer
            }
        } catch {
            if case .notWritable = error { refused = true }
        }
        #expect(refused)
        #expect(try fileBytes(v.path) == before)
    }

    /// Third review, item 4: more inserted commits than any look-back window.
    /// The genuine commit after 70 inserted ones links to the head it
    /// extends through the map of stored heads and still verifies.
    @Test func attackSeventyInsertedCommitsPastTheLookBack() throws {
        let v = RawKeyVault(label: "seventy")
        try v.create([[0]])
        try Self.append(v, [[1]], label: "genuine")
        try Self.append(v, [[2]], label: "genuine after")
        for i in 0..<70 { try Self.insertGroup(v, after: i, payloads: [[UInt8(100 + i)]], attestedBy: nil, label: "x\(i)") }
        let vault = try v.open()
        #expect(vault.commits.statuses == [.verified] + Array(repeating: .orphaned, count: 70) + [.verified, .verified])
        #expect(vault.tamperedCommits.isEmpty)
    }

    /// M3 at the format level: the records of a committed group replaced by
    /// an unknown frame of the same size, its commit frame kept. Its head no
    /// longer verifies, yet the next commit chains from its stored head and
    /// no byte of it looks damaged: tampered, not a mismatch.
    @Test func replacedGroupIsTampered() throws {
        let v = RawKeyVault(label: "replaced group")
        try v.create([[0]])
        try Self.append(v, [[1]], label: "second")
        try Self.append(v, [[2]], label: "third")
        let s = try v.open().structure
        let victim = s.frames[s.groups[1].members.lowerBound]
        let size = Int(victim.header.bodyLength) - 32
        let junk = plaintextFrame(kind: 0x9e, keyID: v.epochKey.id.bytes, body: [UInt8](repeating: 0x5a, count: size))
        #expect(junk.count == Int(victim.end - victim.location.offset))
        try overwrite(v.path, at: victim.location.offset, with: junk)
        let vault = try v.open()
        // Nothing shows what it chained from, but the commit before it is
        // attested by a current member: the chain keeps it.
        #expect(vault.commits.statuses == [.verified, .tampered, .verified])
        #expect(vault.commits.tampered == [1])
        #expect(vault.commitIssues.map(\.code) == ["commit_tampered"])
        // Damage there instead (a body hash that no longer matches) is a
        // mismatch: the reader cannot tell it from a bad sector.
        var damaged = junk
        damaged[damaged.count - 1] ^= 1
        try overwrite(v.path, at: victim.location.offset, with: damaged)
        #expect(try v.open().commits.statuses == [.verified, .mismatch, .verified])
    }

    /// A keyless writer appends a junk commit — with a held key id, even one
    /// that copies the last stored head. It is a mismatch, never tampering,
    /// and the next writer passes it by: the vault stays writable and no
    /// commit is demoted.
    @Test func junkCommitsAreNotTampering() throws {
        let v = RawKeyVault(label: "junk commit")
        try v.create([[0]])
        for i in 0..<2 {
            let head = i == 0 ? [UInt8](repeating: 0xa5, count: 32) : try v.open().structure.groups.last!.storedHead
            let record = plaintextFrame(kind: 0x9f, keyID: v.epochKey.id.bytes, body: [UInt8(i)])
            let commit = rawFrameHeader(kind: 2, flags: 0, keyID: v.epochKey.id.bytes, length: 200) + head + [UInt8](repeating: 0x33, count: 168)
            try appendToFile(v.path, record + commit)
            #expect(try v.open().commits.statuses.last == .mismatch)
            try Self.append(v, [[UInt8(10 + i)]], label: "after junk \(i)")
        }
        let vault = try v.open()
        #expect(vault.commits.statuses == [.verified, .mismatch, .verified, .mismatch, .verified])
        #expect(releasedRecords(vault).map(\.commitVerified) == [true, true, true])
    }

    // MARK: Attachments (Spec/format.md §7.4)

    /// A vault whose second commit, attested by its member, stores a
    /// 1,000-byte attachment; and that attachment's manifest.
    static func vaultWithAStoredBlob(_ label: String) throws -> (RawKeyVault, BlobManifest) {
        let v = RawKeyVault(label: label)
        try v.create([[0]])
        let f = try v.open(writable: true)
        var manifest: BlobManifest?
        try f.commit(random: SeededRandom(label: "blob"), options: fast, attestWith: v.member) { (tx: PendingCommit) throws(FormatError) in
            if case .stored(let m) = try tx.appendBlob(from: MemoryByteSource(counting(1000)), mediaType: "text/plain") { manifest = m }
        }
        return (v, try #require(manifest))
    }

    /// M2: a keyless writer copies a chunk frame of an attachment a member
    /// stored and appends it with a junk commit. Before, the copy counted (a
    /// chunk of an unverified commit at or above the floor) and the stream
    /// failed with `chunk_duplicate` for good; now each index takes the
    /// chunk of the highest standing, so the copy is passed over.
    @Test func attackChunkCopyAppendedAfterJunkCommit() throws {
        let (v, m) = try Self.vaultWithAStoredBlob("chunk copy")
        let chunk = try #require(try v.open().structure.frames.first { $0.chunk != nil })
        let copy = Array(try fileBytes(v.path)[Int(chunk.location.offset)..<Int(chunk.end)])
        let junk = rawFrameHeader(kind: 2, flags: 0, keyID: v.epochKey.id.bytes, length: 200) + [UInt8](repeating: 0x33, count: 200)
        try appendToFile(v.path, copy + junk)
        let vault = try v.open()
        #expect(vault.commits.statuses.last == .mismatch)
        #expect(try vault.chunkFrames(for: m) == [chunk.location.index])
    }

    /// Third review, item 14: a member's chunk whose commit no longer
    /// verifies (here its commit frame is damaged) stands as unverified; a
    /// keyless writer appends a copy of it with one body byte changed, with
    /// a junk commit, at the same standing. Before, the two differed at one
    /// standing, so the stream failed with `chunk_duplicate` for good; now
    /// duplicates are judged only among candidates that open (§7.4), and
    /// the altered copy does not.
    @Test func attackAlteredChunkCopyAtTheSameStanding() throws {
        let (v, m) = try Self.vaultWithAStoredBlob("altered chunk copy")
        let before = try v.open()
        let chunk = try #require(before.structure.frames.first { $0.chunk != nil })
        let commitFrame = try #require(before.structure.frames.last)
        let byte = try fileBytes(v.path)[Int(commitFrame.bodyOffset)]
        try overwrite(v.path, at: commitFrame.bodyOffset, with: [byte ^ 0x01])
        var copy = Array(try fileBytes(v.path)[Int(chunk.location.offset)..<Int(chunk.end)])
        let inBody = Int(chunk.bodyOffset - chunk.location.offset) + 100
        copy[inBody] ^= 0x01
        let junk = rawFrameHeader(kind: 2, flags: 0, keyID: v.epochKey.id.bytes, length: 168) + [UInt8](repeating: 0x33, count: 168)
        try appendToFile(v.path, copy + junk)
        let vault = try v.open()
        #expect(vault.standing(ofFrame: chunk.location.index) == 0)
        #expect(vault.standing(ofFrame: vault.structure.frames.count - 2) == 0)
        #expect(try vault.chunkFrames(for: m) == [chunk.location.index])
    }
}
