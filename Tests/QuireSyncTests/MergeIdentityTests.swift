import Foundation
@_spi(Format) import Quire
@_spi(Crypto) import QuireCrypto
@_spi(Format) import QuireFormat
@_spi(Format) import QuireSync
import Testing

@Suite struct MergeIdentityTests {
    /// The last non-commit frame of the vault at `path`, as bytes.
    func lastRecord(_ path: String) throws -> [UInt8] {
        let s = try VaultScanner.scan(path: path)
        let f = s.frames[s.groups.last!.commitFrame - 1]
        return Array(bytes(path)[Int(f.location.offset)..<Int(f.end)])
    }

    /// Blocks of one epoch and standing are ordered by H256 of their frames' identities,
    /// and an identity is header ‖ H256(whole body) (Spec/merge.md §1, §3.3):
    /// a case where that order differs from one using the stored body hash
    /// instead must be merged in the spec's order.
    @Test func blocksAreOrderedByTheHashOfWholeBodies() throws {
        for n in 0..<64 {
            let c = try TwoCopies("identity \(n)")
            let prefix = bytes(c.a).count
            let onA = try Vault.open(at: c.a, credential: .device(c.laptop.keyPair), random: SeededRandom(label: "a \(n)"), options: fast)
            try onA.add(EntryBody(created: t0 + 10, text: "laptop \(n)"))
            let onB = try Vault.open(at: c.b, credential: .device(c.phone.keyPair), random: SeededRandom(label: "b \(n)"), options: fast)
            try onB.add(EntryBody(created: t0 + 11, text: "phone \(n)"))
            let fa = try lastRecord(c.a), fb = try lastRecord(c.b)
            func key(_ f: [UInt8], _ trailer: [UInt8]) -> [UInt8] { BLAKE2b.hash(Array(f[0..<16]) + trailer, byteCount: 32) }
            func whole(_ f: [UInt8]) -> [UInt8] { key(f, BLAKE2b.hash(Array(f[16...]), byteCount: 32)) }
            func stored(_ f: [UInt8]) -> [UInt8] { key(f, Array(f.suffix(32))) }
            let specFirst = whole(fa).lexicographicallyPrecedes(whole(fb)) ? fa : fb
            let storedFirst = stored(fa).lexicographicallyPrecedes(stored(fb)) ? fa : fb
            guard specFirst != storedFirst else { continue }
            // Merged by the recovery key, so that both blocks carry another
            // member's attestation and the hash decides (§3.3).
            _ = try VaultMerge.merge(vaultAt: c.a, copyAt: c.b, credential: .recoveryKey(c.recovery), random: SeededRandom(label: "merge \(n)"), options: fast)
            let merged = bytes(c.a)
            #expect(Array(merged[prefix..<(prefix + specFirst.count)]) == specFirst)
            return
        }
        Issue.record("no seed gave orders that differ")
    }
}
