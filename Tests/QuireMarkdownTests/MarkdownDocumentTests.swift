import Foundation
import QuireMarkdown
import Testing

@Suite struct MarkdownDocumentTests {
    typealias B = MarkdownDocument.Block
    typealias I = MarkdownDocument.Inline
    typealias L = MarkdownDocument.List
    typealias Item = MarkdownDocument.Item

    @Test func readsBlocks() {
        let doc = MarkdownDocument(parsing: "# Title #\n\nOne\ntwo\n\n> quoted *it*\n> more\n\n- a\n- b\n\n1. c\n\n```swift\n<raw> *x*\n```\n\n---\n### ")
        #expect(doc.blocks == [
            .heading(level: 1, [.text("Title")]),
            .paragraph([.text("One"), .softBreak, .text("two")]),
            .quote([.paragraph([.text("quoted "), .emphasis([.text("it")]), .softBreak, .text("more")])]),
            .list(L(isOrdered: false, items: [Item(blocks: [.paragraph([.text("a")])]), Item(blocks: [.paragraph([.text("b")])])])),
            .list(L(isOrdered: true, items: [Item(blocks: [.paragraph([.text("c")])])])),
            .code(info: "swift", text: "<raw> *x*"), .rule, .heading(level: 3, []),
        ])
    }

    @Test func readsInlines() {
        let doc = MarkdownDocument(parsing: "a **b *c*** _d_ snake_case `*no*` \\*lit\\* [l *x*](https://e.org \"t\") ![alt *y*](quire-attachment://0a) ~~gone~~ ~about~ 2*3")
        #expect(doc.blocks == [.paragraph([
            .text("a "), .strong([.text("b "), .emphasis([.text("c")])]), .text(" "), .emphasis([.text("d")]),
            .text(" snake_case "), .code("*no*"), .text(" *lit* "), .link([.text("l "), .emphasis([.text("x")])], destination: "https://e.org"),
            .text(" "), .image(alt: "alt y", source: "quire-attachment://0a"), .text(" "), .strikethrough([.text("gone")]),
            .text(" ~about~ 2*3"),
        ])])
    }

    /// Day One's checklists and tables (Dev Journal, ergebnis samples).
    @Test func readsTaskListsAndTables() {
        let doc = MarkdownDocument(parsing: "- [ ] Buy tickets\n- [X] Book hotels\n- plain\n\n| One | Two |\n| :-- | --: |\n| Blue | *White* |\n| Green |\n")
        #expect(doc.blocks == [
            .list(L(isOrdered: false, items: [
                Item(task: false, blocks: [.paragraph([.text("Buy tickets")])]), Item(task: true, blocks: [.paragraph([.text("Book hotels")])]),
                Item(blocks: [.paragraph([.text("plain")])]),
            ])),
            .table(MarkdownDocument.Table(
                alignments: [.left, .right], header: [[.text("One")], [.text("Two")]],
                rows: [[[.text("Blue")], [.emphasis([.text("White")])]], [[.text("Green")], []]])),
        ])
    }

    @Test func autolinksAndNumberedStart() {
        let doc = MarkdownDocument(parsing: "See www.example.org and <https://a.org/x>.\n\n3. three\n4. four")
        #expect(doc.blocks == [
            .paragraph([
                .text("See "), .link([.text("www.example.org")], destination: "http://www.example.org"), .text(" and "),
                .link([.text("https://a.org/x")], destination: "https://a.org/x"), .text("."),
            ]),
            .list(L(isOrdered: true, start: 3, items: [Item(blocks: [.paragraph([.text("three")])]), Item(blocks: [.paragraph([.text("four")])])])),
        ])
    }

    /// Raw HTML is never passed on: it is text in the tree.
    @Test func rawHTMLIsText() {
        let doc = MarkdownDocument(parsing: "<div onclick=\"x()\">\n<script>alert(1)</script>\n</div>\n\nInline <b>bold</b> & <em>")
        #expect(doc.blocks == [
            .paragraph([.text("<div onclick=\"x()\">"), .softBreak, .text("<script>alert(1)</script>"), .softBreak, .text("</div>")]),
            .paragraph([.text("Inline <b>bold</b> & <em>")]),
        ])
    }

    @Test func crlfIsANewline() {
        let doc = MarkdownDocument(parsing: "a\r\nb\r\n\r\n- c\r\n---\r\n")
        #expect(doc.blocks == [
            .paragraph([.text("a"), .softBreak, .text("b")]), .list(L(isOrdered: false, items: [Item(blocks: [.paragraph([.text("c")])])])), .rule,
        ])
    }

    @Test func plainText() {
        let doc = MarkdownDocument(parsing: "**a** `b`\n![c](x) [d](y)")
        guard case .paragraph(let spans) = doc.blocks.first else { Issue.record("not a paragraph"); return }
        #expect(MarkdownDocument.plainText(spans) == "a b\nc d")
    }

    /// Deep nesting is kept as text past maxDepth; hostile input stays fast.
    @Test func hostileInputStaysBoundedAndFast() {
        let start = Date()
        let quotes = String(repeating: "> ", count: 5000) + "deep"
        let deep = MarkdownDocument(parsing: quotes)
        var depth = 0
        var blocks = deep.blocks
        while case .quote(let inner)? = blocks.first {
            depth += 1
            blocks = inner
        }
        #expect(depth == MarkdownDocument.maxDepth)
        #expect(blocks == [.paragraph([.text("deep")])])
        let stars = String(repeating: "*a ", count: 50_000) + String(repeating: "[", count: 50_000) + String(repeating: "| a ", count: 2000)
        _ = MarkdownDocument(parsing: stars)
        let emphasis = String(repeating: "*", count: 20_000) + "x" + String(repeating: "*", count: 20_000)
        _ = MarkdownDocument(parsing: emphasis)
        #expect(Date().timeIntervalSince(start) < 20)
        #expect(MarkdownDocument(parsing: "").blocks == [])
        #expect(MarkdownDocument(parsing: "a\u{0}b").blocks == [.paragraph([.text("a\u{FFFD}b")])])
    }
}
