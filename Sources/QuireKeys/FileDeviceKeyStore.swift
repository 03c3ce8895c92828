@_spi(Crypto) public import QuireCrypto
@_spi(Format) public import QuireFormat
public import QuireSystem

/// The device key store in files (`Spec/keys.md §3.3`): one key file,
/// `device.key`, mode 0600, in a 0700 directory, and one small file per
/// vault under `vaults/` with the keyring heads this device last trusted.
///
/// The directory is `$QUIRE_HOME`, else `$XDG_DATA_HOME/quire`, else
/// `~/.local/share/quire`. Files are written to a temporary file created
/// with `O_CREAT|O_EXCL` and mode 0600 (`.tmp-PID-HEX`; one whose process
/// is gone, left by a kill, is removed by the next write), flushed with
/// `fsync`, moved into place, and the directory is flushed.
///
/// The store trusts nothing another user can change: its folder and
/// `vaults/` must belong to this user and not be writable by the group or
/// others, and a file is opened without following a symbolic link
/// (`O_NOFOLLOW`) and checked on the open descriptor (`fstat`: a regular
/// file of this user, mode 0600 or stricter). `vaults/recorded` lists the
/// vaults this device has remembered, so that a deleted memory file is
/// noticed instead of silently turning rollback detection off. The key file is put in place with
/// `link(2)` rather than `rename(2)`: like rename it is atomic, and unlike
/// rename it never replaces a key another process stored a moment before.
///
/// As a ``DeviceKeyStore`` it keeps memory per vault id and canonical path
/// (``DeviceKeyStore/keepsMemoryPerPath`` is true: a backup or a copy
/// elsewhere keeps its own) and puts the index caches in `caches/`
/// (`Spec/index-cache.md §2`). Its errors: `.damaged` for a damaged key or
/// memory file (`device_key_damaged`, also for a recorded memory that was
/// deleted) or one readable by others or owned by another user
/// (`device_key_permissions`); `.programmerError` (`device_key_exists`)
/// when ``DeviceKeyStore/create(_:)`` finds a key stored already;
/// `.unavailable` or `.outOfSpace` when a file cannot be read or written.
///
/// Key file layout (the store reads no file over 4 KiB):
///
/// ```
/// "QUIREDEV" (8) ‖ CBOR { "created": uint (ms, UTC), "name": text, "seed": bytes(32), "version": 1 }
///                ‖ BLAKE2b-128(everything before)
/// ```
public final class FileDeviceKeyStore: DeviceKeyStore, Sendable {
    /// The store's directory.
    @_spi(Format) public let directory: String
    /// The key file's path: `directory/device.key`.
    @_spi(Format) public var keyPath: String { directory + "/device.key" }
    /// The index caches' folder: `directory/caches` (`Spec/index-cache.md §2`).
    @_spi(Format) public var indexCacheFolder: String? { directory + "/caches" }

    /// True: the file store keeps a memory per vault id and canonical path
    /// (`Spec/keys.md §3.3`), so that a backup or a copy elsewhere keeps
    /// its own.
    @_spi(Format) public var keepsMemoryPerPath: Bool { true }
    private let random: any RandomSource

    static let magic = Array("QUIREDEV".utf8)
    static let maxFileBytes = 4096
    /// Largest device memory file read (64 head ids and a path fit).
    static let maxMemoryFileBytes = 16_384

    /// A store in `directory` (created with mode 0700 on first write).
    @_spi(Format) public init(directory: String, random: any RandomSource = SystemRandom()) {
        self.directory = directory.count > 1 && directory.hasSuffix("/") ? String(directory.dropLast()) : directory
        self.random = random
    }

    /// The default directory: `$QUIRE_HOME`, else `$XDG_DATA_HOME/quire`,
    /// else `$HOME/.local/share/quire`. Empty variables count as unset.
    ///
    /// - Parameter environment: looks up a variable (the process environment by default).
    /// - Throws: ``DeviceStoreError/noDirectory`` when none is set.
    @_spi(Format) public static func defaultDirectory(environment: (String) -> String? = FileSystem.environment) throws(DeviceStoreError)
        -> String
    {
        func value(_ name: String) -> String? { environment(name).flatMap { $0.isEmpty ? nil : $0 } }
        if let home = value("QUIRE_HOME") { return home }
        if let xdg = value("XDG_DATA_HOME") { return xdg + "/quire" }
        if let home = value("HOME") { return home + "/.local/share/quire" }
        throw .noDirectory
    }

    /// The store in the default directory.
    ///
    /// - Throws: ``QuireError`` (`.programmerError`,
    ///   `device_key_no_directory`) when none of `QUIRE_HOME`,
    ///   `XDG_DATA_HOME` or `HOME` is set.
    public static func standard() throws(QuireError) -> FileDeviceKeyStore {
        do { return FileDeviceKeyStore(directory: try defaultDirectory()) } catch { throw .fromDeviceStore(error) }
    }

    /// Reads `device.key` (`Spec/keys.md §3.3`); nil when there is none.
    ///
    /// - Throws: ``QuireError``: `.damaged` when the file is damaged
    ///   (`device_key_damaged`), readable by others or owned by another user
    ///   (`device_key_permissions`); `.unavailable` when it cannot be read.
    @_spi(Format) public func load() throws(QuireError) -> DeviceIdentity? {
        do { return try loadKey() } catch { throw .fromDeviceStore(error) }
    }

    /// Writes `device.key` once, atomically, never replacing one (`Spec/keys.md §3.3`).
    ///
    /// - Throws: ``QuireError``: `.programmerError` (`device_key_exists`)
    ///   when a key is stored already; `.unavailable`, `.outOfSpace` when it
    ///   cannot be written.
    @_spi(Format) public func create(_ identity: DeviceIdentity) throws(QuireError) {
        do { try createKey(identity) } catch { throw .fromDeviceStore(error) }
    }

    /// Reads what is remembered of `vaultID` at `path`; nil when nothing is.
    ///
    /// - Throws: ``QuireError``: `.damaged` (`device_key_damaged`, also for
    ///   a recorded memory that was deleted; `device_key_permissions` for
    ///   the store's folders), and the read errors of ``load()``.
    @_spi(Format) public func memory(of vaultID: VaultID, path: String) throws(QuireError) -> VaultMemory? {
        do { return try readMemory(of: vaultID, path: path) } catch { throw .fromDeviceStore(error) }
    }

    /// Replaces the memory file of `memory`'s vault and path atomically, and
    /// lists it in `vaults/recorded`.
    ///
    /// - Throws: ``QuireError`` (`.unavailable`, `.outOfSpace`), and the
    ///   folder errors of ``memory(of:path:)``.
    @_spi(Format) public func remember(_ memory: VaultMemory) throws(QuireError) {
        do { try writeMemory(memory) } catch { throw .fromDeviceStore(error) }
    }

    /// Reads `device.key` (`Spec/keys.md §3.3`); nil when there is none.
    ///
    /// - Throws: ``DeviceStoreError/permissionsTooOpen(path:mode:)``,
    ///   ``DeviceStoreError/notOwned(path:owner:)``, ``DeviceStoreError/damaged(path:reason:)``,
    ///   ``DeviceStoreError/io(_:)``.
    @_spi(Format) public func loadKey() throws(DeviceStoreError) -> DeviceIdentity? {
        let path = keyPath
        try checkFolder(directory)
        guard FileSystem.exists(path) else {
            if FileSystem.nameExists(path) { throw .damaged(path: path, reason: "it is a symbolic link to nothing") }
            return nil
        }
        var bytes = try readPrivateFile(path)
        defer { wipe(&bytes) }
        return try Self.identity(decodingKeyFile: bytes, path: path)
    }

    /// The identity in the bytes of a key file (`Spec/keys.md §3.3`, key
    /// file layout), which `path` names in errors: the file store's
    /// `device.key`, or the Keychain store's item, which holds the same
    /// bytes.
    ///
    /// - Throws: ``DeviceStoreError/damaged(path:reason:)``.
    static func identity(decodingKeyFile bytes: [UInt8], path: String) throws(DeviceStoreError) -> DeviceIdentity {
        func damaged(_ reason: String) -> DeviceStoreError { .damaged(path: path, reason: reason) }
        guard bytes.count > Self.magic.count + 16, Array(bytes.prefix(Self.magic.count)) == Self.magic else {
            throw damaged("it is not a Quire device key")
        }
        let bodyEnd = bytes.count - 16
        guard constantTimeEqual(BLAKE2b.hash(Array(bytes[0..<bodyEnd]), byteCount: 16), bytes[bodyEnd...]) else {
            throw damaged("its checksum does not match (the file is damaged)")
        }
        let tree: CBOR
        do { tree = try CBORDecoder.decode(Array(bytes[Self.magic.count..<bodyEnd])) } catch { throw damaged("\(error)") }
        guard case .map(let map) = tree else { throw damaged("it is not a map") }
        defer { if case .bytes(let s)? = map[text: "seed"] { wipeShared(s) } }
        guard case .unsigned(1)? = map[text: "version"] else { throw damaged("it is of an unknown version") }
        guard case .bytes(let seedBytes)? = map[text: "seed"], seedBytes.count == Ed25519.seedByteCount,
            case .text(let name)? = map[text: "name"], case .unsigned(let created)? = map[text: "created"], created <= UInt64(Int64.max)
        else { throw damaged("a field is missing or of the wrong type") }
        do {
            let seed = try seedBytes.withUnsafeBytes { raw throws(CryptoError) in try SecureBytes(guardedCopying: raw) }
            return try DeviceIdentity(keyPair: Ed25519.KeyPair(seed: seed), name: name, created: Int64(created))
        } catch {
            throw damaged("\(error)")
        }
    }

    /// Writes `device.key` once, atomically, never replacing one (`Spec/keys.md §3.3`).
    ///
    /// - Throws: ``DeviceStoreError/alreadyExists(path:)``, ``DeviceStoreError/io(_:)``.
    @_spi(Format) public func createKey(_ identity: DeviceIdentity) throws(DeviceStoreError) {
        var file = try Self.keyFile(of: identity)
        defer { wipe(&file) }
        try writeFile(file, to: keyPath, replacing: false)
    }

    /// Sets the key aside so that a new one can be made (`quire device code
    /// --new-key`: a device removed from a vault comes back only with a new
    /// key, `Spec/keys.md §6.3`): `device.key` is linked to
    /// `device.key.replaced-MS` (`now`, milliseconds since 1970, UTC) and
    /// then unlinked, so the old key is never lost, only no longer used.
    /// Returns the path it is kept at.
    ///
    /// - Throws: ``DeviceStoreError/io(_:)`` (also when that name is taken),
    ///   and the folder errors of ``loadKey()``.
    @_spi(Format) public func setKeyAside(now: Int64) throws(DeviceStoreError) -> String {
        try checkFolder(directory)
        let kept = keyPath + ".replaced-\(now)"
        do throws(SystemError) {
            try FileSystem.link(keyPath, to: kept)
            try FileSystem.remove(keyPath)
            try FileSystem.syncDirectory(directory)
        } catch {
            throw .io(error)
        }
        return kept
    }

    /// What this store remembers of each vault file it has seen (one memory
    /// file each under `vaults/`), in no particular order; a file that does
    /// not read is left out. Best effort: for telling which vaults a key is
    /// still used in.
    @_spi(Format) public func rememberedVaults() -> [VaultMemory] {
        let folder = directory + "/vaults"
        guard (try? checkFolder(folder)) != nil, let names = try? FileSystem.listDirectory(folder) else { return [] }
        return names.sorted().filter { $0.hasSuffix(".memory") }.compactMap { name in
            (try? readPrivateFile(folder + "/" + name, limit: Self.maxMemoryFileBytes)).flatMap { VaultMemory(decoding: $0) }
        }
    }

    /// The bytes of the key file of `identity` (`Spec/keys.md §3.3`, key
    /// file layout): what `device.key` and the Keychain store's item hold.
    /// The caller wipes them.
    ///
    /// - Throws: ``DeviceStoreError/invalid(reason:)`` when the seed cannot
    ///   be read (guarded memory ran out).
    static func keyFile(of identity: DeviceIdentity) throws(DeviceStoreError) -> [UInt8] {
        var seedBytes: [UInt8]
        do { seedBytes = try identity.keyPair.seed().copyBytes() } catch { throw .invalid(reason: "\(error)") }
        defer { wipe(&seedBytes) }
        var map = CBORMap()
        map[text: "version"] = .unsigned(1)
        map[text: "name"] = .text(identity.name)
        map[text: "created"] = .unsigned(UInt64(max(0, identity.createdMilliseconds)))
        map[text: "seed"] = .bytes(seedBytes)
        var body = Self.magic + CBOREncoder.encode(.map(map))
        defer { wipe(&body) }
        if case .bytes(let s)? = map[text: "seed"] { wipeShared(s) }
        return body + BLAKE2b.hash(body, byteCount: 16)
    }

    /// The name of one vault file's memory, without folder or extension:
    /// `<vault id>-<16 bytes of BLAKE2b-256(path) in hex>`.
    func memoryName(_ vaultID: VaultID, path: String) -> String { Self.memoryName(vaultID, path: path) }

    /// ``memoryName(_:path:)``: also the Keychain store's memory item
    /// (`memory:` and this name).
    static func memoryName(_ vaultID: VaultID, path: String) -> String {
        hex(vaultID.bytes) + "-" + hex(BLAKE2b.hash(Array(path.utf8), byteCount: 32).prefix(16))
    }

    /// The memory file of one vault file: `vaults/<vault id>-<16 bytes of
    /// BLAKE2b-256(path) in hex>.memory` (`Spec/keys.md §3.3`).
    @_spi(Format) public func memoryPath(_ vaultID: VaultID, path: String) -> String {
        directory + "/vaults/" + memoryName(vaultID, path: path) + ".memory"
    }

    /// Reads what is remembered of `vaultID` at `path`; nil when nothing is.
    ///
    /// A memory listed in `vaults/recorded` does not vanish by itself: its
    /// absence would silently turn rollback detection off, so it is an error.
    ///
    /// - Throws: ``DeviceStoreError/damaged(path:reason:)`` (also for a
    ///   recorded memory that was deleted), ``DeviceStoreError/permissionsTooOpen(path:mode:)``
    ///   and ``DeviceStoreError/notOwned(path:owner:)`` for the store's
    ///   folders, and the read errors of ``load()``.
    @_spi(Format) public func readMemory(of vaultID: VaultID, path: String) throws(DeviceStoreError) -> VaultMemory? {
        let file = memoryPath(vaultID, path: path)
        try checkFolder(directory)
        try checkFolder(directory + "/vaults")
        let name = memoryName(vaultID, path: path)
        let recorded = try recordedMemories()
        guard FileSystem.nameExists(file) else {
            if recorded.contains(name) {
                throw .damaged(
                    path: file,
                    reason: Self.missingMemoryReason
                        + " although this device remembered this vault file before (\(recordedPath) lists it): it was deleted, so a rolled-back copy of the vault cannot be noticed now. If you removed it yourself, remove its line from \(recordedPath) to accept the vault as it is"
                )
            }
            return nil
        }
        // A memory written before the list existed: list it now (best effort).
        if !recorded.contains(name) { try? record(name, in: recorded) }
        guard let memory = VaultMemory(decoding: try readPrivateFile(file, limit: Self.maxMemoryFileBytes)), memory.vaultID == vaultID,
            memory.path == path
        else {
            throw .damaged(path: file, reason: "it is not a Quire device memory file for this vault")
        }
        return memory
    }

    /// Replaces the memory file of `memory`'s vault and path atomically, and
    /// lists it in `vaults/recorded`.
    ///
    /// - Throws: ``DeviceStoreError/io(_:)``, and the folder errors of
    ///   ``memory(of:path:)``.
    @_spi(Format) public func writeMemory(_ memory: VaultMemory) throws(DeviceStoreError) {
        try writeFile(memory.encoded(), to: memoryPath(memory.vaultID, path: memory.path), replacing: true)
        let name = memoryName(memory.vaultID, path: memory.path)
        let recorded = try recordedMemories()
        if !recorded.contains(name) { try record(name, in: recorded) }
    }

    /// How the reason of a memory file that was deleted starts.
    static let missingMemoryReason = "is missing"

    /// `vaults/recorded`: the memory files this device has written.
    var recordedPath: String { directory + "/vaults/recorded" }

    /// The memory names (``memoryName(_:path:)``) in `vaults/recorded`
    /// (empty when there is none).
    func recordedMemories() throws(DeviceStoreError) -> Set<String> {
        let path = recordedPath
        guard FileSystem.nameExists(path) else { return [] }
        let bytes = try readPrivateFile(path, limit: 1 << 20)
        guard let text = String(validating: bytes, as: UTF8.self) else { throw .damaged(path: path, reason: "it is not text") }
        var names = Set<String>()
        // Split on scalars: in Swift "\r\n" is one Character.
        for line in text.unicodeScalars.split(whereSeparator: { $0 == "\n" || $0 == "\r" }).map(String.init) where !line.hasPrefix("#") {
            let parts = line.split(separator: "-", omittingEmptySubsequences: false)
            guard parts.count == 2, parts.allSatisfy({ $0.utf8.count == 32 && QuireCrypto.bytes(fromHex: String($0)) != nil }) else {
                throw .damaged(path: path, reason: "a line is not a vault id and a path hash (32 hex digits each, joined by -)")
            }
            names.insert(line)
        }
        return names
    }

    /// Adds the memory `name` to `vaults/recorded`.
    func record(_ name: String, in recorded: Set<String>) throws(DeviceStoreError) {
        let lines =
            ["# vault files this device remembers (a missing .memory file of one of them is noticed)"] + recorded.union([name]).sorted()
        try writeFile(Array((lines.joined(separator: "\n") + "\n").utf8), to: recordedPath, replacing: true)
    }

    /// Refuses a store folder another user could change: one not owned by
    /// this user, or writable by its group or others. A folder that does not
    /// exist yet passes (it is made 0700).
    func checkFolder(_ folder: String) throws(DeviceStoreError) {
        let status: FileStatus
        do { status = try FileSystem.status(folder) } catch {
            if error.isNotFound { return }
            throw .io(error)
        }
        guard status.isDirectory else { throw .io(SystemError(operation: "open (not a folder)", path: folder, code: 20)) }
        guard status.owner == FileSystem.currentUserID() else { throw .notOwned(path: folder, owner: status.owner) }
        guard status.permissions & 0o022 == 0 else { throw .permissionsTooOpen(path: folder, mode: status.permissions) }
    }

    /// Reads a small file that must not be open to other users: opened
    /// without following a link, then checked on the descriptor, so the
    /// file checked is the file read.
    private func readPrivateFile(_ path: String, limit: Int = FileDeviceKeyStore.maxFileBytes) throws(DeviceStoreError) -> [UInt8] {
        do {
            let file: SystemFile
            do { file = try SystemFile(path: path, mode: .readOnly, allowNonRegular: true, noFollow: true) } catch {
                if error.isSymbolicLinkRefused || FileSystem.isSymbolicLink(path) {
                    throw DeviceStoreError.damaged(
                        path: path,
                        reason:
                            "it is a symbolic link, which the key store never follows (whoever can change the link could choose the key)")
                }
                throw error
            }
            let status = try file.status()
            guard status.isRegularFile else { throw DeviceStoreError.damaged(path: path, reason: "it is not a regular file") }
            guard status.owner == FileSystem.currentUserID() else { throw DeviceStoreError.notOwned(path: path, owner: status.owner) }
            guard status.permissions & 0o077 == 0 else { throw DeviceStoreError.permissionsTooOpen(path: path, mode: status.permissions) }
            guard status.size <= UInt64(limit) else {
                throw DeviceStoreError.damaged(path: path, reason: "it is \(status.size) bytes, larger than any Quire device file")
            }
            return try file.read(count: Int(status.size), at: 0)
        } catch let e as DeviceStoreError {
            throw e
        } catch let e as SystemError {
            throw .io(e)
        } catch {
            throw .damaged(path: path, reason: "\(error)")
        }
    }

    /// Writes `bytes` to `path` through a fresh 0600 temporary file, fsync,
    /// link (or rename when `replacing`), and a directory fsync.
    private func writeFile(_ bytes: [UInt8], to path: String, replacing: Bool) throws(DeviceStoreError) {
        let dir = FileSystem.directory(of: path)
        try checkFolder(directory)
        try checkFolder(dir)
        do throws(SystemError) {
            try makeDirectories(dir)
            removeStaleTemporaries(in: dir)
            if dir != directory { removeStaleTemporaries(in: directory) }
            let temp = dir + "/.tmp-\(FileSystem.processID)-" + hex(random.bytes(8))
            let file = try SystemFile(path: temp, mode: .createExclusive(permissions: 0o600))
            do throws(SystemError) {
                try file.write(bytes, at: 0)
                try file.sync()
                if replacing {
                    try FileSystem.rename(temp, to: path)
                } else {
                    defer { try? FileSystem.remove(temp) }
                    try FileSystem.link(temp, to: path)
                }
            } catch {
                try? FileSystem.remove(temp)
                throw error
            }
            try FileSystem.syncDirectory(dir)
        } catch {
            if error.isAlreadyExists && !replacing { throw .alreadyExists(path: path) }
            throw .io(error)
        }
    }

    /// Removes `.tmp-PID-HEX` files in `folder` whose process is gone (a
    /// write killed before its rename): regular files of this user that no
    /// one holds a lock on; nothing else. Best effort.
    private func removeStaleTemporaries(in folder: String) {
        guard let names = try? FileSystem.listDirectory(folder) else { return }
        for name in names where name.hasPrefix(".tmp-") {
            let parts = name.dropFirst(5).split(separator: "-", omittingEmptySubsequences: false)
            guard parts.count == 2, let pid = Int32(parts[0]), parts[1].utf8.count == 16,
                QuireCrypto.bytes(fromHex: String(parts[1])) != nil,
                !FileSystem.processExists(pid)
            else { continue }
            Leftovers.removeAbandoned(folder + "/" + name, vaultBytes: false)
        }
    }

    /// `mkdir -p` with mode 0700 for each directory it creates.
    private func makeDirectories(_ path: String) throws(SystemError) {
        var prefix = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/") {
            prefix += "/" + component
            if !FileSystem.exists(prefix) { try FileSystem.makeDirectory(prefix, permissions: 0o700) }
        }
    }
}
