/// A JSON value (RFC 8259) as importers read it and the Day One mapping
/// writes it back (`Spec/import.md §3`).
///
/// Objects keep their members in document order. Numbers keep whether they
/// were written as integers: an integer literal that fits in 64 bits is
/// ``int(_:)``; every other number is ``double(_:)``.
public indirect enum JSONValue: Sendable, Equatable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// An integer literal that fits in `Int64`.
    case int(Int64)
    /// Any other number, as the nearest `Double`.
    case double(Double)
    /// A string.
    case string(String)
    /// An array.
    case array([JSONValue])
    /// An object: its members in document order.
    case object(JSONObject)

    /// True when `self` and `other` are the same JSON value: numbers compare
    /// by value (`1` equals `1.0`), objects by their members whatever the
    /// order, strings by their Unicode scalars.
    public func isSameValue(as other: JSONValue) -> Bool {
        switch (self, other) {
        case (.null, .null): return true
        case (.bool(let a), .bool(let b)): return a == b
        case (.int(let a), .int(let b)): return a == b
        case (.int(let a), .double(let b)), (.double(let b), .int(let a)): return Double(a) == b
        case (.double(let a), .double(let b)): return a == b
        case (.string(let a), .string(let b)): return a.unicodeScalars.elementsEqual(b.unicodeScalars)
        case (.array(let a), .array(let b)): return a.count == b.count && zip(a, b).allSatisfy { $0.isSameValue(as: $1) }
        case (.object(let a), .object(let b)):
            guard a.count == b.count else { return false }
            for m in a.members {
                guard let v = b[m.key], m.value.isSameValue(as: v) else { return false }
            }
            return true
        default: return false
        }
    }

    /// The string, if this is a string.
    public var stringValue: String? { if case .string(let s) = self { s } else { nil } }
    /// The object, if this is an object.
    public var objectValue: JSONObject? { if case .object(let o) = self { o } else { nil } }
    /// The array, if this is an array.
    public var arrayValue: [JSONValue]? { if case .array(let a) = self { a } else { nil } }
    /// The boolean, if this is `true` or `false`.
    public var boolValue: Bool? { if case .bool(let b) = self { b } else { nil } }
    /// The number as a `Double`, if this is a number.
    public var doubleValue: Double? {
        switch self {
        case .int(let i): Double(i)
        case .double(let d): d
        default: nil
        }
    }

    /// Compact JSON text (UTF-8, no insignificant white space, `/` not
    /// escaped, non-ASCII written as is). Doubles use Swift's shortest
    /// round-tripping spelling; a whole double keeps a `.0`.
    public var serialized: String {
        var out = ""
        write(to: &out, indent: nil, level: 0)
        return out
    }

    /// JSON text indented with `indent` per level (Day One uses a tab),
    /// members in their order.
    public func serialized(indent: String) -> String {
        var out = ""
        write(to: &out, indent: indent, level: 0)
        return out
    }

    private func write(to out: inout String, indent: String?, level: Int) {
        switch self {
        case .null: out += "null"
        case .bool(let b): out += b ? "true" : "false"
        case .int(let i): out += String(i)
        case .double(let d):
            if d.isFinite { out += d == d.rounded() && abs(d) < 1e15 ? String(format: d) : "\(d)" } else { out += "null" }
        case .string(let s): Self.writeString(s, to: &out)
        case .array(let items):
            if items.isEmpty {
                out += "[]"
                return
            }
            out += "["
            for (i, item) in items.enumerated() {
                if i > 0 { out += "," }
                Self.newline(&out, indent, level + 1)
                item.write(to: &out, indent: indent, level: level + 1)
            }
            Self.newline(&out, indent, level)
            out += "]"
        case .object(let o):
            if o.members.isEmpty {
                out += "{}"
                return
            }
            out += "{"
            for (i, m) in o.members.enumerated() {
                if i > 0 { out += "," }
                Self.newline(&out, indent, level + 1)
                Self.writeString(m.key, to: &out)
                out += indent == nil ? ":" : ": "
                m.value.write(to: &out, indent: indent, level: level + 1)
            }
            Self.newline(&out, indent, level)
            out += "}"
        }
    }

    private static func newline(_ out: inout String, _ indent: String?, _ level: Int) {
        guard let indent else { return }
        out += "\n"
        for _ in 0..<level { out += indent }
    }

    private static func writeString(_ s: String, to out: inout String) {
        out += "\""
        for u in s.unicodeScalars {
            switch u {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case "\u{08}": out += "\\b"
            case "\u{0C}": out += "\\f"
            default:
                if u.value < 0x20 {
                    let h = String(u.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - h.count) + h
                } else {
                    out.unicodeScalars.append(u)
                }
            }
        }
        out += "\""
    }
}

extension String {
    /// A whole double written with `.0`.
    fileprivate init(format d: Double) { self = String(Int64(d)) + ".0" }
}

/// A JSON object: members in document order (a later duplicate key
/// replaces an earlier one's value, keeping the first position).
public struct JSONObject: Sendable, Equatable {
    /// One member.
    public struct Member: Sendable, Equatable {
        /// The key.
        public var key: String
        /// The value.
        public var value: JSONValue
    }

    /// The members in order.
    public private(set) var members: [Member] = []

    /// An empty object.
    public init() {}

    /// An object of these members, in this order.
    public init(_ pairs: [(String, JSONValue)]) {
        for (k, v) in pairs { self[k] = v }
    }

    /// Number of members.
    public var count: Int { members.count }
    /// The keys in order.
    public var keys: [String] { members.map(\.key) }

    /// The value for `key`; setting nil removes the member, setting a new key appends it.
    public subscript(key: String) -> JSONValue? {
        get {
            for m in members where m.key.utf8.elementsEqual(key.utf8) { return m.value }
            return nil
        }
        set {
            if let i = members.firstIndex(where: { $0.key.utf8.elementsEqual(key.utf8) }) {
                if let newValue { members[i].value = newValue } else { members.remove(at: i) }
            } else if let newValue {
                members.append(Member(key: key, value: newValue))
            }
        }
    }
}

extension JSONValue {
    /// Parses one JSON document (UTF-8, an optional byte-order mark) held in memory.
    ///
    /// - Throws: ``JSONReadError`` with the byte offset of the first problem.
    public static func parse(_ bytes: [UInt8]) throws(JSONReadError) -> JSONValue {
        try JSONReader.parse(bytes)
    }
}
