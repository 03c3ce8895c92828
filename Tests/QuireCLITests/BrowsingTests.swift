import Foundation
import Testing

/// Browsing: limits, on this day, filters, stars, statistics, the pager.
@Suite struct BrowsingTests {
    /// The first 8 hex digits of the ids `add` printed.
    func short(_ id: String) -> String { String(id.prefix(8)) }

    @Test func limitShowsTheNewestFirst() throws {
        let box = try Sandbox()
        try box.makeVault()
        var ids: [String] = []
        for day in 1...5 { ids.append(try box.add("Day \(day)", ["--date", "2026-03-0\(day)T10:00"])) }
        let r = try box.quire(["list", "Journal.quire", "-n", "2"])
        #expect(r.stdout == "\(short(ids[4]))  2026-03-05 10:00  Day 5\n\(short(ids[3]))  2026-03-04 10:00  Day 4\n", "\(r)")
        #expect(try box.quire(["list", "Journal.quire", "--limit", "3", "--json"]).json()["count"] as? Int == 3)
        #expect(try box.quire(["list", "Journal.quire", "-n", "0"]).status == 64)
    }

    @Test func onThisDayInOtherYears() throws {
        let box = try Sandbox()
        try box.makeVault()
        let lastYear = try box.add("A year ago today", ["--date", "1 year ago"])
        let longAgo = try box.add("Ten years ago today", ["--date", "10 years ago"])
        _ = try box.add("Yesterday", ["--date", "yesterday"])
        let r = try box.quire(["on-this-day", "Journal.quire"])
        #expect(r.status == 0, "\(r)")
        let lines = r.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines.count == 6, "\(r)")
        #expect(lines[0].hasPrefix("A year ago, "))
        #expect(lines[1].hasPrefix("  \(short(lastYear))  "))
        #expect(lines[3].hasPrefix("10 years ago, "))
        #expect(lines[4].hasPrefix("  \(short(longAgo))  "))
        let list = try box.quire(["list", "Journal.quire", "--on-this-day"])
        #expect(list.stdout.split(separator: "\n").count == 2, "\(list)")
        let march = try box.quire(["on-this-day", "Journal.quire", "--date", "march 1"])
        #expect(march.stdout == "", "\(march)")
        #expect(march.stderr.hasSuffix("no entries were written on 03-01 in any year\n"), "\(march)")
    }

    @Test func starMoodAndPhotoFilters() throws {
        let box = try Sandbox()
        try box.makeVault()
        try Data([0xff, 0xd8, 0xff, 0xe0]).write(to: URL(fileURLWithPath: box.path("p.jpg")))
        let happy = try box.add("Happy", ["--date", "2026-03-01", "--mood", "5"])
        let photo = try box.add("With a photo", ["--date", "2026-03-02", "--attach", "p.jpg", "--mood", "3"])
        let plain = try box.add("Plain", ["--date", "2026-03-03"])
        #expect(try box.quire(["star", "Journal.quire", short(plain)]).stdout == "starred \(short(plain)) (Plain)\n")
        #expect(try box.quire(["star", "Journal.quire", short(plain)]).stdout == "already starred: \(short(plain))\n")
        #expect(try box.quire(["list", "Journal.quire", "--starred"]).stdout == "\(short(plain))  2026-03-03        Plain  (starred)\n")
        #expect(try box.quire(["list", "Journal.quire", "--mood", "4-5"]).stdout.hasPrefix(short(happy)))
        #expect(try box.quire(["list", "Journal.quire", "--mood", "3", "--json"]).json()["count"] as? Int == 1)
        #expect(try box.quire(["list", "Journal.quire", "--has-photos"]).stdout == "\(short(photo))  2026-03-02        With a photo  (mood 3, 1 photo)\n")
        let unstar = try box.quire(["unstar", "Journal.quire", short(plain), "--json"]).json()
        #expect(unstar["changed"] as? Bool == true)
        let none = try box.quire(["list", "Journal.quire", "--starred"])
        #expect(none.stdout == "")
        #expect(none.stderr == "no entries match the filters\n")
        #expect(try box.quire(["list", "Journal.quire", "--mood", "6"]).status == 64)
    }

    @Test func statsCountYearsMonthsWordsStreaksAndTags() throws {
        let box = try Sandbox()
        try box.makeVault()
        for (day, text, tags) in [("2025-12-30", "one two three", ["walk"]), ("2025-12-31", "four five", ["walk", "rain"]), ("2026-01-01", "six", []),
                                  ("2026-01-05", "日本語 seven", ["walk"])] {
            _ = try box.add(text, ["--date", day] + tags.flatMap { ["--tag", $0] })
        }
        let j = try box.quire(["stats", "Journal.quire", "--json"]).json()
        #expect(j["entries"] as? Int == 4)
        #expect(j["words"] as? Int == 10)
        let longest = try #require(j["longestStreak"] as? [String: Any])
        #expect(longest["days"] as? Int == 3)
        #expect(longest["from"] as? String == "2025-12-30")
        #expect(longest["until"] as? String == "2026-01-01")
        let years = try #require(j["years"] as? [[String: Any]])
        #expect(years.map { $0["year"] as? Int } == [2025, 2026])
        #expect((years[0]["months"] as? [Int])?[11] == 2)
        #expect((years[1]["months"] as? [Int])?[0] == 2)
        let tags = try #require(j["tags"] as? [[String: Any]])
        #expect(tags.first?["tag"] as? String == "walk")
        #expect(tags.first?["entries"] as? Int == 3)
        let text = try box.quire(["stats", "Journal.quire"])
        #expect(text.stdout.contains("entries:  4, from 2025-12-30 to 2026-01-05\n"), "\(text)")
        #expect(text.stdout.contains("streaks:  longest 3 days (2025-12-30 to 2026-01-01); current none\n"), "\(text)")
        #expect(text.stdout.contains("\n  3     #walk\n"), "\(text)")
    }

    /// `quire stats` counts tags as `quire tags` does: lowercased, once per
    /// entry however many of its tags fold to one (it counted `Walk` and
    /// `walk` apart, and an entry with both twice).
    @Test func statsFoldTagsAsTagsDoes() throws {
        let box = try Sandbox()
        try box.makeVault()
        for tags in [["Walk"], ["walk", "rain"], ["WALK", "walk"], ["rain"], []] {
            _ = try box.add("text", tags.flatMap { ["--tag", $0] })
        }
        let stats = try #require(try box.quire(["stats", "Journal.quire", "--json"]).json()["tags"] as? [[String: Any]])
        #expect(stats.map { $0["tag"] as? String } == ["walk", "rain"])
        #expect(stats.map { $0["entries"] as? Int } == [3, 2])
        let tags = try #require(try box.quire(["tags", "Journal.quire", "--json"]).json()["tags"] as? [[String: Any]])
        #expect(tags.map { $0["tag"] as? String } == stats.map { $0["tag"] as? String })
        #expect(tags.map { $0["entries"] as? Int } == stats.map { $0["entries"] as? Int })
    }

    /// `quire tags`: every tag of the live entries, lowercased as `--tag`
    /// compares them, most entries first; a deleted entry is not counted.
    @Test func tagsCountLiveEntriesPerFoldedTag() throws {
        let box = try Sandbox()
        try box.makeVault()
        #expect(try box.quire(["tags", "Journal.quire"]).stderr.hasSuffix("no entry has a tag\n"))
        for tags in [["Walk"], ["walk", "rain"], ["WALK", "walk"], ["rain"], []] {
            _ = try box.add("text", tags.flatMap { ["--tag", $0] })
        }
        let gone = try box.add("gone", ["--tag", "Gone", "--tag", "rain"])
        #expect(try box.quire(["rm", "Journal.quire", gone]).status == 0)
        let j = try box.quire(["tags", "Journal.quire", "--json"]).json()
        let tags = try #require(j["tags"] as? [[String: Any]])
        #expect(tags.map { $0["tag"] as? String } == ["walk", "rain"])
        #expect(tags.map { $0["entries"] as? Int } == [3, 2])
        let text = try box.quire(["tags", "Journal.quire"])
        #expect(text.status == 0, "\(text)")
        #expect(text.stdout == "3     #walk\n2     #rain\n", "\(text)")
    }

    @Test func longOutputGoesThroughThePagerOnATerminal() throws {
        let box = try Sandbox()
        try box.makeVault()
        for i in 0..<40 { _ = try box.add("Entry \(i)", ["--date", "2026-01-01T10:\(String(format: "%02d", i))"]) }
        let pager = "tee \(box.path("paged.txt")) >/dev/null"
        let paged = try box.onTerminal(["list", "Journal.quire"], answers: [], env: ["PAGER": pager])
        #expect(paged.exit == 0, "\(paged.output)")
        let text = try String(contentsOfFile: box.path("paged.txt"), encoding: .utf8)
        #expect(text.split(separator: "\n").count == 40)
        try FileManager.default.removeItem(atPath: box.path("paged.txt"))
        let direct = try box.onTerminal(["list", "Journal.quire", "--no-pager"], answers: [], env: ["PAGER": pager])
        #expect(direct.output.contains("Entry 39"), "\(direct.output)")
        #expect(!FileManager.default.fileExists(atPath: box.path("paged.txt")))
        let short = try box.onTerminal(["list", "Journal.quire", "-n", "3"], answers: [], env: ["PAGER": pager])
        #expect(short.output.contains("Entry 39"))
        #expect(!FileManager.default.fileExists(atPath: box.path("paged.txt")), "a screenful is printed directly")
        // In a pipe there is never a pager.
        #expect(try box.quire(["list", "Journal.quire"], env: ["PAGER": pager]).stdout.split(separator: "\n").count == 40)
        #expect(!FileManager.default.fileExists(atPath: box.path("paged.txt")))
    }
}
