// Benchmark 5: the key manager — what unlocking costs with each credential,
// what decoy passphrase slots can cost a reader, and what each key
// operation costs, against the raw primitives in the same run.

@_spi(Format) @_spi(Crypto) import Quire
@_spi(Crypto) import QuireCrypto
@_spi(Format) import QuireFormat
@_spi(Format) @_spi(Crypto) import QuireKeys
import QuireSystem

enum KeyBenchmark {
    static func run(_ shared: SharedFixtures) throws -> Section {
        let quick = shared.quick
        // Full runs use the library's default passphrase cost (libsodium's
        // "moderate": 3 passes, 256 MiB); quick runs the writer floor
        // (Spec/keys.md §2.3: 2 passes, 64 MiB).
        let ops: UInt64 = quick ? Limits.writerMinArgon2OpsLimit : Argon2id.moderateOpsLimit
        let mem: UInt64 = quick ? Limits.writerMinArgon2MemLimitBytes : Argon2id.moderateMemLimitBytes
        let devices = quick ? 3 : 10
        let entries = quick ? 100 : 1_000
        let repetitions = quick ? 2 : 5
        let path = shared.workspace.file("keys.quire")
        defer { try? FileSystem.remove(path) }
        let random = SystemRandom()
        let t0: Int64 = 1_767_225_600_000

        // A vault with this device, the recovery key, a passphrase, `devices`
        // more devices, three epochs, and `entries` entries.
        let laptop = try DeviceIdentity.generate(name: "Laptop", now: t0, using: random)
        let recovery = try RecoveryKey(using: random)
        var setup = VaultSetup(name: "Benchmark journal", recoveryKey: recovery, device: laptop, now: t0)
        setup.guardedPassphrase = secret("correct horse battery staple")
        setup.passphraseOpsLimit = ops
        setup.passphraseMemLimitBytes = mem
        let vault = try Vault.create(at: path, setup: setup, options: Fixtures.noSync)
        var others: [DeviceIdentity] = []
        for i in 0..<devices {
            let d = try DeviceIdentity.generate(name: "Device \(i)", now: t0, using: random)
            try vault.enrollDevice(code: d.code, name: d.name, now: t0 + 1)
            others.append(d)
        }
        var generator = EntryGenerator(seed: 5)
        try Fixtures.fill(vault, count: entries / 2, generator: &generator)
        try vault.rotateKeys(now: t0 + 2)
        try vault.rotateKeys(now: t0 + 3)
        try Fixtures.fill(vault, count: entries - entries / 2, generator: &generator)
        let state = try vault.keyState()
        let epochKey = try require2(vault.unlocked.keys.writeKey, "no write key")
        let maxDeviceSlots =
            state.trusted.map { ring in
                ring.record.publicPart.slots.filter { if case .device = $0 { true } else { false } }.count
            }.max() ?? 0

        func median(_ count: Int = repetitions, _ body: () throws -> Void) rethrows -> Double {
            var s = Samples()
            for _ in 0..<count { s.add(try timed(body).1) }
            return s.median
        }
        let cheapRepetitions = quick ? 3 : 21
        // The raw primitives.
        let salt = random.bytes(Argon2id.saltByteCount)
        let argon = try median { _ = try Argon2id.deriveKey(passphrase: secret("x"), salt: salt, opsLimit: ops, memLimitBytes: mem) }
        let rawOpen = try median(cheapRepetitions) { _ = try Vault.open(at: path, credential: .epochKey(epochKey), writable: false) }

        var s = Section(name: "keys", title: "5. Key manager: unlocking, decoy slots, key operations")
        s.explanation = [
            "A vault with this device, \(devices) more enrolled devices, the recovery key and a passphrase (Argon2id \(ops) passes, "
                + "\(mem >> 20) MiB), in epoch \(state.epoch) after two rotations, holding \(entries) entries. Each figure that runs Argon2id is the median "
                + "of \(repetitions) runs, each other one of \(cheapRepetitions); key operations run once each. \"Open\" reads and verifies the whole file; the baseline opens it with the raw epoch key "
                + "(no key slot at all), so the difference is what the credential costs. Sealed boxes do not name their "
                + "recipient, so a device key tries every device slot of a keyring until one opens (\(state.trusted.count) keyrings here, "
                + "with up to \(maxDeviceSlots) device slots each, one X25519 agreement per slot), newest keyring first, and stops "
                + "at the first whose key it reaches (older keys come through the keyrings' parent keys); the recovery key tries "
                + "one slot per keyring.",
            "Decoys: someone who can write the file but holds no key appends a made-up keyring (random key commitment and "
                + "sealed part, so nobody can open it) with N passphrase slots of N different random salts, committed by a commit "
                + "frame of random bytes. A reader runs Argon2id at most 8 times per passphrase attempt: the 4 newest "
                + "triples, then, if none names the derived key, 4 more in file order (`Spec/keys.md §2.3`), so the cost "
                + "stays flat as N grows, and the second pass reaches the vault's own slot, so the right passphrase opens.",
        ]

        var unlock = Table(["credential", "open (ms)", "vs raw epoch key", "vs one Argon2id run"])
        unlock.row("raw epoch key (baseline)", fmt(rawOpen / 1e6, 1), "1.00×", "")
        let credentials: [(String, () throws -> Credential)] = [
            ("this device's key", { .device(laptop.keyPair) }),
            ("the recovery key", { .recoveryKey(recovery) }),
            ("the passphrase", { .passphrase(secret("correct horse battery staple")) }),
        ]
        var passphraseOpen = 0.0
        for (name, credential) in credentials {
            let ns = try median(name == "the passphrase" ? repetitions : cheapRepetitions) {
                _ = try Vault.open(at: path, credential: credential(), writable: false)
            }
            if name == "the passphrase" { passphraseOpen = ns }
            unlock.row(name, fmt(ns / 1e6, 1), fmt(ns / rawOpen, 2) + "×", name == "the passphrase" ? fmt(ns / argon, 2) + "×" : "")
        }
        unlock.row("one Argon2id run (raw libsodium)", fmt(argon / 1e6, 1), "", "1.00×")
        s.tables.append(("Unlocking", unlock))

        var decoys = Table([
            "decoy slots", "wrong passphrase (ms)", "Argon2id runs, (time − raw open) / one run", "result",
            "right passphrase (ms)", "result",
        ])
        var worst = 0.0
        var rightOpens = true
        for n in quick ? [1, 8] : [1, 4, 16, 64] {
            let copy = shared.workspace.file("decoys-\(n).quire")
            defer { try? FileSystem.remove(copy) }
            try copyFile(path, to: copy)
            try appendDecoys(n, to: copy, ops: ops, mem: mem)
            func attempt(_ passphrase: String) -> (ns: Double, outcome: String) {
                var outcome = ""
                let ns = median {
                    do {
                        _ = try Vault.open(at: copy, credential: .passphrase(secret(passphrase)), writable: false)
                        outcome = "opened"
                    } catch {
                        outcome = (error as? QuireError)?.code ?? "\(error)"
                    }
                }
                return (ns, outcome)
            }
            let wrong = attempt("wrong guess")
            let right = attempt("correct horse battery staple")
            let runs = (wrong.ns - rawOpen) / argon
            worst = max(worst, runs)
            rightOpens = rightOpens && right.outcome == "opened"
            decoys.row("\(n) + the vault's own", fmt(wrong.ns / 1e6, 1), fmt(runs, 2), wrong.outcome, fmt(right.ns / 1e6, 1), right.outcome)
        }
        s.tables.append(("A wrong and the right passphrase against decoy slots", decoys))

        var operations = Table(["operation", "ms", "vs one 1 KiB entry appended"])
        let entry = EntryBody(created: t0, text: String(repeating: "x", count: 1024))
        let append = try median(cheapRepetitions) { try vault.add(entry) }
        operations.row("append one 1 KiB entry (baseline)", fmt(append / 1e6, 2), "1.00×")
        func op(_ name: String, _ body: () throws -> Void) throws {
            let (_, ns) = try timed(body)
            operations.row(name, fmt(Double(ns) / 1e6, 2), fmt(Double(ns) / append, 1) + "×")
        }
        let extra = try DeviceIdentity.generate(name: "Tablet", now: t0, using: random)
        try op("enroll a device (same epoch: one slot added)") { try vault.enrollDevice(code: extra.code, name: "Tablet", now: t0 + 4) }
        try op("remove a device (new epoch: \(devices + 1) device slots, recovery, passphrase rewrapped)") {
            _ = try vault.removeDevice(named: "Tablet", now: t0 + 5)
        }
        try op("rotate") { try vault.rotateKeys(now: t0 + 6) }
        try op("change the passphrase (one Argon2id run)") {
            try vault.setPassphrase(secret("a new passphrase"), opsLimit: ops, memLimitBytes: mem, now: t0 + 7)
        }
        try op("privacy statement") { _ = try vault.privacyStatement() }
        s.tables.append(("Key operations (each one commit, keyring written twice)", operations))

        s.targets.append(
            Target(
                what: "unlock with a passphrase", target: "≈ one Argon2id run (≤ 1.2× plus the raw open)",
                measured: fmt(passphraseOpen / (argon + rawOpen), 2) + "× of (Argon2id + raw open)",
                met: quick ? nil : passphraseOpen <= 1.2 * (argon + rawOpen)))
        s.targets.append(
            Target(
                what: "wrong passphrase against any number of decoys", target: "≤ 8 Argon2id runs (budget, two passes)",
                measured: fmt(worst, 2) + " runs at worst",
                met: quick ? nil : worst <= 8.5))
        s.targets.append(
            Target(
                what: "the right passphrase against any number of appended decoys", target: "opens",
                measured: rightOpens ? "opened" : "refused", met: rightOpens))
        _ = others
        return s
    }

    static func secret(_ text: String) -> SecureBytes {
        var bytes = Array(text.utf8)
        return try! SecureBytes(consuming: &bytes)
    }

    /// Copies `from` over `to` (removing `to` first).
    static func copyFileReplacing(_ from: String, to: String) throws {
        try? FileSystem.remove(to)
        try copyFile(from, to: to)
    }

    /// Copies `from` to a new file `to`, 1 MiB at a time.
    static func copyFile(_ from: String, to: String) throws {
        let source = try SystemFile(path: from, mode: .readOnly)
        let out = try SystemFile(path: to, mode: .createExclusive(permissions: 0o600))
        let size = try source.size()
        var offset: UInt64 = 0
        while offset < size {
            let n = Int(min(1 << 20, size - offset))
            try out.write(try source.read(count: n, at: offset), at: offset)
            offset += UInt64(n)
        }
    }

    /// Appends, as someone who holds no key, one made-up keyring with
    /// `count` passphrase slots of `count` different random salts (so never
    /// trusted: nobody can open it), committed by a junk commit.
    static func appendDecoys(_ count: Int, to path: String, ops: UInt64, mem: UInt64) throws {
        let random = SystemRandom()
        let view = try KeylessWriter.publicView(of: path)
        let slots: [KeySlot] = (0..<count).map { _ in
            .passphrase(
                salt: random.bytes(16), opsLimit: ops, memLimitBytes: mem, publicKey: random.bytes(32),
                box: random.bytes(KeySlot.boxByteCount))
        }
        let frame = KeylessWriter.keyringFrame(epoch: view.newest.epoch + 1, parents: [view.newestID], slots: slots, random: random)
        try KeylessWriter.append([frame], commitKeyID: view.commitKeyID, to: path, random: random)
    }
}

/// `value`, or a benchmark error saying `what` is missing.
func require2<T>(_ value: T?, _ what: String) throws -> T {
    guard let value else { throw BenchError(what) }
    return value
}
