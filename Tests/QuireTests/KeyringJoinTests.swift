import Foundation
import Quire
@_spi(Crypto) import QuireCrypto
@_spi(Format) import QuireFormat
@_spi(Testing) @_spi(Format) import QuireKeys
import QuireTestSupport
import Testing

/// Opening a vault whose keyring joins several heads (`Spec/format.md §8.4`
/// rule 5.11): every link of a keyring signs one message, so the join's
/// links, which one signer made, carry one signature, checked once.
@Suite struct KeyringJoinTests {
    @Test func aJoinChecksItsSignersLinkSignatureOnce() throws {
        let dir = TemporaryDirectory()
        let (vault, laptop, _) = try KeyAttackTests.laptopVault(dir, "join")
        let path = dir.file("j.quire")
        let root = dir.file("root.quire")
        try FileManager.default.copyItem(atPath: path, toPath: root)
        let heads = 3
        for i in 0..<heads {
            let copy = dir.file("copy\(i).quire")
            try FileManager.default.copyItem(atPath: root, toPath: copy)
            try Vault.open(at: copy, credential: .device(laptop.keyPair), options: fast).rotateKeys(now: KeyTestSupport.t0 + 1 + Int64(i))
            try KeyTestSupport.fold(copy, into: vault)
        }
        #expect(try vault.keyState().heads.count == heads)
        try vault.rotateKeys(now: KeyTestSupport.t0 + 10)   // one keyring whose parents are the three heads
        let opened = try Vault.open(at: path, credential: .device(laptop.keyPair), writable: false, options: fast)
        let state = try opened.keyState()
        #expect(state.heads.count == 1)
        #expect(state.trusted.map(\.parents.count).max() == heads)
        // One link each for the three rotations, one for the join's three
        // links (before: three).
        #expect(opened.unlocked.linkSignatureChecks == heads + 1)
        #expect(opened.unlocked.issues.isEmpty)
    }

    /// `Spec/format.md §8.5` step 2: a key a slot reaches is followed down
    /// its chain before older keyrings' slots are tried, so the join's one
    /// device slot reaches the three rotations and the root through
    /// `parentKeys`, and none of their slots is tried (before: one box in
    /// each of the five keyrings). The recovery key likewise.
    @Test func aJoinReachesItsHeadsByChainNotBySlot() throws {
        let dir = TemporaryDirectory()
        let (vault, laptop, recovery) = try KeyAttackTests.laptopVault(dir, "join by chain")
        let path = dir.file("j.quire")
        let root = dir.file("root.quire")
        try FileManager.default.copyItem(atPath: path, toPath: root)
        let heads = 3
        for i in 0..<heads {
            let copy = dir.file("copy\(i).quire")
            try FileManager.default.copyItem(atPath: root, toPath: copy)
            try Vault.open(at: copy, credential: .device(laptop.keyPair), options: fast).rotateKeys(now: KeyTestSupport.t0 + 1 + Int64(i))
            try KeyTestSupport.fold(copy, into: vault)
        }
        try vault.rotateKeys(now: KeyTestSupport.t0 + 10)
        for credential in [Credential.device(laptop.keyPair), .recoveryKey(recovery)] {
            let opened = try Vault.open(at: path, credential: credential, writable: false, options: fast)
            #expect(opened.unlocked.slotTrials == 1)
            #expect(opened.unlocked.keyrings.count == heads + 2)
            #expect(opened.unlocked.keyrings.allSatisfy { $0.isTrusted })
            #expect(opened.unlocked.issues.isEmpty)
        }
        // A keyless flood after the join: four made-up keyrings, two device
        // slots each, naming the join as parent. Nothing tells them apart
        // before a slot opens, so the device tries all eight slots, then the
        // join's one; the heads and the root still cost none (before: 8 + 5).
        let head = try vault.keyState().heads[0].id
        try KeyAttackTests.outsiderAppend(
            path,
            (0..<4).map { n in
                let r = SeededRandom(label: "flood slot \(n)")
                let slots: [KeySlot] = (0..<2).map { _ in .device(box: r.bytes(KeySlot.boxByteCount)) }
                return (20, KeyAttackTests.opaqueKeyring(parents: [head], slots: slots, epoch: 20, label: "flood \(n)"))
            })
        let flooded = try Vault.open(at: path, credential: .device(laptop.keyPair), writable: false, options: fast)
        #expect(flooded.unlocked.slotTrials == 4 * 2 + 1)
        #expect(flooded.unlocked.keyrings.filter { $0.isTrusted }.count == heads + 2)
    }
}
