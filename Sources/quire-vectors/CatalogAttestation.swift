@_spi(Crypto) import QuireCrypto
@_spi(Format) import QuireFormat
@_spi(Format) import QuireKeys
import QuireVectors

/// Commit attestations (`Spec/format.md §9.4`) and unknown critical kinds
/// (§4.3: fatal only inside verified and attested commits).
extension Catalog {
    /// Replaces the body of the last commit frame, at `index` in `bytes`,
    /// with `h ‖ previous head ‖ nonce ‖ AEAD(attestation key, nonce,
    /// attestation, ad)`, its head `h` computed over that stored attestation
    /// (`Spec/format.md §9.2`), so the head verifies and only the attestation
    /// is judged.
    static func rewriteCommit(_ bytes: inout [UInt8], _ b: VectorBuilder, commit index: Int, attestation: [UInt8], nonce: [UInt8]) throws {
        let f = b.frame(index)
        let key = b.keys.writeKey!
        let g = b.vault.structure.groups.first { $0.commitFrame == index }!
        precondition(g.commitFrame == b.vault.structure.groups.last!.commitFrame, "only the last commit's head can be recomputed")
        let previous = g.storedPreviousHead
        let ad = attestationAD(b, group: g)
        let stored = nonce + XChaCha20Poly1305.seal(attestation, key: try key.subkey(.attestation), nonce: nonce, authenticating: ad)
        let head = try CommitChain.head(
            key: key, vaultID: b.vaultID, previousHead: previous, digest: g.digest, commitHeader: f.header, storedAttestation: stored)
        bytes.replaceSubrange(Int(f.bodyOffset)..<Int(f.end), with: head + previous + stored)
    }

    /// `vault id ‖ commit header fields ‖ h_(k−1) ‖ D`: the associated data
    /// of group `g`'s sealed attestation (`Spec/format.md §9.2`).
    static func attestationAD(_ b: VectorBuilder, group g: CommitGroup) -> [UInt8] {
        b.vaultID.bytes + b.frame(g.commitFrame).header.fieldBytes + g.storedPreviousHead + g.digest
    }

    static var attestations: [Make] {
        [
            {
                let b = try VectorBuilder("success-unattested-commit")
                try b.commit([.entry(b.entry("nobody vouches for this")), .entry(b.entry("nor this"))], attest: CommitAttestation.none)
                try b.commit([.entry(b.entry("attested again"))])
                return try b.vector(
                    "success",
                    comment:
                        "a commit whose sealed attestation is 96 zero bytes: not an issue, its two records are released verified but unattested (unattested: 2)"
                )
            },
            {
                let b = try VectorBuilder("damaged-attestation-by-outsider")
                let outsider = try Ed25519.KeyPair(seed: SecureBytes(randomCount: 32, using: b.random))
                let idx = try b.commit([.entry(b.entry("signed by a key that is no member"))], attest: .sign(outsider))
                return try b.vector(
                    "damaged",
                    comment:
                        "a verified commit whose attestation is signed by a key that is no member of any trusted keyring: attestation_failed, its record is unattested",
                    issues: [("attestation_failed", b.offset(idx[0]! + 1))])
            },
            {
                let b = try VectorBuilder("damaged-attestation-over-other-digest")
                let wrong =
                    b.signer.publicKey
                    + b.signer.sign(
                        CommitChain.signedMessage(
                            vaultID: b.vaultID, keyCommitment: b.keys.writeKey!.commitment, previousHead: b.vault.chainTipHead,
                            digest: b.random.bytes(32)))
                let idx = try b.commit([.entry(b.entry("a signature over another group"))], attest: .carried(wrong))
                return try b.vector(
                    "damaged",
                    comment: "an attestation by the recovery key over another group digest D: the signature does not verify for this group",
                    issues: [("attestation_failed", b.offset(idx[0]! + 1))])
            },
            {
                let b = try VectorBuilder("damaged-attestation-other-vault")
                let d = try b.commit([.entry(b.entry("signed for another vault id"))], attest: CommitAttestation.none)
                var bytes = try b.bytes()
                let g = b.vault.structure.groups.last!
                let a =
                    b.signer.publicKey
                    + b.signer.sign(
                        CommitChain.signedMessage(
                            vaultID: VaultID(using: b.random), keyCommitment: b.keys.writeKey!.commitment,
                            previousHead: g.storedPreviousHead, digest: g.digest))
                try rewriteCommit(&bytes, b, commit: d[0]! + 1, attestation: a, nonce: syntheticNonce(b, group: g, attestation: a))
                return try b.vector(
                    "damaged",
                    comment:
                        "the signed message binds the vault id (\"quire-commit-v2\" ‖ vault id ‖ key commitment ‖ h_(k−1) ‖ D): a signature made for another vault id does not verify",
                    body: bytes,
                    issues: [("attestation_failed", b.offset(d[0]! + 1))])
            },
            {
                let b = try VectorBuilder("damaged-attestation-random-nonce")
                let idx = try b.commit([.entry(b.entry("a nonce that is not synthetic"))])
                var bytes = try b.bytes()
                let g = b.vault.structure.groups.last!
                try rewriteCommit(
                    &bytes, b, commit: idx[0]! + 1,
                    attestation: CommitChain.attestation(
                        keyCommitment: b.keys.writeKey!.commitment, previousHead: g.storedPreviousHead, digest: g.digest,
                        vaultID: b.vaultID, signer: b.signer), nonce: b.random.bytes(24))
                return try b.vector(
                    "damaged",
                    comment:
                        "a valid attestation sealed under a random nonce: the box opens, but the nonce is not BLAKE2b-192(nonce key, \"quire-commit-nonce-v3\" ‖ ad ‖ A)",
                    body: bytes,
                    issues: [("attestation_failed", b.offset(idx[0]! + 1))])
            },
            {
                let b = try VectorBuilder("damaged-attestation-zeros-random-nonce")
                let idx = try b.commit([.entry(b.entry("unattested, but with a random nonce"))], attest: CommitAttestation.none)
                var bytes = try b.bytes()
                try rewriteCommit(&bytes, b, commit: idx[0]! + 1, attestation: CommitChain.unattested, nonce: b.random.bytes(24))
                return try b.vector(
                    "damaged",
                    comment:
                        "96 zero bytes sealed under a random nonce: an unattested commit must use the synthetic nonce too, or it is attestation_failed",
                    body: bytes,
                    issues: [("attestation_failed", b.offset(idx[0]! + 1))])
            },
            {
                let b = try VectorBuilder("damaged-attestation-box-flipped")
                let idx = try b.commit([.entry(b.entry("attested, then a bit flipped in the sealed attestation"))])
                try b.commit([.entry(b.entry("the next commit"))])
                var bytes = try b.bytes()
                let commit = b.frame(idx[0]! + 1)
                Edit.flipBit(&bytes, byte: Int(commit.bodyOffset) + 32 + 24 + 40, bit: 3)
                return try b.vector(
                    "damaged",
                    comment:
                        "a flipped bit in a commit's sealed attestation, which the head covers (format.md §9.2; sixth review R6-1: before, the head still verified and the commit read as verified but unattested, attestation_failed, which merge then dropped). Its head no longer verifies; the next commit links to its stored head, and nothing in its group looks damaged, so it is tampered (commit_tampered, its record unverified, writes refused until a merge or a compaction); the next commit's link shows nothing, and it joins the chain verified and attested",
                    body: bytes,
                    issues: [("commit_tampered", commit.location.offset)])
            },
            {
                let b = try VectorBuilder("damaged-attestation-nonce-flipped")
                let idx = try b.commit([.entry(b.entry("attested, then a bit flipped in the nonce"))])
                var bytes = try b.bytes()
                let commit = b.frame(idx[0]! + 1)
                Edit.flipBit(&bytes, byte: Int(commit.bodyOffset) + 64 + 5, bit: 0)
                return try b.vector(
                    "damaged",
                    comment:
                        "a flipped bit in the last commit's nonce, which the head covers (format.md §9.2; sixth review R6-1: before, the head still verified and the attestation failed): a mismatch, its record unverified",
                    body: bytes,
                    issues: [("commit_mismatch", commit.location.offset)])
            },
            {
                let b = try VectorBuilder("damaged-attestation-by-member-of-untrusted-keyring")
                let outsider = try Ed25519.KeyPair(seed: SecureBytes(randomCount: 32, using: b.random))
                let members = b.members + [KeyringMember(role: "device", publicKey: outsider.publicKey, name: "Intruder", added: b.now)]
                let (k2, body) = try child(b, members: members, signer: outsider)
                let i = try b.addKeyring(k2, body, trust: false)
                let idx = try b.commit([.entry(b.entry("attested by the intruder"))], attest: .sign(outsider))
                return try b.vector(
                    "damaged",
                    comment:
                        "a commit attested by a key listed as a member only in an untrusted keyring: the signer must be a member of a trusted keyring",
                    issues: [("keyring_unauthenticated", b.offset(i)), ("attestation_failed", b.offset(idx[0]! + 1))])
            },
            {
                let b = try VectorBuilder("recovered-commit-rebuilt-unattested")
                try b.commit([.entry(b.entry("first"))])
                try b.commit([.entry(b.entry("second, unattested"))], attest: CommitAttestation.none)
                var bytes = try b.bytes()
                let commit = bytes.count - commitLength
                for i in 0..<12 { bytes[commit + i] ^= 0x77 }
                return try b.vector(
                    "recovered",
                    comment:
                        "commit recovery rebuilds the header of an unattested last commit; its attestation is checked as usual (unattested, not an issue)",
                    body: bytes,
                    issues: [("frame_repaired", UInt64(commit))])
            },
            {
                let b = try VectorBuilder("success-attested-by-removed-device-before-removal", deviceSeed: sam, moreDeviceSeeds: [lost])
                b.attestation = .sign(try VectorBuilder.device(lost))
                try b.commit([.entry(b.entry("written on the laptop before it was lost"))])
                b.attestation = .sign(b.signer)
                let kept = [b.members[0], b.members[1]]
                let (k2, removal) = try child(b, members: kept, removed: [b.members[2]], reason: "remove")
                try b.addKeyring(k2, removal, members: kept)
                try b.commit([.entry(b.entry("after the removal"))])
                return try b.vector(
                    "success",
                    comment:
                        "a commit the laptop attested before it was removed: the signer is a member of a trusted keyring (the root), but a trusted keyring lists it as removed, so the commit is attested by a removed member, which is not attested (format.md §9.4: the file cannot show which commits a removed device made while it was a member, since it keeps its old keys). Its record is released and counted as unattested; nothing is reported"
                )
            },
        ]
    }

    /// `BLAKE2b-192(key = nonce key, "quire-commit-nonce-v3" ‖ ad ‖ A)` for group `g`.
    static func syntheticNonce(_ b: VectorBuilder, group g: CommitGroup, attestation: [UInt8]) throws -> [UInt8] {
        var h = BLAKE2b.Hasher(byteCount: 24, key: try b.keys.writeKey!.subkey(.commitNonce))
        h.update(Array("quire-commit-nonce-v3".utf8))
        h.update(attestationAD(b, group: g))
        h.update(attestation)
        return h.finalize()
    }

    // MARK: - Unknown critical kinds

    static var criticalKinds: [Make] {
        let critical = RecordKind(rawValue: 0x3f)
        return [
            {
                let b = try VectorBuilder("error-unknown-critical-kind")
                try b.commit([.plaintext(critical, [UInt8](repeating: 1, count: 20))])
                return try b.vector(
                    "error",
                    comment:
                        "a record of unknown critical kind 0x3f in a verified commit attested by a member stops the reader: somebody with the keys wrote a newer format",
                    error: "unknown_critical_kind")
            },
            {
                let b = try VectorBuilder("error-unknown-critical-kind-sealed")
                let sealed = try SealedFrame.seal(
                    kind: RecordKind(rawValue: 0x3e), payload: Array("sealed future record".utf8), key: b.keys.writeKey!,
                    vaultID: b.vaultID, compress: false, random: b.random)
                try b.commit([.raw(sealed, release: nil), .entry(b.entry("beside it"))])
                return try b.vector(
                    "error", comment: "a sealed record of unknown critical kind 0x3e in a verified, attested commit stops the reader",
                    error: "unknown_critical_kind")
            },
            {
                let b = try VectorBuilder("damaged-critical-kind-author-removed", deviceSeed: phoneSeed)
                let phone = try VectorBuilder.device(phoneSeed)
                try b.commit([.entry(b.entry("before the theft"))])
                let idx = try b.commit([.plaintext(critical, [UInt8](repeating: 6, count: 20))], attest: .sign(phone))
                // The recovery key removes the phone (opening needed keys
                // only, not records: format.md §4.3).
                let kept = [recoveryMember(b)]
                let (k2, removal) = try child(b, members: kept, removed: [b.members[1]], reason: "remove")
                try b.addKeyring(k2, removal, members: kept)
                try b.commit([.entry(b.entry("after the removal"))])
                return try b.vector(
                    "damaged",
                    comment:
                        "tenth review R10-3: a stolen phone, still a member, writes a frame of unknown critical kind 0x3f in a commit it attests; the recovery key, which still opens the vault (the error stops records, not keyrings), removes the phone. The commit is then attested by a removed member: a per-frame issue, and the vault reads again. Before, no credential opened the vault, so the removal could not be written",
                    issues: [("unknown_critical_kind", b.offset(idx[0]!))])
            },
            {
                let b = try VectorBuilder("damaged-critical-kind-unattested-commit")
                let idx = try b.commit(
                    [.plaintext(critical, [UInt8](repeating: 1, count: 20)), .entry(b.entry("beside it"))], attest: CommitAttestation.none)
                return try b.vector(
                    "damaged",
                    comment:
                        "an unknown critical kind in a verified but unattested commit is a per-frame issue: skipped, and the vault opens (its neighbour is released, unattested)",
                    issues: [("unknown_critical_kind", b.offset(idx[0]!))])
            },
            {
                let b = try VectorBuilder("damaged-critical-kind-attestation-failed")
                let outsider = try Ed25519.KeyPair(seed: SecureBytes(randomCount: 32, using: b.random))
                let idx = try b.commit([.plaintext(critical, [UInt8](repeating: 2, count: 20))], attest: .sign(outsider))
                return try b.vector(
                    "damaged", comment: "an unknown critical kind in a commit whose attestation fails: a per-frame issue, the vault opens",
                    issues: [("unknown_critical_kind", b.offset(idx[0]!)), ("attestation_failed", b.offset(idx[0]! + 1))])
            },
            {
                let b = try VectorBuilder("damaged-critical-kind-commit-mismatch")
                let idx = try b.commit([.plaintext(critical, [UInt8](repeating: 3, count: 20)), .entry(b.entry("beside it"))])
                var bytes = try b.bytes()
                let commit = b.frame(idx[0]! + 2)
                Edit.flipBit(&bytes, byte: Int(commit.bodyOffset) + 3, bit: 1)
                return try b.vector(
                    "damaged",
                    comment: "an unknown critical kind in a commit whose head does not verify: a per-frame issue, the vault opens",
                    body: bytes,
                    issues: [("unknown_critical_kind", b.offset(idx[0]!)), ("commit_mismatch", commit.location.offset)])
            },
            {
                let b = try VectorBuilder("damaged-critical-kind-stale-commit")
                let old = b.keys.writeKey!
                try b.rotate(to: 2)
                b.writeWith(old)
                let idx = try b.commit([.plaintext(critical, [UInt8](repeating: 4, count: 20))])
                return try b.vector(
                    "damaged",
                    comment:
                        "an unknown critical kind in a stale commit (epoch 1 after epoch 2 began, attested): a per-frame issue, the vault opens",
                    issues: [("unknown_critical_kind", b.offset(idx[0]!)), ("stale_epoch", b.offset(idx[0]! + 1))])
            },
            {
                let b = try VectorBuilder("damaged-critical-kind-unverifiable-commit")
                let stranger = try b.freshKey(5)
                b.writeWith(stranger)
                let idx = try b.commit([.plaintext(critical, [UInt8](repeating: 5, count: 20))])
                return try b.vector(
                    "damaged",
                    comment:
                        "an unknown critical kind in a commit made with a key the reader does not hold: a per-frame issue, the vault opens",
                    issues: [("unknown_critical_kind", b.offset(idx[0]!)), ("commit_unverifiable", b.offset(idx[0]! + 1))])
            },
        ]
    }
}
