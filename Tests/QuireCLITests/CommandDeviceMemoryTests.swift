import Foundation
@_spi(Format) import Quire
import QuireSystem
import Testing

@testable import QuireCommandLine

/// A command writes each vault's device memory once, when it ends
/// (`Spec/keys.md §7`; issue 14: `quire add` flushed the memory file and its
/// folder when it opened the vault, when it built the index and after the
/// commit).
@Suite struct CommandDeviceMemoryTests {
    static func memory(_ vaultID: VaultID, _ length: UInt64) -> VaultMemory {
        VaultMemory(
            vaultID: vaultID, path: "/vaults/j.quire", committedLength: length, chainHead: [UInt8](repeating: 7, count: 32),
            newestClock: length, keyringHeads: [])
    }

    @Test func memoryIsHeldUntilTheCommandEndsThenWrittenOnce() throws {
        let dir = NSTemporaryDirectory() + "quire-command-memory-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let base = FileDeviceKeyStore(directory: dir)
        let store = CommandDeviceKeyStore(base: base)
        let id = VaultID(unchecked: [UInt8](repeating: 1, count: 16))
        try store.remember(Self.memory(id, 100))
        try store.remember(Self.memory(id, 200))
        // Nothing on the disk yet; the command sees what it asked for.
        #expect(try base.memory(of: id, path: "/vaults/j.quire") == nil)
        #expect(try store.memory(of: id, path: "/vaults/j.quire") == Self.memory(id, 200))
        #expect(store.flush().isEmpty)
        #expect(try base.memory(of: id, path: "/vaults/j.quire") == Self.memory(id, 200))
        // A second flush has nothing left to write: the file is not replaced.
        let file = base.memoryPath(id, path: "/vaults/j.quire")
        let before = FileSystem.identity(file)
        #expect(before != nil)
        #expect(store.flush().isEmpty)
        #expect(FileSystem.identity(file) == before)
    }

    @Test func aCommandLeavesTheMemoryOfItsLastCommit() throws {
        let box = try Sandbox()
        let vault = box.dir + "/v.quire"
        #expect(try box.quire(["init", vault, "--recovery-key-file", box.dir + "/rk.txt", "--device-name", "Laptop"]).status == 0)
        for text in ["one", "two"] {
            let r = try box.quire(["add", vault, text])
            #expect(r.status == 0, "\(r)")
            #expect(!r.stderr.contains("could not remember"), "\(r)")
        }
        // The memory file names the vault's committed end: what the last add left.
        let folder = box.dir + "/home/vaults"
        let names = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix(".memory") }
        #expect(names.count == 1)
        let text = try String(contentsOfFile: folder + "/" + names[0], encoding: .utf8)
        let size = try FileSystem.size(vault)
        #expect(text.contains("\nlength \(size)\n"), "\(text)")
        // And the next command opens it without a rollback warning.
        let list = try box.quire(["list", vault])
        #expect(list.status == 0 && !list.stderr.contains("older than"), "\(list)")
    }
}
