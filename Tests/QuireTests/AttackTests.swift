import Foundation
import Testing
import Quire
import QuireCrypto
import QuireFormat
@_spi(Testing) import QuireKeys
import QuireSync
import QuireSystem

/// The attacks of issue 12 that only the library can show — what a device
/// remembers, which writes it refuses — next to the `attack-…` vectors in
/// `Vectors/files`, which show what a reader makes of a file.
@Suite struct AttackTests {
    static let t0 = KeyTestSupport.t0
    static let day = KeyTestSupport.day

    static func device(_ name: String) -> DeviceIdentity {
        try! DeviceIdentity.generate(name: name, now: t0, using: SeededRandom(label: "attack device " + name))
    }

    /// A vault created by the laptop with the phone enrolled.
    static func twoDevices(_ dir: TemporaryDirectory, _ label: String, passphrase: Bool = false) throws -> (path: String, laptop: DeviceIdentity, phone: DeviceIdentity, recovery: RecoveryKey) {
        let path = dir.file("j.quire")
        let laptop = device("Laptop"), phone = device("Phone")
        let recovery = testRecoveryKey("attack " + label)
        var setup = VaultSetup(name: "J", recoveryKey: recovery, device: laptop, now: t0)
        if passphrase {
            setup.passphrase = KeyTestSupport.secret("correct horse")
            setup.passphraseOpsLimit = 1
            setup.passphraseMemLimitBytes = 8192
        }
        let vault = try SlotCrypto.$allowsWeakPassphraseCost.withValue(true) {
            try Vault.create(at: path, setup: setup, random: SeededRandom(label: "attack " + label), options: fast)
        }
        try vault.enrollDevice(code: phone.code, name: "Phone", now: t0 + 1)
        return (path, laptop, phone, recovery)
    }

    /// Appends keyring frames (one copy each) in a commit no reader can check.
    static func append(_ path: String, _ bodies: [[UInt8]]) throws {
        let f = try VaultFile(path: path, writable: true)
        let junk = EpochKey(epoch: 60_000, key: try SymmetricKey(using: SeededRandom(label: "attack junk key")))
        f.verifyCommits(keys: KeySet(single: junk), trustedKeyrings: [:], attestors: [])
        try f.commit(random: SeededRandom(label: "attack append"), options: fast, attestWith: nil) { (tx: PendingCommit) throws(FormatError) in
            for body in bodies {
                let record = try KeyringRecord(body: body, location: nil)
                try tx.appendPlaintext(kind: .keyring, keyID: KeyID(commitment: record.publicPart.keyCommit), epoch: record.epoch, body: body, trusted: false)
            }
        }
    }

    /// A newer keyring the laptop cannot open (no slot for it) makes it
    /// "removed" only when its link to a trusted parent carries the
    /// signature of a member of that parent (`Spec/format.md §8.6`). Format 1
    /// counted any newer unreadable keyring, so a keyless writer stopped
    /// every device; a link MAC let any holder of the epoch key do it.
    @Test func attackForgedNewerKeyringCountsOnlyWithAMembersLink() throws {
        let dir = TemporaryDirectory()
        let (path, laptop, _, recovery) = try Self.twoDevices(dir, "forged newer")
        let withRecovery = try Vault.open(at: path, credential: .recoveryKey(recovery), options: fast)
        let state = try withRecovery.keyState()
        let head = state.heads[0]
        let random = SeededRandom(label: "forger")

        // 1. Someone with no key: random links.
        let opaque = KeyringRecord(
            publicPart: KeyringPublic(epoch: 2, keyCommit: random.bytes(32), parents: [head.id], links: [random.bytes(KeyringRecord.linkByteCount)],
                                      isEscrowFree: false, slotEntries: []),
            nonce: random.bytes(24), sealed: random.bytes(64)).encodedBody()
        try Self.append(path, [opaque])
        var onLaptop = try Vault.open(at: path, credential: .device(laptop.keyPair), options: fast)
        #expect(onLaptop.unlocked.unreadableNewerEpoch == nil)
        try onLaptop.add(EntryBody(created: Self.t0, text: "after a keyless forgery"))

        // 2. Someone who holds the epoch key (a passphrase holder, an escrow
        //    custodian) but is no member: a link that opens, signed by a
        //    key of its own.
        let intruder = try Ed25519.KeyPair(using: random)
        let k2 = EpochKey(epoch: 2, key: try SymmetricKey(using: random))
        let forged = try KeyringBuilder.body(
            epochKey: k2, vaultID: withRecovery.vaultID, parents: [KeyringBuilder.Parent(id: head.id, key: head.epochKey!)], isEscrowFree: false,
            slots: [], content: KeyringContent(members: state.members, blobKey: head.content!.blobKey, created: Self.t0, reason: "rotate"),
            signer: intruder, random: random)
        try Self.append(path, [forged])
        onLaptop = try Vault.open(at: path, credential: .device(laptop.keyPair), options: fast)
        #expect(onLaptop.unlocked.unreadableNewerEpoch == nil)
        try onLaptop.add(EntryBody(created: Self.t0 + 1, text: "after an epoch-key holder's forgery"))

        // 3. A member's keyring the laptop cannot open: the recovery key
        //    removes the laptop. Now it is removed, and may not write.
        let reopened = try Vault.open(at: path, credential: .recoveryKey(recovery), options: fast)
        try reopened.removeDevice(named: "Laptop", now: Self.t0 + Self.day)
        onLaptop = try Vault.open(at: path, credential: .device(laptop.keyPair), options: fast)
        #expect(onLaptop.unlocked.unreadableNewerEpoch != nil)
        do {
            try onLaptop.add(EntryBody(created: Self.t0 + 2, text: "refused"))
            Issue.record("a removed device wrote")
        } catch {
            #expect(error.code == "removed_from_vault")
        }
    }

    /// The laptop removes the phone; someone restores a copy from before the
    /// removal, in which the phone is still a member. Format 1 only warned,
    /// and the next entry was readable by the phone. Now the laptop, which
    /// remembers the keyring head it trusted, refuses to write to the
    /// rolled-back file until the newer copy is merged back
    /// (`Spec/keys.md §7`).
    @Test func attackRollbackBeforeRemoval() throws {
        let dir = TemporaryDirectory()
        let (path, laptop, phone, _) = try Self.twoDevices(dir, "rollback")
        let store = InMemoryDeviceKeyStore(identity: laptop)
        let old = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        let vault = try Vault.open(at: path, store: store, random: SeededRandom(label: "rollback laptop"), options: fast)
        try vault.removeDevice(named: "Phone", now: Self.t0 + Self.day)
        let newer = Array(try Data(contentsOf: URL(fileURLWithPath: path)))

        try Data(old).write(to: URL(fileURLWithPath: path))
        let rolledBack = try Vault.open(at: path, store: store, options: fast)
        #expect(rolledBack.keyWarnings.map(\.code) == ["rollback_suspected"])
        do {
            try rolledBack.add(EntryBody(created: Self.t0 + 2 * Self.day, text: "would be readable by the phone"))
            Issue.record("a write to the rolled-back file was accepted")
        } catch {
            #expect(error.code == "rolled_back")
        }
        #expect(Array(try Data(contentsOf: URL(fileURLWithPath: path))) == old)
        // The phone still reads the rolled-back file, but nothing new.
        #expect(try KeyTestSupport.texts(path, .device(phone.keyPair)) == [])

        // The remedy: merge the newer copy back; then the laptop writes again.
        let copy = dir.file("j.sync-conflict-20260102-000000-AAAAAAA.quire")
        try Data(newer).write(to: URL(fileURLWithPath: copy))
        _ = try VaultMerge.merge(vaultAt: path, copyAt: copy, credential: .device(laptop.keyPair), options: fast)
        let merged = try Vault.open(at: path, store: store, options: fast)
        #expect(merged.keyWarnings.isEmpty)
        try merged.add(EntryBody(created: Self.t0 + 3 * Self.day, text: "after the merge"))
        #expect(try KeyTestSupport.texts(path, .device(laptop.keyPair)) == ["after the merge"])
    }

    /// A passphrase reads; it does not write, merge or compact (the format
    /// cannot stop an epoch-key holder from appending an unattested commit:
    /// vector `attack-passphrase-writes-unattested` shows how readers show
    /// it). Format 1 let it write verified entries with any device field.
    @Test func attackPassphraseHolderIsRefusedWrites() throws {
        let dir = TemporaryDirectory()
        let (path, _, _, _) = try Self.twoDevices(dir, "passphrase", passphrase: true)
        let before = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        let withPassphrase = try Vault.open(at: path, credential: .passphrase(KeyTestSupport.secret("correct horse")), options: fast)
        func code(_ body: () throws -> Void) -> String? {
            do { try body() } catch let e as VaultError { return e.code } catch let e as SyncError { return e.code } catch { return "\(error)" }
            return nil
        }
        #expect(code { try withPassphrase.add(EntryBody(created: Self.t0, text: "not mine to write")) } == "operation_refused")
        #expect(code { try withPassphrase.rotateKeys(now: Self.t0) } == "operation_refused")
        #expect(code { try withPassphrase.compact(now: Self.t0) } == "operation_refused")
        let copy = dir.file("copy.quire")
        try Data(before).write(to: URL(fileURLWithPath: copy))
        #expect(code { _ = try VaultMerge.merge(vaultAt: path, copyAt: copy, credential: .passphrase(KeyTestSupport.secret("correct horse")), options: fast) } == "operation_refused")
        #expect(Array(try Data(contentsOf: URL(fileURLWithPath: path))) == before)
    }

    /// An enrolled phone writes 70 sibling epoch-2 keyrings: 70 trusted
    /// heads. Format 1 refused every new-epoch operation over 64 heads, so
    /// nobody could remove the phone. Now a writer joins heads in chained
    /// steps of 64: the recovery key removes the phone, one head remains,
    /// and the phone opens no new epoch.
    @Test func attackMemberFloodHeadsStillLetsTheRecoveryKeyRemove() throws {
        let dir = TemporaryDirectory()
        let (path, _, phone, recovery) = try Self.twoDevices(dir, "flood")
        let withPhone = try Vault.open(at: path, credential: .device(phone.keyPair), options: fast)
        let state = try withPhone.keyState()
        let head = state.heads[0]
        let random = SeededRandom(label: "flood")
        var bodies: [[UInt8]] = []
        for _ in 0..<70 {
            let key = EpochKey(epoch: 2, key: try SymmetricKey(using: random))
            var slots: [StoredSlot] = []
            for m in state.members {
                let slot: KeySlot = m.role == "recovery"
                    ? try SlotCrypto.recoverySlot(for: key, recoveryPublicKey: m.publicKey, vaultID: withPhone.vaultID, random: random)
                    : try SlotCrypto.deviceSlot(for: key, devicePublicKey: m.publicKey, vaultID: withPhone.vaultID, random: random)
                slots.append(StoredSlot(slot: slot))
            }
            bodies.append(try KeyringBuilder.body(
                epochKey: key, vaultID: withPhone.vaultID, parents: [KeyringBuilder.Parent(id: head.id, key: head.epochKey!)], isEscrowFree: false,
                slots: slots, content: KeyringContent(members: state.members, blobKey: head.content!.blobKey, created: Self.t0, reason: "rotate"),
                signer: phone.keyPair, random: random))
        }
        // The phone, a member holding the epoch key, commits them (one copy each).
        try withPhone.file.commit(random: random, options: fast, attestWith: phone.keyPair) { (tx: PendingCommit) throws(FormatError) in
            for body in bodies {
                let record = try KeyringRecord(body: body, location: nil)
                try tx.appendPlaintext(kind: .keyring, keyID: KeyID(commitment: record.publicPart.keyCommit), epoch: 2, body: body, trusted: false)
            }
        }
        let withRecovery = try Vault.open(at: path, credential: .recoveryKey(recovery), random: SeededRandom(label: "flood recovery"), options: fast)
        #expect(try withRecovery.keyState().heads.count == 70)
        try withRecovery.removeDevice(named: "Phone", now: Self.t0 + Self.day)
        let after = try withRecovery.keyState()
        #expect(after.heads.count == 1)
        #expect(after.member(withKey: phone.publicKey) == nil)
        // Every keyring stands: the joins (chained, 64 parents at most) only
        // join, and the removal, after them, has every flood keyring as an
        // ancestor; the phone is removed by the last keyring alone.
        #expect(withRecovery.unlocked.keyrings.allSatisfy { $0.isTrusted })
        #expect(withRecovery.unlocked.issues == [])
        try withRecovery.add(EntryBody(created: Self.t0 + 2 * Self.day, text: "after removing the phone"))
        try withRecovery.rotateKeys(now: Self.t0 + 3 * Self.day)
        #expect(withRecovery.verify().isIntact)
        let phoneView = try Vault.open(at: path, credential: .device(phone.keyPair), writable: false, options: fast)
        #expect(phoneView.unlocked.unreadableNewerEpoch != nil)
        #expect(try phoneView.entries().map(\.body.text) == [])
    }
}
