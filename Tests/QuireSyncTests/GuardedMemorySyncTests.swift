import Foundation
@_spi(Crypto) @_spi(Format) import Quire
@_spi(Crypto) import QuireCrypto
@_spi(Format) import QuireFormat
import QuireSync
import Testing
@_spi(Format) @testable import QuireKeys

/// Issue 12 §1 in merge and compaction: running out of guarded memory is
/// `out_of_guarded_memory` (`Spec/format.md §5.1`), never a keyring a
/// member made taken for one nobody did.
@Suite struct GuardedMemorySyncTests {
    /// The laptop and the phone remove each other on two copies, joined in
    /// one file: the laptop cannot open the phone's removal, which a member
    /// made, so merge carries it and compaction keeps it (``UnlockedKeys/memberMade(_:vaultID:)``).
    /// Before, memberMade read the link under its parent's key with a
    /// `try?` on the link key: with guarded memory gone it said no member
    /// made it (merge left the keyring out, compaction dropped it). The
    /// evaluation that unlocked the file had usually derived that link key
    /// already; memberMade no longer counts on it (the parent's key here
    /// is a fresh copy, its link key not derived).
    @Test func memberMadeWithGuardedMemoryRunningOutFailsAsItself() throws {
        let c = try TwoCopies("member made, guarded")
        let prefix = bytes(c.a).count
        try c.onLaptop(c.a).removeDevice(named: "Phone", now: t0 + 5)
        try c.onPhone(c.b).removeDevice(named: "Laptop", now: t0 + 6)
        try MergeAttackTests.write(bytes(c.a) + bytes(c.b)[prefix...], c.a)
        let file = try VaultFile(path: c.a)
        let unlocked = try KeyringEvaluator.unlock(file, with: .device(c.laptop.keyPair))
        let ring = try #require(unlocked.keyrings.first { $0.content == nil && $0.problem == nil })
        #expect(try unlocked.memberMade(ring, vaultID: file.vaultID))
        var rings = unlocked.keyrings
        for i in rings.indices {
            if let key = rings[i].epochKey { rings[i].epochKey = EpochKey(epoch: key.epoch, key: key.key, blobKey: key.blobKey) }
        }
        let fresh = UnlockedKeys(
            keys: unlocked.keys, trustedKeyrings: unlocked.trustedKeyrings, keyrings: rings, issues: unlocked.issues,
            newerKeyrings: unlocked.newerKeyrings, removedIn: unlocked.removedIn, attestors: unlocked.attestors)
        #expect(throws: KeyError.format(.outOfGuardedMemory)) {
            try GuardedMemory.$budget.withValue(GuardedMemory.Budget(byteCount: 0)) {
                try fresh.memberMade(ring, vaultID: file.vaultID)
            }
        }
        #expect(try fresh.memberMade(ring, vaultID: file.vaultID))
    }
}
