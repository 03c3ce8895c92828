import QuireExport
import QuireMarkdown

/// One block of an entry's text, ready for pango: what the book draws.
enum BookBlock: Sendable, Equatable {
    /// Running text: a paragraph, a list item or text in a quotation.
    case text(BookText)
    /// A heading (`#` … `######`): level 1…6 and its text.
    case heading(level: Int, BookText)
    /// An attachment of the entry shown as a picture, by the lowercase hex
    /// of its reference id (`![…](quire-attachment://<hex>)` alone in its
    /// paragraph).
    case image(referenceID: String)
    /// Preformatted text, verbatim, indented by `indent` points.
    case code(markup: String, indent: Double)
    /// A thematic break, indented by `indent` points.
    case rule(indent: Double)
    /// A table: rows of cells (the first row the header when `hasHeader`)
    /// and each column's alignment.
    case table(rows: [[BookText]], hasHeader: Bool, alignments: [MarkdownDocument.Table.Alignment], indent: Double)
}

/// Pango markup with its layout: every piece of source text escaped, tags
/// opened and closed by this code only, innermost first.
struct BookText: Sendable, Equatable {
    /// The markup, for `pango_parse_markup`.
    var markup: String
    /// Points from the text block's left edge.
    var indent: Double = 0
    /// A marker set in the left margin of the first line (`•`, `3.`, `☐`),
    /// as markup; the text hangs after it.
    var marker: String = ""
    /// True for ordinary paragraphs (justified); list items, quotations and
    /// table cells are set ragged right.
    var justified = false
    /// True inside a quotation: set in italic grey with a rule at the left.
    var quoted = false
    /// Links in the text the layout shows: UTF-8 byte ranges of that text
    /// (markup removed) and where they go.
    var links: [BookLink] = []
}

/// A link in a layout's text.
struct BookLink: Sendable, Equatable {
    /// UTF-8 byte range in the text pango lays out (markup removed).
    var range: Range<Int>
    /// Where it goes.
    var target: Target
    enum Target: Sendable, Equatable {
        /// Another entry of the book, by its id in lowercase hex.
        case entry(String)
        /// An outside address (`http`, `https`, `mailto`).
        case uri(String)
    }
}

/// Turns an entry's Markdown, read by QuireMarkdown, into ``BookBlock``s:
/// the same tree the HTML and EPUB exports walk, so the book shows lists,
/// checklists, quotations, code and tables as they do.
enum BookMarkup {
    /// Points each level of lists and quotations is indented.
    static let indentStep = 16.0

    /// The blocks of `text`; a link to an entry written as a bare address
    /// shows `linkedEntryLabel`.
    static func blocks(_ text: String, linkedEntryLabel: String = "linked entry") -> [BookBlock] {
        var out: [BookBlock] = []
        walk(MarkdownDocument(parsing: text).blocks, indent: 0, quoted: false, label: linkedEntryLabel, into: &out)
        return out
    }

    static func walk(_ blocks: [MarkdownDocument.Block], indent: Double, quoted: Bool, label: String, into out: inout [BookBlock]) {
        for block in blocks {
            switch block {
            case .paragraph(let spans):
                let images = spans.filter { if case .softBreak = $0 { false } else { true } }
                if !images.isEmpty, images.allSatisfy({ attachmentID($0) != nil }) {
                    for i in images { out.append(.image(referenceID: attachmentID(i)!)) }
                    continue
                }
                var t = text(spans, label: label)
                guard !t.markup.isEmpty else { continue }
                t.indent = indent
                t.justified = !quoted && indent == 0
                t.quoted = quoted
                out.append(.text(t))
            case .heading(let level, let spans):
                let t = text(spans, label: label)
                if !t.markup.isEmpty { out.append(.heading(level: level, t)) }
            case .quote(let inner):
                walk(inner, indent: indent + indentStep, quoted: true, label: label, into: &out)
            case .list(let list):
                for (n, item) in list.items.enumerated() {
                    let marker: String
                    if let done = item.task {
                        marker = done ? "☑" : "☐"
                    } else {
                        marker = list.isOrdered ? "\(list.start + n)." : "•"
                    }
                    var itemBlocks: [BookBlock] = []
                    walk(item.blocks, indent: indent + indentStep, quoted: quoted, label: label, into: &itemBlocks)
                    // The marker goes on the item's first text; an item
                    // without text gets a line of its own.
                    if let first = itemBlocks.firstIndex(where: { if case .text = $0 { true } else { false } }), first == 0,
                        case .text(var t) = itemBlocks[0]
                    {
                        t.marker = escapeMarkup(marker)
                        itemBlocks[0] = .text(t)
                    } else {
                        itemBlocks.insert(
                            .text(BookText(markup: "", indent: indent + indentStep, marker: escapeMarkup(marker), quoted: quoted)), at: 0)
                    }
                    out += itemBlocks
                }
            case .code(_, let code):
                out.append(.code(markup: escapeMarkup(sanitized(code, keepNewlines: true)), indent: indent))
            case .rule:
                out.append(.rule(indent: indent))
            case .table(let table):
                var rows: [[BookText]] = []
                if !table.header.isEmpty { rows.append(table.header.map { text($0, bold: true, label: label) }) }
                for row in table.rows { rows.append(row.map { text($0, label: label) }) }
                out.append(.table(rows: rows, hasHeader: !table.header.isEmpty, alignments: table.alignments, indent: indent))
            }
        }
    }

    /// The lowercase hex reference id of an image span pointing at one of
    /// the entry's attachments (`quire-attachment://<hex>`).
    static func attachmentID(_ span: MarkdownDocument.Inline) -> String? {
        guard case .image(_, let source) = span, source.lowercased().hasPrefix(EntryLinks.attachmentPrefix) else { return nil }
        let hex = source.dropFirst(EntryLinks.attachmentPrefix.count)
        guard !hex.isEmpty, hex.allSatisfy({ $0.isHexDigit }) else { return nil }
        return hex.lowercased()
    }

    /// Inline spans as pango markup, with the links in the laid-out text.
    static func text(_ spans: [MarkdownDocument.Inline], bold: Bool = false, label: String = "linked entry") -> BookText {
        var builder = Builder(label: label)
        if bold { builder.open("b") }
        builder.add(spans)
        if bold { builder.close("b") }
        return BookText(markup: builder.markup, links: builder.links)
    }

    /// Builds markup and counts the bytes of the text pango will see.
    struct Builder {
        /// The text of a link to an entry written as a bare address.
        let label: String
        var markup = ""
        var length = 0
        var links: [BookLink] = []

        mutating func plain(_ s: String) {
            let clean = sanitized(s, keepNewlines: false)
            markup += escapeMarkup(clean)
            length += clean.utf8.count
        }

        mutating func open(_ tag: String) { markup += "<\(tag)>" }
        mutating func close(_ tag: String) { markup += "</\(tag)>" }

        mutating func add(_ spans: [MarkdownDocument.Inline]) {
            for span in spans {
                switch span {
                case .text(let s): plain(s)
                case .softBreak, .lineBreak:
                    markup += "\u{2028}"
                    length += "\u{2028}".utf8.count
                case .code(let s):
                    open("tt")
                    plain(s)
                    close("tt")
                case .emphasis(let c):
                    open("i")
                    add(c)
                    close("i")
                case .strong(let c):
                    open("b")
                    add(c)
                    close("b")
                case .strikethrough(let c):
                    open("s")
                    add(c)
                    close("s")
                case .link(let c, let destination):
                    let start = length
                    let target: BookLink.Target?
                    if let id = EntryLinks.entryID(inLink: destination) {
                        target = .entry(id.map { String($0, radix: 16) }.map { $0.count == 1 ? "0" + $0 : $0 }.joined())
                    } else if EntryLinks.isSafeOutsideLink(destination) {
                        target = .uri(destination)
                    } else {
                        target = nil
                    }
                    if target != nil { open("u") }
                    if case .entry = target, c == [.text(destination)] { plain(label) } else { add(c) }
                    if target != nil { close("u") }
                    if let target, length > start { links.append(BookLink(range: start..<length, target: target)) }
                case .image(let alt, _):
                    // A picture inside running text, or from outside: its description.
                    plain(alt)
                }
            }
        }
    }

    /// Removes what no markup parser or font should see: C0 and C1 control
    /// characters (a tab becomes a space; newlines stay when
    /// `keepNewlines`), and the noncharacters U+FFFE and U+FFFF.
    static func sanitized(_ text: String, keepNewlines: Bool) -> String {
        var clean = true
        var previous: UInt8 = 0
        for b in text.utf8 {
            if (b < 0x20 && !(keepNewlines && b == 0x0A)) || b == 0x7F || (previous == 0xC2 && b < 0xA0 && b >= 0x80)
                || (previous == 0xEF && b == 0xBF)
            {
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
            case 0x0A where keepNewlines: out.append(c)
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
