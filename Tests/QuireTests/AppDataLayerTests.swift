import Foundation
@_spi(Format) @_spi(Crypto) import Quire
import QuireSystem
import Testing

/// iOS review 25 (issue 13): the facade an app's data layer uses. A handle
/// made by `create` knows its key store; device memory follows the vault id
/// when an app's container path changes (and migrates a memory kept by
/// path); a store's index cache is used; `tx.delete`/`tx.restore`; the
/// `async` forms of the reading and key operations return what the
/// synchronous forms return, and take `Date`s.
@Suite struct AppDataLayerTests {
    typealias Store = AppKeyStoreTests.KeychainLikeStore
    static let t0 = Date(timeIntervalSince1970: 1_767_225_600)

    /// A store with a device "Phone" and an index cache folder in `dir`.
    static func store(_ dir: TemporaryDirectory) throws -> Store {
        let store = Store(indexCacheFolder: dir.file("Caches"))
        _ = try store.loadOrCreate(name: "Phone")
        return store
    }

    static func setup() throws -> VaultSetup {
        VaultSetup(name: "Journal", recoveryKey: try RecoveryKey())
    }

    static func move(_ from: String, to: String) throws {
        try FileManager.default.createDirectory(
            atPath: (to as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try FileManager.default.moveItem(atPath: from, toPath: to)
    }

    static func copy(_ from: String, to: String) throws {
        try FileManager.default.createDirectory(
            atPath: (to as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        if FileManager.default.fileExists(atPath: to) { try FileManager.default.removeItem(atPath: to) }
        try FileManager.default.copyItem(atPath: from, toPath: to)
    }

    /// Before: `create` returned a handle with a bare device key, so the
    /// store held no memory of the new vault and no index cache was made.
    @Test func aVaultCreatedThroughTheStoreKnowsIt() async throws {
        let dir = TemporaryDirectory()
        let store = try Self.store(dir)
        let vault = try await Vault.create(at: dir.file("Journal.quire"), setup: Self.setup(), store: store, options: fast)
        #expect(store.memoryItems == ["memory vault:\(vault.vaultID)"])
        let id = try await vault.commit { tx in try tx.add(EntryBody(text: "first")).entryID }
        #expect(try await vault.entries(matching: EntryQuery(limit: 10)).entries.map(\.id) == [id])
        let phone = try #require(try store.load())
        #expect(try await vault.keyState().devices.map(\.publicKey) == [phone.publicKey])
        // The index cache was written, and a new handle answers from it
        // without reading the vault whole.
        #expect(try !FileManager.default.contentsOfDirectory(atPath: dir.file("Caches")).isEmpty)
        let reopened = try await Vault.open(at: dir.file("Journal.quire"), store: store, options: fast)
        #expect(try await reopened.entries(matching: EntryQuery(limit: 10)).entries.map(\.id) == [id])
        #expect(reopened.fullIndexLoads == 0)
    }

    @Test func aSetupNamingAnotherDeviceThanTheStoresIsRefused() throws {
        let dir = TemporaryDirectory()
        let store = try Self.store(dir)
        var setup = try Self.setup()
        setup.device = try DeviceIdentity.generate(name: "Other", now: 0, using: SystemRandom())
        #expect(throws: QuireError.self) { try Vault.create(at: dir.file("v.quire"), setup: setup, store: store, options: fast) }
        #expect(!FileManager.default.fileExists(atPath: dir.file("v.quire")))
        #expect(throws: QuireError.deviceStore(.noKey)) {
            try Vault.create(at: dir.file("v.quire"), setup: Self.setup(), store: Store(), options: fast)
        }
    }

    /// An app update moves the container: the vault's path changes. Before,
    /// the memory was kept by path, so the moved file had none and a
    /// rolled-back copy there passed unnoticed.
    @Test func deviceMemoryFollowsTheVaultWhenItsPathChanges() async throws {
        let dir = TemporaryDirectory()
        let store = try Self.store(dir)
        let before = dir.file("Containers/A/Journal.quire")
        try FileManager.default.createDirectory(atPath: dir.file("Containers/A"), withIntermediateDirectories: true)
        let vault = try await Vault.create(at: before, setup: Self.setup(), store: store, options: fast)
        _ = try await vault.commit { tx in try tx.add(EntryBody(text: "one")) }
        try Self.copy(before, to: dir.file("old.quire"))
        _ = try await vault.commit { tx in try tx.add(EntryBody(text: "two")) }
        #expect(store.memoryItems == ["memory vault:\(vault.vaultID)"])

        // The file as it was, at the new container path: no warning.
        let after = dir.file("Containers/B/Journal.quire")
        try Self.move(before, to: after)
        let moved = try await Vault.open(at: after, store: store, options: fast)
        #expect(moved.keyWarnings.isEmpty)
        #expect(try await moved.entries().count == 2)

        // A copy from before the last commit in its place: a rollback.
        try Self.copy(dir.file("old.quire"), to: after)
        let rolledBack = try await Vault.open(at: after, store: store, options: fast)
        #expect(rolledBack.keyWarnings.map(\.code) == ["rollback_suspected"])
        await #expect(throws: QuireError.self) { try await rolledBack.commit { tx in try tx.add(EntryBody(text: "three")) } }
    }

    /// A store the library asked by canonical path (as before memory was
    /// per vault id) keeps working: its memory is read on the first open
    /// and moved to the vault id.
    @Test func aMemoryKeptByPathIsMigratedOnTheFirstOpen() async throws {
        let dir = TemporaryDirectory()
        let store = try Self.store(dir)
        store.keepsMemoryPerPath = true
        let path = dir.file("Journal.quire")
        let vault = try await Vault.create(at: path, setup: Self.setup(), store: store, options: fast)
        _ = try await vault.commit { tx in try tx.add(EntryBody(text: "one")) }
        try Self.copy(path, to: dir.file("old.quire"))
        _ = try await vault.commit { tx in try tx.add(EntryBody(text: "two")) }
        let canonical = try #require(FileSystem.canonicalPath(path))
        #expect(store.memoryItems == ["memory " + canonical])

        store.keepsMemoryPerPath = false
        // The rolled-back copy is still noticed through the old memory…
        try Self.copy(dir.file("old.quire"), to: dir.file("rolled/Journal.quire"))
        try Self.copy(dir.file("old.quire"), to: path + ".rolled")
        try FileManager.default.moveItem(atPath: path, toPath: path + ".current")
        try FileManager.default.moveItem(atPath: path + ".rolled", toPath: path)
        let rolledBack = try await Vault.open(at: path, store: store, options: fast)
        #expect(rolledBack.keyWarnings.map(\.code) == ["rollback_suspected"])
        #expect(store.memoryItems == ["memory " + canonical])
        // …and the current file moves the memory to the vault id.
        try FileManager.default.removeItem(atPath: path)
        try FileManager.default.moveItem(atPath: path + ".current", toPath: path)
        let current = try await Vault.open(at: path, store: store, options: fast)
        #expect(current.keyWarnings.isEmpty)
        #expect(store.memoryItems.contains("memory vault:\(vault.vaultID)"))
        // Now at another path too.
        let other = try await Vault.open(at: dir.file("rolled/Journal.quire"), store: store, options: fast)
        #expect(other.keyWarnings.map(\.code) == ["rollback_suspected"])
    }

    /// The command line's store keeps a memory per path, as before.
    @Test func theFileStoreKeepsMemoryPerPath() {
        #expect(FileDeviceKeyStore(directory: "/nonexistent").keepsMemoryPerPath)
        #expect(!Store().keepsMemoryPerPath)
    }

    /// Before: `VaultTransaction` had no delete or restore.
    @Test func deleteAndRestoreInsideACommit() async throws {
        let dir = TemporaryDirectory()
        let (vault, _) = try makeVault(dir)
        let (a, b) = try await vault.commit { tx in
            (try tx.add(EntryBody(created: 1, text: "a")).entryID, try tx.add(EntryBody(created: 2, text: "b")).entryID)
        }
        let c = try await vault.commit { tx in
            try tx.delete(a)
            try tx.delete(b)
            return try tx.add(EntryBody(created: 3, text: "c")).entryID
        }
        #expect(try await vault.entries().map(\.id) == [c])
        #expect(Set(try await vault.deletedEntries().map(\.id)) == [a, b])
        let old = try await vault.revisions(of: a).first!.body
        let restored = try await vault.commit { tx in try tx.restore(a, body: old).entryID }
        #expect(restored == a)
        #expect(try await vault.entries().map(\.body.text) == ["a", "c"])
        // A delete of an entry the vault does not hold commits nothing.
        let size = try FileSystem.size(dir.file("v.quire"))
        let unknown = try #require(EntryID(hex: "00000000000000000000000000000001"))
        await #expect(throws: QuireError.entryNotFound(unknown)) {
            try await vault.commit { tx in
                try tx.add(EntryBody(created: 4, text: "d"))
                try tx.delete(unknown)
            }
        }
        #expect(try FileSystem.size(dir.file("v.quire")) == size)
    }

    /// The `async` forms of the key operations, with `Date`s.
    @Test func keyOperationsAsync() async throws {
        let dir = TemporaryDirectory()
        let store = try Self.store(dir)
        let vault = try await Vault.create(at: dir.file("Journal.quire"), setup: Self.setup(), store: store, options: fast)
        let tablet = try DeviceIdentity.generate(name: "Tablet", now: 0, using: SystemRandom())
        let added = Date(timeIntervalSince1970: 1_767_225_601.25)
        let member = try await vault.enrollDevice(code: tablet.code, name: "Tablet", now: added)
        #expect(member.name == "Tablet" && member.publicKey == tablet.publicKey)
        #expect(member.added == added && member.addedMilliseconds == 1_767_225_601_250)
        #expect(try await vault.keyState().devices.map(\.name).sorted() == ["Phone", "Tablet"])
        #expect(try await vault.recoveryReplacements(removing: tablet.publicKey).isEmpty)
        #expect(try await vault.recoveryKeyChoices().isEmpty)
        let epoch = try await vault.keyState().epoch
        try await vault.rotateKeys(now: Self.t0)
        #expect(try await vault.keyState().epoch == epoch + 1)
        let removed = try await vault.removeDevice(publicKey: tablet.publicKey, now: Self.t0)
        #expect(removed.name == "Tablet")
        #expect(try await vault.keyState().devices.map(\.name) == ["Phone"])
        #expect(try await vault.privacyStatement().text.contains("Phone"))
        #expect(try await vault.acceptTampered() == 0)
        try await vault.acceptRollback()
        #expect(try await vault.profile()?.name == "Journal")
        #expect(try await vault.conflictCopies().isEmpty)
        #expect(try await vault.unreadRecords().isEmpty)

        // A cancelled task does not start a key change.
        let task = Task { () async -> QuireError? in
            withUnsafeCurrentTask { $0?.cancel() }
            do throws(QuireError) {
                try await vault.rotateKeys()
                return nil
            } catch {
                return error
            }
        }
        #expect(await task.value == .cancelled)
        #expect(try await vault.keyState().epoch == epoch + 2)
    }

    /// An attachment's manifest through the `async` form.
    @Test func attachmentManifestAsync() async throws {
        let dir = TemporaryDirectory()
        let (vault, _) = try makeVault(dir)
        let bytes = [UInt8](repeating: 7, count: 1000)
        let stored = try await vault.commit { tx in try tx.storeAttachment(from: MemoryByteSource(bytes), mediaType: "image/jpeg") }
        let manifest = try await vault.attachment(stored.blob)
        #expect(manifest.byteCount == 1000 && manifest.mediaType == "image/jpeg")
        #expect(try await vault.attachmentBytes(stored.blob) == bytes)
    }
}
