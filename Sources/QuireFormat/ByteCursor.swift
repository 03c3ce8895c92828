/// Reads little-endian integers and byte runs from a byte buffer, in order.
///
/// `read*` consumes; `peek*` does not. Short input throws
/// ``ByteCursorError/shortInput(needed:available:)``; nothing traps.
package struct ByteReader: Sendable {
    /// The bytes being read.
    public let bytes: [UInt8]
    /// Index of the next byte to read.
    public private(set) var position: Int

    /// A reader at the start of `bytes`.
    public init(_ bytes: [UInt8]) {
        self.bytes = bytes
        position = 0
    }

    /// A reader over any collection of bytes (copied; indices start at 0).
    public init(_ bytes: some Collection<UInt8>) {
        self.init(Array(bytes))
    }

    /// Bytes left to read.
    public var remaining: Int { bytes.count - position }
    /// True when every byte has been read.
    public var isAtEnd: Bool { position == bytes.count }

    @inline(__always)
    private func require(_ n: Int) throws(ByteCursorError) {
        guard n >= 0, remaining >= n else { throw .shortInput(needed: n, available: remaining) }
    }

    /// Reads one byte.
    public mutating func readUInt8() throws(ByteCursorError) -> UInt8 {
        try require(1)
        defer { position += 1 }
        return bytes[position]
    }

    /// Reads a little-endian `UInt16`.
    public mutating func readUInt16() throws(ByteCursorError) -> UInt16 {
        try require(2)
        defer { position += 2 }
        return UInt16(bytes[position]) | UInt16(bytes[position + 1]) << 8
    }

    /// Reads a little-endian `UInt32`.
    public mutating func readUInt32() throws(ByteCursorError) -> UInt32 {
        try require(4)
        defer { position += 4 }
        return loadUInt32LE(bytes, at: position)
    }

    /// Reads a little-endian `UInt64`.
    public mutating func readUInt64() throws(ByteCursorError) -> UInt64 {
        try require(8)
        var v: UInt64 = 0
        for i in 0..<8 { v |= UInt64(bytes[position + i]) << (8 * UInt64(i)) }
        position += 8
        return v
    }

    /// Reads `count` bytes.
    public mutating func readBytes(_ count: Int) throws(ByteCursorError) -> [UInt8] {
        try require(count)
        defer { position += count }
        return Array(bytes[position..<position + count])
    }

    /// Reads `count` bytes as a slice of the underlying array.
    public mutating func readSlice(_ count: Int) throws(ByteCursorError) -> ArraySlice<UInt8> {
        try require(count)
        defer { position += count }
        return bytes[position..<position + count]
    }

    /// Skips `count` bytes.
    public mutating func skip(_ count: Int) throws(ByteCursorError) {
        try require(count)
        position += count
    }

    /// Looks at the next byte without consuming it.
    public func peekUInt8() throws(ByteCursorError) -> UInt8 {
        try require(1)
        return bytes[position]
    }
}

/// A read past the end of the input.
package enum ByteCursorError: Error, Sendable, Equatable {
    /// `needed` bytes were asked for but only `available` remained.
    case shortInput(needed: Int, available: Int)
}

/// Appends little-endian integers and byte runs to a growing buffer.
package struct ByteWriter: Sendable {
    /// The bytes written so far.
    public private(set) var bytes: [UInt8]

    /// An empty writer with room for `capacity` bytes.
    public init(capacity: Int = 0) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    /// Appends one byte.
    public mutating func writeUInt8(_ v: UInt8) { bytes.append(v) }

    /// Appends a little-endian `UInt16`.
    public mutating func writeUInt16(_ v: UInt16) {
        bytes.append(UInt8(truncatingIfNeeded: v))
        bytes.append(UInt8(truncatingIfNeeded: v >> 8))
    }

    /// Appends a little-endian `UInt32`.
    public mutating func writeUInt32(_ v: UInt32) {
        for i in 0..<4 { bytes.append(UInt8(truncatingIfNeeded: v >> (8 * UInt32(i)))) }
    }

    /// Appends a little-endian `UInt64`.
    public mutating func writeUInt64(_ v: UInt64) {
        for i in 0..<8 { bytes.append(UInt8(truncatingIfNeeded: v >> (8 * UInt64(i)))) }
    }

    /// Appends `data`.
    public mutating func writeBytes(_ data: some Sequence<UInt8>) { bytes.append(contentsOf: data) }
}

/// The little-endian `UInt32` at `offset` of `bytes`; the caller has checked
/// the bounds.
@inline(__always)
func loadUInt32LE(_ bytes: [UInt8], at offset: Int) -> UInt32 {
    UInt32(bytes[offset]) | UInt32(bytes[offset + 1]) << 8 | UInt32(bytes[offset + 2]) << 16
        | UInt32(bytes[offset + 3]) << 24
}

/// Little-endian encoding of a `UInt16`.
@inline(__always)
func littleEndianBytes(_ v: UInt16) -> [UInt8] { [UInt8(truncatingIfNeeded: v), UInt8(truncatingIfNeeded: v >> 8)] }

/// Little-endian encoding of a `UInt32`.
@inline(__always)
func littleEndianBytes(_ v: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: v >> (8 * UInt32($0))) } }

/// Little-endian encoding of a `UInt64`.
@inline(__always)
func littleEndianBytes(_ v: UInt64) -> [UInt8] { (0..<8).map { UInt8(truncatingIfNeeded: v >> (8 * UInt64($0))) } }
