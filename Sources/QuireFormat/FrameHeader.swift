import QuireCrypto

/// The kind of record a frame holds (`Spec/format.md §4.3`).
///
/// Kinds below `0x80` are *critical*: a reader that does not know one must
/// stop. Kinds from `0x80` up are *non-critical*: a reader that does not know
/// one skips it, and merge and compaction carry it through byte for byte.
public struct RecordKind: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// The kind byte.
    public let rawValue: UInt8
    /// Wraps a kind byte.
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// A keyring: epoch key slots and the sealed member list (plaintext frame).
    public static let keyring = RecordKind(rawValue: 0x01)
    /// A commit: the keyed hash chain over the frames before it (plaintext frame).
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

    /// The kinds version 1 defines.
    public static let known: Set<RecordKind> = [.keyring, .commit, .entryRevision, .blobManifest, .blobChunk, .profile]

    /// True when version 1 defines this kind.
    public var isKnown: Bool { Self.known.contains(self) }

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

/// The 12-byte header in front of every frame body (`Spec/format.md §4.1`).
///
/// ```
///  0      1      2             4                           8              12
/// +------+------+-------------+---------------------------+--------------+
/// | kind | flags| epoch (u16) | body length (u32)         | check (4)    |
/// +------+------+-------------+---------------------------+--------------+
/// ```
///
/// Integers are little-endian. `check` is the first 4 bytes of BLAKE2b-128
/// over bytes 0..<8; with the plausibility rules it lets a reader find frame
/// boundaries again after damage.
public struct FrameHeader: Sendable, Hashable {
    /// Length in bytes.
    public static let byteCount = 12
    /// Flag bit 0: the body is sealed with XChaCha20-Poly1305.
    public static let sealedFlag: UInt8 = 0x01
    /// Flag bit 1: the sealed payload is a zstd frame.
    public static let compressedFlag: UInt8 = 0x02
    /// Bits that version 1 does not define; they must be zero.
    public static let reservedFlags: UInt8 = 0xfc
    /// Bytes every frame body ends with: the AEAD tag, the MAC or a checksum.
    public static let trailerByteCount = 16

    /// The record kind.
    public let kind: RecordKind
    /// The flag bits.
    public let flags: UInt8
    /// The epoch whose keys seal (or, for a commit, authenticate) the frame.
    public let epoch: UInt16
    /// Body length in bytes, not counting this header.
    public let bodyLength: UInt32

    /// A header with the given fields.
    public init(kind: RecordKind, flags: UInt8, epoch: UInt16, bodyLength: UInt32) {
        self.kind = kind
        self.flags = flags
        self.epoch = epoch
        self.bodyLength = bodyLength
    }

    /// True when the sealed flag is set.
    public var isSealed: Bool { flags & Self.sealedFlag != 0 }
    /// True when the compressed flag is set.
    public var isCompressed: Bool { flags & Self.compressedFlag != 0 }

    /// The first 8 bytes: kind, flags, epoch, body length. These are the
    /// header bytes bound into a sealed frame's associated data.
    public var fieldBytes: [UInt8] {
        var w = ByteWriter(capacity: 8)
        w.writeUInt8(kind.rawValue)
        w.writeUInt8(flags)
        w.writeUInt16(epoch)
        w.writeUInt32(bodyLength)
        return w.bytes
    }

    /// The full 12 bytes, with the check value.
    public func encoded() -> [UInt8] {
        let fields = fieldBytes
        return fields + Self.check(fields)
    }

    static func check(_ fields: [UInt8]) -> [UInt8] {
        Array(BLAKE2b.hash(fields, byteCount: 16).prefix(4))
    }

    /// True when the flags and length obey the structural rules every frame
    /// obeys, whatever its kind (`Spec/format.md §4.2`): no reserved flag,
    /// compressed only if sealed, a body at least as long as its fixed parts
    /// and no longer than ``Limits/maxFrameBodyByteCount``.
    public var isPlausible: Bool {
        guard flags & Self.reservedFlags == 0 else { return false }
        if isCompressed && !isSealed { return false }
        let minimum = isSealed ? XChaCha20Poly1305.nonceByteCount + Self.trailerByteCount : Self.trailerByteCount
        return bodyLength >= minimum && bodyLength <= UInt32(Limits.maxFrameBodyByteCount)
    }

    /// Parses 12 bytes at `offset` of `bytes` if the check value verifies and
    /// the header is plausible; nil otherwise.
    public static func parseChecked(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> FrameHeader? {
        guard bytes.count - offset >= byteCount else { return nil }
        let header = unchecked(bytes, at: offset)
        // Cheap structural tests first: during resynchronisation most
        // positions fail here without computing a hash.
        guard header.isPlausible else { return nil }
        let fields = Array(bytes[offset..<offset + 8])
        let check = Self.check(fields)
        for i in 0..<4 where bytes[offset + 8 + i] != check[i] { return nil }
        return header
    }

    /// Parses the 8 field bytes at `offset` without checking anything.
    static func unchecked(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> FrameHeader {
        let kind = RecordKind(rawValue: bytes[offset])
        let flags = bytes[offset + 1]
        let epoch = UInt16(bytes[offset + 2]) | UInt16(bytes[offset + 3]) << 8
        let length = UInt32(bytes[offset + 4]) | UInt32(bytes[offset + 5]) << 8
            | UInt32(bytes[offset + 6]) << 16 | UInt32(bytes[offset + 7]) << 24
        return FrameHeader(kind: kind, flags: flags, epoch: epoch, bodyLength: length)
    }
}
