import Foundation
@_spi(Crypto) @_spi(Format) import Quire
@_spi(Crypto) import QuireCrypto
@_spi(Format) @_spi(Testing) import QuireFormat
@_spi(Format) import QuireKeys
import Testing

/// A handle on `path` with its commits verified under the laptop's keys.
private func verified(_ path: String, _ c: TwoCopies) throws -> VaultFile {
    let file = try VaultFile(path: path)
    let unlocked = try KeyringEvaluator.unlock(file, with: .device(c.laptop.keyPair))
    file.verifyCommits(keys: unlocked.keys, trustedKeyrings: unlocked.trustedKeyrings, attestors: unlocked.attestors)
    return file
}

/// Appends a commit of one entry revision to the copy at `path` with
/// `attestation`, as the phone.
private func commit(_ path: String, _ c: TwoCopies, text: String, attestation: CommitAttestation) throws {
    let file = try VaultFile(path: path, writable: true)
    let unlocked = try KeyringEvaluator.unlock(file, with: .device(c.phone.keyPair))
    file.verifyCommits(keys: unlocked.keys, trustedKeyrings: unlocked.trustedKeyrings, attestors: unlocked.attestors)
    let random = SeededRandom(label: "own attestation " + text)
    let revision = EntryRevision(
        entryID: EntryID(using: random), revisionID: RevisionID(using: random),
        clock: HybridLogicalClock(milliseconds: UInt64(t0 + 30), counter: 0), body: EntryBody(created: t0 + 30, text: text))
    try file.commit(random: random, options: fast, attestation: attestation) { (tx: PendingCommit) throws(FormatError) in
        _ = try tx.appendSealed(kind: .entryRevision, payload: revision.encoded())
    }
}

/// A merge recognizes the merging member's own signatures by signing the
/// message again (``VaultFile/checkAttestations(ofGroups:recognizing:)``,
/// `Spec/merge.md §3.3`): Ed25519 signing is deterministic, so the
/// verdicts are the ones verifying every signature gives — another
/// member's, a stranger's and a forged one under the member's own public
/// key included.
@Suite struct OwnAttestationTests {
    @Test func recognizingOwnSignaturesGivesTheVerdictsVerifyingGives() throws {
        let c = try TwoCopies("own attestation")
        for i in 0..<3 { try c.onPhone(c.b).add(EntryBody(created: t0 + 10 + Int64(i), text: "phone \(i)")) }
        try c.onLaptop(c.b).add(EntryBody(created: t0 + 20, text: "laptop"))
        try commit(c.b, c, text: "stranger", attestation: .sign(device("Stranger").keyPair))
        try commit(c.b, c, text: "forged", attestation: .carried(c.phone.keyPair.publicKey + [UInt8](repeating: 7, count: 64)))
        try c.onPhone(c.b).add(EntryBody(created: t0 + 40, text: "phone 3"))

        let plain = try verified(c.b, c)
        let groups = Array(plain.structure.groups.indices)
        let expected = groups.map { plain.attestation(ofGroup: $0) }
        let phone = c.phone.keyPair.publicKey
        let last = groups.count - 1
        #expect(expected[last] == .attested(signer: phone))
        #expect(expected[last - 3] == .attested(signer: c.laptop.keyPair.publicKey))
        #expect(expected.suffix(7).prefix(3).allSatisfy { $0 == .attested(signer: phone) })
        for g in [last - 2, last - 1] {
            guard case .failed = expected[g] else {
                Issue.record("group \(g) is \(expected[g]), not failed")
                continue
            }
        }
        for own in [c.phone.keyPair, c.laptop.keyPair, device("Stranger").keyPair] {
            let file = try verified(c.b, c)
            file.checkAttestations(ofGroups: groups, recognizing: own)
            let checked = file.signatureVerificationCount
            #expect(groups.map { file.attestation(ofGroup: $0) } == expected, "recognizing \(own)")
            // Every verdict came from the batch.
            #expect(file.signatureVerificationCount == checked)
        }
    }

    /// The copy's commits are the merging phone's own and the laptop's:
    /// merged by the phone, the result is the one the laptop's merge of the
    /// same files into a twin gives for the same blocks, and both keep
    /// every author's attestation where it stays, the forged one written
    /// unattested.
    @Test func aMergeByTheAuthorKeepsItsVerdicts() throws {
        let c = try TwoCopies("own attestation merge")
        for i in 0..<3 { try c.onPhone(c.b).add(EntryBody(created: t0 + 10 + Int64(i), text: "phone \(i)")) }
        try commit(c.b, c, text: "forged", attestation: .carried(c.phone.keyPair.publicKey + [UInt8](repeating: 7, count: 64)))
        try c.onLaptop(c.a).add(EntryBody(created: t0 + 20, text: "laptop"))
        let report = try VaultMerge.merge(vaultAt: c.a, copyAt: c.b, credential: .device(c.phone.keyPair), options: fast)
        #expect(report.changed && report.framesAdded == 4 && report.unattestedCommits == 1)
        let merged = try c.onPhone(c.a)
        var signers: [String: [UInt8]?] = [:]
        for e in try merged.entries() where e.revision.body.text != "shared" {
            signers[e.revision.body.text] = try merged.attestations(of: e.id)[e.revision.revisionID]
        }
        let phone = c.phone.keyPair.publicKey
        let expected: [String: [UInt8]?] = [
            "laptop": c.laptop.keyPair.publicKey, "phone 0": phone, "phone 1": phone, "phone 2": phone, "forged": nil,
        ]
        #expect(signers == expected)
    }
}
