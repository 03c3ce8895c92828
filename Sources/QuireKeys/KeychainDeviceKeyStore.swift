@_spi(Crypto) public import QuireCrypto
@_spi(Format) public import QuireFormat
internal import QuireSystem

#if canImport(Security)
    internal import Foundation
    internal import Security
#endif

/// The device key store in the Keychain, for an app on iOS or macOS
/// (`Spec/keys.md §3.3`): what ``FileDeviceKeyStore`` keeps in files, kept
/// as generic-password items of the app's `service`, readable after the
/// first unlock since the device started, on this device only, and never
/// synchronized to iCloud Keychain. The item `device-key` holds this
/// device's key pair (the bytes of the file store's key file), and one
/// item per vault holds what the device remembers of it (`Spec/keys.md
/// §7`), under the vault id: the memory survives the app's data container
/// moving on an update (``DeviceKeyStore/keepsMemoryPerPath`` is false).
///
/// Errors are those of every store (``DeviceKeyStore``): before the first
/// unlock after a restart (an app woken in the background) the Keychain
/// cannot be read, which is ``QuireError/keyStoreUnavailable(_:)``
/// (category `.unavailable`): open the vault again once the device is
/// unlocked. ``DeviceKeyStore/create(_:)`` never replaces a stored key
/// (code `device_key_exists`); an item that does not decode is `.damaged`
/// (`device_key_damaged`). The index caches go to the `indexCacheFolder`
/// given to ``init(service:accessGroup:indexCacheFolder:)``.
public struct KeychainDeviceKeyStore: DeviceKeyStore {
    /// The Keychain service of every item: the app's reverse-DNS name.
    let service: String
    /// The Keychain: the Security framework's, or a fake in tests.
    let keychain: any KeychainBackend

    /// Where the index caches go (`Spec/index-cache.md §2`), or nil for
    /// none, as given to ``init(service:accessGroup:indexCacheFolder:)``.
    @_spi(Format) public let indexCacheFolder: String?

    /// The account of the device key's item.
    static let keyAccount = "device-key"
    /// How the account of a memory item starts; a vault id and a path hash
    /// follow, as in the file store's memory file name.
    static let memoryAccountPrefix = "memory:"
    /// How errors name an item: this, its account, `of` and the service.
    static let itemPrefix = "the Keychain item "
    /// How errors name a memory item.
    static let memoryItemPrefix = itemPrefix + memoryAccountPrefix

    /// The store of the app's Keychain items under `service`.
    ///
    /// On a system without Apple's Security framework every call throws
    /// ``QuireError`` (`.unavailable`, code `io`): use
    /// ``FileDeviceKeyStore`` there.
    ///
    /// - Parameters:
    ///   - service: the items' service (`kSecAttrService`), the app's
    ///     reverse-DNS name, such as `"com.example.diary.quire"`. Keep it:
    ///     another service is another, empty store.
    ///   - accessGroup: the Keychain access group (`kSecAttrAccessGroup`)
    ///     the app shares with its extensions, so that a widget or a share
    ///     extension opens the vault with the same device key; nil for the
    ///     app's default group.
    ///   - indexCacheFolder: the folder for the index caches, such as the
    ///     path of the app's (or its App Group's) `Library/Caches`, or nil
    ///     for none (every open then decrypts the whole vault; see
    ///     ``DeviceKeyStore/indexCacheFolder``).
    public init(service: String, accessGroup: String? = nil, indexCacheFolder: String?) {
        #if canImport(Security)
            self.init(service: service, indexCacheFolder: indexCacheFolder, keychain: SystemKeychain(accessGroup: accessGroup))
        #else
            self.init(service: service, indexCacheFolder: indexCacheFolder, keychain: NoKeychain())
        #endif
    }

    /// The store over `keychain`: an ``InMemoryKeychain`` in tests.
    package init(service: String, indexCacheFolder: String?, keychain: any KeychainBackend) {
        self.service = service
        self.indexCacheFolder = indexCacheFolder
        self.keychain = keychain
    }

    /// How errors name the item of `account`; never its content.
    func item(_ account: String) -> String { Self.itemPrefix + account + " of " + service }

    /// The error for `status`, from `operation` on the item of `account`:
    /// a locked device is ``QuireError/keyStoreUnavailable(_:)``.
    func failure(_ status: KeychainStatus, _ operation: String, _ account: String) -> QuireError {
        guard status != .interactionNotAllowed else {
            return .keyStoreUnavailable(
                "the device is locked, so \(item(account)) cannot be used (errSecInteractionNotAllowed); try again once it is unlocked"
            )
        }
        return .fromDeviceStore(.keychain(operation: operation, item: item(account), status: status.value))
    }

    /// This device's identity from the `device-key` item; nil when there is
    /// none.
    ///
    /// - Throws: ``QuireError``: `.unavailable` while the device is locked
    ///   (``QuireError/keyStoreUnavailable(_:)``) or when the Keychain
    ///   fails (code `io`); `.damaged` (`device_key_damaged`) for an item
    ///   that does not decode.
    @_spi(Format) public func load() throws(QuireError) -> DeviceIdentity? {
        var bytes: [UInt8]
        do { bytes = try keychain.copy(service: service, account: Self.keyAccount) } catch {
            if error == .itemNotFound { return nil }
            throw failure(error, "read", Self.keyAccount)
        }
        defer { wipe(&bytes) }
        do throws(DeviceStoreError) {
            guard bytes.count <= FileDeviceKeyStore.maxFileBytes else {
                throw .damaged(path: item(Self.keyAccount), reason: "it is \(bytes.count) bytes, larger than any Quire device key")
            }
            return try FileDeviceKeyStore.identity(decodingKeyFile: bytes, path: item(Self.keyAccount))
        } catch {
            throw .fromDeviceStore(error)
        }
    }

    /// Stores `identity` in the `device-key` item, which must not exist
    /// yet: the Keychain adds an item atomically, so of two processes that
    /// create a key at once one wins.
    ///
    /// - Throws: ``QuireError``: `.programmerError` (`device_key_exists`)
    ///   when a key is stored already; `.unavailable` while the device is
    ///   locked or when the Keychain fails.
    @_spi(Format) public func create(_ identity: DeviceIdentity) throws(QuireError) {
        var bytes: [UInt8]
        do { bytes = try FileDeviceKeyStore.keyFile(of: identity) } catch { throw .fromDeviceStore(error) }
        defer { wipe(&bytes) }
        do { try keychain.add(service: service, account: Self.keyAccount, data: bytes) } catch {
            if error == .duplicateItem { throw .fromDeviceStore(.alreadyExists(path: item(Self.keyAccount))) }
            throw failure(error, "add", Self.keyAccount)
        }
    }

    /// The account of the memory of `vaultID` at `path`: `memory:`, the
    /// vault id and a hash of the path, as the file store names its memory
    /// files (the path itself never becomes an attribute).
    static func memoryAccount(_ vaultID: VaultID, path: String) -> String {
        memoryAccountPrefix + FileDeviceKeyStore.memoryName(vaultID, path: path)
    }

    /// What is remembered of `vaultID` at `path`; nil when nothing is.
    ///
    /// - Throws: ``QuireError``: `.damaged` (`device_key_damaged`) for an
    ///   item that is not a memory of this vault and path; `.unavailable`
    ///   while the device is locked or when the Keychain fails.
    @_spi(Format) public func memory(of vaultID: VaultID, path: String) throws(QuireError) -> VaultMemory? {
        let account = Self.memoryAccount(vaultID, path: path)
        let bytes: [UInt8]
        do { bytes = try keychain.copy(service: service, account: account) } catch {
            if error == .itemNotFound { return nil }
            throw failure(error, "read", account)
        }
        guard bytes.count <= FileDeviceKeyStore.maxMemoryFileBytes, let memory = VaultMemory(decoding: bytes), memory.vaultID == vaultID,
            memory.path == path
        else {
            throw .fromDeviceStore(.damaged(path: item(account), reason: "it is not a Quire device memory of this vault"))
        }
        return memory
    }

    /// Replaces the item of `memory`'s vault and path, or adds it.
    ///
    /// - Throws: ``QuireError``: `.unavailable` while the device is locked
    ///   or when the Keychain fails.
    @_spi(Format) public func remember(_ memory: VaultMemory) throws(QuireError) {
        let account = Self.memoryAccount(memory.vaultID, path: memory.path)
        let bytes = memory.encoded()
        do throws(KeychainStatus) {
            do { try keychain.add(service: service, account: account, data: bytes) } catch {
                guard error == .duplicateItem else { throw error }
                try keychain.update(service: service, account: account, data: bytes)
            }
        } catch {
            throw failure(error, "write", account)
        }
    }

    /// Deletes the `device-key` item, if there is one (tests; an app that
    /// resets itself).
    ///
    /// - Throws: ``QuireError``: `.unavailable` while the device is locked
    ///   or when the Keychain fails.
    package func removeDeviceKey() throws(QuireError) {
        do { try keychain.delete(service: service, account: Self.keyAccount) } catch {
            if error == .itemNotFound { return }
            throw failure(error, "delete", Self.keyAccount)
        }
    }
}

/// A Security framework result code (`OSStatus`) other than success.
package struct KeychainStatus: Error, Sendable, Equatable {
    /// The code.
    package var value: Int32

    /// The status `value`.
    package init(_ value: Int32) { self.value = value }

    /// `errSecDuplicateItem`: an item of that service and account exists.
    package static let duplicateItem = KeychainStatus(-25_299)
    /// `errSecItemNotFound`: there is no such item.
    package static let itemNotFound = KeychainStatus(-25_300)
    /// `errSecInteractionNotAllowed`: the device is locked (for items
    /// readable after the first unlock: it has not been unlocked since it
    /// started).
    package static let interactionNotAllowed = KeychainStatus(-25_308)
    /// `errSecUnimplemented`: there is no Keychain (not an Apple system).
    package static let unimplemented = KeychainStatus(-4)
    /// `errSecMissingEntitlement`: the process is not signed with an
    /// application identifier (or the access group is not its own).
    package static let missingEntitlement = KeychainStatus(-34_018)

    /// The constant's name, for the codes above.
    package var name: String? {
        switch self {
        case .duplicateItem: "errSecDuplicateItem"
        case .itemNotFound: "errSecItemNotFound"
        case .interactionNotAllowed: "errSecInteractionNotAllowed"
        case .unimplemented: "errSecUnimplemented: there is no Keychain on this system"
        case .missingEntitlement:
            "errSecMissingEntitlement: the app is not signed for this Keychain (application identifier or access group)"
        default: nil
        }
    }
}

/// The four Keychain calls ``KeychainDeviceKeyStore`` makes, on
/// generic-password items named by service and account. Each throws the
/// Security framework's status as it is; the store gives it a meaning.
package protocol KeychainBackend: Sendable {
    /// `SecItemAdd`: a new item holding `data`; `duplicateItem` when one
    /// of that service and account exists.
    func add(service: String, account: String, data: [UInt8]) throws(KeychainStatus)
    /// `SecItemCopyMatching`: the data of the item; `itemNotFound` when
    /// there is none.
    func copy(service: String, account: String) throws(KeychainStatus) -> [UInt8]
    /// `SecItemUpdate`: replaces the data of the item; `itemNotFound` when
    /// there is none.
    func update(service: String, account: String, data: [UInt8]) throws(KeychainStatus)
    /// `SecItemDelete`: removes the item; `itemNotFound` when there is none.
    func delete(service: String, account: String) throws(KeychainStatus)
}

/// A Keychain in memory with the Security framework's behaviour, for
/// tests on every system: items by service and account, and a lock that
/// makes every call fail as on a locked device.
package final class InMemoryKeychain: KeychainBackend, Sendable {
    private struct Item: Hashable {
        var service: String
        var account: String
    }

    private let state = Locked<(items: [Item: [UInt8]], locked: Bool)>(([:], false))

    /// An empty Keychain.
    package init() {}

    /// Whether the device is locked: every call then throws
    /// `interactionNotAllowed`.
    package var isLocked: Bool {
        get { state.withLock { $0.locked } }
        set { state.withLock { $0.locked = newValue } }
    }

    /// The accounts of `service`'s items, sorted.
    package func accounts(of service: String) -> [String] {
        state.withLock { $0.items.keys.filter { $0.service == service }.map(\.account).sorted() }
    }

    /// Runs `body` on the items unless the device is locked.
    private func unlocked<R>(_ body: (inout [Item: [UInt8]]) throws(KeychainStatus) -> R) throws(KeychainStatus) -> R {
        try state.withLock { (state) throws(KeychainStatus) -> R in
            guard !state.locked else { throw .interactionNotAllowed }
            return try body(&state.items)
        }
    }

    package func add(service: String, account: String, data: [UInt8]) throws(KeychainStatus) {
        try unlocked { (items) throws(KeychainStatus) in
            let item = Item(service: service, account: account)
            guard items[item] == nil else { throw .duplicateItem }
            items[item] = data
        }
    }

    package func copy(service: String, account: String) throws(KeychainStatus) -> [UInt8] {
        try unlocked { (items) throws(KeychainStatus) in
            guard let data = items[Item(service: service, account: account)] else { throw .itemNotFound }
            return data
        }
    }

    package func update(service: String, account: String, data: [UInt8]) throws(KeychainStatus) {
        try unlocked { (items) throws(KeychainStatus) in
            let item = Item(service: service, account: account)
            guard items[item] != nil else { throw .itemNotFound }
            items[item] = data
        }
    }

    package func delete(service: String, account: String) throws(KeychainStatus) {
        try unlocked { (items) throws(KeychainStatus) in
            guard items.removeValue(forKey: Item(service: service, account: account)) != nil else { throw .itemNotFound }
        }
    }
}

#if canImport(Security)
    /// The Keychain of the Security framework: generic-password items,
    /// readable after the first unlock since the device started, on this
    /// device only (`kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly`, so
    /// never in a backup restored to another device), never synchronized,
    /// in the data protection keychain on macOS too.
    struct SystemKeychain: KeychainBackend {
        /// `kSecAttrAccessGroup`, or nil for the app's default group.
        let accessGroup: String?

        /// The attributes that name the item of `service` and `account`.
        private func itemQuery(_ service: String, _ account: String) -> [String: Any] {
            var query: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword,
                kSecAttrService as String: service,
                kSecAttrAccount as String: account,
                kSecAttrSynchronizable as String: false,
                kSecUseDataProtectionKeychain as String: true,
            ]
            if let accessGroup { query[kSecAttrAccessGroup as String] = accessGroup }
            return query
        }

        private func check(_ status: OSStatus) throws(KeychainStatus) {
            guard status == errSecSuccess else { throw KeychainStatus(status) }
        }

        func add(service: String, account: String, data: [UInt8]) throws(KeychainStatus) {
            var value = Data(data)
            var attributes = itemQuery(service, account)
            attributes[kSecAttrAccessible as String] = kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly
            attributes[kSecValueData as String] = value
            let status = SecItemAdd(attributes as CFDictionary, nil)
            // Best effort: the Security framework keeps copies of its own.
            attributes[kSecValueData as String] = nil
            value.resetBytes(in: 0..<value.count)
            try check(status)
        }

        func copy(service: String, account: String) throws(KeychainStatus) -> [UInt8] {
            var query = itemQuery(service, account)
            query[kSecReturnData as String] = true
            query[kSecMatchLimit as String] = kSecMatchLimitOne
            var result: CFTypeRef?
            try check(SecItemCopyMatching(query as CFDictionary, &result))
            guard let data = result as? Data else { throw KeychainStatus(errSecDecode) }
            // The framework's buffer is released, not wiped; the caller wipes this copy.
            return [UInt8](data)
        }

        func update(service: String, account: String, data: [UInt8]) throws(KeychainStatus) {
            var value = Data(data)
            var changes: [String: Any] = [kSecValueData as String: value]
            let status = SecItemUpdate(itemQuery(service, account) as CFDictionary, changes as CFDictionary)
            changes[kSecValueData as String] = nil
            value.resetBytes(in: 0..<value.count)
            try check(status)
        }

        func delete(service: String, account: String) throws(KeychainStatus) {
            try check(SecItemDelete(itemQuery(service, account) as CFDictionary))
        }
    }
#else
    /// No Keychain: not an Apple system. Every call throws `unimplemented`.
    struct NoKeychain: KeychainBackend {
        func add(service: String, account: String, data: [UInt8]) throws(KeychainStatus) { throw .unimplemented }
        func copy(service: String, account: String) throws(KeychainStatus) -> [UInt8] { throw .unimplemented }
        func update(service: String, account: String, data: [UInt8]) throws(KeychainStatus) { throw .unimplemented }
        func delete(service: String, account: String) throws(KeychainStatus) { throw .unimplemented }
    }
#endif
