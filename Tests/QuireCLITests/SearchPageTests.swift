import Foundation
import QuireTestSupport
import Testing

@_spi(Format) @testable import Quire
@testable import QuireCommandLine

/// `quire search QUERY -n N` from this device's index cache reads the
/// candidates its word index names newest first and stops when the page is
/// full (`Vault.cachedLiveEntries(mayContain:newestFirst:where:)`): it
/// prints the newest N of what the unlimited search prints, filters
/// applied, and says what the records it reads leave out.
@Suite struct SearchPageTests {
    /// Twelve entries, one a day from 2026-01-01, all but three holding
    /// "heron", with tags, a journal, stars and a mood among them; the cache and
    /// its search index written by a first search.
    static func journal() throws -> Sandbox {
        let box = try Sandbox()
        try box.makeVault()
        for day in 1...12 {
            var extra = ["--date", String(format: "2026-01-%02d", day)]
            if day % 2 == 0 { extra += ["--tag", "birds"] }
            if day % 3 == 0 { extra += ["--journal", "Travels"] }
            if day % 4 == 1 { extra += ["--starred"] }
            if day == 5 { extra += ["--mood", "3"] }
            let text = [4, 9, 11].contains(day) ? "Rain on day \(day)" : "A heron on day \(day)"
            _ = try box.add(text, extra)
        }
        // Writes the cache with its search index.
        let first = try box.quire(["search", "Journal.quire", "zebra"])
        #expect(first.status == 0, "\(first)")
        #expect(try !ListingOutputTests.cacheFiles(box).isEmpty)
        return box
    }

    /// The titles `search` prints with `--json`, and its stderr.
    static func search(_ box: Sandbox, _ args: [String]) throws -> (titles: [String], stderr: String) {
        let r = try box.quire(["search", "Journal.quire"] + args + ["--json"])
        #expect(r.status == 0, "\(args): \(r)")
        return ((try r.json()["entries"] as? [[String: Any]] ?? []).compactMap { $0["title"] as? String }, r.stderr)
    }

    /// The revision frames' body offsets, in the order the entries were added.
    static func recordOffsets(_ box: Sandbox) throws -> [Int] {
        try VaultScanner.scan(path: box.path("Journal.quire")).frames.filter { $0.header.kind == .entryRevision }.map {
            Int($0.bodyOffset)
        }
    }

    /// Flips a byte of the record at `offset`: it no longer authenticates.
    static func damage(_ box: Sandbox, at offset: Int) throws {
        let url = URL(fileURLWithPath: box.path("Journal.quire"))
        var bytes = try Data(contentsOf: url)
        bytes[offset + 20] ^= 0xff
        try bytes.write(to: url)
    }

    /// With and without filters, in text and in JSON, a page from the cache
    /// is the newest N of the unlimited search, newest first, and what the
    /// full scan (no cache) prints.
    @Test func aPageIsTheNewestOfTheUnlimitedSearch() throws {
        let box = try Self.journal()
        let filters: [[String]] = [
            [], ["--tag", "birds"], ["--journal", "travels"], ["--starred"], ["--since", "2026-01-03", "--until", "2026-01-08"],
            ["--tag", "birds", "--journal", "Travels"], ["--starred", "--tag", "birds"], ["--tag", "nothing"], ["--mood", "3"],
            ["--mood", "3", "--starred", "--since", "2026-01-02"],
        ]
        var cached: [String] = []
        var pages = 0
        for filter in filters {
            let all = try Self.search(box, ["heron"] + filter).titles
            for n in [1, 3, 20] {
                let page = try Self.search(box, ["heron", "-n", String(n)] + filter)
                #expect(page.titles == Array(all.suffix(n).reversed()), "\(filter) -n \(n)")
                #expect(page.stderr == "", "\(filter) -n \(n)")
                if !page.titles.isEmpty { pages += 1 }
                let text = try box.quire(["search", "Journal.quire", "heron", "-n", String(n)] + filter)
                let json = try box.quire(["search", "Journal.quire", "heron", "-n", String(n), "--json"] + filter)
                cached.append(text.stdout + text.stderr + json.stdout + json.stderr)
            }
        }
        #expect(pages >= 15)
        // The same from the full scan.
        func removeCache() throws {
            for file in try ListingOutputTests.cacheFiles(box) {
                try FileManager.default.removeItem(atPath: box.path("home/caches/" + file))
            }
        }
        var full: [String] = []
        for filter in filters {
            for n in [1, 3, 20] {
                try removeCache()
                let text = try box.quire(["search", "Journal.quire", "heron", "-n", String(n)] + filter)
                try removeCache()
                let json = try box.quire(["search", "Journal.quire", "heron", "-n", String(n), "--json"] + filter)
                full.append(text.stdout + text.stderr + json.stdout + json.stderr)
            }
        }
        #expect(cached == full)
    }

    /// A page reads the records of its own rows (and of newer candidates a
    /// filter the cached summaries cannot decide turns down), not every
    /// candidate's: a record damaged after the cache was written among the
    /// older candidates, or among the newer ones whose summary a filter
    /// turns down, is not read, so not reported, where the unlimited
    /// search, which reads it, reports it (`Spec/index-cache.md §5`).
    @Test func aPageReadsOnlyTheRecordsItNeeds() throws {
        let box = try Self.journal()
        let offsets = try Self.recordOffsets(box)
        #expect(offsets.count == 12)
        // Day 2's record: a heron, tagged birds, older than any page below.
        try Self.damage(box, at: offsets[1])
        let page = try Self.search(box, ["heron", "-n", "3"])
        #expect(page.titles == ["A heron on day 12", "A heron on day 10", "A heron on day 8"])
        #expect(page.stderr == "", "\(page.stderr)")
        let filtered = try Self.search(box, ["heron", "-n", "2", "--tag", "birds"])
        #expect(filtered.titles == ["A heron on day 12", "A heron on day 10"])
        #expect(filtered.stderr == "", "\(filtered.stderr)")
        // Day 12 too: newer than the page of starred entries, not starred.
        try Self.damage(box, at: offsets[11])
        let starred = try Self.search(box, ["heron", "-n", "1", "--starred"])
        #expect(starred.titles == ["A heron on day 5"])
        #expect(starred.stderr == "", "\(starred.stderr)")
        let dated = try Self.search(box, ["heron", "-n", "2", "--until", "2026-01-09"])
        #expect(dated.titles == ["A heron on day 8", "A heron on day 7"])
        #expect(dated.stderr == "", "\(dated.stderr)")
        // The unlimited search reads them, and says so; the full read then
        // leaves them out.
        let all = try Self.search(box, ["heron"])
        #expect(all.stderr.contains("2 records in Journal.quire could not be read"), "\(all.stderr)")
        #expect(!all.titles.contains("A heron on day 2") && !all.titles.contains("A heron on day 12"))
        #expect(all.titles.count == 7)
    }

    /// A record that does not read among those a page reads — a row it
    /// would show, or a newer candidate its filter turns down — is said as
    /// a full read says it, and the page is the full read's.
    @Test func anUnreadableRecordOnThePageIsWarnedAbout() throws {
        let box = try Self.journal()
        let offsets = try Self.recordOffsets(box)
        // Day 10's record: on the first page of three.
        try Self.damage(box, at: offsets[9])
        let page = try Self.search(box, ["heron", "-n", "3"])
        #expect(page.titles == ["A heron on day 12", "A heron on day 8", "A heron on day 7"])
        #expect(page.stderr.contains("1 record in Journal.quire could not be read"), "\(page.stderr)")
        let text = try box.quire(["search", "Journal.quire", "heron", "-n", "3"])
        #expect(text.stderr.contains("1 record in Journal.quire could not be read"), "\(text.stderr)")
        // Day 12 in another journal: a page of entries with mood 3 (which
        // the cached summaries do not hold) reads day 12 to turn it down.
        let box2 = try Self.journal()
        try Self.damage(box2, at: try Self.recordOffsets(box2)[11])
        let moody = try Self.search(box2, ["heron", "-n", "1", "--mood", "3"])
        #expect(moody.titles == ["A heron on day 5"])
        #expect(moody.stderr.contains("1 record in Journal.quire could not be read"), "\(moody.stderr)")
    }

    /// Nothing matched: the note is said for a page as for the unlimited
    /// search, from the cache and from the full scan, and never in JSON.
    @Test func nothingMatchedIsSaidForAPage() throws {
        let box = try Self.journal()
        for args in [["zebra", "-n", "5"], ["zebra"], ["北京", "-n", "1"]] {
            let r = try box.quire(["search", "Journal.quire"] + args)
            #expect(r.status == 0 && r.stdout.isEmpty, "\(r)")
            #expect(r.stderr == "no entries match '\(args[0])'\n", "\(args): \(r.stderr)")
        }
        let filtered = try box.quire(["search", "Journal.quire", "heron", "-n", "5", "--tag", "nothing"])
        #expect(filtered.stderr == "no entries match 'heron' with these filters\n", "\(filtered.stderr)")
        let json = try box.quire(["search", "Journal.quire", "zebra", "-n", "5", "--json"])
        let entries = try json.json()["entries"] as? [Any]
        #expect(json.stderr.isEmpty && entries?.isEmpty == true, "\(json)")
    }

    /// The live-entry count is evaluated only when the note depends on it:
    /// a search (filtered, with a query) never counts.
    @Test func theLiveCountIsCountedOnlyWhenSaid() throws {
        // The notes go to the test's stderr.
        let out = Output()
        var counted = 0
        func count() -> Int {
            counted += 1
            return 0
        }
        Reading.sayNothingMatched(0, total: count(), filtered: true, what: "'zebra'", out: out)
        Reading.sayNothingMatched(3, total: count(), filtered: false, out: out)
        #expect(counted == 0)
        Reading.sayNothingMatched(0, total: count(), filtered: false, out: out)
        #expect(counted == 1)
    }
}
