import Foundation
import Quire  // alone: what an app sees
import Testing

/// A "Recently deleted" screen, with public names only (iOS trial of stop
/// 40, finding 1): a deleted entry's snapshot and its only version are its
/// tombstone, whose body is empty, so the text the screen shows and the
/// body `restore` brings back come from the last revision before the
/// deletion — here or on another device.
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
        #expect(deleted.body.text.isEmpty)
        // The screen's text: the newest revision that is not the tombstone.
        let revisions = try await vault.revisions(of: id)
        #expect(revisions.count == 2 && revisions.last?.isDeleted == true)
        let before = try #require(revisions.last { !$0.isDeleted })
        #expect(before.body.text == "Up betimes, and to the office.")
        #expect(before.body.tags == ["work"])

        try await vault.commit { tx in _ = try tx.restore(id, body: before.body) }
        let restored = try #require(try await vault.entry(id))
        #expect(!restored.isDeleted)
        #expect(restored.body.text == "Up betimes, and to the office.")
        #expect(restored.body.tags == ["work"])
        #expect(try await vault.deletedEntries().isEmpty)
    }
}
