import QuireSystem

/// A CBOR data item (RFC 8949) in Quire's deterministic profile
/// (`Spec/records.md §1`).
///
/// The profile is RFC 8949 §4.2.1 core deterministic encoding with these
/// rules: integers and lengths in their shortest form; definite lengths only;
/// map keys unique and sorted by the bytewise order of their encodings;
/// floating-point values always as 8-byte IEEE 754 (major 7, additional
/// info 27), finite only; no tags; the only simple values are `false`, `true`
/// and `null`; text strings valid UTF-8. ``CBORDecoder`` rejects anything
/// else, so every value has exactly one encoding.
///
/// Equality and hashing compare text by its UTF-8 bytes, not by Unicode
/// canonical equivalence as `String` does: `"é"` precomposed and decomposed
/// are different CBOR items with different encodings.
@_spi(Format) public indirect enum CBOR: Sendable, Hashable {
    /// A non-negative integer (major type 0).
    case unsigned(UInt64)
    /// A negative integer −1 − n (major type 1), holding n.
    case negative(UInt64)
    /// A byte string (major type 2).
    case bytes([UInt8])
    /// A UTF-8 text string (major type 3).
    case text(String)
    /// An array (major type 4).
    case array([CBOR])
    /// A map (major type 5), in canonical key order.
    case map(CBORMap)
    /// `false` or `true`.
    case bool(Bool)
    /// `null`.
    case null
    /// A finite 64-bit float.
    case double(Double)

    /// An integer as the right major type.
    public static func int(_ v: Int64) -> CBOR {
        v >= 0 ? .unsigned(UInt64(v)) : .negative(UInt64(-(v + 1)))
    }

    /// Equality of CBOR items: text by UTF-8 bytes, floats by bit pattern.
    public static func == (lhs: CBOR, rhs: CBOR) -> Bool {
        switch (lhs, rhs) {
        case (.unsigned(let a), .unsigned(let b)): return a == b
        case (.negative(let a), .negative(let b)): return a == b
        case (.bytes(let a), .bytes(let b)): return a == b
        case (.text(let a), .text(let b)): return a.utf8.elementsEqual(b.utf8)
        case (.array(let a), .array(let b)): return a == b
        case (.map(let a), .map(let b)): return a == b
        case (.bool(let a), .bool(let b)): return a == b
        case (.null, .null): return true
        case (.double(let a), .double(let b)): return a.bitPattern == b.bitPattern
        default: return false
        }
    }

    /// Hashes consistently with ``==(_:_:)``.
    public func hash(into hasher: inout Hasher) {
        switch self {
        case .unsigned(let v):
            hasher.combine(0)
            hasher.combine(v)
        case .negative(let v):
            hasher.combine(1)
            hasher.combine(v)
        case .bytes(let b):
            hasher.combine(2)
            hasher.combine(b)
        case .text(let s):
            hasher.combine(3)
            for u in s.utf8 { hasher.combine(u) }
        case .array(let a):
            hasher.combine(4)
            hasher.combine(a)
        case .map(let m):
            hasher.combine(5)
            hasher.combine(m)
        case .bool(let b):
            hasher.combine(6)
            hasher.combine(b)
        case .null: hasher.combine(7)
        case .double(let d):
            hasher.combine(8)
            hasher.combine(d.bitPattern)
        }
    }

    /// The value as a signed integer, if it is an integer that fits.
    public var int64Value: Int64? {
        switch self {
        case .unsigned(let u): return u <= UInt64(Int64.max) ? Int64(u) : nil
        case .negative(let n): return n <= UInt64(Int64.max) ? -Int64(n) - 1 : nil
        default: return nil
        }
    }
}

/// A CBOR map whose entries are kept in canonical order (sorted by the
/// bytewise order of the encoded keys, no duplicates).
@_spi(Format) public struct CBORMap: Sendable, Hashable, Sequence {
    /// One key–value pair.
    public struct Entry: Sendable, Hashable {
        /// The key.
        public let key: CBOR
        /// The value.
        public let value: CBOR
    }

    /// The entries, in canonical order.
    public private(set) var entries: [Entry]

    /// An empty map.
    public init() { entries = [] }

    /// A map of the given pairs; later duplicates replace earlier ones.
    public init(_ pairs: [(CBOR, CBOR)]) {
        entries = []
        for (k, v) in pairs { self[k] = v }
    }

    /// A map of text keys.
    public init(text pairs: [(String, CBOR)]) {
        self.init(pairs.map { (CBOR.text($0.0), $0.1) })
    }

    init(canonicalEntries: [Entry]) { entries = canonicalEntries }

    /// Number of entries.
    public var count: Int { entries.count }

    /// The value for `key`, or nil. Setting nil removes the entry.
    public subscript(key: CBOR) -> CBOR? {
        get { entries.first(where: { $0.key == key })?.value }
        set {
            entries.removeAll { $0.key == key }
            guard let newValue else { return }
            let index: Int?
            if case .text(let k) = key {
                // Text keys, the usual case, compare as their encodings do
                // without encoding each (length first, then the UTF-8 bytes).
                let encoded = k.utf8
                index = entries.firstIndex { e in
                    guard case .text(let other) = e.key else {
                        return !CBOREncoder.encode(e.key).lexicographicallyPrecedes(CBOREncoder.encode(key))
                    }
                    let o = other.utf8
                    return o.count != encoded.count ? o.count > encoded.count : !o.lexicographicallyPrecedes(encoded)
                }
            } else {
                let encoded = CBOREncoder.encode(key)
                index = entries.firstIndex { CBOREncoder.encode($0.key).lexicographicallyPrecedes(encoded) == false }
            }
            entries.insert(Entry(key: key, value: newValue), at: index ?? entries.count)
        }
    }

    /// The value for the text key `key`.
    public subscript(text key: String) -> CBOR? {
        get { self[.text(key)] }
        set { self[.text(key)] = newValue }
    }

    public func makeIterator() -> IndexingIterator<[Entry]> { entries.makeIterator() }

    /// Makes room for `count` entries (a record's writer knows about how
    /// many fields it sets: no regrowing as they are added).
    mutating func reserveCapacity(_ count: Int) { entries.reserveCapacity(count) }
}

/// Encodes ``CBOR`` values deterministically.
@_spi(Format) public enum CBOREncoder {
    /// The one canonical encoding of `value`.
    public static func encode(_ value: CBOR) -> [UInt8] {
        var out: [UInt8] = []
        // The exact size: a record of a few KiB is not copied as it grows.
        out.reserveCapacity(encodedByteCount(value))
        append(value, to: &out)
        return out
    }

    /// The length of the canonical encoding of `value`, in bytes.
    static func encodedByteCount(_ value: CBOR) -> Int {
        switch value {
        case .unsigned(let v), .negative(let v): return headByteCount(v)
        case .bytes(let b): return headByteCount(UInt64(b.count)) + b.count
        case .text(let s):
            let n = s.utf8.count
            return headByteCount(UInt64(n)) + n
        case .array(let items):
            var n = headByteCount(UInt64(items.count))
            for item in items { n += encodedByteCount(item) }
            return n
        case .map(let m):
            var n = headByteCount(UInt64(m.count))
            for e in m.entries { n += encodedByteCount(e.key) + encodedByteCount(e.value) }
            return n
        case .bool, .null: return 1
        case .double: return 9
        }
    }

    /// The length of the head ``head(_:_:_:)`` writes for argument `v`.
    private static func headByteCount(_ v: UInt64) -> Int {
        switch v {
        case 0..<24: 1
        case 24..<0x100: 2
        case 0x100..<0x1_0000: 3
        case 0x1_0000..<0x1_0000_0000: 5
        default: 9
        }
    }

    /// Appends the canonical encoding of `value` to `out`.
    public static func append(_ value: CBOR, to out: inout [UInt8]) {
        switch value {
        case .unsigned(let v): head(0, v, &out)
        case .negative(let v): head(1, v, &out)
        case .bytes(let b):
            head(2, UInt64(b.count), &out)
            out.append(contentsOf: b)
        case .text(let s):
            let u = s.utf8
            head(3, UInt64(u.count), &out)
            out.append(contentsOf: u)
        case .array(let items):
            head(4, UInt64(items.count), &out)
            for item in items { append(item, to: &out) }
        case .map(let m):
            head(5, UInt64(m.count), &out)
            for e in m.entries {
                append(e.key, to: &out)
                append(e.value, to: &out)
            }
        case .bool(let b): out.append(b ? 0xf5 : 0xf4)
        case .null: out.append(0xf6)
        case .double(let d):
            out.append(0xfb)
            let bits = d.bitPattern
            for i in (0..<8).reversed() { out.append(UInt8(truncatingIfNeeded: bits >> (8 * UInt64(i)))) }
        }
    }

    private static func head(_ major: UInt8, _ v: UInt64, _ out: inout [UInt8]) {
        let m = major << 5
        switch v {
        case 0..<24: out.append(m | UInt8(v))
        case 24..<0x100:
            out.append(m | 24)
            out.append(UInt8(v))
        case 0x100..<0x1_0000:
            out.append(m | 25)
            out.append(UInt8(v >> 8))
            out.append(UInt8(truncatingIfNeeded: v))
        case 0x1_0000..<0x1_0000_0000:
            out.append(m | 26)
            for i in (0..<4).reversed() { out.append(UInt8(truncatingIfNeeded: v >> (8 * UInt64(i)))) }
        default:
            out.append(m | 27)
            for i in (0..<8).reversed() { out.append(UInt8(truncatingIfNeeded: v >> (8 * UInt64(i)))) }
        }
    }
}

/// Why a byte string is not a CBOR item in Quire's deterministic profile.
@_spi(Format) public struct CBORError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Byte offset within the input where decoding stopped.
    public let offset: Int
    /// What was wrong.
    public let reason: String

    public var description: String { "\(reason) at byte \(offset)" }
}

/// Decodes and validates CBOR in Quire's deterministic profile.
///
/// Work is bounded by the input: every count is checked against the bytes
/// left before anything is allocated, and nesting is limited to
/// ``Limits/maxCBORDepth``.
@_spi(Format) public struct CBORDecoder {
    // Valid only for the call that made the decoder: the initialiser is
    // private and every decoder lives inside one `decode` call.
    private let bytes: UnsafeRawBufferPointer
    private var position = 0

    private init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    /// Decodes exactly one item that spans all of `bytes`.
    ///
    /// - Throws: ``CBORError`` for truncation, trailing bytes, or any
    ///   departure from the deterministic profile.
    public static func decode(_ bytes: [UInt8]) throws(CBORError) -> CBOR {
        try bytes.withBytes { (raw: UnsafeRawBufferPointer) throws(CBORError) -> CBOR in try decode(raw) }
    }

    /// Decodes exactly one item that spans all of `raw`, reading it in
    /// place: a caller decoding a secret from guarded memory makes no copy of
    /// the whole input (byte strings in the result are still copies).
    ///
    /// - Throws: ``CBORError``.
    public static func decode(_ raw: UnsafeRawBufferPointer) throws(CBORError) -> CBOR {
        var d = CBORDecoder(raw)
        let value = try d.item(depth: 0)
        guard d.position == raw.count else {
            throw CBORError(offset: d.position, reason: "\(raw.count - d.position) trailing bytes after the item")
        }
        return value
    }

    /// Decodes one item at the start of `bytes` and returns it with the number
    /// of bytes it used.
    ///
    /// - Throws: ``CBORError``.
    public static func decodePrefix(_ bytes: [UInt8]) throws(CBORError) -> (CBOR, Int) {
        try bytes.withBytes { (raw: UnsafeRawBufferPointer) throws(CBORError) -> (CBOR, Int) in
            var d = CBORDecoder(raw)
            let value = try d.item(depth: 0)
            return (value, d.position)
        }
    }

    /// For a canonical map whose keys are text and whose values are byte
    /// strings, the byte range of each value within `raw`, without copying
    /// any value (used to find a keyring's content inside guarded memory).
    ///
    /// - Throws: ``CBORError`` when `raw` is not exactly such a map.
    public static func byteStringFields(_ raw: UnsafeRawBufferPointer) throws(CBORError) -> [String: Range<Int>] {
        var d = CBORDecoder(raw)
        let initial = try d.byte()
        guard initial >> 5 == 5 else { throw d.fail("expected a map") }
        let n = try d.length(initial & 0x1f, unit: 2)
        var out: [String: Range<Int>] = [:]
        var previousKey: [UInt8]? = nil
        for _ in 0..<n {
            let keyStart = d.position
            guard case .text(let key) = try d.item(depth: 1) else { throw d.fail("expected a text key") }
            let keyBytes = Array(raw[keyStart..<d.position])
            if let prev = previousKey, !prev.lexicographicallyPrecedes(keyBytes) {
                throw CBORError(offset: keyStart, reason: "map keys are duplicated or not in canonical order")
            }
            previousKey = keyBytes
            let head = try d.byte()
            guard head >> 5 == 2 else { throw d.fail("expected a byte string") }
            let count = try d.length(head & 0x1f, unit: 1)
            out[key] = d.position..<(d.position + count)
            d.position += count
        }
        guard d.position == raw.count else { throw CBORError(offset: d.position, reason: "trailing bytes after the map") }
        return out
    }

    /// For a canonical map whose keys are text, the byte range of each
    /// value within `raw`: a byte string's contents (`isBytes`, its head
    /// left out, never copied), any other item whole (to decode with
    /// ``decode(_:)-(UnsafeRawBufferPointer)``). Lets a large map of byte
    /// string columns be read in place (the index cache's summaries).
    ///
    /// - Throws: ``CBORError`` when `raw` is not exactly such a map.
    package static func mapFieldRanges(_ raw: UnsafeRawBufferPointer) throws(CBORError) -> [String: (isBytes: Bool, range: Range<Int>)] {
        var d = CBORDecoder(raw)
        let initial = try d.byte()
        guard initial >> 5 == 5 else { throw d.fail("expected a map") }
        let n = try d.length(initial & 0x1f, unit: 2)
        var out: [String: (isBytes: Bool, range: Range<Int>)] = [:]
        var previousKey: UnsafeRawBufferPointer? = nil
        for _ in 0..<n {
            let keyStart = d.position
            guard case .text(let key) = try d.item(depth: 1) else { throw d.fail("expected a text key") }
            let keyBytes = UnsafeRawBufferPointer(rebasing: raw[keyStart..<d.position])
            if let prev = previousKey, !prev.lexicographicallyPrecedes(keyBytes) {
                throw CBORError(offset: keyStart, reason: "map keys are duplicated or not in canonical order")
            }
            previousKey = keyBytes
            guard d.position < raw.count else { throw d.fail("truncated map") }
            if raw[d.position] >> 5 == 2 {
                let head = try d.byte()
                let count = try d.length(head & 0x1f, unit: 1)
                out[key] = (true, d.position..<(d.position + count))
                d.position += count
            } else {
                let start = d.position
                _ = try d.item(depth: 1)
                out[key] = (false, start..<d.position)
            }
        }
        guard d.position == raw.count else { throw CBORError(offset: d.position, reason: "trailing bytes after the map") }
        return out
    }

    private func fail(_ reason: String) -> CBORError { CBORError(offset: position, reason: reason) }

    private mutating func byte() throws(CBORError) -> UInt8 {
        guard position < bytes.count else { throw fail("unexpected end of input") }
        defer { position += 1 }
        return bytes[position]
    }

    private mutating func argument(_ info: UInt8) throws(CBORError) -> UInt64 {
        let width: Int
        switch info {
        case 0..<24: return UInt64(info)
        case 24: width = 1
        case 25: width = 2
        case 26: width = 4
        case 27: width = 8
        case 31: throw fail("indefinite length is not allowed")
        default: throw fail("reserved additional information \(info)")
        }
        guard bytes.count - position >= width else { throw fail("unexpected end of input") }
        var v: UInt64 = 0
        for _ in 0..<width {
            v = v << 8 | UInt64(bytes[position])
            position += 1
        }
        let minimum: UInt64 =
            switch width {
            case 1: 24
            case 2: 0x100
            case 4: 0x1_0000
            default: 0x1_0000_0000
            }
        guard v >= minimum else { throw fail("integer or length not in its shortest form") }
        return v
    }

    private mutating func length(_ info: UInt8, unit: Int) throws(CBORError) -> Int {
        let n = try argument(info)
        // Every element takes at least `unit` bytes, so a count larger than
        // what is left cannot be honest; checking here keeps allocation
        // proportional to the input.
        guard n <= UInt64(bytes.count - position) / UInt64(unit) else {
            throw fail("length \(n) exceeds the \(bytes.count - position) bytes left")
        }
        return Int(n)
    }

    private mutating func item(depth: Int) throws(CBORError) -> CBOR {
        guard depth <= Limits.maxCBORDepth else { throw fail("nesting deeper than \(Limits.maxCBORDepth)") }
        let initial = try byte()
        let major = initial >> 5
        let info = initial & 0x1f
        switch major {
        case 0:
            return .unsigned(try argument(info))
        case 1:
            return .negative(try argument(info))
        case 2:
            let n = try length(info, unit: 1)
            defer { position += n }
            return .bytes(Array(UnsafeRawBufferPointer(rebasing: bytes[position..<position + n])))
        case 3:
            let n = try length(info, unit: 1)
            let slice = UnsafeRawBufferPointer(rebasing: bytes[position..<position + n])
            guard let s = String(validating: slice, as: UTF8.self) else { throw fail("text is not valid UTF-8") }
            position += n
            return .text(s)
        case 4:
            let n = try length(info, unit: 1)
            var items: [CBOR] = []
            items.reserveCapacity(n)
            for _ in 0..<n { items.append(try item(depth: depth + 1)) }
            return .array(items)
        case 5:
            let n = try length(info, unit: 2)
            var entries: [CBORMap.Entry] = []
            entries.reserveCapacity(n)
            var previousKey: UnsafeRawBufferPointer? = nil
            for _ in 0..<n {
                let keyStart = position
                let key = try item(depth: depth + 1)
                let keyBytes = UnsafeRawBufferPointer(rebasing: bytes[keyStart..<position])
                if let prev = previousKey {
                    guard prev.lexicographicallyPrecedes(keyBytes) else {
                        throw CBORError(offset: keyStart, reason: "map keys are duplicated or not in canonical order")
                    }
                }
                previousKey = keyBytes
                let value = try item(depth: depth + 1)
                entries.append(CBORMap.Entry(key: key, value: value))
            }
            return .map(CBORMap(canonicalEntries: entries))
        case 6:
            throw fail("tags are not allowed")
        default:
            switch info {
            case 20: return .bool(false)
            case 21: return .bool(true)
            case 22: return .null
            case 27:
                guard bytes.count - position >= 8 else { throw fail("unexpected end of input") }
                var bits: UInt64 = 0
                for _ in 0..<8 {
                    bits = bits << 8 | UInt64(bytes[position])
                    position += 1
                }
                let d = Double(bitPattern: bits)
                guard d.isFinite else { throw fail("NaN and infinity are not allowed") }
                return .double(d)
            case 25, 26:
                throw fail("floats must be encoded in 8 bytes")
            default:
                throw fail("simple value \(info) is not allowed")
            }
        }
    }
}
