import CCmarkGFM
import Synchronization

/// Parses Markdown with libcmark-gfm and turns its node tree into
/// ``MarkdownDocument`` values; the C tree is freed before returning.
enum CmarkReader {
    typealias Block = MarkdownDocument.Block
    typealias Inline = MarkdownDocument.Inline

    /// GitHub's extensions this reader attaches: tables, task lists,
    /// strikethrough and autolinks (never `tagfilter`: raw HTML is made
    /// text here, so it is never passed on at all).
    static let extensions: Extensions = {
        cmark_gfm_core_extensions_ensure_registered()
        let found = ["table", "tasklist", "strikethrough", "autolink"].compactMap { name in
            name.withCString { cmark_find_syntax_extension($0) }
        }
        return Extensions(pointers: found)
    }()

    /// The extensions, registered once in cmark's process-wide registry and
    /// never changed or freed after, so sharing them between threads is safe.
    struct Extensions: @unchecked Sendable {
        let pointers: [OpaquePointer]
    }

    /// `~x~` is not struck through, only `~~x~~` (a tilde in a journal is
    /// usually "about"). No smart punctuation: the text is shown as typed.
    static let options = CMARK_OPT_STRIKETHROUGH_DOUBLE_TILDE

    /// libcmark-gfm turns each attached extension's special characters on in a
    /// process-wide table when a parse starts and off when it finishes, so
    /// two parses at once can each see the other's "off" (a `~~x~~` read as
    /// text, one run in three under parallel tests): parses run one at a
    /// time.
    static let parsing = Mutex(())

    static func read(_ text: String) -> [Block] {
        parsing.withLock { _ in readLocked(text) }
    }

    static func readLocked(_ text: String) -> [Block] {
        guard let parser = cmark_parser_new(options) else { return [.paragraph([.text(text)])] }
        defer { cmark_parser_free(parser) }
        for e in extensions.pointers { cmark_parser_attach_syntax_extension(parser, e) }
        var text = text
        text.withUTF8 { bytes in
            bytes.withMemoryRebound(to: CChar.self) { chars in
                if let base = chars.baseAddress { cmark_parser_feed(parser, base, chars.count) }
            }
        }
        guard let root = cmark_parser_finish(parser) else { return [.paragraph([.text(text)])] }
        defer { cmark_node_free(root) }
        return blocks(in: root, depth: 0)
    }

    // MARK: Nodes

    static func children(_ node: OpaquePointer) -> [OpaquePointer] {
        var out: [OpaquePointer] = []
        var child = cmark_node_first_child(node)
        while let c = child {
            out.append(c)
            child = cmark_node_next(c)
        }
        return out
    }

    static func typeName(_ node: OpaquePointer) -> String {
        cmark_node_get_type_string(node).map { String(cString: $0) } ?? ""
    }

    static func literal(_ node: OpaquePointer) -> String {
        cmark_node_get_literal(node).map { String(cString: $0) } ?? ""
    }

    static func url(_ node: OpaquePointer) -> String {
        cmark_node_get_url(node).map { String(cString: $0) } ?? ""
    }

    /// The text of a subtree with all structure dropped (iterative, for
    /// content nested deeper than ``MarkdownDocument/maxDepth``).
    static func flatText(_ node: OpaquePointer) -> String {
        var out = ""
        guard let iter = cmark_iter_new(node) else { return out }
        defer { cmark_iter_free(iter) }
        var previousWasBlock = false
        while case let event = cmark_iter_next(iter), event != CMARK_EVENT_DONE {
            guard let n = cmark_iter_get_node(iter) else { continue }
            let type = cmark_node_get_type(n)
            if event == CMARK_EVENT_ENTER {
                switch type {
                case CMARK_NODE_TEXT, CMARK_NODE_CODE, CMARK_NODE_CODE_BLOCK, CMARK_NODE_HTML_BLOCK, CMARK_NODE_HTML_INLINE:
                    out += literal(n)
                    previousWasBlock = false
                case CMARK_NODE_SOFTBREAK, CMARK_NODE_LINEBREAK:
                    out += "\n"
                default: break
                }
            } else if event == CMARK_EVENT_EXIT, type.rawValue & UInt32(CMARK_NODE_TYPE_MASK) == UInt32(CMARK_NODE_TYPE_BLOCK),
                !previousWasBlock,
                n != node
            {
                out += "\n"
                previousWasBlock = true
            }
        }
        while out.hasSuffix("\n") { out.removeLast() }
        return out
    }

    // MARK: Blocks

    static func blocks(in node: OpaquePointer, depth: Int) -> [Block] {
        children(node).compactMap { block($0, depth: depth) }
    }

    static func block(_ node: OpaquePointer, depth: Int) -> Block? {
        if depth >= MarkdownDocument.maxDepth { return .paragraph([.text(flatText(node))]) }
        switch cmark_node_get_type(node) {
        case CMARK_NODE_PARAGRAPH:
            return .paragraph(inlines(in: node, depth: depth + 1))
        case CMARK_NODE_HEADING:
            return .heading(level: Int(cmark_node_get_heading_level(node)), inlines(in: node, depth: depth + 1))
        case CMARK_NODE_BLOCK_QUOTE:
            return .quote(blocks(in: node, depth: depth + 1))
        case CMARK_NODE_LIST:
            let items = children(node).map { item -> MarkdownDocument.Item in
                var task: Bool?
                if typeName(item) == "tasklist" { task = cmark_gfm_extensions_get_tasklist_item_checked(item) }
                return MarkdownDocument.Item(task: task, blocks: blocks(in: item, depth: depth + 2))
            }
            let ordered = cmark_node_get_list_type(node) == CMARK_ORDERED_LIST
            return .list(
                MarkdownDocument.List(
                    isOrdered: ordered, start: ordered ? Int(max(0, cmark_node_get_list_start(node))) : 1,
                    isTight: cmark_node_get_list_tight(node) != 0, items: items))
        case CMARK_NODE_CODE_BLOCK:
            var text = literal(node)
            if text.hasSuffix("\n") { text.removeLast() }
            return .code(info: cmark_node_get_fence_info(node).map { String(cString: $0) } ?? "", text: text)
        case CMARK_NODE_HTML_BLOCK:
            // Raw HTML is shown as the text it is, never passed on.
            var text = literal(node)
            while text.hasSuffix("\n") { text.removeLast() }
            return .paragraph(lines(text))
        case CMARK_NODE_THEMATIC_BREAK:
            return .rule
        default:
            if typeName(node) == "table" { return table(node, depth: depth) }
            // Anything else cmark may add: its text.
            let text = flatText(node)
            return text.isEmpty ? nil : .paragraph(lines(text))
        }
    }

    /// Text whose newlines become soft breaks.
    static func lines(_ text: String) -> [Inline] {
        var out: [Inline] = []
        for (i, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            if i > 0 { out.append(.softBreak) }
            if !line.isEmpty { out.append(.text(String(line))) }
        }
        return out
    }

    static func table(_ node: OpaquePointer, depth: Int) -> Block {
        let columns = Int(cmark_gfm_extensions_get_table_columns(node))
        var alignments: [MarkdownDocument.Table.Alignment] = []
        if let raw = cmark_gfm_extensions_get_table_alignments(node) {
            for i in 0..<columns {
                switch raw[i] {
                case UInt8(ascii: "l"): alignments.append(.left)
                case UInt8(ascii: "c"): alignments.append(.center)
                case UInt8(ascii: "r"): alignments.append(.right)
                default: alignments.append(.none)
                }
            }
        } else {
            alignments = Array(repeating: .none, count: columns)
        }
        var header: [[Inline]] = []
        var rows: [[[Inline]]] = []
        for row in children(node) {
            var cells = children(row).map { inlines(in: $0, depth: depth + 2) }
            // cmark gives every row the table's column count; be safe anyway.
            if cells.count < columns { cells += Array(repeating: [], count: columns - cells.count) }
            if cells.count > columns { cells = Array(cells.prefix(columns)) }
            if cmark_gfm_extensions_get_table_row_is_header(row) != 0 { header = cells } else { rows.append(cells) }
        }
        return .table(MarkdownDocument.Table(alignments: alignments, header: header, rows: rows))
    }

    // MARK: Inlines

    static func inlines(in node: OpaquePointer, depth: Int) -> [Inline] {
        var out: [Inline] = []
        for child in children(node) {
            guard let i = inline(child, depth: depth) else { continue }
            // Adjacent text (cmark splits at some punctuation) is one span.
            if case .text(let s) = i, case .text(let previous)? = out.last {
                out[out.count - 1] = .text(previous + s)
            } else {
                out.append(i)
            }
        }
        return out
    }

    static func inline(_ node: OpaquePointer, depth: Int) -> Inline? {
        if depth >= MarkdownDocument.maxDepth { return .text(flatText(node)) }
        switch cmark_node_get_type(node) {
        case CMARK_NODE_TEXT, CMARK_NODE_HTML_INLINE: return .text(literal(node))
        case CMARK_NODE_SOFTBREAK: return .softBreak
        case CMARK_NODE_LINEBREAK: return .lineBreak
        case CMARK_NODE_CODE: return .code(literal(node))
        case CMARK_NODE_EMPH: return .emphasis(inlines(in: node, depth: depth + 1))
        case CMARK_NODE_STRONG: return .strong(inlines(in: node, depth: depth + 1))
        case CMARK_NODE_LINK: return .link(inlines(in: node, depth: depth + 1), destination: url(node))
        case CMARK_NODE_IMAGE: return .image(alt: flatText(node), source: url(node))
        default:
            if typeName(node) == "strikethrough" { return .strikethrough(inlines(in: node, depth: depth + 1)) }
            let text = flatText(node)
            return text.isEmpty ? nil : .text(text)
        }
    }
}
