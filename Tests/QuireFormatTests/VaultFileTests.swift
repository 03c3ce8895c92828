import QuireCrypto
import QuireFormat
import QuireSystem
import Testing

/// A vault made with a raw key, and everything needed to check it.
struct RawKeyVault {
    let dir = TemporaryDirectory()
    let path: String
    let vaultID: VaultID
    let epochKey: EpochKey
    let blobKey: SymmetricKey
    let keys: KeySet
    let label: String

    init(label: String, withBlobKey: Bool = true) {
        self.label = label
        path = dir.file("v.quire")
        let random = SeededRandom(label: "keys " + label)
        vaultID = VaultID(using: random)
        epochKey = EpochKey(epoch: 1, key: try! SymmetricKey(using: random))
        blobKey = try! SymmetricKey(using: random)
        keys = KeySet(single: epochKey, blobKey: withBlobKey ? blobKey : nil)
    }

    /// Creates the vault with one commit of sealed entry revisions.
    @discardableResult
    func create(_ payloads: [[UInt8]]) throws -> VaultFile {
        try VaultFile.create(at: path, vaultID: vaultID, keys: keys, random: SeededRandom(label: "create " + label), options: fast) {
            (tx: PendingCommit) throws(FormatError) in
            for p in payloads { try tx.appendSealed(kind: .entryRevision, payload: p, compress: false) }
        }
    }

    /// Opens the vault and verifies its commits with the raw key.
    func open(writable: Bool = false, keys: KeySet? = nil) throws -> VaultFile {
        let vault = try VaultFile(path: path, writable: writable)
        vault.verifyCommits(keys: keys ?? self.keys, trustedKeyrings: [:])
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
            #expect(!s.frames[i].repaired)
            #expect(s.frames[i].malformation == nil)
            offset = s.frames[i].end
        }
        #expect(s.frames[4].location.offset == offset)
        #expect(s.frames[4].header == CommitChain.commitHeader(epoch: 1))
        #expect(s.groups.count == 1)
        #expect(s.groups[0].members == 0..<4)
        #expect(s.groups[0].commitFrame == 4)
        #expect(!s.groups[0].containsDamage)
        #expect(s.committedEnd == offset + 28)
        #expect(s.fileSize == s.committedEnd)
        #expect(s.tailByteCount == 0)
        #expect(s.committedFrameCount == 5)
        #expect(s.damagedRegions.isEmpty)
        #expect(try v.size() == s.committedEnd)
        #expect(try FileSystem.permissions(v.path) == 0o600)
        #expect(try FileSystem.listDirectory(v.dir.path) == ["v.quire"])
        // The commit head is the chain over the four frame summaries.
        var digest = CommitChain.Digest()
        for f in s.frames[0..<4] { digest.add(header: f.header.encoded(), trailer: f.trailer) }
        let head = CommitChain.head(
            commitKey: v.epochKey.commitKey, vaultID: v.vaultID, previousHead: CommitChain.genesisHead, digest: digest.finalize(),
            commitHeader: CommitChain.commitHeader(epoch: 1))
        #expect(s.groups[0].storedHead == head)
        #expect(Array(try fileBytes(v.path).suffix(16)) == head)

        created.verifyCommits(keys: v.keys, trustedKeyrings: [:])
        #expect(created.commits.statuses == [.verified])
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
        try vault.commit(random: SeededRandom(label: "append commit"), options: fast, attestWith: nil) { (tx: PendingCommit) throws(FormatError) in
            location = try tx.appendSealed(kind: .entryRevision, payload: Array("two".utf8), compress: false)
            try tx.appendSealed(kind: .profile, payload: Array("profile".utf8))
            #expect(tx.frameCount == 2)
        }
        #expect(location == FrameLocation(offset: before, index: 2))
        #expect(vault.commits.statuses == [.verified, .verified])
        let grown = UInt64(sealedFrameLength(payload: 3) + sealedFrameLength(payload: 7) + 28)
        #expect(try v.size() == before + grown)
        #expect(vault.structure.committedEnd == before + grown)
        #expect(vault.structure.groups.count == 2)
        #expect(vault.structure.groups[1].members == 2..<4)
        // The handle reads its own appends, and a fresh one reads everything.
        #expect(records(vault).0 == [Array("one".utf8), Array("two".utf8)])
        let again = try v.open()
        #expect(again.commits.statuses == [.verified, .verified])
        #expect(records(again, [.entryRevision, .profile]).0 == [Array("one".utf8), Array("two".utf8), Array("profile".utf8)])
        // The second commit chains on the first.
        let s = again.structure
        var digest = CommitChain.Digest()
        for f in s.frames[2..<4] { digest.add(header: f.header.encoded(), trailer: f.trailer) }
        let d = digest.finalize()
        #expect(s.groups[1].storedHead == CommitChain.head(
            commitKey: v.epochKey.commitKey, vaultID: v.vaultID, previousHead: s.groups[0].storedHead, digest: d,
            commitHeader: CommitChain.commitHeader(epoch: 1)))
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
            try vault.commit(random: SeededRandom(label: "r"), options: fast, attestWith: nil) { (tx: PendingCommit) throws(FormatError) in
                for _ in 0..<5 { try tx.appendSealed(kind: .entryRevision, payload: big, compress: false) }
                throw FormatError.notWritable(reason: "test failure")
            }
        }
        #expect(try v.size() == size)
        #expect(vault.structure.frames.count == 2)
        // The handle still works.
        try vault.commit(random: SeededRandom(label: "r2"), options: fast, attestWith: nil) { (tx: PendingCommit) throws(FormatError) in
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
        try vault.commit(random: SeededRandom(label: "after tail"), options: fast, attestWith: nil) { (tx: PendingCommit) throws(FormatError) in
            try tx.appendSealed(kind: .entryRevision, payload: Array("next".utf8), compress: false)
        }
        let expected = committed + UInt64(sealedFrameLength(payload: 4) + 28)
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
        try vault.commit(random: SeededRandom(label: "c2"), options: fast, attestWith: nil) { (tx: PendingCommit) throws(FormatError) in
            try tx.appendSealed(kind: .entryRevision, payload: [2], compress: false)
        }
        let full = try v.size()
        try SystemFile(path: v.path, mode: .readWrite).truncate(to: full - 5)
        let torn = try v.open(writable: true)
        #expect(torn.structure.groups.count == 1)
        #expect(torn.structure.committedEnd == first)
        #expect(torn.structure.tailByteCount == full - 5 - first)
        #expect(records(torn).0 == [[1]])
        try torn.commit(random: SeededRandom(label: "c3"), options: fast, attestWith: nil) { (tx: PendingCommit) throws(FormatError) in
            try tx.appendSealed(kind: .entryRevision, payload: [3], compress: false)
        }
        #expect(try v.size() == first + UInt64(sealedFrameLength(payload: 1) + 28))
        #expect(records(try v.open()).0 == [[1], [3]])
    }

    @Test func wrongOrMissingKeys() throws {
        let v = RawKeyVault(label: "keys")
        try v.create(Self.payloads)
        let wrong = try v.open(keys: KeySet(single: EpochKey(epoch: 1, key: try SymmetricKey(bytes: counting(32)))))
        #expect(wrong.commits.statuses == [.mismatch])
        let commitLocation = wrong.structure.frames[4].location
        #expect(wrong.commitIssues == [.commitMismatch(commitLocation)])
        let (payloads, issues) = records(wrong)
        #expect(payloads.isEmpty)
        #expect(issues == wrong.structure.frames[0..<4].map { .authenticationFailed($0.location) })

        let none = try v.open(keys: KeySet())
        #expect(none.commits.statuses == [.unverifiable])
        #expect(none.commitIssues == [.commitUnverifiable(commitLocation, epoch: 1)])
        #expect(records(none).1 == none.structure.frames[0..<4].map { .unknownEpoch($0.location, epoch: 1) })

        // Another epoch's key is not tried.
        let otherEpoch = try v.open(keys: KeySet(single: EpochKey(epoch: 2, key: v.epochKey.key)))
        #expect(otherEpoch.commits.statuses == [.unverifiable])
    }

    @Test func damagedCiphertextAndDamagedTag() throws {
        let v = RawKeyVault(label: "damage")
        try v.create(Self.payloads)
        let vault = try v.open()
        let frame0 = vault.structure.frames[0]
        let frame2 = vault.structure.frames[2]
        // A ciphertext byte is not in the commit digest: the commit verifies,
        // the record does not authenticate.
        try overwrite(v.path, at: frame2.bodyOffset + 24 + 100, with: [0x5a ^ (try fileBytes(v.path)[Int(frame2.bodyOffset) + 124])])
        let a = try v.open()
        #expect(a.commits.statuses == [.verified])
        let (pa, ia) = records(a)
        #expect(pa == [Self.payloads[0], Self.payloads[1], Self.payloads[3]])
        #expect(ia == [.authenticationFailed(frame2.location)])
        // A tag byte is: the commit no longer verifies.
        let tagOffset = frame0.end - 1
        try overwrite(v.path, at: tagOffset, with: [~(try fileBytes(v.path)[Int(tagOffset)])])
        let b = try v.open()
        #expect(b.commits.statuses == [.mismatch])
        #expect(records(b).1 == [.authenticationFailed(frame0.location), .authenticationFailed(frame2.location)])
    }

    @Test func flippedHeaderBitIsRepaired() throws {
        let v = RawKeyVault(label: "repair")
        try v.create(Self.payloads)
        let original = try v.open().structure
        let offset = original.frames[1].location.offset + 4  // a body-length byte
        try overwrite(v.path, at: offset, with: [(try fileBytes(v.path)[Int(offset)]) ^ 0x04])
        let vault = try v.open()
        #expect(vault.structure.frames.count == 5)
        #expect(vault.structure.frames[1].repaired)
        #expect(vault.structure.frames[1].header == original.frames[1].header)
        #expect(vault.structure.frames.filter(\.repaired).count == 1)
        #expect(vault.commits.statuses == [.verified])
        #expect(records(vault).0 == Self.payloads)
    }

    @Test func destroyedHeaderIsSkippedAsDamage() throws {
        let v = RawKeyVault(label: "resync")
        try v.create(Self.payloads)
        let original = try v.open().structure
        let victim = original.frames[2]
        try overwrite(v.path, at: victim.location.offset, with: [UInt8](repeating: 0, count: 12))
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
    }

    @Test func plaintextAndUnknownKinds() throws {
        let v = RawKeyVault(label: "kinds")
        try v.create([[1]])
        let vault = try v.open(writable: true)
        let data = Array("unknown but skippable".utf8)
        let unknown = RecordKind(rawValue: 0xfe)
        let raw = FrameHeader(kind: unknown, flags: 0, epoch: 1, bodyLength: UInt32(data.count + 16)).encoded() + data
            + BLAKE2b.hash(data, byteCount: 16)
        try vault.commit(random: SeededRandom(label: "kinds"), options: fast, attestWith: nil) { (tx: PendingCommit) throws(FormatError) in
            try tx.appendPlaintext(kind: RecordKind(rawValue: 0x81), keyID: tx.key.id, body: Array("request".utf8))
            try tx.appendRaw(frame: raw)
        }
        let again = try v.open()
        #expect(records(again, [RecordKind(rawValue: 0x81)]).0 == [Array("request".utf8)])
        #expect(records(again, [unknown]).0 == [data])
        #expect(again.structure.frames[2].checksumIntact == true)
        // Only keyring bodies are kept in memory by the scan.
        #expect(again.structure.frames[2].plaintextBody == nil)
    }

    @Test func appendRawRejectsBadFrames() throws {
        let v = RawKeyVault(label: "raw")
        try v.create([[1]])
        let vault = try v.open(writable: true)
        let start = vault.structure.committedEnd
        try vault.commit(random: SeededRandom(label: "raw"), options: fast, attestWith: nil) { (tx: PendingCommit) throws(FormatError) in
            let location = FrameLocation(offset: start, index: 2)
            let reason = "not a whole, checked, non-commit frame"
            let good = FrameHeader(kind: RecordKind(rawValue: 0x81), flags: 0, epoch: 1, bodyLength: 20).encoded() + counting(20)
            #expect(throws: FormatError.malformedFrame(location, reason: reason)) { try tx.appendRaw(frame: Array(good.dropLast())) }
            #expect(throws: FormatError.malformedFrame(location, reason: reason)) { try tx.appendRaw(frame: flipped(good, at: 2)) }
            let commit = CommitChain.commitHeader(epoch: 1).encoded() + counting(16)
            #expect(throws: FormatError.malformedFrame(location, reason: reason)) { try tx.appendRaw(frame: commit) }
            #expect(try tx.appendRaw(frame: good) == location)
        }
    }

    @Test func unknownCriticalKindStopsTheReader() throws {
        let v = RawKeyVault(label: "critical")
        try v.create([[1]])
        let vault = try v.open(writable: true)
        let raw = FrameHeader(kind: RecordKind(rawValue: 0x7f), flags: 0, epoch: 1, bodyLength: 16).encoded() + counting(16)
        let offset = vault.structure.committedEnd
        try vault.commit(random: SeededRandom(label: "critical"), options: fast, attestWith: nil) { (tx: PendingCommit) throws(FormatError) in
            try tx.appendRaw(frame: raw)
        }
        #expect(throws: FormatError.unknownCriticalKind(FrameLocation(offset: offset, index: 2), kind: 0x7f)) {
            try VaultFile(path: v.path)
        }
    }
}

/// Writes `bytes` to a new file at `path`.
func appendToFile2(_ path: String, _ bytes: [UInt8]) throws {
    let file = try SystemFile(path: path, mode: .createExclusive(permissions: 0o600))
    try file.write(bytes, at: 0)
}

@Suite struct BlobTests {
    static let mediaType = "application/x-test"

    @Test(arguments: [(0, 1), (1, 1), (65535, 1), (65536, 1), (65537, 2), (3 * 65536, 3), (3 * 65536 + 1, 4)])
    func writeAndRead(size: Int, chunks: Int) throws {
        let v = RawKeyVault(label: "blob \(size)")
        try v.create([[0]])
        let content = SeededRandom(label: "content \(size)").bytes(size)
        let vault = try v.open(writable: true)
        let firstNew = vault.structure.frames.count
        var stored: StoredBlob?
        try vault.commit(random: SeededRandom(label: "blob commit"), options: fast, attestWith: nil) { (tx: PendingCommit) throws(FormatError) in
            stored = try tx.appendBlob(from: MemoryByteSource(content), mediaType: Self.mediaType)
            #expect(tx.frameCount == chunks + 1)
        }
        guard case .stored(let manifest) = stored else {
            Issue.record("expected a stored blob, got \(String(describing: stored))")
            return
        }
        #expect(manifest.byteCount == UInt64(size))
        #expect(manifest.mediaType == Self.mediaType)
        #expect(manifest.blob.bytes == BLAKE2b.mac(content, key: v.blobKey, byteCount: 32))
        #expect(manifest.chunkCount == UInt64(chunks))
        #expect(stored?.blob == manifest.blob)
        #expect(stored?.byteCount == UInt64(size))

        // The frames: n chunks of one stream, then the manifest.
        let frames = Array(vault.structure.frames[firstNew...])
        #expect(frames.count == chunks + 2)
        for (i, f) in frames[0..<chunks].enumerated() {
            #expect(f.header.kind == .blobChunk)
            #expect(f.header.flags == FrameHeader.sealedFlag)
            #expect(f.chunk == ChunkHeader(stream: manifest.stream, index: UInt32(i), isFinal: i == chunks - 1))
            let count = i == chunks - 1 ? size - (chunks - 1) * 65536 : 65536
            #expect(Int(f.header.bodyLength) == SealedFrame.chunkBodyLength(contentCount: count, isFinal: i == chunks - 1))
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
        let reader = try again.openBlob(manifest)
        #expect(reader.chunkCount == chunks)
        #expect(try reader.readAll() == content)
        for i in 0..<chunks {
            let lower = i * 65536, upper = min(size, lower + 65536)
            #expect(try reader.chunk(i) == Array(content[lower..<upper]))
        }
        // Streaming in odd-sized pieces gives the same bytes.
        let streaming = try again.openBlob(manifest)
        var collected: [UInt8] = []
        var piece = [UInt8](repeating: 0, count: 1000)
        while true {
            let n = try piece.withUnsafeMutableBytes { try streaming.read(into: $0) }
            if n == 0 { break }
            collected += piece[0..<n]
        }
        #expect(collected == content)
        // Chunks are not records.
        #expect(records(again, [.blobChunk]).0.isEmpty)
    }

    @Test func deduplicatedBlobAppendsNothing() throws {
        let v = RawKeyVault(label: "dedup")
        try v.create([[0]])
        let content = SeededRandom(label: "dedup content").bytes(100_000)
        let vault = try v.open(writable: true)
        var first: StoredBlob?
        try vault.commit(random: SeededRandom(label: "d1"), options: fast, attestWith: nil) { (tx: PendingCommit) throws(FormatError) in
            first = try tx.appendBlob(from: MemoryByteSource(content), mediaType: "image/jpeg")
        }
        let blob = try #require(first?.blob)
        let before = try v.size()
        let framesBefore = vault.structure.frames.count
        var second: StoredBlob?
        var asked: [BlobID] = []
        try vault.commit(random: SeededRandom(label: "d2"), options: fast, attestWith: nil) { (tx: PendingCommit) throws(FormatError) in
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
        #expect(try v.size() == before + UInt64(2 * sealedFrameLength(payload: 1) + 28))
        #expect(vault.structure.frames.count == framesBefore + 3)
        let again = try v.open()
        #expect(again.commits.allVerified)
        #expect(again.streamIndex.count == 1)
        #expect(records(again).0 == [[0], [7], [8]])
    }

    @Test func blobNeedsTheBlobKey() throws {
        let v = RawKeyVault(label: "no blob key", withBlobKey: false)
        try v.create([[0]])
        let vault = try v.open(writable: true)
        let size = try v.size()
        #expect(throws: FormatError.notWritable(reason: "no blob key is unlocked")) {
            try vault.commit(random: SeededRandom(label: "b"), options: fast, attestWith: nil) { (tx: PendingCommit) throws(FormatError) in
                _ = try tx.appendBlob(from: MemoryByteSource([1, 2, 3]), mediaType: "x")
            }
        }
        #expect(try v.size() == size)
    }

    @Test func manifestsThatDoNotMatchTheirChunks() throws {
        let v = RawKeyVault(label: "mismatch")
        try v.create([[0]])
        let content = SeededRandom(label: "mismatch content").bytes(65537)
        let vault = try v.open(writable: true)
        var stored: StoredBlob?
        try vault.commit(random: SeededRandom(label: "m"), options: fast, attestWith: nil) { (tx: PendingCommit) throws(FormatError) in
            stored = try tx.appendBlob(from: MemoryByteSource(content), mediaType: "x")
        }
        guard case .stored(let m) = stored else {
            Issue.record("not stored")
            return
        }
        let again = try v.open()
        let otherStream = StreamID(using: SeededRandom(label: "other stream"))
        #expect(throws: FormatError.chunkMissing(stream: otherStream.description, index: 0)) {
            try again.openBlob(BlobManifest(blob: m.blob, stream: otherStream, byteCount: 10))
        }
        // The manifest wants 3 chunks, the stream has 2 (and the final flag on the second).
        #expect(throws: FormatError.blobSizeMismatch(blob: m.blob.description, expected: 65537 + 65536, actual: 2 * 65536)) {
            try again.openBlob(BlobManifest(blob: m.blob, stream: m.stream, byteCount: 65537 + 65536))
        }
        // The manifest wants 1 chunk, the stream has 2.
        let tooMany = #expect(throws: FormatError.self) {
            try again.openBlob(BlobManifest(blob: m.blob, stream: m.stream, byteCount: 65536))
        }
        if case .blobSizeMismatch(let blob, let expected, _)? = tooMany {
            #expect(blob == m.blob.description)
            #expect(expected == 65536)
        } else {
            Issue.record("expected blobSizeMismatch, got \(String(describing: tooMany))")
        }
        // Same chunk count, another size: found when the stream ends.
        let wrongSize = try again.openBlob(BlobManifest(blob: m.blob, stream: m.stream, byteCount: 70_000))
        #expect(throws: FormatError.blobSizeMismatch(blob: m.blob.description, expected: 70_000, actual: 65537)) {
            try wrongSize.readAll()
        }
        // Another id: found when the stream ends.
        let otherID = BlobID(using: SeededRandom(label: "other id"))
        let wrongID = try again.openBlob(BlobManifest(blob: otherID, stream: m.stream, byteCount: 65537))
        #expect(throws: FormatError.blobIDMismatch(blob: otherID.description)) { try wrongID.readAll() }
        // Control.
        #expect(try again.openBlob(m).readAll() == content)
    }
}

@Suite struct ConcurrentWriterTests {
    @Test func twoHandlesInterleaveCommits() throws {
        let v = RawKeyVault(label: "two writers")
        try v.create([[0]])
        let a = try v.open(writable: true)
        let b = try v.open(writable: true)
        for round in 1...3 {
            try a.commit(random: SeededRandom(label: "a \(round)"), options: fast) { (tx: PendingCommit) throws(FormatError) in
                try tx.appendSealed(kind: .entryRevision, payload: [UInt8(round), 0xa], compress: false)
            }
            // b has not looked since: it follows a's commit under the lock.
            try b.commit(random: SeededRandom(label: "b \(round)"), options: fast) { (tx: PendingCommit) throws(FormatError) in
                try tx.appendSealed(kind: .entryRevision, payload: [UInt8(round), 0xb], compress: false)
            }
        }
        #expect(b.commits.statuses == Array(repeating: .verified, count: 7))
        let again = try v.open()
        #expect(again.commits.statuses == Array(repeating: .verified, count: 7))
        #expect(records(again).0 == [[0], [1, 0xa], [1, 0xb], [2, 0xa], [2, 0xb], [3, 0xa], [3, 0xb]])
    }

    @Test func anotherWritersKeyringMeansReopen() throws {
        let v = RawKeyVault(label: "keyring writer")
        try v.create([[0]])
        let a = try v.open(writable: true)
        let b = try v.open(writable: true)
        try a.commit(random: SeededRandom(label: "a"), options: fast, attestWith: nil) { (tx: PendingCommit) throws(FormatError) in
            try tx.appendPlaintext(kind: .keyring, keyID: tx.key.id, body: CBOREncoder.encode(.map(CBORMap())), trusted: false)
        }
        let size = try v.size()
        #expect(throws: FormatError.vaultChanged(path: v.path)) {
            try b.commit(random: SeededRandom(label: "b"), options: fast, attestWith: nil) { (tx: PendingCommit) throws(FormatError) in
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
        try a.commit(random: SeededRandom(label: "a"), options: fast, attestWith: nil) { (tx: PendingCommit) throws(FormatError) in
            try tx.appendSealed(kind: .entryRevision, payload: [1], compress: false)
        }
        let c = try v.open(writable: true)
        // Cut back below what b and c have seen.
        try SystemFile(path: v.path, mode: .readWrite).truncate(to: b.structure.committedEnd - 1)
        #expect(throws: FormatError.vaultChanged(path: v.path)) {
            try c.commit(random: SeededRandom(label: "c"), options: fast, attestWith: nil) { (_: PendingCommit) throws(FormatError) in }
        }
        // Same length as b saw, but the last commit's bytes differ.
        try SystemFile(path: v.path, mode: .readWrite).truncate(to: b.structure.committedEnd)
        try overwrite(v.path, at: b.structure.committedEnd - 1, with: [b.structure.groups[0].storedHead[15] ^ 0xff])
        #expect(throws: FormatError.vaultChanged(path: v.path)) {
            try b.commit(random: SeededRandom(label: "b"), options: fast, attestWith: nil) { (_: PendingCommit) throws(FormatError) in }
        }
        // With the original bytes back, b can append again.
        try overwrite(v.path, at: b.structure.committedEnd - 1, with: [b.structure.groups[0].storedHead[15]])
        try b.commit(random: SeededRandom(label: "b2"), options: fast, attestWith: nil) { (tx: PendingCommit) throws(FormatError) in
            try tx.appendSealed(kind: .entryRevision, payload: [9], compress: false)
        }
        #expect(records(try v.open()).0 == [[0], [9]])
    }

    @Test func appendingAfterAFailedCommitChainsToItsStoredHead() throws {
        let v = RawKeyVault(label: "damaged tail")
        try v.create([[0], [1]])
        let s = try v.open().structure
        // Damage the tag of the first record: the only commit no longer verifies.
        try overwrite(v.path, at: s.frames[0].end - 1, with: [~(try fileBytes(v.path)[Int(s.frames[0].end - 1)])])
        let vault = try v.open(writable: true)
        #expect(vault.commits.statuses == [.mismatch])
        let size = try v.size()
        try vault.commit(random: SeededRandom(label: "x"), options: fast, attestWith: nil) { (tx: PendingCommit) throws(FormatError) in
            try tx.appendSealed(kind: .entryRevision, payload: [2], compress: false)
        }
        #expect(try v.size() > size)
        // The damaged commit stays a mismatch; the new one verifies.
        let reopened = try v.open()
        #expect(reopened.commits.statuses == [.mismatch, .verified])
    }

    @Test func largeDeduplicatedBlobRollsBackFlushedChunks() throws {
        let v = RawKeyVault(label: "big dedup")
        try v.create([[0]])
        let content = SeededRandom(label: "big dedup content").bytes(5 << 20)
        let vault = try v.open(writable: true)
        var first: StoredBlob?
        try vault.commit(random: SeededRandom(label: "b1"), options: fast, attestWith: nil) { (tx: PendingCommit) throws(FormatError) in
            first = try tx.appendBlob(from: MemoryByteSource(content), mediaType: "video/mp4")
        }
        guard case .stored(let manifest) = first else {
            Issue.record("not stored")
            return
        }
        #expect(manifest.chunkCount == 80)
        let before = try v.size()
        var second: StoredBlob?
        try vault.commit(random: SeededRandom(label: "b2"), options: fast, attestWith: nil) { (tx: PendingCommit) throws(FormatError) in
            try tx.appendSealed(kind: .entryRevision, payload: [1], compress: false)
            second = try tx.appendBlob(from: MemoryByteSource(content), mediaType: "video/mp4") { $0 == manifest.blob }
            try tx.appendSealed(kind: .entryRevision, payload: [2], compress: false)
        }
        #expect(second == .deduplicated(manifest.blob, byteCount: 5 << 20))
        #expect(try v.size() == before + UInt64(2 * sealedFrameLength(payload: 1) + 28))
        let again = try v.open()
        #expect(again.commits.allVerified)
        #expect(again.structure.tailByteCount == 0)
        #expect(records(again).0 == [[0], [1], [2]])
        #expect(try again.openBlob(manifest).readAll() == content)
    }
}
