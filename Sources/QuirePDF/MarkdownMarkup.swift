import Foundation

/// One block of an entry's Markdown text, ready for pango.
enum BookBlock: Sendable, Equatable {
    /// A paragraph: pango markup, every piece of source text escaped.
    case paragraph(String)
    /// A heading (`#` … `######`): level 1…6 and its markup.
    case heading(level: Int, markup: String)
    /// A line holding only an image link to an attachment of the entry:
    /// `![alt](quire-attachment://<hex reference id>)`; the lowercase hex id.
    case image(referenceID: String)
}

/// Turns an entry's Markdown into blocks of pango markup.
///
/// The subset rendered: paragraphs (blank-line separated; single newlines
/// become line breaks), ATX headings, `*emphasis*`, `**strong**`,
/// `***both***`, backslash escapes, `[text](url)` links (the text is kept), `![alt](url)` images elsewhere
/// (the description is kept),
/// and attachment images on a line of their own. Everything else is text.
/// The output markup is always well formed: every piece of source text is
/// escaped by ``escapeMarkup(_:)`` and tags are opened and closed by this
/// code alone, innermost first.
enum MarkdownMarkup {
    static func blocks(_ text: String) -> [BookBlock] {
        var blocks: [BookBlock] = []
        var paragraph: [Substring] = []
        func flush() {
            if !paragraph.isEmpty {
                let markup = inline(paragraph.joined(separator: "\u{2028}"))
                if !markup.isEmpty { blocks.append(.paragraph(markup)) }
                paragraph.removeAll()
            }
        }
        let normalized = text.replacingCRLF()
        for raw in normalized.split(separator: "\n", omittingEmptySubsequences: false) {
            let line = raw.trimmingTrailingSpaces()
            let trimmed = line.drop(while: { $0 == " " })
            if trimmed.isEmpty { flush(); continue }
            if let (level, rest) = heading(trimmed) {
                flush()
                let markup = inline(String(rest))
                if !markup.isEmpty { blocks.append(.heading(level: level, markup: markup)) }
                continue
            }
            if let reference = imageReference(trimmed) {
                flush()
                blocks.append(.image(referenceID: reference))
                continue
            }
            paragraph.append(line)
        }
        flush()
        return blocks
    }

    /// `# Title` → (1, "Title"); nil when the line is not an ATX heading.
    static func heading(_ line: Substring) -> (Int, Substring)? {
        let hashes = line.prefix(while: { $0 == "#" }).count
        guard (1...6).contains(hashes) else { return nil }
        let rest = line.dropFirst(hashes)
        guard rest.isEmpty || rest.first == " " || rest.first == "\t" else { return nil }
        var body = rest.drop(while: { $0 == " " || $0 == "\t" })
        // A closing sequence of #s is not part of the heading.
        while body.last == "#" { body = body.dropLast() }
        return (hashes, body.trimmingTrailingSpaces())
    }

    /// `![alt](quire-attachment://abc123)` → "abc123".
    static func imageReference(_ line: Substring) -> String? {
        guard line.hasPrefix("!["), line.hasSuffix(")"), let open = line.range(of: "](quire-attachment://") else { return nil }
        let hex = line[open.upperBound..<line.index(before: line.endIndex)]
        guard !hex.isEmpty, hex.allSatisfy({ $0.isHexDigit }) else { return nil }
        return hex.lowercased()
    }

    private enum Style: Equatable { case bold, italic }

    /// Inline Markdown to pango markup.
    static func inline(_ text: String) -> String {
        let s = Array(sanitized(text).unicodeScalars)
        var out = ""
        out.reserveCapacity(s.count + 16)
        var stack: [Style] = []
        var plain = ""
        func emitPlain() { out += escapeMarkup(plain); plain = "" }
        func tag(_ style: Style, open: Bool) -> String {
            switch style {
            case .bold: open ? "<b>" : "</b>"
            case .italic: open ? "<i>" : "</i>"
            }
        }
        func toggle(_ style: Style) {
            emitPlain()
            if let at = stack.lastIndex(of: style) {
                // Close innermost-first, then reopen what was above `style`.
                let above = stack[(at + 1)...]
                for st in above.reversed() { out += tag(st, open: false) }
                out += tag(style, open: false)
                stack.remove(at: at)
                for st in above { out += tag(st, open: true) }
            } else {
                out += tag(style, open: true)
                stack.append(style)
            }
        }
        func isSpace(_ c: Unicode.Scalar?) -> Bool { c == nil || c!.properties.isWhitespace }
        /// True when `count` stars occur again later, so an opener has a closer.
        func hasCloser(from index: Int, count: Int) -> Bool {
            var j = index
            while j < s.count {
                if s[j] == "\\" { j += 2; continue }
                if s[j] == "*" {
                    var run = 0
                    while j + run < s.count, s[j + run] == "*" { run += 1 }
                    if run >= count, !isSpace(j > 0 ? s[j - 1] : nil) { return true }
                    j += run
                    continue
                }
                j += 1
            }
            return false
        }
        var i = 0
        while i < s.count {
            let c = s[i]
            if c == "\\", i + 1 < s.count, "\\`*_{}[]()#+-.!<>&~|".unicodeScalars.contains(s[i + 1]) {
                plain.unicodeScalars.append(s[i + 1])
                i += 2
                continue
            }
            if c == "*" {
                var run = 0
                while i + run < s.count, s[i + run] == "*" { run += 1 }
                let before = i > 0 ? s[i - 1] : nil
                let after = i + run < s.count ? s[i + run] : nil
                var styles: [Style] = []
                if run >= 2 { styles.append(.bold) }
                if run == 1 || run >= 3 { styles.append(.italic) }
                let closes = styles.allSatisfy { stack.contains($0) } && !isSpace(before)
                let opens = !closes && !isSpace(after) && styles.allSatisfy { !stack.contains($0) }
                    && hasCloser(from: i + run, count: min(run, 3))
                if (closes || opens) && run <= 3 {
                    for st in (closes ? styles : styles.reversed()) { toggle(st) }
                } else {
                    for _ in 0..<run { plain.unicodeScalars.append("*") }
                }
                i += run
                continue
            }
            if c == "!", i + 1 < s.count, s[i + 1] == "[", let (alt, next) = link(s, at: i + 1) {
                plain += alt  // an image that is not an attachment of the entry: its description
                i = next
                continue
            }
            if c == "[", let (label, next) = link(s, at: i) {
                plain += label
                i = next
                continue
            }
            plain.unicodeScalars.append(c)
            i += 1
        }
        emitPlain()
        for st in stack.reversed() { out += tag(st, open: false) }
        return out
    }

    /// `[text](url)` at `i`: the text and the index after `)`.
    private static func link(_ s: [Unicode.Scalar], at i: Int) -> (String, Int)? {
        var j = i + 1
        var label = ""
        while j < s.count, s[j] != "]", s[j] != "[", s[j] != "\u{2028}" { label.unicodeScalars.append(s[j]); j += 1 }
        guard j + 1 < s.count, s[j] == "]", s[j + 1] == "(" else { return nil }
        var k = j + 2
        while k < s.count, s[k] != ")", s[k] != " ", s[k] != "\u{2028}" { k += 1 }
        guard k < s.count, s[k] == ")" else { return nil }
        return (label, k + 1)
    }

    /// Removes what no markup parser or font should see: C0 and C1 control
    /// characters (a tab becomes a space; the U+2028 line separators this
    /// module inserts stay), and the noncharacters U+FFFE and U+FFFF.
    static func sanitized(_ text: String) -> String {
        // Most text has nothing to remove: check the UTF-8 bytes first (C1
        // controls are U+0080…U+009F, encoded 0xC2 0x80…0x9F; U+FFFE/U+FFFF
        // start with 0xEF 0xBF).
        var clean = true
        var previous: UInt8 = 0
        for b in text.utf8 {
            if b < 0x20 || b == 0x7F || (previous == 0xC2 && b < 0xA0 && b >= 0x80) || (previous == 0xEF && b == 0xBF) {
                clean = false
                break
            }
            previous = b
        }
        if clean { return text }
        var out = String.UnicodeScalarView()
        for c in text.unicodeScalars {
            switch c.value {
            case 0x09: out.append(" ")
            case 0x00...0x1F, 0x7F...0x9F, 0xFFFE, 0xFFFF: continue
            default: out.append(c)
            }
        }
        return String(out)
    }
}

/// Escapes text for pango markup: `&`, `<`, `>`, `"` and `'` become entities,
/// so no text can open or close an element or an entity.
func escapeMarkup(_ text: String) -> String {
    var out = ""
    out.reserveCapacity(text.utf8.count)
    for c in text.unicodeScalars {
        switch c {
        case "&": out += "&amp;"
        case "<": out += "&lt;"
        case ">": out += "&gt;"
        case "\"": out += "&quot;"
        case "'": out += "&#39;"
        default: out.unicodeScalars.append(c)
        }
    }
    return out
}

extension StringProtocol {
    func replacingCRLF() -> String {
        if !utf8.contains(0x0D) { return String(self) }
        var out = String.UnicodeScalarView()
        var previousCR = false
        for c in unicodeScalars {
            if c == "\r" { out.append("\n"); previousCR = true; continue }
            if c == "\n", previousCR { previousCR = false; continue }
            previousCR = false
            out.append(c)
        }
        return String(out)
    }
}

extension Substring {
    func trimmingTrailingSpaces() -> Substring {
        var s = self
        while let last = s.last, last == " " || last == "\t" { s = s.dropLast() }
        return s
    }
}
