import Quire

/// Markup, escaped for HTML and XHTML alike.
enum Markup {
    /// `s` with `&`, `<`, `>`, `"` and `'` escaped, and characters XML
    /// forbids (C0 controls other than tab, newline and carriage return;
    /// U+FFFE, U+FFFF) replaced by U+FFFD.
    static func escape(_ s: String) -> String {
        EscapeBytes.transform(s, EscapeBytes.markup)
    }

    /// True for link destinations that may be followed: `http:`, `https:`
    /// and `mailto:` (any case), with no control or space characters.
    static func isSafeLink(_ url: String) -> Bool {
        let lower = url.lowercased()
        guard lower.hasPrefix("https://") || lower.hasPrefix("http://") || lower.hasPrefix("mailto:") else { return false }
        return !url.unicodeScalars.contains { $0.value <= 0x20 || $0.value == 0x7F }
    }
}

/// A piece of rendered entry markup: markup text, or an image the caller
/// writes itself (inlined as data, or as a file in a book).
enum RenderedPiece {
    case markup(String)
    case image(AttachmentReference, alt: String)
}

/// Renders an entry's text (through ``MarkdownDocument``) to HTML/XHTML
/// pieces. Every piece of text is escaped; links only for `http`, `https`
/// and `mailto`; images only for the entry's own image attachments
/// (`quire-attachment://`), never for outside sources (their alt text is
/// shown instead).
struct EntryRenderer {
    /// The heading level of the entry's own title; headings in the text
    /// start one below.
    let entryHeadingLevel: Int
    /// Which media types may be shown as images.
    let imageTypes: Set<String>

    func render(_ body: EntryBody) -> [RenderedPiece] {
        var pieces: [RenderedPiece] = []
        var buffer = ""
        func image(_ ref: AttachmentReference, alt: String) {
            if !buffer.isEmpty { pieces.append(.markup(buffer)); buffer = "" }
            pieces.append(.image(ref, alt: alt))
        }
        var refs: [String: AttachmentReference] = [:]
        for r in body.attachments where !r.id.isEmpty { refs["quire-attachment://" + hex(r.id)] = r }
        var shown = Set<[UInt8]>()
        let doc = MarkdownDocument(parsing: body.text)

        func inlines(_ items: [MarkdownDocument.Inline]) {
            for item in items {
                switch item {
                case .text(let s): buffer += Markup.escape(s)
                case .lineBreak: buffer += "<br/>\n"
                case .code(let s): buffer += "<code>" + Markup.escape(s) + "</code>"
                case .emphasis(let c):
                    buffer += "<em>"
                    inlines(c)
                    buffer += "</em>"
                case .strong(let c):
                    buffer += "<strong>"
                    inlines(c)
                    buffer += "</strong>"
                case .link(let c, let url):
                    if Markup.isSafeLink(url) {
                        buffer += "<a href=\"" + Markup.escape(url) + "\">"
                        inlines(c)
                        buffer += "</a>"
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
        func blocks(_ items: [MarkdownDocument.Block]) {
            var listOpen: Bool?
            for block in items {
                if case .listItem(let ordered, _) = block {
                    if listOpen != ordered {
                        if let o = listOpen { buffer += o ? "</ol>\n" : "</ul>\n" }
                        buffer += ordered ? "<ol>\n" : "<ul>\n"
                        listOpen = ordered
                    }
                } else if let o = listOpen {
                    buffer += o ? "</ol>\n" : "</ul>\n"
                    listOpen = nil
                }
                switch block {
                case .heading(let level, let c):
                    let h = min(6, entryHeadingLevel + level)
                    buffer += "<h\(h)>"
                    inlines(c)
                    buffer += "</h\(h)>\n"
                case .paragraph(let c):
                    // A paragraph holding only an image becomes a figure-like block.
                    if c.count == 1, case .image = c[0] {
                        buffer += "<div class=\"photo\">"
                        inlines(c)
                        buffer += "</div>\n"
                    } else {
                        buffer += "<p>"
                        inlines(c)
                        buffer += "</p>\n"
                    }
                case .quote(let inner):
                    buffer += "<blockquote>\n"
                    blocks(inner)
                    buffer += "</blockquote>\n"
                case .listItem(_, let c):
                    buffer += "<li>"
                    inlines(c)
                    buffer += "</li>\n"
                case .code(let s): buffer += "<pre>" + Markup.escape(s) + "</pre>\n"
                case .rule: buffer += "<hr/>\n"
                }
            }
            if let o = listOpen { buffer += o ? "</ol>\n" : "</ul>\n" }
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

    /// The entry's heading text: `Wednesday 11 January 1660, 22:00` (the
    /// time left out for all-day entries), in the entry's own time zone.
    static func headingText(_ body: EntryBody) -> String {
        let t = LocalTime(of: body)
        var s = "\(t.day) \(t.monthName) \(t.year)"
        if !body.isAllDay { s += ", \(pad(t.hour, 2)):\(pad(t.minute, 2))" }
        return s
    }

    /// The escaped line under the heading: journal, tags, place, weather.
    static func metaLine(_ body: EntryBody) -> String {
        var parts: [String] = []
        if !body.journal.isEmpty { parts.append(Markup.escape(body.journal)) }
        if let l = body.location {
            let place = [l.placeName, l.locality, l.region, l.country].filter { !$0.isEmpty }.joined(separator: ", ")
            if !place.isEmpty { parts.append(Markup.escape(place)) }
        }
        if let w = body.weather {
            var s = w.conditions
            if let t = w.temperatureCelsius { s += (s.isEmpty ? "" : ", ") + YAMLWriter.floatText((t * 10).rounded() / 10) + " °C" }
            if !s.isEmpty { parts.append(Markup.escape(s)) }
        }
        if !body.tags.isEmpty { parts.append(body.tags.map { "#" + Markup.escape($0) }.joined(separator: " ")) }
        if body.isStarred { parts.append("★") }
        return parts.joined(separator: " · ")
    }
}
