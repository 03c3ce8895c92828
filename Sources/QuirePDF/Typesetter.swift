import CPangoCairo

extension String {
    /// `zh_Hans_CN` → `zh-Hans-CN`, the form pango's language tags take.
    func replacingUnderscores() -> String { String(map { $0 == "_" ? "-" : $0 }) }
}

/// A5 page geometry in PDF points (1/72 inch).
enum Page {
    static let width = 419.53
    static let height = 595.28
    static let marginLeft = 52.0
    static let marginRight = 52.0
    static let marginTop = 56.0
    static let marginBottom = 64.0
    static var textWidth: Double { width - marginLeft - marginRight }
    static var textBottom: Double { height - marginBottom }
    static var textHeight: Double { textBottom - marginTop }
    /// Baseline area of the page number, centred in the bottom margin.
    static let folioTop = height - 44.0
}

/// The fonts of the book: Noto through fontconfig, with the CJK faces
/// named for fallback so Latin, Cyrillic and Han text all find glyphs.
enum BookFont {
    static let families = "Noto Serif, Noto Serif CJK SC, Noto Sans CJK SC"
    static let body = "\(families) 10.5"
    static let entryHeading = "\(families) Bold 12"
    static let meta = "\(families) Italic 8.5"
    static let folio = "\(families) 8.5"
    static let title = "\(families) Bold 26"
    static let subtitle = "\(families) 13"
    static let contentsTitle = "\(families) Bold 18"
    static let contentsYear = "\(families) Bold 11"
    static let contentsMonth = "\(families) 10.5"
    static let code = "Noto Sans Mono, \(families) 9"
    static let tableCell = "\(families) 9.5"
    static func markdownHeading(_ level: Int) -> String {
        "\(families) Bold \([15, 13.5, 12, 11, 10.5, 10.5][max(0, min(5, level - 1))])"
    }
}

/// Lays text out with pango and, when it has a cairo context, draws it.
///
/// The same code runs twice: once without a cairo context to learn on which
/// page every entry lands (for the table of contents), then with one to
/// draw. Page breaks depend only on pango's metrics, which do not depend on
/// the target, so both passes break pages identically. Only one layout is
/// alive at a time.
final class Typesetter {
    let context: OpaquePointer
    let fontMap: UnsafeMutablePointer<PangoFontMap>
    /// The cairo context to draw into; nil while measuring.
    var cr: OpaquePointer?
    private var fonts: [String: OpaquePointer] = [:]

    /// The current page, 1-based (physical page number in the PDF).
    private(set) var page = 0
    /// The top of the free space on the current page, in points from the top edge.
    private(set) var y = Page.marginTop
    /// Whether the current page prints its number at the foot.
    var numbersPages = true
    /// Whether layouts add to the counts below; off in the measuring pass,
    /// which lays out the same text as the drawing pass.
    var counts = true
    /// Glyphs pango could not find in any font, over every layout drawn or measured.
    private(set) var unknownGlyphs = 0
    /// Characters no installed font has, replaced by 〓 (U+3013) before drawing.
    private(set) var substitutedCharacters = 0
    /// Markup strings pango refused (then set as plain text); 0 unless this code has a bug.
    private(set) var markupFallbacks = 0

    /// A typesetter for text in `language` (BCP 47 or ICU identifier; it
    /// picks the regional forms of Han characters, for one).
    init(language: String = "en") {
        fontMap = pango_cairo_font_map_new()
        pango_cairo_font_map_set_resolution(OpaquePointer(fontMap), 72)
        context = pango_font_map_create_context(fontMap)
        let options = cairo_font_options_create()
        cairo_font_options_set_hint_style(options, CAIRO_HINT_STYLE_NONE)
        cairo_font_options_set_hint_metrics(options, CAIRO_HINT_METRICS_OFF)
        cairo_font_options_set_antialias(options, CAIRO_ANTIALIAS_GRAY)
        pango_cairo_context_set_font_options(context, options)
        cairo_font_options_destroy(options)
        pango_cairo_context_set_resolution(context, 72)
        pango_context_set_round_glyph_positions(context, 0)
        pango_context_set_language(context, pango_language_from_string(language.replacingUnderscores()))
        pango_context_set_base_dir(context, PANGO_DIRECTION_LTR)
    }

    deinit {
        for (_, f) in fonts { pango_font_description_free(f) }
        g_object_unref(UnsafeMutableRawPointer(context))
        g_object_unref(UnsafeMutableRawPointer(fontMap))
    }

    func font(_ spec: String) -> OpaquePointer {
        if let f = fonts[spec] { return f }
        let f = pango_font_description_from_string(spec)!
        fonts[spec] = f
        return f
    }

    // MARK: Layouts

    /// A pango layout of `markup` (already escaped) `width` points wide.
    /// The caller releases it with ``release(_:)``.
    func layout(
        markup: String, font spec: String, width: Double = Page.textWidth, alignment: PangoAlignment = PANGO_ALIGN_LEFT,
        justify: Bool = false, lineSpacing: Float = 1.25, hanging: Double = 0
    ) -> OpaquePointer {
        let layout = pango_layout_new(context)!
        pango_layout_set_font_description(layout, font(spec))
        pango_layout_set_width(layout, Int32(width * Double(PANGO_SCALE)))
        if hanging > 0 { pango_layout_set_indent(layout, Int32(-hanging * Double(PANGO_SCALE))) }
        pango_layout_set_wrap(layout, PANGO_WRAP_WORD_CHAR)
        pango_layout_set_alignment(layout, alignment)
        pango_layout_set_justify(layout, justify ? 1 : 0)
        pango_layout_set_line_spacing(layout, lineSpacing)
        setMarkup(layout, markup)
        if pango_layout_get_unknown_glyphs_count(layout) > 0 {
            // Characters no installed font has (private-use code points, rare
            // extension-B ideographs): shown as 〓 (U+3013 GETA MARK, the
            // typesetter's sign for an unavailable character) and counted.
            let missing = missingCharacters(layout)
            if !missing.isEmpty {
                var replaced = String.UnicodeScalarView()
                var count = 0
                for c in markup.unicodeScalars {
                    if missing.contains(c.value) {
                        replaced.append("\u{3013}")
                        count += 1
                    } else {
                        replaced.append(c)
                    }
                }
                setMarkup(layout, String(replaced))
                if counts { substitutedCharacters += count }
            }
        }
        if counts { unknownGlyphs += Int(pango_layout_get_unknown_glyphs_count(layout)) }
        return layout
    }

    private func setMarkup(_ layout: OpaquePointer, _ markup: String) {
        var attributes: OpaquePointer?
        var text: UnsafeMutablePointer<CChar>?
        var error: UnsafeMutablePointer<GError>?
        let ok = markup.withCString { pango_parse_markup($0, -1, 0, &attributes, &text, nil, &error) }
        if ok != 0, let text {
            pango_layout_set_text(layout, text, -1)
            pango_layout_set_attributes(layout, attributes)
        } else {
            if counts { markupFallbacks += 1 }
            pango_layout_set_text(layout, markup, -1)
        }
        if let error { g_error_free(error) }
        if let attributes { pango_attr_list_unref(attributes) }
        if let text { g_free(text) }
    }

    /// The code points of the glyphs pango marked unknown
    /// (`PANGO_GLYPH_UNKNOWN_FLAG | code point`) in a layout's runs.
    private func missingCharacters(_ layout: OpaquePointer) -> Set<UInt32> {
        let unknownFlag: UInt32 = 0x1000_0000
        var found = Set<UInt32>()
        let iter = pango_layout_get_iter(layout)!
        defer { pango_layout_iter_free(iter) }
        repeat {
            if let run = pango_layout_iter_get_run_readonly(iter), let glyphs = run.pointee.glyphs {
                for i in 0..<Int(glyphs.pointee.num_glyphs) {
                    let glyph = glyphs.pointee.glyphs[i].glyph
                    if glyph & unknownFlag != 0, glyph != UInt32.max { found.insert(glyph & ~unknownFlag) }
                }
            }
        } while pango_layout_iter_next_run(iter) != 0
        return found
    }

    func release(_ layout: OpaquePointer) { g_object_unref(UnsafeMutableRawPointer(layout)) }

    /// The text of a layout, without markup (for tests).
    func text(of layout: OpaquePointer) -> String { String(cString: pango_layout_get_text(layout)) }

    /// The glyphs pango found in no font in a layout (for tests).
    func unknownGlyphs(in layout: OpaquePointer) -> Int { Int(pango_layout_get_unknown_glyphs_count(layout)) }

    /// Height of a layout in points.
    func height(_ layout: OpaquePointer) -> Double {
        var w: Int32 = 0
        var h: Int32 = 0
        pango_layout_get_size(layout, &w, &h)
        return Double(h) / Double(PANGO_SCALE)
    }

    /// Width of a layout's ink-free logical extent in points.
    func width(_ layout: OpaquePointer) -> Double {
        var w: Int32 = 0
        var h: Int32 = 0
        pango_layout_get_size(layout, &w, &h)
        return Double(w) / Double(PANGO_SCALE)
    }

    /// Height of the first line of a layout in points (for keep-with-next).
    func firstLineHeight(_ layout: OpaquePointer) -> Double {
        let iter = pango_layout_get_iter(layout)!
        defer { pango_layout_iter_free(iter) }
        var y0: Int32 = 0
        var y1: Int32 = 0
        pango_layout_iter_get_line_yrange(iter, &y0, &y1)
        return Double(y1 - y0) / Double(PANGO_SCALE)
    }

    /// Link areas (cairo `Link` tags) for the parts of `links` on `line`,
    /// drawn with its left edge at `x` and its top at `top`.
    private func tagLinks(_ links: [BookLink], line: UnsafeMutablePointer<PangoLayoutLine>, x: Double, top: Double, height: Double) {
        guard let cr else { return }
        let start = Int(line.pointee.start_index)
        let end = start + Int(line.pointee.length)
        for link in links where link.range.lowerBound < end && link.range.upperBound > start {
            var ranges: UnsafeMutablePointer<Int32>?
            var count: Int32 = 0
            pango_layout_line_get_x_ranges(
                line, Int32(max(start, link.range.lowerBound)), Int32(min(end, link.range.upperBound)), &ranges, &count)
            guard let ranges else { continue }
            defer { g_free(ranges) }
            for k in 0..<Int(count) {
                let left = x + Double(ranges[2 * k]) / Double(PANGO_SCALE)
                let width = Double(ranges[2 * k + 1] - ranges[2 * k]) / Double(PANGO_SCALE)
                guard width > 0 else { continue }
                let rect = "rect=[\(points(left)) \(points(top)) \(points(width)) \(points(height))]"
                let attributes: String
                switch link.target {
                case .entry(let id): attributes = "\(rect) dest='e\(id)'"
                case .uri(let uri): attributes = "\(rect) uri='\(Self.quotedAttribute(uri))'"
                }
                cairo_tag_begin(cr, CAIRO_TAG_LINK, attributes)
                cairo_tag_end(cr, CAIRO_TAG_LINK)
            }
        }
    }

    /// A cairo tag attribute string's contents: `\` and `'` escaped.
    static func quotedAttribute(_ s: String) -> String {
        var out = ""
        for c in s.unicodeScalars {
            if c == "\\" || c == "'" { out += "\\" }
            out.unicodeScalars.append(c)
        }
        return out
    }

    /// Marks the current position as the destination `name` (an entry's heading).
    func destination(_ name: String) {
        guard let cr else { return }
        cairo_tag_begin(cr, CAIRO_TAG_DEST, "name='\(name)' x=\(points(Page.marginLeft)) y=\(points(y))")
        cairo_tag_end(cr, CAIRO_TAG_DEST)
    }

    private func points(_ v: Double) -> String { String(Double(Int((v * 100).rounded())) / 100) }

    // MARK: Pages

    /// Starts a new page (finishing the current one).
    func newPage() {
        if page > 0 { finishPage() }
        page += 1
        y = Page.marginTop
    }

    /// Prints the page number and emits the page.
    func finishPage() {
        guard let cr else { return }
        if numbersPages {
            let l = layout(markup: "\(page)", font: BookFont.folio, alignment: PANGO_ALIGN_CENTER)
            cairo_set_source_rgb(cr, 0.3, 0.3, 0.3)
            cairo_move_to(cr, Page.marginLeft, Page.folioTop)
            pango_cairo_show_layout(cr, l)
            release(l)
        }
        cairo_show_page(cr)
    }

    /// True when the page has room for `height` points; breaks the page
    /// otherwise (unless the page is still empty).
    func ensureSpace(_ height: Double) {
        if y + height > Page.textBottom, y > Page.marginTop { newPage() }
    }

    func skip(_ points: Double) {
        y = min(y + points, Page.textBottom)
    }

    /// Draws a layout whole at the current position (after a page break if
    /// it does not fit), then moves below it; `links` become link areas.
    /// A layout taller than a page is flowed instead, so nothing falls off the page.
    func place(_ layout: OpaquePointer, x: Double = Page.marginLeft, gray: Double = 0, links: [BookLink] = []) {
        if height(layout) > Page.textHeight {
            flow(layout, x: x, gray: gray, links: links)
            return
        }
        ensureSpace(height(layout))
        flow(layout, x: x, gray: gray, links: links)
    }

    /// Draws a layout line by line, breaking the page between lines where
    /// it does not fit.
    func flow(_ layout: OpaquePointer, x: Double = Page.marginLeft, gray: Double = 0, links: [BookLink] = []) {
        let iter = pango_layout_get_iter(layout)!
        defer { pango_layout_iter_free(iter) }
        let scale = Double(PANGO_SCALE)
        var pageTop = y  // where `offset` of the layout sits on this page
        var offset: Int32 = 0
        var bottom = y
        repeat {
            var y0: Int32 = 0
            var y1: Int32 = 0
            pango_layout_iter_get_line_yrange(iter, &y0, &y1)
            if pageTop + Double(y1 - offset) / scale > Page.textBottom, pageTop + Double(y0 - offset) / scale > Page.marginTop {
                newPage()
                pageTop = y
                offset = y0
            }
            if let cr, let line = pango_layout_iter_get_line_readonly(iter) {
                var logical = PangoRectangle()
                pango_layout_iter_get_line_extents(iter, nil, &logical)
                let baseline = pango_layout_iter_get_baseline(iter)
                cairo_set_source_rgb(cr, gray, gray, gray)
                cairo_move_to(cr, x + Double(logical.x) / scale, pageTop + Double(baseline - offset) / scale)
                pango_cairo_show_layout_line(cr, line)
                if !links.isEmpty {
                    tagLinks(
                        links, line: line, x: x + Double(logical.x) / scale, top: pageTop + Double(y0 - offset) / scale,
                        height: Double(y1 - y0) / scale)
                }
            }
            bottom = pageTop + Double(y1 - offset) / scale
        } while pango_layout_iter_next_line(iter) != 0
        y = bottom
    }
}
