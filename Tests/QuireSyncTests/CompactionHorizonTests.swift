import Foundation
@_spi(Format) import Quire
@_spi(Format) import QuireSync
import QuireSystem
import Testing

@Suite struct CompactionHorizonTests {
    /// Past the horizon a deleted entry keeps its tombstone, which retires
    /// the revisions it names even though they are gone: merging a copy from
    /// before the deletion leaves the entry deleted (Spec/merge.md §5, §6;
    /// tenth review R10-7). Before, the entry was dropped whole and the
    /// stale copy brought it back, live, with nothing reported.
    @Test func horizonKeepsTheTombstoneAgainstAStaleCopy() throws {
        let c = try TwoCopies("horizon stale copy")
        let v = try c.onLaptop(c.a)
        let gone = try v.add(EntryBody(created: t0 + 10, text: "to delete"))
        copy(c.a, c.dir.file("Journal.stale.quire"))
        try v.delete(gone.entryID)
        // A later record, so that the tombstone is not the record with the
        // greatest clock (which every compaction keeps).
        try v.add(EntryBody(created: t0 + 11, text: "later"))
        let report = try Compaction.compact(
            vaultAt: c.a, credential: .device(c.laptop.keyPair), options: CompactionOptions(tombstoneHorizonMilliseconds: 50),
            now: ProcessStats.wallClockMilliseconds() + 10_000, writeOptions: fast)
        // "shared", "later" and the tombstone (its parent is not kept).
        #expect(report.revisionsAfter == 3)
        let compacted = try c.onLaptop(c.a)
        #expect(try compacted.revisions(of: gone.entryID).map(\.isDeleted) == [true])
        _ = try VaultMerge.merge(vaultAt: c.a, copyAt: c.dir.file("Journal.stale.quire"), credential: .device(c.laptop.keyPair), options: fast)
        let merged = try c.onLaptop(c.a)
        #expect(try merged.entry(gone.entryID)?.isDeleted == true)
        #expect(try merged.entry(gone.entryID)?.conflictingHeads.isEmpty == true)
        #expect(try merged.entries().map(\.body.text).sorted() == ["later", "shared"])
        #expect(merged.verify().issues.isEmpty)
    }

    /// Any tombstone horizon and any `now` are valid options: `now − horizon`
    /// saturates instead of trapping (a huge horizon keeps every tombstone).
    @Test func extremeHorizonsDoNotTrap() throws {
        let c = try TwoCopies("extreme horizon")
        let v = try c.onLaptop(c.a)
        let gone = try v.add(EntryBody(created: t0 + 10, text: "to delete"))
        try v.delete(gone.entryID)
        _ = try Compaction.compact(vaultAt: c.a, credential: .device(c.laptop.keyPair),
                                   options: CompactionOptions(tombstoneHorizonMilliseconds: Int64.max), now: Int64.min, writeOptions: fast)
        #expect(try c.onLaptop(c.a).entry(gone.entryID)?.isDeleted == true)
        _ = try Compaction.compact(vaultAt: c.a, credential: .device(c.laptop.keyPair),
                                   options: CompactionOptions(tombstoneHorizonMilliseconds: Int64.min), now: Int64.max, writeOptions: fast)
        #expect(try c.onLaptop(c.a).entries().map(\.body.text) == ["shared"])
    }
}
