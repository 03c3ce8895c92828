@_spi(Crypto) public import QuireCrypto

/// The commit chain and commit attestations (`Spec/format.md §9`).
///
/// Each commit covers the frames since the previous one. Its *group digest*
/// `D` is the BLAKE2b-256 of their summaries (header ‖ body hash, or header ‖
/// tag for an attachment chunk). Its body is `h_k (32) ‖ h_(k−1) (32) ‖
/// nonce (24) ‖ sealed attestation (96 + 16)`: the head it extends is stored
/// explicitly, so a reader links commits through a map of stored heads, and
/// the attestation — the signer's Ed25519 public key and its signature over
/// `vault id ‖ key commitment ‖ h_(k−1) ‖ D`, or 96 zero bytes for an
/// unattested commit — is sealed under the attestation key, with
/// `ad = vault id ‖ commit header fields ‖ h_(k−1) ‖ D` and a synthetic nonce
/// derived under the commit nonce key from that `ad` and the attestation.
/// The head covers those 136 stored bytes (sixth review R6-1):
///
/// ```
/// h_k = BLAKE2b-256(key = commit key, "quire-chain-v3" ‖ vault id ‖ h_(k−1) ‖ D ‖ commit header fields ‖ body[64..<200])
/// ```
@_spi(Format) public enum CommitChain {
    /// Length of a chain head, in bytes.
    public static let headByteCount = 32
    /// Length of a group digest, in bytes.
    public static let digestByteCount = 32
    /// Length of an attestation's plaintext: signer (32) ‖ signature (64).
    public static let attestationByteCount = 96
    /// Length of a commit body: head ‖ previous head ‖ nonce ‖ attestation ‖ tag (200).
    public static let bodyByteCount =
        2 * headByteCount + XChaCha20Poly1305.nonceByteCount + attestationByteCount
        + XChaCha20Poly1305.tagByteCount
    /// Where the sealed attestation's nonce starts in a commit body.
    static let nonceOffset = 2 * headByteCount
    /// Where the sealed attestation starts in a commit body.
    static let sealedOffset = nonceOffset + XChaCha20Poly1305.nonceByteCount
    /// Length of a commit body's stored attestation: nonce ‖ sealed attestation (136).
    package static let storedAttestationByteCount = bodyByteCount - nonceOffset

    /// The stored attestation a commit body holds (bytes 64..<200: the nonce
    /// and the sealed attestation), which its head covers.
    package static func storedAttestation(body: [UInt8]) -> [UInt8] {
        precondition(body.count == bodyByteCount)
        return Array(body[nonceOffset...])
    }

    /// The previous head `h_(k−1)` a commit body stores (bytes 32..<64).
    public static func storedPreviousHead(body: [UInt8]) -> [UInt8] {
        precondition(body.count == bodyByteCount)
        return Array(body[headByteCount..<nonceOffset])
    }
    /// `h_0`: the head before the first commit.
    public static let genesisHead = [UInt8](repeating: 0, count: headByteCount)

    static let chainLabel = Array("quire-chain-v3".utf8)
    static let nonceLabel = Array("quire-commit-nonce-v3".utf8)
    static let signatureLabel = Array("quire-commit-v2".utf8)

    /// Builds a group digest from frame summaries.
    public struct Digest: ~Copyable {
        private var hasher = BLAKE2b.Hasher(byteCount: CommitChain.digestByteCount)
        /// Summaries added so far.
        public private(set) var frameCount = 0

        /// An empty digest.
        public init() {}

        /// Adds one frame's summary: its 16 header bytes and its trailer (the
        /// 32-byte body hash, or a chunk's 16-byte tag).
        public mutating func add(header: [UInt8], trailer: [UInt8]) {
            precondition(header.count == FrameHeader.byteCount && (trailer.count == 32 || trailer.count == 16))
            hasher.update(header)
            hasher.update(trailer)
            frameCount += 1
        }

        /// The digest.
        public consuming func finalize() -> [UInt8] {
            hasher.finalize()
        }

        /// The digest so far, and a fresh start.
        public mutating func take() -> [UInt8] {
            let out = hasher.finalize()
            self = Digest()
            return out
        }
    }

    /// The head `h_k` of a commit, over its stored attestation
    /// (`nonce ‖ sealed`, 136 bytes: ``storedAttestation(body:)``).
    ///
    /// - Throws: ``FormatError/outOfGuardedMemory``.
    public static func head(
        key: EpochKey, vaultID: VaultID, previousHead: [UInt8], digest: [UInt8], commitHeader: FrameHeader, storedAttestation: [UInt8]
    ) throws(FormatError) -> [UInt8] {
        precondition(storedAttestation.count == storedAttestationByteCount)
        let commitKey: SymmetricKey
        do { commitKey = try key.subkey(.commit) } catch { throw .outOfGuardedMemory }
        var mac = BLAKE2b.Hasher(byteCount: headByteCount, key: commitKey)
        mac.update(chainLabel)
        mac.update(vaultID.bytes)
        mac.update(previousHead)
        mac.update(digest)
        mac.update(commitHeader.fieldBytes)
        mac.update(storedAttestation)
        return mac.finalize()
    }

    /// The head `h_k` a commit `body` (200 bytes) should store, computed from
    /// `previousHead` over `digest` and the body's stored attestation.
    ///
    /// - Throws: ``FormatError/outOfGuardedMemory``.
    package static func head(
        key: EpochKey, vaultID: VaultID, previousHead: [UInt8], digest: [UInt8], commitHeader: FrameHeader, body: [UInt8]
    ) throws(FormatError) -> [UInt8] {
        try head(
            key: key, vaultID: vaultID, previousHead: previousHead, digest: digest, commitHeader: commitHeader,
            storedAttestation: storedAttestation(body: body))
    }

    /// The header of a commit made with `keyID`.
    public static func commitHeader(keyID: KeyID) -> FrameHeader {
        FrameHeader(kind: .commit, flags: 0, keyID: keyID, bodyLength: UInt32(bodyByteCount))
    }

    /// The message a member signs to attest a group at its place in the
    /// chain: `"quire-commit-v2" ‖ vault id ‖ key commitment ‖ h_(k−1) ‖ D`
    /// (`Spec/format.md §9.2`), the key commitment being that of the key the
    /// commit frame is sealed under. The key is signed so that an epoch-key
    /// holder cannot re-seal the group's commit under another key it holds
    /// and keep the attestation; the previous head so that a group moved, or
    /// a chain recomputed under an epoch key, cannot keep it either.
    public static func signedMessage(vaultID: VaultID, keyCommitment: [UInt8], previousHead: [UInt8], digest: [UInt8]) -> [UInt8] {
        precondition(keyCommitment.count == 32 && previousHead.count == headByteCount && digest.count == digestByteCount)
        return signatureLabel + vaultID.bytes + keyCommitment + previousHead + digest
    }

    /// The 96-byte attestation by `signer` of the group `digest` extending
    /// `previousHead` in a commit sealed under the key with commitment `keyCommitment`.
    public static func attestation(
        keyCommitment: [UInt8], previousHead: [UInt8], digest: [UInt8], vaultID: VaultID, signer: Ed25519.KeyPair
    ) -> [UInt8] {
        signer.publicKey
            + signer.sign(signedMessage(vaultID: vaultID, keyCommitment: keyCommitment, previousHead: previousHead, digest: digest))
    }

    /// True when the 96-byte attestation `plain` is a signature over the group
    /// `digest` extending `previousHead` under the key with commitment
    /// `keyCommitment` (merge carries one only there).
    public static func attestationSigns(
        _ plain: [UInt8], keyCommitment: [UInt8], previousHead: [UInt8], digest: [UInt8], vaultID: VaultID
    ) -> Bool {
        guard plain.count == attestationByteCount, plain != unattested else { return false }
        return Ed25519.verify(
            signature: Array(plain[32..<96]),
            message: signedMessage(vaultID: vaultID, keyCommitment: keyCommitment, previousHead: previousHead, digest: digest),
            publicKey: Array(plain[0..<32]))
    }

    /// The 96 zero bytes of an unattested commit.
    public static let unattested = [UInt8](repeating: 0, count: attestationByteCount)

    /// The associated data of a commit's sealed attestation:
    /// `vault id ‖ header fields ‖ h_(k−1) ‖ D` (`Spec/format.md §9.2`).
    static func attestationAD(vaultID: VaultID, commitHeader: FrameHeader, previousHead: [UInt8], digest: [UInt8]) -> [UInt8] {
        vaultID.bytes + commitHeader.fieldBytes + previousHead + digest
    }

    /// The stored attestation `nonce ‖ AEAD(attestation key, nonce, attestation, ad)`
    /// (136 bytes) of a commit extending `previousHead` over `digest`.
    ///
    /// - Throws: ``FormatError/outOfGuardedMemory``.
    package static func sealAttestation(
        _ attestation: [UInt8], previousHead: [UInt8], digest: [UInt8], key: EpochKey, vaultID: VaultID, commitHeader: FrameHeader
    ) throws(FormatError) -> [UInt8] {
        precondition(previousHead.count == headByteCount && digest.count == digestByteCount && attestation.count == attestationByteCount)
        let attestationKey: SymmetricKey
        let nonceKey: SymmetricKey
        do {
            attestationKey = try key.subkey(.attestation)
            nonceKey = try key.subkey(.commitNonce)
        } catch {
            throw .outOfGuardedMemory
        }
        let ad = attestationAD(vaultID: vaultID, commitHeader: commitHeader, previousHead: previousHead, digest: digest)
        let nonce = syntheticNonce(key: nonceKey, ad: ad, attestation: attestation)
        return nonce + XChaCha20Poly1305.seal(attestation, key: attestationKey, nonce: nonce, authenticating: ad)
    }

    /// The whole commit body: `h_k ‖ h_(k−1) ‖ nonce ‖ sealed attestation`,
    /// the attestation sealed first and the head computed over it
    /// (`Spec/format.md §9.2`).
    ///
    /// - Throws: ``FormatError/outOfGuardedMemory``.
    public static func body(
        previousHead: [UInt8], digest: [UInt8], attestation: [UInt8], key: EpochKey, vaultID: VaultID, commitHeader: FrameHeader
    ) throws(FormatError) -> [UInt8] {
        let stored = try sealAttestation(
            attestation, previousHead: previousHead, digest: digest, key: key, vaultID: vaultID, commitHeader: commitHeader)
        let head = try head(
            key: key, vaultID: vaultID, previousHead: previousHead, digest: digest, commitHeader: commitHeader, storedAttestation: stored)
        return head + previousHead + stored
    }

    /// `BLAKE2b-192(key = commit nonce key, "quire-commit-nonce-v3" ‖ ad ‖ A)`:
    /// one nonce per (associated data, attestation), so commits are
    /// deterministic and a nonce never repeats with another plaintext or
    /// other associated data. The nonce key is its own subkey (KDF id 6),
    /// not the attestation key the AEAD uses.
    static func syntheticNonce(key: SymmetricKey, ad: [UInt8], attestation: [UInt8]) -> [UInt8] {
        var h = BLAKE2b.Hasher(byteCount: XChaCha20Poly1305.nonceByteCount, key: key)
        h.update(nonceLabel)
        h.update(ad)
        h.update(attestation)
        return h.finalize()
    }

    /// What a commit's sealed attestation says.
    public enum Attestation: Sendable, Equatable {
        /// 96 zero bytes: nobody attested the group.
        case unattested
        /// `signer` (an Ed25519 public key) signed the group digest; the
        /// signature verified. Whether the signer is a member is the key
        /// layer's to decide.
        case signed(signer: [UInt8])
        /// The box does not open, the nonce is not synthetic, or the
        /// signature does not verify.
        case failed(reason: String)
    }

    /// Opens and checks the attestation of a commit body (200 bytes) over
    /// group digest `digest` extending `previousHead` (the head the commit's
    /// head verified from, `Spec/format.md §9.3`).
    ///
    /// `signatureVerified`: the signature over these very inputs is known
    /// to verify (a prefix commit of this device's index cache,
    /// `Spec/index-cache.md §5`, "The chain"), so it is not verified again;
    /// the box is still opened and its nonce checked, which gives the signer.
    ///
    /// `own`: a key pair whose signatures are recognized by signing the
    /// message again. Ed25519 signing is deterministic (RFC 8032 §5.1.6),
    /// so a stored signature by `own`'s public key that equals `own`'s
    /// signature of the message is that valid signature; one that differs
    /// (another signer, another implementation) is verified as any other.
    /// A signature costs about a third of a verification: a merge checks
    /// the merging member's own commits so (`Spec/merge.md §3.2`).
    public static func checkAttestation(
        body: [UInt8], previousHead: [UInt8], digest: [UInt8], key: EpochKey, vaultID: VaultID, commitHeader: FrameHeader,
        signatureVerified: Bool = false, recognizing own: Ed25519.KeyPair? = nil
    ) -> Attestation {
        guard body.count == bodyByteCount else { return .failed(reason: "the commit body is not \(bodyByteCount) bytes") }
        guard let attestationKey = try? key.subkey(.attestation), let nonceKey = try? key.subkey(.commitNonce) else {
            return .failed(reason: "out of guarded memory")
        }
        let nonce = Array(body[nonceOffset..<sealedOffset])
        let sealed = Array(body[sealedOffset...])
        let ad = attestationAD(vaultID: vaultID, commitHeader: commitHeader, previousHead: previousHead, digest: digest)
        guard let plain = try? XChaCha20Poly1305.open(sealed, key: attestationKey, nonce: nonce, authenticating: ad) else {
            return .failed(reason: "the sealed attestation does not open")
        }
        // The nonce is derived from the plaintext for both forms
        // (Spec/format.md §9.4): one commit body per attestation, zeros
        // included, so a nonce that is not derived is a failure first.
        guard constantTimeEqual(syntheticNonce(key: nonceKey, ad: ad, attestation: plain), nonce) else {
            return .failed(reason: "the attestation's nonce is not derived from it")
        }
        if plain == unattested { return .unattested }
        let signer = Array(plain[0..<32])
        if signatureVerified { return .signed(signer: signer) }
        let signature = Array(plain[32..<96])
        let message = signedMessage(vaultID: vaultID, keyCommitment: key.commitment, previousHead: previousHead, digest: digest)
        if let own, constantTimeEqual(own.publicKey, signer), constantTimeEqual(own.sign(message), signature) {
            return .signed(signer: signer)
        }
        guard Ed25519.verify(signature: signature, message: message, publicKey: signer) else {
            return .failed(reason: "the signature does not verify")
        }
        return .signed(signer: signer)
    }

    /// The plaintext attestation (96 bytes) of a commit body extending
    /// `previousHead` over `digest`, if it opens under `key` (used by merge
    /// and compaction to carry it).
    public static func openAttestation(
        body: [UInt8], previousHead: [UInt8], digest: [UInt8], key: EpochKey, vaultID: VaultID, commitHeader: FrameHeader
    ) -> [UInt8]? {
        guard body.count == bodyByteCount, let attestationKey = try? key.subkey(.attestation) else { return nil }
        let nonce = Array(body[nonceOffset..<sealedOffset])
        let sealed = Array(body[sealedOffset...])
        let ad = attestationAD(vaultID: vaultID, commitHeader: commitHeader, previousHead: previousHead, digest: digest)
        return try? XChaCha20Poly1305.open(sealed, key: attestationKey, nonce: nonce, authenticating: ad)
    }
}
