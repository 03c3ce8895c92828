import Foundation
@_spi(Format) import Quire
@_spi(Crypto) import QuireCrypto
@_spi(Format) import QuireFormat
@_spi(Format) import QuireKeys
import QuireSystem
import Testing

/// `Vault.tagCounts()` and `journalCounts()` (issue 13, an iOS trial's
/// finding): a sidebar's counts of live entries per tag and per journal,
/// folded as the query filters fold, the same through the index cache and
/// without it, and right after an edit, a delete and another handle's
/// write brought in by a refresh.
@Suite struct TagCountTests {
    typealias Fixture = IndexCacheOpenTests.Fixture

    /// The writer's handle and the entries' ids: e0 to e5 of the comment.
    struct Made {
        let fixture: Fixture
        let writer: Vault
        let ids: [EntryID]
    }

    /// Six entries: tags in several cases (one entry with the same tag
    /// twice), one deleted, one in conflict between two handles.
    static func make(_ label: String) throws -> Made {
        let dir = TemporaryDirectory()
        let t0 = IndexCacheOpenTests.t0
        let device = try DeviceIdentity.generate(name: "laptop", now: t0, using: SeededRandom(label: "tag counts " + label))
        let store = FileDeviceKeyStore(directory: dir.file("home"))
        try store.create(device)
        let path = dir.file("j.quire")
        let vault = try Vault.create(
            at: path, setup: VaultSetup(name: "J", recoveryKey: testRecoveryKey(label), device: device, now: t0), random: SeededRandom(label: label),
            options: fast)
        let rows: [(tags: [String], journal: String)] = [
            (["Travel", "work"], ""),  // e0
            (["travel", "TRAVEL"], "Work"),  // e1: one entry, one count
            (["Дневник"], "work"),  // e2
            (["travel"], ""),  // e3: deleted below
            (["Work"], "Trips"),  // e4: its tag removed by an edit in a test
            (["ёлка"], ""),  // e5: in conflict below
        ]
        var made: [EntryRevision] = []
        for (i, row) in rows.enumerated() {
            made.append(try vault.add(EntryBody(created: t0 + Int64(i) * 3_600_000, text: "entry \(i)", tags: row.tags, journal: row.journal)))
        }
        try vault.delete(made[3].entryID)
        let other = try Vault.open(at: path, credential: .device(device.keyPair), options: fast)
        var a = made[5].body
        a.text = "Version A"
        _ = try vault.edit(made[5].entryID, body: a, replacing: [made[5].revisionID])
        var b = made[5].body
        b.text = "Version B"
        _ = try other.edit(made[5].entryID, body: b, replacing: [made[5].revisionID])
        _ = try vault.refresh()
        return Made(fixture: Fixture(dir: dir, device: device, store: store, path: path), writer: vault, ids: made.map(\.entryID))
    }

    static let tags = ["travel": 2, "work": 2, "дневник": 1, "ёлка": 1]
    static let journals = ["": 2, "work": 2, "trips": 1]

    /// Each key selects as many entries through the query filter as its
    /// count says.
    static func agreeWithQueries(_ v: Vault) throws {
        for (tag, n) in try v.tagCounts() {
            var q = EntryQuery(limit: 100)
            q.tags = [tag]
            #expect(try v.entries(matching: q).entries.count == n, "tag \(tag)")
        }
        for (journal, n) in try v.journalCounts() {
            var q = EntryQuery(limit: 100)
            q.journal = journal
            #expect(try v.entries(matching: q).entries.count == n, "journal \(journal)")
        }
    }

    @Test func countsLiveEntriesFoldedAsTheFilters() throws {
        let m = try Self.make("counts")
        #expect(try m.writer.entries(matching: EntryQuery()).entries.first { $0.id == m.ids[5] }?.conflictingHeads.count == 1)
        #expect(try m.writer.tagCounts() == Self.tags)
        #expect(try m.writer.journalCounts() == Self.journals)
        try Self.agreeWithQueries(m.writer)
    }

    /// A handle answering from the index cache gives the counts a handle
    /// that reads the whole file gives, and reading them loads no entry
    /// index (no record decrypted).
    @Test func theCacheAndTheFileGiveTheSameCounts() throws {
        let m = try Self.make("cache")
        // The first handle through the store reads the file and writes the cache.
        #expect(try m.fixture.cached().tagCounts() == Self.tags)
        let cached = try m.fixture.cached()
        #expect(cached.answersFromIndexCache)
        #expect(try cached.tagCounts() == Self.tags)
        #expect(try cached.journalCounts() == Self.journals)
        #expect(cached.answersFromIndexCache)
        let full = try m.fixture.full()
        #expect(!full.answersFromIndexCache)
        #expect(try full.tagCounts() == Self.tags)
        #expect(try full.journalCounts() == Self.journals)
        try Self.agreeWithQueries(cached)
    }

    /// An edit that removes a tag and a delete change this handle's counts
    /// at once, and a reader's after its refresh, whether it answers from
    /// the cache or from the whole file.
    @Test func editsDeletesAndRefreshesAreReflected() throws {
        let m = try Self.make("refresh")
        _ = try m.fixture.cached().tagCounts()  // writes the cache
        let cached = try m.fixture.cached()
        let full = try m.fixture.full()
        #expect(cached.answersFromIndexCache)
        for reader in [cached, full] {
            #expect(try reader.tagCounts() == Self.tags)
            #expect(try reader.journalCounts() == Self.journals)
        }

        var body = try #require(try m.writer.entry(m.ids[4])).body
        body.tags = []
        _ = try m.writer.edit(m.ids[4], body: body)
        try m.writer.delete(m.ids[2])
        let added = try m.writer.add(EntryBody(created: IndexCacheOpenTests.t0 + 99_000_000, text: "heron", tags: ["Birds", "travel"], journal: "TRIPS"))
        let tags = ["travel": 3, "work": 1, "ёлка": 1, "birds": 1]
        let journals = ["": 2, "work": 1, "trips": 2]
        #expect(try m.writer.tagCounts() == tags)
        #expect(try m.writer.journalCounts() == journals)

        for reader in [cached, full] {
            #expect(try reader.tagCounts() == Self.tags, "before its refresh, a reader shows what it has read")
            let changes = try reader.refresh()
            #expect(changes.ids(.added) == [added.entryID])
            #expect(try reader.tagCounts() == tags)
            #expect(try reader.journalCounts() == journals)
            try Self.agreeWithQueries(reader)
        }
        #expect(cached.answersFromIndexCache)
    }

    /// The async forms give the blocking forms' counts; a cancelled task
    /// does not start them.
    @Test func theAsyncFormsAnswerAndCancel() async throws {
        let m = try Self.make("async")
        let v = try m.fixture.cached()
        #expect(try await v.tagCounts() == Self.tags)
        #expect(try await v.journalCounts() == Self.journals)
        let cancelled = await Task { () async throws(QuireError) -> [String: Int] in
            withUnsafeCurrentTask { $0?.cancel() }
            return try await v.tagCounts()
        }.result
        #expect(throws: QuireError.cancelled) { try cancelled.get() }
    }

    /// An empty vault has no tag and no journal.
    @Test func anEmptyVaultCountsNothing() throws {
        let dir = TemporaryDirectory()
        let (vault, _) = try makeVault(dir)
        #expect(try vault.tagCounts().isEmpty)
        #expect(try vault.journalCounts().isEmpty)
    }
}
