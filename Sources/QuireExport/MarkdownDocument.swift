/// A small, safe reading of an entry's Markdown text into blocks and
/// inline spans, shared by the HTML, EPUB and PDF exporters.
///
/// It understands what journals use: ATX headings (`#`…`######`),
/// paragraphs (a single newline inside a paragraph is a line break, so verse
/// keeps its lines), `>` quotations, `-`/`*`/`+`/`1.` list items, fenced
/// code (```` ``` ````), thematic breaks (`---`), and inline `*emphasis*`,
/// `_emphasis_`, `**strong**`, `` `code` ``, `[links](url)`, `![images](url)`
/// and backslash escapes. Anything else is text. Parsing never fails:
/// unmatched delimiters are literal text. Work is bounded: closing
/// delimiters and brackets are matched in one pass per block and nesting
/// stops at ``MarkdownDocument/maxDepth``, so time is linear in the text
/// times that depth.
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

    /// The deepest nesting of quotations and inline spans that is parsed.
    public static let maxDepth = 8

    /// Parses `text`.
    public init(parsing text: String) {
        let lines = text.utf8.split(separator: 10, omittingEmptySubsequences: false).map { bytes -> Substring in
            let line = Substring(bytes)
            return line.utf8.last == 13 ? Substring(line.utf8.dropLast()) : line
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
            let indent = line.utf8.count - trimmed.utf8.count
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
                    if t.isEmpty || listMarker(t) != nil || t.hasPrefix(">") || headingLevel(t) != nil || t.hasPrefix("```") || isRule(t) { break }
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
        guard let first = line.utf8.first, first == UInt8(ascii: "-") || first == UInt8(ascii: "*") || first == UInt8(ascii: "_"),
            line.utf8.count <= 256
        else { return false }
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
        let parser = InlineParser(text: text)
        return parser.parse(0..<parser.b.count, depth: depth)
    }
}

/// The inline half of ``MarkdownDocument``, over UTF-8 bytes (every
/// delimiter is ASCII). Closing delimiters, matching brackets and the next
/// backtick or `)` are found in one pass before parsing, so parsing is
/// linear in the text for each nesting level.
private struct InlineParser {
    let b: [UInt8]
    /// For `[` at i: the index of its matching `]`, else -1.
    var matchBracket: [Int32]
    /// The first unescaped backtick at or after i (n when none).
    var nextBacktick: [Int32]
    /// The first `)` or newline at or after i (n when none).
    var nextParen: [Int32]
    /// For the four delimiters (`*`, `**`, `_`, `__`): where the first
    /// valid closing run starting at or after i closes (n when none).
    var nextCloser: [[Int32]]

    static let star = UInt8(ascii: "*"), underscore = UInt8(ascii: "_"), backslash = UInt8(ascii: "\\")

    init(text: String) {
        b = Array(text.utf8)
        let n = b.count
        var escaped = [Bool](repeating: false, count: n + 1)
        var i = 0
        while i < n {
            if b[i] == Self.backslash, i + 1 < n, b[i + 1] < 0x80, Self.isPunctuation(b[i + 1]) {
                escaped[i + 1] = true
                i += 2
            } else {
                i += 1
            }
        }
        matchBracket = [Int32](repeating: -1, count: n)
        var stack: [Int] = []
        for k in 0..<n where !escaped[k] {
            if b[k] == UInt8(ascii: "[") { stack.append(k) } else if b[k] == UInt8(ascii: "]"), let open = stack.popLast() { matchBracket[open] = Int32(k) }
        }
        nextBacktick = [Int32](repeating: Int32(n), count: n + 1)
        nextParen = [Int32](repeating: Int32(n), count: n + 1)
        var k = n - 1
        while k >= 0 {
            nextBacktick[k] = b[k] == UInt8(ascii: "`") && !escaped[k] ? Int32(k) : nextBacktick[k + 1]
            nextParen[k] = b[k] == UInt8(ascii: ")") || b[k] == 10 ? Int32(k) : nextParen[k + 1]
            k -= 1
        }
        // Closing runs.
        var closers = [[Int32]](repeating: [Int32](repeating: Int32(n), count: n + 1), count: 4)
        k = n - 1
        while k >= 0 {
            for kind in 0..<4 { closers[kind][k] = closers[kind][k + 1] }
            let c = b[k]
            if (c == Self.star || c == Self.underscore), !escaped[k], k > 0, b[k - 1] != c, !Self.isSpace(b[k - 1]) {
                var run = 0
                while k + run < n, b[k + run] == c { run += 1 }
                let base = c == Self.star ? 0 : 2
                let wordAfter = c == Self.underscore && k + run < n && Self.isWord(b[k + run])
                for width in 1...2 {
                    var at: Int?
                    if run == width, !wordAfter { at = k }
                    // `***`: an inner `*` closes on the first, an outer `**` on the last two.
                    if width == 1, run == 3 { at = k }
                    if width == 2, run == 3 { at = k + 1 }
                    if let at { closers[base + width - 1][k] = Int32(at) }
                }
            }
            k -= 1
        }
        nextCloser = closers
    }

    func text(_ r: Range<Int>) -> String { String(decoding: b[r], as: UTF8.self) }

    func parse(_ range: Range<Int>, depth: Int) -> [MarkdownDocument.Inline] {
        var out: [MarkdownDocument.Inline] = []
        var pending: [UInt8] = []
        func flush() {
            if !pending.isEmpty {
                out.append(.text(String(decoding: pending, as: UTF8.self)))
                pending.removeAll(keepingCapacity: true)
            }
        }
        var i = range.lowerBound
        let end = range.upperBound
        while i < end {
            let c = b[i]
            switch c {
            case Self.backslash:
                if i + 1 < end, b[i + 1] < 0x80, Self.isPunctuation(b[i + 1]) {
                    pending.append(b[i + 1])
                    i += 2
                } else {
                    pending.append(c)
                    i += 1
                }
            case 10:
                flush()
                out.append(.lineBreak)
                i += 1
            case UInt8(ascii: "`"):
                let close = Int(nextBacktick[i + 1])
                if close < end {
                    flush()
                    out.append(.code(text(i + 1..<close)))
                    i = close + 1
                } else {
                    pending.append(c)
                    i += 1
                }
            case UInt8(ascii: "!") where i + 1 < end && b[i + 1] == UInt8(ascii: "["):
                if let (labelEnd, urlStart, urlEnd) = linkParts(openBracket: i + 1, end: end) {
                    flush()
                    let alt = MarkdownDocument.plainText(parse(i + 2..<labelEnd, depth: MarkdownDocument.maxDepth))
                    out.append(.image(alt: alt, url: url(urlStart, urlEnd)))
                    i = urlEnd + 1
                } else {
                    pending.append(c)
                    i += 1
                }
            case UInt8(ascii: "["):
                if let (labelEnd, urlStart, urlEnd) = linkParts(openBracket: i, end: end) {
                    flush()
                    let label = depth + 1 < MarkdownDocument.maxDepth ? parse(i + 1..<labelEnd, depth: depth + 1) : [.text(text(i + 1..<labelEnd))]
                    out.append(.link(label, url: url(urlStart, urlEnd)))
                    i = urlEnd + 1
                } else {
                    pending.append(c)
                    i += 1
                }
            case Self.star, Self.underscore:
                let double = i + 1 < end && b[i + 1] == c
                let width = double ? 2 : 1
                let opensWord = i + width < end && !Self.isSpace(b[i + width])
                let intraword = c == Self.underscore && i > range.lowerBound && Self.isWord(b[i - 1])
                let kind = (c == Self.star ? 0 : 2) + width - 1
                let close = i + width + 1 <= end ? Int(nextCloser[kind][i + width + 1]) : end
                if opensWord, !intraword, depth + 1 < MarkdownDocument.maxDepth, close + width <= end {
                    flush()
                    let inner = parse(i + width..<close, depth: depth + 1)
                    out.append(double ? .strong(inner) : .emphasis(inner))
                    i = close + width
                } else {
                    for _ in 0..<width { pending.append(c) }
                    i += width
                }
            default:
                pending.append(c)
                i += 1
            }
        }
        flush()
        return out
    }

    func url(_ start: Int, _ end: Int) -> String {
        var s = text(start..<end)
        if s.hasPrefix("<"), s.hasSuffix(">"), s.utf8.count >= 2 { s = String(s.dropFirst().dropLast()) }
        // A title after the destination (`(url "title")`) is dropped.
        if let space = s.firstIndex(of: " ") { s = String(s[..<space]) }
        return s
    }

    /// For `[` at `openBracket`: the index of the matching `]`, and the
    /// destination's bounds inside the following `( … )`.
    func linkParts(openBracket: Int, end: Int) -> (Int, Int, Int)? {
        let close = Int(matchBracket[openBracket])
        guard close > openBracket, close + 1 < end, b[close + 1] == UInt8(ascii: "(") else { return nil }
        let j = Int(nextParen[close + 2])
        guard j < end, b[j] == UInt8(ascii: ")") else { return nil }
        return (close, close + 2, j)
    }

    static func isSpace(_ c: UInt8) -> Bool { c == 32 || c == 10 || c == 9 }
    /// ASCII letters and digits, and any byte of a non-ASCII character.
    static func isWord(_ c: UInt8) -> Bool {
        c >= 0x80 || (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A)
    }
    static func isPunctuation(_ c: UInt8) -> Bool {
        (c >= 0x21 && c <= 0x2F) || (c >= 0x3A && c <= 0x40) || (c >= 0x5B && c <= 0x60) || (c >= 0x7B && c <= 0x7E)
    }
}
