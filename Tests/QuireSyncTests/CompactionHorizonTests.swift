import Foundation
@_spi(Format) import Quire
@_spi(Format) import QuireSync
import Testing

@Suite struct CompactionHorizonTests {
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
