// fuzz-seed: writes the hand-made seed corpora into a directory (default
// "seeds", relative to the current directory), one subdirectory per target:
//
//   swift run --package-path Fuzz/SeedGen fuzz-seed Fuzz/seeds
//
// Everything is deterministic (SeededRandom, fixed clocks),
// so re-running it rewrites identical files. The vaults it makes are
// unlocked by the recovery key fuzz-vault uses: 32 bytes of 0x01.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
@_spi(Format) @_spi(Crypto) import Quire
@_spi(Crypto) import QuireCrypto
@_spi(Format) import QuireFormat
@_spi(Testing) @_spi(Format) @_spi(Crypto) import QuireKeys
import QuireSystem

@main
struct SeedMain {
    static func main() throws {
        let root = CommandLine.arguments.count > 1 ? CommandLine.arguments[1] : "seeds"
        let scratch = "/tmp/quire-fuzz-seed-\(FileSystem.processID)"
        try FileSystem.makeDirectory(scratch)
        defer { _ = rmdir(scratch) }
        try Seeds(root: root, scratch: scratch).generate()
    }
}

struct Seeds {
    let root: String
    let scratch: String
    let now: Int64 = 1_767_225_600_000  // 2026-01-01T00:00:00Z

    func write(_ bytes: [UInt8], _ target: String, _ name: String) throws {
        let dir = root + "/" + target
        try FileSystem.makeDirectory(root, permissions: 0o755)
        try FileSystem.makeDirectory(dir, permissions: 0o755)
        let path = dir + "/" + name
        if FileSystem.exists(path) { try FileSystem.remove(path) }
        let file = try SystemFile(path: path, mode: .createExclusive(permissions: 0o644))
        try file.write(bytes, at: 0)
        print("\(path) (\(bytes.count) bytes)")
    }

    func read(_ path: String) throws -> [UInt8] {
        let file = try SystemFile(path: path, mode: .readOnly)
        return try file.read(count: Int(try file.size()), at: 0)
    }

    /// Creates a vault (setup changed by `configure`), lets `fill` commit to
    /// it, and returns its bytes.
    func makeVault(
        _ label: String, configure: (inout VaultSetup, SeededRandom) throws -> Void = { _, _ in },
        fill: (Vault) throws -> Void = { _ in }
    ) throws -> [UInt8] {
        let random = SeededRandom(label: "quire fuzz seed " + label)
        let recoveryKey = RecoveryKey(secret: try SymmetricKey(bytes: [UInt8](repeating: 1, count: 32)))
        var setup = VaultSetup(name: "Seed \(label)", recoveryKey: recoveryKey, now: now)
        try configure(&setup, random)
        let path = scratch + "/" + label + ".quire"
        // Seeds use passphrase slots below the writer floor, for speed.
        let vault = try SlotCrypto.$allowsWeakPassphraseCost.withValue(true) {
            try Vault.create(at: path, setup: setup, random: random, options: WriteOptions(synchronous: false))
        }
        try fill(vault)
        let bytes = try read(path)
        try FileSystem.remove(path)
        return bytes
    }

    func revision(_ n: UInt8, text: String, random: SeededRandom, parents: [RevisionID] = [], deleted: Bool = false) -> EntryRevision {
        EntryRevision(
            entryID: EntryID(unchecked: [UInt8](repeating: n, count: 16)), revisionID: RevisionID(using: random), parents: parents,
            clock: HybridLogicalClock(milliseconds: UInt64(now) + UInt64(n), counter: 0), isDeleted: deleted,
            body: deleted ? EntryBody() : EntryBody(
                created: now, timeZone: "Europe/Paris", text: text, tags: ["seed", "fuzz"], mood: 3, isStarred: true,
                location: Location(latitude: 48.85, longitude: 2.35), weather: Weather(temperatureCelsius: -1.5, conditions: "snow")))
    }

    func passphrase(_ text: String) throws -> SecureBytes {
        let utf8 = Array(text.utf8)
        let s = try SecureBytes(zeroedCount: utf8.count)
        s.withUnsafeMutableBytes { p in for (i, b) in utf8.enumerated() { p[i] = b } }
        return s
    }

    static let keyID = KeyID(rawValue: 0x0605_0403_0201)

    /// A plaintext frame with a correct check value and body hash.
    func frame(_ kind: RecordKind, body: [UInt8]) -> [UInt8] {
        let h = FrameHeader(kind: kind, flags: 0, keyID: Self.keyID, bodyLength: UInt32(body.count + FrameHeader.bodyHashByteCount))
        return h.encoded() + body + BLAKE2b.hash(body, byteCount: FrameHeader.bodyHashByteCount)
    }

    /// A commit frame whose body is `head` repeated (it verifies under no key).
    func commitFrame(head: UInt8) -> [UInt8] {
        CommitChain.commitHeader(keyID: Self.keyID).encoded() + [UInt8](repeating: head, count: CommitChain.bodyByteCount)
    }

    func generate() throws {
        // Whole vaults, for fuzz-vault and fuzz-frames.
        let plain = try makeVault("plain")
        let withEntries = try makeVault("entries", fill: { vault in
            let random = SeededRandom(label: "entries content")
            let first = revision(1, text: "Hello", random: random)
            let second = revision(2, text: String(repeating: "compressible text ", count: 40), random: random)
            try vault.commit { (tx: VaultTransaction) throws(QuireError) in
                try tx.append(first)
                try tx.append(second)
            }
            let third = revision(1, text: "Hello again", random: random, parents: [first.revisionID])
            let tombstone = revision(2, text: "", random: random, parents: [second.revisionID], deleted: true)
            try vault.commit { (tx: VaultTransaction) throws(QuireError) in
                try tx.append(third)
                try tx.append(tombstone)
                _ = try tx.storeAttachment(from: MemoryByteSource((0..<200).map { UInt8($0) }), mediaType: "application/octet-stream")
            }
        })
        let withSlots = try makeVault("slots", configure: { setup, random in
            setup.device = try DeviceIdentity(keyPair: try Ed25519.KeyPair(using: random), name: "Seed phone", created: now)
            setup.guardedPassphrase = try passphrase("correct horse")
            setup.passphraseOpsLimit = 1
            setup.passphraseMemLimitBytes = Limits.minArgon2MemLimitBytes
        })
        for (name, bytes) in [("plain.quire", plain), ("entries.quire", withEntries), ("slots.quire", withSlots)] {
            try write(bytes, "fuzz-vault", name)
            try write(bytes, "fuzz-frames", name)
        }

        // Headers.
        let header = FileHeader(vaultID: try VaultID(bytes: Array(repeating: 7, count: 16))).encoded()
        try write(header, "fuzz-header", "valid.bin")
        try write(Array(plain.prefix(FileHeader.byteCount)), "fuzz-header", "plain-vault.bin")
        var firstDamaged = header
        firstDamaged[20] ^= 0x10
        try write(firstDamaged, "fuzz-header", "copy0-damaged.bin")
        var secondDamaged = header
        secondDamaged[63] ^= 0x01
        try write(secondDamaged, "fuzz-header", "copy1-damaged.bin")
        try write(Array(header.prefix(40)), "fuzz-header", "truncated.bin")
        try write(FileHeader.magic + [UInt8](repeating: 0, count: 56), "fuzz-header", "magic-only.bin")

        // Frames. Inputs under 64 bytes are frames after a prefixed header.
        try write(frame(RecordKind(rawValue: 0x81), body: [0xa0]), "fuzz-frames", "short-enrollment.bin")
        try write(commitFrame(head: 0xcc), "fuzz-frames", "short-commit.bin")
        var repairable = frame(RecordKind(rawValue: 0x90), body: [1, 2, 3])
        repairable[9] ^= 0x04  // one flipped bit in the length: repaired by the scanner
        try write(header + repairable + frame(.keyring, body: [0xa0]) + commitFrame(head: 1), "fuzz-frames", "bitflip-then-keyring.bin")
        try write(
            header + [0xde, 0xad, 0xbe, 0xef, 0x00] + frame(RecordKind(rawValue: 0x81), body: [0xf6]) + commitFrame(head: 0),
            "fuzz-frames", "garbage-then-frames.bin")

        // CBOR: record payloads and edge values.
        let random = SeededRandom(label: "cbor seeds")
        try write(revision(9, text: "cbor", random: random).encoded(), "fuzz-cbor", "entry-revision.cbor")
        try write(revision(9, text: "", random: random, deleted: true).encoded(), "fuzz-cbor", "tombstone.cbor")
        let profile = Profile(name: "P", about: "a", settings: CBORMap(text: [("theme", .text("dark"))]), clock: HybridLogicalClock(rawValue: 1))
        try write(profile.encoded(), "fuzz-cbor", "profile.cbor")
        let edge: [(String, CBOR)] = [
            ("ints.cbor", .array([
                .unsigned(0), .unsigned(23), .unsigned(24), .unsigned(255), .unsigned(256), .unsigned(65536),
                .unsigned(UInt64.max), .negative(0), .negative(UInt64.max),
            ])),
            ("floats.cbor", .array([.double(0), .double(-0.0), .double(1.5), .double(-Double.greatestFiniteMagnitude), .double(Double.leastNonzeroMagnitude)])),
            ("map.cbor", .map(CBORMap([(.unsigned(1), .null), (.text("a"), .bool(true)), (.bytes([1, 2]), .bool(false)), (.negative(3), .text("é日本"))]))),
            ("nested.cbor", .array([.array([.array([.map(CBORMap(text: [("k", .array([]))]))])])])),
        ]
        for (name, value) in edge { try write(CBOREncoder.encode(value), "fuzz-cbor", name) }
        // Keys that differ in bytes but not as Swift values: NFC and NFD "é",
        // "K" and KELVIN SIGN, 0.0 and -0.0 (written by hand: canonical order).
        try write([0xa2, 0x62, 0xc3, 0xa9, 0x01, 0x63, 0x65, 0xcc, 0x81, 0x02], "fuzz-cbor", "keys-nfc-nfd.cbor")
        try write([0xa2, 0x61, 0x4b, 0x01, 0x63, 0xe2, 0x84, 0xaa, 0x02], "fuzz-cbor", "keys-kelvin.cbor")
        try write([0xa2, 0xfb, 0, 0, 0, 0, 0, 0, 0, 0, 0x01, 0xfb, 0x80, 0, 0, 0, 0, 0, 0, 0, 0x02], "fuzz-cbor", "keys-signed-zero.cbor")

        // CBOR: keyring parts (from the slots vault: recovery, device and
        // passphrase slots), a keyring content with dummy keys, a manifest
        // and an enrollment request.
        let slotsPath = scratch + "/slots-copy.quire"
        let copy = try SystemFile(path: slotsPath, mode: .createExclusive(permissions: 0o600))
        try copy.write(withSlots, at: 0)
        let structure = try VaultScanner.scan(path: slotsPath)
        try FileSystem.remove(slotsPath)
        guard let keyringBody = structure.frames.first(where: { $0.header.kind == .keyring })?.plaintextBody else {
            fatalError("the slots vault has no keyring")
        }
        try write(keyringBody, "fuzz-cbor", "keyring-body.cbor")
        try write(try KeyringRecord(body: keyringBody, location: nil).publicBytes, "fuzz-cbor", "keyring-public.cbor")
        let member = KeyringMember(role: "recovery", publicKey: [UInt8](repeating: 2, count: 32), name: "Recovery key", added: now)
        let content = KeyringContent(
            members: [member, KeyringMember(role: "device", publicKey: [UInt8](repeating: 3, count: 32), name: "Phone", added: now)],
            removed: [KeyringMember(role: "device", publicKey: [UInt8](repeating: 4, count: 32), name: "Old", added: 1)],
            escrow: [EscrowRecipient(publicKey: [UInt8](repeating: 5, count: 32), label: "IT")],
            parentKeys: [try SymmetricKey(bytes: [UInt8](repeating: 6, count: 32))],
            blobKey: try SymmetricKey(bytes: [UInt8](repeating: 7, count: 32)), created: now, reason: "rotate")
        try write(content.encoded(), "fuzz-cbor", "keyring-content.cbor")
        let manifest = BlobManifest(
            blob: BlobID(unchecked: [UInt8](repeating: 8, count: 32)), stream: StreamID(unchecked: [UInt8](repeating: 9, count: 16)),
            byteCount: 200_000, mediaType: "image/jpeg")
        try write(manifest.encoded(), "fuzz-cbor", "manifest.cbor")

        for (name, bytes) in [("plain.quire", plain), ("entries.quire", withEntries), ("slots.quire", withSlots)] {
            try write(bytes, "fuzz-merge", name)
        }
        try keyringSeeds(withSlots)
        try commitSeeds(withEntries)
        try memorySeeds()
    }

    /// The frames of a vault's bytes, scanned from a scratch copy.
    func scan(_ bytes: [UInt8], _ name: String) throws -> VaultStructure {
        let path = scratch + "/" + name
        let copy = try SystemFile(path: path, mode: .createExclusive(permissions: 0o600))
        try copy.write(bytes, at: 0)
        defer { try? FileSystem.remove(path) }
        return try VaultScanner.scan(path: path)
    }

    /// Seeds of fuzz-keyring, each a mode byte and its input: a keyring
    /// body and public part, the inner part of a real keyring (bare and
    /// padded), and the plaintext of a real link.
    func keyringSeeds(_ withSlots: [UInt8]) throws {
        let path = scratch + "/keyring-seeds.quire"
        let file = try SystemFile(path: path, mode: .createExclusive(permissions: 0o600))
        try file.write(withSlots, at: 0)
        defer { try? FileSystem.remove(path) }
        let recoveryKey = RecoveryKey(secret: try SymmetricKey(bytes: [UInt8](repeating: 1, count: 32)))
        // A child keyring, so that there is a link to read.
        let vault = try Vault.open(at: path, credential: .recoveryKey(recoveryKey), random: SeededRandom(label: "keyring seeds"),
                                   options: WriteOptions(synchronous: false))
        try vault.rotateKeys(now: now + 1)
        let reopened = try Vault.open(at: path, credential: .recoveryKey(recoveryKey), writable: false)
        let rings = reopened.unlockedKeys.keyrings
        guard rings.count == 2, let rootKey = rings[0].epochKey, let childKey = rings[1].epochKey else { fatalError("keyring seeds: no child keyring") }
        let vaultID = reopened.vaultID
        let child = rings[1].record
        let padded = try XChaCha20Poly1305.open(child.sealed, key: try childKey.subkey(.keyring), nonce: child.nonce,
                                                authenticating: KeyringRecord.associatedData(vaultID: vaultID, publicBytes: child.publicBytes))
        let inner = padded.withUnsafeBytes { p in Array(padded[0..<(Padding.payloadCount(in: p) ?? padded.count)]) }
        let link = child.publicPart.links[0]
        var ad = Array("quire-keyring-link-v2".utf8) + vaultID.bytes
        ad += [UInt8(truncatingIfNeeded: child.epoch), UInt8(truncatingIfNeeded: child.epoch >> 8), UInt8(truncatingIfNeeded: child.epoch >> 16), UInt8(truncatingIfNeeded: child.epoch >> 24)]
        ad += child.publicPart.keyCommit + child.publicPart.parents[0].bytes
        let linkPlain = try XChaCha20Poly1305.open(Array(link[24...]), key: try rootKey.subkey(.link), nonce: Array(link[0..<24]), authenticating: ad)
        try write([0] + child.encodedBody(), "fuzz-keyring", "body.bin")
        try write([1] + child.publicBytes, "fuzz-keyring", "public.bin")
        try write([2] + inner, "fuzz-keyring", "inner.bin")
        try write([3] + padded, "fuzz-keyring", "inner-padded.bin")
        try write([4] + inner, "fuzz-keyring", "fields.bin")
        try write([5] + linkPlain, "fuzz-keyring", "link.bin")
    }

    /// Seeds of fuzz-commit: a real commit body, its attestation, zeros, a digest.
    func commitSeeds(_ withEntries: [UInt8]) throws {
        let s = try scan(withEntries, "commit-seeds.quire")
        guard let body = s.groups.last?.commitBody else { fatalError("commit seeds: no commit") }
        try write([0] + body, "fuzz-commit", "body.bin")
        try write([1] + [UInt8](repeating: 0, count: CommitChain.attestationByteCount), "fuzz-commit", "unattested.bin")
        try write([1] + Array(body[56..<152]), "fuzz-commit", "sealed-bytes.bin")
        try write([2] + s.groups.last!.digest + [7, 1], "fuzz-commit", "digest.bin")
    }

    /// Seeds of fuzz-memory: device memory files (Spec/keys.md §3.3) — a
    /// plain one, one with every optional line, one with an odd path.
    func memorySeeds() throws {
        let random = SeededRandom(label: "memory seeds")
        let vault = VaultID(using: random)
        let heads = (0..<3).map { _ in KeyringID(using: random) }
        var m = VaultMemory(
            vaultID: vault, path: "/home/sam/Journal.quire", committedLength: 4096, chainHead: random.bytes(32), newestClock: 1 << 40,
            keyringHeads: heads)
        try write(m.encoded(), "fuzz-memory", "plain.memory")
        m.removedKey = random.bytes(32)
        m.acceptedTampered = VaultMemory.TamperedAcceptance(committedLength: 2048, chainHead: random.bytes(32), count: 65)
        try write(m.encoded(), "fuzz-memory", "full.memory")
        m.path = "/j/odd\nname\\x\n.quire"
        m.keyringHeads = (0..<64).map { _ in KeyringID(using: random) }
        try write(m.encoded(), "fuzz-memory", "odd-path-64-heads.memory")
    }
}
