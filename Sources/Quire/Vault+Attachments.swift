public import Foundation
@_spi(Crypto) public import QuireCrypto
@_spi(Format) public import QuireFormat

// Attachments as an app stores them (`Spec/format.md §7`): from file URLs.

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
}
