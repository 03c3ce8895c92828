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
    ///   - stored: what ``VaultTransaction/storeAttachment(fromFile:mediaType:)``
    ///     (or its `from:` form) returned.
    ///   - mediaType: the media type, such as `"image/jpeg"`; use the one given when storing.
    ///   - fileName: the original file name, `""` when there is none.
    public init(_ stored: StoredBlob, mediaType: String, fileName: String = "") {
        self.init(id: SystemRandom().bytes(16), blob: stored.blob, mediaType: mediaType, fileName: fileName)
    }
}
