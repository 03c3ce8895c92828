import Foundation
@_spi(Crypto) import QuireCrypto
@_spi(Format) import QuireFormat
@_spi(Format) import QuireKeys
import QuireSystem
import QuireVectors

/// What one item of a commit is.
enum Item {
    /// An entry revision (sealed, compressed when smaller).
    case entry(EntryRevision)
    /// A profile.
    case profile(Profile)
    /// An attachment's content, stored under the write key's blob key.
    case blob([UInt8], mediaType: String, aliases: [BlobID] = [])
    /// A sealed record with an arbitrary payload.
    case sealed(RecordKind, [UInt8], compress: Bool)
    /// A plaintext frame (an unknown kind, or a keyring written once, that
    /// the writer does not trust) with its body hash; its key id is the write
    /// key's, or for a keyring the id of its keyCommit.
    case plaintext(RecordKind, [UInt8])
    /// A frame exactly as given; `release` is what a reader should release.
    case raw([UInt8], release: (UInt8, [UInt8])?)
    /// A keyring of `key`'s epoch, written twice as writers must (the second
    /// copy ends the commit).
    case keyring(EpochKey, [UInt8])
}

/// Builds a vault for a vector from format primitives with a seeded random
/// stream, keeping the independent oracle: every payload a correct reader
/// must release, in file order, and every attachment it must read back.
///
/// The vault's recovery key signs the root keyring and attests every commit
/// (unless a vector says otherwise), so a plain vector is `success` with no
/// unattested record.
final class VectorBuilder {
    let name: String
    let random: SeededRandom
    let recovery: RecoveryKey
    /// The recovery key's Ed25519 pair: the root's signer and every commit's attestor.
    let signer: Ed25519.KeyPair
    let vaultID: VaultID
    /// The root's vault salt, sealed in its content (`Spec/format.md §8.4` rule 4).
    let vaultSalt: [UInt8]
    let blobKey: SymmetricKey
    private(set) var keys: KeySet
    private(set) var trusted: [Int: UInt32] = [:]
    /// Ed25519 keys of the members of trusted keyrings.
    private(set) var attestors: Set<[UInt8]> = []
    /// Who attests the builder's commits (default: the recovery key).
    var attestation: CommitAttestation
    /// The epoch key of each keyring written, by id.
    private(set) var ringKeys: [KeyringID: EpochKey] = [:]
    /// Ids of keyrings written, by epoch (the last one of each epoch).
    var keyringIDs: [UInt32: KeyringID] = [:]
    /// The members the next keyring made by ``rotate(to:reason:signer:parents:escrowFree:trust:)`` lists.
    var members: [KeyringMember]
    /// Device key pairs by public key, for wrapping new epochs to them.
    let path: String
    private(set) var vault: VaultFile!
    /// Payloads a correct reader releases (kind, payload), file order.
    var released: [(frame: Int, kind: UInt8, payload: [UInt8])] = []
    /// Attachments a correct reader reads back (manifest frame, id, content).
    var blobs: [(frame: Int, id: [UInt8], content: [UInt8])] = []
    var now: Int64 = 1_767_225_600_000  // 2026-01-01T00:00:00Z
    var clock = HybridLogicalClock(milliseconds: 1_767_225_600_000, counter: 0)
    let device: DeviceID

    static let directory: String = {
        let dir = NSTemporaryDirectory() + "quire-vectors-\(FileSystem.processID)"
        try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return dir
    }()

    static let quiet = WriteOptions(synchronous: false)

    /// A vault with a root keyring (epoch `rootEpoch`, a recovery slot, a
    /// device slot per device seed, plus `extraSlots`) and a profile, in one
    /// commit attested by the recovery key.
    init(
        _ name: String, escrowFree: Bool = false, rootEpoch: UInt32 = 1, requiredSlotKinds: [String] = [],
        extraSlots: (EpochKey, VaultID, SeededRandom) throws -> [StoredSlot] = { _, _, _ in [] },
        escrow: [EscrowRecipient] = [], profile: Bool = true, deviceSeed: [UInt8]? = nil, moreDeviceSeeds: [[UInt8]] = [],
        unknownPublicFields: CBORMap = CBORMap()
    ) throws {
        self.name = name
        random = SeededRandom(label: "quire vector " + name)
        recovery = RecoveryKey(secret: try SymmetricKey(bytes: random.bytes(32)))
        signer = try recovery.signingKeyPair()
        attestation = .sign(signer)
        device = DeviceID(publicKey: signer.publicKey)
        vaultSalt = random.bytes(16)
        blobKey = try SymmetricKey(bytes: random.bytes(32))
        let epoch1 = EpochKey(epoch: rootEpoch, key: try SymmetricKey(bytes: random.bytes(32)), blobKey: blobKey)
        vaultID = rootVaultID(signer: signer.publicKey, keyCommit: epoch1.commitment, salt: vaultSalt)
        keys = KeySet(single: epoch1)
        path = Self.directory + "/" + name.replacingOccurrences(of: "/", with: "_") + ".quire"
        try? FileManager.default.removeItem(atPath: path)
        members = [KeyringMember(role: "recovery", publicKey: signer.publicKey, name: "Recovery key", added: now)]
        for (n, seed) in ((deviceSeed.map { [$0] } ?? []) + moreDeviceSeeds).enumerated() {
            let pair = try Self.device(seed)
            members.append(
                KeyringMember(role: "device", publicKey: pair.publicKey, name: n == 0 ? "Sam's phone" : "Sam's laptop \(n)", added: now))
        }
        var slots = try memberSlots(for: epoch1)
        slots += try extraSlots(epoch1, vaultID, random)
        let content = KeyringContent(members: members, escrow: escrow, blobKey: blobKey, created: now, reason: "create")
        let body = try KeyringBuilder.body(
            epochKey: epoch1, vaultID: vaultID, parents: [], isEscrowFree: escrowFree, requiredSlotKinds: requiredSlotKinds, slots: slots,
            vaultSalt: vaultSalt, unknownPublicFields: unknownPublicFields, content: content, signer: signer, random: random)
        let rootID = KeyringBuilder.id(ofBody: body)
        keyringIDs[rootEpoch] = rootID
        ringKeys[rootID] = epoch1
        let profileRecord = Profile(name: "Vector " + name, clock: clock, device: device)
        vault = try VaultFile.create(at: path, vaultID: vaultID, keys: keys, random: random, options: Self.quiet, attestWith: signer) {
            (tx: PendingCommit) throws(FormatError) in
            try tx.appendKeyring(keyID: epoch1.id, epoch: rootEpoch, body: body)
            if profile { try tx.appendSealed(kind: .profile, payload: profileRecord.encoded()) }
        }
        for m in members { attestors.insert(m.publicKey) }
        trustAll(id: rootID, epoch: rootEpoch)
        if profile { released.append((1, RecordKind.profile.rawValue, profileRecord.encoded())) }
    }

    /// The root keyring's id.
    var rootID: KeyringID { KeyringID(unchecked: frame(0).trailer) }

    /// One slot per member: recovery and devices.
    func memberSlots(for key: EpochKey, members list: [KeyringMember]? = nil) throws -> [StoredSlot] {
        var slots: [StoredSlot] = []
        for m in list ?? members {
            switch m.role {
            case "recovery":
                slots.append(
                    StoredSlot(
                        slot: try SlotCrypto.recoverySlot(for: key, recoveryPublicKey: m.publicKey, vaultID: vaultID, random: random)))
            case "device":
                slots.append(
                    StoredSlot(slot: try SlotCrypto.deviceSlot(for: key, devicePublicKey: m.publicKey, vaultID: vaultID, random: random)))
            default: break
            }
        }
        return slots
    }

    /// A whole file holding one root keyring: the file header, the
    /// keyring `body` twice (format.md §8.1) under `key`, and the genesis
    /// commit over both copies, attested by this builder's signer.
    func singleRootFile(key: EpochKey, body: [UInt8]) throws -> [UInt8] {
        let frame = Edit.plaintextFrame(kind: .keyring, keyID: key.id, body: body)
        let commit = try Edit.commitFrame(
            over: [frame, frame], previous: CommitChain.genesisHead, key: key, vaultID: vaultID,
            attestation: CommitChain.attestation(
                keyCommitment: key.commitment, previousHead: CommitChain.genesisHead, digest: Edit.digest(of: [frame, frame]),
                vaultID: vaultID, signer: signer))
        return FileHeader(vaultID: vaultID).encoded() + frame + frame + commit
    }

    /// A fresh epoch key for `epoch` (with the vault's blob key unless given).
    func freshKey(_ epoch: UInt32, blobKey override: SymmetricKey? = nil) throws -> EpochKey {
        EpochKey(epoch: epoch, key: try SymmetricKey(bytes: random.bytes(32)), blobKey: override ?? blobKey)
    }

    /// A parent reference for the keyring `id` this builder wrote.
    func parent(_ id: KeyringID) -> KeyringBuilder.Parent {
        KeyringBuilder.Parent(id: id, key: ringKeys[id]!)
    }

    /// A new entry revision with deterministic ids and clock.
    func entry(
        _ text: String, tags: [String] = [], created: Int64? = nil, parents: [RevisionID] = [], entryID: EntryID? = nil,
        deleted: Bool = false
    ) -> EntryRevision {
        clock = clock.tick(now: clock.milliseconds + 1000)
        let body = EntryBody(created: created ?? Int64(clock.milliseconds), timeZone: "Europe/London", text: text, tags: tags)
        return EntryRevision(
            entryID: entryID ?? EntryID(using: random), revisionID: RevisionID(using: random), parents: parents, clock: clock,
            device: device, isDeleted: deleted, body: deleted ? EntryBody() : body)
    }

    /// Appends one commit of `items` (attested as ``attestation`` says, or
    /// as `attest` overrides); returns the frame index of each item (for a
    /// blob: its manifest, or nil when deduplicated).
    ///
    /// `commitKey` is the key the commit frame is made under when it is not
    /// the write key: a commit holding a keyring that starts a new epoch is
    /// made under that keyring's key (`Spec/format.md §9.2`, R7-3).
    @discardableResult
    func commit(_ items: [Item], expectReleased: Bool = true, attest: CommitAttestation? = nil, commitKey: EpochKey? = nil) throws
        -> [Int?]
    {
        var out: [Int?] = []
        var pendingRelease: [(Int, UInt8, [UInt8])] = []
        var pendingBlobs: [(Int, [UInt8], [UInt8])] = []
        var keyringItems: [(Int, EpochKey)] = []
        let blobKnown = Set(blobs.map { $0.id })
        let base = vault.structure.frames.count
        try vault.commit(random: random, options: Self.quiet, attestation: attest ?? attestation) {
            (tx: PendingCommit) throws(FormatError) in
            tx.commitKey = commitKey
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
                case .blob(let content, let mediaType, let aliases):
                    let stored = try tx.appendBlob(from: MemoryByteSource(content), mediaType: mediaType, aliases: aliases) {
                        blobKnown.contains($0.bytes)
                    }
                    if case .stored(let m) = stored {
                        let index = tx.frameCount - 1 + base
                        pendingRelease.append((index, RecordKind.blobManifest.rawValue, m.encoded()))
                        pendingBlobs.append((index, m.blob.bytes, content))
                        out.append(index)
                    } else {
                        out.append(nil)
                    }
                case .sealed(let kind, let payload, let compress):
                    let loc = try tx.appendSealed(kind: kind, payload: payload, compress: compress)
                    if kind.isKnown && kind != .keyring { pendingRelease.append((loc.index, kind.rawValue, payload)) }
                    out.append(loc.index)
                case .plaintext(let kind, let body):
                    // A keyring frame carries its own key's id; other kinds the write key's.
                    var keyID = tx.key.id
                    if kind == .keyring, let record = try? KeyringRecord(body: body, location: nil) {
                        keyID = KeyID(commitment: record.publicPart.keyCommit)
                    }
                    let loc = try tx.appendPlaintext(kind: kind, keyID: keyID, epoch: 0, body: body, trusted: false)
                    out.append(loc.index)
                case .keyring(let key, let body):
                    let loc = try tx.appendKeyring(keyID: key.id, epoch: key.epoch, body: body)
                    keyringItems.append((loc.index, key))
                    out.append(loc.index)
                case .raw(let frame, let release):
                    let loc = try tx.appendRaw(frame: frame)
                    if let release { pendingRelease.append((loc.index, release.0, release.1)) }
                    out.append(loc.index)
                }
            }
        }
        for (index, key) in keyringItems {
            let id = KeyringID(unchecked: frame(index).trailer)
            ringKeys[id] = key
        }
        // The writer holds the key it made the commit under.
        if let commitKey { keys.add(commitKey) }
        if expectReleased {
            released += pendingRelease.map { (frame: $0.0, kind: $0.1, payload: $0.2) }
            blobs += pendingBlobs.map { (frame: $0.0, id: $0.1, content: $0.2) }
        }
        return out
    }

    /// The write key of heads with `keys` (`Spec/keys.md §5`): of the
    /// highest epoch, the smallest key commitment — the key a commit holding
    /// keyrings that start those epochs is made under (format.md §9.2).
    static func writeKey(of keys: [EpochKey]) -> EpochKey {
        keys.min { a, b in a.epoch != b.epoch ? a.epoch > b.epoch : a.commitment.lexicographicallyPrecedes(b.commitment) }!
    }

    /// Appends a keyring body as its own commit (both copies) and returns
    /// the first copy's frame index; `trust` makes its key the write key.
    @discardableResult
    func addKeyring(_ key: EpochKey, _ body: [UInt8], trust: Bool = true, members newMembers: [KeyringMember]? = nil) throws -> Int {
        // A trusted keyring that starts a new epoch is committed under its
        // own key, as a writer does (Spec/format.md §9.2, R7-3).
        let starts = trust && key.epoch > (keys.writeKey?.epoch ?? 0)
        let index = try commit([.keyring(key, body)], commitKey: starts ? key : nil)[0]!
        let id = KeyringBuilder.id(ofBody: body)
        ringKeys[id] = key
        if trust {
            keyringIDs[key.epoch] = id
            if let newMembers { members = newMembers }
            adopt(key, id: id)
        }
        return index
    }

    /// Starts epoch `epoch` with a keyring signed by the recovery key (or
    /// `override`) that wraps to ``members`` and names the newest keyring as
    /// its parent (or `parents`), and makes it the write key unless `trust`
    /// is false.
    @discardableResult
    func rotate(
        to epoch: UInt32, reason: String = "rotate", signer override: Ed25519.KeyPair? = nil, parents: [KeyringBuilder.Parent]? = nil,
        escrowFree: Bool = false, trust: Bool = true, blobKey newBlobKey: SymmetricKey? = nil, requiredSlotKinds: [String] = []
    ) throws -> Int {
        let key = try freshKey(epoch, blobKey: newBlobKey)
        let parentList = parents ?? [parent(keyringIDs[epoch - 1] ?? rootID)]
        let body = try keyring(
            key, parents: parentList, slots: memberSlots(for: key), members: members, signer: override, reason: reason,
            escrowFree: escrowFree, requiredSlotKinds: requiredSlotKinds)
        return try addKeyring(key, body, trust: trust)
    }

    /// A keyring body with every part given.
    func keyring(
        _ key: EpochKey, parents: [KeyringBuilder.Parent], slots: [StoredSlot], members: [KeyringMember], removed: [KeyringMember] = [],
        signer override: Ed25519.KeyPair? = nil, reason: String = "rotate", escrowFree: Bool = false, requiredSlotKinds: [String] = [],
        escrow: [EscrowRecipient] = [], unknownPublicFields: CBORMap = CBORMap(), answers: [KeyringID] = []
    ) throws -> [UInt8] {
        let content = KeyringContent(
            members: members, removed: removed, escrow: escrow, blobKey: key.blobKey ?? blobKey, created: now, reason: reason,
            answers: answers)
        return try KeyringBuilder.body(
            epochKey: key, vaultID: vaultID, parents: parents, isEscrowFree: escrowFree, requiredSlotKinds: requiredSlotKinds, slots: slots,
            unknownPublicFields: unknownPublicFields, content: content, signer: override ?? signer, random: random)
    }

    /// Trusts the keyring `id` of `key` (both its copies) and makes `key`
    /// the write key.
    func adopt(_ key: EpochKey, id: KeyringID) {
        keys.add(key)
        keys.writeKey = key
        ringKeys[id] = key
        for m in members { attestors.insert(m.publicKey) }
        trustAll(id: id, epoch: key.epoch)
    }

    /// Marks every frame of keyring `id` trusted and verifies again.
    func trustAll(id: KeyringID, epoch: UInt32) {
        for f in vault.structure.frames where f.header.kind == .keyring && f.trailer == id.bytes { trusted[f.location.index] = epoch }
        vault.verifyCommits(keys: keys, trustedKeyrings: trusted, attestors: attestors)
    }

    /// The key pair for a device seed.
    static func device(_ seed: [UInt8]) throws -> Ed25519.KeyPair {
        var s = seed
        return try Ed25519.KeyPair(seed: SecureBytes(consuming: &s))
    }

    /// Uses `key` for the next commits (for stale-epoch vectors).
    func writeWith(_ key: EpochKey) {
        keys.add(key)
        keys.writeKey = key
        vault.verifyCommits(keys: keys, trustedKeyrings: trusted, attestors: attestors)
    }

    /// Replaces the file with `bytes` (an attacker's edit) and opens it
    /// again, so that later commits are written as a writer finds the file.
    func replaceFile(with bytes: [UInt8]) throws {
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        vault = try VaultFile(path: path, writable: true)
        vault.verifyCommits(keys: keys, trustedKeyrings: trusted, attestors: attestors)
    }

    /// The current file bytes.
    func bytes() throws -> [UInt8] {
        Array(try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    /// Frame `index` as found in the file.
    func frame(_ index: Int) -> ScannedFrame { vault.structure.frames[index] }

    /// The offset of frame `index`.
    func offset(_ index: Int) -> UInt64 { frame(index).location.offset }

    /// The commit frame closing the group that holds frame `index`.
    func commitFrame(of index: Int) -> ScannedFrame {
        frame(vault.structure.groups[vault.structure.groupIndex(ofFrame: index)!].commitFrame)
    }

    /// The frame indices of the copies of the keyring at frame `index`.
    func copies(ofKeyring index: Int) -> [Int] {
        let trailer = frame(index).trailer
        return vault.structure.frames.filter { $0.header.kind == .keyring && $0.trailer == trailer }.map(\.location.index)
    }

    /// Forgets that frame `index` is released (a vector damages it).
    func lose(frame index: Int) {
        released.removeAll { $0.frame == index }
        blobs.removeAll { $0.frame == index }
    }

    /// Forgets every record from frame `index` on.
    func lose(from index: Int) {
        released.removeAll { $0.frame >= index }
        blobs.removeAll { $0.frame >= index }
    }

    /// Forgets the blob whose manifest is frame `index` (its manifest stays released).
    func loseBlob(manifest index: Int) { blobs.removeAll { $0.frame == index } }

    /// A vector from the current file (or `body`) and the oracle.
    func vector(
        _ expect: String, comment: String, body: [UInt8]? = nil, issues: [(String, UInt64)] = [], error: String? = nil, key: String? = nil,
        passphrase: String? = nil, deviceSeed: [UInt8]? = nil
    ) throws -> (String, VectorFile) {
        var seen = Set<[UInt8]>()
        var attachments: [([UInt8], [UInt8])] = []
        for b in blobs where seen.insert(b.id).inserted { attachments.append((b.id, b.content)) }
        let isError = expect == "error"
        var v = VectorFile(
            expect: expect, error: error, recoveryKey: passphrase == nil && deviceSeed == nil ? (key ?? recovery.code()) : nil,
            passphrase: passphrase,
            deviceSeed: deviceSeed.map { hex($0) },
            records: isError ? nil : released.count,
            recordsHash: isError ? nil : VectorDigest.records(released.map { ($0.kind, $0.payload) }),
            attachments: isError ? nil : attachments.count,
            attachmentsHash: isError ? nil : VectorDigest.attachments(attachments),
            issues: issues.map { (code: $0.0, offset: $0.1) }.sorted { ($0.offset, $0.code) < ($1.offset, $1.code) },
            comment: comment, body: try body ?? bytes())
        // How many released records are unverified or unattested: taken from
        // the reference reader and cross-checked by the independent one
        // (Conformance/).
        if !isError {
            let o = Checker.outcome(of: v, scratch: path + ".check")
            v.unverified = o.unverified
            v.unattested = o.unattested
        }
        try? FileManager.default.removeItem(atPath: path)
        return (name, v)
    }
}

/// Byte-level edits for damaged vectors.
enum Edit {
    static func flipBit(_ bytes: inout [UInt8], byte: Int, bit: Int) { bytes[byte] ^= UInt8(1 << bit) }

    /// Rewrites the 4-byte check of the frame header at `offset` so it verifies.
    static func fixCheck(_ bytes: inout [UInt8], frameAt offset: Int) {
        let check = BLAKE2b.hash(Array(bytes[offset..<offset + 12]), byteCount: 16)
        for i in 0..<4 { bytes[offset + 12 + i] = check[i] }
    }

    /// Rewrites the body hash (the last 32 bytes) of the frame at `offset`
    /// so it matches the rest of its body (a sealed frame's: with the
    /// commitment of the key that seals it, `Spec/format.md §4.2`).
    static func fixBodyHash(_ bytes: inout [UInt8], frameAt offset: Int, keyCommitment: [UInt8] = []) {
        let length = Int(loadUInt32LE(bytes, at: offset + 8))
        let body = offset + 16
        let hash = BLAKE2b.hash(keyCommitment + Array(bytes[body..<(body + length - 32)]), byteCount: 32)
        for i in 0..<32 { bytes[body + length - 32 + i] = hash[i] }
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
        for i in b.copies(ofKeyring: index) {
            flipBit(&bytes, byte: Int(b.offset(i)) + delta, bit: 1)
        }
    }

    /// Sets the little-endian u32 at `offset`.
    static func setUInt32(_ bytes: inout [UInt8], at offset: Int, _ v: UInt32) {
        for i in 0..<4 { bytes[offset + i] = UInt8(truncatingIfNeeded: v >> (8 * UInt32(i))) }
    }

    /// A little-endian u32 of `bytes` at `offset`.
    static func loadUInt32LE(_ bytes: [UInt8], at offset: Int) -> UInt32 {
        (0..<4).reduce(0) { $0 | UInt32(bytes[offset + $1]) << (8 * UInt32($1)) }
    }

    /// A whole frame of `kind` whose body is `body` followed by its body
    /// hash, under key id `keyID`.
    static func plaintextFrame(kind: RecordKind, flags: UInt8 = 0, keyID: KeyID, body: [UInt8]) -> [UInt8] {
        let header = FrameHeader(kind: kind, flags: flags, keyID: keyID, bodyLength: UInt32(body.count + 32))
        return header.encoded() + body + BLAKE2b.hash(body, byteCount: 32)
    }

    /// A whole sealed frame with an arbitrary plaintext (for padding and
    /// compression vectors): header, nonce, AEAD(plaintext) with the standard
    /// associated data, body hash.
    static func sealedFrame(kind: RecordKind, flags: UInt8, key: EpochKey, vaultID: VaultID, plaintext: [UInt8], random: any RandomSource)
        throws -> [UInt8]
    {
        let bodyLength = 24 + plaintext.count + 16 + 32
        let header = FrameHeader(kind: kind, flags: flags, keyID: key.id, bodyLength: UInt32(bodyLength))
        let nonce = random.bytes(24)
        let ad = SealedFrame.associatedData(vaultID: vaultID, header: header, publicHeader: [])
        let body = nonce + XChaCha20Poly1305.seal(plaintext, key: try key.subkey(.record), nonce: nonce, authenticating: ad)
        return header.encoded() + body + BLAKE2b.hash(key.commitment + body, byteCount: 32)
    }

    /// The padded stream of an attachment: `content ‖ 0x80 ‖ 0x00…` of
    /// `Padmé(N + 1)` bytes.
    static func stream(_ content: [UInt8]) -> [UInt8] {
        var s = content
        s.append(0x80)
        s += [UInt8](repeating: 0, count: Int(Padding.streamByteCount(contentByteCount: UInt64(content.count))) - s.count)
        return s
    }

    /// A whole chunk frame holding `plaintext` (a slice of a padded stream)
    /// with the given chunk header fields.
    static func chunkFrame(
        stream: StreamID, index: UInt32, isFinal: Bool, plaintext: [UInt8], key: EpochKey, vaultID: VaultID, random: any RandomSource
    ) throws -> [UInt8] {
        var frame = [UInt8](repeating: 0, count: FrameHeader.byteCount + SealedFrame.chunkBodyLength(plaintextCount: plaintext.count))
        try plaintext.withUnsafeBytes { p in
            try frame.withUnsafeMutableBytes { raw in
                try SealedFrame.sealChunk(
                    plaintext: p, into: raw, chunk: ChunkHeader(stream: stream, index: index, isFinal: isFinal), key: key, vaultID: vaultID,
                    random: random)
            }
        }
        return frame
    }

    /// A commit frame over `frames` (whole frames as bytes) chained to
    /// `previous`, made with `key` and attested as `attestation` (96 bytes).
    static func commitFrame(over frames: [[UInt8]], previous: [UInt8], key: EpochKey, vaultID: VaultID, attestation: [UInt8]) throws
        -> [UInt8]
    {
        var digest = CommitChain.Digest()
        for f in frames {
            let h = FrameHeader.byteCount
            let kind = RecordKind(rawValue: f[0])
            let trailer = kind == .blobChunk ? Array(f.suffix(16)) : Array(f.suffix(32))
            digest.add(header: Array(f[0..<h]), trailer: trailer)
        }
        let d = digest.finalize()
        let header = CommitChain.commitHeader(keyID: key.id)
        return header.encoded()
            + (try CommitChain.body(
                previousHead: previous, digest: d, attestation: attestation, key: key, vaultID: vaultID, commitHeader: header))
    }

    /// The group digest `D` of whole frames.
    static func digest(of frames: [[UInt8]]) -> [UInt8] {
        var digest = CommitChain.Digest()
        for f in frames {
            let kind = RecordKind(rawValue: f[0])
            digest.add(header: Array(f[0..<16]), trailer: kind == .blobChunk ? Array(f.suffix(16)) : Array(f.suffix(32)))
        }
        return digest.finalize()
    }
}
