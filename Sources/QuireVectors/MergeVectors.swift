import Foundation
import Quire
import QuireCrypto
import QuireFormat
import QuireKeys
import QuireSync

/// Merge vectors (`Vectors/README.md`, "Merge vectors"; `Spec/merge.md §3`,
/// §5): two copies of one vault, the exact bytes the merge writes, and what
/// each entry is afterwards. Generated from seeded randomness and explicit
/// clocks, so regenerating changes nothing.
///
/// Each vector is a folder `Vectors/merge/<name>/` holding `a.quire` (the
/// vault), `b.quire` (the copy), `merged.quire` (the result of merging `b`
/// into `a` with the credential) and `expect.txt`:
///
/// ```
/// quire merge vector 1
/// credential: device <Ed25519 seed, 64 hex digits>
/// changed: yes|no
/// merged: <BLAKE2b-256 of merged.quire, hex>
/// entry: <entry id hex> live|deleted heads=<n> text=<the winner's text, JSON string>
/// comment: <what it covers>
/// ```
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

    static func keyPair(_ seed: [UInt8]) throws -> Ed25519.KeyPair {
        var s = seed
        return try Ed25519.KeyPair(seed: SecureBytes(consuming: &s))
    }

    /// Builds one case: a vault with the laptop and the phone enrolled and
    /// one shared entry; `a` edits the vault, `b` edits a copy of it on the
    /// phone; then the laptop merges the copy in.
    static func build(
        _ name: String, comment: String, entries: Int = 1,
        a: (Vault, [EntryID], Writer) throws -> Void, b: (Vault, [EntryID], Writer) throws -> Void
    ) throws -> Vector {
        let dir = NSTemporaryDirectory() + "quire-merge-vector-\(getpid())-\(name)"
        try? FileManager.default.removeItem(atPath: dir)
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let pa = dir + "/a.quire", pb = dir + "/b.quire", pm = dir + "/merged.quire"
        let laptop = try DeviceIdentity(keyPair: keyPair(laptopSeed), name: "Laptop", created: t0)
        let phone = try DeviceIdentity(keyPair: keyPair(phoneSeed), name: "Phone", created: t0)
        let recovery = try RecoveryKey(using: SeededRandom(label: "merge vector recovery " + name))
        let vault = try Vault.create(
            at: pa, setup: VaultSetup(name: "Merge " + name, recoveryKey: recovery, device: laptop, now: t0),
            random: SeededRandom(label: "merge vector " + name), options: quiet)
        try vault.enrollDevice(code: phone.code, name: "Phone", now: t0 + 1)
        let shared = Writer(label: name + " shared", device: laptop.id)
        var ids: [EntryID] = []
        for i in 0..<entries {
            ids.append(try shared.add(vault, text: "entry \(i + 1)", clock: UInt64(t0) + 10 + UInt64(i)))
        }
        try FileManager.default.copyItem(atPath: pa, toPath: pb)
        let onA = try Vault.open(at: pa, credential: .device(laptop.keyPair), random: SeededRandom(label: name + " a"), options: quiet)
        try a(onA, ids, Writer(label: name + " a", device: laptop.id))
        let onB = try Vault.open(at: pb, credential: .device(phone.keyPair), random: SeededRandom(label: name + " b"), options: quiet)
        try b(onB, ids, Writer(label: name + " b", device: phone.id))
        try FileManager.default.copyItem(atPath: pa, toPath: pm)
        let report = try VaultMerge.merge(
            vaultAt: pm, copyAt: pb, credential: .device(laptop.keyPair), random: SeededRandom(label: name + " merge"), options: quiet)
        let merged = Array(try Data(contentsOf: URL(fileURLWithPath: pm)))
        var lines = [
            "quire merge vector 1",
            "credential: device " + hex(laptopSeed),
            "changed: " + (report.changed ? "yes" : "no"),
            "merged: " + hex(BLAKE2b.hash(merged, byteCount: 32)),
        ]
        lines += try entryLines(pm, laptop: laptop.keyPair, ids: ids)
        lines.append("comment: " + comment)
        return Vector(
            name: name, a: Array(try Data(contentsOf: URL(fileURLWithPath: pa))), b: Array(try Data(contentsOf: URL(fileURLWithPath: pb))),
            merged: merged, expect: lines.joined(separator: "\n") + "\n")
    }

    /// The `entry:` lines of a merged vault, in id order.
    static func entryLines(_ path: String, laptop: Ed25519.KeyPair, ids: [EntryID]) throws -> [String] {
        let v = try Vault.open(at: path, credential: .device(laptop), writable: false)
        var all = Set(ids)
        for e in try v.entries() { all.insert(e.id) }
        var lines: [String] = []
        for id in all.sorted() {
            guard let e = try v.entry(id) else { continue }
            let text = String(decoding: try JSONEncoder().encode(e.body.text), as: UTF8.self)
            lines.append("entry: \(hex(id.bytes)) \(e.isDeleted ? "deleted" : "live") heads=\(e.conflictingHeads.count + 1) text=\(text)")
        }
        return lines
    }

    /// Writes revisions with seeded ids and explicit clocks.
    final class Writer {
        let random: SeededRandom
        let device: DeviceID
        init(label: String, device: DeviceID) {
            random = SeededRandom(label: "merge vector writer " + label)
            self.device = device
        }

        @discardableResult
        func add(_ v: Vault, text: String, clock: UInt64) throws -> EntryID {
            let id = EntryID(using: random)
            try write(v, id: id, text: text, clock: clock, deleted: false)
            return id
        }

        func write(_ v: Vault, id: EntryID, text: String, clock: UInt64, deleted: Bool) throws {
            let parents = try v.revisions(of: id).map(\.revisionID)
            let named = Set(try v.revisions(of: id).flatMap(\.parents))
            let revision = EntryRevision(
                entryID: id, revisionID: RevisionID(using: random), parents: parents.filter { !named.contains($0) },
                clock: HybridLogicalClock(milliseconds: clock, counter: 0), device: device, isDeleted: deleted,
                body: EntryBody(created: MergeVectors.t0, text: text))
            try v.commit { tx in try tx.append(revision) }
        }
    }

    /// Every merge vector.
    public static func all() throws -> [Vector] {
        let c = UInt64(t0)
        return [
            try build("concurrent-edits", comment: "both sides edit the same entry; the later clock (the copy's) shows, the other head is listed",
                      a: { v, ids, w in try w.write(v, id: ids[0], text: "edited on the laptop", clock: c + 100, deleted: false) },
                      b: { v, ids, w in try w.write(v, id: ids[0], text: "edited on the phone", clock: c + 200, deleted: false) }),
            try build("edit-versus-delete", comment: "the vault edits, the copy deletes earlier: the edit shows, the tombstone is a listed head",
                      a: { v, ids, w in try w.write(v, id: ids[0], text: "kept", clock: c + 300, deleted: false) },
                      b: { v, ids, w in try w.write(v, id: ids[0], text: "", clock: c + 200, deleted: true) }),
            try build("delete-versus-delete", comment: "both sides delete the entry: deleted, two tombstone heads",
                      a: { v, ids, w in try w.write(v, id: ids[0], text: "", clock: c + 100, deleted: true) },
                      b: { v, ids, w in try w.write(v, id: ids[0], text: "", clock: c + 200, deleted: true) }),
            try build("keyring-epoch-each-side", comment: "each side rotates to its own epoch 2 and writes under it; the result has two epoch-2 heads and commits under the key whose commit key has the smaller digest",
                      a: { v, _, w in
                          try v.rotateKeys(now: MergeVectors.t0 + 50)
                          try w.add(v, text: "laptop, epoch 2", clock: c + 60)
                      },
                      b: { v, _, w in
                          try v.rotateKeys(now: MergeVectors.t0 + 51)
                          try w.add(v, text: "phone, epoch 2", clock: c + 61)
                      }),
            try build("unknown-record-kind", comment: "the copy holds a plaintext record of kind 0x9a, unknown to version 1: carried byte for byte",
                      a: { v, _, w in try w.add(v, text: "laptop", clock: c + 100) },
                      b: { v, _, w in
                          try w.add(v, text: "phone", clock: c + 101)
                          try v.file.commit(random: SeededRandom(label: "unknown kind"), options: quiet, attestWith: try MergeVectors.keyPair(MergeVectors.phoneSeed)) { (tx: PendingCommit) throws(FormatError) in
                              _ = try tx.appendPlaintext(kind: RecordKind(rawValue: 0x9a), keyID: tx.key.id, body: Array("from a newer version".utf8), trusted: false)
                          }
                      }),
            try build("stale-copy", comment: "the copy is an older state of the vault: nothing to add, the vault is unchanged",
                      a: { v, ids, w in try w.write(v, id: ids[0], text: "newer", clock: c + 100, deleted: false) },
                      b: { _, _, _ in }),
        ]
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
            let same = (try? Data(contentsOf: URL(fileURLWithPath: d + "/a.quire"))) == Data(v.a)
                && (try? Data(contentsOf: URL(fileURLWithPath: d + "/b.quire"))) == Data(v.b)
                && (try? Data(contentsOf: URL(fileURLWithPath: d + "/merged.quire"))) == Data(v.merged)
                && (try? Data(contentsOf: URL(fileURLWithPath: d + "/expect.txt"))) == Data(v.expect.utf8)
            if !same { changed.append(v.name) }
        }
        let onDisk = Set((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? [])
        return changed + onDisk.subtracting(vectors.map(\.name)).sorted()
    }

    /// Checks every vector on disk with the library: merging `b.quire` into
    /// a copy of `a.quire` must give `merged.quire` byte for byte and the
    /// entries `expect.txt` lists. Returns one line per failure.
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
            guard let seedLine = lines.first(where: { $0.hasPrefix("credential: device ") }),
                let seed = bytes(fromHex: String(seedLine.dropFirst("credential: device ".count)))
            else {
                failures.append("\(name): no credential line")
                continue
            }
            let laptop = try keyPair(seed)
            do {
                let report = try VaultMerge.merge(vaultAt: scratch + "/a.quire", copyAt: scratch + "/b.quire", credential: .device(laptop), options: quiet)
                let merged = Array(try Data(contentsOf: URL(fileURLWithPath: scratch + "/a.quire")))
                if merged != Array(try Data(contentsOf: URL(fileURLWithPath: d + "/merged.quire"))) {
                    failures.append("\(name): the merge wrote other bytes than merged.quire")
                }
                if !lines.contains("changed: " + (report.changed ? "yes" : "no")) { failures.append("\(name): changed is \(report.changed)") }
                if !lines.contains("merged: " + hex(BLAKE2b.hash(merged, byteCount: 32))) { failures.append("\(name): merged digest differs") }
                let expectedEntries = lines.filter { $0.hasPrefix("entry: ") }
                let ids = expectedEntries.compactMap { l in bytes(fromHex: String(l.split(separator: " ")[1])).map { EntryID(unchecked: $0) } }
                let got = try entryLines(scratch + "/a.quire", laptop: laptop, ids: ids)
                if got != expectedEntries { failures.append("\(name): entries \(got) ≠ \(expectedEntries)") }
            } catch {
                failures.append("\(name): \(error)")
            }
        }
        return (names.count, failures)
    }
}
