import Foundation
import Testing
@_spi(Format) @_spi(Crypto) @_spi(Testing) import Quire
@_spi(Crypto) import QuireCrypto
@_spi(Format) import QuireFormat
@_spi(Testing) @_spi(Format) @_spi(Crypto) import QuireKeys
import QuireSystem
import QuireTestSupport

/// Hostile input against the key manager (`Spec/keys.md §9`,
/// `Spec/threat-model.md §3`): files written by someone who holds no key or a
/// removed device's key, hostile key-store files, hostile codes. Each test
/// asserts the decided outcome; several began as findings of a hostile
/// review and guard their fixes.
@Suite struct KeyAttackTests {
    static let t0 = KeyTestSupport.t0
    static let day = KeyTestSupport.day

    static func device(_ name: String) -> DeviceIdentity {
        try! DeviceIdentity.generate(name: name, now: t0, using: SeededRandom(label: "breaker device " + name))
    }

    static func secret(_ text: String) -> SecureBytes { KeyTestSupport.secret(text) }
    static func texts(_ path: String, _ credential: Credential) throws -> [String] { try KeyTestSupport.texts(path, credential) }
    static func fold(_ copyPath: String, into target: Vault) throws { try KeyTestSupport.fold(copyPath, into: target) }
    static func bytes(_ path: String) -> [UInt8] { Array((try? Data(contentsOf: URL(fileURLWithPath: path))) ?? Data()) }

    /// A vault with a laptop and the recovery key; returns (vault, laptop, recovery).
    static func laptopVault(_ dir: TemporaryDirectory, _ label: String, name: String = "j.quire") throws -> (Vault, DeviceIdentity, RecoveryKey) {
        let laptop = device("Laptop " + label)
        let recovery = testRecoveryKey("breaker " + label)
        var laptopNamed = laptop
        laptopNamed.name = "Laptop"
        let vault = try Vault.create(
            at: dir.file(name), setup: VaultSetup(name: "Journal", recoveryKey: recovery, device: laptopNamed, now: t0),
            random: SeededRandom(label: "breaker " + label), options: fast)
        return (vault, laptop, recovery)
    }

    /// Someone who can write the file but holds no key appends keyring frames
    /// (one copy each) in a commit whose MAC no reader can check.
    static func outsiderAppend(_ path: String, _ frames: [(UInt32, [UInt8])]) throws {
        let f = try VaultFile(path: path, writable: true)
        let junk = EpochKey(epoch: 60_000, key: try SymmetricKey(using: SeededRandom(label: "outsider junk key")))
        f.verifyCommits(keys: KeySet(single: junk), trustedKeyrings: [:], attestors: [])
        try f.commit(random: SeededRandom(label: "outsider"), options: fast, attestWith: nil) { (tx: PendingCommit) throws(FormatError) in
            for (epoch, body) in frames {
                // A keyring frame's header names its key commitment's id.
                let id = (try? KeyringRecord(body: body, location: nil)).map { KeyID(commitment: $0.publicPart.keyCommit) } ?? junk.id
                try tx.appendPlaintext(kind: .keyring, keyID: id, epoch: epoch, body: body, trusted: false)
            }
        }
    }

    /// A keyring body that parses but that no one can open.
    static func opaqueKeyring(parents: [KeyringID], isEscrowFree: Bool = false, slots: [KeySlot] = [], epoch: UInt32, label: String) -> [UInt8] {
        let r = SeededRandom(label: label)
        return KeyringRecord(
            publicPart: KeyringPublic(
                epoch: epoch, keyCommit: r.bytes(32), parents: parents, links: parents.map { _ in r.bytes(KeyringRecord.linkByteCount) },
                isEscrowFree: isEscrowFree, slotEntries: slots.map { StoredSlot(slot: $0) }),
            nonce: r.bytes(24), sealed: r.bytes(64)
        ).encodedBody()
    }


    // MARK: - 3. A writer with no key: a forged newer epoch locks every writer out

    /// An outsider appends one keyring frame, epoch 9, that nobody can open
    /// (random sealed part and links, no slots, never signed). In format 1
    /// every device then believed it was removed and stopped writing; now an
    /// unopenable newer keyring counts only with a link a member of a trusted
    /// parent signed (`Spec/format.md §8.6`), so nobody stops.
    @Test func attackForgedNewerKeyringStopsNobody() throws {
        let dir = TemporaryDirectory()
        let (vault, laptop, recovery) = try Self.laptopVault(dir, "future epoch")
        let path = dir.file("j.quire")
        let head = try vault.keyState().heads[0].id
        try Self.outsiderAppend(path, [(9, Self.opaqueKeyring(parents: [head], epoch: 9, label: "future"))])
        let onLaptop = try Vault.open(at: path, credential: .device(laptop.keyPair), options: fast)
        #expect(onLaptop.unlocked.unreadableNewerEpoch == nil)
        try onLaptop.add(EntryBody(created: Self.t0, text: "still mine"))
        try onLaptop.rotateKeys(now: Self.t0 + 1)
        let withRecovery = try Vault.open(at: path, credential: .recoveryKey(recovery), options: fast)
        try withRecovery.add(EntryBody(created: Self.t0, text: "recovery writes"))
        #expect(Set(try Self.texts(path, .device(laptop.keyPair))) == ["still mine", "recovery writes"])
    }

    /// A removed phone keeps the epoch key from before its removal and its
    /// own signing key: it appends an epoch-50 keyring naming the keyring it
    /// was a member of, with a link it signed under that keyring's key, and
    /// slots only for itself. The laptop trusts the keyring that removed the
    /// phone, so the phone's link counts for nothing and the laptop keeps
    /// writing (`Spec/format.md §8.6`); an honest member's link still counts.
    @Test func attackRemovedDeviceLinkStopsNobody() throws {
        let dir = TemporaryDirectory()
        let (vault, laptop, _) = try Self.laptopVault(dir, "removed link")
        let path = dir.file("j.quire")
        let phone = Self.device("Phone")
        try vault.enrollDevice(code: phone.code, name: "Phone", now: Self.t0 + 1)
        let preHead = try vault.keyState().heads[0]
        try vault.removeDevice(named: "Phone", now: Self.t0 + 2)
        func future(signer: DeviceIdentity) throws -> [UInt8] {
            try Self.leavingOthersOut(vault, parent: preHead, epoch: 50, signer: signer, slotFor: phone, label: "removed link " + signer.name)
        }
        try Self.outsiderAppend(path, [(50, try future(signer: phone))])
        let onLaptop = try Vault.open(at: path, credential: .device(laptop.keyPair), options: fast)
        #expect(onLaptop.unlocked.unreadableNewerEpoch == nil)
        try onLaptop.add(EntryBody(created: Self.t0 + 4, text: "still mine"))
        // The same keyring linked by a current member (the laptop) counts.
        try Self.outsiderAppend(path, [(50, try future(signer: laptop))])
        let again = try Vault.open(at: path, credential: .device(laptop.keyPair), options: fast)
        #expect(again.unlocked.unreadableNewerEpoch == 50)
    }

    // MARK: - A member's keyring that leaves the others out (review C1)

    /// A keyring of a new epoch, child of `parent`, signed by `signer`,
    /// whose only slot is `slotFor`'s: a member leaving everyone else out.
    static func leavingOthersOut(
        _ vault: Vault, parent: KeyringInfo, epoch: UInt32, signer: DeviceIdentity, slotFor: DeviceIdentity, label: String
    ) throws -> [UInt8] {
        let random = SeededRandom(label: label)
        let ek = EpochKey(epoch: epoch, key: try SymmetricKey(using: random))
        let slot = try SlotCrypto.deviceSlot(for: ek, devicePublicKey: slotFor.publicKey, vaultID: vault.vaultID, random: random)
        return try KeyringBuilder.body(
            epochKey: ek, vaultID: vault.vaultID, parents: [KeyringBuilder.Parent(id: parent.id, key: parent.epochKey!)], isEscrowFree: false,
            slots: [StoredSlot(slot: slot)],
            content: KeyringContent(members: parent.content!.members, blobKey: try SymmetricKey(using: random), created: Self.t0 + 2, reason: label),
            signer: signer.keyPair, random: random)
    }

    /// Review C1: the thief holding the phone appends a child of the head in
    /// epoch 2 whose only slot is the phone's. Nobody else can open it, and
    /// a current member made it. Before, every other credential, the
    /// recovery key included, then counted as removed and could neither
    /// write nor change keys — so nobody could remove the thief. Now they
    /// are *behind* (`Spec/format.md §8.6`): no records, no other key
    /// change; the laptop may remove the member that made the keyring, and
    /// the recovery key may remove anyone. Afterwards both write again.
    @Test func attackMemberKeyringLeavingOthersOutFreezesNobody() throws {
        let dir = TemporaryDirectory()
        let (vault, laptop, recovery) = try Self.laptopVault(dir, "leave out")
        let path = dir.file("j.quire")
        let phone = Self.device("Phone"), desktop = Self.device("Desktop")
        try vault.enrollDevice(code: phone.code, name: "Phone", now: Self.t0 + 1)
        try vault.enrollDevice(code: desktop.code, name: "Desktop", now: Self.t0 + 1)
        let head = try vault.keyState().heads[0]
        try Self.outsiderAppend(path, [(2, try Self.leavingOthersOut(vault, parent: head, epoch: 2, signer: phone, slotFor: phone, label: "leave out"))])

        let onLaptop = try Vault.open(at: path, credential: .device(laptop.keyPair), options: fast)
        #expect(onLaptop.unlocked.newerKeyrings.map(\.epoch) == [2])
        #expect(onLaptop.unlocked.newerKeyrings.map { $0.signer?.publicKey } == [phone.publicKey])
        #expect(onLaptop.unlocked.removedIn == nil)
        let behind = QuireError.behindNewerKeyring(newerEpoch: 2, madeBy: "the device \"Phone\"", wasMember: true)
        #expect(behind.code == "behind_newer_keyring")
        #expect(throws: behind) { try onLaptop.add(EntryBody(created: Self.t0 + 3, text: "refused")) }
        #expect(throws: behind) { try onLaptop.rotateKeys(now: Self.t0 + 3) }
        #expect(throws: behind) { try onLaptop.removeDevice(named: "Desktop", now: Self.t0 + 3) }
        let statement = try onLaptop.privacyStatement().text
        #expect(statement.contains("  - This key cannot open epoch 2, which the device \"Phone\" made: this key was removed, or left out of it."))

        // On a copy, the laptop removes the member that made it.
        let copy = dir.file("copy.quire")
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        let laptopOnCopy = try Vault.open(at: copy, credential: .device(laptop.keyPair), options: fast)
        #expect(try laptopOnCopy.removeDevice(named: "Phone", now: Self.t0 + 4).publicKey == phone.publicKey)
        try laptopOnCopy.add(EntryBody(created: Self.t0 + 5, text: "laptop after"))
        #expect(try Self.texts(copy, .device(laptop.keyPair)) == ["laptop after"])
        #expect(try Self.texts(copy, .device(desktop.keyPair)) == ["laptop after"])

        // On the file, the recovery key removes it; everyone else writes again.
        let withRecovery = try Vault.open(at: path, credential: .recoveryKey(recovery), options: fast)
        #expect(withRecovery.unlocked.newerKeyrings.map(\.epoch) == [2])
        #expect(try withRecovery.removeDevice(named: "Phone", now: Self.t0 + 4).publicKey == phone.publicKey)
        let onDesktop = try Vault.open(at: path, credential: .device(desktop.keyPair), options: fast)
        #expect(onDesktop.unlocked.newerKeyrings.isEmpty)
        try onDesktop.add(EntryBody(created: Self.t0 + 5, text: "desktop after"))
        #expect(try Self.texts(path, .device(laptop.keyPair)) == ["desktop after"])
        #expect(try Self.texts(path, .device(phone.keyPair)).isEmpty)
    }

    /// Fourth review, K2: the thief holding the phone signs 4,097 sibling
    /// keyrings of epoch 2, children of the head, each wrapping only to the
    /// phone. Every other credential is behind all of them, and a writer
    /// listed every keyring it is behind in `answers`: 4,097 ids, over the
    /// 4,096 a keyring may list, so readers rejected every removal of the
    /// phone, the recovery key's included, and nobody could remove it. Now a
    /// keyring the recovery key signs lists none (rule 5.3 exempts it), and
    /// a device lists first the keyrings signed by the member it removes,
    /// at most 4,096 (`Spec/keys.md §6` "Who").
    @Test(.tags(.slow), .skippedByMakeCheck) func attackFloodOfSiblingKeyringsBlocksEveryRemoval() throws {
        let dir = TemporaryDirectory()
        let (vault, laptop, recovery) = try Self.laptopVault(dir, "k2 flood")
        let path = dir.file("j.quire")
        let phone = Self.device("Phone"), desktop = Self.device("Desktop")
        try vault.enrollDevice(code: phone.code, name: "Phone", now: Self.t0 + 1)
        try vault.enrollDevice(code: desktop.code, name: "Desktop", now: Self.t0 + 1)
        let head = try vault.keyState().heads[0]
        let flood = Limits.maxKeyringListCount + 1
        var frames: [(UInt32, [UInt8])] = []
        for i in 0..<flood {
            frames.append((2, try Self.leavingOthersOut(vault, parent: head, epoch: 2, signer: phone, slotFor: phone, label: "k2 flood \(i)")))
        }
        try Self.outsiderAppend(path, frames)
        let copy = dir.file("copy.quire")
        try FileManager.default.copyItem(atPath: path, toPath: copy)

        // The recovery key removes the phone; its keyring answers nothing.
        let withRecovery = try Vault.open(at: path, credential: .recoveryKey(recovery), options: fast)
        #expect(withRecovery.unlocked.newerKeyrings.count == flood)
        let removal = try withRecovery.changeKeys(.remove(publicKey: phone.publicKey), now: Self.t0 + 4)
        for credential in [Credential.device(desktop.keyPair), .device(laptop.keyPair), .recoveryKey(recovery)] {
            let view = try Vault.open(at: path, credential: credential, options: fast)
            #expect(view.unlocked.keyrings.contains { $0.id == removal.id && $0.isTrusted })
            #expect(view.unlocked.newerKeyrings.isEmpty)
            #expect(try view.keyState().removed.map(\.name) == ["Phone"])
        }
        let onDesktop = try Vault.open(at: path, credential: .device(desktop.keyPair), options: fast)
        try onDesktop.add(EntryBody(created: Self.t0 + 5, text: "desktop after"))
        #expect(try Self.texts(path, .device(laptop.keyPair)) == ["desktop after"])

        // On the copy, the laptop removes it: it answers 4,096 of them.
        let laptopOnCopy = try Vault.open(at: copy, credential: .device(laptop.keyPair), options: fast)
        let answer = try laptopOnCopy.changeKeys(.remove(publicKey: phone.publicKey), now: Self.t0 + 4)
        let view = try Vault.open(at: copy, credential: .device(desktop.keyPair), options: fast)
        #expect(view.unlocked.keyrings.contains { $0.id == answer.id && $0.isTrusted })
        #expect(view.unlocked.newerKeyrings.isEmpty)
        #expect(try view.keyState().removed.map(\.name) == ["Phone"])
    }

    /// Fourth review, item 15 residual: device memory ranked a keyring by
    /// its first intact copy, which a keyless writer moves to the start of
    /// the file by inserting a copy (in a junk commit): with a member's 64
    /// heads after the real one, the real head was then forgotten. Now a
    /// keyring ranks by its epoch and depth in the key graph
    /// (`Spec/keys.md §7`): the inserted copy does not move it.
    @Test func attackEarlyCopyMovesARememberedHeadsRank() throws {
        let dir = TemporaryDirectory()
        let (vault, laptop, _) = try Self.laptopVault(dir, "rank")
        let path = dir.file("j.quire")
        try vault.rotateKeys(now: Self.t0 + 1)
        let s = try VaultFile(path: path).structure
        let original = try #require(s.frames[s.groups[1].members].first { $0.header.kind == .keyring })
        var bytes = Self.bytes(path)
        let copy = Array(bytes[Int(original.location.offset)..<Int(original.end)])
        let junk = FrameHeader(kind: .commit, flags: 0, keyID: original.header.keyID, bodyLength: UInt32(CommitChain.bodyByteCount)).encoded()
            + [UInt8](repeating: 0x33, count: CommitChain.bodyByteCount)
        bytes.insert(contentsOf: copy + junk, at: Int(s.frames[s.groups[0].commitFrame].end))
        try Data(bytes).write(to: URL(fileURLWithPath: path))

        let reopened = try Vault.open(at: path, credential: .device(laptop.keyPair), options: fast)
        let head = try #require(try reopened.keyState().heads.first)
        let moved = original.location.offset + UInt64(copy.count + junk.count)
        #expect(head.location.offset < moved)
        #expect(reopened.memoryRank(of: head) == VaultMemory.KeyringRank(epoch: 2, depth: 1))
    }

    /// A vault made by a laptop ("Laptop <label>") with a desktop enrolled
    /// ("Desktop"), copied: the laptop's handle on the vault and the
    /// desktop's on the copy, as two synced devices before a merge.
    static func laptopAndDesktopCopies(_ dir: TemporaryDirectory, _ label: String) throws -> (String, String, Vault, Vault) {
        let pathA = dir.file("j.quire"), pathB = dir.file("j (copy).quire")
        let laptop = Self.device("Laptop " + label), desktop = Self.device("Desktop " + label)
        let vault = try Vault.create(
            at: pathA, setup: VaultSetup(name: "Journal", recoveryKey: testRecoveryKey(label), device: laptop, now: Self.t0),
            random: SeededRandom(label: label), options: fast)
        try vault.enrollDevice(code: desktop.code, name: "Desktop", now: Self.t0 + 1)
        try FileManager.default.copyItem(atPath: pathA, toPath: pathB)
        let a = try Vault.open(at: pathA, credential: .device(laptop.keyPair), random: SeededRandom(label: label + " a"), options: fast)
        let b = try Vault.open(at: pathB, credential: .device(desktop.keyPair), random: SeededRandom(label: label + " b"), options: fast)
        return (pathA, pathB, a, b)
    }

    /// Third review, item 7: two devices replace the recovery key at once on
    /// two copies, which are merged. Before, the next key change (or the
    /// next record, which joins first) silently kept the first replacement
    /// in state order and removed the other: a user who held the other code
    /// lost recovery without being asked. Now the writer refuses until it is
    /// told which code to keep (`Spec/keys.md §6.9`): the error lists both.
    @Test func attackConcurrentRecoveryReplacementsJoinedWithoutAsking() throws {
        let dir = TemporaryDirectory()
        let (pathA, pathB, a, b) = try Self.laptopAndDesktopCopies(dir, "ask")
        try a.changeKeys(.replaceRecoveryKey(newRecoveryPublicKey: try testRecoveryKey("ask a").publicKey()), now: Self.t0 + 2)
        try b.changeKeys(.replaceRecoveryKey(newRecoveryPublicKey: try testRecoveryKey("ask b").publicKey()), now: Self.t0 + 2)
        try Self.fold(pathB, into: a)
        let before = Self.bytes(pathA)
        do {
            try a.rotateKeys(now: Self.t0 + 3)
            Issue.record("a join of two recovery-key replacements kept one without asking")
        } catch {
            #expect(error.code == "recovery_key_choice_needed")
        }
        do {
            try a.add(EntryBody(created: Self.t0 + 4, text: "needs a join first"))
            Issue.record("a record was written after a join that kept a recovery key without asking")
        } catch {
            #expect(error.code == "recovery_key_choice_needed")
        }
        let unchanged = Self.bytes(pathA) == before
        #expect(unchanged)

        // Told that the user holds the desktop's code, the join keeps it.
        let choices = try a.recoveryKeyChoices()
        #expect(Set(choices.map(\.madeBy)) == ["Laptop ask", "Desktop"])
        let desktops = try #require(choices.first { $0.madeBy == "Desktop" })
        try a.keepRecoveryKey(desktops.publicKey)
        try a.add(EntryBody(created: Self.t0 + 4, text: "after the join"))
        #expect(try a.keyState().recoveryMember?.publicKey == desktops.publicKey)
        #expect(try Self.texts(pathA, .recoveryKey(testRecoveryKey("ask b"))) == ["after the join"])
        #expect(try Self.texts(pathA, .recoveryKey(testRecoveryKey("ask a"))).isEmpty)
    }

    /// Fifth review, F7: device memory ranked a keyring by the file position
    /// of its first copy in a commit a member attested, and a keyless writer
    /// moves whole groups for free (the walk visits a moved group where its
    /// link says, so no verdict changes). Two heads — the laptop's epoch-3
    /// rotation and the desktop's concurrent epoch-2 rotation, merged —
    /// swapped rank when the laptop's group was moved to the end: with 64
    /// more heads, the one a keyless writer chose was forgotten. Now the
    /// rank is the keyring's epoch, then its depth in the key graph (signed
    /// content a keyless writer cannot move), then its id (`Spec/keys.md §7`).
    @Test func attackMovedGroupChangesRememberedHeadsRank() throws {
        let dir = TemporaryDirectory()
        let (pathA, pathB, a, b) = try Self.laptopAndDesktopCopies(dir, "rank move")
        let laptop = Self.device("Laptop rank move")
        try a.rotateKeys(now: Self.t0 + 2)
        try a.rotateKeys(now: Self.t0 + 3)
        try b.rotateKeys(now: Self.t0 + 2)
        try Self.fold(pathB, into: a)
        let merged = try Vault.open(at: pathA, credential: .device(laptop.keyPair), options: fast)
        let heads = try merged.keyState().heads
        #expect(heads.count == 2)
        let newest = try #require(heads.max { $0.epoch < $1.epoch })
        let before = merged.rememberedKeyrings()
        #expect(before.first == newest.id)

        // A keyless writer moves the group holding the epoch-3 keyring to the end.
        let s = merged.file.structure
        let g = try #require(s.groups.firstIndex { g in s.frames[g.members].contains { $0.location.offset == newest.location.offset } })
        var bytes = Self.bytes(pathA)
        let start = Int(s.frames[s.groups[g].members.lowerBound].location.offset), end = Int(s.frames[s.groups[g].commitFrame].end)
        let group = Array(bytes[start..<end])
        bytes.removeSubrange(start..<end)
        bytes.insert(contentsOf: group, at: Int(s.committedEnd) - group.count)
        try Data(bytes).write(to: URL(fileURLWithPath: pathA))
        let moved = try Vault.open(at: pathA, credential: .device(laptop.keyPair), options: fast)
        #expect(moved.file.commits.allVerified)
        #expect(moved.rememberedKeyrings() == before)
    }

    /// K2's writer rule at a lowered cap (8 instead of 4,096, the flood
    /// 10 keyrings): the desktop first signs one keyring leaving the others
    /// out, then the phone 9. The recovery key's removal of the phone lists
    /// no answers (before: all 10); the laptop's removal of the phone lists
    /// the phone's keyrings first, 8 of them (before: all 10, the desktop's
    /// first, in file order).
    @Test func attackFloodOfSiblingKeyringsAnswersCapped() throws {
        let dir = TemporaryDirectory()
        let (vault, laptop, recovery) = try Self.laptopVault(dir, "k2 capped")
        let path = dir.file("j.quire")
        let phone = Self.device("Phone"), desktop = Self.device("Desktop")
        try vault.enrollDevice(code: phone.code, name: "Phone", now: Self.t0 + 1)
        try vault.enrollDevice(code: desktop.code, name: "Desktop", now: Self.t0 + 1)
        let head = try vault.keyState().heads[0]
        var frames = [(UInt32(2), try Self.leavingOthersOut(vault, parent: head, epoch: 2, signer: desktop, slotFor: desktop, label: "k2 desktop"))]
        for i in 0..<9 {
            frames.append((2, try Self.leavingOthersOut(vault, parent: head, epoch: 2, signer: phone, slotFor: phone, label: "k2 capped \(i)")))
        }
        try Self.outsiderAppend(path, frames)
        let copy = dir.file("copy.quire")
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        try KeyState.$answersLimit.withValue(8) {
            let withRecovery = try Vault.open(at: path, credential: .recoveryKey(recovery), options: fast)
            let behind = withRecovery.unlocked.newerKeyrings
            #expect(behind.count == 10)
            let removal = try withRecovery.changeKeys(.remove(publicKey: phone.publicKey), now: Self.t0 + 4)
            let view = try Vault.open(at: path, credential: .device(laptop.keyPair), options: fast)
            let ring = try #require(view.unlocked.keyrings.first { $0.id == removal.id })
            #expect(ring.isTrusted)
            #expect(ring.content?.answers == [])

            let laptopOnCopy = try Vault.open(at: copy, credential: .device(laptop.keyPair), options: fast)
            let answer = try laptopOnCopy.changeKeys(.remove(publicKey: phone.publicKey), now: Self.t0 + 4)
            let phones = behind.filter { $0.signer?.publicKey == phone.publicKey }.map(\.id)
            let onCopy = try Vault.open(at: copy, credential: .device(laptop.keyPair), options: fast)
            let answered = try #require(onCopy.unlocked.keyrings.first { $0.id == answer.id })
            #expect(answered.content?.answers == Array(phones.prefix(8)))
        }
    }

    /// Third review, item 2: the laptop removes the stolen phone. The
    /// phone cannot open that removal, so it is behind, and §8.6 lets it
    /// remove the removal's signer: it signs a removal of the laptop from
    /// epoch 1. The two removals defied each other (mutual), so both
    /// stood: the laptop was removed too and could no longer write. The
    /// phone's writer now lists the removal it answers in `answers`, and
    /// rule 5.3 rejects a keyring whose signer a keyring it answers removed.
    @Test func attackRemovedDeviceAnswersItsOwnRemoval() throws {
        let dir = TemporaryDirectory()
        let (vault, laptop, recovery) = try Self.laptopVault(dir, "answers")
        let path = dir.file("j.quire")
        let phone = Self.device("Phone"), desktop = Self.device("Desktop")
        try vault.enrollDevice(code: phone.code, name: "Phone", now: Self.t0 + 1)
        try vault.enrollDevice(code: desktop.code, name: "Desktop", now: Self.t0 + 1)
        try vault.removeDevice(named: "Phone", now: Self.t0 + 2)
        let onPhone = try Vault.open(at: path, credential: .device(phone.keyPair), options: fast)
        #expect(onPhone.removedFromVault?.code == "behind_newer_keyring")
        let answer = try onPhone.changeKeys(.remove(publicKey: laptop.publicKey), now: Self.t0 + 3)
        // The desktop and the recovery key open both removals: the phone's
        // answer is rejected, the laptop stays a member and writes on.
        for credential in [Credential.device(desktop.keyPair), .recoveryKey(recovery)] {
            let view = try Vault.open(at: path, credential: credential, options: fast)
            #expect(view.removedFromVault == nil)
            #expect(try Set(view.keyState().devices.map(\.name)) == ["Desktop", "Laptop"])
            #expect(try view.keyState().removed.map(\.name) == ["Phone"])
            #expect(view.unlocked.keyrings.contains { $0.id == answer.id && !$0.isTrusted })
        }
        let onLaptop = try Vault.open(at: path, credential: .device(laptop.keyPair), options: fast)
        try onLaptop.add(EntryBody(created: Self.t0 + 4, text: "the laptop writes on"))
        #expect(try Self.texts(path, .device(desktop.keyPair)) == ["the laptop writes on"])
    }

    /// Review H1 through the vault API: the thief holding the phone
    /// replaces the recovery key with its own. The user's recovery key
    /// cannot open that keyring and is not refused for it: it locks down
    /// the phone and the desktop in one keyring whose parents leave out what
    /// the phone signed, and the replacement is cut (`Spec/keys.md §6.3`).
    @Test func replacedRecoveryKeyLocksDownTheThief() throws {
        let dir = TemporaryDirectory()
        let (vault, laptop, recovery) = try Self.laptopVault(dir, "lockdown")
        let path = dir.file("j.quire")
        let phone = Self.device("Phone"), desktop = Self.device("Desktop")
        try vault.enrollDevice(code: phone.code, name: "Phone", now: Self.t0 + 1)
        try vault.enrollDevice(code: desktop.code, name: "Desktop", now: Self.t0 + 1)
        let thiefRecovery = testRecoveryKey("thief's recovery key")
        let onPhone = try Vault.open(at: path, credential: .device(phone.keyPair), options: fast)
        try onPhone.changeKeys(.replaceRecoveryKey(newRecoveryPublicKey: try thiefRecovery.publicKey()), now: Self.t0 + 2)
        try vault.reload()
        #expect(try vault.keyState().members.first { $0.role == "recovery" }?.publicKey == (try thiefRecovery.publicKey()))

        // Only the recovery key locks down, and only devices it knows.
        #expect(throws: QuireError.keys(.operationRefused(reason: "only the recovery key removes several devices at once; open the vault with the recovery key"))) {
            try vault.lockDown(removingDevicesNamed: ["Phone"], now: Self.t0 + 3)
        }
        let withRecovery = try Vault.open(at: path, credential: .recoveryKey(recovery), options: fast)
        #expect(withRecovery.unlocked.newerKeyrings.map { $0.signer?.publicKey } == [phone.publicKey])
        #expect(throws: QuireError.keys(.operationRefused(reason: "no device is named \"Tablet\"; the devices are \"Laptop\", \"Phone\", \"Desktop\""))) {
            try withRecovery.lockDown(removingDevicesNamed: ["Tablet"], now: Self.t0 + 3)
        }
        let removed = try withRecovery.lockDown(removingDevicesNamed: ["phone", "Desktop"], now: Self.t0 + 3)
        #expect(Set(removed.map(\.publicKey)) == [phone.publicKey, desktop.publicKey])

        let onLaptop = try Vault.open(at: path, credential: .device(laptop.keyPair), options: fast)
        let state = try onLaptop.keyState()
        #expect(state.devices.map(\.name) == ["Laptop"])
        #expect(state.members.first { $0.role == "recovery" }?.publicKey == (try recovery.publicKey()))
        try onLaptop.add(EntryBody(created: Self.t0 + 4, text: "after the lockdown"))
        #expect(try Self.texts(path, .recoveryKey(recovery)) == ["after the lockdown"])
        #expect(try Self.texts(path, .device(phone.keyPair)).isEmpty)
        #expect(try Self.texts(path, .recoveryKey(thiefRecovery)).isEmpty)
    }

    /// Third review, item 9: the user's laptop replaces a leaked recovery
    /// key; whoever holds the old code locks the laptop out with it, from
    /// parents before the replacement, which is cut. Before, a cut by a
    /// recovery-signed keyring was news: the desktop, which had seen the
    /// replacement, went on writing under the old recovery key's state
    /// without a word. Now a remembered replacement cut by a keyring signed
    /// with the key it replaced is a suspected rollback (keys): the desktop
    /// warns and refuses to write until the user accepts it
    /// (`Spec/keys.md §7`, test 1).
    @Test func attackOldRecoveryCodeAnswersItsReplacementSilently() throws {
        let dir = TemporaryDirectory()
        let (vault, laptop, recovery) = try Self.laptopVault(dir, "answer")
        let path = dir.file("j.quire")
        let desktop = Self.device("Desktop")
        try vault.enrollDevice(code: desktop.code, name: "Desktop", now: Self.t0 + 1)
        let store = InMemoryDeviceKeyStore(identity: desktop)
        _ = try Vault.open(at: path, store: store, options: fast)
        let replacement = testRecoveryKey("the user's new recovery key")
        try vault.changeKeys(.replaceRecoveryKey(newRecoveryPublicKey: try replacement.publicKey()), now: Self.t0 + 2)
        _ = try Vault.open(at: path, store: store, options: fast)
        let withOldCode = try Vault.open(at: path, credential: .recoveryKey(recovery), options: fast)
        // The laptop enrolled the desktop: kept, or it goes with the laptop
        // (Spec/keys.md §6.3, suspects).
        _ = try withOldCode.lockDown(removingDevicesNamed: ["Laptop"], keepingEnrolled: [desktop.publicKey], now: Self.t0 + 3)
        let onDesktop = try Vault.open(at: path, store: store, options: fast)
        #expect(try onDesktop.keyState().devices.map(\.name) == ["Desktop"])
        #expect(onDesktop.keyWarnings.contains { $0.code == "rollback_suspected" })
        #expect(throws: QuireError.self) { try onDesktop.add(EntryBody(created: Self.t0 + 4, text: "refused until accepted")) }
        try onDesktop.acceptRollback()
        try onDesktop.add(EntryBody(created: Self.t0 + 4, text: "accepted"))
        _ = laptop
    }

    /// Review M5: on one copy the laptop enrolls the tablet (same epoch); on
    /// another, the desktop removes the phone (epoch 2, no slot for the
    /// tablet). After the copies are folded together the tablet is behind,
    /// not removed: it does not write and its memory does not mark it
    /// removed. Before, it marked itself removed for good and never wrote
    /// again; now, once a member writes the join, it writes again.
    @Test func concurrentRemovalLeavesANewDeviceBehindNotRemoved() throws {
        let dir = TemporaryDirectory()
        let (vault, _, _) = try Self.laptopVault(dir, "behind")
        let path = dir.file("j.quire"), copy = dir.file("copy.quire")
        let phone = Self.device("Phone"), desktop = Self.device("Desktop"), tablet = Self.device("Tablet")
        try vault.enrollDevice(code: phone.code, name: "Phone", now: Self.t0 + 1)
        try vault.enrollDevice(code: desktop.code, name: "Desktop", now: Self.t0 + 1)
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        try vault.enrollDevice(code: tablet.code, name: "Tablet", now: Self.t0 + 2)
        try Vault.open(at: copy, credential: .device(desktop.keyPair), options: fast).removeDevice(named: "Phone", now: Self.t0 + 2)
        try Self.fold(copy, into: vault)

        let store = InMemoryDeviceKeyStore(identity: tablet)
        let onTablet = try Vault.open(at: path, store: store, options: fast)
        #expect(onTablet.unlocked.newerKeyrings.map(\.epoch) == [2])
        #expect(onTablet.unlocked.removedIn == nil)
        #expect(throws: QuireError.behindNewerKeyring(newerEpoch: 2, madeBy: "the device \"Desktop\"")) {
            try onTablet.add(EntryBody(created: Self.t0 + 3, text: "refused"))
        }
        let canonical = FileSystem.canonicalPath(path) ?? path
        #expect(try store.memory(of: vault.vaultID, path: canonical)?.removedKey == nil)

        // The laptop's next write joins both branches, with a slot for the tablet.
        try vault.add(EntryBody(created: Self.t0 + 4, text: "laptop joins"))
        let again = try Vault.open(at: path, store: store, options: fast)
        #expect(again.unlocked.newerKeyrings.isEmpty && again.keyWarnings.isEmpty)
        try again.add(EntryBody(created: Self.t0 + 5, text: "tablet writes"))
        #expect(try Self.texts(path, .device(desktop.keyPair)) == ["laptop joins", "tablet writes"])
        #expect(try Self.texts(path, .device(phone.keyPair)).isEmpty)
    }

    /// The laptop remembers, as its head, a rotation the thief's phone
    /// signed. The recovery key removes the phone with the root's child as
    /// parent, which cuts that head: the removal is news, not a rollback,
    /// since a recovery member signed it (`Spec/keys.md §7`, test 1).
    @Test func recoveryRemovalCuttingARememberedHeadIsNotARollback() throws {
        let dir = TemporaryDirectory()
        let (vault, laptop, recovery) = try Self.laptopVault(dir, "news")
        let path = dir.file("j.quire")
        let phone = Self.device("Phone")
        try vault.enrollDevice(code: phone.code, name: "Phone", now: Self.t0 + 1)
        try Vault.open(at: path, credential: .device(phone.keyPair), options: fast).rotateKeys(now: Self.t0 + 2)
        let store = InMemoryDeviceKeyStore(identity: laptop)
        let seen = try Vault.open(at: path, store: store, options: fast)
        let thiefHead = try seen.keyState().heads.map(\.id)
        #expect(try seen.keyState().epoch == 2)
        try Vault.open(at: path, credential: .recoveryKey(recovery), options: fast).removeDevice(named: "Phone", now: Self.t0 + 3)
        let onLaptop = try Vault.open(at: path, store: store, options: fast)
        #expect(onLaptop.keyWarnings.isEmpty)
        #expect(try onLaptop.keyState().heads.map(\.id) != thiefHead)
        #expect(try onLaptop.keyState().devices.map(\.name) == ["Laptop"])
        try onLaptop.add(EntryBody(created: Self.t0 + 4, text: "after the recovery removal"))
        #expect(try Self.texts(path, .recoveryKey(recovery)) == ["after the recovery removal"])
    }

    /// A device left out by a member's keyring is not marked removed in its
    /// memory (`Spec/keys.md §7`); a removed device remembers the keyring it
    /// could not open instead, so a copy from before its removal, put
    /// back, does not let it write.
    @Test func beingLeftOutIsNotRemembered() throws {
        let dir = TemporaryDirectory()
        let (vault, laptop, _) = try Self.laptopVault(dir, "left out memory")
        let path = dir.file("j.quire")
        let phone = Self.device("Phone")
        try vault.enrollDevice(code: phone.code, name: "Phone", now: Self.t0 + 1)
        let old = Self.bytes(path)
        let head = try vault.keyState().heads[0]
        let store = InMemoryDeviceKeyStore(identity: laptop)
        let canonical = FileSystem.canonicalPath(path) ?? path
        // The phone leaves the laptop out: the laptop remembers that keyring,
        // not a removal.
        try Self.outsiderAppend(path, [(2, try Self.leavingOthersOut(vault, parent: head, epoch: 2, signer: phone, slotFor: phone, label: "left out"))])
        let onLaptop = try Vault.open(at: path, store: store, options: fast)
        let newer = try #require(onLaptop.unlocked.newerKeyrings.first)
        let memory = try #require(try store.memory(of: vault.vaultID, path: canonical))
        #expect(memory.removedKey == nil)
        #expect(Set(memory.keyringHeads) == [head.id, newer.id])
        // Put back without that keyring, the file is a rollback.
        try Data(old).write(to: URL(fileURLWithPath: path))
        let rolledBack = try Vault.open(at: path, store: store, options: fast)
        #expect(rolledBack.keyWarnings == [.keys(.rollbackSuspected(reason: "1 keyring this device trusted is missing from it"))])

        // The laptop removes the phone; the phone remembers the removal's
        // keyring, and the older copy does not let it write.
        try Data(old).write(to: URL(fileURLWithPath: path))
        let fresh = try Vault.open(at: path, credential: .device(laptop.keyPair), options: fast)
        try fresh.removeDevice(named: "Phone", now: Self.t0 + 2)
        let phoneStore = InMemoryDeviceKeyStore(identity: phone)
        let onPhone = try Vault.open(at: path, store: phoneStore, options: fast)
        #expect(onPhone.unlocked.newerKeyrings.map(\.epoch) == [2])
        let phoneMemory = try #require(try phoneStore.memory(of: vault.vaultID, path: canonical))
        #expect(phoneMemory.removedKey == nil)
        #expect(phoneMemory.keyringHeads.contains(onPhone.unlocked.newerKeyrings[0].id))
        try Data(old).write(to: URL(fileURLWithPath: path))
        let phoneOnOld = try Vault.open(at: path, store: phoneStore, options: fast)
        #expect(phoneOnOld.unlocked.newerKeyrings.isEmpty)
        #expect(throws: QuireError.rolledBack(reason: "1 keyring this device trusted is missing from it")) {
            try phoneOnOld.add(EntryBody(created: Self.t0 + 3, text: "thief on the old copy"))
        }
    }

    // MARK: - Keyring trust does not depend on file position (review H2)

    /// Someone who can write the file but holds no key copies the frame of
    /// the phone's enrollment keyring to the start of the file, before the
    /// root it descends from, followed by a commit frame under a key id
    /// nobody holds (so the original first commit still verifies from the
    /// zero head). The copy is now the keyring's first intact copy. When
    /// rule 5.1 required parents earlier in the file, the enrollment and
    /// everything after it became untrusted, and the phone could no longer
    /// open the vault at all; trust is now decided parents first, wherever
    /// the frames stand (`Spec/format.md §8.4`, rule 5.1).
    @Test func attackKeyringCopyBeforeItsParents() throws {
        let dir = TemporaryDirectory()
        let (vault, laptop, recovery) = try Self.laptopVault(dir, "copy before parents")
        let path = dir.file("j.quire")
        let phone = Self.device("Phone")
        try vault.enrollDevice(code: phone.code, name: "Phone", now: Self.t0 + 1)
        try vault.add(EntryBody(created: Self.t0 + 2, text: "after the phone joined"))
        let enrollment = try vault.keyState().heads[0].id
        let raw = Self.bytes(path)
        let file = try VaultFile(path: path, writable: false)
        let frame = try #require(file.structure.frames.first { $0.header.kind == .keyring && KeyringID(unchecked: $0.trailer) == enrollment })
        let copy = Array(raw[Int(frame.location.offset)..<Int(frame.end)])
        let junkCommit = FrameHeader(kind: .commit, flags: 0, keyID: KeyID(rawValue: 0x0F0F_0F0F_0F0F), bodyLength: UInt32(CommitChain.bodyByteCount))
            .encoded() + [UInt8](repeating: 0xA5, count: CommitChain.bodyByteCount)
        let forged = Array(raw[0..<64]) + copy + junkCommit + Array(raw[64...])
        try Data(forged).write(to: URL(fileURLWithPath: path))
        for credential: Credential in [.device(phone.keyPair), .device(laptop.keyPair), .recoveryKey(recovery)] {
            let opened = try Vault.open(at: path, credential: credential, options: fast)
            #expect(opened.unlocked.keyrings.filter(\.isTrusted).count == 2)
            #expect(try opened.keyState().heads.map(\.id) == [enrollment])
            #expect(try opened.keyState().devices.map(\.name).sorted() == ["Laptop", "Phone"])
        }
    }

    // MARK: - Inherited list sizes never block a writer (review H5)

    /// A member pads two sibling keyrings with 3,000 members each of a role
    /// that cannot sign (they need no slot). Writers used to carry every
    /// head's lists into the join, so the next key change — the recovery
    /// key's removal of that member included — "would exceed the limits"
    /// and was refused for good. Writers now carry only members that may
    /// sign, and `removed` and `retired` list only what a keyring removes or
    /// retires itself (`Spec/keys.md §5`, §6).
    @Test func attackPaddedListsDoNotBlockTheNextKeyChange() throws {
        let dir = TemporaryDirectory()
        let (vault, laptop, recovery) = try Self.laptopVault(dir, "padded lists")
        let path = dir.file("j.quire")
        let mallory = Self.device("Mallory")
        try vault.enrollDevice(code: mallory.code, name: "Mallory", now: Self.t0 + 1)
        let head = try vault.keyState().heads[0]
        let random = SeededRandom(label: "padding")
        func padded(_ label: String) throws -> [UInt8] {
            var members = head.content!.members
            for i in 0..<3_000 {
                let key = try Ed25519.KeyPair(using: SeededRandom(label: "\(label) \(i)")).publicKey
                members.append(KeyringMember(role: "observer", publicKey: key, name: "", added: 0))
            }
            var content = head.content!
            content.members = members
            content.reason = label
            return try KeyringBuilder.body(
                epochKey: head.epochKey!, vaultID: vault.vaultID, parents: [KeyringBuilder.Parent(id: head.id, key: head.epochKey!)],
                isEscrowFree: false, slots: head.record.publicPart.slotEntries, content: content, signer: mallory.keyPair, random: random)
        }
        try Self.outsiderAppend(path, [(head.epoch, try padded("padding a")), (head.epoch, try padded("padding b"))])
        let withRecovery = try Vault.open(at: path, credential: .recoveryKey(recovery), options: fast)
        #expect(try withRecovery.keyState().heads.count == 2)
        try withRecovery.removeDevice(named: "Mallory", now: Self.t0 + 2)
        let state = try withRecovery.keyState()
        #expect(state.heads.count == 1)
        #expect(state.devices.map(\.name) == ["Laptop"])
        #expect(state.removed.map(\.name) == ["Mallory"])
        // The new keyring lists its own removal and only the members that may sign.
        #expect(state.heads[0].content!.removed.map(\.name) == ["Mallory"])
        #expect(state.heads[0].content!.members.count == 2)
        try withRecovery.rotateKeys(now: Self.t0 + 3)
        let rotated = try withRecovery.keyState()
        #expect(rotated.heads[0].content!.removed.isEmpty)
        #expect(rotated.removed.map(\.name) == ["Mallory"])
        #expect(throws: QuireError.keys(.operationRefused(reason: "that device key was removed from this vault and cannot come back; on that device, make a new device key and enroll it"))) {
            try withRecovery.enrollDevice(code: mallory.code, name: "Mallory again", now: Self.t0 + 4)
        }
        #expect(try Self.texts(path, .device(laptop.keyPair)).isEmpty)
    }

    // MARK: - 4. Work proportional to a hostile keyring graph (no key needed)

    /// 1,000 keyring frames nobody can open, each naming the 64 before it
    /// as parents: only trusted keyrings enter the ancestor computation, so
    /// they cost a parse each (the walk over every ancestor set used to
    /// take 21 s here; the whole test now runs in about 0.5 s, debug build).
    @Test func manyUnopenableKeyringsAreCheap() throws {
        let dir = TemporaryDirectory()
        let (vault, laptop, _) = try Self.laptopVault(dir, "graph")
        let path = dir.file("j.quire")
        try vault.add(EntryBody(created: Self.t0, text: "mine"))
        var ids = [try vault.keyState().heads[0].id]
        var frames: [(UInt32, [UInt8])] = []
        for i in 0..<1000 {
            let body = Self.opaqueKeyring(parents: Array(ids.suffix(64)), epoch: 1, label: "g\(i)")
            ids.append(KeyringBuilder.id(ofBody: body))
            frames.append((1, body))
        }
        try Self.outsiderAppend(path, frames)
        let opened = try Vault.open(at: path, credential: .device(laptop.keyPair), options: fast)
        #expect(try opened.entries().map(\.body.text) == ["mine"])
        #expect(opened.unlocked.keyrings.filter(\.isTrusted).count == 1)
        try opened.add(EntryBody(created: Self.t0 + 1, text: "still writable"))
    }

    // MARK: - 3/4. Decoy passphrase slots

    /// 16 outsider keyrings, each with 256 passphrase slots of distinct
    /// salts, newest in the file: the budget holds (8 Argon2id runs: the 4
    /// newest triples, then the 4 first in file order), a wrong passphrase is
    /// refused loudly, with a message that names decoys, and the right one
    /// opens, as do the device and the recovery key (`Spec/keys.md §2.3`,
    /// the second pass; threat-model §3.3).
    @Test(.weakPassphraseCost) func decoyPassphraseSlotsSpendTheBudget() throws {
        let dir = TemporaryDirectory()
        let laptop = Self.device("Laptop decoy")
        var setup = VaultSetup(name: "J", recoveryKey: testRecoveryKey("decoy"), device: laptop, now: Self.t0)
        setup.guardedPassphrase = Self.secret("correct horse")
        setup.passphraseOpsLimit = 1
        setup.passphraseMemLimitBytes = 8192
        let vault = try Vault.create(at: dir.file("j.quire"), setup: setup, random: SeededRandom(label: "decoy"), options: fast)
        let path = dir.file("j.quire")
        let head = try vault.keyState().heads[0].id
        let random = SeededRandom(label: "decoy slots")
        var frames: [(UInt32, [UInt8])] = []
        for r in 0..<16 {
            let slots: [KeySlot] = (0..<Limits.maxSlotsPerKeyring).map { _ in
                .passphrase(salt: random.bytes(16), opsLimit: 1, memLimitBytes: 8192, publicKey: random.bytes(32), box: random.bytes(100))
            }
            frames.append((1, Self.opaqueKeyring(parents: [head], slots: slots, epoch: 1, label: "decoy \(r)")))
        }
        try Self.outsiderAppend(path, frames)
        // 4,096 decoys and the real slot: a wrong passphrase derives the 4
        // newest triples (the newest decoy keyring's first slots), then the
        // 4 first in file order (the real slot's and the first decoy
        // keyring's first 3), and leaves 4,089 untried. The right passphrase
        // opens in the second pass (Spec/keys.md §2.3; before it, the 4
        // newest decoys spent the whole budget and it was refused).
        #expect(throws: QuireError.keys(.kdfBudgetExceeded(untried: 16 * 256 + 1 - 2 * Limits.maxPassphraseDerivations))) {
            _ = try Vault.open(at: path, credential: .passphrase(Self.secret("wrong")), writable: false, options: fast)
        }
        let opened = try Vault.open(at: path, credential: .passphrase(Self.secret("correct horse")), writable: false, options: fast)
        #expect(opened.unlocked.keyrings.filter(\.isTrusted).count == 1)
        #expect(try Self.texts(path, .device(laptop.keyPair)).isEmpty)
        _ = try Vault.open(at: path, credential: .recoveryKey(testRecoveryKey("decoy")), writable: false, options: fast)
    }

    // MARK: - 2. Wrong credential vs damage

    /// One junk keyring frame (valid checksum, body not CBOR) appended by
    /// anyone: every wrong credential is then reported as a damaged keyring.
    @Test func junkKeyringLeavesWrongCredentialsWrong() throws {
        let dir = TemporaryDirectory()
        let (_, _, _) = try Self.laptopVault(dir, "junk")
        let path = dir.file("j.quire")
        try Self.outsiderAppend(path, [(1, Array("not a keyring".utf8))])
        func openError(_ c: Credential) -> QuireError? {
            do { _ = try Vault.open(at: path, credential: c, writable: false, options: fast); return nil } catch { return error }
        }
        let pass = openError(.passphrase(Self.secret("guess")))
        let dev = openError(.device(Self.device("stranger").keyPair))
        let rec = openError(.recoveryKey(testRecoveryKey("someone else")))
        #expect(pass == .keys(.noPassphrase))  // still a wrong credential: the vault has no passphrase
        #expect(dev == .keys(.wrongDeviceKey))
        #expect(rec == .keys(.wrongRecoveryKey))
    }

    /// Bit damage to both copies of an older keyring (e.g. the enrollment
    /// of a phone) — not a keyring the credential needs — also turns a
    /// wrong credential into "malformed".
    @Test func damagedUnrelatedKeyringLeavesWrongCredentialsWrong() throws {
        let dir = TemporaryDirectory()
        let (vault, _, _) = try Self.laptopVault(dir, "damage")
        let path = dir.file("j.quire")
        try vault.enrollDevice(code: Self.device("Phone").code, name: "Phone", now: Self.t0 + 1)
        let f = try VaultFile(path: path, writable: false)
        var data = Self.bytes(path)
        let keyringFrames = f.structure.frames.filter { $0.header.kind == .keyring }
        #expect(keyringFrames.count == 4)
        for frame in keyringFrames.suffix(2) { data[Int(frame.location.offset) + 30] ^= 0x40 }
        try Data(data).write(to: URL(fileURLWithPath: path))
        var err: QuireError?
        do { _ = try Vault.open(at: path, credential: .passphrase(Self.secret("guess")), writable: false, options: fast) } catch { err = error }
        #expect(err == .keys(.noPassphrase))  // still a wrong credential: the vault has no passphrase
    }

    /// A passphrase slot with absurd Argon2id parameters appended by an
    /// outsider: a wrong passphrase is reported as kdf_limits_exceeded.
    @Test(.weakPassphraseCost) func absurdArgonSlotIsRefusedAndReported() throws {
        let dir = TemporaryDirectory()
        let (vault, laptop, _) = try Self.laptopVault(dir, "absurd")
        let path = dir.file("j.quire")
        try vault.setPassphrase(Self.secret("right"), opsLimit: 1, memLimitBytes: 8192, now: Self.t0 + 1)
        let head = try vault.keyState().heads[0].id
        let absurd = KeySlot.passphrase(salt: Array(repeating: 7, count: 16), opsLimit: UInt64.max, memLimitBytes: UInt64.max, publicKey: Array(repeating: 9, count: 32), box: Array(repeating: 0, count: 100))
        try Self.outsiderAppend(path, [(1, Self.opaqueKeyring(parents: [head], slots: [absurd], epoch: 1, label: "absurd"))])
        // The right passphrase still opens. The absurd slot's keyring is
        // not linked (its link is random), so it is not tried and not
        // reported (Spec/format.md §8.5 step 2, the gate; before: a
        // kdf_limits_exceeded warning at it).
        let right = try Vault.open(at: path, credential: .passphrase(Self.secret("right")), writable: false, options: fast)
        #expect(right.unlocked.issues.isEmpty)
        _ = try Vault.open(at: path, credential: .device(laptop.keyPair), writable: false, options: fast)
        // A wrong one learns that a slot was refused for its cost: that slot
        // might have been the user's, so "wrong passphrase" would be a guess.
        #expect(throws: QuireError.keys(.kdfLimitsExceeded(opsLimit: .max, memLimitBytes: .max))) {
            _ = try Vault.open(at: path, credential: .passphrase(Self.secret("wrong")), writable: false, options: fast)
        }
    }

    // MARK: - 1. Refused operation, yet the vault changed

    /// The heads memory cannot be written (here: a directory sits at its
    /// path; in life: a full or read-only home). The keyring is committed,
    /// so the enrollment succeeds and the failure is a warning.
    @Test func headsWriteFailureIsAWarningAfterTheCommit() throws {
        let dir = TemporaryDirectory()
        let laptop = Self.device("Laptop heads")
        let store = FileDeviceKeyStore(directory: dir.file("home"))
        try store.create(laptop)
        _ = try Vault.create(at: dir.file("j.quire"), setup: VaultSetup(name: "J", recoveryKey: testRecoveryKey("heads"), device: laptop, now: Self.t0),
                             random: SeededRandom(label: "heads"), options: fast)
        let vault = try Vault.open(at: dir.file("j.quire"), store: store, options: fast)
        let headsPath = store.memoryPath(vault.vaultID, path: FileSystem.canonicalPath(dir.file("j.quire"))!)
        try FileManager.default.removeItem(atPath: headsPath)
        try FileManager.default.createDirectory(atPath: headsPath, withIntermediateDirectories: false)
        let before = Self.bytes(dir.file("j.quire"))
        let phone = Self.device("Phone")
        try vault.enrollDevice(code: phone.code, name: "Phone", now: Self.t0 + 1)
        #expect(Self.bytes(dir.file("j.quire")).count > before.count)
        #expect(vault.keyWarnings.map(\.code) == ["device_memory_not_saved"])
        #expect(try Self.texts(dir.file("j.quire"), .device(phone.keyPair)).isEmpty)
    }

    /// A damaged heads file (this device's memory of one vault) blocks
    /// opening the vault, and the message calls it "the device key" and
    /// tells the user to enroll the device again.
    @Test func damagedHeadsFileMessage() throws {
        let dir = TemporaryDirectory()
        let laptop = Self.device("Laptop heads2")
        let store = FileDeviceKeyStore(directory: dir.file("home"))
        try store.create(laptop)
        let v = try Vault.create(at: dir.file("j.quire"), setup: VaultSetup(name: "J", recoveryKey: testRecoveryKey("heads2"), device: laptop, now: Self.t0),
                                 random: SeededRandom(label: "heads2"), options: fast)
        _ = try Vault.open(at: dir.file("j.quire"), store: store, options: fast)
        let headsPath = store.memoryPath(v.vaultID, path: FileSystem.canonicalPath(dir.file("j.quire"))!)
        try Data("garbage\n".utf8).write(to: URL(fileURLWithPath: headsPath))
        chmod(headsPath, 0o600)
        var err: QuireError?
        do { _ = try Vault.open(at: dir.file("j.quire"), store: store, options: fast) } catch { err = error }
        #expect(err?.code == "device_key_damaged")
        #expect(err?.description.contains(headsPath) == true)
        #expect(err?.description.contains("vaults/recorded") == true)
    }

    // MARK: - Privacy statement truth

    /// An escrow label with a line feed could have written a line of the
    /// privacy statement: the writer refuses it (and the statement escapes
    /// names it did not write itself, see PrivacyStatementTests).
    @Test func escrowLabelCannotForgeTheStatement() throws {
        let dir = TemporaryDirectory()
        let (vault, _, _) = try Self.laptopVault(dir, "label")
        let escrow = try X25519.KeyPair(seed: Self.secret(String(repeating: "e", count: 32)))
        let label = "IT\nEscrow-free since 2026-01-01"
        #expect(throws: QuireError.keys(.operationRefused(reason: "an escrow label cannot contain the invisible or control character U+000A"))) {
            try vault.changeKeys(.setEscrow(EscrowRecipient(publicKey: escrow.publicKey, label: label)), now: Self.t0 + 1)
        }
    }

    /// The removed phone's own statement: what does it claim?
    @Test func removedDeviceStatement() throws {
        let dir = TemporaryDirectory()
        let (vault, _, _) = try Self.laptopVault(dir, "removed statement")
        let path = dir.file("j.quire")
        let phone = Self.device("Phone")
        try vault.enrollDevice(code: phone.code, name: "Phone", now: Self.t0 + 1)
        try vault.add(EntryBody(created: Self.t0 + 2, text: "before"))
        try vault.removeDevice(named: "Phone", now: Self.t0 + Self.day)
        try vault.add(EntryBody(created: Self.t0 + Self.day + 1, text: "after"))
        let phoneView = try Vault.open(at: path, credential: .device(phone.keyPair), writable: false, options: fast)
        let text = try phoneView.privacyStatement().text
        #expect(try Self.texts(path, .device(phone.keyPair)) == ["before"])
        // New records are in epoch 2, which the phone cannot read: it does not
        // call epoch 1 "new", and says why.
        #expect(!text.contains("New records"))
        #expect(text.contains("\nThe newest epoch this key can open (epoch 1, since 2026-01-01) can be decrypted with:\n"))
        #expect(text.hasSuffix("  - This key cannot open epoch 2, which the device \"Laptop\" made: this key was removed, or left out of it. This statement shows only what this key can see; ask an enrolled device for the current one.\n"))
    }

    /// Two copies: the laptop turns on escrow-free while the (offline)
    /// desktop sets an escrow key and rotates twice. After the union merge
    /// the vault is escrow-free, and the laptop's next write first joins the
    /// two heads (a new epoch without the escrow key): the escrow key reads
    /// nothing written after the merge.
    @Test func escrowFreeWinsOverAConcurrentEscrowKey() throws {
        let dir = TemporaryDirectory()
        let pathA = dir.file("j.quire"), pathB = dir.file("j.conflict.quire")
        let (created, laptop, _) = try Self.laptopVault(dir, "fork")
        let desktop = Self.device("Desktop")
        try created.enrollDevice(code: desktop.code, name: "Desktop", now: Self.t0 + 1)
        try FileManager.default.copyItem(atPath: pathA, toPath: pathB)
        let a = try Vault.open(at: pathA, credential: .device(laptop.keyPair), random: SeededRandom(label: "fork a"), options: fast)
        let b = try Vault.open(at: pathB, credential: .device(desktop.keyPair), random: SeededRandom(label: "fork b"), options: fast)
        try a.changeKeys(.enableEscrowFree(recoveryProof: nil), now: Self.t0 + Self.day)
        let escrow = try X25519.KeyPair(seed: Self.secret(String(repeating: "k", count: 32)))
        try b.changeKeys(.setEscrow(EscrowRecipient(publicKey: escrow.publicKey, label: "IT")), now: Self.t0 + Self.day)
        try b.rotateKeys(now: Self.t0 + Self.day + 1)
        try b.rotateKeys(now: Self.t0 + Self.day + 2)
        try Self.fold(pathB, into: a)
        let state = try a.keyState()
        #expect(state.isEscrowFree)
        try a.add(EntryBody(created: Self.t0 + 2 * Self.day, text: "written after escrow-free"))
        let statement = try a.privacyStatement().text
        let escrowReads = (try? Self.texts(pathA, .escrow(escrow))) ?? []
        #expect(escrowReads.isEmpty)
        #expect(try a.keyState().epoch == 4)
        #expect(try a.keyState().heads.count == 1)
        #expect(statement.contains("Escrow-free since 2026-01-02"))
        #expect(statement.contains("New records (epoch 4, since ") && statement.contains(":\n  - the device \"Laptop\" (this device)\n  - the device \"Desktop\"\n  - the recovery key\n\n"))
        #expect(try Self.texts(pathA, .device(desktop.keyPair)) == ["written after escrow-free"])
    }

    // MARK: - 3. Outsider / removed-device keyrings (these held)

    @Test func outsiderAndRemovedDeviceKeyringsAreNotTrusted() throws {
        let dir = TemporaryDirectory()
        let (vault, laptop, recovery) = try Self.laptopVault(dir, "outsider")
        let path = dir.file("j.quire")
        let phone = Self.device("Phone")
        try vault.enrollDevice(code: phone.code, name: "Phone", now: Self.t0 + 1)
        let preRemoval = try vault.keyState()
        let preHead = preRemoval.heads[0]
        try vault.removeDevice(named: "Phone", now: Self.t0 + 2)
        try vault.changeKeys(.enableEscrowFree(recoveryProof: recovery), now: Self.t0 + 3)
        try vault.add(EntryBody(created: Self.t0 + 4, text: "secret"))
        let honest = try vault.keyState()
        let outsider = try Ed25519.KeyPair(using: SeededRandom(label: "mallory"))
        let mallory = KeyringMember(role: "device", publicKey: outsider.publicKey, name: "Mallory", added: 0)
        let random = SeededRandom(label: "outsider rings")
        let blob = try SymmetricKey(using: random)
        let escrowPair = try X25519.KeyPair(seed: Self.secret(String(repeating: "m", count: 32)))
        var frames: [(UInt32, [UInt8])] = []
        // Parent keys: the removed phone holds epoch 1's; the outsider holds none
        // and puts in keys of its own (its links then do not open).
        func parentsWithKeys(_ ids: [KeyringID], known: [KeyringID: EpochKey]) throws -> [KeyringBuilder.Parent] {
            try ids.map { KeyringBuilder.Parent(id: $0, key: try known[$0] ?? EpochKey(epoch: 1, key: SymmetricKey(using: random))) }
        }
        let knownKeys: [KeyringID: EpochKey] = [preHead.id: preHead.epochKey!]
        func forged(epoch: UInt32, parents: [KeyringID], signer: Ed25519.KeyPair, members: [KeyringMember], escrowFree: Bool, key: SymmetricKey? = nil, escrowSlot: Bool = false, blobKey: SymmetricKey? = nil) throws -> [UInt8] {
            let ek = EpochKey(epoch: epoch, key: try key ?? SymmetricKey(using: random))
            var slots: [KeySlot] = []
            for m in members { slots.append(try SlotCrypto.deviceSlot(for: ek, devicePublicKey: m.publicKey, vaultID: vault.vaultID, random: random)) }
            slots.append(try SlotCrypto.deviceSlot(for: ek, devicePublicKey: laptop.publicKey, vaultID: vault.vaultID, random: random))
            if escrowSlot { slots.append(try SlotCrypto.escrowSlot(for: ek, escrowPublicKey: escrowPair.publicKey, vaultID: vault.vaultID, random: random)) }
            let content = KeyringContent(members: members + [KeyringMember(role: "device", publicKey: laptop.publicKey, name: "Laptop", added: 0)],
                                         escrow: escrowSlot ? [EscrowRecipient(publicKey: escrowPair.publicKey, label: "X")] : [],
                                         blobKey: blobKey ?? blob, created: Self.t0 + 5, reason: "forged")
            let recoveryMember = KeyringMember(role: "recovery", publicKey: try recovery.publicKey(), name: "Recovery key", added: 0)
            var full = content
            full.members = [recoveryMember] + content.members
            return try KeyringBuilder.body(
                epochKey: ek, vaultID: vault.vaultID, parents: try parentsWithKeys(parents, known: knownKeys), isEscrowFree: escrowFree,
                slots: slots.map { StoredSlot(slot: $0) }, content: full, signer: signer, random: random)
        }
        let heads = honest.heads.map(\.id)
        // 1. Outsider-signed successor of the real head, adding Mallory.
        frames.append((honest.epoch + 1, try forged(epoch: honest.epoch + 1, parents: heads, signer: outsider, members: [mallory], escrowFree: true)))
        // 2. Missing parent.
        frames.append((honest.epoch + 1, try forged(epoch: honest.epoch + 1, parents: [KeyringID(using: random)], signer: outsider, members: [mallory], escrowFree: true)))
        // 3. The removed phone forks from before its removal (it holds epoch 1's key), re-adding itself and dropping escrow-free, with an escrow slot.
        frames.append((1, try forged(epoch: 1, parents: [preHead.id], signer: phone.keyPair, members: [mallory, KeyringMember(role: "device", publicKey: phone.publicKey, name: "Phone", added: 0)], escrowFree: false,
                                      key: preHead.epochKey!.key, escrowSlot: true, blobKey: preRemoval.heads[0].content!.blobKey)))
        frames.append((2, try forged(epoch: 2, parents: [preHead.id], signer: phone.keyPair, members: [mallory], escrowFree: false, escrowSlot: true, blobKey: preRemoval.heads[0].content!.blobKey)))
        // 4. Escrow slot in an escrow-free keyring by the outsider.
        frames.append((honest.epoch + 1, try forged(epoch: honest.epoch + 1, parents: heads, signer: outsider, members: [], escrowFree: true, escrowSlot: true)))
        // 5. A new root keyring signed by the outsider.
        frames.append((1, try forged(epoch: 1, parents: [], signer: outsider, members: [mallory], escrowFree: false)))
        // 6. Replay of the pre-removal keyring (identical body).
        let raw = Self.bytes(path)
        let original = try VaultFile(path: path, writable: false)
        let preFrame = original.structure.frames.first { $0.header.kind == .keyring && KeyringID(unchecked: $0.trailer) == preHead.id }!
        frames.append((preHead.epoch, Array(raw[Int(preFrame.location.offset) + 16..<Int(preFrame.end) - 32])))
        // 7. Two real keyrings with their public parts swapped.
        let rings = honest.trusted
        if rings.count >= 2 {
            let x = rings[rings.count - 1].record, y = rings[rings.count - 2].record
            frames.append((x.epoch, KeyringRecord(publicPart: y.publicPart, nonce: x.nonce, sealed: x.sealed).encodedBody()))
            frames.append((y.epoch, KeyringRecord(publicPart: x.publicPart, nonce: y.nonce, sealed: y.sealed).encodedBody()))
        }
        try Self.outsiderAppend(path, frames)

        for credential: Credential in [.device(laptop.keyPair), .recoveryKey(recovery)] {
            let v = try Vault.open(at: path, credential: credential, options: fast)
            let s = try v.keyState()
            #expect(s.devices.map(\.name) == ["Laptop"])
            #expect(s.removed.map(\.name) == ["Phone"])
            #expect(s.isEscrowFree)
            #expect(s.escrow.isEmpty)
            #expect(s.epoch == honest.epoch)
            #expect(s.heads.map(\.id) == honest.heads.map(\.id))
            // Writing fails for any credential that cannot open every forged keyring (finding: forgedFutureEpoch…).
            if case .device = credential { try v.add(EntryBody(created: Self.t0 + 10, text: "after attack")) }
            let text = try v.privacyStatement().text
            #expect(!text.contains("Mallory"))
        }
        // Who can really read the new entry?
        #expect(try Self.texts(path, .device(laptop.keyPair)).contains("after attack"))
        #expect(((try? Self.texts(path, .device(phone.keyPair))) ?? []).contains("after attack") == false)
        #expect(((try? Self.texts(path, .device(outsider))) ?? []).contains("after attack") == false)
        #expect(((try? Self.texts(path, .escrow(escrowPair))) ?? []).contains("after attack") == false)
    }

    /// Review 18 R18-1: the stolen phone signs a keyring that lists the
    /// recovery key a second time, as a "device". Judged by who brought it
    /// in, the recovery key became a suspect, so its earlier lockdown of a
    /// stolen tablet counted as the thief's: the tablet's cut keyring (it
    /// had enrolled a puppet) became a parent, and the new lockdown, built
    /// on a cut keyring, was itself cut — the phone stayed a member and the
    /// removal said it was done. A recovery member's key is never a suspect
    /// now, and a removal that does not take throws.
    @Test func attackThiefListsTheRecoveryKeyAsADevice() throws {
        let dir = TemporaryDirectory()
        let (path, laptop, phone, recovery) = try AttackTests.twoDevices(dir, "recovery as device")
        let tablet = Self.device("Tablet"), puppet = Self.device("Puppet")
        let options = WriteOptions(synchronous: false)
        try Vault.open(at: path, credential: .device(laptop.keyPair), options: options).enrollDevice(
            code: tablet.code, name: "Tablet", now: Self.t0 + 2)
        try Vault.open(at: path, credential: .device(tablet.keyPair), options: options).enrollDevice(
            code: puppet.code, name: "Puppet", now: Self.t0 + 3)
        // A year ago: the tablet was stolen and the recovery key removed it
        // (and the puppet it enrolled).
        let withRecovery = try Vault.open(at: path, credential: .recoveryKey(recovery), options: options)
        try withRecovery.removeDevice(publicKey: tablet.keyPair.publicKey, now: Self.t0 + 4)
        #expect(try withRecovery.keyState().devices.map(\.name).sorted() == ["Laptop", "Phone"])

        // Now the phone is stolen: its thief lists the recovery key as a device.
        let v = try Vault.open(at: path, credential: .device(phone.keyPair), random: SeededRandom(label: "R18-1"), options: options)
        let unlocked = try KeyringEvaluator.unlock(v.file, with: .device(phone.keyPair))
        let trustedHead = unlocked.keyrings.last(where: \.isTrusted)
        let head = try #require(trustedHead)
        let key = try #require(head.epochKey)
        let members = try #require(head.content).members
            + [KeyringMember(role: "device", publicKey: try recovery.publicKey(), name: "Backup", added: Self.t0 + 5)]
        let r = SeededRandom(label: "R18-1 keyring")
        let body = try KeyringBuilder.body(
            epochKey: key, vaultID: v.file.vaultID, parents: [KeyringBuilder.Parent(id: head.id, key: key)], isEscrowFree: false,
            slots: head.record.publicPart.slotEntries,
            content: KeyringContent(members: members, blobKey: key.blobKey!, created: Self.t0 + 5, reason: "enroll"),
            signer: phone.keyPair, random: r)
        try v.file.commit(random: r, options: options, attestWith: phone.keyPair) { (tx: PendingCommit) throws(FormatError) in
            try tx.appendKeyring(keyID: key.id, epoch: key.epoch, body: body, trusted: false)
            tx.commitKey = key
        }

        let recoveryAgain = try Vault.open(at: path, credential: .recoveryKey(recovery), options: options)
        try recoveryAgain.removeDevice(publicKey: phone.keyPair.publicKey, now: Self.t0 + 6)
        let after = try Vault.open(at: path, credential: .device(laptop.keyPair), options: options).keyState()
        #expect(after.devices.map(\.name) == ["Laptop"])
        #expect(after.recoveryMember?.publicKey == (try recovery.publicKey()))
        let write = #expect(throws: QuireError.self) {
            try Vault.open(at: path, credential: .device(phone.keyPair), options: options).add(EntryBody(created: Self.t0 + 7, text: "thief"))
        }
        #expect(write?.code == "removed_from_vault" || write?.code == "behind_newer_keyring")
    }

    /// Fifteenth review R15-1 (format.md §8.6, merge vector
    /// `behind-keyring-held-not-reached`): the phone, a member, makes a
    /// keyring `F` of epoch 2 whose laptop slot wraps a key failing `F`'s
    /// commitment, so the laptop is behind `F`. Then the phone, holding `F`'s
    /// key, appends `G`: signed by a key that is no member, a laptop slot
    /// wrapping `G`'s own key, `parentKeys = [K_F]`. The laptop opens `G`
    /// (rule 3) and so reaches `F`'s key, but trusts no keyring with `F`'s
    /// `keyCommit`: it does not hold the key, and stays behind `F`. Before,
    /// a reached key excluded `F`: the laptop was not behind.
    @Test func keyReachedThroughAnUntrustedChildDoesNotHideANewerKeyring() throws {
        let dir = TemporaryDirectory()
        let (path, laptop, phone, recovery) = try AttackTests.twoDevices(dir, "held not reached")
        let options = WriteOptions(synchronous: false)
        let v = try Vault.open(at: path, credential: .device(phone.keyPair), random: SeededRandom(label: "R15-1 phone"), options: options)
        let root = try KeyringEvaluator.unlock(v.file, with: .device(phone.keyPair))
        let trustedRoot = root.keyrings.last(where: \.isTrusted)
        let parent = try #require(trustedRoot)
        let parentKey = try #require(parent.epochKey)
        let r = SeededRandom(label: "R15-1 F")
        let fKey = EpochKey(epoch: 2, key: try SymmetricKey(bytes: r.bytes(32)), blobKey: try SymmetricKey(bytes: r.bytes(32)))
        let wrong = EpochKey(epoch: 2, key: try SymmetricKey(bytes: r.bytes(32)))
        let fSlots = [
            try SlotCrypto.recoverySlot(for: fKey, recovery: recovery, vaultID: v.file.vaultID, random: r),
            try SlotCrypto.deviceSlot(for: fKey, devicePublicKey: phone.keyPair.publicKey, vaultID: v.file.vaultID, random: r),
            try SlotCrypto.deviceSlot(for: wrong, devicePublicKey: laptop.keyPair.publicKey, vaultID: v.file.vaultID, random: r),
        ]
        let members = try #require(parent.content).members
        let fBody = try KeyringBuilder.body(
            epochKey: fKey, vaultID: v.file.vaultID, parents: [KeyringBuilder.Parent(id: parent.id, key: parentKey)],
            isEscrowFree: false, slots: fSlots.map { StoredSlot(slot: $0) },
            content: KeyringContent(members: members, blobKey: fKey.blobKey!, created: Self.t0 + 10, reason: "rotate"),
            signer: phone.keyPair, random: r)
        try v.file.commit(random: r, options: options, attestWith: phone.keyPair) { (tx: PendingCommit) throws(FormatError) in
            try tx.appendKeyring(keyID: fKey.id, epoch: 2, body: fBody, trusted: false)
            tx.commitKey = fKey
        }
        let behindF = try KeyringEvaluator.unlock(VaultFile(path: path, writable: false), with: .device(laptop.keyPair))
        #expect(behindF.isBehind)
        #expect(behindF.newerKeyrings.map(\.epoch) == [2])
        // G: the phone holds F's key and hands it to the laptop through
        // G's parentKeys; G's signer is no member, so nobody trusts G.
        let byPhone = try KeyringEvaluator.unlock(VaultFile(path: path, writable: false), with: .device(phone.keyPair))
        let ringsOfEpoch2 = byPhone.keyrings.filter { $0.epoch == 2 }
        #expect(ringsOfEpoch2.count == 1)
        let fID = try #require(ringsOfEpoch2.first).id
        let g = SeededRandom(label: "R15-1 G")
        let gKey = EpochKey(epoch: 3, key: try SymmetricKey(bytes: g.bytes(32)), blobKey: try SymmetricKey(bytes: g.bytes(32)))
        let outsider = try Ed25519.KeyPair(using: g)
        let gSlot = try SlotCrypto.deviceSlot(for: gKey, devicePublicKey: laptop.keyPair.publicKey, vaultID: v.file.vaultID, random: g)
        let gBody = try KeyringBuilder.body(
            epochKey: gKey, vaultID: v.file.vaultID, parents: [KeyringBuilder.Parent(id: fID, key: fKey)], isEscrowFree: false,
            slots: [StoredSlot(slot: gSlot)],
            content: KeyringContent(members: members, blobKey: gKey.blobKey!, created: Self.t0 + 20, reason: "rotate"),
            signer: outsider, random: g)
        try v.file.commit(random: g, options: options, attestWith: phone.keyPair) { (tx: PendingCommit) throws(FormatError) in
            try tx.appendKeyring(keyID: gKey.id, epoch: 3, body: gBody, trusted: false)
            tx.commitKey = fKey
        }
        let afterG = try KeyringEvaluator.unlock(VaultFile(path: path, writable: false), with: .device(laptop.keyPair))
        #expect(!afterG.keyrings.contains { $0.isTrusted && $0.epoch > 1 })
        #expect(afterG.isBehind)
        #expect(afterG.newerKeyrings.map(\.epoch) == [2])
    }

    // MARK: - 5. Device key store

    @Test func keyStoreHostileFiles() throws {
        let dir = TemporaryDirectory()
        let good = FileDeviceKeyStore(directory: dir.file("good"))
        try good.create(Self.device("Good"))
        let goodBytes = Self.bytes(good.keyPath)
        func store(_ name: String, _ setup: (String) throws -> Void) throws -> FileDeviceKeyStore {
            let s = FileDeviceKeyStore(directory: dir.file(name))
            try FileManager.default.createDirectory(atPath: s.directory, withIntermediateDirectories: true)
            chmod(s.directory, 0o700)
            try setup(s.keyPath)
            return s
        }
        func write(_ bytes: [UInt8], _ path: String, mode: mode_t = 0o600) throws {
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            chmod(path, mode)
        }
        func loadResult(_ s: FileDeviceKeyStore) -> String {
            do { return "ok \(String(describing: try s.load()))" } catch { return "\(error.code): \(error)" }
        }
        var results: [String: String] = [:]
        results["truncated"] = loadResult(try store("t") { try write(Array(goodBytes.prefix(40)), $0) })
        results["empty"] = loadResult(try store("e") { try write([], $0) })
        results["oversized"] = loadResult(try store("o") { try write(goodBytes + Array(repeating: 0, count: 2000), $0) })
        results["directory"] = loadResult(try store("d") { try FileManager.default.createDirectory(atPath: $0, withIntermediateDirectories: false); chmod($0, 0o700) })
        results["fifo"] = loadResult(try store("f") { _ = mkfifo($0, 0o600) })
        results["0644"] = loadResult(try store("p") { try write(goodBytes, $0, mode: 0o644) })
        results["dev/zero link"] = loadResult(try store("z") { _ = symlink("/dev/zero", $0) })
        results["dangling link"] = loadResult(try store("dl") { _ = symlink("/nonexistent/quire", $0) })
        results["link to 0644"] = loadResult(try store("l") { p in
            try write(goodBytes, dir.file("elsewhere.key"), mode: 0o644)
            symlink(dir.file("elsewhere.key"), p)
        })
        // Damaged CBOR with a valid checksum: a non-canonical map, and a name with a bidi override.
        func forge(_ map: CBORMap) -> [UInt8] {
            let body = Array("QUIREDEV".utf8) + CBOREncoder.encode(.map(map))
            return body + BLAKE2b.hash(body, byteCount: 16)
        }
        var m = CBORMap()
        m[text: "version"] = .unsigned(1); m[text: "name"] = .text("evil\u{202E}txt.exe"); m[text: "created"] = .unsigned(0); m[text: "seed"] = .bytes(Array(repeating: 3, count: 32))
        results["bidi name"] = loadResult(try store("b") { try write(forge(m), $0) })
        m[text: "name"] = .text("ok"); m[text: "seed"] = .bytes(Array(repeating: 3, count: 31))
        results["short seed"] = loadResult(try store("s") { try write(forge(m), $0) })
        m[text: "seed"] = .text("x")
        results["seed wrong type"] = loadResult(try store("w") { try write(forge(m), $0) })
        m[text: "seed"] = .bytes(Array(repeating: 3, count: 32)); m[text: "version"] = .unsigned(2)
        results["version 2"] = loadResult(try store("v") { try write(forge(m), $0) })
        let notCBOR = Array("QUIREDEV".utf8) + [0xff, 0xff, 0xff]
        results["bad cbor"] = loadResult(try store("c") { try write(notCBOR + BLAKE2b.hash(notCBOR, byteCount: 16), $0) })
        for (k, v) in results where k != "link to 0644" { #expect(!v.hasPrefix("ok"), "\(k) loaded: \(v)") }
        // A key readable by others through a symlink: the message tells the
        // user to chmod the link's path (chmod follows the link: fine), and names the link not the target.
        #expect(results["0644"]!.hasPrefix("device_key_permissions"))
        // A dangling symlink reads as "no key"; loadOrCreate then fails with "a key already exists".
        let dangling = FileDeviceKeyStore(directory: dir.file("dl"))
        var danglingResult = "ok"
        do { _ = try dangling.loadOrCreate(name: "X", now: 0, using: SystemRandom()) } catch { danglingResult = "\(error.code): \(error)" }
        #expect(!danglingResult.contains("already exists"), "misleading: \(danglingResult)")
        // A store on a bad key file must not overwrite it.
        let fifoStore = FileDeviceKeyStore(directory: dir.file("f"))
        #expect(throws: QuireError.self) { _ = try fifoStore.loadOrCreate(name: "X", now: 0, using: SystemRandom()) }
        // Names with control, bidi and invisible characters.
        for bad in ["", "a\u{0}b", "a\u{202E}b", "a\u{200B}b", "a\u{2028}b", "a\u{FEFF}b", String(repeating: "x", count: 65)] {
            #expect(throws: (any Error).self, "name \(bad.unicodeScalars.map { String($0.value, radix: 16) }) accepted") {
                _ = try DeviceIdentity.generate(name: bad, now: 0, using: SystemRandom())
            }
        }
        // Names that print as nothing are refused too (Hangul filler, braille
        // blank, a combining mark alone, a lone space).
        var accepted: [String] = []
        for odd in ["\u{3164}", "\u{2800}", "\u{0301}", "\u{115F}", " "] {
            if (try? DeviceIdentity.generate(name: odd, now: 0, using: SystemRandom())) != nil { accepted.append(odd.unicodeScalars.map { "U+" + String($0.value, radix: 16) }.joined()) }
        }
        #expect(accepted.isEmpty)
    }

    /// A key file owned by another user, mode 0600 (we run as root).
    @Test func keyStoreOwnedBySomeoneElse() throws {
        let dir = TemporaryDirectory()
        let s = FileDeviceKeyStore(directory: dir.file("home"))
        try s.create(Self.device("Owned"))
        let rc = chown(s.keyPath, 65534, 65534)
        guard rc == 0, getuid() == 0 else { return }
        var result = "ok"
        do { _ = try s.load() } catch { result = "\(error)" }
        #expect(result != "ok", "a device key owned by another user (uid 65534) is used without complaint")
    }

    @Test func keyStoreConcurrentLoadOrCreate() throws {
        for round in 0..<10 {
            let dir = TemporaryDirectory()
            let s = FileDeviceKeyStore(directory: dir.file("home"))
            let n = 8
            final class Box: @unchecked Sendable { var items: [(String, Bool)?]; let lock = NSLock(); init(_ n: Int) { items = Array(repeating: nil, count: n) } }
            let box = Box(n)
            DispatchQueue.concurrentPerform(iterations: n) { i in
                var r: (String, Bool)
                do {
                    let (id, created) = try s.loadOrCreate(name: "T\(i)", now: 0, using: SystemRandom())
                    r = (hex(id.publicKey), created)
                } catch {
                    r = ("error \(error)", false)
                }
                box.lock.lock(); box.items[i] = r; box.lock.unlock()
            }
            let all = box.items.map { $0! }
            let keys = Set(all.map(\.0))
            #expect(keys.count == 1, "round \(round): \(all)")
            #expect(all.filter(\.1).count == 1, "round \(round): created flags \(all.map(\.1))")
            #expect(hex(try s.load()!.publicKey) == all[0].0)
            let leftovers = try FileManager.default.contentsOfDirectory(atPath: s.directory).filter { $0.hasPrefix(".tmp-") }
            #expect(leftovers.isEmpty)
        }
    }

    @Test func keyStoreDamagedMemory() throws {
        let dir = TemporaryDirectory()
        let s = FileDeviceKeyStore(directory: dir.file("home"))
        let vid = VaultID(using: SeededRandom(label: "vid"))
        let memory = VaultMemory(
            vaultID: vid, path: "/j.quire", committedLength: 100, chainHead: [UInt8](repeating: 1, count: 32), newestClock: 5,
            keyringHeads: [KeyringID(using: SeededRandom(label: "k"))])
        try s.remember(memory)
        let p = try #require(try FileManager.default.contentsOfDirectory(atPath: dir.file("home") + "/vaults").first { $0.hasSuffix(".memory") })
        let file = dir.file("home") + "/vaults/" + p
        for (label, content) in [("non-utf8", [0xff, 0xfe]), ("short", Array("vault abc\n".utf8)),
                                 ("huge", Array(repeating: UInt8(ascii: "#"), count: 20_000))] as [(String, [UInt8])] {
            try Data(content).write(to: URL(fileURLWithPath: file))
            chmod(file, 0o600)
            var r = "ok"
            do { r = "ok \(String(describing: try s.memory(of: vid, path: "/j.quire")))" } catch { r = "\(error.code): \(error)" }
            #expect(r.hasPrefix("device_key_damaged"), "memory file \(label) read as \(r): rollback detection would be silently off")
        }
    }

    // MARK: - 6. Codes

    @Test func codesHostileInput() throws {
        let phone = Self.device("Phone")
        let recovery = testRecoveryKey("codes")
        func deviceErr(_ code: String) -> String {
            do { _ = try DeviceCode.parse(code); return "ok" } catch { return error.description }
        }
        func recoveryErr(_ code: String) -> String {
            do { _ = try RecoveryKey(code: code); return "ok" } catch { return error.description }
        }
        var typo = Array(phone.code)
        typo[5] = typo[5] == "Z" ? "Y" : "Z"
        let cyrillicO = phone.code.replacingOccurrences(of: "0", with: "О")  // U+041E
        let fullwidth = phone.code.replacingOccurrences(of: "1", with: "１")
        let megabyte = String(repeating: "A", count: 1 << 20)
        let megabyteDashes = String(repeating: "-", count: 1 << 20) + phone.code
        let cases: [(String, String)] = [
            ("typo", String(typo)), ("recovery as device", recovery.code()), ("cyrillic O", cyrillicO), ("fullwidth 1", fullwidth),
            ("empty", ""), ("1 MiB", megabyte), ("1 MiB dashes + code", megabyteDashes), ("lower case", phone.code.lowercased()),
            ("NBSP spaces", phone.code.replacingOccurrences(of: "-", with: "\u{00A0}")),
        ]
        // Every hostile code is refused (the 1 MiB ones stop early, after
        // 56 + 64 code characters, rather than read the whole string).
        for (label, code) in cases {
            // Case and dashes do not matter, however many dashes there are.
            let valid = label == "lower case" || label == "1 MiB dashes + code"
            #expect((deviceErr(code) == "ok") == valid, "\(label)")
        }
        #expect(deviceErr(phone.code.lowercased()) == "ok")
        #expect(deviceErr(recovery.code()).contains("recovery key"))
        #expect(recoveryErr(phone.code).contains("device code"))
        // The error for a recovery key given as a device code must not echo the code.
        #expect(!deviceErr(recovery.code()).contains(recovery.code().prefix(9)))
        for (label, code) in cases {
            #expect((recoveryErr(code) == "ok") == (label == "recovery as device"), "\(label)")
        }
        // Codes of invalid or small-order points, with a correct checksum.
        let p = Array("quire-device-code-v1".utf8)
        var points: [[UInt8]] = [Array(repeating: 0, count: 32), [1] + Array(repeating: 0, count: 31), Array(repeating: 0xff, count: 32)]
        points.append(Self.hexBytes("c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a"))  // order-8 point
        points.append(Self.hexBytes("ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f"))  // non-canonical -1
        for pk in points {
            let code = Self.crockford(pk + Array(BLAKE2b.hash(p + pk, byteCount: 16).prefix(3)))
            let r = deviceErr(code)
            #expect(r != "ok", "device code of point \(hex(pk)) accepted")
        }
    }

    static func crockford(_ bytes: [UInt8]) -> String {
        let alphabet = Array("0123456789ABCDEFGHJKMNPQRSTVWXYZ")
        var out = "", acc: UInt32 = 0, bits = 0, n = 0
        for b in bytes {
            acc = acc << 8 | UInt32(b); bits += 8
            while bits >= 5 {
                bits -= 5
                if n > 0 && n % 4 == 0 { out.append("-") }
                out.append(alphabet[Int((acc >> UInt32(bits)) & 31)]); n += 1
            }
        }
        return out
    }

    static func hexBytes(_ s: String) -> [UInt8] { QuireCrypto.bytes(fromHex: s)! }

    // MARK: - 7. Operations: refusals leave the file byte for byte

    @Test func refusedOperationsLeaveFileUnchanged() throws {
        let dir = TemporaryDirectory()
        var setup = VaultSetup(name: "J", recoveryKey: testRecoveryKey("ops"), device: Self.device("Laptop ops"), now: Self.t0)
        setup.isEscrowFree = true
        let laptop = setup.device!
        let vault = try Vault.create(at: dir.file("j.quire"), setup: setup, random: SeededRandom(label: "ops"), options: fast)
        let path = dir.file("j.quire")
        let phone = Self.device("Phone")
        try vault.enrollDevice(code: phone.code, name: "Phone", now: Self.t0 + 1)
        var log: [String] = []
        func refused(_ label: String, _ v: Vault? = nil, _ body: (Vault) throws -> Void) {
            let before = Self.bytes(path)
            do { try body(v ?? vault); log.append("\(label): NOT refused"); Issue.record("\(label) was not refused") } catch {
                log.append("\(label): \(error)")
            }
            let after = Self.bytes(path)
            let same = after.count == before.count && after == before
            #expect(same, "\(label) changed the file: \(before.count) → \(after.count) bytes")
        }
        let escrow = try X25519.KeyPair(seed: Self.secret(String(repeating: "q", count: 32)))
        refused("enroll twice") { try $0.enrollDevice(code: phone.code, name: "Phone 2") }
        refused("enroll same name other case") { try $0.enrollDevice(code: Self.device("x").code, name: "PHONE") }
        refused("remove self") { try $0.removeDevice(named: "Laptop ops") }
        refused("escrow in escrow-free") { try $0.changeKeys(.setEscrow(EscrowRecipient(publicKey: escrow.publicKey, label: "IT"))) }
        refused("escrow-free again") { try $0.changeKeys(.enableEscrowFree(recoveryProof: nil)) }
        refused("enroll recovery member as device") { v in
            let pk = try testRecoveryKey("ops").publicKey()
            try v.changeKeys(.enroll(publicKey: pk, name: "Sneaky"))
        }
        refused("enroll invalid point") { try $0.changeKeys(.enroll(publicKey: Array(repeating: 0, count: 32), name: "Zero")) }
        refused("enroll 31-byte key") { try $0.changeKeys(.enroll(publicKey: Array(repeating: 5, count: 31), name: "Short")) }
        refused("remove unknown key") { try $0.changeKeys(.remove(publicKey: Array(repeating: 5, count: 32))) }
        refused("passphrase absurd cost") { try $0.setPassphrase(Self.secret("p"), opsLimit: 1_000_000, memLimitBytes: 1 << 40) }
        refused("passphrase zero mem") { try $0.setPassphrase(Self.secret("p"), opsLimit: 1, memLimitBytes: 0) }
        let passOnly = try Vault.open(at: path, credential: .device(phone.keyPair), options: fast)
        try vault.removeDevice(named: "Phone", now: Self.t0 + 2)
        refused("enroll removed device") { try $0.enrollDevice(code: phone.code, name: "Phone again") }
        let phoneView = try Vault.open(at: path, credential: .device(phone.keyPair), options: fast)
        refused("removed device rotates", phoneView) { try $0.rotateKeys() }
        refused("removed device writes", phoneView) { try $0.add(EntryBody(created: 0, text: "x")) }
        refused("removed device enrolls a friend", phoneView) { try $0.enrollDevice(code: Self.device("friend").code, name: "Friend") }
        refused("stale handle of removed device writes", passOnly) { try $0.add(EntryBody(created: 0, text: "stale")) }
        // Escrow-free, no recovery proof, one device: must refuse.
        let dir2 = TemporaryDirectory()
        let (solo, _, _) = try Self.laptopVault(dir2, "solo")
        let soloBefore = Self.bytes(dir2.file("j.quire"))
        #expect(throws: QuireError.self) { try solo.changeKeys(.enableEscrowFree(recoveryProof: nil)) }
        #expect(throws: QuireError.self) { try solo.changeKeys(.enableEscrowFree(recoveryProof: testRecoveryKey("not this vault"))) }
        let soloSame = Self.bytes(dir2.file("j.quire")) == soloBefore
        #expect(soloSame)
        // Remove the last device with the recovery key: allowed; the vault stays openable by the recovery key.
        let byRecovery = try Vault.open(at: dir2.file("j.quire"), credential: .recoveryKey(testRecoveryKey("breaker solo")), options: fast)
        try byRecovery.removeDevice(named: "Laptop")
        #expect(try byRecovery.keyState().devices.isEmpty)
        #expect(try byRecovery.privacyStatement().currentReaders.map(\.phrase) == ["the recovery key"])
        _ = laptop
    }

    /// A removed device that had the vault open before its removal keeps
    /// writing: the commit notices the new keyring, reloads, and retries
    /// without checking again that this key may still write.
    @Test func staleHandleOfRemovedDeviceStopsWriting() throws {
        let dir = TemporaryDirectory()
        let (vault, laptop, _) = try Self.laptopVault(dir, "stale")
        let path = dir.file("j.quire")
        let phone = Self.device("Phone")
        try vault.enrollDevice(code: phone.code, name: "Phone", now: Self.t0 + 1)
        let onPhone = try Vault.open(at: path, credential: .device(phone.keyPair), options: fast)
        try vault.removeDevice(named: "Phone", now: Self.t0 + 2)
        let before = Self.bytes(path)
        var thrown: QuireError?
        do { try onPhone.add(EntryBody(created: Self.t0 + 3, text: "written by the removed phone")) } catch { thrown = error }
        let after = Self.bytes(path)
        #expect(thrown == .behindNewerKeyring(newerEpoch: 2, madeBy: "the device \"Laptop\"", wasMember: true))
        let same = after.count == before.count && after == before
        #expect(same, "file changed \(before.count) → \(after.count) bytes")
        #expect(try Self.texts(path, .device(laptop.keyPair)).isEmpty)
    }

    // MARK: - 8. Secrets in descriptions

    @Test func descriptionsHoldNoKeyBytes() throws {
        let dir = TemporaryDirectory()
        let id = Self.device("Secretive")
        let recovery = testRecoveryKey("secrets")
        let seed = try id.keyPair.seed().copyBytes()
        let rk = recovery.secret.storage.copyBytes()
        let store = FileDeviceKeyStore(directory: dir.file("home"))
        try store.create(id)
        let epoch = EpochKey(epoch: 1, key: try SymmetricKey(bytes: rk), blobKey: recovery.secret)
        let pass = Self.secret("hunter2")
        let things: [Any] = [
            id, id.keyPair, recovery, recovery.secret, store, epoch, pass,
            Credential.device(id.keyPair), Credential.recoveryKey(recovery), Credential.passphrase(pass), Credential.epochKey(epoch),
            KeySet(single: epoch),
            KeyringContent(members: [], parentKeys: [recovery.secret], blobKey: recovery.secret, created: 0, reason: "x"),
            try recovery.signingKeyPair(), try id.keyPair.agreementKeyPair(),
        ]
        var texts: [String] = []
        for t in things {
            texts.append(String(describing: t)); texts.append(String(reflecting: t))
            var d = ""; dump(t, to: &d); texts.append(d)
        }
        // Errors that carry paths or reasons.
        texts.append(DeviceStoreError.damaged(path: store.keyPath, reason: "x").description)
        let forms: [[UInt8]] = [seed, rk]
        for secretBytes in forms {
            let needles = [hex(secretBytes), hex(secretBytes).uppercased(), Self.crockford(secretBytes).replacingOccurrences(of: "-", with: ""),
                           String(Self.crockford(secretBytes).prefix(14)), secretBytes.prefix(8).map(String.init).joined(separator: ", ")]
            for text in texts {
                let flat = text.replacingOccurrences(of: "-", with: "")
                for n in needles { #expect(!flat.contains(n) && !text.contains(n), "secret bytes appear in: \(text.prefix(300))") }
            }
        }
        // The recovery code is shown only by code(): description hides it.
        #expect(!"\(recovery)".contains(recovery.code().prefix(9)))
        #expect(!"\(pass)".contains("hunter2"))
    }
}
