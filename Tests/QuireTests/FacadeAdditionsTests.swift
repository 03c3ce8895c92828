import Foundation
@_spi(Format) import Quire
import QuireSystem
import Testing

/// The small facade additions the command line needed: deleted entries,
/// an edit inside a commit, the conflicted copies a sync tool named, and
/// what the entries shown leave out.
@Suite struct FacadeAdditionsTests {
    @Test func deletedEntriesNewestDeletionFirst() throws {
        let dir = TemporaryDirectory()
        let (vault, _) = try makeVault(dir)
        let a = try vault.add(EntryBody(created: 1, text: "a"))
        let b = try vault.add(EntryBody(created: 2, text: "b"))
        _ = try vault.add(EntryBody(created: 3, text: "kept"))
        #expect(try vault.deletedEntries().isEmpty)
        try vault.delete(a.entryID)
        try vault.delete(b.entryID)
        let deleted = try vault.deletedEntries()
        #expect(deleted.map(\.id) == [b.entryID, a.entryID])
        #expect(deleted.map { $0.tombstone.isDeleted } == [true, true])
        // Its last version is still there to restore.
        #expect(deleted.map(\.body?.text) == ["b", "a"])
        try vault.restore(a.entryID, body: deleted[1].body!, replacing: [deleted[1].deletion])
        #expect(try vault.deletedEntries().map(\.id) == [b.entryID])
        #expect(try vault.entries().map(\.body.text) == ["a", "kept"])
    }

    /// An entry two devices changed apart, then deleted: its row shows the
    /// version the vault showed first before the deletion, and
    /// `restore(_:)` brings that back, replacing the tombstone.
    @Test func aDeletedConflictShowsAndRestoresTheWinningVersion() throws {
        let dir = TemporaryDirectory()
        let (vault, _) = try makeVault(dir)
        let first = try vault.add(EntryBody(created: 1, text: "first"))
        try vault.commit { tx in try tx.edit(first.entryID, body: EntryBody(created: 1, text: "phone"), replacing: [first.revisionID]) }
        try vault.commit { tx in try tx.edit(first.entryID, body: EntryBody(created: 1, text: "laptop"), replacing: [first.revisionID]) }
        let shown = try #require(try vault.entry(first.entryID))
        #expect(shown.conflictingHeads.count == 1)
        let tombstone = try vault.delete(first.entryID)
        #expect(Set(tombstone.parents) == Set([shown.revision.revisionID] + shown.conflictingHeads))
        let row = try #require(try vault.deletedEntries().first)
        #expect(row.body?.text == shown.body.text)
        #expect(row.deletion == tombstone.revisionID)
        var restored: EntryRevision?
        try vault.commit { tx in restored = try tx.restore(first.entryID) }
        #expect(restored?.parents == [tombstone.revisionID])
        let now = try #require(try vault.entry(first.entryID))
        #expect(!now.isDeleted && now.conflictingHeads.isEmpty && now.body.text == shown.body.text)
        // On an entry that is not deleted it writes nothing.
        let count = try vault.revisions(of: first.entryID).count
        var again: EntryRevision?
        try vault.commit { tx in again = try tx.restore(first.entryID) }
        #expect(again == now.revision)
        #expect(try vault.revisions(of: first.entryID).count == count)
    }

    @Test func anEditInsideACommitWithItsAttachment() throws {
        let dir = TemporaryDirectory()
        let (vault, _) = try makeVault(dir)
        let first = try vault.add(EntryBody(created: 1, text: "no photo yet"))
        try Data([1, 2, 3]).write(to: URL(fileURLWithPath: dir.file("p.jpg")))
        try vault.commit { tx in
            let photo = try tx.storeAttachment(fromFile: dir.file("p.jpg"), mediaType: "image/jpeg")
            var body = EntryBody(created: 1, text: "with a photo")
            body.attachments = [AttachmentReference(id: [7], blob: photo.blob, mediaType: "image/jpeg")]
            let r = try tx.edit(first.entryID, body: body, replacing: [first.revisionID])
            #expect(r.parents == [first.revisionID])
        }
        let e = try #require(try vault.entry(first.entryID))
        #expect(e.body.attachments.count == 1)
        #expect(try vault.attachment(e.body.attachments[0].blob).byteCount == 3)
    }

    /// Issue 13: the caller no longer invents an attachment reference's id.
    /// Two references to the same stored content get distinct 16-byte ids,
    /// and both resolve to the content.
    @Test func theLibraryMakesAttachmentReferenceIDs() throws {
        let dir = TemporaryDirectory()
        let (vault, _) = try makeVault(dir)
        var added: EntryID?
        try vault.commit { tx in
            let photo = try tx.storeAttachment(from: MemoryByteSource([9, 8, 7]), mediaType: "image/png")
            let again = try tx.storeAttachment(from: MemoryByteSource([9, 8, 7]), mediaType: "image/png")
            let refs = [
                AttachmentReference(photo, mediaType: "image/png", fileName: "a.png"), AttachmentReference(again, mediaType: "image/png"),
            ]
            added = try tx.add(EntryBody(created: 1, text: "two", attachments: refs)).entryID
        }
        let entryID = try #require(added)
        let refs = try #require(try vault.entry(entryID)).body.attachments
        #expect(refs.map(\.id.count) == [16, 16])
        #expect(refs[0].id != refs[1].id)
        #expect(refs.map(\.fileName) == ["a.png", ""])
        #expect(try refs.map { try vault.openAttachment($0.blob).readAll() } == [[9, 8, 7], [9, 8, 7]])
    }

    @Test func waitingCopiesAreTheSyncNamedCopiesOfThisVault() throws {
        let dir = TemporaryDirectory()
        let (vault, _) = try makeVault(dir)
        #expect(vault.waitingConflictCopies().isEmpty)
        let copy = dir.file("v.sync-conflict-20261201-101530-ABCDEF1.quire")
        try FileManager.default.copyItem(atPath: dir.file("v.quire"), toPath: copy)
        // A backup without a conflict name, and a conflict name over another vault, are not mentioned.
        try FileManager.default.copyItem(atPath: dir.file("v.quire"), toPath: dir.file("backup.quire"))
        _ = try makeVault(dir, name: "other.quire", seed: "other")
        try FileManager.default.copyItem(atPath: dir.file("other.quire"), toPath: dir.file("v.sync-conflict-20261201-101531-XYZ.quire"))
        #expect(vault.waitingConflictCopies() == [copy])
    }

    @Test func aFreshVaultLeavesNothingOut() throws {
        let dir = TemporaryDirectory()
        let (vault, _) = try makeVault(dir)
        _ = try vault.add(EntryBody(created: 1, text: "x"))
        let unread = try vault.unreadRecords()
        #expect(unread.newerEpoch == nil)
        #expect(unread.hiddenEntryRevisions == 0)
        #expect(unread.damaged.isEmpty)
        #expect(unread.isEmpty)
        #expect(!vault.verify().issues.contains { vault.isUnreadableWithThisKey($0) })
    }
}
