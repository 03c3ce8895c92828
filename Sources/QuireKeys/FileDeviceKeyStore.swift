public import QuireCrypto
public import QuireFormat
public import QuireSystem

/// The device key store in files (`Spec/keys.md §3.3`): one key file,
/// `device.key`, mode 0600, in a 0700 directory, and one small file per
/// vault under `vaults/` with the keyring heads this device last trusted.
///
/// The directory is `$QUIRE_HOME`, else `$XDG_DATA_HOME/quire`, else
/// `~/.local/share/quire`. Files are written to a temporary file created
/// with `O_CREAT|O_EXCL` and mode 0600, flushed with `fsync`, moved into
/// place, and the directory is flushed. The key file is put in place with
/// `link(2)` rather than `rename(2)`: like rename it is atomic, and unlike
/// rename it never replaces a key another process stored a moment before.
///
/// Key file layout (the store reads no file over 4 KiB):
///
/// ```
/// "QUIREDEV" (8) ‖ CBOR { "created": uint (ms, UTC), "name": text, "seed": bytes(32), "version": 1 }
///                ‖ BLAKE2b-128(everything before)
/// ```
public final class FileDeviceKeyStore: DeviceKeyStore, @unchecked Sendable {
    /// The store's directory.
    public let directory: String
    /// The key file's path: `directory/device.key`.
    public var keyPath: String { directory + "/device.key" }
    private let random: any RandomSource

    static let magic = Array("QUIREDEV".utf8)
    static let maxFileBytes = 4096
    /// Largest device memory file read (64 head ids and a path fit).
    static let maxMemoryFileBytes = 16_384

    /// A store in `directory` (created with mode 0700 on first write).
    public init(directory: String, random: any RandomSource = SystemRandom()) {
        self.directory = directory.count > 1 && directory.hasSuffix("/") ? String(directory.dropLast()) : directory
        self.random = random
    }

    /// The default directory: `$QUIRE_HOME`, else `$XDG_DATA_HOME/quire`,
    /// else `$HOME/.local/share/quire`. Empty variables count as unset.
    ///
    /// - Parameter environment: looks up a variable (the process environment by default).
    /// - Throws: ``DeviceStoreError/noDirectory`` when none is set.
    public static func defaultDirectory(environment: (String) -> String? = FileSystem.environment) throws(DeviceStoreError) -> String {
        func value(_ name: String) -> String? { environment(name).flatMap { $0.isEmpty ? nil : $0 } }
        if let home = value("QUIRE_HOME") { return home }
        if let xdg = value("XDG_DATA_HOME") { return xdg + "/quire" }
        if let home = value("HOME") { return home + "/.local/share/quire" }
        throw .noDirectory
    }

    /// The store in the default directory.
    ///
    /// - Throws: ``DeviceStoreError/noDirectory``.
    public static func standard() throws(DeviceStoreError) -> FileDeviceKeyStore {
        FileDeviceKeyStore(directory: try defaultDirectory())
    }

    /// Reads `device.key` (`Spec/keys.md §3.3`); nil when there is none.
    ///
    /// - Throws: ``DeviceStoreError/permissionsTooOpen(path:mode:)``,
    ///   ``DeviceStoreError/notOwned(path:owner:)``, ``DeviceStoreError/damaged(path:reason:)``,
    ///   ``DeviceStoreError/io(_:)``.
    public func load() throws(DeviceStoreError) -> DeviceIdentity? {
        let path = keyPath
        guard FileSystem.exists(path) else {
            if FileSystem.nameExists(path) { throw .damaged(path: path, reason: "it is a symbolic link to nothing") }
            return nil
        }
        var bytes = try readPrivateFile(path)
        defer { wipe(&bytes) }
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
            let seed = try seedBytes.withUnsafeBytes { raw throws(CryptoError) in try SecureBytes(copying: raw) }
            return try DeviceIdentity(keyPair: Ed25519.KeyPair(seed: seed), name: name, created: Int64(created))
        } catch {
            throw damaged("\(error)")
        }
    }

    /// Writes `device.key` once, atomically, never replacing one (`Spec/keys.md §3.3`).
    ///
    /// - Throws: ``DeviceStoreError/alreadyExists(path:)``, ``DeviceStoreError/io(_:)``.
    public func create(_ identity: DeviceIdentity) throws(DeviceStoreError) {
        var seedBytes: [UInt8]
        do { seedBytes = try identity.keyPair.seed().copyBytes() } catch { throw .invalid(reason: "\(error)") }
        defer { wipe(&seedBytes) }
        var map = CBORMap()
        map[text: "version"] = .unsigned(1)
        map[text: "name"] = .text(identity.name)
        map[text: "created"] = .unsigned(UInt64(max(0, identity.created)))
        map[text: "seed"] = .bytes(seedBytes)
        var body = Self.magic + CBOREncoder.encode(.map(map))
        defer { wipe(&body) }
        var file = body + BLAKE2b.hash(body, byteCount: 16)
        defer { wipe(&file) }
        if case .bytes(let s)? = map[text: "seed"] { wipeShared(s) }
        try writeFile(file, to: keyPath, replacing: false)
    }

    /// The memory file of one vault file: `vaults/<vault id>-<16 bytes of
    /// BLAKE2b-256(path) in hex>.memory` (`Spec/keys.md §3.3`).
    public func memoryPath(_ vaultID: VaultID, path: String) -> String {
        directory + "/vaults/" + hex(vaultID.bytes) + "-" + hex(BLAKE2b.hash(Array(path.utf8), byteCount: 32).prefix(16)) + ".memory"
    }

    /// Reads what is remembered of `vaultID` at `path`; nil when nothing is.
    ///
    /// - Throws: ``DeviceStoreError/damaged(path:reason:)`` and the read errors of ``load()``.
    public func memory(of vaultID: VaultID, path: String) throws(DeviceStoreError) -> VaultMemory? {
        let file = memoryPath(vaultID, path: path)
        guard FileSystem.exists(file) else { return nil }
        guard let memory = VaultMemory(decoding: try readPrivateFile(file, limit: Self.maxMemoryFileBytes)), memory.vaultID == vaultID, memory.path == path else {
            throw .damaged(path: file, reason: "it is not a Quire device memory file for this vault")
        }
        return memory
    }

    /// Replaces the memory file of `memory`'s vault and path atomically.
    ///
    /// - Throws: ``DeviceStoreError/io(_:)``.
    public func remember(_ memory: VaultMemory) throws(DeviceStoreError) {
        try writeFile(memory.encoded(), to: memoryPath(memory.vaultID, path: memory.path), replacing: true)
    }

    /// Reads a small file that must not be open to other users.
    private func readPrivateFile(_ path: String, limit: Int = FileDeviceKeyStore.maxFileBytes) throws(DeviceStoreError) -> [UInt8] {
        do {
            let mode = try FileSystem.permissions(path)
            guard mode & 0o077 == 0 else { throw DeviceStoreError.permissionsTooOpen(path: path, mode: mode) }
            let owner = try FileSystem.owner(path)
            guard owner == FileSystem.currentUserID() else { throw DeviceStoreError.notOwned(path: path, owner: owner) }
            let file = try SystemFile(path: path, mode: .readOnly)
            let size = try file.size()
            guard size <= UInt64(limit) else { throw DeviceStoreError.damaged(path: path, reason: "it is \(size) bytes, larger than any Quire device file") }
            return try file.read(count: Int(size), at: 0)
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
        do throws(SystemError) {
            try makeDirectories(dir)
            let temp = dir + "/.tmp-" + hex(random.bytes(8))
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

    /// `mkdir -p` with mode 0700 for each directory it creates.
    private func makeDirectories(_ path: String) throws(SystemError) {
        var prefix = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/") {
            prefix += "/" + component
            if !FileSystem.exists(prefix) { try FileSystem.makeDirectory(prefix, permissions: 0o700) }
        }
    }
}
