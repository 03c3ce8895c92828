@_spi(Format) import Quire
import QuireMarkdown

/// Markup, escaped for HTML and XHTML alike.
enum Markup {
    /// `s` with `&`, `<`, `>`, `"` and `'` escaped, and characters XML
    /// forbids (C0 controls other than tab, newline and carriage return;
    /// U+FFFE, U+FFFF) replaced by U+FFFD.
    static func escape(_ s: String) -> String {
        EscapeBytes.transform(s, EscapeBytes.markup)
    }

    /// True for link destinations that may be followed (``EntryLinks/isSafeOutsideLink(_:)``).
    static func isSafeLink(_ url: String) -> Bool { EntryLinks.isSafeOutsideLink(url) }
}

/// A piece of rendered entry markup: markup text, or an image the caller
/// writes itself (inlined as data, or as a file in a book).
enum RenderedPiece {
    case markup(String)
    case image(AttachmentReference, alt: String)
}

/// Renders an entry's text, read by ``MarkdownDocument`` (QuireMarkdown,
/// libcmark-gfm), to HTML/XHTML pieces. Every piece of text is escaped and
/// raw HTML in the text is shown as text; links are followed only for
/// `http`, `https` and `mailto`, and for `quire-entry://` links to entries
/// in the same export (`entryLink` gives their target); images only for the
/// entry's own image attachments (`quire-attachment://`), never for outside
/// sources (their alt text is shown instead). Task-list items show ☐ or ☑;
/// a line break in a paragraph is kept (journals keep their lines).
struct EntryRenderer {
    /// The heading level of the entry's own title; headings in the text
    /// start one below.
    let entryHeadingLevel: Int
    /// Which media types may be shown as images.
    let imageTypes: Set<String>
    /// The `href` for a link to another entry (by its id), or nil when that
    /// entry is not in this export (then only the link's text is shown).
    var entryLink: (EntryID) -> String? = { _ in nil }
    /// The text shown for a link to an entry written as a bare address
    /// (its text is the `quire-entry://` address itself).
    var linkedEntryLabel = "linked entry"

    func render(_ body: EntryBody) -> [RenderedPiece] {
        var pieces: [RenderedPiece] = []
        var buffer = ""
        func image(_ ref: AttachmentReference, alt: String) {
            if !buffer.isEmpty {
                pieces.append(.markup(buffer))
                buffer = ""
            }
            pieces.append(.image(ref, alt: alt))
        }
        var refs: [String: AttachmentReference] = [:]
        for r in body.attachments where !r.id.isEmpty { refs[EntryLinks.attachmentPrefix + hex(r.id)] = r }
        var shown = Set<[UInt8]>()
        let doc = MarkdownDocument(parsing: body.text)

        func inlines(_ items: [MarkdownDocument.Inline]) {
            for item in items {
                switch item {
                case .text(let s): buffer += Markup.escape(s)
                case .softBreak, .lineBreak: buffer += "<br/>\n"
                case .code(let s): buffer += "<code>" + Markup.escape(s) + "</code>"
                case .emphasis(let c): wrap("em", c)
                case .strong(let c): wrap("strong", c)
                case .strikethrough(let c): wrap("del", c)
                case .link(let c, let url):
                    if Markup.isSafeLink(url) {
                        buffer += "<a href=\"" + Markup.escape(url) + "\">"
                        inlines(c)
                        buffer += "</a>"
                    } else if let id = EntryLinks.entryID(inLink: url) {
                        // An address as its own text (<quire-entry://…>) is shown by a word, never raw.
                        let content: [MarkdownDocument.Inline] = c == [.text(url)] ? [.text(linkedEntryLabel)] : c
                        if let href = entryLink(EntryID(unchecked: id)) {
                            buffer += "<a href=\"" + Markup.escape(href) + "\">"
                            inlines(content)
                            buffer += "</a>"
                        } else {
                            inlines(content)
                        }
                    } else {
                        inlines(c)
                    }
                case .image(let alt, let url):
                    if let r = refs[url.lowercased()], imageTypes.contains(r.mediaType.lowercased()) {
                        shown.insert(r.id)
                        image(r, alt: alt.isEmpty ? r.fileName : alt)
                    } else if let r = refs[url.lowercased()] {
                        shown.insert(r.id)
                        buffer += "<span class=\"attachment\">[" + Markup.escape(r.fileName.isEmpty ? r.mediaType : r.fileName) + "]</span>"
                    } else {
                        buffer += "<span class=\"image-ref\">[" + Markup.escape(alt.isEmpty ? "image" : alt) + "]</span>"
                    }
                }
            }
        }
        func wrap(_ tag: String, _ content: [MarkdownDocument.Inline]) {
            buffer += "<\(tag)>"
            inlines(content)
            buffer += "</\(tag)>"
        }
        func paragraph(_ c: [MarkdownDocument.Inline], tight: Bool) {
            // A paragraph holding only an image becomes a figure-like block.
            if c.count == 1, case .image = c[0] {
                buffer += "<div class=\"photo\">"
                inlines(c)
                buffer += "</div>\n"
            } else if tight {
                inlines(c)
            } else {
                buffer += "<p>"
                inlines(c)
                buffer += "</p>\n"
            }
        }
        func blocks(_ items: [MarkdownDocument.Block], tight: Bool = false) {
            for (n, block) in items.enumerated() {
                switch block {
                case .heading(let level, let c):
                    let h = min(6, entryHeadingLevel + level)
                    buffer += "<h\(h)>"
                    inlines(c)
                    buffer += "</h\(h)>\n"
                case .paragraph(let c):
                    paragraph(c, tight: tight)
                    if tight, n + 1 < items.count { buffer += "<br/>\n" }
                case .quote(let inner):
                    buffer += "<blockquote>\n"
                    blocks(inner)
                    buffer += "</blockquote>\n"
                case .list(let list):
                    let tag = list.isOrdered ? "ol" : "ul"
                    let tasks = list.items.contains { $0.task != nil }
                    buffer +=
                        "<\(tag)\(list.isOrdered && list.start != 1 ? " start=\"\(list.start)\"" : "")\(tasks ? " class=\"tasks\"" : "")>\n"
                    for item in list.items {
                        buffer += "<li>"
                        if let done = item.task { buffer += done ? "☑ " : "☐ " }
                        blocks(item.blocks, tight: list.isTight)
                        buffer += "</li>\n"
                    }
                    buffer += "</\(tag)>\n"
                case .code(_, let s): buffer += "<pre><code>" + Markup.escape(s) + "</code></pre>\n"
                case .rule: buffer += "<hr/>\n"
                case .table(let t):
                    buffer += "<table>\n"
                    if !t.header.isEmpty {
                        buffer += "<thead><tr>"
                        for (i, cell) in t.header.enumerated() { tableCell("th", cell, t.alignments[i]) }
                        buffer += "</tr></thead>\n"
                    }
                    buffer += "<tbody>\n"
                    for row in t.rows {
                        buffer += "<tr>"
                        for (i, cell) in row.enumerated() { tableCell("td", cell, i < t.alignments.count ? t.alignments[i] : .none) }
                        buffer += "</tr>\n"
                    }
                    buffer += "</tbody>\n</table>\n"
                }
            }
        }
        func tableCell(_ tag: String, _ cell: [MarkdownDocument.Inline], _ alignment: MarkdownDocument.Table.Alignment) {
            let align: String
            switch alignment {
            case .none: align = ""
            case .left: align = " class=\"left\""
            case .center: align = " class=\"center\""
            case .right: align = " class=\"right\""
            }
            buffer += "<\(tag)\(align)>"
            inlines(cell)
            buffer += "</\(tag)>"
        }
        blocks(doc.blocks)
        // Attachments the text does not show: images at the end, others by name.
        for r in body.attachments where !shown.contains(r.id) {
            if imageTypes.contains(r.mediaType.lowercased()) {
                buffer += "<div class=\"photo\">"
                image(r, alt: r.fileName)
                buffer += "</div>\n"
            } else {
                buffer += "<p class=\"attachment\">[" + Markup.escape(r.fileName.isEmpty ? r.mediaType : r.fileName) + "]</p>\n"
            }
        }
        if !buffer.isEmpty { pieces.append(.markup(buffer)) }
        return pieces
    }

    /// The entry's heading text in the book's locale: the date and time
    /// (`11 January 1660 at 22:00`; the date alone for all-day entries), in
    /// the entry's own time zone.
    static func headingText(_ body: EntryBody, locale: BookLocale) -> String {
        let t = LocalTime(of: body)
        return body.isAllDay ? locale.date(t) : locale.dateTime(t)
    }

    /// The escaped line under the heading: journal, place, weather, mood, tags, ★.
    static func metaLine(_ body: EntryBody, locale: BookLocale) -> String {
        var parts: [String] = []
        if !body.journal.isEmpty { parts.append(Markup.escape(body.journal)) }
        if let l = body.location {
            let place = EntryDisplay.place(l)
            if !place.isEmpty { parts.append(Markup.escape(place)) }
        }
        if let w = body.weather {
            let s = EntryDisplay.weather(w)
            if !s.isEmpty { parts.append(Markup.escape(s)) }
        }
        if let mood = body.moodRawValue { parts.append(Markup.escape(locale.mood(mood))) }
        if !body.tags.isEmpty { parts.append(body.tags.map { "#" + Markup.escape($0) }.joined(separator: " ")) }
        if body.isStarred { parts.append("★") }
        return parts.joined(separator: " · ")
    }
}
