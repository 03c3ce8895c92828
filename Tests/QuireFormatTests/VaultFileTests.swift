@_spi(Crypto) import QuireCrypto
@_spi(Testing) @_spi(Format) import QuireFormat
import QuireSystem
import Testing

/// A vault made with a raw key, and everything needed to check it. Its
/// commits are attested by `member`, the one key the reader counts as a
/// member unless told otherwise.
struct RawKeyVault {
    let dir = TemporaryDirectory()
    let path: String
    let vaultID: VaultID
    let epochKey: EpochKey
    let blobKey: SymmetricKey
    let keys: KeySet
    let member: Ed25519.KeyPair
    let label: String

    init(label: String, withBlobKey: Bool = true, key: EpochKey? = nil, vaultID: VaultID? = nil) {
        self.label = label
        path = dir.file("v.quire")
        let random = SeededRandom(label: "keys " + label)
        self.vaultID = vaultID ?? VaultID(using: random)
        let blob = try! SymmetricKey(using: random)
        blobKey = blob
        let raw = key?.key ?? (try! SymmetricKey(using: random))
        epochKey = EpochKey(epoch: key?.epoch ?? 1, key: raw, blobKey: withBlobKey ? blob : nil)
        keys = KeySet(single: epochKey)
        member = try! Ed25519.KeyPair(using: random)
    }

    /// Creates the vault with one attested commit of sealed entry revisions.
    @discardableResult
    func create(_ payloads: [[UInt8]], attest: Bool = true) throws -> VaultFile {
        try VaultFile.create(
            at: path, vaultID: vaultID, keys: keys, random: SeededRandom(label: "create " + label), options: fast,
            attestWith: attest ? member : nil
        ) { (tx: PendingCommit) throws(FormatError) in
            for p in payloads { try tx.appendSealed(kind: .entryRevision, payload: p, compress: false) }
        }
    }

    /// Opens the vault and verifies its commits with the raw key.
    func open(writable: Bool = false, keys: KeySet? = nil, trustedKeyrings: [Int: UInt32] = [:], attestors: Set<[UInt8]>? = nil) throws -> VaultFile {
        let vault = try VaultFile(path: path, writable: writable)
        vault.verifyCommits(keys: keys ?? self.keys, trustedKeyrings: trustedKeyrings, attestors: attestors ?? [member.publicKey])
        return vault
    }

    func size() throws -> UInt64 { try FileSystem.size(path) }
}

/// Every committed record of `kinds`, with the issues met.
func records(_ vault: VaultFile, _ kinds: Set<RecordKind> = [.entryRevision]) -> ([[UInt8]], [FormatError]) {
    var out: [[UInt8]] = []
    let issues = vault.forEachRecord(kinds: kinds) { record in
        out.append(record.payload)
        return true
    }
    return (out, issues)
}

/// Every released record of `kinds` as the reader marks it.
func releasedRecords(_ vault: VaultFile, _ kinds: Set<RecordKind> = [.entryRevision]) -> [ReadRecord] {
    var out: [ReadRecord] = []
    _ = vault.forEachRecord(kinds: kinds) { record in
        out.append(record)
        return true
    }
    return out
}

/// The bytes of `path` from `offset`, `count` of them.
func fileBytes(_ path: String, at offset: UInt64, count: Int) throws -> [UInt8] {
    Array(try fileBytes(path)[Int(offset)..<(Int(offset) + count)])
}

@Suite struct VaultFileTests {
    static let payloads: [[UInt8]] = [Array("first entry".utf8), [], SeededRandom(label: "entry 3").bytes(5000), Array("last".utf8)]

    @Test func createThenReadStructureAndRecords() throws {
        let v = RawKeyVault(label: "create")
        let created = try v.create(Self.payloads)
        #expect(created.isWritable)
        #expect(created.vaultID == v.vaultID)
        #expect(created.structure.header == FileHeader(vaultID: v.vaultID))
        #expect(created.structure.headerDamage == .none)
        let s = created.structure
        #expect(s.frames.count == 5)
        #expect(s.frames.map(\.header.kind) == [.entryRevision, .entryRevision, .entryRevision, .entryRevision, .commit])
        var offset: UInt64 = 64
        for (i, p) in Self.payloads.enumerated() {
            #expect(s.frames[i].location == FrameLocation(offset: offset, index: i))
            #expect(Int(s.frames[i].end - offset) == sealedFrameLength(payload: p.count))
            #expect(s.frames[i].header.keyID == v.epochKey.id)
            #expect(!s.frames[i].repaired)
            #expect(s.frames[i].malformation == nil)
            offset = s.frames[i].end
        }
        #expect(s.frames[4].location.offset == offset)
        #expect(s.frames[4].header == CommitChain.commitHeader(keyID: v.epochKey.id))
        #expect(s.groups.count == 1)
        #expect(s.groups[0].members == 0..<4)
        #expect(s.groups[0].commitFrame == 4)
        #expect(!s.groups[0].containsDamage)
        #expect(s.committedEnd == offset + 216)
        #expect(s.fileSize == s.committedEnd)
        #expect(s.tailByteCount == 0)
        #expect(s.committedFrameCount == 5)
        #expect(s.damagedRegions.isEmpty)
        #expect(try v.size() == s.committedEnd)
        #expect(try FileSystem.permissions(v.path) == 0o600)
        #expect(try FileSystem.listDirectory(v.dir.path) == ["v.quire"])
        // The commit head is the chain over the four frame summaries, each
        // header ‖ last 32 bytes, computed from the file's bytes.
        let bytes = try fileBytes(v.path)
        var summaries: [UInt8] = []
        for f in s.frames[0..<4] {
            summaries += bytes[Int(f.location.offset)..<Int(f.location.offset + 16)]
            summaries += bytes[Int(f.end - 32)..<Int(f.end)]
        }
        let d = BLAKE2b.hash(summaries, byteCount: 32)
        #expect(s.groups[0].digest == d)
        let commitKey = try KeyDerivation.derive(from: v.epochKey.key, subkeyID: 2, context: "quire v2")
        let commitFields = Array(bytes[Int(offset)..<Int(offset + 12)])
        // The head covers the stored attestation, body 64..<200 (sixth review R6-1).
        let storedAttestation = Array(bytes[Int(offset + 16 + 64)..<Int(offset + 216)])
        let head = BLAKE2b.mac(Array("quire-chain-v3".utf8) + v.vaultID.bytes + [UInt8](repeating: 0, count: 32) + d + commitFields + storedAttestation,
                               key: commitKey, byteCount: 32)
        #expect(s.groups[0].storedHead == head)
        #expect(Array(bytes[Int(offset + 16)..<Int(offset + 48)]) == head)
        #expect(s.groups[0].commitBody == Array(bytes[Int(offset + 16)...]))

        created.verifyCommits(keys: v.keys, trustedKeyrings: [:], attestors: [v.member.publicKey])
        #expect(created.commits.statuses == [.verified])
        #expect(created.commits.attestations == [.attested(signer: v.member.publicKey)])
        #expect(created.commits.epochs == [1])
        let (payloads, issues) = records(created)
        #expect(payloads == Self.payloads)
        #expect(issues.isEmpty)
        for i in 0..<4 { #expect(try created.openRecord(frame: i) == Self.payloads[i]) }
    }

    @Test func reopenReadOnlyAndVerify() throws {
        let v = RawKeyVault(label: "reopen")
        try v.create(Self.payloads)
        let vault = try v.open()
        #expect(!vault.isWritable)
        #expect(vault.commits.statuses == [.verified])
        #expect(vault.commits.allVerified)
        #expect(vault.commits.attestations == [.attested(signer: v.member.publicKey)])
        #expect(vault.commitIssues.isEmpty)
        let (payloads, issues) = records(vault)
        #expect(payloads == Self.payloads)
        #expect(issues.isEmpty)
        // Other kinds are skipped unopened.
        #expect(records(vault, [.profile]).0.isEmpty)
        // Early stop.
        var seen = 0
        _ = vault.forEachRecord(kinds: [.entryRevision]) { _ in
            seen += 1
            return false
        }
        #expect(seen == 1)
        #expect(throws: FormatError.notWritable(reason: "it was opened read-only")) {
            try vault.commit(random: SeededRandom(label: "x"), options: fast, attestWith: nil) { (_: PendingCommit) throws(FormatError) in }
        }
        // The scanner alone sees the same structure.
        let scanned = try VaultScanner.scan(path: v.path)
        #expect(scanned.frames.map(\.location) == vault.structure.frames.map(\.location))
        #expect(scanned.committedEnd == vault.structure.committedEnd)
    }

    @Test func appendAfterReopen() throws {
        let v = RawKeyVault(label: "append")
        try v.create([Array("one".utf8)])
        let before = try v.size()
        let vault = try v.open(writable: true)
        var location: FrameLocation?
        try vault.commit(random: SeededRandom(label: "append commit"), options: fast, attestWith: v.member) { (tx: PendingCommit) throws(FormatError) in
            location = try tx.appendSealed(kind: .entryRevision, payload: Array("two".utf8), compress: false)
            try tx.appendSealed(kind: .profile, payload: Array("profile".utf8))
            #expect(tx.frameCount == 2)
        }
        #expect(location == FrameLocation(offset: before, index: 2))
        #expect(vault.commits.statuses == [.verified, .verified])
        // A profile is always stored compressed (Spec/format.md §6.1), smaller or not.
        let profileStored = Compression.compress(Array("profile".utf8)).count
        let grown = UInt64(sealedFrameLength(payload: 3) + sealedFrameLength(payload: profileStored) + 216)
        #expect(try v.size() == before + grown)
        #expect(vault.structure.committedEnd == before + grown)
        #expect(vault.structure.groups.count == 2)
        #expect(vault.structure.groups[1].members == 2..<4)
        // The handle reads its own appends, and a fresh one reads everything.
        #expect(records(vault).0 == [Array("one".utf8), Array("two".utf8)])
        let again = try v.open()
        #expect(again.commits.statuses == [.verified, .verified])
        #expect(again.commits.attestations == [.attested(signer: v.member.publicKey), .attested(signer: v.member.publicKey)])
        #expect(records(again, [.entryRevision, .profile]).0 == [Array("one".utf8), Array("two".utf8), Array("profile".utf8)])
        // The second commit chains on the first.
        let s = again.structure
        var digest = CommitChain.Digest()
        for f in s.frames[2..<4] { digest.add(header: f.headerBytes, trailer: try fileBytes(v.path, at: f.end - 32, count: 32)) }
        let d = digest.finalize()
        #expect(s.groups[1].storedHead == (try CommitChain.head(
            key: v.epochKey, vaultID: v.vaultID, previousHead: s.groups[0].storedHead, digest: d,
            commitHeader: CommitChain.commitHeader(keyID: v.epochKey.id), body: s.groups[1].commitBody)))
    }

    @Test func commitNeedsAWriteKey() throws {
        let v = RawKeyVault(label: "no key")
        try v.create([[1]])
        let vault = try VaultFile(path: v.path, writable: true)
        #expect(throws: FormatError.notWritable(reason: "no epoch key to write with is unlocked")) {
            try vault.commit(random: SeededRandom(label: "x"), options: fast, attestWith: nil) { (_: PendingCommit) throws(FormatError) in }
        }
    }

    @Test func createRefusesAnExistingPath() throws {
        let v = RawKeyVault(label: "exists")
        try v.create([[1]])
        let size = try v.size()
        #expect(throws: FormatError.alreadyExists(path: v.path)) { try v.create([[2]]) }
        #expect(try v.size() == size)
        #expect(try FileSystem.listDirectory(v.dir.path) == ["v.quire"])
    }

    @Test func failedBuildLeavesNothing() throws {
        let v = RawKeyVault(label: "rollback")
        try v.create([[1]])
        let size = try v.size()
        let vault = try v.open(writable: true)
        // Large enough to flush the 4 MiB buffer to disk before the failure.
        let big = SeededRandom(label: "big").bytes(1 << 20)
        #expect(throws: FormatError.notWritable(reason: "test failure")) {
            try vault.commit(random: SeededRandom(label: "r"), options: fast, attestWith: v.member) { (tx: PendingCommit) throws(FormatError) in
                for _ in 0..<5 { try tx.appendSealed(kind: .entryRevision, payload: big, compress: false) }
                throw FormatError.notWritable(reason: "test failure")
            }
        }
        #expect(try v.size() == size)
        #expect(vault.structure.frames.count == 2)
        // The handle still works.
        try vault.commit(random: SeededRandom(label: "r2"), options: fast, attestWith: v.member) { (tx: PendingCommit) throws(FormatError) in
            try tx.appendSealed(kind: .entryRevision, payload: [2], compress: false)
        }
        #expect(records(try v.open()).0 == [[1], [2]])
    }

    @Test func garbageTailIsReportedAndCutByTheNextCommit() throws {
        let v = RawKeyVault(label: "tail")
        try v.create(Self.payloads)
        let committed = try v.size()
        let garbage = [UInt8](repeating: 0xab, count: 70) + SeededRandom(label: "garbage").bytes(30)
        try appendToFile(v.path, garbage)
        let vault = try v.open(writable: true)
        #expect(vault.structure.tailByteCount == 100)
        #expect(vault.structure.fileSize == committed + 100)
        #expect(vault.structure.committedEnd == committed)
        #expect(vault.structure.uncommittedFrames.isEmpty)
        #expect(vault.structure.damagedRegions.isEmpty)
        #expect(vault.commits.statuses == [.verified])
        #expect(records(vault).0 == Self.payloads)
        try vault.commit(random: SeededRandom(label: "after tail"), options: fast, attestWith: v.member) { (tx: PendingCommit) throws(FormatError) in
            try tx.appendSealed(kind: .entryRevision, payload: Array("next".utf8), compress: false)
        }
        let expected = committed + UInt64(sealedFrameLength(payload: 4) + 216)
        #expect(try v.size() == expected)
        #expect(vault.structure.tailByteCount == 0)
        let again = try v.open()
        #expect(again.structure.tailByteCount == 0)
        #expect(again.commits.statuses == [.verified, .verified])
        #expect(records(again).0 == Self.payloads + [Array("next".utf8)])
    }

    @Test func uncommittedFramesAreTailAndNeverReleased() throws {
        let v = RawKeyVault(label: "uncommitted")
        try v.create([Array("kept".utf8)])
        let committed = try v.size()
        let orphan = try SealedFrame.seal(
            kind: .entryRevision, payload: Array("orphan".utf8), key: v.epochKey, vaultID: v.vaultID, compress: false,
            random: SeededRandom(label: "orphan"))
        try appendToFile(v.path, orphan)
        let vault = try v.open()
        #expect(vault.structure.uncommittedFrames == 2..<3)
        #expect(vault.structure.committedFrameCount == 2)
        #expect(vault.structure.tailByteCount == UInt64(orphan.count))
        #expect(records(vault).0 == [Array("kept".utf8)])
        #expect(vault.releaseVerdict(frame: 2) == .tornTail(offset: committed, byteCount: UInt64(orphan.count), uncommittedFrameCount: 1))
        #expect(vault.releaseVerdict(frame: 0) == nil)
        // A frame cut off by the end of the file is tail too.
        try appendToFile(v.path, Array(orphan.prefix(30)))
        let cut = try v.open()
        #expect(cut.structure.uncommittedFrames == 2..<3)
        #expect(cut.structure.tailByteCount == UInt64(orphan.count + 30))
    }

    @Test func truncatedCommitFallsBackToThePreviousOne() throws {
        let v = RawKeyVault(label: "torn commit")
        try v.create([[1]])
        let first = try v.size()
        let vault = try v.open(writable: true)
        try vault.commit(random: SeededRandom(label: "c2"), options: fast, attestWith: v.member) { (tx: PendingCommit) throws(FormatError) in
            try tx.appendSealed(kind: .entryRevision, payload: [2], compress: false)
        }
        let full = try v.size()
        try SystemFile(path: v.path, mode: .readWrite).truncate(to: full - 5)
        let torn = try v.open(writable: true)
        #expect(torn.structure.groups.count == 1)
        #expect(torn.structure.committedEnd == first)
        #expect(torn.structure.tailByteCount == full - 5 - first)
        #expect(records(torn).0 == [[1]])
        try torn.commit(random: SeededRandom(label: "c3"), options: fast, attestWith: v.member) { (tx: PendingCommit) throws(FormatError) in
            try tx.appendSealed(kind: .entryRevision, payload: [3], compress: false)
        }
        #expect(try v.size() == first + UInt64(sealedFrameLength(payload: 1) + 216))
        #expect(records(try v.open()).0 == [[1], [3]])
    }

    @Test func keysAreFoundByKeyID() throws {
        let v = RawKeyVault(label: "keys")
        try v.create(Self.payloads)
        let commitLocation = try v.open().structure.frames[4].location
        let id = v.epochKey.id
        // Another key has another key id: nothing of this vault names it.
        let other = try v.open(keys: KeySet(single: EpochKey(epoch: 1, key: try SymmetricKey(bytes: counting(32)))))
        #expect(other.commits.statuses == [.unverifiable])
        #expect(other.commits.attestations == [.notChecked])
        #expect(other.commitIssues == [.commitUnverifiable(commitLocation, keyID: id)])
        let (payloads, issues) = records(other)
        #expect(payloads.isEmpty)
        #expect(issues == other.structure.frames[0..<4].map { .unknownKey($0.location, keyID: id) })

        let none = try v.open(keys: KeySet())
        #expect(none.commits.statuses == [.unverifiable])
        #expect(none.commitIssues == [.commitUnverifiable(commitLocation, keyID: id)])
        #expect(records(none).1 == none.structure.frames[0..<4].map { .unknownKey($0.location, keyID: id) })

        // The same key under another epoch number is the same key: the
        // number is not in the frames (Spec/format.md §5.1).
        let renumbered = try v.open(keys: KeySet(single: EpochKey(epoch: 2, key: v.epochKey.key)))
        #expect(renumbered.commits.statuses == [.verified])
        #expect(renumbered.commits.epochs == [2])
        #expect(records(renumbered).0 == Self.payloads)
    }

    @Test func collidingKeyIDsAreBothTried() throws {
        // The vault is written under the first of two keys that share a key
        // id; the reader's other key with that id must not hide it.
        let v = RawKeyVault(label: "collision", key: CollidingKeys.first(epoch: 1))
        try v.create(Self.payloads)
        #expect(try v.open().structure.frames.allSatisfy { $0.header.keyID == CollidingKeys.id })
        for order in [[CollidingKeys.first(epoch: 1), CollidingKeys.second(epoch: 2)], [CollidingKeys.second(epoch: 2), CollidingKeys.first(epoch: 1)]] {
            var both = KeySet()
            for k in order { both.add(k) }
            let vault = try v.open(keys: both)
            #expect(vault.commits.statuses == [.verified])
            #expect(vault.commits.epochs == [1])
            #expect(vault.commits.attestations == [.attested(signer: v.member.publicKey)])
            #expect(records(vault) == (Self.payloads, []))
        }
        // Holding only the other key with that id: the commit is a mismatch,
        // not unverifiable, and the records do not authenticate.
        let wrong = try v.open(keys: KeySet(single: CollidingKeys.second(epoch: 2)))
        #expect(wrong.commits.statuses == [.mismatch])
        #expect(wrong.commitIssues == [.commitMismatch(wrong.structure.frames[4].location)])
        #expect(records(wrong).1 == wrong.structure.frames[0..<4].map { .authenticationFailed($0.location) })
    }

    @Test func mismatchUnderCollidingKeysUsesTheSmallestCommitment() throws {
        // Spec/format.md §9.3 step 3: a commit that verifies under no
        // candidate is computed with the first one, in ascending order of key
        // commitment: the same verdict whatever order the keys were added in.
        let v = RawKeyVault(label: "collision mismatch", key: CollidingKeys.first(epoch: 1))
        try v.create([[1]])
        let record = try v.open().structure.frames[0]
        try overwrite(v.path, at: record.end - 1, with: [~(try fileBytes(v.path)[Int(record.end - 1)])])
        let second = CollidingKeys.second(epoch: 2)
        for order in [[CollidingKeys.first(epoch: 1), second], [second, CollidingKeys.first(epoch: 1)]] {
            var both = KeySet()
            for k in order { both.add(k) }
            let vault = try v.open(keys: both)
            let group = vault.structure.groups[0]
            #expect(vault.commits.statuses == [.mismatch])
            #expect(vault.commits.epochs == [2])
            #expect(vault.commits.computedHeads == [try CommitChain.head(
                key: second, vaultID: v.vaultID, previousHead: CommitChain.genesisHead, digest: group.digest,
                commitHeader: CommitChain.commitHeader(keyID: CollidingKeys.id), body: group.commitBody)])
        }
    }

    @Test func unverifiedCommitTriesOnlyKeysAtOrAboveItsFloor() throws {
        // Spec/format.md §9.3 release step 2: in a commit that is a mismatch,
        // a record is tried only with the candidates of its key id whose
        // epoch is at least the floor. Here a record sealed under an epoch-1
        // key, after a trusted epoch-2 keyring, shares its key id with the
        // epoch-2 key: it is tried under that key alone and does not open.
        let v = RawKeyVault(label: "floor candidates", key: CollidingKeys.first(epoch: 1))
        _ = try VaultFile.create(at: v.path, vaultID: v.vaultID, keys: v.keys, random: SeededRandom(label: "floor create"), options: fast,
                             attestWith: v.member) { (tx: PendingCommit) throws(FormatError) in
            _ = try tx.appendPlaintext(kind: .keyring, keyID: CollidingKeys.id, epoch: 2, body: Array("a keyring".utf8))
            // A commit that starts an epoch is made under its key (§9.2).
            tx.commitKey = CollidingKeys.second(epoch: 2)
        }
        try v.open(writable: true).commit(random: SeededRandom(label: "floor commit"), options: fast, attestWith: v.member) {
            (tx: PendingCommit) throws(FormatError) in
            try tx.appendSealed(kind: .entryRevision, payload: [7], compress: false)
        }
        let commit = try v.open().structure.frames.last!
        try overwrite(v.path, at: commit.bodyOffset, with: [~(try fileBytes(v.path)[Int(commit.bodyOffset)])])
        var both = KeySet()
        both.add(CollidingKeys.first(epoch: 1))
        both.add(CollidingKeys.second(epoch: 2))
        let vault = try v.open(keys: both, trustedKeyrings: [0: 2])
        #expect(vault.commits.statuses == [.verified, .mismatch])
        let record = vault.structure.frames[2]
        #expect(records(vault) == ([], [.authenticationFailed(record.location)]))
        #expect(vault.openingKey(frame: 2) == nil)
    }

    @Test func chainCoversHeadersAndBodyHashesOnly() throws {
        // Spec/format.md §9.2: a frame's summary is its header and its body
        // hash. Damage elsewhere in a body leaves the commit verified and
        // the record unreleased; damage to a body hash breaks the commit.
        let v = RawKeyVault(label: "damage")
        try v.create(Self.payloads)
        let vault = try v.open()
        let frame0 = vault.structure.frames[0]
        let frame2 = vault.structure.frames[2]
        // A ciphertext byte.
        let ciphertext = frame2.bodyOffset + 24 + 100
        try overwrite(v.path, at: ciphertext, with: [0x5a ^ (try fileBytes(v.path)[Int(ciphertext)])])
        let a = try v.open()
        #expect(a.commits.statuses == [.verified])
        let (pa, ia) = records(a)
        #expect(pa == [Self.payloads[0], Self.payloads[1], Self.payloads[3]])
        #expect(ia == [.authenticationFailed(frame2.location)])
        // A tag byte (the 16 bytes before the body hash).
        let tag = frame0.end - 33
        try overwrite(v.path, at: tag, with: [~(try fileBytes(v.path)[Int(tag)])])
        let b = try v.open()
        #expect(b.commits.statuses == [.verified])
        #expect(records(b).1 == [.authenticationFailed(frame0.location), .authenticationFailed(frame2.location)])
        // A body hash byte.
        let bodyHash = frame0.end - 1
        try overwrite(v.path, at: bodyHash, with: [~(try fileBytes(v.path)[Int(bodyHash)])])
        let c = try v.open()
        #expect(c.commits.statuses == [.mismatch])
        #expect(c.commits.attestations == [.notChecked])
        #expect(records(c).1 == [.authenticationFailed(frame0.location), .authenticationFailed(frame2.location)])
    }

    @Test func keyHolderRewriteKeepingTheTagIsNotReleased() throws {
        // Issue 12 §2: someone who holds the epoch key rewrites a committed
        // record so that its Poly1305 tag stays the same. The commit still
        // verifies (header and body hash unchanged), and the body hash stops
        // the record (Spec/format.md §4.2).
        let v = RawKeyVault(label: "rewrite", key: testEpochKey(), vaultID: countingVaultID)
        let original = SealedFrameTests.handSealed(plaintext: padded(counting(100)))
        _ = try VaultFile.create(
            at: v.path, vaultID: v.vaultID, keys: v.keys, random: SeededRandom(label: "rewrite"), options: fast, attestWith: v.member
        ) { (tx: PendingCommit) throws(FormatError) in
            try tx.appendSealed(kind: .entryRevision, payload: [1], compress: false)
            try tx.appendRaw(frame: original)
        }
        let before = try v.open()
        let frame = before.structure.frames[1]
        #expect(try fileBytes(v.path, at: frame.location.offset, count: original.count) == original)
        #expect(records(before).0 == [[1], counting(100)])

        let forged = SealedFrameTests.keyHolderRewrite(of: original)
        try overwrite(v.path, at: frame.location.offset, with: forged)
        let after = try v.open()
        #expect(after.commits.statuses == [.verified])
        #expect(after.commits.attestations == [.attested(signer: v.member.publicKey)])
        #expect(records(after) == ([[1]], [.authenticationFailed(frame.location)]))

        // Making the body hash match the rewrite breaks the commit instead:
        // the record authenticates, so it is released, but only as unverified.
        try overwrite(v.path, at: frame.location.offset, with: withBodyHashRecomputed(forged))
        let rehashed = try v.open()
        #expect(rehashed.commits.statuses == [.mismatch])
        let released = releasedRecords(rehashed)
        #expect(released.count == 2)
        #expect(released[1].payload != counting(100) && released[1].payload.count == 100)
        #expect(!released[1].commitVerified && released[1].attestedBy == nil)
    }

    @Test func flippedHeaderBitIsRepaired() throws {
        let v = RawKeyVault(label: "repair")
        try v.create(Self.payloads)
        let original = try v.open().structure
        let offset = original.frames[1].location.offset + 8  // a body-length byte
        try overwrite(v.path, at: offset, with: [(try fileBytes(v.path)[Int(offset)]) ^ 0x04])
        let vault = try v.open()
        #expect(vault.structure.frames.count == 5)
        #expect(vault.structure.frames[1].repaired)
        #expect(vault.structure.frames[1].header == original.frames[1].header)
        #expect(vault.structure.frames[1].headerBytes == original.frames[1].headerBytes)
        #expect(vault.structure.frames.filter(\.repaired).count == 1)
        #expect(vault.commits.statuses == [.verified])
        #expect(records(vault).0 == Self.payloads)
    }

    @Test func destroyedHeaderIsSkippedAsDamage() throws {
        let v = RawKeyVault(label: "resync")
        try v.create(Self.payloads)
        let original = try v.open().structure
        let victim = original.frames[2]
        try overwrite(v.path, at: victim.location.offset, with: [UInt8](repeating: 0, count: 16))
        let vault = try v.open()
        #expect(vault.structure.frames.count == 4)
        #expect(vault.structure.damagedRegions.map(\.offset) == [victim.location.offset])
        #expect(vault.structure.damagedRegions.map(\.byteCount) == [victim.end - victim.location.offset])
        #expect(vault.structure.groups.count == 1)
        #expect(vault.structure.groups[0].containsDamage)
        #expect(vault.commits.statuses == [.mismatch])
        #expect(records(vault).0 == [Self.payloads[0], Self.payloads[1], Self.payloads[3]])
    }

    @Test func fileHeaderDamageIsReported() throws {
        let v = RawKeyVault(label: "header")
        try v.create([[1]])
        try overwrite(v.path, at: 40, with: [0xff])
        let vault = try v.open()
        #expect(vault.structure.headerDamage == .copyDamaged(index: 1))
        #expect(vault.vaultID == v.vaultID)
        #expect(records(vault).0 == [[1]])
    }

    @Test func notVaults() throws {
        let dir = TemporaryDirectory()
        let missing = dir.file("missing.quire")
        #expect(throws: FormatError.io(SystemError(operation: "open", path: missing, code: 2))) { try VaultFile(path: missing) }
        let short = dir.file("short")
        try appendToFile2(short, counting(63))
        #expect(throws: FormatError.truncatedHeader(fileByteCount: 63)) { try VaultScanner.scan(path: short) }
        let text = dir.file("text")
        try appendToFile2(text, Array(String(repeating: "Dear diary, ", count: 20).utf8))
        #expect(throws: FormatError.notAVault) { try VaultFile(path: text) }
        // A vault of the development version 1 is refused with its own message.
        let v1 = dir.file("v1.quire")
        let copy = FileHeaderTests.copy(version: 1)
        try appendToFile2(v1, copy + copy)
        #expect(throws: FormatError.unsupportedVersion(1)) { try VaultFile(path: v1) }
    }

    @Test func plaintextAndUnknownKinds() throws {
        let v = RawKeyVault(label: "kinds")
        try v.create([[1]])
        let vault = try v.open(writable: true)
        let data = Array("unknown but skippable".utf8)
        let unknown = RecordKind(rawValue: 0xfe)
        let raw = plaintextFrame(kind: 0xfe, keyID: v.epochKey.id.bytes, body: data)
        try vault.commit(random: SeededRandom(label: "kinds"), options: fast, attestWith: v.member) { (tx: PendingCommit) throws(FormatError) in
            let location = try tx.appendPlaintext(kind: RecordKind(rawValue: 0x81), keyID: tx.key.id, body: Array("request".utf8))
            #expect(location.index == 2)
            try tx.appendRaw(frame: raw)
        }
        // appendPlaintext writes body ‖ BLAKE2b-256(body).
        let f = try v.open().structure.frames[2]
        #expect(try fileBytes(v.path, at: f.location.offset, count: Int(f.end - f.location.offset))
            == plaintextFrame(kind: 0x81, keyID: v.epochKey.id.bytes, body: Array("request".utf8)))
        let again = try v.open()
        #expect(records(again, [RecordKind(rawValue: 0x81)]).0 == [Array("request".utf8)])
        #expect(records(again, [unknown]).0 == [data])
        #expect(again.structure.frames[2].checksumIntact == true)
        #expect(again.structure.frames[3].trailer == BLAKE2b.hash(data, byteCount: 32))
        // Only keyring bodies are kept in memory by the scan.
        #expect(again.structure.frames[2].plaintextBody == nil)
        #expect(again.fatalCriticalKind == nil)
        #expect(again.skippedCriticalKinds.isEmpty)
    }

    @Test func plaintextFrameWithAWrongBodyHashIsNotReleased() throws {
        // Spec/format.md §4.2: a plaintext frame's body hash is checked like
        // a sealed one's, whatever its kind.
        let v = RawKeyVault(label: "plaintext hash")
        try v.create([[1]])
        let vault = try v.open(writable: true)
        let data = Array("a future kind".utf8)
        let wrong = plaintextFrame(kind: 0xfe, keyID: v.epochKey.id.bytes, body: data, trailer: BLAKE2b.hash(data + [0], byteCount: 32))
        let right = plaintextFrame(kind: 0xfe, keyID: v.epochKey.id.bytes, body: data)
        try vault.commit(random: SeededRandom(label: "hash"), options: fast, attestWith: v.member) { (tx: PendingCommit) throws(FormatError) in
            try tx.appendRaw(frame: wrong)
            try tx.appendRaw(frame: right)
        }
        let again = try v.open()
        // The chain covers the frame as written: the commit verifies.
        #expect(again.commits.statuses == [.verified, .verified])
        let frames = again.structure.frames
        #expect(frames[2].checksumIntact == false && frames[3].checksumIntact == true)
        #expect(records(again, [RecordKind(rawValue: 0xfe)]) == ([data], [.authenticationFailed(frames[2].location)]))
        #expect(throws: FormatError.authenticationFailed(frames[2].location)) { try again.openRecord(frame: 2) }
        // Damage after writing, on a frame that was right: the same.
        try overwrite(v.path, at: frames[3].bodyOffset, with: [data[0] ^ 1])
        let damaged = try v.open()
        #expect(damaged.commits.statuses == [.verified, .verified])
        #expect(records(damaged, [RecordKind(rawValue: 0xfe)]).1 == [.authenticationFailed(frames[2].location), .authenticationFailed(frames[3].location)])
    }

    @Test func keyringFramesEndWithTheirIDAndAreWrittenTwice() throws {
        let v = RawKeyVault(label: "keyring frames")
        try v.create([[1]])
        let signer = keyPair(seed: counting(32, from: 0x60))
        let next = EpochKey(epoch: 2, key: try SymmetricKey(bytes: counting(32, from: 9)))
        let record = try KeyringRecord.seal(
            content: KeyringRecordTests.content(), signer: signer, key: next, vaultID: v.vaultID,
            publicPart: KeyringRecordTests.publicPart(key: next), random: SeededRandom(label: "keyring frame"))
        let body = record.encodedBody()
        let vault = try v.open(writable: true)
        try vault.commit(random: SeededRandom(label: "keyring commit"), options: fast, attestWith: v.member) { (tx: PendingCommit) throws(FormatError) in
            try tx.appendKeyring(keyID: next.id, epoch: 2, body: body)
            try tx.appendSealed(kind: .entryRevision, payload: [2], compress: false)
        }
        // keyring, record, second copy, commit; the copies byte for byte the same.
        let s = try v.open().structure
        #expect(s.frames[2...].map(\.header.kind) == [.keyring, .entryRevision, .keyring, .commit])
        let first = try fileBytes(v.path, at: s.frames[2].location.offset, count: Int(s.frames[2].end - s.frames[2].location.offset))
        let second = try fileBytes(v.path, at: s.frames[4].location.offset, count: Int(s.frames[4].end - s.frames[4].location.offset))
        #expect(first == second)
        #expect(first == plaintextFrame(kind: 0x01, keyID: next.id.bytes, body: body))
        // The body hash is the keyring id, and the scan keeps the body.
        #expect(s.frames[2].trailer == KeyringRecord.id(ofBody: body).bytes)
        #expect(s.frames[2].plaintextBody == body)
        #expect(s.frames[2].checksumIntact == true)
        #expect(vault.trustedKeyrings == [2: 2, 4: 2])
        let again = try v.open()
        #expect(records(again, [.keyring]).0 == [body, body])
        #expect(try KeyringRecord(body: again.openRecord(frame: 2), location: nil) == record)
    }

    @Test func appendRawRejectsBadFrames() throws {
        let v = RawKeyVault(label: "raw")
        try v.create([[1]])
        let vault = try v.open(writable: true)
        let start = vault.structure.committedEnd
        try vault.commit(random: SeededRandom(label: "raw"), options: fast, attestWith: v.member) { (tx: PendingCommit) throws(FormatError) in
            let location = FrameLocation(offset: start, index: 2)
            let reason = "not a whole, checked, non-commit frame"
            let good = plaintextFrame(kind: 0x81, keyID: v.epochKey.id.bytes, body: counting(8))
            #expect(throws: FormatError.malformedFrame(location, reason: reason)) { try tx.appendRaw(frame: Array(good.dropLast())) }
            #expect(throws: FormatError.malformedFrame(location, reason: reason)) { try tx.appendRaw(frame: good + [0]) }
            #expect(throws: FormatError.malformedFrame(location, reason: reason)) { try tx.appendRaw(frame: flipped(good, at: 2)) }
            let commit = CommitChain.commitHeader(keyID: v.epochKey.id).encoded() + counting(200)
            #expect(throws: FormatError.malformedFrame(location, reason: reason)) { try tx.appendRaw(frame: commit) }
            #expect(try tx.appendRaw(frame: good) == location)
        }
    }
}

/// Writes `bytes` to a new file at `path`.
func appendToFile2(_ path: String, _ bytes: [UInt8]) throws {
    let file = try SystemFile(path: path, mode: .createExclusive(permissions: 0o600))
    try file.write(bytes, at: 0)
}

// MARK: - Attestation (Spec/format.md §9.4)

@Suite struct AttestationTests {
    /// The last commit frame's body offset in the vault at `path`.
    static func lastCommitBody(_ vault: VaultFile) -> (offset: UInt64, location: FrameLocation) {
        let frame = vault.structure.frames[vault.structure.groups.last!.commitFrame]
        return (frame.bodyOffset, frame.location)
    }

    @Test func attestedRecordsNameTheirMember() throws {
        let v = RawKeyVault(label: "attested")
        try v.create([[1], [2]])
        let vault = try v.open()
        #expect(vault.commits.statuses == [.verified])
        #expect(vault.commits.attestations == [.attested(signer: v.member.publicKey)])
        #expect(vault.commits.isAttested(0))
        #expect(vault.commits.attestor(0) == v.member.publicKey)
        #expect(vault.attestation(ofFrame: 0) == .attested(signer: v.member.publicKey))
        #expect(vault.attestation(ofFrame: 2) == .attested(signer: v.member.publicKey))
        #expect(vault.commitIssues.isEmpty)
        let released = releasedRecords(vault)
        #expect(released.map(\.payload) == [[1], [2]])
        #expect(released.allSatisfy { $0.commitVerified && $0.attestedBy == v.member.publicKey })
        // The sealed attestation is signer ‖ Ed25519 over "quire-commit-v2" ‖
        // vault id ‖ key commitment ‖ h_0 ‖ D, under the attestation key.
        let (offset, _) = Self.lastCommitBody(vault)
        let body = try fileBytes(v.path, at: offset, count: 200)
        let header = CommitChain.commitHeader(keyID: v.epochKey.id)
        let attestationKey = try KeyDerivation.derive(from: v.epochKey.key, subkeyID: 4, context: "quire v2")
        let a = try XChaCha20Poly1305.open(
            Array(body[88...]), key: attestationKey, nonce: Array(body[64..<88]),
            authenticating: v.vaultID.bytes + header.fieldBytes + CommitChain.genesisHead + vault.structure.groups[0].digest)
        #expect(Array(a[0..<32]) == v.member.publicKey)
        #expect(Ed25519.verify(
            signature: Array(a[32...]), message: Array("quire-commit-v2".utf8) + v.vaultID.bytes + v.epochKey.commitment + CommitChain.genesisHead + vault.structure.groups[0].digest,
            publicKey: v.member.publicKey))
    }

    @Test func standingChecksOnlyItsOwnCommitsAttestation() throws {
        let v = RawKeyVault(label: "standing")
        try v.create([Array("one".utf8)])
        let writer = try v.open(writable: true)
        for i in 0..<3 {
            try writer.commit(random: SeededRandom(label: "standing \(i)"), options: fast, attestWith: v.member) { (tx: PendingCommit) throws(FormatError) in
                try tx.appendSealed(kind: .entryRevision, payload: [UInt8(i)], compress: false)
            }
        }
        let vault = try v.open()
        #expect(vault.structure.groups.count == 4)
        // The first commit raises the floor to epoch 1: checked on opening.
        #expect(vault.uncheckedAttestationCount == 3)
        // Frame 4 is in the third commit: its standing needs that commit's
        // attestation and no other.
        #expect(vault.structure.groupIndex(ofFrame: 4) == 2)
        #expect(vault.standing(ofFrame: 4) == 2)
        #expect(vault.uncheckedAttestationCount == 2)
        #expect(vault.standing(ofFrame: 4) == 2)
        #expect(vault.uncheckedAttestationCount == 2)
        #expect(vault.commits.attestations.allSatisfy { $0 == .attested(signer: v.member.publicKey) })
        #expect(vault.uncheckedAttestationCount == 0)
    }

    @Test func statusesAndOneGroupsAttestationCheckNoOtherAttestation() throws {
        let v = RawKeyVault(label: "statuses")
        try v.create([Array("one".utf8)])
        let writer = try v.open(writable: true)
        for i in 0..<3 {
            try writer.commit(random: SeededRandom(label: "statuses \(i)"), options: fast, attestWith: v.member) { (tx: PendingCommit) throws(FormatError) in
                try tx.appendSealed(kind: .entryRevision, payload: [UInt8(i)], compress: false)
            }
        }
        let vault = try v.open()
        #expect(vault.uncheckedAttestationCount == 3)
        #expect(vault.commitStatuses == [.verified, .verified, .verified, .verified])
        #expect(vault.uncheckedAttestationCount == 3)
        #expect(vault.attestation(ofGroup: 3) == .attested(signer: v.member.publicKey))
        #expect(vault.uncheckedAttestationCount == 2)
        #expect(vault.attestation(ofGroup: 4) == .notChecked)
    }

    @Test func unattestedIsNotAnIssue() throws {
        let v = RawKeyVault(label: "unattested")
        try v.create([[1]], attest: false)
        let vault = try v.open()
        #expect(vault.commits.statuses == [.verified])
        #expect(vault.commits.attestations == [.unattested])
        #expect(!vault.commits.isAttested(0))
        #expect(vault.commits.attestor(0) == nil)
        #expect(vault.commitIssues.isEmpty)
        let released = releasedRecords(vault)
        #expect(released.map(\.payload) == [[1]])
        #expect(released[0].commitVerified && released[0].attestedBy == nil)
        // The sealed part holds 96 zero bytes.
        let (offset, _) = Self.lastCommitBody(vault)
        let body = try fileBytes(v.path, at: offset, count: 200)
        let attestationKey = try KeyDerivation.derive(from: v.epochKey.key, subkeyID: 4, context: "quire v2")
        let header = CommitChain.commitHeader(keyID: v.epochKey.id)
        #expect(try XChaCha20Poly1305.open(
            Array(body[88...]), key: attestationKey, nonce: Array(body[64..<88]),
            authenticating: v.vaultID.bytes + header.fieldBytes + CommitChain.genesisHead + vault.structure.groups[0].digest)
            == [UInt8](repeating: 0, count: 96))
    }

    /// Sixth review R6-1: the head covers the stored attestation (body
    /// 64..<200). Before, a flipped byte there left the head verifying and
    /// the commit read as verified but unattested (`attestation_failed`),
    /// which anyone could cause in place; now the commit's head does not
    /// verify, and its records are unverified.
    @Test func flippedAttestationByteBreaksTheHead() throws {
        let v = RawKeyVault(label: "flipped attestation")
        try v.create([[1]])
        let (offset, _) = Self.lastCommitBody(try v.open())
        for i in [64, 87, 88, 132, 199] {
            let at = offset + UInt64(i)
            let original = try fileBytes(v.path)[Int(at)]
            try overwrite(v.path, at: at, with: [original ^ 0x10])
            let vault = try v.open()
            #expect(vault.commits.statuses == [.mismatch], "byte \(i)")
            #expect(vault.commits.attestations == [.notChecked], "byte \(i)")
            #expect(vault.commitIssues.map(\.code) == ["commit_mismatch"], "byte \(i)")
            let released = releasedRecords(vault)
            #expect(released.map(\.payload) == [[1]])
            #expect(!released[0].commitVerified && released[0].attestedBy == nil)
            try overwrite(v.path, at: at, with: [original])
        }
        #expect(try v.open().commits.attestations == [.attested(signer: v.member.publicKey)])
    }

    /// Replaces the stored attestation of the vault's only commit with
    /// `stored` (136 bytes) and its head with the head computed over it, as
    /// a holder of the epoch key can: the head verifies, and only the
    /// attestation is judged.
    static func rewriteOnlyCommit(_ v: RawKeyVault, stored: [UInt8]) throws {
        let vault = try v.open()
        let (offset, _) = lastCommitBody(vault)
        let head = try CommitChain.head(
            key: v.epochKey, vaultID: v.vaultID, previousHead: CommitChain.genesisHead, digest: vault.structure.groups[0].digest,
            commitHeader: CommitChain.commitHeader(keyID: v.epochKey.id), storedAttestation: stored)
        try overwrite(v.path, at: offset, with: head)
        try overwrite(v.path, at: offset + 64, with: stored)
    }

    @Test func signerWhoIsNotAMemberFails() throws {
        let v = RawKeyVault(label: "outsider")
        try v.create([[1]])
        let outsider = keyPair(seed: counting(32, from: 0xc0))
        let writer = try v.open(writable: true)
        try writer.commit(random: SeededRandom(label: "outsider"), options: fast, attestWith: outsider) { (tx: PendingCommit) throws(FormatError) in
            try tx.appendSealed(kind: .entryRevision, payload: [2], compress: false)
        }
        let vault = try v.open()
        let location = vault.structure.frames[3].location
        #expect(vault.commits.statuses == [.verified, .verified])
        #expect(vault.commits.attestations == [.attested(signer: v.member.publicKey), .failed(reason: "the signer is not a member of this vault")])
        #expect(vault.commitIssues == [.attestationFailed(location, reason: "the signer is not a member of this vault")])
        #expect(releasedRecords(vault).map(\.attestedBy) == [v.member.publicKey, nil])
        // Who counts as a member is the key layer's to say.
        let widened = try v.open(attestors: [v.member.publicKey, outsider.publicKey])
        #expect(widened.commits.attestations == [.attested(signer: v.member.publicKey), .attested(signer: outsider.publicKey)])
        let nobody = try v.open(attestors: [])
        #expect(nobody.commits.attestations.allSatisfy { $0 == .failed(reason: "the signer is not a member of this vault") })
    }

    @Test func nonSyntheticNonceFails() throws {
        let v = RawKeyVault(label: "nonce")
        try v.create([[1]])
        let vault = try v.open()
        let (offset, location) = Self.lastCommitBody(vault)
        let body = try fileBytes(v.path, at: offset, count: 200)
        // Re-seal the same attestation under another nonce: it opens, but the
        // commit is no longer the deterministic one.
        let header = CommitChain.commitHeader(keyID: v.epochKey.id)
        let attestationKey = try KeyDerivation.derive(from: v.epochKey.key, subkeyID: 4, context: "quire v2")
        let ad = v.vaultID.bytes + header.fieldBytes + CommitChain.genesisHead + vault.structure.groups[0].digest
        let a = try XChaCha20Poly1305.open(Array(body[88...]), key: attestationKey, nonce: Array(body[64..<88]), authenticating: ad)
        let nonce = counting(24, from: 0x33)
        try Self.rewriteOnlyCommit(v, stored: nonce + XChaCha20Poly1305.seal(a, key: attestationKey, nonce: nonce, authenticating: ad))
        let after = try v.open()
        #expect(after.commits.statuses == [.verified])
        #expect(after.commits.attestations == [.failed(reason: "the attestation's nonce is not derived from it")])
        #expect(after.commitIssues == [.attestationFailed(location, reason: "the attestation's nonce is not derived from it")])
        #expect(releasedRecords(after).map(\.attestedBy) == [nil])
    }

    @Test func unattestedCommitUnderAnotherNonceFailsItsAttestation() throws {
        // Spec/format.md §9.4: the nonce is checked before A = 0⁹⁶ is read
        // as unattested; a zero attestation under another nonce fails. Its
        // records are released as verified and unattested either way.
        let v = RawKeyVault(label: "unattested nonce")
        try v.create([[1]], attest: false)
        let header = CommitChain.commitHeader(keyID: v.epochKey.id)
        let attestationKey = try KeyDerivation.derive(from: v.epochKey.key, subkeyID: 4, context: "quire v2")
        let ad = v.vaultID.bytes + header.fieldBytes + CommitChain.genesisHead + (try v.open()).structure.groups[0].digest
        let nonce = counting(24, from: 0x44)
        try Self.rewriteOnlyCommit(v, stored: nonce + XChaCha20Poly1305.seal(CommitChain.unattested, key: attestationKey, nonce: nonce, authenticating: ad))
        let after = try v.open()
        #expect(after.commits.statuses == [.verified])
        #expect(after.commits.attestations == [.failed(reason: "the attestation's nonce is not derived from it")])
        #expect(after.commitIssues.map(\.code) == ["attestation_failed"])
        #expect(releasedRecords(after).map(\.attestedBy) == [nil])
    }

    @Test func onlyVerifiedCommitsAreChecked() throws {
        let v = RawKeyVault(label: "not checked")
        try v.create([[1]])
        #expect(try v.open(keys: KeySet()).commits.attestations == [.notChecked])
        let s = try v.open().structure
        try overwrite(v.path, at: s.frames[0].end - 1, with: [~(try fileBytes(v.path)[Int(s.frames[0].end - 1)])])
        let broken = try v.open()
        #expect(broken.commits.statuses == [.mismatch])
        #expect(broken.commits.attestations == [.notChecked])
        #expect(broken.commitIssues == [.commitMismatch(s.frames[1].location)])
    }
}

// MARK: - Unknown critical kinds (Spec/format.md §4.3)

@Suite struct CriticalKindTests {
    static let kind = RecordKind(rawValue: 0x7f)

    /// A vault whose second commit holds an unknown critical frame,
    /// attested by `signer` (nil: unattested).
    static func vault(_ label: String, signer: (RawKeyVault) -> Ed25519.KeyPair?) throws -> (RawKeyVault, FrameLocation) {
        let v = RawKeyVault(label: label)
        try v.create([[1]])
        let writer = try v.open(writable: true)
        let raw = plaintextFrame(kind: 0x7f, keyID: v.epochKey.id.bytes, body: counting(40))
        var location: FrameLocation?
        try writer.commit(random: SeededRandom(label: label), options: fast, attestWith: signer(v)) { (tx: PendingCommit) throws(FormatError) in
            try tx.appendSealed(kind: .entryRevision, payload: [2], compress: false)
            location = try tx.appendRaw(frame: raw)
        }
        return (v, location!)
    }

    @Test func fatalInAVerifiedAttestedCommit() throws {
        let (v, location) = try Self.vault("attested critical") { $0.member }
        // Scanning alone never stops at it: only keys can tell.
        let scanned = try VaultFile(path: v.path)
        #expect(scanned.structure.frames[3].header.kind == Self.kind)
        let vault = try v.open()
        #expect(vault.commits.statuses == [.verified, .verified])
        #expect(vault.commits.isAttested(1))
        #expect(vault.fatalCriticalKind == .unknownCriticalKind(location, kind: 0x7f))
        #expect(vault.skippedCriticalKinds.isEmpty)
        #expect(FormatError.unknownCriticalKind(location, kind: 0x7f).code == "unknown_critical_kind")
    }

    @Test func skippedInAnUnattestedCommit() throws {
        let (v, location) = try Self.vault("unattested critical") { _ in nil }
        let vault = try v.open()
        #expect(vault.commits.statuses == [.verified, .verified])
        #expect(vault.commits.attestations[1] == .unattested)
        #expect(vault.fatalCriticalKind == nil)
        #expect(vault.skippedCriticalKinds == [.unknownCriticalKind(location, kind: 0x7f)])
        // The vault opens; its records are read.
        #expect(records(vault).0 == [[1], [2]])
    }

    @Test func skippedWhenTheAttestationFails() throws {
        let (v, location) = try Self.vault("outsider critical") { _ in keyPair(seed: counting(32, from: 0xc0)) }
        let vault = try v.open()
        #expect(vault.commits.statuses == [.verified, .verified])
        #expect(vault.commits.attestations[1] == .failed(reason: "the signer is not a member of this vault"))
        #expect(vault.fatalCriticalKind == nil)
        #expect(vault.skippedCriticalKinds == [.unknownCriticalKind(location, kind: 0x7f)])
    }

    @Test func skippedWhenTheCommitIsNotVerified() throws {
        let (v, location) = try Self.vault("unverified critical") { $0.member }
        // No key: unverifiable.
        let keyless = try v.open(keys: KeySet())
        #expect(keyless.commits.statuses == [.unverifiable, .unverifiable])
        #expect(keyless.fatalCriticalKind == nil)
        #expect(keyless.skippedCriticalKinds == [.unknownCriticalKind(location, kind: 0x7f)])
        // A damaged body hash in its commit: a mismatch.
        let record = try v.open().structure.frames[2]
        try overwrite(v.path, at: record.end - 1, with: [~(try fileBytes(v.path)[Int(record.end - 1)])])
        let broken = try v.open()
        #expect(broken.commits.statuses == [.verified, .mismatch])
        #expect(broken.fatalCriticalKind == nil)
        #expect(broken.skippedCriticalKinds == [.unknownCriticalKind(location, kind: 0x7f)])
    }

    @Test func skippedInAStaleCommit() throws {
        // A keyring of epoch 2 is trusted in commit 2; commit 3, attested by
        // a member but made with the epoch-1 key, is stale (Spec/format.md §9.3).
        let v = RawKeyVault(label: "stale critical")
        try v.create([[1]])
        let writer = try v.open(writable: true)
        var keyring = 0
        // The keyring's commit is made under its epoch-2 key (§9.2).
        let epoch2 = CollidingKeys.second(epoch: 2)
        try writer.commit(random: SeededRandom(label: "keyring"), options: fast, attestWith: v.member) { (tx: PendingCommit) throws(FormatError) in
            keyring = try tx.appendPlaintext(kind: .keyring, keyID: epoch2.id, epoch: 2, body: counting(40), trusted: true).index
            tx.commitKey = epoch2
        }
        var location: FrameLocation?
        try writer.commit(random: SeededRandom(label: "stale"), options: fast, attestWith: v.member) { (tx: PendingCommit) throws(FormatError) in
            location = try tx.appendRaw(frame: plaintextFrame(kind: 0x7f, keyID: v.epochKey.id.bytes, body: counting(40)))
        }
        var keys = v.keys
        keys.add(epoch2)
        let vault = try v.open(keys: keys, trustedKeyrings: [keyring: 2])
        #expect(vault.commits.statuses == [.verified, .verified, .stale(epoch: 1, current: 2)])
        #expect(vault.commits.attestations[2] == .notChecked)
        #expect(vault.fatalCriticalKind == nil)
        #expect(vault.skippedCriticalKinds == [.unknownCriticalKind(location!, kind: 0x7f)])
        #expect(vault.commitIssues == [.staleEpoch(vault.structure.frames[location!.index + 1].location, epoch: 1, currentEpoch: 2)])
    }

    @Test func notReportedInTheTornTail() throws {
        let v = RawKeyVault(label: "tail critical")
        try v.create([[1]])
        try appendToFile(v.path, plaintextFrame(kind: 0x7f, keyID: v.epochKey.id.bytes, body: counting(40)))
        let vault = try v.open()
        #expect(vault.structure.uncommittedFrames == 2..<3)
        #expect(vault.fatalCriticalKind == nil)
        #expect(vault.skippedCriticalKinds.isEmpty)
    }

    /// Finding the unknown critical frames reads every frame's kind: a
    /// handle searches once however often it is asked, a commit extends
    /// what was found instead of searching again, and the answers follow
    /// the commit (one that writes such a frame, attested, makes it fatal).
    @Test func searchedOnceAndExtendedByACommit() throws {
        let v = RawKeyVault(label: "searched once")
        try v.create([[1]])
        let writer = try v.open(writable: true)
        for i in 0..<20 {
            try writer.commit(random: SeededRandom(label: "once \(i)"), options: fast, attestWith: v.member) {
                (tx: PendingCommit) throws(FormatError) in
                try tx.appendSealed(kind: .entryRevision, payload: [UInt8(i)], compress: false)
            }
        }
        let reader = try v.open()
        #expect(reader.structure.groups.count == 21)
        let unchecked = reader.uncheckedAttestationCount
        #expect(unchecked == 20)
        #expect(reader.unknownCriticalSearchCount == 0)
        for _ in 0..<3 {
            #expect(reader.fatalCriticalKind == nil)
            #expect(reader.skippedCriticalKinds.isEmpty)
        }
        #expect(reader.unknownCriticalSearchCount == 1)
        // No frame of an unknown critical kind: no attestation is checked.
        #expect(reader.uncheckedAttestationCount == unchecked)

        #expect(writer.fatalCriticalKind == nil)
        #expect(writer.unknownCriticalSearchCount == 1)
        var location: FrameLocation?
        try writer.commit(random: SeededRandom(label: "once critical"), options: fast, attestWith: v.member) {
            (tx: PendingCommit) throws(FormatError) in
            location = try tx.appendRaw(frame: plaintextFrame(kind: 0x7f, keyID: v.epochKey.id.bytes, body: counting(40)))
        }
        #expect(writer.fatalCriticalKind == .unknownCriticalKind(location!, kind: 0x7f))
        #expect(writer.skippedCriticalKinds.isEmpty)
        #expect(writer.unknownCriticalSearchCount == 1)
        // A fresh handle finds the same, searching once.
        let again = try v.open()
        #expect(again.fatalCriticalKind == .unknownCriticalKind(location!, kind: 0x7f))
        #expect(again.fatalCriticalKind == .unknownCriticalKind(location!, kind: 0x7f))
        #expect(again.unknownCriticalSearchCount == 1)
        // Only the attestation of the commit holding it was checked.
        #expect(again.uncheckedAttestationCount == 20)
    }

    @Test func unknownNonCriticalKindsAreSkippedSilently() throws {
        let v = RawKeyVault(label: "non-critical")
        try v.create([[1]])
        let writer = try v.open(writable: true)
        try writer.commit(random: SeededRandom(label: "nc"), options: fast, attestWith: v.member) { (tx: PendingCommit) throws(FormatError) in
            try tx.appendRaw(frame: plaintextFrame(kind: 0x80 | 0x7f, keyID: v.epochKey.id.bytes, body: counting(40)))
        }
        let vault = try v.open()
        #expect(vault.commits.isAttested(1))
        #expect(vault.fatalCriticalKind == nil)
        #expect(vault.skippedCriticalKinds.isEmpty)
    }
}

// MARK: - Attachments (Spec/format.md §7)

@Suite struct BlobTests {
    static let mediaType = "application/x-test"

    /// The padded stream of `content`: content ‖ 0x80 ‖ zeros, Padmé(N + 1)
    /// bytes in all (written from the definition).
    static func stream(_ content: [UInt8]) -> [UInt8] { padded(content) }

    // Sizes: empty (one chunk holding 0x80), one byte, a chunk's worth less
    // one (content and marker fill one chunk exactly), one chunk (the
    // padding spills into a second chunk), one more, the spec's 70,000
    // (two chunks of 65,536 and 6,144), three chunks (the padding spills into
    // a fourth), 4,259,830 bytes (the marker ends chunk 64; chunk 65 is
    // all padding), and sizes around the 1 MiB batches that are sealed by
    // two threads at once (a last batch that is full, empty, or short).
    @Test(arguments: [(0, 1), (1, 1), (65535, 1), (65536, 2), (65537, 2), (70000, 2), (3 * 65536, 4), (3 * 65536 + 1, 4), (4_259_830, 66),
                     (1_048_575, 16), (1_048_576, 17), (2_097_155, 33)])
    func writeAndRead(size: Int, chunks: Int) throws {
        let v = RawKeyVault(label: "blob \(size)")
        try v.create([[0]])
        let content = SeededRandom(label: "content \(size)").bytes(size)
        let stream = Self.stream(content)
        #expect((stream.count + 65535) / 65536 == chunks)
        #expect(UInt64(stream.count) == Padding.streamByteCount(contentByteCount: UInt64(size)))
        let vault = try v.open(writable: true)
        let firstNew = vault.structure.frames.count
        var stored: StoredBlob?
        try vault.commit(random: SeededRandom(label: "blob commit"), options: fast, attestWith: v.member) { (tx: PendingCommit) throws(FormatError) in
            stored = try tx.appendBlob(from: MemoryByteSource(content), mediaType: Self.mediaType)
            #expect(tx.frameCount == chunks + 1)
        }
        guard case .stored(let manifest) = stored else {
            Issue.record("expected a stored blob, got \(String(describing: stored))")
            return
        }
        #expect(manifest.byteCount == UInt64(size))
        #expect(manifest.mediaType == Self.mediaType)
        #expect(manifest.aliases.isEmpty)
        #expect(manifest.blob == BlobID(content: content, blobKey: v.blobKey))
        #expect(manifest.chunkCount == UInt64(chunks))
        #expect(stored?.blob == manifest.blob)
        #expect(stored?.byteCount == UInt64(size))

        // The frames: n chunks of one stream, then the manifest. Every chunk
        // but the last holds 65,536 stream bytes; the last holds the rest.
        let frames = Array(vault.structure.frames[firstNew...])
        #expect(frames.count == chunks + 2)
        for (i, f) in frames[0..<chunks].enumerated() {
            #expect(f.header.kind == .blobChunk)
            #expect(f.header.flags == FrameHeader.sealedFlag)
            #expect(f.chunk == ChunkHeader(stream: manifest.stream, index: UInt32(i), isFinal: i == chunks - 1))
            let count = i == chunks - 1 ? stream.count - (chunks - 1) * 65536 : 65536
            #expect(Int(f.header.bodyLength) == 24 + 21 + count + 16)
        }
        #expect(frames[chunks].header.kind == .blobManifest)
        #expect(frames[chunks + 1].header.kind == .commit)

        // Read back through a fresh handle.
        let again = try v.open()
        #expect(again.commits.allVerified)
        let manifests = records(again, [.blobManifest]).0.map { try? BlobManifest(decoding: $0) }
        #expect(manifests == [manifest])
        #expect(again.streamIndex[manifest.stream] == Array(firstNew..<(firstNew + chunks)))
        #expect(try again.chunkFrames(for: manifest) == Array(firstNew..<(firstNew + chunks)))
        let reader = try again.openBlob(manifest, blobKey: v.blobKey)
        #expect(reader.chunkCount == chunks)
        #expect(try reader.readAll() == content)
        // Each chunk opened alone is its slice of the content: the padding
        // is left out (a chunk of padding alone gives no bytes).
        for i in Set([0, chunks / 2, chunks - 1]) {
            let lower = min(content.count, i * 65536), upper = min(content.count, i * 65536 + 65536)
            #expect(try reader.chunk(i) == Array(content[lower..<upper]), "chunk \(i)")
        }
        // Streaming in odd-sized pieces gives the same bytes.
        let streaming = try again.openBlob(manifest, blobKey: v.blobKey)
        var collected: [UInt8] = []
        var piece = [UInt8](repeating: 0, count: 1000)
        while true {
            let n = try piece.withUnsafeMutableBytes { try streaming.read(into: $0) }
            if n == 0 { break }
            collected += piece[0..<n]
        }
        #expect(collected == content)
        // Borrowed a batch at a time: the same bytes.
        let borrowing = try again.openBlob(manifest, blobKey: v.blobKey)
        var borrowed: [UInt8] = []
        while true {
            let piece = try borrowing.nextContent()
            if piece.isEmpty { break }
            #expect(piece.count <= 1 << 20)
            borrowed += piece
        }
        #expect(borrowed == content)
        // Chunks are not records.
        #expect(records(again, [.blobChunk]).0.isEmpty)
    }

    // The chunk frames are byte for byte those of sealing the padded stream
    // one chunk at a time, in order, with the nonces drawn in chunk order
    // after the stream id (how a writer made them before batches, and how
    // the vectors were made): whole batches, a last batch the content ends
    // in, and padding that runs over one batch into the next (33,554,433
    // bytes: Padmé rounds to 1 MiB there, so the last 1 MiB − 1 bytes of
    // the stream are padding, most of them in a batch of their own).
    @Test(arguments: [0, 65_535, 1_048_576, 1_048_576 + 70_000, 33_554_433])
    func chunkFramesAreThoseOfSealingOneChunkAtATime(size: Int) throws {
        let v = RawKeyVault(label: "one at a time \(size)")
        try v.create([[0]])
        let content = SeededRandom(label: "one at a time content").bytes(size)
        let vault = try v.open(writable: true)
        let firstNew = vault.structure.frames.count
        let seed = "one at a time commit \(size)"
        var key: EpochKey?
        var stored: StoredBlob?
        let random = SeededRandom(label: seed)
        try vault.commit(random: random, options: fast, attestWith: v.member) { (tx: PendingCommit) throws(FormatError) in
            key = tx.key
            stored = try tx.appendBlob(from: MemoryByteSource(content), mediaType: Self.mediaType)
        }
        guard case .stored(let manifest) = stored, let key else {
            Issue.record("expected a stored blob, got \(String(describing: stored))")
            return
        }
        let replay = SeededRandom(label: seed)
        let stream = StreamID(using: replay)
        #expect(manifest.stream == stream)
        let padded = Self.stream(content)
        let chunkCount = (padded.count + 65535) / 65536
        #expect(manifest.chunkCount == UInt64(chunkCount))
        let file = try fileBytes(v.path)
        for i in 0..<chunkCount {
            let plain = Array(padded[(i * 65536)..<min(padded.count, (i + 1) * 65536)])
            var expected = [UInt8](repeating: 0, count: FrameHeader.byteCount + SealedFrame.chunkBodyLength(plaintextCount: plain.count))
            let chunk = ChunkHeader(stream: stream, index: UInt32(i), isFinal: i == chunkCount - 1)
            try expected.withUnsafeMutableBytes { out in
                try plain.withUnsafeBytes { p in
                    try SealedFrame.sealChunk(plaintext: p, into: out, chunk: chunk, key: key, vaultID: v.vaultID, random: replay)
                }
            }
            let frame = vault.structure.frames[firstNew + i]
            let start = Int(frame.location.offset)
            let written = Array(file[start..<min(file.count, start + expected.count)])
            if written != expected {
                Issue.record("chunk \(i) of \(chunkCount) differs")
                return
            }
        }
    }

    @Test func aliasesAreWrittenAndTheBlobIDIsNotItsOwnAlias() throws {
        let v = RawKeyVault(label: "aliases")
        try v.create([[0]])
        let content = Array("rekeyed content".utf8)
        let id = BlobID(content: content, blobKey: v.blobKey)
        let old = BlobID(using: SeededRandom(label: "old id"))
        let vault = try v.open(writable: true)
        var stored: StoredBlob?
        try vault.commit(random: SeededRandom(label: "aliases"), options: fast, attestWith: v.member) { (tx: PendingCommit) throws(FormatError) in
            stored = try tx.appendBlob(from: MemoryByteSource(content), mediaType: "text/plain", aliases: [old, id])
        }
        guard case .stored(let manifest) = stored else {
            Issue.record("not stored")
            return
        }
        #expect(manifest.blob == id)
        #expect(manifest.aliases == [old])
        #expect(manifest.answers(to: old))
        let again = try v.open()
        #expect(records(again, [.blobManifest]).0.map { try? BlobManifest(decoding: $0) } == [manifest])
    }

    @Test func deduplicatedBlobAppendsNothing() throws {
        let v = RawKeyVault(label: "dedup")
        try v.create([[0]])
        let content = SeededRandom(label: "dedup content").bytes(100_000)
        let vault = try v.open(writable: true)
        var first: StoredBlob?
        try vault.commit(random: SeededRandom(label: "d1"), options: fast, attestWith: v.member) { (tx: PendingCommit) throws(FormatError) in
            first = try tx.appendBlob(from: MemoryByteSource(content), mediaType: "image/jpeg")
        }
        let blob = try #require(first?.blob)
        let before = try v.size()
        let framesBefore = vault.structure.frames.count
        var second: StoredBlob?
        var asked: [BlobID] = []
        try vault.commit(random: SeededRandom(label: "d2"), options: fast, attestWith: v.member) { (tx: PendingCommit) throws(FormatError) in
            try tx.appendSealed(kind: .entryRevision, payload: [7], compress: false)
            second = try tx.appendBlob(from: MemoryByteSource(content), mediaType: "image/jpeg") { id in
                asked.append(id)
                return id == blob
            }
            #expect(tx.frameCount == 1)
            try tx.appendSealed(kind: .entryRevision, payload: [8], compress: false)
        }
        #expect(asked == [blob])
        #expect(second == .deduplicated(blob, byteCount: 100_000))
        #expect(second?.byteCount == 100_000)
        #expect(try v.size() == before + UInt64(2 * sealedFrameLength(payload: 1) + 216))
        #expect(vault.structure.frames.count == framesBefore + 3)
        let again = try v.open()
        #expect(again.commits.allVerified)
        #expect(again.streamIndex.count == 1)
        #expect(records(again).0 == [[0], [7], [8]])
    }

    // A marker where the manifest's size puts it, then a byte that is not
    // zero after 20 that are: bad padding (Spec/format.md §7.4 step 7),
    // found past the first word of the zeros.
    @Test func aByteAfterTheMarkerThatIsNotZeroIsBadPadding() throws {
        let v = RawKeyVault(label: "nonzero padding")
        try v.create([[0]])
        // 65,558 bytes: 0x80 at 65,536, zeros, 1 at 65,557; the stream is
        // 67,584 bytes, as for 65,536 bytes of content.
        let content = SeededRandom(label: "nonzero padding content").bytes(65536) + [0x80] + [UInt8](repeating: 0, count: 20) + [1]
        let vault = try v.open(writable: true)
        var stored: StoredBlob?
        try vault.commit(random: SeededRandom(label: "n"), options: fast, attestWith: v.member) { (tx: PendingCommit) throws(FormatError) in
            stored = try tx.appendBlob(from: MemoryByteSource(content), mediaType: "x")
        }
        guard case .stored(let m) = stored else {
            Issue.record("not stored")
            return
        }
        let again = try v.open()
        #expect(try again.openBlob(m, blobKey: v.blobKey).readAll() == content)
        let cut = try again.openBlob(BlobManifest(blob: m.blob, stream: m.stream, byteCount: 65536), blobKey: v.blobKey)
        #expect(throws: QuireError.fromFormat(FormatError.blobPaddingInvalid(blob: m.blob.description))) { try cut.readAll() }
    }

    @Test func blobNeedsTheBlobKey() throws {
        let v = RawKeyVault(label: "no blob key", withBlobKey: false)
        try v.create([[0]])
        let vault = try v.open(writable: true)
        let size = try v.size()
        #expect(throws: FormatError.notWritable(reason: "no blob key is unlocked")) {
            try vault.commit(random: SeededRandom(label: "b"), options: fast, attestWith: v.member) { (tx: PendingCommit) throws(FormatError) in
                _ = try tx.appendBlob(from: MemoryByteSource([1, 2, 3]), mediaType: "x")
            }
        }
        #expect(try v.size() == size)
    }

    @Test func manifestsThatDoNotMatchTheirChunks() throws {
        let v = RawKeyVault(label: "mismatch")
        try v.create([[0]])
        // 65,537 bytes: a 67,584-byte stream in two chunks (65,536 and 2,048).
        let content = SeededRandom(label: "mismatch content").bytes(65537)
        let vault = try v.open(writable: true)
        var stored: StoredBlob?
        try vault.commit(random: SeededRandom(label: "m"), options: fast, attestWith: v.member) { (tx: PendingCommit) throws(FormatError) in
            stored = try tx.appendBlob(from: MemoryByteSource(content), mediaType: "x")
        }
        guard case .stored(let m) = stored else {
            Issue.record("not stored")
            return
        }
        let again = try v.open()
        let otherStream = StreamID(using: SeededRandom(label: "other stream"))
        #expect(throws: FormatError.chunkMissing(stream: otherStream.description, index: 0)) {
            try again.openBlob(BlobManifest(blob: m.blob, stream: otherStream, byteCount: 10), blobKey: v.blobKey)
        }
        // The manifest wants 3 chunks (Padmé(131,074) = 135,168), the stream has 2.
        #expect(throws: FormatError.blobSizeMismatch(blob: m.blob.description, expected: 131_073, actual: 131_072)) {
            try again.openBlob(BlobManifest(blob: m.blob, stream: m.stream, byteCount: 131_073), blobKey: v.blobKey)
        }
        // The manifest wants 1 chunk (Padmé(65,536) = 65,536), the stream has 2.
        #expect(throws: FormatError.blobSizeMismatch(blob: m.blob.description, expected: 65535, actual: 65535)) {
            try again.openBlob(BlobManifest(blob: m.blob, stream: m.stream, byteCount: 65535), blobKey: v.blobKey)
        }
        // 65,536 bytes would need two chunks too (65,536 and 2,048): the same
        // stream, but the marker is not where that size puts it.
        let shifted = try again.openBlob(BlobManifest(blob: m.blob, stream: m.stream, byteCount: 65536), blobKey: v.blobKey)
        #expect(throws: QuireError.fromFormat(FormatError.blobPaddingInvalid(blob: m.blob.description))) { try shifted.readAll() }
        // 65,600 bytes: Padmé(65,601) = 67,584, the same stream length; the
        // size takes the marker for content and finds a zero where it should be.
        let longer = try again.openBlob(BlobManifest(blob: m.blob, stream: m.stream, byteCount: 65600), blobKey: v.blobKey)
        #expect(throws: QuireError.fromFormat(FormatError.blobPaddingInvalid(blob: m.blob.description))) { try longer.readAll() }
        #expect(FormatError.blobPaddingInvalid(blob: m.blob.description).code == "bad_padding")
        // 70,000 bytes: Padmé(70,001) = 71,680, two chunks like this stream's,
        // but the stream is only 67,584 bytes: its length is not Padmé(N + 1)
        // (Spec/format.md §7.4 step 7), so bad_padding, not a size mismatch
        // (which is about the number of chunks, step 6).
        let shorter = try again.openBlob(BlobManifest(blob: m.blob, stream: m.stream, byteCount: 70_000), blobKey: v.blobKey)
        #expect(throws: QuireError.fromFormat(FormatError.blobPaddingInvalid(blob: m.blob.description))) { try shorter.readAll() }
        // Another id: found when the stream ends.
        let otherID = BlobID(using: SeededRandom(label: "other id"))
        let wrongID = try again.openBlob(BlobManifest(blob: otherID, stream: m.stream, byteCount: 65537), blobKey: v.blobKey)
        #expect(throws: QuireError.fromFormat(FormatError.blobIDMismatch(blob: otherID.description))) { try wrongID.readAll() }
        // Another blob key: the id does not match either.
        let wrongKey = try again.openBlob(m, blobKey: try SymmetricKey(bytes: counting(32)))
        #expect(throws: QuireError.fromFormat(FormatError.blobIDMismatch(blob: m.blob.description))) { try wrongKey.readAll() }
        // Without a blob key the id is not checked.
        #expect(try again.openBlob(BlobManifest(blob: otherID, stream: m.stream, byteCount: 65537), blobKey: nil).readAll() == content)
        // Control.
        #expect(try again.openBlob(m, blobKey: v.blobKey).readAll() == content)
    }

    // MARK: Hand-made streams

    /// Commits the stream bytes `stream` as chunks of 65,536 (the last
    /// final) and a manifest saying `size`, with the blob id of `content`.
    static func commitStream(
        _ v: RawKeyVault, stream: [UInt8], size: Int, content: [UInt8], chunkSizes: [Int]? = nil
    ) throws -> BlobManifest {
        let label = "hand stream \(size) \(hex(BLAKE2b.hash(stream, byteCount: 16)))"
        let id = StreamID(using: SeededRandom(label: label))
        let nonces = SeededRandom(label: label + " nonces")
        let sizes = chunkSizes ?? stride(from: 0, to: stream.count, by: 65536).map { min(65536, stream.count - $0) }
        var frames: [[UInt8]] = []
        var start = 0
        for (i, n) in sizes.enumerated() {
            frames.append(try SealedFrameTests.sealChunk(
                Array(stream[start..<(start + n)]), ChunkHeader(stream: id, index: UInt32(i), isFinal: i == sizes.count - 1), key: v.epochKey,
                vaultID: v.vaultID, random: nonces))
            start += n
        }
        let manifest = BlobManifest(
            blob: BlobID(content: content, blobKey: v.blobKey), stream: id, byteCount: UInt64(size), mediaType: "x")
        let writer = try v.open(writable: true)
        try writer.commit(random: SeededRandom(label: "hand"), options: fast, attestWith: v.member) { (tx: PendingCommit) throws(FormatError) in
            for f in frames { try tx.appendRaw(frame: f) }
            try tx.appendSealed(kind: .blobManifest, payload: manifest.encoded(), compress: false)
        }
        return manifest
    }

    static func read(_ v: RawKeyVault, _ manifest: BlobManifest) -> Result<[UInt8], FormatError> {
        Result { () throws(FormatError) -> [UInt8] in
            let vault: VaultFile
            do { vault = try v.open() } catch { throw .notWritable(reason: "test: \(error)") }
            return try vault.openBlob(manifest, blobKey: v.blobKey).readAllChecked()
        }
    }

    @Test func handMadeCanonicalStreamsRead() throws {
        let v = RawKeyVault(label: "hand canonical")
        try v.create([[0]])
        for n in [0, 10, 65535, 65536] {
            let content = SeededRandom(label: "hand \(n)").bytes(n)
            let m = try Self.commitStream(v, stream: padded(content), size: n, content: content)
            #expect(Self.read(v, m) == .success(content), "\(n)")
        }
    }

    @Test func badStreamPaddingIsDetected() throws {
        // Spec/format.md §7.4 step 7: S[N] = 0x80, zeros after it, and
        // |S| = Padmé(N + 1); else bad_padding at the manifest.
        let v = RawKeyVault(label: "hand padding")
        try v.create([[0]])
        let content = counting(10)  // Padmé(11) = 12: content ‖ 80 00
        let cases: [(String, [UInt8])] = [
            ("marker 0x81", content + [0x81, 0x00]),
            ("no marker", content + [0x00, 0x00]),
            ("a non-zero byte after the marker", content + [0x80, 0x01]),
            ("one byte too long", content + [0x80, 0x00, 0x00]),
            ("one byte too short", content + [0x80]),
        ]
        for (what, stream) in cases {
            let m = try Self.commitStream(v, stream: stream, size: 10, content: content)
            #expect(Self.read(v, m) == .failure(.blobPaddingInvalid(blob: m.blob.description)), "\(what)")
        }
        // In a chunk of its own after a full chunk of content (N = 65,536):
        // 0x80 and 2,047 zeros.
        let full = SeededRandom(label: "full chunk").bytes(65536)
        let good = try Self.commitStream(v, stream: padded(full), size: 65536, content: full)
        #expect(Self.read(v, good) == .success(full))
        var late = padded(full)
        late[late.count - 1] = 1
        let m1 = try Self.commitStream(v, stream: late, size: 65536, content: full)
        #expect(Self.read(v, m1) == .failure(.blobPaddingInvalid(blob: m1.blob.description)))
        let m2 = try Self.commitStream(v, stream: Array(padded(full).dropLast()), size: 65536, content: full)
        #expect(Self.read(v, m2) == .failure(.blobPaddingInvalid(blob: m2.blob.description)))
        // A last chunk too short to hold the content: the right number of
        // chunks, but |S| is not Padmé(N + 1).
        let cut = SeededRandom(label: "cut").bytes(70000)
        let m4 = try Self.commitStream(v, stream: Array(cut[0..<66536]), size: 70000, content: cut)
        #expect(Self.read(v, m4) == .failure(.blobPaddingInvalid(blob: m4.blob.description)))
        // Per-chunk padding (format 1's layout) is not a canonical stream:
        // 65,537 bytes as a full chunk and a padded chunk of 1 byte.
        let big = SeededRandom(label: "per chunk").bytes(65537)
        let perChunk = Array(big[0..<65536]) + padded([big[65536]])
        let m3 = try Self.commitStream(v, stream: perChunk, size: 65537, content: big)
        #expect(Self.read(v, m3) == .failure(.blobPaddingInvalid(blob: m3.blob.description)))
    }

    @Test func chunkStructureIsCheckedBeforeAnyKey() throws {
        let v = RawKeyVault(label: "hand structure")
        try v.create([[0]])
        let content = SeededRandom(label: "structure").bytes(70000)  // 71,680 bytes: 65,536 + 6,144
        let stream = padded(content)
        // A short chunk that is not final.
        let short = try Self.commitStream(v, stream: stream, size: 70000, content: content, chunkSizes: [65535, 6145])
        let vault = try v.open(keys: KeySet())
        #expect(throws: FormatError.chunkNoncanonical(stream: short.stream.description, index: 0, reason: "a non-final chunk must hold exactly 65536 bytes")) {
            try vault.chunkFrames(for: short)
        }
    }

    @Test func largeDeduplicatedBlobRollsBackFlushedChunks() throws {
        let v = RawKeyVault(label: "big dedup")
        try v.create([[0]])
        let content = SeededRandom(label: "big dedup content").bytes(5 << 20)
        let vault = try v.open(writable: true)
        var first: StoredBlob?
        try vault.commit(random: SeededRandom(label: "b1"), options: fast, attestWith: v.member) { (tx: PendingCommit) throws(FormatError) in
            first = try tx.appendBlob(from: MemoryByteSource(content), mediaType: "video/mp4")
        }
        guard case .stored(let manifest) = first else {
            Issue.record("not stored")
            return
        }
        // Padmé(5 MiB + 1) = 5,373,952: 82 chunks, the last two all padding.
        #expect(manifest.chunkCount == 82)
        let before = try v.size()
        var second: StoredBlob?
        try vault.commit(random: SeededRandom(label: "b2"), options: fast, attestWith: v.member) { (tx: PendingCommit) throws(FormatError) in
            try tx.appendSealed(kind: .entryRevision, payload: [1], compress: false)
            second = try tx.appendBlob(from: MemoryByteSource(content), mediaType: "video/mp4") { $0 == manifest.blob }
            try tx.appendSealed(kind: .entryRevision, payload: [2], compress: false)
        }
        #expect(second == .deduplicated(manifest.blob, byteCount: 5 << 20))
        #expect(try v.size() == before + UInt64(2 * sealedFrameLength(payload: 1) + 216))
        let again = try v.open()
        #expect(again.commits.allVerified)
        #expect(again.structure.tailByteCount == 0)
        #expect(records(again).0 == [[0], [1], [2]])
        #expect(try again.openBlob(manifest, blobKey: v.blobKey).readAll() == content)
    }
}

@Suite struct ConcurrentWriterTests {
    @Test func twoHandlesInterleaveCommits() throws {
        let v = RawKeyVault(label: "two writers")
        try v.create([[0]])
        let a = try v.open(writable: true)
        let b = try v.open(writable: true)
        for round in 1...3 {
            try a.commit(random: SeededRandom(label: "a \(round)"), options: fast, attestWith: v.member) { (tx: PendingCommit) throws(FormatError) in
                try tx.appendSealed(kind: .entryRevision, payload: [UInt8(round), 0xa], compress: false)
            }
            // b has not looked since: it follows a's commit under the lock.
            try b.commit(random: SeededRandom(label: "b \(round)"), options: fast, attestWith: v.member) { (tx: PendingCommit) throws(FormatError) in
                try tx.appendSealed(kind: .entryRevision, payload: [UInt8(round), 0xb], compress: false)
            }
        }
        #expect(b.commits.statuses == Array(repeating: .verified, count: 7))
        #expect(b.commits.attestations == Array(repeating: .attested(signer: v.member.publicKey), count: 7))
        let again = try v.open()
        #expect(again.commits.statuses == Array(repeating: .verified, count: 7))
        #expect(records(again).0 == [[0], [1, 0xa], [1, 0xb], [2, 0xa], [2, 0xb], [3, 0xa], [3, 0xb]])
    }

    @Test func anotherWritersKeyringMeansReopen() throws {
        let v = RawKeyVault(label: "keyring writer")
        try v.create([[0]])
        let a = try v.open(writable: true)
        let b = try v.open(writable: true)
        try a.commit(random: SeededRandom(label: "a"), options: fast, attestWith: v.member) { (tx: PendingCommit) throws(FormatError) in
            try tx.appendPlaintext(kind: .keyring, keyID: tx.key.id, body: CBOREncoder.encode(.map(CBORMap())), trusted: false)
        }
        let size = try v.size()
        #expect(throws: FormatError.vaultChanged(path: v.path)) {
            try b.commit(random: SeededRandom(label: "b"), options: fast, attestWith: v.member) { (tx: PendingCommit) throws(FormatError) in
                try tx.appendSealed(kind: .entryRevision, payload: [1], compress: false)
            }
        }
        #expect(try v.size() == size)
    }

    @Test func truncatedOrRewrittenFileMeansReopen() throws {
        let v = RawKeyVault(label: "rewritten")
        try v.create([[0]])
        let b = try v.open(writable: true)
        let a = try v.open(writable: true)
        try a.commit(random: SeededRandom(label: "a"), options: fast, attestWith: v.member) { (tx: PendingCommit) throws(FormatError) in
            try tx.appendSealed(kind: .entryRevision, payload: [1], compress: false)
        }
        let c = try v.open(writable: true)
        // Cut back below what b and c have seen.
        try SystemFile(path: v.path, mode: .readWrite).truncate(to: b.structure.committedEnd - 1)
        #expect(throws: FormatError.vaultChanged(path: v.path)) {
            try c.commit(random: SeededRandom(label: "c"), options: fast, attestWith: v.member) { (_: PendingCommit) throws(FormatError) in }
        }
        // Same length as b saw, but the last commit's bytes differ (the last
        // byte of its sealed attestation).
        let last = b.structure.groups[0].commitBody[199]
        try SystemFile(path: v.path, mode: .readWrite).truncate(to: b.structure.committedEnd)
        try overwrite(v.path, at: b.structure.committedEnd - 1, with: [last ^ 0xff])
        #expect(throws: FormatError.vaultChanged(path: v.path)) {
            try b.commit(random: SeededRandom(label: "b"), options: fast, attestWith: v.member) { (_: PendingCommit) throws(FormatError) in }
        }
        // With the original bytes back, b can append again.
        try overwrite(v.path, at: b.structure.committedEnd - 1, with: [last])
        try b.commit(random: SeededRandom(label: "b2"), options: fast, attestWith: v.member) { (tx: PendingCommit) throws(FormatError) in
            try tx.appendSealed(kind: .entryRevision, payload: [9], compress: false)
        }
        #expect(records(try v.open()).0 == [[0], [9]])
    }

    @Test func appendingAfterAFailedCommitChainsToTheTip() throws {
        // A writer chains to the last commit whose head verifies (the tip,
        // Spec/format.md §9.1), passing by a damaged or junk commit after it:
        // it never vouches for a commit it could not check.
        let v = RawKeyVault(label: "damaged tail")
        try v.create([[0], [1]])
        let first = try v.open(writable: true)
        try first.commit(random: SeededRandom(label: "w"), options: fast, attestWith: v.member) { (tx: PendingCommit) throws(FormatError) in
            try tx.appendSealed(kind: .entryRevision, payload: [5], compress: false)
        }
        let s = try v.open().structure
        // Damage the body hash of the second commit's record: that commit no longer verifies.
        let at = s.frames[s.groups[1].members.lowerBound].end - 1
        try overwrite(v.path, at: at, with: [~(try fileBytes(v.path)[Int(at)])])
        let vault = try v.open(writable: true)
        #expect(vault.commits.statuses == [.verified, .mismatch])
        let size = try v.size()
        try vault.commit(random: SeededRandom(label: "x"), options: fast, attestWith: v.member) { (tx: PendingCommit) throws(FormatError) in
            try tx.appendSealed(kind: .entryRevision, payload: [2], compress: false)
        }
        #expect(try v.size() == size + UInt64(sealedFrameLength(payload: 1) + 216))
        // The damaged commit stays a mismatch, not vouched for; the new one
        // verifies, chained from the first commit's stored head.
        let reopened = try v.open()
        #expect(reopened.commits.statuses == [.verified, .mismatch, .verified])
        #expect(reopened.structure.groups[2].storedHead == (try CommitChain.head(
            key: v.epochKey, vaultID: v.vaultID, previousHead: reopened.structure.groups[0].storedHead, digest: reopened.structure.groups[2].digest,
            commitHeader: CommitChain.commitHeader(keyID: v.epochKey.id), body: reopened.structure.groups[2].commitBody)))
        #expect(reopened.commitIssues.map(\.code) == ["commit_mismatch"])
    }

    @Test func appendingWhenNoCommitVerifiesChainsFromGenesis() throws {
        let v = RawKeyVault(label: "damaged only commit")
        try v.create([[0], [1]])
        let s = try v.open().structure
        try overwrite(v.path, at: s.frames[0].end - 1, with: [~(try fileBytes(v.path)[Int(s.frames[0].end - 1)])])
        let vault = try v.open(writable: true)
        #expect(vault.commits.statuses == [.mismatch])
        try vault.commit(random: SeededRandom(label: "x"), options: fast, attestWith: v.member) { (tx: PendingCommit) throws(FormatError) in
            try tx.appendSealed(kind: .entryRevision, payload: [2], compress: false)
        }
        let reopened = try v.open()
        #expect(reopened.commits.statuses == [.mismatch, .verified])
        #expect(reopened.structure.groups[1].storedHead == (try CommitChain.head(
            key: v.epochKey, vaultID: v.vaultID, previousHead: CommitChain.genesisHead, digest: reopened.structure.groups[1].digest,
            commitHeader: CommitChain.commitHeader(keyID: v.epochKey.id), body: reopened.structure.groups[1].commitBody)))
    }
}
