@_spi(Crypto) import QuireCrypto

/// The kind of record a frame holds (`Spec/format.md §4.3`).
///
/// Kinds below `0x80` are *critical*: a reader that does not know one must
/// stop. Kinds from `0x80` up are *non-critical*: a reader that does not know
/// one skips it, and merge and compaction carry it through byte for byte.
@_spi(Format) public struct RecordKind: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// The kind byte.
    public let rawValue: UInt8
    /// Wraps a kind byte.
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// A keyring: epoch key slots and the sealed member list (plaintext frame).
    public static let keyring = RecordKind(rawValue: 0x01)
    /// A commit: the keyed hash chain over the frames before it and the sealed
    /// attestation of the member who wrote them (plaintext frame).
    public static let commit = RecordKind(rawValue: 0x02)
    /// An entry revision (sealed).
    public static let entryRevision = RecordKind(rawValue: 0x10)
    /// An attachment manifest: a blob's id, size and stream (sealed).
    public static let blobManifest = RecordKind(rawValue: 0x11)
    /// One chunk of an attachment's content (sealed, with a public chunk header).
    public static let blobChunk = RecordKind(rawValue: 0x12)
    /// The journal profile: display name and settings (sealed, non-critical).
    public static let profile = RecordKind(rawValue: 0x80)

    /// True for kinds below `0x80`.
    public var isCritical: Bool { rawValue < 0x80 }

    /// True for the kinds that carry the user's text (entry revisions and
    /// the profile): writers store them compressed even when zstd does not
    /// make them smaller, so that the public compressed flag says nothing
    /// about how compressible they are (`Spec/format.md §6.1`).
    package var isAlwaysCompressed: Bool { self == .entryRevision || self == .profile }

    /// The kinds version 2 defines.
    public static let known: Set<RecordKind> = [.keyring, .commit, .entryRevision, .blobManifest, .blobChunk, .profile]

    /// True when version 2 defines this kind (``known``, without hashing:
    /// every scanned frame asks).
    public var isKnown: Bool {
        switch rawValue {
        case 0x01, 0x02, 0x10, 0x11, 0x12, 0x80: true
        default: false
        }
    }

    /// Whether frames of this (known) kind are sealed with the AEAD.
    public var isSealedKind: Bool {
        self == .entryRevision || self == .blobManifest || self == .blobChunk || self == .profile
    }

    public var description: String {
        switch self {
        case .keyring: "keyring"
        case .commit: "commit"
        case .entryRevision: "entry revision"
        case .blobManifest: "attachment manifest"
        case .blobChunk: "attachment chunk"
        case .profile: "profile"
        default: "kind 0x\(String(rawValue, radix: 16))"
        }
    }
}

/// The 48-bit id of an epoch key, carried in frame headers: the first six
/// bytes of the key's commitment (`Spec/format.md §5.1`). Equal ids do not
/// prove equal keys; a reader tries each held key with the id.
@_spi(Format) public struct KeyID: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// Six bytes.
    @_spi(Format) public static let byteCount = 6
    /// The id as a little-endian 48-bit integer.
    @_spi(Format) public let rawValue: UInt64

    /// Wraps a 48-bit value (higher bits must be zero).
    @_spi(Format) public init(rawValue: UInt64) {
        precondition(rawValue >> 48 == 0)
        self.rawValue = rawValue
    }

    /// The id of a key commitment (its first six bytes, little-endian).
    @_spi(Format) public init(commitment: some Collection<UInt8>) {
        var v: UInt64 = 0
        for (i, b) in commitment.prefix(Self.byteCount).enumerated() { v |= UInt64(b) << (8 * UInt64(i)) }
        rawValue = v
    }

    /// The six bytes as they appear in a frame header.
    @_spi(Format) public var bytes: [UInt8] { (0..<Self.byteCount).map { UInt8(truncatingIfNeeded: rawValue >> (8 * UInt64($0))) } }

    @_spi(Format) public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }

    /// Twelve lowercase hex digits, in header byte order.
    public var description: String { hex(bytes) }
}

/// The fixed 16-byte header of every frame (`Spec/format.md §4.1`).
///
/// ```
/// kind (1) ‖ flags (1) ‖ key id (6) ‖ length (u32) ‖ check (4)
/// ```
/// The first twelve bytes are the *header fields* bound into a sealed frame's
/// associated data and into the commit chain.
@_spi(Format) public struct FrameHeader: Sendable, Hashable {
    /// Encoded length of a header, in bytes.
    public static let byteCount = 16
    /// Length of the header fields (everything but the check), in bytes.
    public static let fieldByteCount = 12
    /// Flag bit 0: the body is sealed with the AEAD.
    public static let sealedFlag: UInt8 = 0x01
    /// Flag bit 1: the sealed payload is a zstd frame.
    public static let compressedFlag: UInt8 = 0x02
    /// Bits 2–7, reserved: must be zero.
    public static let reservedFlags: UInt8 = 0xfc
    /// Length of the body hash that ends every frame body but a chunk's and a
    /// commit's (`Spec/format.md §4.2`).
    public static let bodyHashByteCount = 32
    /// Length of the AEAD tag that ends a chunk body.
    public static let tagByteCount = 16

    /// The record kind.
    public let kind: RecordKind
    /// The flag byte.
    public let flags: UInt8
    /// The id of the epoch key the frame is sealed under (or defines, or
    /// commits with).
    public let keyID: KeyID
    /// Body length in bytes, not counting this header.
    public let bodyLength: UInt32

    /// A header with the given fields.
    public init(kind: RecordKind, flags: UInt8, keyID: KeyID, bodyLength: UInt32) {
        self.kind = kind
        self.flags = flags
        self.keyID = keyID
        self.bodyLength = bodyLength
    }

    /// True when the sealed flag is set.
    public var isSealed: Bool { flags & Self.sealedFlag != 0 }
    /// True when the compressed flag is set.
    public var isCompressed: Bool { flags & Self.compressedFlag != 0 }

    /// The 12 header-field bytes (everything but the check).
    public var fieldBytes: [UInt8] {
        var w = ByteWriter(capacity: Self.fieldByteCount)
        w.writeUInt8(kind.rawValue)
        w.writeUInt8(flags)
        w.writeBytes(keyID.bytes)
        w.writeUInt32(bodyLength)
        return w.bytes
    }

    /// The full 16-byte encoding, check included.
    public func encoded() -> [UInt8] {
        let fields = fieldBytes
        return fields + Self.check(fields)
    }

    /// `BLAKE2b-128(fields)[0..<4]`.
    static func check(_ fields: [UInt8]) -> [UInt8] {
        fields.withUnsafeBytes { f in withCheck(of: f) { Array($0) } }
    }

    /// Calls `body` with ``check(_:)`` of `fields`, computed on the stack: a
    /// scan checks every frame's header (three arrays a frame were a third
    /// of a scan's instructions).
    static func withCheck<R>(of fields: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) -> R) -> R {
        withUnsafeTemporaryAllocation(byteCount: 16, alignment: 8) { out in
            BLAKE2b.hash(fields, into: out)
            return body(UnsafeRawBufferPointer(rebasing: out[0..<4]))
        }
    }

    /// The length of a frame's *trailer*, the part of its body that stands
    /// for the body in the commit chain: the 16-byte tag of a chunk, the
    /// 32-byte body hash of every other frame (`Spec/format.md §9.2`).
    public var trailerByteCount: Int { kind == .blobChunk ? Self.tagByteCount : Self.bodyHashByteCount }

    /// True when no reserved flag is set, the compressed flag implies the
    /// sealed flag, and the length is within ``Limits/minFrameBodyByteCount``
    /// … ``Limits/maxFrameBodyByteCount``.
    public var isPlausible: Bool {
        guard flags & Self.reservedFlags == 0 else { return false }
        if isCompressed && !isSealed { return false }
        return bodyLength >= UInt32(Limits.minFrameBodyByteCount) && bodyLength <= UInt32(Limits.maxFrameBodyByteCount)
    }

    /// Parses and checks the header at `offset`; nil unless it is plausible
    /// and its check verifies.
    public static func parseChecked(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> FrameHeader? {
        guard bytes.count - offset >= byteCount else { return nil }
        let header = unchecked(bytes, at: offset)
        // Cheap structural tests first: during resynchronisation most
        // positions fail here without computing a hash.
        guard header.isPlausible else { return nil }
        let fields = UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + fieldByteCount])
        let stored = offset + fieldByteCount
        let intact = withCheck(of: fields) { c in
            c[0] == bytes[stored] && c[1] == bytes[stored + 1] && c[2] == bytes[stored + 2] && c[3] == bytes[stored + 3]
        }
        return intact ? header : nil
    }

    /// Reads the fields at `offset` without checking anything.
    static func unchecked(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> FrameHeader {
        let kind = RecordKind(rawValue: bytes[offset])
        let flags = bytes[offset + 1]
        var key: UInt64 = 0
        for i in 0..<KeyID.byteCount { key |= UInt64(bytes[offset + 2 + i]) << (8 * UInt64(i)) }
        let length =
            UInt32(bytes[offset + 8]) | UInt32(bytes[offset + 9]) << 8
            | UInt32(bytes[offset + 10]) << 16 | UInt32(bytes[offset + 11]) << 24
        return FrameHeader(kind: kind, flags: flags, keyID: KeyID(rawValue: key), bodyLength: length)
    }
}
