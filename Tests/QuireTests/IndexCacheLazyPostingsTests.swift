import Foundation
@_spi(Format) import QuireFormat
import Testing

@_spi(Format) @testable import Quire

/// A search answered from the index cache decodes only the posting lists
/// its terms read (`IndexCache.EncodedPostings`), checking each as the
/// eager decode does when it is read; a list that does not check drops the
/// cache, and the answers are always a full read's.
@Suite struct IndexCacheLazyPostingsTests {
    typealias F = IndexCacheOpenTests

    /// The fixture with its cache holding the search part; the cache's
    /// contents, loaded eagerly.
    static func fixture(_ label: String) throws -> (F.Fixture, IndexCache.Contents, IndexCacheKey) {
        let f = try F.fixture("lazy postings " + label)
        let first = try f.cached()
        _ = try first.entries()
        try first.prepareSearchIndex()
        let key = try IndexCacheKey(device: f.device, vaultID: f.vaultID)
        guard case .loaded(let contents) = IndexCache.load(folder: f.cacheFolder, key: key, vaultID: f.vaultID, check: { _ in nil }) else {
            throw CocoaError(.fileReadCorruptFile)
        }
        return (f, contents, key)
    }

    /// The number of stored terms that hold `segment`.
    static func termsHolding(_ segment: String, in contents: IndexCache.Contents) throws -> Int {
        let bytes = Array(segment.utf8)
        return try #require(contents.search).terms.filter { term in
            term.count >= bytes.count && (0...(term.count - bytes.count)).contains { term[$0..<($0 + bytes.count)].elementsEqual(bytes) }
        }.count
    }

    @Test func aSearchDecodesOnlyItsTermsPostingLists() throws {
        let (f, contents, _) = try Self.fixture("only")
        let terms = try #require(contents.search).terms.count
        let harbour = try Self.termsHolding("harbour", in: contents)
        #expect(harbour == 1)
        #expect(terms > 40)
        let fresh = try f.cached()
        #expect(fresh.cachedSearchDecodedListCount == nil)
        let found = try #require(fresh.cachedLiveEntries(mayContain: ["harbour"]))
        #expect(fresh.cachedSearchDecodedListCount == harbour)
        let all = try f.full().entries()
        #expect(found.map(\.id) == all.filter { $0.body.text.contains("harbour") }.map(\.id))
        // A second search decodes its own lists only; one read already is kept.
        let walk = try Self.termsHolding("walk", in: contents)
        _ = try #require(fresh.cachedLiveEntries(mayContain: ["walk", "harbour"]))
        #expect(fresh.cachedSearchDecodedListCount == harbour + walk)
        #expect(fresh.answersFromIndexCache)
        #expect(fresh.fullIndexLoads == 0)
    }

    @Test(arguments: ["past the end", "a gap too long"])
    func aDamagedPostingListFoundLazilyDropsTheCache(_ damage: String) throws {
        let (f, original, key) = try Self.fixture("damaged " + damage)
        var contents = original
        var search = try #require(contents.search)
        let at = try #require(search.terms.firstIndex(of: Array("harbour".utf8)))
        var list = search.postings[at]
        #expect(list.count >= 2)
        // (The encoder writes only ascending lists: the damage it can
        // write is a document past the entries, or a gap longer than them.)
        if damage == "past the end" {
            list[list.count - 1] = Int32(contents.entryCount)
        } else {
            list = [Int32(contents.entryCount) + 1000]
        }
        search.postings[at] = list
        contents.search = search
        try IndexCache.write(contents, key: key, folder: f.cacheFolder)
        // The eager decode turns the file down; the lazy one finds the list
        // damaged only when a search reads it.
        #expect(
            {
                if case .discarded(.malformed) = IndexCache.load(folder: f.cacheFolder, key: key, vaultID: f.vaultID, check: { _ in nil }) {
                    return true
                }
                return false
            }())
        let fresh = try f.cached()
        let all = try f.full().entries()
        // Another term's list checks: answered from the cache.
        let dawn = try #require(fresh.cachedLiveEntries(mayContain: ["dawn"]))
        #expect(dawn.map(\.id) == all.filter { $0.body.text.contains("dawn") }.map(\.id))
        #expect(FileManager.default.fileExists(atPath: f.cacheFile))
        // The damaged one: the cache is dropped and its file removed; the
        // search reads every entry.
        #expect(fresh.cachedLiveEntries(mayContain: ["harbour"]) == nil)
        #expect(!fresh.answersFromIndexCache)
        #expect(!FileManager.default.fileExists(atPath: f.cacheFile))
        let read = try fresh.entries()
        #expect(read.map(\.id) == all.map(\.id))
        #expect(read.filter { $0.body.text.contains("harbour") }.map(\.id) == all.filter { $0.body.text.contains("harbour") }.map(\.id))
    }

    /// Prefix and substring searches, CJK and Cyrillic included, name the
    /// same documents from the lazily decoded lists as from the eagerly
    /// decoded ones, and with a tail's changes applied.
    @Test func aLazySearchEqualsTheFullScan() throws {
        let (f, eager, key) = try Self.fixture("equal")
        guard
            case .loaded(let lazy) = IndexCache.load(
                folder: f.cacheFolder, key: key, vaultID: f.vaultID, lazyPostings: true, check: { _ in nil })
        else {
            Issue.record("the cache does not load lazily")
            return
        }
        #expect(lazy.search == nil)
        var full = try #require(eager.makeSearchIndex())
        var index = try #require(lazy.makeSearchIndex())
        #expect(index.postingCount == full.postingCount)
        let queries = ["w", "wa", "walk", "h", "harb", "t", "a", "ed", "version", "ел", "ёл", "日", "北京", "travel", "1", "2", "zzq", "e"]
        for q in queries {
            let segments = TextTokenizer.substringSegments(of: q)
            let characters = TextTokenizer.unigramCharacters(of: q)
            let want = full.documents(containing: segments, characters: characters)
            let checked = index.checkedDocuments(containing: segments, characters: characters)
            let got = try #require(checked)
            #expect(
                (0..<Int32(eager.entryCount)).filter { got.contains($0) } == (0..<Int32(eager.entryCount)).filter { want.contains($0) },
                "\(q)")
        }
        #expect(!index.isDamaged)
        // Prefix matching (`match`), which reads every list.
        for q in queries {
            let want = full.match(q).map { m in (0..<Int32(eager.entryCount)).filter { m.documents.contains($0) } }
            let got = index.match(q).map { m in (0..<Int32(eager.entryCount)).filter { m.documents.contains($0) } }
            #expect(got == want, "\(q)")
        }
        #expect(lazy.positions(matching: "walk") == eager.positions(matching: "walk"))
        // A tail: entries added after the cache are found, from both.
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
