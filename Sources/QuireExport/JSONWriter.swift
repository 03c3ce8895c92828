@_spi(Format) package import Quire

/// JSON text building blocks (RFC 8259), deterministic: the same values give
/// the same bytes (`Spec/export-json.md §4`).
public enum JSONWriter {
    /// A JSON string literal of `s`: `"` and `\` escaped, controls as
    /// `\n`, `\r`, `\t`, `\b`, `\f` or `\u00XX`, U+2028 and U+2029 as
    /// `\u2028`/`\u2029`; everything else as UTF-8.
    public static func string(_ s: String) -> String {
        EscapeBytes.transform(s, prefix: 0x22, suffix: 0x22, EscapeBytes.json)
    }

    /// The JSON encoding of a CBOR value (`Spec/export-json.md §4.5`):
    /// text → string; integers within ±(2⁵³−1) → number, others →
    /// `{"$int": "<decimal>"}`; floats → number always with `.` or an
    /// exponent (shortest round-trip text); byte strings →
    /// `{"$bytes": "<base64>"}`; maps whose keys are all text not starting
    /// with `$` → object in canonical key order, other maps →
    /// `{"$map": [[key, value], …]}`; arrays, booleans and null as themselves.
    package static func value(_ v: CBOR) -> String {
        var out = ""
        write(v, to: &out)
        return out
    }

    static let safeInteger: UInt64 = (1 << 53) - 1

    static func write(_ v: CBOR, to out: inout String) {
        switch v {
        case .unsigned(let u): out += u <= safeInteger ? String(u) : "{\"$int\": \"\(u)\"}"
        case .negative(let n):
            let text = n == UInt64.max ? "-18446744073709551616" : "-" + String(n + 1)
            out += n < safeInteger ? text : "{\"$int\": \"\(text)\"}"
        case .text(let s): out += string(s)
        case .bytes(let b): out += "{\"$bytes\": \"" + Base64.encode(b) + "\"}"
        case .bool(let b): out += b ? "true" : "false"
        case .null: out += "null"
        case .double(let d): out += YAMLWriter.floatText(d)
        case .array(let items):
            out += "["
            for (k, item) in items.enumerated() {
                if k > 0 { out += ", " }
                write(item, to: &out)
            }
            out += "]"
        case .map(let m):
            let plain = m.entries.allSatisfy { e in
                if case .text(let k) = e.key { return !k.hasPrefix("$") }
                return false
            }
            if plain {
                out += "{"
                for (k, e) in m.entries.enumerated() {
                    if k > 0 { out += ", " }
                    write(e.key, to: &out)
                    out += ": "
                    write(e.value, to: &out)
                }
                out += "}"
            } else {
                out += "{\"$map\": ["
                for (k, e) in m.entries.enumerated() {
                    if k > 0 { out += ", " }
                    out += "["
                    write(e.key, to: &out)
                    out += ", "
                    write(e.value, to: &out)
                    out += "]"
                }
                out += "]}"
            }
        }
    }

    /// An object with members in the given order.
    static func object(_ members: [(String, String)]) -> String {
        "{" + members.map { string($0.0) + ": " + $0.1 }.joined(separator: ", ") + "}"
    }
}
