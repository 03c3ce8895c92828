import Foundation
@_spi(Format) @_spi(Crypto) import Quire
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
            // The root's slot (the bootstrap ends at the root key), the
            // newest rotation's (linked under the root), then the join's
            // (linked under that rotation), whose chain reaches the other
            // rotations: 3 (before the gate: 1, the join's, then by chain).
            #expect(opened.unlocked.slotTrials == 3)
            #expect(opened.unlocked.keyrings.count == heads + 2)
            #expect(opened.unlocked.keyrings.allSatisfy { $0.isTrusted })
            #expect(opened.unlocked.issues.isEmpty)
        }
        // A keyless flood after the join: four made-up keyrings, two device
        // slots each, naming the join as parent with random links. Their
        // links do not open under the join's key, so none of their slots is
        // tried (Spec/format.md §8.5 step 2, the gate; before: 8 + 1).
        let head = try vault.keyState().heads[0].id
        try KeyAttackTests.outsiderAppend(
            path,
            (0..<4).map { n in
                let r = SeededRandom(label: "flood slot \(n)")
                let slots: [KeySlot] = (0..<2).map { _ in .device(box: r.bytes(KeySlot.boxByteCount)) }
                return (20, KeyAttackTests.opaqueKeyring(parents: [head], slots: slots, epoch: 20, label: "flood \(n)"))
            })
        let flooded = try Vault.open(at: path, credential: .device(laptop.keyPair), writable: false, options: fast)
        #expect(flooded.unlocked.slotTrials == 3)
        #expect(flooded.unlocked.keyrings.filter { $0.isTrusted }.count == heads + 2)
    }

    /// Issue 12's flood, in small (`Spec/format.md §8.5` step 2, the gate):
    /// a writer who holds no key appends keyrings full of made-up slots of
    /// each credential's kind — copied passphrase slots (the real salt,
    /// parameters and public key, a random box), device and recovery slots
    /// — whose links are random. Before the gate each made-up slot of the
    /// credential's kind was one sealed box; now none is tried, whatever the
    /// shape: the slot trials are those of the clean vault.
    @Test(.weakPassphraseCost) func floodSlotTrialsAreThoseOfTheCleanVault() throws {
        let dir = TemporaryDirectory()
        let (vault, laptop, recovery) = try KeyAttackTests.laptopVault(dir, "gate")
        let path = dir.file("j.quire")
        try vault.setPassphrase(KeyTestSupport.secret("gate"), opsLimit: 1, memLimitBytes: 8192, now: KeyTestSupport.t0 + 1)
        let credentials: [(String, Credential)] = [
            ("device", .device(laptop.keyPair)), ("recovery", .recoveryKey(recovery)), ("passphrase", .passphrase(KeyTestSupport.secret("gate"))),
        ]
        func trials(_ file: String) throws -> [String: Int] {
            var out: [String: Int] = [:]
            for (name, credential) in credentials {
                let opened = try Vault.open(at: file, credential: credential, writable: false, options: fast)
                #expect(opened.unlocked.keyrings.filter(\.isTrusted).count == 2, "\(name) in \(file)")
                out[name] = opened.unlocked.slotTrials
            }
            return out
        }
        let clean = try trials(path)
        // The root holds a device and a recovery slot, the passphrase's
        // keyring a passphrase slot: one box each, for each credential.
        #expect(clean == ["device": 1, "recovery": 1, "passphrase": 1])
        let unlocked = try Vault.open(at: path, credential: .device(laptop.keyPair), writable: false, options: fast).unlocked
        let ids = unlocked.keyrings.map(\.id)
        let copied = try #require(unlocked.keyrings.last?.record.publicPart.slots.first { $0.kind == "passphrase" })
        guard case .passphrase(let salt, let ops, let mem, let pk, _) = copied else { throw CancellationError() }
        let shapes: [(String, [KeyringID], Int, (SeededRandom) -> KeySlot)] = [
            ("issue-sized", [ids[1]], 1, { _ in .device(box: []) }),
            ("passphrase", Array(ids.reversed()), 32, { r in .passphrase(salt: salt, opsLimit: ops, memLimitBytes: mem, publicKey: pk, box: r.bytes(KeySlot.boxByteCount)) }),
            ("device", Array(ids.reversed()), 32, { r in .device(box: r.bytes(KeySlot.boxByteCount)) }),
            ("recovery", [ids[0]], 32, { r in .recovery(box: r.bytes(KeySlot.boxByteCount)) }),
        ]
        for (shape, parents, count, make) in shapes {
            let file = dir.file("flood-\(shape).quire")
            try FileManager.default.copyItem(atPath: path, toPath: file)
            let frames: [(UInt32, [UInt8])] = (0..<12).map { n in
                let r = SeededRandom(label: "gate \(shape) \(n)")
                let slots: [KeySlot] =
                    shape == "issue-sized"
                    ? [
                        .passphrase(salt: salt, opsLimit: ops, memLimitBytes: mem, publicKey: pk, box: r.bytes(KeySlot.boxByteCount)),
                        .device(box: r.bytes(KeySlot.boxByteCount)), .recovery(box: r.bytes(KeySlot.boxByteCount)),
                    ]
                    : (0..<count).map { _ in make(r) }
                return (2, KeyAttackTests.opaqueKeyring(parents: parents, slots: slots, epoch: 2, label: "gate \(shape) \(n)"))
            }
            try KeyAttackTests.outsiderAppend(file, frames)
            // Before the gate: 12 keyrings × the made-up slots of each
            // credential's kind more (12 × 1 in the issue-sized flood, 12 ×
            // 32 in the others for the credential of the flood's kind).
            #expect(try trials(file) == clean, "\(shape)")
        }
    }

    /// Ninth review R9-3: the gate bounds what stands after the first
    /// keyring that opens for a credential, not what a keyless writer
    /// inserts before it. Made-up keyrings (no parents, random key
    /// commitments and boxes) and a junk commit inserted right after the
    /// file header are tried in the bootstrap, which goes in file order
    /// (`Spec/format.md §8.5` step 2): each made-up slot of the
    /// credential's kind costs one sealed box — exactly one, whatever the
    /// shape, so the cost is linear in the file — and the vault opens as
    /// before with every credential.
    @Test(.weakPassphraseCost) func insertedFloodCostsOneTrialPerMadeUpSlot() throws {
        let dir = TemporaryDirectory()
        let (vault, laptop, recovery) = try KeyAttackTests.laptopVault(dir, "inserted")
        let path = dir.file("j.quire")
        try vault.setPassphrase(KeyTestSupport.secret("gate"), opsLimit: 1, memLimitBytes: 8192, now: KeyTestSupport.t0 + 1)
        let credentials: [(String, Credential)] = [
            ("device", .device(laptop.keyPair)), ("recovery", .recoveryKey(recovery)), ("passphrase", .passphrase(KeyTestSupport.secret("gate"))),
        ]
        func trials(_ file: String) throws -> [String: Int] {
            var out: [String: Int] = [:]
            for (name, credential) in credentials {
                let opened = try Vault.open(at: file, credential: credential, writable: false, options: fast)
                #expect(opened.unlocked.keyrings.filter(\.isTrusted).count == 2, "\(name) in \(file)")
                #expect(opened.unlocked.issues.isEmpty, "\(name) in \(file)")
                out[name] = opened.unlocked.slotTrials
            }
            return out
        }
        let clean = try trials(path)
        #expect(clean == ["device": 1, "recovery": 1, "passphrase": 1])
        let unlocked = try Vault.open(at: path, credential: .device(laptop.keyPair), writable: false, options: fast).unlocked
        let copied = try #require(unlocked.keyrings.last?.record.publicPart.slots.first { $0.kind == "passphrase" })
        guard case .passphrase(let salt, let ops, let mem, let pk, _) = copied else { throw CancellationError() }
        let shapes: [(String, (SeededRandom) -> KeySlot)] = [
            ("device", { r in .device(box: r.bytes(KeySlot.boxByteCount)) }),
            ("recovery", { r in .recovery(box: r.bytes(KeySlot.boxByteCount)) }),
            ("passphrase", { r in .passphrase(salt: salt, opsLimit: ops, memLimitBytes: mem, publicKey: pk, box: r.bytes(KeySlot.boxByteCount)) }),
        ]
        let original = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let keyrings = 12, perKeyring = 16
        for (shape, make) in shapes {
            var flood: [UInt8] = []
            for n in 0..<keyrings {
                let r = SeededRandom(label: "inserted slots \(shape) \(n)")
                let body = KeyAttackTests.opaqueKeyring(
                    parents: [], slots: (0..<perKeyring).map { _ in make(r) }, epoch: 1, label: "inserted \(shape) \(n)")
                let keyCommit = try KeyringRecord(body: body, location: nil).publicPart.keyCommit
                flood +=
                    FrameHeader(kind: .keyring, flags: 0, keyID: KeyID(commitment: keyCommit), bodyLength: UInt32(body.count + 32)).encoded()
                    + body + BLAKE2b.hash(body, byteCount: 32)
            }
            let r = SeededRandom(label: "inserted \(shape) commit")
            flood += CommitChain.commitHeader(keyID: KeyID(commitment: r.bytes(6))).encoded() + r.bytes(CommitChain.bodyByteCount)
            let file = dir.file("inserted-\(shape).quire")
            let bytes = Array(original[..<FileHeader.byteCount]) + flood + Array(original[FileHeader.byteCount...])
            try Data(bytes).write(to: URL(fileURLWithPath: file))
            // Before the gate, and after it for what is inserted: 12 × 16
            // more boxes for the credential of the flood's kind, none for
            // the others.
            var expected = clean
            expected[shape, default: 0] += keyrings * perKeyring
            #expect(try trials(file) == expected, "\(shape)")
        }
    }
}
