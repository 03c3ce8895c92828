import Foundation
@_spi(Crypto) @_spi(Format) import Quire
import Testing

/// Merging two copies of a vault (`Spec/merge.md §3`).
@Suite struct MergeTests {
    @Test func theCopysEntriesAreAddedAndThePrefixKept() throws {
        let c = try TwoCopies("add")
        try c.onLaptop(c.a).add(EntryBody(created: t0 + 10, text: "on the laptop"))
        try c.onPhone(c.b).add(EntryBody(created: t0 + 11, text: "on the phone"))
        let before = bytes(c.a)
        let report = try VaultMerge.merge(vaultAt: c.a, copyAt: c.b, credential: .device(c.laptop.keyPair), options: fast)
        #expect(report.changed)
        #expect(report.framesAdded == 1)
        #expect(report.framesCarriedUnopened == 0)
        #expect(report.leftOut.isEmpty)
        // Both sides' last commits are different: the prefix ends before them.
        let after = bytes(c.a)
        #expect(report.commonPrefixByteCount > 64)
        #expect(Array(after.prefix(Int(report.commonPrefixByteCount))) == Array(before.prefix(Int(report.commonPrefixByteCount))))
        for credential: Credential in [.device(c.laptop.keyPair), .device(c.phone.keyPair), .recoveryKey(c.recovery)] {
            #expect(try texts(c.a, credential) == ["on the laptop", "on the phone", "shared"])
        }
        let merged = try c.onLaptop(c.a)
        #expect(merged.verify().issues.isEmpty)
        #expect(try merged.entries().allSatisfy(\.isVerified))
    }

    /// The laptop merges the phone's copy into its file and the phone merges
    /// the laptop's into its own. An attestation signs the head its group
    /// extended (Spec/format.md §9.2), so the blocks that move are attested
    /// again by the merging member; each places its own blocks last, so every
    /// version keeps its author's attestation on both sides. The two results
    /// hold the same records, and merging one into the other adds nothing.
    @Test func twoDevicesMergingTheSameCopiesKeepEachAuthorsAttestation() throws {
        let c = try TwoCopies("same bytes")
        try c.onLaptop(c.a).add(EntryBody(created: t0 + 10, text: "laptop 1"))
        try c.onLaptop(c.a).add(EntryBody(created: t0 + 11, text: "laptop 2"))
        try c.onPhone(c.b).add(EntryBody(created: t0 + 12, text: "phone 1"))
        let laptopSide = c.dir.file("laptop.quire"), phoneSide = c.dir.file("phone.quire")
        copy(c.a, laptopSide)
        copy(c.b, phoneSide)
        let laptopCopyOfPhone = c.dir.file("from-phone.quire"), phoneCopyOfLaptop = c.dir.file("from-laptop.quire")
        copy(c.b, laptopCopyOfPhone)
        copy(c.a, phoneCopyOfLaptop)
        _ = try VaultMerge.merge(vaultAt: laptopSide, copyAt: laptopCopyOfPhone, credential: .device(c.laptop.keyPair), options: fast)
        _ = try VaultMerge.merge(vaultAt: phoneSide, copyAt: phoneCopyOfLaptop, credential: .device(c.phone.keyPair), options: fast)
        for side in [laptopSide, phoneSide] {
            #expect(try texts(side, .device(c.phone.keyPair)) == ["laptop 1", "laptop 2", "phone 1", "shared"])
            let vault = try c.onPhone(side)
            #expect(vault.verify().issues.isEmpty)
            for e in try vault.entries() where e.revision.body.text != "shared" {
                let author = e.revision.body.text.hasPrefix("laptop") ? c.laptop.keyPair.publicKey : c.phone.keyPair.publicKey
                #expect(try vault.attestations(of: e.id)[e.revision.revisionID] == author, "\(e.revision.body.text) in \(side)")
            }
        }
        let again = try VaultMerge.merge(vaultAt: laptopSide, copyAt: phoneSide, credential: .device(c.laptop.keyPair), options: fast)
        #expect(!again.changed)
    }

    @Test func mergingAgainChangesNothing() throws {
        let c = try TwoCopies("idempotent")
        try c.onPhone(c.b).add(EntryBody(created: t0 + 10, text: "phone"))
        try c.onLaptop(c.a).add(EntryBody(created: t0 + 11, text: "laptop"))
        _ = try VaultMerge.merge(vaultAt: c.a, copyAt: c.b, credential: .device(c.laptop.keyPair), options: fast)
        let once = bytes(c.a)
        let again = try VaultMerge.merge(vaultAt: c.a, copyAt: c.b, credential: .device(c.laptop.keyPair), options: fast)
        #expect(!again.changed && again.framesAdded == 0)
        #expect(bytes(c.a) == once)
        // The merged file merged into a copy of itself: nothing either.
        let twin = c.dir.file("twin.quire")
        copy(c.a, twin)
        #expect(try !VaultMerge.merge(vaultAt: c.a, copyAt: twin, credential: .device(c.laptop.keyPair), options: fast).changed)
    }

    /// A stale copy (an older state of the same file) adds nothing; a vault
    /// that is itself the stale one becomes the copy, byte for byte.
    @Test func staleCopiesAndStaleVaults() throws {
        let c = try TwoCopies("stale")
        try c.onLaptop(c.a).add(EntryBody(created: t0 + 10, text: "newer"))
        let newer = bytes(c.a)
        #expect(try !VaultMerge.merge(vaultAt: c.a, copyAt: c.b, credential: .device(c.laptop.keyPair), options: fast).changed)
        #expect(bytes(c.a) == newer)
        // The other way round: the phone's file is stale, the copy newer.
        let report = try VaultMerge.merge(vaultAt: c.b, copyAt: c.a, credential: .device(c.phone.keyPair), options: fast)
        #expect(report.changed && report.framesAdded == 1)
        #expect(bytes(c.b) == newer)
    }

    @Test func anotherVaultATextFileAndATruncatedFileAreRefused() throws {
        let c = try TwoCopies("refusals")
        let other = TwoCopiesOther()
        let before = bytes(c.a)
        #expect(throws: SyncError.self) { try VaultMerge.merge(vaultAt: c.a, copyAt: other.path, credential: .device(c.laptop.keyPair), options: fast) }
        do {
            _ = try VaultMerge.merge(vaultAt: c.a, copyAt: other.path, credential: .device(c.laptop.keyPair), options: fast)
        } catch {
            #expect(error.code == "different_vaults")
        }
        let text = c.dir.file("notes.txt")
        try Data("Dear diary\n".utf8).write(to: URL(fileURLWithPath: text))
        #expect(throws: SyncError.copyUnreadable(path: text, .truncatedHeader(fileByteCount: 11))) {
            try VaultMerge.merge(vaultAt: c.a, copyAt: text, credential: .device(c.laptop.keyPair), options: fast)
        }
        let cut = c.dir.file("cut.quire")
        try Data(bytes(c.b).prefix(40)).write(to: URL(fileURLWithPath: cut))
        #expect(throws: SyncError.copyUnreadable(path: cut, .truncatedHeader(fileByteCount: 40))) {
            try VaultMerge.merge(vaultAt: c.a, copyAt: cut, credential: .device(c.laptop.keyPair), options: fast)
        }
        #expect(throws: SyncError.keys(.wrongDeviceKey)) {
            try VaultMerge.merge(vaultAt: c.a, copyAt: c.b, credential: .device(device("Stranger").keyPair), options: fast)
        }
        #expect(bytes(c.a) == before)
        #expect(try FileManager.default.contentsOfDirectory(atPath: c.dir.path).filter { $0.hasPrefix(".") }.isEmpty)
    }

    /// Concurrent edits make a conflict: the later clock shows, the other head
    /// is listed; an edit resolves it. Edit against delete and delete against
    /// delete follow the same rule (`Spec/merge.md §5`).
    @Test func concurrentEditsAndDeletes() throws {
        let c = try TwoCopies("conflicts")
        let laptop = try c.onLaptop(c.a)
        let edited = try laptop.add(EntryBody(created: t0 + 10, text: "v1"))
        let editDelete = try laptop.add(EntryBody(created: t0 + 11, text: "keep or delete"))
        let deleteDelete = try laptop.add(EntryBody(created: t0 + 12, text: "deleted twice"))
        try FileManager.default.removeItem(atPath: c.b)
        copy(c.a, c.b)
        let phone = try c.onPhone(c.b)
        let onPhone = try phone.edit(edited.entryID, body: EntryBody(created: t0 + 10, text: "phone's v2"))
        let phoneDelete = try phone.delete(editDelete.entryID)
        try phone.delete(deleteDelete.entryID)
        let onLaptop = try laptop.edit(edited.entryID, body: EntryBody(created: t0 + 10, text: "laptop's v2"))
        let laptopKeep = try laptop.edit(editDelete.entryID, body: EntryBody(created: t0 + 11, text: "kept on the laptop"))
        try laptop.delete(deleteDelete.entryID)
        _ = try VaultMerge.merge(vaultAt: c.a, copyAt: c.b, credential: .device(c.laptop.keyPair), options: fast)
        let merged = try c.onLaptop(c.a)
        // The winner is the head with the greater clock, then the greater
        // revision id (Spec/merge.md §5). The laptop usually wrote last, but
        // two devices can read the same millisecond: the rule decides, not
        // the order of the calls (this test once assumed the order).
        func wins(_ a: EntryRevision, over b: EntryRevision) -> Bool {
            a.clock != b.clock ? a.clock > b.clock : a.revisionID > b.revisionID
        }
        let conflict = try #require(try merged.entry(edited.entryID))
        let laptopWins = wins(onLaptop, over: onPhone)
        #expect(conflict.body.text == (laptopWins ? "laptop's v2" : "phone's v2"))
        #expect(conflict.conflictingHeads == [laptopWins ? onPhone.revisionID : onLaptop.revisionID])
        let keepWins = wins(laptopKeep, over: phoneDelete)
        #expect(try merged.entry(editDelete.entryID)?.isDeleted == !keepWins)
        if keepWins { #expect(try merged.entry(editDelete.entryID)?.body.text == "kept on the laptop") }
        #expect(try merged.entry(editDelete.entryID)?.conflictingHeads.count == 1)
        #expect(try merged.entry(deleteDelete.entryID)?.isDeleted == true)
        // Resolving: an edit names both heads.
        let resolved = try merged.edit(edited.entryID, body: EntryBody(created: t0 + 10, text: "both merged by hand"))
        #expect(Set(resolved.parents) == [onLaptop.revisionID, onPhone.revisionID])
        #expect(try merged.entry(edited.entryID)?.conflictingHeads.isEmpty == true)
        #expect(try merged.entry(edited.entryID)?.body.text == "both merged by hand")
    }

    /// A record of a kind this version does not know (a newer app wrote it)
    /// is carried byte for byte.
    @Test func recordsOfUnknownKindsAreCarried() throws {
        let c = try TwoCopies("unknown kind")
        let phone = try c.onPhone(c.b)
        try phone.add(EntryBody(created: t0 + 10, text: "phone"))
        let unknown = RecordKind(rawValue: 0x9a)
        try phone.file.commit(random: SeededRandom(label: "unknown"), options: fast, attestWith: nil) { (tx: PendingCommit) throws(FormatError) in
            _ = try tx.appendPlaintext(kind: unknown, keyID: tx.key.id, body: Array("from a newer version".utf8), trusted: false)
        }
        try c.onLaptop(c.a).add(EntryBody(created: t0 + 11, text: "laptop"))
        let frame = try #require(VaultFile(path: c.b).structure.frames.last { $0.header.kind == unknown })
        let raw = Array(bytes(c.b)[Int(frame.location.offset)..<Int(frame.end)])
        let report = try VaultMerge.merge(vaultAt: c.a, copyAt: c.b, credential: .device(c.laptop.keyPair), options: fast)
        #expect(report.framesAdded == 2 && report.framesCarriedUnopened == 1 && report.leftOut.isEmpty)
        let merged = try VaultFile(path: c.a)
        let carried = try #require(merged.structure.frames.last { $0.header.kind == unknown })
        #expect(Array(bytes(c.a)[Int(carried.location.offset)..<Int(carried.end)]) == raw)
        #expect(try texts(c.a, .device(c.laptop.keyPair)) == ["laptop", "phone", "shared"])
    }

    /// A rekey that would keep a sealed record of a kind this version does
    /// not know, in a commit a current member attested (a newer version's
    /// real record), is refused, and the file is unchanged: it cannot seal
    /// the record again, and old keys would still open it (Spec/merge.md §6,
    /// tenth review R10-4). Before, the record was re-sealed blindly as if
    /// its layout were a known record's. A compaction without a rekey keeps
    /// it.
    @Test func rekeyRefusesSealedRecordsOfUnknownKinds() throws {
        let c = try TwoCopies("rekey unknown kind")
        let laptop = try c.onLaptop(c.a)
        let unknown = RecordKind(rawValue: 0xbf)
        try laptop.file.commit(random: SeededRandom(label: "unknown sealed"), options: fast, attestWith: c.laptop.keyPair) {
            (tx: PendingCommit) throws(FormatError) in
            _ = try tx.appendSealed(kind: unknown, payload: Array("from a newer version".utf8))
        }
        let before = bytes(c.a)
        do {
            _ = try Compaction.compact(
                vaultAt: c.a, credential: .device(c.laptop.keyPair), options: CompactionOptions(rekey: true), now: t0 + 20, writeOptions: fast)
            Issue.record("a rekey re-sealed a record of a kind it does not know")
        } catch {
            #expect(error.code == "operation_refused")
            #expect(error.description.contains("kind 0xbf"))
        }
        #expect(bytes(c.a) == before)
        _ = try Compaction.compact(vaultAt: c.a, credential: .device(c.laptop.keyPair), options: CompactionOptions(), now: t0 + 21, writeOptions: fast)
        #expect(try VaultFile(path: c.a).structure.frames.contains { $0.header.kind == unknown })
    }

    /// A device removed in the copy cannot merge it: its commits would be
    /// older than the copy's newest epoch. The phone, still enrolled, can,
    /// and the records the laptop could not read stay readable to it.
    /// The phone rotates the key while the laptop writes under epoch 1. The
    /// laptop's block comes first, whole and in its place, but the result
    /// commits it under the epoch-2 write key; the laptop's attestation
    /// signs the epoch-1 key (Spec/format.md §9.2), so merge does not carry
    /// it: the block counts as moved and the merging phone attests it
    /// (merge.md §3.3, fourth review C2). Before, the laptop's attestation
    /// was carried under the new key.
    @Test func mergeDoesNotCarryAnAttestationToAnotherKey() throws {
        let c = try TwoCopies("another key")
        try c.onLaptop(c.a).add(EntryBody(created: t0 + 10, text: "laptop, under epoch 1"))
        try c.onPhone(c.b).rotateKeys(now: t0 + 11)
        let report = try VaultMerge.merge(vaultAt: c.b, copyAt: c.a, credential: .device(c.phone.keyPair), options: fast)
        #expect(report.changed && report.leftOut.isEmpty && report.unattestedCommits == 0)
        let vault = try c.onPhone(c.b)
        #expect(vault.verify().issues.isEmpty)
        let entry = try #require(try vault.entries().first { $0.revision.body.text == "laptop, under epoch 1" })
        #expect(entry.isVerified)
        #expect(try vault.attestations(of: entry.id)[entry.revision.revisionID] == c.phone.keyPair.publicKey)
    }

    @Test func aDeviceRemovedInTheCopyCannotMergeIt() throws {
        let c = try TwoCopies("removed")
        let phone = try c.onPhone(c.b)
        try phone.removeDevice(named: "Laptop", now: t0 + 10)
        try phone.add(EntryBody(created: t0 + 11, text: "after the laptop was removed"))
        try c.onLaptop(c.a).add(EntryBody(created: t0 + 12, text: "laptop, before it learns"))
        let before = bytes(c.a)
        #expect(throws: SyncError.removed(newerEpoch: 2)) {
            try VaultMerge.merge(vaultAt: c.a, copyAt: c.b, credential: .device(c.laptop.keyPair), options: fast)
        }
        #expect(bytes(c.a) == before)
        // On the phone: the laptop's concurrent entry comes in.
        let report = try VaultMerge.merge(vaultAt: c.b, copyAt: c.a, credential: .device(c.phone.keyPair), options: fast)
        #expect(report.changed && report.leftOut.isEmpty)
        #expect(try texts(c.b, .device(c.phone.keyPair)) == ["after the laptop was removed", "laptop, before it learns", "shared"])
        #expect(try texts(c.b, .device(c.laptop.keyPair)) == ["laptop, before it learns", "shared"])
        #expect(try c.onPhone(c.b).verify().issues.isEmpty)
    }

    /// A damaged record in the copy is reported and left out; the rest is merged.
    @Test func aDamagedCopyGivesEveryIntactRecord() throws {
        let c = try TwoCopies("damaged")
        let phone = try c.onPhone(c.b)
        try phone.add(EntryBody(created: t0 + 10, text: "intact 1"))
        let victim = try phone.add(EntryBody(created: t0 + 11, text: "to be damaged"))
        try phone.add(EntryBody(created: t0 + 12, text: "intact 2"))
        _ = victim
        try c.onLaptop(c.a).add(EntryBody(created: t0 + 13, text: "laptop"))
        // Flip a bit in the body of the second of the three new entry frames.
        let file = try VaultFile(path: c.b)
        let entries = file.structure.frames.filter { $0.header.kind == .entryRevision }
        let target = entries[entries.count - 2]
        var raw = bytes(c.b)
        raw[Int(target.bodyOffset) + 30] ^= 0x01
        try Data(raw).write(to: URL(fileURLWithPath: c.b))
        let report = try VaultMerge.merge(vaultAt: c.a, copyAt: c.b, credential: .device(c.laptop.keyPair), options: fast)
        #expect(report.changed)
        #expect(report.leftOut.map(\.code) == ["authentication_failed"])
        #expect(try texts(c.a, .device(c.laptop.keyPair)) == ["intact 1", "intact 2", "laptop", "shared"])
    }
}

/// A vault with another vault id.
struct TwoCopiesOther {
    let dir = TemporaryDirectory()
    var path: String { dir.file("Other.quire") }
    init() {
        _ = try! Vault.create(
            at: dir.file("Other.quire"), setup: VaultSetup(name: "Other", recoveryKey: try! RecoveryKey(using: SeededRandom(label: "other")), now: t0),
            random: SeededRandom(label: "other vault"), options: fast)
    }
}
