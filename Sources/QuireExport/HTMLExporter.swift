@_spi(Format) import Quire

/// The single-file HTML export (`Spec/export-json.md §5`): readable offline,
/// no outside resource (a Content-Security-Policy forbids any), images
/// inlined as `data:` URIs streamed through base64 one 64 KiB chunk at a
/// time, every piece of text escaped.
enum HTMLExporter {
    static let imageTypes: Set<String> = ["image/jpeg", "image/png", "image/gif", "image/webp", "image/svg+xml"]

    static let style = """
        body{font-family:Georgia,'Noto Serif',serif;max-width:40em;margin:2em auto;padding:0 1em;line-height:1.5;color:#222}
        h1{text-align:center}h2.month{border-bottom:1px solid #ccc;margin-top:2em}
        .meta{color:#666;font-size:.9em}.photo{text-align:center;margin:1em 0}.photo img{max-width:100%;height:auto}
        blockquote{margin-left:1em;padding-left:1em;border-left:3px solid #ddd;color:#444}article{margin-bottom:2em}
        pre{white-space:pre-wrap}table{border-collapse:collapse;margin:1em 0}th,td{border:1px solid #ccc;padding:.2em .5em}
        .left{text-align:left}.center{text-align:center}.right{text-align:right}ul.tasks{list-style:none;padding-left:1em}
        """

    static func export(_ context: inout ExportContext, to path: String) throws(ExportError) {
        let out = try OutputFile(destination: path)
        let title = Markup.escape(context.title())
        try out.write(
            """
            <!DOCTYPE html>
            <html lang="\(Markup.escape(context.language()))">
            <head>
            <meta charset="utf-8"/>
            <meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src data:; style-src 'unsafe-inline'"/>
            <meta name="viewport" content="width=device-width, initial-scale=1"/>
            <title>\(title)</title>
            <style>
            \(style)
            </style>
            </head>
            <body>
            <h1>\(title)</h1>

            """)
        var renderer = EntryRenderer(entryHeadingLevel: 3, imageTypes: imageTypes)
        // Links to entries in this export go to their article.
        let exported = Set(context.entries.ids)
        renderer.entryLink = { exported.contains($0) ? "#e" + hex($0.bytes) : nil }
        renderer.linkedEntryLabel = context.locale.linkedEntry
        var month = ""
        var encoded = Set<BlobID>()
        for snapshot in context.entries {
            let body = snapshot.body
            let local = LocalTime(of: body)
            let key = "\(local.year)-\(local.month)"
            if key != month {
                month = key
                try out.write(
                    "<h2 class=\"month\">\(Markup.escape(context.locale.monthAndYear(year: local.year, month: local.month)))</h2>\n")
            }
            try out.write(
                "<article id=\"e\(hex(snapshot.id.bytes))\">\n<h3>\(Markup.escape(EntryRenderer.headingText(body, locale: context.locale)))</h3>\n"
            )
            let meta = EntryRenderer.metaLine(body, locale: context.locale)
            if !meta.isEmpty { try out.write("<p class=\"meta\">\(meta)</p>\n") }
            for piece in renderer.render(body) {
                switch piece {
                case .markup(let m): try out.write(m)
                case .image(let ref, let alt):
                    guard context.canWrite(ref.blob) else {
                        try out.write("<span class=\"attachment\">[" + Markup.escape(alt) + "]</span>")
                        continue
                    }
                    try out.write("<img alt=\"\(Markup.escape(alt))\" src=\"data:\(Markup.escape(ref.mediaType.lowercased()));base64,")
                    var encoder = Base64()
                    var text: [UInt8] = []
                    _ = try MediaFiles.stream(context.vault, blob: ref.blob) { (chunk: UnsafeRawBufferPointer) throws(ExportError) in
                        text.removeAll(keepingCapacity: true)
                        encoder.feed(chunk, into: &text)
                        try out.write(text)
                    }
                    text.removeAll(keepingCapacity: true)
                    encoder.finish(into: &text)
                    try out.write(text)
                    try out.write("\"/>")
                    if encoded.insert(ref.blob).inserted { context.report.attachments += 1 }
                }
            }
            try out.write("</article>\n")
            context.entryDone()
            try ExportContext.checkCancelled()
        }
        try out.write("</body>\n</html>\n")
        try out.commit()
        context.report.bytes = out.byteCount
    }
}
