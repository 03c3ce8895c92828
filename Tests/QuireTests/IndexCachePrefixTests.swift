import Foundation
@_spi(Format) import Quire
@_spi(Crypto) import QuireCrypto
@_spi(Format) import QuireFormat
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
        s.frames.map { f in
            [
                "\(f.location.offset)/\(f.location.index)", hex(f.headerBytes), hex(f.trailer), "\(f.repaired)",
                f.chunk.map { hex($0.encoded()) } ?? "-", f.plaintextBody.map { hex($0) } ?? "-", "\(String(describing: f.checksumIntact))",
                f.commitBody.map { hex($0) } ?? "-", f.malformation ?? "-",
            ].joined(separator: " ")
        }
            + s.groups.map { g in
                "group \(g.commitFrame) \(g.members) \(hex(g.digest)) \(hex(g.storedHead)) \(hex(g.commitBody)) \(g.containsDamage)"
            } + ["\(s.committedEnd) \(s.fileSize) \(s.uncommittedFrames) \(s.damagedRegions.count) \(s.tailHasDamage)"]
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
        #expect(found.table == PrefixFrameTable(of: s, frameCount: found.identity.frameCount))
        #expect(PrefixFrameTable(of: s, frameCount: 0) == nil)
        // A prefix that does not end with a commit has none.
        #expect(PrefixFrameTable(of: s, frameCount: s.groups[0].commitFrame) == nil)
    }
}
