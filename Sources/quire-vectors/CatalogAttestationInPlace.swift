@_spi(Crypto) import QuireCrypto
@_spi(Format) import QuireFormat
@_spi(Format) import QuireKeys
import QuireVectors

/// Sixth review R6-1: a commit's stored attestation (body 64..<200, the
/// nonce and the sealed `A`) was covered by nothing, so it could be
/// rewritten in place. The head now covers it (`Spec/format.md §9.2`): each
/// rewrite below breaks a head, where before nothing was reported or the
/// commit merely read as unattested.
extension Catalog {
    static var attestationInPlace: [Make] {
        [
            {
                // Scenario a: an epoch-key holder (a passphrase, an escrow
                // custodian, a removed device for its old epochs) seals
                // "two"'s attestation again as 96 zero bytes, in place,
                // keeping its stored head.
                let b = try VectorBuilder("attack-epoch-key-reseals-attestation-in-place")
                for text in ["one", "two", "three"] { try b.commit([.entry(b.entry(text))]) }
                var bytes = try b.bytes()
                let (two, frame) = (b.vault.structure.groups[2], b.frame(b.vault.structure.groups[2].commitFrame))
                let stored = try CommitChain.sealAttestation(
                    CommitChain.unattested, previousHead: two.storedPreviousHead, digest: two.digest, key: b.ringKeys[b.rootID]!,
                    vaultID: b.vaultID,
                    commitHeader: frame.header)
                bytes.replaceSubrange(Int(frame.bodyOffset) + 64..<Int(frame.end), with: stored)
                return try b.vector(
                    "damaged",
                    comment:
                        "attack (sixth review R6-1, scenario a): a holder of the epoch key (a passphrase, an escrow custodian, a removed device) seals the attestation of \"two\", a commit the recovery key attested, again as 96 zero bytes with the synthetic nonce, in place: same stored head, same frames. Before, the head did not cover body 64..<200: \"two\" verified, read as unattested, and nothing was reported (its record silently no longer the member's; a merge then wrote it unattested for good). Now the head covers the stored attestation: \"two\"'s head no longer verifies; \"three\" links to its stored head and nothing in its group looks damaged, so \"two\" is tampered (commit_tampered: writes refused until a merge of an intact copy, a compaction or accepting it; its record unverified, never shown as unattested-but-verified), and \"three\" joins the chain verified and attested",
                    body: bytes,
                    issues: [("commit_tampered", frame.location.offset)])
            },
            {
                // Scenario a, the holder recomputing "two"'s head over its
                // re-sealed attestation: "three" then names a head the file
                // no longer holds.
                let b = try VectorBuilder("attack-epoch-key-reseals-attestation-recomputes-head")
                for text in ["one", "two", "three"] { try b.commit([.entry(b.entry(text))]) }
                var bytes = try b.bytes()
                let (two, frame) = (b.vault.structure.groups[2], b.frame(b.vault.structure.groups[2].commitFrame))
                let body = try CommitChain.body(
                    previousHead: two.storedPreviousHead, digest: two.digest, attestation: CommitChain.unattested,
                    key: b.ringKeys[b.rootID]!,
                    vaultID: b.vaultID, commitHeader: frame.header)
                bytes.replaceSubrange(Int(frame.bodyOffset)..<Int(frame.end), with: body)
                let three = b.frame(b.vault.structure.groups[3].commitFrame).location.offset
                return try b.vector(
                    "damaged",
                    comment:
                        "attack (sixth review R6-1, scenario a): as attack-epoch-key-reseals-attestation-in-place, but the holder also recomputes \"two\"'s head over the re-sealed attestation, so that it verifies. Before, it had no need to (the head did not cover the attestation): nothing was reported. Now \"three\" stores the old head, which no commit of the file holds: the commit it extends is missing, so \"three\" is tampered (commit_tampered, writes refused), yet verified and attested, since a current member attested it (format.md §9.3 step 5); it passes the unattested \"two\" by (commit_orphaned, its record unverified). Hiding the rewrite needs every later commit rewritten too, under keys the holder holds",
                    body: bytes,
                    issues: [("commit_orphaned", frame.location.offset), ("commit_tampered", three)])
            },
            {
                // Scenario d: a keyless writer overwrites "two"'s stored
                // attestation with random bytes.
                let b = try VectorBuilder("attack-keyless-overwrites-attestation-in-place")
                for text in ["one", "two", "three"] { try b.commit([.entry(b.entry(text))]) }
                var bytes = try b.bytes()
                let frame = b.frame(b.vault.structure.groups[2].commitFrame)
                bytes.replaceSubrange(
                    Int(frame.bodyOffset) + 64..<Int(frame.end), with: b.random.bytes(CommitChain.storedAttestationByteCount))
                return try b.vector(
                    "damaged",
                    comment:
                        "attack (sixth review R6-1, scenario d): a keyless writer overwrites the nonce and sealed attestation of \"two\" (body 64..<200), in place, with random bytes. Before, the head did not cover them: \"two\" verified with attestation_failed, treated as unattested (its record verified but unattested), and a merge then wrote the block unattested, so the report disappeared and the demotion stayed. Now the head covers them: \"two\" is a mismatch that \"three\" links to by its stored head with nothing in its group damaged, so it is tampered (commit_tampered, loud: writes refused, its record unverified, and merge leaves it out rather than carrying it, merge vector attack-keyless-overwritten-attestation-not-laundered); \"three\" joins verified and attested",
                    body: bytes,
                    issues: [("commit_tampered", frame.location.offset)])
            },
            {
                try removedDeviceRotationAtTip("attack-removed-device-reseals-rotation-commit", recomputesHead: false)
            },
            {
                try removedDeviceRotationAtTip("attack-removed-device-rewrites-rotation-commit-at-tip", recomputesHead: true)
            },
        ]
    }

    /// Scenario c: the recovery key removes the phone (R, committed under
    /// epoch 1 and attested by the recovery key, the last commit); while R
    /// is the last commit, the phone, which holds the epoch-1 key, seals R's
    /// attestation again as 96 zero bytes — in place, or with R's head
    /// recomputed over it — and appends a commit Z of its own under epoch 1,
    /// chained from R's stored head and attested by itself. The reader is
    /// Sam's phone, a current member.
    static func removedDeviceRotationAtTip(_ name: String, recomputesHead: Bool) throws -> (String, VectorFile) {
        let b = try VectorBuilder(name, deviceSeed: sam, moreDeviceSeeds: [phoneSeed])
        try b.commit([.entry(b.entry("before the removal"))])
        let kept = [b.members[0], b.members[1]]
        let (k2, removal) = try child(b, members: kept, removed: [b.members[2]], reason: "remove")
        try b.addKeyring(k2, removal, members: kept)
        var bytes = try b.bytes()
        let epoch1 = b.ringKeys[b.rootID]!
        let r = b.vault.structure.groups.last!
        let rFrame = b.frame(r.commitFrame)
        // R starts epoch 2, so it is made under the epoch-2 key (format.md
        // §9.2, seventh review R7-3), which the phone does not hold: it
        // seals with the epoch-1 key — under R's header in place, or with a
        // commit frame of its own under epoch 1 (its header names the
        // epoch-1 key) over R's group, replacing R.
        precondition(rFrame.header.keyID == k2.id)
        let header = recomputesHead ? CommitChain.commitHeader(keyID: epoch1.id) : rFrame.header
        let body = try CommitChain.body(
            previousHead: r.storedPreviousHead, digest: r.digest, attestation: CommitChain.unattested, key: epoch1, vaultID: b.vaultID,
            commitHeader: header)
        let zPrevious = recomputesHead ? Array(body[0..<32]) : r.storedHead
        if recomputesHead {
            bytes.replaceSubrange(Int(rFrame.location.offset)..<Int(rFrame.end), with: header.encoded() + body)
        } else {
            bytes.replaceSubrange(Int(rFrame.bodyOffset) + 64..<Int(rFrame.end), with: Array(body[64...]))
        }
        let phone = try VectorBuilder.device(phoneSeed)
        let payload = b.entry("written by the removed phone after its removal").encoded()
        let frame = try SealedFrame.seal(
            kind: .entryRevision, payload: payload, key: epoch1, vaultID: b.vaultID, compress: true, random: b.random)
        let z = try Edit.commitFrame(
            over: [frame], previous: zPrevious, key: epoch1, vaultID: b.vaultID,
            attestation: CommitChain.attestation(
                keyCommitment: epoch1.commitment, previousHead: zPrevious, digest: Edit.digest(of: [frame]), vaultID: b.vaultID,
                signer: phone))
        bytes += frame + z
        b.released.append((frame: -1, kind: RecordKind.entryRevision.rawValue, payload: payload))
        if !recomputesHead {
            return try b.vector(
                "damaged",
                comment:
                    "attack (sixth review R6-1, scenario c, in place): the recovery key removes a phone (R, the last commit, made under the epoch-2 key it starts: format.md §9.2, seventh review R7-3); while R is the last commit, the phone, which holds only the epoch-1 key, seals R's attestation again as zero bytes with that key in place and appends a commit Z under epoch 1 chained from R's stored head, attested by itself. Before R6-1, R verified unattested, so it raised neither the floor nor the line, and Z joined the chain verified with nothing reported. Now the head covers R's attestation (and R is under a key the phone does not hold): R's head no longer verifies, Z links to its stored head and nothing in R's group looks damaged, so R is tampered (commit_tampered: reported, writes refused until a merge of an intact copy or a compaction). What still holds for Z: its link shows nothing, its line goes through the commit before R (epoch 1), so it is not stale and joins the chain verified; its record is released as verified, attested by a removed member (unattested: 1), never as a member's (threat-model §3.4, §7)",
                body: bytes,
                issues: [("commit_tampered", rFrame.location.offset)])
        }
        let zOffset = UInt64(bytes.count - 216)
        return try b.vector(
            "damaged",
            comment:
                "attack (seventh review R7-3; sixth review R6-1, scenario c): the recovery key removes a phone (R, the last commit); while R is the last commit, the phone, which holds the epoch-1 key, replaces R's commit frame by one of its own under epoch 1 over R's group (the removal keyring), unattested, and appends a commit Z under epoch 1 chained from it, attested by itself. Before R7-3, R was made under epoch 1 (the epoch before the one it starts), so the phone's R verified, unattested, raising neither the floor nor the line, and Z joined the chain verified (attested by a removed member) with nothing reported: the removed member could recompute the commit covering its removal. Now a commit holding a trusted keyring is made under a key of at least that keyring's epoch (format.md §9.2, §9.3 step 2): the phone's R is stale (stale_epoch: its key's epoch 1 is below its own group's keyring, epoch 2; its keyring is still trusted, so the phone stays removed), and Z, which links to it, is orphaned (commit_orphaned; its record released only as unverified)",
            body: bytes,
            issues: [("stale_epoch", rFrame.location.offset), ("commit_orphaned", zOffset)])
    }
}
