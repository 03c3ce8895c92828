// Benchmark 8: what each commit costs a reader. Format 2 attests every
// commit (an Ed25519 signature by the writing member, sealed in the commit
// frame), and a reader checks each one when it opens the vault, so a vault
// written one entry at a time pays one signature check per entry. Measured
// against the same entries in batched commits, and against raw libsodium.

import CSodium
@_spi(Format) @_spi(Crypto) import Quire
@_spi(Crypto) import QuireCrypto
@_spi(Format) import QuireFormat
@_spi(Format) import QuireKeys
import QuireSystem

enum CommitsBenchmark {
    struct Run {
        var scan = Samples(), unlock = Samples(), verify = Samples(), read = Samples(), open = Samples()
    }

    static func run(_ shared: SharedFixtures) throws -> Section {
        let count = shared.quick ? 1_000 : 10_000
        let repetitions = shared.quick ? 3 : 5
        let layouts: [(name: String, perCommit: Int)] = [("one entry per commit", 1), ("commits of 100", 100), ("commits of 5,000", 5_000)]
        var paths: [String] = []
        var recoveries: [RecoveryKey] = []
        var buildNs: [UInt64] = []
        defer { for p in paths { try? FileSystem.remove(p) } }
        for layout in layouts {
            let path = shared.workspace.file("commits-\(layout.perCommit).quire")
            print("  building \(grouped(count)) entries, \(layout.name)…")
            let start = now()
            let (vault, recovery) = try Fixtures.create(at: path)
            var generator = EntryGenerator(seed: 8)
            if layout.perCommit == 1 {
                for _ in 0..<count { try vault.add(generator.body()) }
            } else {
                var done = 0
                while done < count {
                    let n = min(layout.perCommit, count - done)
                    let revisions = (0..<n).map { _ in generator.revision() }
                    try vault.commit { (tx: VaultTransaction) throws(QuireError) in for r in revisions { try tx.append(r) } }
                    done += n
                }
            }
            buildNs.append(now() - start)
            paths.append(path)
            recoveries.append(recovery)
        }

        // Scan, unlock, verify (chain heads and attestations), read every
        // entry revision; interleaved across the layouts.
        var runs = layouts.map { _ in Run() }
        var commitCounts = layouts.map { _ in 0 }
        var attested = layouts.map { _ in 0 }
        for _ in 0..<repetitions {
            for (i, path) in paths.enumerated() {
                let t0 = now()
                let file = try VaultFile(path: path)
                let t1 = now()
                let unlocked = try KeyringEvaluator.unlock(file, with: .recoveryKey(recoveries[i]))
                let t2 = now()
                file.verifyCommits(keys: unlocked.keys, trustedKeyrings: unlocked.trustedKeyrings, attestors: unlocked.attestors)
                let t3 = now()
                var records = 0
                _ = file.forEachRecord(kinds: [.entryRevision]) { _ in
                    records += 1
                    return true
                }
                let t4 = now()
                guard records == count else { throw BenchError("read \(records) of \(count) entries") }
                runs[i].scan.add(t1 - t0)
                runs[i].unlock.add(t2 - t1)
                runs[i].verify.add(t3 - t2)
                runs[i].read.add(t4 - t3)
                runs[i].open.add(t3 - t0)
                commitCounts[i] = file.commits.statuses.count
                attested[i] = (0..<commitCounts[i]).filter { file.commits.isAttested($0) }.count
            }
        }

        // Raw libsodium: one Ed25519 signature and one check of the message a
        // commit attestation signs ("quire-commit-v2" ‖ vault id ‖ key commitment ‖ h_(k−1) ‖ digest,
        // 127 bytes).
        var pk = [UInt8](repeating: 0, count: 32)
        var sk = [UInt8](repeating: 0, count: 64)
        crypto_sign_keypair(&pk, &sk)
        let message = Array("quire-commit-v2".utf8) + SystemRandom().bytes(16 + 32 + 32 + 32)
        var signature = [UInt8](repeating: 0, count: 64)
        let trials = shared.quick ? 200 : 2_000
        let (_, signNs) = timed { for _ in 0..<trials { crypto_sign_detached(&signature, nil, message, UInt64(message.count), sk) } }
        var bad = 0
        let (_, verifyNs) = timed {
            for _ in 0..<trials where crypto_sign_verify_detached(signature, message, UInt64(message.count), pk) != 0 { bad += 1 }
        }
        guard bad == 0 else { throw BenchError("raw Ed25519 verification failed") }
        let sign = Double(signNs) / Double(trials)
        let verify = Double(verifyNs) / Double(trials)

        var s = Section(name: "commits", title: "8. Many small commits: what attestation costs a reader")
        s.explanation = [
            "Format 2 attests every commit: the writing member signs the group digest with Ed25519 and the signature is sealed in "
                + "the commit frame; a reader opens and checks each one (`Spec/format.md §9.4`) before it says who wrote a record. "
                + "A vault written one entry at a time — as `quire add` does — therefore pays one signature check per entry, where "
                + "format 1 paid one keyed BLAKE2b. The reference checks them when first needed: `verifyCommits` walks the chain "
                + "heads only, and `forEachRecord` checks the attestations of the commits whose records it reads, all at once and "
                + "on every core (`DispatchQueue.concurrentPerform`); a commit holding a frame of an unknown critical kind is "
                + "checked at open. The same \(grouped(count)) generated entries are written three ways (`vault.add` per entry, "
                + "and `vault.commit` batches of 100 and 5,000, recovery key, no fsync), then scanned, unlocked (recovery key), "
                + "verified and read (`forEachRecord`, which includes the attestation checks), medians of \(repetitions) runs "
                + "interleaved across the three. Raw libsodium signs and checks the 63-byte message of an attestation "
                + "(`crypto_sign_detached`, `crypto_sign_verify_detached`), \(grouped(trials)) times each."
        ]
        var t = Table(["", layouts[0].name, layouts[1].name, layouts[2].name])
        func row(_ name: String, _ f: (Int) -> String) { t.row([name] + layouts.indices.map(f)) }
        row("commits (attested)") { "\(grouped(commitCounts[$0])) (\(grouped(attested[$0])))" }
        row("file size (MB)") { (try? fileSize(paths[$0])).map(megabytes) ?? "" }
        row("build (s)") { fmt(Double(buildNs[$0]) / 1e9, 2) }
        row("scan (ms)") { fmt(runs[$0].scan.median / 1e6, 1) }
        row("unlock (ms)") { fmt(runs[$0].unlock.median / 1e6, 1) }
        row("verifyCommits, chain heads (ms)") { fmt(runs[$0].verify.median / 1e6, 1) }
        row("open = scan + unlock + verify (ms)") { fmt(runs[$0].open.median / 1e6, 1) }
        row("  ÷ commits of 5,000") { ratio(runs[$0].open.median / runs[2].open.median) }
        row("read every entry, attestations included (ms)") { fmt(runs[$0].read.median / 1e6, 1) }
        row("  ÷ commits of 5,000") { ratio(runs[$0].read.median / runs[2].read.median) }
        row("  more than commits of 5,000, per extra commit (µs)") {
            let extra = (runs[$0].read.median - runs[2].read.median) / 1e3 / Double(max(1, commitCounts[$0] - commitCounts[2]))
            return $0 == 2 ? "" : extra > 0 ? fmt(extra, 1) : "— (within noise)"
        }
        row("raw Ed25519 checks for these commits, one core (ms)") { fmt(Double(attested[$0]) * verify / 1e6, 1) }
        s.tables.append(("", t))
        s.notes.append("raw libsodium Ed25519: sign \(fmt(sign / 1e3, 1)) µs, verify \(fmt(verify / 1e3, 1)) µs per 63-byte message")
        return s
    }
}
