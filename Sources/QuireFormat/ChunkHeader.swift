import QuireCrypto

/// The public chunk header of an attachment chunk frame: 21 bytes between
/// the nonce and the ciphertext, bound into the associated data
/// (`Spec/format.md §7.2`).
///
/// ```
///  0                    16                 20      21
/// +--------------------+------------------+-------+
/// | stream id (16)     | chunk index u32  | final |
/// +--------------------+------------------+-------+
/// ```
@_spi(Format) public struct ChunkHeader: Sendable, Hashable {
    /// Length in bytes.
    public static let byteCount = 21

    /// The stream the chunk belongs to.
    public let stream: StreamID
    /// The chunk's position in the stream, from 0.
    public let index: UInt32
    /// True for the last chunk of the stream.
    public let isFinal: Bool

    /// A chunk header with the given fields.
    public init(stream: StreamID, index: UInt32, isFinal: Bool) {
        self.stream = stream
        self.index = index
        self.isFinal = isFinal
    }

    /// The 21 bytes.
    public func encoded() -> [UInt8] {
        var w = ByteWriter(capacity: Self.byteCount)
        w.writeBytes(stream.bytes)
        w.writeUInt32(index)
        w.writeUInt8(isFinal ? 1 : 0)
        return w.bytes
    }

    /// Parses 21 bytes; nil when the final byte is neither 0 nor 1.
    public static func parse(_ bytes: some Collection<UInt8>) -> ChunkHeader? {
        let b = Array(bytes)
        guard b.count == byteCount, b[20] <= 1, let stream = try? StreamID(bytes: Array(b[0..<16])) else { return nil }
        return ChunkHeader(stream: stream, index: loadUInt32LE(b, at: 16), isFinal: b[20] == 1)
    }
}
