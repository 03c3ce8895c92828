@_spi(Format) package import QuireFormat

/// Converting between JSON values and the CBOR kept in an entry's `extra`
/// (`Spec/import.md §3.3`).
///
/// JSON maps to CBOR one to one (integers to integers, other numbers to
/// 8-byte floats, objects to maps with text keys); only member order is not
/// kept (CBOR maps are in canonical order). A value nested deeper than the
/// room left under Quire's CBOR depth limit is kept as its JSON text inside
/// a one-member map `{"$json": text}`, so it still round-trips.
public enum JSONCBOR {
    /// The key of the one-member map holding a too-deep value's JSON text.
    public static let jsonTextKey = "$json"

    /// The CBOR form of `value`, nesting at most `depthBudget` levels below it.
    package static func cbor(_ value: JSONValue, depthBudget: Int) -> CBOR {
        if depthBudget <= 0, value.isContainer {
            return .map(CBORMap(text: [(jsonTextKey, .text(value.serialized))]))
        }
        switch value {
        case .null: return .null
        case .bool(let b): return .bool(b)
        case .int(let i): return .int(i)
        case .double(let d): return .double(d)
        case .string(let s): return .text(s)
        case .array(let a): return .array(a.map { cbor($0, depthBudget: depthBudget - 1) })
        case .object(let o):
            return .map(CBORMap(o.members.map { (CBOR.text($0.key), cbor($0.value, depthBudget: depthBudget - 1)) }))
        }
    }

    /// The JSON form of `value`: integers that fit in `Int64` as integers,
    /// larger ones as doubles, byte strings as lowercase hex strings, map
    /// keys that are not text as their description.
    package static func json(_ value: CBOR) -> JSONValue {
        switch value {
        case .null: return .null
        case .bool(let b): return .bool(b)
        case .unsigned, .negative:
            if let i = value.int64Value { return .int(i) }
            if case .unsigned(let u) = value { return .double(Double(u)) }
            if case .negative(let n) = value { return .double(-1 - Double(n)) }
            return .null
        case .double(let d): return .double(d)
        case .text(let s): return .string(s)
        case .bytes(let b):
            return .string(b.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined())
        case .array(let a): return .array(a.map(json))
        case .map(let m):
            if m.count == 1, let text = m[text: jsonTextKey], case .text(let t) = text,
                let parsed = try? JSONReader.parse(Array(t.utf8))
            {
                return parsed
            }
            var o = JSONObject()
            for e in m {
                let key: String
                if case .text(let k) = e.key { key = k } else { key = "\(e.key)" }
                o[key] = json(e.value)
            }
            return .object(o)
        }
    }
}

extension JSONValue {
    var isContainer: Bool {
        switch self {
        case .array, .object: true
        default: false
        }
    }
}
