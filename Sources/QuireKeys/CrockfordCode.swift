import QuireCrypto

/// Human-typable codes: bytes written in Crockford base32, most significant
/// bit first, in groups of 4 characters joined by dashes
/// (`Spec/records.md §6.4`, `Spec/keys.md §3`).
///
/// Parsing ignores case, spaces, tabs, line breaks and dashes, and reads
/// `I`/`L` as `1` and `O` as `0`. Used by the recovery key, the device code
/// and the device fingerprint.
enum CrockfordCode {
    static let alphabet = Array("0123456789ABCDEFGHJKMNPQRSTVWXYZ".utf8)

    /// The characters for `bytes` (whose bit count must be a multiple of 5),
    /// grouped by 4.
    static func encode(_ bytes: [UInt8]) -> String {
        var chars = repack(bytes, from: 8, to: 5)
        defer { wipe(&chars) }
        var out = ""
        for (i, v) in chars.enumerated() {
            if i > 0 && i % 4 == 0 { out.append("-") }
            out.append(Character(Unicode.Scalar(alphabet[Int(v)])))
        }
        return out
    }

    /// Regroups a bit string, most significant bit first, from `inBits`-bit
    /// values to `outBits`-bit values; trailing bits that fill no whole
    /// output value are dropped.
    static func repack(_ values: [UInt8], from inBits: Int, to outBits: Int) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(values.count * inBits / outBits + 1)
        var acc: UInt32 = 0
        var bits = 0
        for v in values {
            acc = acc << UInt32(inBits) | UInt32(v)
            bits += inBits
            while bits >= outBits {
                bits -= outBits
                out.append(UInt8((acc >> UInt32(bits)) & ((1 << UInt32(outBits)) - 1)))
            }
        }
        return out
    }

    /// Why a typed code could not be read.
    enum ParseFailure: Error {
        /// A character outside the alphabet (and not ignored), as `U+XXXX`.
        case badCharacter(Unicode.Scalar, codePoint: String)
        /// The number of code characters, when it is not the expected one.
        case wrongLength(Int)
    }

    /// The bytes of a typed code of `characterCount` characters (not
    /// counting what parsing ignores). The caller wipes the result.
    static func decode(_ code: String, characterCount: Int) throws(ParseFailure) -> [UInt8] {
        try decode(scalars: code.unicodeScalars, characterCount: characterCount)
    }

    /// The bytes of a code typed as UTF-8 bytes, read without making a
    /// `String` of them (a secret in a `String` cannot be wiped). The caller
    /// wipes both arrays.
    static func decode(utf8 code: [UInt8], characterCount: Int) throws(ParseFailure) -> [UInt8] {
        var bytes = code.makeIterator()
        var decoder = Unicode.UTF8()
        let scalars = AnyIterator<Unicode.Scalar> {
            switch decoder.decode(&bytes) {
            case .scalarValue(let s): s
            case .error: "\u{FFFD}"
            case .emptyInput: nil
            }
        }
        return try decode(scalars: IteratorSequence(scalars), characterCount: characterCount)
    }

    private static func decode(scalars: some Sequence<Unicode.Scalar>, characterCount: Int) throws(ParseFailure) -> [UInt8] {
        // Reserved up front: a growing array would leave freed copies of
        // the code's values behind, unwiped.
        var values: [UInt8] = []
        values.reserveCapacity(characterCount + 66)
        defer { wipe(&values) }
        for scalar in scalars {
            var c = scalar
            if c == " " || c == "-" || c == "\t" || c == "\n" || c == "\r" { continue }
            if ("a"..."z").contains(c) { c = Unicode.Scalar(c.value - 32)! }
            switch c {
            case "I", "L": c = "1"
            case "O": c = "0"
            default: break
            }
            guard c.isASCII, let v = alphabet.firstIndex(of: UInt8(c.value)) else {
                let digits = String(scalar.value, radix: 16, uppercase: true)
                throw .badCharacter(scalar, codePoint: "U+" + String(repeating: "0", count: max(0, 4 - digits.count)) + digits)
            }
            values.append(UInt8(v))
            // Stop early on absurd input rather than collect it all.
            if values.count > characterCount + 64 { break }
        }
        guard values.count == characterCount else { throw .wrongLength(values.count) }
        return repack(values, from: 5, to: 8)
    }
}

extension CrockfordCode.ParseFailure {
    /// The failure in words, for a code whose characters are called
    /// `character` ("recovery-key") and which as a whole is `code` ("a recovery key").
    func reason(character: String, code: String, characterCount: Int) -> String {
        switch self {
        case .badCharacter(let scalar, let codePoint):
            "\"\(scalar)\" (\(codePoint)) is not a \(character) character"
        case .wrongLength(let n):
            "it has \(n) characters; \(code) has \(characterCount) (not counting dashes)"
        }
    }
}
