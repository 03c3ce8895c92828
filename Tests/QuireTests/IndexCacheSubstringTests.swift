import Foundation
@_spi(Format) import QuireFormat
import Testing

@_spi(Format) @testable import Quire

/// `Vault.cachedLiveEntries(mayContain:)`: the entries the cache's search
/// index says may hold a folded substring, read without the others
/// (`Spec/index-cache.md §1`, "The search index and substring search").
@Suite struct IndexCacheSubstringTests {
    typealias F = IndexCacheOpenTests

    @Test func aCachedSearchReadsOnlyTheEntriesItsIndexNames() throws {
        let f = try F.fixture("substring")
        // A handle that read everything builds the search index and writes
        // it to the cache; before that, the cache has no search part.
        let first = try f.cached()
        _ = try first.entries()
        #expect(first.cachedLiveEntries(mayContain: ["harbour"]) == nil)
        try first.prepareSearchIndex()
        let fresh = try f.cached()
        let found = try #require(fresh.cachedLiveEntries(mayContain: ["arbou"]))
        let all = try f.full().entries()
        #expect(try fresh.liveEntryCount() == all.count)
        let want = all.filter { $0.body.text.contains("harbour") }.map(\.id)
        #expect(!want.isEmpty)
        #expect(found.map(\.id) == want)
        #expect(found.map(\.revision.revisionID) == all.filter { $0.body.text.contains("harbour") }.map(\.revision.revisionID))
        // Russian: й in the text is found by и (Foundation folds й to и).
        #expect(
            try #require(fresh.cachedLiveEntries(mayContain: ["елка"])).count == all.filter { $0.body.text.contains("ёлка") }.count)
        // Tags are searched too; a substring no word holds names nothing.
        #expect(
            try #require(fresh.cachedLiveEntries(mayContain: ["ravel"])).count
                == all.filter { $0.body.tags.contains("Travel") }.count)
        #expect(try #require(fresh.cachedLiveEntries(mayContain: ["zzq"])).isEmpty)
        // CJK is narrowed by its characters: 日 and 记 are unigrams of
        // the entries holding 日记, and no other entry holds both.
        let diary = try #require(fresh.cachedLiveEntries(mayContain: ["日记"]))
        #expect(!diary.isEmpty)
        #expect(diary.map(\.id) == all.filter { $0.body.text.contains("日记") }.map(\.id))
        #expect(try #require(fresh.cachedLiveEntries(mayContain: ["东京"])).isEmpty)
        // Nothing to narrow by (punctuation, a voiced sound mark): the
        // caller reads everything.
        #expect(fresh.cachedLiveEntries(mayContain: ["--"]) == nil)
        #expect(fresh.cachedLiveEntries(mayContain: ["。"]) == nil)
        #expect(fresh.cachedLiveEntries(mayContain: ["\u{3099}"]) == nil)
        #expect(fresh.fullIndexLoads == 0)
        #expect(fresh.answersFromIndexCache)
    }

    /// A page of a search (`quire search -n N`) reads the candidates'
    /// records newest first and stops when `limit` are accepted: `accept`
    /// sees exactly the newest candidates down to the page's last row, and
    /// the page is the newest of what the unlimited read accepts.
    @Test func aPageOfASearchReadsNewestFirstUntilItIsFull() throws {
        let f = try F.fixture("substring page")
        let first = try f.cached()
        _ = try first.entries()
        try first.prepareSearchIndex()
        let fresh = try f.cached()
        let all = try #require(fresh.cachedLiveEntries(mayContain: ["arbou"]))
        #expect(all.count >= 6)
        let newest = Array(all.reversed())
        var seen: [EntrySnapshot] = []
        let page = try #require(
            fresh.cachedLiveEntries(mayContain: ["arbou"], newestFirst: 3) { e in
                seen.append(e)
                return true
            })
        #expect(page.map(\.id) == newest.prefix(3).map(\.id))
        #expect(seen.map(\.id) == newest.prefix(3).map(\.id))
        // Every other candidate turned down: read until the third accepted.
        seen = []
        var n = 0
        let skipping = try #require(
            fresh.cachedLiveEntries(mayContain: ["arbou"], newestFirst: 3) { e in
                seen.append(e)
                n += 1
                return n % 2 == 0
            })
        #expect(skipping.map(\.id) == [newest[1], newest[3], newest[5]].map(\.id))
        #expect(seen.map(\.id) == newest.prefix(6).map(\.id))
        // A page larger than the candidates reads them all; none named, none read.
        seen = []
        let whole = try #require(
            fresh.cachedLiveEntries(mayContain: ["arbou"], newestFirst: 1000) { e in
                seen.append(e)
                return true
            })
        #expect(whole.map(\.id) == newest.map(\.id) && seen.count == all.count)
        #expect(try #require(fresh.cachedLiveEntries(mayContain: ["zzq"], newestFirst: 5) { _ in true }).isEmpty)
        #expect(fresh.cachedLiveEntries(mayContain: ["--"], newestFirst: 5) { _ in true } == nil)
        #expect(fresh.fullIndexLoads == 0)
        #expect(fresh.answersFromIndexCache)
    }

    /// The live entries a cached search reports are counted from the
    /// summaries' directory: only the row groups of the entries its index
    /// names are opened (none for a word no entry holds), not every one.
    @Test func aCachedSearchCountsLiveEntriesWithoutOpeningRowGroups() throws {
        let f = try F.fixture("substring live count")
        let first = try f.cached()
        _ = try first.entries()
        try first.prepareSearchIndex()
        // The cache with its search part, resealed in row groups of 4 rows.
        let key = try IndexCacheKey(device: f.device, vaultID: f.vaultID)
        guard case .loaded(var contents) = IndexCache.load(folder: f.cacheFolder, key: key, vaultID: f.vaultID, check: { _ in nil }) else {
            throw CocoaError(.fileReadCorruptFile)
        }
        #expect(contents.search != nil)
        contents.frameTable = PrefixFrameTable(of: try f.full().file.structure, frameCount: contents.identity.frameCount)
        try IndexCacheRowGroupTests.write(IndexCache.seal(contents, key: key, summaryRowsPerGroup: 4), to: f)
        let all = try f.full().entries()
        let fresh = try f.cached()
        #expect(fresh.answersFromIndexCache)
        #expect(fresh.cachedSummaryGroupLoads?.groups == 8)
        let opened = try #require(fresh.cachedSummaryGroupLoads?.opened)
        let none = try #require(fresh.cachedLiveEntries(mayContain: ["zzq"]))
        #expect(none.isEmpty)
        #expect(try fresh.liveEntryCount() == all.count)
        #expect(fresh.cachedSummaryGroupLoads?.opened == opened)
        let found = try #require(fresh.cachedLiveEntries(mayContain: ["arbou"]))
        #expect(try fresh.liveEntryCount() == all.count)
        #expect(found.map(\.id) == all.filter { $0.body.text.contains("harbour") }.map(\.id))
        #expect(fresh.answersFromIndexCache)
    }

    /// Without a cache to write it to, the search index is not built for
    /// `quire search` (it would cost a tokenization of every entry for
    /// nothing); with one, it is.
    @Test func theSearchIndexIsBuiltOnlyToBeCached() throws {
        let f = try F.fixture("substring no store")
        let full = try f.full()
        _ = try full.entries()
        try full.prepareSearchIndex()
        #expect(full.searchIndexSize == nil)
        let cached = try f.cached()
        _ = try cached.entries()
        try cached.prepareSearchIndex()
        #expect(cached.searchIndexSize != nil)
    }

    /// The journal, the place, the weather and the attachments' file names
    /// are in an entry's search document, as `quire search` looks in them.
    @Test func theSearchDocumentHoldsWhatQuireSearchLooksIn() {
        var body = EntryBody(text: "Nothing much", tags: ["Work"], journal: "Travels")
        body.location = Location(placeName: "Café de Flore", locality: "Paris", region: "Île-de-France", country: "France")
        body.weather = Weather(conditions: "Drizzle")
        let document = SearchIndex.Document(body)
        let index = SearchIndex([(slot: 0, document: document)])
        for word in ["travels", "flore", "paris", "ile", "france", "drizzle", "work", "nothing"] {
            #expect(index.documents(containing: TextTokenizer.substringSegments(of: word)).contains(0), "\(word)")
        }
        #expect(!index.documents(containing: TextTokenizer.substringSegments(of: "london")).contains(0))
    }

    /// A Kana voiced sound mark after a letter ends the tokenizer's word,
    /// but Foundation's folding drops it: an entry holding one is named
    /// for every run, so that `heronry` finds `heron\u{3099}ry`.
    @Test func aVoicedSoundMarkAfterALetterJoinsTwoWords() {
        for (text, query) in [("heron\u{3099}ry", "heronry"), ("ёлкаﾞs", "каs"), ("ж\u{309A}z", "жz"), ("heron ry", "on")] {
            let index = SearchIndex([(slot: 0, document: SearchIndex.Document(text: text, tags: []))])
            var folded: [UInt8] = []
            for part in [text] {
                folded += Array(
                    part.folding(options: [.caseInsensitive, .diacriticInsensitive, .widthInsensitive], locale: nil).lowercased().utf8)
            }
            #expect(String(decoding: folded, as: UTF8.self).contains(query), "\(text)")
            #expect(index.documents(containing: TextTokenizer.substringSegments(of: query)).contains(0), "\(text)")
        }
        let plain = SearchIndex([(slot: 0, document: SearchIndex.Document(text: "heron ry", tags: []))])
        #expect(!plain.documents(containing: TextTokenizer.substringSegments(of: "heronry")).contains(0))
    }

    /// The CJK characters a query is narrowed by: those the tokenizer and
    /// Foundation's folding keep as they are and that no other character
    /// folds to (not half-width Katakana, the voiced sound marks, the
    /// conjoining jamo that half-width Hangul folds to, ・ nor punctuation).
    @Test func cjkCharactersAreThoseEveryUnigramIndexHolds() {
        func characters(_ s: String) -> [String] {
            TextTokenizer.unigramCharacters(of: s).map { String(decoding: $0, as: UTF8.self) }
        }
        #expect(characters("日记") == ["日", "记"])
        #expect(characters("日日") == ["日"])
        #expect(characters("x北京y 2") == ["北", "京"])
        #expect(characters("カ\u{FF9E}") == ["カ"])
        #expect(characters("か\u{3099}が") == ["か", "が"])
        #expect(characters("가각ㄱ") == ["가", "각", "ㄱ"])
        #expect(characters("\u{1100}\u{1161}") == [])
        #expect(characters("々〆〇\u{F900}𠀋") == ["々", "〆", "〇", "\u{F900}", "𠀋"])
        #expect(characters("漢\u{FE00}\u{200D}") == ["漢"])
        #expect(characters("・。、「」゛\u{302A}") == [])
        #expect(characters("abc ёлка") == [])
    }

    /// Runs of word characters: ASCII letters and digits, other letters
    /// that are their own fold; CJK, й, ι, marks and punctuation cut them.
    @Test func segmentsAreTheRunsTheIndexCanNarrowBy() {
        func segments(_ s: String) -> [String] { TextTokenizer.substringSegments(of: s).map { String(decoding: $0, as: UTF8.self) } }
        #expect(segments("o'clock") == ["o", "clock"])
        #expect(segments("елка") == ["елка"])
        #expect(segments("мой") == ["мо"])
        #expect(segments("και") == ["κα"])
        #expect(segments("日记 abc") == ["abc"])
        #expect(segments("e\u{301}t\u{301}e") == ["e", "t", "e"])
        #expect(segments("Abc") == ["bc"])
    }
}
