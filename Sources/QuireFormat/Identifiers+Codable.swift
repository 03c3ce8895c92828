// Codable ids, so that an app can keep one in state restoration, a
// navigation path or a deep link. Declared here, apart from the types, so
// that the compiler does not synthesise a `{"bytes": [...]}` form.

extension ByteIdentifier where Self: Codable {
    /// Decodes the id from its lowercase (or uppercase) hex string, the
    /// form ``description`` prints.
    ///
    /// - Throws: `DecodingError.dataCorrupted` when the string is not hex of
    ///   the id's length in bytes; the decoder's error when it holds no string.
    @_spi(Format) public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let id = Self(hex: text) else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "a \(Self.name) is \(Self.byteCount * 2) hex digits")
        }
        self = id
    }

    /// Encodes the id as its lowercase hex string (``description``).
    @_spi(Format) public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}

/// Encoded as its 32-digit lowercase hex string.
extension EntryID: Codable {}
/// Encoded as its 32-digit lowercase hex string.
extension RevisionID: Codable {}
/// Encoded as its 64-digit lowercase hex string.
extension BlobID: Codable {}
/// Encoded as its 32-digit lowercase hex string.
extension DeviceID: Codable {}
