import Foundation
@_spi(Format) import Quire
@_spi(Crypto) import QuireCrypto
@_spi(Format) import QuireFormat
@_spi(Format) import QuireKeys
import QuireSystem
import Testing

/// Cache format 7 seals the frame table in row groups (`Spec/index-cache.md
/// §1`, §4, §5): an open checks the directory against the file and reads a
/// row group only when a frame in it is needed; a row group that is
/// damaged, cut, moved or from another cache is never used — its frames are
/// read from the vault file — and the answers are always a full open's.
@Suite struct IndexCacheRowGroupTests {
    typealias Fixture = IndexCacheOpenTests.Fixture
    static let rows = 4

    /// The prefix fixture (entries, a conflict, an attachment) with its
    /// cache resealed in row groups of ``rows`` frames; the sealed bytes.
    static func fixture(_ label: String) throws -> (Fixture, IndexCache.Contents, [UInt8]) {
        let (f, _, _) = try IndexCachePrefixTests.fixture("row groups " + label)
        let key = try IndexCacheKey(device: f.device, vaultID: f.vaultID)
        guard case .loaded(var contents) = IndexCache.load(folder: f.cacheFolder, key: key, vaultID: f.vaultID, check: { _ in nil }) else {
            throw CocoaError(.fileReadCorruptFile)
        }
        let s = try f.full().file.structure
        contents.frameTable = PrefixFrameTable(of: s, frameCount: contents.identity.frameCount)
        let bytes = IndexCache.seal(contents, key: key, random: SeededRandom(label: label), rowsPerGroup: rows)
        try write(bytes, to: f)
        return (f, contents, bytes)
    }

    static func write(_ bytes: [UInt8], to f: Fixture) throws {
        try Data(bytes).write(to: URL(fileURLWithPath: f.cacheFile))
        chmod(f.cacheFile, 0o600)
    }

    /// Where each row group's sealed bytes (nonce included) are in `bytes`.
    static func places(_ bytes: [UInt8], key: IndexCacheKey, vaultID: VaultID) throws -> [Range<Int>] {
        let out = try #require(IndexCache.rowGroupPlaces(bytes, key: key, vaultID: vaultID))
        #expect(out.last?.upperBound == bytes.count)
        return out
    }

    @Test func rowGroupsRoundTrip() throws {
        let (f, contents, _) = try Self.fixture("round trip")
        let key = try IndexCacheKey(device: f.device, vaultID: f.vaultID)
        let found = try #require(try? IndexCache.loadFrameTable(folder: f.cacheFolder, key: key, vaultID: f.vaultID).get())
        let table = try #require(found.table)
        #expect(table.directory.rowsPerGroup == Self.rows)
        #expect(table.directory.groupCount > 3)
        #expect(table.materialized() == contents.frameTable)
        let full = try f.full()
        let v = try f.cached()
        #expect(v.file.cachedPrefixFrameCount == contents.identity.frameCount)
        #expect(IndexCachePrefixTests.describe(v.file.structure) == IndexCachePrefixTests.describe(full.file.structure))
        #expect(v.file.cachedPrefixRowGroupLoads.cache == table.directory.groupCount)
        #expect(v.file.cachedPrefixRowGroupLoads.file == 0)
        #expect(try IndexCacheOpenTests.answers(v) == (try IndexCacheOpenTests.answers(full)))
    }

    /// An open that appends loads no row group, from the cache or the
    /// vault file (the keyring frames, and their headers and bodies, come
    /// from the directory and the bytes read at open); the entry it writes
    /// is read back by a full open.
    @Test func anAppendReadsNoRowGroup() throws {
        let (f, _, _) = try Self.fixture("append")
        let key = try IndexCacheKey(device: f.device, vaultID: f.vaultID)
        let groups = try #require(try IndexCache.loadFrameTable(folder: f.cacheFolder, key: key, vaultID: f.vaultID).get().table)
            .directory.groupCount
        #expect(groups > 3)
        let writer = try f.cached()
        #expect(writer.file.cachedPrefixFrameCount > 0)
        try writer.add(EntryBody(created: IndexCacheOpenTests.t0 + 9_100_000_000, text: "Appended through row groups"))
        let loads = writer.file.cachedPrefixRowGroupLoads
        #expect(loads.file == 0)
        #expect(loads.cache == 0)
        let after = try f.full()
        #expect(after.file.commits.allVerified)
        #expect(try after.entries().contains { $0.body.text == "Appended through row groups" })
        #expect(try IndexCacheOpenTests.answers(try f.cached()) == (try IndexCacheOpenTests.answers(after)))
    }

    /// A row group flipped, cut, moved, swapped with another, taken from
    /// another sealing of the same table, from another vault's or another
    /// device's cache: never used. An open whose cache fails before the
    /// row groups (the file cut) scans the whole file; otherwise those
    /// frames are read from the vault file. Either way the structure and
    /// every answer are a full open's.
    @Test func aDamagedOrMovedRowGroupIsNeverUsed() throws {
        let (f, contents, bytes) = try Self.fixture("damage")
        let key = try IndexCacheKey(device: f.device, vaultID: f.vaultID)
        let places = try Self.places(bytes, key: key, vaultID: f.vaultID)
        #expect(places.count > 3)
        let full = try f.full()
        let expected = IndexCachePrefixTests.describe(full.file.structure)
        let answers = try IndexCacheOpenTests.answers(full)

        // The same contents sealed again (fresh nonces), for another vault
        // id, and under another device's key.
        let again = IndexCache.seal(contents, key: key, random: SeededRandom(label: "again"), rowsPerGroup: Self.rows)
        var otherContents = contents
        otherContents.vaultID = VaultID(unchecked: [UInt8](repeating: 7, count: VaultID.byteCount))
        let otherVault = IndexCache.seal(otherContents, key: key, random: SeededRandom(label: "other"), rowsPerGroup: Self.rows)
        let phone = try DeviceIdentity.generate(name: "phone", now: IndexCacheOpenTests.t0, using: SeededRandom(label: "row group phone"))
        let otherKey = IndexCache.seal(
            contents, key: try IndexCacheKey(device: phone, vaultID: f.vaultID), random: SeededRandom(label: "phone"),
            rowsPerGroup: Self.rows)
        #expect(again.count == bytes.count)
        #expect(otherVault.count == bytes.count)
        #expect(otherKey.count == bytes.count)

        let g = places[1]
        var cases: [(String, [UInt8], Bool)] = []  // name, bytes, refused before the row groups
        var flipped = bytes
        flipped[g.lowerBound + 30] ^= 0x01
        cases.append(("a bit flipped in a row group", flipped, false))
        var tagFlipped = bytes
        tagFlipped[g.upperBound - 1] ^= 0x80
        cases.append(("a bit flipped in a row group's tag", tagFlipped, false))
        var nonceFlipped = bytes
        nonceFlipped[g.lowerBound] ^= 0x01
        cases.append(("a bit flipped in a row group's nonce", nonceFlipped, false))
        cases.append(("the last byte cut", Array(bytes.dropLast()), true))
        cases.append(("the last row group cut", Array(bytes[0..<places.last!.lowerBound]), true))
        cases.append(("a byte appended", bytes + [0], true))
        // Two row groups of the same sealed length, exchanged.
        if let (a, b) = Self.sameLength(places) {
            var swapped = bytes
            swapped.replaceSubrange(places[a], with: bytes[places[b]])
            swapped.replaceSubrange(places[b], with: bytes[places[a]])
            cases.append(("two row groups exchanged", swapped, false))
            var copied = bytes
            copied.replaceSubrange(places[b], with: bytes[places[a]])
            cases.append(("a row group in another's place", copied, false))
        } else {
            Issue.record("no two row groups of one length")
        }
        for (name, source) in [("another sealing", again), ("another vault's cache", otherVault), ("another device's cache", otherKey)] {
            var spliced = bytes
            spliced.replaceSubrange(g, with: source[g])
            cases.append(("a row group from " + name, spliced, false))
        }
        for (name, damaged, early) in cases {
            #expect(damaged != bytes, "\(name)")
            try Self.write(damaged, to: f)
            let v = try f.cached()
            #expect(IndexCachePrefixTests.describe(v.file.structure) == expected, "\(name)")
            if early {
                #expect(v.file.cachedPrefixFrameCount == 0, "\(name)")
            } else {
                #expect(v.file.cachedPrefixFrameCount == contents.identity.frameCount, "\(name)")
                #expect(v.file.cachedPrefixRowGroupLoads.file >= 1, "\(name)")
                #expect(v.file.cachedPrefixRowGroupLoads.cache == places.count - v.file.cachedPrefixRowGroupLoads.file, "\(name)")
            }
            #expect(try IndexCacheOpenTests.answers(v) == answers, "\(name)")
            #expect(try IndexCacheOpenTests.answers(try f.cached()) == answers, "\(name)")
        }
    }

    /// A cache whose frame directory does not authenticate is removed at
    /// the open that finds it (the open scans the file whole and answers as
    /// a full open): its summaries and index, sealed apart, would still
    /// load, so nothing else replaced it and every open scanned the vault
    /// whole (stop 38's search trial).
    @Test func aCacheWhoseFrameDirectoryDoesNotOpenIsRemoved() throws {
        let (f, _, bytes) = try Self.fixture("directory")
        let answers = try IndexCacheOpenTests.answers(try f.full())
        // The frame directory's sealed bytes follow the 45-byte prefix and
        // the header part (nonce, then the sealed header of the length the
        // prefix gives at bytes 9..<13), after their own 24-byte nonce.
        let headerCount = bytes[9..<13].reduce(0) { $0 << 8 | Int($1) }
        var damaged = bytes
        damaged[IndexCache.prefixByteCount + 24 + headerCount + 24 + 5] ^= 0x01
        try Self.write(damaged, to: f)
        let v = try f.cached()
        #expect(v.file.cachedPrefixFrameCount == 0)
        let after = FileManager.default.contents(atPath: f.cacheFile).map { [UInt8]($0) }
        #expect(after != damaged)
        #expect(try IndexCacheOpenTests.answers(v) == answers)
        #expect(try IndexCacheOpenTests.answers(try f.cached()) == answers)
    }

    static func sameLength(_ places: [Range<Int>]) -> (Int, Int)? {
        for a in 0..<places.count {
            for b in (a + 1)..<places.count where places[a].count == places[b].count { return (a, b) }
        }
        return nil
    }

    /// A cache written by format 6 (the frame table sealed whole) is
    /// discarded unread: the open scans the file whole, answers as a full
    /// open, and the cache is rewritten in this format.
    @Test func aVersion6CacheIsDiscardedAndRebuilt() throws {
        let (f, _, bytes) = try Self.fixture("version 6")
        var old = bytes
        old[IndexCache.magic.count] = 6
        try Self.write(old, to: f)
        let v = try f.cached()
        #expect(v.file.cachedPrefixFrameCount == 0)
        #expect(v.file.scanStartOffset == 64)
        #expect(try IndexCacheOpenTests.answers(v) == (try IndexCacheOpenTests.answers(try f.full())))
        let rewritten = try Data(contentsOf: URL(fileURLWithPath: f.cacheFile))
        #expect(rewritten[IndexCache.magic.count] == IndexCache.formatVersion)
        #expect(try f.cached().file.cachedPrefixFrameCount > 0)
    }
}
