import CPangoCairo
@_spi(Format) import Quire
import QuireExport
import QuireMarkdown

/// Draws a ``BookPlan``: title page, contents, entries. Runs the layout
/// twice (see ``Typesetter``): the first pass finds the page of every
/// month, the second draws into a cairo PDF surface streaming to a
/// ``PDFOutput``.
final class BookRenderer {
    let plan: BookPlan
    let vault: Vault
    let contents: [[BookPlan.ContentsRow]]
    /// Year × 100 + month → the page its first entry heading is on.
    private var monthPages: [Int: Int] = [:]
    private var report = PDFBookReport()
    /// The blobs drawn so far: cairo-pdf holds one image object for each
    /// (see ``Photo/surface(_:)``). 32 bytes a distinct photo.
    private var embedded = Set<BlobID>()
    private var bodyLineHeight = 13.0

    init(plan: BookPlan, vault: Vault) {
        self.plan = plan
        self.vault = vault
        contents = plan.contentsPages
    }

    var firstBodyPage: Int { 2 + contents.count }

    func render(into output: PDFOutput, progress: (ExportProgress) -> Void) throws(PDFBookError) -> PDFBookReport {
        progress(ExportProgress(done: 0, total: plan.entries.count))
        // Pass 1: measure.
        do {
            let t = Typesetter(language: plan.locale.identifier)
            t.counts = false
            bodyLineHeight = measureBodyLine(t)
            for _ in 0..<firstBodyPage { t.newPage() }
            for i in plan.entries.indices {
                // Cancelled (its Task, or a progress handler): the output is
                // discarded and nothing is left at the path.
                if VaultCancellation.isRequested { throw .cancelled }
                entry(i, t, drawing: false)
            }
        }
        // Pass 2: draw.
        let closure = Unmanaged.passUnretained(output).toOpaque()
        let surface = withExtendedLifetime(output) {
            cairo_pdf_surface_create_for_stream(pdfOutputWrite, closure, Page.width, Page.height)!
        }
        defer { cairo_surface_destroy(surface) }
        let date = pdfMetadataDate(milliseconds: plan.documentDate)
        cairo_pdf_surface_set_metadata(surface, CAIRO_PDF_METADATA_TITLE, plan.title)
        cairo_pdf_surface_set_metadata(surface, CAIRO_PDF_METADATA_CREATOR, "Quire")
        cairo_pdf_surface_set_metadata(surface, CAIRO_PDF_METADATA_CREATE_DATE, date)
        cairo_pdf_surface_set_metadata(surface, CAIRO_PDF_METADATA_MOD_DATE, date)
        let cr = cairo_create(surface)!
        defer { cairo_destroy(cr) }
        // The whole book is one structure element: cairo 1.16.0 (Debian 12)
        // writes a broken cross-reference table for link annotations that
        // sit in no structure element (qpdf --check reports the damage).
        cairo_tag_begin(cr, "Document", nil)
        let t = Typesetter(language: plan.locale.identifier)
        t.cr = cr
        titlePage(t)
        contentsPages(t)
        outline(surface)
        for i in plan.entries.indices {
            withExtendedLifetime(output) { entry(i, t, drawing: true) }
            progress(ExportProgress(done: i + 1, total: plan.entries.count))
            if VaultCancellation.isRequested { throw .cancelled }
            if let failure = output.failure { throw .system(failure) }
            let status = cairo_status(cr)
            if status != CAIRO_STATUS_SUCCESS { throw .cairo(String(cString: cairo_status_to_string(status))) }
        }
        cairo_tag_end(cr, "Document")
        t.finishPage()
        report.pages = t.page
        report.entries = plan.entries.count
        report.unknownGlyphs = t.unknownGlyphs
        report.markupFallbacks = t.markupFallbacks
        report.substitutedCharacters = t.substitutedCharacters
        withExtendedLifetime(output) { cairo_surface_finish(surface) }
        if let failure = output.failure { throw .system(failure) }
        let status = cairo_surface_status(surface)
        if status != CAIRO_STATUS_SUCCESS { throw .cairo(String(cString: cairo_status_to_string(status))) }
        return report
    }

    private func measureBodyLine(_ t: Typesetter) -> Double {
        let l = t.layout(markup: "Hg", font: BookFont.body)
        defer { t.release(l) }
        return t.firstLineHeight(l)
    }

    // MARK: Title and contents

    private func titlePage(_ t: Typesetter) {
        t.numbersPages = false
        t.newPage()
        t.skip(Page.textHeight * 0.28)
        let count = plan.entries.count
        let lines: [(String, String, Double)] = [
            (escapeMarkup(BookMarkup.sanitized(Self.shortTitle(plan.title), keepNewlines: false)), BookFont.title, 18),
            (escapeMarkup(plan.dateRange), BookFont.subtitle, 8),
            (escapeMarkup(plan.locale.entryCount(count)), BookFont.subtitle, 0),
        ]
        for (markup, font, after) in lines where !markup.isEmpty {
            let l = t.layout(markup: markup, font: font, alignment: PANGO_ALIGN_CENTER)
            t.place(l)
            t.release(l)
            t.skip(after)
        }
        t.newPage()
        t.numbersPages = true
    }

    /// The title as the title page prints it: at most 80 characters (then
    /// "…"), so the title page is always one page and the page numbers the
    /// measuring pass assumes hold.
    static func shortTitle(_ title: String) -> String {
        title.count <= 80 ? title : String(title.prefix(79)) + "…"
    }

    private func contentsPages(_ t: Typesetter) {
        guard let cr = t.cr else { return }
        for (n, rows) in contents.enumerated() {
            if n > 0 { t.newPage() }
            var y = Page.marginTop
            if n == 0 {
                let l = t.layout(markup: escapeMarkup(plan.locale.contents), font: BookFont.contentsTitle)
                cairo_set_source_rgb(cr, 0, 0, 0)
                cairo_move_to(cr, Page.marginLeft, y)
                pango_cairo_show_layout(cr, l)
                t.release(l)
                y += BookPlan.contentsTitleHeight
            }
            if plan.entries.isEmpty {
                let l = t.layout(markup: escapeMarkup(plan.locale.noEntries), font: BookFont.contentsMonth)
                cairo_move_to(cr, Page.marginLeft, y)
                pango_cairo_show_layout(cr, l)
                t.release(l)
            }
            for row in rows {
                switch row {
                case .year(let year):
                    let l = t.layout(markup: "\(year)", font: BookFont.contentsYear)
                    cairo_set_source_rgb(cr, 0, 0, 0)
                    cairo_move_to(cr, Page.marginLeft, y + BookPlan.yearRowHeight - BookPlan.monthRowHeight - 1)
                    pango_cairo_show_layout(cr, l)
                    t.release(l)
                case .month(let key):
                    let l = t.layout(markup: escapeMarkup(plan.locale.monthName(key % 100)), font: BookFont.contentsMonth)
                    cairo_set_source_rgb(cr, 0, 0, 0)
                    cairo_move_to(cr, Page.marginLeft + 14, y)
                    pango_cairo_show_layout(cr, l)
                    t.release(l)
                    let number = t.layout(markup: "\(monthPages[key] ?? 0)", font: BookFont.contentsMonth)
                    cairo_move_to(cr, Page.width - Page.marginRight - t.width(number), y)
                    pango_cairo_show_layout(cr, number)
                    t.release(number)
                }
                y += BookPlan.rowHeight(row)
            }
        }
        if !plan.entries.isEmpty { t.newPage() }
    }

    /// The PDF outline (bookmarks): contents, then years with their months.
    private func outline(_ surface: OpaquePointer) {
        _ = cairo_pdf_surface_add_outline(
            surface, Int32(CAIRO_PDF_OUTLINE_ROOT), plan.locale.contents, "page=2", cairo_pdf_outline_flags_t(0))
        var yearID: Int32 = 0
        var lastYear: Int?
        for key in plan.months {
            let page = monthPages[key] ?? firstBodyPage
            if key / 100 != lastYear {
                lastYear = key / 100
                yearID = cairo_pdf_surface_add_outline(
                    surface, Int32(CAIRO_PDF_OUTLINE_ROOT), "\(key / 100)", "page=\(page)", cairo_pdf_outline_flags_t(0))
            }
            _ = cairo_pdf_surface_add_outline(
                surface, yearID, plan.locale.monthName(key % 100), "page=\(page)", cairo_pdf_outline_flags_t(0))
        }
    }

    // MARK: Entries

    private func entry(_ index: Int, _ t: Typesetter, drawing: Bool) {
        let snapshot = plan.entries[index]
        let body = snapshot.body
        let date = plan.dates[index]

        // Heading: the date, then time, zone, place and tags, kept with two body lines.
        let heading = t.layout(markup: escapeMarkup(plan.locale.longDate(date)), font: BookFont.entryHeading)
        defer { t.release(heading) }
        let meta = t.layout(markup: escapeMarkup(metaLine(body, date)), font: BookFont.meta)
        defer { t.release(meta) }
        t.ensureSpace(t.height(heading) + t.height(meta) + 6 + 2 * bodyLineHeight)
        if !drawing {
            let key = date.year * 100 + date.month
            monthPages[key] = min(monthPages[key] ?? Int.max, t.page)
        }
        t.destination("e" + hex(snapshot.id.bytes))
        t.place(heading)
        t.place(meta, gray: 0.35)
        t.skip(6)

        var shown = Set<Int>()
        for block in BookMarkup.blocks(body.text, linkedEntryLabel: plan.locale.linkedEntry) {
            switch block {
            case .text(let text):
                self.text(text, t)
            case .heading(let level, let text):
                let l = t.layout(markup: text.markup, font: BookFont.markdownHeading(level))
                t.skip(4)
                t.ensureSpace(t.height(l) + 2 * bodyLineHeight)
                t.place(l, links: resolved(text.links))
                t.release(l)
                t.skip(3)
            case .image(let referenceID):
                if let n = body.attachments.firstIndex(where: { hex($0.id) == referenceID }), !shown.contains(n) {
                    shown.insert(n)
                    attachment(body.attachments[n], t, drawing: drawing)
                }
            case .code(let markup, let indent):
                let l = t.layout(markup: markup, font: BookFont.code, width: Page.textWidth - indent - 8)
                t.flow(l, x: Page.marginLeft + indent + 8, gray: 0.15)
                t.release(l)
                t.skip(5)
            case .rule(let indent):
                t.skip(4)
                t.ensureSpace(6)
                if let cr = t.cr {
                    cairo_set_source_rgb(cr, 0.55, 0.55, 0.55)
                    cairo_set_line_width(cr, 0.5)
                    let left = Page.marginLeft + indent + Page.textWidth * 0.3
                    cairo_move_to(cr, left, t.y + 3)
                    cairo_line_to(cr, Page.marginLeft + Page.textWidth * 0.7 + indent * 0.3, t.y + 3)
                    cairo_stroke(cr)
                }
                t.skip(10)
            case .table(let rows, let hasHeader, let alignments, let indent):
                table(rows, hasHeader: hasHeader, alignments: alignments, indent: indent, t)
            }
        }
        for (n, reference) in body.attachments.enumerated() where !shown.contains(n) {
            attachment(reference, t, drawing: drawing)
        }
        t.skip(16)
    }

    /// Running text: a paragraph (justified), a list item (its marker hung
    /// in the margin before it) or text in a quotation (italic, grey, with a
    /// rule at its left).
    private func text(_ text: BookText, _ t: Typesetter) {
        let x = Page.marginLeft + text.indent
        let width = Page.textWidth - text.indent
        var markup = text.markup
        if text.quoted { markup = "<i>" + markup + "</i>" }
        let gray = text.quoted ? 0.25 : 0
        let l = t.layout(markup: markup, font: BookFont.body, width: width, justify: text.justified)
        defer { t.release(l) }
        if !text.marker.isEmpty {
            // The marker sits left of the text, on its first line.
            t.ensureSpace(min(t.height(l), 2 * bodyLineHeight))
            let marker = t.layout(markup: text.marker, font: BookFont.body, width: BookMarkup.indentStep - 2, alignment: PANGO_ALIGN_RIGHT)
            if let cr = t.cr {
                cairo_set_source_rgb(cr, gray, gray, gray)
                cairo_move_to(cr, x - BookMarkup.indentStep - 2, t.y)
                pango_cairo_show_layout(cr, marker)
            }
            t.release(marker)
        }
        let top = t.y
        let page = t.page
        t.flow(l, x: x, gray: gray, links: resolved(text.links))
        if text.quoted, let cr = t.cr, t.page == page {
            cairo_set_source_rgb(cr, 0.7, 0.7, 0.7)
            cairo_set_line_width(cr, 1.2)
            cairo_move_to(cr, x - 8, top + 2)
            cairo_line_to(cr, x - 8, t.y - 2)
            cairo_stroke(cr)
        }
        t.skip(text.justified ? 4 : 2)
    }

    /// A table: columns of equal width across the text block, cells wrapped,
    /// thin rules between cells, the header row in bold; a row never splits
    /// across pages unless it is taller than one.
    private func table(
        _ rows: [[BookText]], hasHeader: Bool, alignments: [MarkdownDocument.Table.Alignment], indent: Double, _ t: Typesetter
    ) {
        guard let columns = rows.map(\.count).max(), columns > 0 else { return }
        let left = Page.marginLeft + indent
        let columnWidth = (Page.textWidth - indent) / Double(columns)
        let pad = 3.0
        t.skip(3)
        for row in rows {
            let layouts = (0..<columns).map { i -> OpaquePointer in
                let align: PangoAlignment
                switch i < alignments.count ? alignments[i] : .none {
                case .center: align = PANGO_ALIGN_CENTER
                case .right: align = PANGO_ALIGN_RIGHT
                default: align = PANGO_ALIGN_LEFT
                }
                return t.layout(
                    markup: i < row.count ? row[i].markup : "", font: BookFont.tableCell, width: columnWidth - 2 * pad, alignment: align)
            }
            let height = (layouts.map { t.height($0) }.max() ?? 0) + 2 * pad
            t.ensureSpace(height)
            let top = t.y
            for (i, l) in layouts.enumerated() {
                if let cr = t.cr {
                    cairo_set_source_rgb(cr, 0, 0, 0)
                    cairo_move_to(cr, left + Double(i) * columnWidth + pad, top + pad)
                    pango_cairo_show_layout(cr, l)
                    cairo_set_source_rgb(cr, 0.6, 0.6, 0.6)
                    cairo_set_line_width(cr, 0.5)
                    cairo_rectangle(cr, left + Double(i) * columnWidth, top, columnWidth, min(height, Page.textBottom - top))
                    cairo_stroke(cr)
                }
                t.release(l)
            }
            t.skip(height)
        }
        t.skip(6)
    }

    /// Links to entries the book holds, and outside links; a link to an
    /// entry not in the book is dropped (its text stays).
    private func resolved(_ links: [BookLink]) -> [BookLink] {
        links.filter { if case .entry(let id) = $0.target { plan.entryIDs.contains(id) } else { true } }
    }

    private func metaLine(_ body: EntryBody, _ date: LocalTime) -> String {
        var parts: [String] = []
        if !body.isAllDay { parts.append(plan.locale.time(date)) }
        if !body.timeZoneIdentifier.isEmpty {
            parts.append(body.timeZoneIdentifier)
        } else {
            let offset = LocalTime.offset(of: body)
            parts.append(
                offset == 0
                    ? "UTC"
                    : "UTC" + (offset < 0 ? "−" : "+") + "\(abs(offset) / 3600)"
                        + (abs(offset) % 3600 == 0 ? "" : ":\(abs(offset) % 3600 / 60)"))
        }
        if let location = body.location {
            let place = EntryDisplay.place(location)
            if !place.isEmpty { parts.append(place) }
        }
        if let mood = body.moodRawValue { parts.append(plan.locale.mood(mood)) }
        if !body.tags.isEmpty { parts.append(body.tags.map { "#" + $0 }.joined(separator: " ")) }
        return BookMarkup.sanitized(parts.joined(separator: " · "), keepNewlines: false)
    }

    private func attachment(_ reference: AttachmentReference, _ t: Typesetter, drawing: Bool) {
        guard Photo.kind(of: reference) != nil, let photo = Photo.load(reference, from: vault) else {
            let what = reference.fileName.isEmpty ? reference.mediaType : "\(reference.fileName) (\(reference.mediaType))"
            let l = t.layout(
                markup: escapeMarkup(BookMarkup.sanitized(plan.locale.attachmentNotShown(what), keepNewlines: false)), font: BookFont.meta)
            t.place(l, gray: 0.35)
            t.release(l)
            t.skip(4)
            if drawing { report.attachmentsNotShown += 1 }
            return
        }
        let (w, h) = photo.size
        t.skip(2)
        t.ensureSpace(h)
        if drawing, let cr = t.cr {
            let x = Page.marginLeft + (Page.textWidth - w) / 2
            if let bytes = photo.bytes(from: vault), let surface = photo.surface(bytes) {
                cairo_save(cr)
                cairo_translate(cr, x, t.y)
                cairo_scale(cr, w / Double(photo.header.displayWidth), h / Double(photo.header.displayHeight))
                var m = Photo.orientationMatrix(
                    photo.header.orientation, width: Double(photo.header.width), height: Double(photo.header.height))
                cairo_transform(cr, &m)
                cairo_set_source_surface(cr, surface, 0, 0)
                cairo_paint(cr)
                cairo_restore(cr)
                cairo_surface_destroy(surface)
                report.photos += 1
                if embedded.insert(reference.blob).inserted { report.distinctPhotos += 1 }
            } else {
                cairo_set_source_rgb(cr, 0.6, 0.6, 0.6)
                cairo_set_line_width(cr, 0.5)
                cairo_rectangle(cr, x, t.y, w, h)
                cairo_stroke(cr)
                report.attachmentsNotShown += 1
            }
        }
        t.skip(h + 6)
    }
}
