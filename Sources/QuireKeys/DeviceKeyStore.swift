@_spi(Crypto) public import QuireCrypto
@_spi(Format) public import QuireFormat
public import QuireSystem

/// Where a device keeps its own key pair and what it remembers of each vault
/// (`Spec/keys.md §3.3`). The private key never enters a vault.
///
/// Implementations: ``FileDeviceKeyStore`` (one 0600 file under
/// `$QUIRE_HOME`) and ``KeychainDeviceKeyStore`` (Keychain items, for an
/// app on iOS or macOS); an app may supply one of its own.
///
/// Every requirement throws ``QuireError``. A store of the app's reports:
/// - the store cannot be used now but may be later (a Keychain while the
///   device is locked, `errSecInteractionNotAllowed`):
///   ``QuireError/keyStoreUnavailable(_:)`` (`.unavailable`);
/// - a key already stored, from ``create(_:)``: code `device_key_exists`
///   (``QuireError/init(category:code:message:)`` with
///   `.programmerError`), which ``loadOrCreate(name:)`` reads as
///   "another process stored one first";
/// - a stored item that does not decode: code `device_key_damaged`
///   (`.damaged`).
public protocol DeviceKeyStore: Sendable {
    /// This device's identity, or nil when none has been created yet.
    ///
    /// - Throws: ``QuireError`` when the stored key cannot be read now
    ///   (`.unavailable`), is damaged or readable by others (`.damaged`).
    func load() throws(QuireError) -> DeviceIdentity?

    /// Stores `identity` as this device's. Never replaces an existing key:
    /// another process may already have enrolled it in a vault.
    ///
    /// - Throws: ``QuireError``: code `device_key_exists` when a key is
    ///   stored already; `.unavailable`, `.outOfSpace` when it cannot be
    ///   written.
    func create(_ identity: DeviceIdentity) throws(QuireError)

    /// What this device remembers of the vault `vaultID` at the memory
    /// location `path`, or nil when it has none there (`Spec/keys.md §7`).
    /// The library chooses the location (``keepsMemoryPerPath``): the
    /// vault file's canonical path for a store that keeps memory per path,
    /// otherwise `vault:` and the vault id in lowercase hex, the same
    /// wherever the file is. A store keys its items by `vaultID` and
    /// `path` as given, and never interprets `path`.
    ///
    /// - Throws: ``QuireError`` (`.unavailable`, `.damaged`).
    func memory(of vaultID: VaultID, path: String) throws(QuireError) -> VaultMemory?

    /// Records what this device now knows of a vault, under its
    /// ``VaultMemory/vaultID`` and ``VaultMemory/path`` (the memory
    /// location, see ``memory(of:path:)``).
    ///
    /// - Throws: ``QuireError`` (`.unavailable`, `.outOfSpace`).
    func remember(_ memory: VaultMemory) throws(QuireError)

    /// Whether this store keeps device memory per vault id and canonical
    /// path of the vault file (true: a copy at another path has a memory
    /// of its own, as the reference file store and the `quire` command do)
    /// or per vault id alone (false, the default: the memory survives a
    /// change of path, such as an iOS app's data container moving on an
    /// app update, and every copy of the vault on this device shares it).
    /// `Spec/keys.md §3.3`.
    var keepsMemoryPerPath: Bool { get }

    /// The folder where this device keeps its index caches of the vaults it
    /// opens (`Spec/index-cache.md §2`), or nil for none, in which case
    /// every open decrypts the whole vault (seconds and over 100 MiB at
    /// 50,000 entries). There is no default: a store names one, usually in
    /// the platform's caches folder (on iOS the app's, or its App Group's,
    /// `Library/Caches`, excluded from backups; the caches are sealed under
    /// this device's key, and a purged cache is rebuilt on the next open).
    var indexCacheFolder: String? { get }
}

extension DeviceKeyStore {
    /// Memory per vault id (the default; see the requirement).
    public var keepsMemoryPerPath: Bool { false }
}

/// What a device remembers of one vault file (`Spec/keys.md §7`): enough to
/// notice that the file went back in time — lost a keyring it trusted, or
/// the records it had seen — and to refuse to write to it.
public struct VaultMemory: Sendable, Equatable {
    /// The vault id.
    public var vaultID: VaultID
    /// Where the memory is kept (``DeviceKeyStore/memory(of:path:)``): the
    /// canonical path of the vault file for a store that keeps memory per
    /// path, so that a backup or an experimental copy elsewhere keeps its
    /// own; `vault:` and the vault id in hex for one that keeps it per
    /// vault id.
    public var path: String
    /// The committed end the device last saw.
    @_spi(Format) public var committedLength: UInt64
    /// The stored head of the last commit it saw (32 bytes).
    @_spi(Format) public var chainHead: [UInt8]
    /// The greatest hybrid logical clock among the revisions and profiles it
    /// saw (raw value).
    @_spi(Format) public var newestClock: UInt64
    /// The keyring heads it trusted, and the keyrings it could not open that
    /// a current member made (at most 64 in all, the most recent first:
    /// ``remembered(_:)``): a file that lost one was rolled back. Only the
    /// first 64 are written.
    @_spi(Format) public var keyringHeads: [KeyringID]
    /// The device key this device found listed as removed in a keyring it
    /// trusted, if any: a rolled-back file does not re-admit it. It does not
    /// bind another key (a device enrolled again with a new key), and a file
    /// that passes the rollback tests and lists the key as a member again
    /// clears it (`Spec/keys.md §7`).
    @_spi(Format) public var removedKey: [UInt8]?
    /// Where the user accepted the tampered commits the file held
    /// (`Spec/keys.md §7`, "Accepting a tampered commit"), if they did:
    /// writing goes on over tampered commits that end at or before it, while
    /// the file still extends it and holds no more of them than then.
    @_spi(Format) public var acceptedTampered: TamperedAcceptance?
    /// The entries with the greatest clocks among the entry revisions it
    /// saw released from a commit of a current member's standing
    /// (attested by a current member, or by a removed member before its
    /// removal: `Spec/format.md §9.4`), at most
    /// ``maxNewestEntries``, each with that entry's greatest such clock,
    /// ranked by clock descending, ties by entry id
    /// (``newestEntries(_:)``): a rewritten file must still hold a revision
    /// of each at least that new, or it is another history
    /// (`Spec/keys.md §7`, test 3). Empty in a memory an older version
    /// wrote, which skips that part of the test.
    @_spi(Format) public var newest: [NewestEntry]

    /// How many ``newest`` entries a memory keeps (`Spec/keys.md §7`); a
    /// memory file with more `newest` lines is damaged.
    @_spi(Format) public static let maxNewestEntries = 16

    /// One entry of ``newest``: its id and the greatest clock among its
    /// revisions the device saw released.
    @_spi(Format) public struct NewestEntry: Sendable, Equatable {
        /// The entry id.
        public var entry: EntryID
        /// The entry's greatest released clock (raw value).
        public var clock: UInt64

        /// An entry with the given fields.
        public init(entry: EntryID, clock: UInt64) {
            self.entry = entry
            self.clock = clock
        }
    }

    /// Which entries to remember (`Spec/keys.md §7`): of `candidates`
    /// (entry ids with a clock, an id possibly more than once), each
    /// entry once with its greatest clock, the greatest clocks first, ties
    /// by entry id (bytewise, smallest first), at most
    /// ``maxNewestEntries``.
    @_spi(Format) public static func newestEntries(_ candidates: some Sequence<NewestEntry>) -> [NewestEntry] {
        var best: [EntryID: UInt64] = [:]
        for c in candidates where best[c.entry].map({ c.clock > $0 }) ?? true { best[c.entry] = c.clock }
        return best.map { NewestEntry(entry: $0.key, clock: $0.value) }.sorted { x, y in
            x.clock != y.clock ? x.clock > y.clock : x.entry < y.entry
        }.prefix(maxNewestEntries).map { $0 }
    }

    /// An acceptance of tampered commits by watermark (`Spec/keys.md §7`,
    /// fifth review F5): one line of the memory file however many commits
    /// it covers, so a keyless writer who tampers with more commits than
    /// any list would hold cannot take this way out away.
    @_spi(Format) public struct TamperedAcceptance: Sendable, Equatable {
        /// The committed end of the file when the user accepted, in bytes.
        public var committedLength: UInt64
        /// The stored head of the commit ending there (32 bytes).
        public var chainHead: [UInt8]
        /// How many tampered commits ended at or before `committedLength`
        /// then: a file that holds more there was tampered with again.
        public var count: UInt64

        /// An acceptance with the given fields.
        public init(committedLength: UInt64, chainHead: [UInt8], count: UInt64) {
            self.committedLength = committedLength
            self.chainHead = chainHead
            self.count = count
        }
    }

    /// A memory with the given fields.
    @_spi(Format) public init(
        vaultID: VaultID, path: String, committedLength: UInt64, chainHead: [UInt8], newestClock: UInt64, keyringHeads: [KeyringID],
        removedKey: [UInt8]? = nil, acceptedTampered: TamperedAcceptance? = nil, newest: [NewestEntry] = []
    ) {
        self.acceptedTampered = acceptedTampered
        self.newest = newest
        self.vaultID = vaultID
        self.path = path
        self.committedLength = committedLength
        self.chainHead = chainHead
        self.newestClock = newestClock
        self.keyringHeads = keyringHeads
        self.removedKey = removedKey
    }

    /// Where device memory ranks a keyring (`Spec/keys.md §7`): by what
    /// its signed content fixes — its epoch, then its depth in the key
    /// graph — never by a file position, which a keyless writer moves for
    /// free (fifth review, F7).
    @_spi(Format) public struct KeyringRank: Sendable, Equatable {
        /// The keyring's epoch.
        public var epoch: UInt32
        /// The length of the longest chain of parents from it to a root
        /// (0 for a root, or for a keyring none of whose parents is in the
        /// file).
        public var depth: Int

        /// A rank with the given fields.
        public init(epoch: UInt32, depth: Int) {
            self.epoch = epoch
            self.depth = depth
        }
    }

    /// Which keyrings to remember (`Spec/keys.md §7`): of `keyrings` (the
    /// heads and the keyrings the credential is behind, each with its
    /// rank), the highest epoch first, then the greatest depth, then the
    /// smallest id, at most 64. Nothing here is a position in the file: a
    /// keyless writer cannot change which are kept; a member who wants a
    /// head forgotten must make 64 trusted keyrings that rank above it.
    @_spi(Format) public static func remembered(_ keyrings: [(id: KeyringID, rank: KeyringRank)]) -> [KeyringID] {
        var seen = Set<KeyringID>()
        return keyrings.sorted { x, y in
            if x.rank.epoch != y.rank.epoch { return x.rank.epoch > y.rank.epoch }
            if x.rank.depth != y.rank.depth { return x.rank.depth > y.rank.depth }
            return x.id.bytes.lexicographicallyPrecedes(y.id.bytes)
        }.filter { seen.insert($0.id).inserted }.prefix(Limits.maxParentCount).map(\.id)
    }

    /// The text the reference file store writes (`Spec/keys.md §3.3`).
    public func encoded() -> [UInt8] {
        func escape(_ s: String) -> String {
            var out = ""
            for c in s.unicodeScalars {
                switch c {
                case "\\": out += "\\\\"
                case "\n": out += "\\n"
                default: out.unicodeScalars.append(c)
                }
            }
            return out
        }
        var lines = [
            "# what this device remembers of a Quire vault (Spec/keys.md §7)",
            "vault " + hex(vaultID.bytes), "path " + escape(path), "length \(committedLength)", "head " + hex(chainHead),
            "clock \(newestClock)",
        ]
        // The first 64 as given (the caller puts the most recent first,
        // ``remembered(_:)``), written sorted.
        lines += keyringHeads.prefix(Limits.maxParentCount).map { "keyring " + hex($0.bytes) }.sorted()
        if let removedKey { lines.append("removed " + hex(removedKey)) }
        if let a = acceptedTampered { lines.append("accepted-tampered \(a.committedLength) \(hex(a.chainHead)) \(a.count)") }
        // Ranked as given (``newestEntries(_:)``), at most 16.
        lines += newest.prefix(Self.maxNewestEntries).map { "newest \($0.entry) \($0.clock)" }
        return Array((lines.joined(separator: "\n") + "\n").utf8)
    }

    static func unescape(_ s: String) -> String {
        var out = ""
        var escaped = false
        for c in s.unicodeScalars {
            if escaped {
                out.unicodeScalars.append(c == "n" ? "\n" : c)
                escaped = false
            } else if c == "\\" {
                escaped = true
            } else {
                out.unicodeScalars.append(c)
            }
        }
        return out
    }

    /// Parses ``encoded()``; nil for anything else.
    public init?(decoding bytes: [UInt8]) {
        guard let text = String(validating: bytes, as: UTF8.self) else { return nil }
        var vault: VaultID?
        var path: String?
        var length: UInt64?
        var head: [UInt8]?
        var clock: UInt64?
        var heads: [KeyringID] = []
        var removedKey: [UInt8]?
        var tampered: TamperedAcceptance?
        var newest: [NewestEntry] = []
        for line in text.unicodeScalars.split(whereSeparator: { $0 == "\n" }).map(String.init) where !line.hasPrefix("#") {
            guard let space = line.firstIndex(of: " ") else { return nil }
            let key = line[..<space]
            let value = String(line[line.index(after: space)...])
            switch key {
            case "vault": vault = VaultID(hex: value)
            case "path": path = Self.unescape(value)
            case "length": length = UInt64(value)
            case "head": head = QuireCrypto.bytes(fromHex: value).flatMap { $0.count == 32 ? $0 : nil }
            case "clock": clock = UInt64(value)
            case "keyring":
                guard let id = KeyringID(hex: value) else { return nil }
                heads.append(id)
            case "removed":
                // Development versions wrote "removed yes", which names no
                // key: it is ignored.
                guard value != "yes" else { continue }
                guard let key = QuireCrypto.bytes(fromHex: value), key.count == 32 else { return nil }
                removedKey = key
            case "accepted-tampered":
                // "<length> <head> <count>" (Spec/keys.md §3.3). Development
                // versions wrote "tampered <head>" lines, which are ignored.
                let parts = value.split(separator: " ", omittingEmptySubsequences: false)
                guard parts.count == 3, let length = UInt64(parts[0]), let count = UInt64(parts[2]),
                    let head = QuireCrypto.bytes(fromHex: String(parts[1])), head.count == 32
                else { return nil }
                tampered = TamperedAcceptance(committedLength: length, chainHead: head, count: count)
            case "newest":
                // "<entry id, 32 lowercase hex> <clock>" (Spec/keys.md §3.3).
                let parts = value.split(separator: " ", omittingEmptySubsequences: false)
                // Strict: decimal digits only ("+5" and leading zeros are
                // not the writer's form), and one line per entry (a
                // repeated id would count twice among those a file lacks).
                guard parts.count == 2, let id = EntryID(hex: parts[0]), id.description == parts[0], let clock = UInt64(parts[1]),
                    String(clock) == parts[1], !newest.contains(where: { $0.entry == id })
                else { return nil }
                newest.append(NewestEntry(entry: id, clock: clock))
            default: continue
            }
        }
        guard let vault, let path, let length, let head, let clock, heads.count <= Limits.maxParentCount,
            newest.count <= Self.maxNewestEntries
        else { return nil }
        self.init(
            vaultID: vault, path: path, committedLength: length, chainHead: head, newestClock: clock, keyringHeads: heads,
            removedKey: removedKey,
            acceptedTampered: tampered, newest: newest)
    }
}

extension DeviceKeyStore {
    /// This device's identity, generating and storing one named `name` when
    /// there is none (a fresh Ed25519 key pair from the system's secure
    /// random source, created now). If another process stored one first,
    /// that one is used.
    ///
    /// - Parameter name: the device's name for a new key (1–64 characters,
    ///   no control characters), such as `"Sam's iPhone"`.
    /// - Returns: the identity, and whether it was created by this call.
    /// - Throws: ``QuireError``: `.unavailable` when the store cannot be
    ///   read or written now (a locked device's keychain), `.damaged` for a
    ///   stored key that does not decode, `.outOfSpace`, and
    ///   `.programmerError` (`invalid_argument`) for a bad name.
    public func loadOrCreate(name: String) throws(QuireError) -> (DeviceIdentity, created: Bool) {
        try loadOrCreate(name: name, now: ProcessStats.wallClockMilliseconds(), using: SystemRandom())
    }

    /// ``loadOrCreate(name:)`` with the creation time (milliseconds since
    /// the Unix epoch, UTC) and the random source fixed, for vectors and
    /// tests.
    ///
    /// - Throws: as ``loadOrCreate(name:)``.
    @_spi(Crypto) public func loadOrCreate(name: String, now: Int64, using random: any RandomSource) throws(QuireError) -> (
        DeviceIdentity, created: Bool
    ) {
        if let existing = try load() { return (existing, false) }
        let identity: DeviceIdentity
        do { identity = try DeviceIdentity.generateChecked(name: name, now: now, using: random) } catch {
            throw .fromDeviceStore(.invalid(reason: error.description))
        }
        do {
            try create(identity)
        } catch {
            if error.code == "device_key_exists", let winner = try load() { return (winner, false) }
            throw error
        }
        return (identity, true)
    }
}

/// What can go wrong with a device key store. Messages name paths and
/// permissions, never key material.
@_spi(Format) public enum DeviceStoreError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A device key is already stored at `path`.
    case alreadyExists(path: String)
    /// The key file is readable or writable by other users (`mode`, octal).
    @_spi(Format) case permissionsTooOpen(path: String, mode: UInt16)
    /// The file belongs to another user (`owner` is its user id): whoever
    /// that is could have written it.
    @_spi(Format) case notOwned(path: String, owner: UInt32)
    /// The key file is not a Quire device key, or it is damaged.
    case damaged(path: String, reason: String)
    /// No directory could be chosen: none of `QUIRE_HOME`, `XDG_DATA_HOME`
    /// or `HOME` is set.
    @_spi(Format) case noDirectory
    /// The store holds no device key yet: this device was never set up.
    case noKey
    /// A bad argument, such as a device name with a control character.
    case invalid(reason: String)
    /// A file operation failed.
    @_spi(Format) case io(SystemError)
    /// The Keychain refused an operation on one of ``KeychainDeviceKeyStore``'s
    /// items (`item` names it) with `status` (an `OSStatus`), for another
    /// reason than a locked device, which is
    /// ``QuireError/keyStoreUnavailable(_:)``.
    @_spi(Format) case keychain(operation: String, item: String, status: Int32)

    /// The stable, machine-readable name.
    public var code: String {
        switch self {
        case .alreadyExists: "device_key_exists"
        case .permissionsTooOpen, .notOwned: "device_key_permissions"
        case .damaged: "device_key_damaged"
        case .noDirectory: "device_key_no_directory"
        case .noKey: "no_device_key"
        case .invalid: "invalid_argument"
        case .io, .keychain: "io"
        }
    }

    /// The error in words a person can act on; names paths, never key bytes.
    public var description: String {
        switch self {
        case .alreadyExists(let path):
            return "a device key already exists at \(path); it is kept (it may be enrolled in vaults)"
        case .permissionsTooOpen(let path, let mode) where (try? FileSystem.status(path))?.isDirectory == true:
            return
                "the key store folder \(path) has mode \(String(mode, radix: 8)), so other users may add, swap or remove its files; it is not used. Run `chmod 700 \(path)`, check the files in it, and consider the device key exposed"
        case .permissionsTooOpen(let path, let mode):
            return
                "the device key \(path) has mode \(String(mode, radix: 8)), so other users may read it; run `chmod 600 \(path)` and consider the key exposed"
        case .notOwned(let path, let owner):
            return
                "\(path) belongs to another user (uid \(owner)), who could have written it; it is not used. Check it, then make it yours (`chown`), or remove it"
        case .damaged(let path, let reason) where path.hasSuffix(".memory") && reason.hasPrefix(FileDeviceKeyStore.missingMemoryReason):
            return "this device's memory of a vault file, \(path), \(reason)"
        case .damaged(let path, let reason) where path.hasPrefix(KeychainDeviceKeyStore.memoryItemPrefix):
            return "this device's memory of a vault, \(path), cannot be read: \(reason)"
        case .damaged(let path, let reason) where path.hasPrefix(KeychainDeviceKeyStore.itemPrefix):
            return
                "this device's key, \(path), cannot be read: \(reason); delete the item (SecItemDelete) and enroll this device again"
        case .damaged(let path, let reason) where path.hasSuffix(".memory"):
            return
                "this device's memory of a vault file, \(path), cannot be read: \(reason); remove the file and its line in vaults/recorded beside it (the next open writes both again, without the rollback check for that open)"
        case .damaged(let path, let reason) where path.hasSuffix("/vaults/recorded"):
            return
                "this device's list of the vault files it remembers, \(path), cannot be read: \(reason); the device key is not affected. Remove the lines that are not a vault id and a path hash, or the whole file (the next open writes it again; until then a deleted memory file of a vault goes unnoticed)"
        case .damaged(let path, let reason):
            return "the device key \(path) cannot be read: \(reason); restore it from a backup, or remove it and enroll this device again"
        case .noKey:
            return
                "this device has no device key yet: make one (DeviceKeyStore.loadOrCreate), show its device code, and enroll it from a device of the vault or with the recovery key"
        case .noDirectory:
            return "no place for the device key: set QUIRE_HOME (or XDG_DATA_HOME or HOME)"
        case .invalid(let reason):
            return reason
        case .io(let e):
            return e.description
        case .keychain(let operation, let item, let status):
            return "the Keychain could not \(operation) \(item): OSStatus \(status)\(KeychainStatus(status).name.map { " (\($0))" } ?? "")"
        }
    }
}

/// A device key store in memory, for tests and previews. Nothing touches the disk.
// @unchecked Sendable: `identity` and `memories` are read and written under `lock` only.
package final class InMemoryDeviceKeyStore: DeviceKeyStore, @unchecked Sendable {
    private let lock = RecursiveLock()
    private var identity: DeviceIdentity?
    private var memories: [String: VaultMemory] = [:]

    /// An empty store, or one holding `identity`.
    public init(identity: DeviceIdentity? = nil) { self.identity = identity }

    /// The stored identity, or nil. Never throws.
    public func load() throws(QuireError) -> DeviceIdentity? { lock.withLock { identity } }

    /// Stores `identity` once.
    ///
    /// - Throws: ``DeviceStoreError/alreadyExists(path:)`` (path `"(memory)"`).
    public func create(_ identity: DeviceIdentity) throws(QuireError) {
        try lock.withLock { () throws(QuireError) -> Void in
            guard self.identity == nil else { throw .fromDeviceStore(.alreadyExists(path: "(memory)")) }
            self.identity = identity
        }
    }

    /// Per path, as the file store: tests of copies at other paths rely
    /// on it.
    public var keepsMemoryPerPath: Bool { true }

    /// The folder of index caches: none (nothing touches the disk).
    public var indexCacheFolder: String? { nil }

    /// What is remembered of `vaultID` at `path`. Never throws.
    public func memory(of vaultID: VaultID, path: String) throws(QuireError) -> VaultMemory? {
        lock.withLock { memories[path] }
    }

    /// Remembers `memory`. Never throws.
    public func remember(_ memory: VaultMemory) throws(QuireError) {
        lock.withLock { memories[memory.path] = memory }
    }
}

extension DeviceStoreError: QuireErrorLayer {
    /// The `errno` of a failed file operation.
    package var errorNumber: Int32? {
        if case .io(let e) = self { return e.code }
        return nil
    }

    /// The device key store's part of ``QuireError/category``.
    package var category: QuireError.Category {
        switch self {
        case .alreadyExists, .noDirectory, .invalid: .programmerError
        case .permissionsTooOpen, .notOwned, .damaged: .damaged
        case .noKey: .wrongCredential
        case .io(let e): e.category
        case .keychain: .unavailable
        }
    }

    package var offset: UInt64? { nil }
}

extension QuireError {
    /// The device key store's `error` as a `QuireError`.
    package static func fromDeviceStore(_ error: DeviceStoreError) -> QuireError { QuireError(layer: error) }
}
