import Foundation
@_spi(Crypto) @_spi(Format) import Quire
@_spi(Format) @_spi(Testing) import QuireFormat
@_spi(Format) import QuireKeys
import QuireTestSupport
import Testing

/// `quire merge` says which carried commits had an attestation that does
/// not verify (`attestation_failed`: only a holder of the vault's key can
/// write one), in its text and in `--json`'s `attestationFailed`
/// (`Spec/merge.md §3.6`, `Spec/cli-json.md`): the merged vault holds those
/// commits unattested and verifies clean, so the merge is the last place
/// the sign can be seen.
@Suite struct MergeFailedAttestationCommandTests {
    /// A copy of `Journal.quire` with one commit attested by a key that is
    /// no member's, written with the vault's recovery key; `Journal.quire`
    /// then gets an entry of its own, so that the two diverged.
    static func diverged(_ box: Sandbox) throws {
        try box.makeVault()
        _ = try box.add("shared entry")
        let copy = box.path("Copy.quire")
        try FileManager.default.copyItem(atPath: box.path("Journal.quire"), toPath: copy)
        let code = try String(contentsOfFile: box.path("recovery.txt"), encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        let file = try VaultFile(path: copy, writable: true)
        let unlocked = try KeyringEvaluator.unlock(file, with: .recoveryKey(try RecoveryKey(code: code)))
        file.verifyCommits(keys: unlocked.keys, trustedKeyrings: unlocked.trustedKeyrings, attestors: unlocked.attestors)
        let random = SeededRandom(label: "merge failed attestation command")
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let stranger = try DeviceIdentity.generate(name: "Stranger", now: now, using: random)
        let revision = EntryRevision(
            entryID: EntryID(using: random), revisionID: RevisionID(using: random),
            clock: HybridLogicalClock(milliseconds: UInt64(now), counter: 0),
            body: EntryBody(created: now, text: "Written under a stranger's attestation"))
        try file.commit(options: WriteOptions(synchronous: false), attestWith: stranger.keyPair) {
            (tx: PendingCommit) throws(FormatError) in
            _ = try tx.appendSealed(kind: .entryRevision, payload: revision.encoded())
        }
        _ = try box.add("laptop entry")
    }

    @Test func mergeSaysWhichCarriedAttestationFailed() throws {
        let box = try Sandbox()
        try Self.diverged(box)
        try FileManager.default.copyItem(atPath: box.path("Journal.quire"), toPath: box.path("Twin.quire"))
        try FileManager.default.copyItem(atPath: box.path("Copy.quire"), toPath: box.path("Copy2.quire"))

        let merge = try box.quire(["merge", "Journal.quire", "Copy.quire"])
        #expect(merge.status == 0, "\(merge)")
        #expect(merge.stderr.contains("1 commit carried had an attestation that does not verify"), "\(merge)")
        #expect(merge.stdout.contains("attestation failed in Copy.quire: "), "\(merge)")
        #expect(merge.stdout.contains("the signer is not a member of this vault"), "\(merge)")
        #expect(!merge.stdout.contains("unattested, as in"), "\(merge)")

        let json = try box.quire(["merge", "Twin.quire", "Copy2.quire", "--json"])
        #expect(json.status == 0, "\(json)")
        let object = try json.json()
        let failed = try #require(object["attestationFailed"] as? [[String: Any]], "\(json)")
        #expect(failed.count == 1)
        #expect(failed.first?["file"] as? String == "Copy2.quire")
        #expect((failed.first?["message"] as? String)?.contains("the signer is not a member of this vault") == true, "\(json)")
        #expect(object["unattestedCommits"] as? Int == 1)

        // The merged vault verifies clean: the merge was the place to say it.
        let verify = try box.quire(["verify", "Journal.quire"])
        #expect(verify.status == 0, "\(verify)")
    }
}
