import Foundation
@_spi(Format) import QuireFormat
import Testing

@_spi(Format) @testable import Quire

/// Cache format 11 seals the search index's postings in groups apart from
/// its term table (`IndexCache.PostingGroups`): a search opens only the
/// groups holding its terms' lists; a group or term table that does not
/// open or check drops the cache, and the answers are always a full read's.
@Suite struct IndexCachePostingGroupTests {
    typealias F = IndexCacheOpenTests

    /// Bytes of postings per group in these tests: small, so that the
    /// fixture's lists fill many groups.
    static let groupBytes = 16

    /// The lazy-postings fixture with its cache rewritten in posting groups
    /// of ``groupBytes``; the cache's contents, loaded eagerly, and its bytes.
    static func fixture(_ label: String) throws -> (F.Fixture, IndexCache.Contents, IndexCacheKey, [UInt8]) {
        let (f, contents, key) = try IndexCacheLazyPostingsTests.fixture("groups " + label)
        try IndexCache.write(contents, key: key, folder: f.cacheFolder, postingGroupBytes: groupBytes)
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: f.cacheFile)))
        return (f, contents, key, bytes)
    }

    /// The cache's search index loaded with its lists left in their groups.
    static func lazy(_ f: F.Fixture, key: IndexCacheKey) throws -> IndexCache.LazySearch {
        guard
            case .loaded(let c) = IndexCache.load(
                folder: f.cacheFolder, key: key, vaultID: f.vaultID, checkEveryRow: false, lazyPostings: true, check: { _ in nil })
        else { throw CocoaError(.fileReadCorruptFile) }
        return try #require(c.lazySearch)
    }

    /// The posting groups holding the list of `term`.
    static func groups(of term: String, in search: IndexCache.LazySearch) throws -> ClosedRange<Int> {
        let i = try #require(search.terms.firstIndex(of: Array(term.utf8)))
        let p = search.postings
        return (p.starts[i] / groupBytes)...((p.starts[i + 1] - 1) / groupBytes)
    }

    @Test func aSearchOpensOnlyItsTermsGroups() throws {
        let (f, contents, key, _) = try Self.fixture("only")
        let search = try Self.lazy(f, key: key)
        let total = search.postings.groups.groups.count
        #expect(total > 10)
        let harbour = try Self.groups(of: "harbour", in: search)
        #expect(try IndexCacheLazyPostingsTests.termsHolding("harbour", in: contents) == 1)
        let fresh = try f.cached()
        #expect(fresh.cachedSearchPostingGroupLoads == nil)
        let found = try #require(fresh.cachedLiveEntries(mayContain: ["harbour"]))
        #expect(fresh.cachedSearchPostingGroupLoads == harbour.count)
        #expect(harbour.count < total)
        let all = try f.full().entries()
        #expect(found.map(\.id) == all.filter { $0.body.text.contains("harbour") }.map(\.id))
        #expect(fresh.answersFromIndexCache)
        #expect(fresh.fullIndexLoads == 0)
        #expect(FileManager.default.fileExists(atPath: f.cacheFile))
    }

    /// A damaged, cut or swapped posting group, or a damaged term table:
    /// the search that reads it drops the cache (a group's file removed) and
    /// answers as a full read does; the next query writes a new cache.
    @Test(arguments: ["damaged group", "cut group", "swapped groups", "damaged term table", "group of another cache"])
    func aBadGroupOrTermTableDropsTheCache(_ damage: String) throws {
        let (f, contents, key, bytes) = try Self.fixture(damage)
        let search = try Self.lazy(f, key: key)
        let places = try #require(IndexCache.postingGroupPlaces(bytes, key: key, vaultID: f.vaultID))
        #expect(places.count == search.postings.groups.groups.count)
        let g = try Self.groups(of: "harbour", in: search).lowerBound
        let other = g == 0 ? 1 : g - 1
        var damaged = bytes
        switch damage {
        case "damaged group":
            damaged[places[g].lowerBound + 30] ^= 0x01
        case "cut group":
            damaged.removeSubrange((places[g].upperBound - 3)..<places[g].upperBound)
        case "swapped groups":
            #expect(places[g].count == places[other].count)
            damaged.replaceSubrange(places[g], with: bytes[places[other]])
            damaged.replaceSubrange(places[other], with: bytes[places[g]])
        case "damaged term table":
            // The term table's sealed bytes end where the first group starts.
            damaged[places[0].lowerBound - 20] ^= 0x01
        default:
            // The same group of another cache of the same contents.
            try IndexCache.write(contents, key: key, folder: f.cacheFolder, postingGroupBytes: Self.groupBytes)
            let second = try [UInt8](Data(contentsOf: URL(fileURLWithPath: f.cacheFile)))
            let secondPlaces = try #require(IndexCache.postingGroupPlaces(second, key: key, vaultID: f.vaultID))
            #expect(secondPlaces[g] == places[g])
            damaged.replaceSubrange(places[g], with: second[secondPlaces[g]])
        }
        try IndexCacheRowGroupTests.write(damaged, to: f)
        let all = try f.full().entries()
        let fresh = try f.cached()
        // The search reading it turns the cache down; its file is removed.
        #expect(fresh.cachedLiveEntries(mayContain: ["harbour"]) == nil, "\(damage)")
        #expect(!fresh.answersFromIndexCache, "\(damage)")
        if damage != "damaged term table" && damage != "cut group" {
            // (A term table that does not open, or a file cut short, is
            // turned down whole and written again by the full read.)
            #expect(!FileManager.default.fileExists(atPath: f.cacheFile), "\(damage)")
        }
        // Answered as a full read.
        #expect(try F.answers(fresh) == (try F.answers(try f.full())), "\(damage)")
        let read = try fresh.entries()
        #expect(read.map(\.id) == all.map(\.id))
        // A new cache, in this format, answers the next open.
        let rebuilt = try f.cached()
        #expect(try F.answers(rebuilt) == (try F.answers(try f.full())), "\(damage)")
        let again = try f.cached()
        #expect(again.answersFromIndexCache, "\(damage)")
        let found = try #require(again.cachedLiveEntries(mayContain: ["harbour"]), "\(damage)")
        #expect(found.map(\.id) == all.filter { $0.body.text.contains("harbour") }.map(\.id))
        let rewritten = try Data(contentsOf: URL(fileURLWithPath: f.cacheFile))
        #expect(rewritten[IndexCache.magic.count] == IndexCache.formatVersion)
    }

    /// A cache written by format 10 (its search part sealed whole) is
    /// discarded unread: the open answers as a full open, and the cache is
    /// rewritten in this format.
    @Test func aVersion10CacheIsDiscardedAndRebuilt() throws {
        let (f, _, bytes) = try IndexCacheSummaryGroupTests.fixture("version 10")
        var old = bytes
        old[IndexCache.magic.count] = 10
        try IndexCacheRowGroupTests.write(old, to: f)
        let v = try f.cached()
        #expect(v.file.cachedPrefixFrameCount == 0)
        #expect(try F.answers(v) == (try F.answers(try f.full())))
        let rewritten = try Data(contentsOf: URL(fileURLWithPath: f.cacheFile))
        #expect(rewritten[IndexCache.magic.count] == 11)
        let again = try f.cached()
        #expect(again.file.cachedPrefixFrameCount > 0)
        #expect(again.answersFromIndexCache)
    }

    /// Prefix and substring searches, CJK and Cyrillic included, name the
    /// same documents from lists read out of small groups (lists crossing
    /// groups) as from the eagerly decoded ones; an eager load of the
    /// grouped file gives the stored index; a tail's entries are found.
    @Test func groupedListsEqualTheFullScan() throws {
        let (f, eager, key, _) = try Self.fixture("equal")
        guard case .loaded(let whole) = IndexCache.load(folder: f.cacheFolder, key: key, vaultID: f.vaultID, check: { _ in nil }) else {
            Issue.record("the grouped cache does not load eagerly")
            return
        }
        #expect(whole.search == eager.search)
        let search = try Self.lazy(f, key: key)
        // Some list crosses a group boundary.
        let p = search.postings
        #expect(
            p.starts.indices.dropLast().contains {
                p.starts[$0] / Self.groupBytes != max(p.starts[$0], p.starts[$0 + 1] - 1) / Self.groupBytes
            })
        var full = try #require(eager.makeSearchIndex())
        var index = try #require(SearchIndex(storedTerms: search.terms, encoded: search.postings, documentCount: eager.entryCount))
        let queries = ["w", "wa", "walk", "h", "harb", "t", "a", "ed", "version", "ел", "ёл", "日", "北京", "travel", "1", "2", "zzq", "e"]
        let n = Int32(eager.entryCount)
        for q in queries {
            let segments = TextTokenizer.substringSegments(of: q)
            let characters = TextTokenizer.unigramCharacters(of: q)
            let want = full.documents(containing: segments, characters: characters)
            let checked = index.checkedDocuments(containing: segments, characters: characters)
            let got = try #require(checked)
            #expect((0..<n).filter { got.contains($0) } == (0..<n).filter { want.contains($0) }, "\(q)")
        }
        for q in queries {
            let want = full.match(q).map { m in (0..<n).filter { m.documents.contains($0) } }
            let got = index.match(q).map { m in (0..<n).filter { m.documents.contains($0) } }
            #expect(got == want, "\(q)")
        }
        #expect(!index.isDamaged)
        #expect(index.postingGroupLoadCount == search.postings.groups.groups.count)
        let v = try f.cached()
        _ = try v.add(EntryBody(created: F.t0 + 900 * 3_600_000, timeZone: "UTC", text: "Harbourside walk, 北京."))
        let fresh = try f.cached()
        let all = try f.full().entries()
        for q in ["harbour", "walk", "北京"] {
            let found = try #require(fresh.cachedLiveEntries(mayContain: [q]), "\(q)")
            #expect(found.map(\.id) == all.filter { $0.body.text.lowercased().contains(q) }.map(\.id), "\(q)")
        }
    }
}
