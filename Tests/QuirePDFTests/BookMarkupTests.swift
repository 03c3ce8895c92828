import Foundation
@_spi(Format) import Quire
@_spi(Format) import QuireExport
import Testing
@_spi(Format) @testable import QuirePDF

/// The book reads Markdown through the same cmark-gfm tree as HTML and EPUB:
/// lists, checklists, quotations, code and tables are drawn as such, never
/// printed raw (a new-user trial saw `- item` and `> quote` in the book).
@Suite struct BookMarkupTests {
    @Test func blocksOfAJournalEntry() {
        let blocks = BookMarkup.blocks("# Morning\n\nfirst line\nsecond *line*\n\n- a\n- [x] done\n\n> quoted\n\n```\nx <y>\n```\n\n---")
        #expect(blocks == [
            .heading(level: 1, BookText(markup: "Morning")),
            .text(BookText(markup: "first line\u{2028}second <i>line</i>", justified: true)),
            .text(BookText(markup: "a", indent: 16, marker: "•")),
            .text(BookText(markup: "done", indent: 16, marker: "☑")),
            .text(BookText(markup: "quoted", indent: 16, quoted: true)),
            .code(markup: "x &lt;y&gt;", indent: 0),
            .rule(indent: 0),
        ])
        #expect(BookMarkup.blocks("text\n\n![a photo](quire-attachment://0A01ff)\n\nmore") == [
            .text(BookText(markup: "text", justified: true)), .image(referenceID: "0a01ff"), .text(BookText(markup: "more", justified: true)),
        ])
        #expect(BookMarkup.blocks("3. three\n4. four") == [
            .text(BookText(markup: "three", indent: 16, marker: "3.")), .text(BookText(markup: "four", indent: 16, marker: "4.")),
        ])
    }

    @Test func linksAreKeptWithTheirRangeInTheLaidOutText() {
        let blocks = BookMarkup.blocks("See [the *site*](https://e.org) and [yesterday](quire-entry://00112233445566778899aabbccddeeff) or [x](javascript:y).")
        guard case .text(let t) = blocks.first else { Issue.record("no text"); return }
        #expect(t.markup == "See <u>the <i>site</i></u> and <u>yesterday</u> or x.")
        #expect(t.links == [
            BookLink(range: 4..<12, target: .uri("https://e.org")),
            BookLink(range: 17..<26, target: .entry("00112233445566778899aabbccddeeff")),
        ])
    }

    @Test func hostileTextIsEscaped() {
        let hostile = "<span foreground=\"red\">x</span> & &amp; </b> <b 'q' <markup>"
        guard case .text(let t) = BookMarkup.blocks(hostile).first else { Issue.record("no text"); return }
        #expect(t.markup == "&lt;span foreground=&quot;red&quot;&gt;x&lt;/span&gt; &amp; &amp; &lt;/b&gt; &lt;b &#39;q&#39; &lt;markup&gt;")
        #expect(escapeMarkup("<&>\"'") == "&lt;&amp;&gt;&quot;&#39;")
        #expect(BookMarkup.sanitized("a\u{0}b\u{1}c\u{7F}d\u{85}e\tf", keepNewlines: false) == "abcde f")
    }

    /// 3,000 random strings of Markdown and markup punctuation: every block
    /// becomes markup pango accepts.
    @Test func randomPunctuationAlwaysParses() {
        let t = Typesetter()
        let alphabet = Array("**__\\<>&;\"'[]()#!/ \n-|~`>1.aéЖ中\u{2028}x".unicodeScalars)
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        for _ in 0..<3000 {
            var s = String.UnicodeScalarView()
            for _ in 0..<Int(next() % 40) { s.append(alphabet[Int(next() % UInt64(alphabet.count))]) }
            for block in BookMarkup.blocks(String(s)) {
                var markups: [String] = []
                switch block {
                case .text(let x), .heading(_, let x): markups = [x.markup, x.marker]
                case .code(let m, _): markups = [m]
                case .table(let rows, _, _, _): markups = rows.flatMap { $0.map(\.markup) }
                case .image, .rule: break
                }
                for m in markups {
                    let layout = t.layout(markup: m, font: BookFont.body)
                    t.release(layout)
                }
            }
        }
        #expect(t.markupFallbacks == 0)
    }

    /// Day One's checklists, lists, quotations and tables in a printed book.
    @Test func theBookDrawsListsQuotesChecklistsAndTables() throws {
        let dir = TemporaryDirectory()
        let vault = try makeVault(dir, name: "lists", entries: [(
            "2024-04-16",
            "# To do\n\n- [ ] Buy tickets\n- [X] Book hotels\n\n- bread\n- milk\n\n> A letter,\n> quoted.\n\n| One | Two |\n| --- | --- |\n| Blue | White |\n\n```\ncode  kept\n```"
        )], zone: "Europe/London", offset: 3600)
        try vault.add(EntryBody(created: instant("2024-04-17", offset: 3600), timeZone: "Europe/London", text: "Moody.", mood: 2,
            location: Location(latitude: -33.8688, longitude: 151.2093)))
        let report = try writePDFBook(vault, to: dir.file("book.pdf"))
        #expect(report.unknownGlyphs == 0)
        #expect(report.markupFallbacks == 0)
        let text = try run("pdftotext", ["-layout", dir.file("book.pdf"), "-"]).output
        let lines = text.split(separator: "\n").map { $0.split(separator: " ").joined(separator: " ") }
        for expected in ["☐ Buy tickets", "☑ Book hotels", "• bread", "• milk", "A letter,", "quoted.", "One Two", "Blue White", "code kept",
            "33.86880° S, 151.20930° E · mood 2/5"] {
            #expect(lines.contains { $0.contains(expected) }, "missing \(expected) in \(lines)")
        }
        for raw in ["- bread", "> A letter", "| One", "[ ]", "```"] {
            #expect(!text.contains(raw), "printed raw: \(raw)")
        }
    }
}

/// Links between entries (issue 16, family 2) are links inside the book:
/// each lands on the heading of the entry it names; an outside link opens
/// its address; a link to an entry not in the book is its text only.
@Suite struct BookLinkTests {
    @Test func linksToEntriesLandOnTheirHeading() throws {
        let dir = TemporaryDirectory()
        let vault = try makeVault(dir, name: "links", entries: [("2024-04-16", "The target.")], zone: "Europe/London", offset: 3600)
        let target = try #require(try vault.entries().first).id
        let hexID = target.description.lowercased()
        try vault.add(EntryBody(
            created: instant("2024-04-17", offset: 3600), timeZone: "Europe/London",
            text: "Back to [the target](quire-entry://\(hexID)), again <quire-entry://\(hexID)>, away [out](https://example.org/x) and [nowhere](quire-entry://00000000000000000000000000000000)."))
        _ = try writePDFBook(vault, to: dir.file("book.pdf"), locale: "en_GB")
        // cairo 1.16 once wrote a damaged file for links (see BookRenderer): qpdf must find none.
        #expect(try run("qpdf", ["--check", dir.file("book.pdf")]).status == 0)
        #expect(try run("qpdf", ["--qdf", "--object-streams=disable", dir.file("book.pdf"), dir.file("plain.pdf")]).status == 0)
        let pdf = String(decoding: try fileBytes(dir.file("plain.pdf")), as: UTF8.self)
        // Two links to the entry, one outside link; the named destination is the entry's heading.
        #expect(pdf.components(separatedBy: "/Subtype /Link").count - 1 == 3)
        #expect(pdf.contains("(e\(hexID))"))
        #expect(pdf.contains("https://example.org/x"))
        #expect(!pdf.contains("(e00000000000000000000000000000000)"))
        let text = try pdfText(dir.file("book.pdf"))
        #expect(squeezed(text).contains(squeezed("Back to the target, again linked entry, away out and nowhere.")))
    }
}
