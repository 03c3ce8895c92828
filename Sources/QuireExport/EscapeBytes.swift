/// Byte-level escaping for the exporters' text formats: UTF-8 in, UTF-8
/// out, one pass, no per-character `String` work.
enum EscapeBytes {
    static let hex = Array("0123456789abcdef".utf8)
    static let upperHex = Array("0123456789ABCDEF".utf8)

    static func append(_ text: StaticString, to out: inout [UInt8]) {
        text.withUTF8Buffer { out.append(contentsOf: $0) }
    }

    /// `\uXXXX` (lowercase hex digits when `lower`).
    static func appendUnicodeEscape(_ v: UInt32, prefix: StaticString, digits: Int, lower: Bool, to out: inout [UInt8]) {
        append(prefix, to: &out)
        let table = lower ? hex : upperHex
        for k in stride(from: digits - 1, through: 0, by: -1) { out.append(table[Int(v >> (UInt32(k) * 4) & 15)]) }
    }

    /// JSON string contents (`JSONWriter.string`), without the quotes.
    static func json(_ src: UnsafeBufferPointer<UInt8>, into out: inout [UInt8]) {
        var i = 0
        let n = src.count
        while i < n {
            let c = src[i]
            switch c {
            case 0x22: append("\\\"", to: &out)
            case 0x5C: append("\\\\", to: &out)
            case 0x0A: append("\\n", to: &out)
            case 0x0D: append("\\r", to: &out)
            case 0x09: append("\\t", to: &out)
            case 0x08: append("\\b", to: &out)
            case 0x0C: append("\\f", to: &out)
            case 0x00..<0x20, 0x7F: appendUnicodeEscape(UInt32(c), prefix: "\\u", digits: 4, lower: true, to: &out)
            case 0xE2 where i + 2 < n && src[i + 1] == 0x80 && (src[i + 2] == 0xA8 || src[i + 2] == 0xA9):
                appendUnicodeEscape(src[i + 2] == 0xA8 ? 0x2028 : 0x2029, prefix: "\\u", digits: 4, lower: true, to: &out)
                i += 2
            default: out.append(c)
            }
            i += 1
        }
    }

    /// HTML/XML text and attribute contents (`Markup.escape`).
    static func markup(_ src: UnsafeBufferPointer<UInt8>, into out: inout [UInt8]) {
        var i = 0
        let n = src.count
        while i < n {
            let c = src[i]
            switch c {
            case 0x26: append("&amp;", to: &out)
            case 0x3C: append("&lt;", to: &out)
            case 0x3E: append("&gt;", to: &out)
            case 0x22: append("&quot;", to: &out)
            case 0x27: append("&#39;", to: &out)
            case 0x09, 0x0A, 0x0D: out.append(c)
            case 0x00..<0x20, 0x7F: append("\u{FFFD}", to: &out)
            case 0xEF where i + 2 < n && src[i + 1] == 0xBF && (src[i + 2] == 0xBE || src[i + 2] == 0xBF):
                append("\u{FFFD}", to: &out)
                i += 2
            default: out.append(c)
            }
            i += 1
        }
    }

    /// YAML double-quoted scalar contents (`YAMLWriter.quoted`).
    static func yaml(_ src: UnsafeBufferPointer<UInt8>, into out: inout [UInt8]) {
        var i = 0
        let n = src.count
        while i < n {
            let c = src[i]
            switch c {
            case 0x22: append("\\\"", to: &out)
            case 0x5C: append("\\\\", to: &out)
            case 0x0A: append("\\n", to: &out)
            case 0x09: append("\\t", to: &out)
            case 0x0D: append("\\r", to: &out)
            case 0x00..<0x20, 0x7F: appendUnicodeEscape(UInt32(c), prefix: "\\x", digits: 2, lower: false, to: &out)
            case 0xC2 where i + 1 < n && src[i + 1] >= 0x80 && src[i + 1] <= 0x9F:
                appendUnicodeEscape(UInt32(src[i + 1]), prefix: "\\x", digits: 2, lower: false, to: &out)
                i += 1
            case 0xE2 where i + 2 < n && src[i + 1] == 0x80 && (src[i + 2] == 0xA8 || src[i + 2] == 0xA9):
                appendUnicodeEscape(src[i + 2] == 0xA8 ? 0x2028 : 0x2029, prefix: "\\u", digits: 4, lower: false, to: &out)
                i += 2
            case 0xEF
            where i + 2 < n
                && ((src[i + 1] == 0xBB && src[i + 2] == 0xBF) || (src[i + 1] == 0xBF && (src[i + 2] == 0xBE || src[i + 2] == 0xBF))):
                let v: UInt32 = src[i + 1] == 0xBB ? 0xFEFF : (src[i + 2] == 0xBE ? 0xFFFE : 0xFFFF)
                appendUnicodeEscape(v, prefix: "\\u", digits: 4, lower: false, to: &out)
                i += 2
            default: out.append(c)
            }
            i += 1
        }
    }

    /// Runs `body` over the UTF-8 of `s` and returns the bytes as a string.
    static func transform(
        _ s: String, prefix: UInt8? = nil, suffix: UInt8? = nil, _ body: (UnsafeBufferPointer<UInt8>, inout [UInt8]) -> Void
    ) -> String {
        var s = s
        return s.withUTF8 { src -> String in
            var out: [UInt8] = []
            out.reserveCapacity(src.count + src.count / 8 + 2)
            if let prefix { out.append(prefix) }
            body(src, &out)
            if let suffix { out.append(suffix) }
            return String(decoding: out, as: UTF8.self)
        }
    }
}
