import Foundation
import Quire  // alone: what an app sees
import Testing

/// Third iOS trial, defect 2: an attachment reference to content that is
/// not in the vault. A `StoredBlob` from a commit that threw (abandoned,
/// so its chunks were never written), or from another vault, put in an
/// entry's attachments in a later commit: before, the entry saved, counted
/// in `hasPhotos`, and its photo never read (`blob_not_found`). Now the
/// commit throws `attachment_not_stored` and writes nothing.
@Suite struct AppAttachmentNotStoredTests {
    struct Abandoned: Error {}

    /// What the app kept from a commit's closure.
    final class Kept: @unchecked Sendable { var stored: StoredBlob? }

    static let photo: [UInt8] = (0..<5_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }

    /// Every entry of `vault` with a photo.
    static func withPhotos(_ vault: Vault) async throws -> [EntrySnapshot] {
        var query = EntryQuery()
        query.hasPhotos = true
        return try await vault.entries(matching: query).entries
    }

    /// Expects `write` to throw `attachment_not_stored`.
    static func expectRefused(_ write: () async throws -> Void) async {
        do {
            try await write()
            Issue.record("an entry naming an attachment the vault does not hold was saved")
        } catch let error as QuireError {
            #expect(error.code == "attachment_not_stored")
            #expect(error.category == .notFound)
            #expect(!error.message.isEmpty)
        } catch {
            Issue.record("not a QuireError: \(error)")
        }
    }

    @Test func aBlobOfAnAbandonedCommitIsRefused() async throws {
        let dir = TemporaryDirectory()
        let (vault, _) = try await AppErrorTypeTests.vault(dir)
        let kept = Kept()
        do {
            try await vault.commit { tx in
                kept.stored = try tx.storeAttachment(Self.photo, mediaType: "image/jpeg")
                throw Abandoned()
            }
            Issue.record("the commit did not throw")
        } catch {}
        let stored = try #require(kept.stored)
        await Self.expectRefused {
            try await vault.commit { tx in
                _ = try tx.add(
                    EntryBody(
                        created: AppErrorTypeTests.date, text: "A photo.",
                        attachments: [AttachmentReference(stored, mediaType: "image/jpeg")]))
            }
        }
        #expect(try await Self.withPhotos(vault).isEmpty)
        #expect(try await vault.entries(matching: EntryQuery()).entries.isEmpty)
        #expect(try await vault.verify().isIntact)

        // Stored again in the commit that names it, it saves and reads.
        let (saved, reference) = try await vault.commit { tx in
            let reference = AttachmentReference(try tx.storeAttachment(Self.photo, mediaType: "image/jpeg"), mediaType: "image/jpeg")
            return (try tx.add(EntryBody(created: AppErrorTypeTests.date, text: "A photo.", attachments: [reference])), reference)
        }
        #expect(try await Self.withPhotos(vault).map(\.id) == [saved.entryID])
        #expect(try await AppAttachmentFileTests.bytes(of: reference.blob, in: vault) == Self.photo)
    }

    @Test func aBlobOfAnotherVaultIsRefusedAndOneAlreadyHereIsNot() async throws {
        let dir = TemporaryDirectory()
        let (vault, _) = try await AppErrorTypeTests.vault(dir)
        let otherDir = TemporaryDirectory()
        let (other, _) = try await AppErrorTypeTests.vault(otherDir)
        let foreign = try await other.commit { tx in try tx.storeAttachment(Self.photo, mediaType: "image/jpeg") }
        let first = try await vault.commit { tx in try tx.add(EntryBody(created: AppErrorTypeTests.date, text: "no photo yet")) }
        await Self.expectRefused {
            try await vault.commit { tx in
                var body = EntryBody(created: AppErrorTypeTests.date, text: "a photo from elsewhere")
                body.attachments = [AttachmentReference(foreign, mediaType: "image/jpeg")]
                try tx.edit(first.entryID, body: body, replacing: [first.revisionID])
            }
        }
        #expect(try await vault.entry(first.entryID)?.body.text == "no photo yet")
        #expect(try await Self.withPhotos(vault).isEmpty)

        // A photo stored in an earlier commit of this vault may be named later.
        let here = try await vault.commit { tx in try tx.storeAttachment(Self.photo, mediaType: "image/jpeg") }
        try await vault.commit { tx in
            var body = EntryBody(created: AppErrorTypeTests.date, text: "a photo stored before")
            body.attachments = [AttachmentReference(here, mediaType: "image/jpeg")]
            try tx.edit(first.entryID, body: body, replacing: [first.revisionID])
        }
        #expect(try await Self.withPhotos(vault).map(\.id) == [first.entryID])
    }
}
