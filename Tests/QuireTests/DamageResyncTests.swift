import Foundation
import Testing
@_spi(Format) @_spi(Crypto) import Quire
@_spi(Crypto) import QuireCrypto
@_spi(Format) import QuireFormat
@_spi(Format) import QuireKeys

/// Multi-bit damage to a frame header cannot be repaired: the reader skips to
/// the next checked header that is confirmed by the one after it (or EOF).
@Suite struct DamageResyncTests {
    struct Fixture {
        let dir = TemporaryDirectory()
        let path: String
        let recovery: RecoveryKey
        let bytes: [UInt8]
        let layout: DmgLayout
        let texts = (0..<10).map { "Day \($0): " + ["tea", "чай", "茶", "☕️"][$0 % 4] }

        init() throws {
            let (vault, recovery) = try makeVault(dir, seed: "resync")
            self.recovery = recovery
            path = dir.file("v.quire")
            for (i, t) in texts.enumerated() { try vault.add(dmgBody(t, created: 1_700_000_100_000 + Int64(i))) }
            layout = DmgLayout(vault)
            bytes = dmgRead(path)
        }

        /// The entry frame and commit frame of single-entry commit `n` (0-based, after genesis).
        func commit(_ n: Int) -> (entry: DmgLayout.Frame, commit: DmgLayout.Frame) {
            let frames = layout.frames.filter { $0.group == n + 1 }
            precondition(frames.map(\.kind) == [.entryRevision, .commit])
            return (frames[0], frames[1])
        }

        /// Writes a copy with the 5 bytes at `offset + 3 ..< offset + 8` (epoch
        /// high byte and the whole length field) XORed with 0xA5.
        func damagingLengthField(at offset: UInt64, name: String) -> String {
            var damaged = bytes
            for i in Int(offset) + 3..<Int(offset) + 8 { damaged[i] ^= 0xA5 }
            let p = dir.file(name)
            dmgWrite(p, damaged)
            return p
        }
    }

    @Test func fixtureLayoutIsAsDesigned() throws {
        let f = try Fixture()
        #expect(f.layout.groups.count == 11)
        #expect(f.layout.frames.count == 4 + 20)  // keyring, profile, keyring copy, commit; then 10 × (entry, commit)
        let vault = try dmgOpen(f.path, f.recovery)
        #expect(try dmgTexts(vault) == f.texts)
        #expect(dmgIssues(vault) == [])
    }

    @Test func damagedEntryHeaderLosesOnlyThatEntry() throws {
        let f = try Fixture()
        let (entry, commit) = f.commit(4)
        let (_, before) = f.commit(3)
        let path = f.damagingLengthField(at: entry.offset, name: "entry.quire")
        let vault = try dmgOpen(path, f.recovery)
        var expectedTexts = f.texts
        expectedTexts.remove(at: 4)
        #expect(try dmgTexts(vault) == expectedTexts)
        let report = vault.verify()
        // The damaged frame is skipped, so the commit after it is found one index earlier.
        // The next commit links to the damaged one by its stored head, and
        // nothing shows what that one chained from: the reader passes by only
        // commits after the last one a member attested, and the commit
        // before it is attested, so it stays verified (Spec/format.md §9.3).
        _ = before
        #expect(report.issues.map(DmgIssue.init) == [
            DmgIssue("frame_damaged", offset: entry.offset, frame: nil, damage: true),
            DmgIssue("commit_mismatch", offset: commit.offset, frame: commit.index - 1, damage: true),
        ])
        #expect(report.issues.first { $0.code == "frame_damaged" }?.message
            == "\(entry.end - entry.offset) damaged bytes at offset \(entry.offset) could not be read as records and were skipped")
        #expect(report.frameCount == f.layout.frames.count - 1)
        #expect(report.commitCount == 11)
        #expect(vault.file.structure.damagedRegions.map { [$0.offset, $0.byteCount] } == [[entry.offset, entry.end - entry.offset]])
        #expect(vault.file.commits.statuses.enumerated().filter { $0.element != .verified }.map(\.offset) == [5])

        // The chain continues after the damaged commit: appending works and
        // the new entry verifies.
        try vault.add(dmgBody("After the damage", created: 1_700_000_900_000))
        let reopened = try dmgOpen(path, f.recovery)
        #expect(try dmgTexts(reopened) == expectedTexts + ["After the damage"])
        #expect(dmgIssues(reopened) == report.issues.map(DmgIssue.init))
    }

    @Test func damagedCommitHeaderMergesTwoCommitsAndLosesNothing() throws {
        let f = try Fixture()
        let (_, lostCommit) = f.commit(4)
        let (_, nextCommit) = f.commit(5)
        let (_, before) = f.commit(3)
        let path = f.damagingLengthField(at: lostCommit.offset, name: "commit.quire")
        let vault = try dmgOpen(path, f.recovery)
        // The entry of the lost commit now belongs to the next commit, whose MAC
        // fails; a mismatching commit still releases AEAD-valid records of the
        // current epoch.
        #expect(try dmgTexts(vault) == f.texts)
        // The next commit links to the damaged one by its stored head, and
        // nothing shows what that one chained from: the commit before it,
        // attested by a member, stays verified (Spec/format.md §9.3).
        _ = before
        #expect(dmgIssues(vault) == [
            DmgIssue("frame_damaged", offset: lostCommit.offset, frame: nil, damage: true),
            DmgIssue("commit_mismatch", offset: nextCommit.offset, frame: nextCommit.index - 1, damage: true),
        ])
        #expect(vault.verify().commitCount == 10)
    }

    /// Damage in the last commit's own header cannot be confirmed by anything
    /// after it, but the commit's MAC can: commit recovery (§10.3) rebuilds
    /// the header, the MAC verifies, and nothing is lost.
    @Test func damagedLastCommitHeaderIsRecovered() throws {
        let f = try Fixture()
        let (_, commit) = f.commit(9)
        let path = f.damagingLengthField(at: commit.offset, name: "last.quire")
        let vault = try dmgOpen(path, f.recovery)
        #expect(try dmgTexts(vault) == f.texts)
        #expect(dmgIssues(vault) == [DmgIssue("frame_repaired", offset: commit.offset, frame: commit.index, damage: false)])
    }
}
