import Foundation
@_spi(Format) import Quire
@_spi(Format) import QuireFormat
import Testing

/// Nothing is dropped silently (issue 15, item 2): a record the entries leave
/// out is counted, with where it is, by the library itself.
@Suite struct UnreadRecordTests {
    /// Three entries, one commit each; returns the vault's path, its recovery key
    /// and the frame layout (offset of each entry revision frame, of each commit).
    static func threeEntries(_ dir: TemporaryDirectory) throws -> (String, RecoveryKey, [ScannedFrame]) {
        let (vault, recovery) = try makeVault(dir)
        for i in 1...3 { try vault.add(dmgBody("entry \(i)", created: 1_700_000_000_000 + Int64(i))) }
        let frames = vault.file.structure.frames.filter { $0.header.kind == .entryRevision }
        return (dir.file("v.quire"), recovery, frames)
    }

    @Test func aDamagedEntryIsCountedWithItsPlace() throws {
        let dir = TemporaryDirectory()
        let (path, recovery, revisions) = try Self.threeEntries(dir)
        var bytes = dmgRead(path)
        let victim = revisions[2]
        bytes[Int(victim.bodyOffset) + 40] ^= 0x01
        dmgWrite(path, bytes)
        let vault = try dmgOpen(path, recovery, writable: false)
        #expect(try dmgTexts(vault) == ["entry 1", "entry 2"])
        let unread = try vault.unreadRecords()
        #expect(unread.count == 1)
        #expect(unread.records.map(\.code) == ["authentication_failed"])
        #expect(unread.records.first?.offset == victim.location.offset)
        #expect(unread.records.first?.frameIndex == victim.location.index)
        #expect(unread.notReadableWithThisKey == 0)
        // The body-free catalog an export uses counts the same.
        let catalog = try vault.entryCatalog { _ in true }
        #expect(catalog.count == 2)
        #expect(catalog.unreadRecords == unread)
    }

    @Test func aDeletedMiddleEntryIsCountedAtTheCommitThatNoLongerVerifies() throws {
        let dir = TemporaryDirectory()
        let (path, recovery, revisions) = try Self.threeEntries(dir)
        let bytes = dmgRead(path)
        let victim = revisions[1]
        // The revision frame alone is cut out; its (now empty) commit stays.
        dmgWrite(path, Array(bytes[..<Int(victim.location.offset)]) + Array(bytes[Int(victim.end)...]))
        let vault = try dmgOpen(path, recovery, writable: false)
        #expect(try dmgTexts(vault) == ["entry 1", "entry 3"])
        let unread = try vault.unreadRecords()
        // The next commit still links to its stored head, and nothing in its
        // group looks damaged: it was altered after, so tampered. Nothing
        // shows what it chained from, but the commit before it is attested
        // by a member, so the chain keeps it (Spec/format.md §9.3).
        #expect(unread.records.map(\.code) == ["commit_tampered"])
        // The tampered commit now starts where the revision was.
        #expect(unread.records.last?.offset == victim.location.offset)
        #expect(try vault.entryCatalog { _ in true }.unreadRecords == unread)
    }

    @Test func anIntactVaultHasNothingUnread() throws {
        let dir = TemporaryDirectory()
        let (path, recovery, _) = try Self.threeEntries(dir)
        let vault = try dmgOpen(path, recovery, writable: false)
        #expect(try vault.unreadRecords().isEmpty)
        #expect(try vault.entryCatalog { _ in true }.unreadRecords.isEmpty)
    }

    @Test func aDamagedRegionCountsOnce() throws {
        let dir = TemporaryDirectory()
        let (path, recovery, revisions) = try Self.threeEntries(dir)
        var bytes = dmgRead(path)
        // Destroy the middle revision's header beyond repair (two bits).
        let at = Int(revisions[1].location.offset)
        bytes[at + 4] ^= 0x11
        dmgWrite(path, bytes)
        let vault = try dmgOpen(path, recovery, writable: false)
        #expect(try dmgTexts(vault) == ["entry 1", "entry 3"])
        let unread = try vault.unreadRecords()
        #expect(unread.records.map(\.code).contains("frame_damaged"))
        #expect(unread.records.first { $0.code == "frame_damaged" }?.offset == revisions[1].location.offset)
    }
}
