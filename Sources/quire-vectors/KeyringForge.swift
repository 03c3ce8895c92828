@_spi(Crypto) import QuireCrypto
@_spi(Format) import QuireFormat
@_spi(Format) import QuireKeys

/// Keyring bodies built part by part (`Spec/format.md §8.1`), for vectors
/// whose keyrings break one rule: a public part, content or inner part
/// given as bytes, a signature over something else, a nonce that is not
/// the signed one, padding that is not canonical.
enum KeyringForge {
    /// `K = {"nonce", "public", "sealed"}` from its parts.
    static func assemble(publicBytes: [UInt8], nonce: [UInt8], sealed: [UInt8]) -> [UInt8] {
        CBOREncoder.encode(.map(CBORMap(text: [("nonce", .bytes(nonce)), ("public", .bytes(publicBytes)), ("sealed", .bytes(sealed))])))
    }

    /// `I = {"content", "signature", "signer"}`.
    static func inner(content: [UInt8], signer: [UInt8], signature: [UInt8]) -> [UInt8] {
        CBOREncoder.encode(
            .map(CBORMap(text: [("content", .bytes(content)), ("signature", .bytes(signature)), ("signer", .bytes(signer))])))
    }

    /// The signature a keyring's signer makes over its public part, nonce and content.
    static func sign(_ signer: Ed25519.KeyPair, vaultID: VaultID, publicBytes: [UInt8], nonce: [UInt8], content: [UInt8]) -> [UInt8] {
        signer.sign(
            KeyringRecord.signedMessage(
                vaultID: vaultID, publicBytes: publicBytes, nonce: nonce, contentHash: BLAKE2b.hash(content, byteCount: 32)))
    }

    /// Seals `innerPadded` (already padded, or not, as the vector wants)
    /// under `key`'s keyring key with `nonce`, associated data `vault id ‖ P`.
    static func seal(innerPadded: [UInt8], key: EpochKey, vaultID: VaultID, publicBytes: [UInt8], nonce: [UInt8]) throws -> [UInt8] {
        XChaCha20Poly1305.seal(
            innerPadded, key: try key.subkey(.keyring), nonce: nonce,
            authenticating: KeyringRecord.associatedData(vaultID: vaultID, publicBytes: publicBytes))
    }

    /// A whole keyring body from a public part and content given as bytes:
    /// signed by `signer` (or given `signature`), padded unless `pad` is
    /// false, sealed under `key`.
    static func body(
        publicBytes: [UInt8], content: [UInt8], key: EpochKey, vaultID: VaultID, signer: Ed25519.KeyPair, random: any RandomSource,
        signature: [UInt8]? = nil, transformInner: (([UInt8]) -> [UInt8])? = nil, pad: Bool = true
    ) throws -> [UInt8] {
        let nonce = random.bytes(24)
        let sig = signature ?? sign(signer, vaultID: vaultID, publicBytes: publicBytes, nonce: nonce, content: content)
        var i = inner(content: content, signer: signer.publicKey, signature: sig)
        if let transformInner { i = transformInner(i) }
        if pad { Padding.pad(&i) }
        return assemble(
            publicBytes: publicBytes, nonce: nonce,
            sealed: try seal(innerPadded: i, key: key, vaultID: vaultID, publicBytes: publicBytes, nonce: nonce))
    }

    /// The public part of a keyring of `key` with `parents`: links signed by
    /// `signer` and sealed under the parents' keys unless `links` is given.
    static func publicPart(
        key: EpochKey, parents: [KeyringBuilder.Parent], vaultID: VaultID, slots: [StoredSlot], signer: Ed25519.KeyPair,
        random: any RandomSource,
        links: [[UInt8]]? = nil, escrowFree: Bool = false, required: [String] = [], epoch: UInt32? = nil,
        keyCommit: [UInt8]? = nil, unknown: CBORMap = CBORMap()
    ) throws -> KeyringPublic {
        let e = epoch ?? key.epoch
        let commit = keyCommit ?? key.commitment
        let l =
            try links
            ?? KeyringRecord.links(
                parents: parents.map { ($0.id, $0.key) }, signer: signer, vaultID: vaultID, epoch: e, keyCommit: commit, random: random)
        return KeyringPublic(
            epoch: e, keyCommit: commit, parents: parents.map(\.id), links: l, isEscrowFree: escrowFree, requiredSlotKinds: required,
            slotEntries: slots, unknownFields: unknown)
    }

    /// The parts of an existing body: P's bytes, the nonce, the sealed part.
    static func parts(of body: [UInt8]) throws -> (publicBytes: [UInt8], nonce: [UInt8], sealed: [UInt8]) {
        let record = try KeyringRecord(body: body, location: nil)
        return (record.publicBytes, record.nonce, record.sealed)
    }

    /// The padded inner part of an existing body, opened with `key`.
    static func openInner(_ body: [UInt8], key: EpochKey, vaultID: VaultID) throws -> [UInt8] {
        let p = try parts(of: body)
        return try XChaCha20Poly1305.open(
            p.sealed, key: try key.subkey(.keyring), nonce: p.nonce,
            authenticating: KeyringRecord.associatedData(vaultID: vaultID, publicBytes: p.publicBytes))
    }

    /// The same keyring's inner part sealed again under a fresh nonce with
    /// the epoch key: what anyone holding that key can make without the
    /// signer (issue 12 §1). The signature covers the nonce, so it no longer
    /// verifies.
    static func reseal(_ body: [UInt8], key: EpochKey, vaultID: VaultID, random: any RandomSource) throws -> [UInt8] {
        let p = try parts(of: body)
        let inner = try openInner(body, key: key, vaultID: vaultID)
        let nonce = random.bytes(24)
        return assemble(
            publicBytes: p.publicBytes, nonce: nonce,
            sealed: try seal(innerPadded: inner, key: key, vaultID: vaultID, publicBytes: p.publicBytes, nonce: nonce))
    }
}
