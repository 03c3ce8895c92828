// Hidden helpers for profiling one phase at a time under perf or callgrind
// (not used by the benchmark run itself):
//
//   quire-bench --child build VAULT KEYFILE COUNT      fill a new vault
//   quire-bench --child read VAULT KEYFILE REPS        library read-and-verify, REPS times
//   quire-bench --child rawread VAULT KEYFILE REPS     raw AEAD + zstd baseline, REPS times
//   quire-bench --child append VAULT KEYFILE COUNT     COUNT single-entry appends on one handle
//   quire-bench --child append-cold VAULT KEYFILE COUNT  the same without loading the entry index first

@_spi(Format) import Quire
import QuireCrypto
@_spi(Format) import QuireFormat
@_spi(Format) import QuireKeys
import QuireSystem

enum Profiling {
    /// Runs `mode` if it is a profiling mode; returns false otherwise.
    static func run(_ mode: String, _ args: [String]) throws -> Bool {
        guard ["build", "read", "rawread", "append", "append-cold"].contains(mode) else { return false }
        guard args.count == 3, let n = Int(args[2]) else { throw BenchError("usage: --child \(mode) VAULT KEYFILE N") }
        let path = args[0]
        let keyFile = args[1]
        if mode == "build" {
            let (_, built, seconds) = try Fixtures.build(at: path, count: n, seed: UInt64(n))
            let f = try SystemFile(path: keyFile, mode: .createExclusive(permissions: 0o600))
            try f.write(Array(built.recovery.code().utf8), at: 0)
            print("built \(n) entries in \(fmt(seconds, 2)) s")
            return true
        }
        let recovery = try RecoveryKey(code: String(decoding: try readWholeFile(keyFile), as: UTF8.self))
        switch mode {
        case "read":
            for _ in 0..<n {
                let start = now()
                let file = try VaultFile(path: path)
                let unlocked = try KeyringEvaluator.unlock(file, with: .recoveryKey(recovery))
                file.verifyCommits(keys: unlocked.keys, trustedKeyrings: unlocked.trustedKeyrings, attestors: unlocked.attestors)
                var bytes = 0
                _ = file.forEachRecord(kinds: [.entryRevision]) {
                    bytes += $0.payload.count
                    return true
                }
                print("read \(bytes) bytes in \(fmt(Double(now() - start) / 1e6, 1)) ms")
            }
        case "rawread":
            let file = try VaultFile(path: path)
            let unlocked = try KeyringEvaluator.unlock(file, with: .recoveryKey(recovery))
            guard let writeKey = unlocked.keys.writeKey, let key = try? writeKey.subkey(.record) else { throw BenchError("no key") }
            let frames = try RawFrames(path: path)
            for _ in 0..<n {
                let r = try frames.openAll(key: key, keyCommitment: writeKey.commitment)
                print("raw \(r.bytes) bytes in \(fmt(Double(r.ns) / 1e6, 1)) ms")
            }
        default:
            let vault = try Fixtures.open(path, recovery)
            if mode == "append" { _ = try vault.profile() }
            var generator = EntryGenerator(seed: 77)
            var samples = Samples()
            for _ in 0..<n {
                let body = generator.body()
                let start = now()
                try vault.add(body)
                samples.add(now() - start)
            }
            print(
                "append median \(fmt(samples.median / 1e3, 1)) µs, mean \(fmt(samples.mean / 1e3, 1)) µs, max \(fmt(Double(samples.sorted.last ?? 0) / 1e3, 1)) µs"
            )
        }
        return true
    }
}
