// The hidden `--compare-child` modes: one measurement per process, printed
// as `key=value` lines, for Scripts/bench-format-compare.py, which runs the
// same modes of this binary (format 2) and of the format-1 binary built from
// branch `main`, interleaved, and prints the ratios.
//
// This file must compile unchanged against both libraries: it uses only the
// API the two share (Vault.create/open/add/commit, VaultFile.forEachRecord,
// VaultMerge.merge, Compaction.compact) and the helpers of Fixtures.swift and
// Corpus.swift, which are the same on both branches. The script copies it
// into the format-1 tree and adds the one dispatch line to main.swift.
//
//   --compare-child build VAULT KEYFILE COUNT          COUNT entries, commits of 5,000
//   --compare-child build-single VAULT KEYFILE COUNT   COUNT entries, one commit each (vault.add)
//   --compare-child add VAULT KEYFILE TIMED            TIMED single-entry adds on one open handle (to a copy)
//   --compare-child open-add VAULT KEYFILE REPS        a fresh Vault.open (writable) and one add, REPS times (to a copy)
//   --compare-child open VAULT KEYFILE REPS            Vault.open, read-only (scan, unlock, verify), REPS times
//   --compare-child read VAULT KEYFILE REPS            Vault.open, then every entry revision read, REPS times
//   --compare-child sync VAULT KEYFILE DIVERGE SEED    two copies diverge by DIVERGE entries each; merge; compact

@_spi(Format) import Quire
import QuireCrypto
@_spi(Format) import QuireFormat
@_spi(Format) import QuireKeys
@_spi(Format) import QuireSync
import QuireSystem

#if canImport(Glibc)
    import Glibc
#endif

enum CompareChild {
    static func main(_ args: [String]) -> Int32 {
        do {
            try run(args)
            return 0
        } catch {
            FileHandleStderr.write("quire-bench compare child: \(error)\n")
            return 1
        }
    }

    static func run(_ args: [String]) throws {
        guard args.count >= 4, let n = Int(args[3]) else {
            throw BenchError("usage: --compare-child MODE VAULT KEYFILE N [SEED]")
        }
        let mode = args[0]
        let path = args[1]
        let keyFile = args[2]
        print("format=\(FileHeader.currentVersion)")
        switch mode {
        case "build", "build-single":
            let start = now()
            let (vault, recovery) = try Fixtures.create(at: path)
            var generator = EntryGenerator(seed: UInt64(n))
            if mode == "build" {
                try Fixtures.fill(vault, count: n, generator: &generator)
            } else {
                for _ in 0..<n { try vault.add(generator.body()) }
            }
            print("ns=\(now() - start)")
            let f = try SystemFile(path: keyFile, mode: .createExclusive(permissions: 0o600))
            try f.write(Array(recovery.code().utf8), at: 0)
            print("bytes=\(try FileSystem.size(path))")
            return
        default:
            break
        }
        let recovery = try RecoveryKey(code: String(decoding: try readWholeFile(keyFile), as: UTF8.self))
        let credential = Credential.recoveryKey(recovery)
        switch mode {
        case "add":
            let path = try workingCopy(of: path)
            defer { try? FileSystem.remove(path) }
            let vault = try Fixtures.open(path, recovery)
            _ = try vault.profile()  // the entry index, as an app showing the journal has it
            var generator = EntryGenerator(seed: 0xADD + UInt64(n))
            for _ in 0..<10 { try vault.add(generator.body()) }
            var samples = Samples()
            var cpu = Samples()
            let before = try FileSystem.size(path)
            for _ in 0..<n {
                let body = generator.body()
                let start = now()
                let c = processCPU()
                try vault.add(body)
                samples.add(now() - start)
                cpu.add(processCPU() - c)
            }
            print("ns=\(UInt64(samples.median))")
            print("cpu=\(UInt64(cpu.median))")
            print("mean=\(UInt64(samples.mean))")
            print("p90=\(UInt64(samples.percentile(0.9)))")
            print("bytesPerAdd=\((try FileSystem.size(path) - before) / UInt64(max(1, n)))")
        case "open-add":
            let path = try workingCopy(of: path)
            defer { try? FileSystem.remove(path) }
            var generator = EntryGenerator(seed: 0x0BE + UInt64(n))
            var open = Samples()
            var add = Samples()
            var both = Samples()
            var cpu = Samples()
            for _ in 0..<n {
                let body = generator.body()
                let t0 = now()
                let c = processCPU()
                let vault = try Fixtures.open(path, recovery)
                let t1 = now()
                try vault.add(body)
                let t2 = now()
                open.add(t1 - t0)
                add.add(t2 - t1)
                both.add(t2 - t0)
                cpu.add(processCPU() - c)
            }
            print("ns=\(UInt64(both.median))")
            print("cpu=\(UInt64(cpu.median))")
            print("open=\(UInt64(open.median))")
            print("add=\(UInt64(add.median))")
        case "open":
            var samples = Samples()
            var cpu = Samples()
            for _ in 0..<n {
                let start = now()
                let c = processCPU()
                _ = try Vault.open(at: path, credential: credential, writable: false)
                samples.add(now() - start)
                cpu.add(processCPU() - c)
            }
            print("ns=\(UInt64(samples.median))")
            print("cpu=\(UInt64(cpu.median))")
            print("min=\(UInt64(samples.minimum))")
        case "read":
            var samples = Samples()
            var cpu = Samples()
            var records = 0
            var bytes = 0
            var issues = 0
            for _ in 0..<n {
                records = 0
                bytes = 0
                let start = now()
                let c = processCPU()
                let vault = try Vault.open(at: path, credential: credential, writable: false)
                issues =
                    vault.file.forEachRecord(kinds: [.entryRevision]) { record in
                        records += 1
                        bytes += record.payload.count
                        return true
                    }.count
                samples.add(now() - start)
                cpu.add(processCPU() - c)
            }
            guard issues == 0 else { throw BenchError("\(issues) records failed to read") }
            print("ns=\(UInt64(samples.median))")
            print("cpu=\(UInt64(cpu.median))")
            print("records=\(records)")
            print("bytes=\(bytes)")
        case "sync":
            guard args.count == 5, let seed = UInt64(args[4]) else {
                throw BenchError("usage: --compare-child sync VAULT KEYFILE DIVERGE SEED")
            }
            let a = path + ".a"
            let b = path + ".b"
            defer {
                try? FileSystem.remove(a)
                try? FileSystem.remove(b)
            }
            try KeyBenchmark.copyFileReplacing(path, to: a)
            try KeyBenchmark.copyFileReplacing(path, to: b)
            var ga = EntryGenerator(seed: 600 + seed)
            var gb = EntryGenerator(seed: 700 + seed)
            try Fixtures.fill(Fixtures.open(a, recovery), count: n, generator: &ga)
            try Fixtures.fill(Fixtures.open(b, recovery), count: n, generator: &gb)
            let t0 = now()
            let c0 = processCPU()
            for p in [a, b] { _ = try Vault.open(at: p, credential: credential, writable: false).verify() }
            let t1 = now()
            let c1 = processCPU()
            _ = try VaultMerge.merge(vaultAt: a, copyAt: b, credential: credential, options: Fixtures.noSync)
            let t2 = now()
            let c2 = processCPU()
            _ = try Compaction.compact(
                vaultAt: a, credential: credential, now: ProcessStats.wallClockMilliseconds(), writeOptions: Fixtures.noSync)
            let t3 = now()
            let c3 = processCPU()
            print("verify=\(t1 - t0)")
            print("merge=\(t2 - t1)")
            print("compact=\(t3 - t2)")
            print("verifyCPU=\(c1 - c0)")
            print("mergeCPU=\(c2 - c1)")
            print("compactCPU=\(c3 - c2)")
            print("mergedBytes=\(try FileSystem.size(a))")
        default:
            throw BenchError("unknown compare mode \(mode)")
        }
        print("peakRSS=\(ProcessStats.peakResidentBytes())")
    }

    /// CPU time of the whole process (every thread), in nanoseconds.
    static func processCPU() -> UInt64 {
        var spec = timespec()
        _ = clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &spec)
        return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
    }

    /// A copy of `path` beside it, for a mode that writes.
    static func workingCopy(of path: String) throws -> String {
        let copy = path + ".work"
        try KeyBenchmark.copyFileReplacing(path, to: copy)
        return copy
    }
}
