import Foundation
import Quire  // alone: what an app sees
import Testing

/// iOS review 29 §1 and §2 item 6: an app stores a photo from the file URL
/// a picker gave it, and shows one without blocking and without holding the
/// whole file: as chunks of an async sequence, or decrypted to a file of
/// its choosing for AVPlayer or QuickLook. Written against `import Quire`
/// alone, in Swift 6 mode: the commit closure captures only the URL.
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
            return reference.blob
        }
    }

    /// The whole content of `blob`, as an app reads it: the chunks of
    /// ``Vault/attachmentStream(_:)`` put together.
    static func bytes(of blob: BlobID, in vault: Vault) async throws -> [UInt8] {
        var bytes: [UInt8] = []
        for try await chunk in vault.attachmentStream(blob) { bytes += chunk }
        return bytes
    }

    @Test func aPhotoIsStoredFromTheFileURLAPickerGave() async throws {
        let dir = TemporaryDirectory()
        let (vault, _) = try await AppErrorTypeTests.vault(dir)
        let content = Self.content(200_000)
        let blob = try await Self.stored(content, in: dir, vault: vault)
        #expect(try await Self.bytes(of: blob, in: vault) == content)
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

    @Test func anAttachmentStreamsInChunksOfAtMost64KiB() async throws {
        let dir = TemporaryDirectory()
        let (vault, _) = try await AppErrorTypeTests.vault(dir)
        let content = Self.content(300_001)
        let blob = try await Self.stored(content, in: dir, vault: vault)
        var sizes: [Int] = []
        var joined: [UInt8] = []
        do {
            for try await chunk in vault.attachmentStream(blob) {
                sizes.append(chunk.count)
                joined += chunk
            }
        } catch {
            Issue.record("\(error.category) \(error.code)")  // typed: a QuireError without a cast
        }
        #expect(joined == content)
        // Memory is bounded by a chunk: no element is larger than 64 KiB, so
        // 300,001 bytes come as at least five.
        #expect(sizes.allSatisfy { $0 > 0 && $0 <= 65_536 })
        #expect(sizes.count >= 5)
        #expect(sizes.reduce(0, +) == 300_001)
        // A sequence reads from the start each time it is iterated.
        var again = 0
        for try await chunk in vault.attachmentStream(blob) { again += chunk.count }
        #expect(again == 300_001)
    }

    @Test func anUnknownAttachmentThrowsNotFoundFromTheStream() async throws {
        let dir = TemporaryDirectory()
        let (vault, _) = try await AppErrorTypeTests.vault(dir)
        let otherDir = TemporaryDirectory()
        let (other, _) = try await AppErrorTypeTests.vault(otherDir)
        let foreign = try await Self.stored([1, 2, 3], in: otherDir, vault: other)
        do {
            for try await chunk in vault.attachmentStream(foreign) { Issue.record("read \(chunk.count) bytes of another vault") }
            Issue.record("read an attachment of another vault")
        } catch {
            #expect(error.category == .notFound)
            #expect(error.code == "blob_not_found")
        }
        // After it threw, the iterator ends.
        var iterator = vault.attachmentChunks(foreign).makeAsyncIterator()
        do {
            _ = try await iterator.next()
            Issue.record("read an attachment of another vault")
        } catch {
            #expect(error.code == "blob_not_found")
        }
        #expect(!iterator.isReading)
        #expect(try await iterator.next() == nil)
    }

    @Test func cancellingTheTaskStopsTheStreamAndReleasesTheReader() async throws {
        let dir = TemporaryDirectory()
        let (vault, _) = try await AppErrorTypeTests.vault(dir)
        let blob = try await Self.stored(Self.content(400_000), in: dir, vault: vault)
        let outcome = await Task { () -> (Int, QuireError?, Bool, Int?) in
            // The concrete iterator (package): it says whether its reader is open.
            var iterator = vault.attachmentChunks(blob).makeAsyncIterator()
            var first = 0
            var stop: QuireError?
            do throws(QuireError) {
                first = try await iterator.next()?.count ?? 0
                withUnsafeCurrentTask { $0?.cancel() }
                _ = try await iterator.next()
            } catch {
                stop = error
            }
            let released = !iterator.isReading
            let after = try? await iterator.next()
            return (first, stop, released, after?.count)
        }.value
        #expect(outcome.0 == 65_536)
        #expect(outcome.1?.category == .cancelled)
        #expect(outcome.2, "the reader and its buffers are released")
        #expect(outcome.3 == nil, "a stopped stream ends")
        // The handle is not held: another read runs to the end.
        #expect(try await Self.bytes(of: blob, in: vault).count == 400_000)
    }

    @Test func writeAttachmentWritesTheWholeFileUnderItsName() async throws {
        let dir = TemporaryDirectory()
        let (vault, _) = try await AppErrorTypeTests.vault(dir)
        let content = Self.content(150_000)
        let blob = try await Self.stored(content, in: dir, vault: vault)
        let shown = TemporaryDirectory()
        let url = URL(fileURLWithPath: shown.file("photo.jpg"))
        try Data("an older file".utf8).write(to: url)
        try await vault.writeAttachment(blob, to: url)
        #expect(try [UInt8](Data(contentsOf: url)) == content)
        #expect(try FileManager.default.contentsOfDirectory(atPath: shown.path) == ["photo.jpg"], "no temporary file is left")
        let mode = try FileManager.default.attributesOfItem(atPath: url.path)[.posixPermissions] as? Int
        #expect(mode == 0o600, "the plaintext is readable by this user only")
    }

    @Test func aWriteThatFailsLeavesNoFile() async throws {
        let dir = TemporaryDirectory()
        let (vault, _) = try await AppErrorTypeTests.vault(dir)
        let blob = try await Self.stored(Self.content(100_000), in: dir, vault: vault)
        let shown = TemporaryDirectory()
        let url = URL(fileURLWithPath: shown.file("photo.jpg"))
        // Cancelled: nothing written.
        let cancelled = await Task { () -> QuireError? in
            withUnsafeCurrentTask { $0?.cancel() }
            do throws(QuireError) { try await vault.writeAttachment(blob, to: url) } catch { return error }
            return nil
        }.value
        #expect(cancelled?.category == .cancelled)
        // A folder that does not exist.
        let nowhere = URL(fileURLWithPath: shown.file("missing/photo.jpg"))
        do {
            try await vault.writeAttachment(blob, to: nowhere)
            Issue.record("wrote into a missing folder")
        } catch {
            #expect(error.category == .unavailable)
        }
        // Not a file URL.
        do {
            try await vault.writeAttachment(blob, to: URL(string: "https://example.com/photo.jpg")!)
            Issue.record("wrote to a web URL")
        } catch {
            #expect(error.category == .programmerError)
            #expect(error.code == "not_a_file_url")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: shown.path).isEmpty)
    }
}
