@_spi(Crypto) import QuireCrypto
@_spi(Format) public import QuireFormat

extension AttachmentReference {
    /// A reference to attachment content stored in this commit (or already
    /// in the vault), with an id the library makes: 16 fresh random bytes
    /// from the system's generator, unique within any entry
    /// (`Spec/records.md §3.6`). Its text links read
    /// `quire-attachment://<hex id>`.
    ///
    /// - Parameters:
    ///   - stored: what ``VaultTransaction/storeAttachment(contentsOf:mediaType:)``
    ///     (or its bytes or `from:` form) returned.
    ///   - mediaType: the media type, such as `"image/jpeg"`; use the one given when storing.
    ///   - fileName: the original file name, `""` when there is none.
    public init(_ stored: StoredBlob, mediaType: String, fileName: String = "") {
        self.init(id: SystemRandom().bytes(16), blob: stored.blob, mediaType: mediaType, fileName: fileName)
    }

    /// The link an entry's Markdown text uses for this attachment:
    /// `quire-attachment://` and the reference's id in lowercase
    /// hexadecimal (`Spec/records.md §3.3`), as in
    /// `"![](\(reference.link))"` for a photo shown in the text. Resolve a
    /// link found in text with ``EntryBody/attachment(forLink:)``.
    public var link: String { AttachmentReference.linkPrefix + hex(id) }

    /// The scheme and separator every attachment link starts with.
    static let linkPrefix = "quire-attachment://"
}

extension EntryBody {
    /// The attachment of this entry that `link` names (an
    /// ``AttachmentReference/link`` found in ``text``, such as the target of
    /// a Markdown image), or nil when it names none of ``attachments``. The
    /// hexadecimal is compared without regard to case.
    public func attachment(forLink link: String) -> AttachmentReference? {
        guard link.hasPrefix(AttachmentReference.linkPrefix) else { return nil }
        let wanted = link.dropFirst(AttachmentReference.linkPrefix.count).lowercased()
        return attachments.first { hex($0.id) == wanted }
    }
}
