import Foundation
import Quire  // alone: what an app sees
import Testing

/// iOS trial of session 41, finding 1: iCloud Drive names a conflicting
/// copy `Journal 2.quire`, a name a person could give a backup, so a fold
/// never merges it (`Spec/merge.md §4`). An app must tell "this copy holds
/// entries the journal lacks: ask" from a failure, and hear that the copy
/// appeared. Written against `import Quire` without any `@_spi`, as an
/// app is.
@Suite struct AppConflictCopyTests {
    typealias Store = AppKeyStoreTests.KeychainLikeStore

    /// A journal at `dir/Journal.quire` holding "base", and an iCloud-style
    /// copy of it, `dir/Journal 2.quire`, that holds one entry more.
    static func journalWithICloudCopy(_ dir: TemporaryDirectory) async throws -> (vault: Vault, copy: String) {
        let store = Store()
        _ = try store.loadOrCreate(name: "Phone")
        let recovery = try RecoveryKey()
        let path = dir.file("Journal.quire")
        let vault = try await Vault.create(at: path, setup: VaultSetup(name: "Journal", recoveryKey: recovery), store: store)
        _ = try await vault.commit { tx in try tx.add(EntryBody(created: Date(timeIntervalSince1970: 1_767_225_600), text: "base")) }
        let work = dir.file("work.quire")
        try FileManager.default.copyItem(atPath: path, toPath: work)
        do {
            let other = try await Vault.open(at: work, credential: .recoveryKey(recovery))
            _ = try await other.commit { tx in
                try tx.add(EntryBody(created: Date(timeIntervalSince1970: 1_767_225_660), text: "only in the iCloud copy"))
            }
        }
        let copy = dir.file("Journal 2.quire")
        #expect(rename(work, copy) == 0)
        return (vault, copy)
    }

    @Test func aFoldSaysAnICloudCopyHoldsEntriesToAskAbout() async throws {
        let dir = TemporaryDirectory()
        let (vault, copy) = try await Self.journalWithICloudCopy(dir)

        let fold = try await vault.foldConflictCopies()
        #expect(fold.copies.map(\.copy.path) == [copy])
        let kept = try #require(fold.copies.first)
        #expect(kept.keptBecause == .notAConflictCopy)
        #expect(kept.keptBecause?.rawValue == "not_a_conflict_copy")
        #expect(kept.error == nil)
        #expect(kept.setAsideAs == nil)
        #expect(try await vault.entries(matching: EntryQuery()).entries.map(\.body.text) == ["base"])

        // The person says yes: the app merges it by name.
        let merged = try await vault.merge(copyAt: copy)
        #expect(merged.changed)
        #expect(Set(try await vault.entries(matching: EntryQuery()).entries.map(\.body.text)) == ["base", "only in the iCloud copy"])
        // Folded again, it holds nothing the journal lacks: the app may offer to delete it.
        let again = try await vault.foldConflictCopies()
        #expect(again.copies.map(\.keptBecause) == [.nameNotDistinctive])
        #expect(FileManager.default.fileExists(atPath: copy))
    }
}

extension VaultObserverTests {
    /// Finding 1 of session 41's iOS trial: `events()` announces a copy
    /// whose name is not a sync tool's distinctive conflict name (iCloud
    /// Drive's `Journal 2.quire`), found by its header; before, only
    /// distinctive names were announced and an iCloud app heard nothing.
    /// A file of another vault is not announced. In the serialized
    /// observer suite (a watch of its own folder).
    @Test func eventsAnnounceAnICloudCopy() async throws {
        let dir = TemporaryDirectory()
        let (vault, copy) = try await AppConflictCopyTests.journalWithICloudCopy(dir)
        // Start from a folder holding only the journal (a hidden file is
        // never a copy): the copy appears later.
        let held = dir.file(".held")
        #expect(rename(copy, held) == 0)
        let appeared = AppCopyInbox()
        let watch = Task {
            for await event in vault.events(coalescing: .milliseconds(20)) {
                if case .conflictCopiesAppeared(let paths) = event { appeared.add(paths) }
            }
        }
        try await Task.sleep(for: .milliseconds(150))
        // Another vault's file beside it is no copy.
        let store = AppKeyStoreTests.KeychainLikeStore()
        _ = try store.loadOrCreate(name: "Other")
        _ = try await Vault.create(at: dir.file("Other.quire"), setup: VaultSetup(name: "Other", recoveryKey: RecoveryKey()), store: store)
        #expect(rename(held, copy) == 0)
        #expect(await Self.eventually { !appeared.all.isEmpty })
        try await Task.sleep(for: .milliseconds(150))
        #expect(appeared.all == [[copy]])
        watch.cancel()
        await watch.value
    }
}

/// The paths of each `.conflictCopiesAppeared` a watch delivered.
final class AppCopyInbox: @unchecked Sendable {  // every field is guarded by `lock`
    private let lock = NSLock()
    private var items: [[String]] = []
    /// Records one event's paths.
    func add(_ paths: [String]) { lock.withLock { items.append(paths) } }
    /// Every event's paths, in order.
    var all: [[String]] { lock.withLock { items } }
}
