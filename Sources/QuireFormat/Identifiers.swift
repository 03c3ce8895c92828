@_spi(Crypto) public import QuireCrypto

/// A fixed-length identifier made of bytes: vault, entry, revision, device,
/// stream and blob ids (`Spec/records.md §2`).
///
/// `init(using:)` makes a fresh random id; `init(bytes:)` validates the
/// length. Ids compare bytewise (`<`), print as lowercase hex
/// (`description`, which ``init(hex:)`` parses back), and the entry,
/// revision and blob ids are `Codable` as that hex string.
public protocol ByteIdentifier: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// Length in bytes.
    @_spi(Format) static var byteCount: Int { get }
    /// A short name for messages, such as `"entry id"`.
    @_spi(Format) static var name: String { get }
    /// The bytes.
    @_spi(Format) var bytes: [UInt8] { get }
    /// Wraps bytes of the right length without checking.
    @_spi(Format) init(unchecked bytes: [UInt8])
}

extension ByteIdentifier {
    /// Validates the length and wraps `bytes`.
    ///
    /// - Throws: ``FormatError/malformedRecord(_:reason:)`` for another length.
    @_spi(Format) public init(bytes: [UInt8]) throws(FormatError) {
        guard bytes.count == Self.byteCount else {
            throw .malformedRecord(nil, reason: "\(Self.name) must be \(Self.byteCount) bytes, got \(bytes.count)")
        }
        self.init(unchecked: bytes)
    }

    /// A fresh random id.
    @_spi(Format) public init(using random: any RandomSource) {
        self.init(unchecked: random.bytes(Self.byteCount))
    }

    /// Parses lowercase or uppercase hex of the right length.
    public init?(hex text: some StringProtocol) {
        guard let b = QuireCrypto.bytes(fromHex: text), b.count == Self.byteCount else { return nil }
        self.init(unchecked: b)
    }

    /// Lowercase hex.
    @_spi(Format) public var description: String { hex(bytes) }

    /// Bytewise order.
    @_spi(Format) public static func < (lhs: Self, rhs: Self) -> Bool { lhs.bytes.lexicographicallyPrecedes(rhs.bytes) }
}

/// The 16-byte random id of a vault, in the file header and bound into every
/// sealed record.
public struct VaultID: ByteIdentifier {
    @_spi(Format) public static let byteCount = 16
    @_spi(Format) public static let name = "vault id"
    @_spi(Format) public let bytes: [UInt8]
    @_spi(Format) public init(unchecked bytes: [UInt8]) { self.bytes = bytes }
}

/// The 16-byte id of a journal entry, shared by all its revisions.
public struct EntryID: ByteIdentifier {
    @_spi(Format) public static let byteCount = 16
    @_spi(Format) public static let name = "entry id"
    /// The bytes, held inline: a vault holds an entry id in every summary
    /// and revision, and an array each cost a heap block.
    package let storage: SixteenByteStorage
    @_spi(Format) public var bytes: [UInt8] { storage.bytes }
    @_spi(Format) public init(unchecked bytes: [UInt8]) { storage = SixteenByteStorage(bytes) }
    /// Reads the id from `raw` (16 bytes; any other count is kept as is).
    package init(uncheckedRaw raw: UnsafeRawBufferPointer) { storage = SixteenByteStorage(raw) }
    /// Bytewise order.
    @_spi(Format) public static func < (lhs: Self, rhs: Self) -> Bool { lhs.storage.precedes(rhs.storage) }
}

/// The 16-byte random id of one revision of an entry.
public struct RevisionID: ByteIdentifier {
    @_spi(Format) public static let byteCount = 16
    @_spi(Format) public static let name = "revision id"
    /// The bytes, held inline (see ``EntryID``).
    package let storage: SixteenByteStorage
    @_spi(Format) public var bytes: [UInt8] { storage.bytes }
    @_spi(Format) public init(unchecked bytes: [UInt8]) { storage = SixteenByteStorage(bytes) }
    /// Reads the id from `raw` (16 bytes; any other count is kept as is).
    package init(uncheckedRaw raw: UnsafeRawBufferPointer) { storage = SixteenByteStorage(raw) }
    /// Bytewise order.
    @_spi(Format) public static func < (lhs: Self, rhs: Self) -> Bool { lhs.storage.precedes(rhs.storage) }
}

/// The bytes of a 16-byte id without a heap block: two words, big-endian,
/// so that they hash, compare and order as the bytes do. Bytes of any
/// other count (an unchecked id that was never valid) are kept as an
/// array, so that distinct byte strings stay distinct ids.
package enum SixteenByteStorage: Hashable, Sendable {
    case words(UInt64, UInt64)
    case other([UInt8])

    init(_ bytes: [UInt8]) {
        if bytes.count == 16 {
            self = bytes.withUnsafeBytes { Self($0) }
        } else {
            self = .other(bytes)
        }
    }

    init(_ raw: UnsafeRawBufferPointer) {
        guard raw.count == 16 else {
            self = .other(Array(raw))
            return
        }
        var high: UInt64 = 0
        var low: UInt64 = 0
        for i in 0..<8 {
            high = high << 8 | UInt64(raw[i])
            low = low << 8 | UInt64(raw[8 + i])
        }
        self = .words(high, low)
    }

    /// The bytes, as an array made on each call.
    var bytes: [UInt8] {
        switch self {
        case .words(let high, let low):
            return [UInt8](unsafeUninitializedCapacity: 16) { buffer, count in
                for i in 0..<8 {
                    buffer[i] = UInt8(truncatingIfNeeded: high >> (56 - 8 * i))
                    buffer[8 + i] = UInt8(truncatingIfNeeded: low >> (56 - 8 * i))
                }
                count = 16
            }
        case .other(let bytes):
            return bytes
        }
    }

    /// Appends the bytes to `out`.
    package func append(to out: inout [UInt8]) {
        switch self {
        case .words(let high, let low):
            for i in 0..<8 { out.append(UInt8(truncatingIfNeeded: high >> (56 - 8 * i))) }
            for i in 0..<8 { out.append(UInt8(truncatingIfNeeded: low >> (56 - 8 * i))) }
        case .other(let bytes):
            out += bytes
        }
    }

    /// Bytewise (lexicographic) order.
    func precedes(_ other: Self) -> Bool {
        if case .words(let a, let b) = self, case .words(let c, let d) = other { return a != c ? a < c : b < d }
        return bytes.lexicographicallyPrecedes(other.bytes)
    }
}

/// The 16-byte id of a device (or of the recovery key acting as an author):
/// the first 16 bytes of BLAKE2b-256 of its Ed25519 public key.
@_spi(Format) public struct DeviceID: ByteIdentifier {
    @_spi(Format) public static let byteCount = 16
    @_spi(Format) public static let name = "device id"
    @_spi(Format) public let bytes: [UInt8]
    @_spi(Format) public init(unchecked bytes: [UInt8]) { self.bytes = bytes }

    /// The id of the holder of the Ed25519 public key `publicKey`.
    @_spi(Format) public init(publicKey: [UInt8]) {
        bytes = Array(BLAKE2b.hash(publicKey, byteCount: 32).prefix(Self.byteCount))
    }
}

/// The 16-byte random id of one upload of an attachment's content; its
/// chunks carry it in their public chunk header.
@_spi(Format) public struct StreamID: ByteIdentifier {
    @_spi(Format) public static let byteCount = 16
    @_spi(Format) public static let name = "stream id"
    @_spi(Format) public let bytes: [UInt8]
    @_spi(Format) public init(unchecked bytes: [UInt8]) { self.bytes = bytes }
}

/// The 32-byte id of an attachment's content: a keyed BLAKE2b-256 hash tree
/// of the content under the vault's blob key (`Spec/format.md §7.3`). Reveals nothing about the content to
/// anyone without the key; equal content has equal ids within a vault.
public struct BlobID: ByteIdentifier {
    @_spi(Format) public static let byteCount = 32
    @_spi(Format) public static let name = "blob id"
    @_spi(Format) public let bytes: [UInt8]
    @_spi(Format) public init(unchecked bytes: [UInt8]) { self.bytes = bytes }
}

/// The 32-byte id of a keyring: its frame's trailer, the BLAKE2b-256 of its
/// body.
@_spi(Format) public struct KeyringID: ByteIdentifier {
    @_spi(Format) public static let byteCount = 32
    @_spi(Format) public static let name = "keyring id"
    @_spi(Format) public let bytes: [UInt8]
    @_spi(Format) public init(unchecked bytes: [UInt8]) { self.bytes = bytes }
}

/// A hybrid logical clock reading (`Spec/records.md §3.2`): milliseconds
/// since the Unix epoch (UTC) in the high 48 bits and a counter in the low 16
/// bits, so readings order by time and then by counter.
@_spi(Format) public struct HybridLogicalClock: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The packed 64-bit value.
    public let rawValue: UInt64

    /// Wraps a packed value.
    public init(rawValue: UInt64) { self.rawValue = rawValue }

    /// The largest millisecond value a reading holds (2⁴⁸ − 1, in the year 10889).
    public static let maxMilliseconds: UInt64 = 0xffff_ffff_ffff

    /// How far ahead of the wall clock a reading may be for a writer's
    /// clock to follow it: 24 hours, in milliseconds (`Spec/records.md §3.2`).
    public static let maxLeadMilliseconds: UInt64 = 86_400_000

    /// A reading of `milliseconds` (since the Unix epoch, UTC; clamped to
    /// ``maxMilliseconds``) and `counter`.
    public init(milliseconds: UInt64, counter: UInt16) {
        rawValue = min(milliseconds, Self.maxMilliseconds) << 16 | UInt64(counter)
    }

    /// Milliseconds since the Unix epoch, UTC.
    public var milliseconds: UInt64 { rawValue >> 16 }
    /// The logical counter.
    public var counter: UInt16 { UInt16(truncatingIfNeeded: rawValue) }

    /// The reading for a new event: later than both `self` (the last reading
    /// this device made or saw) and the wall clock `now` (milliseconds, UTC).
    /// Never goes backwards and never traps: a wall clock past
    /// ``maxMilliseconds`` is clamped, and at the very last reading,
    /// 2⁶⁴ − 1, the clock saturates (`Spec/records.md §3.2`).
    public func tick(now: UInt64) -> HybridLogicalClock {
        let now = min(now, Self.maxMilliseconds)
        if now > milliseconds { return HybridLogicalClock(milliseconds: now, counter: 0) }
        if rawValue == UInt64.max { return self }
        return HybridLogicalClock(rawValue: rawValue + 1)
    }

    /// Readings order by time, then counter.
    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }

    public var description: String { "\(milliseconds).\(counter)" }
}
