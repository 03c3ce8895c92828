import Foundation
import QuireTestSupport
import Testing

@testable import Quire
@testable import QuireCommandLine

/// `quire search` reads only the entries this device's index names
/// (`Vault.cachedLiveEntries(mayContain:)`, `Spec/index-cache.md §1` "The
/// search index and substring search"), then matches each as before: the
/// index must never leave out an entry the full scan finds.
@Suite struct SearchNarrowingTests {
    /// What `quire search` looks in for `text`, folded as it folds it.
    static func haystack(_ text: String) -> [UInt8] {
        var out: [UInt8] = []
        SearchQuery.Folder().append(text, to: &out)
        return out
    }

    /// True when the index of `text` alone names it for `foldedTerm`.
    static func indexNames(_ text: String, _ foldedTerm: String) -> Bool {
        let index = SearchIndex([(slot: 0, document: SearchIndex.Document(text: text, tags: []))])
        return index.documents(containing: TextTokenizer.substringSegments(of: foldedTerm)).contains(0)
    }

    /// Every character, alone and between two letters: each run of word
    /// characters `quire search` folds it to is inside a word the index
    /// holds for it. (CJK is matched by its own characters and never
    /// narrows; private-use and unassigned code points are left out.)
    @Test(.tags(.slow), .enabled(if: runsSlowTests)) func everyCharacterFoldsIntoAWordTheIndexHolds() {
        var misses: [String] = []
        for v in UInt32(0x80)..<0x3_0000 {
            guard let s = Unicode.Scalar(v), !TextTokenizer.isCJK(v) else { continue }
            switch s.properties.generalCategory {
            case .unassigned, .privateUse, .surrogate: continue
            default: break
            }
            for text in [String(s), "q" + String(s) + "z", "ж" + String(s), "ж" + String(s) + "z"] {
                let folded = String(decoding: Self.haystack(text), as: UTF8.self)
                for segment in TextTokenizer.substringSegments(of: folded) {
                    let term = String(decoding: segment, as: UTF8.self)
                    if !Self.indexNames(text, term) { misses.append(String(format: "U+%04X in %@: %@", v, text.debugDescription, term)) }
                }
            }
            if misses.count > 20 { break }
        }
        #expect(misses.isEmpty, "\(misses)")
    }

    /// Random text from characters folding treats apart (composed and
    /// decomposed accents, й, ё, final sigma, ypogegrammeni, ligatures,
    /// full-width letters, Han, half-width Katakana, invisible joiners):
    /// wherever the full scan finds a query, the index names the entry.
    @Test(.tags(.slow), .enabled(if: runsSlowTests)) func theIndexNamesEveryEntryTheFullScanFinds() throws {
        let pieces = [
            "heron", "Heron", "HERON", "café", "cafe\u{301}", "ÉTÉ", "naïve", "Ёлка", "ёлка", "йод", "Йогурт", "иней", "ОДОΣ", "ὁδός",
            "ᾳ", "α\u{345}", "ß", "STRASSE", "ﬁsh", "ﬀ", "Ａｂｃ", "①", "x²", "İstanbul", "ıi", "日记", "鲁迅", "ｶﾞ", "ガ", "Ǆ", "ǅ",
            "æther", "Œuvre", "łódź", "ø", "o\u{308}", "\u{200C}", "\u{200B}", "\u{AD}", "-", "'", "’", " ", "\n", ".", "e", "n", "о",
            "o", "a\u{30A}", "Å", "Ⅻ", "™", "k\u{301}", "\u{301}", "ǰ", "ﬃ", "Ω", "Ω", "µ", "μ", "K", "Å",
        ]
        var rng = SplitMix64(seed: 0x5157_4952_4521)
        var texts: [String] = []
        for _ in 0..<400 {
            var t = ""
            for _ in 0..<(1 + Int(rng.next() % 10)) { t += pieces[Int(rng.next() % UInt64(pieces.count))] }
            texts.append(t)
        }
        let index = SearchIndex(
            texts.enumerated().map { (slot: Int32($0.offset), document: SearchIndex.Document(text: $0.element, tags: [])) })
        let haystacks = texts.map(Self.haystack)
        var checked = 0
        var misses: [String] = []
        for (i, hay) in haystacks.enumerated() {
            // Every substring of the folded text, cut at character boundaries.
            let folded = Array(String(decoding: hay, as: UTF8.self).unicodeScalars)
            for start in 0..<folded.count {
                for end in (start + 1)...min(folded.count, start + 6) {
                    var word = ""
                    word.unicodeScalars.append(contentsOf: folded[start..<end])
                    guard let query = try? SearchQuery([word]) else { continue }
                    // A query with no run to narrow by reads every entry.
                    let segments = query.foldedTerms.flatMap(TextTokenizer.substringSegments(of:))
                    guard !segments.isEmpty else { continue }
                    let named = index.documents(containing: segments)
                    for (j, other) in haystacks.enumerated() where j == i || j % 37 == i % 37 {
                        let scanFinds = query.terms.allSatisfy { term in
                            switch term {
                            case .word(let w), .phrase(let w):
                                SearchQuery.contains(other, w) || SearchQuery.contains(SearchQuery.collapse(other), w)
                            case .tag(let t): SearchQuery.contains(other, Array(("#" + t).utf8))
                            }
                        }
                        checked += 1
                        if scanFinds && !named.contains(Int32(j)) && misses.count < 20 {
                            misses.append("\(word.debugDescription) in \(texts[j].debugDescription)")
                        }
                    }
                }
            }
        }
        #expect(checked > 10_000)
        #expect(misses.isEmpty, "\(misses)")
    }

    /// End to end: the second search answers from the cache (the first
    /// wrote its index), finds by the journal's name, a tag and an
    /// attachment's file name as the full scan does, and reads only what
    /// the index names.
    @Test func aSearchFromTheCacheFindsWhatTheFullScanFinds() throws {
        let box = try Sandbox()
        try box.makeVault()
        try box.write("harbour-sketch.jpg", "not really a photo")
        _ = try box.add("Morning by the river", ["--date", "2026-03-01", "--journal", "Travels"])
        _ = try box.add("A heron at noon", ["--date", "2026-03-02", "--tag", "Birds"])
        _ = try box.add("Rain all day", ["--date", "2026-03-03", "--attach", "harbour-sketch.jpg"])
        _ = try box.add("Théâtre, then the heronry", ["--date", "2026-03-04"])
        func titles(_ query: [String]) throws -> [String] {
            let r = try box.quire(["search", "Journal.quire"] + query + ["--json"])
            #expect(r.status == 0, "\(query): \(r)")
            return (try r.json()["entries"] as? [[String: Any]] ?? []).compactMap { $0["title"] as? String }
        }
        // The first search reads every entry and writes the index to the cache.
        #expect(try titles(["heron"]) == ["A heron at noon", "Théâtre, then the heronry"])
        #expect(try titles(["travels"]) == ["Morning by the river"])
        #expect(try titles(["#birds"]) == ["A heron at noon"])
        #expect(try titles(["HARBOUR"]) == ["Rain all day"])
        #expect(try titles(["theatre"]) == ["Théâtre, then the heronry"])
        #expect(try titles(["eron"]) == ["A heron at noon", "Théâtre, then the heronry"])
        #expect(try titles(["\"then the\""]) == ["Théâtre, then the heronry"])
        // An entry written after the cache is in the tail: found too.
        _ = try box.add("Another heron", ["--date", "2026-03-05"])
        #expect(try titles(["heron"]) == ["A heron at noon", "Théâtre, then the heronry", "Another heron"])
        let none = try box.quire(["search", "Journal.quire", "nightingale"])
        #expect(none.stderr == "no entries match 'nightingale'\n")
    }
}
