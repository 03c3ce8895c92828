// Benchmark 1: appending one entry to vaults of 1k, 10k and 100k entries.

import CSodium
@_spi(Format) import Quire
@_spi(Crypto) import QuireCrypto
@_spi(Format) import QuireFormat
import QuireSystem

enum AppendBenchmark {
    struct Figures {
        let entries: Int
        let buildSeconds: Double
        let indexLoadNs: UInt64
        let sizeBefore: UInt64
        var appends = Samples()
        var deltas: [UInt64] = []
        var prefixUnchanged = false
        var fsyncAppends = Samples()
        var openOnly = Samples()
        var addAfterOpen = Samples()
        var openAndAdd = Samples()
    }

    /// One vault under test, kept open for the whole benchmark.
    final class Subject {
        let path: String
        var vault: Vault
        let built: BuiltVault
        var generator: EntryGenerator
        var result: Figures
        var last: UInt64
        var prefixBefore: [UInt8] = []

        init(path: String, vault: Vault, built: BuiltVault, generator: EntryGenerator, result: Figures) {
            self.path = path
            self.vault = vault
            self.built = built
            self.generator = generator
            self.result = result
            last = result.sizeBefore
        }
    }

    static func run(_ shared: SharedFixtures) throws -> Section {
        let sizes = shared.quick ? [1_000, 3_000, 10_000] : [1_000, 10_000, 100_000]
        let timedCount = shared.quick ? 50 : 300
        let warmCount = 10
        let fsyncCount = shared.quick ? 5 : 20
        let openRepetitions = shared.quick ? 3 : 5
        var subjects: [Subject] = []

        for size in sizes {
            let path = shared.workspace.file("append-\(size).quire")
            print("  building a vault of \(grouped(size)) entries (commits of \(grouped(Fixtures.batch)))…")
            let (vault, built, buildSeconds) = try Fixtures.build(at: path, count: size, seed: UInt64(size))
            var generator = EntryGenerator(seed: 0xA99E4D + UInt64(size))

            // Warm up: load the entry index (as an app showing the journal
            // has), then a few appends so that every lazy path has run.
            let (_, indexNs) = try timed { _ = try vault.profile() }
            for _ in 0..<warmCount { try vault.add(generator.body()) }
            let result = Figures(entries: size, buildSeconds: buildSeconds, indexLoadNs: indexNs, sizeBefore: try fileSize(path))
            subjects.append(Subject(path: path, vault: vault, built: built, generator: generator, result: result))
        }
        for s in subjects { s.prefixBefore = try hashPrefix(of: s.path, count: s.result.sizeBefore) }

        // Timed appends, interleaved across the vault sizes (1k, 10k, 100k,
        // 1k, …) so that background load on the machine affects every size
        // alike.
        print("  timing \(timedCount) appends per vault, interleaved…")
        for _ in 0..<timedCount {
            for s in subjects {
                let body = s.generator.body()
                let start = now()
                try s.vault.add(body)
                s.result.appends.add(now() - start)
                let size = try fileSize(s.path)
                s.result.deltas.append(size - s.last)
                s.last = size
            }
        }
        for s in subjects { s.result.prefixUnchanged = try hashPrefix(of: s.path, count: s.result.sizeBefore) == s.prefixBefore }

        // The same with fsync on (twice per commit: records, then the commit frame).
        // Write options are fixed at open: a handle that syncs, its index loaded.
        for s in subjects {
            s.vault = try Vault.open(at: s.path, credential: .recoveryKey(s.built.recovery), options: WriteOptions(synchronous: true))
            _ = try s.vault.profile()
        }
        for _ in 0..<fsyncCount {
            for s in subjects {
                let body = s.generator.body()
                let start = now()
                try s.vault.add(body)
                s.result.fsyncAppends.add(now() - start)
            }
        }
        for s in subjects {
            s.vault = try Vault.open(at: s.path, credential: .recoveryKey(s.built.recovery), options: Fixtures.noSync)
            _ = try s.vault.profile()
        }

        // Opening the vault (scan, unlock, verify every commit), then one add.
        for _ in 0..<openRepetitions {
            for s in subjects {
                let body = s.generator.body()
                let t0 = now()
                let fresh = try Fixtures.open(s.path, s.built.recovery)
                let t1 = now()
                try fresh.add(body)
                let t2 = now()
                s.result.openOnly.add(t1 - t0)
                s.result.addAfterOpen.add(t2 - t1)
                s.result.openAndAdd.add(t2 - t0)
            }
        }

        let results = subjects.map(\.result)
        let extra = warmCount + timedCount + fsyncCount + openRepetitions
        for s in subjects {
            if s.result.entries == sizes.last {
                shared.largeVault = BuiltVault(path: s.path, recovery: s.built.recovery, entryCount: s.result.entries + extra)
            } else {
                try? FileSystem.remove(s.path)
            }
        }
        return section(results, shared: shared, timedCount: timedCount, fsyncCount: fsyncCount, openRepetitions: openRepetitions)
    }

    static func section(_ results: [Figures], shared: SharedFixtures, timedCount: Int, fsyncCount: Int, openRepetitions: Int) -> Section {
        var s = Section(name: "append", title: "1. Append one entry")
        s.explanation = [
            "Each vault is filled with generated entries (500–2000 bytes of English-like text, 0–3 tags) in commits of "
                + "\(grouped(Fixtures.batch)) revisions. On the same open `Vault` handle the entry index is loaded and "
                + "10 warm-up entries are added; then \(timedCount) single-entry `vault.add(EntryBody(…))` calls per vault are timed "
                + "one by one (each is its own commit, attested: signed with Ed25519 by the writing member, here the recovery "
                + "key) with `WriteOptions(synchronous: false)`, i.e. without fsync. All vaults stay "
                + "open and the appends are interleaved across them (1k, 10k, 100k, 1k, …), so that load from other processes "
                + "affects every size alike.",
            "*Bytes written* is the file-size delta per append (entry frame + commit frame). *Earlier bytes unchanged* "
                + "compares BLAKE2b-256 of the file's first N bytes (N = its size before the timed appends) before and after. "
                + "*Append with fsync* repeats the append \(fsyncCount) times with `synchronous: true` (two fsyncs per commit). "
                + "*Open + append* is `Vault.open` (scan every frame, unlock with the recovery key, verify every commit's chain "
                + "head; attestations are checked when something first needs them) "
                + "followed by one `add`, on a fresh handle, median of \(openRepetitions).",
        ]
        var t = Table(["entries in vault"] + results.map { grouped($0.entries) })
        t.row(["vault file size before (MB)"] + results.map { megabytes($0.sizeBefore) })
        t.row(["build time, batched commits (s)"] + results.map { fmt($0.buildSeconds, 1) })
        t.row(["load entry index once (ms)"] + results.map { fmt(Double($0.indexLoadNs) / 1e6, 1) })
        t.row(["append on open handle, median (µs)"] + results.map { fmt($0.appends.median / 1e3, 1) })
        t.row(["append on open handle, mean (µs)"] + results.map { fmt($0.appends.mean / 1e3, 1) })
        t.row(["append on open handle, p90 (µs)"] + results.map { fmt($0.appends.percentile(0.9) / 1e3, 1) })
        t.row(["bytes written per append, mean"] + results.map { fmt(Double($0.deltas.reduce(0, +)) / Double(max(1, $0.deltas.count)), 0) })
        t.row(["bytes written per append, min–max"] + results.map { "\(grouped($0.deltas.min() ?? 0))–\(grouped($0.deltas.max() ?? 0))" })
        t.row(["earlier bytes unchanged (BLAKE2b of prefix)"] + results.map { $0.prefixUnchanged ? "yes" : "NO" })
        t.row(["append with fsync, median (µs)"] + results.map { fmt($0.fsyncAppends.median / 1e3, 0) })
        t.row(["open + append, median (ms)"] + results.map { fmt($0.openAndAdd.median / 1e6, 2) })
        t.row(["  of which Vault.open (ms)"] + results.map { fmt($0.openOnly.median / 1e6, 2) })
        t.row(["  of which first add (ms)"] + results.map { fmt($0.addAfterOpen.median / 1e6, 2) })
        s.tables.append(("", t))

        // The floor format 2 adds to every commit: one Ed25519 signature.
        var pk = [UInt8](repeating: 0, count: 32)
        var sk = [UInt8](repeating: 0, count: 64)
        var signature = [UInt8](repeating: 0, count: 64)
        crypto_sign_keypair(&pk, &sk)
        let message = [UInt8](repeating: 0x51, count: 63)
        let trials = shared.quick ? 200 : 2_000
        let (_, signNs) = timed { for _ in 0..<trials { crypto_sign_detached(&signature, nil, message, UInt64(message.count), sk) } }
        s.notes.append(
            "Each append is one commit, and format 2 signs every commit: raw libsodium `crypto_sign_detached` of the "
                + "63-byte attestation message takes \(fmt(Double(signNs) / Double(trials) / 1e3, 1)) µs here, included in every figure above "
                + "(format 1 had no signature). Batching entries into one commit pays it once.")
        if let first = results.first, let last = results.last {
            let growth = last.appends.median / first.appends.median
            let judged = !shared.quick && first.entries == 1_000 && last.entries == 100_000
            s.targets.append(
                Target(
                    what: "append@\(grouped(last.entries)) / append@\(grouped(first.entries)) (median, no fsync)",
                    target: "≤ 1.5×", measured: ratio(growth), met: judged ? growth <= 1.5 : nil))
            let untouched = results.allSatisfy(\.prefixUnchanged)
            s.targets.append(
                Target(
                    what: "earlier bytes untouched by appends", target: "identical prefix hash",
                    measured: untouched ? "identical at every size" : "CHANGED", met: untouched))
        }
        return s
    }
}
