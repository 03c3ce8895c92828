/// An entry's Markdown text read into a tree of blocks and inline spans,
/// the one reading every exporter walks (HTML, EPUB, PDF).
///
/// The text is parsed by libcmark-gfm, the CommonMark reference
/// implementation with GitHub's extensions: tables, task lists (`- [ ]`,
/// `- [x]`), strikethrough (`~~x~~`) and autolinks (`www.…`, `https://…`).
/// The tree holds Swift values only; no C type leaves this module.
///
/// What the tree does not pass on:
/// - Raw HTML: an HTML block or inline tag becomes plain text, so a
///   renderer escapes it like any other text and never emits it as markup.
/// - Link reference definitions and footnotes are not read (a `[^1]` is text).
/// - Nesting deeper than ``maxDepth`` (quotations in quotations, lists in
///   lists, spans in spans) is kept as the plain text of the deeper part.
///
/// Parsing never fails: any text is a document. cmark's own work is linear
/// in the text for the inputs it guards against; the tree is built without
/// recursion past ``maxDepth``.
public struct MarkdownDocument: Sendable, Equatable {
    /// A block of the text.
    public indirect enum Block: Sendable, Equatable {
        /// A paragraph (also what a raw HTML block becomes, as text).
        case paragraph([Inline])
        /// A heading of level 1…6.
        case heading(level: Int, [Inline])
        /// A quotation holding blocks.
        case quote([Block])
        /// A bulleted or numbered list.
        case list(List)
        /// Preformatted text (fenced or indented code), verbatim; `info` is
        /// the fence's info string (`swift` in ```` ```swift ````), or "".
        case code(info: String, text: String)
        /// A thematic break (`---`).
        case rule
        /// A table.
        case table(Table)
    }

    /// A list and its items.
    public struct List: Sendable, Equatable {
        /// True for a numbered list (`1.`, `1)`).
        public var isOrdered: Bool
        /// The number of the first item of a numbered list (1 for bullets).
        public var start: Int
        /// True when no item is separated from the next by a blank line.
        public var isTight: Bool
        /// The items, in order.
        public var items: [Item]
        /// A list of `items`.
        public init(isOrdered: Bool, start: Int = 1, isTight: Bool = true, items: [Item]) {
            self.isOrdered = isOrdered
            self.start = start
            self.isTight = isTight
            self.items = items
        }
    }

    /// One list item.
    public struct Item: Sendable, Equatable {
        /// For a task-list item (`- [ ] …`, `- [x] …`), whether it is
        /// checked; nil for an ordinary item.
        public var task: Bool?
        /// The item's blocks.
        public var blocks: [Block]
        /// An item of `blocks`.
        public init(task: Bool? = nil, blocks: [Block]) {
            self.task = task
            self.blocks = blocks
        }
    }

    /// A table: a header row, body rows, and each column's alignment.
    public struct Table: Sendable, Equatable {
        /// The alignment of a column.
        public enum Alignment: Sendable, Equatable {
            /// Not stated (`---`).
            case none
            /// `:--`.
            case left
            /// `:-:`.
            case center
            /// `--:`.
            case right
        }
        /// One alignment per column.
        public var alignments: [Alignment]
        /// The header row: one cell (its inline spans) per column.
        public var header: [[Inline]]
        /// The body rows, each with one cell per column.
        public var rows: [[[Inline]]]
        /// A table of these rows.
        public init(alignments: [Alignment], header: [[Inline]], rows: [[[Inline]]]) {
            self.alignments = alignments
            self.header = header
            self.rows = rows
        }
    }

    /// A span inside a block.
    public indirect enum Inline: Sendable, Equatable {
        /// Plain text (also what raw inline HTML becomes).
        case text(String)
        /// A line break in the source inside a paragraph. Journals keep
        /// their lines (verse, lists typed as lines): renderers show it as a
        /// line break, not as a space.
        case softBreak
        /// A hard line break (two spaces or a backslash at the end of a line).
        case lineBreak
        /// Inline code, verbatim.
        case code(String)
        /// Emphasis (italic).
        case emphasis([Inline])
        /// Strong emphasis (bold).
        case strong([Inline])
        /// Struck-through text (`~~x~~`).
        case strikethrough([Inline])
        /// A link: its text and its destination, as written (not checked:
        /// renderers decide which destinations to follow).
        case link([Inline], destination: String)
        /// An image: its alternative text (plain) and its source.
        case image(alt: String, source: String)
    }

    /// The blocks, in order.
    public var blocks: [Block]

    /// The deepest nesting of blocks and spans kept as structure; deeper
    /// content is kept as plain text.
    public static let maxDepth = 24

    /// A document of `blocks`.
    public init(blocks: [Block]) { self.blocks = blocks }

    /// Reads `text` (CommonMark with GitHub's tables, task lists,
    /// strikethrough and autolinks).
    public init(parsing text: String) {
        blocks = CmarkReader.read(text)
    }

    /// The plain text of some spans: markup removed, a line break (soft or
    /// hard) as `\n`, an image as its alternative text.
    public static func plainText(_ inlines: [Inline]) -> String {
        var out = ""
        for i in inlines {
            switch i {
            case .text(let s), .code(let s): out += s
            case .emphasis(let c), .strong(let c), .strikethrough(let c), .link(let c, _): out += plainText(c)
            case .image(let alt, _): out += alt
            case .softBreak, .lineBreak: out += "\n"
            }
        }
        return out
    }
}
