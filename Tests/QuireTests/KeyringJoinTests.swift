import Foundation
import Quire
import QuireFormat
@_spi(Testing) @_spi(Format) import QuireKeys
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
}
