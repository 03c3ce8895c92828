@_spi(Crypto) import QuireCrypto
@_spi(Format) import QuireFormat
@_spi(Format) import QuireKeys
import Testing

/// Builds a key graph by hand for rule 6 (`Spec/format.md §8.4`), in the
/// notation of the worked scenarios: devices `A`, `B`, `C`, `E`, `F`, `G`
/// and recovery keys `Q`, `Q2`, each an Ed25519 key pair named by a letter.
/// Every keyring starts a new epoch and wraps its key to a reader, `Z`,
/// who is no member, and to `Q` (a recovery key): `Z` opens every keyring
/// built here, so the whole graph is judged; `Q` also opens what a writer
/// adds.
final class KeyGraphBuilder {
    let dir = TemporaryDirectory()
    let random: SeededRandom
    private var written = 0
    let salt: [UInt8]
    let blobKey: SymmetricKey
    let reader: Ed25519.KeyPair
    /// The recovery key whose signing key pair is `Q`.
    let recovery: RecoveryKey
    private(set) var vaultID: VaultID?
    private var pairs: [String: Ed25519.KeyPair] = [:]
    private var built: [String: (id: KeyringID, key: EpochKey, members: [String: String])] = [:]
    private var frames: [(key: EpochKey, body: [UInt8])] = []
    private var rootKey: EpochKey?

    init(_ label: String) {
        random = SeededRandom(label: "key graph " + label)
        salt = random.bytes(16)
        blobKey = try! SymmetricKey(using: random)
        reader = try! Ed25519.KeyPair(using: SeededRandom(label: "reader Z"))
        recovery = recoveryKey("graph Q")
    }

    /// The key pair named `name`.
    func pair(_ name: String) -> Ed25519.KeyPair {
        if let p = pairs[name] { return p }
        // "Dz" is the reader Z enrolled as a device: it opens what writers
        // wrap to members only.
        let p =
            name == "Q"
            ? try! recovery.signingKeyPair()
            : name == "Dz" ? reader : try! Ed25519.KeyPair(using: SeededRandom(label: "graph member " + name))
        pairs[name] = p
        return p
    }

    /// The members `Q` (recovery), `A`, `B`, `C` (devices).
    static let base: [String: String] = ["Q": "recovery", "A": "device", "B": "device", "C": "device"]

    /// `members` without `names`, plus `add`.
    static func without(_ members: [String: String], _ names: String..., add: [String: String] = [:]) -> [String: String] {
        members.filter { !names.contains($0.key) }.merging(add) { _, new in new }
    }

    private func member(_ name: String, role: String) -> KeyringMember {
        KeyringMember(role: role, publicKey: pair(name).publicKey, name: name, added: 1)
    }

    /// Adds keyring `name`. A root (no parents) has epoch 1 and the vault's
    /// first key; another keyring starts an epoch one above its parents'.
    func add(_ name: String, _ parents: [String], signer: String, _ members: [String: String], removes: [String] = [], reason: String = "test") {
        let parentInfo = parents.map { built[$0]! }
        let key: EpochKey
        if parents.isEmpty {
            if rootKey == nil { rootKey = EpochKey(epoch: 1, key: try! SymmetricKey(using: random)) }
            key = rootKey!
            if vaultID == nil { vaultID = rootVaultID(signer: pair(signer).publicKey, keyCommit: key.commitment, salt: salt) }
        } else {
            key = EpochKey(epoch: parentInfo.map(\.key.epoch).max()! + 1, key: try! SymmetricKey(using: random))
        }
        let removed = removes.map { r in member(r, role: parentInfo.compactMap { $0.members[r] }.first ?? "device") }
        let content = KeyringContent(
            members: members.sorted { $0.key < $1.key }.map { member($0.key, role: $0.value) }, removed: removed, blobKey: blobKey, created: 2_000,
            reason: reason)
        let slots = [
            try! SlotCrypto.deviceSlot(for: key, devicePublicKey: reader.publicKey, vaultID: vaultID!, random: random),
            try! SlotCrypto.recoverySlot(for: key, recovery: recovery, vaultID: vaultID!, random: random),
        ]
        let body = try! KeyringBuilder.body(
            epochKey: key, vaultID: vaultID!, parents: parentInfo.map { KeyringBuilder.Parent(id: $0.id, key: $0.key) }, isEscrowFree: false,
            slots: slots.map { StoredSlot(slot: $0) }, vaultSalt: parents.isEmpty ? salt : nil, content: content, signer: pair(signer), random: random)
        built[name] = (KeyringBuilder.id(ofBody: body), key, members)
        frames.append((key, body))
    }

    /// The root `root`, signed by `A`, with the base members.
    static func based(_ label: String) -> KeyGraphBuilder {
        let g = KeyGraphBuilder(label)
        g.add("root", [], signer: "A", base)
        return g
    }

    /// Writes the vault (keyrings in the order added, or `order`) and
    /// unlocks it as `Z`, or with `credential`.
    func unlock(order: [String]? = nil, as credential: Credential? = nil) throws -> UnlockedKeys {
        let names = built.keys
        var list = frames
        if let order {
            let byName = Dictionary(uniqueKeysWithValues: names.map { n in (n, frames.first { KeyringBuilder.id(ofBody: $0.body) == built[n]!.id }!) })
            list = order.map { byName[$0]! }
        }
        written += 1
        let path = dir.file("v\(written).quire")
        _ = try VaultFile.create(
            at: path, vaultID: vaultID!, keys: KeySet(single: rootKey!.withBlobKey(blobKey)), random: random, options: fast, attestWith: pair("A")
        ) { (tx: PendingCommit) throws(FormatError) in
            for k in list { try tx.appendPlaintext(kind: .keyring, keyID: k.key.id, epoch: k.key.epoch, body: k.body) }
        }
        return try KeyringEvaluator.unlock(try VaultFile(path: path), with: credential ?? .device(reader))
    }

    /// The key state as `Z` (who reads every keyring) sees it.
    func state(as credential: Credential? = nil) throws -> KeyState {
        try KeyState(try unlock(as: credential), vaultID: vaultID!)
    }

    /// Appends what a writer proposed, named `names`.
    func append(_ proposals: [KeyringProposal], names: [String]) {
        for (p, name) in zip(proposals, names) {
            built[name] = (p.id, p.epochKey, [:])
            frames.append((p.epochKey, p.body))
        }
    }

    /// The parents of keyring `name`, by name.
    /// The epoch key of the keyring `name` added.
    func epochKey(of name: String) -> EpochKey { built[name]!.key }

    func parents(of name: String) throws -> [String] {
        let unlocked = try unlock()
        let ring = unlocked.keyrings.first { $0.id == built[name]!.id }!
        return ring.parents.map { id in built.first { $0.value.id == id }!.key }
    }

    /// The names of the trusted keyrings.
    func trusted(order: [String]? = nil, as credential: Credential? = nil) throws -> Set<String> {
        let unlocked = try unlock(order: order, as: credential)
        let trustedIDs = Set(unlocked.keyrings.filter(\.isTrusted).map(\.id))
        return Set(built.filter { trustedIDs.contains($0.value.id) }.keys)
    }

    /// The names of the keyrings reported with `code` when unlocked as `Z`
    /// (or with `credential`).
    func reported(_ code: String, as credential: Credential? = nil) throws -> Set<String> {
        let unlocked = try unlock(as: credential)
        let ids = Set(unlocked.issues.filter { $0.code == code }.compactMap { issue in
            unlocked.keyrings.first { ring in
                if case .removalTie(let l) = issue { return ring.location == l }
                if case .removalMutual(let l) = issue { return ring.location == l }
                return false
            }?.id
        })
        return Set(built.filter { ids.contains($0.value.id) }.keys)
    }

    /// One unlock as `Z`: the trusted keyrings, and the keyrings reported
    /// `removal_tie` and `removal_mutual`, by name.
    func outcome() throws -> (trusted: Set<String>, tie: Set<String>, mutual: Set<String>) {
        let unlocked = try unlock()
        func names(_ ids: Set<KeyringID>) -> Set<String> { Set(built.filter { ids.contains($0.value.id) }.keys) }
        func reported(_ code: String) -> Set<String> {
            let locations = unlocked.issues.compactMap { issue -> FrameLocation? in
                guard issue.code == code else { return nil }
                if case .removalTie(let l) = issue { return l }
                if case .removalMutual(let l) = issue { return l }
                return nil
            }
            return names(Set(unlocked.keyrings.filter { ring in locations.contains { $0 == ring.location } }.map(\.id)))
        }
        return (names(Set(unlocked.keyrings.filter(\.isTrusted).map(\.id))), reported("removal_tie"), reported("removal_mutual"))
    }

    /// The names of the keyrings that passed rules 1–5.
    func passing() throws -> Set<String> {
        let unlocked = try unlock()
        let ids = Set(unlocked.keyrings.filter(\.passesRules1To5).map(\.id))
        return Set(built.filter { ids.contains($0.value.id) }.keys)
    }

    /// Every name, in the order added.
    var names: [String] { frames.map { f in built.first { $0.value.id == KeyringBuilder.id(ofBody: f.body) }!.key } }
}

/// Rule 6 (`Spec/format.md §8.4`) on the worked scenarios and on the
/// attacks of the review of format 2 (C2, H1): each builds the key graph
/// with real, signed keyrings, checks which are trusted, and checks that
/// the file order (here reversed: children before parents) changes
/// nothing.
@Suite struct RemovalRuleTests {
    typealias G = KeyGraphBuilder
    static let m = G.base
    static let mE = G.base.merging(["E": "device"]) { a, _ in a }

    /// Trusted keyrings, the same in file order and reversed.
    static func trusted(_ g: G) throws -> Set<String> {
        let forward = try g.trusted()
        let backward = try g.trusted(order: g.names.reversed())
        #expect(forward == backward, "the file order changed the outcome")
        return forward
    }

    // MARK: - The worked scenarios (format.md §8.4)

    @Test func scenario1SimpleRemoval() throws {
        let g = G.based("s1")
        g.add("R", ["root"], signer: "A", G.without(Self.m, "B"), removes: ["B"])
        g.add("K", ["root"], signer: "B", Self.m)
        #expect(try Self.trusted(g) == ["root", "R"])
    }

    @Test func scenario2TwoDevicesRemoveEachOther() throws {
        let g = G.based("s2")
        g.add("RA", ["root"], signer: "A", G.without(Self.m, "B"), removes: ["B"])
        g.add("RB", ["root"], signer: "B", G.without(Self.m, "A"), removes: ["A"])
        g.add("afterRA", ["RA"], signer: "A", G.without(Self.m, "B"))
        #expect(try Self.trusted(g) == ["root", "RA", "RB"])
    }

    @Test func scenario3RemovedDeviceForksFromFarBack() throws {
        let enrols = G.based("s3 enrol")
        enrols.add("R", ["root"], signer: "A", G.without(Self.m, "B"), removes: ["B"])
        enrols.add("X", ["root"], signer: "B", Self.mE)
        #expect(try Self.trusted(enrols) == ["root", "R"])
        let removesC = G.based("s3 remove C")
        removesC.add("R", ["root"], signer: "A", G.without(Self.m, "B"), removes: ["B"])
        removesC.add("X", ["root"], signer: "B", G.without(Self.m, "C"), removes: ["C"])
        #expect(try Self.trusted(removesC) == ["root", "R"])
        let mutual = G.based("s3 mutual")
        mutual.add("R", ["root"], signer: "A", G.without(Self.m, "B"), removes: ["B"])
        mutual.add("EF", ["R"], signer: "A", G.without(Self.m, "B", add: ["F": "device"]))
        mutual.add("X", ["root"], signer: "B", G.without(Self.m, "A"), removes: ["A"])
        #expect(try Self.trusted(mutual) == ["root", "R", "X"])
    }

    @Test func scenario4RecoveryKeyAgainstAThief() throws {
        let replaces = G.based("s4 replace")
        replaces.add("RQ", ["root"], signer: "Q", G.without(Self.m, "B"), removes: ["B"])
        replaces.add("X", ["root"], signer: "B", G.without(Self.m, "Q", add: ["Q2": "recovery"]), removes: ["Q"], reason: "recovery")
        #expect(try Self.trusted(replaces) == ["root", "RQ"])
        let removesA = G.based("s4 remove A")
        removesA.add("RQ", ["root"], signer: "Q", G.without(Self.m, "B"), removes: ["B"])
        removesA.add("X", ["root"], signer: "B", G.without(Self.m, "A"), removes: ["A"])
        #expect(try Self.trusted(removesA) == ["root", "RQ"])
        let puppet = G.based("s4 puppet")
        puppet.add("RQ", ["root"], signer: "Q", G.without(Self.m, "B"), removes: ["B"])
        puppet.add("X", ["root"], signer: "B", Self.mE)
        puppet.add("Y", ["X"], signer: "E", G.without(Self.mE, "Q", add: ["Q2": "recovery"]), removes: ["Q"], reason: "recovery")
        #expect(try Self.trusted(puppet) == ["root", "RQ"])
    }

    // MARK: - C2: a removed device's puppet on a fork

    /// The main line: `A` removes `B` (`R`), `C` enrols `F` (`K1`), the
    /// recovery key enrols `G` (`K2`). `B` forks from the root and enrols a
    /// key `E` of its own (`X`).
    static func puppetGraph(_ label: String) -> G {
        let g = G.based(label)
        g.add("R", ["root"], signer: "A", G.without(m, "B"), removes: ["B"])
        g.add("K1", ["R"], signer: "C", G.without(m, "B", add: ["F": "device"]), reason: "enroll")
        g.add("K2", ["K1"], signer: "Q", G.without(m, "B", add: ["F": "device", "G": "device"]), reason: "enroll")
        g.add("X", ["root"], signer: "B", mE, reason: "enroll")
        return g
    }

    /// `E` removes `A`, the device that removed `B`. The old rule 6 let
    /// `Y1` cut `R`, so the thief's branch became the key graph (the
    /// documented "limit"). `Y1` is behind `R` — on a branch `B` started —
    /// and cuts nothing: `X` is cut, and the main line stands.
    @Test func attackPuppetRemovesItsRemover() throws {
        let g = Self.puppetGraph("puppet removes A")
        g.add("Y1", ["X"], signer: "E", G.without(Self.mE, "A"), removes: ["A"])
        #expect(try Self.trusted(g) == ["root", "R", "K1", "K2"])
    }

    /// `E` removes `C`. `Y2` was untrusted (its parent `X` was cut) yet cut
    /// `K1`, and `K2` with it, because cuts were computed over every
    /// keyring that passed rules 1–5: records under their epochs became
    /// unreadable for everyone, and no removal could repair it (review C2).
    @Test func attackPuppetOnACutBranchRemovesAnotherDevice() throws {
        let g = Self.puppetGraph("puppet removes C")
        g.add("Y2", ["X"], signer: "E", G.without(Self.mE, "C"), removes: ["C"])
        #expect(try Self.trusted(g) == ["root", "R", "K1", "K2"])
    }

    /// `E` replaces the recovery key with `Q2` on the fork, and `Q2` removes
    /// `A` (or `C`). `Z` is signed by a recovery member — but one installed
    /// only on the branch `B` started, so it does not count against `R`.
    @Test func attackPuppetInstallsItsOwnRecoveryKey() throws {
        for victim in ["A", "C"] {
            let g = Self.puppetGraph("puppet recovery key " + victim)
            g.add("Y", ["X"], signer: "E", G.without(Self.mE, "Q", add: ["Q2": "recovery"]), removes: ["Q"], reason: "recovery")
            g.add("Z", ["Y"], signer: "Q2", G.without(Self.mE, "Q", victim, add: ["Q2": "recovery"]), removes: [victim])
            #expect(try Self.trusted(g) == ["root", "R", "K1", "K2"], "victim \(victim)")
        }
        // Without a keyring of the real recovery key on the main line.
        let g = G.based("puppet recovery key, no Q")
        g.add("R", ["root"], signer: "A", G.without(Self.m, "B"), removes: ["B"])
        g.add("K1", ["R"], signer: "C", G.without(Self.m, "B", add: ["F": "device"]))
        g.add("X", ["root"], signer: "B", Self.mE)
        g.add("Y", ["X"], signer: "E", G.without(Self.mE, "Q", add: ["Q2": "recovery"]), removes: ["Q"], reason: "recovery")
        g.add("Z", ["Y"], signer: "Q2", G.without(Self.mE, "Q", "A", add: ["Q2": "recovery"]), removes: ["A"])
        #expect(try Self.trusted(g) == ["root", "R", "K1"])
    }

    /// The real recovery key, on a branch that passes through `B`'s
    /// concurrent enrollment of `E`, removes `A` (say `A` was stolen and
    /// removed `B`): the recovery key still wins.
    @Test func recoveryKeyBehindADeviceRemovalStillWins() throws {
        let g = G.based("honest recovery behind")
        g.add("R", ["root"], signer: "A", G.without(Self.m, "B"), removes: ["B"])
        g.add("X", ["root"], signer: "B", Self.mE)
        g.add("Z", ["X"], signer: "Q", G.without(Self.mE, "A"), removes: ["A"])
        #expect(try Self.trusted(g) == ["root", "X", "Z"])
        // The same with a recovery key that `C` installed concurrently (not
        // behind `R`), joined with `B`'s branch.
        let h = G.based("honest replaced recovery behind")
        h.add("R", ["root"], signer: "A", G.without(Self.m, "B"), removes: ["B"])
        h.add("X", ["root"], signer: "B", Self.mE)
        h.add("Y", ["root"], signer: "C", G.without(Self.m, "Q", add: ["Q2": "recovery"]), removes: ["Q"], reason: "recovery")
        h.add("J", ["Y", "X"], signer: "C", G.without(Self.mE, "Q", add: ["Q2": "recovery"]), reason: "join")
        h.add("Z", ["J"], signer: "Q2", G.without(Self.mE, "Q", "A", add: ["Q2": "recovery"]), removes: ["A"])
        #expect(try Self.trusted(h) == ["root", "X", "Y", "J", "Z"])
    }

    /// A removed creator signs a second root (same key, epoch 1) naming a
    /// recovery member of its own: the root defies the removal and is cut.
    @Test func attackRemovedCreatorSignsASecondRoot() throws {
        let g = G.based("second root")
        g.add("R", ["root"], signer: "C", G.without(Self.m, "A"), removes: ["A"])
        g.add("root2", [], signer: "A", ["Q2": "recovery", "A": "device"])
        g.add("Z", ["root2"], signer: "Q2", ["Q2": "recovery"])
        #expect(try Self.trusted(g) == ["root", "R"])
    }

    // MARK: - H1: the recovery key always wins

    /// The thief holds `B` and enrolled `E` on the main line (`EN`). The
    /// recovery key removes `B` (`RQ`) while `E` replaces the recovery key
    /// (`Y`). `RQ` was contested (it defies `Y`), so it was cut: `B` came
    /// back and the thief held the new recovery key (review H1, NEW-1). A
    /// replacement of the recovery member now defies every concurrent
    /// keyring that member signed: `RQ` and `Y` are mutual, `RQ` is signed
    /// by the recovery key, so `Y` is cut.
    @Test func attackReplacementConcurrentWithARecoveryRemoval() throws {
        let g = G.based("new-1")
        g.add("EN", ["root"], signer: "B", Self.mE, reason: "enroll")
        g.add("RQ", ["EN"], signer: "Q", G.without(Self.mE, "B"), removes: ["B"])
        g.add("Y", ["EN"], signer: "E", G.without(Self.mE, "Q", add: ["Q2": "recovery"]), removes: ["Q"], reason: "recovery")
        #expect(try Self.trusted(g) == ["root", "EN", "RQ"])
    }

    /// The same, with a lockdown: the recovery key removes `B` and `E` in
    /// one keyring (rule 5.10 lets a recovery member remove several).
    @Test func lockdownRemovesSeveralMembersAtOnce() throws {
        let g = G.based("lockdown")
        g.add("EN", ["root"], signer: "B", Self.mE, reason: "enroll")
        g.add("L", ["EN"], signer: "Q", G.without(Self.mE, "B", "E"), removes: ["B", "E"], reason: "lockdown")
        g.add("Y", ["EN"], signer: "E", G.without(Self.mE, "Q", add: ["Q2": "recovery"]), removes: ["Q"], reason: "recovery")
        #expect(try Self.trusted(g) == ["root", "EN", "L"])
        // A device may not.
        let d = G.based("device lockdown")
        d.add("L", ["root"], signer: "A", G.without(Self.m, "B", "C"), removes: ["B", "C"])
        #expect(try d.passing() == ["root"])
    }

    /// A device replaces the recovery key while the recovery key, unaware,
    /// rotates: the replacement loses.
    @Test func attackReplacementConcurrentWithAnyRecoveryKeyring() throws {
        let g = G.based("replacement vs rotation")
        g.add("X", ["root"], signer: "A", G.without(Self.m, "Q", add: ["Q2": "recovery"]), removes: ["Q"], reason: "recovery")
        g.add("K", ["root"], signer: "Q", Self.m, reason: "rotate")
        #expect(try Self.trusted(g) == ["root", "K"])
        // After it, not concurrently, a replacement stands.
        let s = G.based("replacement after removal")
        s.add("RQ", ["root"], signer: "Q", G.without(Self.m, "B"), removes: ["B"])
        s.add("X", ["RQ"], signer: "A", G.without(Self.m, "B", "Q", add: ["Q2": "recovery"]), removes: ["Q"], reason: "recovery")
        #expect(try Self.trusted(s) == ["root", "RQ", "X"])
    }

    /// The thief's `B` replaced the recovery key (`X`) and its new key
    /// removed the user's devices (`X2`). The replaced recovery key signs a
    /// removal of `B` from the root, a keyring in which it is still the
    /// recovery member: it wins.
    @Test func replacedRecoveryKeyRemovesTheThiefFromAFork() throws {
        let g = G.based("replaced recovery from a fork")
        g.add("X", ["root"], signer: "B", G.without(Self.m, "Q", add: ["Q2": "recovery"]), removes: ["Q"], reason: "recovery")
        g.add("X2", ["X"], signer: "Q2", G.without(Self.m, "Q", "A", "C", add: ["Q2": "recovery"]), removes: ["A", "C"], reason: "lockdown")
        g.add("L", ["root"], signer: "Q", G.without(Self.m, "B"), removes: ["B"])
        #expect(try Self.trusted(g) == ["root", "L"])
    }

    /// A limit (review H1, NEW-3): `B` answers `A`'s removal mutually from
    /// an old copy, which cuts what `A` signed after its removal and the
    /// recovery key's later removal of `C` built on it. The recovery key
    /// repairs it by removing `B` again from a keyring in which `B` is still
    /// a member.
    @Test func mutualAnswerCutsALaterRecoveryRemoval() throws {
        let g = G.based("new-3")
        g.add("R", ["root"], signer: "A", G.without(Self.m, "B"), removes: ["B"])
        g.add("EF", ["R"], signer: "A", G.without(Self.m, "B", add: ["F": "device"]))
        g.add("RQ", ["EF"], signer: "Q", G.without(Self.m, "B", "C", add: ["F": "device"]), removes: ["C"])
        g.add("X", ["root"], signer: "B", G.without(Self.m, "A"), removes: ["A"])
        #expect(try Self.trusted(g) == ["root", "R", "X"])
        g.add("L", ["RQ", "root"], signer: "Q", G.without(Self.m, "B", "C", add: ["F": "device"]), removes: ["B"])
        #expect(try Self.trusted(g) == ["root", "R", "EF", "RQ", "L"])
    }

    // MARK: - The writer's removal by the recovery key (keys.md §6.3)

    /// The recovery key's lockdown of `B` and `E` after the puppet removed
    /// `C`: its parents leave out every keyring `B` or `E` signed; `B`,
    /// already out on the main line, is removed again from the root.
    @Test func recoveryLockdownChoosesParentsOutsideTheTargetsBranches() throws {
        let g = Self.puppetGraph("writer lockdown")
        g.add("Y2", ["X"], signer: "E", G.without(Self.mE, "C"), removes: ["C"])
        let proposals = try KeyOperations.keyrings(
            for: .lockdown(publicKeys: [g.pair("B").publicKey, g.pair("E").publicKey]), state: try g.state(), signer: g.pair("Q"), now: 3_000,
            random: g.random)
        #expect(proposals.count == 1)
        g.append(proposals, names: ["L"])
        // The eligible parent first, then the holder (review 25 R25-1).
        #expect(try g.parents(of: "L") == ["K2", "root"])
        let q = Credential.recoveryKey(g.recovery)
        #expect(try g.trusted(as: q) == ["root", "R", "K1", "K2", "L"])
        let state = try g.state(as: q)
        #expect(state.heads.map(\.id) == [proposals[0].id])
        #expect(state.heads[0].content!.reason == "remove")
        #expect(state.heads[0].content!.removed.map(\.name) == ["B"])
    }

    /// The thief's `E` replaced the recovery key on the main line after
    /// `B` enrolled it. The replaced recovery key locks down `B` and `E`:
    /// the writer builds on the root, where it is still the recovery
    /// member, and the thief's branch is cut.
    @Test func replacedRecoveryKeyLocksDownFromAFork() throws {
        let g = G.based("writer replaced recovery")
        g.add("EN", ["root"], signer: "B", Self.mE, reason: "enroll")
        g.add("Y", ["EN"], signer: "E", G.without(Self.mE, "Q", add: ["Q2": "recovery"]), removes: ["Q"], reason: "recovery")
        #expect(try g.state().recoveryMember?.name == "Q2")
        let proposals = try KeyOperations.keyrings(
            for: .lockdown(publicKeys: [g.pair("B").publicKey, g.pair("E").publicKey]), state: try g.state(), signer: g.pair("Q"), now: 3_000,
            random: g.random)
        g.append(proposals, names: ["L"])
        #expect(try g.parents(of: "L") == ["root"])
        let q = Credential.recoveryKey(g.recovery)
        #expect(try g.trusted(as: q) == ["root", "L"])
        #expect(try g.state(as: q).recoveryMember?.name == "Q")
        // A device cannot lock down, nor can a key that never was a member.
        #expect(throws: KeyError.operationRefused(reason: "only the recovery key removes several members at once")) {
            _ = try KeyOperations.keyrings(
                for: .lockdown(publicKeys: [g.pair("C").publicKey]), state: try g.state(), signer: g.pair("A"), now: 3_001, random: g.random)
        }
    }

    /// Scenario 8 through the writer: asked to remove `B`, which is already
    /// out on its side, the recovery key removes it again with the root as
    /// a second parent, and the keyrings `B`'s mutual answer cut come back.
    @Test func recoveryKeyRemovesAnAnsweringDeviceAgain() throws {
        let g = G.based("writer new-3")
        g.add("R", ["root"], signer: "A", G.without(Self.m, "B"), removes: ["B"])
        g.add("EF", ["R"], signer: "A", G.without(Self.m, "B", add: ["F": "device"]))
        g.add("RQ", ["EF"], signer: "Q", G.without(Self.m, "B", "C", add: ["F": "device"]), removes: ["C"])
        g.add("X", ["root"], signer: "B", G.without(Self.m, "A"), removes: ["A"])
        let q = Credential.recoveryKey(g.recovery)
        #expect(try g.trusted(as: q) == ["root", "R", "X"])
        let before = try g.state(as: q)
        let proposals = try KeyOperations.keyrings(
            for: .remove(publicKey: g.pair("B").publicKey), state: before, signer: g.pair("Q"), now: 3_000, random: g.random)
        // Its commit extends the tip of the walk of the state it makes
        // (Spec/format.md §9.1 step 5): that state holds the key of `RQ`,
        // which it restores, though the state before it does not (review
        // 34b G1: the walk was given only the keys held before, so commits
        // under a restored rotation's key did not verify in it), and not
        // the key of `X`, which it cuts.
        let placement = try KeyOperations.commitPlacement(for: proposals, state: before, writeKey: proposals[0].epochKey)
        let kept = Set(try #require(placement.keptKeys).all.map(\.commitment))
        #expect(!before.trusted.contains { $0.record.publicPart.keyCommit == g.epochKey(of: "RQ").commitment })
        #expect(kept.contains(g.epochKey(of: "RQ").commitment))
        #expect(!kept.contains(g.epochKey(of: "X").commitment))
        #expect(placement.removed == [g.pair("B").publicKey])
        g.append(proposals, names: ["L"])
        // The eligible parent first, then the holder (review 25 R25-1).
        #expect(try g.parents(of: "L") == ["RQ", "root"])
        #expect(try g.trusted(as: q) == ["root", "R", "EF", "RQ", "L"])
        let state = try g.state(as: q)
        #expect(Set(state.devices.map(\.name)) == ["A", "F"])
        #expect(Set(state.removed.map(\.name)) == ["B", "C"])
    }

    /// Review 21 R21-1: `B` (the stolen phone) enrols a puppet `Z`; the
    /// laptop `A` removes `B` and enrols a new phone `F`; `B` answers from
    /// an old copy by removing `A` (mutual, and it cuts `F`'s enrolment);
    /// `C` writes a join on both removals. Locking `B` down, the recovery
    /// key must keep the answer's cut where `C` built on the answer: built
    /// on `C`'s join and on `EF`, the lockdown was untrusted, `Z` stayed a
    /// member through the join and read every later epoch.
    @Test func attackHonestJoinOnAnAnswerKeepsThePuppet() throws {
        let g = G.based("writer R21-1")
        let mZ = Self.m.merging(["Z": "device"]) { a, _ in a }
        g.add("EZ", ["root"], signer: "B", mZ, reason: "enroll")
        g.add("KL", ["EZ"], signer: "A", G.without(mZ, "B"), removes: ["B"])
        g.add("EF", ["KL"], signer: "A", G.without(mZ, "B", add: ["F": "device"]), reason: "enroll")
        g.add("XP", ["EZ"], signer: "B", G.without(mZ, "A"), removes: ["A"])
        g.add("JC", ["KL", "XP"], signer: "C", G.without(mZ, "A", "B"), reason: "rotate")
        let q = Credential.recoveryKey(g.recovery)
        let proposals = try KeyOperations.keyrings(
            for: .remove(publicKey: g.pair("B").publicKey), state: try g.state(as: q), signer: g.pair("Q"), now: 3_000, random: g.random)
        g.append(proposals, names: ["L"])
        #expect(try g.trusted(as: q).contains("L"))
        let state = try g.state(as: q)
        #expect(state.member(withKey: g.pair("B").publicKey) == nil)
        #expect(state.member(withKey: g.pair("Z").publicKey) == nil)
        #expect(state.member(withKey: g.pair("C").publicKey) != nil)
    }

    /// Review 22 R22-1: `B` (the stolen phone) enrols a puppet `Z`; the
    /// user removes `Z` from `C`; `Z` answers from `EZ` by removing `C`
    /// (mutual). Locking `B` down, the recovery key builds on `KZ`, where
    /// `Z` is already out: it must remove `Z` again, so that `Z`'s answer
    /// defies the lockdown and is cut (and `C` is a member). Before, `YZ`
    /// stayed a trusted head beside the lockdown: whatever its branch
    /// carried (a passphrase `B` set) kept reading new epochs.
    @Test func attackPuppetsAnswerStandsBesideTheLockdown() throws {
        let g = G.based("writer R22-1")
        let mZ = Self.m.merging(["Z": "device"]) { a, _ in a }
        g.add("EZ", ["root"], signer: "B", mZ, reason: "enroll")
        g.add("KZ", ["EZ"], signer: "C", G.without(mZ, "Z"), removes: ["Z"])
        g.add("YZ", ["EZ"], signer: "Z", G.without(mZ, "C"), removes: ["C"])
        let q = Credential.recoveryKey(g.recovery)
        let proposals = try KeyOperations.keyrings(
            for: .remove(publicKey: g.pair("B").publicKey), state: try g.state(as: q), signer: g.pair("Q"), now: 3_000, random: g.random)
        g.append(proposals, names: ["L"])
        let trusted = try g.trusted(as: q)
        #expect(trusted.contains("L"))
        #expect(!trusted.contains("YZ"))
        let state = try g.state(as: q)
        #expect(state.member(withKey: g.pair("B").publicKey) == nil)
        #expect(state.member(withKey: g.pair("Z").publicKey) == nil)
        #expect(state.member(withKey: g.pair("C").publicKey) != nil)
        #expect(state.heads.count == 1)
    }

    /// Review 23 R23-1: R22-1 after a replacement of the recovery key. `B`
    /// enrols a puppet `Z`; `C` removes `Z`; `Z` answers from `EZ` by
    /// removing `C`; then `A` replaces the recovery key `Q2` by `Q` (`RR`,
    /// on `KZ`). Every keyring that still lists `Z` has `Q2` as its
    /// recovery member, so none was a holder for removing `Z` again: the
    /// lockdown by `Q` skipped `Z` silently, `YZ` stood beside it with
    /// whatever its branch carried, `C` stayed out, and success was
    /// reported. A keyring already in the lockdown's ancestry is a holder
    /// whatever its recovery member.
    @Test func attackPuppetsAnswerSurvivesARecoveryReplacement() throws {
        let g = G("writer R23-1")
        let m2 = G.without(Self.m, "Q", add: ["Q2": "recovery"])
        let mZ = m2.merging(["Z": "device"]) { a, _ in a }
        g.add("root", [], signer: "A", m2)
        g.add("EZ", ["root"], signer: "B", mZ, reason: "enroll")
        g.add("KZ", ["EZ"], signer: "C", G.without(mZ, "Z"), removes: ["Z"])
        g.add("YZ", ["EZ"], signer: "Z", G.without(mZ, "C"), removes: ["C"])
        g.add("RR", ["KZ"], signer: "A", G.without(mZ, "Z", "Q2", add: ["Q": "recovery"]), removes: ["Q2"], reason: "recovery")
        let q = Credential.recoveryKey(g.recovery)
        #expect(try g.state(as: q).recoveryMember?.name == "Q")
        let proposals = try KeyOperations.keyrings(
            for: .remove(publicKey: g.pair("B").publicKey), state: try g.state(as: q), signer: g.pair("Q"), now: 3_000, random: g.random)
        g.append(proposals, names: ["L"])
        #expect(Set(try g.parents(of: "L")) == ["EZ", "RR"])
        let trusted = try g.trusted(as: q)
        #expect(trusted.contains("L"))
        #expect(!trusted.contains("YZ"))
        let state = try g.state(as: q)
        #expect(state.member(withKey: g.pair("B").publicKey) == nil)
        #expect(state.member(withKey: g.pair("Z").publicKey) == nil)
        #expect(state.member(withKey: g.pair("C").publicKey) != nil)
        #expect(state.recoveryMember?.name == "Q")
        #expect(state.heads.count == 1)
        // The writer's post-write check (Vault.changeKeys) finds nothing
        // beside this lockdown, and finds `Z` beside the one built before.
        func beside(_ g: G) throws -> [String] {
            let state = try g.state(as: q)
            let lockdown = try g.unlock(as: q).keyrings.last { $0.signer == g.pair("Q").publicKey }!
            return KeyOperations.suspectsBeside(
                lockdown.id, removing: [g.pair("B").publicKey], keeping: [], signer: g.pair("Q").publicKey, in: state
            ).map(\.name)
        }
        #expect(try beside(g) == [])
        let old = G("writer R23-1")
        old.add("root", [], signer: "A", m2)
        old.add("EZ", ["root"], signer: "B", mZ, reason: "enroll")
        old.add("KZ", ["EZ"], signer: "C", G.without(mZ, "Z"), removes: ["Z"])
        old.add("YZ", ["EZ"], signer: "Z", G.without(mZ, "C"), removes: ["C"])
        old.add("RR", ["KZ"], signer: "A", G.without(mZ, "Z", "Q2", add: ["Q": "recovery"]), removes: ["Q2"], reason: "recovery")
        old.add("L", ["RR"], signer: "Q", G.without(mZ, "Z", "Q2", "B", add: ["Q": "recovery"]), removes: ["B"], reason: "lockdown")
        #expect(try old.trusted(as: q).isSuperset(of: ["L", "YZ"]))
        #expect(try beside(old) == ["Z"])
    }

    /// Review 25 R25-1: the thief's `B` replaced the recovery key `Q2` by
    /// its own `Q3` (`T`) concurrently with the user's replacement by `Q`
    /// (`RR`), enrolled a puppet `Z` (`T'`), then joined both keeping `Q`
    /// and removing `Z` but not `Q3` (`J`); `Z` answers by removing `B`
    /// (`YZ`, mutual with `J`); `A` writes on `J` (`E`). Locking `B` down,
    /// `T'` holds `Z` for its removal again; first in file order, it made
    /// `Q3` the state's recovery member, and the writer refused the
    /// recovery key `Q` itself ("neither"), for good. The eligible parents
    /// now come first. A keyring `Q3` signs on `T'` (`S`) still stands
    /// beside the lockdown — `T'`, in the ancestry of every keyring the
    /// user built on `J`, makes `Q3` speak for the recovery key there
    /// (Spec/format.md §8.4, *recovery-signed for*) — and the writer's
    /// post-write check names it instead of reporting success.
    @Test func attackThiefJoinKeepsItsRecoveryKeyInTheAncestry() throws {
        func graph(withS: Bool) -> G {
            let g = G("writer R25-1")
            let m2 = G.without(Self.m, "Q", add: ["Q2": "recovery"])
            g.add("root", [], signer: "A", m2)
            g.add("RR", ["root"], signer: "A", Self.m, removes: ["Q2"], reason: "recovery")
            let m3 = G.without(m2, "Q2", add: ["Q3": "recovery"])
            g.add("T", ["root"], signer: "B", m3, removes: ["Q2"], reason: "recovery")
            let m3Z = m3.merging(["Z": "device"]) { a, _ in a }
            g.add("T'", ["T"], signer: "B", m3Z, reason: "enroll")
            g.add("J", ["RR", "T'"], signer: "B", Self.m, removes: ["Z"], reason: "join")
            g.add("YZ", ["T'"], signer: "Z", G.without(m3Z, "B"), removes: ["B"])
            if withS { g.add("S", ["T'"], signer: "Q3", m3Z.merging(["D": "device"]) { a, _ in a }, reason: "enroll") }
            g.add("E", ["J"], signer: "A", Self.m, reason: "rotate")
            return g
        }
        let q = Credential.recoveryKey(graph(withS: false).recovery)
        func lockDown(_ g: G) throws -> (trusted: Set<String>, state: KeyState, beside: [(name: String, isRecoveryKey: Bool)]) {
            let proposals = try KeyOperations.keyrings(
                for: .remove(publicKey: g.pair("B").publicKey), state: try g.state(as: q), signer: g.pair("Q"), now: 3_000, random: g.random)
            g.append(proposals, names: ["L"])
            let state = try g.state(as: q)
            let lockdown = try g.unlock(as: q).keyrings.last { $0.signer == g.pair("Q").publicKey }!
            let beside = KeyOperations.suspectsBeside(
                lockdown.id, removing: [g.pair("B").publicKey], keeping: [], signer: g.pair("Q").publicKey, in: state)
            return (try g.trusted(as: q), state, beside)
        }
        let g = graph(withS: false)
        #expect(try g.trusted(as: q).contains("YZ"))
        let plain = try lockDown(g)
        #expect(plain.trusted.contains("L"))
        #expect(!plain.trusted.contains("YZ"))
        #expect(plain.state.recoveryMember?.name == "Q")
        #expect(Set(plain.state.removed.map(\.name)).isSuperset(of: ["B", "Z"]))
        #expect(plain.state.member(withKey: g.pair("C").publicKey) != nil)
        #expect(plain.beside.isEmpty)
        let withS = try lockDown(graph(withS: true))
        #expect(withS.trusted.contains("L"))
        #expect(withS.beside.map(\.name) == ["Q3"] && withS.beside.allSatisfy(\.isRecoveryKey))
        // Review 26 R26-1, the residual pinned: `J` left `Q3` a recovery key
        // of everything built on it. After the lockdown, `Q3` signs `S'` on
        // `T'` and `E`, removing `Q`: each is recovery-signed for the other,
        // so the lockdown is contested and cuts nothing (`YZ` stands again).
        // The remedy is a new vault (Spec/keys.md §6.3).
        g.add("S'", ["T'", "E"], signer: "Q3", G.without(Self.m, "Q", add: ["Q3": "recovery"]), removes: ["Q"], reason: "recovery")
        let after = try g.trusted(as: q)
        #expect(after.isSuperset(of: ["L", "S'", "YZ"]))
        #expect(try g.reported("removal_mutual", as: q).isSuperset(of: ["L", "S'"]))
    }

    /// Review 24 R24-2: a head that still has the recovery key `Q` (`H`,
    /// `B` enrols `D`) beside one that replaced it by `Q2` (`T`): a writer
    /// asks which to keep (Spec/keys.md §6.9), as it did before R23-1's
    /// fix, which ignored a replaced key among the heads' recovery keys
    /// for every change, and so kept `Q2` without asking. Only a lockdown
    /// asks nothing.
    @Test func aHeadWithTheReplacedRecoveryKeyStillAsksForAChoice() throws {
        let g = G.based("writer R24-2")
        g.add("H", ["root"], signer: "B", Self.m.merging(["D": "device"]) { a, _ in a }, reason: "enroll")
        g.add("T", ["root"], signer: "B", G.without(Self.m, "Q", add: ["Q2": "recovery"]), removes: ["Q"], reason: "recovery")
        let state = try g.state()
        #expect(KeyOperations.recoveryKeyChoices(in: state).count == 2)
        #expect(throws: KeyError.recoveryKeyChoiceNeeded(KeyOperations.recoveryKeyChoices(in: state))) {
            _ = try KeyOperations.keyrings(for: .rotate, state: state, signer: g.pair("A"), now: 3_000, random: g.random)
        }
    }

    // MARK: - Third review, item 1: only primary removals put keyrings behind

    /// The base members and `D`, in a root signed by `A`.
    static let mD = G.base.merging(["D": "device"]) { a, _ in a }
    static func basedWithD(_ label: String) -> G {
        let g = G(label)
        g.add("root", [], signer: "A", mD)
        return g
    }

    /// Scenario 5, then a device removal at the head. `B`'s puppet `E`
    /// removes `A` or `C` (`Y`, uncontested: nobody can remove `E`). Every
    /// keyring after `R` (or `K1`) defied `Y`, so the whole main line was
    /// behind `Y` and silenced: `A`'s later removal of `D` (`Z2`) cut
    /// nothing, and `D`'s concurrent enrollment (`W`) stood. `Y` is itself
    /// behind `R`, an uncontested removal, so it is not primary: nothing is
    /// behind it, and it counts towards contesting nothing.
    @Test func attackPuppetSilencesALaterDeviceRemoval() throws {
        for victim in ["A", "C"] {
            let g = Self.scenario9("puppet silences, victim " + victim, victim: victim)
            #expect(try Self.trusted(g) == ["root", "R", "K1", "K2", "Z2"], "victim \(victim)")
        }
    }

    /// Scenario 9 up to `W`: `D` enrols `H` on the main line (`W`) while
    /// `A` removes `D` (`Z2`), after `B`'s puppet `E` removed `victim`.
    static func scenario9(_ label: String, victim: String) -> G {
        let g = Self.basedWithD(label)
        g.add("R", ["root"], signer: "A", G.without(Self.mD, "B"), removes: ["B"])
        g.add("K1", ["R"], signer: "C", G.without(Self.mD, "B", add: ["F": "device"]), reason: "enroll")
        g.add("K2", ["K1"], signer: "Q", mainLine9, reason: "enroll")
        g.add("X", ["root"], signer: "B", Self.mD.merging(["E": "device"]) { a, _ in a }, reason: "enroll")
        g.add("Y", ["X"], signer: "E", G.without(Self.mD, victim, add: ["E": "device"]), removes: [victim])
        g.add("Z2", ["K2"], signer: "A", G.without(mainLine9, "D"), removes: ["D"])
        g.add("W", ["K2"], signer: "D", mainLine9.merging(["H": "device"]) { a, _ in a }, reason: "enroll")
        return g
    }
    static let mainLine9 = G.without(mD, "B", add: ["F": "device", "G": "device"])

    /// Scenario 2, joined, then a device removal. `A` and `B` removed each
    /// other (`RA`, `RB`, mutual); `C` joins them (`J`). `J` has `RB` as an
    /// ancestor, which defies `RA`, so `J` and every keyring after it were
    /// behind `RA` and silenced: `C`'s removal of `D` (`Z`) cut nothing and
    /// `D`'s concurrent enrollment (`W`) stood. A keyring mutual with the
    /// removal starts no branch behind it.
    @Test func attackJoinAfterMutualRemovalSilencesALaterRemoval() throws {
        let g = Self.basedWithD("mutual join silences")
        g.add("RA", ["root"], signer: "A", G.without(Self.mD, "B"), removes: ["B"])
        g.add("RB", ["root"], signer: "B", G.without(Self.mD, "A"), removes: ["A"])
        g.add("J", ["RA", "RB"], signer: "C", G.without(Self.mD, "A", "B"), reason: "join")
        g.add("Z", ["J"], signer: "C", G.without(Self.mD, "A", "B", "D"), removes: ["D"])
        g.add("W", ["J"], signer: "D", G.without(Self.mD, "A", "B", add: ["H": "device"]), reason: "enroll")
        #expect(try Self.trusted(g) == ["root", "RA", "RB", "J", "Z"])
    }

    /// Fourth review, K1: scenario 9, then `D`'s puppet `H` (enrolled by
    /// `W`) removes `A`, the remover (`W2`). With two passes the whole main
    /// line after `R` was silenced in the first by the puppet's `Y`, so `Z2`
    /// was not primary, nothing was behind it, and `W2` cut it. Repeated
    /// until *primary* is stable, `Y` is not primary, `Z2` is, `W2` is
    /// behind it and silenced: `Z2` stands, `W` is cut with `W2`.
    @Test func attackPuppetAnswersALaterDeviceRemoval() throws {
        for victim in ["A", "C"] {
            let g = Self.scenario9("puppet answers, victim " + victim, victim: victim)
            g.add("W2", ["W"], signer: "H", G.without(Self.mainLine9.merging(["H": "device"]) { a, _ in a }, "A"), removes: ["A"])
            #expect(try Self.trusted(g) == ["root", "R", "K1", "K2", "Z2"], "victim \(victim)")
        }
    }

    /// Fourth review, K1: scenario 10, then `D`'s puppet `H` (enrolled by
    /// `W`) removes `C`, the remover (`W2`). `J` descends from `RB`, which
    /// defied the uncontested `RA` in the first pass, so `Z` was not primary
    /// and `W2` cut it. With the mutual exception in every pass, `Z` is
    /// primary and `W2` is behind it: `Z` stands.
    @Test func attackPuppetAnswersARemovalAfterAMutualJoin() throws {
        let g = Self.basedWithD("puppet answers after mutual join")
        g.add("RA", ["root"], signer: "A", G.without(Self.mD, "B"), removes: ["B"])
        g.add("RB", ["root"], signer: "B", G.without(Self.mD, "A"), removes: ["A"])
        g.add("J", ["RA", "RB"], signer: "C", G.without(Self.mD, "A", "B"), reason: "join")
        g.add("Z", ["J"], signer: "C", G.without(Self.mD, "A", "B", "D"), removes: ["D"])
        let withH = G.without(Self.mD, "A", "B", add: ["H": "device"])
        g.add("W", ["J"], signer: "D", withH, reason: "enroll")
        g.add("W2", ["W"], signer: "H", G.without(withH, "C"), removes: ["C"])
        #expect(try Self.trusted(g) == ["root", "RA", "RB", "J", "Z"])
    }

    /// Rule 6's tie-break: two removals, each on a branch the other's
    /// removed member started, neither mutual. `C` enrols `F` (`a1`) and `A`
    /// then removes `B` (`RA`); concurrently `B` enrols `G` (`b1`) and then
    /// removes `C` (`RB`). `RA` is behind `RB` through `a1`, `RB` behind
    /// `RA` through `b1`: the primary set alternates, and the last pass
    /// treats the two as mutual (scenario 12): neither is silenced, nothing
    /// before them is cut, both removals stand, and both are reported.
    @Test func removalsBehindEachOtherSettleByTheTieBreak() throws {
        let g = Self.basedWithD("removals behind each other")
        g.add("a1", ["root"], signer: "C", Self.mD.merging(["F": "device"]) { a, _ in a }, reason: "enroll")
        g.add("RA", ["a1"], signer: "A", G.without(Self.mD, "B", add: ["F": "device"]), removes: ["B"])
        g.add("b1", ["root"], signer: "B", Self.mD.merging(["G": "device"]) { a, _ in a }, reason: "enroll")
        g.add("RB", ["b1"], signer: "B", G.without(Self.mD, "C", add: ["G": "device"]), removes: ["C"])
        #expect(try Self.trusted(g) == ["root", "a1", "RA", "b1", "RB"])
        #expect(try g.reported("removal_tie") == ["RA", "RB"])
    }

    // MARK: - Sixth review, R6-3: a removed device's puppet in a tie

    /// `M` is a member of the root; `M` signs `Y1` and `A` then removes `B`
    /// (`R0`). `B` forks from the root and enrols its puppet `P` (`KB`),
    /// and `P` removes `M` (`R2`): `R0` lies on `M`'s branch, `R2` on `B`'s,
    /// neither mutual — the cycle of format.md §8.4 "Termination".
    static let mM = G.base.merging(["M": "device"]) { a, _ in a }
    static func tie(_ label: String) -> G {
        let g = G(label)
        g.add("root", [], signer: "A", mM)
        g.add("Y1", ["root"], signer: "M", mM, reason: "rotate")
        g.add("R0", ["Y1"], signer: "A", G.without(mM, "B"), removes: ["B"])
        let withP = mM.merging(["P": "device"]) { a, _ in a }
        g.add("KB", ["root"], signer: "B", withP, reason: "enroll")
        g.add("R2", ["KB"], signer: "P", G.without(withP, "M"), removes: ["M"])
        return g
    }

    /// Then `B`, removed, goes on signing on its branch: it enrols a second
    /// puppet `P2` (`K3`, parent `R2`). With the union of the last two
    /// passes both removals were silenced, so neither cut anything: `K3`
    /// stood and `P2` was a current member. Treated as mutual, `R0` is not
    /// silenced and cuts `K3`, which is not before `R2`; `B` and `M` stay
    /// removed. `P`, enrolled before `R2`, is a puppet of `R0` and leaves
    /// the key state (seventh review R7-2; before, it stayed a member).
    @Test func attackRemovedDeviceGoesOnSigningInATie() throws {
        let g = Self.tie("tie, B goes on")
        let withP = Self.mM.merging(["P": "device"]) { a, _ in a }
        g.add("K3", ["R2"], signer: "B", G.without(withP, "M", add: ["P2": "device"]), reason: "enroll")
        #expect(try Self.trusted(g) == ["root", "Y1", "R0", "KB", "R2"])
        #expect(try g.reported("removal_tie") == ["R0", "R2"])
        let state = try g.state()
        #expect(Set(state.removed.map(\.name)) == ["B", "M", "P"])
        #expect(Set(state.members.map(\.name)) == ["Q", "A", "C"])
    }

    /// What the other removed member signs after the tie is cut too, as in
    /// scenario 2: `M` enrols `N` after `R0` (`YM`).
    @Test func tieCutsWhatEitherRemovedMemberSignsAfter() throws {
        let g = Self.tie("tie, M goes on")
        g.add("YM", ["R0"], signer: "M", G.without(Self.mM, "B", add: ["N": "device"]), reason: "enroll")
        #expect(try Self.trusted(g) == ["root", "Y1", "R0", "KB", "R2"])
        #expect(try g.reported("removal_tie") == ["R0", "R2"])
    }

    /// The recovery key still wins after a tie: it locks down `B` and its
    /// puppet `P`; the writer leaves out every keyring they signed, so
    /// `KB` defies the lockdown and is cut, `R2` with it: `M` is a member
    /// again, and nothing is tied any more.
    @Test func recoveryKeyLocksDownAfterATie() throws {
        let g = Self.tie("tie, recovery lockdown")
        let proposals = try KeyOperations.keyrings(
            for: .lockdown(publicKeys: [g.pair("B").publicKey, g.pair("P").publicKey]), state: try g.state(), signer: g.pair("Q"), now: 3_000,
            random: g.random)
        g.append(proposals, names: ["L"])
        let q = Credential.recoveryKey(g.recovery)
        #expect(try g.trusted(as: q) == ["root", "Y1", "R0", "L"])
        let state = try g.state(as: q)
        #expect(Set(state.members.map(\.name)) == ["Q", "A", "C", "M"])
        #expect(try g.reported("removal_tie", as: q).isEmpty)
        // Z, who cannot open the lockdown (the writer wraps it to members
        // only), still sees the tie.
        #expect(try g.reported("removal_tie") == ["R0", "R2"])
    }

    // MARK: - Seventh review, R7-1 and R7-2

    /// R7-1, scenario 5 mirrored: `C` signs `Y1` and `A` then removes the
    /// stolen `B` (`R`); `B` answers with one keyring from an old copy,
    /// removing `C` (`X`, parent the root). `X` defied `R` directly but lay
    /// on no branch against it (only a keyring's ancestors counted), while
    /// `R` lay on `C`'s branch against `X`: `R` was silenced, `X` cut `Y1`,
    /// and `B` was a current member again. The keyring itself now counts:
    /// each removal lies on the other's removed member's branch, a tie —
    /// both stand, `B` and `C` are removed, both are reported.
    @Test func attackRemovedDeviceComesBackWithOneKeyring() throws {
        let g = G.based("R7-1")
        g.add("Y1", ["root"], signer: "C", Self.m, reason: "rotate")
        g.add("R", ["Y1"], signer: "A", G.without(Self.m, "B"), removes: ["B"])
        g.add("X", ["root"], signer: "B", G.without(Self.m, "C"), removes: ["C"])
        #expect(try Self.trusted(g) == ["root", "Y1", "R", "X"])
        #expect(try g.reported("removal_tie") == ["R", "X"])
        let state = try g.state()
        #expect(Set(state.removed.map(\.name)) == ["B", "C"])
        #expect(Set(state.members.map(\.name)) == ["Q", "A"])
    }

    /// R7-2: in the tie of scenario 12, `P`, the key `B` enrolled on its
    /// fork before its answer, stayed a current member. A key that a
    /// removed member enrolled outside the removal's ancestors is that
    /// member's puppet: the removal removes it too (format.md §8.4 rule 6,
    /// *removes*), so `P` is out of the key state and what it signs after
    /// is cut.
    @Test func attackTieSheltersAPuppet() throws {
        let g = Self.tie("R7-2")
        #expect(try Self.trusted(g) == ["root", "Y1", "R0", "KB", "R2"])
        #expect(try g.reported("removal_tie") == ["R0", "R2"])
        let state = try g.state()
        #expect(Set(state.removed.map(\.name)) == ["B", "M", "P"])
        #expect(Set(state.members.map(\.name)) == ["Q", "A", "C"])
        let withP = Self.mM.merging(["P": "device"]) { a, _ in a }
        g.add("K4", ["R2"], signer: "P", G.without(withP, "M", add: ["P2": "device"]), reason: "enroll")
        #expect(try Self.trusted(g) == ["root", "Y1", "R0", "KB", "R2"])
    }

    /// A direct answer (scenario 3) is reported, and the key the answering
    /// device enrolled on its fork before answering goes with it.
    @Test func mutualAnswerIsReportedAndRemovesItsPuppets() throws {
        let g = G.based("mutual puppet")
        g.add("R", ["root"], signer: "A", G.without(Self.m, "B"), removes: ["B"])
        g.add("X", ["root"], signer: "B", Self.mE, reason: "enroll")
        g.add("Y", ["X"], signer: "B", G.without(Self.mE, "A"), removes: ["A"])
        #expect(try Self.trusted(g) == ["root", "R", "X", "Y"])
        #expect(try g.reported("removal_mutual") == ["R", "Y"])
        let state = try g.state()
        #expect(Set(state.removed.map(\.name)) == ["A", "B", "E"])
        #expect(Set(state.members.map(\.name)) == ["Q", "C"])
    }

    // MARK: - Eighth review, R8-1 and R8-5

    /// R8-1 (a), scenario 14: `C` enrols `D` (`EN`); `A` removes the stolen
    /// `B` (`R`, after `EN`); `B`, from an old copy, enrols `D`'s public key
    /// on a fork (`X`) — enrolling needs only a public key. `D` was a puppet
    /// of `R`: out of the key state, and its rotation `K2` was cut, with no
    /// warning. A key `R` saw is never its puppet: only `X` is cut.
    @Test func attackRemovedDeviceEnrolsAnHonestDevice() throws {
        let g = G.based("R8-1 a")
        let withD = Self.m.merging(["D": "device"]) { a, _ in a }
        g.add("EN", ["root"], signer: "C", withD, reason: "enroll")
        g.add("R", ["EN"], signer: "A", G.without(withD, "B"), removes: ["B"])
        g.add("X", ["root"], signer: "B", withD, reason: "enroll")
        g.add("K2", ["R"], signer: "D", G.without(withD, "B"), reason: "rotate")
        #expect(try Self.trusted(g) == ["root", "EN", "R", "K2"])
        #expect(try g.reported("removal_mutual").isEmpty)
        let state = try g.state()
        #expect(Set(state.removed.map(\.name)) == ["B"])
        #expect(Set(state.members.map(\.name)) == ["Q", "A", "C", "D"])
    }

    /// R9-1, scenario 15: `A` removes the stolen `B` (`R`); `B`, from an
    /// old copy, enrols `P1` (`X1`) and `P2` (`X2`) on parallel branches,
    /// `P1` enrols `P2` (`X3`) and `P2` enrols `P1` (`X4`), and `B` answers
    /// (`X`, joining both). Each of `P1`, `P2` had an enroler signed by a
    /// key that was "not a puppet yet", so the least fixpoint never took
    /// either: both stayed current members, and an honest join after the
    /// mutual removal (scenario 10, `J`) carried them on — `P1` signed `K`.
    /// In the tie of scenario 12 (`R2`, signed by `P1`, removes `C`) the
    /// same. The puppets are now the keys `B` brought in that no key `R`
    /// keeps vouches for.
    @Test func attackRemovedDeviceSheltersPuppetsInACycle() throws {
        let both = Self.m.merging(["P1": "device", "P2": "device"]) { a, _ in a }
        func cycle(_ g: G) {
            g.add("X1", ["root"], signer: "B", Self.m.merging(["P1": "device"]) { a, _ in a }, reason: "enroll")
            g.add("X2", ["root"], signer: "B", Self.m.merging(["P2": "device"]) { a, _ in a }, reason: "enroll")
            g.add("X3", ["X1"], signer: "P1", both, reason: "enroll")
            g.add("X4", ["X2"], signer: "P2", both, reason: "enroll")
        }
        let g = G.based("R9-1 mutual")
        g.add("R", ["root"], signer: "A", G.without(Self.m, "B"), removes: ["B"])
        cycle(g)
        g.add("X", ["X3", "X4"], signer: "B", G.without(both, "A"), removes: ["A"])
        #expect(try Self.trusted(g) == ["root", "R", "X1", "X2", "X3", "X4", "X"])
        #expect(try g.reported("removal_mutual") == ["R", "X"])
        var state = try g.state()
        #expect(Set(state.removed.map(\.name)) == ["A", "B", "P1", "P2"])
        #expect(Set(state.members.map(\.name)) == ["Q", "C"])

        // `C` joins both sides with the key state's members (keys.md §6.8).
        let joined = G.without(both, "A", "B")
        g.add("J", ["R", "X"], signer: "C", joined, reason: "rotate")
        g.add("K", ["J"], signer: "P1", joined, reason: "rotate")
        #expect(try Self.trusted(g) == ["root", "R", "X1", "X2", "X3", "X4", "X", "J"])
        state = try g.state()
        #expect(Set(state.members.map(\.name)) == ["Q", "C"])

        let t = G.based("R9-1 tie")
        t.add("Y1", ["root"], signer: "C", Self.m, reason: "rotate")
        t.add("R0", ["Y1"], signer: "A", G.without(Self.m, "B"), removes: ["B"])
        cycle(t)
        t.add("R2", ["X3", "X4"], signer: "P1", G.without(both, "C"), removes: ["C"])
        #expect(try Self.trusted(t) == ["root", "Y1", "R0", "X1", "X2", "X3", "X4", "R2"])
        #expect(try t.reported("removal_tie") == ["R0", "R2"])
        state = try t.state()
        #expect(Set(state.removed.map(\.name)) == ["B", "C", "P1", "P2"])
        #expect(Set(state.members.map(\.name)) == ["Q", "A"])
    }

    /// R8-1 (b): `A` enrols `C` (`EN`), `C` removes the stolen `B` (`R`);
    /// `B` enrols its remover on a fork (`X`). `C` was a puppet of its own
    /// removal, and the whole line after it — `A`'s keyrings too — was cut.
    @Test func attackRemovedDeviceEnrolsItsRemover() throws {
        let g = G("R8-1 b")
        let first: [String: String] = ["Q": "recovery", "A": "device", "B": "device"]
        g.add("root", [], signer: "A", first)
        g.add("EN", ["root"], signer: "A", Self.m, reason: "enroll")
        g.add("R", ["EN"], signer: "C", G.without(Self.m, "B"), removes: ["B"])
        g.add("X", ["root"], signer: "B", Self.m, reason: "enroll")
        g.add("K2", ["R"], signer: "C", G.without(Self.m, "B"), reason: "rotate")
        g.add("K3", ["K2"], signer: "A", G.without(Self.m, "B"), reason: "rotate")
        #expect(try Self.trusted(g) == ["root", "EN", "R", "K2", "K3"])
        #expect(Set(try g.state().members.map(\.name)) == ["Q", "A", "C"])
    }

    /// R8-1 (c): `A` replaces the leaked recovery key `Q` by `Q2` (`RP`) and
    /// removes `B` (`R`); `B` enrols `Q2` as a device on a fork (`X`). The
    /// vault's recovery key was a puppet: out of the key state, its
    /// keyrings cut.
    @Test func attackRemovedDeviceEnrolsTheNewRecoveryKey() throws {
        let g = G.based("R8-1 c")
        let replaced = G.without(Self.m, "Q", add: ["Q2": "recovery"])
        g.add("RP", ["root"], signer: "A", replaced, removes: ["Q"], reason: "recovery")
        g.add("R", ["RP"], signer: "A", G.without(replaced, "B"), removes: ["B"])
        g.add("X", ["root"], signer: "B", Self.m.merging(["Q2": "device"]) { a, _ in a }, reason: "enroll")
        g.add("K2", ["R"], signer: "Q2", G.without(replaced, "B"), reason: "rotate")
        #expect(try Self.trusted(g) == ["root", "RP", "R", "K2"])
        let state = try g.state()
        #expect(Set(state.removed.map(\.name)) == ["Q", "B"])
        #expect(state.members.first { $0.role == "recovery" }?.name == "Q2")
    }

    /// R8-1 (d), scenario 14: the vault's first device `B` enrols `A` and
    /// `C` (`EN`); `B` is stolen, and `A` and `C` both remove it before they
    /// sync (`R1`, `R2`); `B`, from an old copy, enrols `A` and `C` on a
    /// fork (`X`). Each remover was a puppet of the other's removal: both
    /// removals were cut, silently, and `B` was a current member again. Now
    /// both stand and only `X` is cut.
    @Test func attackRemovedDeviceEnrolsBothRemovers() throws {
        let g = G("R8-1 d")
        g.add("root", [], signer: "B", ["Q": "recovery", "B": "device"])
        g.add("EN", ["root"], signer: "B", Self.m, reason: "enroll")
        g.add("R1", ["EN"], signer: "A", G.without(Self.m, "B"), removes: ["B"])
        g.add("R2", ["EN"], signer: "C", G.without(Self.m, "B"), removes: ["B"])
        g.add("X", ["root"], signer: "B", Self.m, reason: "enroll")
        let outcome = try g.outcome()
        #expect(outcome.trusted == ["root", "EN", "R1", "R2"])
        #expect(outcome.tie.isEmpty && outcome.mutual.isEmpty)
        #expect(try Self.trusted(g) == ["root", "EN", "R1", "R2"])
        let state = try g.state()
        #expect(Set(state.removed.map(\.name)) == ["B"])
        #expect(Set(state.members.map(\.name)) == ["Q", "A", "C"])
    }

    /// R8-1 (e), scenario 14: `A` removes the stolen `B` (`R`) while `C`
    /// enrols `D` concurrently (`EN`, in the epoch `B` holds, so `B` reads
    /// `D`'s key); `B` enrols `D` on its fork (`X`); `A` joins (`J`) and `D`
    /// rotates (`K2`). `R` never saw `D`, but `C`, whom `R` does not remove,
    /// enrolled it too: `D` is no puppet, and `K2` stands.
    @Test func attackRemovedDeviceEnrolsAConcurrentlyEnrolledDevice() throws {
        let g = G.based("R8-1 e")
        let withD = Self.m.merging(["D": "device"]) { a, _ in a }
        g.add("R", ["root"], signer: "A", G.without(Self.m, "B"), removes: ["B"])
        g.add("EN", ["root"], signer: "C", withD, reason: "enroll")
        g.add("X", ["root"], signer: "B", withD, reason: "enroll")
        g.add("J", ["R", "EN"], signer: "A", G.without(withD, "B"), reason: "rotate")
        g.add("K2", ["J"], signer: "D", G.without(withD, "B"), reason: "rotate")
        #expect(try Self.trusted(g) == ["root", "R", "EN", "J", "K2"])
        #expect(Set(try g.state().members.map(\.name)) == ["Q", "A", "C", "D"])
    }

    /// R8-5: a puppet — here the reader's own key, `Dz`, which the removed
    /// `B` enrolled on its fork — is one of the removed keys (keys.md §5):
    /// a credential holding it is told it was removed (format.md §8.6), as
    /// the independent reader says. Before, only `removed` lists counted.
    @Test func puppetCredentialIsToldItWasRemoved() throws {
        let g = G.based("R8-5")
        g.add("R", ["root"], signer: "A", G.without(Self.m, "B"), removes: ["B"])
        g.add("X", ["root"], signer: "B", Self.m.merging(["Dz": "device"]) { a, _ in a }, reason: "enroll")
        let unlocked = try g.unlock()
        #expect(unlocked.removedIn?.epoch == 2)
        #expect(try Self.trusted(g) == ["root", "R"])
    }

    // MARK: - Third review, item 5: a thief's replacement of the recovery key

    /// The thief's `B` replaced the recovery key with `Q2` on the main line
    /// (`Y`); the user, whose code is lost, removes `B` with device `A`.
    /// The writer built the removal on the head, `Y`, and the thief's `Q2`
    /// then locked `A` and `C` out from a fork at `Y` (`L2`): `L2` is
    /// recovery-signed for the removal, which it defies, so the removal was
    /// cut. A device's removal of a member that signed a replacement of the
    /// recovery key now chooses its parents as a lockdown does, leaving out
    /// the replacement: the replacement defies it and is cut, `L2` with it.
    @Test func attackThiefReplacementOutvotesADeviceRemoval() throws {
        let g = G.based("thief replacement vs device removal")
        g.add("Y", ["root"], signer: "B", G.without(Self.m, "Q", add: ["Q2": "recovery"]), removes: ["Q"], reason: "recovery")
        let proposals = try KeyOperations.keyrings(
            for: .remove(publicKey: g.pair("B").publicKey), state: try g.state(), signer: g.pair("A"), now: 3_000, random: g.random,
            replacement: .notMine)
        g.append(proposals, names: ["R"])
        #expect(try g.parents(of: "R") == ["root"])
        g.add("L2", ["Y"], signer: "Q2", G.without(Self.m, "Q", "A", "C", add: ["Q2": "recovery"]), removes: ["A", "C"], reason: "lockdown")
        // The recovery key opens every keyring here (the writer wraps R to
        // members only, so the reader Z does not).
        #expect(try g.trusted(as: .recoveryKey(g.recovery)) == ["root", "R"])
    }

    /// Fourth review, K4: the user's own replacement. The code `Q` leaked;
    /// the user replaced it on phone `B` (`Y`, new code `Q2`) and enrolled
    /// `Dz` after it (`E1`); months later laptop `A` removes the lost `B`.
    /// By default the removal builds on the current head, `E1`: `Q2` stays
    /// the recovery key and `Dz` a member. (The writer of b792bf0 built it
    /// on `root`, which cut `Y` and `E1` and brought the leaked `Q` back.)
    @Test func removingTheUsersReplacerKeepsTheNewCodeAndLaterDevices() throws {
        let g = G.based("user's replacement vs device removal")
        g.add("Y", ["root"], signer: "B", G.without(Self.m, "Q", add: ["Q2": "recovery"]), removes: ["Q"], reason: "recovery")
        g.add("E1", ["Y"], signer: "A", G.without(Self.m, "Q", add: ["Q2": "recovery", "Dz": "device"]), reason: "enroll")
        let state = try g.state()
        #expect(KeyOperations.recoveryReplacements(by: g.pair("B").publicKey, in: state).map(\.signerName) == ["B"])
        let proposals = try KeyOperations.keyrings(
            for: .remove(publicKey: g.pair("B").publicKey), state: state, signer: g.pair("A"), now: 3_000, random: g.random)
        g.append(proposals, names: ["R"])
        #expect(try g.parents(of: "R") == ["E1"])
        #expect(try Self.trusted(g) == ["root", "Y", "E1", "R"])
        let members = Dictionary(uniqueKeysWithValues: try g.state().members.map { ($0.publicKey, $0.role) })
        #expect(members[g.pair("Q2").publicKey] == "recovery")
        #expect(members[g.pair("Q").publicKey] == nil)
        #expect(members[g.pair("Dz").publicKey] == "device")
        #expect(members[g.pair("B").publicKey] == nil)
    }

    /// K4, the other way: the thief's `B` enrolled a puppet `E`, `A` built on
    /// that (`Rot`), and `E` replaced the recovery key (`Y`). `B` signed no
    /// replacement, so the writer of b792bf0 built the removal on `Y`, and
    /// the thief's `Q2` locked `A` and `C` out from a fork at `Y`. Told the
    /// replacement was not the user's, the writer now builds on keyrings
    /// from before `B` enrolled `E`: the enrollment defies the removal and
    /// is cut, and `Rot`, `Y` and `L2` with it.
    @Test func attackPuppetReplacementOutvotesADeviceRemoval() throws {
        let g = G.based("puppet replacement vs device removal")
        g.add("EnrE", ["root"], signer: "B", Self.mE, reason: "enroll")
        g.add("Rot", ["EnrE"], signer: "A", Self.mE, reason: "rotate")
        g.add("Y", ["Rot"], signer: "E", G.without(Self.mE, "Q", add: ["Q2": "recovery"]), removes: ["Q"], reason: "recovery")
        let state = try g.state()
        let found = KeyOperations.recoveryReplacements(by: g.pair("B").publicKey, in: state)
        #expect(found.map(\.signerName) == ["E"])
        #expect(found.first?.enrolledBy == g.pair("B").publicKey)
        let proposals = try KeyOperations.keyrings(
            for: .remove(publicKey: g.pair("B").publicKey), state: state, signer: g.pair("A"), now: 3_000, random: g.random,
            replacement: .notMine)
        g.append(proposals, names: ["R"])
        #expect(try g.parents(of: "R") == ["root"])
        g.add("L2", ["Y"], signer: "Q2", G.without(Self.mE, "Q", "A", "C", add: ["Q2": "recovery"]), removes: ["A", "C"], reason: "lockdown")
        #expect(try g.trusted(as: .recoveryKey(g.recovery)) == ["root", "R"])
    }

    // MARK: - C1: a thief's unopenable keyring, answered by a removal

    @Test func removalOfTheSignerOfAnUnopenableKeyringCutsIt() throws {
        for remover in ["Q", "A"] {
            let g = G.based("c1 " + remover)
            g.add("RT", ["root"], signer: "B", Self.m, reason: "rotate")
            g.add("L", ["root"], signer: remover, G.without(Self.m, "B"), removes: ["B"])
            #expect(try Self.trusted(g) == ["root", "L"], "remover \(remover)")
        }
    }
}
