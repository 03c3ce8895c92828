import Foundation
@_spi(Crypto) @_spi(Format) import Quire
@_spi(Format) @_spi(Testing) import QuireFormat
@_spi(Format) import QuireKeys
import Testing

/// The phone's copy with five commits after the shared one, each its own
/// entry; the third (`"phone 2"`) attested by a key that is no member's, so
/// its attestation fails. Returns the index of that commit group.
private func copyWithAFailedAttestation(_ c: TwoCopies) throws -> Int {
    let phone = c.onPhone
    for i in 0..<5 {
        let text = "phone \(i)"
        if i == 2 {
            let file = try VaultFile(path: c.b, writable: true)
            let unlocked = try KeyringEvaluator.unlock(file, with: .device(c.phone.keyPair))
            file.verifyCommits(keys: unlocked.keys, trustedKeyrings: unlocked.trustedKeyrings, attestors: unlocked.attestors)
            let random = SeededRandom(label: "batch failed attestation")
            let revision = EntryRevision(
                entryID: EntryID(using: random), revisionID: RevisionID(using: random),
                clock: HybridLogicalClock(milliseconds: UInt64(t0 + 10 + Int64(i)), counter: 0),
                body: EntryBody(created: t0 + 10 + Int64(i), text: text))
            try file.commit(options: fast, attestWith: device("Stranger").keyPair) { (tx: PendingCommit) throws(FormatError) in
                _ = try tx.appendSealed(kind: .entryRevision, payload: revision.encoded())
            }
        } else {
            try phone(c.b).add(EntryBody(created: t0 + 10 + Int64(i), text: text))
        }
    }
    let file = try VaultFile(path: c.b)
    return file.structure.groups.count - 3
}

/// A handle on `path` with its commits verified under the laptop's keys.
private func verified(_ path: String, _ c: TwoCopies) throws -> VaultFile {
    let file = try VaultFile(path: path)
    let unlocked = try KeyringEvaluator.unlock(file, with: .device(c.laptop.keyPair))
    file.verifyCommits(keys: unlocked.keys, trustedKeyrings: unlocked.trustedKeyrings, attestors: unlocked.attestors)
    return file
}

/// The attestations of a merge's carried commits are checked as one batch
/// on every core (``VaultFile/checkAttestations(ofGroups:)``) instead of one
/// at a time as each block asks: the verdicts, and so the merge, are the
/// ones the sequential path gives, a failed attestation included, in its
/// place.
@Suite struct MergeAttestationBatchTests {
    @Test func aBatchGivesTheVerdictsOneAtATimeGives() throws {
        let c = try TwoCopies("attestation batch")
        let failed = try copyWithAFailedAttestation(c)
        let oneByOne = try verified(c.b, c)
        let groups = oneByOne.structure.groups.indices
        let sequential = groups.map { oneByOne.attestation(ofGroup: $0) }
        let batched = try verified(c.b, c)
        batched.checkAttestations(ofGroups: Array(groups))
        let checked = batched.signatureVerificationCount
        #expect(checked == oneByOne.signatureVerificationCount && checked >= 5)
        let afterBatch = groups.map { batched.attestation(ofGroup: $0) }
        // Every verdict came from the batch: asking checked nothing more.
        #expect(batched.signatureVerificationCount == checked)
        #expect(afterBatch == sequential)
        guard case .failed = afterBatch[failed] else {
            Issue.record("group \(failed) is \(afterBatch[failed]), not failed")
            return
        }
        let phoneKey = c.phone.keyPair.publicKey
        for g in groups.suffix(5) where g != failed { #expect(afterBatch[g] == .attested(signer: phoneKey), "group \(g)") }
        // Past the last group, and a group asked twice: nothing checked, no trap.
        batched.checkAttestations(ofGroups: [failed, failed, groups.count, groups.count + 7, -1])
        #expect(batched.signatureVerificationCount == checked)
    }

    /// The merge of that copy: the failed attestation's commit is written
    /// unattested, each other keeps its author's attestation, and a second
    /// merge of the same two files into a twin of the vault writes the same
    /// bytes.
    @Test func aMergeCarriesTheFailedAttestationUnattestedInItsPlace() throws {
        let c = try TwoCopies("attestation batch merge")
        _ = try copyWithAFailedAttestation(c)
        try c.onLaptop(c.a).add(EntryBody(created: t0 + 20, text: "laptop"))
        let twin = c.dir.file("twin.quire")
        copy(c.a, twin)
        let report = try VaultMerge.merge(vaultAt: c.a, copyAt: c.b, credential: .device(c.laptop.keyPair), options: fast)
        #expect(report.changed && report.framesAdded == 5 && report.unattestedCommits == 1)
        // The merge says the attestation failed: the result no longer can.
        let failedGroup = try VaultFile(path: c.b).structure.groups.count - 3
        let commitFrame = try VaultFile(path: c.b).structure.groups[failedGroup].commitFrame
        #expect(report.failedAttestations.count == 1)
        if let f = report.failedAttestations.first {
            #expect(f.inCopy && f.issue.code == "attestation_failed")
            if case .attestationFailed(let location, _) = f.issue { #expect(location.index == commitFrame) }
        }
        let again = try VaultMerge.merge(vaultAt: twin, copyAt: c.b, credential: .device(c.laptop.keyPair), options: fast)
        #expect(again.unattestedCommits == 1 && again.failedAttestations == report.failedAttestations)
        #expect(bytes(c.a) == bytes(twin))
        // Phone 0 and 1 stay where they were and keep the phone's
        // attestation; phone 3 and 4, attested, are placed before the
        // unattested phone 2 (Spec/merge.md §3.3) and so attested again by
        // the merging laptop; phone 2 is unattested.
        let merged = try c.onLaptop(c.a)
        var signers: [String: [UInt8]?] = [:]
        for e in try merged.entries() where e.revision.body.text.hasPrefix("phone") {
            signers[e.revision.body.text] = try merged.attestations(of: e.id)[e.revision.revisionID]
        }
        let phoneKey = c.phone.keyPair.publicKey
        let laptopKey = c.laptop.keyPair.publicKey
        let expected: [String: [UInt8]?] = [
            "phone 0": phoneKey, "phone 1": phoneKey, "phone 2": nil, "phone 3": laptopKey, "phone 4": laptopKey,
        ]
        #expect(signers == expected)
        #expect(try texts(c.a, .device(c.laptop.keyPair)) == ["laptop", "phone 0", "phone 1", "phone 2", "phone 3", "phone 4", "shared"])
    }
}
