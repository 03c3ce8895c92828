import Foundation
@_spi(Format) import Quire
@_spi(Crypto) import QuireCrypto
@_spi(Format) @_spi(Testing) import QuireFormat
@_spi(Format) import QuireKeys
import QuireSystem
import Testing

/// An open through the index cache takes the structure of the vault
/// file's committed prefix from the cache's frame table and scans only the
/// bytes after it (`Spec/index-cache.md §5`): the structure and verdicts it
/// builds are a full scan's; anything that does not match the file is
/// refused and the file scanned whole, with the same answers as a full open.
@Suite struct IndexCachePrefixTests {
    typealias Fixture = IndexCacheOpenTests.Fixture

    /// The fixture with an attachment (chunk frames in the prefix).
    static func fixture(_ label: String, count: Int = 12) throws -> (Fixture, StoredBlob, [UInt8]) {
        let f = try IndexCacheOpenTests.fixture("prefix " + label, count: count)
        let vault = try Vault.open(at: f.path, store: f.store, options: fast)
        let content = (0..<150_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        var stored: StoredBlob?
        try vault.commit { tx in stored = try tx.storeAttachment(from: MemoryByteSource(content), mediaType: "application/octet-stream") }
        _ = try IndexCacheOpenTests.answers(try f.cached())  // writes the cache
        return (f, try #require(stored), content)
    }

    /// What a structure says of every frame and group, comparable.
    static func describe(_ s: VaultStructure) -> [String] {
        s.frames.map(describe(frame:))
            + s.groups.map { g in
                "group \(g.commitFrame) \(g.members) \(hex(g.digest)) \(hex(g.storedHead)) \(hex(g.commitBody)) \(g.containsDamage)"
            } + ["\(s.committedEnd) \(s.fileSize) \(s.uncommittedFrames) \(s.damagedRegions.count) \(s.tailHasDamage)"]
    }

    /// What a scan says of one frame, comparable.
    static func describe(frame f: ScannedFrame) -> String {
        [
            "\(f.location.offset)/\(f.location.index)", hex(f.headerBytes), hex(f.trailer), "\(f.repaired)",
            f.chunk.map { hex($0.encoded()) } ?? "-", f.plaintextBody.map { hex($0) } ?? "-", "\(String(describing: f.checksumIntact))",
            f.commitBody.map { hex($0) } ?? "-", f.malformation ?? "-",
        ].joined(separator: " ")
    }

    @Test func aCachedOpenScansOnlyTheTail() throws {
        let (f, blob, content) = try Self.fixture("tail only")
        // Another writer appends: the tail.
        let other = try Vault.open(at: f.path, credential: .device(f.device.keyPair), options: fast)
        try other.add(EntryBody(created: IndexCacheOpenTests.t0 + 9_000_000_000, text: "From the tail"))
        let full = try f.full()
        let prefixFrames = full.file.structure.groups.dropLast().last!.commitFrame + 1
        let prefixEnd = full.file.structure.frames[prefixFrames - 1].end

        let v = try f.cached()
        #expect(v.file.cachedPrefixFrameCount == prefixFrames)
        #expect(v.file.scanStartOffset == prefixEnd)
        #expect(full.file.cachedPrefixFrameCount == 0)
        #expect(full.file.scanStartOffset == 64)
        // The structure is the one a scan finds, frame by frame, and so
        // are the verdicts.
        #expect(Self.describe(v.file.structure) == Self.describe(full.file.structure))
        #expect(v.file.commits.statuses == full.file.commits.statuses)
        #expect(v.file.commits.attestations == full.file.commits.attestations)
        #expect(v.file.commits.tipHead == full.file.commits.tipHead)
        #expect(try IndexCacheOpenTests.answers(v) == (try IndexCacheOpenTests.answers(full)))
        #expect(try v.openAttachment(blob.blob).readAll() == content)
        // An open that only writes takes the prefix too, and its commit is
        // read back by a full scan.
        let writer = try f.cached()
        #expect(writer.file.cachedPrefixFrameCount > 0)
        try writer.add(EntryBody(created: IndexCacheOpenTests.t0 + 9_100_000_000, text: "Written after a cached open"))
        let after = try f.full()
        #expect(after.file.commits.allVerified)
        #expect(try after.entries().contains { $0.body.text == "Written after a cached open" })
        // verify reads the whole file, and says what a full open's says.
        let report = try f.cached().verify()
        #expect(report.issues.map(\.code) == full.verify().issues.map(\.code))
        #expect(report.frameCount == after.verify().frameCount)
    }

    /// An open through the cache of a vault written one entry per commit
    /// computes the chain heads of the commits after the cached prefix
    /// only — the cache vouches for the prefix's (`Spec/index-cache.md §5`,
    /// "The chain") — so an append costs chain work for its tail, not for
    /// every commit of the vault, with the verdicts of a full open. Under
    /// keys from other keyrings than the cache's, every head is computed.
    @Test func aCachedAppendComputesOnlyTheTailsHeads() throws {
        let t0 = IndexCacheOpenTests.t0
        let f = try IndexCacheOpenTests.fixture("one per commit", count: 8)
        let other = try Vault.open(at: f.path, credential: .device(f.device.keyPair), options: fast)
        for i in 0..<40 { try other.add(EntryBody(created: t0 + Int64(100 + i) * 3_600_000, text: "Day \(i)")) }
        _ = try IndexCacheOpenTests.answers(try f.cached())  // writes the cache
        // Two commits after it: the tail.
        for i in 0..<2 { try other.add(EntryBody(created: t0 + Int64(200 + i) * 3_600_000, text: "Tail \(i)")) }
        let commits = try f.full().file.structure.groups.count
        #expect(commits > 45)

        let writer = try f.cached()
        #expect(writer.file.cachedPrefixFrameCount > 0)
        try writer.add(EntryBody(created: t0 + 300 * 3_600_000, text: "Added from the cache"))
        #expect(writer.file.headVerificationCount == 2)
        let full = try f.full()
        #expect(full.file.headVerificationCount == commits + 1)
        let (mine, theirs) = (writer.file.commits, full.file.commits)
        // The prefix's signatures verified before the cache was written:
        // the writer verifies the tail's two (its own commit it signed);
        // a full open, every one the walk did not check itself (a commit
        // that raises the epoch). The verdicts are the same (above).
        #expect(writer.file.signatureVerificationCount == 2)
        let signed = theirs.attestations.filter { if case .attested = $0 { true } else { false } }.count
        #expect(signed > 45)
        #expect(full.file.signatureVerificationCount >= signed - 2)
        #expect(mine.statuses == theirs.statuses)
        #expect(mine.allVerified)
        #expect(mine.attestations == theirs.attestations)
        #expect(mine.previousHeads == theirs.previousHeads)
        #expect(mine.computedHeads == theirs.computedHeads)
        #expect(mine.epochs == theirs.epochs)
        #expect(mine.floors == theirs.floors)
        #expect(mine.walkPositions == theirs.walkPositions)
        #expect(mine.linkParents == theirs.linkParents)
        #expect(mine.tipHead == theirs.tipHead)
        #expect(try IndexCacheOpenTests.answers(writer) == (try IndexCacheOpenTests.answers(full)))

        // A device enrolled since: new keyring heads, every head computed
        // (the frame table, keyless, still gives the prefix).
        let phone = try DeviceIdentity.generate(name: "phone", now: t0, using: SeededRandom(label: "one per commit phone"))
        try other.enrollDevice(code: phone.code, name: "Phone", now: t0 + 1)
        let afterKeys = try f.cached()
        #expect(afterKeys.file.cachedPrefixFrameCount > 0)
        let fullAfterKeys = try f.full()
        #expect(fullAfterKeys.file.headVerificationCount > commits)
        #expect(afterKeys.file.headVerificationCount == fullAfterKeys.file.headVerificationCount)
        #expect(afterKeys.file.commits.statuses == fullAfterKeys.file.commits.statuses)
    }

    /// Two reports of one file, field by field.
    static func expectSameReport(
        _ a: (report: CommitReport, unchecked: [Int]), _ b: (report: CommitReport, unchecked: [Int]), _ label: String
    ) {
        let (x, y) = (a.report, b.report)
        #expect(x.statuses == y.statuses, "\(label)")
        #expect(x.attestations == y.attestations, "\(label)")
        #expect(a.unchecked == b.unchecked, "\(label)")
        #expect(x.floors == y.floors, "\(label)")
        #expect(x.computedHeads == y.computedHeads, "\(label)")
        #expect(x.epochs == y.epochs, "\(label)")
        #expect(x.previousHeads == y.previousHeads, "\(label)")
        #expect(x.walkPositions == y.walkPositions, "\(label)")
        #expect(x.tipPosition == y.tipPosition, "\(label)")
        #expect(x.tipGroup == y.tipGroup, "\(label)")
        #expect(x.linkParents == y.linkParents, "\(label)")
        #expect(x.forks == y.forks, "\(label)")
        #expect(x.attestedOverDeletion == y.attestedOverDeletion, "\(label)")
        #expect(x.currentFloor == y.currentFloor, "\(label)")
        #expect(x.tipLineFloor == y.tipLineFloor, "\(label)")
        #expect(x.tipHead == y.tipHead, "\(label)")
    }

    /// A vault written one entry per commit, each commit extending the one
    /// before, is judged in one pass — no commit walked — with the walk's
    /// report, from the cache with a tail and from a full scan; a tail
    /// holding a byte copy of a commit (orphaned) or a commit whose
    /// attestation bytes changed (tampered) leaves the file to the walk,
    /// with the report of a full open (Stop 32).
    @Test func aLinearVaultIsJudgedWithoutTheWalk() throws {
        let t0 = IndexCacheOpenTests.t0
        let f = try IndexCacheOpenTests.fixture("linear", count: 8)
        let other = try Vault.open(at: f.path, credential: .device(f.device.keyPair), options: fast)
        for i in 0..<30 { try other.add(EntryBody(created: t0 + Int64(100 + i) * 3_600_000, text: "Day \(i)")) }
        _ = try IndexCacheOpenTests.answers(try f.cached())  // writes the cache
        let cache = try Data(contentsOf: URL(fileURLWithPath: f.cacheFile))
        for i in 0..<3 { try other.add(EntryBody(created: t0 + Int64(200 + i) * 3_600_000, text: "Tail \(i)")) }
        let commits = try f.full().file.structure.groups.count
        #expect(commits > 35)

        let cached = try f.cached()
        #expect(cached.file.cachedPrefixFrameCount > 0)
        #expect(cached.file.walkedCommitCount == 0)
        #expect(cached.file.commits.allVerified)
        let full = try f.full()
        #expect(full.file.walkedCommitCount == 0)
        for v in [cached, full] {
            Self.expectSameReport(
                v.file.chainReportForTesting(walk: false), v.file.chainReportForTesting(walk: true), "linear \(v === cached)")
        }
        Self.expectSameReport(cached.file.chainReportForTesting(walk: false), full.file.chainReportForTesting(walk: true), "cached")
        #expect(try IndexCacheOpenTests.answers(cached) == (try IndexCacheOpenTests.answers(full)))

        // The tail changed: a byte copy of the last group after it, or the
        // attestation bytes of the first tail commit changed.
        let saved = try Data(contentsOf: URL(fileURLWithPath: f.path))
        let s = full.file.structure
        let last = try #require(s.groups.last)
        let lastStart = Int(s.frames[last.members.lowerBound].location.offset)
        let lastEnd = Int(s.frames[last.commitFrame].end)
        var copied = saved
        copied.append(saved[lastStart..<lastEnd])
        var tampered = saved
        let firstTail = s.frames[s.groups[s.groups.count - 3].commitFrame]
        tampered[Int(firstTail.bodyOffset) + 100] ^= 0x5a
        // Tampered first: it ends where the file the device last saw ends,
        // with the same last commit (test 2 of Spec/keys.md §7). After the
        // copied tail it would be a rewrite that lacks what this device saw
        // of "Tail 0" (its commit no longer verifies): a suspected rollback
        // (test 3's newest entries), which reads the file again whole.
        for (name, bytes, status) in [("tampered", tampered, CommitReport.Status.tampered), ("copied", copied, .orphaned)] {
            try bytes.write(to: URL(fileURLWithPath: f.path))
            try cache.write(to: URL(fileURLWithPath: f.cacheFile))
            chmod(f.cacheFile, 0o600)
            let cached = try f.cached()
            let full = try f.full()
            #expect(cached.file.cachedPrefixFrameCount > 0, "\(name)")
            #expect(cached.file.commits.statuses.contains(status), "\(name)")
            #expect(cached.file.walkedCommitCount >= commits, "\(name)")
            Self.expectSameReport(
                cached.file.chainReportForTesting(walk: false), full.file.chainReportForTesting(walk: false), "\(name) cached")
            Self.expectSameReport(
                full.file.chainReportForTesting(walk: false), full.file.chainReportForTesting(walk: true), "\(name) full")
            #expect(try IndexCacheOpenTests.answers(cached) == (try IndexCacheOpenTests.answers(full)), "\(name)")
        }
        try saved.write(to: URL(fileURLWithPath: f.path))
    }

    /// A commit frame changed in place, a file cut below the cached
    /// length, another vault at the path, a cache under another key, a
    /// keyring body changed: the open scans the whole file and answers as
    /// a full open.
    @Test func aPrefixThatDoesNotMatchIsScannedWhole() throws {
        let (f, _, _) = try Self.fixture("mismatch")
        let saved = try Data(contentsOf: URL(fileURLWithPath: f.path))
        let cache = try Data(contentsOf: URL(fileURLWithPath: f.cacheFile))
        #expect(try f.cached().file.cachedPrefixFrameCount > 0)
        let s = try f.full().file.structure
        // Another vault this device opens.
        let otherPath = f.dir.file("other.quire")
        let other = try Vault.create(
            at: otherPath,
            setup: VaultSetup(name: "Other", recoveryKey: testRecoveryKey("prefix other"), device: f.device, now: IndexCacheOpenTests.t0),
            random: SeededRandom(label: "prefix other"), options: fast)
        try other.add(EntryBody(created: IndexCacheOpenTests.t0, text: "In the other vault"))
        let otherVault = try Data(contentsOf: URL(fileURLWithPath: otherPath))
        let keyring = try #require(s.frames.first { $0.header.kind == .keyring })
        let entriesCommit = s.frames[try #require(s.groups.dropLast().last).commitFrame]
        let lastCommit = s.frames[try #require(s.groups.last).commitFrame]

        var commitChanged = saved
        for i in 64..<200 { commitChanged[Int(entriesCommit.bodyOffset) + i] ^= 0x5a }
        var keyringChanged = saved
        keyringChanged[Int(keyring.bodyOffset) + 10] ^= 0x01
        let cut = saved.prefix(Int(lastCommit.end) - 1)
        let cases: [(String, Data)] = [
            ("commit changed", commitChanged), ("keyring changed", keyringChanged), ("cut below the committed length", Data(cut)),
            ("another vault", otherVault),
        ]
        for (name, bytes) in cases {
            try bytes.write(to: URL(fileURLWithPath: f.path))
            // For another vault: this vault's cache under that vault's name.
            try cache.write(to: URL(fileURLWithPath: f.cacheFile))
            chmod(f.cacheFile, 0o600)
            let v = try f.cached()
            #expect(v.file.cachedPrefixFrameCount == 0, "\(name)")
            #expect(v.file.scanStartOffset == 64, "\(name)")
            let full = try f.full()
            #expect(Self.describe(v.file.structure) == Self.describe(full.file.structure), "\(name)")
            #expect(try IndexCacheOpenTests.answers(v) == (try IndexCacheOpenTests.answers(full)), "\(name)")
        }

        // A cache of this vault sealed under another device's key.
        try saved.write(to: URL(fileURLWithPath: f.path))
        try cache.write(to: URL(fileURLWithPath: f.cacheFile))
        let phone = try DeviceIdentity.generate(name: "phone", now: IndexCacheOpenTests.t0, using: SeededRandom(label: "prefix phone"))
        let key = try IndexCacheKey(device: f.device, vaultID: f.vaultID)
        guard case .loaded(var contents) = IndexCache.load(folder: f.cacheFolder, key: key, vaultID: f.vaultID, check: { _ in nil }) else {
            Issue.record("the cache does not load")
            return
        }
        contents.frameTable = PrefixFrameTable(of: s, frameCount: contents.identity.frameCount)
        #expect(contents.frameTable != nil)
        try Data(IndexCache.seal(contents, key: try IndexCacheKey(device: phone, vaultID: f.vaultID))).write(
            to: URL(fileURLWithPath: f.cacheFile))
        let v = try f.cached()
        #expect(v.file.cachedPrefixFrameCount == 0)
        #expect(try IndexCacheOpenTests.answers(v) == (try IndexCacheOpenTests.answers(try f.full())))
    }

    /// The index cache's identity check takes the `commits` digest the
    /// open from the cache's frame table checked (R6-4: a commit frame
    /// changed after its head), instead of hashing every commit frame
    /// again — and only for the same frames and the same digest: any
    /// other claim is checked against the structure's bytes.
    @Test func theIdentityCheckTakesTheDigestTheCachedOpenChecked() throws {
        let (f, _, _) = try Self.fixture("digest once")
        let v = try f.cached()
        let file = v.file
        #expect(file.cachedPrefixFrameCount > 0)
        let verified = try #require(file.cachedPrefixCommitsDigest)
        let key = try IndexCacheKey(device: f.device, vaultID: f.vaultID)
        guard case .loaded(let contents) = IndexCache.load(folder: f.cacheFolder, key: key, vaultID: f.vaultID, check: { _ in nil })
        else {
            Issue.record("the cache does not load")
            return
        }
        let identity = contents.identity
        let heads = identity.keyringHeads
        #expect(identity.frameCount == file.cachedPrefixFrameCount)
        #expect(identity.commitsDigest == verified)
        #expect(IndexCache.Identity.commitsDigest(of: file.structure, frameCount: identity.frameCount) == verified)
        // A cache claiming other commit bytes: the digest the open checked
        // is not that claim, so the bytes are hashed and it is discarded.
        var other = identity
        other.commitsDigest = [UInt8](repeating: 0x5a, count: 32)
        #expect(identity.check(against: file.structure, keyringHeads: heads) == nil)
        #expect(identity.check(against: file.structure, keyringHeads: heads, verifiedPrefix: (identity.frameCount, verified)) == nil)
        #expect(
            other.check(against: file.structure, keyringHeads: heads, verifiedPrefix: (identity.frameCount, verified))
                == .commitsChanged)
        // The claimed digest given as verified, but for other frames: hashed,
        // discarded.
        #expect(
            other.check(against: file.structure, keyringHeads: heads, verifiedPrefix: (identity.frameCount - 1, other.commitsDigest))
                == .commitsChanged)
        // A full scan of the file has no verified prefix digest.
        #expect(try f.full().file.cachedPrefixCommitsDigest == nil)
    }

    /// A frame header in the prefix changed after the cache was written
    /// (its key id): a cached open does not read it — each record is read
    /// with the header the cache holds and checked by its tag — but verify
    /// scans the whole file and reports what a full open's verify does.
    @Test func verifyScansTheWholeFile() throws {
        let (f, _, _) = try Self.fixture("verify")
        let s = try f.full().file.structure
        let frame = try #require(s.frames.first { $0.header.kind == .entryRevision })
        var bytes = try Data(contentsOf: URL(fileURLWithPath: f.path))
        bytes[Int(frame.location.offset) + 5] ^= 0x04
        try bytes.write(to: URL(fileURLWithPath: f.path))
        let v = try f.cached()
        #expect(v.file.cachedPrefixFrameCount > 0)
        let expected = try f.full().verify()
        #expect(!expected.issues.isEmpty)
        let report = v.verify()
        #expect(report.issues.map(\.code) == expected.issues.map(\.code))
        #expect(v.file.cachedPrefixFrameCount == 0)
    }

    /// A verify whose scan of the whole file fails (here the file is gone)
    /// says so as damage: a report over the cached prefix would take its
    /// heads and signatures as verified (thirty-sixth review A2).
    @Test func aVerifyThatCannotScanTheWholeFileReportsIt() throws {
        let (f, _, _) = try Self.fixture("verify gone")
        let v = try f.cached()
        #expect(v.file.cachedPrefixFrameCount > 0)
        try FileManager.default.removeItem(atPath: f.path)
        let report = v.verify()
        let first = try #require(report.issues.first)
        #expect(first.isDamage)
        #expect(first.message.contains("could not be read again whole"))
    }

    /// A caller that checks every byte next (`quire verify`) opens without
    /// the frame table: the file is scanned whole once, not taken from the
    /// table and then scanned again; the cache still answers queries.
    @Test func anOpenWithoutTheFrameTableScansTheWholeFile() throws {
        let (f, _, _) = try Self.fixture("whole")
        let v = try Vault.open(at: f.path, store: f.store, writable: false, options: fast, usesFrameTable: false)
        #expect(v.file.cachedPrefixFrameCount == 0)
        #expect(v.file.scanStartOffset == 64)
        #expect(v.answersFromIndexCache)
        #expect(try f.cached().file.cachedPrefixFrameCount > 0)
    }

    /// The frame table is written only for a prefix a scan reports nothing
    /// about, and round-trips through the sealed file.
    @Test func theFrameTableRoundTrips() throws {
        let (f, _, _) = try Self.fixture("round trip")
        let s = try f.full().file.structure
        let key = try IndexCacheKey(device: f.device, vaultID: f.vaultID)
        guard case .success(let found) = IndexCache.loadFrameTable(folder: f.cacheFolder, key: key, vaultID: f.vaultID) else {
            Issue.record("no frame table")
            return
        }
        #expect(found.table?.materialized() == PrefixFrameTable(of: s, frameCount: found.identity.frameCount))
        #expect(PrefixFrameTable(of: s, frameCount: 0) == nil)
        // A prefix that does not end with a commit has none.
        #expect(PrefixFrameTable(of: s, frameCount: s.groups[0].commitFrame) == nil)
    }

    /// Cache format 5 keeps the prefix packed as the frame table's columns
    /// (`Spec/index-cache.md §1`): every frame built from them, and every
    /// field read without building one, is what a full scan found; a
    /// change to the packed part turns the frames into values first.
    @Test func thePackedPrefixReadsAsTheScan() throws {
        let (f, _, _) = try Self.fixture("packed")
        let packed = try f.cached().file.structure.frames
        let scanned = try f.full().file.structure.frames
        #expect(packed.packedCount > 0)
        #expect(packed.packedCount == packed.count)
        #expect(scanned.packedCount == 0)
        #expect(packed.count == scanned.count)
        #expect(packed.map(Self.describe(frame:)) == scanned.map(Self.describe(frame:)))
        var mismatches: [Int] = []
        for i in 0..<packed.count
        where packed.header(at: i) != scanned[i].header || packed.location(at: i) != scanned[i].location
            || packed.end(at: i) != scanned[i].end || packed.chunk(at: i) != scanned[i].chunk
        {
            mismatches.append(i)
        }
        #expect(mismatches == [])
        #expect(packed.contains { $0.chunk != nil })
        #expect(packed.contains { $0.plaintextBody != nil })
        var changed = packed
        changed.replaceSubrange(1..<2, with: [scanned[1], scanned[2]])
        #expect(changed.packedCount == 0)
        #expect(changed.count == scanned.count + 1)
        #expect(changed[3].location == scanned[2].location)
        #expect(changed[5].location == scanned[4].location)
        var appended = packed
        appended.append(scanned[0])
        #expect(appended.packedCount == packed.count)
        #expect(appended.last?.location == scanned[0].location)
    }

    /// A frame table whose columns disagree with each other or with the
    /// file — sealed under the right key, so that only the checks of
    /// `Spec/index-cache.md §5` can refuse it — is refused, and an open
    /// through the cache then scans the whole file and answers as a full
    /// open.
    @Test func aDamagedColumnIsRefused() throws {
        let (f, _, _) = try Self.fixture("columns")
        let key = try IndexCacheKey(device: f.device, vaultID: f.vaultID)
        guard case .success(let found) = IndexCache.loadFrameTable(folder: f.cacheFolder, key: key, vaultID: f.vaultID),
            let table = found.table?.materialized()
        else {
            Issue.record("no frame table")
            return
        }
        let id = found.identity
        func opens(_ t: PrefixFrameTable) -> Bool {
            let opened = VaultFile.open(
                path: f.path, writable: false, cachedPrefix: t, frameCount: id.frameCount, committedLength: id.committedLength,
                chainHead: id.chainHead, commitsDigest: id.commitsDigest)
            if case .opened = opened { return true }
            return false
        }
        #expect(opens(table))
        #expect(table.frameCount == id.frameCount)
        let s = try f.full().file.structure
        let w = PrefixFrameTable.trailerWidth
        let commit = s.groups[0].commitFrame
        let chunk = try #require((0..<id.frameCount).first { s.frames[$0].header.kind == .blobChunk })
        let record = try #require((0..<id.frameCount).first { s.frames[$0].header.kind == .entryRevision })
        let keyring = try #require((0..<id.frameCount).first { s.frames[$0].header.kind == .keyring })
        #expect(table.chunkFrames.count >= 8)
        var cases: [(String, PrefixFrameTable)] = []
        func edit(_ name: String, _ change: (inout PrefixFrameTable) -> Void) {
            var t = table
            change(&t)
            cases.append((name, t))
        }
        edit("a header cut short") { $0.headers.removeLast() }
        edit("one header row fewer") { $0.headers.removeLast(FrameHeader.byteCount) }
        edit("one trailer row fewer") { $0.trailers.removeLast(w) }
        edit("a trailer row more") { $0.trailers += [UInt8](repeating: 0, count: w) }
        edit("a commit's trailer row not zero") { $0.trailers[commit * w + 5] = 1 }
        edit("a chunk tag's padding not zero") { $0.trailers[chunk * w + 20] = 1 }
        edit("a keyring's body hash changed") { $0.trailers[keyring * w] ^= 1 }
        edit("a record's body length changed") { $0.headers[record * FrameHeader.byteCount + 8] ^= 0x10 }
        edit("a record's kind changed to a chunk") { $0.headers[record * FrameHeader.byteCount] = RecordKind.blobChunk.rawValue }
        edit("a commit's key id changed") { $0.headers[commit * FrameHeader.byteCount + 2] ^= 1 }
        edit("no chunk rows") {
            $0.chunkFrames = []
            $0.chunkHeaders = []
        }
        edit("the chunk index cut short") { $0.chunkFrames.removeLast() }
        edit("the chunk index one row short") {
            $0.chunkFrames.removeLast(4)
            $0.chunkHeaders.removeLast(ChunkHeader.byteCount)
        }
        edit("a chunk header cut short") { $0.chunkHeaders.removeLast() }
        edit("a chunk row naming a record") {
            $0.chunkFrames[0..<4] = ArraySlice((0..<4).map { UInt8(truncatingIfNeeded: record >> (8 * $0)) })
        }
        edit("chunk rows out of order") {
            let first = Array($0.chunkFrames[0..<4])
            $0.chunkFrames[0..<4] = $0.chunkFrames[4..<8]
            $0.chunkFrames[4..<8] = ArraySlice(first)
        }
        edit("a malformed chunk header") { $0.chunkHeaders[ChunkHeader.byteCount - 1] = 2 }
        edit("one digest fewer") { $0.digests.removeLast(CommitChain.digestByteCount) }
        edit("a digest cut short") { $0.digests.removeLast() }
        for (name, t) in cases {
            #expect(t != table, "\(name)")
            #expect(!opens(t), "\(name)")
        }

        // Sealed into the cache: the columns that do not cut into row
        // groups leave no table (the open scans the whole file); a row
        // group that does not describe the file is read from the file
        // instead (format 7, `Spec/index-cache.md §5`).
        let full = try IndexCacheOpenTests.answers(try f.full())
        let scanned = Self.describe(try f.full().file.structure)
        for (name, t) in [cases[0], cases[4], cases[11]] {
            guard case .loaded(var contents) = IndexCache.load(folder: f.cacheFolder, key: key, vaultID: f.vaultID, check: { _ in nil })
            else {
                Issue.record("the cache does not load")
                return
            }
            contents.frameTable = t
            try Data(IndexCache.seal(contents, key: key)).write(to: URL(fileURLWithPath: f.cacheFile))
            chmod(f.cacheFile, 0o600)
            let v = try f.cached()
            #expect(Self.describe(v.file.structure) == scanned, "\(name)")
            if v.file.cachedPrefixFrameCount > 0 {
                #expect(v.file.cachedPrefixRowGroupLoads.file == 1, "\(name)")
            } else {
                #expect(v.file.scanStartOffset == 64, "\(name)")
            }
            #expect(try IndexCacheOpenTests.answers(v) == full, "\(name)")
        }
    }
}
