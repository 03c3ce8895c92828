import Foundation
import Quire  // alone: what an app sees
import Testing

/// A "Recently deleted" screen, with public names only (iOS trial of stop
/// 40, finding 1; third trial, defect 1): each row of `deletedEntries()`
/// shows the entry as it was before the deletion, and `tx.restore(id)`
/// brings that back. Before, the rows carried the tombstone's empty body,
/// and restoring a row's body restored an empty entry, which a later
/// `compact()` made the only text left.
@Suite struct AppDeletedEntryTests {
    typealias Store = AppKeyStoreTests.KeychainLikeStore

    @Test func aDeletedEntryIsShownAndRestoredWithItsText() async throws {
        let dir = TemporaryDirectory()
        let path = dir.file("Journal.quire")
        let store = Store()
        _ = try store.loadOrCreate(name: "Laptop")
        let vault = try await Vault.create(at: path, setup: VaultSetup(name: "Journal", recoveryKey: try RecoveryKey()), store: store)
        let written = try await vault.commit { tx in
            try tx.add(EntryBody(created: Date(), text: "Up betimes, and to the office.", tags: ["work"]))
        }
        let id = written.entryID
        try await vault.commit { tx in _ = try tx.delete(id) }

        let deleted = try #require(try await vault.deletedEntries().first { $0.id == id })
        // The row shows the entry as it was, and that it was deleted.
        #expect(deleted.body?.text == "Up betimes, and to the office.")
        #expect(deleted.body?.tags == ["work"])
        let tombstone = try #require(try await vault.entry(id))
        #expect(tombstone.isDeleted && deleted.deletion == tombstone.revision.revisionID)
        #expect(abs(deleted.deleted.timeIntervalSinceNow) < 600)

        try await vault.commit { tx in _ = try tx.restore(id) }
        let restored = try #require(try await vault.entry(id))
        #expect(!restored.isDeleted)
        #expect(restored.body.text == "Up betimes, and to the office.")
        #expect(restored.body.tags == ["work"])
        #expect(try await vault.deletedEntries().isEmpty)
    }

    /// The natural code of a Recently deleted screen, then a compaction:
    /// the text survives. Before, `row.body` was the tombstone's (empty,
    /// created 1970), the restore wrote an empty entry and the compaction
    /// dropped the text.
    @Test func restoringARowThenCompactingKeepsTheText() async throws {
        let dir = TemporaryDirectory()
        let (vault, _) = try await AppErrorTypeTests.vault(dir)
        let written = try await vault.commit { tx in
            try tx.add(EntryBody(created: AppErrorTypeTests.date, text: "Lord's day. Up and to church.", tags: ["church"]))
        }
        try await vault.commit { tx in _ = try tx.delete(written.entryID) }
        let row = try #require(try await vault.deletedEntries().first)
        let body = try #require(row.body)
        #expect(body.created == AppErrorTypeTests.date)
        try await vault.commit { tx in _ = try tx.restore(row.id, body: body) }
        _ = try await vault.compact()
        let restored = try #require(try await vault.entry(written.entryID))
        #expect(!restored.isDeleted)
        #expect(restored.body.text == "Lord's day. Up and to church.")
        #expect(restored.body.tags == ["church"])
        #expect(restored.body.created == AppErrorTypeTests.date)
    }

    /// After a compaction only the deletion is left: the row says so (no
    /// body) and `restore` throws `not_restorable`, writing nothing, never
    /// an empty entry.
    @Test func aDeletionWhoseTextWasCompactedAwayIsNotRestoredEmpty() async throws {
        let dir = TemporaryDirectory()
        let (vault, _) = try await AppErrorTypeTests.vault(dir)
        let written = try await vault.commit { tx in try tx.add(EntryBody(created: AppErrorTypeTests.date, text: "gone")) }
        try await vault.commit { tx in _ = try tx.delete(written.entryID) }
        _ = try await vault.compact()
        let row = try #require(try await vault.deletedEntries().first)
        #expect(row.id == written.entryID)
        #expect(row.body == nil)
        do {
            try await vault.commit { tx in _ = try tx.restore(row.id) }
            Issue.record("an entry with no text left was restored")
        } catch {
            #expect(error.code == "not_restorable")
            #expect(error.category == .notFound)
        }
        #expect(try await vault.entry(written.entryID)?.isDeleted == true)
        #expect(try await vault.deletedEntries().map(\.id) == [written.entryID])
    }
}
