import Foundation
import Quire  // alone: what an app sees
import Testing

/// iOS review 29 §1 and §2 item 6: an app stores a photo from the file URL
/// a picker gave it. Written against `import Quire` alone, in Swift 6
/// mode: the commit closure captures only the URL.
@Suite struct AppAttachmentFileTests {
    /// `count` bytes that differ from chunk to chunk.
    static func content(_ count: Int) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 16) }
    }

    /// Stores `content` from a file in `dir` and returns its blob.
    static func stored(_ content: [UInt8], in dir: TemporaryDirectory, vault: Vault) async throws -> BlobID {
        let url = URL(fileURLWithPath: dir.file("picked.jpg"))
        try Data(content).write(to: url)
        return try await vault.commit { tx in
            let photo = try tx.storeAttachment(contentsOf: url, mediaType: "image/jpeg")
            let reference = AttachmentReference(photo, mediaType: "image/jpeg", fileName: "picked.jpg")
            try tx.add(EntryBody(created: AppErrorTypeTests.date, text: "A photo.", attachments: [reference]))
            return photo.blob
        }
    }

    @Test func aPhotoIsStoredFromTheFileURLAPickerGave() async throws {
        let dir = TemporaryDirectory()
        let (vault, _) = try await AppErrorTypeTests.vault(dir)
        let content = Self.content(200_000)
        let blob = try await Self.stored(content, in: dir, vault: vault)
        #expect(try await vault.attachment(blob).byteCount == 200_000)
        #expect(try await vault.attachmentBytes(blob) == content)
    }

    @Test func aURLThatIsNoFileOrIsMissingThrowsAndStoresNothing() async throws {
        let dir = TemporaryDirectory()
        let (vault, _) = try await AppErrorTypeTests.vault(dir)
        let web = URL(string: "https://example.com/photo.jpg")!
        do {
            try await vault.commit { tx in try tx.storeAttachment(contentsOf: web, mediaType: "image/jpeg") }
            Issue.record("a web URL was stored")
        } catch {
            #expect(error.category == .programmerError)
            #expect(error.code == "not_a_file_url")
        }
        let missing = URL(fileURLWithPath: dir.file("gone.jpg"))
        do {
            try await vault.commit { tx in try tx.storeAttachment(contentsOf: missing, mediaType: "image/jpeg") }
            Issue.record("a missing file was stored")
        } catch {
            #expect(error.category == .unavailable)
            #expect(error.code == "io")
        }
        #expect(try await vault.entries(matching: EntryQuery()).entries.isEmpty)
    }
}
