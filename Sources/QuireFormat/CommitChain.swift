public import QuireCrypto

/// The keyed hash chain that commits bind (`Spec/format.md §9`).
///
/// Every frame between two commits contributes its *summary*: its 12 header
/// bytes followed by the 16-byte trailer that ends its body (the AEAD tag of
/// a sealed frame, the checksum of a plaintext frame). For commit k:
///
/// ```
/// D_k = BLAKE2b-256(summary_1 ‖ … ‖ summary_n)            (unkeyed)
/// h_k = BLAKE2b-128(key = commit key of the commit's epoch,
///                   vault id ‖ h_(k-1) ‖ D_k ‖ commit header bytes 0..<8)
/// ```
///
/// with h_0 sixteen zero bytes. The commit frame's body is h_k.
public enum CommitChain {
    /// Length of a chain head (a commit body), in bytes.
    public static let headByteCount = 16
    /// Length of the digest of a commit's frames, in bytes.
    public static let digestByteCount = 32
    /// The head before the first commit.
    public static let genesisHead = [UInt8](repeating: 0, count: headByteCount)

    /// Accumulates the summaries of the frames of one commit.
    public struct Digest: ~Copyable {
        private var hasher = BLAKE2b.Hasher(byteCount: CommitChain.digestByteCount)
        /// Number of frames added.
        public private(set) var frameCount = 0

        /// An empty digest.
        public init() {}

        /// Adds one frame's summary: its 12-byte header and 16-byte trailer.
        public mutating func add(header: [UInt8], trailer: [UInt8]) {
            precondition(header.count == FrameHeader.byteCount && trailer.count == FrameHeader.trailerByteCount)
            hasher.update(header)
            hasher.update(trailer)
            frameCount += 1
        }

        /// The 32-byte digest D_k.
        public consuming func finalize() -> [UInt8] {
            hasher.finalize()
        }

        /// The 32-byte digest D_k, leaving this digest empty for the next commit.
        public mutating func take() -> [UInt8] {
            let out = hasher.finalize()
            self = Digest()
            return out
        }
    }

    /// The chain head h_k for a commit.
    ///
    /// - Parameters:
    ///   - commitKey: the commit key of the commit frame's epoch.
    ///   - previousHead: h_(k-1), 16 bytes.
    ///   - digest: D_k, 32 bytes.
    ///   - commitHeader: the commit frame's header.
    public static func head(
        commitKey: SymmetricKey, vaultID: VaultID, previousHead: [UInt8], digest: [UInt8], commitHeader: FrameHeader
    ) -> [UInt8] {
        var mac = BLAKE2b.Hasher(byteCount: headByteCount, key: commitKey)
        mac.update(vaultID.bytes)
        mac.update(previousHead)
        mac.update(digest)
        mac.update(commitHeader.fieldBytes)
        return mac.finalize()
    }

    /// The header of a commit frame under `epoch`.
    public static func commitHeader(epoch: UInt16) -> FrameHeader {
        FrameHeader(kind: .commit, flags: 0, epoch: epoch, bodyLength: UInt32(headByteCount))
    }
}
