import Foundation
import Quire
import QuireKeys  // the package-level fake Keychain; the rest is what `import Quire` shows
import Testing

/// Issue 13: an iOS app opens its vault through `KeychainDeviceKeyStore`.
/// Here its Keychain is the fake in memory (`InMemoryKeychain`), which
/// answers as the Security framework's does; everything else is the public
/// API.
@Suite struct KeychainStoreVaultTests {
    static func store(_ keychain: InMemoryKeychain, caches: String?) -> KeychainDeviceKeyStore {
        KeychainDeviceKeyStore(service: "com.example.diary.quire", indexCacheFolder: caches, keychain: keychain)
    }

    @Test func aVaultIsCreatedAndReopenedThroughTheKeychainStore() async throws {
        let dir = TemporaryDirectory()
        let keychain = InMemoryKeychain()
        // The app's Library/Caches exists; the store's folder in it is made on first use.
        try FileManager.default.createDirectory(atPath: dir.file("Library/Caches"), withIntermediateDirectories: true)
        let store = Self.store(keychain, caches: dir.file("Library/Caches/Quire"))
        let (phone, created) = try store.loadOrCreate(name: "Sam's iPhone")
        #expect(created)
        let before = dir.file("Containers/A/Documents/Journal.quire")
        try FileManager.default.createDirectory(atPath: dir.file("Containers/A/Documents"), withIntermediateDirectories: true)
        let vault = try await Vault.create(
            at: before, setup: VaultSetup(name: "Journal", recoveryKey: try RecoveryKey()), store: store)
        let id = try await vault.commit { tx in try tx.add(EntryBody(created: Date(), text: "Written with the key from the Keychain")).entryID }
        #expect(try await vault.keyState().devices.map(\.publicKey) == [phone.publicKey])
        #expect(try await vault.entries(matching: EntryQuery()).entries.map(\.id) == [id])
        // The key and one memory, kept per vault id; an index cache.
        #expect(keychain.accounts(of: "com.example.diary.quire").count == 2)
        #expect(keychain.accounts(of: "com.example.diary.quire").contains("device-key"))
        #expect(try !FileManager.default.contentsOfDirectory(atPath: dir.file("Library/Caches/Quire")).isEmpty)

        // The app is updated: its container, so the vault's path, changes.
        // A new store value over the same Keychain finds the key and the memory.
        let after = dir.file("Containers/B/Documents/Journal.quire")
        try FileManager.default.createDirectory(atPath: dir.file("Containers/B/Documents"), withIntermediateDirectories: true)
        try FileManager.default.moveItem(atPath: before, toPath: after)
        let again = Self.store(keychain, caches: dir.file("Library/Caches/Quire"))
        let reopened = try await Vault.open(at: after, store: again)
        #expect(reopened.keyWarnings.isEmpty)
        let entries = try await reopened.entries(matching: EntryQuery()).entries
        #expect(entries.map(\.id) == [id] && entries.allSatisfy(\.isVerified))
        _ = try await reopened.commit { tx in try tx.add(EntryBody(created: Date(), text: "and again")) }
        #expect(keychain.accounts(of: "com.example.diary.quire").count == 2)

        // Woken in the background before the first unlock: unavailable,
        // not "no key" (which would make another).
        keychain.isLocked = true
        do {
            _ = try await Vault.open(at: after, store: again)
            Issue.record("opened with a locked Keychain")
        } catch {
            #expect(error.category == .unavailable && error.code == "key_store_unavailable")
        }
        keychain.isLocked = false
        #expect(try await Vault.open(at: after, store: again).entries(matching: EntryQuery()).entries.count == 2)
    }
}
