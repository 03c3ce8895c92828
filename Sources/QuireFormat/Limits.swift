/// The limits every reader checks before it uses a length, count or size
/// (`Spec/format.md §11`). Writers never produce anything larger.
public enum Limits {
    /// Largest frame body, in bytes (17 MiB): a 16 MiB payload with its
    /// padding, nonce and tag fits.
    public static let maxFrameBodyByteCount = (1 << 24) + (1 << 20)
    /// Largest record plaintext after decompression, in bytes (16 MiB).
    public static let maxRecordByteCount = 1 << 24
    /// Attachment chunk payload size, in bytes (64 KiB). Fixed in version 1.
    public static let chunkByteCount = 1 << 16
    /// Largest attachment, in bytes (1 TiB).
    public static let maxBlobByteCount: UInt64 = 1 << 40
    /// Deepest CBOR nesting accepted.
    public static let maxCBORDepth = 16
    /// Most slots in one keyring.
    public static let maxSlotsPerKeyring = 256
    /// Most members, removed devices or history entries listed in one keyring.
    public static let maxKeyringListCount = 4096
    /// Most parents a keyring or a revision may name.
    public static let maxParentCount = 64
    /// Largest Argon2id operations limit a reader will run.
    public static let maxArgon2OpsLimit: UInt64 = 8
    /// Largest Argon2id memory limit a reader will allocate, in bytes (1 GiB).
    public static let maxArgon2MemLimitBytes: UInt64 = 1 << 30
    /// Smallest Argon2id memory limit accepted, in bytes (libsodium's minimum).
    public static let minArgon2MemLimitBytes: UInt64 = 8192
    /// Most distinct Argon2id runs (distinct salt and cost) one attempt to
    /// open a vault with a passphrase may make (`Spec/keys.md §2.3`).
    public static let maxPassphraseDerivations = 4
}
