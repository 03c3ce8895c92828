// Benchmark: import the Pepys (3,413 entries, 12 photos over 2 files) and Lu
// Xun (7,461 entries) Day One exports from Tests/Fixtures/, each in a fresh
// child process so that its peak memory is its own. In the same child, the
// bodies the import produced are then appended to a second, empty vault
// with the library's raw append (tx.append of ready revisions, 256 per
// commit, the import's batch size): the ratio compares the importer with
// the container's own write path on the same entries in the same run.

import Foundation
@_spi(Format) @_spi(Crypto) import Quire
@_spi(Format) import QuireImport
import QuireSystem

enum ImportBenchmark {
    static let fixtures =
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path + "/Tests/Fixtures"

    static let journals = [("Pepys", "pepys-dayone.zip"), ("Lu Xun", "luxun-dayone.zip")]

    static func run(_ shared: SharedFixtures) throws -> Section {
        var section = Section(name: "import", title: "Import Day One exports")
        section.explanation = [
            "`importJournal(.dayOne, …)` of the corpus ZIPs in `Tests/Fixtures/` into a new vault (no fsync, as every benchmark here), in a fresh child process per run; best of \(shared.quick ? 1 : 3) runs. Entries/s counts the whole import: reading the ZIP, parsing the JSON, mapping, storing photos, sealing and committing (256 entries per commit).",
            "Raw append: in the same child, the bodies the import made are appended to an empty vault as ready revisions (`tx.append`, 256 per commit). Peak memory is the child's VmHWM after the import (before the raw part); `floor` is a child that only creates a vault.",
        ]
        var table = Table(["journal", "entries", "import s", "entries/s", "raw append entries/s", "import ÷ raw", "peak RSS MiB"])
        let floor = try child(["floor", shared.workspace.path])
        table.row("floor (create a vault)", "", "", "", "", "", mebibytes(try floor.number("peakRSS")))
        for (name, zip) in journals {
            var best: [String: String]?
            for _ in 0..<(shared.quick ? 1 : 3) {
                let r = try child(["run", shared.workspace.path, fixtures + "/" + zip])
                let ns = try r.number("ns")
                if try best == nil || ns < best!.number("ns") { best = r }
            }
            let r = best!
            let entries = try r.number("entries")
            let seconds = Double(try r.number("ns")) / 1e9
            let rawSeconds = Double(try r.number("rawNs")) / 1e9
            let rate = Double(entries) / seconds
            let rawRate = Double(entries) / rawSeconds
            table.row(
                name, grouped(entries), fmt(seconds, 2), grouped(Int(rate)), grouped(Int(rawRate)), fmt(rate / rawRate, 2),
                mebibytes(try r.number("peakRSS")))
        }
        section.tables.append(("", table))
        return section
    }

    /// Runs this binary as an import child and parses its `key=value` lines.
    static func child(_ arguments: [String]) throws -> [String: String] {
        let exe = selfExecutablePath()
        let (status, output) = try runProcess(exe, [exe, "--import-child"] + arguments)
        guard status == 0 else { throw BenchError("import child exited with status \(status): \(output)") }
        var values: [String: String] = [:]
        for line in output.split(separator: "\n") {
            guard let eq = line.firstIndex(of: "=") else { continue }
            values[String(line[..<eq])] = String(line[line.index(after: eq)...])
        }
        return values
    }

    /// The child: `floor WORKDIR` or `run WORKDIR ZIP`.
    static func childMain(_ args: [String]) throws {
        guard args.count >= 2 else { throw BenchError("usage: --import-child floor|run WORKDIR [ZIP]") }
        let dir = args[1]
        let tag = "\(ProcessStats.monotonicNanoseconds())"
        let (vault, _) = try Fixtures.create(at: dir + "/import-\(tag).quire")
        defer { try? FileSystem.remove(dir + "/import-\(tag).quire") }
        if args[0] == "floor" {
            print("peakRSS=\(vmHighWaterMark() ?? ProcessStats.peakResidentBytes())")
            return
        }
        let start = now()
        let report = try importJournal(.dayOne, from: args[2], into: vault)
        let ns = now() - start
        print("ns=\(ns)")
        print("entries=\(report.entriesAdded)")
        print("peakRSS=\(vmHighWaterMark() ?? ProcessStats.peakResidentBytes())")
        // Raw append of the same bodies to an empty vault.
        let bodies = try vault.entries().map(\.body)
        let (raw, _) = try Fixtures.create(at: dir + "/raw-\(tag).quire")
        defer { try? FileSystem.remove(dir + "/raw-\(tag).quire") }
        let random = SystemRandom()
        let rawStart = now()
        var i = 0
        while i < bodies.count {
            let slice = bodies[i..<min(i + 256, bodies.count)]
            try raw.commit { (tx: VaultTransaction) throws(QuireError) in
                // The bodies name the imported vault's attachments, which this
                // one does not hold: kept as the importer keeps an export's
                // missing files, so the baseline writes what the import wrote.
                tx.keepsUnstoredReferences = true
                for b in slice {
                    try tx.append(
                        EntryRevision(
                            entryID: EntryID(using: random), revisionID: RevisionID(using: random), clock: HybridLogicalClock(rawValue: 0),
                            body: b))
                }
            }
            i += 256
        }
        print("rawNs=\(now() - rawStart)")
    }
}
