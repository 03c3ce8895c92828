@_spi(Format) public import Quire

/// The Markdown folder export (`Spec/export-json.md §3`): one file per
/// entry at `YYYY/MM/YYYY-MM-DD-<slug>.md` (the date in the entry's own
/// time zone), YAML front matter with every field of the body, and the
/// attachments in `media/`, linked by relative paths.
enum MarkdownFolderExporter {
    static func export(_ context: inout ExportContext, to path: String) throws(ExportError) {
        let out = try OutputDirectory(destination: path)
        // Every entry's file name first (one pass reading the entries, no
        // attachment), so a link to a later entry knows where it goes.
        var usedNames = Set<String>()
        var names: [String] = []
        var nameOf: [EntryID: String] = [:]
        for snapshot in context.entries {
            let body = snapshot.body
            let local = LocalTime(of: body)
            let folder = "\(pad(local.year, 4))/\(pad(local.month, 2))"
            let base = "\(folder)/\(local.dateString)-\(Slug.make(body.text))"
            var name = base + ".md"
            var n = 2
            while usedNames.contains(name) {
                name = "\(base)-\(n).md"
                n += 1
            }
            usedNames.insert(name)
            names.append(name)
            nameOf[snapshot.id] = name
        }
        var writtenMedia = Set<String>()
        var bytes: UInt64 = 0
        for (i, snapshot) in context.entries.enumerated() {
            let body = snapshot.body
            let local = LocalTime(of: body)
            let name = names[i]

            var paths: [BlobID: String] = [:]
            for r in body.attachments where paths[r.blob] == nil {
                let file = MediaFiles.fileName(for: r)
                if !writtenMedia.contains(file) {
                    guard context.canWrite(r.blob) else { continue }
                    let media = try out.file("media/" + file)
                    _ = try MediaFiles.stream(context.vault, blob: r.blob) { (chunk: UnsafeRawBufferPointer) throws(ExportError) in
                        try media.write(chunk)
                    }
                    try media.close()
                    bytes += media.byteCount
                    writtenMedia.insert(file)
                    context.report.attachments += 1
                }
                paths[r.blob] = "../../media/" + file
            }
            let document = MarkdownEntryFile.render(
                snapshot, local: local, mediaPath: { paths[$0.blob] }, entryPath: { nameOf[$0].map { "../../" + $0 } })
            let file = try out.file(name)
            try file.write(document)
            try file.close()
            bytes += file.byteCount
            context.entryDone()
            try ExportContext.checkCancelled()
        }
        try out.commit()
        context.report.bytes = bytes
    }
}

/// One entry as a Markdown file with YAML front matter (`Spec/export-json.md §3.2`).
public enum MarkdownEntryFile {
    /// The version written in the `quire` key.
    public static let version = 1

    /// The file's text: front matter, then the entry's text byte for byte
    /// with each `quire-attachment://<hex id>` link replaced by the
    /// attachment's `path` and each `quire-entry://<hex id>` link by the
    /// path of that entry's file. `mediaPath` gives the relative path of an
    /// attachment's file, or nil when it is not exported; `entryPath` the
    /// relative path of an entry's file, or nil when it is not exported.
    public static func render(
        _ snapshot: EntrySnapshot, local: LocalTime, mediaPath: (AttachmentReference) -> String?,
        entryPath: (EntryID) -> String? = { _ in nil }
    ) -> String {
        let b = snapshot.body
        var y = "---\n"
        y += "quire: \(version)\n"
        y += "id: \"\(hex(snapshot.id.bytes))\"\n"
        y += "date: \"\(local.iso8601)\"\n"
        y += "created: \(b.createdMilliseconds)\n"
        if let m = b.modifiedMilliseconds { y += "modified: \(m)\n" }
        y += "timeZone: " + YAMLWriter.quoted(b.timeZoneIdentifier) + "\n"
        if let o = b.utcOffsetSeconds { y += "utcOffset: \(o)\n" }
        y += "allDay: \(b.isAllDay)\n"
        y += "tags: " + YAMLWriter.flow(.array(b.tags.map { .text($0) })) + "\n"
        if let mood = b.moodRawValue { y += "mood: \(mood)\n" }
        y += "starred: \(b.isStarred)\n"
        y += "pinned: \(b.isPinned)\n"
        y += "journal: " + YAMLWriter.quoted(b.journal) + "\n"
        if let l = b.location { y += "location: " + locationMap(l) + "\n" }
        if let w = b.weather { y += "weather: " + weatherMap(w) + "\n" }
        if b.attachments.isEmpty {
            y += "attachments: []\n"
        } else {
            y += "attachments:\n"
            for r in b.attachments {
                var fields: [(String, CBOR)] = [
                    ("id", .text(hex(r.id))), ("blob", .text(hex(r.blob.bytes))), ("type", .text(r.mediaType)),
                    ("name", .text(r.fileName)),
                ]
                if let p = mediaPath(r) { fields.append(("path", .text(p))) }
                fields.append(("extra", .map(r.extra)))
                if r.unknownFields.count > 0 { fields.append(("unknownFields", .map(r.unknownFields))) }
                y += "  - " + orderedFlow(fields) + "\n"
            }
        }
        y += "extra: " + YAMLWriter.flow(b.extra) + "\n"
        if b.unknownFields.count > 0 { y += "unknownFields: " + YAMLWriter.flow(b.unknownFields) + "\n" }
        y += "---\n"
        y += rewriteEntryLinks(rewriteAttachmentLinks(b.text, references: b.attachments, target: mediaPath), target: entryPath)
        return y
    }

    static func locationMap(_ l: Location) -> String {
        var f: [(String, CBOR)] = []
        if let v = l.latitude { f.append(("latitude", .double(v))) }
        if let v = l.longitude { f.append(("longitude", .double(v))) }
        if let v = l.altitude { f.append(("altitude", .double(v))) }
        f += [
            ("placeName", .text(l.placeName)), ("locality", .text(l.locality)), ("region", .text(l.region)), ("country", .text(l.country)),
        ]
        f.append(("extra", .map(l.extra)))
        if l.unknownFields.count > 0 { f.append(("unknownFields", .map(l.unknownFields))) }
        return orderedFlow(f)
    }

    static func weatherMap(_ w: Weather) -> String {
        var f: [(String, CBOR)] = []
        if let t = w.temperatureCelsius { f.append(("temperatureC", .double(t))) }
        f.append(("conditions", .text(w.conditions)))
        f.append(("extra", .map(w.extra)))
        if w.unknownFields.count > 0 { f.append(("unknownFields", .map(w.unknownFields))) }
        return orderedFlow(f)
    }

    /// A flow map with keys in the given order (plain keys, known to be safe).
    static func orderedFlow(_ fields: [(String, CBOR)]) -> String {
        "{" + fields.map { "\($0.0): " + YAMLWriter.flow($0.1) }.joined(separator: ", ") + "}"
    }
}
