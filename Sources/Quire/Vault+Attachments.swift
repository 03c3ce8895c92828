public import Foundation
@_spi(Crypto) public import QuireCrypto
@_spi(Format) public import QuireFormat
import QuireSystem

// Attachments as an app stores and shows them (`Spec/format.md §7`): from
// and to file URLs, and read as an async sequence of chunks, without
// blocking the caller and without holding the whole content.

extension VaultTransaction {
    /// Streams the file at `url` in as an attachment (`Spec/format.md §7`),
    /// 64 KiB at a time: memory stays bounded whatever the file's size.
    /// Content the vault already holds is not stored again. Pass the result
    /// to `AttachmentReference(_:mediaType:fileName:)`.
    ///
    /// `url` is a file URL, such as the one a photo picker or a document
    /// picker gives (a security-scoped one is the app's to open with
    /// `startAccessingSecurityScopedResource()` around the commit). A
    /// `URL` is `Sendable`, so the commit's closure may capture it.
    ///
    /// - Throws: ``QuireError``: `.programmerError` (`not_a_file_url`) for
    ///   a URL that is not a file URL; `.unavailable` (`io`) when the file
    ///   cannot be read; `.busy` (`source_changed`) when it changed while it
    ///   was read; a container error for the vault (`.damaged`,
    ///   `.unavailable`, `.outOfSpace`…); `.cancelled` when the task was
    ///   cancelled. Nothing of the attachment is stored then.
    public func storeAttachment(contentsOf url: URL, mediaType: String) throws(QuireError) -> StoredBlob {
        try storeAttachment(fromFile: try Vault.filePath(of: url), mediaType: mediaType)
    }
}

extension Vault {
    /// The path of file URL `url`.
    ///
    /// - Throws: `.programmerError` (`not_a_file_url`).
    static func filePath(of url: URL) throws(QuireError) -> String {
        guard url.isFileURL else {
            throw QuireError(
                category: .programmerError, code: "not_a_file_url",
                message: "\(url.absoluteString) is not a file URL; attachments are read from and written to files")
        }
        return url.path(percentEncoded: false)
    }

    /// The content of attachment `blob` as an async sequence of chunks
    /// (`Spec/format.md §7`), each read and checked on this handle's
    /// executor when the caller asks for it: the caller is never blocked,
    /// and the whole content is never held. Each element is at most
    /// 65,536 bytes (one chunk of the stream, `Spec/format.md §7.2`) and
    /// never empty; the reader behind it keeps a fixed few MiB of buffers
    /// whatever the attachment's size.
    ///
    /// ```swift
    /// for try await chunk in vault.attachmentStream(ref.blob) {   // error is a QuireError
    ///     decoder.append(chunk)
    /// }
    /// ```
    ///
    /// Bytes are handed out as each chunk authenticates; the attachment's
    /// size and blob id are checked at the end, so a consumer that needs
    /// certainty treats the content as whole only when the loop ends
    /// without throwing. Cancelling the task stops the reading at the next
    /// chunk (`.cancelled`) and releases the reader; so does leaving the
    /// loop. Each iteration reads from the start.
    ///
    /// - Parameter blob: the attachment, ``AttachmentReference/blob``.
    /// - Returns: the sequence, `Sendable`; its iterator throws
    ///   ``QuireError``: `.notFound` (`blob_not_found`) when the vault has
    ///   no such attachment, `.damaged` for a chunk that does not
    ///   authenticate or content whose size or blob id is wrong,
    ///   `.unavailable` or `.outOfSpace` when the file cannot be read,
    ///   `.cancelled` (`cancelled`). After it throws or ends, it gives nil.
    public func attachmentStream(_ blob: BlobID) -> some AsyncSequence<[UInt8], QuireError> & Sendable {
        attachmentChunks(blob)
    }

    /// ``attachmentStream(_:)`` as its concrete type (for the tests: its
    /// iterator says whether a reader is open).
    package func attachmentChunks(_ blob: BlobID) -> AttachmentChunks {
        AttachmentChunks(vault: self, blob: blob)
    }

    /// Decrypts attachment `blob` to the file at `url` (a file URL the app
    /// chose, for `AVPlayer` or QuickLook), on this handle's executor, a
    /// chunk at a time (`Spec/format.md §7`): memory stays bounded
    /// whatever the attachment's size. The content is written under a
    /// temporary name in the same folder, flushed to disk, checked to the
    /// end (size and blob id) and only then renamed to `url`, replacing
    /// any file there: `url` never holds a partial or unchecked file, and
    /// on any error or cancellation the temporary file is removed.
    ///
    /// The file is plaintext, readable by this user only (mode 0600). It is
    /// the app's to protect (a folder with `FileProtectionType.complete`
    /// on iOS, excluded from backups, such as one in `Library/Caches` or
    /// `tmp`) and to delete when it is no longer shown: the vault does not
    /// track it.
    ///
    /// - Throws: ``QuireError``: `.programmerError` (`not_a_file_url`) for
    ///   a URL that is not a file URL; `.notFound` (`blob_not_found`) when
    ///   the vault has no such attachment; `.damaged` when a chunk does not
    ///   authenticate or the content's size or blob id is wrong;
    ///   `.unavailable` (`io`, a missing folder too) or `.outOfSpace` when a
    ///   file cannot be read or written; `.cancelled` (`cancelled`).
    public func writeAttachment(_ blob: BlobID, to url: URL) async throws(QuireError) {
        let path = try Vault.filePath(of: url)
        try await perform { () throws(QuireError) -> Void in try self.writeAttachment(blob, toPath: path) }
    }

    /// ``writeAttachment(_:to:)`` on the caller's thread.
    ///
    /// - Throws: as ``writeAttachment(_:to:)``.
    func writeAttachment(_ blob: BlobID, toPath path: String) throws(QuireError) {
        let reader = try openAttachment(blob)
        let folder = FileSystem.directory(of: path)
        let name = path.split(separator: "/").last.map(String.init) ?? "attachment"
        let temporary = folder + "/." + name + ".quire-\(FileSystem.processID)-\(UInt64.random(in: 0...UInt64.max)).tmp"
        let file: SystemFile
        do { file = try SystemFile(path: temporary, mode: .createExclusive(permissions: 0o600)) } catch { throw .format(.io(error)) }
        var renamed = false
        defer { if !renamed { try? FileSystem.remove(temporary) } }
        var written: UInt64 = 0
        while true {
            if VaultCancellation.isRequested { throw .cancelled }
            // Written from where the reader opened it (a batch, up to 1 MiB,
            // a write), not copied to a buffer first.
            let piece: UnsafeRawBufferPointer
            do { piece = try reader.nextContent() } catch { throw .format(error) }
            if piece.isEmpty { break }
            do {
                try file.write(piece, at: written)
                // Written back while the next chunks are opened, not all in the fsync.
                file.startWriteback(from: written, count: piece.count)
            } catch {
                throw .format(.io(error))
            }
            written += UInt64(piece.count)
        }
        do {
            try file.sync()
            try FileSystem.rename(temporary, to: path)
            renamed = true
            try FileSystem.syncDirectory(folder)
        } catch {
            throw .format(.io(error))
        }
    }
}

/// The content of one attachment as an async sequence of chunks: what
/// ``Vault/attachmentStream(_:)`` returns. Each element is 1 to 65,536
/// bytes; the iterator throws ``QuireError``. It holds the handle and the
/// blob id, and each iteration reads from the start.
package struct AttachmentChunks: AsyncSequence, Sendable {
    let vault: Vault
    let blob: BlobID

    /// An iterator that reads the attachment from its start.
    package func makeAsyncIterator() -> Iterator {
        Iterator(reading: AttachmentReading(vault: vault, blob: blob))
    }

    /// Reads the next chunk on the handle's executor each time it is asked.
    package struct Iterator: AsyncIteratorProtocol {
        let reading: AttachmentReading

        /// ``next(isolation:)`` from no actor.
        ///
        /// - Throws: ``QuireError``, as ``Vault/attachmentStream(_:)`` says.
        package mutating func next() async throws(QuireError) -> [UInt8]? {
            try await next(isolation: nil)
        }

        /// The next chunk (1 to 65,536 bytes), or nil at the end or after
        /// an error; what `for try await` calls. The caller's `actor` waits
        /// while the chunk is read on the handle's executor.
        ///
        /// - Throws: ``QuireError``, as ``Vault/attachmentStream(_:)`` says.
        package mutating func next(isolation actor: isolated (any Actor)?) async throws(QuireError) -> [UInt8]? {
            guard !reading.finished else { return nil }
            let reading = reading
            do {
                return try await reading.vault.perform { () throws(QuireError) -> [UInt8]? in try reading.next() }
            } catch {
                // Cancelled before the work started: nothing runs on the
                // executor for this iterator now, so it is released here.
                reading.finish()
                throw error
            }
        }

        /// True while a reader is open: between the first chunk and the
        /// end, an error or a cancellation (for the tests).
        package var isReading: Bool { reading.reader != nil }
    }
}

/// The state of one iteration of an ``AttachmentChunks``: the reader,
/// opened on the first chunk asked for and released at the end, on an
/// error or a cancellation, or with the iterator.
///
/// `@unchecked Sendable`: touched only by one iterator's calls, one at a
/// time (`next` is `mutating` and awaited), each on the handle's executor.
final class AttachmentReading: @unchecked Sendable {
    let vault: Vault
    let blob: BlobID
    var reader: BlobReader?
    var finished = false
    /// What one read hands out, copied into the element: wiped at the end.
    private let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: Limits.chunkByteCount, alignment: 16)

    init(vault: Vault, blob: BlobID) {
        self.vault = vault
        self.blob = blob
    }

    deinit {
        scratch.initializeMemory(as: UInt8.self, repeating: 0)
        scratch.deallocate()
    }

    /// The next chunk of content, or nil at the end.
    ///
    /// - Throws: as ``Vault/attachmentStream(_:)``; the reading is finished then.
    func next() throws(QuireError) -> [UInt8]? {
        guard !finished else { return nil }
        do throws(QuireError) {
            if VaultCancellation.isRequested { throw .cancelled }
            if reader == nil { reader = try vault.openAttachment(blob) }
            let n: Int
            do throws(FormatError) { n = try reader!.readChecked(into: scratch) } catch { throw .format(error) }
            if n == 0 {
                finish()
                return nil
            }
            return Array(UnsafeRawBufferPointer(rebasing: scratch[0..<n]))
        } catch {
            finish()
            throw error
        }
    }

    /// Releases the reader; later calls give nil.
    func finish() {
        finished = true
        reader = nil
    }
}
