import Foundation
@_spi(Testing) @_spi(Crypto) import QuireCrypto
@_spi(Format) import QuireFormat
import QuireSystem
import Testing

// The reader-rule findings of the fifth review (and the sixth's R6-2) on the walk
// (`Spec/format.md §9.3`, `Spec/threat-model.md §6.7`), each as an attack
// that gave another verdict before its fix.
@Suite struct WalkAttackTests {
    /// Appends one unattested commit of `payloads` to `v` (what any holder
    /// of the epoch key writes: a merge's unattested block, a compaction's
    /// commit 2).
    static func appendUnattested(_ v: RawKeyVault, _ payloads: [[UInt8]], label: String) throws {
        let f = try v.open(writable: true)
        try f.commit(random: SeededRandom(label: label), options: fast, attestWith: nil) { (tx: PendingCommit) throws(FormatError) in
            for p in payloads { try tx.appendSealed(kind: .entryRevision, payload: p, compress: false) }
        }
    }

    /// The bytes of `v`'s file before group `first`, and each group from
    /// `first` on (its frames and its commit frame).
    static func split(_ v: RawKeyVault, from first: Int) throws -> (prefix: [UInt8], groups: [[UInt8]]) {
        let bytes = try fileBytes(v.path)
        let s = try v.open().structure
        var cut = Int(s.frames[s.groups[first - 1].commitFrame].end)
        let prefix = Array(bytes[0..<cut])
        var groups: [[UInt8]] = []
        for g in s.groups[first...] {
            let end = Int(s.frames[g.commitFrame].end)
            groups.append(Array(bytes[cut..<end]))
            cut = end
        }
        return (prefix, groups)
    }

    /// Fifth review F3: a current member's group X inserted after the first
    /// commit, and the genuine line G (attested) then U (unattested,
    /// extending G). Before, the walk went in file order with waits, so
    /// whichever member line came second in the file was the member's fork
    /// and the chain's tip: a keyless writer moving whole groups chose the
    /// line writers extend (X after U: X), and placing X between G and U
    /// orphaned U. Now the walk is depth first with siblings by stored
    /// head: every arrangement gives the same verdicts and the same tip.
    @Test func attackKeylessMoveOfWholeGroupsChoosesTheMemberLine() throws {
        let v = RawKeyVault(label: "moved member lines")
        try v.create([[0]])
        try ChainAttackTests.append(v, [[1]], label: "genuine")
        try Self.appendUnattested(v, [[2]], label: "unattested after genuine")
        try ChainAttackTests.insertGroup(v, after: 0, payloads: [[9]], attestedBy: v.member, label: "member insert")
        let (prefix, groups) = try Self.split(v, from: 1)  // X, G, U
        #expect(groups.count == 3)
        var outcomes: [(tip: [UInt8], verdicts: [[UInt8]: String])] = []
        for order in [[0, 1, 2], [1, 2, 0], [1, 0, 2], [2, 1, 0]] {
            try Data(prefix + order.flatMap { groups[$0] }).write(to: URL(fileURLWithPath: v.path))
            let vault = try v.open()
            var verdicts: [[UInt8]: String] = [:]
            for (g, group) in vault.structure.groups.enumerated() {
                verdicts[group.storedHead] = "\(vault.commits.statuses[g]) fork=\(vault.commits.forks.contains(g)) attested=\(vault.commits.isAttested(g))"
            }
            #expect(!vault.commits.statuses.contains(.orphaned), "order \(order): \(vault.commits.statuses)")
            outcomes.append((vault.chainTipHead, verdicts))
        }
        for o in outcomes.dropFirst() {
            #expect(o.tip == outcomes[0].tip)
            #expect(o.verdicts == outcomes[0].verdicts)
        }
    }

    /// Fifth review F4: a keyless writer cuts a whole group out of the
    /// middle. The next commit names a head no commit stores. Before, it was
    /// tampered and its records unverified, although its group is intact
    /// and a current member's signature vouches for it; now it is tampered
    /// at vault level (reported, writes refused) but verified and attested,
    /// and the unattested commit after it extends it, verified.
    @Test func attackKeylessDeletionKeepsTheNextMembersCommitAttested() throws {
        let v = RawKeyVault(label: "deletion before a member's commit")
        try v.create([[0]])
        try ChainAttackTests.append(v, [[1]], label: "cut out")
        try ChainAttackTests.append(v, [[2]], label: "attested after the cut")
        try Self.appendUnattested(v, [[3]], label: "unattested after")
        let (prefix, groups) = try Self.split(v, from: 1)
        try Data(prefix + groups[1...].joined()).write(to: URL(fileURLWithPath: v.path))
        let vault = try v.open()
        #expect(vault.commits.statuses == [.verified, .verified, .verified])
        #expect(vault.tamperedCommits == [1])
        #expect(vault.commitIssues.map(\.code) == ["commit_tampered"])
        let released = releasedRecords(vault)
        #expect(released.map(\.payload) == [[0], [2], [3]])
        #expect(released.map(\.commitVerified) == [true, true, true])
        #expect(released.map { $0.attestedBy != nil } == [true, true, false])
    }

    /// Sixth review R6-2, variant: a stolen device (a current member)
    /// inserts X, chained from the first commit and attested by itself
    /// under a newer epoch, then deletes the genuine second commit. The
    /// third names a missing head, and the walk visits it after X: before,
    /// its line was taken through X (epoch 2), so it was stale and nothing
    /// in it released. Now a commit a current member attested is never
    /// stale through `e`: it is tampered, yet verified and attested.
    @Test func attackMemberInsertAndOneDeletionStalesHistory() throws {
        let v = RawKeyVault(label: "member insert and one deletion")
        try v.create([[0]])
        for i in 1...2 { try ChainAttackTests.append(v, [[UInt8(i)]], label: "commit \(i)") }
        let (both, original, inserted, cut) = try ChainAttackTests.newerEpochGroup(v, payload: [9])
        let s = try v.open().structure
        let second = Int(s.frames[s.groups[1].commitFrame].end)
        try Data(Array(original[0..<cut]) + inserted + Array(original[second...])).write(to: URL(fileURLWithPath: v.path))
        let vault = try v.open(keys: both)
        #expect(vault.commits.statuses == [.verified, .verified, .verified])
        #expect(vault.tamperedCommits == [2])
        #expect(vault.commitIssues.map(\.code) == ["commit_tampered"])
        let released = releasedRecords(vault)
        #expect(released.map(\.payload) == [[0], [9], [2]])
        #expect(released.map(\.commitVerified) == [true, true, true])
        #expect(released.map { $0.attestedBy != nil } == [true, true, true])
    }

    /// Sixth review, Part 2 item 4 (what the first R6-2 rule left): the
    /// same insertion and deletion, but the commit after the deleted one is
    /// unattested (a compaction's commit 2, a merge's unattested block). No
    /// current member vouches for it, so its line is taken through `e` (X,
    /// epoch 2) and it is stale. Before, the member-attested epoch-1 commit
    /// that extends it took its line from it and was stale too, nothing in
    /// it released. Now a commit a current member attested is judged by its
    /// linked line (nothing through `e`): it is a member's fork, verified
    /// and attested, its record released.
    @Test func attackMembersCommitAfterAnUnattestedLinklessCommitIsReleased() throws {
        let v = RawKeyVault(label: "member insert, deletion, unattested next")
        try v.create([[0]])
        try ChainAttackTests.append(v, [[1]], label: "commit 1")
        try Self.appendUnattested(v, [[2]], label: "unattested 2")
        try ChainAttackTests.append(v, [[3]], label: "commit 3")
        let (both, original, inserted, cut) = try ChainAttackTests.newerEpochGroup(v, payload: [9])
        let s = try v.open().structure
        let second = Int(s.frames[s.groups[1].commitFrame].end)
        try Data(Array(original[0..<cut]) + inserted + Array(original[second...])).write(to: URL(fileURLWithPath: v.path))
        let vault = try v.open(keys: both)
        #expect(vault.commits.statuses == [.verified, .verified, .stale(epoch: 1, current: 2), .verified])
        #expect(vault.commits.forks == [3])
        #expect(vault.commits.isAttested(1) && vault.commits.isAttested(3))
        #expect(vault.commitIssues.map(\.code) == ["stale_epoch", "commit_fork"])
        let released = releasedRecords(vault)
        #expect(released.map(\.payload) == [[0], [9], [3]])
        #expect(released.map { $0.attestedBy != nil } == [true, true, true])
    }

    /// What the first R6-2 rule opened: a member's linkless commit's line
    /// started from its own contribution, so the commits extending it lost
    /// the line taken through `e`. C0 … C3 attested, C4 attested under
    /// epoch 2 (the rotation's side); Z, unattested under epoch 1 and
    /// extending C2 (what a device removed by the rotation still makes),
    /// is appended. A keyless writer deletes C1 and C3 and places C4 first:
    /// C0 C4 C2 Z. C4 and C2 join over their deletions (verified, attested),
    /// C2 not stale although its line through `e` (C4) is 2. Before, Z took
    /// C2's restarted line (1) and joined the chain verified, its record
    /// released as verified after the rotation. Now the line after a
    /// member's commit keeps what came through `e`: Z is stale.
    @Test func attackOldEpochCommitExtendingAMembersLinklessCommitIsStale() throws {
        let v = RawKeyVault(label: "old epoch after a member's linkless commit")
        try v.create([[0]])
        for i in 1...3 { try ChainAttackTests.append(v, [[UInt8(i)]], label: "commit \(i)") }
        var both = v.keys
        let newer = EpochKey(epoch: 2, key: try SymmetricKey(using: SeededRandom(label: "epoch 2")), blobKey: nil)
        both.add(newer)
        both.writeKey = newer
        let c4 = try Self.group(v, after: 3, keys: both, attestWith: v.member, payload: [4], label: "epoch 2")
        let z = try Self.group(v, after: 2, keys: v.keys, attestWith: nil, payload: [7], label: "old epoch")
        let (prefix, groups) = try Self.split(v, from: 1)  // C1, C2, C3
        try Data(prefix + c4 + groups[1] + z).write(to: URL(fileURLWithPath: v.path))
        let vault = try v.open(keys: both)
        #expect(vault.commits.statuses == [.verified, .verified, .verified, .stale(epoch: 1, current: 2)])
        #expect(vault.tamperedCommits == [1, 2])
        #expect(releasedRecords(vault).map(\.payload) == [[0], [4], [2]])
    }

    /// The group holding `payload` that a writer with `keys` (attesting
    /// with `signer`, or unattested) commits after group `g` of `v`: its
    /// bytes, frames and commit frame, to splice into `v`'s file.
    static func group(_ v: RawKeyVault, after g: Int, keys: KeySet, attestWith signer: Ed25519.KeyPair?, payload: [UInt8], label: String) throws -> [UInt8] {
        let s = try v.open().structure
        let cut = Int(s.frames[s.groups[g].commitFrame].end)
        let scratch = v.dir.file("scratch-\(label).quire")
        try Data(try fileBytes(v.path)[0..<cut]).write(to: URL(fileURLWithPath: scratch))
        let prefix = try VaultFile(path: scratch, writable: true)
        prefix.verifyCommits(keys: keys, trustedKeyrings: [:], attestors: [v.member.publicKey])
        try prefix.commit(random: SeededRandom(label: label), options: fast, attestWith: signer) { (tx: PendingCommit) throws(FormatError) in
            try tx.appendSealed(kind: .entryRevision, payload: payload, compress: false)
        }
        return Array(try fileBytes(scratch)[cut...])
    }

    /// The same deletion before an unattested commit: nothing vouches for
    /// its group, so it stays tampered with its records unverified.
    @Test func deletionBeforeAnUnattestedCommitStaysUnverified() throws {
        let v = RawKeyVault(label: "deletion before an unattested commit")
        try v.create([[0]])
        try ChainAttackTests.append(v, [[1]], label: "cut out")
        try Self.appendUnattested(v, [[2]], label: "unattested after the cut")
        let (prefix, groups) = try Self.split(v, from: 1)
        try Data(prefix + groups[1]).write(to: URL(fileURLWithPath: v.path))
        let vault = try v.open()
        #expect(vault.commits.statuses == [.verified, .tampered])
        #expect(vault.tamperedCommits == [1])
        #expect(releasedRecords(vault).map(\.commitVerified) == [true, false])
    }
}
