public import QuireCrypto

/// One key slot: the epoch key wrapped for one way of opening the vault
/// (`Spec/format.md §8.3`).
public enum KeySlot: Sendable, Equatable {
    /// Sealed box (X25519) to an enrolled device's key: 98 bytes sealing
    /// `epoch key (32) ‖ vault id (16) ‖ epoch (u16 LE)`.
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
    /// overhead around `epoch key (32) ‖ vault id (16) ‖ epoch (2)`.
    public static let boxByteCount = 32 + 16 + 2 + 48

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
        let known: Set<String> = switch kind {
        case "device", "escrow", "recovery": ["kind", "box"]
        case "passphrase": ["kind", "salt", "opsLimit", "memLimit", "publicKey", "box"]
        default: Set(m.entries.compactMap { if case .text(let k) = $0.key { k } else { nil } })
        }
        return CBORMap(m.entries.filter { e in if case .text(let k) = e.key { !known.contains(k) } else { true } }.map { ($0.key, $0.value) })
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
public struct StoredSlot: Sendable, Equatable {
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

/// The public part of a keyring: what anyone holding the file can read
/// (`Spec/format.md §8.2`).
public struct KeyringPublic: Sendable, Equatable {
    /// The keyrings this one succeeds; empty for the first keyring.
    public var parents: [KeyringID]
    /// True when the vault is escrow-free as of this keyring: no escrow slot
    /// may exist in it.
    public var isEscrowFree: Bool
    /// The key slots.
    public var slots: [KeySlot] {
        didSet { if slotUnknownFields.count != slots.count { slotUnknownFields = slots.map { _ in CBORMap() } } }
    }
    /// Fields of each slot map that its kind does not define, kept and
    /// written back (`Spec/records.md §1.2`).
    var slotUnknownFields: [CBORMap]
    /// For a root keyring (no parents): the 16-byte salt that, with the
    /// signer's key, derives the vault id (`Spec/format.md §8.4`).
    public var vaultSalt: [UInt8]?
    /// Fields this version does not know.
    public var unknownFields: CBORMap

    /// A public part with the given fields.
    public init(parents: [KeyringID], isEscrowFree: Bool, slots: [KeySlot], vaultSalt: [UInt8]? = nil, unknownFields: CBORMap = CBORMap()) {
        self.parents = parents
        self.isEscrowFree = isEscrowFree
        self.slots = slots
        slotUnknownFields = slots.map { _ in CBORMap() }
        self.vaultSalt = vaultSalt
        self.unknownFields = unknownFields
    }

    /// A public part whose slots keep fields their kinds do not define, as
    /// when a keyring of the same epoch copies its parent's slots.
    public init(parents: [KeyringID], isEscrowFree: Bool, slotEntries: [StoredSlot], vaultSalt: [UInt8]? = nil, unknownFields: CBORMap = CBORMap()) {
        self.init(parents: parents, isEscrowFree: isEscrowFree, slots: slotEntries.map(\.slot), vaultSalt: vaultSalt, unknownFields: unknownFields)
        slotUnknownFields = slotEntries.map(\.unknownFields)
    }

    /// Each slot with the fields of its map that its kind does not define.
    public var slotEntries: [StoredSlot] { zip(slots, slotUnknownFields).map { StoredSlot(slot: $0, unknownFields: $1) } }

    /// The canonical encoding.
    public func encoded() -> [UInt8] {
        var w = FieldWriter(unknown: unknownFields)
        w.ids("parents", parents)
        w.bool("escrowFree", isEscrowFree)
        w.set("slots", .array(zip(slots, slotUnknownFields).map { $0.value(unknown: $1) }))
        w.bytes("vaultSalt", vaultSalt)
        return w.encoded
    }

    /// Decodes the public part.
    ///
    /// - Throws: ``FormatError/malformedRecord(_:reason:)`` and
    ///   ``FormatError/sizeLimitExceeded(_:what:size:limit:)`` for more than
    ///   ``Limits/maxSlotsPerKeyring`` slots.
    public init(decoding bytes: [UInt8], location: FrameLocation?) throws(FormatError) {
        var r = try FieldReader(decodeBody(bytes, location: location), context: "keyring", location: location)
        parents = try r.ids("parents", as: KeyringID.self, limit: Limits.maxParentCount) ?? []
        isEscrowFree = try r.bool("escrowFree") ?? false
        let items = try r.array("slots") ?? []
        guard items.count <= Limits.maxSlotsPerKeyring else {
            throw .sizeLimitExceeded(location, what: "key slot count", size: UInt64(items.count), limit: UInt64(Limits.maxSlotsPerKeyring))
        }
        var slots: [KeySlot] = []
        for item in items { slots.append(try KeySlot(item, location: location)) }
        self.slots = slots
        slotUnknownFields = items.map { KeySlot.unknownFields(of: $0) }
        vaultSalt = try r.bytes("vaultSalt", count: 16)
        unknownFields = r.unknown
    }
}

/// The vault id a root keyring's signer and salt derive
/// (`Spec/format.md §8.4`): `BLAKE2b-128("quire-vault-id-v1" ‖ signer
/// Ed25519 public key ‖ salt)`. Only the holder of the signer's private key
/// can make a root keyring for a vault, wherever it stands in the file.
public func rootVaultID(signer publicKey: [UInt8], salt: [UInt8]) -> VaultID {
    VaultID(unchecked: BLAKE2b.hash(Array("quire-vault-id-v1".utf8) + publicKey + salt, byteCount: 16))
}

/// A keyring record's body as stored: the public part's exact bytes and the
/// sealed inner part (`Spec/format.md §8.1`).
///
/// ```
/// keyring body = CBOR { "public": bstr(public map), "sealed": bstr } ‖ BLAKE2b-128(CBOR bytes)
/// sealed       = nonce (24) ‖ XChaCha20-Poly1305(keyring key, inner, AD)
/// AD           = vault id ‖ epoch (u16 LE) ‖ public bytes
/// inner        = CBOR { "content": bstr(content map), "signer": bstr(32), "signature": bstr(64) }
/// ```
public struct KeyringRecord: Sendable, Equatable {
    /// The epoch the keyring defines (from its frame header).
    public let epoch: UInt16
    /// The public part.
    public let publicPart: KeyringPublic
    /// The exact encoded bytes of the public part.
    public let publicBytes: [UInt8]
    /// Nonce ‖ ciphertext ‖ tag of the inner part.
    public let sealed: [UInt8]

    /// Wraps already-encoded parts.
    public init(epoch: UInt16, publicPart: KeyringPublic, sealed: [UInt8]) {
        self.epoch = epoch
        self.publicPart = publicPart
        publicBytes = publicPart.encoded()
        self.sealed = sealed
    }

    /// Parses a keyring frame body (without its trailer).
    ///
    /// - Throws: ``FormatError/malformedRecord(_:reason:)``.
    public init(body: [UInt8], epoch: UInt16, location: FrameLocation?) throws(FormatError) {
        var r = try FieldReader(decodeBody(body, location: location), context: "keyring body", location: location)
        guard let pub = try r.bytes("public"), let sealed = try r.bytes("sealed") else {
            throw .malformedRecord(location, reason: "keyring body needs \"public\" and \"sealed\"")
        }
        guard sealed.count >= 24 + 16 else { throw .malformedRecord(location, reason: "keyring sealed part is too short") }
        self.epoch = epoch
        publicPart = try KeyringPublic(decoding: pub, location: location)
        publicBytes = pub
        self.sealed = sealed
    }

    /// The body to store in the frame (without the trailer).
    public func encodedBody() -> [UInt8] {
        CBOREncoder.encode(.map(CBORMap(text: [("public", .bytes(publicBytes)), ("sealed", .bytes(sealed))])))
    }

    /// The associated data of the sealed part.
    public static func associatedData(vaultID: VaultID, epoch: UInt16, publicBytes: [UInt8]) -> [UInt8] {
        vaultID.bytes + littleEndianBytes(epoch) + publicBytes
    }

    /// The bytes an authorizer signs: `"quire-keyring-v1" ‖ vault id ‖ epoch
    /// (u16 LE) ‖ public bytes ‖ content bytes`.
    public static func signedMessage(vaultID: VaultID, epoch: UInt16, publicBytes: [UInt8], contentBytes: [UInt8]) -> [UInt8] {
        Array("quire-keyring-v1".utf8) + vaultID.bytes + littleEndianBytes(epoch) + publicBytes + contentBytes
    }

    /// Opens the sealed part with the epoch's keyring key and returns the
    /// inner part.
    ///
    /// - Throws: ``FormatError/authenticationFailed(_:)`` when the key is not
    ///   this epoch's, ``FormatError/malformedRecord(_:reason:)``.
    public func openInner(key: EpochKey, vaultID: VaultID, location: FrameLocation) throws(FormatError) -> KeyringInner {
        let nonce = Array(sealed[0..<24])
        let ad = Self.associatedData(vaultID: vaultID, epoch: epoch, publicBytes: publicBytes)
        var plain: [UInt8]
        do {
            plain = try XChaCha20Poly1305.open(Array(sealed[24...]), key: key.keyringKey, nonce: nonce, authenticating: ad)
        } catch {
            throw .authenticationFailed(location)
        }
        defer { wipe(&plain) }
        return try KeyringInner(decoding: plain, location: location)
    }

    /// Seals `inner` under `key` with a fresh nonce.
    public static func seal(inner: KeyringInner, key: EpochKey, vaultID: VaultID, publicBytes: [UInt8], random: any RandomSource) -> [UInt8] {
        var plain = inner.encoded()
        defer { wipe(&plain) }
        let nonce = random.bytes(24)
        let ad = associatedData(vaultID: vaultID, epoch: key.epoch, publicBytes: publicBytes)
        return nonce + XChaCha20Poly1305.seal(plain, key: key.keyringKey, nonce: nonce, authenticating: ad)
    }
}

/// The sealed inner part of a keyring: the content and the signature of the
/// authorizer that made it.
public struct KeyringInner: Sendable, Equatable {
    /// The exact bytes of the content map.
    public let contentBytes: [UInt8]
    /// The signer's Ed25519 public key.
    public let signer: [UInt8]
    /// Ed25519 signature over ``KeyringRecord/signedMessage(vaultID:epoch:publicBytes:contentBytes:)``.
    public let signature: [UInt8]

    /// Wraps the parts.
    public init(contentBytes: [UInt8], signer: [UInt8], signature: [UInt8]) {
        self.contentBytes = contentBytes
        self.signer = signer
        self.signature = signature
    }

    init(decoding bytes: [UInt8], location: FrameLocation?) throws(FormatError) {
        var r = try FieldReader(decodeBody(bytes, location: location), context: "keyring inner part", location: location)
        guard let content = try r.bytes("content"), let signer = try r.bytes("signer", count: 32),
            let signature = try r.bytes("signature", count: 64)
        else {
            throw .malformedRecord(location, reason: "keyring inner part needs content, signer and signature")
        }
        contentBytes = content
        self.signer = signer
        self.signature = signature
    }

    func encoded() -> [UInt8] {
        CBOREncoder.encode(.map(CBORMap(text: [
            ("content", .bytes(contentBytes)), ("signer", .bytes(signer)), ("signature", .bytes(signature)),
        ])))
    }
}

/// Someone who may authorize keyrings: an enrolled device or the recovery key.
public struct KeyringMember: Sendable, Equatable {
    /// `"device"` or `"recovery"`.
    public var role: String
    /// The member's Ed25519 public key.
    public var publicKey: [UInt8]
    /// A human name, such as `"Sam's phone"`.
    public var name: String
    /// When the member was added: milliseconds since the Unix epoch, UTC.
    public var added: Int64
    /// Fields this version does not know.
    public var unknownFields: CBORMap

    /// A member with the given fields.
    public init(role: String, publicKey: [UInt8], name: String, added: Int64, unknownFields: CBORMap = CBORMap()) {
        self.role = role
        self.publicKey = publicKey
        self.name = name
        self.added = added
        self.unknownFields = unknownFields
    }

    /// The member's device id.
    public var deviceID: DeviceID { DeviceID(publicKey: publicKey) }
}

/// An escrow recipient: a custodian's X25519 public key and a label.
public struct EscrowRecipient: Sendable, Equatable {
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

/// An earlier epoch's key, carried forward so that enrolled devices read the
/// whole history.
public struct HistoricKey: Sendable {
    /// The epoch number.
    public let epoch: UInt16
    /// The epoch key.
    public let key: SymmetricKey
    /// Fields this version does not know.
    public let unknownFields: CBORMap

    /// Wraps an epoch key.
    public init(epoch: UInt16, key: SymmetricKey, unknownFields: CBORMap = CBORMap()) {
        self.epoch = epoch
        self.key = key
        self.unknownFields = unknownFields
    }
}

/// The content map of a keyring's inner part (`Spec/records.md §6`).
public struct KeyringContent: Sendable {
    /// Who may authorize the next keyring.
    public var members: [KeyringMember]
    /// Members removed so far (carried forward, so removal is sticky).
    public var removed: [KeyringMember]
    /// Escrow recipients wrapped in this keyring.
    public var escrow: [EscrowRecipient]
    /// Keys of earlier epochs.
    public var history: [HistoricKey]
    /// X25519 public keys of passphrases and escrow recipients taken out of
    /// use, carried forward so that no later keyring wraps to them again
    /// (`Spec/keys.md §5`).
    public var retired: [[UInt8]]
    /// The key for blob ids; the same for the life of the vault.
    public var blobKey: SymmetricKey
    /// When the keyring was made: milliseconds since the Unix epoch, UTC.
    public var created: Int64
    /// Why it was made, such as `"create"`, `"rotate"`, `"enroll"`.
    public var reason: String
    /// Fields this version does not know.
    public var unknownFields: CBORMap

    /// Content with the given fields.
    public init(
        members: [KeyringMember], removed: [KeyringMember] = [], escrow: [EscrowRecipient] = [], history: [HistoricKey] = [],
        retired: [[UInt8]] = [], blobKey: SymmetricKey, created: Int64, reason: String, unknownFields: CBORMap = CBORMap()
    ) {
        self.members = members
        self.removed = removed
        self.escrow = escrow
        self.history = history
        self.retired = retired
        self.blobKey = blobKey
        self.created = created
        self.reason = reason
        self.unknownFields = unknownFields
    }

    /// Decodes content bytes. Secret byte strings are copied into guarded
    /// memory and wiped from the decoded tree.
    ///
    /// - Throws: ``FormatError/malformedRecord(_:reason:)`` and
    ///   ``FormatError/sizeLimitExceeded(_:what:size:limit:)``.
    public init(decoding bytes: [UInt8], location: FrameLocation?) throws(FormatError) {
        let tree = try decodeBody(bytes, location: location)
        defer { wipeSecrets(in: tree) }
        var r = try FieldReader(tree, context: "keyring content", location: location)
        members = try Self.memberList(&r, "members", location)
        removed = try Self.memberList(&r, "removed", location)
        var escrow: [EscrowRecipient] = []
        for item in try Self.list(&r, "escrow", location) {
            var f = try FieldReader(item, context: "escrow recipient", location: location)
            guard let key = try f.bytes("key", count: 32) else { throw .malformedRecord(location, reason: "escrow recipient needs a 32-byte key") }
            escrow.append(EscrowRecipient(publicKey: key, label: try f.text("label") ?? "", unknownFields: f.unknown))
        }
        self.escrow = escrow
        var history: [HistoricKey] = []
        for item in try Self.list(&r, "history", location) {
            var f = try FieldReader(item, context: "history entry", location: location)
            guard let epoch = try f.unsigned("epoch"), epoch >= 1, epoch <= UInt64(UInt16.max), let key = try f.bytes("key", count: 32) else {
                throw .malformedRecord(location, reason: "history entry needs an epoch (1…65535) and a 32-byte key")
            }
            history.append(HistoricKey(epoch: UInt16(epoch), key: try Self.secret(key, location), unknownFields: f.unknown))
        }
        self.history = history
        var retired: [[UInt8]] = []
        for item in try Self.list(&r, "retired", location) {
            guard case .bytes(let key) = item, key.count == 32 else { throw .malformedRecord(location, reason: "a retired key must be 32 bytes") }
            retired.append(key)
        }
        self.retired = retired
        guard let blob = try r.bytes("blobKey", count: 32) else { throw .malformedRecord(location, reason: "keyring content has no 32-byte blobKey") }
        blobKey = try Self.secret(blob, location)
        created = try r.int("created") ?? 0
        reason = try r.text("reason") ?? ""
        unknownFields = r.unknown
    }

    private static func secret(_ bytes: [UInt8], _ location: FrameLocation?) throws(FormatError) -> SymmetricKey {
        do { return try SymmetricKey(bytes: bytes) } catch { throw .malformedRecord(location, reason: "bad key length") }
    }

    private static func list(_ r: inout FieldReader, _ key: String, _ location: FrameLocation?) throws(FormatError) -> [CBOR] {
        let items = try r.array(key) ?? []
        guard items.count <= Limits.maxKeyringListCount else {
            throw .sizeLimitExceeded(location, what: "keyring \(key) count", size: UInt64(items.count), limit: UInt64(Limits.maxKeyringListCount))
        }
        return items
    }

    private static func memberList(_ r: inout FieldReader, _ key: String, _ location: FrameLocation?) throws(FormatError) -> [KeyringMember] {
        var out: [KeyringMember] = []
        for item in try list(&r, key, location) {
            var f = try FieldReader(item, context: "keyring member", location: location)
            guard let pk = try f.bytes("key", count: 32) else { throw .malformedRecord(location, reason: "keyring member needs a 32-byte key") }
            out.append(KeyringMember(
                role: try f.text("role") ?? "device", publicKey: pk, name: try f.text("name") ?? "",
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
            w.text("name", m.name)
            w.int("added", m.added, default: 0)
            return w.value
        }
        var w = FieldWriter(unknown: unknownFields)
        w.set("members", .array(members.map(member)))
        if !removed.isEmpty { w.set("removed", .array(removed.map(member))) }
        if !escrow.isEmpty {
            w.set("escrow", .array(escrow.map { e in
                var f = FieldWriter(unknown: e.unknownFields)
                f.bytes("key", e.publicKey)
                f.text("label", e.label)
                return f.value
            }))
        }
        if !history.isEmpty {
            w.set("history", .array(history.map { h in
                var f = FieldWriter(unknown: h.unknownFields)
                f.unsigned("epoch", UInt64(h.epoch))
                f.bytes("key", h.key.storage.copyBytes())
                return f.value
            }))
        }
        if !retired.isEmpty { w.set("retired", .array(retired.map { .bytes($0) })) }
        w.bytes("blobKey", blobKey.storage.copyBytes())
        w.int("created", created, default: 0)
        w.text("reason", reason)
        return w.encoded
    }
}

/// Overwrites, in place, the byte strings of a decoded content tree that
/// hold secrets (`history[*].key`, `blobKey`), so that only the guarded
/// copies remain. The tree is private to the decoder and discarded next.
private func wipeSecrets(in tree: CBOR) {
    guard case .map(let m) = tree else { return }
    func zero(_ b: [UInt8]) { wipeShared(b) }
    if case .bytes(let b)? = m[text: "blobKey"] { zero(b) }
    if case .array(let items)? = m[text: "history"] {
        for item in items {
            if case .map(let h) = item, case .bytes(let k)? = h[text: "key"] { zero(k) }
        }
    }
}
