import Foundation

/// Text for the terminal, built by string interpolation: the literal parts
/// are quire's own and trusted; every interpolated value (entry text, tags,
/// names, paths) is untrusted and, when the text goes to a terminal, has
/// its control characters escaped visibly (``TerminalEscape``), so a
/// journal entry holding `ESC[2J` cannot clear the screen. Styles (colour)
/// are applied after escaping. In a pipe the values are printed exactly.
///
/// ```swift
/// out.line("\(id, .id)  \(date)  \(title)")
/// out.line("\(multiline: body.text)")
/// ```
struct ShownText: ExpressibleByStringInterpolation, Sendable {
    enum Part: Sendable {
        case literal(String)
        case value(String, multiline: Bool, style: Style?)
    }

    var parts: [Part] = []

    init(stringLiteral value: String) { parts = [.literal(value)] }

    init(stringInterpolation: Interpolation) { parts = stringInterpolation.parts }

    init(parts: [Part]) { self.parts = parts }

    struct Interpolation: StringInterpolationProtocol {
        var parts: [Part] = []

        init(literalCapacity: Int, interpolationCount: Int) {}

        mutating func appendLiteral(_ literal: String) {
            if !literal.isEmpty { parts.append(.literal(literal)) }
        }

        /// A single-line value: line breaks are escaped too.
        mutating func appendInterpolation(_ value: String, _ style: Style? = nil) {
            parts.append(.value(value, multiline: false, style: style))
        }

        /// A number, an id, anything printable.
        mutating func appendInterpolation(_ value: some CustomStringConvertible, _ style: Style? = nil) {
            parts.append(.value(value.description, multiline: false, style: style))
        }

        /// Text of several lines (an entry's body): line breaks and tabs kept.
        mutating func appendInterpolation(multiline value: String) {
            parts.append(.value(value, multiline: true, style: nil))
        }

        /// Another shown text, as it is.
        mutating func appendInterpolation(_ text: ShownText) {
            parts += text.parts
        }
    }

    /// The text to print: values escaped when `escaping`, styled when `colour`.
    func rendered(escaping: Bool, colour: Bool) -> String {
        var bytes: [UInt8] = []
        render(into: &bytes, escaping: escaping, colour: colour)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends the UTF-8 of ``rendered(escaping:colour:)`` to `out`, with no
    /// string in between (`list` renders a line for every entry).
    func render(into out: inout [UInt8], escaping: Bool, colour: Bool) {
        for part in parts {
            switch part {
            case .literal(let s):
                out.append(contentsOf: s.utf8)
            case .value(let s, let multiline, let style):
                let safe = escaping ? TerminalEscape.escape(s, keepingLineBreaks: multiline) : s
                if let style, colour {
                    out.append(contentsOf: "\u{1b}[\(style.code)m".utf8)
                    out.append(contentsOf: safe.utf8)
                    out.append(contentsOf: "\u{1b}[0m".utf8)
                } else {
                    out.append(contentsOf: safe.utf8)
                }
            }
        }
    }

    /// Joins `items` with `separator` (a literal).
    static func joined(_ items: [ShownText], separator: String) -> ShownText {
        var parts: [Part] = []
        for (i, item) in items.enumerated() {
            if i > 0 && !separator.isEmpty { parts.append(.literal(separator)) }
            parts += item.parts
        }
        return ShownText(parts: parts)
    }

    static func + (a: ShownText, b: ShownText) -> ShownText { ShownText(parts: a.parts + b.parts) }
}

/// A colour for a value on a terminal (ANSI SGR codes).
enum Style: Sendable {
    /// Entry and attachment ids (yellow).
    case id
    /// Tags (cyan).
    case tag
    /// Something to notice: a conflict, a damaged record (red).
    case alert
    /// Headings (bold).
    case heading
    /// Less important: a date, a count (dim).
    case dim

    var code: String {
        switch self {
        case .id: "33"
        case .tag: "36"
        case .alert: "31"
        case .heading: "1"
        case .dim: "2"
        }
    }
}

/// Visible escapes for characters that would act on a terminal instead of
/// being shown: C0 controls (tab and, in multi-line text, line feed
/// excepted), DEL, C1 controls and the bidirectional overrides and
/// isolates (which can make text read as something else). Each becomes
/// `\u{1B}`, upper-case hex, as in a Swift string literal.
enum TerminalEscape {
    /// True for a scalar that must not reach a terminal as it is.
    static func isUnsafe(_ s: Unicode.Scalar, keepingLineBreaks: Bool) -> Bool {
        switch s.value {
        case 0x09: false
        case 0x0a: !keepingLineBreaks
        case 0x00...0x1f, 0x7f...0x9f: true
        case 0x061c, 0x200e, 0x200f, 0x202a...0x202e, 0x2066...0x2069: true
        default: false
        }
    }

    /// `text` with every unsafe scalar written as `\u{XX}`.
    static func escape(_ text: String, keepingLineBreaks: Bool) -> String {
        guard text.unicodeScalars.contains(where: { isUnsafe($0, keepingLineBreaks: keepingLineBreaks) }) else { return text }
        var out = String.UnicodeScalarView()
        for s in text.unicodeScalars {
            if isUnsafe(s, keepingLineBreaks: keepingLineBreaks) {
                let hex = String(s.value, radix: 16, uppercase: true)
                out.append(contentsOf: "\\u{\(hex.count < 2 ? "0" + hex : hex)}".unicodeScalars)
            } else {
                out.append(s)
            }
        }
        return String(out)
    }
}
