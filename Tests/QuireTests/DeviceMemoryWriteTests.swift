import Foundation
@_spi(Format) import Quire
@_spi(Format) import QuireKeys
import QuireSystem
import Testing

/// Device memory (`Spec/keys.md §7`) is written once per commit, after the
/// commit is in the file: a write that building the index asked for inside
/// the commit waits for it (issue 14: `quire add --attach` and `quire edit`
/// flushed the memory file and its folder twice, the first time before the
/// vault's own flush). A crash between the commit and that write leaves the
/// memory older than the file, which the next open accepts; a commit that
/// fails writes none.
@Suite struct DeviceMemoryWriteTests {
    /// A store that notes every write: the memory written, and how long the
    /// vault file was at that moment.
    final class RecordingStore: DeviceKeyStore, @unchecked Sendable {
        let inner = InMemoryDeviceKeyStore()
        let vaultPath: String
        var writes: [(memory: VaultMemory, fileSize: UInt64)] = []
        /// When true, writes fail as if the process had died before them.
        var failing = false

        init(vaultPath: String) { self.vaultPath = vaultPath }

        var indexCacheFolder: String? { nil }
        var keepsMemoryPerPath: Bool { inner.keepsMemoryPerPath }
        func load() throws(QuireError) -> DeviceIdentity? { try inner.load() }
        func create(_ identity: DeviceIdentity) throws(QuireError) { try inner.create(identity) }
        func memory(of vaultID: VaultID, path: String) throws(QuireError) -> VaultMemory? {
            try inner.memory(of: vaultID, path: path)
        }
        func remember(_ memory: VaultMemory) throws(QuireError) {
            if failing { throw .fromDeviceStore(.invalid(reason: "the process died before writing its device memory")) }
            let size = (try? FileSystem.size(vaultPath)) ?? 0
            writes.append((memory, size))
            try inner.remember(memory)
        }
    }

    /// A vault with one entry, and a handle opened through a store that
    /// remembers the file with clock 0 (the fresh handle had not built its
    /// index), so that building the index inside the next commit has
    /// something new to remember.
    static func setUp(_ dir: TemporaryDirectory, _ label: String) throws -> (Vault, RecordingStore, EntryRevision, String) {
        let (vault, laptop, _) = try KeyAttackTests.laptopVault(dir, label)
        let first = try vault.add(EntryBody(created: KeyAttackTests.t0 + 1, text: "first"))
        let path = dir.file("j.quire")
        let store = RecordingStore(vaultPath: FileSystem.canonicalPath(path) ?? path)
        try store.create(laptop)
        let handle = try Vault.open(at: path, store: store, options: fast)
        #expect(store.writes.count == 1 && store.writes[0].memory.newestClock < first.clock.rawValue, "\(store.writes.map(\.memory))")
        store.writes.removeAll()
        return (handle, store, first, path)
    }

    @Test func anEditThatBuildsTheIndexWritesDeviceMemoryOnceAfterItsCommit() throws {
        let dir = TemporaryDirectory()
        let (vault, store, first, path) = try Self.setUp(dir, "memory once")
        let edited = try vault.edit(first.entryID, body: EntryBody(created: KeyAttackTests.t0 + 1, text: "edited"))
        let size = try FileSystem.size(path)
        // One write (the old code wrote twice: when the commit built the
        // index, before the commit, and after it).
        #expect(store.writes.count == 1, "\(store.writes.map(\.memory))")
        let write = try #require(store.writes.first)
        // Written after the commit was in the file, and holding it.
        #expect(write.fileSize == size)
        #expect(write.memory.committedLength == size)
        #expect(write.memory.newestClock == edited.clock.rawValue)
        // A second commit on the same handle writes once more, no more.
        try vault.add(EntryBody(created: KeyAttackTests.t0 + 2, text: "second"))
        #expect(store.writes.count == 2)
        #expect(store.writes.last?.memory.committedLength == (try FileSystem.size(path)))
    }

    @Test func anAbandonedCommitWritesNoMemory() throws {
        struct Abandon: Error {}
        let dir = TemporaryDirectory()
        let (vault, store, first, path) = try Self.setUp(dir, "memory abandoned")
        let size = try FileSystem.size(path)
        // The commit throws QuireError only: the app's own error is wrapped.
        let abandoned = #expect(throws: QuireError.self) {
            try vault.commit { tx in
                _ = try tx.edit(
                    first.entryID, body: EntryBody(created: KeyAttackTests.t0 + 1, text: "never"), replacing: [first.revisionID])
                throw Abandon()
            }
        }
        #expect(abandoned?.underlyingError is Abandon && abandoned?.code == "commit_abandoned")
        #expect(try FileSystem.size(path) == size)
        // The clock read for the abandoned revision is in no file: a memory
        // holding it would make a later compaction look like a rollback.
        #expect(store.writes.isEmpty, "\(store.writes.map(\.memory))")
        // The next commit remembers everything, once.
        let added = try vault.add(EntryBody(created: KeyAttackTests.t0 + 2, text: "second"))
        #expect(store.writes.count == 1)
        #expect(store.writes.first?.memory.newestClock == added.clock.rawValue)
        #expect(store.writes.first?.memory.committedLength == (try FileSystem.size(path)))
    }

    @Test func aCrashBetweenTheCommitAndTheMemoryWriteIsNotARollback() throws {
        let dir = TemporaryDirectory()
        let (vault, store, first, path) = try Self.setUp(dir, "memory crash")
        let remembered = try #require(try store.memory(of: vault.vaultID, path: FileSystem.canonicalPath(path) ?? path))
        // The commit lands; the memory write after it does not happen.
        store.failing = true
        try vault.edit(first.entryID, body: EntryBody(created: KeyAttackTests.t0 + 1, text: "edited"))
        #expect(vault.keyWarnings.contains { $0.code == "device_memory_not_saved" })
        #expect(store.writes.isEmpty)
        #expect(try store.memory(of: vault.vaultID, path: FileSystem.canonicalPath(path) ?? path) == remembered)
        // The next process: the file extends what the device remembers.
        store.failing = false
        let next = try Vault.open(at: path, store: store, options: fast)
        #expect(!next.keyWarnings.contains { $0.code == "rollback_suspected" }, "\(next.keyWarnings)")
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        try next.add(EntryBody(created: KeyAttackTests.t0 + 3, text: "after the crash"))
        #expect(store.writes.last?.memory.committedLength == (try FileSystem.size(path)))
        // Once remembered, the file as it was before that add is a rollback.
        try before.write(to: URL(fileURLWithPath: path))
        let rolledBack = try Vault.open(at: path, store: store, options: fast)
        #expect(rolledBack.keyWarnings.contains { $0.code == "rollback_suspected" }, "\(rolledBack.keyWarnings)")
    }
}
