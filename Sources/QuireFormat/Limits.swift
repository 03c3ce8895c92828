/// The limits every reader checks before it uses a length, count or size
/// (`Spec/format.md §11`). Writers never produce anything larger.
@_spi(Format) public enum Limits {
    /// Largest frame body, in bytes (17 MiB): a 16 MiB payload with its
    /// padding, nonce, tag and body hash fits.
    public static let maxFrameBodyByteCount = (1 << 24) + (1 << 20)
    /// Smallest frame body any frame may have, in bytes: every body ends with
    /// a 16-byte tag or a 32-byte body hash (`Spec/format.md §4.2`).
    public static let minFrameBodyByteCount = 32
    /// Largest record plaintext after decompression, in bytes (16 MiB).
    public static let maxRecordByteCount = 1 << 24
    /// Attachment chunk size, in bytes (64 KiB): every chunk of a stream but
    /// the last holds exactly this many bytes of the padded stream.
    public static let chunkByteCount = 1 << 16
    /// Largest attachment, in bytes (1 TiB).
    public static let maxBlobByteCount: UInt64 = 1 << 40
    /// Deepest CBOR nesting accepted.
    public static let maxCBORDepth = 16
    /// Most slots in one keyring.
    public static let maxSlotsPerKeyring = 256
    /// Readers of a keyring — device members, escrow recipients and
    /// passphrase slots together — so that a new epoch wrapping to each,
    /// with the recovery slot, fits in ``maxSlotsPerKeyring``
    /// (`Spec/format.md §8.4` rule 1, §11).
    public static let maxReadersPerKeyring = 255
    /// Most members, removed members, escrow recipients or retired keys
    /// listed in one keyring.
    public static let maxKeyringListCount = 4096
    /// Most parents a keyring or a revision may name (and so most links and
    /// parent keys a keyring carries).
    public static let maxParentCount = 64
    /// Most slot kinds a keyring may require (`Spec/format.md §8.2`).
    public static let maxRequiredSlotKinds = 16
    /// Most aliases (earlier blob ids) a manifest may list.
    public static let maxAliasCount = 64
    /// Largest epoch number (epochs are 32-bit).
    public static let maxEpoch: UInt32 = .max
    /// Largest Argon2id operations limit a reader will run.
    public static let maxArgon2OpsLimit: UInt64 = 8
    /// Largest Argon2id memory limit a reader will allocate, in bytes
    /// (256 MiB, what a phone can spend).
    public static let maxArgon2MemLimitBytes: UInt64 = 1 << 28
    /// Smallest Argon2id memory limit a reader accepts, in bytes (libsodium's
    /// minimum; below the writer floor so that vectors run fast).
    public static let minArgon2MemLimitBytes: UInt64 = 8192
    /// Fewest Argon2id passes a writer may choose (`Spec/keys.md §2.3`).
    public static let writerMinArgon2OpsLimit: UInt64 = 2
    /// Smallest Argon2id memory a writer may choose, in bytes (64 MiB).
    public static let writerMinArgon2MemLimitBytes: UInt64 = 1 << 26
    /// Most distinct Argon2id runs (distinct salt and cost) each of the two
    /// passes of one attempt to open a vault with a passphrase may make: the
    /// newest triples first, then, if none names the derived key, the first
    /// ones in file order; twice this in all (`Spec/keys.md §2.3`).
    public static let maxPassphraseDerivations = 4
}
