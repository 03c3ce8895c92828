import Foundation
import QuireTestSupport
import Testing

@_spi(Format) @testable import Quire
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
        return index.documents(
            containing: TextTokenizer.substringSegments(of: foldedTerm), characters: TextTokenizer.unigramCharacters(of: foldedTerm)
        ).contains(0)
    }

    /// Every character, alone and between two letters: each run of word
    /// characters `quire search` folds it to is inside a word the index
    /// holds for it — CJK too, whose Kana voiced sound marks Foundation
    /// drops after a letter. (CJK's own narrowing is checked by
    /// ``everyCJKCharacterTheIndexNarrowsByIsAUnigramOfTheText()``;
    /// private-use and unassigned code points are left out.)
    @Test(.tags(.slow), .enabled(if: runsSlowTests)) func everyCharacterFoldsIntoAWordTheIndexHolds() {
        var misses: [String] = []
        for v in UInt32(0x80)..<0x3_0000 {
            guard let s = Unicode.Scalar(v) else { continue }
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

    /// Every character, alone and beside CJK, Latin letters, half-width
    /// Katakana, voiced sound marks and accents, folded as `quire search`
    /// folds an entry (``haystack(_:)``) and as it folds a query or a tag
    /// (`SearchQuery.fold`): each character of the result the index
    /// narrows by (``TextTokenizer/unigramCharacters(of:)``) is a unigram
    /// the index holds for the text. (Private-use and unassigned code
    /// points are left out: Foundation folds them to themselves.)
    @Test(.tags(.slow), .enabled(if: runsSlowTests)) func everyCJKCharacterTheIndexNarrowsByIsAUnigramOfTheText() {
        var misses: [String] = []
        var narrowing = 0
        for v in UInt32(0)...0x10_FFFF {
            guard let s = Unicode.Scalar(v) else { continue }
            switch s.properties.generalCategory {
            case .unassigned, .privateUse, .surrogate: continue
            default: break
            }
            if TextTokenizer.narrowsAsUnigram(s) { narrowing += 1 }
            let c = String(s)
            let texts = [c, "q" + c + "z", "ж" + c, "漢" + c, "ｶ" + c, "e\u{301}" + c, c + "\u{3099}", c + "\u{FF9E}", c + "\u{301}"]
            let index = SearchIndex(
                texts.enumerated().map { (slot: Int32($0.offset), document: SearchIndex.Document(text: $0.element, tags: [])) })
            for (slot, text) in texts.enumerated() {
                for folded in [String(decoding: Self.haystack(text), as: UTF8.self), SearchQuery.fold(text)] {
                    let characters = TextTokenizer.unigramCharacters(of: folded)
                    guard !characters.isEmpty else { continue }
                    if !index.documents(containing: [], characters: characters).contains(Int32(slot)) {
                        misses.append(String(format: "U+%04X in %@: %@", v, text.debugDescription, folded.debugDescription))
                    }
                }
            }
            if misses.count > 20 { break }
        }
        #expect(misses.isEmpty, "\(misses)")
        // Han, Kana, Hangul syllables, compatibility jamo and ideographs.
        #expect(narrowing > 100_000)
    }

    /// Random text from characters folding treats apart (composed and
    /// decomposed accents, й, ё, final sigma, ypogegrammeni, ligatures,
    /// full-width letters, Han, Kana and Hangul in their composed,
    /// decomposed, half-width and compatibility forms, invisible joiners):
    /// wherever the full scan finds a query, the index names the entry.
    @Test(.tags(.slow), .enabled(if: runsSlowTests)) func theIndexNamesEveryEntryTheFullScanFinds() throws {
        let pieces = [
            "heron", "Heron", "HERON", "café", "cafe\u{301}", "ÉTÉ", "naïve", "Ёлка", "ёлка", "йод", "Йогурт", "иней", "ОДОΣ", "ὁδός",
            "ᾳ", "α\u{345}", "ß", "STRASSE", "ﬁsh", "ﬀ", "Ａｂｃ", "①", "x²", "İstanbul", "ıi", "日记", "鲁迅", "ｶﾞ", "ガ", "Ǆ", "ǅ",
            "æther", "Œuvre", "łódź", "ø", "o\u{308}", "\u{200C}", "\u{200B}", "\u{AD}", "-", "'", "’", " ", "\n", ".", "e", "n", "о",
            "o", "a\u{30A}", "Å", "Ⅻ", "™", "k\u{301}", "\u{301}", "ǰ", "ﬃ", "Ω", "Ω", "µ", "μ", "K", "Å",
            // CJK: half-width Katakana and voiced marks, composed and
            // decomposed Kana, Hangul syllables, conjoining, half-width and
            // compatibility jamo, compatibility ideographs, 々〆〇, marks,
            // joiners and selectors after Han, CJK punctuation.
            "北京", "京", "日記", "ｶ", "ﾞ", "ﾟ", "ﾊﾟ", "ｲﾄﾞ", "が", "か\u{3099}", "\u{3099}", "ハ\u{309A}", "ヷ", "ｰ", "ー", "가", "각",
            "\u{1100}\u{1161}", "\u{11A8}", "\u{FFA1}\u{FFC2}", "ㄱㅏ", "豈", "\u{F900}", "\u{FA0E}", "𠀋", "々", "〆", "〇", "漢\u{FE00}",
            "\u{E0100}", "\u{200D}", "・", "･", "｡", "。", "、", "「", "ｶ\u{301}", "x漢", "\u{302A}",
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
                    // A query with nothing to narrow by reads every entry.
                    let segments = query.foldedTerms.flatMap(TextTokenizer.substringSegments(of:))
                    let characters = query.foldedTerms.flatMap(TextTokenizer.unigramCharacters(of:))
                    guard !segments.isEmpty || !characters.isEmpty else { continue }
                    let named = index.documents(containing: segments, characters: characters)
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

    /// End to end, Chinese, Japanese and Korean: a query of CJK characters
    /// is narrowed by its characters (unigrams) and finds what the full
    /// scan finds — half-width Katakana by its full-width form, Han
    /// beside Latin letters, marks and selectors, a tag, the
    /// journal's name, a file name. That it is narrowed shows in a record
    /// damaged after the cache was written: a search reports it only when
    /// it reads it (`Spec/index-cache.md §5`), so a query whose characters
    /// its entry lacks says nothing, where the full scan warned.
    @Test func aCJKSearchFromTheCacheFindsWhatTheFullScanFinds() throws {
        let box = try Sandbox()
        try box.makeVault()
        try box.write("北京地图.jpg", "not really a photo")
        _ = try box.add("今天我在北京写日记。", ["--date", "2026-03-01", "--tag", "日记"])
        _ = try box.add("ｶﾞｲﾄﾞを読んだ", ["--date", "2026-03-02", "--journal", "旅行"])
        _ = try box.add("ガイドブック", ["--date", "2026-03-03"])
        _ = try box.add("서울에서 한국어 공부", ["--date", "2026-03-04", "--attach", "北京地图.jpg"])
        _ = try box.add("Notes: x北京y and 漢\u{FE00}字 and 京\u{301}都", ["--date", "2026-03-05"])
        _ = try box.add("heron\u{3099}ry at dawn", ["--date", "2026-03-06"])
        _ = try box.add("Rain all day", ["--date", "2026-03-07"])
        func search(_ query: [String]) throws -> (titles: [String], stderr: String) {
            let r = try box.quire(["search", "Journal.quire"] + query + ["--json"])
            #expect(r.status == 0, "\(query): \(r)")
            return ((try r.json()["entries"] as? [[String: Any]] ?? []).compactMap { $0["title"] as? String }, r.stderr)
        }
        // The first search reads every entry and writes the index to the cache.
        #expect(try search(["rain"]).titles == ["Rain all day"])
        let expected: [([String], [String])] = [
            (["北京"], ["今天我在北京写日记。", "서울에서 한국어 공부", "Notes: x北京y and 漢\u{FE00}字 and 京\u{301}都"]),
            (["日记"], ["今天我在北京写日记。"]), (["#日记"], ["今天我在北京写日记。"]), (["旅行"], ["ｶﾞｲﾄﾞを読んだ"]),
            // ｶﾞ folds to カ and ﾞ, not to ガ.
            (["ガイ"], ["ガイドブック"]), (["ｶﾞｲ"], ["ｶﾞｲﾄﾞを読んだ"]), (["カ"], ["ｶﾞｲﾄﾞを読んだ"]), (["ｲﾄﾞ"], ["ｶﾞｲﾄﾞを読んだ"]),
            (["한국"], ["서울에서 한국어 공부"]), (["地图"], ["서울에서 한국어 공부"]), (["x北京Y"], ["Notes: x北京y and 漢\u{FE00}字 and 京\u{301}都"]),
            (["漢"], ["Notes: x北京y and 漢\u{FE00}字 and 京\u{301}都"]), (["京都"], ["Notes: x北京y and 漢\u{FE00}字 and 京\u{301}都"]),
            (["。"], ["今天我在北京写日记。"]), (["東京"], []),
            // A voiced sound mark after a letter is folded away, joining two words.
            (["heronry"], ["heron\u{3099}ry at dawn"]),
        ]
        for (query, titles) in expected { #expect(try search(query).titles == titles, "\(query)") }
        // Damage the last entry's record after the cache was written.
        let revisions = try VaultScanner.scan(path: box.path("Journal.quire")).frames.filter { $0.header.kind == .entryRevision }
        var bytes = try Data(contentsOf: URL(fileURLWithPath: box.path("Journal.quire")))
        bytes[Int(try #require(revisions.last).bodyOffset) + 20] ^= 0xff
        try bytes.write(to: URL(fileURLWithPath: box.path("Journal.quire")))
        let narrowed = try search(["北京"])
        #expect(narrowed.titles == expected[0].1)
        #expect(narrowed.stderr == "", "\(narrowed.stderr)")
        // Punctuation has nothing to narrow by: every entry is read.
        #expect(try search(["。"]).stderr.contains("1 record in Journal.quire could not be read"))
    }

    /// Canonically equivalent forms (U+F900 and U+8C48, `ガ` and `カ` +
    /// U+3099, a Hangul syllable and its jamo) are folded each on its own
    /// and compared as bytes, in words and in tags alike: an entry's match
    /// no longer depends on which entries the search read before it, so a
    /// search answered from the cache prints what the full scan prints
    /// (stop 38's trial: the full scan missed `豈 two`, the cached search
    /// found it; `#豈` found the tag U+F900 only without the cache).
    @Test func canonicallyEquivalentFormsAreFoldedEachOnItsOwn() throws {
        let box = try Sandbox()
        try box.makeVault()
        _ = try box.add("\u{F900} one", ["--date", "2025-01-01"])
        _ = try box.add("\u{8C48} two", ["--date", "2025-01-02"])
        _ = try box.add("\u{30AC}\u{30AE}", ["--date", "2025-01-03"])
        _ = try box.add("\u{30AB}\u{3099}\u{30AD}\u{3099}", ["--date", "2025-01-04"])
        _ = try box.add("x\u{1112}\u{1161}\u{11AB}\u{1100}\u{1173}\u{11AF}", ["--date", "2025-01-05"])
        _ = try box.add("한국어 한글", ["--date", "2025-01-06"])
        _ = try box.add("tagged", ["--date", "2025-01-07", "--tag", "\u{F900}"])
        func search(_ query: String) throws -> String {
            let r = try box.quire(["search", "Journal.quire", query, "--json"])
            #expect(r.status == 0, "\(query): \(r)")
            return r.stdout + r.stderr
        }
        // Writes the cache with its search index.
        _ = try search("zzz")
        let queries = ["\u{8C48}", "\u{F900}", "\u{30AB}", "\u{30AC}", "\u{AE00}", "\u{1100}", "#\u{8C48}", "#\u{F900}"]
        let cached = try queries.map(search)
        for file in try ListingOutputTests.cacheFiles(box) { try FileManager.default.removeItem(atPath: box.path("home/caches/" + file)) }
        let full = try queries.map(search)
        for (i, q) in queries.enumerated() { #expect(cached[i] == full[i], "\(q): cached \(cached[i]) full \(full[i])") }
        // The full scan finds the entry holding U+8C48 itself.
        #expect(full[0].contains("\u{8C48} two"))
        #expect(full[1].contains("\u{F900} one") && full[1].contains("tagged"))
    }
}
