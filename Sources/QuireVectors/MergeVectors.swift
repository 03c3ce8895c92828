import Foundation
@_spi(Format) @_spi(Crypto) import Quire
@_spi(Crypto) import QuireCrypto
@_spi(Format) import QuireFormat
@_spi(Testing) @_spi(Format) @_spi(Crypto) import QuireKeys
@_spi(Format) import QuireSync
import Synchronization

/// Merge vectors (`Vectors/README.md`, "Merge vectors"; `Spec/merge.md §3`,
/// §5, §7): two copies of one vault, what merging them writes, and what
/// each entry and attachment is afterwards. Generated from seeded
/// randomness and explicit clocks, so regenerating changes nothing.
///
/// Each vector is a folder `Vectors/merge/<name>/` holding `a.quire` (the
/// vault), `b.quire` (the copy), `merged.quire` (the result of merging `b`
/// into `a` with the credential) and `expect.txt`:
///
/// ```
/// quire merge vector 2
/// credential: device <Ed25519 seed, 64 hex digits> | recovery-key <code>
/// changed: yes|no
/// merged: <BLAKE2b-256 of merged.quire, hex>|resealed
/// unattested-commits: <unattested commits of the result after the common prefix>
/// kept-attestations: <of those, the commits attested by a member other than the merging one> (optional)
/// entry: <entry id hex> live|deleted heads=<n> text=<the winner's text, JSON string>
/// profile: <the journal's profile's name, JSON string> (optional)
/// attachment: <blob id a revision names, hex> size=<bytes> content=<BLAKE2b-256 of the content, hex>
/// comment: <what it covers>
/// ```
///
/// `merged: resealed` marks a result that re-seals frames into a rekeyed
/// vault (`Spec/merge.md §3.4`): its nonces and stream ids are fresh on
/// every run, so only its content is compared. `attachment:` lines list the
/// attachments the result's revisions name (resolved through manifest
/// aliases), sorted by blob id.
public enum MergeVectors {
    /// The device that merges (the laptop) and the one that wrote the copy.
    static let laptopSeed = [UInt8](repeating: 0x61, count: 32)
    static let phoneSeed = [UInt8](repeating: 0x62, count: 32)
    static let t0: Int64 = 1_767_225_600_000
    static let quiet = WriteOptions(synchronous: false)

    /// One vector, in memory.
    public struct Vector: Sendable {
        public let name: String
        public let a: [UInt8]
        public let b: [UInt8]
        public let merged: [UInt8]
        public let expect: String
    }

    /// Who merges.
    enum Merger { case laptop, recovery }

    static func keyPair(_ seed: [UInt8]) throws -> Ed25519.KeyPair {
        var s = seed
        return try Ed25519.KeyPair(seed: SecureBytes(consuming: &s))
    }

    /// What a case's closures work with: the two paths, the devices, the
    /// recovery key and the shared entries.
    final class Case {
        let name: String
        let a: String
        let b: String
        let laptop: DeviceIdentity
        let phone: DeviceIdentity
        let recovery: RecoveryKey
        var ids: [EntryID] = []
        var blobs: [BlobID] = []
        private var counter = 0

        init(name: String, a: String, b: String, laptop: DeviceIdentity, phone: DeviceIdentity, recovery: RecoveryKey) {
            self.name = name
            self.a = a
            self.b = b
            self.laptop = laptop
            self.phone = phone
            self.recovery = recovery
        }

        /// Opens `path` with the laptop, the phone or the recovery key, with
        /// seeded randomness.
        func open(_ path: String, _ who: String) throws -> Vault {
            counter += 1
            let credential: Credential =
                switch who {
                case "laptop": .device(laptop.keyPair)
                case "phone": .device(phone.keyPair)
                default: .recoveryKey(recovery)
                }
            return try Vault.open(
                at: path, credential: credential, random: SeededRandom(label: "\(name) \(who) \(counter)"), options: quiet)
        }

        /// Writes a revision of entry `id` (or a new entry) with an explicit
        /// clock, naming the current heads as parents; returns its entry id.
        @discardableResult
        func write(
            _ v: Vault, id: EntryID? = nil, text: String, clock: Int64, deleted: Bool = false, attachments: [AttachmentReference] = []
        ) throws -> EntryID {
            counter += 1
            let random = SeededRandom(label: "\(name) revision \(counter)")
            let entry = id ?? EntryID(using: random)
            let revisions = try v.revisions(of: entry)
            let named = Set(revisions.flatMap(\.parents))
            let revision = EntryRevision(
                entryID: entry, revisionID: RevisionID(using: random), parents: revisions.map(\.revisionID).filter { !named.contains($0) },
                clock: HybridLogicalClock(milliseconds: UInt64(clock), counter: 0), device: v.author, isDeleted: deleted,
                body: EntryBody(created: MergeVectors.t0, text: deleted ? "" : text, attachments: deleted ? [] : attachments))
            try v.commit { tx in try tx.append(revision) }
            return entry
        }

        /// Stores `count` seeded bytes as an attachment and writes an entry naming it.
        func attach(_ v: Vault, count: Int, clock: Int64) throws {
            counter += 1
            let content = SeededRandom(label: "\(name) attachment \(counter)").bytes(count)
            var stored: StoredBlob?
            try v.commit { tx in stored = try tx.storeAttachment(from: MemoryByteSource(content), mediaType: "image/jpeg") }
            blobs.append(stored!.blob)
            try write(
                v, text: "with a photo", clock: clock,
                attachments: [AttachmentReference(id: [UInt8(blobs.count)], blob: stored!.blob, mediaType: "image/jpeg")])
        }
    }

    /// Builds one case: a vault with the laptop and the phone enrolled (and a
    /// passphrase, if asked) and `entries` shared entries; `b.quire` starts as
    /// a copy of it; `a` changes the vault, `b` changes the copy; then the
    /// merger merges `b.quire` into `a.quire`.
    static func build(
        _ name: String, comment: String, entries: Int = 1, passphrase: Bool = false, merger: Merger = .laptop, countKept: Bool = false,
        showProfile: Bool = false, refused: String? = nil, a: (Case) throws -> Void, b: (Case) throws -> Void
    ) throws -> Vector {
        try SlotCrypto.$allowsWeakPassphraseCost.withValue(true) { () throws -> Vector in
            let dir = NSTemporaryDirectory() + "quire-merge-vector-\(getpid())-\(name)"
            try? FileManager.default.removeItem(atPath: dir)
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: dir) }
            let pa = dir + "/a.quire"
            let pb = dir + "/b.quire"
            let pm = dir + "/merged.quire"
            let laptop = try DeviceIdentity(keyPair: keyPair(laptopSeed), name: "Laptop", created: t0)
            let phone = try DeviceIdentity(keyPair: keyPair(phoneSeed), name: "Phone", created: t0)
            let recovery = try RecoveryKey(using: SeededRandom(label: "merge vector recovery " + name))
            let c = Case(name: name, a: pa, b: pb, laptop: laptop, phone: phone, recovery: recovery)
            var setup = VaultSetup(name: "Merge " + name, recoveryKey: recovery, device: laptop, now: t0)
            if passphrase {
                var p = Array("correct horse battery staple".utf8)
                setup.guardedPassphrase = try SecureBytes(consuming: &p)
                setup.passphraseOpsLimit = 1
                setup.passphraseMemLimitBytes = 8192
            }
            let vault = try Vault.create(at: pa, setup: setup, random: SeededRandom(label: "merge vector " + name), options: quiet)
            try vault.enrollDevice(code: phone.code, name: "Phone", now: t0 + 1)
            for i in 0..<entries { c.ids.append(try c.write(vault, text: "entry \(i + 1)", clock: t0 + 10 + Int64(i))) }
            try FileManager.default.copyItem(atPath: pa, toPath: pb)
            try a(c)
            try b(c)
            let credential: Credential = merger == .laptop ? .device(laptop.keyPair) : .recoveryKey(recovery)
            let credentialLine = merger == .laptop ? "credential: device " + hex(laptopSeed) : "credential: recovery-key " + recovery.code()
            // Merge twice with different randomness: a merge that re-seals
            // differs, and is marked `resealed`.
            func merge(_ label: String) throws -> (MergeReport, [UInt8]) {
                try? FileManager.default.removeItem(atPath: pm)
                try FileManager.default.copyItem(atPath: pa, toPath: pm)
                let report = try VaultMerge.merge(
                    vaultAt: pm, copyAt: pb, credential: credential, random: SeededRandom(label: label), options: quiet)
                return (report, Array(try Data(contentsOf: URL(fileURLWithPath: pm))))
            }
            // A refused merge (Spec/merge.md §3.1): that error, and the
            // vault left as it was, which `merged.quire` then holds.
            if let refused {
                do {
                    _ = try merge("merge vector " + name)
                    throw VectorFile.ParseError(description: "\(name): the merge was not refused")
                } catch let e as SyncError where e.code == refused {}
                let vault = Array(try Data(contentsOf: URL(fileURLWithPath: pa)))
                let lines = [
                    "quire merge vector 2", credentialLine, "changed: no", "refused: " + refused,
                    "merged: " + hex(BLAKE2b.hash(vault, byteCount: 32)), "comment: " + comment,
                ]
                return Vector(
                    name: name, a: vault, b: Array(try Data(contentsOf: URL(fileURLWithPath: pb))), merged: vault,
                    expect: lines.joined(separator: "\n") + "\n")
            }
            let (_, other) = try merge("merge vector " + name + " other")
            let (report, merged) = try merge("merge vector " + name)
            let resealed = other != merged
            var lines = [
                "quire merge vector 2",
                credentialLine,
                "changed: " + (report.changed ? "yes" : "no"),
                "merged: " + (resealed ? "resealed" : hex(BLAKE2b.hash(merged, byteCount: 32))),
                "unattested-commits: \(try unattestedCommits(pm, credential: credential, prefix: report.commonPrefixByteCount))",
            ]
            if countKept {
                lines.append("kept-attestations: \(try keptAttestations(pm, credential: credential, prefix: report.commonPrefixByteCount))")
            }
            lines += try contentLines(pm, credential: credential, ids: c.ids)
            if showProfile { lines.append(try profileLine(pm, credential: credential)) }
            lines.append("comment: " + comment)
            return Vector(
                name: name, a: Array(try Data(contentsOf: URL(fileURLWithPath: pa))),
                b: Array(try Data(contentsOf: URL(fileURLWithPath: pb))),
                merged: merged, expect: lines.joined(separator: "\n") + "\n")
        }
    }

    /// Commits `revision` to `vault` in a commit of its own with no member
    /// attestation, as a passphrase or escrow holder would write it; `label`
    /// seeds the commit's nonces so the vector is deterministic.
    static func commitUnattested(_ revision: EntryRevision, to vault: Vault, label: String) throws {
        try vault.file.commit(random: SeededRandom(label: label), options: quiet, attestation: .none) {
            (tx: PendingCommit) throws(FormatError) in
            _ = try tx.appendSealed(kind: .entryRevision, payload: revision.encoded())
        }
    }

    /// The number of commits after the first `prefix` bytes of the vault at
    /// `path` that are not attested by a member (unattested, failed, or
    /// attested by a removed member, `Spec/format.md §9.4`); throws when
    /// one does not verify.
    static func unattestedCommits(_ path: String, credential: Credential, prefix: UInt64) throws -> Int {
        let file = try VaultFile(path: path)
        let unlocked = try KeyringEvaluator.unlock(file, with: credential)
        file.verifyCommits(with: unlocked)
        var count = 0
        for (g, group) in file.structure.groups.enumerated() where file.structure.frames.end(at: group.commitFrame) > prefix {
            guard file.commits.statuses[g] == .verified else {
                throw VectorFile.ParseError(description: "merged commit \(g) is \(file.commits.statuses[g])")
            }
            if !file.commits.isAttested(g) { count += 1 }
        }
        return count
    }

    /// The number of commits after the first `prefix` bytes of the vault at
    /// `path` attested by a current member other than the one `credential`
    /// signs with: blocks written whole and in place keep their author's
    /// attestation (`Spec/merge.md §3.3`).
    static func keptAttestations(_ path: String, credential: Credential, prefix: UInt64) throws -> Int {
        let file = try VaultFile(path: path)
        let unlocked = try KeyringEvaluator.unlock(file, with: credential)
        file.verifyCommits(with: unlocked)
        let merger: [UInt8]? =
            switch credential {
            case .device(let pair): pair.publicKey
            case .recoveryKey(let key): try? key.signingKeyPair().publicKey
            default: nil
            }
        var count = 0
        for (g, group) in file.structure.groups.enumerated() where file.structure.frames.end(at: group.commitFrame) > prefix {
            if let signer = file.commits.attestor(g), signer != merger { count += 1 }
        }
        return count
    }

    /// The `profile:` line of a merged vault: the name of the journal's
    /// profile (`Spec/records.md §5`), as a JSON string.
    static func profileLine(_ path: String, credential: Credential) throws -> String {
        let name = try Vault.open(at: path, credential: credential, writable: false).profile()?.name ?? ""
        return "profile: " + String(decoding: try JSONEncoder().encode(name), as: UTF8.self)
    }

    /// The `entry:` and `attachment:` lines of a merged vault, in id order.
    static func contentLines(_ path: String, credential: Credential, ids: [EntryID]) throws -> [String] {
        let v = try Vault.open(at: path, credential: credential, writable: false)
        var all = Set(ids)
        for e in try v.entries() { all.insert(e.id) }
        var lines: [String] = []
        var blobs = Set<BlobID>()
        for id in all.sorted() {
            guard let e = try v.entry(id) else { continue }
            let text = String(decoding: try JSONEncoder().encode(e.body.text), as: UTF8.self)
            lines.append("entry: \(hex(id.bytes)) \(e.isDeleted ? "deleted" : "live") heads=\(e.conflictingHeads.count + 1) text=\(text)")
            for r in try v.revisions(of: id) { for a in r.body.attachments { blobs.insert(a.blob) } }
        }
        for blob in blobs.sorted(by: { $0.bytes.lexicographicallyPrecedes($1.bytes) }) {
            let content = try v.openAttachment(blob).readAll()
            lines.append("attachment: \(hex(blob.bytes)) size=\(content.count) content=\(hex(BLAKE2b.hash(content, byteCount: 32)))")
        }
        return lines
    }

    /// Every merge vector.
    public static func all() throws -> [Vector] {
        let c = t0
        return [
            try build(
                "concurrent-edits", comment: "both sides edit the same entry; the later clock (the copy's) shows, the other head is listed",
                a: { k in try k.write(try k.open(k.a, "laptop"), id: k.ids[0], text: "edited on the laptop", clock: c + 100) },
                b: { k in try k.write(try k.open(k.b, "phone"), id: k.ids[0], text: "edited on the phone", clock: c + 200) }),
            try build(
                "edit-versus-delete", comment: "the vault edits, the copy deletes earlier: the edit shows, the tombstone is a listed head",
                a: { k in try k.write(try k.open(k.a, "laptop"), id: k.ids[0], text: "kept", clock: c + 300) },
                b: { k in try k.write(try k.open(k.b, "phone"), id: k.ids[0], text: "", clock: c + 200, deleted: true) }),
            try build(
                "delete-versus-delete", comment: "both sides delete the entry: deleted, two tombstone heads",
                a: { k in try k.write(try k.open(k.a, "laptop"), id: k.ids[0], text: "", clock: c + 100, deleted: true) },
                b: { k in try k.write(try k.open(k.b, "phone"), id: k.ids[0], text: "", clock: c + 200, deleted: true) }),
            try build(
                "keyring-epoch-each-side",
                comment:
                    "each side rotates to its own epoch 2 and writes under it; the result holds both epoch-2 heads: each rotation's block is committed under its own keyring's key, every other block under the result's write key (the head with the smaller key commitment, merge.md §3.3)",
                a: { k in
                    let v = try k.open(k.a, "laptop")
                    try v.rotateKeys(now: c + 50)
                    try k.write(v, text: "laptop, epoch 2", clock: c + 60)
                },
                b: { k in
                    let v = try k.open(k.b, "phone")
                    try v.rotateKeys(now: c + 51)
                    try k.write(v, text: "phone, epoch 2", clock: c + 61)
                }),
            try build(
                "unknown-record-kind",
                comment:
                    "the copy holds a plaintext record of kind 0x9a, unknown to version 2: carried byte for byte; its block moves (after the laptop's), and the laptop does not attest a frame of a kind it does not know, so it is written unattested (unattested-commits: 1, merge.md §3.3, eleventh review R11-3)",
                a: { k in try k.write(try k.open(k.a, "laptop"), text: "laptop", clock: c + 100) },
                b: { k in
                    let v = try k.open(k.b, "phone")
                    try k.write(v, text: "phone", clock: c + 101)
                    try v.file.commit(random: SeededRandom(label: "unknown kind"), options: quiet, attestWith: k.phone.keyPair) {
                        (tx: PendingCommit) throws(FormatError) in
                        _ = try tx.appendPlaintext(
                            kind: RecordKind(rawValue: 0x9a), keyID: tx.key.id, body: Array("from a newer version".utf8), trusted: false)
                    }
                }),
            try build(
                "unknown-kind-block-not-reattested",
                comment:
                    "eleventh review R11-3: the laptop rotates to epoch 2 and writes; the phone's one attested commit holds its revision and a plaintext frame of kind 0x9a (unknown, not critical). The phone's block comes first, after the head it extended, but the result commits it under the epoch-2 write key, so it moves (merge.md §3.3); the laptop, which does not know the kind, writes it unattested rather than attest it again (unattested-commits: 1, kept-attestations: 0), and the revision still shows, verified. Before, the laptop signed it, and the frame was credited to the laptop for good",
                countKept: true,
                a: { k in
                    let v = try k.open(k.a, "laptop")
                    try v.rotateKeys(now: c + 50)
                    try k.write(v, text: "laptop, epoch 2", clock: c + 100)
                },
                b: { k in
                    let v = try k.open(k.b, "phone")
                    let random = SeededRandom(label: "unknown kind beside a revision")
                    let revision = EntryRevision(
                        entryID: EntryID(using: random), revisionID: RevisionID(using: random), parents: [],
                        clock: HybridLogicalClock(milliseconds: UInt64(c + 101), counter: 0), device: v.author, isDeleted: false,
                        body: EntryBody(created: MergeVectors.t0, text: "phone, beside a newer kind", attachments: []))
                    try v.file.commit(random: random, options: quiet, attestWith: k.phone.keyPair) {
                        (tx: PendingCommit) throws(FormatError) in
                        _ = try tx.appendSealed(kind: .entryRevision, payload: revision.encoded())
                        _ = try tx.appendPlaintext(
                            kind: RecordKind(rawValue: 0x9a), keyID: tx.key.id, body: Array("from a newer version".utf8), trusted: false)
                    }
                }),
            try build(
                "attack-merge-over-unknown-critical-kind-refused",
                comment:
                    "eleventh review R11-3: the phone, still a member (a stolen device), writes an attested commit holding a frame of kind 0x7f, critical and unknown, on the copy. Folding it, the laptop moved the block and attested it again, so the frame sat in a commit the laptop attested and removing the phone no longer lifted unknown_critical_kind. A merge writes records, so it is refused while that error is fatal in either file (merge.md §3.1, format.md §4.3): remove the phone first",
                refused: "unknown_critical_kind",
                a: { k in try k.write(try k.open(k.a, "laptop"), text: "laptop", clock: c + 100) },
                b: { k in
                    let v = try k.open(k.b, "phone")
                    try v.file.commit(random: SeededRandom(label: "critical kind"), options: quiet, attestWith: k.phone.keyPair) {
                        (tx: PendingCommit) throws(FormatError) in
                        _ = try tx.appendPlaintext(
                            kind: RecordKind(rawValue: 0x7f), keyID: tx.key.id, body: Array("a stolen device's".utf8), trusted: false)
                    }
                }),
            try build(
                "stale-copy", comment: "the copy is an older state of the vault: nothing to add, the vault is unchanged",
                a: { k in try k.write(try k.open(k.a, "laptop"), id: k.ids[0], text: "newer", clock: c + 100) },
                b: { _ in }),
            try build(
                "copy-into-compaction",
                comment:
                    "the laptop compacts (no rekey) while the phone, on the older copy, writes; folding the copy into the compaction: no common prefix, every block whole, nothing lost",
                entries: 2,
                a: { k in
                    let v = try k.open(k.a, "laptop")
                    try k.write(v, id: k.ids[0], text: "edited before compacting", clock: c + 100)
                    try v.compact(CompactionOptions(), now: c + 110)
                },
                b: { k in try k.write(try k.open(k.b, "phone"), id: k.ids[1], text: "edited on the older copy", clock: c + 120) }),
            try build(
                "compaction-into-copy",
                comment: "the other direction: the older copy, edited, is the vault and the compaction is folded into it",
                entries: 2,
                a: { k in try k.write(try k.open(k.a, "laptop"), id: k.ids[1], text: "edited on the older copy", clock: c + 120) },
                b: { k in
                    let v = try k.open(k.b, "phone")
                    try k.write(v, id: k.ids[0], text: "edited before compacting", clock: c + 100)
                    try v.compact(CompactionOptions(), now: c + 110)
                }),
            try build(
                "stale-copy-into-horizon-compaction",
                comment:
                    "the laptop deletes an entry, writes a later one and compacts with a tombstone horizon the deletion is past; the older copy, which holds the entry live, is folded in: the kept tombstone names the entry's revision by id and retires it, so the entry stays deleted (merge.md §5, §6; R10-7)",
                entries: 2,
                a: { k in
                    let v = try k.open(k.a, "laptop")
                    try k.write(v, id: k.ids[0], text: "", clock: c + 100, deleted: true)
                    try k.write(v, id: k.ids[1], text: "written after the deletion", clock: c + 200)
                    try v.compact(CompactionOptions(tombstoneHorizonMilliseconds: 1000), now: c + 10_000)
                },
                b: { _ in }),
            try build(
                "copy-into-rekeyed-compaction",
                comment:
                    "the laptop compacts with --rekey (new epoch, fresh blob key) while the phone writes on the older copy; folded in, the copy's records and attachment are sealed again under the rekeyed key (the attachment re-stored, its old blob id an alias)",
                entries: 2,
                a: { k in
                    let v = try k.open(k.a, "laptop")
                    try k.attach(v, count: 70_000, clock: c + 90)
                    try v.compact(CompactionOptions(rekey: true), now: c + 110)
                },
                b: { k in
                    let v = try k.open(k.b, "phone")
                    try k.write(v, id: k.ids[1], text: "edited on the older copy", clock: c + 120)
                    try k.attach(v, count: 3_000, clock: c + 130)
                }),
            try build(
                "rekeyed-compaction-into-copy",
                comment:
                    "the other direction: the rekeyed compaction folded into the older, edited copy; everything older than the rekey is sealed again",
                entries: 2,
                a: { k in try k.write(try k.open(k.a, "laptop"), id: k.ids[1], text: "edited on the older copy", clock: c + 120) },
                b: { k in
                    let v = try k.open(k.b, "phone")
                    try k.write(v, id: k.ids[0], text: "edited before compacting", clock: c + 100)
                    try v.compact(CompactionOptions(rekey: true), now: c + 110)
                }),
            try build(
                "rotation-then-compaction",
                comment:
                    "the laptop rotates, writes and compacts; the phone's older copy (epoch 1) is folded in: its records are released from verified commits of the result, not stale",
                a: { k in
                    let v = try k.open(k.a, "laptop")
                    try v.rotateKeys(now: c + 50)
                    try k.write(v, text: "laptop, epoch 2", clock: c + 60)
                    try v.compact(CompactionOptions(), now: c + 70)
                },
                b: { k in try k.write(try k.open(k.b, "phone"), id: k.ids[0], text: "phone, epoch 1", clock: c + 80) }),
            try build(
                "rotation-then-compaction-reverse", comment: "the other direction: the rotated, compacted copy folded into the older vault",
                a: { k in try k.write(try k.open(k.a, "laptop"), id: k.ids[0], text: "laptop, epoch 1", clock: c + 80) },
                b: { k in
                    let v = try k.open(k.b, "phone")
                    try v.rotateKeys(now: c + 50)
                    try k.write(v, text: "phone, epoch 2", clock: c + 60)
                    try v.compact(CompactionOptions(), now: c + 70)
                }),
            try build(
                "passphrase-change-then-compaction",
                comment: "with a passphrase set, the laptop changes it (a new epoch) and compacts; the phone's older copy is folded in",
                passphrase: true,
                a: { k in
                    let v = try k.open(k.a, "laptop")
                    var p = Array("a new passphrase".utf8)
                    try v.setPassphrase(try SecureBytes(consuming: &p), opsLimit: 1, memLimitBytes: 8192, now: c + 50)
                    try v.compact(CompactionOptions(), now: c + 70)
                },
                b: { k in try k.write(try k.open(k.b, "phone"), id: k.ids[0], text: "phone, before the change", clock: c + 80) }),
            try mutualRemoval(
                "mutual-removal-ab", laptopIsTheVault: true,
                comment:
                    "the laptop removes the phone while the phone removes the laptop; merged by the recovery key: both removals stand, both sides' records are kept (format.md §8.4 rule 6, attack-mutual-removal-order)"
            ),
            try mutualRemoval(
                "mutual-removal-ba", laptopIsTheVault: false,
                comment: "the same two removals, the copies swapped: the same keyrings stand and the same entries show"),
            try mutualRemoval(
                "mutual-removal-by-device", laptopIsTheVault: true, merger: .laptop,
                comment:
                    "the same two removals merged by the laptop, which cannot open the phone's removal nor verify its commit (made under the removal's own key, format.md §9.2): the removal is carried all the same, since its commit is under its own key and a member of its parent signed its link (merge.md §3.2, eighth review R8-3), so both removals stand for every reader; the phone's entry, sealed under a key the laptop does not hold in an unverifiable commit, is left out"
            ),
            try build(
                "attack-unopened-keyring-rebound-copy-left-out",
                comment:
                    "fourteenth review R14-2: mutual-removal-by-device, and on the copy a writer holding no key appends a copy of the phone's removal keyring (which the laptop does not open) under another key id (check recomputed), closed by a junk commit whose header carries the removal's own key id. Before, merge left out a copy under another key id only of a keyring the union trusts: this one, member-made and in a commit unverifiable under its own key id, was carried, and the result reported keyring_copy_damaged until a compaction. Now every keyring frame whose header's key id is not its keyCommit[0..<6] is left out (merge.md §3.2), and the result is the same as mutual-removal-by-device's",
                merger: .laptop,
                a: { k in
                    let v = try k.open(k.a, "laptop")
                    try v.removeDevice(named: "Phone", now: c + 50)
                    try k.write(v, text: "laptop after removing the phone", clock: c + 60)
                },
                b: { k in
                    let v = try k.open(k.b, "phone")
                    try v.removeDevice(named: "Laptop", now: c + 51)
                    try k.write(v, text: "phone after removing the laptop", clock: c + 61)
                    let s = try VaultFile(path: k.b).structure
                    let ring = (0..<s.frames.count).last { s.frames.header(at: $0).kind == .keyring }!
                    var raw = Array(try Data(contentsOf: URL(fileURLWithPath: k.b)))
                    var copy = Array(raw[Int(s.frames.location(at: ring).offset)..<Int(s.frames.end(at: ring))])
                    for i in 2..<8 { copy[i] ^= 0xff }
                    copy.replaceSubrange(12..<16, with: BLAKE2b.hash(Array(copy[0..<12]), byteCount: 16)[0..<4])
                    let junk =
                        CommitChain.commitHeader(keyID: s.frames.header(at: ring).keyID).encoded()
                        + SeededRandom(label: "rebound copy junk commit").bytes(CommitChain.bodyByteCount)
                    raw += copy + junk
                    try Data(raw).write(to: URL(fileURLWithPath: k.b))
                }),
            try build(
                "attack-made-up-epoch-keyring-left-out",
                comment:
                    "attack (ninth review R9-2): a holder of the epoch key with no signing key (a passphrase or escrow holder) appends to the copy a keyring nobody can open, of public epoch 99, child of the last trusted keyring with a random link, in a verified commit nobody attested. Before, merge carried it (an unopened keyring from a verified commit) and then refused, since it sat above the write key's epoch [behind_newer_keyring]: every merge and compaction, for every credential, for good. Now an unopened keyring is carried only when a member made it (format.md §8.6) and its epoch is at most one above its trusted parents' (merge.md §3.2): it is left out [keyring_unauthenticated], and the copy's entry comes in",
                a: { k in try k.write(try k.open(k.a, "laptop"), text: "laptop", clock: c + 100) },
                b: { k in
                    let v = try k.open(k.b, "phone")
                    try k.write(v, text: "phone", clock: c + 110)
                    let unlocked = try KeyringEvaluator.unlock(v.file, with: .device(k.phone.keyPair))
                    guard let parent = unlocked.keyrings.last(where: \.isTrusted) else {
                        throw VectorFile.ParseError(description: "no trusted keyring")
                    }
                    let r = SeededRandom(label: "made-up epoch keyring")
                    let keyCommit = r.bytes(32)
                    let body = KeyringRecord(
                        publicPart: KeyringPublic(
                            epoch: 99, keyCommit: keyCommit, parents: [parent.id], links: [r.bytes(KeyringRecord.linkByteCount)],
                            isEscrowFree: false, slotEntries: []),
                        nonce: r.bytes(24), sealed: r.bytes(64)
                    ).encodedBody()
                    try v.file.commit(random: r, options: quiet, attestation: .none) { (tx: PendingCommit) throws(FormatError) in
                        try tx.appendKeyring(keyID: KeyID(commitment: keyCommit), epoch: 99, body: body, trusted: false)
                    }
                }),
            try keyringAndChild(),
            try build(
                "attestation-carried-and-partial",
                comment:
                    "the copy has two phone-attested commits. Blocks another member attested come before the merging laptop's own, in their source order, so the first is written whole after the head it extended in the copy: it keeps the phone's attestation (which signs that head, format.md §9.2), sealed again under the result's key. The second holds a record that does not decode, which the merge leaves out, so that block is partial and the laptop attests it; the laptop's own block, which now extends another head, the laptop attests again",
                a: { k in try k.write(try k.open(k.a, "laptop"), text: "laptop", clock: c + 100) },
                b: { k in
                    let v = try k.open(k.b, "phone")
                    try k.write(v, text: "phone, whole block", clock: c + 110)
                    let good = EntryRevision(
                        entryID: EntryID(using: SeededRandom(label: "partial entry")),
                        revisionID: RevisionID(using: SeededRandom(label: "partial revision")),
                        clock: HybridLogicalClock(milliseconds: UInt64(c + 120), counter: 0), device: v.author,
                        body: EntryBody(created: c, text: "phone, partial block"))
                    k.ids.append(good.entryID)
                    try v.file.commit(random: SeededRandom(label: "partial commit"), options: quiet, attestWith: k.phone.keyPair) {
                        (tx: PendingCommit) throws(FormatError) in
                        _ = try tx.appendSealed(kind: .entryRevision, payload: good.encoded())
                        _ = try tx.appendSealed(kind: .entryRevision, payload: [0xa1, 0x61, 0x78], compress: false)
                    }
                }),
            try build(
                "unattested-block-stays-unattested",
                comment:
                    "the copy holds a commit nobody attested (a passphrase holder's): its block stays unattested in the result (unattested-commits: 1), never laundered",
                passphrase: true,
                a: { k in try k.write(try k.open(k.a, "laptop"), text: "laptop", clock: c + 100) },
                b: { k in
                    let v = try k.open(k.b, "phone")
                    let r = EntryRevision(
                        entryID: EntryID(using: SeededRandom(label: "unattested entry")),
                        revisionID: RevisionID(using: SeededRandom(label: "unattested revision")),
                        clock: HybridLogicalClock(milliseconds: UInt64(c + 101), counter: 0),
                        body: EntryBody(created: c, text: "written with the passphrase"))
                    k.ids.append(r.entryID)
                    try commitUnattested(r, to: v, label: "unattested commit")
                }),
            try build(
                "attack-unattested-child-retires-attested",
                comment:
                    "the copy holds an unattested tombstone (a passphrase holder's) naming the laptop's attested revision of entry 1 as its parent: it does not retire it (merge.md §5), so entry 1 has two heads, and the attested one, with the greater clock, shows",
                passphrase: true,
                a: { k in try k.write(try k.open(k.a, "laptop"), text: "laptop", clock: c + 100) },
                b: { k in
                    let v = try k.open(k.b, "phone")
                    let parent = try v.revisions(of: k.ids[0]).map(\.revisionID)
                    let r = EntryRevision(
                        entryID: k.ids[0], revisionID: RevisionID(using: SeededRandom(label: "retiring revision")), parents: parent,
                        clock: HybridLogicalClock(milliseconds: UInt64(c + 5), counter: 0), isDeleted: true)
                    try commitUnattested(r, to: v, label: "retiring commit")
                }),
            try build(
                "attack-unattested-undelete-by-clock",
                comment:
                    "tenth review R10-2: the laptop deletes entry 1; on the copy a passphrase holder appends, unattested, a revision naming the laptop's tombstone as its parent, with deleted false, clock 2^64-1 and the laptop's device id in `device`. It does not retire the tombstone (two heads), and the winner is chosen by standing first (merge.md §5): the member's tombstone shows, deleted. By clock alone the entry came back live with the attacker's text",
                passphrase: true,
                a: { k in try k.write(try k.open(k.a, "laptop"), id: k.ids[0], text: "", clock: c + 100, deleted: true) },
                b: { k in
                    try FileManager.default.removeItem(atPath: k.b)
                    try FileManager.default.copyItem(atPath: k.a, toPath: k.b)
                    let v = try k.open(k.b, "phone")
                    let tombstone = try v.revisions(of: k.ids[0]).last!
                    let r = EntryRevision(
                        entryID: k.ids[0], revisionID: RevisionID(using: SeededRandom(label: "undeleting revision")),
                        parents: [tombstone.revisionID], clock: HybridLogicalClock(rawValue: .max), device: tombstone.device,
                        body: EntryBody(created: c, text: "back from the dead, written by a non-member"))
                    try commitUnattested(r, to: v, label: "undeleting commit")
                }),
            try build(
                "attack-unattested-profile-clock-max",
                comment:
                    "tenth review R10-2: the laptop renames the journal (an attested profile); on the copy a passphrase holder appends, unattested, a profile with clock 2^64-1 and the laptop's device id. The profile is chosen by standing first (records.md §5): the laptop's shows. By clock alone the attacker's won over every later member profile, for good",
                passphrase: true, showProfile: true,
                a: { k in
                    let v = try k.open(k.a, "laptop")
                    let p = Profile(
                        name: "Renamed on the laptop", clock: HybridLogicalClock(milliseconds: UInt64(c + 100), counter: 0),
                        device: v.author)
                    try v.file.commit(random: SeededRandom(label: "member profile"), options: quiet, attestWith: k.laptop.keyPair) {
                        (tx: PendingCommit) throws(FormatError) in
                        _ = try tx.appendSealed(kind: .profile, payload: p.encoded())
                    }
                },
                b: { k in
                    let v = try k.open(k.b, "phone")
                    let p = Profile(
                        name: "Taken over", settings: CBORMap(text: [("shareTo", .text("attacker@example.org"))]),
                        clock: HybridLogicalClock(rawValue: .max), device: try v.revisions(of: k.ids[0]).first!.device)
                    try v.file.commit(random: SeededRandom(label: "takeover profile"), options: quiet, attestation: .none) {
                        (tx: PendingCommit) throws(FormatError) in
                        _ = try tx.appendSealed(kind: .profile, payload: p.encoded())
                    }
                }),
            try build(
                "attack-swapped-groups-not-reattested",
                comment:
                    "fifth review, F8: the phone writes two entries on the copy and a keyless writer swaps their commit groups (readers accept it: the walk follows links). Blocks are placed in link order, not file order (merge.md §3.3): each extends the head it extended in its source and keeps the phone's attestation, so the laptop, merging, attests neither of them (unattested-commits: 0, and the merged bytes hold the phone's signatures)",
                a: { k in try k.write(try k.open(k.a, "laptop"), text: "laptop", clock: c + 100) },
                b: { k in
                    let v = try k.open(k.b, "phone")
                    try k.write(v, text: "phone two", clock: c + 101)
                    try k.write(v, text: "phone three", clock: c + 102)
                    let s = try VaultFile(path: k.b).structure
                    let n = s.groups.count
                    var raw = Array(try Data(contentsOf: URL(fileURLWithPath: k.b)))
                    let start2 = Int(s.frames.location(at: s.groups[n - 2].members.lowerBound).offset)
                    let start3 = Int(s.frames.location(at: s.groups[n - 1].members.lowerBound).offset)
                    let end3 = Int(s.frames.end(at: s.groups[n - 1].commitFrame))
                    raw = Array(raw[..<start2]) + Array(raw[start3..<end3]) + Array(raw[start2..<start3]) + Array(raw[end3...])
                    try Data(raw).write(to: URL(fileURLWithPath: k.b))
                }),
            try build(
                "attack-keyless-overwritten-attestation-not-laundered",
                comment:
                    "sixth review R6-1, scenario d: the phone writes two entries on the copy and a keyless writer overwrites the nonce and sealed attestation (body 64..<200) of the first one's commit with random bytes. Before, the head did not cover them: that commit verified with attestation_failed, merge carried its block unattested (unattested-commits: 1, \"phone two\" shown), and the report was gone for good. Now the head covers them: the commit is tampered, so merge leaves its frames out [commit_tampered] and does not launder them into an unattested block (\"phone two\" is not in the result, unattested-commits: 0); the phone's next commit, attested by a current member, is carried (moved: the laptop attests it again)",
                a: { k in try k.write(try k.open(k.a, "laptop"), text: "laptop", clock: c + 100) },
                b: { k in
                    let v = try k.open(k.b, "phone")
                    try k.write(v, text: "phone two", clock: c + 101)
                    try k.write(v, text: "phone three", clock: c + 102)
                    let s = try VaultFile(path: k.b).structure
                    let commit = s.frames[s.groups[s.groups.count - 2].commitFrame]
                    var raw = Array(try Data(contentsOf: URL(fileURLWithPath: k.b)))
                    let from = Int(commit.bodyOffset) + 64
                    raw.replaceSubrange(
                        from..<Int(commit.end), with: SeededRandom(label: "overwritten attestation").bytes(Int(commit.end) - from))
                    try Data(raw).write(to: URL(fileURLWithPath: k.b))
                }),
            try build(
                "attack-fork-tip-line-kept-in-place",
                comment:
                    "sixth review, R6-5: on the copy the phone writes G and H after entry 1, and a thief holding the phone's key inserts X, also after entry 1, its head ground to sort below G's. Readers visit X first and G second, so G is a member's fork and the chain goes on from G and H (format.md §9.3). Merge placed blocks in the walk's order, X then G, H: X stayed in place with its attestation and the genuine G and H moved, attested again by the laptop. Merge's link order now puts first the child on the line to the chain's tip (merge.md §3.3): G and H are written in place and keep the phone's attestation (kept-attestations: 2), and X moves after them, attested by the laptop",
                countKept: true,
                a: { k in try k.write(try k.open(k.a, "laptop"), text: "laptop", clock: c + 100) },
                b: { k in
                    let older = k.b + ".older"
                    try? FileManager.default.removeItem(atPath: older)
                    try FileManager.default.copyItem(atPath: k.b, toPath: older)
                    defer { try? FileManager.default.removeItem(atPath: older) }
                    let v = try k.open(k.b, "phone")
                    try k.write(v, text: "phone, genuine", clock: c + 101)
                    try k.write(v, text: "phone, after it", clock: c + 102)
                    let s = try VaultFile(path: k.b).structure
                    let g = s.groups[s.groups.count - 2].storedHead
                    for attempt in 0..<256 {
                        let t = older + "-\(attempt)"
                        try? FileManager.default.removeItem(atPath: t)
                        try FileManager.default.copyItem(atPath: older, toPath: t)
                        defer { try? FileManager.default.removeItem(atPath: t) }
                        try k.write(try k.open(t, "phone"), text: "the thief's, try \(attempt)", clock: c + 150)
                        let ts = try VaultFile(path: t).structure
                        let x = ts.groups[ts.groups.count - 1]
                        guard x.storedHead.lexicographicallyPrecedes(g) else { continue }
                        let raw = Array(try Data(contentsOf: URL(fileURLWithPath: t)))
                        let start = Int(ts.frames.location(at: x.members.lowerBound).offset)
                        let end = Int(ts.frames.end(at: x.commitFrame))
                        let copy = Array(try Data(contentsOf: URL(fileURLWithPath: k.b)))
                        try Data(copy + raw[start..<end]).write(to: URL(fileURLWithPath: k.b))
                        return
                    }
                    fatalError("no head below G's in 256 tries")
                }),
            try chunkRewrittenKeepingItsTag(),
            try chunkRewrittenKeepingItsTag(forgedInTheCopy: true),
            try removedMemberChunkRewritten(),
            try removedMemberChunkRewritten(inTheCopy: true),
            try removedMemberChunkRewritten(rewrittenBeforeTheRemoval: true),
            try streamIDReused(attackerIsTheVault: true),
            try streamIDReused(attackerIsTheVault: false),
            try streamIDReused(attackerIsTheVault: true, demote: true),
            try build(
                "attack-keyring-header-shadow-merge",
                comment:
                    "thirteenth review R13-1 through merge: the laptop removes the phone, and the copy is that file, where the laptop then writes entry 2; on the vault a writer holding no key (the removed phone) inserts, just before the removal's group, a copy of the removal's keyring frame under another key id (check recomputed) and a junk commit. Before, the union of both files took the shadow as the removal's first intact copy, which fails rule 1: the removal was rejected, left out of the result, and the merge wrote a clean file holding epoch 1 only, the phone a member again. Now the copy used is the first intact one whose header's key id is its keyCommit[0..<6] (format.md §8.1, merge.md §3.2): the removal is trusted and kept, and the shadow, a damaged copy, is left out",
                a: { k in
                    try k.open(k.a, "laptop").removeDevice(named: "Phone", now: c + 150)
                    try FileManager.default.removeItem(atPath: k.b)
                    try FileManager.default.copyItem(atPath: k.a, toPath: k.b)
                    let s = try VaultFile(path: k.a).structure
                    let group = s.groups[s.groups.count - 1]
                    let ring = group.members.first { s.frames.header(at: $0).kind == .keyring }!
                    var raw = Array(try Data(contentsOf: URL(fileURLWithPath: k.a)))
                    let at = Int(s.frames.location(at: group.members.lowerBound).offset)
                    var copy = Array(raw[Int(s.frames.location(at: ring).offset)..<Int(s.frames.end(at: ring))])
                    for i in 2..<8 { copy[i] ^= 0xff }
                    copy.replaceSubrange(12..<16, with: BLAKE2b.hash(Array(copy[0..<12]), byteCount: 16)[0..<4])
                    let junk =
                        CommitChain.commitHeader(keyID: KeyID(rawValue: 0x9999_9999_9999)).encoded()
                        + SeededRandom(label: "header shadow junk commit").bytes(CommitChain.bodyByteCount)
                    raw.insert(contentsOf: copy + junk, at: at)
                    try Data(raw).write(to: URL(fileURLWithPath: k.a))
                },
                b: { k in k.ids.append(try k.write(try k.open(k.b, "laptop"), text: "laptop, on the copy", clock: c + 120)) }),
            try build(
                "behind-keyring-reached-not-opened",
                comment:
                    "format.md §8.6, \"the credential did not open it\" (Python README item 19, thirteenth review R13-6): on the vault the phone, a member, makes a keyring of epoch 2, child of the root, whose link it signs and whose laptop slot wraps a key that fails the keyring's key commitment. The laptop's slot opens, so the keyring is reached and rejected [malformed_keyring], but its sealed part is never decrypted: the laptop did not open it, so it is authenticated newer and the laptop is behind. A merge writes records, so it is refused [removed_from_vault, merge.md §3.1]. Before, the reference counted only keyrings with no problem, so a slot failing the commitment made the laptop not behind and the merge went through",
                refused: "removed_from_vault",
                a: { k in try keyringWithAWrongLaptopSlot(k, childForTheLaptop: false) },
                b: { k in k.ids.append(try k.write(try k.open(k.b, "phone"), text: "phone, on the copy", clock: c + 120)) }),
            try build(
                "behind-keyring-held-not-reached",
                comment:
                    "fifteenth review R15-1: behind-keyring-reached-not-opened, and then the phone, which holds the epoch-2 key, appends a keyring G of epoch 3, child of that keyring, signed by a key that is no member, with a slot for the laptop wrapping G's own key and parentKeys naming the epoch-2 key. The laptop opens G (rule 3 passes; G is not trusted [keyring_unauthenticated]) and reaches the epoch-2 key through its parentKeys, but no keyring it trusts has that keyCommit: it does not hold the key (format.md §8.6, §8.5 step 4), so the epoch-2 keyring still leaves it out, the laptop is behind and the merge is refused [removed_from_vault, merge.md §3.1]. Before, §8.6 excluded a keyring whose key the credential reached: the laptop was not behind, wrote on under epoch 1, and its commits were stale for everyone on the phone's branch",
                refused: "removed_from_vault",
                a: { k in try keyringWithAWrongLaptopSlot(k, childForTheLaptop: true) },
                b: { k in k.ids.append(try k.write(try k.open(k.b, "phone"), text: "phone, on the copy", clock: c + 120)) }),
            try build(
                "behind-not-by-a-replay-of-an-opened-keyring",
                comment:
                    "sixteenth review R16-1: on the vault the laptop writes an entry, then the phone, a member, makes a keyring F of epoch 2 with parents the root and a keyring that is not in the file, a valid slot for every member, and a link to the root it signs. The laptop opens F through its slot, but F fails rule 5.1 (a parent missing) and is not trusted: F's key is reached and not held. Then a writer holding no key appends F's public part and links with a random nonce and sealed part under F's key id, closed by a junk commit [commit_unverifiable]. The copy passes rule 1's public checks and its replayed link verifies, but the laptop reached F's key and the copy's sealed part does not decrypt under it: it is not authenticated newer (format.md §8.6), the laptop is not behind, and the merge goes through. With §8.6's held rule alone (before R16-1) the laptop was behind a replay and its merge refused [removed_from_vault]",
                a: { k in try replayOfAnOpenedUntrustedKeyring(k) },
                b: { k in k.ids.append(try k.write(try k.open(k.b, "phone"), text: "phone, on the copy", clock: c + 120)) }),
            try build(
                "removed-device-deletion-stays",
                comment:
                    "eleventh review R11-2: the phone deletes entry 1, which the laptop wrote; later the laptop removes the phone (a lost phone), and on the copy the laptop writes entry 2. The phone's tombstone is attested by a removed member, but its commit is a link ancestor of the removal's commit, which a current member attested: it ranks with a current member's standing (format.md §9.4 step 5), still retires the laptop's revision, and merge attests it again where it moves (merge.md §3.3). Entry 1 stays deleted with one head. Before, the tombstone retired nothing once the phone was removed and the laptop's attested revision won by standing: the deleted entry came back",
                a: { k in
                    try k.write(try k.open(k.a, "phone"), id: k.ids[0], text: "", clock: c + 100, deleted: true)
                    try k.open(k.a, "laptop").removeDevice(named: "Phone", now: c + 150)
                },
                b: { k in k.ids.append(try k.write(try k.open(k.b, "laptop"), text: "laptop, on the copy", clock: c + 120)) }),
            try build(
                "removed-device-edit-and-rename-stay",
                comment:
                    "eleventh review R11-2: the phone edits entry 1, which the laptop wrote, and renames the journal; later the laptop removes the phone. Both commits are link ancestors of the removal's commit, which a current member attested, so they rank with a current member's standing (format.md §9.4 step 5): the phone's edit retires the laptop's revision (one head, the phone's text) and its profile is the journal's (records.md §5). Before, removing the phone reverted both: the laptop's revision and profile won by standing",
                showProfile: true,
                a: { k in
                    let v = try k.open(k.a, "phone")
                    try k.write(v, id: k.ids[0], text: "edited on the phone", clock: c + 100)
                    let p = Profile(
                        name: "Renamed on the phone", clock: HybridLogicalClock(milliseconds: UInt64(c + 105), counter: 0), device: v.author
                    )
                    try v.file.commit(random: SeededRandom(label: "phone profile"), options: quiet, attestWith: k.phone.keyPair) {
                        (tx: PendingCommit) throws(FormatError) in
                        _ = try tx.appendSealed(kind: .profile, payload: p.encoded())
                    }
                    try k.open(k.a, "laptop").removeDevice(named: "Phone", now: c + 150)
                },
                b: { _ in }),
            try build(
                "attack-removed-device-deletes-on-its-old-copy",
                comment:
                    "eleventh review R11-2, the limit of the fix: the laptop removes the phone; the removed phone, on its copy from before the removal, deletes entry 1 and edits entry 2, attested by itself and chained from the head before the removal (its siblings). They are no link ancestors of the removal's commit, so they rank as a removed member's (format.md §9.4 step 5): merged, they move and stay unattested (merge.md §3.3), retire nothing, and the laptop's revisions win by standing (both entries live, two heads each)",
                entries: 2,
                a: { k in try k.open(k.a, "laptop").removeDevice(named: "Phone", now: c + 150) },
                b: { k in
                    let v = try k.open(k.b, "phone")
                    try k.write(v, id: k.ids[0], text: "", clock: c + 200, deleted: true)
                    try k.write(v, id: k.ids[1], text: "edited by the removed phone", clock: c + 201)
                }),
        ]
    }

    /// Merge vector `behind-not-by-a-replay-of-an-opened-keyring` (format.md
    /// §8.6, sixteenth review R16-1): the laptop writes; the phone makes a
    /// keyring `F` of epoch 2 whose second parent is not in the file (rule
    /// 5.1: never trusted), which every member opens through its slot; then a
    /// keyless replay of `F` (its public part and links, a random nonce and
    /// sealed part) closed by a junk commit.
    static func replayOfAnOpenedUntrustedKeyring(_ k: Case) throws {
        try k.write(try k.open(k.a, "laptop"), text: "laptop", clock: t0 + 100)
        let v = try k.open(k.a, "phone")
        let unlocked = try KeyringEvaluator.unlock(v.file, with: .device(k.phone.keyPair))
        guard let parent = unlocked.keyrings.last(where: \.isTrusted), let parentKey = parent.epochKey, let content = parent.content else {
            throw VectorFile.ParseError(description: "no trusted keyring")
        }
        let r = SeededRandom(label: "opened untrusted keyring")
        let key = EpochKey(epoch: 2, key: try SymmetricKey(bytes: r.bytes(32)), blobKey: try SymmetricKey(bytes: r.bytes(32)))
        let missing = KeyringBuilder.Parent(
            id: KeyringID(unchecked: r.bytes(32)), key: EpochKey(epoch: 1, key: try SymmetricKey(bytes: r.bytes(32))))
        let slots = [
            try SlotCrypto.recoverySlot(for: key, recovery: k.recovery, vaultID: v.file.vaultID, random: r),
            try SlotCrypto.deviceSlot(for: key, devicePublicKey: k.phone.keyPair.publicKey, vaultID: v.file.vaultID, random: r),
            try SlotCrypto.deviceSlot(for: key, devicePublicKey: k.laptop.keyPair.publicKey, vaultID: v.file.vaultID, random: r),
        ]
        let body = try KeyringBuilder.body(
            epochKey: key, vaultID: v.file.vaultID, parents: [KeyringBuilder.Parent(id: parent.id, key: parentKey), missing],
            isEscrowFree: false, slots: slots.map { StoredSlot(slot: $0) },
            content: KeyringContent(members: content.members, blobKey: key.blobKey!, created: t0 + 110, reason: "rotate"),
            signer: k.phone.keyPair, random: r)
        try v.file.commit(random: r, options: quiet, attestWith: k.phone.keyPair) { (tx: PendingCommit) throws(FormatError) in
            try tx.appendKeyring(keyID: key.id, epoch: 2, body: body, trusted: false)
            tx.commitKey = key
        }
        // The replay: what a writer holding no key can make of F.
        let f = try KeyringRecord(body: body, location: nil)
        let replay = KeyringRecord(publicPart: f.publicPart, nonce: r.bytes(24), sealed: r.bytes(f.sealed.count)).encodedBody()
        let header = FrameHeader(
            kind: .keyring, flags: 0, keyID: key.id, bodyLength: UInt32(replay.count + FrameHeader.bodyHashByteCount))
        let frame = header.encoded() + replay + BLAKE2b.hash(replay, byteCount: FrameHeader.bodyHashByteCount)
        let junk = CommitChain.commitHeader(keyID: key.id).encoded() + r.bytes(CommitChain.bodyByteCount)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: k.a))
        defer { try? handle.close() }
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(frame + junk))
    }

    /// Merge vectors `behind-keyring-reached-not-opened` and
    /// `behind-keyring-held-not-reached` (format.md §8.6): on the vault the
    /// laptop writes an entry, then the phone, a member, makes a keyring of
    /// epoch 2, child of the root, whose laptop slot wraps a key failing the
    /// keyring's key commitment. With `childForTheLaptop`, the phone then
    /// appends a keyring of epoch 3, child of that one, signed by a key that
    /// is no member, whose laptop slot wraps its own key and whose
    /// `parentKeys` name the epoch-2 key (fifteenth review R15-1).
    static func keyringWithAWrongLaptopSlot(_ k: Case, childForTheLaptop: Bool) throws {
        try k.write(try k.open(k.a, "laptop"), text: "laptop", clock: t0 + 100)
        let v = try k.open(k.a, "phone")
        let unlocked = try KeyringEvaluator.unlock(v.file, with: .device(k.phone.keyPair))
        guard let parent = unlocked.keyrings.last(where: \.isTrusted), let parentKey = parent.epochKey,
            let content = parent.content
        else {
            throw VectorFile.ParseError(description: "no trusted keyring")
        }
        let r = SeededRandom(label: "keyring with a wrong laptop slot")
        let key = EpochKey(epoch: 2, key: try SymmetricKey(bytes: r.bytes(32)), blobKey: try SymmetricKey(bytes: r.bytes(32)))
        let wrong = EpochKey(epoch: 2, key: try SymmetricKey(bytes: r.bytes(32)))
        let slots = [
            try SlotCrypto.recoverySlot(for: key, recovery: k.recovery, vaultID: v.file.vaultID, random: r),
            try SlotCrypto.deviceSlot(for: key, devicePublicKey: k.phone.keyPair.publicKey, vaultID: v.file.vaultID, random: r),
            try SlotCrypto.deviceSlot(
                for: wrong, devicePublicKey: k.laptop.keyPair.publicKey, vaultID: v.file.vaultID, random: r),
        ]
        let body = try KeyringBuilder.body(
            epochKey: key, vaultID: v.file.vaultID, parents: [KeyringBuilder.Parent(id: parent.id, key: parentKey)],
            isEscrowFree: false, slots: slots.map { StoredSlot(slot: $0) },
            content: KeyringContent(members: content.members, blobKey: key.blobKey!, created: t0 + 110, reason: "rotate"),
            signer: k.phone.keyPair, random: r)
        try v.file.commit(random: r, options: quiet, attestWith: k.phone.keyPair) { (tx: PendingCommit) throws(FormatError) in
            try tx.appendKeyring(keyID: key.id, epoch: 2, body: body, trusted: false)
            tx.commitKey = key
        }
        guard childForTheLaptop else { return }
        // The phone holds F's key (`key`: it made F, which nobody trusts);
        // F's id is that of the one keyring of epoch 2.
        let fKey = key
        let fContent = content
        do {
            let phone = try k.open(k.a, "phone")
            let byPhone = try KeyringEvaluator.unlock(phone.file, with: .device(k.phone.keyPair))
            guard let f = byPhone.keyrings.first(where: { $0.epoch == 2 }) else {
                throw VectorFile.ParseError(description: "no keyring of epoch 2")
            }
            let r = SeededRandom(label: "child keyring with a laptop slot")
            let key = EpochKey(epoch: 3, key: try SymmetricKey(bytes: r.bytes(32)), blobKey: try SymmetricKey(bytes: r.bytes(32)))
            let outsider = try keyPair(r.bytes(32))
            let slots = [
                try SlotCrypto.deviceSlot(for: key, devicePublicKey: k.laptop.keyPair.publicKey, vaultID: phone.file.vaultID, random: r)
            ]
            let body = try KeyringBuilder.body(
                epochKey: key, vaultID: phone.file.vaultID, parents: [KeyringBuilder.Parent(id: f.id, key: fKey)],
                isEscrowFree: false, slots: slots.map { StoredSlot(slot: $0) },
                content: KeyringContent(members: fContent.members, blobKey: key.blobKey!, created: t0 + 130, reason: "rotate"),
                signer: outsider, random: r)
            try phone.file.commit(random: r, options: quiet, attestWith: k.phone.keyPair) { (tx: PendingCommit) throws(FormatError) in
                try tx.appendKeyring(keyID: key.id, epoch: 3, body: body, trusted: false)
                tx.commitKey = fKey
            }
        }
    }

    /// Tenth review, R10-1: the laptop stores a 70,000-byte attachment; the
    /// other file is that vault, intact; on one file (the vault, or the copy
    /// when `forgedInTheCopy`), a holder of the epoch key rewrites chunk 0
    /// in place so that it keeps its Poly1305 tag (``TagForgery``). The
    /// commit still verifies (the chain covers a chunk's tag only) and
    /// readers report `blob_id_mismatch`. Merging keeps, of the two versions
    /// of one standing, the chunk with which the attachment reads whole
    /// (`Spec/merge.md §3.2`), in both directions: the result holds it once,
    /// no `chunk_duplicate`.
    package static func chunkRewrittenKeepingItsTag(forgedInTheCopy: Bool = false) throws -> Vector {
        let name = "attack-chunk-rewritten-keeping-its-tag" + (forgedInTheCopy ? "-in-the-copy" : "")
        let comment =
            forgedInTheCopy
            ? "tenth review, R10-1, the other direction: the laptop stores a 70,000-byte attachment; the vault is intact; on the copy a holder of the epoch key rewrites chunk 0 in place keeping its Poly1305 tag (the commit still verifies, attested). Before, merge carried both versions (chunk_duplicate). Both versions are of one standing (attested by the laptop) and both tails carry the same attested manifest, with which the vault reads whole: the copy's group is left out, nothing is written (changed: no)"
            : "tenth review, R10-1: the laptop stores a 70,000-byte attachment; the copy is that file, intact; on the vault a holder of the epoch key rewrites chunk 0 in place keeping its Poly1305 tag (the chain covers a chunk's tag only, so the commit still verifies and readers report blob_id_mismatch). Before, merge carried both versions (both authenticate): chunk_duplicate in the result, in both directions, and the attachment was lost for good. Now, of two versions of a chunk of one standing (both attested by the laptop), judged with the attested manifest both tails carry, merge keeps the side whose file reads the attachment whole (merge.md §3.2): the vault's group is left out and the copy's is written in its place, whole, keeping its attestation (unattested-commits: 0); the attachment line shows the intact content"
        return try build(
            name, comment: comment,
            a: { k in
                try k.attach(try k.open(k.a, "laptop"), count: 70_000, clock: t0 + 100)
                try? FileManager.default.removeItem(atPath: k.b)
                try FileManager.default.copyItem(atPath: k.a, toPath: k.b)
                let path = forgedInTheCopy ? k.b : k.a
                try rewriteChunkZero(at: path, in: try k.open(path, "laptop"))
            },
            b: { _ in })
    }

    /// Rewrites the file's first chunk of index 0 in place, in the file at
    /// `path` that `v` has open, so that it keeps its Poly1305 tag
    /// (``TagForgery``): its first 16 bytes become "NOT THE MEMBER'S". Its
    /// commit still verifies (the chain covers a chunk's tag only); the
    /// attachment no longer reads whole [`blob_id_mismatch`]. `v` must hold
    /// the chunk's epoch key.
    static func rewriteChunkZero(at path: String, in v: Vault) throws {
        let s = v.file.structure
        guard let f = s.frames.first(where: { $0.header.kind == .blobChunk && $0.chunk?.index == 0 }),
            let key = v.file.keys.keys(for: f.header.keyID).first
        else { fatalError("no chunk 0") }
        let record = try key.subkey(.record)
        var raw = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        let start = Int(f.bodyOffset)
        let end = start + Int(f.header.bodyLength)
        let nonce = Array(raw[start..<(start + 24)])
        let publicHeader = Array(raw[(start + 24)..<(start + 24 + ChunkHeader.byteCount)])
        let ciphertext = Array(raw[(start + 24 + ChunkHeader.byteCount)..<(end - 16)])
        let ad = SealedFrame.associatedData(vaultID: v.file.vaultID, header: f.header, publicHeader: publicHeader)
        let plaintext = try XChaCha20Poly1305.open(
            Array(raw[(start + 24 + ChunkHeader.byteCount)..<end]), key: record, nonce: nonce, authenticating: ad)
        guard
            let forged = TagForgery.rewrite(
                ciphertext: ciphertext, plaintext: plaintext, key: record, nonce: nonce, block: 0,
                newBlock: Array("NOT THE MEMBER'S".utf8), candidates: Array(1..<64))
        else { fatalError("no forgery") }
        raw.replaceSubrange((start + 24 + ChunkHeader.byteCount)..<(end - 16), with: forged)
        try Data(raw).write(to: URL(fileURLWithPath: path))
    }

    /// ``rewriteChunkZero(at:in:)`` with the file at `path` opened, read
    /// only, by the device whose Ed25519 seed is `deviceSeed` (32 bytes), a
    /// member that holds the chunk's epoch key.
    package static func rewriteChunkZero(at path: String, deviceSeed: [UInt8]) throws {
        try rewriteChunkZero(at: path, in: try Vault.open(at: path, credential: .device(try keyPair(deviceSeed)), writable: false))
    }

    /// Twelfth review, R12-3: the phone (a member) stores a 70,000-byte
    /// attachment; the copy is that file; then, on the vault (or the copy
    /// when `inTheCopy`), the laptop removes the phone and a holder of the
    /// old epoch key rewrites chunk 0 in place keeping its tag. The removal
    /// extends the phone's commits, so they rank with a current member's
    /// standing in that file (`Spec/format.md §9.4` step 5) and as a removed
    /// member's in the other. A commit both tails hold ranks by the higher
    /// of its two standings (`Spec/merge.md §3.2`, "Standing in a merge"):
    /// the two versions of the chunk are of one standing, and the merge
    /// keeps the intact one, in both directions.
    package static func removedMemberChunkRewritten(inTheCopy: Bool = false, rewrittenBeforeTheRemoval: Bool = false) throws -> Vector {
        if rewrittenBeforeTheRemoval {
            // The third direction (closing note 28): the vault is the intact
            // file with the removal, the copy a file from before it whose
            // chunk a holder of the old epoch key rewrote.
            return try build(
                "removed-member-chunk-rewritten-before-the-removal",
                comment:
                    "twelfth review R12-3, the third direction: the phone (a member) stores a 70,000-byte attachment; the copy is that file, and a holder of the old epoch key (the removed phone, an old passphrase or escrow holder) rewrites its chunk 0 in place keeping its Poly1305 tag; on the vault, intact, the laptop removes the phone. The phone's commit is in both tails with one stored head, so it ranks with a current member's standing in the merge (merge.md 3.2, \"Standing in a merge\"): the two versions of chunk 0 are of one standing, judged with the manifest both tails carry (format.md 7.1: in the chunks' commit), and the vault, tried first, reads the attachment whole. The copy's rewritten chunk is left out, and the copy brings nothing else, so the vault is unchanged and reads the attachment whole",
                a: { k in
                    try k.attach(try k.open(k.a, "phone"), count: 70_000, clock: t0 + 100)
                    try? FileManager.default.removeItem(atPath: k.b)
                    try FileManager.default.copyItem(atPath: k.a, toPath: k.b)
                    try k.open(k.a, "laptop").removeDevice(named: "Phone", now: t0 + 150)
                    try rewriteChunkZero(at: k.b, in: try k.open(k.b, "laptop"))
                },
                b: { _ in })
        }
        let name = "removed-member-chunk-rewritten-repaired" + (inTheCopy ? "-in-the-copy" : "")
        let comment =
            inTheCopy
            ? "twelfth review R12-3, the other direction: as removed-member-chunk-rewritten-repaired, with the removal and the rewritten chunk on the copy, and the vault the intact file from before the removal. Before, the copy's commit ranked with a current member's standing and the vault's as a removed member's: both versions were carried, the vault's intact chunk after the removal in an unattested commit, and the rewritten one won (blob_id_mismatch). Now both rank with a current member's standing (merge.md 3.2, \"Standing in a merge\"): the vault reads the attachment whole, the copy's rewritten chunk is left out, and the result is the same as in the other direction: the phone's intact commits under the removal's epoch key, attested again by the laptop (unattested-commits: 0), then the removal"
            : "twelfth review R12-3: the phone (a member) stores a 70,000-byte attachment; the copy is that file; on the vault the laptop then removes the phone, and a holder of the old epoch key (the removed phone, an old passphrase or escrow holder) rewrites chunk 0 in place keeping its Poly1305 tag. The removal extends the phone's commits, so in the vault they rank with a current member's standing (format.md 9.4 step 5); in the copy, from before the removal, the same commits rank as a removed member's. Before, the two versions of the chunk were of two standings: both were carried, the copy's after the removal in an unattested commit, and format.md 7.4 took the rewritten one (blob_id_mismatch). Now a commit both tails hold (the same stored head, verified in both) ranks by the higher of its two standings (merge.md 3.2, \"Standing in a merge\"): the versions are of one standing, the copy reads the attachment whole, the vault's rewritten chunk is left out and the copy's intact group is written instead; the phone's two commits are written under the result's write key (the removal's epoch) and, ranking as a current member's, attested again by the laptop (merge.md 3.3, as for removed-device-deletion-stays: unattested-commits: 0), then the removal. The result reads the attachment whole, as the other direction's does"
        return try build(
            name, comment: comment,
            a: { k in
                try k.attach(try k.open(k.a, "phone"), count: 70_000, clock: t0 + 100)
                try? FileManager.default.removeItem(atPath: k.b)
                try FileManager.default.copyItem(atPath: k.a, toPath: k.b)
                let path = inTheCopy ? k.b : k.a
                try k.open(path, "laptop").removeDevice(named: "Phone", now: t0 + 150)
                try rewriteChunkZero(at: path, in: try k.open(path, "laptop"))
            },
            b: { _ in })
    }

    /// Serves `stream` for the first 16-byte draw (the stream id an
    /// attachment draws first, `VaultFile.appendBlob`), then `rest`: an
    /// attacker reusing a member's public stream id.
    final class StreamIDFirst: RandomSource {
        let stream: [UInt8]
        let rest: SeededRandom
        let served = Mutex(false)

        init(_ stream: StreamID, then rest: SeededRandom) {
            self.stream = stream.bytes
            self.rest = rest
        }

        func fill(_ buffer: UnsafeMutableRawBufferPointer) {
            let first =
                buffer.count == stream.count
                && served.withLock { done in
                    defer { done = true }
                    return !done
                }
            if first { buffer.copyBytes(from: stream) } else { rest.fill(buffer) }
        }
    }

    /// Eleventh review, R11-1: the laptop (a member) stores a 70,000-byte
    /// attachment and the revision naming it in one attested commit, on one
    /// file; on the other, a non-member holding the epoch key (it writes
    /// unattested) appends its own attachment under the laptop's public
    /// stream id, with a manifest whose blob id matches its content. With
    /// `demote`, its commit also carries the laptop's revision frame byte
    /// for byte and a revision of its own naming it as parent, with clock
    /// 2⁶⁴ − 1. The two versions of each chunk are of different standings,
    /// so both are carried and format.md §7.4 takes the attested one: the
    /// laptop's attachment reads whole and its revision stays in its
    /// attested group, in either direction (`Spec/merge.md §3.2`).
    package static func streamIDReused(attackerIsTheVault: Bool, demote: Bool = false) throws -> Vector {
        let name =
            demote
            ? "attack-unattested-stream-id-reused-demotion"
            : "attack-unattested-stream-id-reused" + (attackerIsTheVault ? "" : "-member-is-the-vault")
        let comment =
            demote
            ? "eleventh review, R11-1 (demotion): as attack-unattested-stream-id-reused, and the attacker's unattested commit also carries the laptop's revision frame byte for byte and its own revision of that entry naming it as parent, clock 2^64-1. The withdrawn rule wrote the laptop's revision from the attacker's group (unattested), so the attacker's revision retired it and the entry showed the attacker's text. Now the chunks differ in standing, nothing is moved: the laptop's revision stays in its attested group, the attacker's does not retire it (two heads), the entry shows the laptop's text and its attachment reads whole"
            : attackerIsTheVault
                ? "eleventh review, R11-1: the copy is the laptop's file, with a 70,000-byte attachment and its revision in one attested commit; the vault is a fork of the file before that commit plus an unattested commit (a passphrase or escrow holder's) holding chunks under the laptop's public stream id with other content and a manifest matching them. The withdrawn rule judged with the first manifest in the vault's tail (the attacker's), kept the vault's chunks and left the laptop's attested chunks out: the attachment was lost. Now two versions of a chunk are chosen between only at one standing; these differ (attested, unattested), both are carried and format.md §7.4 takes the attested ones: the laptop's attachment reads whole"
                : "eleventh review, R11-1, the other direction: the vault is the laptop's file (attachment and revision in one attested commit), the copy the attacker's fork with unattested chunks under the laptop's stream id; both are carried, the laptop's attachment reads whole"
        return try build(
            name, comment: comment,
            a: { k in
                let (memberPath, attackerPath) = attackerIsTheVault ? (k.b, k.a) : (k.a, k.b)
                // The laptop: the attachment and its revision in one commit.
                let v = try k.open(memberPath, "laptop")
                let content = SeededRandom(label: "\(name) laptop attachment").bytes(70_000)
                let random = SeededRandom(label: "\(name) laptop revision")
                let entry = EntryID(using: random)
                let revision = RevisionID(using: random)
                k.ids.append(entry)
                try v.commit { tx in
                    let stored = try tx.storeAttachment(from: MemoryByteSource(content), mediaType: "image/jpeg")
                    try tx.append(
                        EntryRevision(
                            entryID: entry, revisionID: revision, clock: HybridLogicalClock(milliseconds: UInt64(t0 + 100), counter: 0),
                            device: v.author,
                            body: EntryBody(
                                created: t0, text: "the laptop's photo",
                                attachments: [AttachmentReference(id: [1], blob: stored.blob, mediaType: "image/jpeg")])))
                }
                let s = v.file.structure
                guard let stream = s.frames.first(where: { $0.header.kind == .blobChunk })?.chunk?.stream,
                    let r = s.frames.last(where: { $0.header.kind == .entryRevision })
                else { fatalError("no attachment") }
                let raw = Array(try Data(contentsOf: URL(fileURLWithPath: memberPath)))
                let revisionFrame = Array(raw[(Int(r.bodyOffset) - FrameHeader.byteCount)..<(Int(r.bodyOffset) + Int(r.header.bodyLength))])
                // The attacker: its own content under the laptop's stream id,
                // committed without an attestation.
                let w = try k.open(attackerPath, "phone")
                let forged = SeededRandom(label: "\(name) attacker attachment").bytes(70_000)
                try w.file.commit(
                    random: StreamIDFirst(stream, then: SeededRandom(label: "\(name) attacker commit")), options: quiet, attestation: .none
                ) { (tx: PendingCommit) throws(FormatError) in
                    _ = try tx.appendBlob(from: MemoryByteSource(forged), mediaType: "image/jpeg")
                    if demote {
                        _ = try tx.appendRaw(frame: revisionFrame)
                        let override = EntryRevision(
                            entryID: entry, revisionID: RevisionID(using: SeededRandom(label: "\(name) attacker revision")),
                            parents: [revision], clock: HybridLogicalClock(rawValue: .max), device: v.author,
                            body: EntryBody(created: t0, text: "the attacker's text, written by a non-member"))
                        _ = try tx.appendSealed(kind: .entryRevision, payload: override.encoded())
                    }
                }
                guard w.file.structure.frames.contains(where: { $0.chunk?.stream == stream }) else { fatalError("stream not reused") }
            },
            b: { _ in })
    }

    /// The laptop removes the phone on one copy while the phone removes the
    /// laptop on the other; the recovery key merges.
    static func mutualRemoval(_ name: String, laptopIsTheVault: Bool, merger: Merger = .recovery, comment: String) throws -> Vector {
        func laptopSide(_ k: Case, _ path: String) throws {
            let v = try k.open(path, "laptop")
            try v.removeDevice(named: "Phone", now: t0 + 50)
            try k.write(v, text: "laptop after removing the phone", clock: t0 + 60)
        }
        func phoneSide(_ k: Case, _ path: String) throws {
            let v = try k.open(path, "phone")
            try v.removeDevice(named: "Laptop", now: t0 + 51)
            try k.write(v, text: "phone after removing the laptop", clock: t0 + 61)
        }
        return try build(
            name, comment: comment, merger: merger,
            a: { k in try laptopIsTheVault ? laptopSide(k, k.a) : phoneSide(k, k.a) },
            b: { k in try laptopIsTheVault ? phoneSide(k, k.b) : laptopSide(k, k.b) })
    }

    /// The copy's one commit holds a keyring and its child (a rotation and
    /// a same-epoch enrolment written together), and the vault has a block
    /// of the same epoch: the keyring block is placed after its parents
    /// whatever the digests (topological order, `Spec/merge.md §3.3`).
    static func keyringAndChild() throws -> Vector {
        try build(
            "keyring-and-child-in-one-block",
            comment:
                "the copy's one commit holds an epoch-2 keyring and its same-epoch child (an enrolment) after it: a block is ready when every parent of its keyrings is placed or earlier in the same block",
            a: { k in try k.write(try k.open(k.a, "laptop"), text: "laptop, epoch 1", clock: t0 + 100) },
            b: { k in
                let v = try k.open(k.b, "phone")
                let state = try v.keyState()
                let random = SeededRandom(label: "keyring and child")
                let rotate = try KeyOperations.keyrings(for: .rotate, state: state, signer: k.phone.keyPair, now: t0 + 50, random: random)[
                    0]
                // The child: the same epoch and key, enrolling a tablet, signed by the phone.
                let tablet = try Ed25519.KeyPair(using: random)
                let members = state.members + [KeyringMember(role: "device", publicKey: tablet.publicKey, name: "Tablet", added: t0 + 51)]
                var slots: [StoredSlot] = []
                for m in members {
                    let slot: KeySlot =
                        m.role == "recovery"
                        ? try SlotCrypto.recoverySlot(
                            for: rotate.epochKey, recoveryPublicKey: m.publicKey, vaultID: v.vaultID, random: random)
                        : try SlotCrypto.deviceSlot(for: rotate.epochKey, devicePublicKey: m.publicKey, vaultID: v.vaultID, random: random)
                    slots.append(StoredSlot(slot: slot))
                }
                let child = try KeyringBuilder.body(
                    epochKey: rotate.epochKey, vaultID: v.vaultID, parents: [KeyringBuilder.Parent(id: rotate.id, key: rotate.epochKey)],
                    isEscrowFree: false,
                    slots: slots,
                    content: KeyringContent(members: members, blobKey: rotate.epochKey.blobKey!, created: t0 + 51, reason: "enroll"),
                    signer: k.phone.keyPair, random: random)
                try v.file.commit(random: random, options: quiet, attestWith: k.phone.keyPair) { (tx: PendingCommit) throws(FormatError) in
                    try tx.appendKeyring(keyID: rotate.epochKey.id, epoch: 2, body: rotate.body)
                    try tx.appendKeyring(keyID: rotate.epochKey.id, epoch: 2, body: child)
                    // A commit that starts an epoch is made under its key
                    // (Spec/format.md §9.2, seventh review R7-3).
                    tx.commitKey = rotate.epochKey
                }
                let after = try k.open(k.b, "phone")
                try k.write(after, text: "phone, epoch 2", clock: t0 + 60)
            })
    }

    /// Writes every vector under `dir/merge/`.
    public static func write(to dir: String) throws -> Int {
        let root = dir + "/merge"
        try? FileManager.default.removeItem(atPath: root)
        let vectors = try all()
        for v in vectors {
            let d = root + "/" + v.name
            try FileManager.default.createDirectory(atPath: d, withIntermediateDirectories: true)
            try Data(v.a).write(to: URL(fileURLWithPath: d + "/a.quire"))
            try Data(v.b).write(to: URL(fileURLWithPath: d + "/b.quire"))
            try Data(v.merged).write(to: URL(fileURLWithPath: d + "/merged.quire"))
            try Data(v.expect.utf8).write(to: URL(fileURLWithPath: d + "/expect.txt"))
        }
        return vectors.count
    }

    /// The names of the vectors on disk under `dir/merge/` that differ from
    /// what generating them now gives, or that generating would remove.
    public static func changed(in dir: String) throws -> [String] {
        let root = dir + "/merge"
        let vectors = try all()
        var changed: [String] = []
        for v in vectors {
            let d = root + "/" + v.name
            let same =
                (try? Data(contentsOf: URL(fileURLWithPath: d + "/a.quire"))) == Data(v.a)
                && (try? Data(contentsOf: URL(fileURLWithPath: d + "/b.quire"))) == Data(v.b)
                && (try? Data(contentsOf: URL(fileURLWithPath: d + "/merged.quire"))) == Data(v.merged)
                && (try? Data(contentsOf: URL(fileURLWithPath: d + "/expect.txt"))) == Data(v.expect.utf8)
            if !same { changed.append(v.name) }
        }
        let onDisk = Set((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? [])
        return changed + onDisk.subtracting(vectors.map(\.name)).sorted()
    }

    /// Checks every vector on disk with the library: merging `b.quire` into
    /// a copy of `a.quire` must report `changed:` as said, give a result that
    /// opens and whose commits after the common prefix all verify, with
    /// `unattested-commits` of them unattested, the entries and attachments
    /// listed, and — unless `merged: resealed` — exactly the bytes of
    /// `merged.quire`. Returns one line per failure.
    public static func verify(in dir: String) throws -> (count: Int, failures: [String]) {
        let root = dir + "/merge"
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []).sorted()
        var failures: [String] = []
        for name in names {
            let d = root + "/" + name
            let scratch = NSTemporaryDirectory() + "quire-merge-check-\(getpid())-\(name)"
            try? FileManager.default.removeItem(atPath: scratch)
            try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: scratch) }
            try FileManager.default.copyItem(atPath: d + "/a.quire", toPath: scratch + "/a.quire")
            try FileManager.default.copyItem(atPath: d + "/b.quire", toPath: scratch + "/b.quire")
            let expect = String(decoding: try Data(contentsOf: URL(fileURLWithPath: d + "/expect.txt")), as: UTF8.self)
            let lines = expect.split(separator: "\n").map(String.init)
            guard lines.first == "quire merge vector 2" else {
                failures.append("\(name): not a version 2 merge vector")
                continue
            }
            let credential: Credential
            if let line = lines.first(where: { $0.hasPrefix("credential: device ") }),
                let seed = bytes(fromHex: String(line.dropFirst("credential: device ".count)))
            {
                credential = .device(try keyPair(seed))
            } else if let line = lines.first(where: { $0.hasPrefix("credential: recovery-key ") }),
                let key = try? RecoveryKey(code: String(line.dropFirst("credential: recovery-key ".count)))
            {
                credential = .recoveryKey(key)
            } else {
                failures.append("\(name): no credential line")
                continue
            }
            if let line = lines.first(where: { $0.hasPrefix("refused: ") }) {
                let code = String(line.dropFirst("refused: ".count))
                do {
                    _ = try VaultMerge.merge(
                        vaultAt: scratch + "/a.quire", copyAt: scratch + "/b.quire", credential: credential, options: quiet)
                    failures.append("\(name): the merge was not refused (\(code))")
                } catch {
                    if error.code != code { failures.append("\(name): refused with \(error.code), not \(code)") }
                }
                if (try? Data(contentsOf: URL(fileURLWithPath: scratch + "/a.quire")))
                    != (try? Data(contentsOf: URL(fileURLWithPath: d + "/a.quire")))
                {
                    failures.append("\(name): the refused merge changed the vault")
                }
                continue
            }
            do {
                let report = try VaultMerge.merge(
                    vaultAt: scratch + "/a.quire", copyAt: scratch + "/b.quire", credential: credential, options: quiet)
                let merged = Array(try Data(contentsOf: URL(fileURLWithPath: scratch + "/a.quire")))
                if !lines.contains("changed: " + (report.changed ? "yes" : "no")) {
                    failures.append("\(name): changed is \(report.changed)")
                }
                if !lines.contains("merged: resealed") {
                    if merged != Array(try Data(contentsOf: URL(fileURLWithPath: d + "/merged.quire"))) {
                        failures.append("\(name): the merge wrote other bytes than merged.quire")
                    }
                    if !lines.contains("merged: " + hex(BLAKE2b.hash(merged, byteCount: 32))) {
                        failures.append("\(name): merged digest differs")
                    }
                }
                let unattested = try unattestedCommits(scratch + "/a.quire", credential: credential, prefix: report.commonPrefixByteCount)
                if !lines.contains("unattested-commits: \(unattested)") { failures.append("\(name): \(unattested) unattested commits") }
                if lines.contains(where: { $0.hasPrefix("kept-attestations: ") }) {
                    let kept = try keptAttestations(scratch + "/a.quire", credential: credential, prefix: report.commonPrefixByteCount)
                    if !lines.contains("kept-attestations: \(kept)") {
                        failures.append("\(name): \(kept) commits keep another member's attestation")
                    }
                }
                let expected = lines.filter { $0.hasPrefix("entry: ") || $0.hasPrefix("attachment: ") }
                let ids = expected.filter { $0.hasPrefix("entry: ") }.compactMap { l in
                    bytes(fromHex: String(l.split(separator: " ")[1])).map { EntryID(unchecked: $0) }
                }
                let got = try contentLines(scratch + "/a.quire", credential: credential, ids: ids)
                if got != expected { failures.append("\(name): content \(got) ≠ \(expected)") }
                if let want = lines.first(where: { $0.hasPrefix("profile: ") }) {
                    let have = try profileLine(scratch + "/a.quire", credential: credential)
                    if have != want { failures.append("\(name): \(have) ≠ \(want)") }
                }
            } catch {
                failures.append("\(name): \(error)")
            }
        }
        return (names.count, failures)
    }
}
