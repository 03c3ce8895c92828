import Foundation
import QuireCrypto
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
}
