import Foundation
@_spi(Format) import Quire
@_spi(Crypto) import QuireCrypto
@_spi(Format) import QuireFormat
@_spi(Format) import QuireKeys
import QuireSystem
import Testing

/// Cache format 10 keeps every row's entry id and deletion flag in an id
/// part of the summaries, ordered by id (`Spec/index-cache.md §1`, §4,
/// §5): a lookup by id or id prefix opens the id part and then only the
/// row group holding the row. An id part that is damaged, cut, from
/// another cache, or not in order is never used — the handle drops the
/// cache, answers from the vault file as a full open does, and writes a
/// new cache.
@Suite struct IndexCacheIDPartTests {
    typealias Fixture = IndexCacheOpenTests.Fixture

    /// The id column of an encoded id part and its rows column, changed by
    /// `change`, encoded again (a writer bug a reader must refuse).
    static func changing(_ change: @escaping (inout [UInt8], inout [UInt8], inout UInt64) -> Void) -> ([UInt8]) -> [UInt8] {
        { encoded in
            guard case .map(var m)? = try? CBORDecoder.decode(encoded), case .bytes(var ids)? = m[text: "ids"],
                case .bytes(var rows)? = m[text: "rows"], case .unsigned(var count)? = m[text: "count"]
            else { return encoded }
            change(&ids, &rows, &count)
            m[text: "ids"] = .bytes(ids)
            m[text: "rows"] = .bytes(rows)
            m[text: "count"] = .unsigned(count)
            return CBOREncoder.encode(.map(m))
        }
    }

    /// A lookup by id opens the id part and the one row group holding the
    /// row; a lookup by id prefix the groups of the rows it names; the
    /// answers are a full open's.
    @Test func aLookupOpensTheIDPartAndOneGroup() throws {
        let (f, contents, _) = try IndexCacheSummaryGroupTests.fixture("id part lookup")
        let full = try f.full()
        let v = try f.cached()
        #expect(v.answersFromIndexCache)
        #expect(v.cachedSummaryGroupLoads?.opened == 1)
        #expect(v.cachedSummaryIDPartLoads == 0)
        // Row 5, in the second of 8 groups of 4, live.
        let row = contents.entries[5]
        #expect(!row.summary.isDeleted)
        let id = row.summary.id
        #expect(try v.entry(id)?.revision.revisionID == (try full.entry(id)?.revision.revisionID))
        #expect(v.cachedSummaryIDPartLoads == 1)
        #expect(v.cachedSummaryGroupLoads?.opened == 2)
        // An id no entry has opens no group.
        let none = EntryID(unchecked: [UInt8](repeating: 0xEE, count: 16))
        #expect(try v.entry(none) == nil)
        #expect(v.cachedSummaryGroupLoads?.opened == 2)
        // An 8-digit prefix of row 10's id (the third group).
        let other = contents.entries[10].summary.id
        let low = Array(other.bytes.prefix(4)) + [UInt8](repeating: 0, count: 12)
        let high = Array(other.bytes.prefix(4)) + [UInt8](repeating: 0xFF, count: 12)
        let found = v.cachedLiveEntryIDs(from: EntryID(unchecked: low), through: EntryID(unchecked: high)) { _ in true }
        #expect(found == (contents.entries[10].summary.isDeleted ? [] : [other]))
        #expect(v.cachedSummaryGroupLoads?.opened == 3)
        #expect(v.cachedSummaryIDPartLoads == 1)
        #expect(v.answersFromIndexCache)
        #expect(try IndexCacheOpenTests.answers(v) == (try IndexCacheOpenTests.answers(full)))
    }

    /// Loaded lazily, the id part gives every row by id range, and the
    /// directory's live counts give the live rows without a group.
    @Test func theIDPartGivesRowsByIDAndTheDirectoryTheLiveCount() throws {
        var original = IndexCacheTests.contents()
        original.entries[2].summary.isDeleted = true
        let key = IndexCacheTests.key()
        let bytes = IndexCache.seal(original, key: key, random: SeededRandom(label: "ids"), summaryRowsPerGroup: 1)
        guard
            case .loaded(let lazy) = IndexCache.open(
                bytes, key: key, vaultID: IndexCacheTests.vault, checkEveryRow: false, check: IndexCacheTests.accept)
        else {
            Issue.record("discarded")
            return
        }
        let live = original.entries.filter { !$0.summary.isDeleted }.count
        #expect(live == original.entries.count - 2)
        #expect(lazy.summaryLiveCount == live)
        #expect(lazy.summaryGroupLoads?.opened == 0)
        let zero = EntryID(unchecked: [UInt8](repeating: 0, count: 16))
        let ones = EntryID(unchecked: [UInt8](repeating: 0xFF, count: 16))
        #expect(lazy.rows(withIDsFrom: zero, through: ones) == Array(original.entries.indices))
        for (i, e) in original.entries.enumerated() {
            #expect(lazy.rows(withIDsFrom: e.summary.id, through: e.summary.id) == [i])
        }
        #expect(lazy.summaryIDPartLoads == 1)
        #expect(lazy.summaryGroupLoads?.opened == 0)
        #expect(lazy.entries == original.entries)
        #expect(lazy.summaryFailure == nil)
    }

    /// An id part sealed with ids out of order, an id twice, a row named
    /// twice, a count not the rows', or a deletion flag not its row's, is
    /// refused when it is opened (or when the group it disagrees with is);
    /// and a group whose live rows are not the directory's count.
    @Test func aMalformedIDPartIsRefused() throws {
        let key = IndexCacheTests.key()
        let original = IndexCacheTests.contents()
        let n = original.entries.count
        #expect(n >= 3)
        let cases: [(String, ([UInt8]) -> [UInt8])] = [
            ("ids out of order", Self.changing { ids, _, _ in ids.replaceSubrange(0..<32, with: Array(ids[16..<32] + ids[0..<16])) }),
            ("an id twice", Self.changing { ids, _, _ in ids.replaceSubrange(16..<32, with: Array(ids[0..<16])) }),
            ("a row named twice", Self.changing { _, rows, _ in rows.replaceSubrange(4..<8, with: Array(rows[0..<4])) }),
            ("a row out of range", Self.changing { _, rows, _ in rows[0...3] = [0xFF, 0xFF, 0, 0] }),
            (
                "a row left out",
                Self.changing { ids, rows, count in
                    ids.removeLast(16)
                    rows.removeLast(4)
                    count -= 1
                }
            ),
            ("a count not the rows'", Self.changing { _, _, count in count += 1 }),
            ("a deletion flag not its row's", Self.changing { _, rows, _ in rows[3] ^= 0x80 }),
        ]
        for (name, change) in cases {
            let bytes = IndexCache.seal(original, key: key, random: SeededRandom(label: name), summaryRowsPerGroup: 2, summaryIDs: change)
            #expect(
                IndexCacheTests.discard(IndexCache.open(bytes, key: key, vaultID: IndexCacheTests.vault, check: IndexCacheTests.accept))
                    == .malformed, "\(name)")
            guard
                case .loaded(let lazy) = IndexCache.open(
                    bytes, key: key, vaultID: IndexCacheTests.vault, checkEveryRow: false, check: IndexCacheTests.accept)
            else {
                Issue.record("\(name): the directory did not open")
                continue
            }
            #expect(lazy.summaryFailure == nil, "\(name)")
            _ = lazy.entries
            let id = original.entries[0].summary.id
            #expect(lazy.rows(withIDsFrom: id, through: id) == [], "\(name)")
            #expect(lazy.summaryFailure == .malformed, "\(name)")
        }
        // A group's live rows not the directory's count.
        let flipped = IndexCache.seal(original, key: key, summaryRowsPerGroup: 2) { encoded in
            guard case .map(var m)? = try? CBORDecoder.decode(encoded), case .bytes(var flags)? = m[text: "flags"] else { return encoded }
            flags[0] ^= 8  // deleted
            m[text: "flags"] = .bytes(flags)
            return CBOREncoder.encode(.map(m))
        }
        guard
            case .loaded(let lazy) = IndexCache.open(
                flipped, key: key, vaultID: IndexCacheTests.vault, checkEveryRow: false, check: IndexCacheTests.accept)
        else {
            Issue.record("the directory did not open")
            return
        }
        _ = lazy.entry(at: 0)
        #expect(lazy.summaryFailure == .malformed)
    }

    /// An id part damaged, cut, moved or taken from another cache, or
    /// sealed out of order, is found at the first lookup by id: the handle
    /// answers as a full open, stops answering from the cache, and a new
    /// cache is written that answers again.
    @Test func aDamagedIDPartIsNeverUsed() throws {
        let (f, contents, bytes) = try IndexCacheSummaryGroupTests.fixture("id part damage")
        let key = try IndexCacheKey(device: f.device, vaultID: f.vaultID)
        let place = try #require(IndexCache.summaryIDPartPlace(bytes, key: key, vaultID: f.vaultID))
        let groups = try #require(IndexCache.summaryGroupPlaces(bytes, key: key, vaultID: f.vaultID))
        #expect(place.upperBound == groups[0].lowerBound)
        let full = try f.full()
        let answers = try IndexCacheOpenTests.answers(full)
        let id = contents.entries[5].summary.id
        let expected = try full.entry(id)?.revision.revisionID
        #expect(expected != nil)

        func sealed(_ c: IndexCache.Contents, _ k: IndexCacheKey, _ label: String, _ ids: (([UInt8]) -> [UInt8])? = nil) -> [UInt8] {
            IndexCache.seal(
                c, key: k, random: SeededRandom(label: label), summaryRowsPerGroup: IndexCacheSummaryGroupTests.rows, summaryIDs: ids)
        }
        let again = sealed(contents, key, "again")
        var otherContents = contents
        otherContents.vaultID = VaultID(unchecked: [UInt8](repeating: 7, count: VaultID.byteCount))
        let otherVault = sealed(otherContents, key, "other")
        let phone = try DeviceIdentity.generate(name: "phone", now: IndexCacheOpenTests.t0, using: SeededRandom(label: "id part phone"))
        let otherKey = sealed(contents, try IndexCacheKey(device: phone, vaultID: f.vaultID), "phone")
        var otherIdentity = contents
        otherIdentity.identity.chainHead = [UInt8](repeating: 9, count: 32)
        let otherHeader = sealed(otherIdentity, key, "identity")

        var cases: [(String, [UInt8])] = []
        var flipped = bytes
        flipped[place.lowerBound + 40] ^= 0x01
        cases.append(("a bit flipped in the id part", flipped))
        var tagFlipped = bytes
        tagFlipped[place.upperBound - 1] ^= 0x80
        cases.append(("a bit flipped in the id part's tag", tagFlipped))
        var nonceFlipped = bytes
        nonceFlipped[place.lowerBound] ^= 0x01
        cases.append(("a bit flipped in the id part's nonce", nonceFlipped))
        var cut = bytes
        cut.removeSubrange((place.upperBound - 1)..<place.upperBound)
        cases.append(("the id part cut by a byte", cut))
        for (name, source) in [
            ("another sealing", again), ("another vault's cache", otherVault), ("another device's cache", otherKey),
            ("a cache of another file identity", otherHeader),
        ] {
            #expect(source.count == bytes.count, "\(name)")
            var spliced = bytes
            spliced.replaceSubrange(place, with: source[place])
            cases.append(("the id part from " + name, spliced))
        }
        for (name, change) in [
            ("ids out of order", Self.changing { ids, _, _ in ids.replaceSubrange(0..<32, with: Array(ids[16..<32] + ids[0..<16])) }),
            ("an id twice", Self.changing { ids, _, _ in ids.replaceSubrange(16..<32, with: Array(ids[0..<16])) }),
            (
                "a count not the rows'",
                Self.changing { ids, rows, count in
                    ids.removeLast(16)
                    rows.removeLast(4)
                    count -= 1
                }
            ),
        ] {
            cases.append(("an id part with " + name, sealed(contents, key, name, change)))
        }
        for (name, damaged) in cases {
            #expect(damaged != bytes, "\(name)")
            try IndexCacheRowGroupTests.write(damaged, to: f)
            let v = try f.cached()
            // A cut shifts the parts after it: discarded when it is loaded.
            if !name.contains("cut") { #expect(v.answersFromIndexCache, "\(name): the cache was not loaded") }
            #expect(try v.entry(id)?.revision.revisionID == expected, "\(name)")
            #expect(!v.answersFromIndexCache, "\(name): still answers from the damaged cache")
            #expect(try IndexCacheOpenTests.answers(v) == answers, "\(name)")
            // A new cache was written, and answers as a full open.
            let after = FileManager.default.contents(atPath: f.cacheFile).map { [UInt8]($0) }
            #expect(after != nil && after != damaged, "\(name)")
            let rebuilt = try f.cached()
            #expect(rebuilt.answersFromIndexCache, "\(name): not rebuilt")
            #expect(try rebuilt.entry(id)?.revision.revisionID == expected, "\(name)")
            #expect(rebuilt.answersFromIndexCache, "\(name): the rebuilt cache's id part failed")
            try IndexCacheRowGroupTests.write(bytes, to: f)
        }
    }

    /// A cache written by format 9 (no id part) is discarded unread: the
    /// open answers as a full open, and the cache is rewritten in this
    /// format.
    @Test func aVersion9CacheIsDiscardedAndRebuilt() throws {
        let (f, _, bytes) = try IndexCacheSummaryGroupTests.fixture("version 9")
        var old = bytes
        old[IndexCache.magic.count] = 9
        try IndexCacheRowGroupTests.write(old, to: f)
        let v = try f.cached()
        #expect(v.file.cachedPrefixFrameCount == 0)
        #expect(try IndexCacheOpenTests.answers(v) == (try IndexCacheOpenTests.answers(try f.full())))
        let rewritten = try Data(contentsOf: URL(fileURLWithPath: f.cacheFile))
        #expect(rewritten[IndexCache.magic.count] == IndexCache.formatVersion)
        let again = try f.cached()
        #expect(again.file.cachedPrefixFrameCount > 0)
        #expect(again.answersFromIndexCache)
    }
}
