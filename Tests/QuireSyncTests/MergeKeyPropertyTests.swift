import Foundation
@_spi(Crypto) @_spi(Format) import Quire
import QuireTestSupport
import Testing

/// Issue 12 §4 and `Spec/merge.md §7`: random adds, edits, deletes,
/// rotations, a removal, compactions and compactions with a rekey on three
/// replicas, with random merges in both directions — replica into replica,
/// an older copy into a (rekeyed) compaction and a (rekeyed) compaction into
/// an older copy.
extension MergePropertyTests {
    /// What the test knows of a file: the revision ids it must hold, and
    /// whether it was compacted or rekeyed (itself or through a merge).
    struct Model {
        var held: Set<String>
        var compacted = false
        var rekeyed = false

        mutating func fold(_ other: Model) {
            held.formUnion(other.held)
            compacted = compacted || other.compacted
            rekeyed = rekeyed || other.rekeyed
        }
    }

    /// How many of each operation a seed ran.
    struct Counts: CustomStringConvertible {
        var add = 0, edit = 0, delete = 0, rotate = 0, removeByDevice = 0, removeByRecovery = 0, compact = 0, rekey = 0
        var merge = 0, mergeChanged = 0, resealed = 0, snapshot = 0, staleIntoReplica = 0, replicaIntoStale = 0
        var olderIntoCompacted = 0, compactedIntoOlder = 0, refusedRemoved = 0, finalRounds = 0

        var description: String {
            "add \(add), edit \(edit), delete \(delete), rotate \(rotate), remove \(removeByDevice) by a device + \(removeByRecovery) "
                + "by the recovery key, compact \(compact), compact --rekey \(rekey), merges \(merge) (\(mergeChanged) changed, "
                + "\(resealed) re-sealed frames), snapshots \(snapshot), stale copy into replica \(staleIntoReplica), replica into "
                + "stale copy \(replicaIntoStale), older into compacted \(olderIntoCompacted), compacted into older \(compactedIntoOlder), "
                + "refused removed_from_vault \(refusedRemoved), final rounds \(finalRounds)"
        }
    }

    /// The revision ids `credential` reads in the file at `path`.
    static func readable(_ path: String, _ credential: Credential, _ ids: [EntryID]) throws -> Set<String> {
        let v = try Vault.open(at: path, credential: credential, writable: false, options: fast)
        var out = Set<String>()
        for id in ids { for rev in try v.revisions(of: id) { out.insert(rev.revisionID.description) } }
        return out
    }

    /// A removed device is refused every write on a copy that holds its
    /// removal. It cannot open the keyring that removed it (the `removed`
    /// list is in its sealed part), so it knows only that a member made a
    /// keyring that leaves it out: it is *behind* and the typed error is
    /// `behind_newer_keyring`, naming that member (`Spec/format.md §8.6`);
    /// a merge says `removed_from_vault` (`Spec/merge.md §3.1`).
    static func expectRemovedRefusesWrites(_ path: String, _ credential: Credential, members: [String]) throws {
        let v = try Vault.open(at: path, credential: credential, options: fast)
        guard case .behindNewerKeyring(_, let madeBy, _)? = v.removedFromVault?.detail else {
            Issue.record("the removed device is not told it is behind: \(String(describing: v.removedFromVault))")
            return
        }
        #expect(madeBy == "the recovery key" || members.contains { madeBy == "the device \"\($0)\"" }, "made by \(madeBy)")
        let add = #expect(throws: QuireError.self) { try v.add(EntryBody(created: t0, text: "written after the removal")) }
        #expect(add?.code == "behind_newer_keyring")
        let rotate = #expect(throws: QuireError.self) { try v.rotateKeys(now: t0) }
        #expect(rotate?.code == "behind_newer_keyring")
        let compact = #expect(throws: QuireError.self) { try v.compact(CompactionOptions(rekey: true)) }
        #expect(compact?.code == "removed_from_vault")
    }

    /// Seeds 1–8, 15, 24 and 30 (the last three once failed: a removal by
    /// the recovery key cut the removed device's rekey keyring, and what the
    /// others sealed under it was lost, ``LockdownAfterRekeyTests``);
    /// `QUIRE_MERGE_PROPERTY_SEEDS=FIRST-LAST` runs others
    /// (`QUIRE_MERGE_PROPERTY_TRACE=SEED` prints each step of one).
    static var seeds: [UInt64] {
        let range = ProcessInfo.processInfo.environment["QUIRE_MERGE_PROPERTY_SEEDS"]?.split(separator: "-").compactMap { UInt64($0) }
        guard let range, range.count == 2, range[0] <= range[1] else { return Array(1...8) + [15, 24, 30] }
        return Array(range[0]...range[1])
    }

    @Test(arguments: seeds)
    func replicasConvergeOverKeyChangesAndCompaction(seed: UInt64) throws {
        let dir = TemporaryDirectory()
        let devices = ["Laptop", "Phone", "Tablet"].map { device($0 + " keys \(seed)") }
        let recovery = try RecoveryKey(using: SeededRandom(label: "key prop \(seed)"))
        let names = ["Laptop keys \(seed)", "Device 1", "Device 2"]
        let first = dir.file("r0.quire")
        let vault = try Vault.create(
            at: first, setup: VaultSetup(name: "J", recoveryKey: recovery, device: devices[0], now: t0),
            random: SeededRandom(label: "key prop vault \(seed)"), options: fast)
        for (i, d) in devices.enumerated().dropFirst() { try vault.enrollDevice(code: d.code, name: "Device \(i)", now: t0 + Int64(i)) }
        let seedEntry = try vault.add(EntryBody(created: t0, text: "seed entry"))
        var ids = [seedEntry.entryID]
        for i in 1..<3 { copy(first, dir.file("r\(i).quire")) }
        let replicas = (0..<3).map { Replica(path: dir.file("r\($0).quire"), credential: .device(devices[$0].keyPair)) }
        var models = Array(repeating: Model(held: [seedEntry.revisionID.description]), count: 3)

        var dice = Dice(seed: seed)
        var counts = Counts()
        var alive = [0, 1, 2]
        var stale: [(path: String, model: Model)] = []
        let steps = 48
        let removalStep = 6 + dice.below(24)
        var removed: Int?
        var writtenAfterRemoval = Set<String>()
        var saw = Array(repeating: Set<String>(), count: 3)
        var counter = 0

        /// Merges `from` into replica `into` (both directions over time),
        /// and checks that the result holds every revision of both sides.
        func merge(into: Int, from path: String, _ fromModel: Model) throws {
            let report = try VaultMerge.merge(
                vaultAt: replicas[into].path, copyAt: path, credential: replicas[into].credential, options: fast)
            trace("  merge \(path.split(separator: "/").last!) into r\(into): \(report)")
            counts.merge += 1
            if report.changed { counts.mergeChanged += 1 }
            counts.resealed += report.framesResealed
            if fromModel.compacted && !models[into].compacted { counts.compactedIntoOlder += 1 }
            if models[into].compacted && !fromModel.compacted { counts.olderIntoCompacted += 1 }
            models[into].fold(fromModel)
            let held = try Self.content(replicas[into], ids).revisions
            #expect(models[into].held.isSubset(of: held), "seed \(seed): a merge into r\(into) lost \(models[into].held.subtracting(held))")
        }
        let tracing = ProcessInfo.processInfo.environment["QUIRE_MERGE_PROPERTY_TRACE"] == "\(seed)"
        func trace(_ s: @autoclosure () -> String) { if tracing { print("TRACE \(seed): " + s()) } }
        func wrote(_ i: Int, _ revision: RevisionID) {
            trace("  r\(i) wrote \(revision)")
            models[i].held.insert(revision.description)
            if removed != nil { writtenAfterRemoval.insert(revision.description) }
        }

        for step in 0..<steps {
            let i = alive[dice.below(alive.count)]
            let r = replicas[i]
            trace("step \(step) on r\(i) held \(models[i].held.count)")
            if step == removalStep {
                // A current member, or the recovery key, removes one of the
                // other two devices in its copy (`quire device remove`).
                let others = alive.filter { $0 != i }
                let target = others[dice.below(others.count)]
                let byRecovery = dice.below(2) == 0
                let remover = try Vault.open(at: r.path, credential: byRecovery ? .recoveryKey(recovery) : r.credential, options: fast)
                // The user keeps their other devices (device 0 enrolled them
                // all; a removal by the recovery key would take them too:
                // Spec/keys.md §6.3, suspects).
                let keep = Set(devices.indices.filter { $0 != target }.map { devices[$0].keyPair.publicKey })
                try remover.removeDevice(
                    publicKey: devices[target].keyPair.publicKey, now: t0 + 10_000 + Int64(step), keepingEnrolled: byRecovery ? keep : [])
                if byRecovery { counts.removeByRecovery += 1 } else { counts.removeByDevice += 1 }
                removed = target
                trace("  r\(i) removed r\(target) by recovery: \(byRecovery)")
                alive.removeAll { $0 == target }
                // The removed device learns of it from a synced copy: its
                // merge is refused and changes nothing (merge.md §3.1), and
                // it cannot write to the copy. It then takes no more part.
                let before = bytes(replicas[target].path)
                let refusal = #expect(throws: SyncError.self) {
                    try VaultMerge.merge(
                        vaultAt: replicas[target].path, copyAt: r.path, credential: replicas[target].credential, options: fast)
                }
                #expect(refusal?.code == "removed_from_vault")
                if refusal?.code == "removed_from_vault" { counts.refusedRemoved += 1 }
                #expect(bytes(replicas[target].path) == before)
                let synced = dir.file("removed-view-\(step).quire")
                copy(r.path, synced)
                try Self.expectRemovedRefusesWrites(synced, replicas[target].credential, members: alive.map { names[$0] })
                continue
            }
            switch dice.below(20) {
            case 0...4:
                counter += 1
                let added = try Vault.open(at: r.path, credential: r.credential, options: fast)
                    .add(EntryBody(created: t0 + Int64(counter), text: "entry \(counter)"))
                ids.append(added.entryID)
                wrote(i, added.revisionID)
                counts.add += 1
            case 5...6:
                let v = try Vault.open(at: r.path, credential: r.credential, options: fast)
                let entries = try v.entries().filter { !$0.isDeleted }
                guard !entries.isEmpty else { continue }
                counter += 1
                let e = entries[dice.below(entries.count)]
                wrote(i, try v.edit(e.id, body: EntryBody(created: e.body.createdMilliseconds, text: "edit \(counter)")).revisionID)
                counts.edit += 1
            case 7:
                let v = try Vault.open(at: r.path, credential: r.credential, options: fast)
                let entries = try v.entries().filter { !$0.isDeleted }
                guard !entries.isEmpty else { continue }
                wrote(i, try v.delete(entries[dice.below(entries.count)].id).revisionID)
                counts.delete += 1
            case 8:
                // `quire keys rotate`: a new epoch for the same members.
                try Vault.open(at: r.path, credential: r.credential, options: fast).rotateKeys(now: t0 + 10_000 + Int64(step))
                trace("  rotate r\(i)")
                counts.rotate += 1
            case 9...10:
                // `quire compact [--rekey]`: heads only (no history kept).
                let rekey = dice.below(2) == 0
                let before = try Self.content(r, ids)
                #expect(models[i].held.isSubset(of: before.revisions))
                let report = try Vault.open(at: r.path, credential: r.credential, options: fast).compact(CompactionOptions(rekey: rekey))
                #expect((report.rekeyedEpoch != nil) == rekey)
                trace("  compact r\(i) rekey \(rekey): \(report)")
                let after = try Self.content(r, ids)
                #expect(after.live == before.live, "seed \(seed) step \(step): compaction changed a winning revision")
                #expect(after.revisions.isSubset(of: before.revisions))
                models[i].held = after.revisions
                models[i].compacted = true
                if rekey {
                    models[i].rekeyed = true
                    counts.rekey += 1
                } else {
                    counts.compact += 1
                }
            case 11:
                // An older copy, as a backup or a sync tool's version.
                let path = dir.file("stale-\(step).quire")
                copy(r.path, path)
                stale.append((path, models[i]))
                trace("  snapshot r\(i) as \(path.split(separator: "/").last!)")
                counts.snapshot += 1
            case 12 where !stale.isEmpty:
                let s = stale[dice.below(stale.count)]
                try merge(into: i, from: s.path, s.model)
                counts.staleIntoReplica += 1
            case 13 where !stale.isEmpty:
                // The replica is folded into an older copy, which then
                // stands for it (`quire merge OLD CURRENT`, then kept).
                let s = stale[dice.below(stale.count)]
                let path = dir.file("fold-\(step).quire")
                copy(s.path, path)
                let report = try VaultMerge.merge(vaultAt: path, copyAt: r.path, credential: r.credential, options: fast)
                trace("  fold r\(i) into \(s.path.split(separator: "/").last!), kept as r\(i): \(report)")
                counts.merge += 1
                if report.changed { counts.mergeChanged += 1 }
                counts.resealed += report.framesResealed
                if models[i].compacted && !s.model.compacted { counts.compactedIntoOlder += 1 }
                if s.model.compacted && !models[i].compacted { counts.olderIntoCompacted += 1 }
                try FileManager.default.removeItem(atPath: r.path)
                try FileManager.default.moveItem(atPath: path, toPath: r.path)
                models[i].fold(s.model)
                let held = try Self.content(r, ids).revisions
                #expect(models[i].held.isSubset(of: held), "seed \(seed): folding r\(i) into an older copy lost revisions")
                counts.replicaIntoStale += 1
            default:
                let from = alive[dice.below(alive.count)]
                if from != i { try merge(into: i, from: replicas[from].path, models[from]) }
            }
            for a in alive { saw[a].formUnion(models[a].held) }
        }

        /// Every surviving replica takes every other until nothing changes
        /// (a merge that re-seals converges the round after, merge.md §3.4).
        func mergeUntilStable() throws {
            for _ in 0..<4 {
                var changed = false
                for into in alive {
                    for from in alive where from != into {
                        let report = try VaultMerge.merge(
                            vaultAt: replicas[into].path, copyAt: replicas[from].path, credential: replicas[into].credential, options: fast)
                        models[into].fold(models[from])
                        changed = changed || report.changed
                    }
                }
                counts.finalRounds += 1
                if !changed { return }
            }
            Issue.record("seed \(seed): the replicas still changed after 4 rounds of merges")
        }
        try mergeUntilStable()
        let contents = try alive.map { try Self.content(replicas[$0], ids) }
        for c in contents.dropFirst() {
            #expect(c.revisions == contents[0].revisions, "seed \(seed): the replicas hold different revisions")
            #expect(c.live == contents[0].live, "seed \(seed): the replicas disagree on a winning revision")
        }
        // Every revision a surviving replica held (what the removed device
        // wrote included, once another received it) is there.
        let held = alive.reduce(into: Set<String>()) { $0.formUnion(models[$1].held) }
        #expect(held.isSubset(of: contents[0].revisions), "seed \(seed): lost \(held.subtracting(contents[0].revisions))")
        // An older copy folded in again brings back history the compactions
        // dropped, never an older winner (merge.md §5, §7).
        // (A copy of the removed device's file may hold what it wrote that no
        // survivor received: that is new, and may win.)
        let survivorsSaw = alive.reduce(into: Set<String>()) { $0.formUnion(saw[$1]) }
        for s in stale {
            let news = !s.model.held.isSubset(of: survivorsSaw)
            try merge(into: alive[0], from: s.path, s.model)
            if !news {
                #expect(try Self.content(replicas[alive[0]], ids).live == contents[0].live, "seed \(seed): a stale copy changed a winner")
            }
        }
        try mergeUntilStable()
        for r in alive {
            #expect(try Vault.open(at: replicas[r].path, credential: replicas[r].credential, options: fast).verify().issues.isEmpty)
        }

        if let target = removed {
            // `quire compact --rekey` once everyone has the removal: the
            // removed device reads nothing in any replica, and is still
            // refused writes.
            let before = try Self.content(replicas[alive[0]], ids)
            let report = try Vault.open(at: replicas[alive[0]].path, credential: replicas[alive[0]].credential, options: fast)
                .compact(CompactionOptions(rekey: true))
            #expect(report.rekeyedEpoch != nil)
            counts.rekey += 1
            try mergeUntilStable()
            for r in alive {
                let after = try Self.content(replicas[r], ids)
                #expect(after.live == before.live && after.revisions == before.revisions, "seed \(seed): the last rekey changed r\(r)")
                let read = try Self.readable(replicas[r].path, replicas[target].credential, ids)
                #expect(read.isEmpty, "seed \(seed): the removed device reads \(read.count) revisions in r\(r)")
                #expect(read.isDisjoint(with: writtenAfterRemoval))
                try Self.expectRemovedRefusesWrites(replicas[r].path, replicas[target].credential, members: alive.map { names[$0] })
                #expect(try Vault.open(at: replicas[r].path, credential: replicas[r].credential, options: fast).verify().issues.isEmpty)
            }
        }
        print("MergePropertyTests seed \(seed): \(counts)")
    }
}

/// Found by ``MergePropertyTests/replicasConvergeOverKeyChangesAndCompaction(seed:)``
/// (seeds 15, 24, 30): a removal by the recovery key is built as a lockdown
/// (`Spec/keys.md §6.3`), whose parents left out every keyring the removed
/// device signed that no other member built on, so rule 6
/// (`Spec/format.md §8.4`) cut it. When that keyring was the device's
/// `compact --rekey` (or a rotation), everything the other members sealed
/// under its epoch — after a rekey, the whole vault — became `unknown_key`
/// for every credential, against merge.md §7. Now a keyring a removed
/// device signed that another member adopted (wrote a commit under the
/// epoch it starts) stays in the lockdown's ancestry, and the devices only
/// it brings in are removed with the target.
@Suite struct LockdownAfterRekeyTests {
    /// The phone rekeys, the laptop takes the copy and writes under the new
    /// epoch, then the recovery key removes the phone: the laptop adopted
    /// the phone's rekey keyring, so the removal builds on it and keeps
    /// what was sealed under it (`Spec/keys.md §6.3`, merge.md §7). Before,
    /// it left the keyring out and every record became `unknown_key`.
    @Test func aRecoveryKeyRemovalAfterTheRemovedDevicesRekeyKeepsTheEntries() throws {
        let c = try TwoCopies("lockdown after rekey")
        // The phone rekeys its copy; the laptop takes it and writes.
        let report = try c.onPhone(c.b).compact(CompactionOptions(rekey: true))
        #expect(report.rekeyedEpoch != nil)
        _ = try VaultMerge.merge(vaultAt: c.a, copyAt: c.b, credential: .device(c.laptop.keyPair), options: fast)
        try c.onLaptop(c.a).add(EntryBody(created: t0 + 30, text: "laptop, under the rekey"))
        #expect(try texts(c.a, .device(c.laptop.keyPair)) == ["laptop, under the rekey", "shared"])
        // A device's removal of the phone keeps everything: it leaves out
        // only heads the phone signed concurrently, and there are none.
        let byDevice = c.dir.file("removed-by-the-laptop.quire")
        copy(c.a, byDevice)
        try c.onLaptop(byDevice).removeDevice(publicKey: c.phone.keyPair.publicKey)
        #expect(try texts(byDevice, .device(c.laptop.keyPair)) == ["laptop, under the rekey", "shared"])
        // So does the recovery key's (`quire device remove
        // --recovery-key-file`), for every credential, and the phone is out.
        let recovery = try Vault.open(at: c.a, credential: .recoveryKey(c.recovery), options: fast)
        try recovery.removeDevice(publicKey: c.phone.keyPair.publicKey)
        #expect(try recovery.keyState().member(withKey: c.phone.keyPair.publicKey) == nil)
        #expect(try texts(c.a, .device(c.laptop.keyPair)) == ["laptop, under the rekey", "shared"])
        #expect(try texts(c.a, .recoveryKey(c.recovery)) == ["laptop, under the rekey", "shared"])
        let phone = #expect(throws: QuireError.self) { try c.onPhone(c.a).add(EntryBody(created: t0 + 40, text: "phone")) }
        #expect(phone?.code == "removed_from_vault" || phone?.code == "behind_newer_keyring")
    }

    /// The stolen phone sets a passphrase only its thief knows, then rekeys;
    /// the laptop takes the copy and writes under the new epoch (it adopts
    /// the rekey). The recovery key's removal of the phone keeps that epoch
    /// readable but not the passphrase the phone's keyrings brought in: the
    /// new keyring has only the passphrase readers of the keyrings no target
    /// signed (here none), as it drops the devices they brought in
    /// (`Spec/keys.md §6.3`). Before, the thief's passphrase read every later
    /// epoch.
    @Test(.weakPassphraseCost) func aRecoveryKeyRemovalDropsAPassphraseTheRemovedDeviceSet() throws {
        let c = try TwoCopies("lockdown drops the thief's passphrase")
        var typed = Array("the thief's passphrase".utf8)
        try c.onPhone(c.b).setPassphrase(try SecureBytes(consuming: &typed), opsLimit: 1, memLimitBytes: 8192)
        _ = try c.onPhone(c.b).compact(CompactionOptions(rekey: true))
        #expect(try !c.onPhone(c.b).keyState().passphrases.isEmpty)
        _ = try VaultMerge.merge(vaultAt: c.a, copyAt: c.b, credential: .device(c.laptop.keyPair), options: fast)
        try c.onLaptop(c.a).add(EntryBody(created: t0 + 30, text: "laptop, under the rekey"))
        let recovery = try Vault.open(at: c.a, credential: .recoveryKey(c.recovery), options: fast)
        try recovery.removeDevice(publicKey: c.phone.keyPair.publicKey)
        let after = try Vault.open(at: c.a, credential: .recoveryKey(c.recovery), options: fast).keyState()
        #expect(after.member(withKey: c.phone.keyPair.publicKey) == nil)
        #expect(after.passphrases.isEmpty)
        #expect(try texts(c.a, .device(c.laptop.keyPair)) == ["laptop, under the rekey", "shared"])
    }

    /// Review 17b G3: the phone sets a passphrase, then changes it (a new
    /// epoch that changes a reader); the laptop writes under that epoch.
    /// The recovery key's removal adopts the change — what the laptop wrote
    /// stays readable — but drops both passphrases, which the phone's
    /// keyrings brought in (`Spec/keys.md §6.3`). Before, only a pure
    /// rotation was adopted: the change was cut, and the laptop's entry with
    /// it, with no warning.
    @Test(.weakPassphraseCost) func aRecoveryKeyRemovalAdoptsAPassphraseChangeButDropsThePassphrase() throws {
        let c = try TwoCopies("lockdown adopts no reader change")
        for text in ["first passphrase", "the thief's passphrase"] {
            var typed = Array(text.utf8)
            try c.onPhone(c.b).setPassphrase(try SecureBytes(consuming: &typed), opsLimit: 1, memLimitBytes: 8192)
        }
        _ = try VaultMerge.merge(vaultAt: c.a, copyAt: c.b, credential: .device(c.laptop.keyPair), options: fast)
        try c.onLaptop(c.a).add(EntryBody(created: t0 + 30, text: "laptop, under the changed passphrase"))
        #expect(try texts(c.a, .device(c.laptop.keyPair)) == ["laptop, under the changed passphrase", "shared"])
        let recovery = try Vault.open(at: c.a, credential: .recoveryKey(c.recovery), options: fast)
        try recovery.removeDevice(publicKey: c.phone.keyPair.publicKey)
        let after = try Vault.open(at: c.a, credential: .recoveryKey(c.recovery), options: fast).keyState()
        #expect(after.member(withKey: c.phone.keyPair.publicKey) == nil)
        #expect(after.passphrases.isEmpty)
        #expect(try texts(c.a, .device(c.laptop.keyPair)) == ["laptop, under the changed passphrase", "shared"])
    }

    /// Review 17b G2: the phone rekeys, then enrols a device in the same
    /// epoch (a keyring with the rekey's key); the laptop writes under that
    /// key; then the recovery key removes the phone. The enrolment, a
    /// descendant sharing the rekey's key, does not stop the adoption: the
    /// laptop's entry stays readable and the enrolled device goes with the
    /// phone. Before, any second keyring with the key stopped it.
    @Test func aSameEpochEnrolmentAfterTheRekeyStopsNoAdoption() throws {
        let c = try TwoCopies("lockdown same-epoch child")
        _ = try c.onPhone(c.b).compact(CompactionOptions(rekey: true))
        let puppet = device("Puppet of the rekey")
        try c.onPhone(c.b).enrollDevice(code: puppet.code, name: "Puppet", now: t0 + 20)
        _ = try VaultMerge.merge(vaultAt: c.a, copyAt: c.b, credential: .device(c.laptop.keyPair), options: fast)
        try c.onLaptop(c.a).add(EntryBody(created: t0 + 30, text: "laptop, under the rekey"))
        let recovery = try Vault.open(at: c.a, credential: .recoveryKey(c.recovery), options: fast)
        try recovery.removeDevice(publicKey: c.phone.keyPair.publicKey)
        let after = try Vault.open(at: c.a, credential: .recoveryKey(c.recovery), options: fast).keyState()
        #expect(after.member(withKey: c.phone.keyPair.publicKey) == nil)
        #expect(after.member(withKey: puppet.keyPair.publicKey) == nil)
        #expect(try texts(c.a, .device(c.laptop.keyPair)) == ["laptop, under the rekey", "shared"])
    }

    /// The stolen phone enrols a device of its own (a puppet), then rekeys;
    /// the laptop takes the copy and writes. The recovery key's removal of
    /// the phone keeps the laptop's entries (the rekey keyring is adopted)
    /// but removes the puppet with it: the keyrings the phone signed bring
    /// it in only through that adoption, and rule 6 would remove it as a
    /// puppet had they been left out (`Spec/keys.md §6.3`).
    @Test func aRecoveryKeyRemovalKeepsAnAdoptedRekeyButRemovesThePuppet() throws {
        let c = try TwoCopies("lockdown after rekey, puppet")
        let puppet = device("Puppet")
        try c.onPhone(c.b).enrollDevice(code: puppet.code, name: "Puppet", now: t0 + 20)
        _ = try c.onPhone(c.b).compact(CompactionOptions(rekey: true))
        _ = try VaultMerge.merge(vaultAt: c.a, copyAt: c.b, credential: .device(c.laptop.keyPair), options: fast)
        try c.onLaptop(c.a).add(EntryBody(created: t0 + 30, text: "laptop, under the rekey"))
        let recovery = try Vault.open(at: c.a, credential: .recoveryKey(c.recovery), options: fast)
        #expect(try recovery.keyState().member(withKey: puppet.keyPair.publicKey) != nil)
        try recovery.removeDevice(publicKey: c.phone.keyPair.publicKey)
        let state = try recovery.keyState()
        #expect(state.member(withKey: c.phone.keyPair.publicKey) == nil)
        #expect(state.member(withKey: puppet.keyPair.publicKey) == nil)
        #expect(Set(state.removed.map(\.publicKey)).isSuperset(of: [c.phone.keyPair.publicKey, puppet.keyPair.publicKey]))
        #expect(try texts(c.a, .device(c.laptop.keyPair)) == ["laptop, under the rekey", "shared"])
        let write = #expect(throws: QuireError.self) {
            try Vault.open(at: c.a, credential: .device(puppet.keyPair), options: fast).add(EntryBody(created: t0 + 40, text: "puppet"))
        }
        #expect(write?.code == "removed_from_vault" || write?.code == "behind_newer_keyring")
    }

    /// A commit only the removed device's puppet attested adopts nothing:
    /// the phone enrols a puppet and rekeys, the puppet writes under the new
    /// epoch, and the recovery key removes the phone in that copy, where no
    /// other member wrote under it. The removal leaves the phone's keyrings
    /// out as before: the puppet is cut with them, and so is its entry
    /// (`unknown_key`). (A member's merge of the copy is a commit of its
    /// own under the epoch: it adopts it.)
    @Test func aPuppetsCommitAdoptsNothing() throws {
        let c = try TwoCopies("lockdown after rekey, puppet writes")
        let puppet = device("Puppet")
        try c.onPhone(c.b).enrollDevice(code: puppet.code, name: "Puppet", now: t0 + 20)
        _ = try c.onPhone(c.b).compact(CompactionOptions(rekey: true))
        try Vault.open(at: c.b, credential: .device(puppet.keyPair), options: fast).add(EntryBody(created: t0 + 30, text: "puppet"))
        #expect(try texts(c.b, .recoveryKey(c.recovery)) == ["puppet", "shared"])
        let recovery = try Vault.open(at: c.b, credential: .recoveryKey(c.recovery), options: fast)
        try recovery.removeDevice(publicKey: c.phone.keyPair.publicKey)
        let state = try recovery.keyState()
        #expect(state.member(withKey: puppet.keyPair.publicKey) == nil)
        #expect(state.member(withKey: c.phone.keyPair.publicKey) == nil)
        #expect(try !texts(c.b, .recoveryKey(c.recovery)).contains("puppet"))
    }
}
