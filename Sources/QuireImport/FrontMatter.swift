@_spi(Format) import Quire

/// Reads the YAML the Markdown export writes in front matter
/// (`Spec/export-json.md §3.4`): flow nodes only — double-quoted strings,
/// integers, floats, `!!binary "…"`, `true`/`false`/`null`, `[…]` and
/// `{…}` with plain or quoted keys — into CBOR values.
struct FrontMatterParser {
    struct Failure: Error, CustomStringConvertible {
        let reason: String
        var description: String { reason }
    }

    private let b: [UInt8]
    private var i = 0

    init(_ text: Substring) { b = Array(text.utf8) }

    /// Parses one whole flow value.
    static func value(_ text: Substring) throws(Failure) -> CBOR {
        var p = FrontMatterParser(text)
        let v = try p.node(depth: 0)
        p.space()
        guard p.i == p.b.count else {
            throw Failure(reason: "unexpected text after a value: \(String(decoding: p.b[p.i...], as: UTF8.self).prefix(40))")
        }
        return v
    }

    private mutating func space() { while i < b.count, b[i] == 0x20 || b[i] == 0x09 { i += 1 } }

    private mutating func node(depth: Int) throws(Failure) -> CBOR {
        guard depth < 32 else { throw Failure(reason: "nesting too deep") }
        space()
        guard i < b.count else { throw Failure(reason: "a value is missing") }
        switch b[i] {
        case UInt8(ascii: "\""): return .text(try quoted())
        case UInt8(ascii: "["):
            i += 1
            var items: [CBOR] = []
            space()
            if i < b.count, b[i] == UInt8(ascii: "]") {
                i += 1
                return .array(items)
            }
            while true {
                items.append(try node(depth: depth + 1))
                space()
                guard i < b.count else { throw Failure(reason: "unterminated [") }
                if b[i] == UInt8(ascii: "]") {
                    i += 1
                    return .array(items)
                }
                guard b[i] == UInt8(ascii: ",") else { throw Failure(reason: "expected , or ]") }
                i += 1
            }
        case UInt8(ascii: "{"):
            i += 1
            var pairs: [(CBOR, CBOR)] = []
            space()
            if i < b.count, b[i] == UInt8(ascii: "}") {
                i += 1
                return .map(CBORMap(pairs))
            }
            while true {
                space()
                let key: CBOR
                if i < b.count, isPlainKeyByte(b[i]), !startsScalar() {
                    let s = i
                    while i < b.count, isPlainKeyByte(b[i]) { i += 1 }
                    key = .text(String(decoding: b[s..<i], as: UTF8.self))
                } else {
                    key = try node(depth: depth + 1)
                }
                space()
                guard i < b.count, b[i] == UInt8(ascii: ":") else { throw Failure(reason: "expected : after a key") }
                i += 1
                pairs.append((key, try node(depth: depth + 1)))
                space()
                guard i < b.count else { throw Failure(reason: "unterminated {") }
                if b[i] == UInt8(ascii: "}") {
                    i += 1
                    return .map(CBORMap(pairs))
                }
                guard b[i] == UInt8(ascii: ",") else { throw Failure(reason: "expected , or }") }
                i += 1
            }
        case UInt8(ascii: "!"):
            let tag = Array("!!binary".utf8)
            guard b.count - i >= tag.count, b[i..<i + tag.count].elementsEqual(tag) else { throw Failure(reason: "unknown tag") }
            i += tag.count
            space()
            guard i < b.count, b[i] == UInt8(ascii: "\"") else { throw Failure(reason: "!!binary needs a quoted value") }
            guard let bytes = Self.base64(try quoted()) else { throw Failure(reason: "bad base64") }
            return .bytes(bytes)
        default:
            let s = i
            while i < b.count, ![UInt8(ascii: ","), UInt8(ascii: "]"), UInt8(ascii: "}"), UInt8(ascii: ":"), 0x20, 0x09].contains(b[i]) {
                i += 1
            }
            let word = String(decoding: b[s..<i], as: UTF8.self)
            switch word {
            case "true": return .bool(true)
            case "false": return .bool(false)
            case "null", "~": return .null
            default: break
            }
            if let u = UInt64(word) { return .unsigned(u) }
            if word.hasPrefix("-"), let n = UInt64(word.dropFirst()), n > 0 { return .negative(n - 1) }
            if word == "-18446744073709551616" { return .negative(UInt64.max) }
            if let d = Double(word), d.isFinite { return .double(d) }
            throw Failure(reason: "not a value: \(word.prefix(40))")
        }
    }

    /// True when the bytes at `i` start a number or keyword rather than a plain key.
    private func startsScalar() -> Bool {
        var j = i
        while j < b.count, isPlainKeyByte(b[j]) { j += 1 }
        let word = String(decoding: b[i..<j], as: UTF8.self)
        return ["true", "false", "null"].contains(word) || Int64(word) != nil || (b[i] >= 0x30 && b[i] <= 0x39)
    }

    private func isPlainKeyByte(_ c: UInt8) -> Bool {
        (0x30...0x39).contains(c) || (0x41...0x5A).contains(c) || (0x61...0x7A).contains(c) || c == UInt8(ascii: "_")
            || c == UInt8(ascii: "$")
    }

    private mutating func quoted() throws(Failure) -> String {
        i += 1
        var out: [UInt8] = []
        while true {
            guard i < b.count else { throw Failure(reason: "unterminated string") }
            let c = b[i]
            i += 1
            if c == UInt8(ascii: "\"") { break }
            if c != UInt8(ascii: "\\") {
                out.append(c)
                continue
            }
            guard i < b.count else { throw Failure(reason: "unterminated escape") }
            let e = b[i]
            i += 1
            switch e {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(e)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "0"): out.append(0)
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "e"): out.append(0x1B)
            case UInt8(ascii: "x"), UInt8(ascii: "u"), UInt8(ascii: "U"):
                let n = e == UInt8(ascii: "x") ? 2 : e == UInt8(ascii: "u") ? 4 : 8
                guard b.count - i >= n, let v = UInt32(String(decoding: b[i..<i + n], as: UTF8.self), radix: 16),
                    let scalar = Unicode.Scalar(v)
                else { throw Failure(reason: "bad \\\(Character(Unicode.Scalar(e))) escape") }
                i += n
                out += Array(String(Character(scalar)).utf8)
            default:
                throw Failure(reason: "unknown escape \\\(Character(Unicode.Scalar(e)))")
            }
        }
        guard let s = String(validating: out, as: UTF8.self) else { throw Failure(reason: "string is not UTF-8") }
        return s
    }

    /// RFC 4648 §4 base64, padded.
    static func base64(_ s: String) -> [UInt8]? {
        var out: [UInt8] = []
        var acc: UInt32 = 0
        var bits = 0
        for c in s.utf8 {
            let v: UInt32
            switch c {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): v = UInt32(c - 65)
            case UInt8(ascii: "a")...UInt8(ascii: "z"): v = UInt32(c - 97 + 26)
            case UInt8(ascii: "0")...UInt8(ascii: "9"): v = UInt32(c - 48 + 52)
            case UInt8(ascii: "+"): v = 62
            case UInt8(ascii: "/"): v = 63
            case UInt8(ascii: "="): continue
            default: return nil
            }
            acc = acc << 6 | v
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(truncatingIfNeeded: acc >> UInt32(bits)))
            }
        }
        return out
    }
}
