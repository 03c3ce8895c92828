import Foundation
@_spi(Crypto) import QuireCrypto
@_spi(Format) import QuireFormat
@_spi(Format) import QuireKeys
import QuireSystem
import Testing

/// A hostile or shared key-store folder (issue 15; `Spec/keys.md §3.3`).
@Suite struct KeyStoreHardeningTests {
    static func device() -> DeviceIdentity {
        try! DeviceIdentity.generate(name: "Laptop", now: 1_767_225_600_000, using: SeededRandom(label: "hardening"))
    }

    static func vaultID() -> VaultID { try! VaultID(bytes: [UInt8](repeating: 7, count: 16)) }

    /// The path the memories of these tests are of.
    static let vaultPath = "/nowhere/Journal.quire"

    /// A memory of `vaultID` at ``vaultPath`` trusting `heads`.
    static func memory(_ heads: [KeyringID], of vaultID: VaultID = vaultID()) -> VaultMemory {
        VaultMemory(
            vaultID: vaultID, path: vaultPath, committedLength: 4096, chainHead: [UInt8](repeating: 0, count: 32), newestClock: 0,
            keyringHeads: heads)
    }

    @Test func aSymbolicLinkInPlaceOfTheKeyFileIsRefused() throws {
        let dir = TemporaryDirectory()
        let store = FileDeviceKeyStore(directory: dir.file("store"))
        try store.create(Self.device())
        // The key moved elsewhere and a link left in its place: whoever can
        // change the link chooses which key this device uses.
        try FileManager.default.moveItem(atPath: store.keyPath, toPath: dir.file("elsewhere.key"))
        try FileManager.default.createSymbolicLink(atPath: store.keyPath, withDestinationPath: dir.file("elsewhere.key"))
        #expect(throws: QuireError.self) { try store.load() }
        do {
            _ = try store.load()
        } catch {
            #expect(error.description.contains("symbolic link"), "\(error)")
        }
    }

    @Test func aStoreFolderOthersCanWriteToIsRefused() throws {
        let dir = TemporaryDirectory()
        let store = FileDeviceKeyStore(directory: dir.file("store"))
        try store.create(Self.device())
        try FileSystem.setPermissions(dir.file("store"), 0o777)
        #expect(throws: QuireError.fromDeviceStore(DeviceStoreError.permissionsTooOpen(path: dir.file("store"), mode: 0o777))) { try store.load() }
        try FileSystem.setPermissions(dir.file("store"), 0o770)
        #expect(throws: QuireError.fromDeviceStore(DeviceStoreError.permissionsTooOpen(path: dir.file("store"), mode: 0o770))) { try store.load() }
        try FileSystem.setPermissions(dir.file("store"), 0o755)
        #expect(try store.load() != nil)
        // The per-vault folder too.
        try store.remember(Self.memory([]))
        try FileSystem.setPermissions(dir.file("store/vaults"), 0o733)
        #expect(throws: QuireError.fromDeviceStore(DeviceStoreError.permissionsTooOpen(path: dir.file("store/vaults"), mode: 0o733))) {
            try store.memory(of: Self.vaultID(), path: Self.vaultPath)
        }
        #expect(throws: QuireError.self) { try store.remember(Self.memory([])) }
    }

    @Test(.enabled(if: getuid() == 0)) func aStoreFolderOwnedByAnotherUserIsRefused() throws {
        let dir = TemporaryDirectory()
        let store = FileDeviceKeyStore(directory: dir.file("store"))
        try store.create(Self.device())
        #expect(chown(dir.file("store"), 65534, 65534) == 0)
        #expect(throws: QuireError.fromDeviceStore(DeviceStoreError.notOwned(path: dir.file("store"), owner: 65534))) { try store.load() }
        #expect(throws: QuireError.fromDeviceStore(DeviceStoreError.notOwned(path: dir.file("store"), owner: 65534))) { try store.create(Self.device()) }
    }

    @Test func aDeletedMemoryOfARecordedVaultIsNoticed() throws {
        let dir = TemporaryDirectory()
        let store = FileDeviceKeyStore(directory: dir.file("store"))
        let id = Self.vaultID()
        let head = KeyringID(unchecked: [UInt8](repeating: 1, count: KeyringID.byteCount))
        #expect(try store.memory(of: id, path: Self.vaultPath) == nil)
        try store.remember(Self.memory([head], of: id))
        #expect(try store.memory(of: id, path: Self.vaultPath)?.keyringHeads == [head])
        try FileManager.default.removeItem(atPath: store.memoryPath(id, path: Self.vaultPath))
        #expect(throws: QuireError.self) { try store.memory(of: id, path: Self.vaultPath) }
        do {
            _ = try store.memory(of: id, path: Self.vaultPath)
        } catch {
            #expect(error.description.contains("is missing"), "\(error)")
        }
        // A vault never recorded has no memory, and that is not an error;
        // nor has the same vault at a path never recorded.
        #expect(try store.memory(of: try VaultID(bytes: [UInt8](repeating: 8, count: 16)), path: Self.vaultPath) == nil)
        #expect(try store.memory(of: id, path: "/elsewhere/Journal.quire") == nil)
    }

    @Test func temporaryFilesOfADeadWriterAreRemovedAndNoOther() throws {
        let dir = TemporaryDirectory()
        let store = FileDeviceKeyStore(directory: dir.file("store"))
        try store.create(Self.device())
        try store.remember(Self.memory([]))
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/true")
        try p.run()
        p.waitUntilExit()
        let dead = p.processIdentifier
        let own = ProcessInfo.processInfo.processIdentifier
        for folder in ["store", "store/vaults"] {
            for name in [".tmp-\(dead)-0011223344556677", ".tmp-\(own)-0011223344556677", "notes.txt"] {
                _ = FileManager.default.createFile(atPath: dir.file(folder + "/" + name), contents: Data([1, 2, 3]), attributes: [.posixPermissions: 0o600])
            }
        }
        try store.remember(Self.memory([], of: try VaultID(bytes: [UInt8](repeating: 9, count: 16))))
        for folder in ["store", "store/vaults"] {
            let names = Set(try FileSystem.listDirectory(dir.file(folder)))
            #expect(!names.contains(".tmp-\(dead)-0011223344556677"), "\(folder): \(names)")
            #expect(names.contains(".tmp-\(own)-0011223344556677"), "\(folder): \(names)")
            #expect(names.contains("notes.txt"))
        }
    }
}
