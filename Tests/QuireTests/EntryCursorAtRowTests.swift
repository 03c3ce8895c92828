import Foundation
import Quire  // alone: what an app sees
import Testing

/// iOS review 29 §1 and §4 item 3: an app opens the timeline at a row (an
/// entry shown from a notification, a search hit, a widget's deep link)
/// with `EntryCursor(before:)`, and pages the other way with
/// `EntryCursor(after:)` and the order flipped.
@Suite struct EntryCursorAtRowTests {
    /// Ten entries an hour apart, "0" oldest to "9" newest, and the vault.
    static func timeline(_ dir: TemporaryDirectory, store: AppKeyStoreTests.KeychainLikeStore = AppKeyStoreTests.KeychainLikeStore())
        async throws -> (Vault, String, [EntryID])
    {
        let path = dir.file("Journal.quire")
        let recovery = try RecoveryKey()
        _ = try store.loadOrCreate(name: "Phone")
        let vault = try await Vault.create(at: path, setup: VaultSetup(name: "Journal", recoveryKey: recovery), store: store)
        let ids = try await vault.commit { tx in
            try (0..<10).map { i in try tx.add(EntryBody(created: Self.hour(Double(i)), text: "\(i)")).entryID }
        }
        return (vault, path, ids)
    }

    /// The date of "hour `n`" of the timeline.
    static func hour(_ n: Double) -> Date { Date(timeIntervalSince1970: 1_767_225_600 + n * 3600) }

    /// The texts of the page of `query` after `cursor`.
    static func texts(_ vault: Vault, _ query: EntryQuery, after cursor: EntryCursor?) async throws -> [String] {
        try await vault.entries(matching: query, after: cursor).entries.map(\.body.text)
    }

    @Test func aTimelineOpensAtARowAndPagesBothWaysInBothOrders() async throws {
        let dir = TemporaryDirectory()
        let (vault, _, ids) = try await Self.timeline(dir)
        let row = try #require(try await vault.entry(ids[5]))
        let newest = EntryQuery(order: .newestFirst, limit: 3)
        let oldest = EntryQuery(order: .oldestFirst, limit: 3)

        // Newest first, as a timeline: the page starts at the row, and its
        // next page goes on from where it ended.
        let page = try await vault.entries(matching: newest, after: EntryCursor(before: row))
        #expect(page.entries.map(\.body.text) == ["5", "4", "3"])
        #expect(try await Self.texts(vault, newest, after: page.next) == ["2", "1", "0"])
        #expect(try await Self.texts(vault, newest, after: EntryCursor(after: row)) == ["4", "3", "2"])
        // The rows above it: the order flipped, from just after the row.
        #expect(try await Self.texts(vault, oldest, after: EntryCursor(after: row)) == ["6", "7", "8"])
        // Oldest first the same way round.
        #expect(try await Self.texts(vault, oldest, after: EntryCursor(before: row)) == ["5", "6", "7"])
        #expect(try await Self.texts(vault, newest, after: EntryCursor(after: try #require(try await vault.entry(ids[9])))) == ["8", "7", "6"])
        #expect(try await Self.texts(vault, oldest, after: EntryCursor(before: try #require(try await vault.entry(ids[9])))) == ["9"])
        #expect(try await vault.entries(matching: oldest, after: EntryCursor(after: try #require(try await vault.entry(ids[9])))).entries.isEmpty)
        // A cursor after a row is the cursor a page ends with.
        let first = try await vault.entries(matching: EntryQuery(order: .newestFirst, limit: 5))
        #expect(first.next == EntryCursor(after: try #require(first.entries.last)))
        #expect(EntryCursor(before: row) != EntryCursor(after: row))
        // A search pages from a row too.
        #expect(try await vault.search("5", matching: newest, after: EntryCursor(before: row)).entries.map(\.body.text) == ["5"])
        #expect(try await vault.search("5", matching: newest, after: EntryCursor(after: row)).entries.isEmpty)
    }

    @Test func aCursorAtARowHoldsItsPlaceAcrossARefresh() async throws {
        let dir = TemporaryDirectory()
        let store = AppKeyStoreTests.KeychainLikeStore()
        let (vault, path, ids) = try await Self.timeline(dir, store: store)
        let row = try #require(try await vault.entry(ids[5]))
        let (before, after) = (EntryCursor(before: row), EntryCursor(after: row))

        // Another writer adds an entry on each side of the row, then
        // deletes the row itself.
        let other = try await Vault.open(at: path, store: store)
        try await other.commit { tx in
            try tx.add(EntryBody(created: Self.hour(4.5), text: "4.5"))
            try tx.add(EntryBody(created: Self.hour(5.5), text: "5.5"))
        }
        _ = try await vault.refresh()
        let newest = EntryQuery(order: .newestFirst, limit: 3)
        let oldest = EntryQuery(order: .oldestFirst, limit: 3)
        #expect(try await Self.texts(vault, newest, after: before) == ["5", "4.5", "4"])
        #expect(try await Self.texts(vault, oldest, after: before) == ["5", "5.5", "6"])
        #expect(try await Self.texts(vault, newest, after: after) == ["4.5", "4", "3"])
        #expect(try await Self.texts(vault, oldest, after: after) == ["5.5", "6", "7"])

        try await other.commit { tx in try tx.delete(ids[5]) }
        _ = try await vault.refresh()
        // The row is gone: both cursors stand where it stood.
        #expect(try await Self.texts(vault, newest, after: before) == ["4.5", "4", "3"])
        #expect(try await Self.texts(vault, oldest, after: before) == ["5.5", "6", "7"])
        #expect(try await Self.texts(vault, newest, after: after) == ["4.5", "4", "3"])
    }

    @Test func aCursorAtARowIsKeptAsJSONAndReadFromTheIndexCache() async throws {
        let dir = TemporaryDirectory()
        let store = AppKeyStoreTests.KeychainLikeStore(indexCacheFolder: dir.file("Caches"))
        let (vault, path, ids) = try await Self.timeline(dir, store: store)
        let row = try #require(try await vault.entry(ids[5]))
        let before = EntryCursor(before: row)
        let after = EntryCursor(after: row)

        let json = try JSONEncoder().encode(before)
        #expect(try JSONDecoder().decode(EntryCursor.self, from: json) == before)
        #expect(try JSONDecoder().decode(EntryCursor.self, from: JSONEncoder().encode(after)) == after)
        // A cursor kept by an older version (no row flag) is a cursor after the row.
        let afterJSON = String(decoding: try JSONEncoder().encode(after), as: UTF8.self)
        #expect(!afterJSON.contains("includesRow"))
        #expect(String(decoding: json, as: UTF8.self).contains("\"includesRow\":true"))

        // A query writes the index cache; a second handle's first page
        // comes from it.
        _ = try await vault.entries(matching: EntryQuery())
        let reopened = try await Vault.open(at: path, store: store)
        let restored = try JSONDecoder().decode(EntryCursor.self, from: json)
        #expect(try await Self.texts(reopened, EntryQuery(order: .newestFirst, limit: 3), after: restored) == ["5", "4", "3"])
        #expect(try await Self.texts(reopened, EntryQuery(order: .oldestFirst, limit: 3), after: restored) == ["5", "6", "7"])
    }
}
