import Foundation
import Quire  // alone: what an app sees
import Testing

/// iOS review 29: an app shows a photo where the entry's text links to it.
/// With `AttachmentReference.id` behind SPI (review 27 B6), the link and its
/// resolution must be public.
@Suite struct AppAttachmentLinkTests {
    @Test func anEntrysTextLinksToItsPhotoAndTheLinkResolves() async throws {
        let dir = TemporaryDirectory()
        let (vault, _) = try await AppErrorTypeTests.vault(dir)
        let jpeg: [UInt8] = [0xFF, 0xD8, 0xFF] + Array(repeating: 0x42, count: 1000)
        let written = try await vault.commit { tx in
            let photo = try tx.storeAttachment(jpeg, mediaType: "image/jpeg")
            let reference = AttachmentReference(photo, mediaType: "image/jpeg", fileName: "beach.jpg")
            return try tx.add(
                EntryBody(created: AppErrorTypeTests.date, text: "At the beach.\n\n![](\(reference.link))", attachments: [reference]))
        }
        let entry = try #require(try await vault.entry(written.entryID))
        let reference = try #require(entry.body.attachments.first)
        #expect(reference.link.hasPrefix("quire-attachment://"))
        #expect(reference.link.count == "quire-attachment://".count + 32)
        // The link as the text holds it resolves to the reference, in either case.
        let inText = try #require(entry.body.text.split(separator: "(").last?.dropLast())
        #expect(entry.body.attachment(forLink: String(inText)) == reference)
        #expect(entry.body.attachment(forLink: String(inText).uppercased().replacingOccurrences(of: "QUIRE-ATTACHMENT", with: "quire-attachment")) == reference)
        #expect(entry.body.attachment(forLink: "quire-attachment://00") == nil)
        #expect(entry.body.attachment(forLink: "https://example.com/beach.jpg") == nil)
        #expect(try await AppAttachmentFileTests.bytes(of: reference.blob, in: vault) == jpeg)
    }
}
