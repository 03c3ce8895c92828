import QuireCrypto
public import QuireFormat

/// One keyring of a vault as the key layer sees it.
public struct KeyringInfo: Sendable {
    /// Where its (first intact) frame is.
    public let location: FrameLocation
    /// Its id: the BLAKE2b-256 of its body (the frame's trailer).
    public let id: KeyringID
    /// The parsed record.
    public let record: KeyringRecord
    /// The epoch key, when the credential reached it (by a slot, or as a
    /// child's parent key) and its commitment matches.
    public internal(set) var epochKey: EpochKey?
    /// The sealed content, when opened.
    public internal(set) var content: KeyringContent?
    /// The Ed25519 key that signed it, when opened.
    public internal(set) var signer: [UInt8]?
    /// True when trusted (`Spec/format.md §8.6`).
    public internal(set) var isTrusted: Bool
    /// Why it is not trusted, when it is not.
    public internal(set) var problem: KeyError?

    /// The epoch it defines.
    public var epoch: UInt32 { record.epoch }
    /// Its parents' ids.
    public var parents: [KeyringID] { record.publicPart.parents }
}

/// The keys a credential unlocked and what was learned about the keyrings.
public struct UnlockedKeys: Sendable {
    /// The keys to read and write with.
    public let keys: KeySet
    /// Frame index → epoch of each trusted keyring (both copies).
    public let trustedKeyrings: [Int: UInt32]
    /// Every committed keyring, in file order (one per id).
    public let keyrings: [KeyringInfo]
    /// Problems found (rejected keyrings and the like); none is fatal.
    public let issues: [KeyError]
    /// The newest epoch of a keyring this credential cannot open although it
    /// is authenticated under a key the credential holds (a link to a trusted
    /// parent verifies): the credential was removed (`Spec/format.md §8.6`).
    public let unreadableNewerEpoch: UInt32?
    /// Ed25519 keys of every member of a trusted keyring: who may attest
    /// commits (`Spec/format.md §9.4`).
    public let attestors: Set<[UInt8]>

    /// The newest trusted keyring, whose content describes the vault now.
    public var newestTrusted: KeyringInfo? { keyrings.last(where: \.isTrusted) }
}

/// Finds the keyrings of a vault, reaches the epoch keys a credential can
/// open — by key commitment, never by trial — and decides which keyrings to
/// trust (`Spec/format.md §8.5`, `§8.6`).
///
/// Work is linear in the file: each slot is tried once, each keyring opened
/// at most once, each parent key hashed once, and the removal rule is decided
/// in one pass over the trusted graph.
public enum KeyringEvaluator {
    /// Unlocks `vault` with `credential`.
    ///
    /// - Throws: ``KeyError/noKeyring``, the credential's wrong-credential
    ///   error (``KeyError/wrongRecoveryKey``, ``KeyError/wrongPassphrase``,
    ///   ``KeyError/wrongDeviceKey``, ``KeyError/wrongKey``),
    ///   ``KeyError/kdfLimitsExceeded(opsLimit:memLimitBytes:)`` when the only
    ///   passphrase slots are over the limits, ``KeyError/malformedKeyring(_:reason:)``,
    ///   and ``KeyError/keyringUnauthenticated(_:reason:)`` when keys were
    ///   reached but no keyring is trusted.
    public static func unlock(_ vault: VaultFile, with credential: Credential) throws(KeyError) -> UnlockedKeys {
        var e = Evaluation(vault: vault, credential: credential)
        try e.collect()
        try e.reach()
        e.decideTrust()
        return try e.result()
    }
}

/// The state of one evaluation.
struct Evaluation {
    let vault: VaultFile
    let credential: Credential
    let vaultID: VaultID
    var rings: [KeyringInfo] = []
    var issues: [KeyError] = []
    var copies: [KeyringID: [Int]] = [:]
    var byID: [KeyringID: Int] = [:]
    var byCommit: [[UInt8]: [Int]] = [:]
    var reached: [[UInt8]: SymmetricKey] = [:]
    var openedBySlot = Set<Int>()
    var failed = Set<Int>()
    var limitError: KeyError?
    /// Keyrings holding a passphrase slot refused for its cost.
    var overCost = Set<Int>()
    var passphraseCache = SlotCrypto.PassphraseCache()
    /// Member keys already found to be usable Ed25519 points.
    var usableMemberKeys = Set<[UInt8]>()

    init(vault: VaultFile, credential: Credential) {
        self.vault = vault
        self.credential = credential
        vaultID = vault.vaultID
    }

    // MARK: 1. Collect (rule 1, public part; rule 2 from the public part)

    mutating func collect() throws(KeyError) {
        let structure = vault.structure
        // Writers store every keyring twice (Spec/format.md §8.1): an intact
        // copy stands for both, and a damaged copy of an intact keyring costs
        // nothing.
        let keyringFrames = structure.frames[0..<structure.committedFrameCount].filter { $0.header.kind == .keyring }
        var intactIDs = Set<KeyringID>()
        var unparsed = Set<KeyringID>()
        for frame in keyringFrames where frame.malformation == nil && frame.checksumIntact == true {
            intactIDs.insert(KeyringID(unchecked: frame.trailer))
        }
        for frame in keyringFrames {
            guard frame.malformation == nil, frame.checksumIntact == true, let body = frame.plaintextBody else {
                let bodyID = frame.plaintextBody.map { KeyringRecord.id(ofBody: $0) }
                let trailerID = frame.trailer.count == KeyringID.byteCount ? KeyringID(unchecked: frame.trailer) : nil
                if trailerID.map(intactIDs.contains) == true || bodyID.map(intactIDs.contains) == true {
                    issues.append(.keyringCopyDamaged(frame.location))
                } else {
                    issues.append(.malformedKeyring(frame.location, reason: frame.malformation ?? "its body hash does not match (damaged)"))
                }
                continue
            }
            let id = KeyringID(unchecked: frame.trailer)
            if byID[id] != nil {
                copies[id, default: []].append(frame.location.index)
                continue
            }
            // Frames with one id are one keyring, reported once, at its first
            // intact copy (Spec/format.md §8.1, §8.4).
            guard !unparsed.contains(id) else { continue }
            let record: KeyringRecord
            do {
                record = try KeyringRecord(body: body, location: frame.location)
            } catch {
                unparsed.insert(id)
                issues.append(.malformedKeyring(frame.location, reason: error.description))
                continue
            }
            var info = KeyringInfo(location: frame.location, id: id, record: record, epochKey: nil, content: nil, signer: nil, isTrusted: false, problem: nil)
            let pub = record.publicPart
            if frame.header.keyID != KeyID(commitment: pub.keyCommit) {
                info.problem = .malformedKeyring(frame.location, reason: "its frame header's key id is not its key commitment's")
            } else if pub.isEscrowFree && pub.slots.contains(where: { if case .escrow = $0 { true } else { false } }) {
                info.problem = .escrowForbidden(frame.location)
            } else if pub.isEscrowFree && pub.slots.contains(where: { if case .unknown = $0 { true } else { false } }) {
                // What cannot be checked is rejected in escrow-free mode.
                info.problem = .escrowForbidden(frame.location)
            }
            if let p = info.problem { issues.append(p) }
            byID[id] = rings.count
            byCommit[pub.keyCommit, default: []].append(rings.count)
            rings.append(info)
        }
        guard !rings.isEmpty else {
            for issue in issues where !issue.isWarning { throw issue }
            throw .noKeyring
        }
    }

    // MARK: 2. Reach keys (by slot, then by parent keys)

    mutating func reach() throws(KeyError) {
        var queue: [[UInt8]] = []
        func learn(_ commit: [UInt8], _ key: SymmetricKey) -> Bool {
            guard reached[commit] == nil else { return false }
            reached[commit] = key
            queue.append(commit)
            return true
        }
        if case .epochKey(let key) = credential {
            _ = learn(key.commitment, key.key)
        } else {
            for i in rings.indices.reversed() {
                let pub = rings[i].record.publicPart
                guard reached[pub.keyCommit] == nil else { continue }
                for slot in pub.slots {
                    let key: SymmetricKey?
                    do throws(KeyError) {
                        key = try SlotCrypto.open(slot, with: credential, vaultID: vaultID, epoch: pub.epoch, cache: &passphraseCache)
                    } catch {
                        limitError = error
                        // Reported once per keyring, where it is: a warning if
                        // the vault opens anyway (Spec/format.md §8.5).
                        if case let .kdfLimitsExceeded(ops, mem) = error, !overCost.contains(i) {
                            overCost.insert(i)
                            issues.append(.kdfLimitsExceededInKeyring(rings[i].location, opsLimit: ops, memLimitBytes: mem))
                        }
                        continue
                    }
                    guard let key else { continue }
                    openedBySlot.insert(i)
                    // Key commitment: the slot must carry this keyring's key.
                    guard EpochKey.commitment(of: key) == pub.keyCommit else {
                        setProblem(i, .malformedKeyring(rings[i].location, reason: "a slot opened a key that is not the one its key commitment names"))
                        break
                    }
                    _ = learn(pub.keyCommit, key)
                    break
                }
            }
        }
        while !queue.isEmpty {
            let commit = queue.removeFirst()
            guard let key = reached[commit] else { continue }
            for i in byCommit[commit] ?? [] where rings[i].content == nil && !failed.contains(i) {
                for (c, k) in open(i, key: key) { _ = learn(c, k) }
            }
        }
        guard rings.contains(where: { $0.content != nil }) else {
            if let limitError { throw limitError }
            if passphraseCache.skipped > 0 { throw .kdfBudgetExceeded(untried: passphraseCache.skipped) }
            // A keyring the credential reached but could not use is damaged:
            // say so rather than blame the credential. A damaged keyring it
            // did not reach says nothing about the credential, unless no
            // intact keyring is left to judge it by.
            for i in rings.indices where openedBySlot.contains(i) || failed.contains(i) {
                if let p = rings[i].problem, p.isMalformedKeyring { throw p }
            }
            if !rings.contains(where: { $0.problem == nil }) {
                for issue in issues where issue.isMalformedKeyring { throw issue }
                for issue in issues where issue.code == "escrow_forbidden" { throw issue }
            }
            if case .passphrase = credential, !rings.isEmpty,
                !rings.contains(where: { $0.record.publicPart.slots.contains { if case .passphrase = $0 { true } else { false } } })
            {
                throw .noPassphrase
            }
            throw credential.wrongError
        }
    }

    /// Opens keyring `i` with a reached key and checks what can be checked of
    /// it alone; returns the parent keys it carries, by commitment.
    mutating func open(_ i: Int, key: SymmetricKey) -> [([UInt8], SymmetricKey)] {
        let ring = rings[i]
        let epochKey = EpochKey(epoch: ring.epoch, key: key)
        let opened: OpenedKeyring
        do {
            opened = try ring.record.open(key: epochKey, vaultID: vaultID, location: ring.location)
        } catch {
            let reason = error.code == "authentication_failed" ? "its key does not open its sealed part" : error.description
            fail(i, .malformedKeyring(ring.location, reason: reason))
            return []
        }
        let content = opened.content
        // Every member key must be a usable Ed25519 point, or no later keyring
        // could wrap to it (records.md §6.3). Keyrings list the same members
        // again and again, and each check costs about as much as a signature
        // check: each key is checked once per evaluation.
        for member in content.members where member.isEd25519 && !usableMemberKeys.contains(member.publicKey) {
            guard (try? Ed25519.agreementPublicKey(from: member.publicKey)) != nil else {
                fail(i, .malformedKeyring(ring.location, reason: "a member's key is not a valid Ed25519 public key"))
                return []
            }
            usableMemberKeys.insert(member.publicKey)
        }
        if content.members.filter({ $0.role == "recovery" }).count != 1 {
            fail(i, .malformedKeyring(ring.location, reason: "it must list exactly one recovery member"))
            return []
        }
        if content.parentKeys.count != ring.parents.count {
            fail(i, .malformedKeyring(ring.location, reason: "it carries \(content.parentKeys.count) parent keys for \(ring.parents.count) parents"))
            return []
        }
        let pub = ring.record.publicPart
        if pub.isEscrowFree {
            // What an escrow-free keyring wraps must match what it lists
            // (Spec/format.md §8.4 rule 2).
            let deviceSlots = pub.slots.filter { if case .device = $0 { true } else { false } }.count
            let recoverySlots = pub.slots.filter { if case .recovery = $0 { true } else { false } }.count
            let passphraseKeys = pub.slots.compactMap { if case .passphrase(_, _, _, let pk, _) = $0 { pk } else { nil } }
            let devices = content.members.filter { $0.role == "device" }.count
            if deviceSlots != devices || recoverySlots != 1 || Set(passphraseKeys).count != passphraseKeys.count {
                fail(i, .escrowForbidden(ring.location))
                return []
            }
        }
        guard opened.signatureValid else {
            fail(i, .keyringUnauthenticated(ring.location, reason: "its signature does not verify"))
            return []
        }
        rings[i].epochKey = epochKey.withBlobKey(content.blobKey)
        rings[i].content = content
        rings[i].signer = opened.signer
        var learned: [([UInt8], SymmetricKey)] = []
        for (p, parentKey) in zip(ring.parents, content.parentKeys) {
            guard let j = byID[p], j < i else { continue }  // rule 5.1 reports a missing or later parent
            let commit = EpochKey.commitment(of: parentKey)
            guard commit == rings[j].record.publicPart.keyCommit else {
                rings[i].content = nil
                rings[i].epochKey = nil
                fail(i, .malformedKeyring(ring.location, reason: "a parent key does not match its parent's key commitment"))
                return []
            }
            learned.append((commit, parentKey))
        }
        return learned
    }

    mutating func fail(_ i: Int, _ problem: KeyError) {
        failed.insert(i)
        setProblem(i, problem)
    }

    mutating func setProblem(_ i: Int, _ problem: KeyError) {
        if rings[i].problem == nil {
            rings[i].problem = problem
            issues.append(problem)
        }
    }

    // MARK: 3. Trust (rules 2–6)

    mutating func decideTrust() {
        var t0 = Set<Int>()
        for i in rings.indices where rings[i].problem == nil && rings[i].content != nil {
            if let problem = childProblem(i, t0: t0) {
                rings[i].problem = problem
                continue
            }
            t0.insert(i)
        }
        let cut = removalCuts(t0)
        for i in rings.indices where t0.contains(i) {
            if let reason = cut[i] {
                rings[i].problem = .keyringUnauthenticated(rings[i].location, reason: reason)
                continue
            }
            if rings[i].parents.contains(where: { !(byID[$0].map { rings[$0].isTrusted } ?? false) }) {
                rings[i].problem = .keyringUnauthenticated(rings[i].location, reason: "a parent keyring is not trusted")
                continue
            }
            rings[i].isTrusted = true
        }
        for ring in rings where !ring.isTrusted && ring.content != nil {
            if let p = ring.problem, !issues.contains(p) { issues.append(p) }
        }
    }

    /// Rules 2 (opened part), 4 and 5 for keyring `i`, given the keyrings
    /// already in T0 (all earlier in the file).
    func childProblem(_ i: Int, t0: Set<Int>) -> KeyError? {
        let ring = rings[i]
        let pub = ring.record.publicPart
        let content = ring.content!
        let signer = ring.signer!
        let loc = ring.location
        func refused(_ reason: String) -> KeyError { .keyringUnauthenticated(loc, reason: reason) }
        if content.members.contains(where: { m in content.removed.contains { $0.publicKey == m.publicKey } }) {
            return .removedDeviceSlot(loc)
        }
        if pub.parents.isEmpty {
            // A root is bound to the vault id: only its signer could have made
            // it, wherever it stands in the file.
            guard let salt = pub.vaultSalt, rootVaultID(signer: signer, salt: salt) == vaultID else {
                return refused("it has no parent, but its signer and salt do not derive this vault's id")
            }
            guard content.members.contains(where: { $0.publicKey == signer && $0.isEd25519 && ($0.role == "device" || $0.role == "recovery") }) else {
                return refused("the root keyring is not signed by one of its own members")
            }
            return nil
        }
        var parents: [KeyringInfo] = []
        for p in pub.parents {
            guard let j = byID[p], j < i, t0.contains(j) else {
                return refused("a parent keyring is missing, later in the file, or not trusted")
            }
            parents.append(rings[j])
        }
        func isMember(_ key: [UInt8], of r: KeyringInfo) -> Bool {
            r.content!.members.contains { $0.publicKey == key && $0.isEd25519 && ($0.role == "device" || $0.role == "recovery") }
        }
        guard parents.contains(where: { isMember(signer, of: $0) }) else {
            return refused("its signer is not a member of a parent keyring")
        }
        guard !parents.contains(where: { r in r.content!.removed.contains { $0.publicKey == signer } }) else {
            return refused("its signer was removed in a parent keyring")
        }
        // Every link opens under its parent's key and carries this
        // keyring's signer (Spec/format.md §8.4 rule 5.11).
        for (index, parent) in parents.enumerated() {
            guard let parentKey = parent.epochKey,
                  ring.record.linkSigner(parentIndex: index, parentKey: parentKey, vaultID: vaultID) == signer else {
                return refused("its link to parent \(index) does not carry its signer's signature")
            }
        }
        let top = parents.map(\.epoch).max()!
        if ring.epoch == top {
            guard parents.contains(where: { $0.epoch == top && $0.record.publicPart.keyCommit == pub.keyCommit }) else {
                return refused("it reuses epoch \(top) with a different key")
            }
        } else if UInt64(ring.epoch) != UInt64(top) + 1 {
            return refused("its epoch \(ring.epoch) does not follow its parents' epoch \(top)")
        }
        if content.reason != "rekey" {
            let sameKey = parents.filter { $0.record.publicPart.keyCommit == pub.keyCommit }
            let allowed = sameKey.isEmpty ? parents : sameKey
            guard allowed.contains(where: { $0.content!.blobKey == content.blobKey }) else {
                return refused("its blob key is not its parents' (only a rekey changes it)")
            }
        }
        for p in parents {
            for kind in p.record.publicPart.requiredSlotKinds where !pub.requiredSlotKinds.contains(kind) {
                return refused("it drops the slot kind \"\(kind)\" its parents require")
            }
        }
        // Escrow-free mode is for good.
        if parents.contains(where: { $0.record.publicPart.isEscrowFree }) && !pub.isEscrowFree { return .escrowForbidden(loc) }
        let parentRemoved = Set(parents.flatMap { $0.content!.removed.map(\.publicKey) })
        if content.members.contains(where: { parentRemoved.contains($0.publicKey) }) { return .removedDeviceSlot(loc) }
        // The recovery member: kept, or replaced by a keyring that removes the old one.
        let recovery = content.members.first { $0.role == "recovery" }!.publicKey
        let parentRecovery = Set(parents.compactMap { $0.content!.members.first { $0.role == "recovery" }?.publicKey })
        let ownRemoved = Set(content.removed.map(\.publicKey))
        if !parentRecovery.contains(recovery) {
            guard content.reason == "recovery", parentRecovery.isSubset(of: ownRemoved) else {
                return refused("its recovery member is not its parents', and it does not replace theirs")
            }
        }
        // A removal removes one member and adds no reader.
        let newlyRemoved = ownRemoved.subtracting(parentRemoved)
        if !newlyRemoved.isEmpty {
            guard newlyRemoved.count == 1 else { return refused("it removes \(newlyRemoved.count) members at once; a removal removes one") }
            let parentMembers = Set(parents.flatMap { $0.content!.members.map(\.publicKey) })
            let parentEscrow = Set(parents.flatMap { $0.content!.escrow.map(\.publicKey) })
            let parentPassphrases = Set(parents.flatMap { passphraseKeys($0) })
            let parentKinds = Set(parents.flatMap { $0.record.publicPart.slots.map(\.kind) })
            let addsMember = content.members.contains { !parentMembers.contains($0.publicKey) && !($0.role == "recovery" && content.reason == "recovery") }
            let addsEscrow = content.escrow.contains { !parentEscrow.contains($0.publicKey) }
            let addsPassphrase = passphraseKeys(ring).contains { !parentPassphrases.contains($0) }
            let addsKind = pub.slots.contains { !parentKinds.contains($0.kind) && !($0.kind == "recovery") }
            if addsMember || addsEscrow || addsPassphrase || addsKind {
                return refused("it removes a member and adds a reader at the same time")
            }
        }
        return nil
    }

    func passphraseKeys(_ r: KeyringInfo) -> [[UInt8]] {
        r.record.publicPart.slots.compactMap { if case .passphrase(_, _, _, let pk, _) = $0 { pk } else { nil } }
    }

    /// Rule 6: the keyrings of T0 that are cut, with why. Decided from the
    /// graph alone, so the order of the file does not matter.
    func removalCuts(_ t0: Set<Int>) -> [Int: String] {
        let members = t0.sorted()
        let ancestors = ancestorSets(among: members)
        var newlyRemoved: [Int: Set<[UInt8]>] = [:]
        var recoverySigned = Set<Int>()
        var bySigner: [[UInt8]: [Int]] = [:]
        for i in members {
            let ring = rings[i]
            let parents = ring.parents.compactMap { byID[$0] }
            let parentRemoved = Set(parents.flatMap { rings[$0].content!.removed.map(\.publicKey) })
            let removed = Set(ring.content!.removed.map(\.publicKey)).subtracting(parentRemoved)
            if !removed.isEmpty { newlyRemoved[i] = removed }
            let signer = ring.signer!
            let signerRole = (parents.isEmpty ? [ring] : parents.map { rings[$0] })
                .compactMap { r in r.content!.members.first { $0.publicKey == signer }?.role }.first
            if signerRole == "recovery" { recoverySigned.insert(i) }
            bySigner[signer, default: []].append(i)
        }
        // defies[k] = the removals k defies; definers[r] = who defies r.
        var defies: [Int: Set<Int>] = [:]
        var definers: [Int: Set<Int>] = [:]
        for (r, removedKeys) in newlyRemoved {
            for m in removedKeys {
                for k in bySigner[m] ?? [] where k != r && !ancestors[r, default: []].contains(k) {
                    defies[k, default: []].insert(r)
                    definers[r, default: []].insert(k)
                }
            }
        }
        func defiesRel(_ k: Int, _ r: Int) -> Bool { defies[k]?.contains(r) ?? false }
        func mutual(_ k: Int, _ r: Int) -> Bool { defiesRel(k, r) && defiesRel(r, k) }
        // Z is behind R when an ancestor of Z defies R: Z lies on a branch a
        // member removed by R started.
        func behind(_ z: Int, _ r: Int) -> Bool { !(definers[r] ?? []).isDisjoint(with: ancestors[z, default: []]) }
        func contested(_ r: Int) -> Bool {
            (defies[r] ?? []).contains { x in
                if recoverySigned.contains(r) && behind(x, r) { return false }
                return !mutual(r, x) || recoverySigned.contains(x)
            }
        }
        var cut: [Int: String] = [:]
        for (k, removals) in defies {
            for r in removals.sorted() where !contested(r) {
                if recoverySigned.contains(k) && behind(r, k) { continue }
                let wins: Bool
                if recoverySigned.contains(r) {
                    wins = true
                } else {
                    let partners = (defies[r] ?? []).filter { mutual(r, $0) }
                    wins = !mutual(k, r) && !partners.contains { ancestors[$0, default: []].contains(k) }
                }
                if wins {
                    cut[k] = "it is signed by a member removed in keyring \(rings[r].location)"
                    break
                }
            }
        }
        return cut
    }

    /// For each keyring among `among` (ascending indices, parents earlier),
    /// the indices of its ancestors within `among`.
    func ancestorSets(among: [Int]) -> [Int: Set<Int>] {
        var result: [Int: Set<Int>] = [:]
        let members = Set(among)
        for i in among.sorted() {
            var set = Set<Int>()
            for p in rings[i].parents {
                guard let j = byID[p], j < i, members.contains(j) else { continue }
                set.insert(j)
                set.formUnion(result[j] ?? [])
            }
            result[i] = set
        }
        return result
    }

    /// True when `key` may sign in `ring`: a member of role device or
    /// recovery with an Ed25519 key, not removed there.
    func isSigningMember(_ key: [UInt8], of ring: KeyringInfo) -> Bool {
        guard let c = ring.content else { return false }
        return c.members.contains { $0.publicKey == key && $0.isEd25519 && ($0.role == "device" || $0.role == "recovery") }
            && !c.removed.contains { $0.publicKey == key }
    }

    // MARK: 4. Result

    func result() throws(KeyError) -> UnlockedKeys {
        guard rings.contains(where: \.isTrusted) else {
            // The credential reached keys, but every keyring it reached was
            // rejected: report why, not "wrong credential".
            if let rejected = rings.first(where: { $0.content != nil && $0.problem != nil })?.problem { throw rejected }
            if let i = failed.min(), let rejected = rings[i].problem { throw rejected }
            throw .keyringUnauthenticated(rings[0].location, reason: "no keyring could be authenticated")
        }
        var keys = KeySet()
        var trusted: [Int: UInt32] = [:]
        var attestors = Set<[UInt8]>()
        var childOf = Set<KeyringID>()
        for ring in rings where ring.isTrusted {
            keys.add(ring.epochKey!)
            trusted[ring.location.index] = ring.epoch
            for copy in copies[ring.id] ?? [] { trusted[copy] = ring.epoch }
            for m in ring.content!.members where m.isEd25519 && (m.role == "device" || m.role == "recovery") { attestors.insert(m.publicKey) }
            for m in ring.content!.removed where m.isEd25519 && (m.role == "device" || m.role == "recovery") { attestors.insert(m.publicKey) }
            childOf.formUnion(ring.parents)
        }
        // The write key: the newest head of the highest epoch (ties: the
        // smallest key commitment), Spec/keys.md §5.
        let heads = rings.filter { $0.isTrusted && !childOf.contains($0.id) }
        let top = heads.map(\.epoch).max()!
        let write = heads.filter { $0.epoch == top }.min { $0.record.publicPart.keyCommit.lexicographicallyPrecedes($1.record.publicPart.keyCommit) }!
        keys.writeKey = write.epochKey
        // An unopened newer keyring that a trusted parent's key authenticates
        // means this credential was removed — or that a holder of that key
        // forged it. A keyring nobody authenticates stops nobody.
        let newestTrusted = rings.filter(\.isTrusted).map(\.epoch).max()!
        // Members removed in any trusted keyring: their links count for
        // nothing, whichever older parent they name.
        let removedSigners = Set(rings.filter(\.isTrusted).flatMap { $0.content!.removed.map(\.publicKey) })
        var unreadable: UInt32?
        for ring in rings where ring.content == nil && ring.problem == nil && ring.epoch > newestTrusted {
            for (index, p) in ring.parents.enumerated() {
                // A current member of that parent made it: a link only
                // members can sign, readable only by those who hold the
                // parent's key.
                guard let j = byID[p], rings[j].isTrusted, let parentKey = rings[j].epochKey,
                      let linker = ring.record.linkSigner(parentIndex: index, parentKey: parentKey, vaultID: vaultID),
                      isSigningMember(linker, of: rings[j]), !removedSigners.contains(linker)
                else { continue }
                unreadable = max(unreadable ?? 0, ring.epoch)
                break
            }
        }
        // A device listed as removed in a keyring it trusts was removed too
        // (Spec/format.md §8.6).
        if case .device(let pair) = credential {
            for ring in rings where ring.isTrusted && ring.content!.removed.contains(where: { $0.publicKey == pair.publicKey }) {
                unreadable = max(unreadable ?? 0, ring.epoch)
            }
        }
        return UnlockedKeys(keys: keys, trustedKeyrings: trusted, keyrings: rings, issues: issues, unreadableNewerEpoch: unreadable, attestors: attestors)
    }
}
