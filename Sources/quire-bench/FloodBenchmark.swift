// Benchmark 7: opening a vault that someone flooded with keyrings (issue 12,
// §1: "one keyring with 4,096 history keys plus 300 unopenable keyrings
// (221 KiB, built from public data only) made opening with the passphrase
// take minutes"). Format 2 has no history; its analogue is a keyring with 64
// parents (the most a keyring may have), each with its own key the reader
// must follow, plus 300 keyrings nobody can open, built from the file's
// public data alone and full of slots the reader must try.

import CSodium
@_spi(Format) @_spi(Crypto) import Quire
@_spi(Crypto) import QuireCrypto
@_spi(Format) import QuireFormat
@_spi(Format) @_spi(Crypto) import QuireKeys
@_spi(Format) import QuireSync
import QuireSystem

enum FloodBenchmark {
    /// Keyless keyrings appended.
    static let floodKeyrings = 300

    /// One flooded (or clean) vault under test.
    struct Subject {
        let name: String
        let path: String
        /// Keyless keyrings and slots appended, and their bytes.
        var keyrings = 0
        var slotsPerKeyring = 0
        var parentsPerKeyring = 0
        var bytes: UInt64 = 0
    }

    static func run(_ shared: SharedFixtures) throws -> Section {
        let quick = shared.quick
        let entries = quick ? 1_000 : 10_000
        let heads = quick ? 8 : Limits.maxParentCount
        let repetitions = quick ? 2 : 3
        let ops: UInt64 = quick ? Limits.writerMinArgon2OpsLimit : Argon2id.moderateOpsLimit
        let mem: UInt64 = quick ? Limits.writerMinArgon2MemLimitBytes : Argon2id.moderateMemLimitBytes
        let dir = shared.workspace
        let random = SystemRandom()
        let t0: Int64 = 1_767_225_600_000
        let passphrase = "correct horse battery staple"
        var created: [String] = []
        defer { for p in created { try? FileSystem.remove(p) } }

        let laptop = try DeviceIdentity.generate(name: "Laptop", now: t0, using: random)
        let recovery = try RecoveryKey(using: random)
        func setup() -> VaultSetup {
            var s = VaultSetup(name: "Benchmark journal", recoveryKey: recovery, device: laptop, now: t0)
            s.guardedPassphrase = KeyBenchmark.secret(passphrase)
            s.passphraseOpsLimit = ops
            s.passphraseMemLimitBytes = mem
            return s
        }

        // The clean vault: one keyring, `entries` entries.
        let cleanPath = dir.file("flood-clean.quire")
        created.append(cleanPath)
        print("  building a clean vault of \(grouped(entries)) entries…")
        do {
            let vault = try Vault.create(at: cleanPath, setup: setup(), options: Fixtures.noSync)
            var generator = EntryGenerator(seed: 7)
            try Fixtures.fill(vault, count: entries, generator: &generator)
        }

        // The member-made part: `heads` concurrent rotations (one per copy,
        // each a new epoch with its own key), merged into one file, then a
        // rotation that joins them: one keyring whose 64 parents each carry
        // a different key.
        let basePath = dir.file("flood-base.quire")
        created.append(basePath)
        print("  building \(heads) concurrent rotations, merging them and joining the heads…")
        let (_, buildNs) = try timed { () throws -> Void in
            _ = try Vault.create(at: basePath, setup: setup(), options: Fixtures.noSync)
            let device = Credential.device(laptop.keyPair)
            let copy = dir.file("flood-branch.quire")
            defer { try? FileSystem.remove(copy) }
            let root = dir.file("flood-root.quire")
            try KeyBenchmark.copyFileReplacing(basePath, to: root)
            for i in 0..<heads {
                try KeyBenchmark.copyFileReplacing(root, to: copy)
                try Vault.open(at: copy, credential: device, options: Fixtures.noSync).rotateKeys(now: t0 + 10 + Int64(i))
                _ = try VaultMerge.merge(vaultAt: basePath, copyAt: copy, credential: device, options: Fixtures.noSync)
            }
            try? FileSystem.remove(root)
            let vault = try Vault.open(at: basePath, credential: device, options: Fixtures.noSync)
            try vault.rotateKeys(now: t0 + 100)  // a new epoch whose parents are every head
            var generator = EntryGenerator(seed: 7)
            try Fixtures.fill(vault, count: entries, generator: &generator)
        }
        let state = try Vault.open(at: basePath, credential: .device(laptop.keyPair), writable: false).keyState()
        let widest = state.trusted.map(\.parents.count).max() ?? 0
        guard state.heads.count == 1 else { throw BenchError("the heads were not joined: \(state.heads.count) heads") }

        // The keyless flood, from the base file's public data: the newest
        // keyring's passphrase slot (salt, cost, public key) and the ids of
        // the last `heads` keyrings, as parents with random links.
        let view = try KeylessWriter.publicView(of: basePath)
        guard let genuinePassphrase = view.newest.slots.first(where: { if case .passphrase = $0 { true } else { false } }) else {
            throw BenchError("no passphrase slot to copy")
        }
        let structure = try VaultScanner.scan(path: basePath)
        var ids: [KeyringID] = []
        for f in structure.frames where f.header.kind == .keyring && f.checksumIntact == true {
            let id = KeyringID(unchecked: f.trailer)
            if !ids.contains(id) { ids.append(id) }
        }
        let parents = Array(ids.suffix(Limits.maxParentCount))
        let fullSlots = quick ? 32 : Limits.maxSlotsPerKeyring
        func flood(_ name: String, file: String, parents: [KeyringID], slots: () throws -> [KeySlot]) throws -> Subject {
            let path = dir.file(file)
            created.append(path)
            try KeyBenchmark.copyFileReplacing(basePath, to: path)
            let before = try fileSize(path)
            var frames: [[UInt8]] = []
            var perKeyring = 0
            for _ in 0..<floodKeyrings {
                let s = try slots()
                perKeyring = s.count
                frames.append(KeylessWriter.keyringFrame(epoch: view.newest.epoch + 1, parents: parents, slots: s, random: random))
            }
            try KeylessWriter.append(frames, commitKeyID: view.commitKeyID, to: path, random: random)
            return Subject(
                name: name, path: path, keyrings: floodKeyrings, slotsPerKeyring: perKeyring, parentsPerKeyring: parents.count,
                bytes: try fileSize(path) - before)
        }
        print("  appending the keyless floods…")
        let subjects: [Subject] = [
            Subject(name: "clean vault (one keyring)", path: cleanPath),
            Subject(name: "\(heads)-parent join, no keyless flood", path: basePath),
            try flood("issue-sized flood: 1 parent, 1 passphrase + 1 device slot each", file: "flood-small.quire", parents: [view.newestID])
            {
                try KeylessWriter.copiedPassphraseSlots(1, like: genuinePassphrase, random: random)
                    + KeylessWriter.deviceSlots(1, random: random)
            },
            try flood(
                "passphrase flood: \(parents.count) parents, \(fullSlots) copied passphrase slots each", file: "flood-passphrase.quire",
                parents: parents
            ) {
                try KeylessWriter.copiedPassphraseSlots(fullSlots, like: genuinePassphrase, random: random)
            },
            try flood(
                "device flood: \(parents.count) parents, \(fullSlots) device slots each", file: "flood-device.quire", parents: parents
            ) {
                KeylessWriter.deviceSlots(fullSlots, random: random)
            },
        ]

        // Opens, interleaved across vaults and credentials.
        let credentials: [(String, () -> Credential)] = [
            ("device key", { .device(laptop.keyPair) }),
            ("passphrase", { .passphrase(KeyBenchmark.secret(passphrase)) }),
            ("recovery key", { .recoveryKey(recovery) }),
        ]
        var samples: [[Samples]] = subjects.map { _ in credentials.map { _ in Samples() } }
        // CPU time of the whole process (every thread) for each open: the
        // steadier figure on a loaded machine.
        var cpuSamples: [[Samples]] = subjects.map { _ in credentials.map { _ in Samples() } }
        var outcomes: [[String]] = subjects.map { _ in credentials.map { _ in "" } }
        print("  opening each vault with each credential, \(repetitions) rounds…")
        for _ in 0..<repetitions {
            for (i, subject) in subjects.enumerated() {
                for (j, credential) in credentials.enumerated() {
                    let c = credential.1()
                    let cpuStart = CompareChild.processCPU()
                    let start = now()
                    do {
                        let vault = try Vault.open(at: subject.path, credential: c, writable: false)
                        let issues = vault.file.commitIssues.count
                        // The keyrings the reader parsed (one per id), so a
                        // flood that the reader never saw is not mistaken for
                        // one it handled.
                        let keyrings = vault.unlocked.keyrings.count
                        outcomes[i][j] =
                            (issues == 0 ? "opened" : "opened, \(issues) commit issue\(issues == 1 ? "" : "s")") + ", \(keyrings) keyrings"
                    } catch {
                        outcomes[i][j] = error.code
                    }
                    samples[i][j].add(now() - start)
                    cpuSamples[i][j].add(CompareChild.processCPU() - cpuStart)
                }
            }
        }
        // The raw cost of a slot that does not open: libsodium's
        // crypto_box_seal_open of a 100-byte box under the wrong key (one
        // X25519 agreement, then a failing Poly1305 check).
        var pk = [UInt8](repeating: 0, count: 32)
        var sk = [UInt8](repeating: 0, count: 32)
        crypto_box_keypair(&pk, &sk)
        let junk = random.bytes(KeySlot.boxByteCount)
        var plain = [UInt8](repeating: 0, count: KeySlot.boxByteCount - 48)
        let trials = quick ? 200 : 2_000
        let (_, boxNs) = timed { for _ in 0..<trials { _ = crypto_box_seal_open(&plain, junk, UInt64(junk.count), pk, sk) } }
        let perBox = Double(boxNs) / Double(trials)

        var s = Section(name: "flood", title: "7. Opening a flooded vault")
        s.explanation = [
            "Issue 12 found that one keyring with 4,096 history keys plus 300 unopenable keyrings (221 KiB, built from public data "
                + "only) made opening with the passphrase take minutes (format 1 tried every key on every keyring). Format 2 has no "
                + "history: a keyring carries its parents' keys, a reader finds keys by their commitment, and opens each keyring at most "
                + "once. The analogue here: a vault with a device, the recovery key and a passphrase (Argon2id \(ops) passes, \(mem >> 20) MiB), "
                + "\(grouped(entries)) entries; \(heads) copies of it each rotate the keys (a new epoch, a new key each), are merged into one file, "
                + "and a rotation joins the \(heads) heads: one keyring with \(widest) parents and \(widest) different parent keys, which "
                + "the reader follows. Then someone who holds no key appends \(floodKeyrings) keyrings built from the file's public data "
                + "(random key commitment and sealed part, so nobody can open them; parents: the newest keyring ids, with random links), "
                + "committed by a commit frame of random bytes: the issue-sized flood has one copied passphrase slot and one device slot "
                + "each; the full floods have \(fullSlots) slots each (the most a keyring may hold), either passphrase slots that copy the "
                + "genuine slot's salt, cost and public key (so the reader's Argon2id result matches them and it must open each box) or "
                + "device slots (sealed boxes do not name their recipient, so a device tries each).",
            "Each figure is `Vault.open(…, writable: false)` (scan, unlock, verify every commit), the median of \(repetitions) runs, "
                + "interleaved across vaults and credentials. The clean vault is a new vault with the same entries and one keyring. "
                + "A slot that does not open costs one X25519 agreement (crypto_box_seal_open), measured here alone.",
        ]
        var sizes = Table(["vault", "keyless keyrings × slots (parents)", "appended (KiB)", "file (MB)"])
        for subject in subjects {
            sizes.row(
                subject.name,
                subject.keyrings == 0 ? "" : "\(subject.keyrings) × \(subject.slotsPerKeyring) (\(subject.parentsPerKeyring))",
                subject.keyrings == 0 ? "" : fmt(Double(subject.bytes) / 1024, 0), megabytes(try fileSize(subject.path)))
        }
        s.tables.append(("Vaults", sizes))
        var t = Table(["vault"] + credentials.flatMap { ["\($0.0) (ms)", "÷ clean"] })
        for (i, subject) in subjects.enumerated() {
            var cells = [subject.name]
            for j in credentials.indices {
                cells.append(fmt(samples[i][j].median / 1e6, 1))
                cells.append(ratio(samples[i][j].median / samples[0][j].median))
            }
            t.row(cells)
        }
        s.tables.append(("Open (ms, median) and ratio to the clean vault", t))
        // The same opens in CPU time, against the clean vault and against
        // the join without a flood.
        var cpu = Table(["vault"] + credentials.flatMap { ["\($0.0) CPU (ms)", "÷ clean", "÷ join"] })
        for (i, subject) in subjects.enumerated() {
            var cells = [subject.name]
            for j in credentials.indices {
                cells.append(fmt(cpuSamples[i][j].median / 1e6, 1))
                cells.append(ratio(cpuSamples[i][j].median / cpuSamples[0][j].median))
                cells.append(ratio(cpuSamples[i][j].median / cpuSamples[1][j].median))
            }
            cpu.row(cells)
        }
        s.tables.append(("Open, CPU time of the process (ms, median), to the clean vault and to the unflooded join", cpu))
        var o = Table(["vault"] + credentials.map(\.0))
        for (i, subject) in subjects.enumerated() { o.row([subject.name] + outcomes[i]) }
        s.tables.append(("Outcome", o))
        s.notes.append(
            "one slot that does not open (crypto_box_seal_open, X25519): \(fmt(perBox / 1e3, 1)) µs; "
                + "building the \(heads) rotations, merges and the join: \(fmt(Double(buildNs) / 1e9, 1)) s")
        // What each flood slot cost the credential that must try it: the
        // full floods against the same vault without them.
        func perSlot(_ vault: Int, _ credential: Int) -> Double {
            (samples[vault][credential].median - samples[1][credential].median)
                / Double(max(1, subjects[vault].keyrings * subjects[vault].slotsPerKeyring))
        }
        let deviceSlot = perSlot(4, 0)
        let passphraseSlot = perSlot(3, 1)
        let perMB = deviceSlot * 1e6 / (Double(subjects[4].bytes) / Double(subjects[4].keyrings * subjects[4].slotsPerKeyring))
        s.notes.append(
            "Each made-up slot a credential must try cost it \(fmt(deviceSlot / 1e3, 1)) µs (device slots, device key) and "
                + "\(fmt(passphraseSlot / 1e3, 1)) µs (copied passphrase slots, the passphrase), against \(fmt(perBox / 1e3, 1)) µs for the "
                + "raw box: one X25519 agreement each. A reader tries every slot of its kind in every keyring whose key it has not "
                + "reached, newest first (`Spec/format.md §8.5`), and cannot tell a made-up keyring from a genuine one before a "
                + "slot of it opens. Opening stays linear in the file, about \(fmt(perMB / 1e6, 0)) ms per MB of such slots, but a keyless "
                + "writer can append as many as it likes: \"within 2× of a clean vault\" holds while the flood is small against the vault "
                + "and cannot hold for floods of any size. Closing that needs a rule in the spec, not code: for example a device that "
                + "remembers its trusted keyring heads (`Spec/keys.md §7` memory) could try first the slots of keyrings whose link "
                + "verifies under a key it already holds, which a keyless writer cannot forge.")
        let judged = !quick
        for (i, subject) in subjects.enumerated() where subject.keyrings > 0 {
            for (j, credential) in credentials.enumerated() where credential.0 != "recovery key" {
                let r = samples[i][j].median / samples[0][j].median
                s.targets.append(
                    Target(
                        what: "open with the \(credential.0), \(subject.name)", target: "≤ 2× the clean vault",
                        measured: ratio(r), met: judged ? r <= 2 : nil))
            }
        }
        return s
    }
}
