@_spi(Format) import Quire
import QuireDayOne
import QuireSystem

/// The JSON export (`Spec/export-json.md §4`): one document, one entry per
/// line, written as it goes.
enum JSONExporter {
    static func export(_ context: inout ExportContext, to path: String) throws(ExportError) {
        let out = try OutputFile(destination: path)
        let mediaFolder = path + ".media"
        let media: OutputDirectory? = context.options.jsonMedia ? try OutputDirectory(destination: mediaFolder) : nil
        let mediaName = mediaFolder.split(separator: "/").last.map(String.init) ?? "media"
        var written = Set<String>()
        try out.write("{\"format\": \"quire-journal\", \"version\": 1, \"title\": " + JSONWriter.string(context.title()))
        try out.write(", \"entryCount\": \(context.entries.count), \"entries\": [")
        for (n, snapshot) in context.entries.enumerated() {
            var paths: [BlobID: String] = [:]
            var sizes: [BlobID: UInt64] = [:]
            for r in snapshot.body.attachments where sizes[r.blob] == nil {
                guard let manifest = try? context.vault.attachment(r.blob) else {
                    context.report.missingAttachments += 1
                    continue
                }
                sizes[r.blob] = manifest.byteCount
                guard let media, !context.options.unreadableAttachments.contains(r.blob) else { continue }
                let file = MediaFiles.fileName(for: r)
                if !written.contains(file) {
                    let f = try media.file(file)
                    _ = try MediaFiles.stream(context.vault, blob: r.blob) { (chunk: UnsafeRawBufferPointer) throws(ExportError) in
                        try f.write(chunk)
                    }
                    try f.close()
                    context.report.bytes += f.byteCount
                    context.report.attachments += 1
                    written.insert(file)
                }
                paths[r.blob] = mediaName + "/" + file
            }
            try out.write(n == 0 ? "\n" : ",\n")
            try out.write(entryObject(snapshot, sizes: sizes, paths: paths))
            context.entryDone()
            try ExportContext.checkCancelled()
        }
        try out.write(context.entries.isEmpty ? "]}\n" : "\n]}\n")
        if let media {
            try media.commit()
            do { try out.commit() } catch {
                try? FileSystem.remove(mediaFolder)
                throw error
            }
        } else {
            try out.commit()
        }
        context.report.bytes += out.byteCount
    }

    /// One entry as a JSON object (`Spec/export-json.md §4.3`).
    static func entryObject(_ s: EntrySnapshot, sizes: [BlobID: UInt64], paths: [BlobID: String]) -> String {
        let b = s.body
        var m: [(String, String)] = [
            ("id", JSONWriter.string(hex(s.id.bytes))), ("created", String(b.createdMilliseconds)),
            ("date", JSONWriter.string(LocalTime(of: b).iso8601)),
        ]
        if let v = b.modifiedMilliseconds { m.append(("modified", String(v))) }
        m.append(("timeZone", JSONWriter.string(b.timeZoneIdentifier)))
        // An importer inferred the zone (the entry had none): say how.
        if case .text(let how)? = b.extra[text: DayOneMapping.inferredTimeZoneKey] {
            m.append(("timeZoneInferred", JSONWriter.string(how)))
        }
        if let v = b.utcOffsetSeconds { m.append(("utcOffset", String(v))) }
        m.append(("allDay", String(b.isAllDay)))
        m.append(("text", JSONWriter.string(b.text)))
        m.append(("tags", "[" + b.tags.map(JSONWriter.string).joined(separator: ", ") + "]"))
        if let v = b.moodRawValue { m.append(("mood", String(v))) }
        m.append(("starred", String(b.isStarred)))
        m.append(("pinned", String(b.isPinned)))
        m.append(("journal", JSONWriter.string(b.journal)))
        if let l = b.location {
            var f: [(String, String)] = []
            if let v = l.latitude { f.append(("latitude", YAMLWriter.floatText(v))) }
            if let v = l.longitude { f.append(("longitude", YAMLWriter.floatText(v))) }
            if let v = l.altitude { f.append(("altitude", YAMLWriter.floatText(v))) }
            f += [
                ("placeName", JSONWriter.string(l.placeName)), ("locality", JSONWriter.string(l.locality)),
                ("region", JSONWriter.string(l.region)), ("country", JSONWriter.string(l.country)),
                ("extra", JSONWriter.value(.map(l.extra))),
            ]
            if l.unknownFields.count > 0 { f.append(("unknownFields", JSONWriter.value(.map(l.unknownFields)))) }
            m.append(("location", JSONWriter.object(f)))
        }
        if let w = b.weather {
            var f: [(String, String)] = []
            if let t = w.temperatureCelsius { f.append(("temperatureC", YAMLWriter.floatText(t))) }
            f.append(("conditions", JSONWriter.string(w.conditions)))
            f.append(("extra", JSONWriter.value(.map(w.extra))))
            if w.unknownFields.count > 0 { f.append(("unknownFields", JSONWriter.value(.map(w.unknownFields)))) }
            m.append(("weather", JSONWriter.object(f)))
        }
        let refs = b.attachments.map { r -> String in
            var f: [(String, String)] = [
                ("id", JSONWriter.string(hex(r.id))), ("blob", JSONWriter.string(hex(r.blob.bytes))),
                ("type", JSONWriter.string(r.mediaType)), ("name", JSONWriter.string(r.fileName)),
            ]
            if let size = sizes[r.blob] { f.append(("size", String(size))) }
            if let p = paths[r.blob] { f.append(("path", JSONWriter.string(p))) }
            f.append(("extra", JSONWriter.value(.map(r.extra))))
            if r.unknownFields.count > 0 { f.append(("unknownFields", JSONWriter.value(.map(r.unknownFields)))) }
            return JSONWriter.object(f)
        }
        m.append(("attachments", "[" + refs.joined(separator: ", ") + "]"))
        m.append(("extra", JSONWriter.value(.map(b.extra))))
        if b.unknownFields.count > 0 { m.append(("unknownFields", JSONWriter.value(.map(b.unknownFields)))) }
        return JSONWriter.object(m)
    }
}
