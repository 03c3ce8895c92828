@_spi(Format) package import Quire

/// Writes CBOR values as YAML 1.2 flow nodes, faithfully
/// (`Spec/export-json.md §3.3`):
///
/// - text: always a double-quoted scalar; `"`, `\`, C0 and C1 controls,
///   DEL, U+2028, U+2029, U+FEFF, U+FFFE and U+FFFF are escaped (`\n`,
///   `\t`, `\"`, `\\`, `\xHH`, `\uHHHH`), everything else is written as is;
/// - integers (unsigned and negative, the full CBOR range −2⁶⁴…2⁶⁴−1): plain decimal;
/// - floats: plain, always with a `.` or an exponent so they never read as
///   integers, shortest text that reads back to the same binary64 (`-0.0` kept);
/// - byte strings: `!!binary "<base64>"` (RFC 4648, padded);
/// - `true`, `false`, `null`;
/// - arrays `[a, b]`, maps `{k: v}` in the CBOR map's canonical order
///   (keys may be any of the above).
public enum YAMLWriter {
    /// The flow YAML text of `value`.
    package static func flow(_ value: CBOR) -> String {
        var out = ""
        write(value, to: &out)
        return out
    }

    /// The flow YAML text of `map`.
    package static func flow(_ map: CBORMap) -> String { flow(.map(map)) }

    static func write(_ value: CBOR, to out: inout String) {
        switch value {
        case .unsigned(let u): out += String(u)
        case .negative(let n): out += n == UInt64.max ? "-18446744073709551616" : "-" + String(n + 1)
        case .text(let s): quoted(s, to: &out)
        case .bytes(let b): out += "!!binary \"" + Base64.encode(b) + "\""
        case .bool(let b): out += b ? "true" : "false"
        case .null: out += "null"
        case .double(let d): out += floatText(d)
        case .array(let items):
            out += "["
            for (k, item) in items.enumerated() {
                if k > 0 { out += ", " }
                write(item, to: &out)
            }
            out += "]"
        case .map(let m):
            out += "{"
            for (k, e) in m.entries.enumerated() {
                if k > 0 { out += ", " }
                write(e.key, to: &out)
                out += ": "
                write(e.value, to: &out)
            }
            out += "}"
        }
    }

    /// A YAML double-quoted scalar of `s`.
    public static func quoted(_ s: String) -> String {
        var out = ""
        quoted(s, to: &out)
        return out
    }

    static func quoted(_ s: String, to out: inout String) {
        out += EscapeBytes.transform(s, prefix: 0x22, suffix: 0x22, EscapeBytes.yaml)
    }

    /// Shortest round-trip text of a finite double, always marked as a float.
    public static func floatText(_ d: Double) -> String {
        var s = "\(d)"
        if !s.contains(".") && !s.contains("e") && !s.contains("E") { s += ".0" }
        return s
    }
}

func hexDigits(_ v: UInt32, _ width: Int) -> String {
    let s = String(v, radix: 16, uppercase: true)
    return String(repeating: "0", count: max(0, width - s.count)) + s
}

/// RFC 4648 base64 with padding, incrementally: feed bytes, take text.
public struct Base64: Sendable {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    private var pending: [UInt8] = []

    /// An empty encoder.
    public init() {}

    /// The base64 text of `bytes`.
    public static func encode(_ bytes: [UInt8]) -> String {
        var e = Base64()
        var out = [UInt8]()
        e.feed(UnsafeRawBufferPointer?.none, bytes: bytes, into: &out)
        e.finish(into: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Encodes whole groups of `bytes` (after any held from before) into `out`
    /// as ASCII; keeps up to 2 bytes for the next call.
    public mutating func feed(_ buffer: UnsafeRawBufferPointer?, bytes: [UInt8] = [], into out: inout [UInt8]) {
        var input = pending
        if let buffer { input.append(contentsOf: buffer) }
        input.append(contentsOf: bytes)
        let whole = input.count / 3 * 3
        out.reserveCapacity(out.count + whole / 3 * 4)
        var i = 0
        while i < whole {
            let n = UInt32(input[i]) << 16 | UInt32(input[i + 1]) << 8 | UInt32(input[i + 2])
            out.append(Self.alphabet[Int(n >> 18 & 63)])
            out.append(Self.alphabet[Int(n >> 12 & 63)])
            out.append(Self.alphabet[Int(n >> 6 & 63)])
            out.append(Self.alphabet[Int(n & 63)])
            i += 3
        }
        pending = Array(input[whole...])
    }

    /// Writes the last group with padding.
    public mutating func finish(into out: inout [UInt8]) {
        guard !pending.isEmpty else { return }
        let b0 = UInt32(pending[0])
        let b1 = pending.count > 1 ? UInt32(pending[1]) : 0
        let n = b0 << 16 | b1 << 8
        out.append(Self.alphabet[Int(n >> 18 & 63)])
        out.append(Self.alphabet[Int(n >> 12 & 63)])
        out.append(pending.count > 1 ? Self.alphabet[Int(n >> 6 & 63)] : UInt8(ascii: "="))
        out.append(UInt8(ascii: "="))
        pending = []
    }
}
