import Foundation
@_spi(Format) import Quire
@_spi(Crypto) import QuireCrypto
@_spi(Format) import QuireFormat
@_spi(Format) import QuireKeys
@_spi(Format) import QuireSync
import QuireSystem
import Testing

/// Editing, deleting and removing devices as an app does them (issue 13).
@Suite struct EntryLifecycleTests {
    /// A vault the laptop made, with the phone enrolled as "Phone".
    static func laptopAndPhone(at path: String, seed: String) throws -> (Vault, DeviceIdentity) {
        let laptop = KeyScenarioTests.device("Laptop"), phone = KeyScenarioTests.device("Phone")
        let vault = try Vault.create(
            at: path, setup: VaultSetup(name: "Journal", recoveryKey: testRecoveryKey(seed), device: laptop, now: KeyTestSupport.t0),
            random: SeededRandom(label: seed), options: fast)
        try vault.enrollDevice(code: phone.code, name: "Phone", now: KeyTestSupport.t0 + 1)
        return (vault, phone)
    }

    @Test func editingADeletedEntryIsRefused() throws {
        let dir = TemporaryDirectory()
        let (vault, _) = try makeVault(dir)
        let id = try vault.add(EntryBody(created: 1, text: "first")).entryID
        try vault.delete(id)
        #expect(throws: QuireError.entryDeleted(id)) { try vault.edit(id, body: EntryBody(created: 1, text: "edited")) }
        let snapshot = try #require(try vault.entry(id))
        #expect(throws: QuireError.entryDeleted(id)) {
            try vault.edit(id, body: EntryBody(created: 1, text: "edited"), replacing: [snapshot.revision.revisionID])
        }
        #expect(try vault.entry(id)?.isDeleted == true)
        // Bringing it back is explicit.
        let restored = try vault.restore(id, body: EntryBody(created: 1, text: "first"))
        #expect(restored.body.modifiedMilliseconds != nil)
        #expect(try vault.entry(id)?.isDeleted == false)
        #expect(try vault.entry(id)?.body.text == "first")
        #expect(try vault.edit(id, body: EntryBody(created: 1, text: "edited")).body.text == "edited")
    }

    @Test func editSetsModified() throws {
        let dir = TemporaryDirectory()
        let (vault, _) = try makeVault(dir)
        let id = try vault.add(EntryBody(created: 1, text: "first")).entryID
        let before = ProcessStats.wallClockMilliseconds()
        let edited = try vault.edit(id, body: EntryBody(created: 1, text: "edited"))
        #expect((edited.body.modifiedMilliseconds ?? 0) >= before)
        #expect(try vault.entry(id)?.body.modifiedMilliseconds == edited.body.modifiedMilliseconds)
    }

    @Test func removeDeviceMatchesTheNameExactly() throws {
        let dir = TemporaryDirectory()
        let path = dir.file("j.quire")
        let (vault, phone) = try Self.laptopAndPhone(at: path, seed: "exact")
        #expect(throws: QuireError.self) { try vault.removeDevice(named: "phone", now: KeyTestSupport.t0 + 2) }
        #expect(try vault.keyState().devices.map(\.name).sorted() == ["Laptop", "Phone"])
        // By key: the member, whatever its name.
        let removed = try vault.removeDevice(publicKey: phone.publicKey, now: KeyTestSupport.t0 + 3)
        #expect(removed.name == "Phone")
        #expect(try vault.keyState().devices.map(\.name) == ["Laptop"])
        #expect(throws: QuireError.self) { try vault.removeDevice(publicKey: phone.publicKey, now: KeyTestSupport.t0 + 4) }
    }

    @Test func aRemovedDeviceIsToldAfterARekey() throws {
        let dir = TemporaryDirectory()
        let path = dir.file("j.quire")
        let (vault, phone) = try Self.laptopAndPhone(at: path, seed: "rekey")
        try vault.add(EntryBody(created: 1, text: "before"))
        try vault.removeDevice(named: "Phone", now: KeyTestSupport.t0 + 2)
        _ = try vault.compact(CompactionOptions(rekey: true))
        #expect(vault.removedFromVault == nil)
        let onPhone = try Vault.open(at: path, credential: .device(phone.keyPair), options: fast)
        #expect(try onPhone.entries().isEmpty)
        // Not a silent "success with 0 entries": the vault says it was removed.
        #expect(try onPhone.unreadRecords().newerEpoch != nil)
        let status = try #require(onPhone.removedFromVault)
        // The phone cannot open the removal (its list is sealed to the
        // members that stay), so it is behind a newer keyring (format.md §8.6).
        #expect(status.code == "behind_newer_keyring")
        #expect(throws: status) { try onPhone.add(EntryBody(created: 2, text: "after")) }
    }

    /// Spec/merge.md §6: a device that cannot open the keyring that removed
    /// it is behind, and compaction (which keeps only the keyrings it trusts)
    /// must refuse it: otherwise it would drop its own removal.
    @Test func aBehindDeviceCannotCompactItsRemovalAway() throws {
        let dir = TemporaryDirectory()
        let path = dir.file("j.quire")
        let (vault, phone) = try Self.laptopAndPhone(at: path, seed: "behind compact")
        try vault.add(EntryBody(created: 1, text: "before"))
        try vault.removeDevice(named: "Phone", now: KeyTestSupport.t0 + 2)
        let before = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        let onPhone = try Vault.open(at: path, credential: .device(phone.keyPair), options: fast)
        #expect(onPhone.removedFromVault?.code == "behind_newer_keyring")
        do {
            _ = try onPhone.compact()
            Issue.record("a device behind its own removal compacted the vault")
        } catch {
            #expect(error.code == "removed_from_vault")
        }
        #expect(Array(try Data(contentsOf: URL(fileURLWithPath: path))) == before)
    }
    /// Third review, item 6: compaction kept only the keyrings it trusts,
    /// so it dropped a keyring it could not open — one another reader may
    /// trust — that a merge had carried in a verified commit. It now carries
    /// such a keyring byte for byte, as merge does (Spec/merge.md §6). Here
    /// the phone, removed by the laptop, made a keyring wrapped only to
    /// itself; the laptop (not behind: the phone is removed) cannot open it.
    @Test func compactionCarriesAKeyringItCannotOpen() throws {
        let dir = TemporaryDirectory()
        let path = dir.file("j.quire")
        let (vault, phone) = try Self.laptopAndPhone(at: path, seed: "compact unopened")
        try vault.add(EntryBody(created: 1, text: "before"))
        let head = try vault.keyState().heads[0]
        try vault.removeDevice(named: "Phone", now: KeyTestSupport.t0 + 2)
        let body = try KeyAttackTests.leavingOthersOut(vault, parent: head, epoch: 2, signer: phone, slotFor: phone, label: "phone only")
        let id = KeyringBuilder.id(ofBody: body)
        // What a merge writes: the keyring, unopened, in a verified commit
        // the laptop attests.
        let file = try VaultFile(path: path, writable: true)
        let laptop = KeyScenarioTests.device("Laptop")
        let unlocked = try KeyringEvaluator.unlock(file, with: .device(laptop.keyPair))
        file.verifyCommits(keys: unlocked.keys, trustedKeyrings: unlocked.trustedKeyrings, attestors: unlocked.attestors)
        try file.commit(random: SeededRandom(label: "carried"), options: fast, attestWith: laptop.keyPair) { (tx: PendingCommit) throws(FormatError) in
            let record = try KeyringRecord(body: body, location: nil)
            try tx.appendPlaintext(kind: .keyring, keyID: KeyID(commitment: record.publicPart.keyCommit), epoch: 2, body: body, trusted: false)
        }
        let onLaptop = try Vault.open(at: path, credential: .device(laptop.keyPair), options: fast)
        #expect(onLaptop.removedFromVault == nil)
        #expect(onLaptop.verify().issues.isEmpty)
        _ = try onLaptop.compact()
        let after = try KeyringEvaluator.unlock(try VaultFile(path: path), with: .device(laptop.keyPair))
        #expect(after.keyrings.contains { $0.id == id && $0.content == nil })
        let onPhone = try KeyringEvaluator.unlock(try VaultFile(path: path), with: .device(phone.keyPair))
        #expect(onPhone.keyrings.contains { $0.id == id && $0.content != nil })
        #expect(try Vault.open(at: path, credential: .device(laptop.keyPair), options: fast).verify().issues.isEmpty)
    }
}

