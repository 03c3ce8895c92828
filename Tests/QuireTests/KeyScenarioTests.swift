import Foundation
import Testing
@_spi(Format) @_spi(Crypto) import Quire
@_spi(Crypto) import QuireCrypto
@_spi(Format) import QuireFormat
@_spi(Format) @_spi(Crypto) import QuireKeys
import QuireSystem

/// The key scenarios of the keys issue, each asserting who can open what
/// afterwards (`Spec/keys.md §6`, §8). Argon2id runs at its smallest cost.
@Suite struct KeyScenarioTests {
    static let t0 = KeyTestSupport.t0
    static let day = KeyTestSupport.day

    static func device(_ name: String) -> DeviceIdentity {
        try! DeviceIdentity.generate(name: name, now: t0, using: SeededRandom(label: "device " + name))
    }

    static func secret(_ text: String) -> SecureBytes { KeyTestSupport.secret(text) }
    static func texts(_ path: String, _ credential: Credential) throws -> [String] { try KeyTestSupport.texts(path, credential) }
    static func fold(_ copyPath: String, into target: Vault) throws { try KeyTestSupport.fold(copyPath, into: target) }
    static func entry(_ text: String, at time: Int64) -> EntryBody { EntryBody(created: time, text: text) }

    // MARK: - A lost phone

    @Test func lostPhone() throws {
        let dir = TemporaryDirectory()
        let path = dir.file("j.quire")
        let laptop = Self.device("Laptop"), phone = Self.device("Phone")
        let recovery = testRecoveryKey("lost phone")
        let random = SeededRandom(label: "lost phone")
        let vault = try Vault.create(
            at: path, setup: VaultSetup(name: "Journal", recoveryKey: recovery, device: laptop, now: Self.t0), random: random, options: fast)
        let member = try vault.enrollDevice(code: phone.code, name: "Phone", now: Self.t0 + Self.day)
        #expect(member.publicKey == phone.publicKey && member.name == "Phone")
        let onPhone = try Vault.open(at: path, credential: .device(phone.keyPair), random: random, options: fast)
        try onPhone.add(Self.entry("written on the phone", at: Self.t0 + 2 * Self.day))
        try vault.reload()
        try vault.add(Self.entry("written on the laptop", at: Self.t0 + 3 * Self.day))

        // The phone is lost: remove it (a new epoch without it).
        let removed = try vault.removeDevice(named: "Phone", now: Self.t0 + 10 * Self.day)
        #expect(removed.publicKey == phone.publicKey)
        try vault.add(Self.entry("after the phone was lost", at: Self.t0 + 11 * Self.day))
        let state = try vault.keyState()
        #expect(state.epoch == 2)
        #expect(state.devices.map(\.name) == ["Laptop"])
        #expect(state.removed.map(\.name) == ["Phone"])

        // Who can open what now.
        let all = ["after the phone was lost", "written on the laptop", "written on the phone"]
        #expect(try Self.texts(path, .device(laptop.keyPair)) == all)
        #expect(try Self.texts(path, .recoveryKey(recovery)) == all)
        // The phone still opens the file and reads what was written before
        // it was removed, but nothing after, and it can no longer write.
        let phoneView = try Vault.open(at: path, credential: .device(phone.keyPair), options: fast)
        #expect(try phoneView.entries().map(\.body.text).sorted() == ["written on the laptop", "written on the phone"])
        #expect(throws: QuireError.behindNewerKeyring(newerEpoch: 2, madeBy: "the device \"Laptop\"", wasMember: true)) { try phoneView.add(Self.entry("thief", at: Self.t0 + 12 * Self.day)) }
        #expect(throws: QuireError.behindNewerKeyring(newerEpoch: 2, madeBy: "the device \"Laptop\"", wasMember: true)) {
            try phoneView.rotateKeys(now: Self.t0 + 12 * Self.day)
        }
        // Removal is for good: the phone's key cannot be enrolled again.
        #expect(throws: QuireError.keys(.operationRefused(reason: "that device key was removed from this vault and cannot come back; on that device, make a new device key and enroll it"))) {
            try vault.enrollDevice(code: phone.code, name: "Phone again")
        }

        // A later rotation keeps the phone out and carries every key.
        try vault.rotateKeys(now: Self.t0 + 12 * Self.day)
        #expect(try vault.keyState().epoch == 3)
        #expect(try Self.texts(path, .device(laptop.keyPair)) == all)
        #expect(try Vault.open(at: path, credential: .device(phone.keyPair), options: fast).entries().count == 2)
        // On the lost phone, the statement says it is out of date.
        let phoneStatement = try Vault.open(at: path, credential: .device(phone.keyPair), options: fast).privacyStatement().text
        #expect(phoneStatement.hasSuffix("""
            Notes:
              - 1 entry revision in the file is sealed under keys this key does not hold: this statement cannot say who can decrypt it.
              - This key cannot open epoch 2, which the device "Laptop" made: this key was removed, or left out of it. This statement shows only what this key can see; ask an enrolled device for the current one.

            """))
        #expect(vault.verify().issues.isEmpty)

        let statement = try vault.privacyStatement()
        #expect(statement.text == """
            "Journal" (vault \(hex(vault.vaultID.bytes))): who can decrypt it. Dates are UTC.
            Standard mode: an enrolled device or the recovery key may add an escrow key. None is set.

            New records (epoch 3, since 2026-01-13) can be decrypted with:
              - the device "Laptop" (this device)
              - the recovery key

            Records already in the file:
              - 1 entry revision in epoch 2 (2026-01-11 to 2026-01-13): the same keys as new records.
              - 2 entry revisions in epoch 1 (2026-01-01 to 2026-01-11): the same keys as new records, and also:
                  - the device "Phone" (removed 2026-01-11)
                This key can read those records until the vault is compacted with a rekey.

            """)
    }

    // MARK: - A new laptop enrolled with the recovery key

    @Test func newLaptopEnrolledFromTheRecoveryKey() throws {
        let dir = TemporaryDirectory()
        let path = dir.file("j.quire")
        let phone = Self.device("Phone"), laptop = Self.device("Laptop")
        let recovery = testRecoveryKey("new laptop")
        let random = SeededRandom(label: "new laptop")
        let vault = try Vault.create(
            at: path, setup: VaultSetup(name: "Diary", recoveryKey: recovery, device: phone, now: Self.t0), random: random, options: fast)
        try vault.add(Self.entry("from the phone", at: Self.t0 + Self.day))

        // The laptop is not enrolled: its key opens nothing, and says so.
        #expect(throws: QuireError.keys(.wrongDeviceKey)) { try Vault.open(at: path, credential: .device(laptop.keyPair)) }
        // The user types the recovery code on the laptop; the laptop enrolls itself.
        let typed = recovery.code().lowercased().replacingOccurrences(of: "-", with: " ")
        let withRecovery = try Vault.open(at: path, credential: .recoveryKey(RecoveryKey(code: typed)), random: random, options: fast)
        try withRecovery.enrollDevice(code: laptop.code, name: "Laptop", now: Self.t0 + 2 * Self.day)
        #expect(try withRecovery.keyState().epoch == 1)

        // From now on the laptop opens with its own key and reads everything.
        let onLaptop = try Vault.open(at: path, credential: .device(laptop.keyPair), random: random, options: fast)
        try onLaptop.add(Self.entry("from the laptop", at: Self.t0 + 3 * Self.day))
        for credential: Credential in [.device(phone.keyPair), .device(laptop.keyPair), .recoveryKey(recovery)] {
            #expect(try Self.texts(path, credential) == ["from the laptop", "from the phone"])
        }
        #expect(try onLaptop.privacyStatement().text == """
            "Diary" (vault \(hex(vault.vaultID.bytes))): who can decrypt it. Dates are UTC.
            Standard mode: an enrolled device or the recovery key may add an escrow key. None is set.

            New records (epoch 1, since 2026-01-01) can be decrypted with:
              - the device "Phone"
              - the device "Laptop" (this device)
              - the recovery key

            Records already in the file:
              - 2 entry revisions in epoch 1: the same keys as new records.

            """)
    }

    // MARK: - Escrow-free in a vault that had an escrow key

    @Test func escrowFreeAfterAnEscrowKey() throws {
        let dir = TemporaryDirectory()
        let path = dir.file("j.quire")
        let laptop = Self.device("Laptop")
        let custodian = try X25519.KeyPair(seed: SecureBytes(randomCount: 32, using: SeededRandom(label: "custodian")))
        let recovery = testRecoveryKey("escrow")
        let random = SeededRandom(label: "escrow")
        var setup = VaultSetup(name: "Work notes", recoveryKey: recovery, device: laptop, now: Self.t0)
        setup.escrow = EscrowRecipient(publicKey: custodian.publicKey, label: "Employer IT")
        let vault = try Vault.create(at: path, setup: setup, random: random, options: fast)
        try vault.add(Self.entry("before", at: Self.t0 + Self.day))
        #expect(try Self.texts(path, .escrow(custodian)) == ["before"])

        // One device and no proof of the recovery key: refused.
        #expect(throws: QuireError.keys(.operationRefused(reason: "escrow-free mode removes the escrow key, so you need a way back in that you hold: confirm the recovery key, or enroll a second device first"))) {
            try vault.changeKeys(.enableEscrowFree(recoveryProof: nil))
        }
        #expect(throws: QuireError.keys(.operationRefused(reason: "that recovery key is not this vault's; escrow-free mode needs the vault's own recovery key or a second device"))) {
            try vault.changeKeys(.enableEscrowFree(recoveryProof: testRecoveryKey("someone else's")))
        }
        try vault.changeKeys(.enableEscrowFree(recoveryProof: recovery), now: Self.t0 + 5 * Self.day)
        try vault.add(Self.entry("after", at: Self.t0 + 6 * Self.day))

        // The escrow key still opens the file but reads only the old record.
        #expect(try Self.texts(path, .escrow(custodian)) == ["before"])
        #expect(try Self.texts(path, .device(laptop.keyPair)) == ["after", "before"])
        // No escrow key can be added now, nor escrow-free turned on twice.
        #expect(throws: QuireError.keys(.escrowRefused)) {
            try vault.changeKeys(.setEscrow(EscrowRecipient(publicKey: custodian.publicKey, label: "again")))
        }
        #expect(throws: QuireError.keys(.operationRefused(reason: "the vault is already escrow-free"))) {
            try vault.changeKeys(.enableEscrowFree(recoveryProof: recovery))
        }
        let state = try vault.keyState()
        #expect(state.isEscrowFree && state.escrow.isEmpty && state.retired == [custodian.publicKey])
        #expect(try vault.privacyStatement().text == """
            "Work notes" (vault \(hex(vault.vaultID.bytes))): who can decrypt it. Dates are UTC.
            Escrow-free since 2026-01-06: no escrow key can decrypt what is written from then on, and none can be added.

            New records (epoch 2, since 2026-01-06) can be decrypted with:
              - the device "Laptop" (this device)
              - the recovery key

            Records already in the file:
              - 1 entry revision in epoch 2: the same keys as new records.
              - 1 entry revision in epoch 1 (2026-01-01 to 2026-01-06): the same keys as new records, and also:
                  - the escrow key "Employer IT" (removed 2026-01-06)
                This key can read that record until the vault is compacted with a rekey.

            """)
    }

    // MARK: - A passphrase change

    /// Eight passphrase changes: the current passphrase, in the newest
    /// keyring, still opens (before the budget went newest first, the
    /// bootstrap tried slots in file order and the derivation budget went to
    /// the four oldest passphrases, so the current one was refused
    /// [`kdf_limits_exceeded`]). A passphrase replaced four or more times
    /// since opens in the second pass when it is among the four oldest
    /// (eleventh review R11-4; before, it was refused), and one between the
    /// four newest and the four oldest is refused for the budget
    /// (`Spec/keys.md §2.3`).
    @Test(.weakPassphraseCost) func passphraseChangedFiveTimes() throws {
        let dir = TemporaryDirectory()
        let path = dir.file("j.quire")
        var setup = VaultSetup(name: "Journal", recoveryKey: testRecoveryKey("five"), device: Self.device("Laptop"), now: Self.t0)
        setup.guardedPassphrase = Self.secret("p1")
        setup.passphraseOpsLimit = 1
        setup.passphraseMemLimitBytes = 8192
        let vault = try Vault.create(at: path, setup: setup, random: SeededRandom(label: "five changes"), options: fast)
        try vault.add(Self.entry("first", at: Self.t0 + 1))
        for n in 2...9 {
            try vault.setPassphrase(Self.secret("p\(n)"), opsLimit: 1, memLimitBytes: 8192, now: Self.t0 + Int64(n) * Self.day)
        }
        let current = try Vault.open(at: path, credential: .passphrase(Self.secret("p9")), writable: false, options: fast)
        #expect(try current.entries().map(\.body.text) == ["first"])
        #expect(try Self.texts(path, .passphrase(Self.secret("p6"))) == ["first"])
        #expect(try Self.texts(path, .passphrase(Self.secret("p2"))) == ["first"])
        #expect(throws: QuireError.keys(.kdfBudgetExceeded(untried: 1))) {
            try Vault.open(at: path, credential: .passphrase(Self.secret("p5")), writable: false, options: fast)
        }
    }

    @Test(.weakPassphraseCost) func passphraseChange() throws {
        let dir = TemporaryDirectory()
        let path = dir.file("j.quire")
        let laptop = Self.device("Laptop")
        let recovery = testRecoveryKey("passphrase")
        let random = SeededRandom(label: "passphrase")
        var setup = VaultSetup(name: "Journal", recoveryKey: recovery, device: laptop, now: Self.t0)
        setup.guardedPassphrase = Self.secret("old words")
        setup.passphraseOpsLimit = 1
        setup.passphraseMemLimitBytes = 8192
        let vault = try Vault.create(at: path, setup: setup, random: random, options: fast)
        try vault.add(Self.entry("under the old passphrase", at: Self.t0 + Self.day))
        #expect(try Self.texts(path, .passphrase(Self.secret("old words"))) == ["under the old passphrase"])

        try vault.setPassphrase(Self.secret("new words"), opsLimit: 1, memLimitBytes: 8192, now: Self.t0 + 2 * Self.day)
        try vault.add(Self.entry("under the new passphrase", at: Self.t0 + 3 * Self.day))

        // The new passphrase reads everything; the old one only what came before.
        #expect(try Self.texts(path, .passphrase(Self.secret("new words"))) == ["under the new passphrase", "under the old passphrase"])
        #expect(try Self.texts(path, .passphrase(Self.secret("old words"))) == ["under the old passphrase"])
        #expect(throws: QuireError.keys(.wrongPassphrase)) { try Vault.open(at: path, credential: .passphrase(Self.secret("other words"))) }
        // A passphrase reads but cannot change the keys.
        let withPassphrase = try Vault.open(at: path, credential: .passphrase(Self.secret("new words")), options: fast)
        #expect(throws: QuireError.keys(.operationRefused(reason: "only an enrolled device or the recovery key can change the keys; a passphrase or an escrow key can only read"))) {
            try withPassphrase.rotateKeys()
        }
        // A rotation by the device keeps the passphrase without knowing it.
        try vault.rotateKeys(now: Self.t0 + 4 * Self.day)
        try vault.add(Self.entry("after a rotation", at: Self.t0 + 5 * Self.day))
        #expect(try Self.texts(path, .passphrase(Self.secret("new words"))).count == 3)

        #expect(try vault.privacyStatement().text == """
            "Journal" (vault \(hex(vault.vaultID.bytes))): who can decrypt it. Dates are UTC.
            Standard mode: an enrolled device or the recovery key may add an escrow key. None is set.

            New records (epoch 3, since 2026-01-05) can be decrypted with:
              - the device "Laptop" (this device)
              - the recovery key
              - the passphrase

            Records already in the file:
              - 2 entry revisions in epochs 2–3 (since 2026-01-03): the same keys as new records.
              - 1 entry revision in epoch 1 (2026-01-01 to 2026-01-03): the same keys as new records, and also:
                  - a former passphrase (replaced 2026-01-03)
                This key can read that record until the vault is compacted with a rekey.

            """)

        // Removing the passphrase: it opens nothing new.
        try vault.setPassphrase(nil, now: Self.t0 + 6 * Self.day)
        try vault.add(Self.entry("without a passphrase", at: Self.t0 + 7 * Self.day))
        #expect(try Self.texts(path, .passphrase(Self.secret("new words"))).count == 3)
        #expect(try vault.keyState().passphrases.isEmpty)
    }

    // MARK: - Two devices rotate at once, then their copies are merged

    @Test func concurrentRotationsThenMerge() throws {
        let dir = TemporaryDirectory()
        let pathA = dir.file("j.quire"), pathB = dir.file("j (conflicted copy).quire")
        let laptop = Self.device("Laptop"), desktop = Self.device("Desktop")
        let recovery = testRecoveryKey("concurrent")
        let random = SeededRandom(label: "concurrent")
        let vault = try Vault.create(
            at: pathA, setup: VaultSetup(name: "Journal", recoveryKey: recovery, device: laptop, now: Self.t0), random: random, options: fast)
        try vault.enrollDevice(code: desktop.code, name: "Desktop", now: Self.t0 + Self.day)
        try vault.add(Self.entry("shared", at: Self.t0 + 2 * Self.day))
        // The sync tool makes two copies; each device rotates and writes on its own.
        try FileManager.default.copyItem(atPath: pathA, toPath: pathB)
        let a = try Vault.open(at: pathA, credential: .device(laptop.keyPair), random: random, options: fast)
        let b = try Vault.open(at: pathB, credential: .device(desktop.keyPair), random: random, options: fast)
        try a.rotateKeys(now: Self.t0 + 3 * Self.day)
        try b.rotateKeys(now: Self.t0 + 3 * Self.day + 1)
        try a.add(Self.entry("laptop after its rotation", at: Self.t0 + 4 * Self.day))
        try b.add(Self.entry("desktop after its rotation", at: Self.t0 + 4 * Self.day))
        #expect(try a.keyState().epoch == 2 && b.keyState().epoch == 2)

        // Fold the desktop's copy into the laptop's: two heads of epoch 2.
        try Self.fold(pathB, into: a)
        let merged = try a.keyState()
        #expect(merged.heads.count == 2)
        #expect(merged.heads.map(\.epoch) == [2, 2])
        let all = ["desktop after its rotation", "laptop after its rotation", "shared"]
        for credential: Credential in [.device(laptop.keyPair), .device(desktop.keyPair), .recoveryKey(recovery)] {
            #expect(try Self.texts(pathA, credential) == all)
        }
        #expect(a.verify().issues.isEmpty, "\(a.verify().issues)")

        // The next key change joins the heads: one keyring naming both, epoch 3.
        try a.rotateKeys(now: Self.t0 + 5 * Self.day)
        let joined = try a.keyState()
        #expect(joined.heads.count == 1 && joined.epoch == 3)
        #expect(joined.heads[0].record.publicPart.parents.count == 2)
        try a.add(Self.entry("after the join", at: Self.t0 + 6 * Self.day))
        for credential: Credential in [.device(laptop.keyPair), .device(desktop.keyPair), .recoveryKey(recovery)] {
            #expect(try Self.texts(pathA, credential) == ["after the join"] + all)
        }
    }

    @Test func concurrentRemovalIsStickyAcrossTheMerge() throws {
        let dir = TemporaryDirectory()
        let pathA = dir.file("j.quire"), pathB = dir.file("j.sync-conflict.quire")
        let laptop = Self.device("Laptop"), desktop = Self.device("Desktop"), phone = Self.device("Phone")
        let recovery = testRecoveryKey("sticky")
        let random = SeededRandom(label: "sticky")
        let vault = try Vault.create(
            at: pathA, setup: VaultSetup(name: "Journal", recoveryKey: recovery, device: laptop, now: Self.t0), random: random, options: fast)
        try vault.enrollDevice(code: desktop.code, name: "Desktop", now: Self.t0 + 1)
        try vault.enrollDevice(code: phone.code, name: "Phone", now: Self.t0 + 2)
        try FileManager.default.copyItem(atPath: pathA, toPath: pathB)
        // The laptop removes the phone while the desktop, unaware, rotates.
        let a = try Vault.open(at: pathA, credential: .device(laptop.keyPair), random: random, options: fast)
        let b = try Vault.open(at: pathB, credential: .device(desktop.keyPair), random: random, options: fast)
        try a.removeDevice(named: "Phone", now: Self.t0 + Self.day)
        try b.rotateKeys(now: Self.t0 + Self.day)
        try Self.fold(pathB, into: a)
        // The join leaves the phone out: removal wins over a concurrent rotation.
        try a.rotateKeys(now: Self.t0 + 2 * Self.day)
        let state = try a.keyState()
        #expect(state.devices.map(\.name).sorted() == ["Desktop", "Laptop"])
        #expect(state.removed.map(\.name) == ["Phone"])
        try a.add(Self.entry("after the join", at: Self.t0 + 3 * Self.day))
        #expect(try Self.texts(pathA, .device(phone.keyPair)).isEmpty)
        #expect(throws: QuireError.behindNewerKeyring(newerEpoch: 3, madeBy: "the device \"Laptop\"", wasMember: true)) {
            try Vault.open(at: pathA, credential: .device(phone.keyPair), options: fast).add(Self.entry("x", at: Self.t0 + 4 * Self.day))
        }
    }

    /// Two devices replace the recovery key at once, on two copies, which
    /// are then merged: both replacements stand, and the next key change
    /// first writes a join that keeps one recovery member and removes the
    /// other — a removed key must be a member of a parent, so the join,
    /// which has both branches as parents, makes that removal
    /// (`Spec/keys.md §6.9`).
    @Test func concurrentRecoveryReplacementsAreJoined() throws {
        let dir = TemporaryDirectory()
        let pathA = dir.file("j.quire"), pathB = dir.file("j (conflicted copy).quire")
        let laptop = Self.device("Laptop"), desktop = Self.device("Desktop")
        let old = testRecoveryKey("two replacements")
        let vault = try Vault.create(
            at: pathA, setup: VaultSetup(name: "Journal", recoveryKey: old, device: laptop, now: Self.t0),
            random: SeededRandom(label: "two replacements"), options: fast)
        try vault.enrollDevice(code: desktop.code, name: "Desktop", now: Self.t0 + 1)
        try FileManager.default.copyItem(atPath: pathA, toPath: pathB)
        let a = try Vault.open(at: pathA, credential: .device(laptop.keyPair), random: SeededRandom(label: "a"), options: fast)
        let b = try Vault.open(at: pathB, credential: .device(desktop.keyPair), random: SeededRandom(label: "b"), options: fast)
        let newA = testRecoveryKey("replacement a"), newB = testRecoveryKey("replacement b")
        try a.changeKeys(.replaceRecoveryKey(newRecoveryPublicKey: try newA.publicKey()), now: Self.t0 + Self.day)
        try b.changeKeys(.replaceRecoveryKey(newRecoveryPublicKey: try newB.publicKey()), now: Self.t0 + Self.day)
        try Self.fold(pathB, into: a)
        #expect(try a.keyState().heads.count == 2)
        // The writer asks which code the user holds (third review, item 7).
        #expect(try a.recoveryKeyChoices().map(\.publicKey) == [try newA.publicKey(), try newB.publicKey()])
        // Each says when it was made, as a `Date` (issue 13, need 6).
        let madeAt = Date(timeIntervalSince1970: Double(Self.t0 + Self.day) / 1000)
        #expect(try a.recoveryKeyChoices().map(\.created) == [madeAt, madeAt])
        try a.keepRecoveryKey(try newA.publicKey())
        try a.rotateKeys(now: Self.t0 + 2 * Self.day)
        let state = try a.keyState()
        #expect(state.heads.count == 1)
        #expect(state.epoch == 4)
        #expect(state.members.filter { $0.role == "recovery" }.map(\.publicKey) == [try newA.publicKey()])
        #expect(Set(state.removed.map(\.publicKey)) == [try old.publicKey(), try newB.publicKey()])
        let join = try #require(state.trusted.first { $0.content!.reason == "join" })
        #expect(join.content!.removed.map(\.publicKey) == [try newB.publicKey()])
        #expect(join.record.publicPart.parents.count == 2)
        try a.add(Self.entry("after the join", at: Self.t0 + 3 * Self.day))
        #expect(try Self.texts(pathA, .recoveryKey(newA)) == ["after the join"])
        #expect(try Self.texts(pathA, .recoveryKey(newB)).isEmpty)
    }

    // MARK: - A file rolled back to an older copy

    /// The device remembers the keyring heads it trusted; a file that lost
    /// one (an older copy put back) is flagged (`Spec/keys.md §7`).
    @Test func rollbackIsNoticed() throws {
        let dir = TemporaryDirectory()
        let path = dir.file("j.quire")
        let laptop = Self.device("Laptop"), phone = Self.device("Phone")
        let store = InMemoryDeviceKeyStore(identity: laptop)
        let created = try Vault.create(
            at: path, setup: VaultSetup(name: "J", recoveryKey: testRecoveryKey("rollback"), device: laptop, now: Self.t0),
            random: SeededRandom(label: "rollback"), options: fast)
        try created.enrollDevice(code: phone.code, name: "Phone", now: Self.t0 + Self.day)
        let old = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        let vault = try Vault.open(at: path, store: store, random: SeededRandom(label: "rollback 2"), options: fast)
        #expect(vault.keyWarnings.isEmpty)
        // The phone is lost and removed: the laptop remembers the new head.
        try vault.removeDevice(named: "Phone", now: Self.t0 + 2 * Self.day)
        let canonical = FileSystem.canonicalPath(path) ?? path
        let memory = try #require(try store.memory(of: vault.vaultID, path: canonical))
        #expect(memory.keyringHeads == [try vault.keyState().heads[0].id])
        #expect(try Vault.open(at: path, store: store, options: fast).keyWarnings.isEmpty)

        // Someone puts the older copy back, in which the phone is still enrolled.
        try Data(old).write(to: URL(fileURLWithPath: path))
        let rolledBack = try Vault.open(at: path, store: store, options: fast)
        #expect(rolledBack.keyWarnings == [.keys(.rollbackSuspected(reason: "1 keyring this device trusted is missing from it"))])
        #expect(rolledBack.keyWarnings[0].code == "rollback_suspected")
        // The memory is not overwritten by the older heads.
        #expect(try store.memory(of: vault.vaultID, path: canonical) == memory)
        // Writing is refused until the newer copy is merged back or the
        // file accepted: the rolled-back file would re-admit the phone.
        #expect(throws: QuireError.rolledBack(reason: "1 keyring this device trusted is missing from it")) {
            try rolledBack.add(Self.entry("on the old copy", at: Self.t0 + 3 * Self.day))
        }
        #expect(Array(try Data(contentsOf: URL(fileURLWithPath: path))) == old)
        let rolledStatement = try rolledBack.privacyStatement().text
        #expect(rolledStatement.contains("This file looks older than the copy this device last saw"), "\(rolledStatement)")
        // Opening with a bare credential does not consult the memory.
        #expect(try Vault.open(at: path, credential: .device(laptop.keyPair), options: fast).keyWarnings.isEmpty)
    }

    /// Opening through a store that holds no key says so, rather than
    /// "not enrolled".
    @Test func openingThroughAnEmptyStore() throws {
        let dir = TemporaryDirectory()
        let path = dir.file("j.quire")
        _ = try Vault.create(
            at: path, setup: VaultSetup(name: "J", recoveryKey: testRecoveryKey("empty store"), device: Self.device("Laptop"), now: Self.t0),
            random: SeededRandom(label: "empty store"), options: fast)
        #expect(throws: QuireError.deviceStore(.noKey)) { _ = try Vault.open(at: path, store: InMemoryDeviceKeyStore(), options: fast) }
        #expect(QuireError.deviceStore(.noKey).code == "no_device_key")
    }

    // MARK: - Enrollment and removal refusals

    @Test func enrollmentRefusals() throws {
        let dir = TemporaryDirectory()
        let path = dir.file("j.quire")
        let laptop = Self.device("Laptop")
        let vault = try Vault.create(
            at: path, setup: VaultSetup(name: "J", recoveryKey: testRecoveryKey("refusals"), device: laptop, now: Self.t0),
            random: SeededRandom(label: "refusals"), options: fast)
        let size = try FileSystem.size(path)
        func refused(_ reason: String, _ body: () throws -> Void) {
            #expect(throws: QuireError.keys(.operationRefused(reason: reason)), performing: body)
        }
        refused("that device is already enrolled, as \"Laptop\"") { try vault.enrollDevice(code: laptop.code, name: "Me") }
        refused("a member is already named \"Laptop\"; choose another name") { try vault.enrollDevice(code: Self.device("x").code, name: "laptop") }
        refused("a device name cannot contain the invisible or control character U+000A") { try vault.enrollDevice(code: Self.device("y").code, name: "two\nlines") }
        refused("a device cannot remove itself; remove it from another device or with the recovery key") { try vault.removeDevice(named: "Laptop") }
        refused("no enrolled device is named \"Tablet\"; the devices are \"Laptop\"") { try vault.removeDevice(named: "Tablet") }
        refused("no passphrase is set") { try vault.setPassphrase(nil) }
        #expect(throws: QuireError.keys(.deviceCodeInvalid(reason: "its checksum does not match; check for a mistyped character"))) {
            var code = Array(Self.device("z").code)
            code[0] = code[0] == "A" ? "B" : "A"
            try vault.enrollDevice(code: String(code), name: "Z")
        }
        #expect(throws: QuireError.keys(.deviceCodeInvalid(reason: "this is a recovery key, not a device code: keep it secret, and type the code the new device shows for itself instead"))) {
            try vault.enrollDevice(code: testRecoveryKey("refusals").code(), name: "Z")
        }
        // Nothing was written by any refusal.
        #expect(try FileSystem.size(path) == size)
    }
}

/// Tenth review, R10-3: a stolen phone, still a member, appends a frame of a
/// critical kind nobody knows in a commit it attests. That stops records,
/// not keys (`Spec/format.md §4.3`): the recovery key still opens the vault
/// and removes the phone, and the vault then reads again.
@Suite struct CriticalKindByAStolenMemberTests {
    @Test func theRecoveryKeyStillOpensAndRemovesTheAuthor() throws {
        let t0 = KeyTestSupport.t0
        let dir = TemporaryDirectory()
        let path = dir.file("j.quire")
        let laptop = KeyScenarioTests.device("Laptop"), phone = KeyScenarioTests.device("Phone")
        let recovery = testRecoveryKey("critical kind by a member")
        let random = SeededRandom(label: "critical kind by a member")
        let vault = try Vault.create(
            at: path, setup: VaultSetup(name: "Journal", recoveryKey: recovery, device: laptop, now: t0), random: random, options: fast)
        _ = try vault.enrollDevice(code: phone.code, name: "Phone", now: t0 + 1)
        _ = try vault.add(EntryBody(created: t0 + 2, text: "before the theft"))
        // The thief, with the phone's key, writes kind 0x3f attested by the phone.
        let onPhone = try Vault.open(at: path, credential: .device(phone.keyPair), random: random, options: fast)
        let keyID = try #require(onPhone.unlocked.keys.writeKey).id
        try onPhone.file.commit(random: SeededRandom(label: "thief"), options: fast, attestWith: phone.keyPair) {
            (tx: PendingCommit) throws(FormatError) in
            try tx.appendPlaintext(kind: RecordKind(rawValue: 0x3f), keyID: keyID, body: Array(repeating: 7, count: 40))
        }

        // Before: Vault.open threw unknown_critical_kind, for every credential.
        let withRecovery = try Vault.open(at: path, credential: .recoveryKey(recovery), random: random, options: fast)
        do {
            _ = try withRecovery.entries()
            Issue.record("records were released beside a member's unknown critical kind")
        } catch {
            #expect(error.code == "unknown_critical_kind")
        }
        do {
            _ = try withRecovery.add(EntryBody(created: t0 + 3, text: "not written"))
            Issue.record("a record was written beside a member's unknown critical kind")
        } catch {
            #expect(error.code == "unknown_critical_kind")
        }
        // Key changes are written: the recovery key removes the phone.
        let removed = try withRecovery.removeDevice(named: "Phone", now: t0 + 4)
        #expect(removed.publicKey == phone.publicKey)

        // The frame is now in a commit attested by a removed member: a
        // per-frame issue; the vault reads and writes again.
        let after = try Vault.open(at: path, credential: .recoveryKey(recovery), random: random, options: fast)
        #expect(after.file.fatalCriticalKind == nil)
        #expect(after.file.skippedCriticalKinds.map(\.code) == ["unknown_critical_kind"])
        _ = try after.add(EntryBody(created: t0 + 5, text: "after the removal"))
        #expect(try after.entries().map(\.body.text).sorted() == ["after the removal", "before the theft"])
        #expect(try KeyTestSupport.texts(path, .device(laptop.keyPair)) == ["after the removal", "before the theft"])
    }
}
