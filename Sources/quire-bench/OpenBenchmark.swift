// Benchmark: the cold open of issue 13 — a new process opens the vault
// with this device's key store and asks for the first page of the 50
// newest entries — with the device-local index cache (Spec/index-cache.md),
// without it (the first open, which writes it), and today's full read;
// the peak resident memory of each; adding one entry; and refresh() after
// a sync tool renamed a grown copy over the vault.

import Foundation
@_spi(Format) @_spi(Crypto) import Quire
@_spi(Crypto) import QuireCrypto
@_spi(Format) import QuireFormat
@_spi(Format) @_spi(Crypto) import QuireKeys
import QuireSystem

enum OpenBenchmark {
    static let repetitions = 5

    static func run(_ shared: SharedFixtures) throws -> Section {
        var section = Section(name: "open", title: "Cold open with the index cache (issue 13)")
        section.explanation = [
            "A vault of generated entries (the query benchmark's generator, commits of 5,000) made by a device whose key store "
                + "is a folder. Each *cold* figure is a new process (`quire-bench --child open-…`) timed from before `Vault.open` "
                + "to the first page of the 50 newest (`entries(matching:)`), bodies of the page read; process start is not "
                + "included. *Cached*: `Vault.open(at:store:)` with the cache present (it answers from the summaries and reads "
                + "the page's 50 records). *No cache*: the same with the cache deleted first (it reads every record, builds the "
                + "summaries and writes the cache). *Full read*: `Vault.open(at:credential:)`, no store, today's path. Peak "
                + "memory is the child's VmHWM after the page. *Add one* is a child that opens through the store and adds one "
                + "entry (`vault.add`), against the same through the credential. *Refresh after replace*: a handle with its index "
                + "loaded; a copy of the file gets one entry and is renamed over it; `refresh()` reads only the tail, against "
                + "`reload()` + `refresh()` (the path before: reopen and compare every entry). *One commit per entry*: the same "
                + "entries written by the same device one commit each (as an app that saves each entry), cache present: the open "
                + "checks the digest of every prefix commit frame (`Spec/index-cache.md §5` step 4). Medians of \(repetitions) runs."
        ]
        let sizes = shared.quick ? [1_000, 2_000] : [1_000, 10_000, 50_000]
        var table = Table(["measure"] + sizes.map { "\(grouped($0)) entries" })
        var columns: [[String: String]] = []
        var cachedMs: [Double] = []
        var cachedHWM: [UInt64] = []
        for n in sizes {
            print("  building a vault of \(grouped(n)) entries…")
            let folder = shared.workspace.file("open-\(n)")
            try FileSystem.makeDirectory(folder, permissions: 0o700)
            let home = folder + "/home"
            let store = FileDeviceKeyStore(directory: home)
            let device = try DeviceIdentity.generate(name: "bench", now: 1_700_000_000_000, using: SeededRandom(label: "open bench \(n)"))
            try store.create(device)
            let path = folder + "/v.quire"
            do {
                let vault = try Vault.create(
                    at: path,
                    setup: VaultSetup(name: "Open benchmark", recoveryKey: try RecoveryKey(), device: device),
                    options: Fixtures.noSync)
                var generator = EntryGenerator(seed: 31)
                try Fixtures.fill(vault, count: n, generator: &generator)
            }
            let single = folder + "/single.quire"
            do {
                print("  building a vault of \(grouped(n)) entries, one commit each…")
                let one = try Vault.create(
                    at: single,
                    setup: VaultSetup(name: "Open benchmark", recoveryKey: try RecoveryKey(), device: device),
                    options: Fixtures.noSync)
                var generator = EntryGenerator(seed: 31)
                for _ in 0..<n {
                    let r = generator.revision()
                    try one.commit { (tx: VaultTransaction) throws(QuireError) in try tx.append(r) }
                }
            }
            var c: [String: String] = [:]
            func child(_ mode: String, vault: String = path) throws -> (ms: Double, hwm: UInt64, cached: Bool) {
                var s = Samples()
                var hwm: UInt64 = 0
                var cached = false
                for _ in 0..<repetitions {
                    let out = try runChild([mode, vault, home])
                    s.add(try out.number("ns"))
                    hwm = max(hwm, try out.number("hwm"))
                    cached = out["cached"] == "1"
                }
                return (s.median / 1e6, hwm, cached)
            }
            let full = try child("open-full")
            let none = try child("open-nocache")
            let cached = try child("open-cached")
            guard cached.cached, !none.cached else { throw BenchError("the cache was not used as expected") }
            cachedMs.append(cached.ms)
            cachedHWM.append(cached.hwm)
            c["cold open + first page: cached"] = fmt(cached.ms, 1) + " ms"
            c["cold open + first page: no cache (writes it)"] = fmt(none.ms, 1) + " ms"
            c["cold open + first page: full read (before)"] = fmt(full.ms, 1) + " ms"
            c["peak memory: cached"] = mebibytes(cached.hwm) + " MiB"
            c["peak memory: no cache"] = mebibytes(none.hwm) + " MiB"
            c["peak memory: full read (before)"] = mebibytes(full.hwm) + " MiB"
            _ = try runChild(["open-nocache", single, home])  // writes its cache
            let singleCached = try child("open-cached", vault: single)
            guard singleCached.cached else { throw BenchError("the cache of the one-commit-per-entry vault was not used") }
            c["cold open + first page: cached, one commit per entry"] = fmt(singleCached.ms, 1) + " ms"
            c["peak memory: cached, one commit per entry"] = mebibytes(singleCached.hwm) + " MiB"
            let addCached = try child("add-store")
            let addFull = try child("add-credential")
            c["open + add one: through the store"] = fmt(addCached.ms, 1) + " ms"
            c["open + add one: credential (before)"] = fmt(addFull.ms, 1) + " ms"
            let (adopt, reopen) = try refreshAfterReplace(path: path, store: store, device: device, folder: folder)
            c["refresh after a rename-replace: tail"] = fmt(adopt, 1) + " ms"
            c["refresh after a rename-replace: reload (before)"] = fmt(reopen, 1) + " ms"
            columns.append(c)
        }
        let order = [
            "cold open + first page: cached", "cold open + first page: no cache (writes it)", "cold open + first page: full read (before)",
            "cold open + first page: cached, one commit per entry",
            "peak memory: cached", "peak memory: no cache", "peak memory: full read (before)", "peak memory: cached, one commit per entry",
            "open + add one: through the store", "open + add one: credential (before)",
            "refresh after a rename-replace: tail", "refresh after a rename-replace: reload (before)",
        ]
        for name in order { table.row([name] + columns.map { $0[name] ?? "–" }) }
        section.tables.append(("", table))
        let big = cachedMs.last ?? .nan
        section.targets.append(
            Target(
                what: "cold open + first page of 50, cache present, \(grouped(sizes.last!)) entries", target: "≤ 50 ms",
                measured: fmt(big, 1) + " ms", met: shared.quick ? nil : big <= 50))
        let flat = big / (cachedMs.first ?? .nan)
        section.targets.append(
            Target(
                what: "the same, \(grouped(sizes.last!)) vs \(grouped(sizes[0])) entries", target: "≤ 1.5×", measured: ratio(flat),
                met: shared.quick ? nil : flat <= 1.5))
        let memory = Double(cachedHWM.last ?? 0) / 1_048_576
        section.targets.append(
            Target(
                what: "peak resident memory, vault open from the cache at \(grouped(sizes.last!))", target: "≤ 64 MiB",
                measured: fmt(memory, 1) + " MiB", met: shared.quick ? nil : memory <= 64))
        return section
    }

    /// Medians of `refresh()` after a copy that gained one entry was renamed
    /// over the vault: reading the tail, and `reload()` + `refresh()`.
    static func refreshAfterReplace(path: String, store: FileDeviceKeyStore, device: DeviceIdentity, folder: String) throws -> (
        Double, Double
    ) {
        var tail = Samples()
        var reopen = Samples()
        var round = 0
        for useReload in [false, true] {
            for _ in 0..<3 {
                let reader = try Vault.open(at: path, credential: .device(device.keyPair), options: Fixtures.noSync)
                _ = try reader.refresh()
                let incoming = folder + "/incoming.quire"
                try? FileSystem.remove(incoming)
                try copyFile(path, to: incoming)
                do {
                    let phone = try Vault.open(at: incoming, credential: .device(device.keyPair), options: Fixtures.noSync)
                    round += 1
                    try phone.add(EntryBody(created: 1_900_000_000_000 + Int64(round), text: "from the other device \(round)"))
                }
                try FileSystem.rename(incoming, to: path)
                let (changes, ns) = try timed { () throws -> VaultChangeSet in
                    if useReload { try reader.reload() }
                    return try reader.refresh()
                }
                guard changes.entries.count == 1 else { throw BenchError("refresh saw \(changes.entries.count) changes") }
                if useReload { reopen.add(ns) } else { tail.add(ns) }
            }
        }
        return (tail.median / 1e6, reopen.median / 1e6)
    }

    static func copyFile(_ from: String, to: String) throws {
        let source = try SystemFile(path: from, mode: .readOnly)
        let size = try source.size()
        let target = try SystemFile(path: to, mode: .createExclusive(permissions: 0o600))
        var at: UInt64 = 0
        while at < size {
            let n = Int(min(UInt64(8 << 20), size - at))
            try target.write(try source.read(count: n, at: at), at: at)
            at += UInt64(n)
        }
    }

    /// The `--child make-single N VAULT HOME` mode: a new device key store
    /// at HOME (a folder that must not exist) and a vault at VAULT of N
    /// generated entries written one commit each by that device (as a
    /// `quire add` a day writes them), without fsync — for profiling
    /// `quire add` (`QUIRE_HOME=HOME quire add VAULT TEXT`) on such a vault.
    static func makeSingle(_ args: [String]) throws -> Bool {
        guard args.first == "make-single" else { return false }
        guard args.count == 4, let n = Int(args[1]), n >= 0 else { throw BenchError("usage: make-single N VAULT HOME") }
        try FileSystem.makeDirectory(args[3], permissions: 0o700)
        let store = FileDeviceKeyStore(directory: args[3])
        let device = try DeviceIdentity.generate(name: "bench", now: 1_700_000_000_000, using: SeededRandom(label: "make-single \(n)"))
        try store.create(device)
        let vault = try Vault.create(
            at: args[2], setup: VaultSetup(name: "One commit per entry", recoveryKey: try RecoveryKey(), device: device),
            options: Fixtures.noSync)
        var generator = EntryGenerator(seed: 31)
        for _ in 0..<n {
            let r = generator.revision()
            try vault.commit { (tx: VaultTransaction) throws(QuireError) in try tx.append(r) }
        }
        print("commits=\(vault.file.commits.statuses.count)")
        return true
    }

    /// The `--child open-…` and `add-…` modes: VAULT HOME. Prints `ns`,
    /// `hwm` and `cached`.
    static func child(_ args: [String]) throws -> Bool {
        guard let mode = args.first, ["open-full", "open-nocache", "open-cached", "add-store", "add-credential"].contains(mode),
            args.count == 3
        else {
            return false
        }
        let path = args[1]
        let store = FileDeviceKeyStore(directory: args[2])
        guard let device = try store.load() else { throw BenchError("no device key in \(args[2])") }
        if mode == "open-nocache" {
            let key = try IndexCacheKey(device: device, vaultID: try VaultFile(path: path).vaultID)
            IndexCache.remove(folder: store.indexCacheFolder!, key: key)
        }
        let start = now()
        let vault: Vault
        if mode == "open-full" || mode == "add-credential" {
            vault = try Vault.open(at: path, credential: .device(device.keyPair), writable: mode.hasPrefix("add"), options: Fixtures.noSync)
        } else {
            vault = try Vault.open(at: path, store: store, writable: mode.hasPrefix("add"), options: Fixtures.noSync)
        }
        if mode.hasPrefix("add") {
            try vault.add(EntryBody(created: 1_950_000_000_000, text: "one more"))
        } else {
            let page = try vault.entries(matching: EntryQuery(limit: 50))
            guard page.entries.count == 50 else { throw BenchError("page of \(page.entries.count)") }
        }
        let ns = now() - start
        let cached = vault.answersFromIndexCache
        print("ns=\(ns)")
        print("hwm=\(vmHighWaterMark() ?? ProcessStats.peakResidentBytes())")
        print("cached=\(cached ? 1 : 0)")
        // Frames taken from the cache's frame table, not scanned (0: the whole file was scanned).
        print("prefixFrames=\(vault.file.cachedPrefixFrameCount)")
        return true
    }
}
