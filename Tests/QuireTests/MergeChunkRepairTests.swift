import Foundation
import Testing
import QuireVectors

/// Tenth review, R10-1: a chunk rewritten in place by a holder of its epoch
/// key keeps its tag, so its commit still verifies; merging an intact copy
/// must repair the attachment, not carry both versions (`Spec/merge.md §3.2`).
@Suite struct MergeChunkRepairTests {
    @Test func mergingAnIntactCopyRepairsAChunkRewrittenKeepingItsTag() throws {
        // Before the rule, the merged result held both versions of chunk 0
        // (chunk_duplicate) and building the vector threw reading the attachment.
        let vector = try MergeVectors.chunkRewrittenKeepingItsTag()
        let lines = vector.expect.split(separator: "\n").map(String.init)
        #expect(lines.contains("changed: yes"))
        #expect(lines.contains("unattested-commits: 0"))
        let attachments = lines.filter { $0.hasPrefix("attachment: ") }
        #expect(attachments.count == 1)
        #expect(attachments.first?.contains("size=70000") == true)
        // The copy's bytes are the intact file: the result is them.
        #expect(vector.merged == vector.b)
        #expect(vector.a != vector.b && vector.a.count == vector.b.count)
    }
}
