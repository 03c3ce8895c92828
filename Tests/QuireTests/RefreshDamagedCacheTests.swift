import Foundation
@_spi(Format) import Quire
@_spi(Format) import QuireFormat
@_spi(Format) import QuireKeys
import QuireSystem
import Testing

/// A refresh whose baseline is the cached view, when a row group of the
/// cache's summaries turns out damaged only then (the open checks the
/// newest group alone): the group's rows read as placeholders, and the
/// change set compared against them named the group's unchanged entries as
/// added (helper `s39-page`'s note). The baseline now comes from the vault
/// file's frames the view reflected, and the change set is the one an
/// undamaged cache gives.
@Suite struct RefreshDamagedCacheTests {
    typealias Fixture = IndexCacheOpenTests.Fixture

    /// The summary-group fixture (30 entries in groups of 4) with one bit
    /// of its second row group flipped on disk.
    static func damaged(_ label: String) throws -> Fixture {
        let (f, _, bytes) = try IndexCacheSummaryGroupTests.fixture(label)
        let key = try IndexCacheKey(device: f.device, vaultID: f.vaultID)
        let places = try #require(IndexCache.summaryGroupPlaces(bytes, key: key, vaultID: f.vaultID))
        var damaged = bytes
        damaged[places[1].lowerBound + 30] ^= 0x01
        try IndexCacheRowGroupTests.write(damaged, to: f)
        return f
    }

    /// Another handle appends an entry; the refresh reads it into the
    /// cached view, which looks the new id up in every row group and finds
    /// the damaged one. Only the new entry is in the change set.
    @Test func aRowGroupFailingWhileFollowingAppendsAddsNothingElse() throws {
        for damagedCache in [false, true] {
            let f: Fixture
            if damagedCache {
                f = try Self.damaged("refresh follow")
            } else {
                f = try IndexCacheSummaryGroupTests.fixture("refresh follow").0
            }
            let v = try f.cached()
            #expect(v.answersFromIndexCache)
            #expect(try v.refresh().isEmpty)
            let other = try Vault.open(at: f.path, credential: .device(f.device.keyPair), options: fast)
            let added = try other.add(EntryBody(created: IndexCacheOpenTests.t0 + 5_000_000_000, text: "Written elsewhere"))
            let changes = try v.refresh()
            #expect(changes.entries.map(\.id) == [added.entryID], "damaged: \(damagedCache)")
            #expect(changes.entries.first?.before == nil)
            #expect(changes.entries.first?.after?.winner == added.revisionID)
            #expect(try IndexCacheOpenTests.answers(v) == (try IndexCacheOpenTests.answers(try f.full())))
            #expect(try v.refresh().isEmpty)
        }
    }

    /// Another handle compacts the vault (a new file renamed over the
    /// path): the refresh reloads and compares every entry's state against
    /// the baseline it took from the view. Nothing changed, so the change
    /// set holds no entry.
    @Test func aRowGroupFailingWhenTheFileIsReplacedChangesNothing() throws {
        for damagedCache in [false, true] {
            let f: Fixture
            if damagedCache {
                f = try Self.damaged("refresh compact")
            } else {
                f = try IndexCacheSummaryGroupTests.fixture("refresh compact").0
            }
            let v = try f.cached()
            #expect(v.answersFromIndexCache)
            #expect(try v.refresh().isEmpty)
            let other = try Vault.open(at: f.path, credential: .device(f.device.keyPair), options: fast)
            _ = try other.compact(now: IndexCacheOpenTests.t0 + 6_000_000_000)
            let changes = try v.refresh()
            #expect(changes.fileReplaced)
            #expect(changes.entries.isEmpty, "damaged: \(damagedCache): \(changes.entries.count) entries")
            #expect(try IndexCacheOpenTests.answers(v) == (try IndexCacheOpenTests.answers(try f.full())))
        }
    }
}
