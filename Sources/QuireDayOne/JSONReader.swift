/// Why JSON text could not be read: the byte offset and what was wrong.
public struct JSONReadError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Byte offset in the document where reading stopped.
    public let offset: UInt64
    /// What was wrong.
    public let reason: String
    public var description: String { "invalid JSON at byte \(offset): \(reason)" }
}

/// A pull parser over JSON text read in chunks from a source, so that one
/// element of a large array can be read at a time (`Spec/import.md §7`).
///
/// Memory holds the read buffer (64 KiB) and the value being built; nesting
/// deeper than ``maxDepth`` and strings longer than ``maxStringByteCount``
/// are refused.
package final class JSONReader {
    /// Deepest nesting accepted.
    package static let maxDepth = 64
    /// Longest string accepted, in UTF-8 bytes (64 MiB).
    package static let maxStringByteCount = 64 << 20

    private let fill: (UnsafeMutableRawBufferPointer) throws -> Int
    private let buffer: UnsafeMutableRawBufferPointer
    private var start = 0
    private var end = 0
    private var atEnd = false
    /// Bytes consumed before the current buffer.
    private var consumedBefore: UInt64 = 0
    /// An error the source threw, kept so the caller can report it.
    package private(set) var sourceError: (any Error)?

    /// A reader pulling bytes with `fill` (returns 0 at the end).
    package init(fill: @escaping (UnsafeMutableRawBufferPointer) throws -> Int) {
        self.fill = fill
        buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 16, alignment: 8)
    }

    deinit { buffer.deallocate() }

    /// Bytes consumed so far.
    package var offset: UInt64 { consumedBefore + UInt64(start) }

    private func fail(_ reason: String) -> JSONReadError { JSONReadError(offset: offset, reason: reason) }

    private func refill() throws(JSONReadError) -> Bool {
        if atEnd { return false }
        consumedBefore += UInt64(end)
        start = 0
        end = 0
        let n: Int
        do { n = try fill(buffer) } catch {
            sourceError = error
            throw JSONReadError(offset: consumedBefore, reason: "reading failed: \(error)")
        }
        if n == 0 {
            atEnd = true
            return false
        }
        end = n
        return true
    }

    /// The next byte without consuming it, or nil at the end.
    private func peek() throws(JSONReadError) -> UInt8? {
        if start == end, try !refill() { return nil }
        return buffer[start]
    }

    private func next() throws(JSONReadError) -> UInt8 {
        guard let b = try peek() else { throw fail("unexpected end of input") }
        start += 1
        return b
    }

    /// Skips white space; returns the next byte (not consumed) or nil at the end.
    package func skipSpace() throws(JSONReadError) -> UInt8? {
        while let b = try peek() {
            if b == 0x20 || b == 0x0A || b == 0x0D || b == 0x09 { start += 1 } else { return b }
        }
        return nil
    }

    private func expect(_ byte: UInt8, _ what: String) throws(JSONReadError) {
        guard try skipSpace() == byte else { throw fail("expected \(what)") }
        start += 1
    }

    /// Skips a UTF-8 byte-order mark at the very start, if any.
    package func skipByteOrderMark() throws(JSONReadError) {
        guard try peek() == 0xEF else { return }
        for b: UInt8 in [0xEF, 0xBB, 0xBF] { guard try next() == b else { throw fail("bad byte-order mark") } }
    }

    /// Reads one whole value.
    package func value(depth: Int = 0) throws(JSONReadError) -> JSONValue {
        guard depth <= Self.maxDepth else { throw fail("nesting deeper than \(Self.maxDepth)") }
        guard let b = try skipSpace() else { throw fail("unexpected end of input") }
        switch b {
        case UInt8(ascii: "{"):
            start += 1
            var object = JSONObject()
            if try skipSpace() == UInt8(ascii: "}") {
                start += 1
                return .object(object)
            }
            while true {
                guard try skipSpace() == UInt8(ascii: "\"") else { throw fail("expected a member name") }
                let key = try string()
                try expect(UInt8(ascii: ":"), "':'")
                object[key] = try value(depth: depth + 1)
                let c = try skipSpace()
                start += 1
                if c == UInt8(ascii: "}") { return .object(object) }
                guard c == UInt8(ascii: ",") else {
                    start -= 1
                    throw fail("expected ',' or '}'")
                }
            }
        case UInt8(ascii: "["):
            start += 1
            var items: [JSONValue] = []
            if try skipSpace() == UInt8(ascii: "]") {
                start += 1
                return .array(items)
            }
            while true {
                items.append(try value(depth: depth + 1))
                let c = try skipSpace()
                start += 1
                if c == UInt8(ascii: "]") { return .array(items) }
                guard c == UInt8(ascii: ",") else {
                    start -= 1
                    throw fail("expected ',' or ']'")
                }
            }
        case UInt8(ascii: "\""):
            return .string(try string())
        case UInt8(ascii: "t"):
            try literal("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try literal("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try literal("null")
            return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return try number()
        default:
            throw fail("unexpected character \(Self.describe(b))")
        }
    }

    /// Reads one value and discards it: checks its syntax (and its strings'
    /// UTF-8 and escapes) without building arrays or objects, so memory holds
    /// the read buffer and at most one string.
    package func skipValue(depth: Int = 0) throws(JSONReadError) {
        guard depth <= Self.maxDepth else { throw fail("nesting deeper than \(Self.maxDepth)") }
        guard let b = try skipSpace() else { throw fail("unexpected end of input") }
        switch b {
        case UInt8(ascii: "{"):
            start += 1
            if try skipSpace() == UInt8(ascii: "}") {
                start += 1
                return
            }
            while true {
                guard try skipSpace() == UInt8(ascii: "\"") else { throw fail("expected a member name") }
                _ = try string()
                try expect(UInt8(ascii: ":"), "':'")
                try skipValue(depth: depth + 1)
                let c = try skipSpace()
                start += 1
                if c == UInt8(ascii: "}") { return }
                guard c == UInt8(ascii: ",") else {
                    start -= 1
                    throw fail("expected ',' or '}'")
                }
            }
        case UInt8(ascii: "["):
            start += 1
            if try skipSpace() == UInt8(ascii: "]") {
                start += 1
                return
            }
            while true {
                try skipValue(depth: depth + 1)
                let c = try skipSpace()
                start += 1
                if c == UInt8(ascii: "]") { return }
                guard c == UInt8(ascii: ",") else {
                    start -= 1
                    throw fail("expected ',' or ']'")
                }
            }
        case UInt8(ascii: "\""): _ = try string()
        case UInt8(ascii: "t"): try literal("true")
        case UInt8(ascii: "f"): try literal("false")
        case UInt8(ascii: "n"): try literal("null")
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): _ = try number()
        default: throw fail("unexpected character \(Self.describe(b))")
        }
    }

    /// A byte for a message: the ASCII character quoted, else its hex value.
    static func describe(_ b: UInt8) -> String {
        (0x21...0x7E).contains(b) ? "'\(Character(Unicode.Scalar(b)))'" : "0x" + String(b, radix: 16, uppercase: true)
    }

    /// Fails with "trailing characters" unless only white space is left.
    package func expectEnd() throws(JSONReadError) {
        guard try skipSpace() == nil else { throw fail("trailing characters after the value") }
    }

    /// Iterates the elements of an array whose `[` is next, calling `body`
    /// with each element as soon as it is read.
    package func elements(_ body: (JSONValue) throws -> Void) throws {
        try expect(UInt8(ascii: "["), "'['")
        if try skipSpace() == UInt8(ascii: "]") {
            start += 1
            return
        }
        while true {
            try body(try value(depth: 1))
            let c = try skipSpace()
            start += 1
            if c == UInt8(ascii: "]") { return }
            guard c == UInt8(ascii: ",") else {
                start -= 1
                throw fail("expected ',' or ']'")
            }
        }
    }

    /// Reads the members of an object whose `{` is next: `body` gets each
    /// member name and reads (or streams) its value from this reader.
    package func members(_ body: (String) throws -> Void) throws {
        try expect(UInt8(ascii: "{"), "'{'")
        if try skipSpace() == UInt8(ascii: "}") {
            start += 1
            return
        }
        while true {
            guard try skipSpace() == UInt8(ascii: "\"") else { throw fail("expected a member name") }
            let key = try string()
            try expect(UInt8(ascii: ":"), "':'")
            try body(key)
            let c = try skipSpace()
            start += 1
            if c == UInt8(ascii: "}") { return }
            guard c == UInt8(ascii: ",") else {
                start -= 1
                throw fail("expected ',' or '}'")
            }
        }
    }

    private func literal(_ word: StaticString) throws(JSONReadError) {
        let bytes = UnsafeRawBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount)
        for b in bytes { guard try next() == b else { throw fail("invalid literal") } }
    }

    private func number() throws(JSONReadError) -> JSONValue {
        var text: [UInt8] = []
        var isInteger = true
        while let b = try peek() {
            switch b {
            case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"): text.append(b)
            case UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E"), UInt8(ascii: "+"):
                text.append(b)
                isInteger = false
            default:
                return try makeNumber(text, isInteger: isInteger)
            }
            start += 1
            if text.count > 400 { throw fail("number too long") }
        }
        return try makeNumber(text, isInteger: isInteger)
    }

    private func makeNumber(_ text: [UInt8], isInteger: Bool) throws(JSONReadError) -> JSONValue {
        let s = String(decoding: text, as: UTF8.self)
        guard Self.isValidNumber(text) else { throw fail("invalid number \(s.debugDescription)") }
        if isInteger, let i = Int64(s) { return .int(i) }
        guard let d = Double(s), d.isFinite else { throw fail("number out of range \(s)") }
        return .double(d)
    }

    /// RFC 8259 §6 number grammar.
    static func isValidNumber(_ t: [UInt8]) -> Bool {
        var i = 0
        func digit(_ i: Int) -> Bool { i < t.count && t[i] >= 0x30 && t[i] <= 0x39 }
        if i < t.count && t[i] == UInt8(ascii: "-") { i += 1 }
        guard digit(i) else { return false }
        if t[i] == 0x30 { i += 1 } else { while digit(i) { i += 1 } }
        if i < t.count && t[i] == UInt8(ascii: ".") {
            i += 1
            guard digit(i) else { return false }
            while digit(i) { i += 1 }
        }
        if i < t.count && (t[i] == UInt8(ascii: "e") || t[i] == UInt8(ascii: "E")) {
            i += 1
            if i < t.count && (t[i] == UInt8(ascii: "+") || t[i] == UInt8(ascii: "-")) { i += 1 }
            guard digit(i) else { return false }
            while digit(i) { i += 1 }
        }
        return i == t.count
    }

    /// Reads a string whose opening quote is next.
    private func string() throws(JSONReadError) -> String {
        start += 1  // the quote
        var bytes: [UInt8] = []
        while true {
            if start == end, try !refill() { throw fail("unterminated string") }
            // Copy the run of plain bytes in the buffer at once.
            var i = start
            while i < end {
                let b = buffer[i]
                if b == UInt8(ascii: "\"") || b == UInt8(ascii: "\\") || b < 0x20 { break }
                i += 1
            }
            if i > start {
                bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[start..<i]))
                start = i
                if bytes.count > Self.maxStringByteCount { throw fail("string longer than \(Self.maxStringByteCount) bytes") }
                continue
            }
            let b = try next()
            if b == UInt8(ascii: "\"") { break }
            if b < 0x20 {
                start -= 1
                throw fail("control character in a string")
            }
            // A backslash escape.
            let e = try next()
            switch e {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): bytes.append(e)
            case UInt8(ascii: "b"): bytes.append(0x08)
            case UInt8(ascii: "f"): bytes.append(0x0C)
            case UInt8(ascii: "n"): bytes.append(0x0A)
            case UInt8(ascii: "r"): bytes.append(0x0D)
            case UInt8(ascii: "t"): bytes.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = try hex4()
                if (0xD800..<0xDC00).contains(scalar) {
                    // A high surrogate must be followed by an escaped low one.
                    if try peek() == UInt8(ascii: "\\") {
                        start += 1
                        guard try next() == UInt8(ascii: "u") else { throw fail("lone high surrogate") }
                        let low = try hex4()
                        guard (0xDC00..<0xE000).contains(low) else { throw fail("lone high surrogate") }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    } else {
                        throw fail("lone high surrogate")
                    }
                } else if (0xDC00..<0xE000).contains(scalar) {
                    throw fail("lone low surrogate")
                }
                bytes.append(contentsOf: Array(String(Unicode.Scalar(scalar)!).utf8))
            default:
                throw fail("invalid escape")
            }
        }
        guard let s = String(validating: bytes, as: UTF8.self) else { throw fail("string is not valid UTF-8") }
        return s
    }

    private func hex4() throws(JSONReadError) -> UInt32 {
        var v: UInt32 = 0
        for _ in 0..<4 {
            let b = try next()
            let d: UInt32
            switch b {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): d = UInt32(b - 0x30)
            case UInt8(ascii: "a")...UInt8(ascii: "f"): d = UInt32(b - 0x61 + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): d = UInt32(b - 0x41 + 10)
            default: throw fail("invalid \\u escape")
            }
            v = v << 4 | d
        }
        return v
    }

    /// Parses a whole document held in memory.
    package static func parse(_ bytes: [UInt8]) throws(JSONReadError) -> JSONValue {
        var offset = 0
        let reader = JSONReader { out in
            let n = min(out.count, bytes.count - offset)
            if n > 0 { bytes.withUnsafeBytes { out.baseAddress!.copyMemory(from: $0.baseAddress! + offset, byteCount: n) } }
            offset += n
            return n
        }
        try reader.skipByteOrderMark()
        let v = try reader.value()
        guard try reader.skipSpace() == nil else { throw reader.fail("trailing characters after the value") }
        return v
    }
}
