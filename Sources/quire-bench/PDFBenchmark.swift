// The PDF book benchmark: Pepys (3,413 entries, 6.0 MB of text, a photo on
// every 50th entry) exported to an A5 PDF in a child process, so the peak
// memory is the export's own. A second child exports the last quarter of
// the same vault (which holds the entry whose ✓ and ∴ need a fallback
// font): the PDF writer's memory should not grow with the journal.

@_spi(Format) import Quire
@_spi(Format) import QuireExport
@_spi(Format) import QuirePDF
import QuireSystem

enum PDFBenchmark {
    static let photoEvery = 50

    static func run(_ shared: SharedFixtures) throws -> Section {
        let dir = shared.workspace
        let vaultPath = dir.file("pdf.quire")
        let keyFile = dir.file("pdf.key")
        let outputs = [dir.file("pepys.pdf"), dir.file("pepys-quarter.pdf"), dir.file("pepys-again.pdf")]
        defer { for p in [vaultPath, keyFile] + outputs { try? FileSystem.remove(p) } }

        let fixtures = fixtureDirectory()
        let lines = try JSONLines.read(fixtures + "/pepys.jsonl")
        let entries = shared.quick ? Array(lines.prefix(400)) : lines
        let photo = try readWholeFile(fixtures + "/photo.jpg")
        print("  building a vault of \(grouped(entries.count)) Pepys entries…")
        let (vault, recovery) = try Fixtures.create(at: vaultPath)
        var textBytes: UInt64 = 0
        var photos = 0
        var start = 0
        while start < entries.count {
            let end = min(start + Fixtures.batch, entries.count)
            try vault.commit { (tx: VaultTransaction) throws(QuireError) in
                var blob: BlobID?
                for n in start..<end {
                    let (date, text) = entries[n]
                    var body = EntryBody(
                        created: try civilMilliseconds(date, hour: 22), timeZone: "Europe/London", utcOffsetSeconds: 0, text: text)
                    if n % photoEvery == 0 {
                        if blob == nil { blob = try tx.storeAttachment(from: MemoryByteSource(photo), mediaType: "image/jpeg").blob }
                        body.attachments = [
                            AttachmentReference(
                                id: [UInt8(n & 0xFF), UInt8(n >> 8 & 0xFF)], blob: blob!, mediaType: "image/jpeg", fileName: "photo.jpg")
                        ]
                        photos += 1
                    }
                    textBytes += UInt64(text.utf8.count)
                    try tx.add(body)
                }
            }
            start = end
        }
        do {
            let f = try SystemFile(path: keyFile, mode: .createExclusive(permissions: 0o600))
            try f.write(Array(recovery.code().utf8), at: 0)
        }
        let lastQuarter = try civilMilliseconds(entries[entries.count * 3 / 4].date, hour: 0)

        print("  child: export the whole journal…")
        let full = try child([vaultPath, keyFile, outputs[0]])
        print("  child: export the last quarter…")
        let quarter = try child([vaultPath, keyFile, outputs[1], "\(lastQuarter)"])
        print("  child: export the whole journal again…")
        let again = try child([vaultPath, keyFile, outputs[2]])
        let identical = try readWholeFile(outputs[0]) == readWholeFile(outputs[2])

        var section = Section(name: "pdf", title: "PDF book export (QuirePDF: cairo + pango)")
        section.explanation = [
            "Pepys's diary (\(grouped(entries.count)) entries, \(megabytes(textBytes)) MB of UTF-8 text, photo.jpg on \(photos) entries) written as an A5 PDF book by `writePDFBook` in a child process: open the vault, lay out every entry twice (a measuring pass for the contents, then the drawing pass), stream the PDF to a temporary file, fsync, rename.",
            "CPU seconds are the exporting thread's own (the machine may be shared; wall-clock seconds include waiting for a core).",
            "Peak memory is the child's peak resident set; \"after loading\" is its resident set once the vault is open and `entries()` has decoded every entry, so the difference is what the PDF writer adds.",
        ]
        var t = Table([
            "export", "entries", "pages", "PDF MB", "seconds", "CPU seconds", "MB/s of text (CPU)", "peak RSS MiB", "RSS after loading MiB",
            "added by the PDF writer MiB",
        ])
        for (label, r) in [("whole journal", full), ("last quarter", quarter), ("whole journal, again", again)] {
            let seconds = Double(try r.number("ns")) / 1e9
            let cpu = Double(try r.number("cpuNs")) / 1e9
            let peak = try r.number("peakRSS")
            let loaded = try r.number("loadedRSS")
            t.row(
                label, grouped(try r.number("entries")), grouped(try r.number("pages")), megabytes(try r.number("bytes")), fmt(seconds, 2),
                fmt(cpu, 2),
                fmt(Double(try r.number("textBytes")) / 1e6 / seconds, 2) + " (" + fmt(Double(try r.number("textBytes")) / 1e6 / cpu, 2)
                    + ")", mebibytes(peak), mebibytes(loaded), mebibytes(peak > loaded ? peak - loaded : 0))
        }
        section.tables.append(("", t))
        section.notes = [
            "unknown glyphs: \(full["unknownGlyphs"] ?? "?"); characters printed as U+3013: \(full["substituted"] ?? "?"); photos drawn: \(full["photos"] ?? "?"), distinct photos embedded (one image object each): \(full["distinctPhotos"] ?? "?")",
            "resident set while drawing the whole journal (entries drawn: MiB): \(full["rssDuringDrawing"] ?? "?")",
            "the two whole-journal PDFs are \(identical ? "byte-identical" : "DIFFERENT")",
        ]
        return section
    }

    /// Runs `quire-bench --pdf-child VAULT KEYFILE OUT [SINCE_MS]` and parses its `key=value` lines.
    static func child(_ arguments: [String]) throws -> [String: String] {
        let exe = selfExecutablePath()
        let (status, output) = try runProcess(exe, [exe, "--pdf-child"] + arguments)
        guard status == 0 else { throw BenchError("pdf child exited with status \(status): \(output)") }
        var values: [String: String] = [:]
        for line in output.split(separator: "\n") {
            guard let eq = line.firstIndex(of: "=") else { continue }
            values[String(line[..<eq])] = String(line[line.index(after: eq)...])
        }
        return values
    }

    /// The child: opens the vault, loads the entries, exports, prints figures.
    static func runChild(_ args: [String]) -> Int32 {
        do {
            guard args.count >= 3 else { throw BenchError("usage: --pdf-child VAULT KEYFILE OUT [SINCE_MS]") }
            let code = String(decoding: try readWholeFile(args[1]), as: UTF8.self)
            let vault = try Fixtures.open(args[0], try RecoveryKey(code: code), writable: false)
            var filter = ExportFilter()
            if args.count > 3, let since = Int64(args[3]) { filter.sinceMilliseconds = since }
            let selected = try vault.entries().filter { e in filter.sinceMilliseconds.map { e.body.createdMilliseconds >= $0 } ?? true }
            let textBytes = selected.reduce(0) { $0 + $1.body.text.utf8.count }
            print("loadedRSS=\(residentBytes())")
            let start = now()
            let cpuStart = threadCPUNanoseconds()
            var samples: [String] = []
            let report = try writePDFBook(vault, to: args[2], filter: filter) { p in
                if p.done == 1 || p.done * 4 % p.total < 4 { samples.append("\(p.done):\(residentBytes() >> 20)") }
            }
            print("rssDuringDrawing=\(samples.joined(separator: ","))")
            let ns = now() - start
            print("cpuNs=\(threadCPUNanoseconds() - cpuStart)")
            print("ns=\(ns)")
            print("entries=\(report.entries)")
            print("pages=\(report.pages)")
            print("bytes=\(report.bytes)")
            print("photos=\(report.photos)")
            print("distinctPhotos=\(report.distinctPhotos)")
            print("unknownGlyphs=\(report.unknownGlyphs)")
            print("substituted=\(report.substitutedCharacters)")
            print("textBytes=\(textBytes)")
            print("peakRSS=\(ProcessStats.peakResidentBytes())")
            return 0
        } catch {
            FileHandleStderr.write("quire-bench pdf child: \(error)\n")
            return 1
        }
    }

    static func fixtureDirectory() -> String {
        let file = #filePath
        var parts = file.split(separator: "/", omittingEmptySubsequences: false)
        parts.removeLast(3)  // PDFBenchmark.swift, quire-bench, Sources
        return parts.joined(separator: "/") + "/Tests/Fixtures"
    }

    /// The current resident set (VmRSS) in bytes, or 0.
    static func residentBytes() -> UInt64 {
        guard let text = readTextFile("/proc/self/status") else { return 0 }
        for line in text.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            if let kib = UInt64(line.filter { $0.isNumber }) { return kib * 1024 }
        }
        return 0
    }

    /// `yyyy-mm-dd` at `hour`:00 UTC, in milliseconds since 1970.
    static func civilMilliseconds(_ date: String, hour: Int64) throws(QuireError) -> Int64 {
        let parts = date.split(separator: "-").compactMap { Int64($0) }
        guard parts.count == 3 else { return 0 }
        let days = CivilCalendar.days(year: Int(parts[0]), month: Int(parts[1]), day: Int(parts[2]))
        return (days * 86_400 + hour * 3600) * 1000
    }
}

/// Reads the corpus's JSON lines, `{"date": "…", "text": "…", …}` with
/// string values only (the benchmark does not link Foundation).
enum JSONLines {
    static func read(_ path: String) throws -> [(date: String, text: String)] {
        let bytes = try readWholeFile(path)
        var out: [(String, String)] = []
        var lineStart = 0
        for i in 0...bytes.count where i == bytes.count || bytes[i] == 0x0A {
            if i > lineStart {
                let fields = try object(Array(bytes[lineStart..<i]))
                guard let date = fields["date"], let text = fields["text"] else { throw BenchError("\(path): a line lacks date or text") }
                out.append((date, text))
            }
            lineStart = i + 1
        }
        return out
    }

    static func object(_ b: [UInt8]) throws -> [String: String] {
        var i = 0
        var fields: [String: String] = [:]
        func skipSpace() { while i < b.count, b[i] == 0x20 || b[i] == 0x09 || b[i] == 0x0D { i += 1 } }
        func string() throws -> String {
            guard i < b.count, b[i] == 0x22 else { throw BenchError("expected a string") }
            i += 1
            var scalars = String.UnicodeScalarView()
            var raw: [UInt8] = []
            func flushRaw() {
                scalars.append(contentsOf: String(decoding: raw, as: UTF8.self).unicodeScalars)
                raw.removeAll()
            }
            var pendingHigh: UInt32?
            while i < b.count, b[i] != 0x22 {
                if b[i] == 0x5C {
                    flushRaw()
                    guard i + 1 < b.count else { throw BenchError("bad escape") }
                    let e = b[i + 1]
                    i += 2
                    switch e {
                    case 0x6E: scalars.append("\n")
                    case 0x74: scalars.append("\t")
                    case 0x72: scalars.append("\r")
                    case 0x62: scalars.append("\u{8}")
                    case 0x66: scalars.append("\u{C}")
                    case 0x75:
                        guard i + 4 <= b.count, let v = UInt32(String(decoding: b[i..<(i + 4)], as: UTF8.self), radix: 16) else {
                            throw BenchError("bad \\u")
                        }
                        i += 4
                        if (0xD800..<0xDC00).contains(v) {
                            pendingHigh = v
                            continue
                        }
                        if (0xDC00..<0xE000).contains(v), let high = pendingHigh {
                            scalars.append(Unicode.Scalar(0x10000 + ((high - 0xD800) << 10) + (v - 0xDC00))!)
                        } else if let s = Unicode.Scalar(v) {
                            scalars.append(s)
                        }
                    default: scalars.append(Unicode.Scalar(e))
                    }
                    pendingHigh = nil
                } else {
                    raw.append(b[i])
                    i += 1
                }
            }
            flushRaw()
            i += 1
            return String(scalars)
        }
        skipSpace()
        guard i < b.count, b[i] == 0x7B else { throw BenchError("expected an object") }
        i += 1
        while true {
            skipSpace()
            if i < b.count, b[i] == 0x7D { break }
            let key = try string()
            skipSpace()
            guard i < b.count, b[i] == 0x3A else { throw BenchError("expected :") }
            i += 1
            skipSpace()
            fields[key] = try string()
            skipSpace()
            if i < b.count, b[i] == 0x2C {
                i += 1
                continue
            }
            break
        }
        return fields
    }
}
