import Foundation
import Testing
@_spi(Format) @_spi(Crypto) import Quire
@_spi(Crypto) import QuireCrypto
@_spi(Format) import QuireFormat
@_spi(Testing) @_spi(Format) @_spi(Crypto) import QuireKeys
@_spi(Format) import QuireSync
import QuireSystem
import QuireTestSupport

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
            setup.guardedPassphrase = KeyTestSupport.secret("correct horse")
            setup.passphraseOpsLimit = 1
            setup.passphraseMemLimitBytes = 8192
        }
        let vault = try SlotCrypto.$allowsWeakPassphraseCost.withValue(true) {
            try Vault.create(at: path, setup: setup, random: SeededRandom(label: "attack " + label), options: fast)
        }
        try vault.enrollDevice(code: phone.code, name: "Phone", now: t0 + 1)
        return (path, laptop, phone, recovery)
    }

    /// Stores `content` as an attachment in its own commit.
    static func store(_ vault: Vault, _ content: [UInt8]) throws -> StoredBlob {
        var stored: StoredBlob?
        try vault.commit { tx in stored = try tx.storeAttachment(from: MemoryByteSource(content), mediaType: "image/jpeg") }
        return stored!
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

    /// Thirteenth review R13-1: the keyring id (the body hash) does not
    /// cover the frame header, so a writer holding no key can copy every
    /// keyring's frame under another key id (check recomputed) into a junk
    /// group before its first copy. That copy was each keyring's first
    /// intact one and failed rule 1: the root was rejected (every
    /// credential refused) and so was the removal. The copy used is now the
    /// first intact one under its own key id (`Spec/format.md §8.1`), and
    /// a merge of the shadowed file with an intact copy keeps the removal
    /// (`Spec/merge.md §3.2`).
    @Test func attackKeyringHeaderShadowHidesNeitherTheRootNorARemoval() throws {
        let dir = TemporaryDirectory()
        let (path, laptop, _, recovery) = try Self.twoDevices(dir, "header shadow")
        let store = InMemoryDeviceKeyStore(identity: laptop)
        try Vault.open(at: path, store: store, random: SeededRandom(label: "shadow laptop"), options: fast)
            .removeDevice(named: "Phone", now: Self.t0 + Self.day)
        let intact = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        let s = try VaultFile(path: path).structure
        var firsts: [Int] = []
        var seen = Set<[UInt8]>()
        for i in 0..<s.frames.count where s.frames.header(at: i).kind == .keyring && seen.insert(s.frames[i].trailer).inserted {
            firsts.append(i)
        }
        #expect(firsts.count == 3)  // the root, the phone's enrolment, the removal
        var raw = intact
        for i in firsts.reversed() {
            let group = s.groups[s.groupIndex(ofFrame: i)!]
            var copy = Array(intact[Int(s.frames.location(at: i).offset)..<Int(s.frames.end(at: i))])
            for j in 2..<8 { copy[j] ^= 0xff }
            copy.replaceSubrange(12..<16, with: BLAKE2b.hash(Array(copy[0..<12]), byteCount: 16)[0..<4])
            let junk =
                CommitChain.commitHeader(keyID: KeyID(rawValue: 0x9999_9999_9999)).encoded()
                + [UInt8](repeating: 7, count: CommitChain.bodyByteCount)
            raw.insert(contentsOf: copy + junk, at: Int(s.frames.location(at: group.members.lowerBound).offset))
        }
        let shadowed = dir.file("shadowed.quire")
        try Data(raw).write(to: URL(fileURLWithPath: shadowed))

        // A reader without device memory: every keyring stands, each shadow
        // is a damaged copy.
        let unlocked = try KeyringEvaluator.unlock(try VaultFile(path: shadowed), with: .recoveryKey(recovery))
        #expect(unlocked.keyrings.filter(\.isTrusted).map(\.epoch) == [1, 1, 2])
        #expect(unlocked.issues.map(\.code) == ["keyring_copy_damaged", "keyring_copy_damaged", "keyring_copy_damaged"])
        #expect(try KeyTestSupport.texts(shadowed, .recoveryKey(recovery)) == [])

        // Merged by the laptop with the intact copy, either way round, the
        // removal is kept.
        for (vault, copy) in [(shadowed, path), (path, shadowed)] {
            let v = dir.file("v.quire"), c = dir.file("c.quire")
            try? FileManager.default.removeItem(atPath: v)
            try? FileManager.default.removeItem(atPath: c)
            try FileManager.default.copyItem(atPath: vault, toPath: v)
            try FileManager.default.copyItem(atPath: copy, toPath: c)
            _ = try VaultMerge.merge(vaultAt: v, copyAt: c, credential: .device(laptop.keyPair), options: fast)
            let merged = try KeyringEvaluator.unlock(try VaultFile(path: v), with: .device(laptop.keyPair))
            #expect(merged.keyrings.filter(\.isTrusted).map(\.epoch).max() == 2)
            #expect(merged.keyrings.contains { $0.isTrusted && $0.content?.removed.isEmpty == false })
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
        //    removes the laptop. The laptop cannot read the removal (its
        //    `removed` list is sealed), so it is behind a member's newer
        //    keyring (Spec/format.md §8.6), and may not write.
        let reopened = try Vault.open(at: path, credential: .recoveryKey(recovery), options: fast)
        try reopened.removeDevice(named: "Laptop", now: Self.t0 + Self.day)
        onLaptop = try Vault.open(at: path, credential: .device(laptop.keyPair), options: fast)
        #expect(onLaptop.unlocked.unreadableNewerEpoch != nil)
        do {
            try onLaptop.add(EntryBody(created: Self.t0 + 2, text: "refused"))
            Issue.record("a removed device wrote")
        } catch {
            #expect(error.code == "behind_newer_keyring")
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

        // A deliberate old copy at another path (a backup) starts its own
        // memory: it does not warn, and the real vault keeps not warning.
        let backup = dir.file("backup.quire")
        try Data(old).write(to: URL(fileURLWithPath: backup))
        #expect(try Vault.open(at: backup, store: store, options: fast).keyWarnings.isEmpty)
        #expect(try Vault.open(at: path, store: store, options: fast).keyWarnings.isEmpty)
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
            do { try body() } catch let e as QuireError { return e.code } catch let e as SyncError { return e.code } catch { return "\(error)" }
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
        // The removal leaves the phone's branch out of its parents
        // (Spec/keys.md §6.3): the 70 flood keyrings, signed by the removed
        // phone and no ancestor of the removal, are cut by rule 6 and said.
        let cut = withRecovery.unlocked.keyrings.filter { !$0.isTrusted }
        #expect(cut.count == 70)
        #expect(withRecovery.unlocked.issues.count == 70)
        #expect(withRecovery.unlocked.issues.allSatisfy { "\($0)".contains("is not trusted: it is signed by a member removed in") })
        try withRecovery.add(EntryBody(created: Self.t0 + 2 * Self.day, text: "after removing the phone"))
        try withRecovery.rotateKeys(now: Self.t0 + 3 * Self.day)
        // verify says the same 70 keyrings, and the phone's commit of them:
        // made under epoch 1 while holding keyrings of epoch 2 (stale when
        // the removal was written, so the removal chains from the commit
        // before it), it is on no line of the chain now [commit_orphaned].
        // The removal's own commit is made under the key it starts and
        // verifies (Spec/keys.md §6.3, stop 33): before, it was made under
        // the flood's write key, which the removal cuts, and nobody could
        // check it.
        let issues = withRecovery.verify().issues
        #expect(issues.count == 71)
        #expect(issues.filter { $0.code == "keyring_unauthenticated" }.count == 70)
        #expect(issues.filter { $0.code == "commit_orphaned" }.count == 1)
        #expect(!issues.contains { $0.code == "commit_unverifiable" })
        #expect(withRecovery.file.commits.statuses.filter { $0 == .verified }.count == withRecovery.file.commits.statuses.count - 1)
        #expect(try withRecovery.entries().map(\.body.text) == ["after removing the phone"])
        let phoneView = try Vault.open(at: path, credential: .device(phone.keyPair), writable: false, options: fast)
        #expect(phoneView.unlocked.unreadableNewerEpoch != nil)
        #expect(try phoneView.entries().map(\.body.text) == [])
    }

    /// Issue 12 §1: a phone, a member, appended 4,100 chained minimal
    /// keyrings (3.6 MiB, each a new epoch under the previous one); in format
    /// 1 each carried every earlier key, the epoch counter ran out, the
    /// recovery key could no longer remove the phone, and a reader trapped
    /// on guarded memory. Now a keyring carries only its parents' keys
    /// (`parentKeys`, records.md §6.3) and epochs are `u32`: the chain costs
    /// the same bytes per keyring whatever its length, opening it costs one
    /// slot trial, one keyring open and one link check per keyring
    /// (`Spec/format.md §8.5`), and the recovery key removes the phone and
    /// rotates as usual. The fast test runs 200 keyrings, the slow one the
    /// issue's 4,100.
    @Test func attackMemberChainFloodStillLetsTheRecoveryKeyRemove() throws {
        try Self.memberChainFlood(200, label: "chain 200")
    }

    /// ``attackMemberChainFloodStillLetsTheRecoveryKeyRemove()`` at the
    /// issue's size, 4,100 chained keyrings.
    @Test(.tags(.slow), .skippedByMakeCheck) func attackMemberChainFloodOfTheIssueStillLetsTheRecoveryKeyRemove() throws {
        try Self.memberChainFlood(4100, label: "chain 4100")
    }

    /// Appends `count` chained keyrings signed by `phone`, a member: each
    /// the child of the one before (the first, of the current head), a new
    /// epoch with a new key, slots for every member, in one commit the phone
    /// attests. Returns the head it started from and the bodies.
    static func appendMemberChain(_ path: String, phone: DeviceIdentity, count: Int, label: String) throws -> (head: KeyringInfo, bodies: [[UInt8]]) {
        let withPhone = try Vault.open(at: path, credential: .device(phone.keyPair), options: fast)
        let state = try withPhone.keyState()
        let head = try #require(state.heads.first)
        let random = SeededRandom(label: label)
        var parent = KeyringBuilder.Parent(id: head.id, key: try #require(head.epochKey))
        var bodies: [[UInt8]] = []
        for _ in 0..<count {
            let key = EpochKey(epoch: parent.key.epoch + 1, key: try SymmetricKey(using: random))
            let slots: [StoredSlot] = try state.members.map { m in
                StoredSlot(
                    slot: m.role == "recovery"
                        ? try SlotCrypto.recoverySlot(for: key, recoveryPublicKey: m.publicKey, vaultID: withPhone.vaultID, random: random)
                        : try SlotCrypto.deviceSlot(for: key, devicePublicKey: m.publicKey, vaultID: withPhone.vaultID, random: random))
            }
            let body = try KeyringBuilder.body(
                epochKey: key, vaultID: withPhone.vaultID, parents: [parent], isEscrowFree: false, slots: slots,
                content: KeyringContent(members: state.members, blobKey: head.content!.blobKey, created: Self.t0, reason: "rotate"),
                signer: phone.keyPair, random: random)
            bodies.append(body)
            parent = KeyringBuilder.Parent(id: KeyringBuilder.id(ofBody: body), key: key)
        }
        try withPhone.file.commit(random: random, options: fast, attestWith: phone.keyPair) { (tx: PendingCommit) throws(FormatError) in
            for body in bodies {
                let record = try KeyringRecord(body: body, location: nil)
                try tx.appendPlaintext(
                    kind: .keyring, keyID: KeyID(commitment: record.publicPart.keyCommit), epoch: record.epoch, body: body, trusted: false)
            }
        }
        return (head, bodies)
    }

    /// The phone appends `count` chained keyrings, each valid (a new epoch,
    /// a new key, slots for every member, signed and linked by the phone),
    /// in one commit it attests; then the recovery key removes it and
    /// rotates.
    static func memberChainFlood(_ count: Int, label: String) throws {
        let dir = TemporaryDirectory()
        let (path, _, phone, recovery) = try Self.twoDevices(dir, label)
        let clean = try Vault.open(at: path, credential: .recoveryKey(recovery), writable: false, options: fast).unlocked
        let cleanSize = try FileManager.default.attributesOfItem(atPath: path)[.size] as! Int
        let (head, bodies) = try Self.appendMemberChain(path, phone: phone, count: count, label: label)
        // Keys by reference: the last keyring is as large as the first (no
        // copy of the earlier keys), and the file grows by the chain's
        // length times a constant.
        let sizes = bodies.map(\.count)
        #expect(sizes.max()! - sizes.min()! <= 64, "\(sizes.min()!)…\(sizes.max()!) bytes")
        let grown = try FileManager.default.attributesOfItem(atPath: path)[.size] as! Int - cleanSize
        #expect(grown <= count * (sizes.max()! + FrameHeader.byteCount + 32) + 4096, "\(grown) bytes for \(count) keyrings")
        // Opening stays linear: one slot trial, one keyring open and one link
        // signature check more per chained keyring than in the clean vault.
        let flooded = try Vault.open(at: path, credential: .recoveryKey(recovery), writable: false, options: fast).unlocked
        #expect(flooded.keyrings.filter(\.isTrusted).count == clean.keyrings.filter(\.isTrusted).count + count)
        #expect(flooded.issues.isEmpty)
        #expect(flooded.slotTrials == clean.slotTrials + count)
        #expect(flooded.keyringOpens == clean.keyringOpens + count)
        #expect(flooded.linkSignatureChecks == clean.linkSignatureChecks + count)
        #expect(flooded.keys.newestEpoch == head.epoch + UInt32(count))
        // The recovery key removes the phone, leaving its chain out of the
        // removal's parents (Spec/keys.md §6.3), and rotates.
        let withRecovery = try Vault.open(at: path, credential: .recoveryKey(recovery), random: SeededRandom(label: label + " recovery"), options: fast)
        try withRecovery.removeDevice(named: "Phone", now: Self.t0 + Self.day)
        let after = try withRecovery.keyState()
        #expect(after.heads.count == 1)
        #expect(after.member(withKey: phone.publicKey) == nil)
        #expect(withRecovery.unlocked.keyrings.filter { !$0.isTrusted }.count == count)
        #expect(withRecovery.unlocked.issues.count == count)
        #expect(withRecovery.unlocked.issues.allSatisfy { "\($0)".contains("is not trusted: it is signed by a member removed in") })
        try withRecovery.add(EntryBody(created: Self.t0 + 2 * Self.day, text: "after removing the phone"))
        try withRecovery.rotateKeys(now: Self.t0 + 3 * Self.day)
        #expect(try withRecovery.entries().map(\.body.text) == ["after removing the phone"])
        // Still linear once the chain is cut.
        let removed = try Vault.open(at: path, credential: .recoveryKey(recovery), writable: false, options: fast).unlocked
        #expect(removed.slotTrials <= clean.slotTrials + count + 2)
        #expect(removed.keyringOpens <= clean.keyringOpens + count + 2)
        #expect(removed.linkSignatureChecks <= clean.linkSignatureChecks + count + 2)
        // The phone reads nothing written after the removal, and may not write.
        let phoneView = try Vault.open(at: path, credential: .device(phone.keyPair), writable: false, options: fast)
        #expect(phoneView.unlocked.unreadableNewerEpoch != nil)
        #expect(try phoneView.entries().map(\.body.text) == [])
        let phoneWriter = try Vault.open(at: path, credential: .device(phone.keyPair), options: fast)
        #expect(throws: QuireError.self) { try phoneWriter.add(EntryBody(created: Self.t0 + 4 * Self.day, text: "refused")) }
    }

    /// Someone who holds an epoch key re-seals a trusted keyring under 70
    /// fresh nonces. In format 1 each copy was a new trusted head, and over
    /// 64 heads every new epoch was refused. Now no copy is trusted (vector
    /// `attack-reseal-keyring-copies`), and a new epoch is written as usual.
    @Test func attackResealedKeyringCopiesLeaveANewEpochPossible() throws {
        let dir = TemporaryDirectory()
        let (path, laptop, _, _) = try Self.twoDevices(dir, "reseal")
        let vault = try Vault.open(at: path, credential: .device(laptop.keyPair), options: fast)
        let head = try vault.keyState().heads[0]
        let file = try VaultFile(path: path)
        let frame = file.structure.frames[head.location.index]
        let record = try KeyringRecord(body: frame.plaintextBody!, location: nil)
        let key = head.epochKey!
        let ad = KeyringRecord.associatedData(vaultID: vault.vaultID, publicBytes: record.publicBytes)
        let inner = try XChaCha20Poly1305.open(record.sealed, key: try key.subkey(.keyring), nonce: record.nonce, authenticating: ad)
        let random = SeededRandom(label: "reseal")
        var copies: [[UInt8]] = []
        for _ in 0..<70 {
            let nonce = random.bytes(24)
            let sealed = XChaCha20Poly1305.seal(inner, key: try key.subkey(.keyring), nonce: nonce, authenticating: ad)
            copies.append(KeyringRecord(publicPart: record.publicPart, nonce: nonce, sealed: sealed).encodedBody())
        }
        try Self.append(path, copies)
        let reopened = try Vault.open(at: path, credential: .device(laptop.keyPair), random: SeededRandom(label: "reseal rotate"), options: fast)
        #expect(try reopened.keyState().heads.count == 1)
        #expect(reopened.unlocked.issues.filter { $0.code == "keyring_unauthenticated" }.count == 70)
        try reopened.rotateKeys(now: Self.t0 + Self.day)
        #expect(try reopened.keyState().epoch == 2)
    }

    /// Tenth review R10-8: whoever holds a device code (it is typed or sent
    /// by message) and a copy of the file, but no key, tried it against the
    /// vault id with the root's public `vaultSalt` and learnt whether that
    /// device created the vault. The salt is now sealed in the root's
    /// content `C`: no 16 bytes the file shows in the clear derive the vault
    /// id with the creator's key, while the content's salt still does.
    @Test func attackDeviceCodeDoesNotTellWhoCreatedTheVault() throws {
        let dir = TemporaryDirectory()
        let (path, laptop, phone, recovery) = try Self.twoDevices(dir, "who created")
        let file = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        let vaultID = Array(file[12..<28])
        let candidates = [try DeviceCode.parse(laptop.code), try DeviceCode.parse(phone.code), try recovery.signingKeyPair().publicKey]
        let scanned = try VaultFile(path: path)
        let commits = try scanned.structure.frames.filter { $0.header.kind == .keyring }.compactMap { frame in
            try frame.plaintextBody.map { try KeyringRecord(body: $0, location: nil).publicPart.keyCommit }
        }
        #expect(!commits.isEmpty)
        var matches = 0
        for key in candidates {
            for commit in Set(commits) {
                for i in 0...(file.count - 16)
                where rootVaultID(signer: key, keyCommit: commit, salt: Array(file[i..<(i + 16)])).bytes == vaultID {
                    matches += 1
                }
            }
        }
        #expect(matches == 0)
        // The creator's key with the sealed salt derives the id (rule 4).
        let vault = try Vault.open(at: path, credential: .device(laptop.keyPair), options: fast)
        let root = try #require(vault.unlocked.keyrings.first { $0.record.publicPart.parents.isEmpty })
        let salt = try #require(root.content?.vaultSalt)
        #expect(rootVaultID(signer: laptop.publicKey, keyCommit: root.record.publicPart.keyCommit, salt: salt).bytes == vaultID)
        #expect(root.record.publicPart.unknownFields[text: "vaultSalt"] == nil)
    }

    /// Two attachments whose sizes fall in one Padmé bucket are stored as
    /// chunk frames of identical lengths (format 1 padded the final chunk
    /// only, so lengths told sizes to within 2 KiB).
    @Test func attackAttachmentSizeIsHiddenWithinItsBucket() throws {
        let dir = TemporaryDirectory()
        let (path, laptop, _, _) = try Self.twoDevices(dir, "sizes")
        let vault = try Vault.open(at: path, credential: .device(laptop.keyPair), options: fast)
        func chunkLengths(_ count: Int) throws -> [UInt32] {
            let before = vault.file.structure.frames.count
            _ = try Self.store(vault, SeededRandom(label: "size \(count)").bytes(count))
            return vault.file.structure.frames[before...].filter { $0.header.kind == .blobChunk }.map(\.header.bodyLength)
        }
        let a = try chunkLengths(10_000_000), b = try chunkLengths(10_100_000)
        #expect(a == b)
        #expect(a.count == Int(Padding.chunkCount(contentByteCount: 10_000_000)))
    }

    /// A writer refuses to make a passphrase slot below the floor (2 passes,
    /// 64 MiB): readers accept cheap slots, so only writers keep them out.
    @Test func attackPassphraseCostIsRefusedToWriters() throws {
        let dir = TemporaryDirectory()
        let (path, laptop, _, _) = try Self.twoDevices(dir, "cost")
        let vault = try Vault.open(at: path, credential: .device(laptop.keyPair), options: fast)
        do {
            try vault.setPassphrase(KeyTestSupport.secret("cheap"), opsLimit: 1, memLimitBytes: 8192, now: Self.t0 + 1)
            Issue.record("a writer made a passphrase slot below the floor")
        } catch {
            #expect(error.code == "kdf_limits_exceeded")
        }
        do {
            try vault.setPassphrase(KeyTestSupport.secret("greedy"), opsLimit: 3, memLimitBytes: 1 << 30, now: Self.t0 + 1)
            Issue.record("a writer made a passphrase slot over the reader bound")
        } catch {
            #expect(error.code == "kdf_limits_exceeded")
        }
    }

    /// A vault whose root keyring, signed by the recovery key, lists the
    /// recovery key and a device "Laptop", with `requiredSlotKinds`, one more
    /// slot made by `extraSlot` and `unknownPublicFields` in its public part
    /// (the writer-refusal tests of tenth review R10-4 and twelfth review
    /// R12-1). Returns the file's path, the recovery key and the laptop.
    static func rootOfRecoveryKeyAndLaptop(
        _ dir: TemporaryDirectory, _ name: String, label: String, requiredSlotKinds: [String] = [],
        extraSlot: ((SeededRandom) -> KeySlot)? = nil, unknownPublicFields: CBORMap = CBORMap()
    ) throws -> (path: String, recovery: RecoveryKey, laptop: DeviceIdentity) {
        let path = dir.file(name)
        let random = SeededRandom(label: label)
        let recovery = testRecoveryKey(label)
        let signer = try recovery.signingKeyPair()
        let laptop = Self.device("Laptop")
        let salt = random.bytes(16)
        let blobKey = try SymmetricKey(using: random)
        let key = EpochKey(epoch: 1, key: try SymmetricKey(using: random), blobKey: blobKey)
        let vaultID = rootVaultID(signer: signer.publicKey, keyCommit: key.commitment, salt: salt)
        let extra = extraSlot.map { [StoredSlot(slot: $0(random))] } ?? []
        let body = try KeyringBuilder.body(
            epochKey: key, vaultID: vaultID, parents: [], isEscrowFree: false, requiredSlotKinds: requiredSlotKinds,
            slots: [StoredSlot(slot: try SlotCrypto.recoverySlot(for: key, recovery: recovery, vaultID: vaultID, random: random))] + extra
                + [StoredSlot(slot: try SlotCrypto.deviceSlot(for: key, devicePublicKey: laptop.publicKey, vaultID: vaultID, random: random))],
            vaultSalt: salt, unknownPublicFields: unknownPublicFields,
            content: KeyringContent(members: [KeyringMember(role: "recovery", publicKey: signer.publicKey, name: "Recovery key", added: Self.t0),
                                              KeyringMember(role: "device", publicKey: laptop.publicKey, name: "Laptop", added: Self.t0)],
                                    blobKey: blobKey, created: Self.t0, reason: "create"),
            signer: signer, random: random)
        _ = try VaultFile.create(at: path, vaultID: vaultID, keys: KeySet(single: key), random: random, options: fast, attestWith: signer) {
            (tx: PendingCommit) throws(FormatError) in
            try tx.appendKeyring(keyID: key.id, epoch: 1, body: body)
        }
        return (path, recovery, laptop)
    }

    /// The root requires a slot kind this writer does not know (a hybrid
    /// post-quantum slot): a device refuses a new epoch rather than drop
    /// it; the recovery key's keyring drops it (twelfth review R12-1).
    @Test func attackRequiredKindDroppedIsRefusedToWriters() throws {
        let dir = TemporaryDirectory()
        let kind = "hybrid-x25519-ml-kem"
        let (path, recovery, laptop) = try Self.rootOfRecoveryKeyAndLaptop(
            dir, "pq.quire", label: "required kind", requiredSlotKinds: [kind],
            extraSlot: { random in
                KeySlot.unknown(kind: kind, fields: CBORMap(text: [("box", .bytes(random.bytes(1200))), ("kind", .text(kind))]))
            })
        let vault = try Vault.open(at: path, credential: .device(laptop.keyPair), options: fast)
        let before = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        do {
            try vault.rotateKeys(now: Self.t0 + 1)
            Issue.record("a writer dropped a required slot kind")
        } catch {
            #expect(error.code == "operation_refused")
        }
        #expect(Array(try Data(contentsOf: URL(fileURLWithPath: path))) == before)
        let withRecovery = try Vault.open(at: path, credential: .recoveryKey(recovery), options: fast)
        #expect(try withRecovery.droppedProtections() == ["required \"hybrid-x25519-ml-kem\""])
        try withRecovery.rotateKeys(now: Self.t0 + 2)
        let heads = try Vault.open(at: path, credential: .device(laptop.keyPair), options: fast).keyState().heads
        #expect(heads.map(\.epoch) == [2])
        #expect(heads.first?.record.publicPart.requiredSlotKinds == [])
    }

    /// The root lists an extension name in `critical` that this writer does
    /// not understand (tenth review R10-4): the vault opens and reads, but
    /// the writer signs no keyring — neither a new epoch nor one of the same
    /// epoch — and the file is unchanged. Before, `critical` was an unknown
    /// field: a rotation dropped nothing visible and an enrolment copied it.
    /// The recovery key's keyring drops the name (twelfth review R12-1).
    @Test func attackCriticalExtensionIsRefusedToWriters() throws {
        let dir = TemporaryDirectory()
        let (path, recovery, laptop) = try Self.rootOfRecoveryKeyAndLaptop(
            dir, "critical.quire", label: "critical extension",
            unknownPublicFields: CBORMap(text: [("critical", .array([.text("x-retention-policy")]))]))
        let random = SeededRandom(label: "critical extension, tablet")
        let vault = try Vault.open(at: path, credential: .device(laptop.keyPair), options: fast)
        #expect(vault.unlocked.keyrings.first?.record.publicPart.criticalExtensions == ["x-retention-policy"])
        let before = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        let tablet = try DeviceIdentity.generate(name: "Tablet", now: Self.t0, using: random)
        for (what, change) in [("rotated", { try vault.rotateKeys(now: Self.t0 + 1) }), ("enrolled", { try vault.enrollDevice(code: tablet.code, name: "Tablet", now: Self.t0 + 2) })] {
            do {
                try change()
                Issue.record("a writer \(what) under a critical extension it does not understand")
            } catch {
                #expect((error as? QuireError)?.code == "operation_refused")
            }
        }
        #expect(Array(try Data(contentsOf: URL(fileURLWithPath: path))) == before)
        let withRecovery = try Vault.open(at: path, credential: .recoveryKey(recovery), options: fast)
        #expect(try withRecovery.droppedProtections() == ["critical \"x-retention-policy\""])
        try withRecovery.rotateKeys(now: Self.t0 + 3)
        let heads = try Vault.open(at: path, credential: .device(laptop.keyPair), options: fast).keyState().heads
        #expect(heads.map(\.epoch) == [2])
        #expect(heads.first?.record.publicPart.criticalExtensions == [])
    }

    /// Twelfth review R12-1: the phone, stolen and still a member, signs one
    /// same-epoch keyring listing a made-up name in `critical` (or a made-up
    /// kind in `required`). The laptop's removal of it is still refused,
    /// but the recovery key's removal is written, drops the name, and the
    /// laptop writes keyrings again. Before, the recovery key's removal was
    /// refused too (`operation_refused`), and no update would ever
    /// understand the name: the thief could never be removed.
    @Test func attackThiefMadeUpNameCannotBlockTheRecoveryKeysRemoval() throws {
        for (label, critical, required) in [("critical name", ["x-anything"], [String]()), ("required kind", [], ["x-made-up"])] {
            let dir = TemporaryDirectory()
            let (path, laptop, phone, recovery) = try Self.twoDevices(dir, "thief " + label)
            let onPhone = try Vault.open(at: path, credential: .device(phone.keyPair), options: fast)
            let head = try onPhone.keyState().heads[0]
            let key = head.epochKey!
            let random = SeededRandom(label: "thief " + label)
            let marked = try KeyringBuilder.body(
                epochKey: key, vaultID: onPhone.vaultID, parents: [KeyringBuilder.Parent(id: head.id, key: key)], isEscrowFree: false,
                requiredSlotKinds: required, slots: head.record.publicPart.slotEntries,
                unknownPublicFields: critical.isEmpty ? CBORMap() : CBORMap(text: [("critical", .array(critical.map { .text($0) }))]),
                content: KeyringContent(members: head.content!.members, blobKey: head.content!.blobKey, created: Self.t0 + 1, reason: "rotate"),
                signer: phone.keyPair, random: random)
            let file = try VaultFile(path: path, writable: true)
            let unlocked = try KeyringEvaluator.unlock(file, with: .device(phone.keyPair))
            file.verifyCommits(keys: unlocked.keys, trustedKeyrings: unlocked.trustedKeyrings, attestors: unlocked.attestors)
            try file.commit(random: random, options: fast, attestWith: phone.keyPair) { (tx: PendingCommit) throws(FormatError) in
                try tx.appendKeyring(keyID: key.id, epoch: key.epoch, body: marked)
            }
            let onLaptop = try Vault.open(at: path, credential: .device(laptop.keyPair), options: fast)
            #expect(try onLaptop.keyState().heads.map(\.id) == [KeyringBuilder.id(ofBody: marked)])
            #expect(try onLaptop.droppedProtections() == [])
            let before = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
            do {
                try onLaptop.removeDevice(named: "Phone", now: Self.t0 + 2)
                Issue.record("\(label): a device signed a keyring under a made-up name it does not understand")
            } catch {
                #expect(error.code == "operation_refused")
            }
            #expect(Array(try Data(contentsOf: URL(fileURLWithPath: path))) == before)
            let withRecovery = try Vault.open(at: path, credential: .recoveryKey(recovery), options: fast)
            #expect(try withRecovery.droppedProtections() == critical.map { "critical \"\($0)\"" } + required.map { "required \"\($0)\"" })
            try withRecovery.removeDevice(named: "Phone", now: Self.t0 + 3)
            let after = try Vault.open(at: path, credential: .device(laptop.keyPair), options: fast)
            let state = try after.keyState()
            #expect(state.devices.map(\.name) == ["Laptop"])
            #expect(state.removed.map(\.name) == ["Phone"])
            #expect(state.heads.allSatisfy { $0.record.publicPart.criticalExtensions.isEmpty && $0.record.publicPart.requiredSlotKinds.isEmpty })
            try after.rotateKeys(now: Self.t0 + 4)
            #expect(try after.keyState().epoch == 3)
        }
    }

    /// After `compact --rekey` the blob key is new: the same content has
    /// another blob id, the re-stored manifest lists the old one as an
    /// alias, references by the old id still resolve, and storing the
    /// content again deduplicates against the new id. Format 1 kept one blob
    /// key for life, so a former reader could compute the ids of new content.
    @Test func attackDedupAfterRekeyUsesTheNewBlobKey() throws {
        let dir = TemporaryDirectory()
        let (path, laptop, _, _) = try Self.twoDevices(dir, "dedup")
        let vault = try Vault.open(at: path, credential: .device(laptop.keyPair), random: SeededRandom(label: "dedup vault"), options: fast)
        let photo = SeededRandom(label: "photo").bytes(30_000)
        let old = try Self.store(vault, photo).blob
        try vault.add(EntryBody(created: Self.t0, text: "photo", attachments: [AttachmentReference(id: [1], blob: old, mediaType: "image/jpeg")]))
        try vault.compact(CompactionOptions(rekey: true), now: Self.t0 + Self.day)
        let again = try Self.store(vault, photo)
        #expect(again.blob != old)
        guard case .deduplicated = again else {
            Issue.record("the re-stored photo was stored a second time")
            return
        }
        let manifest = try vault.attachment(again.blob)
        #expect(manifest.aliases == [old])
        #expect(try vault.openAttachment(old).readAll() == photo)
    }
}

