import Foundation
@_spi(Format) import Quire
@_spi(Format) import QuireFormat
import Testing

/// `Vault.search(_:matching:after:)` over real lines of the three corpus
/// diaries (English, pre-reform Russian, Chinese: the first 12 entries of
/// each fixture), and how the index follows changes.
@Suite struct SearchIndexTests {
    /// The first `count` entries of a fixture diary (`{"date","text"}` per line).
    static func diary(_ name: String, count: Int = 12) throws -> [(date: String, text: String)] {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().path + "/Fixtures/" + name
        let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").prefix(count)
        return try lines.map { line in
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as! [String: Any]
            return (object["date"] as! String, object["text"] as! String)
        }
    }

    /// Milliseconds since 1970 of noon UTC on a `YYYY-MM-DD` date.
    static func noon(_ date: String) -> Int64 {
        let p = date.split(separator: "-").map { Int($0)! }
        return (CivilCalendar.days(year: p[0], month: p[1], day: p[2]) * 86_400 + 43_200) * 1000
    }

    /// A vault holding the first 12 entries of the three diaries.
    static func corpusVault(_ dir: TemporaryDirectory) throws -> Vault {
        let (vault, _) = try makeVault(dir)
        try vault.commit { tx in
            for name in ["pepys.jsonl", "tolstoy.jsonl", "luxun.jsonl"] {
                for e in try diary(name) { try tx.add(EntryBody(created: noon(e.date), text: e.text)) }
            }
        }
        return vault
    }

    /// The dates of every entry `text` finds, oldest first.
    static func dates(_ vault: Vault, _ text: String) throws -> [String] {
        var out: [String] = []
        var cursor: EntryCursor?
        repeat {
            let page = try vault.search(text, matching: EntryQuery(order: .oldestFirst, limit: 4), after: cursor)
            for e in page.entries {
                let d = CivilCalendar.date(fromDays: CivilCalendar.floorDivide(e.body.createdMilliseconds, 86_400_000).quotient)
                out.append(String(format: "%04d-%02d-%02d", d.year, d.month, d.day))
            }
            cursor = page.next
        } while cursor != nil
        return out
    }

    @Test func findsEnglishWordsAndPrefixes() throws {
        let dir = TemporaryDirectory()
        let vault = try Self.corpusVault(dir)
        #expect(try Self.dates(vault, "garret") == ["1660-01-11"])
        #expect(try Self.dates(vault, "SACK") == ["1660-01-12", "1660-01-15", "1660-01-17"])
        // "Gunning’s": the apostrophe ends the word.
        #expect(try Self.dates(vault, "Gunning") == ["1660-01-11", "1660-01-18"])
        // A prefix: "bottl" finds "bottles".
        #expect(try Self.dates(vault, "bottl") == ["1660-01-12", "1660-01-19"])
        // Every word must match.
        #expect(try Self.dates(vault, "garret gunning") == ["1660-01-11"])
        #expect(try Self.dates(vault, "garret bottles") == [])
        // No match inside a word: "arret" is not the start of "garret".
        #expect(try Self.dates(vault, "arret") == [])
        // Punctuation only matches nothing.
        #expect(try Self.dates(vault, " — ; ") == [])
    }

    @Test func findsRussianWordsIgnoringCaseAndPrefixes() throws {
        let dir = TemporaryDirectory()
        let vault = try Self.corpusVault(dir)
        // "глупости", "глупость" (1 June), "глупость" (12 June).
        #expect(try Self.dates(vault, "глупост") == ["1852-06-01", "1852-06-12"])
        #expect(try Self.dates(vault, "ГЛУПОСТЬ") == ["1852-06-01", "1852-06-12"])
        #expect(try Self.dates(vault, "Глупости") == ["1852-06-01"])
        // Pre-reform spelling is matched as written: "всталъ" and its prefix.
        #expect(try Self.dates(vault, "всталъ").count == 8)
        #expect(try Self.dates(vault, "встал").count == 8)
        #expect(try Self.dates(vault, "Докторъ") == ["1852-06-03", "1852-06-07"])
        #expect(try Self.dates(vault, "обѣд").count == 8)
        #expect(try Self.dates(vault, "лтал") == [])
    }

    @Test func findsChineseByCharacters() throws {
        let dir = TemporaryDirectory()
        let vault = try Self.corpusVault(dir)
        #expect(try Self.dates(vault, "天津") == ["1912-05-05"])
        #expect(try Self.dates(vault, "广和居") == ["1912-05-07", "1912-05-11"])
        #expect(try Self.dates(vault, "二弟信") == ["1912-05-06", "1912-05-08", "1912-05-12"])
        #expect(try Self.dates(vault, "教育部") == ["1912-05-06", "1912-05-10"])
        // One character: its unigram.
        #expect(try Self.dates(vault, "津") == ["1912-05-05"])
        // Bigrams present, but apart: not a match.
        try vault.add(EntryBody(created: Self.noon("1912-06-01"), text: "广和，和居"))
        #expect(try Self.dates(vault, "广和居") == ["1912-05-07", "1912-05-11"])
        #expect(try Self.dates(vault, "广和").count == 3)
        // Mixed with a Latin word: both must match.
        try vault.add(EntryBody(created: Self.noon("1912-06-02"), text: "Lu Xun 在天津"))
        #expect(try Self.dates(vault, "xun 天津") == ["1912-06-02"])
    }

    @Test func foldsDiacriticsAndWidth() throws {
        let dir = TemporaryDirectory()
        let (vault, _) = try makeVault(dir)
        try vault.add(EntryBody(created: 1, text: "Un Café à Zürich"))
        try vault.add(EntryBody(created: 2, text: "Новогодняя Ёлка"))
        try vault.add(EntryBody(created: 3, text: "Мой дом"))
        try vault.add(EntryBody(created: 4, text: "ＡＢＣ１２３"))
        try vault.add(EntryBody(created: 5, text: "Decomposed cafe\u{301}"))
        #expect(try Self.dates(vault, "cafe").count == 2)
        #expect(try Self.dates(vault, "CAFÉ zurich").count == 1)
        #expect(try Self.dates(vault, "елка").count == 1)
        #expect(try Self.dates(vault, "мой").count == 1)
        #expect(try Self.dates(vault, "мои").count == 0)  // й is not и
        #expect(try Self.dates(vault, "abc123").count == 1)
    }

    @Test func tagsAreSearchedAndFiltersApply() throws {
        let dir = TemporaryDirectory()
        let (vault, _) = try makeVault(dir)
        try vault.add(EntryBody(created: 1_000, text: "Walked by the river", tags: ["Thames"]))
        try vault.add(EntryBody(created: 2_000, text: "Walking again", isStarred: true))
        try vault.add(EntryBody(created: 3_000, text: "In the spring, during the ring of bells"))
        #expect(try vault.search("thames").entries.map(\.body.text) == ["Walked by the river"])
        #expect(try vault.search("walk").entries.map(\.body.text) == ["Walking again", "Walked by the river"])
        var starred = EntryQuery()
        starred.isStarred = true
        #expect(try vault.search("walk", matching: starred).entries.map(\.body.text) == ["Walking again"])
        // "ring" finds the word "ring", not "spring" or "during".
        #expect(try vault.search("ring").entries.map(\.body.createdMilliseconds) == [3_000])
        #expect(try vault.search("ring bells").entries.count == 1)
        #expect(try vault.search("pring").entries.isEmpty)
    }

    @Test func followsAddsEditsAndDeletes() throws {
        let dir = TemporaryDirectory()
        let (vault, recovery) = try makeVault(dir)
        let apple = try vault.add(EntryBody(created: 1_000, text: "An apple a day"))
        let pear = try vault.add(EntryBody(created: 2_000, text: "A pear"))
        #expect(try vault.search("apple").entries.map(\.id) == [apple.entryID])

        // Edited: the old words are gone, the new ones found.
        try vault.edit(apple.entryID, body: EntryBody(created: 1_000, text: "A banana a day"))
        #expect(try vault.search("apple").entries.isEmpty)
        #expect(try vault.search("banana").entries.map(\.id) == [apple.entryID])
        // Deleted: not found.
        try vault.delete(pear.entryID)
        #expect(try vault.search("pear").entries.isEmpty)
        // Added after the index was built.
        let cherry = try vault.add(EntryBody(created: 3_000, text: "Cherries"))
        #expect(try vault.search("cherr").entries.map(\.id) == [cherry.entryID])
        // Restored: found again.
        try vault.restore(pear.entryID, body: EntryBody(created: 2_000, text: "A pear again"))
        #expect(try vault.search("pear").entries.map(\.id) == [pear.entryID])
        // Written by another handle, read in by this one.
        let other = try Vault.open(at: dir.file("v.quire"), credential: .recoveryKey(recovery), options: fast)
        try other.edit(cherry.entryID, body: EntryBody(created: 3_000, text: "Plums"))
        try vault.commit { _ in }
        #expect(try vault.search("cherr").entries.isEmpty)
        #expect(try vault.search("plum").entries.map(\.id) == [cherry.entryID])
    }

    @Test func searchPagesByTheSameCursor() throws {
        let dir = TemporaryDirectory()
        let (vault, _) = try makeVault(dir)
        for i in 1...7 { try vault.add(EntryBody(created: Int64(i) * 1_000, text: "note \(i)" + (i % 2 == 0 ? " even" : ""))) }
        let first = try vault.search("note", matching: EntryQuery(limit: 3))
        #expect(first.entries.map(\.body.createdMilliseconds) == [7_000, 6_000, 5_000])
        // Deleted between pages, and a new match before the cursor: neither shifts the next page.
        try vault.delete(first.entries[2].id)
        try vault.add(EntryBody(created: 8_000, text: "note 8"))
        let second = try vault.search("note", matching: EntryQuery(limit: 3), after: first.next)
        #expect(second.entries.map(\.body.createdMilliseconds) == [4_000, 3_000, 2_000])
        let third = try vault.search("note", matching: EntryQuery(limit: 3), after: second.next)
        #expect(third.entries.map(\.body.createdMilliseconds) == [1_000])
        #expect(third.next == nil)
        #expect(try vault.search("even").entries.map(\.body.createdMilliseconds) == [6_000, 4_000, 2_000])
    }
}
