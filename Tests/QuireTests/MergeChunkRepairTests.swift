import Foundation
@_spi(Format) @_spi(Crypto) import Quire
import QuireVectors
import Testing

/// Tenth review, R10-1: a chunk rewritten in place by a holder of its epoch
/// key keeps its tag, so its commit still verifies; merging an intact copy
/// must repair the attachment, not carry both versions (`Spec/merge.md §3.2`).
/// Eleventh review, R11-1: the repair chooses only between versions of one
/// standing, so a non-member reusing a member's public stream id can neither
/// evict the member's chunks nor move the member's revision into its
/// unattested commit. Twelfth review, R12-3: a commit both files hold ranks
/// by the higher of its two standings, so the repair also works for a
/// removed member's commit from before its removal.
@Suite struct MergeChunkRepairTests {
    static func lines(_ vector: MergeVectors.Vector) -> [String] {
        vector.expect.split(separator: "\n").map(String.init)
    }

    @Test func mergingAnIntactCopyRepairsAChunkRewrittenKeepingItsTag() throws {
        // Before the rule, the merged result held both versions of chunk 0
        // (chunk_duplicate) and building the vector threw reading the attachment.
        let vector = try MergeVectors.chunkRewrittenKeepingItsTag()
        let lines = Self.lines(vector)
        #expect(lines.contains("changed: yes"))
        #expect(lines.contains("unattested-commits: 0"))
        let attachments = lines.filter { $0.hasPrefix("attachment: ") }
        #expect(attachments.count == 1)
        #expect(attachments.first?.contains("size=70000") == true)
        // The copy's bytes are the intact file: the result is them.
        #expect(vector.merged == vector.b)
        #expect(vector.a != vector.b && vector.a.count == vector.b.count)
    }

    @Test func aChunkRewrittenInTheCopyIsLeftOut() throws {
        // The other direction: the vault is intact, the copy forged. Before
        // the rule the result held both versions (chunk_duplicate).
        let vector = try MergeVectors.chunkRewrittenKeepingItsTag(forgedInTheCopy: true)
        let lines = Self.lines(vector)
        #expect(lines.contains("changed: no"))
        #expect(vector.merged == vector.a)
        #expect(lines.filter { $0.hasPrefix("attachment: ") && $0.contains("size=70000") }.count == 1)
    }

    @Test(arguments: [true, false])
    func anUnattestedStreamUnderAMembersStreamIDDoesNotEvictItsChunks(attackerIsTheVault: Bool) throws {
        // With the withdrawn rule (f950265) and the attacker's fork as the
        // vault, the laptop's attested chunks were left out and building the
        // vector threw reading the laptop's attachment (blob_id_mismatch).
        let vector = try MergeVectors.streamIDReused(attackerIsTheVault: attackerIsTheVault)
        let lines = Self.lines(vector)
        #expect(lines.contains("changed: yes"))
        let attachments = lines.filter { $0.hasPrefix("attachment: ") }
        #expect(attachments.count == 1)
        #expect(attachments.first?.contains("size=70000") == true)
        #expect(lines.contains { $0.hasPrefix("entry: ") && $0.contains("text=\"the laptop's photo\"") })
        // The attacker's commit stays unattested; the laptop's keeps its attestation.
        #expect(lines.contains("unattested-commits: 1"))
    }

    @Test func aMembersRevisionCopiedIntoAnUnattestedCommitStaysAttested() throws {
        // With the withdrawn rule the laptop's revision was written from the
        // attacker's unattested group, the attacker's revision retired it, and
        // the entry showed "the attacker's text, written by a non-member".
        let vector = try MergeVectors.streamIDReused(attackerIsTheVault: true, demote: true)
        let lines = Self.lines(vector)
        let entry = lines.filter { $0.hasPrefix("entry: ") && !$0.contains("text=\"entry 1\"") }
        #expect(entry.count == 1)
        #expect(entry.first?.contains("text=\"the laptop's photo\"") == true)
        #expect(entry.first?.contains("heads=2") == true)
        #expect(lines.filter { $0.hasPrefix("attachment: ") && $0.contains("size=70000") }.count == 1)
        #expect(lines.contains("unattested-commits: 1"))
    }

    /// Twelfth review, R12-3: the phone stores an attachment, the laptop
    /// removes the phone, and a holder of the old epoch key rewrites chunk 0
    /// in place keeping its tag. In the file with the removal the phone's
    /// commits rank as a current member's (`Spec/format.md §9.4` step 5), in
    /// the intact copy from before the removal as a removed member's.
    /// Merging the two must repair the chunk in either direction, with the
    /// same result (`Spec/merge.md §3.2`, "Standing in a merge").
    @Test func aRemovedMembersRewrittenChunkIsRepairedByACopyFromBeforeTheRemoval() throws {
        let dir = TemporaryDirectory()
        let laptopSeed = [UInt8](repeating: 0x61, count: 32)
        var seed = laptopSeed
        let laptop = try DeviceIdentity(keyPair: Ed25519.KeyPair(seed: SecureBytes(consuming: &seed)), name: "Laptop", created: 0)
        let phone = try DeviceIdentity.generate(name: "Phone", now: 0, using: SeededRandom(label: "R12-3 phone"))
        let withRemoval = dir.file("removal.quire")
        let before = dir.file("before.quire")
        let vault = try Vault.create(
            at: withRemoval, setup: VaultSetup(name: "Journal", recoveryKey: testRecoveryKey("R12-3"), device: laptop, now: 0),
            random: SeededRandom(label: "R12-3"), options: fast)
        try vault.enrollDevice(code: phone.code, name: "Phone", now: 1)
        let onPhone = try Vault.open(
            at: withRemoval, credential: .device(phone.keyPair), random: SeededRandom(label: "R12-3 on the phone"), options: fast)
        let photo = SeededRandom(label: "R12-3 photo").bytes(70_000)
        var stored: StoredBlob?
        try onPhone.commit { tx in stored = try tx.storeAttachment(from: MemoryByteSource(photo), mediaType: "image/jpeg") }
        let blob = try #require(stored?.blob)
        _ = try onPhone.add(
            EntryBody(created: 2, text: "with a photo", attachments: [AttachmentReference(id: [1], blob: blob, mediaType: "image/jpeg")]))
        try FileManager.default.copyItem(atPath: withRemoval, toPath: before)
        let laptopCredential = Credential.device(laptop.keyPair)
        let onLaptop = try Vault.open(
            at: withRemoval, credential: laptopCredential, random: SeededRandom(label: "R12-3 on the laptop"), options: fast)
        try onLaptop.removeDevice(named: "Phone", now: 3)
        try MergeVectors.rewriteChunkZero(at: withRemoval, deviceSeed: laptopSeed)
        func reads(_ path: String) throws -> Bool {
            (try? Vault.open(at: path, credential: laptopCredential, writable: false).openAttachment(blob).readAll()) == photo
        }
        #expect(try !reads(withRemoval))

        var results: [[UInt8]] = []
        for removalInTheCopy in [false, true] {
            let vaultPath = dir.file("vault-\(removalInTheCopy).quire")
            let copyPath = dir.file("copy-\(removalInTheCopy).quire")
            try FileManager.default.copyItem(atPath: removalInTheCopy ? before : withRemoval, toPath: vaultPath)
            try FileManager.default.copyItem(atPath: removalInTheCopy ? withRemoval : before, toPath: copyPath)
            let report = try VaultMerge.merge(vaultAt: vaultPath, copyAt: copyPath, credential: laptopCredential, options: fast)
            // Before, the two versions were of two standings: both were
            // carried, the intact one after the removal in an unattested
            // commit, and the rewritten one won (blob_id_mismatch).
            #expect(try reads(vaultPath), "removal in the copy: \(removalInTheCopy)")
            #expect(report.unattestedCommits == 0, "removal in the copy: \(removalInTheCopy)")
            #expect(report.changed)
            results.append(Array(try Data(contentsOf: URL(fileURLWithPath: vaultPath))))
        }
        // The intact commits once, then the removal, whichever file held it.
        #expect(results[0] == results[1])
        #expect(results[0].count == (try FileManager.default.attributesOfItem(atPath: withRemoval)[.size] as? Int))
    }
}
