import Foundation
@_spi(Crypto) import QuireCrypto
@_spi(Format) import QuireFormat
import Testing

@testable @_spi(Format) @_spi(Crypto) import QuireKeys

/// The Keychain store (`Spec/keys.md §3.3`, issue 13) over a Keychain in
/// memory that behaves as the Security framework's: the behaviours the
/// file store's tests (`DeviceKeyStoreTests`) check, on every system.
@Suite struct KeychainDeviceKeyStoreTests {
    static let service = "com.example.diary.quire"

    static func store(_ keychain: InMemoryKeychain = InMemoryKeychain(), caches: String? = nil) -> KeychainDeviceKeyStore {
        KeychainDeviceKeyStore(service: service, indexCacheFolder: caches, keychain: keychain)
    }

    static func keyItem(_ keychain: InMemoryKeychain) throws -> [UInt8] { try keychain.copy(service: service, account: "device-key") }

    @Test func roundTripsTheKeyInOneItem() throws {
        let keychain = InMemoryKeychain()
        let store = Self.store(keychain, caches: "/var/mobile/Containers/Data/Application/X/Library/Caches/Quire")
        #expect(try store.load() == nil)
        let device = DeviceKeyStoreTests.device("Sam's iPhone")
        try store.create(device)
        let loaded = try #require(try store.load())
        #expect(loaded.publicKey == device.publicKey && loaded.name == "Sam's iPhone" && loaded.createdMilliseconds == 1_767_225_600_000)
        // One item, the bytes of the file store's key file.
        #expect(keychain.accounts(of: Self.service) == ["device-key"])
        let bytes = try Self.keyItem(keychain)
        #expect(Array(bytes.prefix(8)) == Array("QUIREDEV".utf8) && bytes.count == 8 + 84 + 16)
        #expect(try FileDeviceKeyStore.identity(decodingKeyFile: bytes, path: "x").publicKey == device.publicKey)
        #expect(store.indexCacheFolder == "/var/mobile/Containers/Data/Application/X/Library/Caches/Quire")
        #expect(Self.store().indexCacheFolder == nil)
        // Memory per vault id, as an app's store must on iOS (§3.3).
        #expect(!store.keepsMemoryPerPath)
        // Another service is another store.
        #expect(try KeychainDeviceKeyStore(service: "com.example.other", indexCacheFolder: nil, keychain: keychain).load() == nil)
    }

    @Test func createNeverReplacesAKey() throws {
        let keychain = InMemoryKeychain()
        let store = Self.store(keychain)
        try store.create(DeviceKeyStoreTests.device("First"))
        let item = "the Keychain item device-key of " + Self.service
        #expect(throws: QuireError.fromDeviceStore(DeviceStoreError.alreadyExists(path: item))) {
            try store.create(DeviceKeyStoreTests.device("Second"))
        }
        do {
            try store.create(DeviceKeyStoreTests.device("Second"))
        } catch {
            #expect(error.code == "device_key_exists" && error.category == .programmerError)
        }
        #expect(try store.load()?.name == "First")
        let (device, created) = try store.loadOrCreate(name: "Third", now: 0, using: SeededRandom(label: "third"))
        #expect(device.name == "First" && !created)
        #expect(keychain.accounts(of: Self.service) == ["device-key"])
        // Once the item is deleted, a new key can be made.
        try store.removeDeviceKey()
        try store.removeDeviceKey()
        #expect(try store.load() == nil)
        try store.create(DeviceKeyStoreTests.device("Fourth"))
        #expect(try store.load()?.name == "Fourth")
    }

    @Test func loadOrCreateMakesAKeyOnce() throws {
        let keychain = InMemoryKeychain()
        let store = Self.store(keychain)
        let (first, created) = try store.loadOrCreate(name: "Phone", now: 5, using: SeededRandom(label: "phone"))
        #expect(created && first.name == "Phone" && first.createdMilliseconds == 5)
        let (again, createdAgain) = try store.loadOrCreate(name: "Other", now: 6, using: SeededRandom(label: "other"))
        #expect(!createdAgain && again.publicKey == first.publicKey)
        let empty = InMemoryKeychain()
        #expect(
            throws: QuireError.fromDeviceStore(
                DeviceStoreError.invalid(reason: "a device name must be 1 to 64 characters long (this one has 0)"))
        ) {
            _ = try Self.store(empty).loadOrCreate(name: "", now: 0, using: SeededRandom(label: "x"))
        }
        #expect(empty.accounts(of: Self.service).isEmpty)
    }

    @Test func damagedItemsAreReportedNotUsed() throws {
        let keychain = InMemoryKeychain()
        let store = Self.store(keychain)
        try store.create(DeviceKeyStoreTests.device("Phone"))
        let original = try Self.keyItem(keychain)
        let item = "the Keychain item device-key of " + Self.service
        func write(_ bytes: [UInt8]) throws { try keychain.update(service: Self.service, account: "device-key", data: bytes) }
        for i in [0, 20, original.count - 1] {
            var bytes = original
            bytes[i] ^= 0x04
            try write(bytes)
            let reason = i == 0 ? "it is not a Quire device key" : "its checksum does not match (the file is damaged)"
            #expect(throws: QuireError.fromDeviceStore(DeviceStoreError.damaged(path: item, reason: reason))) { _ = try store.load() }
        }
        try write(Array(original.prefix(10)))
        #expect(throws: QuireError.fromDeviceStore(DeviceStoreError.damaged(path: item, reason: "it is not a Quire device key"))) {
            _ = try store.load()
        }
        try write([UInt8](repeating: 0x51, count: 4097))
        #expect(
            throws: QuireError.fromDeviceStore(
                DeviceStoreError.damaged(path: item, reason: "it is 4097 bytes, larger than any Quire device key"))
        ) {
            _ = try store.load()
        }
        do {
            _ = try store.load()
        } catch {
            #expect(error.code == "device_key_damaged" && error.category == .damaged)
            #expect(
                error.message
                    == "this device's key, \(item), cannot be read: it is 4097 bytes, larger than any Quire device key; delete the item (SecItemDelete) and enroll this device again"
            )
        }
    }

    /// What a device remembers is per vault id and memory location
    /// (`Spec/keys.md §3.3`, §7), encoded as the file store's memory files.
    @Test func memoryIsPerVaultAndLocation() throws {
        let keychain = InMemoryKeychain()
        let store = Self.store(keychain)
        let a = VaultID(using: SeededRandom(label: "vault a"))
        let b = VaultID(using: SeededRandom(label: "vault b"))
        let h1 = KeyringID(using: SeededRandom(label: "h1"))
        let h2 = KeyringID(using: SeededRandom(label: "h2"))
        let location = "vault:" + hex(a.bytes)
        #expect(try store.memory(of: a, path: location) == nil)
        let m = VaultMemory(
            vaultID: a, path: location, committedLength: 4096, chainHead: counting(32), newestClock: 77, keyringHeads: [h2, h1])
        try store.remember(m)
        let read = try #require(try store.memory(of: a, path: location))
        #expect(read.committedLength == 4096 && read.chainHead == counting(32) && read.newestClock == 77 && read.removedKey == nil)
        #expect(Set(read.keyringHeads) == [h1, h2])
        #expect(try store.memory(of: a, path: "/j/Journal.quire") == nil)
        #expect(try store.memory(of: b, path: location) == nil)
        // The memory is kept with no device key, and replaced in place.
        var later = m
        later.committedLength = 8192
        later.removedKey = counting(32, from: 9)
        try store.remember(later)
        #expect(try store.memory(of: a, path: location) == VaultMemory(decoding: later.encoded()))  // heads come back sorted
        let account = "memory:" + hex(a.bytes) + "-" + hex(BLAKE2b.hash(Array(location.utf8), byteCount: 32).prefix(16))
        #expect(keychain.accounts(of: Self.service) == [account])
        #expect(try keychain.copy(service: Self.service, account: account) == later.encoded())
        // A path with a line break and a backslash (a store asked by path) comes back exactly.
        var odd = m
        odd.path = "/j/odd\nname\\x\n.quire"
        try store.remember(odd)
        #expect(try store.memory(of: a, path: odd.path) == VaultMemory(decoding: odd.encoded()))
        #expect(keychain.accounts(of: Self.service).count == 2)
        // An item that is not this vault's memory is damage, not "none".
        try keychain.update(service: Self.service, account: account, data: Array("vault zz\n".utf8))
        let item = "the Keychain item " + account + " of " + Self.service
        #expect(
            throws: QuireError.fromDeviceStore(
                DeviceStoreError.damaged(path: item, reason: "it is not a Quire device memory of this vault"))
        ) {
            _ = try store.memory(of: a, path: location)
        }
        try keychain.update(service: Self.service, account: account, data: odd.encoded())
        #expect(
            throws: QuireError.fromDeviceStore(
                DeviceStoreError.damaged(path: item, reason: "it is not a Quire device memory of this vault"))
        ) {
            _ = try store.memory(of: a, path: location)
        }
        #expect(
            DeviceStoreError.damaged(path: item, reason: "it is not a Quire device memory of this vault").description
                == "this device's memory of a vault, \(item), cannot be read: it is not a Quire device memory of this vault")
    }

    /// Before the first unlock after a restart every call fails with
    /// `errSecInteractionNotAllowed`: `key_store_unavailable`, never "no
    /// key" (which would make a second key) nor "no memory" (which would
    /// turn the rollback check off).
    @Test func aLockedDeviceIsUnavailableNotEmpty() throws {
        let keychain = InMemoryKeychain()
        let store = Self.store(keychain)
        let device = DeviceKeyStoreTests.device("Phone")
        try store.create(device)
        let vault = VaultID(using: SeededRandom(label: "locked"))
        let m = VaultMemory(
            vaultID: vault, path: "vault:" + hex(vault.bytes), committedLength: 1, chainHead: counting(32), newestClock: 1, keyringHeads: []
        )
        try store.remember(m)
        keychain.isLocked = true
        func expectUnavailable(_ body: () throws(QuireError) -> Void) {
            do {
                try body()
                Issue.record("no error while locked")
            } catch {
                #expect(error.code == "key_store_unavailable" && error.category == .unavailable)
                #expect(error.message.contains("errSecInteractionNotAllowed") && error.message.contains(Self.service))
            }
        }
        expectUnavailable { () throws(QuireError) in _ = try store.load() }
        expectUnavailable { () throws(QuireError) in try store.create(DeviceKeyStoreTests.device("Other")) }
        expectUnavailable { () throws(QuireError) in _ = try store.loadOrCreate(name: "Other", now: 0, using: SeededRandom(label: "other"))
        }
        expectUnavailable { () throws(QuireError) in _ = try store.memory(of: vault, path: m.path) }
        expectUnavailable { () throws(QuireError) in try store.remember(m) }
        expectUnavailable { () throws(QuireError) in try store.removeDeviceKey() }
        keychain.isLocked = false
        #expect(try store.load()?.publicKey == device.publicKey)
        #expect(try store.memory(of: vault, path: m.path) == m)
    }

    /// Another failure of the Keychain is `io` (`.unavailable`) and names
    /// the status; no error names key bytes.
    @Test func otherFailuresNameTheStatusNotTheKey() throws {
        let keychain = InMemoryKeychain()
        let store = Self.store(keychain)
        let device = DeviceKeyStoreTests.device("Phone")
        try store.create(device)
        let seedHex = hex(try device.secretSeed().copyBytes())
        var errors: [QuireError] = []
        do { try store.create(device) } catch { errors.append(error) }
        try keychain.update(service: Self.service, account: "device-key", data: [0x51])
        do { _ = try store.load() } catch { errors.append(error) }
        let failed = QuireError.fromDeviceStore(.keychain(operation: "read", item: "the Keychain item device-key of s", status: -34_018))
        #expect(failed.code == "io" && failed.category == .unavailable)
        #expect(
            failed.message
                == "the Keychain could not read the Keychain item device-key of s: OSStatus -34018 (errSecMissingEntitlement: the app is not signed for this Keychain (application identifier or access group))"
        )
        errors.append(failed)
        // Without the Security framework (this system, unless it is Apple's), the public init says so.
        #if !canImport(Security)
            let none = KeychainDeviceKeyStore(service: Self.service, indexCacheFolder: nil)
            do {
                _ = try none.load()
                Issue.record("a store without a Keychain loaded")
            } catch {
                #expect(error.code == "io" && error.category == .unavailable)
                #expect(
                    error.message
                        == "the Keychain could not read the Keychain item device-key of \(Self.service): OSStatus -4 (errSecUnimplemented: there is no Keychain on this system)"
                )
                errors.append(error)
            }
        #endif
        for error in errors {
            #expect(!error.message.lowercased().contains(seedHex) && !"\(error)".lowercased().contains(seedHex))
        }
        #expect(!"\(store)".lowercased().contains(seedHex) && !"\(keychain)".lowercased().contains(seedHex))
    }
}
