import Foundation
import QuireCrypto
import QuireVectors
import QuireFormat
import QuireKeys
import QuireSystem

/// What one item of a commit is.
enum Item {
    /// An entry revision (sealed, compressed when smaller).
    case entry(EntryRevision)
    /// A profile.
    case profile(Profile)
    /// An attachment's content.
    case blob([UInt8], mediaType: String)
    /// A sealed record with an arbitrary payload.
    case sealed(RecordKind, [UInt8], compress: Bool)
    /// A plaintext record (keyring or unknown kind).
    case plaintext(RecordKind, epoch: UInt16, [UInt8])
    /// A frame exactly as given; `release` is what a reader should release.
    case raw([UInt8], release: (UInt8, [UInt8])?)
    /// A keyring, written twice as writers must (the copy ends the commit).
    case keyring(epoch: UInt16, [UInt8])
}

/// Builds a vault for a vector with a seeded random stream, keeping the
/// independent oracle: every payload a correct reader must release, in
/// file order, and every attachment it must read back.
final class VectorBuilder {
    let name: String
    let random: SeededRandom
    let recovery: RecoveryKey
    let signer: Ed25519.KeyPair
    let vaultID: VaultID
    let blobKey: SymmetricKey
    private(set) var keys: KeySet
    private(set) var trusted: [Int: UInt16] = [:]
    let path: String
    private(set) var vault: VaultFile!
    /// Payloads a correct reader releases (kind, payload), file order.
    var released: [(frame: Int, kind: UInt8, payload: [UInt8])] = []
    /// Attachments a correct reader reads back (manifest frame, id, content).
    var blobs: [(frame: Int, id: [UInt8], content: [UInt8])] = []
    /// Ids of keyrings written, by epoch.
    var keyringIDs: [UInt16: KeyringID] = [:]
    var now: Int64 = 1_767_225_600_000  // 2026-01-01T00:00:00Z
    var clock = HybridLogicalClock(milliseconds: 1_767_225_600_000, counter: 0)
    let device: DeviceID

    static let directory: String = {
        let dir = NSTemporaryDirectory() + "quire-vectors-\(FileSystem.processID)"
        try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return dir
    }()

    /// A vault with a first keyring (epoch 1, a recovery slot plus
    /// `extraSlots`) and a profile, in one commit.
    init(
        _ name: String, escrowFree: Bool = false, extraSlots: (EpochKey, VaultID, SeededRandom) throws -> [KeySlot] = { _, _, _ in [] },
        escrow: [EscrowRecipient] = [], profile: Bool = true, deviceSeed: [UInt8]? = nil, moreDeviceSeeds: [[UInt8]] = []
    ) throws {
        self.name = name
        random = SeededRandom(label: "quire vector " + name)
        recovery = RecoveryKey(secret: try SymmetricKey(bytes: random.bytes(32)))
        signer = try recovery.signingKeyPair()
        device = DeviceID(publicKey: signer.publicKey)
        let vaultSalt = random.bytes(16)
        vaultID = rootVaultID(signer: signer.publicKey, salt: vaultSalt)
        let epoch1 = EpochKey(epoch: 1, key: try SymmetricKey(bytes: random.bytes(32)))
        blobKey = try SymmetricKey(bytes: random.bytes(32))
        keys = KeySet(single: epoch1, blobKey: blobKey)
        path = Self.directory + "/" + name.replacingOccurrences(of: "/", with: "_") + ".quire"
        try? FileManager.default.removeItem(atPath: path)
        var slots = [try SlotCrypto.recoverySlot(for: epoch1, recovery: recovery, vaultID: vaultID, random: random)]
            + (try extraSlots(epoch1, vaultID, random))
        var members = [KeyringMember(role: "recovery", publicKey: signer.publicKey, name: "Recovery key", added: now)]
        for (n, deviceSeed) in ((deviceSeed.map { [$0] } ?? []) + moreDeviceSeeds).enumerated() {
            var seed = deviceSeed
            let device = try Ed25519.KeyPair(seed: SecureBytes(consuming: &seed))
            members.append(KeyringMember(role: "device", publicKey: device.publicKey, name: n == 0 ? "Sam's phone" : "Sam's laptop \(n)", added: now))
            slots.append(try SlotCrypto.deviceSlot(for: epoch1, devicePublicKey: device.publicKey, vaultID: vaultID, random: random))
        }
        let content = KeyringContent(
            members: members,
            escrow: escrow, blobKey: blobKey, created: now, reason: "create")
        let body = KeyringBuilder.body(
            epochKey: epoch1, vaultID: vaultID, parents: [], isEscrowFree: escrowFree, slots: slots, content: content,
            signer: signer, random: random, vaultSalt: vaultSalt)
        keyringIDs[1] = KeyringBuilder.id(ofBody: body)
        let profileRecord = Profile(name: "Vector " + name, clock: clock, device: device)
        vault = try VaultFile.create(at: path, vaultID: vaultID, keys: keys, random: random, options: WriteOptions(synchronous: false)) {
            (tx: PendingCommit) throws(FormatError) in
            try tx.appendKeyring(epoch: 1, body: body)
            if profile { try tx.appendSealed(kind: .profile, payload: profileRecord.encoded()) }
        }
        trusted = [0: 1, vault.structure.groups[0].commitFrame - 1: 1]
        vault.verifyCommits(keys: keys, trustedKeyrings: trusted)
        if profile { released.append((1, RecordKind.profile.rawValue, profileRecord.encoded())) }
    }

    /// A new entry revision with deterministic ids and clock.
    func entry(_ text: String, tags: [String] = [], created: Int64? = nil, parents: [RevisionID] = [], entryID: EntryID? = nil, deleted: Bool = false) -> EntryRevision {
        clock = clock.tick(now: clock.milliseconds + 1000)
        let body = EntryBody(created: created ?? clock.asMilliseconds, timeZone: "Europe/London", text: text, tags: tags)
        return EntryRevision(
            entryID: entryID ?? EntryID(using: random), revisionID: RevisionID(using: random), parents: parents, clock: clock,
            device: device, isDeleted: deleted, body: deleted ? EntryBody() : body)
    }

    /// Appends one commit of `items`; returns the frame index of each item
    /// (for a blob: its manifest, or nil when deduplicated).
    @discardableResult
    func commit(_ items: [Item], expectReleased: Bool = true) throws -> [Int?] {
        var out: [Int?] = []
        var pendingRelease: [(Int, UInt8, [UInt8])] = []
        var pendingBlobs: [(Int, [UInt8], [UInt8])] = []
        let blobKnown = Set(blobs.map { $0.id })
        try vault.commit(random: random, options: WriteOptions(synchronous: false)) { (tx: PendingCommit) throws(FormatError) in
            for item in items {
                switch item {
                case .entry(let r):
                    let loc = try tx.appendSealed(kind: .entryRevision, payload: r.encoded())
                    pendingRelease.append((loc.index, RecordKind.entryRevision.rawValue, r.encoded()))
                    out.append(loc.index)
                case .profile(let p):
                    let loc = try tx.appendSealed(kind: .profile, payload: p.encoded())
                    pendingRelease.append((loc.index, RecordKind.profile.rawValue, p.encoded()))
                    out.append(loc.index)
                case let .blob(content, mediaType):
                    let stored = try tx.appendBlob(from: MemoryByteSource(content), mediaType: mediaType) { blobKnown.contains($0.bytes) }
                    if case .stored(let m) = stored {
                        let index = tx.frameCount - 1 + (self.vault.structure.frames.count)
                        pendingRelease.append((index, RecordKind.blobManifest.rawValue, m.encoded()))
                        pendingBlobs.append((index, m.blob.bytes, content))
                        out.append(index)
                    } else {
                        out.append(nil)
                    }
                case let .sealed(kind, payload, compress):
                    let loc = try tx.appendSealed(kind: kind, payload: payload, compress: compress)
                    if kind.isKnown && kind != .keyring { pendingRelease.append((loc.index, kind.rawValue, payload)) }
                    out.append(loc.index)
                case let .plaintext(kind, epoch, body):
                    let loc = try tx.appendPlaintext(kind: kind, epoch: epoch, body: body, trusted: kind == .keyring)
                    out.append(loc.index)
                case let .keyring(epoch, body):
                    out.append(try tx.appendKeyring(epoch: epoch, body: body).index)
                case let .raw(frame, release):
                    let loc = try tx.appendRaw(frame: frame)
                    if let release { pendingRelease.append((loc.index, release.0, release.1)) }
                    out.append(loc.index)
                }
            }
        }
        if expectReleased {
            released += pendingRelease.map { (frame: $0.0, kind: $0.1, payload: $0.2) }
            blobs += pendingBlobs.map { (frame: $0.0, id: $0.1, content: $0.2) }
        }
        return out
    }

    /// Starts epoch `epoch` with a keyring signed by the recovery key that
    /// carries every earlier key, and makes it the write key.
    @discardableResult
    func rotate(to epoch: UInt16, reason: String = "rotate", signer override: Ed25519.KeyPair? = nil, parents: [KeyringID]? = nil, escrowFree: Bool = false, trust: Bool = true) throws -> Int {
        let newKey = EpochKey(epoch: epoch, key: try SymmetricKey(bytes: random.bytes(32)))
        var history: [HistoricKey] = []
        for (e, list) in keys.epochs where e < epoch { for k in list { history.append(HistoricKey(epoch: e, key: k.key)) } }
        history.sort { $0.epoch < $1.epoch }
        let content = KeyringContent(
            members: [KeyringMember(role: "recovery", publicKey: signer.publicKey, name: "Recovery key", added: now)],
            history: history, blobKey: blobKey, created: now, reason: reason)
        let body = KeyringBuilder.body(
            epochKey: newKey, vaultID: vaultID, parents: parents ?? [keyringIDs[epoch - 1] ?? keyringIDs[1]!], isEscrowFree: escrowFree,
            slots: [try SlotCrypto.recoverySlot(for: newKey, recovery: recovery, vaultID: vaultID, random: random)],
            content: content, signer: override ?? signer, random: random)
        let index = try commit([.keyring(epoch: epoch, body)])[0]!
        keyringIDs[epoch] = KeyringBuilder.id(ofBody: body)
        if trust {
            keys.add(newKey)
            keys.writeKey = newKey
            trusted[index] = epoch
            vault.verifyCommits(keys: keys, trustedKeyrings: trusted)
        }
        return index
    }

    /// A keyring body with every part given.
    func keyring(
        _ key: EpochKey, parents: [KeyringID], slots: [KeySlot], members: [KeyringMember], removed: [KeyringMember] = [],
        history: [HistoricKey] = [], signer override: Ed25519.KeyPair? = nil, reason: String = "rotate"
    ) -> [UInt8] {
        let content = KeyringContent(members: members, removed: removed, history: history, blobKey: blobKey, created: now, reason: reason)
        return KeyringBuilder.body(
            epochKey: key, vaultID: vaultID, parents: parents, isEscrowFree: false, slots: slots, content: content,
            signer: override ?? signer, random: random)
    }

    /// Trusts a keyring written with ``keyring(_:parents:slots:members:removed:history:signer:reason:)``
    /// and makes its key the write key.
    func adopt(_ key: EpochKey, frame index: Int, id: KeyringID) {
        keys.add(key)
        keys.writeKey = key
        trusted[index] = key.epoch
        keyringIDs[key.epoch] = id
        vault.verifyCommits(keys: keys, trustedKeyrings: trusted)
    }

    /// The key pair for a device seed.
    static func device(_ seed: [UInt8]) throws -> Ed25519.KeyPair {
        var s = seed
        return try Ed25519.KeyPair(seed: SecureBytes(consuming: &s))
    }

    /// Uses `key` for the next commits (for stale-epoch vectors).
    func writeWith(_ key: EpochKey) {
        keys.writeKey = key
        vault.verifyCommits(keys: keys, trustedKeyrings: trusted)
    }

    /// The current file bytes.
    func bytes() throws -> [UInt8] {
        Array(try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    /// Frame `index` as found in the file.
    func frame(_ index: Int) -> ScannedFrame { vault.structure.frames[index] }

    /// Forgets that frame `index` is released (a vector damages it).
    func lose(frame index: Int) {
        released.removeAll { $0.frame == index }
        blobs.removeAll { $0.frame == index }
    }

    /// Forgets the blob whose manifest is frame `index` (its manifest stays released).
    func loseBlob(manifest index: Int) { blobs.removeAll { $0.frame == index } }

    /// A vector from the current file (or `body`) and the oracle.
    func vector(_ expect: String, comment: String, body: [UInt8]? = nil, issues: [(String, UInt64)] = [], error: String? = nil, key: String? = nil, passphrase: String? = nil, deviceSeed: [UInt8]? = nil) throws -> (String, VectorFile) {
        var seen = Set<[UInt8]>()
        var attachments: [([UInt8], [UInt8])] = []
        for b in blobs where seen.insert(b.id).inserted { attachments.append((b.id, b.content)) }
        let isError = expect == "error"
        var v = VectorFile(
            expect: expect, error: error, recoveryKey: passphrase == nil && deviceSeed == nil ? (key ?? recovery.code()) : nil, passphrase: passphrase,
            deviceSeed: deviceSeed.map { hex($0) },
            records: isError ? nil : released.count,
            recordsHash: isError ? nil : VectorDigest.records(released.map { ($0.kind, $0.payload) }),
            attachments: isError ? nil : attachments.count,
            attachmentsHash: isError ? nil : VectorDigest.attachments(attachments),
            issues: issues.map { (code: $0.0, offset: $0.1) }.sorted { ($0.offset, $0.code) < ($1.offset, $1.code) },
            comment: comment, body: try body ?? bytes())
        // How many released records are unverified: taken from the reference
        // reader and cross-checked by the independent one (Conformance/).
        if !isError {
            v.unverified = Checker.outcome(of: v, scratch: path + ".check").unverified
        }
        try? FileManager.default.removeItem(atPath: path)
        return (name, v)
    }
}

extension HybridLogicalClock {
    var asMilliseconds: Int64 { Int64(milliseconds) }
}

/// Byte-level edits for damaged vectors.
enum Edit {
    static func flipBit(_ bytes: inout [UInt8], byte: Int, bit: Int) { bytes[byte] ^= UInt8(1 << bit) }

    /// Rewrites the 4-byte check of the frame header at `offset` so it verifies.
    static func fixCheck(_ bytes: inout [UInt8], frameAt offset: Int) {
        let check = BLAKE2b.hash(Array(bytes[offset..<offset + 8]), byteCount: 16)
        for i in 0..<4 { bytes[offset + 8 + i] = check[i] }
    }

    /// Rewrites the check of a header copy (0 or 1) so it verifies.
    static func fixHeaderCheck(_ bytes: inout [UInt8], copy: Int) {
        let base = copy * 32
        let check = BLAKE2b.hash(Array(bytes[base..<base + 28]), byteCount: 16)
        for i in 0..<4 { bytes[base + 28 + i] = check[i] }
    }

    /// Flips a bit in the body of every copy of the keyring at frame `index`
    /// (writers store each keyring twice).
    static func damageKeyring(_ bytes: inout [UInt8], _ b: VectorBuilder, frame index: Int, at delta: Int = 40) {
        let trailer = b.frame(index).trailer
        for f in b.vault.structure.frames where f.header.kind == .keyring && f.trailer == trailer {
            flipBit(&bytes, byte: Int(f.location.offset) + delta, bit: 1)
        }
    }

    /// Sets the little-endian u32 at `offset`.
    static func setUInt32(_ bytes: inout [UInt8], at offset: Int, _ v: UInt32) {
        for i in 0..<4 { bytes[offset + i] = UInt8(truncatingIfNeeded: v >> (8 * UInt32(i))) }
    }

    /// A whole sealed frame with an arbitrary plaintext (for padding and
    /// compression vectors): header, nonce, AEAD(plaintext) with the standard
    /// associated data.
    static func sealedFrame(kind: RecordKind, flags: UInt8, key: EpochKey, vaultID: VaultID, plaintext: [UInt8], random: any RandomSource) -> [UInt8] {
        let bodyLength = 24 + plaintext.count + 16
        let header = FrameHeader(kind: kind, flags: flags, epoch: key.epoch, bodyLength: UInt32(bodyLength))
        let nonce = random.bytes(24)
        let ad = SealedFrame.associatedData(vaultID: vaultID, header: header, publicHeader: [])
        return header.encoded() + nonce + XChaCha20Poly1305.seal(plaintext, key: key.recordKey, nonce: nonce, authenticating: ad)
    }

    /// A whole chunk frame for `content` with the given chunk header fields,
    /// padded when final (or when `forcePad`).
    static func chunkFrame(stream: StreamID, index: UInt32, isFinal: Bool, content: [UInt8], key: EpochKey, vaultID: VaultID, random: any RandomSource) -> [UInt8] {
        let count = FrameHeader.byteCount + SealedFrame.chunkBodyLength(contentCount: content.count, isFinal: isFinal)
        var frame = [UInt8](repeating: 0, count: count)
        let start = 12 + 24 + 21
        for (i, b) in content.enumerated() { frame[start + i] = b }
        frame.withUnsafeMutableBytes { raw in
            SealedFrame.sealChunk(frame: raw, contentCount: content.count, chunk: ChunkHeader(stream: stream, index: index, isFinal: isFinal), key: key, vaultID: vaultID, random: random)
        }
        return frame
    }
}
