import Foundation
import Testing
@_spi(Format) import Quire
@_spi(Crypto) import QuireCrypto
@_spi(Format) import QuireFormat
@_spi(Format) import QuireKeys
import QuireSystem

/// Findings of the review of format 2 about the commit chain, records and
/// clocks (`Spec/threat-model.md §6.4`), each as the attack that worked
/// before its fix, on real vaults through the facade.
@Suite struct RecordAttackTests {
    static let t0 = KeyTestSupport.t0
    static let day = KeyTestSupport.day

    static func device(_ name: String) -> DeviceIdentity {
        try! DeviceIdentity.generate(name: name, now: t0, using: SeededRandom(label: "record attack device " + name))
    }

    static func bytes(_ path: String) -> [UInt8] { Array((try? Data(contentsOf: URL(fileURLWithPath: path))) ?? Data()) }
    static func write(_ bytes: [UInt8], _ path: String) throws { try Data(bytes).write(to: URL(fileURLWithPath: path)) }

    /// Overwrites the first frame of commit group `group` of the file at
    /// `path` with a frame of the same size, of a kind nobody knows, whose
    /// unkeyed checks hold: what a keyless writer can do, and the commit is
    /// then tampered (nothing looks damaged) when a later commit verifies.
    static func replaceFirstFrame(of group: Int, in path: String) throws {
        let s = try VaultFile(path: path).structure
        let victim = s.frames[s.groups[group].members.lowerBound]
        let body = [UInt8](repeating: 0x42, count: Int(victim.header.bodyLength) - 32)
        let header = FrameHeader(kind: RecordKind(rawValue: 0x9e), flags: 0, keyID: victim.header.keyID, bodyLength: victim.header.bodyLength)
        try SystemFile(path: path, mode: .readWrite).write(header.encoded() + body + BLAKE2b.hash(body, byteCount: 32), at: victim.location.offset)
    }

    /// A vault with a laptop (its creator) and the recovery key.
    static func laptopVault(_ dir: TemporaryDirectory, _ label: String) throws -> (Vault, DeviceIdentity) {
        var laptop = device("Laptop " + label)
        laptop.name = "Laptop"
        let vault = try Vault.create(
            at: dir.file("j.quire"), setup: VaultSetup(name: "Journal", recoveryKey: testRecoveryKey("record attack " + label), device: laptop, now: t0),
            random: SeededRandom(label: "record attack " + label), options: fast)
        return (vault, laptop)
    }

    /// The vault file at `path` opened with `credential`'s keys, for writing
    /// frames by hand as a holder of those keys would.
    static func rawFile(_ path: String, _ credential: Credential) throws -> VaultFile {
        let f = try VaultFile(path: path, writable: true)
        let unlocked = try KeyringEvaluator.unlock(f, with: credential)
        f.verifyCommits(keys: unlocked.keys, trustedKeyrings: unlocked.trustedKeyrings, attestors: unlocked.attestors)
        return f
    }

    // MARK: H3 — a removed device writes into the past

    /// A phone, removed, takes its copy from before the removal and writes a
    /// group there — an entry and a frame of a critical kind nobody knows —
    /// chained from the stored head before the removal, under its old key,
    /// attested by itself, then splices it into the file just before the
    /// removal. Before, that group verified and was attested by "a member":
    /// the entry showed as the phone's, and the unknown critical kind made
    /// the vault unopenable for everyone. Now the commit after it chains from
    /// the commit before it, so the group is orphaned: the entry is
    /// unverified, the frame one per-frame issue, and the removal's commit
    /// still verifies (`Spec/format.md §9.3`, §9.4). What the phone attested
    /// while it was a member shows as attested by a removed member.
    @Test func attackRemovedDeviceInsertsAttestedPast() throws {
        let dir = TemporaryDirectory()
        let (vault, laptop) = try Self.laptopVault(dir, "insert past")
        let path = dir.file("j.quire")
        let phone = Self.device("Phone insert past")
        try vault.enrollDevice(code: phone.code, name: "Phone", now: Self.t0 + 1)
        try Vault.open(at: path, credential: .device(phone.keyPair), options: fast).add(EntryBody(created: Self.t0 + 2, text: "phone, as a member"))
        let beforeRemoval = Self.bytes(path)
        try vault.removeDevice(named: "Phone", now: Self.t0 + 3)
        try vault.add(EntryBody(created: Self.t0 + 4, text: "after the removal"))
        let afterRemoval = Self.bytes(path)

        let old = dir.file("old.quire")
        try Self.write(beforeRemoval, old)
        let f = try Self.rawFile(old, .device(phone.keyPair))
        let backdated = EntryRevision(
            entryID: EntryID(using: SeededRandom(label: "backdated")), revisionID: RevisionID(using: SeededRandom(label: "backdated rev")),
            clock: HybridLogicalClock(milliseconds: UInt64(Self.t0 + 3), counter: 0), body: EntryBody(created: Self.t0 + 3, text: "back-dated"))
        try f.commit(random: SeededRandom(label: "insert"), options: fast, attestWith: phone.keyPair) { (tx: PendingCommit) throws(FormatError) in
            try tx.appendSealed(kind: .entryRevision, payload: backdated.encoded())
            try tx.appendPlaintext(kind: RecordKind(rawValue: 0x7e), keyID: tx.key.id, body: Array("a kind nobody knows".utf8), trusted: false)
        }
        let inserted = Array(Self.bytes(old)[beforeRemoval.count...])
        try Self.write(beforeRemoval + inserted + Array(afterRemoval[beforeRemoval.count...]), path)

        let reader = try Vault.open(at: path, credential: .device(laptop.keyPair), writable: false, options: fast)
        let entries = try reader.entries()
        let forged = try #require(entries.first { $0.body.text == "back-dated" })
        #expect(!forged.isVerified && forged.attestedBy == nil)
        let after = try #require(entries.first { $0.body.text == "after the removal" })
        #expect(after.isVerified && after.attestedBy == laptop.publicKey)
        let asMember = try #require(entries.first { $0.body.text == "phone, as a member" })
        #expect(asMember.isVerified && asMember.attestedBy == nil)
        let codes = reader.file.commitIssues.map(\.code)
        #expect(codes.contains("commit_orphaned") && !codes.contains("commit_mismatch"))
        #expect(reader.file.skippedCriticalKinds.map(\.code) == ["unknown_critical_kind"])
        // Every credential still opens it, and the laptop still writes.
        let writer = try Vault.open(at: path, credential: .device(laptop.keyPair), options: fast)
        try writer.add(EntryBody(created: Self.t0 + 5, text: "still writing"))
    }

    // MARK: R7-3 — the removed device re-commits the commit that removes it

    /// The laptop removes the phone; the removal's commit is the file's
    /// last. The phone, which holds only the epoch-1 key, replaces that
    /// commit frame by one of its own under epoch 1 over the same group
    /// (unattested) and appends an entry in a commit chained from it,
    /// attested by itself. Before (seventh review R7-3), the removal's commit
    /// was made under epoch 1: the phone's copy verified, unattested, raising
    /// no floor, and its entry was released as verified with nothing
    /// reported. Now the removal's commit is made under the epoch-2 key
    /// (`Spec/format.md §9.2`); the copy under epoch 1 is stale (below its
    /// own group's keyring, §9.3 step 2) and the phone's commit, chained
    /// from it, is orphaned: its entry is unverified.
    @Test func attackRemovedDeviceRecommitsItsRemoval() throws {
        let dir = TemporaryDirectory()
        let (vault, laptop) = try Self.laptopVault(dir, "recommits removal")
        let path = dir.file("j.quire")
        let phone = Self.device("Phone recommits removal")
        try vault.enrollDevice(code: phone.code, name: "Phone", now: Self.t0 + 1)
        try vault.add(EntryBody(created: Self.t0 + 2, text: "before the removal"))
        try vault.removeDevice(named: "Phone", now: Self.t0 + 3)

        // The phone's view: the removal keyring does not open, epoch 1 does.
        let seen = try Self.rawFile(path, .device(phone.keyPair))
        let epoch1 = try #require(seen.keys.writeKey)
        #expect(epoch1.epoch == 1)
        let removal = try #require(seen.structure.groups.last)
        let commitFrame = seen.structure.frames[removal.commitFrame]
        // The library made the removal's commit under the new epoch's key.
        #expect(commitFrame.header.keyID != epoch1.id)
        let header = CommitChain.commitHeader(keyID: epoch1.id)
        let body = try CommitChain.body(
            previousHead: removal.storedPreviousHead, digest: removal.digest, attestation: CommitChain.unattested, key: epoch1,
            vaultID: seen.vaultID, commitHeader: header)
        var bytes = Self.bytes(path)
        #expect(UInt64(bytes.count) == commitFrame.location.offset + UInt64(header.encoded().count + body.count))
        bytes.replaceSubrange(Int(commitFrame.location.offset)..<bytes.count, with: header.encoded() + body)
        try Self.write(bytes, path)
        let f = try Self.rawFile(path, .device(phone.keyPair))
        let forgedRevision = EntryRevision(
            entryID: EntryID(using: SeededRandom(label: "recommit")), revisionID: RevisionID(using: SeededRandom(label: "recommit rev")),
            clock: HybridLogicalClock(milliseconds: UInt64(Self.t0 + 4), counter: 0),
            body: EntryBody(created: Self.t0 + 4, text: "by the removed phone"))
        try f.commit(random: SeededRandom(label: "recommit"), options: fast, attestWith: phone.keyPair) {
            (tx: PendingCommit) throws(FormatError) in
            try tx.appendSealed(kind: .entryRevision, payload: forgedRevision.encoded())
        }

        let reader = try Vault.open(at: path, credential: .device(laptop.keyPair), writable: false, options: fast)
        let entries = try reader.entries()
        let forged = try #require(entries.first { $0.body.text == "by the removed phone" })
        #expect(!forged.isVerified && forged.attestedBy == nil)
        let codes = reader.file.commitIssues.map(\.code)
        #expect(codes.contains("stale_epoch") && codes.contains("commit_orphaned"))
        // The removal stands: its keyring is trusted whatever its commit.
        #expect(try reader.keyState().removed.contains { $0.publicKey == phone.publicKey })
    }

    /// What a member attested before a trusted keyring removed it is shown
    /// as attested by a removed member, not as a member's: the file cannot
    /// show it was written before the removal (`Spec/format.md §9.4`).
    @Test func removedMembersAttestationIsReportedAsSuch() throws {
        let dir = TemporaryDirectory()
        let (vault, laptop) = try Self.laptopVault(dir, "removed attestor")
        let path = dir.file("j.quire")
        let phone = Self.device("Phone removed attestor")
        try vault.enrollDevice(code: phone.code, name: "Phone", now: Self.t0 + 1)
        try Vault.open(at: path, credential: .device(phone.keyPair), options: fast).add(EntryBody(created: Self.t0 + 2, text: "by the phone"))
        let before = try Vault.open(at: path, credential: .device(laptop.keyPair), options: fast)
        #expect(try before.entries().first?.attestedBy == phone.publicKey)
        try before.removeDevice(named: "Phone", now: Self.t0 + 3)
        let after = try Vault.open(at: path, credential: .device(laptop.keyPair), options: fast)
        let entry = try #require(try after.entries().first)
        #expect(entry.isVerified && !entry.isAttested && entry.attestedByRemovedMember == phone.publicKey)
    }

    // MARK: H2 — an early copy of the newest keyring makes history stale

    /// Someone with no key copies the keyring of a rotation to just after the
    /// first commit, with a junk commit after it. Before, the floor counted
    /// the keyring where its first intact copy lay, so every commit of the
    /// old epoch between there and the real rotation was stale and its
    /// entries vanished. Now a keyring raises the floor only in a verified
    /// commit a current member attested (`Spec/format.md §9.3`).
    @Test func attackEarlyKeyringCopyMakesHistoryStale() throws {
        let dir = TemporaryDirectory()
        let (vault, laptop) = try Self.laptopVault(dir, "early copy")
        let path = dir.file("j.quire")
        try vault.add(EntryBody(created: Self.t0 + 1, text: "one"))
        try vault.add(EntryBody(created: Self.t0 + 2, text: "two"))
        try vault.rotateKeys(now: Self.t0 + 3)
        try vault.add(EntryBody(created: Self.t0 + 4, text: "three"))
        let original = Self.bytes(path)
        let s = try VaultFile(path: path).structure
        let rotation = try #require(s.frames.first { f in
            f.header.kind == .keyring && f.plaintextBody.flatMap { try? KeyringRecord(body: $0, location: nil) }?.epoch == 2
        })
        let copy = Array(original[Int(rotation.location.offset)..<Int(rotation.end)])
        let junk = CommitChain.commitHeader(keyID: KeyID(rawValue: 0x1234_5678_9abc)).encoded() + [UInt8](repeating: 0xa5, count: CommitChain.bodyByteCount)
        let cut = Int(s.frames[s.groups[0].commitFrame].end)
        try Self.write(Array(original[0..<cut]) + copy + junk + Array(original[cut...]), path)

        let reader = try Vault.open(at: path, credential: .device(laptop.keyPair), writable: false, options: fast)
        let entries = try reader.entries()
        #expect(entries.map(\.body.text).sorted() == ["one", "three", "two"])
        #expect(entries.allSatisfy { $0.isVerified && $0.attestedBy == laptop.publicKey })
        #expect(!reader.file.commitIssues.contains { $0.code == "stale_epoch" })
    }

    // MARK: M3 — a deleted group leaves only a mismatch

    /// Someone with no key replaces the tombstone of an entry with an unknown
    /// non-critical frame of the same size and keeps the commit frame. Before,
    /// the commit was one `commit_mismatch`, the entry came back as verified
    /// and attested, and writes and compaction went on. Now a later commit
    /// vouches for the commit's stored head and nothing in it is damaged: it
    /// is `commit_tampered`, writes are refused, compaction refuses, and
    /// merging a copy that holds the commit puts it back
    /// (`Spec/format.md §9.3`, `Spec/merge.md §6`).
    @Test func attackDeletedTombstoneReplacedBySameSizeFrame() throws {
        let dir = TemporaryDirectory()
        let (vault, laptop) = try Self.laptopVault(dir, "deleted group")
        let path = dir.file("j.quire")
        let secret = try vault.add(EntryBody(created: Self.t0 + 1, text: "deleted on purpose"))
        try vault.delete(secret.entryID)
        try vault.add(EntryBody(created: Self.t0 + 2, text: "later"))
        let good = dir.file("good.quire")
        try Self.write(Self.bytes(path), good)
        let s = try VaultFile(path: path).structure
        let tombstone = s.frames[s.groups[2].members.lowerBound]
        #expect(tombstone.header.kind == .entryRevision && s.groups[2].members.count == 1)
        let body = [UInt8](repeating: 0x42, count: Int(tombstone.header.bodyLength) - 32)
        let header = FrameHeader(kind: RecordKind(rawValue: 0x9e), flags: 0, keyID: tombstone.header.keyID, bodyLength: tombstone.header.bodyLength)
        let junk = header.encoded() + body + BLAKE2b.hash(body, byteCount: 32)
        try SystemFile(path: path, mode: .readWrite).write(junk, at: tombstone.location.offset)

        let tampered = try Vault.open(at: path, credential: .device(laptop.keyPair), options: fast)
        #expect(tampered.file.commitIssues.map(\.code).contains("commit_tampered"))
        do {
            try tampered.add(EntryBody(created: Self.t0 + 3, text: "refused"))
            Issue.record("a write went ahead over a tampered commit")
        } catch {
            #expect(error.code == "commit_tampered")
        }
        do {
            try tampered.compact(now: Self.t0 + 4)
            Issue.record("compaction went ahead over a tampered commit")
        } catch {
            #expect(error.code == "compaction_refused")
        }
        // The way out: merge a copy that holds the commit.
        _ = try VaultMerge.merge(vaultAt: path, copyAt: good, credential: .device(laptop.keyPair), options: fast)
        let repaired = try Vault.open(at: path, credential: .device(laptop.keyPair), options: fast)
        #expect(!repaired.file.commitIssues.contains { $0.code == "commit_tampered" })
        #expect(try repaired.entry(secret.entryID)?.isDeleted == true)
        try repaired.add(EntryBody(created: Self.t0 + 5, text: "writes again"))
    }

    /// With no intact copy to merge, compacting without what cannot be
    /// verified is the way out: it keeps only what the chain vouches for and
    /// says what it dropped.
    @Test func tamperedVaultCompactsWhenAskedToDropUnverified() throws {
        let dir = TemporaryDirectory()
        let (vault, laptop) = try Self.laptopVault(dir, "drop unverified")
        let path = dir.file("j.quire")
        try vault.add(EntryBody(created: Self.t0 + 1, text: "kept"))
        try vault.add(EntryBody(created: Self.t0 + 2, text: "replaced"))
        try vault.add(EntryBody(created: Self.t0 + 3, text: "kept too"))
        let s = try VaultFile(path: path).structure
        let victim = s.frames[s.groups[2].members.lowerBound]
        let body = [UInt8](repeating: 0x42, count: Int(victim.header.bodyLength) - 32)
        let header = FrameHeader(kind: RecordKind(rawValue: 0x9e), flags: 0, keyID: victim.header.keyID, bodyLength: victim.header.bodyLength)
        try SystemFile(path: path, mode: .readWrite).write(header.encoded() + body + BLAKE2b.hash(body, byteCount: 32), at: victim.location.offset)
        let tampered = try Vault.open(at: path, credential: .device(laptop.keyPair), options: fast)
        let report = try tampered.compact(CompactionOptions(dropUnverified: true), now: Self.t0 + 4)
        #expect(!report.dropped.isEmpty)
        let after = try Vault.open(at: path, credential: .device(laptop.keyPair), options: fast)
        #expect(after.file.commits.allVerified)
        #expect(try after.entries().map(\.body.text).contains("kept too"))
        try after.add(EntryBody(created: Self.t0 + 5, text: "writes again"))
    }

    /// Third review, item 13: a tampered commit is a write-stop anyone who
    /// can write the file sets off (replace one record's frame, keep the
    /// commit frame). Before, the only ways out were a merge of a copy that
    /// holds the commit or a compaction that drops what cannot be verified:
    /// with no copy, the user had to rewrite the vault to write again. Now
    /// the user may accept it (`Spec/keys.md §7`, "Accepting a tampered
    /// commit"): the refusal names that way out, the device remembers the
    /// accepted commit by its stored head, writing goes on (and the new
    /// records verify), the tampered records stay unverified and reported,
    /// and a commit tampered with later is refused again.
    @Test func attackTamperedCommitStopsWritingUntilAccepted() throws {
        let dir = TemporaryDirectory()
        let (vault, laptop) = try Self.laptopVault(dir, "accept tampered")
        let path = dir.file("j.quire")
        let store = FileDeviceKeyStore(directory: dir.file("home"))
        try store.create(laptop)
        for (i, text) in ["one", "replaced", "three", "four", "replaced later", "six"].enumerated() {
            try vault.add(EntryBody(created: Self.t0 + 1 + Int64(i), text: text))
        }
        func tamper(group: Int) throws { try Self.replaceFirstFrame(of: group, in: path) }
        try tamper(group: 2)
        let tampered = try Vault.open(at: path, store: store, options: fast)
        #expect(tampered.file.tamperedCommits.count == 1)
        do {
            try tampered.add(EntryBody(created: Self.t0 + 10, text: "refused"))
            Issue.record("a write went ahead over a tampered commit")
        } catch {
            #expect(error.code == "commit_tampered")
            #expect(error.description.contains("or accept it and write on"))
            // The library's message names no command: the CLI adds its own hint.
            #expect(!error.description.contains("quire "))
        }
        #expect(try tampered.acceptTampered() == 1)
        try tampered.add(EntryBody(created: Self.t0 + 11, text: "after accepting"))

        // Remembered for this file: a new handle writes on; the tampered
        // commit is still reported, the new record verifies.
        let again = try Vault.open(at: path, store: store, options: fast)
        #expect(again.file.commitIssues.map(\.code).contains("commit_tampered"))
        #expect(try again.acceptTampered() == 0)
        try again.add(EntryBody(created: Self.t0 + 12, text: "and on"))
        let reader = try Vault.open(at: path, credential: .device(laptop.keyPair), writable: false, options: fast)
        let entries = try reader.entries()
        #expect(entries.filter { ["after accepting", "and on"].contains($0.body.text) }.allSatisfy { $0.isVerified && $0.attestedBy == laptop.publicKey })
        #expect(entries.contains { $0.body.text == "after accepting" })
        #expect(!entries.contains { $0.body.text == "replaced" && $0.isVerified })

        // Another commit tampered with later is refused again.
        try tamper(group: 5)
        let later = try Vault.open(at: path, store: store, options: fast)
        #expect(later.file.tamperedCommits.count == 2)
        do {
            try later.add(EntryBody(created: Self.t0 + 13, text: "refused again"))
            Issue.record("a write went ahead over a commit tampered after the acceptance")
        } catch {
            #expect(error.code == "commit_tampered")
        }
    }

    /// Fifth review, F5: a keyless writer tampers with 65 commits (one
    /// frame each in every other commit, nothing looks damaged). Before, accepting remembered the
    /// stored head of each tampered commit, at most 64 of them: the 65th
    /// was forgotten, and the next handle refused to write again — the last
    /// way out was gone. Now the device remembers one watermark (the
    /// committed end, its head, how many tampered commits end there), so
    /// any number is accepted; one more tampered with before the watermark
    /// is still refused (`Spec/keys.md §7`).
    @Test func attackSixtyFiveTamperedCommitsDefeatAccepting() throws {
        let dir = TemporaryDirectory()
        let (vault, laptop) = try Self.laptopVault(dir, "accept 65 tampered")
        let path = dir.file("j.quire")
        let store = FileDeviceKeyStore(directory: dir.file("home"))
        try store.create(laptop)
        for i in 0..<132 { try vault.add(EntryBody(created: Self.t0 + 1 + Int64(i), text: "entry \(i)")) }
        // Every other commit: a tampered commit is one a later commit that
        // verifies chains from.
        for group in stride(from: 1, through: 129, by: 2) { try Self.replaceFirstFrame(of: group, in: path) }
        let tampered = try Vault.open(at: path, store: store, options: fast)
        #expect(tampered.file.tamperedCommits.count == 65)
        #expect(try tampered.acceptTampered() == 65)
        try tampered.add(EntryBody(created: Self.t0 + 100, text: "after accepting"))

        let again = try Vault.open(at: path, store: store, options: fast)
        try again.add(EntryBody(created: Self.t0 + 101, text: "and on"))
        #expect(try again.acceptTampered() == 0)

        // One more commit before the watermark tampered with: refused again.
        try Self.replaceFirstFrame(of: 131, in: path)
        let later = try Vault.open(at: path, store: store, options: fast)
        #expect(later.file.tamperedCommits.count == 66)
        #expect(throws: (any Error).self) { try later.add(EntryBody(created: Self.t0 + 102, text: "refused")) }
    }

    // MARK: M4 — clock poisoning

    /// A holder of the epoch key (here an unattested commit) appends a
    /// revision whose clock is 2⁶⁴ − 1. Before, every device's clock followed
    /// it and saturated there, and a rolled-back file carrying it passed the
    /// rollback test on records. Now only clocks a member attested count, and
    /// a reading more than a day ahead is not followed (`Spec/records.md §3.2`).
    @Test func attackClockPoisoning() throws {
        let dir = TemporaryDirectory()
        let (vault, laptop) = try Self.laptopVault(dir, "clock")
        let path = dir.file("j.quire")
        let store = FileDeviceKeyStore(directory: dir.file("home"))
        try store.create(laptop)
        try vault.add(EntryBody(created: Self.t0 + 1, text: "older"))
        let older = Self.bytes(path)
        try vault.add(EntryBody(created: Self.t0 + 2, text: "newest"))
        // This device reads the journal and remembers what it saw, "newest" included.
        let seen = try Vault.open(at: path, store: store, options: fast)
        #expect(try seen.entries().count == 2)
        try seen.remember(in: store)

        func poison(_ label: String) throws {
            let f = try Self.rawFile(path, .device(laptop.keyPair))
            let r = EntryRevision(
                entryID: EntryID(using: SeededRandom(label: label)), revisionID: RevisionID(using: SeededRandom(label: label + " rev")),
                clock: HybridLogicalClock(rawValue: .max), body: EntryBody(created: Self.t0, text: "poison"))
            try f.commit(random: SeededRandom(label: label), options: fast, attestWith: nil) { (tx: PendingCommit) throws(FormatError) in
                try tx.appendSealed(kind: .entryRevision, payload: r.encoded())
            }
        }
        // The writer's clock does not follow it.
        try poison("poison 1")
        let writer = try Vault.open(at: path, credential: .device(laptop.keyPair), options: fast)
        let made = try writer.add(EntryBody(created: Self.t0 + 3, text: "after the poison"))
        let now = UInt64(ProcessStats.wallClockMilliseconds())
        #expect(made.clock.rawValue != .max && made.clock.milliseconds <= now + UInt64(Self.day))
        // A rollback to before "newest", with a poisoned revision appended, is still a rollback.
        try Self.write(older, path)
        try poison("poison 2")
        let rolledBack = try Vault.open(at: path, store: store, options: fast)
        #expect(rolledBack.keyWarnings.contains { $0.code == "rollback_suspected" })
        #expect(throws: QuireError.self) { try rolledBack.add(EntryBody(created: Self.t0 + 4, text: "refused")) }
    }

    // MARK: Third review, item 11 — an unattested child retires an attested revision

    /// A holder of an epoch key (here the laptop's key, written without its
    /// attestation, as a passphrase or escrow holder would) appends an old
    /// tombstone naming a member's attested revision as its parent. Before,
    /// that retired the attested revision: the entry showed deleted, and a
    /// member's compaction with a horizon dropped it whole (without one, it
    /// kept only the tombstone). Now a revision no current member attested
    /// does not retire one a member did (`Spec/merge.md §5`, §6): both are
    /// heads, the attested one shows, and compaction keeps it.
    @Test func attackUnattestedChildRetiresAttestedRevision() throws {
        let dir = TemporaryDirectory()
        let (vault, laptop) = try Self.laptopVault(dir, "retire")
        let path = dir.file("j.quire")
        let kept = try vault.add(EntryBody(created: Self.t0 + 1, text: "attested"))
        _ = try vault.add(EntryBody(created: Self.t0 + 2, text: "newer, so that compaction keeps the other only as a head"))
        let f = try Self.rawFile(path, .device(laptop.keyPair))
        let tombstone = EntryRevision(
            entryID: kept.entryID, revisionID: RevisionID(using: SeededRandom(label: "retire tombstone")), parents: [kept.revisionID],
            clock: HybridLogicalClock(milliseconds: UInt64(Self.t0 + 2), counter: 0), isDeleted: true)
        try f.commit(random: SeededRandom(label: "retire commit"), options: fast, attestWith: nil) { (tx: PendingCommit) throws(FormatError) in
            try tx.appendSealed(kind: .entryRevision, payload: tombstone.encoded())
        }
        let reader = try Vault.open(at: path, credential: .device(laptop.keyPair), options: fast)
        let shown = try #require(try reader.entry(kept.entryID))
        #expect(!shown.isDeleted)
        #expect(shown.revision.revisionID == kept.revisionID)
        #expect(shown.conflictingHeads == [tombstone.revisionID])
        // A member's compaction, with a horizon the tombstone is past, keeps the attested revision.
        _ = try reader.compact(CompactionOptions(tombstoneHorizonMilliseconds: Self.day), now: Self.t0 + 30 * Self.day)
        let after = try Vault.open(at: path, credential: .device(laptop.keyPair), options: fast)
        let still = try #require(try after.entry(kept.entryID))
        #expect(!still.isDeleted)
        #expect(still.revision.revisionID == kept.revisionID)
    }

    // MARK: Eleventh review, R11-2 — removing a device undid its deletions and edits

    /// The laptop writes two entries; the phone, a member, deletes the
    /// first, edits the second and renames the journal; then the laptop
    /// removes the phone (a lost phone). Before, every commit of a removed
    /// member ranked as "attested by a removed member" for the winner too:
    /// the phone's tombstone and edit retired nothing, and the laptop's
    /// attested revisions and profile won by standing — the deleted entry
    /// came back, the edit and the name reverted. Now a removed member's
    /// commit that is a link ancestor of its removal's commit, which a
    /// current member attested, ranks with a current member's standing
    /// (`Spec/format.md §9.4` step 5), shown still as the removed member's;
    /// compaction keeps it so by writing it into its attested commit 1
    /// (`Spec/merge.md §6`).
    @Test func removingADeviceKeepsItsDeletionsAndEdits() throws {
        let dir = TemporaryDirectory()
        let (vault, laptop) = try Self.laptopVault(dir, "removal keeps")
        let path = dir.file("j.quire")
        let phone = Self.device("Phone removal keeps")
        try vault.enrollDevice(code: phone.code, name: "Phone", now: Self.t0 + 1)
        let gone = try vault.add(EntryBody(created: Self.t0 + 2, text: "deleted on the phone"))
        let kept = try vault.add(EntryBody(created: Self.t0 + 2, text: "written on the laptop"))
        let onPhone = try Vault.open(at: path, credential: .device(phone.keyPair), options: fast)
        let tombstone = try onPhone.delete(gone.entryID)
        let edited = try onPhone.edit(
            kept.entryID, body: EntryBody(created: Self.t0 + 2, text: "edited on the phone"), replacing: [kept.revisionID])
        try onPhone.commit { tx in try tx.setProfile(name: "Renamed on the phone") }
        try vault.removeDevice(named: "Phone", now: Self.t0 + 3)

        func check(_ v: Vault, by author: [UInt8]?) throws {
            let deleted = try #require(try v.entry(gone.entryID))
            #expect(deleted.isDeleted)
            #expect(deleted.revision.revisionID == tombstone.revisionID)
            #expect(deleted.conflictingHeads.isEmpty)
            let shown = try #require(try v.entry(kept.entryID))
            #expect(shown.revision.revisionID == edited.revisionID)
            #expect(shown.body.text == "edited on the phone")
            #expect(shown.conflictingHeads.isEmpty)
            // Shown as the removed phone's until a compaction re-attests it.
            #expect(shown.attestedBy == author)
            #expect(shown.attestedByRemovedMember == (author == nil ? phone.publicKey : nil))
            #expect(try v.profile()?.name == "Renamed on the phone")
            #expect(try v.entries().map(\.id) == [kept.entryID])
        }
        try check(vault, by: nil)
        try check(try Vault.open(at: path, credential: .device(laptop.keyPair), writable: false, options: fast), by: nil)
        // Compaction keeps the laptop's older revisions too (history): the
        // phone's revisions go in the attested commit 1 and still retire them.
        try Vault.open(at: path, credential: .device(laptop.keyPair), options: fast).compact(
            CompactionOptions(keepHistory: 5), now: Self.t0 + 4)
        let compacted = try Vault.open(at: path, credential: .device(laptop.keyPair), writable: false, options: fast)
        try check(compacted, by: laptop.publicKey)
        #expect(try compacted.revisions(of: kept.entryID).count == 2)
        #expect(compacted.verify().unattestedRecordCount == 0)
    }

    // MARK: Tenth review, R10-2 — the winner chosen by clock alone

    /// A holder of an epoch key (here the laptop's key, written without its
    /// attestation, as a passphrase or escrow holder would) appends a
    /// revision naming the member's tombstone as its parent, with `deleted:
    /// false`, clock 2⁶⁴ − 1 and the laptop's device id in `device`. It
    /// cannot retire the tombstone, but before, the winner was the head with
    /// the greatest clock: the entry came back live with the attacker's
    /// text, and nothing was reported. Now standing comes first
    /// (`Spec/merge.md §5`): the tombstone shows, the attacker's head is
    /// listed, and `verify` counts the unattested commit and record.
    @Test func attackUnattestedRevisionDoesNotUndeleteByClock() throws {
        let dir = TemporaryDirectory()
        let (vault, laptop) = try Self.laptopVault(dir, "undelete")
        let path = dir.file("j.quire")
        let made = try vault.add(EntryBody(created: Self.t0 + 1, text: "written by the laptop"))
        let tombstone = try vault.delete(made.entryID)
        let f = try Self.rawFile(path, .device(laptop.keyPair))
        let evil = EntryRevision(
            entryID: made.entryID, revisionID: RevisionID(using: SeededRandom(label: "undelete revision")), parents: [tombstone.revisionID],
            clock: HybridLogicalClock(rawValue: .max), device: tombstone.device,
            body: EntryBody(created: Self.t0 + 1, text: "back from the dead, written by a non-member"))
        try f.commit(random: SeededRandom(label: "undelete commit"), options: fast, attestWith: nil) { (tx: PendingCommit) throws(FormatError) in
            try tx.appendSealed(kind: .entryRevision, payload: evil.encoded())
        }
        let reader = try Vault.open(at: path, credential: .device(laptop.keyPair), options: fast)
        let shown = try #require(try reader.entry(made.entryID))
        #expect(shown.isDeleted)
        #expect(shown.revision.revisionID == tombstone.revisionID)
        #expect(shown.attestedBy == Array(laptop.keyPair.publicKey))
        #expect(shown.conflictingHeads == [evil.revisionID])
        #expect(try reader.entries().allSatisfy { $0.id != made.entryID })
        #expect(try reader.deletedEntries().map(\.id) == [made.entryID])
        let report = reader.verify()
        #expect(report.isIntact)
        #expect(report.unattestedCommitCount == 1)
        #expect(report.unattestedRecordCount == 1)
        // A later member edit that names every head resolves it (one head).
        let resolved = try reader.edit(made.entryID, body: EntryBody(created: Self.t0 + 1, text: "restored by the laptop"))
        let after = try #require(try Vault.open(at: path, credential: .device(laptop.keyPair), options: fast).entry(made.entryID))
        #expect(after.revision.revisionID == resolved.revisionID)
        #expect(after.conflictingHeads.isEmpty)
    }

    /// Appends, in a commit nobody attests, a profile named `name` with
    /// clock 2⁶⁴ − 1 and the member's device id: what a passphrase or escrow
    /// holder can write.
    static func appendTakeoverProfile(_ path: String, _ laptop: DeviceIdentity, device: DeviceID?) throws {
        let f = try Self.rawFile(path, .device(laptop.keyPair))
        let evil = Profile(
            name: "Taken over", settings: CBORMap(text: [("shareTo", .text("attacker@example.org"))]), clock: HybridLogicalClock(rawValue: .max),
            device: device)
        try f.commit(random: SeededRandom(label: "takeover commit"), options: fast, attestWith: nil) { (tx: PendingCommit) throws(FormatError) in
            try tx.appendSealed(kind: .profile, payload: evil.encoded())
        }
    }

    /// An unattested profile with clock 2⁶⁴ − 1. Before, the profile with
    /// the greatest clock won: the attacker's showed at once and beat every
    /// profile a member wrote afterwards, for good. Now the profile of the
    /// highest standing wins (`Spec/records.md §5`).
    @Test func attackUnattestedProfileDoesNotWinByClock() throws {
        let dir = TemporaryDirectory()
        let (vault, laptop) = try Self.laptopVault(dir, "profile")
        let path = dir.file("j.quire")
        let original = try #require(try vault.profile())
        try Self.appendTakeoverProfile(path, laptop, device: original.device)
        let reader = try Vault.open(at: path, credential: .device(laptop.keyPair), options: fast)
        #expect(try reader.profile()?.name == "Journal")
        try reader.commit { tx in try tx.setProfile(name: "Renamed by the laptop") }
        #expect(try reader.profile()?.name == "Renamed by the laptop")
        let again = try Vault.open(at: path, credential: .device(laptop.keyPair), options: fast)
        #expect(try again.profile()?.name == "Renamed by the laptop")
    }

    /// Before, compaction kept only the profile with the greatest clock: the
    /// attacker's, in the unattested commit 2, and dropped the member's. Now
    /// it keeps the journal's profile (the member's, in commit 1) and the
    /// greatest-clock one behind it in commit 2 (`Spec/merge.md §6`).
    @Test func attackCompactionKeepsTheMembersProfile() throws {
        let dir = TemporaryDirectory()
        let (vault, laptop) = try Self.laptopVault(dir, "compact profile")
        let path = dir.file("j.quire")
        try Self.appendTakeoverProfile(path, laptop, device: try vault.profile()?.device)
        let member = try Vault.open(at: path, credential: .device(laptop.keyPair), options: fast)
        try member.commit { tx in try tx.setProfile(name: "Renamed by the laptop") }
        _ = try member.compact(now: Self.t0 + 2)
        let after = try Vault.open(at: path, credential: .device(laptop.keyPair), options: fast)
        #expect(try after.profile()?.name == "Renamed by the laptop")
        let f = try VaultFile(path: path)
        #expect(f.structure.groups.count == 2)
        #expect(after.verify().unattestedRecordCount == 1)
    }

    // MARK: H4 — aliases nobody checks

    /// A holder of the epoch key (a passphrase, an escrow key) predicts a
    /// photo the owner will store, computes its blob id X under the blob key,
    /// and plants a manifest of other content that lists X in `aliases`.
    /// Before, the owner's upload deduplicated against the alias and the
    /// attested entry naming X showed the planted content; an alias nobody
    /// can vouch for also resolved to whatever content its manifest held. Now
    /// uploads deduplicate only against a blob id a member stored, a
    /// manifest whose own blob id is X comes before one that only lists it,
    /// and content read through an alias must hash to it under a trusted
    /// blob key (`Spec/format.md §7.3`).
    @Test func attackAliasSubstitutesContent() throws {
        let dir = TemporaryDirectory()
        let (_, laptop) = try Self.laptopVault(dir, "alias")
        let path = dir.file("j.quire")
        let photo = (0..<150_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        let planted = Array("not the photo".utf8)
        let f = try Self.rawFile(path, .device(laptop.keyPair))
        let blobKey = try #require(f.keys.writeKey?.blobKey)
        let predicted = BlobID(content: photo, blobKey: blobKey)
        let unknown = BlobID(content: Array("never stored".utf8), blobKey: blobKey)
        try f.commit(random: SeededRandom(label: "plant"), options: fast, attestWith: nil) { (tx: PendingCommit) throws(FormatError) in
            _ = try tx.appendBlob(from: MemoryByteSource(planted), mediaType: "image/jpeg", aliases: [predicted, unknown])
        }
        let owner = try Vault.open(at: path, credential: .device(laptop.keyPair), options: fast)
        var stored: StoredBlob?
        try owner.commit { tx in stored = try tx.storeAttachment(from: MemoryByteSource(photo), mediaType: "image/jpeg") }
        #expect(stored?.blob == predicted)
        let reader = try Vault.open(at: path, credential: .device(laptop.keyPair), writable: false, options: fast)
        #expect(try reader.openAttachment(predicted).readAll() == photo)
        // An alias that does not hash to the content under a trusted blob key
        // resolves, but reading it to the end fails.
        #expect(throws: QuireError.format(.blobIDMismatch(blob: unknown.description))) { try reader.openAttachment(unknown).readAll() }
    }

    // MARK: Third review, item 10 — an exact blob id before standing

    /// The owner stores a photo (blob id X) and compacts with a rekey: the
    /// photo is stored again under the new blob key, the attested manifest
    /// listing X as an alias. A holder of an epoch key then appends, in a
    /// commit nobody attests, a manifest whose own `blob` is X over a stream
    /// of junk that is whole in structure. Before, a manifest whose `blob`
    /// is X came before one that only lists it, whatever its standing: the
    /// entry naming X read the junk and failed [`blob_id_mismatch`]. Now the
    /// standing comes first (`Spec/format.md §7.3`): X resolves to the
    /// attested manifest and reads the photo.
    @Test func attackExactBlobIDPreemptsAttestedAlias() throws {
        let dir = TemporaryDirectory()
        let (owner, laptop) = try Self.laptopVault(dir, "exact")
        let path = dir.file("j.quire")
        let photo = (0..<150_000).map { UInt8(truncatingIfNeeded: $0 &* 29 &+ 3) }
        var stored: StoredBlob?
        try owner.commit { tx in stored = try tx.storeAttachment(from: MemoryByteSource(photo), mediaType: "image/jpeg") }
        let x = try #require(stored).blob
        try owner.add(EntryBody(created: Self.t0 + 1, text: "the photo", attachments: [AttachmentReference(id: [1], blob: x, mediaType: "image/jpeg")]))
        _ = try owner.compact(CompactionOptions(rekey: true), now: Self.t0 + 2)
        let f = try Self.rawFile(path, .device(laptop.keyPair))
        try f.commit(random: SeededRandom(label: "exact plant"), options: fast, attestWith: nil) { (tx: PendingCommit) throws(FormatError) in
            guard case .stored(let junk) = try tx.appendBlob(from: MemoryByteSource(Array(repeating: 0x4a, count: photo.count)), mediaType: "image/jpeg") else {
                return
            }
            let forged = BlobManifest(blob: x, stream: junk.stream, byteCount: junk.byteCount, mediaType: "image/jpeg")
            _ = try tx.appendSealed(kind: .blobManifest, payload: forged.encoded())
        }
        let reader = try Vault.open(at: path, credential: .device(laptop.keyPair), writable: false, options: fast)
        #expect(try reader.openAttachment(x).readAll() == photo)
    }
}
