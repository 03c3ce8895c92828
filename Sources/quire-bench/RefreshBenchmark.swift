// Benchmark 12: what a reader pays to learn that another writer appended one
// entry — `Vault.refresh()`, which reads only the appended bytes, against
// what an app did before it (reload the file and list the entries again).

@_spi(Format) import Quire
import QuireCrypto
@_spi(Format) import QuireFormat
@_spi(Format) import QuireKeys
import QuireSystem

enum RefreshBenchmark {
    struct Result {
        let entries: Int
        var refresh = Samples()
        var idle = Samples()
        var reload = Samples()
    }

    static func run(_ shared: SharedFixtures) throws -> Section {
        let sizes = shared.quick ? [1_000, 10_000] : [10_000, 50_000]
        let appends = shared.quick ? 5 : 21
        let reloads = shared.quick ? 2 : 5
        var results: [Result] = []
        for size in sizes {
            let path = shared.workspace.file("refresh-\(size).quire")
            defer { try? FileSystem.remove(path) }
            print("  building a vault of \(grouped(size)) entries…")
            let (writer, built, _) = try Fixtures.build(at: path, count: size, seed: 12)
            let reader = try Fixtures.open(path, built.recovery)
            guard try reader.entries().count == size else { throw BenchError("the reader does not list \(size) entries") }
            guard try reader.refresh().isEmpty else { throw BenchError("a first refresh with nothing appended was not empty") }
            var result = Result(entries: size)
            var generator = EntryGenerator(seed: 1_200)
            for _ in 0..<appends {
                // Another handle (its own descriptor and state, as another
                // process has) appends one entry in one commit.
                let added = try writer.add(generator.body())
                let (changes, ns) = try timed { try reader.refresh() }
                guard changes.ids(.added) == [added.entryID], changes.entries.count == 1, !changes.fileReplaced else {
                    throw BenchError("refresh did not report exactly the appended entry: \(changes)")
                }
                result.refresh.add(ns)
                let (idle, idleNs) = try timed { try reader.refresh() }
                guard idle.isEmpty else { throw BenchError("a refresh with nothing appended was not empty") }
                result.idle.add(idleNs)
            }
            // Before refresh(): reload the file and list every entry again.
            for _ in 0..<reloads {
                try writer.add(generator.body())
                let (count, ns) = try timed { () throws -> Int in
                    try reader.reload()
                    return try reader.entries().count
                }
                guard count > size else { throw BenchError("the reload did not see the appended entry") }
                result.reload.add(ns)
            }
            results.append(result)
        }

        var s = Section(name: "refresh", title: "12. Refresh after another writer appended one entry")
        s.explanation = [
            "A vault of N generated journal entries (commits of \(grouped(Fixtures.batch)), recovery key, no fsync) is open in two handles, "
                + "each with its own descriptor and state as two processes have. The writer appends one entry (`vault.add`, one commit); "
                + "the reader, whose entry index is loaded, calls `Vault.refresh()`, which checks that the file is the one it read "
                + "(identity, size, last commit at its offset), scans the bytes after its last known commit, verifies the new commit "
                + "against the chain tip and decrypts only the new record, then compares that entry's heads "
                + "(median of \(appends) appends; each change set is checked to be exactly the one added entry). "
                + "\"Nothing appended\" is a second refresh right after. Before `refresh()` an app reloaded and listed the vault "
                + "again (`reload()` + `entries()`, median of \(reloads))."
        ]
        var t = Table([""] + results.map { "\(grouped($0.entries)) entries" })
        t.row(["refresh after one append (ms, median)"] + results.map { fmt($0.refresh.median / 1e6, 2) })
        t.row(["  p90 (ms)"] + results.map { fmt($0.refresh.percentile(0.9) / 1e6, 2) })
        t.row(["refresh, nothing appended (ms, median)"] + results.map { fmt($0.idle.median / 1e6, 3) })
        t.row(["reload + entries() (ms, median)"] + results.map { fmt($0.reload.median / 1e6, 1) })
        t.row(["  ÷ refresh"] + results.map { ratio($0.reload.median / $0.refresh.median) })
        if let first = results.first, let last = results.last, results.count > 1 {
            t.row([
                "refresh@\(grouped(last.entries)) ÷ refresh@\(grouped(first.entries))", "",
                ratio(last.refresh.median / first.refresh.median),
            ])
        }
        s.tables.append(("", t))
        if let last = results.last {
            let judged = !shared.quick && last.entries == 50_000
            s.targets.append(
                Target(
                    what: "refresh after another writer appended one entry, \(grouped(last.entries)) entries (median)",
                    target: "≤ 5 ms", measured: fmt(last.refresh.median / 1e6, 2) + " ms", met: judged ? last.refresh.median <= 5e6 : nil))
        }
        return s
    }
}
