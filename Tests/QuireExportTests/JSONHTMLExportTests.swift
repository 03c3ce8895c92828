import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
@_spi(Format) import Quire
@_spi(Format) import QuireExport
import Testing
import QuireTestSupport

/// True when `text` is well-formed XML (the HTML export is written as XHTML-compatible markup).
func isWellFormedXML(_ text: String) -> Bool {
    let parser = XMLParser(data: Data(text.utf8))
    return parser.parse()
}

@Suite struct JSONExportTests {
    @Test func writesTheDocumentedSchema() throws {
        let dir = TemporaryDirectory()
        let vault = try makeSampleVault(dir)
        let report = try exportJournal(vault, format: .json, to: dir.file("out.json"))
        #expect(report.entries == 5)
        #expect(report.attachments == 0)
        let text = try read(dir.file("out.json"))
        #expect(try matchesGolden(text.replacingOccurrences(of: photoPrefix(vault), with: "PHOTO"), "sample.json"))
        let doc = try JSONSerialization.jsonObject(with: Data(text.utf8)) as! [String: Any]
        #expect(doc["format"] as? String == "quire-journal")
        #expect(doc["entryCount"] as? Int == 5)
        let entries = doc["entries"] as! [[String: Any]]
        #expect(entries.map { $0["created"] as! Int64 } == entries.map { $0["created"] as! Int64 }.sorted())
        #expect(entries[2]["text"] as? String == hostile + "\n\nSecond *para* with <em>")
        let extra = entries[0]["extra"] as! [String: Any]
        #expect(extra["raw"] as? [String: String] == ["$bytes": "AP8Q"])
        #expect(extra["count"] as? [String: String] == ["$int": "18446744073709551615"])
        #expect(extra["pi"] as? Double == 3.141592653589793)
        #expect(dir.listing() == ["out.json", "v.quire"])
    }

    @Test func mediaOptionWritesASiblingFolder() throws {
        let dir = TemporaryDirectory()
        let vault = try makeSampleVault(dir)
        let report = try exportJournal(vault, format: .json, to: dir.file("out.json"), options: ExportOptions(jsonMedia: true))
        #expect(report.attachments == 1)
        #expect(dir.listing() == ["out.json", "out.json.media", "out.json.media/\(photoPrefix(vault)).jpg", "v.quire"])
        #expect(try read(dir.file("out.json")).contains("\"path\": \"out.json.media/\(photoPrefix(vault)).jpg\""))
    }
}

@Suite struct HTMLExportTests {
    @Test func isSelfContainedEscapedAndGolden() throws {
        let dir = TemporaryDirectory()
        let vault = try makeSampleVault(dir)
        let report = try exportJournal(vault, format: .html, to: dir.file("out.html"))
        #expect(report.entries == 5)
        #expect(report.attachments == 1)
        let html = try read(dir.file("out.html"))
        // The photo is inlined, whole.
        let photo = try Data(contentsOf: URL(fileURLWithPath: fixtures + "/photo.jpg")).base64EncodedString()
        #expect(html.contains("src=\"data:image/jpeg;base64,\(photo)\""))
        // Hostile text never becomes markup.
        #expect(!html.contains("<script"))
        #expect(!html.contains("<b>"))
        #expect(!html.contains("<em>\n"))
        #expect(html.contains("&lt;script&gt;alert(&quot;x&amp;y&quot;)&lt;/script&gt; &lt;b&gt;unbalanced &amp; &#39;quoted&#39; &lt;/i&gt;]]&gt; \u{FFFD} end"))
        #expect(html.contains("#&lt;tag&gt;&amp;&quot;q&quot;"))
        #expect(html.contains("J&quot;&amp;&lt;&gt;&#39;"))
        #expect(html.contains("<title>Sample &amp; &lt;Journal&gt;</title>"))
        // No outside resource.
        #expect(!html.contains("src=\"http"))
        #expect(!html.contains("<link"))
        #expect(isWellFormedXML(html.replacingOccurrences(of: "<!DOCTYPE html>\n", with: "")))
        #expect(try matchesGolden(html.replacingOccurrences(of: photo, with: "PHOTO"), "sample.html"))
    }

    @Test func unsafeLinksAreDroppedAndOutsideImagesNotLoaded() throws {
        let dir = TemporaryDirectory()
        let vault = try makeVault(dir)
        try vault.add(EntryBody(created: 0, text: "[x](javascript:alert(1)) ![a](https://evil.example/p.png) [ok](https://ok.example/\"q)"))
        _ = try exportJournal(vault, format: .html, to: dir.file("out.html"))
        let html = try read(dir.file("out.html"))
        #expect(!html.contains("javascript:"))
        #expect(!html.contains("evil.example"))
        #expect(html.contains("<a href=\"https://ok.example/&quot;q\">ok</a>"))
    }
}

@Suite(.tags(.slow), .skippedByMakeCheck) struct HTMLEscapingTests {
    @Test func fileNamesAndAltTextAreEscaped() throws {
        let dir = TemporaryDirectory()
        let vault = try makeVault(dir)
        try vault.commit { tx in
            let pdf = try tx.storeAttachment(from: MemoryByteSource(Array("%PDF-1.4".utf8)), mediaType: "application/pdf")
            let jpg = try tx.storeAttachment(fromFile: fixtures + "/photo.jpg", mediaType: "image/jpeg")
            try tx.add(EntryBody(created: 0, text: "![<b>\"alt\"</b>](quire-attachment://02)", attachments: [
                AttachmentReference(id: [1], blob: pdf.blob, mediaType: "application/pdf", fileName: "<x>&\"y\".pdf"),
                AttachmentReference(id: [2], blob: jpg.blob, mediaType: "image/jpeg", fileName: "a.jpg"),
            ]))
        }
        for (format, name) in [(ExportFormat.html, "out.html"), (.epub, "out.epub")] {
            _ = try exportJournal(vault, format: format, to: dir.file(name))
        }
        let html = try read(dir.file("out.html"))
        #expect(html.contains("<p class=\"attachment\">[&lt;x&gt;&amp;&quot;y&quot;.pdf]</p>"))
        #expect(html.contains("<img alt=\"&lt;b&gt;&quot;alt&quot;&lt;/b&gt;\" src=\"data:image/jpeg;base64,"))
        #expect(!html.contains("<x>"))
        try expectEPUBCheckClean(dir.file("out.epub"))
    }
}

/// Markdown is read once, by libcmark-gfm, and every part of it rendered:
/// lists, task lists (Day One checklists), tables, quotations, code, struck
/// text; raw HTML stays text; the mood and a place known only by its
/// coordinates are shown.
@Suite struct HTMLMarkdownTests {
    @Test func checklistsTablesListsAndQuotesRender() throws {
        let dir = TemporaryDirectory()
        let vault = try makeVault(dir)
        try vault.add(EntryBody(
            created: 0, timeZone: "UTC",
            text: "- [ ] Buy tickets\n- [X] Book hotels\n\n1. one\n2. two\n\n> quoted\n> *lines*\n\n| One | Two |\n| --- | --: |\n| Blue | ~~White~~ |\n\n```\nx \\ y <z>\n```\n\n<div>raw</div>",
            mood: 4, location: Location(latitude: 51.5098, longitude: -0.0796)))
        _ = try exportJournal(vault, format: .html, to: dir.file("out.html"))
        let html = try read(dir.file("out.html"))
        let article = String(html[html.range(of: "<p class=\"meta\">")!.lowerBound..<html.range(of: "</article>")!.lowerBound])
        #expect(article == """
            <p class="meta">51.50980° N, 0.07960° W · mood 4/5</p>
            <ul class="tasks">
            <li>☐ Buy tickets</li>
            <li>☑ Book hotels</li>
            </ul>
            <ol>
            <li>one</li>
            <li>two</li>
            </ol>
            <blockquote>
            <p>quoted<br/>
            <em>lines</em></p>
            </blockquote>
            <table>
            <thead><tr><th>One</th><th class="right">Two</th></tr></thead>
            <tbody>
            <tr><td>Blue</td><td class="right"><del>White</del></td></tr>
            </tbody>
            </table>
            <pre><code>x \\ y &lt;z&gt;</code></pre>
            <p>&lt;div&gt;raw&lt;/div&gt;</p>

            """)
        #expect(isWellFormedXML(html.replacingOccurrences(of: "<!DOCTYPE html>\n", with: "")))
    }
}
