import Foundation
import Testing

/// `quire search`: words in any order, without case or accents, #tags,
/// phrases, Chinese without spaces, and a word when nothing matches.
@Suite struct SearchTests {
    func found(_ box: Sandbox, _ query: [String]) throws -> [String] {
        let r = try box.quire(["search", "Journal.quire"] + query + ["--json"])
        #expect(r.status == 0, "\(query): \(r)")
        return (try r.json()["entries"] as? [[String: Any]] ?? []).compactMap { $0["title"] as? String }
    }

    @Test func findsWhatAPersonMeans() throws {
        let box = try Sandbox()
        try box.makeVault()
        _ = try box.add("Coffee at the Café de Flore", ["--date", "2026-03-01"])
        _ = try box.add("The swans and a heron by the river", ["--date", "2026-03-02", "--tag", "Reading"])
        _ = try box.add("A heron, then swans", ["--date", "2026-03-03"])
        _ = try box.add("今天读了鲁迅的日记", ["--date", "2026-03-04"])
        _ = try box.add("ÉTÉ à Paris", ["--date", "2026-03-05"])
        #expect(try found(box, ["cafe"]) == ["Coffee at the Café de Flore"])
        #expect(try found(box, ["CAFÉ"]) == ["Coffee at the Café de Flore"])
        #expect(try found(box, ["ete", "paris"]) == ["ÉTÉ à Paris"])
        #expect(try found(box, ["swans", "heron"]) == ["The swans and a heron by the river", "A heron, then swans"])
        #expect(try found(box, ["heron swans"]) == ["The swans and a heron by the river", "A heron, then swans"])
        #expect(try found(box, ["\"the swans\""]) == ["The swans and a heron by the river"])
        #expect(try found(box, ["#reading"]) == ["The swans and a heron by the river"])
        #expect(try found(box, ["日记"]) == ["今天读了鲁迅的日记"])
        #expect(try found(box, ["鲁迅日记"]) == [])
        #expect(try found(box, ["鲁迅", "日记"]) == ["今天读了鲁迅的日记"])
        let none = try box.quire(["search", "Journal.quire", "nightingale"])
        #expect(none.status == 0)
        #expect(none.stdout == "")
        #expect(none.stderr == "no entries match 'nightingale'\n")
        let open = try box.quire(["search", "Journal.quire", "\"unclosed"])
        #expect(open.status == 64)
    }
}
