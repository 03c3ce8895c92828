import Foundation
import Quire
import Testing

/// Issue 13: an app can keep this device's key in a store of its own (the
/// platform keychain on Apple systems) with the public API alone — this
/// file imports `Quire` without any `@_spi`.
@Suite struct AppKeyStoreTests {
    /// Stands in for the keychain: items are byte arrays under a service
    /// name, as `SecItemAdd` stores `Data`.
    final class KeychainLikeStore: DeviceKeyStore, @unchecked Sendable {  // every field is guarded by `lock`
        private let lock = NSLock()
        private var items: [String: [UInt8]] = [:]
        private var name = ""
        private var created = Date(timeIntervalSince1970: 0)
        private var perPath = false

        /// The folder of index caches: the app's `Library/Caches` on iOS, a
        /// temporary folder here (nil: none).
        let indexCacheFolder: String?

        init(indexCacheFolder: String? = nil) { self.indexCacheFolder = indexCacheFolder }

        /// Per vault id, as an app's store (the default). True stands for
        /// a store the library used before memory was kept per vault id:
        /// it was asked by canonical path.
        var keepsMemoryPerPath: Bool {
            get { lock.withLock { perPath } }
            set { lock.withLock { perPath = newValue } }
        }

        /// The keys of the memory items, sorted.
        var memoryItems: [String] { lock.withLock { items.keys.filter { $0.hasPrefix("memory ") }.sorted() } }

        func load() throws(QuireError) -> DeviceIdentity? {
            lock.lock()
            defer { lock.unlock() }
            guard var seed = items["device-seed"] else { return nil }
            defer { for i in seed.indices { seed[i] = 0 } }
            do throws(QuireError) {
                var copy = seed
                let secret = try SecureBytes(consuming: &copy)  // wipes the copy
                return try DeviceIdentity(seed: secret, name: name, created: created)
            } catch {
                throw QuireError(category: .damaged, code: "device_key_damaged", message: "the keychain item does not decode: \(error.message)")
            }
        }

        func create(_ identity: DeviceIdentity) throws(QuireError) {
            lock.lock()
            defer { lock.unlock() }
            guard items["device-seed"] == nil else {
                throw QuireError(category: .programmerError, code: "device_key_exists", message: "a device key is in the keychain already")
            }
            items["device-seed"] = try identity.secretSeed().copyBytes()
            name = identity.name
            created = identity.created
        }

        func memory(of vaultID: VaultID, path: String) throws(QuireError) -> VaultMemory? {
            lock.withLock { items["memory " + path].flatMap(VaultMemory.init(decoding:)).flatMap { $0.vaultID == vaultID ? $0 : nil } }
        }

        func remember(_ memory: VaultMemory) throws(QuireError) {
            lock.withLock { items["memory " + memory.path] = memory.encoded() }
        }

        var storedSeed: [UInt8]? { lock.withLock { items["device-seed"] } }
    }

    @Test func aVaultOpensThroughAKeychainLikeStore() async throws {
        let dir = TemporaryDirectory()
        let path = dir.file("Journal.quire")
        let store = KeychainLikeStore()
        let (device, created) = try store.loadOrCreate(name: "Phone")
        #expect(created)
        #expect(store.storedSeed?.count == 32)

        // The same seed gives the same identity back.
        let reloaded = try #require(try store.load())
        #expect(reloaded.publicKey == device.publicKey)
        #expect(reloaded.fingerprint == device.fingerprint && reloaded.name == "Phone")
        // Its time is a `Date`, kept to the millisecond, and made just now.
        #expect(reloaded.created == device.created && abs(device.created.timeIntervalSinceNow) < 600)
        #expect(try reloaded.secretSeed().copyBytes() == store.storedSeed)
        #expect(!"\(reloaded)".contains(store.storedSeed!.map { String(format: "%02x", $0) }.joined()))

        _ = try await Vault.create(at: path, setup: VaultSetup(name: "Journal", recoveryKey: RecoveryKey()), store: store)
        let vault = try await Vault.open(at: path, store: store)
        _ = try await vault.commit { tx in try tx.add(EntryBody(created: Date(), text: "Written with the key from the keychain")) }
        let again = try await Vault.open(at: path, store: store)
        let entries = try await again.entries(matching: EntryQuery()).entries
        #expect(entries.map(\.body.text) == ["Written with the key from the keychain"])
        #expect(entries.allSatisfy { $0.isVerified })
    }

    @Test func aSeedOfTheWrongLengthIsRefused() throws {
        var bytes = [UInt8](repeating: 0, count: 31)
        let short = try SecureBytes(consuming: &bytes)
        #expect(throws: QuireError.self) { try DeviceIdentity(seed: short, name: "Phone", created: Date(timeIntervalSince1970: 0)) }
    }
}
