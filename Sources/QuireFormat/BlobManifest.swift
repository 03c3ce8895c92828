/// The manifest of an attachment's content: the blob manifest record
/// (`Spec/records.md §4`). It names the blob, its
/// size and the stream whose chunks hold it.
@_spi(Format) public struct BlobManifest: Sendable, Equatable {
    /// The content's id.
    public var blob: BlobID
    /// The stream whose chunks hold the content.
    @_spi(Format) public var stream: StreamID
    /// The content's length in bytes.
    public var byteCount: UInt64
    /// The media type. Default `"application/octet-stream"`.
    public var mediaType: String
    /// Earlier blob ids of the same content, written when a rekey stored it
    /// again under a new blob key (`Spec/records.md §4`); at most
    /// ``Limits/maxAliasCount``.
    @_spi(Format) public var aliases: [BlobID]
    /// Fields this version does not know.
    @_spi(Format) public var unknownFields: CBORMap

    /// A manifest with the given fields.
    @_spi(Format) public init(
        blob: BlobID, stream: StreamID, byteCount: UInt64, mediaType: String = "application/octet-stream", aliases: [BlobID] = [],
        unknownFields: CBORMap = CBORMap()
    ) {
        self.blob = blob
        self.aliases = aliases
        self.stream = stream
        self.byteCount = byteCount
        self.mediaType = mediaType
        self.unknownFields = unknownFields
    }

    /// The number of chunks the padded stream takes: ⌈Padmé(size + 1) /
    /// 64 KiB⌉, so 1 for empty content (`Spec/format.md §7.1`).
    @_spi(Format) public var chunkCount: UInt64 { Padding.chunkCount(contentByteCount: byteCount) }

    /// True when `id` is this content's blob id or one of its aliases.
    package func answers(to id: BlobID) -> Bool { blob == id || aliases.contains(id) }

    /// Decodes a manifest body.
    ///
    /// - Throws: ``FormatError/malformedRecord(_:reason:)``, or
    ///   ``FormatError/sizeLimitExceeded(_:what:size:limit:)`` when the size is
    ///   over ``Limits/maxBlobByteCount``.
    @_spi(Format) public init(decoding bytes: [UInt8], location: FrameLocation? = nil) throws(FormatError) {
        var r = try FieldReader(decodeBody(bytes, location: location), context: "attachment manifest", location: location)
        guard let blob = try r.id("blob", as: BlobID.self), let stream = try r.id("stream", as: StreamID.self) else {
            throw .malformedRecord(location, reason: "attachment manifest needs \"blob\" and \"stream\"")
        }
        self.blob = blob
        self.stream = stream
        byteCount = try r.unsigned("size") ?? 0
        guard byteCount <= Limits.maxBlobByteCount else {
            throw .sizeLimitExceeded(location, what: "attachment size", size: byteCount, limit: Limits.maxBlobByteCount)
        }
        mediaType = try r.text("type") ?? "application/octet-stream"
        aliases = try r.ids("aliases", as: BlobID.self, limit: Limits.maxAliasCount) ?? []
        unknownFields = r.unknown
    }

    /// The canonical CBOR encoding.
    @_spi(Format) public func encoded() -> [UInt8] {
        var w = FieldWriter(unknown: unknownFields)
        w.id("blob", blob)
        w.id("stream", stream)
        w.unsigned("size", byteCount, default: 0)
        w.text("type", mediaType, default: "application/octet-stream")
        if !aliases.isEmpty { w.ids("aliases", aliases) }
        return w.encoded
    }
}
