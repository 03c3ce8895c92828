// Benchmark: export the Pepys diary (3,413 entries from Tests/Fixtures/pepys.jsonl,
// with Tests/Fixtures/photo.jpg on the first entry of each year) to each
// format. Each export runs in a fresh child process so that its peak
// memory is its own; an "open" child (open the vault and load the entry
// index, as every export does first) gives the floor.

import Foundation
@_spi(Format) import Quire
@_spi(Format) import QuireExport
import QuireSystem

enum ExportBenchmark {
    static let fixtures =
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path + "/Tests/Fixtures"

    static let formats: [(ExportFormat, String)] = [
        (.markdown, "pepys-md"), (.json, "pepys.json"), (.html, "pepys.html"), (.epub, "pepys.epub"), (.dayOne, "pepys-dayone.zip"),
    ]

    static func run(_ shared: SharedFixtures) throws -> Section {
        var section = Section(name: "export", title: "Export Pepys to each format")
        let dir = shared.workspace
        let vaultPath = dir.file("export-pepys.quire")
        let keyFile = dir.file("export-pepys.key")
        let limit = shared.quick ? 400 : Int.max
        let (entries, plaintext) = try buildVault(at: vaultPath, keyFile: keyFile, limit: limit)
        section.explanation = [
            "The Pepys diary from `Tests/Fixtures/pepys.jsonl` (\(grouped(entries)) entries, \(megabytes(plaintext)) MB of text and photos), exported by `exportJournal` in a fresh child process per format; best of 3 runs.",
            "MB/s is plaintext (entry text + attachment bytes) per second of the whole export, including opening the vault and loading the entry index. Peak memory is the child's peak resident set (VmHWM); `open` is a child that only opens the vault and loads the index.",
        ]
        var table = Table(["format", "seconds", "MB/s plaintext", "output MB", "peak RSS MiB"])
        let idle = try runChild(["export-open", vaultPath, keyFile])
        table.row("open + index only", fmt(Double(try idle.number("ns")) / 1e9, 2), "", "", mebibytes(try idle.number("peakRSS")))
        for (format, name) in formats {
            var best = UInt64.max
            var peak: UInt64 = 0
            var bytes: UInt64 = 0
            for _ in 0..<(shared.quick ? 1 : 3) {
                let out = dir.file(name)
                if format == .markdown { removeTree(out) } else { try? FileSystem.remove(out) }
                let r = try runChild(["export-run", vaultPath, keyFile, format.rawValue, out])
                best = min(best, try r.number("ns"))
                peak = max(peak, try r.number("peakRSS"))
                bytes = try r.number("bytes")
                if format == .markdown { removeTree(out) } else { try? FileSystem.remove(out) }
            }
            let seconds = Double(best) / 1e9
            table.row(format.rawValue, fmt(seconds, 2), fmt(Double(plaintext) / 1e6 / seconds, 1), megabytes(bytes), mebibytes(peak))
        }
        section.tables.append(("", table))
        return section
    }

    /// Builds the vault and writes its recovery code to `keyFile`; returns
    /// the entry count and the plaintext bytes (text + attachments).
    static func buildVault(at path: String, keyFile: String, limit: Int) throws -> (Int, UInt64) {
        let (vault, recovery) = try Fixtures.create(at: path)
        let data = try String(contentsOfFile: fixtures + "/pepys.jsonl", encoding: .utf8)
        let photo = fixtures + "/photo.jpg"
        let photoBytes = try FileSystem.size(photo)
        var bodies: [EntryBody] = []
        var plaintext: UInt64 = 0
        var lastYear = ""
        for line in data.split(separator: "\n").prefix(limit) {
            guard let obj = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                let date = obj["date"] as? String, let text = obj["text"] as? String
            else { throw BenchError("bad line in pepys.jsonl") }
            let parts = date.split(separator: "-").compactMap { Int($0) }
            guard parts.count == 3 else { throw BenchError("bad date \(date)") }
            let days = daysFromCivil(parts[0], parts[1], parts[2])
            var body = EntryBody(
                created: (days * 86_400 + 22 * 3600) * 1000 + Int64(bodies.count % 60) * 1000, timeZone: "Europe/London", text: text,
                tags: [String(parts[0])], journal: "Pepys Diary")
            if body.tags[0] != lastYear {
                lastYear = body.tags[0]
                body.text += "\n\n![](quire-attachment://0909)"
                plaintext += photoBytes
            }
            plaintext += UInt64(body.text.utf8.count)
            bodies.append(body)
        }
        try vault.commit { (tx: VaultTransaction) throws(QuireError) in
            let blob = try tx.storeAttachment(fromFile: photo, mediaType: "image/jpeg").blob
            for var body in bodies {
                if body.text.hasSuffix("quire-attachment://0909)") {
                    body.attachments = [AttachmentReference(id: [9, 9], blob: blob, mediaType: "image/jpeg", fileName: "portrait.jpg")]
                }
                try tx.add(body)
            }
        }
        try? FileSystem.remove(keyFile)
        let f = try SystemFile(path: keyFile, mode: .createExclusive(permissions: 0o600))
        try f.write(Array(recovery.code().utf8), at: 0)
        return (bodies.count, plaintext)
    }

    static func daysFromCivil(_ y: Int, _ m: Int, _ d: Int) -> Int64 { CivilCalendar.days(year: y, month: m, day: d) }

    static func removeTree(_ path: String) { try? FileManager.default.removeItem(atPath: path) }

    /// The child modes `export-open VAULT KEYFILE` and `export-run VAULT KEYFILE FORMAT OUT`;
    /// returns false for any other mode.
    static func child(_ args: [String]) throws -> Bool {
        guard let mode = args.first, mode == "export-open" || mode == "export-run", args.count >= 3 else { return false }
        let code = String(decoding: try readWholeFile(args[2]), as: UTF8.self)
        let recovery = try RecoveryKey(code: code)
        let start = now()
        let vault = try Fixtures.open(args[1], recovery, writable: false)
        if mode == "export-open" {
            _ = try vault.entries()
            print("ns=\(now() - start)")
        } else {
            guard args.count == 5, let format = ExportFormat(rawValue: args[3]) else {
                throw BenchError("usage: export-run VAULT KEYFILE FORMAT OUT")
            }
            let report = try exportJournal(vault, format: format, to: args[4])
            print("ns=\(now() - start)")
            print("bytes=\(report.bytes)")
        }
        // VmHWM is this process's own peak (getrusage's includes the parent's at spawn).
        print("peakRSS=\(vmHighWaterMark() ?? ProcessStats.peakResidentBytes())")
        return true
    }
}
