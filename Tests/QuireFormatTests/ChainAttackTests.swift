import Foundation
@_spi(Testing) import QuireCrypto
import QuireFormat
import QuireSystem
import Testing

// Findings of the review of format 2 about commits and sealed records
// (`Spec/threat-model.md §6.4`), each as an attack that failed before its fix.
@Suite struct ChainAttackTests {
    /// L5: the attestation key sealed `A` and also keyed the BLAKE2b that
    /// derives the commit's synthetic nonce. The nonce now comes from its own
    /// subkey, `KDF(K, 6, "quire v2")` (`Spec/format.md §5.1`, §9.2).
    @Test func attackAttestationKeyDoublesAsNonceKey() throws {
        let key = testEpochKey()
        let header = CommitChain.commitHeader(keyID: key.id)
        let head = counting(32, from: 40)
        let signer = try Ed25519.KeyPair(using: SeededRandom(label: "L5 signer"))
        let attestation = CommitChain.attestation(digest: counting(32, from: 7), vaultID: countingVaultID, signer: signer)
        for plain in [CommitChain.unattested, attestation] {
            let body = try CommitChain.body(head: head, attestation: plain, key: key, vaultID: countingVaultID, commitHeader: header)
            let nonce = Array(body[32..<56])
            let message = Array("quire-commit-nonce-v2".utf8) + head + plain
            let nonceKey = try KeyDerivation.derive(from: key.key, subkeyID: 6, context: "quire v2")
            #expect(nonce == BLAKE2b.mac(message, key: nonceKey, byteCount: 24))
            #expect(nonce != BLAKE2b.mac(message, key: try key.subkey(.attestation), byteCount: 24))
        }
    }

    /// L1: XChaCha20-Poly1305 is not key-committing. A member that grinds two
    /// epoch keys sharing a key id (here `CollidingKeys`) builds one sealed
    /// body that authenticates under both, to two payloads: with a body hash
    /// over the body alone, a reader holding both keys shows one payload and a
    /// reader holding the other shows the other. The body hash now covers the
    /// full key commitment (`Spec/format.md §5.2`), so the body opens under
    /// the one key it names, whatever keys the reader holds.
    @Test func attackRecordOpensUnderTwoKeys() throws {
        let k1 = CollidingKeys.first(), k2 = CollidingKeys.second()
        #expect(k1.id == k2.id)
        let header = FrameHeader(kind: .entryRevision, flags: FrameHeader.sealedFlag, keyID: k1.id, bodyLength: UInt32(24 + 32 + 16 + 32))
        let ad = countingVaultID.bytes + header.fieldBytes
        let rk1 = try k1.subkey(.record), rk2 = try k2.subkey(.record)
        let made = try #require(TwoKeyCiphertext.make(key1: rk1, key2: rk2, ad: ad, tail: Array("reader one sees".utf8)))
        // The primitive: one nonce, ciphertext and tag; two keys; two plaintexts.
        let p1 = try XChaCha20Poly1305.open(made.sealed, key: rk1, nonce: made.nonce, authenticating: ad)
        let p2 = try XChaCha20Poly1305.open(made.sealed, key: rk2, nonce: made.nonce, authenticating: ad)
        #expect(p1 != p2 && p1.last == 0x80 && p2.last == 0x80)
        // The frame as the holder of k1 writes it: the body hash names k1.
        let sealedPart = made.nonce + made.sealed
        let body = sealedPart + BLAKE2b.hash(k1.commitment + sealedPart, byteCount: 32)
        let location = FrameLocation(offset: 64, index: 0)
        func open(_ keys: [EpochKey]) throws -> [UInt8] {
            try body.withUnsafeBytes { raw in
                try SealedFrame.open(body: raw, header: header, location: location, keys: keys, vaultID: countingVaultID, context: DecompressionContext())
            }
        }
        // k2 has the smaller commitment, so a reader holding both tries it first.
        #expect(try open([k2, k1]) == Array(p1.dropLast()))
        #expect(try open([k1]) == Array(p1.dropLast()))
        do {
            _ = try open([k2])
            Issue.record("the body opened under a key its body hash does not name")
        } catch let error as FormatError {
            #expect(error == .authenticationFailed(location))
        }
    }
}
