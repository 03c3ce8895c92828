@_spi(Crypto) public import QuireCrypto
import Synchronization

/// One epoch key and everything derived from it (`Spec/format.md §5.1`).
///
/// The key is held once, in guarded memory. Its subkeys are derived on first
/// use and kept with it; its 32-byte *key commitment* (a keyed BLAKE2b of a
/// fixed label) is public and names the key: the first six bytes are the
/// ``KeyID`` frame headers carry.
@_spi(Format) public final class EpochKey: Sendable, CustomStringConvertible {
    /// The KDF context of format version 2 (8 bytes).
    public static let context = "quire v2"
    /// The label whose keyed hash is the key commitment.
    public static let commitmentLabel = Array("quire-key-commitment-v2".utf8)
    /// The label of a slot's `member` tag (`Spec/format.md §5.1`).
    public static let slotMemberLabel = Array("quire-slot-member-v3".utf8)

    /// The subkeys of an epoch key and their KDF ids.
    public enum Subkey: Int, Sendable, CaseIterable {
        /// Seals records (id 1).
        case record = 1
        /// Computes chain heads (id 2).
        case commit = 2
        /// Seals a keyring's inner part (id 3).
        case keyring = 3
        /// Seals a commit's attestation (id 4).
        case attestation = 4
        /// Seals keyring links (id 5).
        case link = 5
        /// Derives a commit's synthetic attestation nonce (id 6), so that the
        /// attestation key is used for one purpose only (`Spec/format.md §9.2`).
        case commitNonce = 6
    }

    /// The epoch number (1 … 2³² − 1).
    public let epoch: UInt32
    /// The 32-byte epoch key.
    public let key: SymmetricKey
    /// `BLAKE2b-256(key = K, "quire-key-commitment-v2")`.
    public let commitment: [UInt8]
    /// The first six bytes of the commitment.
    public let id: KeyID
    /// The blob key of the keyring that defines this key, when known.
    public let blobKey: SymmetricKey?
    private let subkeys = Mutex<[Int: SymmetricKey]>([:])

    /// Wraps `key` for `epoch`.
    public init(epoch: UInt32, key: SymmetricKey, blobKey: SymmetricKey? = nil) {
        self.epoch = epoch
        self.key = key
        self.blobKey = blobKey
        commitment = BLAKE2b.mac(Self.commitmentLabel, key: key, byteCount: 32)
        id = KeyID(commitment: commitment)
    }

    /// The same key with `blobKey` attached.
    public func withBlobKey(_ blobKey: SymmetricKey) -> EpochKey {
        EpochKey(epoch: epoch, key: key, blobKey: blobKey)
    }

    /// The key commitment of `key`, without wrapping it.
    public static func commitment(of key: SymmetricKey) -> [UInt8] {
        BLAKE2b.mac(commitmentLabel, key: key, byteCount: 32)
    }

    /// The `member` tag a slot of kind `kind` (one this version does not
    /// define) carries for the member whose 32-byte `memberKey` it wraps to:
    /// `BLAKE2b-256(key = K, "quire-slot-member-v3" ‖ vault id ‖ memberKey ‖ kind)`,
    /// `kind` its UTF-8 bytes, last (`Spec/format.md §5.1`, `Spec/records.md §6.2`).
    /// Keyed by the epoch key, so the public part shows no member's key
    /// (thirteenth review R13-2); over the kind, so it does not show which
    /// slots of two kinds are one member's (fourteenth review R14-4).
    public func slotMemberTag(vaultID: VaultID, memberKey: [UInt8], kind: String) -> [UInt8] {
        BLAKE2b.mac(Self.slotMemberLabel + vaultID.bytes + memberKey + Array(kind.utf8), key: key, byteCount: 32)
    }

    /// The subkey `which`, derived on first use.
    ///
    /// - Throws: ``CryptoError/outOfSecureMemory(byteCount:)``.
    public func subkey(_ which: Subkey) throws(CryptoError) -> SymmetricKey {
        if let k = subkeys.withLock({ $0[which.rawValue] }) { return k }
        let derived = try KeyDerivation.derive(from: key, subkeyID: UInt64(which.rawValue), context: Self.context)
        return subkeys.withLock { cache in
            if let k = cache[which.rawValue] { return k }
            cache[which.rawValue] = derived
            return derived
        }
    }

    /// True when both wrap the same key.
    public func sameKey(as other: EpochKey) -> Bool { commitment == other.commitment }

    public var description: String { "EpochKey(epoch \(epoch), id \(id), hidden)" }
}

/// The epoch keys a reader holds, found by key id (`Spec/format.md §5.1`),
/// and the key new records are sealed under.
@_spi(Format) public struct KeySet: Sendable {
    /// Held keys by id; several only when ids collide, in ascending order of
    /// key commitment.
    public private(set) var byID: [KeyID: [EpochKey]] = [:]
    /// The key new records are sealed under, if any.
    public var writeKey: EpochKey?

    /// An empty set.
    public init() {}

    /// A set holding `single`, which is also the write key.
    public init(single: EpochKey) {
        add(single)
        writeKey = single
    }

    /// Adds `key` unless a key with the same commitment is held.
    public mutating func add(_ key: EpochKey) {
        var list = byID[key.id, default: []]
        guard !list.contains(where: { $0.sameKey(as: key) }) else { return }
        // Candidates are tried in ascending order of key commitment
        // (Spec/format.md §5.1, §9.3), whatever order they were added in.
        let index = list.firstIndex { key.commitment.lexicographicallyPrecedes($0.commitment) } ?? list.count
        list.insert(key, at: index)
        byID[key.id] = list
    }

    /// The held keys with id `id` (usually one, or none), in ascending order
    /// of key commitment: the order a reader tries them in.
    public func keys(for id: KeyID) -> [EpochKey] { byID[id] ?? [] }

    /// The held key with this commitment, if any.
    public func key(commitment: [UInt8]) -> EpochKey? {
        keys(for: KeyID(commitment: commitment)).first { $0.commitment == commitment }
    }

    /// Every held key, in no particular order.
    public var all: [EpochKey] { byID.values.flatMap { $0 } }

    /// The highest epoch held, if any.
    public var newestEpoch: UInt32? { all.map(\.epoch).max() }

    /// The blob key of the write key's keyring: the one new uploads use.
    public var blobKey: SymmetricKey? { writeKey?.blobKey }
}
