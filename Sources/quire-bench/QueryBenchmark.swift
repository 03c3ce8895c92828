// Benchmark: timeline queries and text search through the library's query
// layer (Vault.entries(matching:after:), Vault.search), against today's way
// of doing them (entries(), then a linear scan of every body).

import Foundation
@_spi(Format) import Quire
@_spi(Format) import QuireFormat
import QuireSystem

enum QueryBenchmark {
    /// Warm repetitions per query.
    static let repetitions = 15

    static func run(_ shared: SharedFixtures) throws -> Section {
        var section = Section(name: "query", title: "Queries and search (issue 13)")
        section.explanation = [
            "A vault of generated journal entries (500–2,000 bytes of English text, 0–3 tags of 20, five time zones, "
                + "30 minutes apart from 2015) is opened by a fresh handle. *First page* is the first `entries(matching:)` "
                + "of the 50 newest: it loads the entry index (every revision decrypted, as today) and builds the summaries. "
                + "*Index build* is the first `search`: it builds the in-memory inverted index. The other rows are warm "
                + "medians of \(repetitions) runs, each returning the first page of at most 50 rows (bodies of those rows read). "
                + "*Scan* is today's way: `entries()` then a case-insensitive substring test of every body (warm)."
        ]
        let sizes = shared.quick ? [2_000, 10_000] : [10_000, 50_000]
        var table = Table(["measure", "\(grouped(sizes[0])) entries", "\(grouped(sizes[1])) entries", "Pepys (3,413, real text)"])
        var columns: [[String: Double]] = []
        var extra: [String] = []
        for n in sizes + [0] {
            let built: BuiltVault
            if n == 0 {
                print("  building the Pepys vault…")
                built = try pepys(at: shared.workspace.file("query-pepys.quire"))
            } else {
                print("  building a vault of \(grouped(n)) entries…")
                let path = shared.workspace.file("query-\(n).quire")
                let (_, b, buildSeconds) = try Fixtures.build(at: path, count: n, seed: 13)
                built = b
                print("  built in \(fmt(buildSeconds, 1)) s")
            }
            let label = n == 0 ? "Pepys" : grouped(n)
            let vault = try Fixtures.open(built.path, built.recovery, writable: true)
            var m: [String: Double] = [:]
            let (_, loadNs) = try timed { try vault.profile() }
            m["entry index load (every revision decrypted, as today)"] = ms(loadNs)
            let (first, firstNs) = try timed { try vault.entries(matching: EntryQuery(limit: 50)) }
            guard first.entries.count == 50 else { throw BenchError("first page has \(first.entries.count) rows") }
            m["first query after it: summaries + page of 50"] = ms(firstNs)
            let (_, buildNs) = try timed { try vault.search("river") }
            m["index build (first search)"] = ms(buildNs)
            if let size = vault.searchIndexSize {
                extra.append(
                    "search index at \(label): \(grouped(size.terms)) terms, \(grouped(size.postings)) postings "
                        + "(≈ \(mebibytes(UInt64(size.postings) * 8)) MiB of postings and per-entry term lists)")
            }

            func median(_ name: String, _ body: () throws -> EntryPage) throws {
                var s = Samples()
                var rows = 0
                for _ in 0..<repetitions {
                    let (page, ns) = try timed(body)
                    s.add(ns)
                    rows = page.entries.count
                }
                m[name] = s.median / 1e6
                if n == sizes.last { extra.append("\(name): \(rows) rows") }
                if n == 0 && rows < 50 { extra.append("Pepys, \(name): \(rows) rows") }
            }
            try median("first page of 50 newest (warm)") { try vault.entries(matching: EntryQuery(limit: 50)) }
            let page2Cursor = first.next
            try median("next page (cursor)") { try vault.entries(matching: EntryQuery(limit: 50), after: page2Cursor) }
            var tag = EntryQuery()
            tag.tags = ["plague"]
            try median("filter: tag") { try vault.entries(matching: tag) }
            var twoTags = EntryQuery(order: .oldestFirst)
            twoTags.tags = ["navy", "fire"]
            try median("filter: 2 tags, oldest first") { try vault.entries(matching: twoTags) }
            var month = EntryQuery()
            month.from = EntryQuery.Day(year: 2015, month: 6, day: 1)
            month.through = EntryQuery.Day(year: 2015, month: 6, day: 30)
            try median("filter: one month") { try vault.entries(matching: month) }
            var otd = EntryQuery()
            otd.onThisDay = EntryQuery.Day(year: 2030, month: 3, day: 14)
            try median("filter: on this day") { try vault.entries(matching: otd) }
            var starred = EntryQuery()
            starred.isStarred = true
            try median("filter: starred (none match)") { try vault.entries(matching: starred) }
            try median("search: rare word (bridge)") { try vault.search("bridge") }
            try median("search: common word (the)") { try vault.search("the") }
            try median("search: prefix (walk)") { try vault.search("walk") }
            try median("search: two words (river town)") { try vault.search("river town") }
            try median("search: one letter prefix (t)") { try vault.search("t") }
            try median("search: no match (zzz)") { try vault.search("zzz") }
            try median("search + tag filter (river, #plague)") { try vault.search("river", matching: tag) }

            // Today: every body, scanned per query.
            _ = try vault.entries()
            var scan = Samples()
            for _ in 0..<3 {
                let (_, ns) = try timed { try vault.entries().filter { $0.body.text.lowercased().contains("bridge") } }
                scan.add(ns)
            }
            m["scan: entries() + substring (bridge)"] = scan.median / 1e6
            if let hwm = vmHighWaterMark() { m["process peak RSS so far (MiB)"] = Double(hwm) / 1_048_576 }
            columns.append(m)
        }
        let order = [
            "entry index load (every revision decrypted, as today)", "first query after it: summaries + page of 50",
            "index build (first search)", "first page of 50 newest (warm)", "next page (cursor)",
            "filter: tag", "filter: 2 tags, oldest first", "filter: one month", "filter: on this day", "filter: starred (none match)",
            "search: rare word (bridge)", "search: common word (the)", "search: prefix (walk)", "search: two words (river town)",
            "search: one letter prefix (t)", "search: no match (zzz)", "search + tag filter (river, #plague)",
            "scan: entries() + substring (bridge)", "process peak RSS so far (MiB)",
        ]
        for name in order {
            let unit = name.hasSuffix("(MiB)") ? "" : " ms"
            table.row([name] + columns.map { $0[name].map { fmt($0, $0 < 1 ? 3 : 1) + unit } ?? "–" })
        }
        section.tables.append(("", table))
        let big = columns[1]
        let searches = order.filter { $0.hasPrefix("search") }.compactMap { big[$0] }
        let filters = order.filter { $0.hasPrefix("filter") }.compactMap { big[$0] }
        let judged: Bool? = shared.quick ? nil : true
        let worstSearch = searches.max() ?? .nan
        let worstFilter = filters.max() ?? .nan
        section.targets.append(
            Target(
                what: "warm text search at \(grouped(sizes[1])), worst query", target: "≤ 20 ms", measured: fmt(worstSearch, 2) + " ms",
                met: judged.map { _ in worstSearch <= 20 }))
        section.targets.append(
            Target(
                what: "tag / date / on-this-day at \(grouped(sizes[1])), worst", target: "≤ 5 ms", measured: fmt(worstFilter, 2) + " ms",
                met: judged.map { _ in worstFilter <= 5 }))
        if let scanMs = big["scan: entries() + substring (bridge)"], let rare = big["search: rare word (bridge)"] {
            section.notes.append("search vs scan at \(grouped(sizes[1])) (bridge): \(ratio(scanMs / rare)) faster")
        }
        section.notes += extra
        return section
    }

    private static func ms(_ ns: UInt64) -> Double { Double(ns) / 1e6 }

    /// A vault of the Pepys diary's 3,413 entries (`Tests/Fixtures/pepys.jsonl`),
    /// dated 22:00 UTC, in Europe/London without a recorded offset.
    static func pepys(at path: String) throws -> BuiltVault {
        let (vault, recovery) = try Fixtures.create(at: path)
        let data = try String(contentsOfFile: ExportBenchmark.fixtures + "/pepys.jsonl", encoding: .utf8)
        var bodies: [EntryBody] = []
        for line in data.split(separator: "\n") {
            guard let obj = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                let date = obj["date"] as? String, let text = obj["text"] as? String
            else { throw BenchError("bad line in pepys.jsonl") }
            let p = date.split(separator: "-").compactMap { Int($0) }
            guard p.count == 3 else { throw BenchError("bad date \(date)") }
            let created = (CivilCalendar.days(year: p[0], month: p[1], day: p[2]) * 86_400 + 22 * 3600) * 1000
            bodies.append(EntryBody(created: created, timeZone: "Europe/London", text: text, tags: [String(p[0])]))
        }
        try vault.commit { (tx: VaultTransaction) throws(QuireError) in
            for body in bodies { try tx.add(body) }
        }
        return BuiltVault(path: path, recovery: recovery, entryCount: bodies.count)
    }
}
