/// A small, safe reading of an entry's Markdown text into blocks and
/// inline spans, shared by the HTML, EPUB and PDF exporters.
///
/// It understands what journals use: ATX headings (`#`…`######`),
/// paragraphs (a single newline inside a paragraph is a line break, so verse
/// keeps its lines), `>` quotations, `-`/`*`/`+`/`1.` list items, fenced
/// code (```` ``` ````), thematic breaks (`---`), and inline `*emphasis*`,
/// `_emphasis_`, `**strong**`, `` `code` ``, `[links](url)`, `![images](url)`
/// and backslash escapes. Anything else is text. Parsing never fails:
/// unmatched delimiters are literal text. Work is bounded: a closing
/// delimiter is looked for at most ``MarkdownDocument/delimiterSearchLimit``
/// characters ahead and nesting stops at ``MarkdownDocument/maxDepth``, so
/// time is at most linear in the text times that constant.
public struct MarkdownDocument: Sendable, Equatable {
    /// A block of the text.
    public indirect enum Block: Sendable, Equatable {
        /// A heading of level 1…6.
        case heading(level: Int, [Inline])
        /// A paragraph.
        case paragraph([Inline])
        /// A quotation holding blocks.
        case quote([Block])
        /// A list item; `ordered` for `1.`-style items.
        case listItem(ordered: Bool, [Inline])
        /// Preformatted text (a fenced code block), verbatim.
        case code(String)
        /// A thematic break.
        case rule
    }

    /// A span inside a block.
    public indirect enum Inline: Sendable, Equatable {
        /// Plain text.
        case text(String)
        /// Emphasis (italic).
        case emphasis([Inline])
        /// Strong emphasis (bold).
        case strong([Inline])
        /// Inline code, verbatim.
        case code(String)
        /// A link: its text and its destination (not checked; callers decide what to allow).
        case link([Inline], url: String)
        /// An image: its alternative text and source (such as `quire-attachment://<hex>`).
        case image(alt: String, url: String)
        /// A line break inside a block.
        case lineBreak
    }

    /// The blocks, in order.
    public var blocks: [Block]

    /// How far ahead (in Unicode scalars) a closing delimiter is looked for.
    public static let delimiterSearchLimit = 4096
    /// The deepest nesting of quotations and inline spans that is parsed.
    public static let maxDepth = 8

    /// Parses `text`.
    public init(parsing text: String) {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map { line -> Substring in
            line.hasSuffix("\r") ? line.dropLast() : line
        }
        blocks = Self.parseBlocks(lines[...], depth: 0)
    }

    /// Plain text of some inline spans (markup removed; images give their alt text).
    public static func plainText(_ inlines: [Inline]) -> String {
        var out = ""
        for i in inlines {
            switch i {
            case .text(let s), .code(let s): out += s
            case .emphasis(let c), .strong(let c), .link(let c, _): out += plainText(c)
            case .image(let alt, _): out += alt
            case .lineBreak: out += "\n"
            }
        }
        return out
    }

    static func parseBlocks(_ lines: ArraySlice<Substring>, depth: Int) -> [Block] {
        var blocks: [Block] = []
        var paragraph: [Substring] = []
        func endParagraph() {
            if !paragraph.isEmpty {
                blocks.append(.paragraph(parseInlines(paragraph.joined(separator: "\n"), depth: depth)))
                paragraph.removeAll()
            }
        }
        var i = lines.startIndex
        while i < lines.endIndex {
            let line = lines[i]
            let trimmed = line.drop(while: { $0 == " " })
            let indent = line.count - trimmed.count
            if trimmed.isEmpty {
                endParagraph()
                i += 1
                continue
            }
            if indent < 4, trimmed.hasPrefix("```") || trimmed.hasPrefix("~~~") {
                endParagraph()
                let fence = trimmed.prefix(3)
                var body: [Substring] = []
                i += 1
                while i < lines.endIndex, !lines[i].drop(while: { $0 == " " }).hasPrefix(fence) {
                    body.append(lines[i])
                    i += 1
                }
                i += 1
                blocks.append(.code(body.joined(separator: "\n")))
                continue
            }
            if indent < 4, let level = headingLevel(trimmed) {
                endParagraph()
                var content = trimmed.dropFirst(level).drop(while: { $0 == " " || $0 == "\t" })
                content = content.dropLast(content.reversed().prefix(while: { $0 == " " }).count)
                let closing = content.reversed().prefix(while: { $0 == "#" }).count
                if closing > 0, closing == content.count || content.dropLast(closing).last == " " {
                    content = content.dropLast(closing)
                    content = content.dropLast(content.reversed().prefix(while: { $0 == " " }).count)
                }
                blocks.append(.heading(level: level, parseInlines(String(content), depth: depth)))
                i += 1
                continue
            }
            if indent < 4, isRule(trimmed) {
                endParagraph()
                blocks.append(.rule)
                i += 1
                continue
            }
            if indent < 4, trimmed.hasPrefix(">") {
                endParagraph()
                var inner: [Substring] = []
                while i < lines.endIndex {
                    let t = lines[i].drop(while: { $0 == " " })
                    guard t.hasPrefix(">") else { break }
                    var rest = t.dropFirst()
                    if rest.first == " " { rest = rest.dropFirst() }
                    inner.append(rest)
                    i += 1
                }
                if depth + 1 >= maxDepth {
                    blocks.append(.quote([.paragraph([.text(inner.joined(separator: "\n"))])]))
                } else {
                    blocks.append(.quote(parseBlocks(inner[...], depth: depth + 1)))
                }
                continue
            }
            if indent < 4, let (ordered, rest) = listMarker(trimmed) {
                endParagraph()
                var item: [Substring] = [rest]
                i += 1
                while i < lines.endIndex {
                    let t = lines[i].drop(while: { $0 == " " })
                    if t.isEmpty || listMarker(t) != nil || t.hasPrefix(">") || headingLevel(t) != nil || t.hasPrefix("```") { break }
                    item.append(t)
                    i += 1
                }
                blocks.append(.listItem(ordered: ordered, parseInlines(item.joined(separator: "\n"), depth: depth)))
                continue
            }
            paragraph.append(trimmed)
            i += 1
        }
        endParagraph()
        return blocks
    }

    static func headingLevel(_ line: Substring) -> Int? {
        let hashes = line.prefix(while: { $0 == "#" }).count
        guard (1...6).contains(hashes) else { return nil }
        let after = line.dropFirst(hashes)
        return after.isEmpty || after.first == " " || after.first == "\t" ? hashes : nil
    }

    static func isRule(_ line: Substring) -> Bool {
        let compact = line.filter { $0 != " " }
        guard compact.count >= 3, let c = compact.first, c == "-" || c == "*" || c == "_" else { return false }
        return compact.allSatisfy { $0 == c }
    }

    static func listMarker(_ line: Substring) -> (Bool, Substring)? {
        if let c = line.first, c == "-" || c == "*" || c == "+" {
            let rest = line.dropFirst()
            if rest.first == " " { return (false, rest.dropFirst()) }
            return nil
        }
        let digits = line.prefix(while: { $0.isASCII && $0.isNumber })
        guard (1...9).contains(digits.count) else { return nil }
        let rest = line.dropFirst(digits.count)
        if let c = rest.first, c == "." || c == ")", rest.dropFirst().first == " " { return (true, rest.dropFirst(2)) }
        return nil
    }

    static func parseInlines(_ text: String, depth: Int) -> [Inline] {
        let scalars = Array(text.unicodeScalars)
        return InlineParser(scalars: scalars).parse(scalars.startIndex..<scalars.endIndex, depth: depth)
    }
}

/// The inline half of ``MarkdownDocument``.
private struct InlineParser {
    let scalars: [Unicode.Scalar]

    func parse(_ range: Range<Int>, depth: Int) -> [MarkdownDocument.Inline] {
        var out: [MarkdownDocument.Inline] = []
        var text = String.UnicodeScalarView()
        func flush() {
            if !text.isEmpty {
                out.append(.text(String(text)))
                text = String.UnicodeScalarView()
            }
        }
        var i = range.lowerBound
        let end = range.upperBound
        while i < end {
            let c = scalars[i]
            switch c {
            case "\\":
                if i + 1 < end, scalars[i + 1].isASCII, isPunctuation(scalars[i + 1]) {
                    text.append(scalars[i + 1])
                    i += 2
                } else {
                    text.append(c)
                    i += 1
                }
            case "\n":
                flush()
                out.append(.lineBreak)
                i += 1
            case "`":
                if let close = find("`", from: i + 1, end: end) {
                    flush()
                    out.append(.code(String(String.UnicodeScalarView(scalars[(i + 1)..<close]))))
                    i = close + 1
                } else {
                    text.append(c)
                    i += 1
                }
            case "!" where i + 1 < end && scalars[i + 1] == "[":
                if let (labelEnd, urlStart, urlEnd) = linkParts(openBracket: i + 1, end: end) {
                    flush()
                    let alt = MarkdownDocument.plainText(parse(i + 2..<labelEnd, depth: MarkdownDocument.maxDepth))
                    out.append(.image(alt: alt, url: url(urlStart, urlEnd)))
                    i = urlEnd + 1
                } else {
                    text.append(c)
                    i += 1
                }
            case "[":
                if let (labelEnd, urlStart, urlEnd) = linkParts(openBracket: i, end: end) {
                    flush()
                    let label = depth + 1 < MarkdownDocument.maxDepth
                        ? parse(i + 1..<labelEnd, depth: depth + 1)
                        : [.text(String(String.UnicodeScalarView(scalars[(i + 1)..<labelEnd])))]
                    out.append(.link(label, url: url(urlStart, urlEnd)))
                    i = urlEnd + 1
                } else {
                    text.append(c)
                    i += 1
                }
            case "*", "_":
                let double = i + 1 < end && scalars[i + 1] == c
                let width = double ? 2 : 1
                let opensWord = i + width < end && !isSpace(scalars[i + width])
                // `_` inside a word (snake_case) is text.
                let intraword = c == "_" && i > range.lowerBound && isWordScalar(scalars[i - 1])
                if opensWord, !intraword, depth + 1 < MarkdownDocument.maxDepth,
                    let close = findCloser(c, width: width, from: i + width, end: end)
                {
                    flush()
                    let inner = parse(i + width..<close, depth: depth + 1)
                    out.append(double ? .strong(inner) : .emphasis(inner))
                    i = close + width
                } else {
                    for _ in 0..<width { text.append(c) }
                    i += width
                }
            default:
                text.append(c)
                i += 1
            }
        }
        flush()
        return out
    }

    func url(_ start: Int, _ end: Int) -> String {
        var s = String(String.UnicodeScalarView(scalars[start..<end]))
        if s.hasPrefix("<"), s.hasSuffix(">"), s.count >= 2 { s = String(s.dropFirst().dropLast()) }
        // A title after the destination (`(url "title")`) is dropped.
        if let space = s.firstIndex(of: " ") { s = String(s[..<space]) }
        return s
    }

    /// For `[` at `openBracket`: the index of the matching `]`, and the
    /// destination's bounds inside the following `( … )`.
    func linkParts(openBracket: Int, end: Int) -> (Int, Int, Int)? {
        var i = openBracket + 1
        var nesting = 0
        let limit = min(end, openBracket + MarkdownDocument.delimiterSearchLimit)
        while i < limit {
            let c = scalars[i]
            if c == "\\" { i += 2; continue }
            if c == "[" { nesting += 1 }
            if c == "]" {
                if nesting == 0 { break }
                nesting -= 1
            }
            if c == "\n" && i + 1 < end && scalars[i + 1] == "\n" { return nil }
            i += 1
        }
        guard i < limit, scalars[i] == "]", i + 1 < end, scalars[i + 1] == "(" else { return nil }
        let labelEnd = i
        let urlStart = i + 2
        var j = urlStart
        while j < limit, scalars[j] != ")", scalars[j] != "\n" { j += 1 }
        guard j < limit, scalars[j] == ")" else { return nil }
        return (labelEnd, urlStart, j)
    }

    func find(_ c: Unicode.Scalar, from start: Int, end: Int) -> Int? {
        var i = start
        let limit = min(end, start + MarkdownDocument.delimiterSearchLimit)
        while i < limit {
            if scalars[i] == c { return i }
            i += 1
        }
        return nil
    }

    /// A closing run of `width` × `c` preceded by a non-space.
    func findCloser(_ c: Unicode.Scalar, width: Int, from start: Int, end: Int) -> Int? {
        var i = start + 1
        let limit = min(end, start + MarkdownDocument.delimiterSearchLimit)
        while i + width <= limit {
            let s = scalars[i]
            if s == "\\" { i += 2; continue }
            if s == c {
                var run = 0
                while i + run < end, scalars[i + run] == c { run += 1 }
                if !isSpace(scalars[i - 1]) {
                    if run == width, !(c == "_" && i + run < end && isWordScalar(scalars[i + run])) { return i }
                    if width == 1 && run == 3 { return i + 2 }
                    if width == 2 && run == 3 { return i }
                }
                i += run
                continue
            }
            i += 1
        }
        return nil
    }

    func isSpace(_ s: Unicode.Scalar) -> Bool { s == " " || s == "\n" || s == "\t" }
    func isWordScalar(_ s: Unicode.Scalar) -> Bool { s.properties.isAlphabetic || ("0"..."9").contains(s) }
    func isPunctuation(_ s: Unicode.Scalar) -> Bool {
        "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~".unicodeScalars.contains(s)
    }
}
