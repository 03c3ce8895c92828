@_spi(Crypto) public import QuireCrypto

/// One key slot: the epoch key wrapped for one way of opening the vault
/// (`Spec/format.md §8.3`).
@_spi(Format) public enum KeySlot: Sendable, Equatable {
    /// Sealed box (X25519) to an enrolled device's key: 100 bytes sealing
    /// `epoch key (32) ‖ vault id (16) ‖ epoch (u32 LE)`.
    case device(box: [UInt8])
    /// Sealed box to the recovery key's X25519 key (converted from its
    /// Ed25519 signing key), laid out like a device slot.
    case recovery(box: [UInt8])
    /// Sealed box to the X25519 key pair whose seed is
    /// `Argon2id(passphrase, salt, opsLimit, memLimit)`; `publicKey` is that
    /// pair's public key, so any member can wrap a new epoch to the same
    /// passphrase without knowing it.
    case passphrase(salt: [UInt8], opsLimit: UInt64, memLimitBytes: UInt64, publicKey: [UInt8], box: [UInt8])
    /// Sealed box to an escrow public key (a custodian who can recover the journal).
    case escrow(box: [UInt8])
    /// A slot kind this version does not know; kept and skipped.
    case unknown(kind: String, fields: CBORMap)

    /// Length of a slot's sealed box, in bytes: a 48-byte sealed-box
    /// overhead around `epoch key (32) ‖ vault id (16) ‖ epoch (4)`.
    public static let boxByteCount = 32 + 16 + 4 + 48

    /// The slot kind as written: `"device"`, `"recovery"`, `"passphrase"`, `"escrow"`.
    public var kind: String {
        switch self {
        case .device: "device"
        case .recovery: "recovery"
        case .passphrase: "passphrase"
        case .escrow: "escrow"
        case .unknown(let k, _): k
        }
    }

    /// True for a slot of a kind this version does not know.
    public var isUnknown: Bool { if case .unknown = self { true } else { false } }

    /// The `member` of a slot of a kind this version does not know: the
    /// 32-byte tag of the member it wraps to, keyed by the epoch key
    /// (``EpochKey/slotMemberTag(vaultID:memberKey:kind:)``, `Spec/records.md §6.2`);
    /// nil for a known kind, or when absent or not 32 bytes.
    public var memberKey: [UInt8]? {
        guard case .unknown(_, let fields) = self, case .bytes(let b)? = fields[text: "member"], b.count == 32 else { return nil }
        return b
    }

    /// The sealed box of a known slot kind; nil for an unknown kind.
    public var box: [UInt8]? {
        switch self {
        case .device(let b), .recovery(let b), .escrow(let b), .passphrase(_, _, _, _, let b): b
        case .unknown: nil
        }
    }

    /// The fields of a slot map other than those its kind defines.
    static func unknownFields(of value: CBOR) -> CBORMap {
        guard case .map(let m) = value, case .text(let kind)? = m[text: "kind"] else { return CBORMap() }
        let known: Set<String> =
            switch kind {
            case "device", "escrow", "recovery": ["kind", "box"]
            case "passphrase": ["kind", "salt", "opsLimit", "memLimit", "publicKey", "box"]
            default: Set(m.entries.compactMap { if case .text(let k) = $0.key { k } else { nil } })
            }
        return CBORMap(
            m.entries.filter { e in if case .text(let k) = e.key { !known.contains(k) } else { true } }.map { ($0.key, $0.value) })
    }

    init(_ value: CBOR, location: FrameLocation?) throws(FormatError) {
        var r = try FieldReader(value, context: "key slot", location: location)
        guard let kind = try r.text("kind") else { throw .malformedRecord(location, reason: "key slot has no \"kind\"") }
        switch kind {
        case "device", "escrow", "recovery":
            guard let box = try r.bytes("box", count: Self.boxByteCount) else {
                throw .malformedRecord(location, reason: "\(kind) slot needs a \(Self.boxByteCount)-byte \"box\"")
            }
            self = kind == "device" ? .device(box: box) : kind == "escrow" ? .escrow(box: box) : .recovery(box: box)
        case "passphrase":
            guard let salt = try r.bytes("salt", count: 16), let ops = try r.unsigned("opsLimit"),
                let mem = try r.unsigned("memLimit"), let publicKey = try r.bytes("publicKey", count: 32),
                let box = try r.bytes("box", count: Self.boxByteCount)
            else {
                throw .malformedRecord(location, reason: "passphrase slot needs salt, opsLimit, memLimit, publicKey and box")
            }
            self = .passphrase(salt: salt, opsLimit: ops, memLimitBytes: mem, publicKey: publicKey, box: box)
        default:
            guard case .map(let m) = value else { throw .malformedRecord(location, reason: "key slot must be a map") }
            self = .unknown(kind: kind, fields: m)
        }
    }

    func value(unknown: CBORMap) -> CBOR {
        var w = FieldWriter(unknown: unknown)
        switch self {
        case .device(let box), .escrow(let box), .recovery(let box):
            w.text("kind", kind)
            w.bytes("box", box)
        case .passphrase(let salt, let ops, let mem, let publicKey, let box):
            w.text("kind", kind)
            w.bytes("salt", salt)
            w.unsigned("opsLimit", ops)
            w.unsigned("memLimit", mem)
            w.bytes("publicKey", publicKey)
            w.bytes("box", box)
        case .unknown(_, let fields):
            return .map(fields)
        }
        return w.value
    }
}

/// A key slot as stored, with the fields its kind does not define
/// (`Spec/records.md §1.2`: kept and written back).
@_spi(Format) public struct StoredSlot: Sendable, Equatable {
    /// The slot.
    public var slot: KeySlot
    /// Fields of the slot map that its kind does not define.
    public var unknownFields: CBORMap

    /// A slot and its extra fields.
    public init(slot: KeySlot, unknownFields: CBORMap = CBORMap()) {
        self.slot = slot
        self.unknownFields = unknownFields
    }
}
/// The public part of a keyring, readable without a key (`Spec/format.md §8.2`).
@_spi(Format) public struct KeyringPublic: Sendable, Equatable {
    /// The epoch this keyring defines (1 … 2³² − 1).
    public var epoch: UInt32
    /// The commitment of its epoch key (`Spec/format.md §5.1`).
    public var keyCommit: [UInt8]
    /// Ids of the keyrings this one follows; empty only for a root.
    public var parents: [KeyringID]
    /// One link per parent: the signer's key and signature, sealed under the
    /// parent epoch's link key, so that a holder of that key can tell a
    /// member made this keyring without opening it (`Spec/format.md §8.6`).
    public var links: [[UInt8]]
    /// Escrow-free mode: no escrow slot, and no slot of a kind a reader cannot
    /// check, may exist in it.
    public var isEscrowFree: Bool
    /// Slot kinds every later keyring must carry (`Spec/format.md §8.2`).
    public var requiredSlotKinds: [String]
    /// Extension names a writer must understand to sign any keyring of the
    /// vault, carried by every later keyring (`Spec/format.md §8.2`,
    /// `critical`); this version understands none.
    public var criticalExtensions: [String]
    /// The key slots.
    public var slots: [KeySlot] {
        didSet { if slotUnknownFields.count != slots.count { slotUnknownFields = slots.map { _ in CBORMap() } } }
    }
    /// Fields of each slot map that its kind does not define, kept and
    /// written back (`Spec/records.md §1.2`).
    var slotUnknownFields: [CBORMap]
    /// Fields this version does not know.
    public var unknownFields: CBORMap

    /// A public part with the given fields.
    public init(
        epoch: UInt32, keyCommit: [UInt8], parents: [KeyringID], links: [[UInt8]], isEscrowFree: Bool,
        requiredSlotKinds: [String] = [], criticalExtensions: [String] = [], slotEntries: [StoredSlot], unknownFields: CBORMap = CBORMap()
    ) {
        self.epoch = epoch
        self.keyCommit = keyCommit
        self.parents = parents
        self.links = links
        self.isEscrowFree = isEscrowFree
        self.requiredSlotKinds = requiredSlotKinds
        self.criticalExtensions = criticalExtensions
        self.slots = slotEntries.map(\.slot)
        slotUnknownFields = slotEntries.map(\.unknownFields)
        self.unknownFields = unknownFields
    }

    /// Each slot with the fields of its map that its kind does not define.
    public var slotEntries: [StoredSlot] { zip(slots, slotUnknownFields).map { StoredSlot(slot: $0, unknownFields: $1) } }

    /// The canonical encoding.
    public func encoded() -> [UInt8] {
        var w = FieldWriter(unknown: unknownFields)
        w.unsigned("epoch", UInt64(epoch))
        w.bytes("keyCommit", keyCommit)
        if !parents.isEmpty {
            w.ids("parents", parents)
            w.set("links", .array(links.map { .bytes($0) }))
        }
        w.bool("escrowFree", isEscrowFree)
        if !requiredSlotKinds.isEmpty { w.texts("required", requiredSlotKinds) }
        if !criticalExtensions.isEmpty { w.texts("critical", criticalExtensions) }
        w.set("slots", .array(zip(slots, slotUnknownFields).map { $0.value(unknown: $1) }))
        return w.encoded
    }

    /// Decodes a public part, checking every count and length.
    ///
    /// - Throws: ``FormatError/malformedRecord(_:reason:)`` and
    ///   ``FormatError/sizeLimitExceeded(_:what:size:limit:)``.
    public init(decoding bytes: [UInt8], location: FrameLocation?) throws(FormatError) {
        var r = try FieldReader(decodeBody(bytes, location: location), context: "keyring", location: location)
        guard let epoch = try r.unsigned("epoch"), epoch >= 1, epoch <= UInt64(Limits.maxEpoch) else {
            throw .malformedRecord(location, reason: "a keyring needs an epoch from 1 to \(Limits.maxEpoch)")
        }
        self.epoch = UInt32(epoch)
        guard let commit = try r.bytes("keyCommit", count: 32) else {
            throw .malformedRecord(location, reason: "a keyring needs a 32-byte keyCommit")
        }
        keyCommit = commit
        parents = try r.ids("parents", as: KeyringID.self, limit: Limits.maxParentCount) ?? []
        guard Set(parents).count == parents.count else { throw .malformedRecord(location, reason: "a keyring names a parent twice") }
        let linkItems = try r.array("links") ?? []
        guard linkItems.count == parents.count else {
            throw .malformedRecord(location, reason: "a keyring needs one link per parent (\(parents.count)), it has \(linkItems.count)")
        }
        var links: [[UInt8]] = []
        for item in linkItems {
            guard case .bytes(let b) = item, b.count == KeyringRecord.linkByteCount else {
                throw .malformedRecord(location, reason: "a keyring link must be \(KeyringRecord.linkByteCount) bytes")
            }
            links.append(b)
        }
        self.links = links
        isEscrowFree = try r.bool("escrowFree") ?? false
        let required = try r.texts("required") ?? []
        guard required.count <= Limits.maxRequiredSlotKinds else {
            throw .sizeLimitExceeded(
                location, what: "required slot kind count", size: UInt64(required.count), limit: UInt64(Limits.maxRequiredSlotKinds))
        }
        requiredSlotKinds = required
        let critical = try r.texts("critical") ?? []
        guard critical.count <= Limits.maxRequiredSlotKinds else {
            throw .sizeLimitExceeded(
                location, what: "critical extension count", size: UInt64(critical.count), limit: UInt64(Limits.maxRequiredSlotKinds))
        }
        criticalExtensions = critical
        let items = try r.array("slots") ?? []
        guard items.count <= Limits.maxSlotsPerKeyring else {
            throw .sizeLimitExceeded(location, what: "key slot count", size: UInt64(items.count), limit: UInt64(Limits.maxSlotsPerKeyring))
        }
        var slots: [KeySlot] = []
        for item in items { slots.append(try KeySlot(item, location: location)) }
        self.slots = slots
        slotUnknownFields = items.map { KeySlot.unknownFields(of: $0) }
        unknownFields = r.unknown
    }
}

/// The vault id a root keyring derives from its signer, its key commitment
/// and its salt (`Spec/format.md §8.4` rule 4):
/// `BLAKE2b-128("quire-vault-id-v2" ‖ signer's Ed25519 public key (32) ‖ keyCommit (32) ‖ vaultSalt (16))`.
/// Binding the key commitment leaves one root key per vault: another root
/// has the same epoch key, so it cannot start the vault at another epoch.
package func rootVaultID(signer publicKey: [UInt8], keyCommit: [UInt8], salt: [UInt8]) -> VaultID {
    VaultID(unchecked: BLAKE2b.hash(Array("quire-vault-id-v2".utf8) + publicKey + keyCommit + salt, byteCount: 16))
}

/// A keyring frame's body, parsed but not opened (`Spec/format.md §8.1`):
///
/// ```
/// body = K ‖ BLAKE2b-256(K)                       (the trailer is the keyring id)
/// K    = { "nonce": bytes(24), "public": bstr(P), "sealed": bstr(S) }
/// S    = XChaCha20-Poly1305(keyring key, nonce, pad(I), vault id ‖ P)
/// I    = { "content": bstr(C), "signature": bytes(64), "signer": bytes(32) }
/// signature = Ed25519(signer, "quire-keyring-v2" ‖ vault id ‖ H256(P) ‖ nonce ‖ H256(C))
/// ```
@_spi(Format) public struct KeyringRecord: Sendable, Equatable {
    /// The decoded public part.
    public let publicPart: KeyringPublic
    /// The public part's exact bytes (the associated data of the sealed part).
    public let publicBytes: [UInt8]
    /// The 24-byte nonce of the sealed part (covered by the signature).
    public let nonce: [UInt8]
    /// The sealed inner part: ciphertext ‖ tag.
    public let sealed: [UInt8]

    /// The epoch this keyring defines.
    public var epoch: UInt32 { publicPart.epoch }

    /// A record from its parts.
    public init(publicPart: KeyringPublic, nonce: [UInt8], sealed: [UInt8]) {
        self.publicPart = publicPart
        publicBytes = publicPart.encoded()
        self.nonce = nonce
        self.sealed = sealed
    }

    /// Parses a keyring frame's body (without its body hash).
    ///
    /// - Throws: ``FormatError/malformedRecord(_:reason:)`` and
    ///   ``FormatError/sizeLimitExceeded(_:what:size:limit:)``.
    public init(body: [UInt8], location: FrameLocation?) throws(FormatError) {
        var r = try FieldReader(decodeBody(body, location: location), context: "keyring body", location: location)
        guard let pub = try r.bytes("public"), let nonce = try r.bytes("nonce", count: 24), let sealed = try r.bytes("sealed") else {
            throw .malformedRecord(location, reason: "keyring body needs \"public\", a 24-byte \"nonce\" and \"sealed\"")
        }
        guard sealed.count >= 16 + 1 else { throw .malformedRecord(location, reason: "keyring sealed part is too short") }
        // Exactly these three fields: anything else would give one keyring
        // several ids (Spec/format.md §8.1).
        guard r.unknown.count == 0 else {
            throw .malformedRecord(location, reason: "keyring body has fields besides nonce, public and sealed")
        }
        publicPart = try KeyringPublic(decoding: pub, location: location)
        publicBytes = pub
        self.nonce = nonce
        self.sealed = sealed
    }

    /// K: the canonical body without its body hash.
    public func encodedBody() -> [UInt8] {
        CBOREncoder.encode(.map(CBORMap(text: [("nonce", .bytes(nonce)), ("public", .bytes(publicBytes)), ("sealed", .bytes(sealed))])))
    }

    /// The keyring id of a body without its hash: `BLAKE2b-256(K)`.
    public static func id(ofBody body: [UInt8]) -> KeyringID {
        KeyringID(unchecked: BLAKE2b.hash(body, byteCount: KeyringID.byteCount))
    }

    /// The associated data of the sealed part: `vault id ‖ P`.
    public static func associatedData(vaultID: VaultID, publicBytes: [UInt8]) -> [UInt8] {
        vaultID.bytes + publicBytes
    }

    /// The message the signer signs.
    public static func signedMessage(vaultID: VaultID, publicBytes: [UInt8], nonce: [UInt8], contentHash: [UInt8]) -> [UInt8] {
        Array("quire-keyring-v2".utf8) + vaultID.bytes + BLAKE2b.hash(publicBytes, byteCount: 32) + nonce + contentHash
    }

    /// The links of a keyring of `epoch` with `keyCommit` to its parents
    /// (`Spec/format.md §8.2`): for each parent, the signer's Ed25519 key and
    /// its signature over `"quire-keyring-link-v2" ‖ vault id ‖ u32(epoch) ‖
    /// keyCommit ‖ H256(parent ids)`, sealed under that parent's link key.
    /// Whoever holds a parent's key can check that a member made this
    /// keyring without opening it; nobody else can read who did.
    ///
    /// - Throws: ``FormatError/outOfGuardedMemory``.
    public static func links(
        parents: [(id: KeyringID, key: EpochKey)], signer: Ed25519.KeyPair, vaultID: VaultID, epoch: UInt32, keyCommit: [UInt8],
        random: any RandomSource
    ) throws(FormatError) -> [[UInt8]] {
        let message = linkMessage(vaultID: vaultID, epoch: epoch, keyCommit: keyCommit, parents: parents.map(\.id))
        let plain = signer.publicKey + signer.sign(message)
        var out: [[UInt8]] = []
        for p in parents {
            let linkKey: SymmetricKey
            do { linkKey = try p.key.subkey(.link) } catch { throw .outOfGuardedMemory }
            let nonce = random.bytes(XChaCha20Poly1305.nonceByteCount)
            let ad = linkAssociatedData(vaultID: vaultID, epoch: epoch, keyCommit: keyCommit, parent: p.id)
            out.append(nonce + XChaCha20Poly1305.seal(plain, key: linkKey, nonce: nonce, authenticating: ad))
        }
        return out
    }

    /// Length of one link: nonce (24) ‖ signer (32) ‖ signature (64) ‖ tag (16).
    public static let linkByteCount = 24 + 32 + 64 + 16

    static func linkMessage(vaultID: VaultID, epoch: UInt32, keyCommit: [UInt8], parents: [KeyringID]) -> [UInt8] {
        Array("quire-keyring-link-v2".utf8) + vaultID.bytes + littleEndianBytes(epoch) + keyCommit
            + BLAKE2b.hash(parents.flatMap(\.bytes), byteCount: 32)
    }

    static func linkAssociatedData(vaultID: VaultID, epoch: UInt32, keyCommit: [UInt8], parent: KeyringID) -> [UInt8] {
        Array("quire-keyring-link-v2".utf8) + vaultID.bytes + littleEndianBytes(epoch) + keyCommit + parent.bytes
    }

    /// The Ed25519 key that signed `links[i]`, if the link opens under the
    /// parent's key and its signature verifies; nil otherwise.
    public func linkSigner(parentIndex i: Int, parentKey: EpochKey, vaultID: VaultID) -> [UInt8]? {
        guard let link = openLink(parentIndex: i, parentKey: parentKey, vaultID: vaultID) else { return nil }
        return Ed25519.verify(signature: link.signature, message: linkMessage(vaultID: vaultID), publicKey: link.signer) ? link.signer : nil
    }

    /// The signer's key and the signature that `links[i]` carries, if the
    /// link opens under the link key of the parent's epoch key
    /// (`Spec/format.md §8.2`); the signature is not checked: check it over
    /// ``linkMessage(vaultID:)``.
    public func openLink(parentIndex i: Int, parentKey: EpochKey, vaultID: VaultID) -> (signer: [UInt8], signature: [UInt8])? {
        let pub = publicPart
        guard i < pub.parents.count, i < pub.links.count, pub.links[i].count == Self.linkByteCount,
            let linkKey = try? parentKey.subkey(.link)
        else { return nil }
        let link = pub.links[i]
        let ad = Self.linkAssociatedData(vaultID: vaultID, epoch: epoch, keyCommit: pub.keyCommit, parent: pub.parents[i])
        guard let plain = try? XChaCha20Poly1305.open(Array(link[24...]), key: linkKey, nonce: Array(link[0..<24]), authenticating: ad),
            plain.count == 96
        else { return nil }
        return (Array(plain[0..<32]), Array(plain[32..<96]))
    }

    /// The message every link of this keyring signs, whichever parent it
    /// names (`Spec/format.md §8.2`): a signer's links usually carry one
    /// signature (Ed25519 is deterministic), checked once.
    public func linkMessage(vaultID: VaultID) -> [UInt8] {
        Self.linkMessage(vaultID: vaultID, epoch: epoch, keyCommit: publicPart.keyCommit, parents: publicPart.parents)
    }

    /// Opens the sealed part with `key` (whose commitment must be this
    /// keyring's), removes the padding, decodes the inner part and the
    /// content, and checks the signature.
    ///
    /// The plaintext is decrypted into guarded memory and decoded there;
    /// the keys it carries go straight into guarded memory and every other
    /// copy is wiped.
    ///
    /// - Throws: ``FormatError/authenticationFailed(_:)`` (the key does not
    ///   open it), ``FormatError/badPadding(_:)``,
    ///   ``FormatError/malformedRecord(_:reason:)``,
    ///   ``FormatError/sizeLimitExceeded(_:what:size:limit:)``,
    ///   ``FormatError/outOfGuardedMemory``.
    public func open(key: EpochKey, vaultID: VaultID, location: FrameLocation) throws(FormatError) -> OpenedKeyring {
        let keyringKey: SymmetricKey
        do { keyringKey = try key.subkey(.keyring) } catch { throw .outOfGuardedMemory }
        guard sealed.count > XChaCha20Poly1305.tagByteCount else { throw .authenticationFailed(location) }
        let plain: SecureBytes
        do { plain = try SecureBytes(zeroedCount: sealed.count - XChaCha20Poly1305.tagByteCount) } catch { throw .outOfGuardedMemory }
        let ad = Self.associatedData(vaultID: vaultID, publicBytes: publicBytes)
        let opened = plain.withUnsafeMutableBytes { p in
            sealed.withUnsafeBytes { c in
                nonce.withUnsafeBytes { n in
                    ad.withUnsafeBytes { a in (try? XChaCha20Poly1305.open(c, into: p, key: keyringKey, nonce: n, authenticating: a)) != nil
                    }
                }
            }
        }
        guard opened else { throw .authenticationFailed(location) }
        return try plain.withUnsafeBytes { (raw: UnsafeRawBufferPointer) throws(FormatError) -> OpenedKeyring in
            guard let count = Padding.payloadCount(in: raw) else { throw .badPadding(location) }
            let inner = UnsafeRawBufferPointer(rebasing: raw[0..<count])
            let fields: [String: Range<Int>]
            do { fields = try CBORDecoder.byteStringFields(inner) } catch let error as CBORError {
                throw .malformedRecord(location, reason: "keyring inner part: \(error.description)")
            } catch {
                throw .malformedRecord(location, reason: "keyring inner part is not a map of byte strings")
            }
            guard fields.count == 3, let c = fields["content"], let sg = fields["signature"], let sr = fields["signer"],
                sg.count == 64, sr.count == 32
            else {
                throw .malformedRecord(
                    location, reason: "keyring inner part needs exactly content, a 64-byte signature and a 32-byte signer")
            }
            let contentBytes = UnsafeRawBufferPointer(rebasing: inner[c])
            let signer = Array(UnsafeRawBufferPointer(rebasing: inner[sr]))
            let signature = Array(UnsafeRawBufferPointer(rebasing: inner[sg]))
            let content = try KeyringContent(decoding: contentBytes, location: location)
            let message = Self.signedMessage(
                vaultID: vaultID, publicBytes: publicBytes, nonce: nonce, contentHash: BLAKE2b.hash(contentBytes, byteCount: 32))
            let valid = Ed25519.verify(signature: signature, message: message, publicKey: signer)
            return OpenedKeyring(content: content, signer: signer, signatureValid: valid)
        }
    }

    /// Signs `content` with `signer`, seals it under `key` and returns the
    /// record. `publicPart.keyCommit` must be `key`'s commitment.
    ///
    /// - Throws: ``FormatError/outOfGuardedMemory``.
    public static func seal(
        content: KeyringContent, signer: Ed25519.KeyPair, key: EpochKey, vaultID: VaultID, publicPart: KeyringPublic,
        random: any RandomSource
    ) throws(FormatError) -> KeyringRecord {
        precondition(publicPart.keyCommit == key.commitment && publicPart.epoch == key.epoch)
        let keyringKey: SymmetricKey
        do { keyringKey = try key.subkey(.keyring) } catch { throw .outOfGuardedMemory }
        let publicBytes = publicPart.encoded()
        let nonce = random.bytes(24)
        let contentBytes = content.encoded()
        // The CBOR tree below shares this buffer: wipe the buffer itself, not
        // a copy-on-write copy of it.
        defer { wipeShared(contentBytes) }
        let message = signedMessage(
            vaultID: vaultID, publicBytes: publicBytes, nonce: nonce, contentHash: BLAKE2b.hash(contentBytes, byteCount: 32))
        let signature = signer.sign(message)
        let innerTree = CBOR.map(
            CBORMap(text: [
                ("content", .bytes(contentBytes)), ("signature", .bytes(signature)), ("signer", .bytes(signer.publicKey)),
            ]))
        // Reserved at the padded size, so that neither encoding nor padding
        // grows it and frees a buffer with the content in it.
        var inner: [UInt8] = []
        inner.reserveCapacity(Padding.paddedCount(forPayload: contentBytes.count + signature.count + signer.publicKey.count + 64))
        CBOREncoder.append(innerTree, to: &inner)
        defer { wipe(&inner) }
        Padding.pad(&inner)
        let sealed = XChaCha20Poly1305.seal(
            inner, key: keyringKey, nonce: nonce, authenticating: associatedData(vaultID: vaultID, publicBytes: publicBytes))
        return KeyringRecord(publicPart: publicPart, nonce: nonce, sealed: sealed)
    }
}

/// A keyring's inner part after opening: its content, who signed it and
/// whether the signature verifies.
@_spi(Format) public struct OpenedKeyring: Sendable {
    /// The decoded content.
    public let content: KeyringContent
    /// The Ed25519 public key that signed it.
    public let signer: [UInt8]
    /// True when the signature over public part, nonce and content verifies.
    public let signatureValid: Bool
}

/// Someone who may sign keyrings and attest commits: an enrolled device or
/// the recovery key (`Spec/records.md §6.3`).
public struct KeyringMember: Sendable, Equatable {
    /// `"device"` or `"recovery"`.
    @_spi(Format) public var role: String
    /// The member's public key.
    public var publicKey: [UInt8]
    /// The key's type; `"ed25519"` is the only one version 2 defines (a
    /// reserved hook for post-quantum member keys).
    @_spi(Format) public var keyType: String
    /// A human name, such as `"Sam's phone"`.
    public var name: String
    /// When the member was added: milliseconds since the Unix epoch, UTC,
    /// as the wire field `added` holds it (an app reads `added` as a `Date`).
    @_spi(Format) public var addedMilliseconds: Int64
    /// Fields this version does not know.
    @_spi(Format) public var unknownFields: CBORMap

    /// A member with the given fields.
    @_spi(Format) public init(
        role: String, publicKey: [UInt8], keyType: String = "ed25519", name: String, added: Int64, unknownFields: CBORMap = CBORMap()
    ) {
        self.role = role
        self.publicKey = publicKey
        self.keyType = keyType
        self.name = name
        self.addedMilliseconds = added
        self.unknownFields = unknownFields
    }

    /// The member's device id.
    @_spi(Format) public var deviceID: DeviceID { DeviceID(publicKey: publicKey) }

    /// True for a member whose key this version can use to sign and to wrap.
    @_spi(Format) public var isEd25519: Bool { keyType == "ed25519" }
}

/// An escrow recipient: a custodian's X25519 public key and a label.
@_spi(Format) public struct EscrowRecipient: Sendable, Equatable {
    /// The custodian's X25519 public key.
    public var publicKey: [UInt8]
    /// A label, such as `"Employer IT"`.
    public var label: String
    /// Fields this version does not know.
    public var unknownFields: CBORMap

    /// A recipient with the given fields.
    public init(publicKey: [UInt8], label: String, unknownFields: CBORMap = CBORMap()) {
        self.publicKey = publicKey
        self.label = label
        self.unknownFields = unknownFields
    }
}

/// The content map of a keyring's inner part (`Spec/records.md §6.3`).
@_spi(Format) public struct KeyringContent: Sendable {
    /// Who may sign the next keyring and attest commits.
    public var members: [KeyringMember]
    /// Members removed so far (carried forward, so removal is sticky).
    public var removed: [KeyringMember]
    /// Escrow recipients wrapped in this keyring.
    public var escrow: [EscrowRecipient]
    /// X25519 public keys of passphrases and escrow recipients taken out of
    /// use, carried forward so that no later keyring wraps to them again
    /// (`Spec/keys.md §5`).
    public var retired: [[UInt8]]
    /// The epoch key of each parent, in the order of the public part's
    /// `parents`: keys travel by reference to parents, like a sigchain.
    public var parentKeys: [SymmetricKey]
    /// The key for blob ids (kept from the parents, fresh at a rekey).
    public var blobKey: SymmetricKey
    /// When the keyring was made: milliseconds since the Unix epoch, UTC.
    public var created: Int64
    /// Why it was made, such as `"create"`, `"rotate"`, `"enroll"`.
    public var reason: String
    /// The ids of the keyrings its signer was behind when it signed
    /// (`Spec/format.md §8.6`): rule 5.3 rejects the keyring when one of
    /// them removed its signer.
    public var answers: [KeyringID]
    /// For a root keyring (no parents): the 16 random bytes that, with the
    /// signer's Ed25519 public key and the root's key commitment, derive the
    /// vault id (`Spec/format.md §8.4` rule 4, `Spec/records.md §6.3`).
    /// Sealed, so that a device's public key cannot be tested against the
    /// vault id without an epoch key (tenth review R10-8); ignored in a
    /// keyring with parents.
    public var vaultSalt: [UInt8]?
    /// Fields this version does not know.
    public var unknownFields: CBORMap

    /// Content with the given fields.
    public init(
        members: [KeyringMember], removed: [KeyringMember] = [], escrow: [EscrowRecipient] = [], retired: [[UInt8]] = [],
        parentKeys: [SymmetricKey] = [], blobKey: SymmetricKey, created: Int64, reason: String, answers: [KeyringID] = [],
        vaultSalt: [UInt8]? = nil, unknownFields: CBORMap = CBORMap()
    ) {
        self.members = members
        self.removed = removed
        self.escrow = escrow
        self.retired = retired
        self.parentKeys = parentKeys
        self.blobKey = blobKey
        self.created = created
        self.reason = reason
        self.answers = answers
        self.vaultSalt = vaultSalt
        self.unknownFields = unknownFields
    }

    /// Decodes content bytes in place (from guarded memory). Secret byte
    /// strings are copied into guarded memory and their heap copies in the
    /// decoded tree wiped.
    ///
    /// - Throws: ``FormatError/malformedRecord(_:reason:)``,
    ///   ``FormatError/sizeLimitExceeded(_:what:size:limit:)``,
    ///   ``FormatError/outOfGuardedMemory``.
    public init(decoding bytes: UnsafeRawBufferPointer, location: FrameLocation?) throws(FormatError) {
        let tree: CBOR
        do { tree = try CBORDecoder.decode(bytes) } catch {
            throw .malformedRecord(location, reason: "keyring content: \(error.description)")
        }
        defer { wipeSecrets(in: tree) }
        var r = try FieldReader(tree, context: "keyring content", location: location)
        members = try Self.memberList(&r, "members", location)
        removed = try Self.memberList(&r, "removed", location)
        var escrow: [EscrowRecipient] = []
        for item in try Self.list(&r, "escrow", location) {
            var f = try FieldReader(item, context: "escrow recipient", location: location)
            guard let key = try f.bytes("key", count: 32) else {
                throw .malformedRecord(location, reason: "escrow recipient needs a 32-byte key")
            }
            escrow.append(EscrowRecipient(publicKey: key, label: try f.text("label") ?? "", unknownFields: f.unknown))
        }
        self.escrow = escrow
        var retired: [[UInt8]] = []
        for item in try Self.list(&r, "retired", location) {
            guard case .bytes(let key) = item, key.count == 32 else {
                throw .malformedRecord(location, reason: "a retired key must be 32 bytes")
            }
            retired.append(key)
        }
        self.retired = retired
        let parentItems = try r.array("parentKeys") ?? []
        guard parentItems.count <= Limits.maxParentCount else {
            throw .sizeLimitExceeded(
                location, what: "parent key count", size: UInt64(parentItems.count), limit: UInt64(Limits.maxParentCount))
        }
        var parentKeys: [SymmetricKey] = []
        for item in parentItems {
            guard case .bytes(let key) = item, key.count == 32 else {
                throw .malformedRecord(location, reason: "a parent key must be 32 bytes")
            }
            parentKeys.append(try Self.secret(key, location))
        }
        self.parentKeys = parentKeys
        guard let blob = try r.bytes("blobKey", count: 32) else {
            throw .malformedRecord(location, reason: "keyring content has no 32-byte blobKey")
        }
        blobKey = try Self.secret(blob, location)
        created = try r.int("created") ?? 0
        reason = try r.text("reason") ?? ""
        var answers: [KeyringID] = []
        for item in try Self.list(&r, "answers", location) {
            guard case .bytes(let id) = item, id.count == KeyringID.byteCount else {
                throw .malformedRecord(location, reason: "an answered keyring id must be 32 bytes")
            }
            answers.append(KeyringID(unchecked: id))
        }
        self.answers = answers
        vaultSalt = try r.bytes("vaultSalt", count: 16)
        unknownFields = r.unknown
    }

    private static func secret(_ bytes: [UInt8], _ location: FrameLocation?) throws(FormatError) -> SymmetricKey {
        do { return try SymmetricKey(bytes: bytes) } catch { throw .outOfGuardedMemory }
    }

    private static func list(_ r: inout FieldReader, _ key: String, _ location: FrameLocation?) throws(FormatError) -> [CBOR] {
        let items = try r.array(key) ?? []
        guard items.count <= Limits.maxKeyringListCount else {
            throw .sizeLimitExceeded(
                location, what: "keyring \(key) count", size: UInt64(items.count), limit: UInt64(Limits.maxKeyringListCount))
        }
        return items
    }

    private static func memberList(_ r: inout FieldReader, _ key: String, _ location: FrameLocation?) throws(FormatError) -> [KeyringMember]
    {
        var out: [KeyringMember] = []
        for item in try list(&r, key, location) {
            var f = try FieldReader(item, context: "keyring member", location: location)
            guard let pk = try f.bytes("key", count: 32) else {
                throw .malformedRecord(location, reason: "keyring member needs a 32-byte key")
            }
            out.append(
                KeyringMember(
                    role: try f.text("role") ?? "device", publicKey: pk, keyType: try f.text("keyType") ?? "ed25519",
                    name: try f.text("name") ?? "",
                    added: try f.int("added") ?? 0, unknownFields: f.unknown))
        }
        return out
    }

    /// The canonical encoding. Holds secrets: wipe it after sealing.
    public func encoded() -> [UInt8] {
        func member(_ m: KeyringMember) -> CBOR {
            var w = FieldWriter(unknown: m.unknownFields)
            w.text("role", m.role, default: "device")
            w.bytes("key", m.publicKey)
            w.text("keyType", m.keyType, default: "ed25519")
            w.text("name", m.name)
            w.int("added", m.addedMilliseconds, default: 0)
            return w.value
        }
        var w = FieldWriter(unknown: unknownFields)
        w.set("members", .array(members.map(member)))
        if !removed.isEmpty { w.set("removed", .array(removed.map(member))) }
        if !escrow.isEmpty {
            w.set(
                "escrow",
                .array(
                    escrow.map { e in
                        var f = FieldWriter(unknown: e.unknownFields)
                        f.bytes("key", e.publicKey)
                        f.text("label", e.label)
                        return f.value
                    }))
        }
        if !retired.isEmpty { w.set("retired", .array(retired.map { .bytes($0) })) }
        if !answers.isEmpty { w.set("answers", .array(answers.map { .bytes($0.bytes) })) }
        w.bytes("vaultSalt", vaultSalt)
        // The keys are copied into the tree only for encoding. The output
        // is reserved at its final size first (the same tree with zero keys
        // has the same length), so that no grown-out buffer is freed with
        // key bytes in it; then the tree's own copies are wiped.
        func tree(_ key: (SymmetricKey) -> [UInt8]) -> CBOR {
            var t = w
            if !parentKeys.isEmpty { t.set("parentKeys", .array(parentKeys.map { .bytes(key($0)) })) }
            t.bytes("blobKey", key(blobKey))
            t.int("created", created, default: 0)
            t.text("reason", reason)
            return t.value
        }
        let size = CBOREncoder.encode(tree { _ in [UInt8](repeating: 0, count: SymmetricKey.byteCount) }).count
        let secretTree = tree { $0.storage.copyBytes() }
        defer { wipeSecrets(in: secretTree) }
        var out: [UInt8] = []
        out.reserveCapacity(size)
        CBOREncoder.append(secretTree, to: &out)
        return out
    }
}

/// Overwrites, in place, the byte strings of a decoded content tree that
/// hold secrets (`parentKeys[*]`, `blobKey`), so that only the guarded
/// copies remain. The tree is private to the decoder and discarded next, so
/// each of these buffers has exactly one owner.
private func wipeSecrets(in tree: CBOR) {
    guard case .map(let m) = tree else { return }
    if case .bytes(let b)? = m[text: "blobKey"] { wipeShared(b) }
    if case .array(let items)? = m[text: "parentKeys"] {
        for item in items { if case .bytes(let k) = item { wipeShared(k) } }
    }
}
