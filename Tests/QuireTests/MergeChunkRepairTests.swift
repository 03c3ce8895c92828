import Foundation
import QuireVectors
import Testing

/// Tenth review, R10-1: a chunk rewritten in place by a holder of its epoch
/// key keeps its tag, so its commit still verifies; merging an intact copy
/// must repair the attachment, not carry both versions (`Spec/merge.md §3.2`).
/// Eleventh review, R11-1: the repair chooses only between versions of one
/// standing, so a non-member reusing a member's public stream id can neither
/// evict the member's chunks nor move the member's revision into its
/// unattested commit.
@Suite struct MergeChunkRepairTests {
    static func lines(_ vector: MergeVectors.Vector) -> [String] {
        vector.expect.split(separator: "\n").map(String.init)
    }

    @Test func mergingAnIntactCopyRepairsAChunkRewrittenKeepingItsTag() throws {
        // Before the rule, the merged result held both versions of chunk 0
        // (chunk_duplicate) and building the vector threw reading the attachment.
        let vector = try MergeVectors.chunkRewrittenKeepingItsTag()
        let lines = Self.lines(vector)
        #expect(lines.contains("changed: yes"))
        #expect(lines.contains("unattested-commits: 0"))
        let attachments = lines.filter { $0.hasPrefix("attachment: ") }
        #expect(attachments.count == 1)
        #expect(attachments.first?.contains("size=70000") == true)
        // The copy's bytes are the intact file: the result is them.
        #expect(vector.merged == vector.b)
        #expect(vector.a != vector.b && vector.a.count == vector.b.count)
    }

    @Test func aChunkRewrittenInTheCopyIsLeftOut() throws {
        // The other direction: the vault is intact, the copy forged. Before
        // the rule the result held both versions (chunk_duplicate).
        let vector = try MergeVectors.chunkRewrittenKeepingItsTag(forgedInTheCopy: true)
        let lines = Self.lines(vector)
        #expect(lines.contains("changed: no"))
        #expect(vector.merged == vector.a)
        #expect(lines.filter { $0.hasPrefix("attachment: ") && $0.contains("size=70000") }.count == 1)
    }

    @Test(arguments: [true, false])
    func anUnattestedStreamUnderAMembersStreamIDDoesNotEvictItsChunks(attackerIsTheVault: Bool) throws {
        // With the withdrawn rule (f950265) and the attacker's fork as the
        // vault, the laptop's attested chunks were left out and building the
        // vector threw reading the laptop's attachment (blob_id_mismatch).
        let vector = try MergeVectors.streamIDReused(attackerIsTheVault: attackerIsTheVault)
        let lines = Self.lines(vector)
        #expect(lines.contains("changed: yes"))
        let attachments = lines.filter { $0.hasPrefix("attachment: ") }
        #expect(attachments.count == 1)
        #expect(attachments.first?.contains("size=70000") == true)
        #expect(lines.contains { $0.hasPrefix("entry: ") && $0.contains("text=\"the laptop's photo\"") })
        // The attacker's commit stays unattested; the laptop's keeps its attestation.
        #expect(lines.contains("unattested-commits: 1"))
    }

    @Test func aMembersRevisionCopiedIntoAnUnattestedCommitStaysAttested() throws {
        // With the withdrawn rule the laptop's revision was written from the
        // attacker's unattested group, the attacker's revision retired it, and
        // the entry showed "the attacker's text, written by a non-member".
        let vector = try MergeVectors.streamIDReused(attackerIsTheVault: true, demote: true)
        let lines = Self.lines(vector)
        let entry = lines.filter { $0.hasPrefix("entry: ") && !$0.contains("text=\"entry 1\"") }
        #expect(entry.count == 1)
        #expect(entry.first?.contains("text=\"the laptop's photo\"") == true)
        #expect(entry.first?.contains("heads=2") == true)
        #expect(lines.filter { $0.hasPrefix("attachment: ") && $0.contains("size=70000") }.count == 1)
        #expect(lines.contains("unattested-commits: 1"))
    }
}
