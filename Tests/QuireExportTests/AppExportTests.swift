import Foundation
import Quire
import QuireExport
import Testing

// An app's view of export: this file imports the modules without `@_spi`,
// so only what an app can call compiles here.

/// The export as an app calls it: `async` only, `Date` filters, errors an
/// alert can show.
@Suite struct AppExportTests {
    /// Three entries, on 1, 2 and 3 March 2024 at noon UTC.
    static func threeEntries(_ dir: TemporaryDirectory) async throws -> Vault {
        let vault = try makeVault(dir)
        try await vault.commit { tx in
            for day in 1...3 {
                let created = Date(timeIntervalSince1970: Double(utcMilliseconds(2024, 3, day, 12)) / 1000)
                _ = try tx.add(EntryBody(created: created, timeZone: TimeZone(identifier: "UTC"), text: "day \(day)"))
            }
        }
        return vault
    }

    /// With `options:` and no progress handler, `try await` reaches the
    /// `async` form (on the old code it resolved to the public blocking
    /// form, and this file did not compile: "no 'async' operations occur
    /// within 'await' expression"); a cancelled task writes nothing.
    @MainActor @Test func asyncExportWithOptionsHonoursCancellation() async throws {
        let dir = TemporaryDirectory()
        let vault = try await Self.threeEntries(dir)
        let out = dir.file("out.json")
        let task = Task { @MainActor in
            withUnsafeCurrentTask { $0?.cancel() }
            return try await exportJournal(vault, format: .json, to: out, options: ExportOptions(title: "Mine"))
        }
        switch await task.result {
        case .success: Issue.record("a cancelled export completed")
        case .failure(let error): #expect((error as? ExportError)?.category == .cancelled)
        }
        #expect(!FileManager.default.fileExists(atPath: out))
    }

    /// The same call, not cancelled, from the main actor: it exports every
    /// entry with the options given.
    @MainActor @Test func asyncExportWithOptionsWrites() async throws {
        let dir = TemporaryDirectory()
        let vault = try await Self.threeEntries(dir)
        let out = dir.file("out.html")
        let report = try await exportJournal(vault, format: .html, to: out, options: ExportOptions(title: "Mine", locale: "en_GB"))
        #expect(report.entries == 3)
        #expect(try read(out).contains("<title>Mine</title>"))
    }

    /// `ExportFilter` takes `Date`s: `since` inclusive, `until` exclusive.
    @Test func filterTakesDates() async throws {
        let dir = TemporaryDirectory()
        let vault = try await Self.threeEntries(dir)
        let second = Date(timeIntervalSince1970: Double(utcMilliseconds(2024, 3, 2, 12)) / 1000)
        var filter = ExportFilter(since: second)
        #expect(filter.since == second)
        #expect(try await exportJournal(vault, format: .json, to: dir.file("a.json"), filter: filter).entries == 2)
        filter.until = second.addingTimeInterval(0.001)
        #expect(try await exportJournal(vault, format: .json, to: dir.file("b.json"), filter: filter).entries == 1)
        #expect(try await exportJournal(vault, format: .json, to: dir.file("c.json"), filter: ExportFilter(until: second)).entries == 1)
    }

    /// Third iOS trial, session 42: the filter compared tags and journals
    /// exactly, while the timeline (`EntryQuery`) and the sidebar's
    /// `tagCounts()`/`journalCounts()` (keys lowercased) fold case, so
    /// exporting the sidebar's `food` found no entry tagged `Food` and wrote
    /// an empty book without error.
    @Test func filterFoldsCaseAsTheTimelineAndSidebarDo() async throws {
        let dir = TemporaryDirectory()
        let vault = try makeVault(dir)
        let created = Date(timeIntervalSince1970: Double(utcMilliseconds(2024, 3, 1, 12)) / 1000)
        try await vault.commit { tx in
            _ = try tx.add(
                EntryBody(created: created, timeZone: TimeZone(identifier: "UTC"), text: "lunch", tags: ["Food"], journal: "Travel"))
            _ = try tx.add(EntryBody(created: created, timeZone: TimeZone(identifier: "UTC"), text: "work", tags: ["work"]))
        }
        let tag = try #require(try await vault.tagCounts().keys.first { $0 != "work" })
        let journal = try #require(try await vault.journalCounts().keys.first { $0 != "" })
        #expect(tag == "food" && journal == "travel")
        var query = EntryQuery()
        query.tags = [tag]
        #expect(try await vault.entries(matching: query).entries.count == 1)

        let byTag = try await exportJournal(vault, format: .json, to: dir.file("tag.json"), filter: ExportFilter(tags: [tag]))
        #expect(byTag.entries == 1)
        let byJournal = try await exportJournal(vault, format: .json, to: dir.file("j.json"), filter: ExportFilter(journals: [journal]))
        #expect(byJournal.entries == 1)
        let upper = try await exportJournal(vault, format: .json, to: dir.file("u.json"), filter: ExportFilter(tags: ["FOOD", "none"]))
        #expect(upper.entries == 1)
        #expect(try read(dir.file("u.json")).contains("lunch"))
        let none = try await exportJournal(vault, format: .json, to: dir.file("n.json"), filter: ExportFilter(tags: ["foo"]))
        #expect(none.entries == 0)
    }

    /// Third iOS trial, session 42: `since`/`until` are instants, so an
    /// app could not export what its timeline shows for "March 1" (each
    /// entry's own calendar). `days` takes the timeline's day range: an
    /// entry written on 2 March at 08:00 in Brisbane (1 March in UTC) is
    /// left out, one written on 1 March at 20:00 in Los Angeles (2 March in
    /// UTC) is in, as the timeline has them.
    @Test func daysSelectWhatTheTimelineShowsForADay() async throws {
        let dir = TemporaryDirectory()
        let vault = try makeVault(dir)
        let brisbane = Date(timeIntervalSince1970: Double(utcMilliseconds(2024, 3, 1, 22)) / 1000)
        let losAngeles = Date(timeIntervalSince1970: Double(utcMilliseconds(2024, 3, 2, 4)) / 1000)
        try await vault.commit { tx in
            _ = try tx.add(EntryBody(created: brisbane, timeZone: TimeZone(identifier: "Australia/Brisbane"), text: "in Brisbane"))
            _ = try tx.add(EntryBody(created: losAngeles, timeZone: TimeZone(identifier: "America/Los_Angeles"), text: "in Los Angeles"))
        }
        let march1 = EntryQuery.Day(year: 2024, month: 3, day: 1)
        var query = EntryQuery()
        query.from = march1
        query.through = march1
        #expect(try await vault.entries(matching: query).entries.map(\.body.text) == ["in Los Angeles"])

        var filter = ExportFilter()
        filter.days = march1...march1
        #expect(try await exportJournal(vault, format: .json, to: dir.file("d.json"), filter: filter).entries == 1)
        let json = try read(dir.file("d.json"))
        #expect(json.contains("in Los Angeles") && !json.contains("in Brisbane"))
        filter.days = march1...EntryQuery.Day(year: 2024, month: 3, day: 2)
        #expect(try await exportJournal(vault, format: .json, to: dir.file("e.json"), filter: filter).entries == 2)
        filter.days = EntryQuery.Day(year: 2024, month: 3, day: 3)...EntryQuery.Day(year: 2024, month: 3, day: 9)
        #expect(try await exportJournal(vault, format: .json, to: dir.file("f.json"), filter: filter).entries == 0)
    }

    /// A bad path and a cancelled export each give a sentence a person can
    /// act on, not "The operation could not be completed"; a cancelled one
    /// has the vault's category `.cancelled`, a bad path none.
    @Test func errorsSayWhatToDo() async throws {
        let dir = TemporaryDirectory()
        let vault = try await Self.threeEntries(dir)
        let bad = dir.file("missing/out.html")
        do {
            _ = try await exportJournal(vault, format: .html, to: bad)
            Issue.record("exported to a missing folder")
        } catch {
            // The sentence names the file and what to do, in words: no
            // path, errno text nor temporary file (third iOS trial,
            // session 42); `description` keeps the detail for a log.
            #expect(
                error.localizedDescription
                    == "Nothing was saved: the folder chosen for \u{201C}out.html\u{201D} is not there. Choose a folder that exists.")
            #expect("\(error)" == "cannot write \(bad): No such file or directory (errno 2)")
            #expect(error.category == nil)
        }
        do {
            _ = try await exportJournal(vault, format: .json, to: dir.file("out.json")) { _ in .cancel }
            Issue.record("a cancelled export completed")
        } catch {
            #expect(error.localizedDescription == "The export was cancelled; nothing was saved.")
            #expect(error.category == .cancelled)
            #expect(error.code == "cancelled")
        }
    }
}
