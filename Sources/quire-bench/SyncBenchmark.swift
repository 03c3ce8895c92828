// Benchmark 6: merging two diverged copies and compacting, against
// verifying the same inputs in the same run.

@_spi(Format) import Quire
import QuireCrypto
@_spi(Format) import QuireFormat
@_spi(Format) import QuireSync
import QuireSystem

enum SyncBenchmark {
    static func run(_ shared: SharedFixtures) throws -> Section {
        let count = shared.readEntryCount
        let diverge = shared.quick ? 100 : 1_000
        let repetitions = shared.quick ? 2 : 3
        let base: BuiltVault
        if let large = shared.largeVault, large.entryCount >= count {
            base = large
        } else {
            let path = shared.workspace.file("sync-base.quire")
            print("  building a vault of \(grouped(count)) entries…")
            base = try Fixtures.build(at: path, count: count, seed: 6).1
        }
        let credential = Credential.recoveryKey(base.recovery)
        let baseCount = base.entryCount
        let a = shared.workspace.file("sync-a.quire")
        let b = shared.workspace.file("sync-b.quire")
        defer {
            try? FileSystem.remove(a)
            try? FileSystem.remove(b)
        }

        var verify = Samples()
        var merge = Samples()
        var compact = Samples()
        var sizes = (a: UInt64(0), b: UInt64(0), merged: UInt64(0), compacted: UInt64(0))
        var peak: UInt64 = 0
        for round in 0..<repetitions {
            // Two copies that diverge by `diverge` entries each.
            try KeyBenchmark.copyFileReplacing(base.path, to: a)
            try KeyBenchmark.copyFileReplacing(base.path, to: b)
            var ga = EntryGenerator(seed: 600 + UInt64(round))
            var gb = EntryGenerator(seed: 700 + UInt64(round))
            try Fixtures.fill(Fixtures.open(a, base.recovery), count: diverge, generator: &ga)
            try Fixtures.fill(Fixtures.open(b, base.recovery), count: diverge, generator: &gb)
            sizes.a = try FileSystem.size(a)
            sizes.b = try FileSystem.size(b)
            // Baseline: verify both inputs (open, check every commit, read every record).
            verify.add(
                try timed {
                    for p in [a, b] { _ = try Vault.open(at: p, credential: credential, writable: false).verify() }
                }.1)
            merge.add(
                try timed {
                    _ = try VaultMerge.merge(vaultAt: a, copyAt: b, credential: credential, options: Fixtures.noSync)
                }.1)
            sizes.merged = try FileSystem.size(a)
            compact.add(
                try timed {
                    _ = try Compaction.compact(
                        vaultAt: a, credential: credential, now: ProcessStats.wallClockMilliseconds(), writeOptions: Fixtures.noSync)
                }.1)
            sizes.compacted = try FileSystem.size(a)
            peak = max(peak, ProcessStats.peakResidentBytes())
        }

        var s = Section(name: "sync", title: "6. Merge two diverged copies, and compact")
        s.explanation = [
            "Two copies of a \(grouped(baseCount))-entry vault, each with \(grouped(diverge)) more entries of its own. The baseline opens "
                + "and verifies both inputs (every commit and record); merge reads both, keeps the common prefix, and writes "
                + "and checks the result; compaction rewrites the merged vault (every entry is a head, so nothing is dropped) and checks it. "
                + "Medians of \(repetitions) rounds; no fsync. Peak RSS is the process's, which also holds earlier benchmarks' peaks."
        ]
        var t = Table(["step", "ms", "vs verifying both inputs"])
        t.row("verify both inputs (baseline)", fmt(verify.median / 1e6, 0), "1.00×")
        t.row("merge", fmt(merge.median / 1e6, 0), fmt(merge.median / verify.median, 2) + "×")
        t.row("compact", fmt(compact.median / 1e6, 0), fmt(compact.median / verify.median, 2) + "×")
        s.tables.append(("Time", t))
        var z = Table(["file", "MiB"])
        z.row("copy A", mebibytes(sizes.a))
        z.row("copy B", mebibytes(sizes.b))
        z.row("merged", mebibytes(sizes.merged))
        z.row("compacted", mebibytes(sizes.compacted))
        z.row("peak RSS of the process", mebibytes(peak))
        s.tables.append(("Sizes and memory", z))
        let judged = !shared.quick
        s.targets.append(
            Target(
                what: "merge two diverged \(grouped(baseCount))-entry copies", target: "≤ 2× verifying the inputs",
                measured: fmt(merge.median / verify.median, 2) + "×", met: judged ? merge.median <= 2 * verify.median : nil))
        s.targets.append(
            Target(
                what: "compact a \(grouped(baseCount + 2 * diverge))-entry vault", target: "≤ 2× verifying the inputs",
                measured: fmt(compact.median / verify.median, 2) + "×", met: judged ? compact.median <= 2 * verify.median : nil))
        return s
    }
}
