import Foundation
@_spi(Format) import Quire
@_spi(Format) import QuireKeys
import QuireSystem
import Testing

/// A device's memory written by another process after this one read the
/// file is not a rollback (`Spec/keys.md §7`; found by `make torture`:
/// concurrent writers and key rotations).
@Suite struct RollbackRaceTests {
    @Test func aMemoryNewerThanTheFileThisHandleReadIsNotARollback() throws {
        let dir = TemporaryDirectory()
        let (vault, laptop, _) = try KeyAttackTests.laptopVault(dir, "rollback race")
        let path = dir.file("j.quire")
        let store = InMemoryDeviceKeyStore()
        try store.create(laptop)
        try vault.remember(in: store)
        // This process reads the file...
        let stale = try Vault.open(at: path, credential: .device(laptop.keyPair), options: fast)
        // ...then another writes to it, rotates its keys and remembers them.
        let other = try Vault.open(at: path, store: store, options: fast)
        try other.add(EntryBody(created: KeyAttackTests.t0 + 1, text: "from the other process"))
        try other.rotateKeys(now: KeyAttackTests.t0 + 2)
        #expect(other.keyWarnings.isEmpty)
        // Checking the memory now must read the file again, not refuse it.
        try stale.remember(in: store)
        #expect(!stale.keyWarnings.contains { $0.code == "rollback_suspected" }, "\(stale.keyWarnings)")
        try stale.add(EntryBody(created: KeyAttackTests.t0 + 3, text: "from this process"))
        #expect(try KeyTestSupport.texts(path, .device(laptop.keyPair)).sorted() == ["from the other process", "from this process"])
    }

    @Test func aFileReallyRolledBackIsStillSuspected() throws {
        let dir = TemporaryDirectory()
        let (vault, laptop, _) = try KeyAttackTests.laptopVault(dir, "rollback real")
        let path = dir.file("j.quire")
        let store = InMemoryDeviceKeyStore()
        try store.create(laptop)
        try vault.remember(in: store)
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let other = try Vault.open(at: path, store: store, options: fast)
        try other.rotateKeys(now: KeyAttackTests.t0 + 2)
        try before.write(to: URL(fileURLWithPath: path))
        let reopened = try Vault.open(at: path, store: store, options: fast)
        #expect(reopened.keyWarnings.contains { $0.code == "rollback_suspected" }, "\(reopened.keyWarnings)")
    }
}
