import Foundation
import QuireCrypto
import QuireFormat
import QuireKeys
import QuireSystem
import Testing

/// A hostile or shared key-store folder (issue 15; `Spec/keys.md §3.3`).
@Suite struct KeyStoreHardeningTests {
    static func device() -> DeviceIdentity {
        try! DeviceIdentity.generate(name: "Laptop", now: 1_767_225_600_000, using: SeededRandom(label: "hardening"))
    }

    static func vaultID() -> VaultID { try! VaultID(bytes: [UInt8](repeating: 7, count: 16)) }

    @Test func aSymbolicLinkInPlaceOfTheKeyFileIsRefused() throws {
        let dir = TemporaryDirectory()
        let store = FileDeviceKeyStore(directory: dir.file("store"))
        try store.create(Self.device())
        // The key moved elsewhere and a link left in its place: whoever can
        // change the link chooses which key this device uses.
        try FileManager.default.moveItem(atPath: store.keyPath, toPath: dir.file("elsewhere.key"))
        try FileManager.default.createSymbolicLink(atPath: store.keyPath, withDestinationPath: dir.file("elsewhere.key"))
        #expect(throws: DeviceStoreError.self) { try store.load() }
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
        #expect(throws: DeviceStoreError.permissionsTooOpen(path: dir.file("store"), mode: 0o777)) { try store.load() }
        try FileSystem.setPermissions(dir.file("store"), 0o770)
        #expect(throws: DeviceStoreError.permissionsTooOpen(path: dir.file("store"), mode: 0o770)) { try store.load() }
        try FileSystem.setPermissions(dir.file("store"), 0o755)
        #expect(try store.load() != nil)
        // The per-vault folder too.
        try store.rememberHeads([], of: Self.vaultID())
        try FileSystem.setPermissions(dir.file("store/vaults"), 0o733)
        #expect(throws: DeviceStoreError.permissionsTooOpen(path: dir.file("store/vaults"), mode: 0o733)) { try store.trustedHeads(of: Self.vaultID()) }
        #expect(throws: DeviceStoreError.self) { try store.rememberHeads([], of: Self.vaultID()) }
    }

    @Test(.enabled(if: getuid() == 0)) func aStoreFolderOwnedByAnotherUserIsRefused() throws {
        let dir = TemporaryDirectory()
        let store = FileDeviceKeyStore(directory: dir.file("store"))
        try store.create(Self.device())
        #expect(chown(dir.file("store"), 65534, 65534) == 0)
        #expect(throws: DeviceStoreError.notOwned(path: dir.file("store"), owner: 65534)) { try store.load() }
        #expect(throws: DeviceStoreError.notOwned(path: dir.file("store"), owner: 65534)) { try store.create(Self.device()) }
    }

    @Test func aDeletedMemoryOfARecordedVaultIsNoticed() throws {
        let dir = TemporaryDirectory()
        let store = FileDeviceKeyStore(directory: dir.file("store"))
        let id = Self.vaultID()
        let head = KeyringID(unchecked: [UInt8](repeating: 1, count: KeyringID.byteCount))
        #expect(try store.trustedHeads(of: id) == [])
        try store.rememberHeads([head], of: id)
        #expect(try store.trustedHeads(of: id) == [head])
        try FileManager.default.removeItem(atPath: dir.file("store/vaults/" + hex(id.bytes) + ".heads"))
        #expect(throws: DeviceStoreError.self) { try store.trustedHeads(of: id) }
        do {
            _ = try store.trustedHeads(of: id)
        } catch {
            #expect(error.description.contains("is missing"), "\(error)")
        }
        // A vault never recorded has no memory, and that is not an error.
        #expect(try store.trustedHeads(of: try VaultID(bytes: [UInt8](repeating: 8, count: 16))) == [])
    }

    @Test func temporaryFilesOfADeadWriterAreRemovedAndNoOther() throws {
        let dir = TemporaryDirectory()
        let store = FileDeviceKeyStore(directory: dir.file("store"))
        try store.create(Self.device())
        try store.rememberHeads([], of: Self.vaultID())
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
        try store.rememberHeads([], of: try VaultID(bytes: [UInt8](repeating: 9, count: 16)))
        for folder in ["store", "store/vaults"] {
            let names = Set(try FileSystem.listDirectory(dir.file(folder)))
            #expect(!names.contains(".tmp-\(dead)-0011223344556677"), "\(folder): \(names)")
            #expect(names.contains(".tmp-\(own)-0011223344556677"), "\(folder): \(names)")
            #expect(names.contains("notes.txt"))
        }
    }
}
