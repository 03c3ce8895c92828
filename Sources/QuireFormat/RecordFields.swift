/// Reads the fields of a record body map by name, checking each known
/// field's type and keeping every field it was not asked for
/// (`Spec/records.md §1.2`: unknown fields are kept and written back
/// unchanged).
struct FieldReader {
    private let map: CBORMap
    /// One flag per map entry: asked for by name.
    private var asked: [Bool]
    let location: FrameLocation?
    let context: String

    init(_ value: CBOR, context: String, location: FrameLocation?) throws(FormatError) {
        guard case .map(let m) = value else {
            throw .malformedRecord(location, reason: "\(context) must be a map")
        }
        map = m
        asked = [Bool](repeating: false, count: m.count)
        self.context = context
        self.location = location
    }

    private func wrong(_ key: String, _ expected: String) -> FormatError {
        .malformedRecord(location, reason: "\(context) field \"\(key)\" must be \(expected)")
    }

    mutating func value(_ key: String) -> CBOR? {
        let entries = map.entries
        for i in entries.indices {
            if case .text(let k) = entries[i].key, k.utf8.elementsEqual(key.utf8) {
                asked[i] = true
                return entries[i].value
            }
        }
        return nil
    }

    mutating func bytes(_ key: String, count: Int? = nil) throws(FormatError) -> [UInt8]? {
        guard let v = value(key) else { return nil }
        guard case .bytes(let b) = v else { throw wrong(key, "a byte string") }
        if let count, b.count != count { throw wrong(key, "\(count) bytes") }
        return b
    }

    mutating func id<T: ByteIdentifier>(_ key: String, as: T.Type) throws(FormatError) -> T? {
        guard let b = try bytes(key, count: T.byteCount) else { return nil }
        return T(unchecked: b)
    }

    mutating func ids<T: ByteIdentifier>(_ key: String, as: T.Type, limit: Int) throws(FormatError) -> [T]? {
        guard let items = try array(key) else { return nil }
        guard items.count <= limit else {
            throw .sizeLimitExceeded(location, what: "\(context) \"\(key)\" count", size: UInt64(items.count), limit: UInt64(limit))
        }
        var out: [T] = []
        for item in items {
            guard case .bytes(let b) = item, b.count == T.byteCount else { throw wrong(key, "a list of \(T.byteCount)-byte ids") }
            out.append(T(unchecked: b))
        }
        return out
    }

    mutating func text(_ key: String) throws(FormatError) -> String? {
        guard let v = value(key) else { return nil }
        guard case .text(let s) = v else { throw wrong(key, "text") }
        return s
    }

    mutating func texts(_ key: String) throws(FormatError) -> [String]? {
        guard let items = try array(key) else { return nil }
        var out: [String] = []
        for item in items {
            guard case .text(let s) = item else { throw wrong(key, "a list of text") }
            out.append(s)
        }
        return out
    }

    mutating func unsigned(_ key: String) throws(FormatError) -> UInt64? {
        guard let v = value(key) else { return nil }
        guard case .unsigned(let u) = v else { throw wrong(key, "an unsigned integer") }
        return u
    }

    mutating func int(_ key: String) throws(FormatError) -> Int64? {
        guard let v = value(key) else { return nil }
        guard let i = v.int64Value else { throw wrong(key, "an integer") }
        return i
    }

    mutating func bool(_ key: String) throws(FormatError) -> Bool? {
        guard let v = value(key) else { return nil }
        guard case .bool(let b) = v else { throw wrong(key, "true or false") }
        return b
    }

    /// A float; integers are accepted too (a float-valued field may hold a
    /// whole number written by another implementation).
    mutating func double(_ key: String) throws(FormatError) -> Double? {
        guard let v = value(key) else { return nil }
        switch v {
        case .double(let d): return d
        case .unsigned(let u): return Double(u)
        case .negative(let n): return -1 - Double(n)
        default: throw wrong(key, "a number")
        }
    }

    mutating func array(_ key: String) throws(FormatError) -> [CBOR]? {
        guard let v = value(key) else { return nil }
        guard case .array(let a) = v else { throw wrong(key, "an array") }
        return a
    }

    mutating func map(_ key: String) throws(FormatError) -> CBORMap? {
        guard let v = value(key) else { return nil }
        guard case .map(let m) = v else { throw wrong(key, "a map") }
        return m
    }

    /// Every field not asked for so far.
    var unknown: CBORMap {
        var kept: [CBORMap.Entry] = []
        for (i, e) in map.entries.enumerated() where !asked[i] { kept.append(e) }
        return CBORMap(canonicalEntries: kept)
    }
}

/// Builds a record body map, leaving out fields that hold their default.
struct FieldWriter {
    private(set) var map: CBORMap

    init(unknown: CBORMap = CBORMap()) {
        map = unknown
        // An entry body sets up to 15 fields: room for them all at once.
        map.reserveCapacity(unknown.count + 16)
    }

    mutating func set(_ key: String, _ value: CBOR?) { if let value { map[text: key] = value } }
    mutating func bytes(_ key: String, _ b: [UInt8]?) { if let b { map[text: key] = .bytes(b) } }
    mutating func id(_ key: String, _ id: (some ByteIdentifier)?) { if let id { map[text: key] = .bytes(id.bytes) } }
    mutating func ids(_ key: String, _ ids: [some ByteIdentifier]) {
        if !ids.isEmpty { map[text: key] = .array(ids.map { .bytes($0.bytes) }) }
    }
    mutating func text(_ key: String, _ s: String?, default d: String? = "") {
        if let s, s != d { map[text: key] = .text(s) }
    }
    mutating func texts(_ key: String, _ list: [String]) {
        if !list.isEmpty { map[text: key] = .array(list.map { .text($0) }) }
    }
    mutating func unsigned(_ key: String, _ u: UInt64?, default d: UInt64? = nil) {
        if let u, u != d { map[text: key] = .unsigned(u) }
    }
    mutating func int(_ key: String, _ i: Int64?, default d: Int64? = nil) {
        if let i, i != d { map[text: key] = .int(i) }
    }
    mutating func bool(_ key: String, _ b: Bool, default d: Bool = false) {
        if b != d { map[text: key] = .bool(b) }
    }
    mutating func double(_ key: String, _ v: Double?) { if let v { map[text: key] = .double(v) } }
    mutating func map(_ key: String, _ m: CBORMap?) { if let m, m.count > 0 { map[text: key] = .map(m) } }

    var value: CBOR { .map(map) }
    var encoded: [UInt8] { CBOREncoder.encode(.map(map)) }
}

/// Decodes a record body, mapping CBOR errors to ``FormatError/malformedRecord(_:reason:)``.
func decodeBody(_ bytes: [UInt8], location: FrameLocation?) throws(FormatError) -> CBOR {
    do {
        return try CBORDecoder.decode(bytes)
    } catch {
        throw .malformedRecord(location, reason: error.description)
    }
}
