import Testing
@testable import QuirePDF

@Suite struct MarkdownMarkupTests {
    @Test func paragraphsHeadingsAndLineBreaks() {
        #expect(MarkdownMarkup.blocks("# Morning\n\nfirst line\nsecond line\n\n\nnext") == [
            .heading(level: 1, markup: "Morning"),
            .paragraph("first line\u{2028}second line"),
            .paragraph("next"),
        ])
        #expect(MarkdownMarkup.blocks("### Three ###\r\nbody\r\n") == [.heading(level: 3, markup: "Three"), .paragraph("body")])
        #expect(MarkdownMarkup.blocks("#hashtag is text") == [.paragraph("#hashtag is text")])
        #expect(MarkdownMarkup.blocks("####### seven") == [.paragraph("####### seven")])
        #expect(MarkdownMarkup.blocks("  \n\t\n") == [])
    }

    @Test func emphasis() {
        #expect(MarkdownMarkup.inline("I rose *early* and **walked**.") == "I rose <i>early</i> and <b>walked</b>.")
        #expect(MarkdownMarkup.inline("***both***") == "<i><b>both</b></i>")
        // Crossed delimiters still give nested, balanced tags.
        #expect(MarkdownMarkup.inline("**a *b** c*") == "<b>a <i>b</i></b><i> c</i>")
        #expect(MarkdownMarkup.inline("2 * 3 = 6, *unclosed, a ** b") == "2 * 3 = 6, *unclosed, a ** b")
        #expect(MarkdownMarkup.inline("\\*not\\* emphasis") == "*not* emphasis")
        #expect(MarkdownMarkup.inline("*1-е Іюня.* Всталъ") == "<i>1-е Іюня.</i> Всталъ")
        #expect(MarkdownMarkup.inline("**open at the end") == "**open at the end")
    }

    @Test func linksAndImages() {
        #expect(MarkdownMarkup.inline("see [the page](https://example.org/a?b=1&c=2) now") == "see the page now")
        #expect(MarkdownMarkup.inline("Б[уемскимъ] and [3]") == "Б[уемскимъ] and [3]")
        #expect(MarkdownMarkup.blocks("text\n![a photo](quire-attachment://0A01ff)\nmore") == [
            .paragraph("text"), .image(referenceID: "0a01ff"), .paragraph("more"),
        ])
        #expect(MarkdownMarkup.blocks("![x](quire-attachment://zz)") == [.paragraph("x")])
        #expect(MarkdownMarkup.inline("a ![map](https://example.org/m.png) b !") == "a map b !")
    }

    @Test func hostileTextIsEscaped() {
        let hostile = "<span foreground=\"red\">x</span> & &amp; </b> <b 'q' <markup>"
        #expect(MarkdownMarkup.inline(hostile)
            == "&lt;span foreground=&quot;red&quot;&gt;x&lt;/span&gt; &amp; &amp;amp; &lt;/b&gt; &lt;b &#39;q&#39; &lt;markup&gt;")
        #expect(escapeMarkup("<&>\"'") == "&lt;&amp;&gt;&quot;&#39;")
        // Control characters never reach the markup parser; a tab becomes a space.
        #expect(MarkdownMarkup.inline("a\u{0}b\u{1}c\u{7F}d\u{85}e\tf") == "abcde f")
    }

    /// pango parses what the renderer makes, and the text it lays out is the source text.
    @Test func pangoParsesHostileMarkup() {
        let t = Typesetter()
        let hostile = "<span foreground=\"red\">x</span> & &amp; &#0; &bogus; </b> <b <![CDATA[ ]]> <!-- c --> 'q\""
        let layout = t.layout(markup: MarkdownMarkup.inline(hostile), font: BookFont.body)
        #expect(t.text(of: layout) == hostile)
        #expect(t.unknownGlyphs(in: layout) == 0)
        t.release(layout)
        #expect(t.markupFallbacks == 0)
    }

    /// 3,000 random strings of Markdown and markup punctuation: every one
    /// becomes markup pango accepts.
    @Test func randomPunctuationAlwaysParses() {
        let t = Typesetter()
        let alphabet = Array("**__\\<>&;\"'[]()#!/ \naéЖ中\u{2028}x".unicodeScalars)
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
            for block in MarkdownMarkup.blocks(String(s)) {
                guard case .paragraph(let markup) = block else { continue }
                let layout = t.layout(markup: markup, font: BookFont.body)
                t.release(layout)
            }
        }
        #expect(t.markupFallbacks == 0)
    }
}
