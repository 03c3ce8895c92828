import Foundation
import Testing
@_spi(Format) @_spi(Crypto) import Quire
@_spi(Crypto) import QuireCrypto
@_spi(Format) import QuireFormat
@_spi(Testing) @_spi(Format) @_spi(Crypto) import QuireKeys

/// Issue 12 §1: one run of a 4,100-keyring flood aborted the reader in
/// `fatalError("guarded memory exhausted")`. `Spec/format.md §5.1`: running
/// out of guarded memory is an application error [`out_of_guarded_memory`];
/// a reader MUST NOT abort the process nor report it as damage to the file.
/// A ceiling on the guarded memory one task may hold
/// (``GuardedMemory/Budget``) runs a reader out of it at every point of an
/// open in turn, without starving the rest of the test process.
@Suite struct GuardedMemoryTests {
    /// What an open shows, to compare an open under a ceiling with one
    /// without.
    struct Seen: Equatable {
        var trusted: Int
        var issues: [String]
        var newerEpoch: UInt32?
        var entries: [String]
    }

    static func seen(_ path: String, _ credential: Credential) throws -> Seen {
        let vault = try Vault.open(at: path, credential: credential, writable: false, options: fast)
        return Seen(
            trusted: vault.unlocked.keyrings.filter(\.isTrusted).count, issues: vault.unlocked.issues.map { "\($0)" },
            newerEpoch: vault.unlocked.unreadableNewerEpoch, entries: try vault.entries().map(\.body.text).sorted())
    }

    /// A member's chain of 24 keyrings (each holding keys: its own, its
    /// parent's, its blob key) and an entry, opened by the recovery key and
    /// the phone under ceilings from nothing to what the open needs: each
    /// open either sees what it sees without a ceiling, or fails with
    /// `out_of_guarded_memory` — never a crash, a wrong-credential error, a
    /// keyring taken for damaged or untrusted, or an entry missing.
    @Test func attackOpeningWithGuardedMemoryRunningOutFailsAsItself() throws {
        let dir = TemporaryDirectory()
        let (path, laptop, phone, recovery) = try AttackTests.twoDevices(dir, "guarded")
        let onLaptop = try Vault.open(at: path, credential: .device(laptop.keyPair), options: fast)
        try onLaptop.add(EntryBody(created: AttackTests.t0 + 10, text: "before the chain"))
        _ = try AttackTests.appendMemberChain(path, phone: phone, count: 24, label: "guarded chain")
        let credentials: [(String, Credential)] = [("recovery", .recoveryKey(recovery)), ("phone", .device(phone.keyPair))]
        for (name, credential) in credentials {
            let unlimited = GuardedMemory.Budget(byteCount: .max)
            let expected = try GuardedMemory.$budget.withValue(unlimited) { try Self.seen(path, credential) }
            #expect(expected.trusted >= 26 && expected.issues.isEmpty && expected.entries == ["before the chain"], "\(name)")
            let peak = unlimited.peakByteCount
            #expect(peak > 24 * 64, "\(name): the keys of the chain live in guarded memory (\(peak) bytes)")
            var failures = 0
            for limit in stride(from: 0, through: peak, by: max(64, peak / 48)) {
                let budget = GuardedMemory.Budget(byteCount: limit)
                do {
                    let got = try GuardedMemory.$budget.withValue(budget) { try Self.seen(path, credential) }
                    #expect(got == expected, "\(name) under \(limit) bytes")
                } catch let error as QuireError {
                    failures += 1
                    #expect(error.code == "out_of_guarded_memory", "\(name) under \(limit) bytes: \(error.code): \(error)")
                    #expect(error.category == .outOfSpace)
                    #expect(budget.refusals > 0)
                } catch {
                    Issue.record("\(name) under \(limit) bytes: \(error)")
                }
            }
            #expect(failures > 0, "\(name): some ceiling was too low")
            // What the open needed fits (with room for what another run
            // might make on this thread rather than a worker's): it opens.
            let enough = GuardedMemory.Budget(byteCount: peak + peak / 2)
            #expect(try GuardedMemory.$budget.withValue(enough) { try Self.seen(path, credential) } == expected)
        }
    }

    /// Runs `body` under ceilings from nothing to what it needs, one
    /// 64-byte cell apart: each run either returns what it returns without
    /// a ceiling, or fails with `out_of_guarded_memory`.
    static func sweep<T: Equatable>(_ name: String, _ body: () throws -> T) throws {
        let unlimited = GuardedMemory.Budget(byteCount: .max)
        let expected = try GuardedMemory.$budget.withValue(unlimited) { try body() }
        var failures = 0
        for limit in stride(from: 0, through: unlimited.peakByteCount, by: 64) {
            let budget = GuardedMemory.Budget(byteCount: limit)
            do {
                let got = try GuardedMemory.$budget.withValue(budget) { try body() }
                #expect(got == expected, "\(name) under \(limit) bytes")
            } catch let error as QuireError {
                failures += 1
                #expect(error.code == "out_of_guarded_memory", "\(name) under \(limit) bytes: \(error.code): \(error)")
                #expect(error.category == .outOfSpace)
            } catch {
                Issue.record("\(name) under \(limit) bytes: \(error)")
            }
        }
        #expect(failures > 0, "\(name): some ceiling was too low")
    }

    /// The last commit rotates the key (made under the new epoch's key,
    /// `Spec/format.md §9.2`) and its length field is damaged: commit
    /// recovery finds the new key in the tail's keyring (§10.3). Before,
    /// guarded memory running out while that keyring was read (a `try?`)
    /// left the commit unrecovered: the open went on with the rotation and
    /// its keyring taken for a torn tail, which the next write cuts.
    /// A vault whose last commit rotates the key, with that commit's
    /// length field damaged.
    static func rotationWithDamagedLastCommit(_ dir: TemporaryDirectory) throws -> (path: String, recovery: RecoveryKey) {
        let (vault, recovery) = try makeVault(dir)
        try vault.add(EntryBody(created: 1_700_000_000_010, text: "before the rotation"))
        try vault.rotateKeys(now: 1_700_000_000_020)
        let path = dir.file("v.quire")
        var bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        bytes[bytes.count - FrameHeader.byteCount - CommitChain.bodyByteCount + 4] ^= 0x03
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return (path, recovery)
    }

    @Test func attackRecoveringTheLastCommitWithGuardedMemoryRunningOutFailsAsItself() throws {
        let dir = TemporaryDirectory()
        let (path, recovery) = try Self.rotationWithDamagedLastCommit(dir)
        struct Opened: Equatable {
            var trusted: Int
            var issues: [String]
            var entries: [String]
        }
        let opened = try Vault.open(at: path, credential: .recoveryKey(recovery), writable: false, options: fast)
        #expect(opened.unlocked.keyrings.filter(\.isTrusted).count == 2)
        #expect(opened.verify().issues.map(\.code) == ["frame_repaired"])
        try Self.sweep("recovery") {
            let v = try Vault.open(at: path, credential: .recoveryKey(recovery), writable: false, options: fast)
            return Opened(
                trusted: v.unlocked.keyrings.filter(\.isTrusted).count, issues: v.verify().issues.map(\.code),
                entries: try v.entries().map(\.body.text))
        }
    }

    /// Commit recovery derives the commit subkey of each key it tries in a
    /// `try?` (a head that does not verify), and the tail's keys are new:
    /// ``VaultFile/deriveCommitSubkeys(of:)`` makes theirs ahead, as
    /// Vault.unlock calls it, so recovery with no guarded memory left still
    /// recovers the commit. Before, it was taken for a torn tail.
    @Test func commitRecoveryFindsTheTailKeysSubkeysMade() throws {
        let dir = TemporaryDirectory()
        let (path, recovery) = try Self.rotationWithDamagedLastCommit(dir)
        let file = try VaultFile(path: path)
        let credential = Credential.recoveryKey(recovery)
        let unlocked = try KeyringEvaluator.unlock(file, with: credential)
        #expect(file.recoverableTailHoldsKeyring)
        file.recoveryKeys = try KeyringEvaluator.unlock(file, with: credential, includingTail: true).keys.all
        try file.deriveCommitSubkeys(of: unlocked.keys)
        GuardedMemory.$budget.withValue(GuardedMemory.Budget(byteCount: 0)) {
            file.verifyCommits(keys: unlocked.keys, trustedKeyrings: unlocked.trustedKeyrings, attestors: unlocked.attestors)
        }
        #expect(file.recoveredCommit)
    }

    /// The recovery key signs what its handle writes with a key pair it
    /// derives in guarded memory. Before, running out there (a `try?`) gave
    /// no key pair, as for a credential that cannot sign: a handle without
    /// a signer (refusing every write), compaction and merge refused as for
    /// a passphrase, and the evaluation's check that the recovery key was
    /// replaced skipped. Under a ceiling the unlock before it runs out
    /// first, so the direct call is what fails on the old code.
    @Test func attackDerivingTheRecoveryKeysSignerWithGuardedMemoryRunningOutFailsAsItself() throws {
        let dir = TemporaryDirectory()
        let (vault, recovery) = try makeVault(dir)
        try vault.add(EntryBody(created: 1_700_000_000_010, text: "an entry"))
        let path = dir.file("v.quire")
        #expect(vault.author != nil)
        try Self.sweep("recovery") {
            let v = try Vault.open(at: path, credential: .recoveryKey(recovery), writable: false, options: fast)
            return v.author.map { "\($0)" } ?? "no author"
        }
        let none = GuardedMemory.Budget(byteCount: 0)
        #expect(throws: KeyError.format(.outOfGuardedMemory)) {
            try GuardedMemory.$budget.withValue(none) { try Credential.recoveryKey(recovery).signingKeyPair() }
        }
    }
}
