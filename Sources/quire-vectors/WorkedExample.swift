import Foundation
@_spi(Format) @_spi(Crypto) import Quire
@_spi(Crypto) import QuireCrypto
@_spi(Format) import QuireFormat
@_spi(Format) import QuireKeys
import QuireSystem

/// A random source that records every request, so that the worked example
/// can list the random bytes the writer drew, in order, and name each.
// @unchecked Sendable: RandomSource must be Sendable, but the generator writes the worked
// example on one thread, so `draws` is never touched concurrently.
final class RecordingRandom: RandomSource, @unchecked Sendable {
    let inner: SeededRandom
    private(set) var draws: [[UInt8]] = []

    init(seed: [UInt8]) { inner = SeededRandom(seed: seed) }

    func fill(_ buffer: UnsafeMutableRawBufferPointer) {
        inner.fill(buffer)
        draws.append(Array(buffer))
    }
}

/// `Spec/worked-example.md`: one tiny vault written by the reference
/// library with seeded randomness, then every value recomputed from the
/// primitives (each checked against the file's bytes) and written out.
enum WorkedExample {
    static let deviceSeed = (0..<32).map { UInt8($0) }
    static let recoverySecret = (0..<32).map { UInt8(0x20 + $0) }
    static let randomSeed = (0..<32).map { UInt8(0x40 + $0) }
    static let now: Int64 = 1_767_225_600_000  // 2026-01-01T00:00:00Z
    static let attachmentSize = 70_000

    struct Mismatch: Error, CustomStringConvertible {
        let description: String
    }

    /// Fails generation when a recomputed value differs from the file.
    static func same(_ what: String, _ a: [UInt8], _ b: some Collection<UInt8>) throws {
        guard a == Array(b) else {
            throw Mismatch(description: "worked example: \(what) recomputed as \(hex(a)), the file has \(hex(Array(b)))")
        }
    }

    /// The Markdown, built section by section.
    struct Doc {
        var text = ""
        mutating func line(_ s: String = "") { text += s + "\n" }
        mutating func heading(_ s: String) {
            line()
            line(s)
            line()
        }
        mutating func para(_ s: String) {
            line(s)
            line()
        }
        /// A named value: inline up to 48 bytes, else a block of 32 bytes per line.
        mutating func value(_ name: String, _ bytes: [UInt8], note: String = "") {
            let suffix = note.isEmpty ? "" : " — " + note
            if bytes.count <= 48 {
                line("- \(name) (\(bytes.count) bytes)\(suffix): `\(hex(bytes))`")
            } else {
                line("- \(name) (\(bytes.count) bytes)\(suffix):")
                line()
                line("  ```")
                for i in stride(from: 0, to: bytes.count, by: 32) { line("  " + hex(bytes[i..<min(i + 32, bytes.count)])) }
                line("  ```")
                line()
            }
        }
        /// A long value shown by its digest, length and ends.
        mutating func digest(_ name: String, _ bytes: [UInt8], where location: String) {
            line(
                "- \(name) (\(bytes.count) bytes, \(location)): BLAKE2b-256 `\(hex(BLAKE2b.hash(bytes, byteCount: 32)))`, first 32 bytes `\(hex(bytes.prefix(32)))`, last 32 bytes `\(hex(bytes.suffix(32)))`"
            )
        }
        mutating func text(_ name: String, _ s: String) { line("- \(name): `\(s)`") }
    }

    /// The public key of `crypto_box_seed_keypair(seed)`, or nil.
    static func x25519PublicKey(seed: [UInt8]) -> [UInt8]? {
        var copy = seed
        guard let secure = try? SecureBytes(consuming: &copy) else { return nil }
        return try? X25519.KeyPair(seed: secure).publicKey
    }

    static func le32(_ v: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: v >> (8 * UInt32($0))) } }

    /// Writes the vault and returns the Markdown.
    static func generate() throws -> String {
        let dir = NSTemporaryDirectory() + "quire-worked-example-\(FileSystem.processID)"
        try? FileManager.default.removeItem(atPath: dir)
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/Journal.quire"

        // MARK: Write the vault with the library.
        let random = RecordingRandom(seed: randomSeed)
        var seed = deviceSeed
        let deviceKeys = try Ed25519.KeyPair(seed: SecureBytes(consuming: &seed))
        let device = try DeviceIdentity(keyPair: deviceKeys, name: "Phone", created: now)
        let recovery = RecoveryKey(secret: try SymmetricKey(bytes: recoverySecret))
        let options = WriteOptions(synchronous: false)
        let vault = try Vault.create(
            at: path, setup: VaultSetup(name: "Worked example", recoveryKey: recovery, device: device, now: now), random: random,
            options: options)
        let drawsAfterCreate = random.draws.count
        let content = (0..<attachmentSize).map { UInt8(truncatingIfNeeded: $0) }
        let entryID = EntryID(unchecked: (0..<16).map { UInt8(0x60 + $0) })
        let revisionID = RevisionID(unchecked: (0..<16).map { UInt8(0x70 + $0) })
        var stored: StoredBlob?
        var revision: EntryRevision?
        try vault.commit { tx in
            stored = try tx.storeAttachment(from: MemoryByteSource(content), mediaType: "image/jpeg")
            let body = EntryBody(
                created: now + 60_000, timeZone: "Europe/London", text: String(repeating: "It rained all day. ", count: 12),
                tags: ["weather"],
                attachments: [AttachmentReference(id: [1], blob: stored!.blob, mediaType: "image/jpeg", fileName: "rain.jpg")])
            let r = EntryRevision(
                entryID: entryID, revisionID: revisionID, clock: HybridLogicalClock(milliseconds: UInt64(now + 60_000), counter: 0),
                device: device.id, body: body)
            revision = r
            try tx.append(r)
        }
        let file = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        let s = try VaultScanner.scan(path: path)
        guard s.groups.count == 2, s.frames.count == 9 else {
            throw Mismatch(description: "worked example: unexpected layout \(s.frames.map(\.header.kind))")
        }

        // Names for the random draws, found by matching below.
        var drawNames = [String](repeating: "", count: random.draws.count)
        func name(_ bytes: [UInt8], _ label: String) {
            if let i = random.draws.indices.first(where: { random.draws[$0] == bytes && drawNames[$0].isEmpty }) { drawNames[i] = label }
        }

        var d = Doc()
        d.line("# Worked example: one tiny vault, every value")
        d.line()
        d.para(
            "Generated by `quire-vectors worked-example Spec/worked-example.md` from the reference library; do not edit. `make vectors-check` fails when regenerating it would change a byte. The vault was written by the library with the inputs of §1; every value below was then recomputed from the primitives of [format.md](format.md), [keys.md](keys.md) and [records.md](records.md) and checked against the file's bytes, so a writer built from the spec can be checked byte by byte against it."
        )
        d.para(
            "Notation as [format.md §1](format.md#1-conventions): bytes in lowercase hex, `‖` concatenation, `u32(x)` 4 bytes little-endian, `H256` unkeyed BLAKE2b-256, `MAC256(k, m)` BLAKE2b-256 keyed with `k`, `KDF(K, id, ctx)` libsodium's `crypto_kdf_derive_from_key` (32 bytes, 8-byte context). CBOR is shown as its encoding."
        )

        // MARK: 1. Inputs
        d.heading("## 1. Inputs")
        d.value("device seed (Ed25519, `crypto_sign_seed_keypair`)", deviceSeed)
        d.value("recovery key R", recoverySecret)
        d.value(
            "seed of the writer's random stream", randomSeed,
            note:
                "request n (0, 1, 2 …) returns `randombytes_buf_deterministic(len, KDF(seed, n, \"quirerng\"))`; only the values matter: §1.1 lists each"
        )
        d.text("time (`now`, ms since 1970, UTC)", "\(now)")
        d.text("vault name", "Worked example")
        d.text("device name", "Phone")
        d.line("- attachment: \(attachmentSize) bytes, byte `i` = `i mod 256`, media type `image/jpeg`")
        d.line(
            "- entry: id `\(hex(entryID.bytes))`, revision `\(hex(revisionID.bytes))`, clock \(now + 60_000) ms counter 0, created \(now + 60_000), zone `Europe/London`, tag `weather`, text `It rained all day. ` twelve times, one attachment reference (id `01`, the attachment's blob id, `image/jpeg`, `rain.jpg`)"
        )

        // MARK: 2. Credentials
        let deviceX = try deviceKeys.agreementKeyPair()
        let recoverySeed = try KeyDerivation.derive(from: recovery.secret, subkeyID: 2, context: "quire rk").storage.copyBytes()
        let recoverySigner = try recovery.signingKeyPair()
        let recoveryX = try recoverySigner.agreementKeyPair()
        var keysDoc = Doc()
        keysDoc.heading("## 2. The credentials' keys")
        keysDoc.value("device Ed25519 public key", deviceKeys.publicKey)
        keysDoc.value("device X25519 public key = `crypto_sign_ed25519_pk_to_curve25519`", deviceX.publicKey)
        keysDoc.value("device id = H256(public key)[0..<16]", device.id.bytes)
        keysDoc.text("device code ([keys.md §3.2](keys.md))", device.code)
        keysDoc.text("recovery code ([records.md §6.4](records.md))", recovery.code())
        keysDoc.value("recovery signing seed = KDF(R, 2, \"quire rk\")", recoverySeed)
        keysDoc.value("recovery Ed25519 public key (the recovery member's key)", recoverySigner.publicKey)
        keysDoc.value("recovery X25519 public key", recoveryX.publicKey)

        // MARK: 3. Keyring: slots give K
        let root = s.frames[0]
        let rootBody = root.plaintextBody!
        let record = try KeyringRecord(body: rootBody, location: nil)
        let pub = record.publicPart
        guard case .recovery(let recoveryBox)? = pub.slots.first(where: { $0.kind == "recovery" }),
            case .device(let deviceBox)? = pub.slots.first(where: { $0.kind == "device" })
        else { throw Mismatch(description: "worked example: slots") }
        let devicePayload = try deviceX.open(deviceBox).copyBytes()
        let recoveryPayload = try recoveryX.open(recoveryBox).copyBytes()
        let epochKeyBytes = Array(devicePayload[0..<32])
        try same("recovery slot key", epochKeyBytes, recoveryPayload[0..<32])
        name(epochKeyBytes, "epoch key K (§3)")
        let epochKey = EpochKey(epoch: 1, key: try SymmetricKey(bytes: epochKeyBytes))
        let vaultID = s.header.vaultID
        try same("slot payload", epochKeyBytes + vaultID.bytes + le32(1), devicePayload)
        let commitment = BLAKE2b.mac(Array("quire-key-commitment-v2".utf8), key: epochKey.key, byteCount: 32)
        try same("key commitment", commitment, pub.keyCommit)
        var subkeys: [(String, Int, [UInt8])] = []
        for (label, which) in [
            ("record key", EpochKey.Subkey.record), ("commit key", .commit), ("keyring key", .keyring), ("attestation key", .attestation),
            ("link key", .link), ("nonce key", .commitNonce),
        ] {
            let k = try KeyDerivation.derive(from: epochKey.key, subkeyID: UInt64(which.rawValue), context: "quire v2").storage.copyBytes()
            try same(label, k, try epochKey.subkey(which).storage.copyBytes())
            subkeys.append((label, which.rawValue, k))
        }
        func sub(_ i: Int) throws -> SymmetricKey { try SymmetricKey(bytes: subkeys[i].2) }

        keysDoc.heading("## 3. The epoch key and the vault id")
        keysDoc.para(
            "The device creates the vault, so it signs the root keyring (epoch 1), and its key with the root's key commitment and the salt derives the vault id ([format.md §8.4](format.md#84-which-keyrings-to-trust) rule 4). The salt is sealed in the root keyring's content C (§5.2), so only someone who holds the epoch key can test a public key against the vault id (tenth review R10-8)."
        )
        keysDoc.value("epoch key K of epoch 1 (random)", epochKeyBytes)
        for (label, id, k) in subkeys { keysDoc.value("\(label) = KDF(K, \(id), \"quire v2\")", k) }
        keysDoc.value("key commitment = MAC256(K, \"quire-key-commitment-v2\")", commitment)
        keysDoc.value("key id = commitment[0..<6] (in every frame header below)", epochKey.id.bytes)

        // MARK: 4. File header
        var body = Doc()
        body.heading("## 4. The file header (offset 0)")
        let copy = Array(file[0..<32])
        try same("header check", Array(BLAKE2b.hash(Array(copy[0..<28]), byteCount: 16).prefix(4)), copy[28..<32])
        body.value("magic", Array(copy[0..<8]))
        body.value("version u16 = 2, flags u16 = 0", Array(copy[8..<12]))
        body.value("vault id", Array(copy[12..<28]))
        body.value("check = BLAKE2b-128(bytes 0..<28)[0..<4]", Array(copy[28..<32]))
        body.value("the 64-byte header: the 32-byte copy twice", Array(file[0..<64]))

        // MARK: 5. Commit 1
        body.heading("## 5. Commit 1: the root keyring and the profile")
        body.para(
            "Frames 0 to 3: the root keyring, the profile, the keyring's second copy, the commit frame ([format.md §8.1](format.md#81-layout), §9)."
        )
        body.heading("### 5.1 Key slots ([format.md §8.3](format.md#83-key-slots))")
        body.value("slot payload = K ‖ vault id ‖ u32(1), the same in every slot", devicePayload)
        for (label, box, recipient) in [("device", deviceBox, deviceX.publicKey), ("recovery", recoveryBox, recoveryX.publicKey)] {
            let ephemeralPK = Array(box[0..<32])
            if let i = random.draws.indices.first(where: {
                random.draws[$0].count == 32 && drawNames[$0].isEmpty && x25519PublicKey(seed: random.draws[$0]) == ephemeralPK
            }) {
                drawNames[i] = "\(label) slot: ephemeral X25519 seed (§5.1)"
                body.value("\(label) slot: ephemeral seed (random; `crypto_box_seed_keypair`)", random.draws[i])
            }
            body.value("\(label) slot: recipient X25519 public key", recipient)
            body.value(
                "\(label) slot: box = `crypto_box_seal` (ephemeral public key ‖ ciphertext ‖ tag, nonce = BLAKE2b-192(ephemeral pk ‖ recipient pk))",
                box)
        }

        body.heading("### 5.2 The root keyring ([format.md §8.1](format.md#81-layout))")
        let keyringKey = try sub(2)
        let ad = vaultID.bytes + record.publicBytes
        let padded = try XChaCha20Poly1305.open(record.sealed, key: keyringKey, nonce: record.nonce, authenticating: ad)
        name(record.nonce, "root keyring nonce (§5.2)")
        let innerCount = try padded.withUnsafeBytes { p -> Int in
            guard let n = Padding.payloadCount(in: p) else { throw Mismatch(description: "worked example: keyring padding") }
            return n
        }
        let inner = Array(padded[0..<innerCount])
        let fields = try inner.withUnsafeBytes { try CBORDecoder.byteStringFields($0) }
        let contentBytes = Array(inner[fields["content"]!])
        let signer = Array(inner[fields["signer"]!])
        let signature = Array(inner[fields["signature"]!])
        try same("keyring signer", deviceKeys.publicKey, signer)
        let message =
            Array("quire-keyring-v2".utf8) + vaultID.bytes + BLAKE2b.hash(record.publicBytes, byteCount: 32) + record.nonce
            + BLAKE2b.hash(contentBytes, byteCount: 32)
        try same("keyring signature", deviceKeys.sign(message), signature)
        try same(
            "pad(I)", inner + [0x80] + [UInt8](repeating: 0, count: Padding.paddedCount(forPayload: inner.count) - inner.count - 1), padded)
        try same("S", XChaCha20Poly1305.seal(padded, key: keyringKey, nonce: record.nonce, authenticating: ad), record.sealed)
        let keyringMap = record.encodedBody()
        try same("K", keyringMap, rootBody)
        let keyringID = BLAKE2b.hash(keyringMap, byteCount: 32)
        try same("keyring id", keyringID, root.trailer)
        let keyringContent = try contentBytes.withUnsafeBytes { try KeyringContent(decoding: $0, location: nil) }
        guard let salt = keyringContent.vaultSalt else { throw Mismatch(description: "worked example: the root has no vault salt") }
        name(salt, "vault salt (§3)")
        try same(
            "vault id", BLAKE2b.hash(Array("quire-vault-id-v2".utf8) + deviceKeys.publicKey + commitment + salt, byteCount: 16),
            vaultID.bytes)
        keysDoc.value("vault salt (random; sealed in the root keyring's content C, §5.2)", salt)
        keysDoc.value("vault id = BLAKE2b-128(\"quire-vault-id-v2\" ‖ device public key ‖ key commitment ‖ salt)", vaultID.bytes)
        let blobKey = keyringContent.blobKey.storage.copyBytes()
        name(blobKey, "blob key (§5.2)")
        body.value("P, the public part (CBOR)", record.publicBytes)
        body.value(
            "C, the content (CBOR: members — the recovery key and the phone —, blobKey, created, reason \"create\", vaultSalt)",
            contentBytes)
        body.value("blob key (random; inside C)", blobKey)
        body.value("signed message = \"quire-keyring-v2\" ‖ vault id ‖ H256(P) ‖ nonce ‖ H256(C)", message)
        body.value("signature (Ed25519, by the device)", signature)
        body.value("I = {content, signature, signer} (CBOR)", inner)
        body.value("pad(I): I ‖ 80 ‖ 00… to Padmé(|I| + 1)", padded)
        body.value("nonce (random)", record.nonce)
        body.value("associated data = vault id ‖ P", ad)
        body.value("S = XChaCha20-Poly1305(keyring key, nonce, pad(I), ad): ciphertext ‖ tag", record.sealed)
        body.value("K = {nonce, public, sealed} (CBOR)", keyringMap)
        body.value("keyring id = H256(K), the body hash", keyringID)

        // Frame headers and records.
        func header(_ i: Int, _ what: String, _ doc: inout Doc) throws {
            let f = s.frames[i]
            let h = Array(file[Int(f.location.offset)..<Int(f.location.offset) + 16])
            try same("check of frame \(i)", Array(BLAKE2b.hash(Array(h[0..<12]), byteCount: 16).prefix(4)), h[12..<16])
            doc.value(
                "frame \(i) (\(what)) at offset \(f.location.offset): header = kind ‖ flags ‖ key id ‖ u32(length \(f.header.bodyLength)) ‖ check, check = BLAKE2b-128(header[0..<12])[0..<4]",
                h)
        }
        try header(0, "keyring, first copy", &body)
        try header(2, "keyring, second copy: the same 16 + \(root.header.bodyLength) bytes", &body)

        func sealedRecord(_ i: Int, _ what: String, section: String, payload: [UInt8], _ doc: inout Doc) throws {
            let f = s.frames[i]
            let frame = Array(file[Int(f.location.offset)..<Int(f.end)])
            let nonce = Array(frame[16..<40])
            name(nonce, "\(what) nonce (§\(section))")
            let sealedEnd = frame.count - 32
            let ad = vaultID.bytes + Array(frame[0..<12])
            let plain = try XChaCha20Poly1305.open(Array(frame[40..<sealedEnd]), key: try sub(0), nonce: nonce, authenticating: ad)
            let compressed = frame[1] & 0x02 != 0
            var stored = compressed ? Compression.compress(payload) : payload
            try same("\(what) stored payload", stored, plain[0..<stored.count])
            Padding.pad(&stored)
            try same("\(what) padded plaintext", stored, plain)
            try same("\(what) body hash", BLAKE2b.hash(commitment + Array(frame[16..<sealedEnd]), byteCount: 32), frame[sealedEnd...])
            doc.value("payload (CBOR)", payload)
            let zstd = Compression.compress(payload)
            let smaller = zstd.count < payload.count
            let why = smaller ? "smaller" : "not smaller, but an entry revision or a profile is always stored compressed (§6.1)"
            let outcome =
                compressed
                ? why + ": the compressed flag is set (flags 03) and the zstd frame is what is padded. Another zstd version or level"
                    + " may give other bytes, which every reader accepts alike; to compare bytes with this file, use these"
                : "not smaller: the payload is stored as it is (flags 01)"
            let level = Compression.level(forByteCount: payload.count)
            doc.line("- compression: zstd (level \(level), with its content size) gives \(zstd.count) bytes, \(outcome)")
            if compressed { doc.value("zstd frame (declares the payload's size)", zstd) }
            doc.value("plaintext after padding: \(compressed ? "zstd frame" : "payload") ‖ 80 ‖ 00… to Padmé(n + 1)", plain)
            try header(i, what, &doc)
            doc.value("nonce (random)", nonce)
            doc.value("associated data = vault id ‖ header[0..<12]", ad)
            doc.value("ciphertext ‖ tag = XChaCha20-Poly1305(record key, nonce, plaintext, ad)", Array(frame[40..<sealedEnd]))
            doc.value("body hash = H256(key commitment ‖ nonce ‖ ciphertext ‖ tag)", Array(frame[sealedEnd...]))
        }

        body.heading("### 5.3 The profile ([records.md §5](records.md))")
        let profile = Profile(name: "Worked example", clock: HybridLogicalClock(rawValue: 0).tick(now: UInt64(now)), device: device.id)
        try sealedRecord(1, "profile", section: "5.3", payload: profile.encoded(), &body)

        // Commits.
        func commitSection(_ g: Int, previous: [UInt8], _ doc: inout Doc) throws -> [UInt8] {
            let group = s.groups[g]
            var summaries: [UInt8] = []
            for i in group.members {
                let f = s.frames[i]
                let frame = Array(file[Int(f.location.offset)..<Int(f.end)])
                let trailer = f.header.kind == .blobChunk ? Array(frame.suffix(16)) : Array(frame.suffix(32))
                let summary = Array(frame[0..<16]) + trailer
                summaries += summary
                doc.value("summary of frame \(i) = header ‖ \(f.header.kind == .blobChunk ? "tag" : "body hash")", summary)
            }
            let groupDigest = BLAKE2b.hash(summaries, byteCount: 32)
            try same("D\(g + 1)", groupDigest, group.digest)
            let cf = s.frames[group.commitFrame]
            let frame = Array(file[Int(cf.location.offset)..<Int(cf.end)])
            let fields = Array(frame[0..<12])
            let signed = Array("quire-commit-v2".utf8) + vaultID.bytes + commitment + previous + groupDigest
            let attestationPlain = deviceKeys.publicKey + deviceKeys.sign(signed)
            let attestationKey = try sub(3)
            let cad = vaultID.bytes + fields + previous + groupDigest
            var nh = BLAKE2b.Hasher(byteCount: 24, key: try sub(5))
            nh.update(Array("quire-commit-nonce-v3".utf8))
            nh.update(cad)
            nh.update(attestationPlain)
            let nonce = nh.finalize()
            try same("commit nonce \(g + 1)", nonce, frame[80..<104])
            let sealed = XChaCha20Poly1305.seal(attestationPlain, key: attestationKey, nonce: nonce, authenticating: cad)
            try same("sealed attestation \(g + 1)", sealed, frame[104...])
            let headInput = Array("quire-chain-v3".utf8) + vaultID.bytes + previous + groupDigest + fields + nonce + sealed
            let h = BLAKE2b.mac(headInput, key: try sub(1), byteCount: 32)
            try same("h\(g + 1)", h, frame[16..<48])
            try same("stored h\(g)", previous, frame[48..<80])
            doc.value("D\(g + 1) = H256(summaries)", groupDigest)
            try header(group.commitFrame, "commit: kind 02, flags 00, key id, length 200", &doc)
            doc.value("signed message = \"quire-commit-v2\" ‖ vault id ‖ key commitment ‖ h\(g) ‖ D\(g + 1)", signed)
            doc.value("A = signer (the device's public key) ‖ Ed25519 signature", attestationPlain)
            doc.value("associated data = vault id ‖ commit header[0..<12] ‖ h\(g) ‖ D\(g + 1)", cad)
            doc.value("synthetic nonce = BLAKE2b-192(key = nonce key, \"quire-commit-nonce-v3\" ‖ associated data ‖ A)", nonce)
            doc.value("sealed attestation = XChaCha20-Poly1305(attestation key, nonce, A, ad)", sealed)
            doc.value(
                "h\(g + 1) input = \"quire-chain-v3\" ‖ vault id ‖ h\(g) ‖ D\(g + 1) ‖ commit header[0..<12] ‖ nonce ‖ sealed attestation",
                headInput)
            doc.value("h\(g + 1) = MAC256(commit key, that)", h)
            doc.value("commit body = h\(g + 1) ‖ h\(g) ‖ nonce ‖ sealed attestation", Array(frame[16...]))
            return h
        }
        body.heading("### 5.4 The commit frame ([format.md §9.2](format.md#92-the-chain))")
        body.para("h0 is 32 zero bytes. The commit covers frames 0, 1 and 2; the device attests it.")
        let h1 = try commitSection(0, previous: CommitChain.genesisHead, &body)

        // MARK: 6. Commit 2
        body.heading("## 6. Commit 2: the attachment and the entry")
        body.para(
            "Frames 4 to 8: chunk 0, chunk 1, the manifest and the entry revision, then the commit frame (a writer stores an attachment's chunks, then its manifest, before the revision that names it)."
        )
        let m = stored!
        guard case .stored(let manifest) = m else { throw Mismatch(description: "worked example: attachment deduplicated") }
        let contentLength = UInt64(attachmentSize)
        let streamLength = Int(Padding.streamByteCount(contentByteCount: contentLength))
        let stream = content + [0x80] + [UInt8](repeating: 0, count: streamLength - attachmentSize - 1)
        // The blob id from the primitives (format.md §7.3): a leaf per 64 KiB
        // of content, then the root over the leaves, the size and the count.
        let bk = try SymmetricKey(bytes: blobKey)
        func le64(_ v: Int) -> [UInt8] { (0..<8).map { UInt8(truncatingIfNeeded: UInt64(v) >> (8 * $0)) } }
        let leaves = stride(from: 0, to: attachmentSize, by: 65_536).enumerated().map { (i, start) in
            BLAKE2b.mac(
                Array("quire-blob-leaf".utf8) + le64(i) + Array(content[start..<min(start + 65_536, attachmentSize)]), key: bk,
                byteCount: 32)
        }
        let blobID = BLAKE2b.mac(
            Array("quire-blob-root".utf8) + leaves.flatMap { $0 } + le64(attachmentSize) + le64(leaves.count), key: bk, byteCount: 32)
        try same("blob id", blobID, manifest.blob.bytes)
        name(manifest.stream.bytes, "stream id (§6.1)")
        body.heading("### 6.1 The attachment's stream and chunks ([format.md §7](format.md#7-attachments))")
        body.line("- content: N = \(contentLength) bytes, byte `i` = `i mod 256`")
        body.line(
            "- stream S = content ‖ 80 ‖ 00 × \(streamLength - attachmentSize - 1): |S| = Padmé(N + 1) = \(streamLength) bytes, ⌈\(streamLength) / 65,536⌉ = 2 chunks (65,536 and \(streamLength - 65_536) bytes)"
        )
        body.value(
            "S[\(attachmentSize - 16)..<\(attachmentSize + 48)] (the end of the content, the marker, the first zeros)",
            Array(stream[(attachmentSize - 16)..<(attachmentSize + 48)]))
        for (i, leaf) in leaves.enumerated() {
            let end = min((i + 1) * 65_536, attachmentSize)
            body.value("leaf_\(i) = MAC256(blob key, \"quire-blob-leaf\" ‖ u64(\(i)) ‖ content[\(i * 65_536)..<\(end)])", leaf)
        }
        body.value(
            "blob id = MAC256(blob key, \"quire-blob-root\" ‖ \((0..<leaves.count).map { "leaf_\($0)" }.joined(separator: " ‖ ")) ‖ u64(\(attachmentSize)) ‖ u64(\(leaves.count)))",
            blobID)
        body.value("stream id (random)", manifest.stream.bytes)
        for (n, i) in [(0, 4), (1, 5)] {
            let f = s.frames[i]
            let frame = Array(file[Int(f.location.offset)..<Int(f.end)])
            let chunkHeader = Array(frame[40..<61])
            let nonce = Array(frame[16..<40])
            name(nonce, "chunk \(n) nonce (§6.1)")
            let plain = Array(stream[(n * 65_536)..<min((n + 1) * 65_536, streamLength)])
            try same("chunk \(n) header", manifest.stream.bytes + le32(UInt32(n)) + [n == 1 ? 1 : 0], chunkHeader)
            let cad = vaultID.bytes + Array(frame[0..<12]) + chunkHeader
            let sealed = XChaCha20Poly1305.seal(plain, key: try sub(0), nonce: nonce, authenticating: cad)
            try same("chunk \(n) ciphertext", sealed, frame[61...])
            body.line(
                "- chunk \(n): S[\(n * 65_536)..<\(n * 65_536 + plain.count)], \(plain.count) bytes, body = nonce ‖ chunk header ‖ ciphertext ‖ tag = \(frame.count - 16) bytes"
            )
            try header(i, "chunk \(n)", &body)
            body.value("chunk \(n): nonce (random)", nonce)
            body.value("chunk \(n): chunk header = stream id ‖ u32(index) ‖ final", chunkHeader)
            body.value("chunk \(n): associated data = vault id ‖ header[0..<12] ‖ chunk header", cad)
            body.digest(
                "chunk \(n): ciphertext", Array(sealed.dropLast(16)),
                where: "file bytes \(Int(f.location.offset) + 61)..<\(Int(f.end) - 16)")
            body.value("chunk \(n): tag (its summary in the chain)", Array(sealed.suffix(16)))
        }
        body.heading("### 6.2 The manifest ([records.md §4](records.md))")
        try sealedRecord(6, "manifest", section: "6.2", payload: manifest.encoded(), &body)
        body.heading("### 6.3 The entry revision ([records.md §3](records.md))")
        try sealedRecord(7, "entry", section: "6.3", payload: revision!.encoded(), &body)
        body.heading("### 6.4 The commit frame")
        body.para("The commit covers frames 4 to 7, chained to h1; the device attests it.")
        _ = try commitSection(1, previous: h1, &body)

        // MARK: 7. The whole file
        body.heading("## 7. The whole file")
        body.line("- \(file.count) bytes, BLAKE2b-256 `\(hex(BLAKE2b.hash(file, byteCount: 32)))`")
        body.line("- frames: " + s.frames.map { "\($0.location.index) \($0.header.kind) @ \($0.location.offset)" }.joined(separator: ", "))
        body.line()
        body.line("```")
        for i in stride(from: 0, to: file.count, by: 32) {
            body.line(
                String(repeating: "0", count: max(0, 6 - String(i, radix: 16).count)) + String(i, radix: 16) + "  "
                    + hex(file[i..<min(i + 32, file.count)]))
        }
        body.line("```")

        // MARK: 1.1 The random draws, now named.
        var draws = Doc()
        draws.heading("### 1.1 The random bytes the writer drew, in order")
        draws.para(
            "A writer checked against this file uses these bytes where it would draw random ones (`Vault.create` drew the first \(drawsAfterCreate), the commit of §6 the rest). The draw left unnamed is the writer's temporary file name, which is not in the vault."
        )
        draws.line("| # | bytes | used as | value |")
        draws.line("|---|---|---|---|")
        for (i, draw) in random.draws.enumerated() {
            draws.line("| \(i) | \(draw.count) | \(drawNames[i].isEmpty ? "—" : drawNames[i]) | `\(hex(draw))` |")
        }
        guard drawNames.filter(\.isEmpty).count == 1 else {
            throw Mismatch(
                description:
                    "worked example: random draws not accounted for: \(drawNames.enumerated().filter { $0.element.isEmpty }.map(\.offset))")
        }
        return d.text + draws.text + keysDoc.text + body.text
    }
}
