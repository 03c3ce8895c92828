import Foundation
@_spi(Crypto) @_spi(Format) import Quire
import Testing
import QuireTestSupport

/// Random interleavings of adds, edits and deletes on three replicas with
/// random merges (`Spec/merge.md §3`): every replica converges to the same
/// content, no revision written is lost, and a stale copy merged after a
/// deletion does not bring the entry back. The same with rotations, a
/// removal, compactions and rekeys: `MergeKeyPropertyTests.swift`.
@Suite(.tags(.slow), .skippedByMakeCheck) struct MergePropertyTests {
    struct Replica {
        let path: String
        let credential: Credential
    }

    /// Seeded choices, from the library's seeded random source.
    struct Dice {
        let random: SeededRandom
        init(seed: UInt64) { random = SeededRandom(label: "merge property \(seed)") }
        mutating func below(_ n: Int) -> Int {
            Int(random.bytes(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) } % UInt64(n))
        }
    }

    /// Every revision id of the entries `ids` in the file and, per entry,
    /// its winning head's text (or "deleted") after its revision id.
    static func content(_ r: Replica, _ ids: [EntryID]) throws -> (revisions: Set<String>, live: [String: String]) {
        let v = try Vault.open(at: r.path, credential: r.credential, writable: false, options: fast)
        var revisions = Set<String>()
        var live: [String: String] = [:]
        for id in ids {
            guard let e = try v.entry(id) else { continue }
            for rev in try v.revisions(of: id) { revisions.insert(rev.revisionID.description) }
            live[id.description] = e.revision.revisionID.description + " " + (e.isDeleted ? "deleted" : e.body.text)
        }
        return (revisions, live)
    }

    @Test(arguments: [1, 2, 3, 4, 5, 6] as [UInt64])
    func replicasConverge(seed: UInt64) throws {
        let dir = TemporaryDirectory()
        let devices = ["Laptop", "Phone", "Tablet"].map { device($0 + " \(seed)") }
        let first = dir.file("r0.quire")
        let vault = try Vault.create(
            at: first, setup: VaultSetup(name: "J", recoveryKey: try RecoveryKey(using: SeededRandom(label: "prop \(seed)")), device: devices[0], now: t0),
            random: SeededRandom(label: "prop vault \(seed)"), options: fast)
        for (i, d) in devices.enumerated().dropFirst() { try vault.enrollDevice(code: d.code, name: "Device \(i)", now: t0 + Int64(i)) }
        var ids = [try vault.add(EntryBody(created: t0, text: "seed entry")).entryID]
        for i in 1..<3 { copy(first, dir.file("r\(i).quire")) }
        let replicas = (0..<3).map { Replica(path: dir.file("r\($0).quire"), credential: .device(devices[$0].keyPair)) }

        var dice = Dice(seed: seed)
        var written = Set<String>()
        var counter = 0
        var staleDeletion: (copy: String, entry: String)?
        for step in 0..<40 {
            let r = replicas[dice.below(3)]
            let v = try Vault.open(at: r.path, credential: r.credential, options: fast)
            let entries = try v.entries().filter { !$0.isDeleted }
            switch dice.below(10) {
            case 0...3:
                counter += 1
                let added = try v.add(EntryBody(created: t0 + Int64(counter), text: "entry \(counter)"))
                ids.append(added.entryID)
                written.insert(added.revisionID.description)
            case 4...5 where !entries.isEmpty:
                counter += 1
                let e = entries[dice.below(entries.count)]
                written.insert(try v.edit(e.id, body: EntryBody(created: e.body.createdMilliseconds, text: "edit \(counter)")).revisionID.description)
            case 6 where !entries.isEmpty:
                let e = entries[dice.below(entries.count)]
                // Keep a copy from before the deletion, to merge back later.
                if staleDeletion == nil {
                    let stale = dir.file("stale-\(step).quire")
                    copy(r.path, stale)
                    staleDeletion = (stale, e.id.description)
                    written.insert(try v.delete(e.id).revisionID.description)
                } else {
                    written.insert(try v.delete(e.id).revisionID.description)
                }
            default:
                let from = replicas[dice.below(3)]
                if from.path != r.path {
                    _ = try VaultMerge.merge(vaultAt: r.path, copyAt: from.path, credential: r.credential, options: fast)
                }
            }
        }
        // Bring everyone together: 0 takes 1 and 2, then 1 and 2 take 0.
        for (into, from) in [(0, 1), (0, 2), (1, 0), (2, 0)] {
            _ = try VaultMerge.merge(vaultAt: replicas[into].path, copyAt: replicas[from].path, credential: replicas[into].credential, options: fast)
        }
        let contents = try replicas.map { try Self.content($0, ids) }
        #expect(contents[0].revisions == contents[1].revisions && contents[1].revisions == contents[2].revisions)
        #expect(contents[0].live == contents[1].live && contents[1].live == contents[2].live)
        #expect(written.isSubset(of: contents[0].revisions))
        // Merging every replica into the others again changes nothing.
        for into in 0..<3 {
            for from in 0..<3 where from != into {
                #expect(try !VaultMerge.merge(vaultAt: replicas[into].path, copyAt: replicas[from].path, credential: replicas[into].credential, options: fast).changed)
            }
        }
        // A stale copy from before a deletion does not bring the entry back.
        if let (stale, entry) = staleDeletion, contents[0].live[entry]?.hasSuffix(" deleted") == true {
            _ = try VaultMerge.merge(vaultAt: replicas[0].path, copyAt: stale, credential: replicas[0].credential, options: fast)
            #expect(try Self.content(replicas[0], ids).live[entry]?.hasSuffix(" deleted") == true)
        }
        for r in replicas { #expect(try Vault.open(at: r.path, credential: r.credential, options: fast).verify().issues.isEmpty) }
    }
}
