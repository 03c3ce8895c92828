import Foundation
@_spi(Format) import Quire
@_spi(Crypto) import QuireCrypto
@_spi(Format) import QuireFormat
@_spi(Format) import QuireKeys
import QuireSystem
import Testing

/// An entry whose current version names an attachment the vault does not
/// hold, as an older version of Quire or another implementation could
/// write it (`Spec/records.md §4`): `verify` reports it. Before, the photo
/// never read (`blob_not_found`) and `verify` found nothing.
@Suite struct DanglingAttachmentTests {
    @Test func verifyReportsAnEntryNamingAMissingAttachment() throws {
        let dir = TemporaryDirectory()
        let (vault, laptop) = try RecordAttackTests.laptopVault(dir, "dangling")
        let path = dir.file("j.quire")
        let kept = try vault.add(EntryBody(created: RecordAttackTests.t0 + 1, text: "no photo"))
        #expect(vault.verify().issues.isEmpty)
        // Written by hand, as a writer that does not check its references.
        let missing = BlobID(unchecked: SeededRandom(label: "dangling blob").bytes(32))
        let revision = EntryRevision(
            entryID: kept.entryID, revisionID: RevisionID(using: SeededRandom(label: "dangling revision")), parents: [kept.revisionID],
            clock: HybridLogicalClock(milliseconds: UInt64(RecordAttackTests.t0 + 2), counter: 0), device: kept.device,
            body: EntryBody(
                created: RecordAttackTests.t0 + 1, text: "a photo",
                attachments: [AttachmentReference(id: [1], blob: missing, mediaType: "image/jpeg")]))
        let f = try RecordAttackTests.rawFile(path, .device(laptop.keyPair))
        try f.commit(random: SeededRandom(label: "dangling commit"), options: fast, attestWith: nil) {
            (tx: PendingCommit) throws(FormatError) in
            try tx.appendSealed(kind: .entryRevision, payload: revision.encoded())
        }
        let reader = try Vault.open(at: path, credential: .device(laptop.keyPair), options: fast)
        // Unattested, it does not retire the laptop's revision: a version beside it.
        #expect(try reader.entry(kept.entryID)?.conflictingHeads == [revision.revisionID])
        #expect(throws: QuireError.self) { try reader.attachment(missing) }
        let report = reader.verify()
        let dangling = report.issues.filter { $0.code == "blob_not_found" }
        #expect(dangling.count == 1)
        let frame = try #require(reader.file.structure.frames.lastIndex { $0.header.kind == .entryRevision })
        #expect(dangling.first?.frameIndex == frame)
        #expect(dangling.first?.isDamage == false)
        // An edit of the rest of the entry keeps the reference its version
        // held; a new reference to content not in the vault is refused.
        var body = revision.body
        body.text = "a photo, lost"
        try reader.commit { tx in try tx.edit(kept.entryID, body: body, replacing: [kept.revisionID, revision.revisionID]) }
        let edited = try #require(try reader.entry(kept.entryID))
        #expect(edited.body.text == "a photo, lost" && edited.conflictingHeads.isEmpty)
        body.attachments.append(
            AttachmentReference(id: [2], blob: BlobID(unchecked: Array(repeating: 9, count: 32)), mediaType: "image/jpeg"))
        #expect(throws: QuireError(.attachmentNotStored(BlobID(unchecked: Array(repeating: 9, count: 32))))) {
            try reader.commit { tx in try tx.edit(kept.entryID, body: body, replacing: [edited.revision.revisionID]) }
        }
        #expect(try reader.entry(kept.entryID) == edited)
    }
}
