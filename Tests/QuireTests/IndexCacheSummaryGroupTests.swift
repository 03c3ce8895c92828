import Foundation
@_spi(Format) import Quire
@_spi(Crypto) import QuireCrypto
@_spi(Format) import QuireFormat
@_spi(Format) import QuireKeys
import QuireSystem
import Testing

/// Cache format 9 seals the summaries in row groups (`Spec/index-cache.md
/// §1`, §4, §5): a query opens a row group only when it reads a row in it,
/// so that a page of the newest entries opens the last one or two; a row
/// group that is damaged, cut, moved, exchanged or from another cache is
/// never used — the handle drops the cache, answers from the vault file as
/// a full open does, and writes a new cache.
@Suite struct IndexCacheSummaryGroupTests {
    typealias Fixture = IndexCacheOpenTests.Fixture
    static let rows = 4

    /// The open fixture (30 entries, a deletion, edits, a conflict) with
    /// its cache resealed with summaries in row groups of ``rows`` rows
    /// (and its frame table); the contents and the sealed bytes.
    static func fixture(_ label: String) throws -> (Fixture, IndexCache.Contents, [UInt8]) {
        let f = try IndexCacheOpenTests.fixture("summary groups " + label)
        _ = try IndexCacheOpenTests.answers(try f.cached())  // writes the cache
        let key = try IndexCacheKey(device: f.device, vaultID: f.vaultID)
        guard case .loaded(var contents) = IndexCache.load(folder: f.cacheFolder, key: key, vaultID: f.vaultID, check: { _ in nil }) else {
            throw CocoaError(.fileReadCorruptFile)
        }
        contents.frameTable = PrefixFrameTable(of: try f.full().file.structure, frameCount: contents.identity.frameCount)
        let bytes = IndexCache.seal(contents, key: key, random: SeededRandom(label: label), summaryRowsPerGroup: rows)
        try IndexCacheRowGroupTests.write(bytes, to: f)
        return (f, contents, bytes)
    }

    /// A first page opens only the row groups holding its rows (and the
    /// one after them it looks at for more); a second page, found by a
    /// binary search through the groups' bounds, opens no other group
    /// than its rows'. Every answer is a full open's.
    @Test func aPageOpensOnlyItsOwnRowGroups() throws {
        let (f, contents, _) = try Self.fixture("page")
        #expect(contents.entryCount == 30)
        let full = try f.full()
        let v = try f.cached()
        #expect(v.answersFromIndexCache)
        // The newest group is opened with the cache (a first page reads it).
        #expect(v.cachedSummaryGroupLoads?.opened == 1)
        #expect(v.cachedSummaryGroupLoads?.groups == 8)
        let first = try v.entries(matching: EntryQuery(limit: 3))
        #expect(IndexCacheOpenTests.rows(first) == IndexCacheOpenTests.rows(try full.entries(matching: EntryQuery(limit: 3))))
        // Rows 29 … 26 (30 rows in groups of 4: the last holds 28 and 29).
        #expect(v.cachedSummaryGroupLoads?.opened == 2)
        let second = try v.entries(matching: EntryQuery(limit: 3), after: first.next)
        let fullFirst = try full.entries(matching: EntryQuery(limit: 3))
        #expect(IndexCacheOpenTests.rows(second) == IndexCacheOpenTests.rows(try full.entries(matching: EntryQuery(limit: 3), after: fullFirst.next)))
        #expect(v.cachedSummaryGroupLoads?.opened == 3)
        #expect(v.answersFromIndexCache)
        // An entry by id is found in the id part: only its own group (the
        // newest, open already) is read.
        let id = try #require(first.entries.first?.id)
        #expect(try v.entry(id)?.revision.revisionID == first.entries.first?.revision.revisionID)
        #expect(v.cachedSummaryGroupLoads?.opened == 3)
        #expect(v.cachedSummaryIDPartLoads == 1)
        #expect(try IndexCacheOpenTests.answers(v) == (try IndexCacheOpenTests.answers(full)))
    }

    /// Loaded row by row, each row is the one stored; a damaged row group
    /// is found when a row in it is read (not before), and then reads as
    /// nothing of its own; opened whole, the same file is discarded.
    @Test func rowGroupsOpenWhenARowIsRead() throws {
        let original = IndexCacheTests.contents()
        let key = IndexCacheTests.key()
        let bytes = IndexCache.seal(original, key: key, random: SeededRandom(label: "lazy"), summaryRowsPerGroup: 1)
        let places = try #require(IndexCache.summaryGroupPlaces(bytes, key: key, vaultID: IndexCacheTests.vault))
        #expect(places.count == 4)
        guard case .loaded(let lazy) = IndexCache.open(bytes, key: key, vaultID: IndexCacheTests.vault, checkEveryRow: false, check: IndexCacheTests.accept) else {
            Issue.record("discarded")
            return
        }
        #expect(lazy.summaryGroupLoads?.opened == 0)
        #expect(lazy.entry(at: 3) == original.entries[3])
        #expect(lazy.summaryGroupLoads?.opened == 1)
        #expect(lazy.entries == original.entries)
        #expect(lazy.summaryGroupLoads?.opened == 4)

        var damaged = bytes
        damaged[places[0].lowerBound + 30] ^= 0x04
        guard case .loaded(let found) = IndexCache.open(damaged, key: key, vaultID: IndexCacheTests.vault, checkEveryRow: false, check: IndexCacheTests.accept) else {
            Issue.record("the directory did not open")
            return
        }
        #expect(found.entry(at: 3) == original.entries[3])
        #expect(found.summaryFailure == nil)
        let placeholder = found.entry(at: 0)
        #expect(found.summaryFailure == .notAuthentic)
        #expect(placeholder.summary.isDeleted)
        #expect(placeholder.summary.id != original.entries[0].summary.id)
        #expect(IndexCacheTests.discard(IndexCache.open(damaged, key: key, vaultID: IndexCacheTests.vault, check: IndexCacheTests.accept)) == .notAuthentic)
    }

    /// Rows out of order in a row group, or not those the directory
    /// bounds, are refused when the group is opened.
    @Test func rowsOutOfOrderAreRefused() throws {
        let key = IndexCacheTests.key()
        let bytes = IndexCache.seal(IndexCacheTests.contents(), key: key, summaryRowsPerGroup: 2) { encoded in
            guard case .map(var m)? = try? CBORDecoder.decode(encoded), case .bytes(var created)? = m[text: "created"] else { return encoded }
            // The second row's date before the first's.
            created.replaceSubrange(8..<16, with: [UInt8](repeating: 0, count: 8))
            m[text: "created"] = .bytes(created)
            return CBOREncoder.encode(.map(m))
        }
        #expect(IndexCacheTests.discard(IndexCache.open(bytes, key: key, vaultID: IndexCacheTests.vault, check: IndexCacheTests.accept)) == .malformed)
        guard case .loaded(let lazy) = IndexCache.open(bytes, key: key, vaultID: IndexCacheTests.vault, checkEveryRow: false, check: IndexCacheTests.accept) else {
            Issue.record("the directory did not open")
            return
        }
        _ = lazy.entry(at: 3)
        #expect(lazy.summaryFailure == .malformed)
    }

    /// Two rows with one id in different row groups are refused: the id
    /// part, which holds both, is not in strictly ascending order.
    @Test func oneIDInTwoRowGroupsIsRefused() throws {
        var twice = IndexCacheTests.contents()
        twice.entries[3].summary.id = twice.entries[0].summary.id
        let key = IndexCacheTests.key()
        let bytes = IndexCache.seal(twice, key: key, summaryRowsPerGroup: 2)
        #expect(IndexCacheTests.discard(IndexCache.open(bytes, key: key, vaultID: IndexCacheTests.vault, check: IndexCacheTests.accept)) == .malformed)
    }

    @Test func aDamagedOrMovedRowGroupIsNeverUsed() throws {
        let (f, contents, bytes) = try Self.fixture("damage")
        let key = try IndexCacheKey(device: f.device, vaultID: f.vaultID)
        let places = try #require(IndexCache.summaryGroupPlaces(bytes, key: key, vaultID: f.vaultID))
        #expect(places.count == 8)
        let answers = try IndexCacheOpenTests.answers(try f.full())

        // The same contents sealed again (fresh nonces), for another vault
        // id, and under another device's key.
        func sealed(_ c: IndexCache.Contents, _ k: IndexCacheKey, _ label: String) -> [UInt8] {
            IndexCache.seal(c, key: k, random: SeededRandom(label: label), summaryRowsPerGroup: Self.rows)
        }
        let again = sealed(contents, key, "again")
        var otherContents = contents
        otherContents.vaultID = VaultID(unchecked: [UInt8](repeating: 7, count: VaultID.byteCount))
        let otherVault = sealed(otherContents, key, "other")
        let phone = try DeviceIdentity.generate(name: "phone", now: IndexCacheOpenTests.t0, using: SeededRandom(label: "summary group phone"))
        let otherKey = sealed(contents, try IndexCacheKey(device: phone, vaultID: f.vaultID), "phone")
        var otherIdentity = contents
        otherIdentity.identity.chainHead = [UInt8](repeating: 9, count: 32)
        let otherHeader = sealed(otherIdentity, key, "identity")

        let g = places[1]
        var cases: [(String, [UInt8])] = []
        var flipped = bytes
        flipped[g.lowerBound + 30] ^= 0x01
        cases.append(("a bit flipped in a row group", flipped))
        var tagFlipped = bytes
        tagFlipped[g.upperBound - 1] ^= 0x80
        cases.append(("a bit flipped in a row group's tag", tagFlipped))
        var nonceFlipped = bytes
        nonceFlipped[g.lowerBound] ^= 0x01
        cases.append(("a bit flipped in a row group's nonce", nonceFlipped))
        var cut = bytes
        cut.removeSubrange((g.upperBound - 1)..<g.upperBound)
        cases.append(("a row group cut by a byte", cut))
        var removed = bytes
        removed.removeSubrange(g)
        cases.append(("a row group removed", removed))
        let (a, b) = try #require(IndexCacheRowGroupTests.sameLength(places))
        var swapped = bytes
        swapped.replaceSubrange(places[a], with: bytes[places[b]])
        swapped.replaceSubrange(places[b], with: bytes[places[a]])
        cases.append(("two row groups exchanged", swapped))
        var copied = bytes
        copied.replaceSubrange(places[b], with: bytes[places[a]])
        cases.append(("a row group in another's place", copied))
        for (name, source) in [
            ("another sealing", again), ("another vault's cache", otherVault), ("another device's cache", otherKey),
            ("a cache of another file identity", otherHeader),
        ] {
            #expect(source.count == bytes.count, "\(name)")
            var spliced = bytes
            spliced.replaceSubrange(g, with: source[g])
            cases.append(("a row group from " + name, spliced))
        }
        for (name, damaged) in cases {
            #expect(damaged != bytes, "\(name)")
            try IndexCacheRowGroupTests.write(damaged, to: f)
            let v = try f.cached()
            #expect(try IndexCacheOpenTests.answers(v) == answers, "\(name)")
            #expect(!v.answersFromIndexCache, "\(name): still answers from the damaged cache")
            // A new cache was written, and answers as a full open.
            let after = FileManager.default.contents(atPath: f.cacheFile).map { [UInt8]($0) }
            #expect(after != nil && after != damaged, "\(name)")
            let again = try f.cached()
            #expect(again.answersFromIndexCache, "\(name): not rebuilt")
            #expect(try IndexCacheOpenTests.answers(again) == answers, "\(name)")
            try IndexCacheRowGroupTests.write(bytes, to: f)
        }
    }
}
