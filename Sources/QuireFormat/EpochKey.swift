public import QuireCrypto

/// The keys of one epoch: the 256-bit epoch key and the subkeys derived from
/// it for each purpose (`Spec/format.md §5.1`).
///
/// ```
/// record key  = crypto_kdf_derive_from_key(32, 1, "quire v1", epoch key)
/// commit key  = crypto_kdf_derive_from_key(32, 2, "quire v1", epoch key)
/// keyring key = crypto_kdf_derive_from_key(32, 3, "quire v1", epoch key)
/// ```
public struct EpochKey: Sendable, CustomStringConvertible {
    /// The KDF context for every epoch subkey.
    public static let context = "quire v1"

    /// The epoch number (1 for the first epoch).
    public let epoch: UInt16
    /// The epoch key itself; wrapped in key slots and carried in later keyrings.
    public let key: SymmetricKey
    /// Seals and opens sealed frames.
    public let recordKey: SymmetricKey
    /// Keys the commit MAC.
    public let commitKey: SymmetricKey
    /// Seals a keyring's inner section.
    public let keyringKey: SymmetricKey

    /// Derives the subkeys of `key` for `epoch`.
    public init(epoch: UInt16, key: SymmetricKey) {
        self.epoch = epoch
        self.key = key
        recordKey = KeyDerivation.derive(from: key, subkeyID: 1, context: Self.context)
        commitKey = KeyDerivation.derive(from: key, subkeyID: 2, context: Self.context)
        keyringKey = KeyDerivation.derive(from: key, subkeyID: 3, context: Self.context)
    }

    public var description: String { "EpochKey(epoch \(epoch), hidden)" }
}

/// The keys a reader holds: every epoch key it could unwrap (an epoch number
/// may have more than one key after concurrent rotations), the blob key, and
/// the epoch a writer seals new records under.
public struct KeySet: Sendable {
    /// Keys by epoch number.
    public private(set) var epochs: [UInt16: [EpochKey]] = [:]
    /// The key for blob ids (keyed BLAKE2b-256 of attachment content).
    public var blobKey: SymmetricKey?
    /// The epoch key new records are sealed under: the newest one held.
    public var writeKey: EpochKey?

    /// An empty set.
    public init() {}

    /// A set holding one epoch key, which is also the write key. For tests
    /// and vectors that use a raw key.
    public init(single: EpochKey, blobKey: SymmetricKey? = nil) {
        add(single)
        writeKey = single
        self.blobKey = blobKey
    }

    /// Adds `key`, ignoring a key already held for the same epoch.
    public mutating func add(_ key: EpochKey) {
        var list = epochs[key.epoch, default: []]
        if !list.contains(where: { $0.key == key.key }) { list.append(key) }
        epochs[key.epoch] = list
    }

    /// The keys held for `epoch`, possibly empty.
    public func keys(for epoch: UInt16) -> [EpochKey] { epochs[epoch] ?? [] }

    /// The highest epoch number held.
    public var newestEpoch: UInt16? { epochs.keys.max() }
}
