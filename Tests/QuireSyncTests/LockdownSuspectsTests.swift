import Foundation
@_spi(Crypto) @_spi(Format) import Quire
import QuireTestSupport
import Testing

/// A removal by the recovery key judges each reader by the keyring that
/// brought it in (`Spec/keys.md §6.3`, *suspects*): a device, passphrase or
/// custodian that only the removed device's keyrings (or its puppets')
/// brought in goes with it, whoever built on it since, unless the user
/// keeps the device. Found by the seventeenth review (F1, F2) and its
/// follow-up (17b G1, G3).
@Suite struct LockdownSuspectsTests {
    /// Seventeenth review F2: the stolen phone enrols a puppet and sets a
    /// passphrase only its thief knows; the laptop merges the copy and
    /// rotates (a join that lists the puppet and wraps the passphrase). The
    /// recovery key's removal of the phone removes the puppet and drops the
    /// passphrase: the laptop's rotation carried them, the phone's keyrings
    /// brought them in. Before, the laptop's keyring vouched for both.
    @Test(.weakPassphraseCost) func anHonestRotationOnTheThiefsKeyringsVouchesForNoneOfItsReaders() throws {
        let c = try TwoCopies("lockdown F2")
        let puppet = device("Puppet")
        try c.onPhone(c.b).enrollDevice(code: puppet.code, name: "Puppet", now: t0 + 20)
        var typed = Array("the thief's passphrase".utf8)
        try c.onPhone(c.b).setPassphrase(try SecureBytes(consuming: &typed), opsLimit: 1, memLimitBytes: 8192)
        _ = try VaultMerge.merge(vaultAt: c.a, copyAt: c.b, credential: .device(c.laptop.keyPair), options: fast)
        try c.onLaptop(c.a).rotateKeys(now: t0 + 30)
        try c.onLaptop(c.a).add(EntryBody(created: t0 + 31, text: "laptop, after its rotation"))
        let recovery = try Vault.open(at: c.a, credential: .recoveryKey(c.recovery), options: fast)
        #expect(try recovery.devicesEnrolled(by: [c.phone.keyPair.publicKey]).map(\.name) == ["Puppet"])
        try recovery.removeDevice(publicKey: c.phone.keyPair.publicKey)
        let after = try Vault.open(at: c.a, credential: .recoveryKey(c.recovery), options: fast).keyState()
        #expect(after.member(withKey: c.phone.keyPair.publicKey) == nil)
        #expect(after.member(withKey: puppet.keyPair.publicKey) == nil)
        #expect(after.member(withKey: c.laptop.keyPair.publicKey) != nil)
        #expect(after.passphrases.isEmpty)
        #expect(try texts(c.a, .device(c.laptop.keyPair)) == ["laptop, after its rotation", "shared"])
    }

    /// Seventeenth review F1: the phone made the vault (with a passphrase)
    /// and signed every keyring — it enrolled the laptop, then, stolen, a
    /// puppet. No eligible keyring is the user's, so the removal builds on
    /// the phone's; it still removes every device only the phone enrolled
    /// (the user keeps the laptop) and drops the passphrase the phone set.
    /// Before, the puppet and the passphrase stayed.
    @Test(.weakPassphraseCost) func whenTheTargetSignedEveryKeyringItsReadersGoAllTheSame() throws {
        let dir = TemporaryDirectory()
        let path = dir.file("Journal.quire")
        let phone = device("Phone")
        let laptop = device("Laptop")
        let puppet = device("Puppet")
        let recoveryKey = try RecoveryKey(using: SeededRandom(label: "lockdown F1 recovery"))
        let vault = try Vault.create(
            at: path, setup: VaultSetup(name: "Journal", recoveryKey: recoveryKey, device: phone, now: t0),
            random: SeededRandom(label: "lockdown F1"), options: fast)
        var typed = Array("the user's passphrase".utf8)
        try vault.setPassphrase(try SecureBytes(consuming: &typed), opsLimit: 1, memLimitBytes: 8192)
        try vault.enrollDevice(code: laptop.code, name: "Laptop", now: t0 + 1)
        try vault.add(EntryBody(created: t0 + 2, text: "shared"))
        try vault.enrollDevice(code: puppet.code, name: "Puppet", now: t0 + 3)
        try Vault.open(at: path, credential: .device(laptop.keyPair), options: fast).add(EntryBody(created: t0 + 4, text: "laptop"))
        let copyPath = dir.file("Copy.quire")
        copy(path, copyPath)

        // Told nothing, the removal takes the laptop too: the file cannot
        // tell it from the puppet.
        let byDefault = try Vault.open(at: copyPath, credential: .recoveryKey(recoveryKey), options: fast)
        #expect(try Set(byDefault.devicesEnrolled(by: [phone.keyPair.publicKey]).map(\.name)) == ["Laptop", "Puppet"])
        try byDefault.removeDevice(publicKey: phone.keyPair.publicKey)
        #expect(try byDefault.keyState().devices.isEmpty)

        // Keeping the laptop: the puppet and the passphrase go, the laptop
        // reads on.
        let recovery = try Vault.open(at: path, credential: .recoveryKey(recoveryKey), options: fast)
        try recovery.removeDevice(publicKey: phone.keyPair.publicKey, keepingEnrolled: [laptop.keyPair.publicKey])
        let after = try Vault.open(at: path, credential: .recoveryKey(recoveryKey), options: fast).keyState()
        #expect(after.devices.map(\.name) == ["Laptop"])
        #expect(after.passphrases.isEmpty)
        #expect(after.removed.map(\.name).contains("Phone"))
        #expect(try texts(path, .device(laptop.keyPair)) == ["laptop", "shared"])
        try Vault.open(at: path, credential: .device(laptop.keyPair), options: fast).add(EntryBody(created: t0 + 5, text: "after"))
        let write = #expect(throws: QuireError.self) {
            try Vault.open(at: path, credential: .device(puppet.keyPair), options: fast).add(EntryBody(created: t0 + 6, text: "puppet"))
        }
        #expect(write?.code == "removed_from_vault" || write?.code == "behind_newer_keyring")
    }

    /// Review 24 R24-1: the stolen phone sets its own passphrase; the
    /// laptop rotates on it; the recovery key locks the phone down, which
    /// drops the passphrase. On a copy from before, the laptop rotated the
    /// keys on the phone's keyring too (carrying the passphrase),
    /// concurrently. Merged, the next
    /// join wrapped new epochs to the thief's passphrase again: the
    /// lockdown dropped it without retiring it.
    @Test(.weakPassphraseCost) func aDroppedPassphraseStaysOutAfterAConcurrentRotation() throws {
        let c = try TwoCopies("lockdown R24-1")
        var typed = Array("the thief's passphrase".utf8)
        try c.onPhone(c.a).setPassphrase(try SecureBytes(consuming: &typed), opsLimit: 1, memLimitBytes: 8192)
        let thiefs = try c.onLaptop(c.a).keyState().passphraseKeys
        #expect(thiefs.count == 1)
        let before = c.dir.file("Before.quire")
        copy(c.a, before)
        // The laptop builds on the phone's keyring: the lockdown's ancestry
        // then holds the passphrase, which it drops.
        try c.onLaptop(c.a).rotateKeys(now: t0 + 40)
        try Vault.open(at: c.a, credential: .recoveryKey(c.recovery), options: fast).removeDevice(publicKey: c.phone.keyPair.publicKey)
        let locked = try c.onLaptop(c.a).keyState()
        #expect(locked.passphrases.isEmpty)
        #expect(Set(locked.retired).isSuperset(of: thiefs))
        try c.onLaptop(before).rotateKeys(now: t0 + 50)
        let laptop = try c.onLaptop(c.a)
        _ = try laptop.merge(copyAt: before)
        try laptop.add(EntryBody(created: t0 + 60, text: "after the merge"))
        let after = try c.onLaptop(c.a).keyState()
        #expect(after.passphrases.isEmpty)
        #expect(after.member(withKey: c.phone.keyPair.publicKey) == nil)
    }

    /// Review 21 R21-3: the phone made the vault, so its root brought in
    /// the recovery key too; the user, phone lost, enrols a new phone with
    /// the recovery key. The list of devices the removal takes unless kept
    /// named the new phone (the recovery key counted as a suspect there,
    /// never in the removal itself), which the removal then kept.
    @Test func theListOfEnrolledDevicesExemptsTheSigningRecoveryKey() throws {
        let dir = TemporaryDirectory()
        let path = dir.file("Journal.quire")
        let phone = device("Phone")
        let newPhone = device("New phone")
        let recoveryKey = try RecoveryKey(using: SeededRandom(label: "lockdown R21-3 recovery"))
        try Vault.create(
            at: path, setup: VaultSetup(name: "Journal", recoveryKey: recoveryKey, device: phone, now: t0),
            random: SeededRandom(label: "lockdown R21-3"), options: fast
        ).add(EntryBody(created: t0 + 1, text: "before"))
        let recovery = try Vault.open(at: path, credential: .recoveryKey(recoveryKey), options: fast)
        try recovery.enrollDevice(code: newPhone.code, name: "New phone", now: t0 + 2)
        #expect(try recovery.devicesEnrolled(by: [phone.keyPair.publicKey]).map(\.name) == [])
        try recovery.removeDevice(publicKey: phone.keyPair.publicKey)
        #expect(try Vault.open(at: path, credential: .device(newPhone.keyPair), options: fast).keyState().devices.map(\.name) == ["New phone"])
    }

    /// The stolen phone enrolled a tablet the user owns: the recovery
    /// key's removal keeps it when told, and removes it otherwise.
    @Test func aDeviceTheTargetEnrolledStaysOnlyWhenKept() throws {
        let c = try TwoCopies("lockdown keep")
        let tablet = device("Tablet")
        try c.onPhone(c.a).enrollDevice(code: tablet.code, name: "Tablet", now: t0 + 20)
        copy(c.a, c.dir.file("Kept.quire"))
        let kept = c.dir.file("Kept.quire")

        try Vault.open(at: c.a, credential: .recoveryKey(c.recovery), options: fast).removeDevice(publicKey: c.phone.keyPair.publicKey)
        #expect(try c.onLaptop(c.a).keyState().devices.map(\.name) == ["Laptop"])

        try Vault.open(at: kept, credential: .recoveryKey(c.recovery), options: fast)
            .removeDevice(publicKey: c.phone.keyPair.publicKey, keepingEnrolled: [tablet.keyPair.publicKey])
        #expect(try Set(c.onLaptop(kept).keyState().devices.map(\.name)) == ["Laptop", "Tablet"])
        try Vault.open(at: kept, credential: .device(tablet.keyPair), options: fast).add(EntryBody(created: t0 + 30, text: "tablet"))
        #expect(try texts(kept, .device(c.laptop.keyPair)) == ["shared", "tablet"])
        // Keeping a target is a contradiction.
        let both = #expect(throws: QuireError.self) {
            try Vault.open(at: kept, credential: .recoveryKey(c.recovery), options: fast)
                .removeDevice(publicKey: tablet.keyPair.publicKey, keepingEnrolled: [tablet.keyPair.publicKey])
        }
        #expect(both?.code == "operation_refused")
    }

    /// Review 17b G1, decided by review 18 R18-2: the phone removes the
    /// tablet, then rekeys; the laptop takes the copy and writes under the
    /// rekey. The file cannot tell a thief's removal from the user's (a
    /// lost tablet removed from the phone), and keeping a device out never
    /// lets anyone read: the removal stands, the rekey is adopted, and the
    /// laptop's entry stays readable. Before, the rekey was not adopted:
    /// the tablet came back and the laptop's entry was cut.
    @Test func aRemovalTheDeviceMadeStandsAndItsRekeyIsAdopted() throws {
        let c = try TwoCopies("lockdown G1")
        let tablet = device("Tablet")
        try c.onLaptop(c.a).enrollDevice(code: tablet.code, name: "Tablet", now: t0 + 10)
        copy(c.a, c.dir.file("Phone.quire"))
        let phoneCopy = c.dir.file("Phone.quire")
        try c.onPhone(phoneCopy).removeDevice(publicKey: tablet.keyPair.publicKey)
        _ = try c.onPhone(phoneCopy).compact(CompactionOptions(rekey: true))
        _ = try VaultMerge.merge(vaultAt: c.a, copyAt: phoneCopy, credential: .device(c.laptop.keyPair), options: fast)
        try c.onLaptop(c.a).add(EntryBody(created: t0 + 30, text: "laptop, under the rekey"))

        let recovery = try Vault.open(at: c.a, credential: .recoveryKey(c.recovery), options: fast)
        try recovery.removeDevice(publicKey: c.phone.keyPair.publicKey)
        let after = try recovery.keyState()
        #expect(after.devices.map(\.name) == ["Laptop"])
        #expect(try texts(c.a, .device(c.laptop.keyPair)) == ["laptop, under the rekey", "shared"])
    }

    /// Review 18 R18-2: the user removed a lost tablet from the phone, and
    /// nobody wrote or changed keys since; then the phone is stolen. The
    /// recovery key's removal builds on the laptop's keyrings, which still
    /// list the tablet — and removes the tablet again rather than let a
    /// lost device read the new epoch. Before, the tablet came back.
    @Test func aDeviceTheLostDeviceRemovedStaysOut() throws {
        let c = try TwoCopies("lockdown R18-2")
        let tablet = device("Tablet")
        try c.onLaptop(c.a).enrollDevice(code: tablet.code, name: "Tablet", now: t0 + 10)
        try c.onPhone(c.a).removeDevice(publicKey: tablet.keyPair.publicKey)
        let recovery = try Vault.open(at: c.a, credential: .recoveryKey(c.recovery), options: fast)
        try recovery.removeDevice(publicKey: c.phone.keyPair.publicKey)
        #expect(try recovery.keyState().devices.map(\.name) == ["Laptop"])
        let write = #expect(throws: QuireError.self) {
            try Vault.open(at: c.a, credential: .device(tablet.keyPair), options: fast).add(EntryBody(created: t0 + 40, text: "tablet"))
        }
        #expect(write?.code == "removed_from_vault" || write?.code == "behind_newer_keyring")
        try c.onLaptop(c.a).add(EntryBody(created: t0 + 41, text: "laptop"))
        #expect(try texts(c.a, .device(c.laptop.keyPair)) == ["laptop", "shared"])
    }

    /// The lockdown's own commit is made under the write key of the state
    /// it makes (`Spec/format.md §9.2`, seventh review R7-3): the stolen
    /// phone removed the laptop (epoch 2, its key) and wrote; the recovery
    /// key's removal of the phone builds on the laptop's epoch 1 and starts
    /// an epoch 2 of its own. Before, its commit was made under the phone's
    /// epoch-2 key — the write key before it, which it cuts — so that commit
    /// was unverifiable for every member after it ([`commit_unverifiable`],
    /// trial 26), and the phone, holding its commit key, could make it
    /// again.
    @Test func theLockdownsCommitIsMadeUnderTheKeyItStarts() throws {
        let c = try TwoCopies("lockdown commit key")
        try c.onPhone(c.a).removeDevice(publicKey: c.laptop.keyPair.publicKey)
        try c.onPhone(c.a).add(EntryBody(created: t0 + 20, text: "the thief writes"))
        let recovery = try Vault.open(at: c.a, credential: .recoveryKey(c.recovery), options: fast)
        let thiefs = try #require(recovery.file.keys.writeKey)
        try recovery.removeDevice(publicKey: c.phone.keyPair.publicKey)
        let after = try Vault.open(at: c.a, credential: .recoveryKey(c.recovery), options: fast)
        #expect(try after.keyState().member(withKey: c.phone.keyPair.publicKey) == nil)
        let file = after.file
        let writeKey = try #require(file.keys.writeKey)
        #expect(writeKey.epoch == thiefs.epoch)
        #expect(writeKey.commitment != thiefs.commitment)
        let last = try #require(file.structure.groups.last)
        #expect(file.structure.frames[last.commitFrame].header.keyID == writeKey.id)
        #expect(file.commits.statuses.last == .verified)
        #expect(!file.commitIssues.contains { $0.code == "commit_unverifiable" && $0.location?.index == last.commitFrame })
        // It extends the last commit made before the theft, not the phone's
        // commits under the keys it cuts: every commit but the phone's two
        // (its removal of the laptop, its entry) stays verified, and the
        // entry written before the theft keeps its standing (stop 33's
        // first fix chained from the phone's commits and orphaned them all).
        let statuses = file.commits.statuses
        #expect(statuses.filter { $0 != .verified }.count == 2)
        #expect(!file.commitIssues.contains { $0.code == "commit_orphaned" })
        #expect(try after.entries().map(\.body.text) == ["shared"])
    }

    /// Review 34 F1: the chain before a lockdown need not be the chain
    /// after it. The thief rotated on an old copy and appended that copy's
    /// new commits to the vault, beside the laptop's later ones (bytes, as
    /// anyone holding both files can): when the walk visits the thief's
    /// first, they hold the chain. Going back along that chain past the
    /// thief's commits, the lockdown extended the commit before both; after
    /// it the thief's commits do not verify, the laptop's are the chain,
    /// and the lockdown passed them by: orphaned as a fork, and every
    /// commit after it. It extends the tip of the walk of the state it
    /// makes: the laptop's last commit.
    @Test func theLockdownExtendsTheChainOfTheStateItMakes() throws {
        var found = false
        for attempt in 0..<32 where !found {
            let c = try TwoCopies("lockdown after a fork \(attempt)")
            let common = bytes(c.b).count
            try c.onPhone(c.b).rotateKeys(now: t0 + 10)
            for i in 0..<3 { try c.onLaptop(c.a).add(EntryBody(created: t0 + 20 + Int64(i), text: "laptop \(i)")) }
            try Data(bytes(c.a) + bytes(c.b)[common...]).write(to: URL(fileURLWithPath: c.a))
            // Only the files whose walk puts the thief's commit on the chain.
            let f = try c.onLaptop(c.a).file
            let tip = try #require(f.commits.statuses.indices.last { f.commits.statuses[$0] == .verified })
            let tipKey = f.structure.frames.header(at: f.structure.groups[tip].commitFrame).keyID
            guard f.keys.keys(for: tipKey).contains(where: { $0.epoch == 2 }) else { continue }
            found = true
            let recovery = try Vault.open(at: c.a, credential: .recoveryKey(c.recovery), options: fast)
            try recovery.removeDevice(publicKey: c.phone.keyPair.publicKey)
            let after = try c.onLaptop(c.a)
            let file = after.file
            #expect(file.commits.statuses.last == .verified)
            #expect(!file.commitIssues.contains { $0.code == "commit_fork" || $0.code == "commit_orphaned" })
            #expect(try after.entries().map(\.body.text).sorted() == ["laptop 0", "laptop 1", "laptop 2", "shared"])
            #expect(try after.entries().allSatisfy(\.isVerified))
        }
        #expect(found, "no attempt put the thief's commit on the chain")
    }

    /// Review 33 F5: a device's removal of a member that replaced the
    /// recovery key, told the replacement is not the user's, builds on the
    /// keys from before it, at the replacement's epoch: its commit was made
    /// under the replacement's key (the thief's), which it cuts, and no
    /// member could verify it. It is made under the key it starts and
    /// extends the last commit before the replacement.
    @Test func aDevicesRemovalOverAReplacementIsCommittedUnderItsOwnKey() throws {
        let c = try TwoCopies("removal over replacement commit key")
        let other = try RecoveryKey(using: SeededRandom(label: "thief's recovery key"))
        try c.onPhone(c.a).changeKeys(.replaceRecoveryKey(newRecoveryPublicKey: try other.publicKey()), now: t0 + 10)
        let laptop = try c.onLaptop(c.a)
        let replaced = try #require(laptop.file.keys.writeKey)
        try laptop.removeDevice(publicKey: c.phone.keyPair.publicKey, now: t0 + 20, replacement: .notMine)
        let after = try c.onLaptop(c.a)
        #expect(try after.keyState().member(withKey: c.phone.keyPair.publicKey) == nil)
        let file = after.file
        let writeKey = try #require(file.keys.writeKey)
        #expect(writeKey.epoch == replaced.epoch)
        #expect(!writeKey.sameKey(as: replaced))
        let last = try #require(file.structure.groups.last)
        #expect(file.structure.frames[last.commitFrame].header.keyID == writeKey.id)
        #expect(file.commits.statuses.last == .verified)
        #expect(file.commits.statuses.filter { $0 != .verified }.count == 1)
        #expect(!file.commitIssues.contains { $0.code == "commit_orphaned" })
        try after.add(EntryBody(created: t0 + 30, text: "after the removal"))
        let reread = try c.onLaptop(c.a)
        #expect(try reread.entries().map(\.body.text).sorted() == ["after the removal", "shared"])
        #expect(reread.file.commits.statuses.filter { $0 != .verified }.count == 1)
    }

    /// Review 19 R19-1: the thief makes its puppet a recovery member on a
    /// side branch (the stolen phone replaces the recovery key with the
    /// puppet's key on a copy where the puppet is not enrolled yet), so
    /// that "a recovery member's key is never a suspect" keeps the puppet.
    /// Only the recovery key signing the lockdown is exempt now: the puppet
    /// goes with the phone.
    @Test func aPuppetMadeARecoveryMemberOnASideBranchIsStillASuspect() throws {
        let c = try TwoCopies("lockdown R19-1")
        let puppet = device("Puppet")
        let side = c.dir.file("Side.quire")
        copy(c.b, side)
        try c.onPhone(side).changeKeys(.replaceRecoveryKey(newRecoveryPublicKey: puppet.keyPair.publicKey), now: t0 + 15)
        try c.onPhone(c.b).enrollDevice(code: puppet.code, name: "Puppet", now: t0 + 20)
        _ = try VaultMerge.merge(vaultAt: c.b, copyAt: side, credential: .device(c.phone.keyPair), options: fast)
        _ = try VaultMerge.merge(vaultAt: c.a, copyAt: c.b, credential: .device(c.laptop.keyPair), options: fast)
        // The laptop rotates on what it took (keeping its recovery key):
        // its keyring carries the puppet.
        let laptop = try c.onLaptop(c.a)
        if try !laptop.recoveryKeyChoices().isEmpty { try laptop.keepRecoveryKey(try c.recovery.publicKey()) }
        try laptop.rotateKeys(now: t0 + 30)
        #expect(try c.onLaptop(c.a).keyState().member(withKey: puppet.keyPair.publicKey) != nil)
        let recovery = try Vault.open(at: c.a, credential: .recoveryKey(c.recovery), options: fast)
        try recovery.removeDevice(publicKey: c.phone.keyPair.publicKey)
        let after = try Vault.open(at: c.a, credential: .recoveryKey(c.recovery), options: fast).keyState()
        #expect(after.member(withKey: c.phone.keyPair.publicKey) == nil)
        #expect(after.member(withKey: puppet.keyPair.publicKey) == nil)
        #expect(after.devices.map(\.name) == ["Laptop"])
    }

    /// Review 19 R19-2: the user removed a lost tablet from the phone; the
    /// tablet's thief had enrolled a puppet on an old copy, which a merge
    /// brought in, cut by that removal. Then the phone is lost too. The
    /// phone's removal of the tablet stands, and so does its cut: the
    /// tablet's fork is no parent of the lockdown, and neither the tablet
    /// nor its puppet comes back. Before, a suspect's cut was void: the fork
    /// became an "honest" parent.
    @Test func aForkTheLostDevicesRemovalCutStaysCut() throws {
        let c = try TwoCopies("lockdown R19-2")
        let tablet = device("Tablet"), puppet = device("Puppet")
        try c.onLaptop(c.a).enrollDevice(code: tablet.code, name: "Tablet", now: t0 + 10)
        let old = c.dir.file("Old.quire")
        copy(c.a, old)
        try Vault.open(at: old, credential: .device(tablet.keyPair), options: fast).enrollDevice(code: puppet.code, name: "Puppet", now: t0 + 11)
        try c.onPhone(c.a).removeDevice(publicKey: tablet.keyPair.publicKey)
        _ = try VaultMerge.merge(vaultAt: c.a, copyAt: old, credential: .device(c.laptop.keyPair), options: fast)
        #expect(try c.onLaptop(c.a).keyState().devices.map(\.name).sorted() == ["Laptop", "Phone"])
        let recovery = try Vault.open(at: c.a, credential: .recoveryKey(c.recovery), options: fast)
        try recovery.removeDevice(publicKey: c.phone.keyPair.publicKey)
        let after = try Vault.open(at: c.a, credential: .recoveryKey(c.recovery), options: fast).keyState()
        #expect(after.devices.map(\.name) == ["Laptop"])
    }
}
