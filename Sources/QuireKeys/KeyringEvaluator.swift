@_spi(Crypto) import QuireCrypto
@_spi(Format) public import QuireFormat

/// One keyring of a vault as the key layer sees it.
@_spi(Format) public struct KeyringInfo: Sendable {
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
    /// True when it passed rules 1–5 (`Spec/format.md §8.4`): it is in
    /// `T0`, whether or not rule 6 then cut it or one of its ancestors.
    public internal(set) var passesRules1To5 = false
    /// The frame index of every intact copy, in file order (the first is
    /// ``location``): device memory ranks a keyring by the first copy in a
    /// commit a member attested (`Spec/keys.md §7`).
    public internal(set) var copyFrames: [Int] = []
    /// The keyrings whose removals cut it under rule 6; empty unless cut.
    public internal(set) var cutBy: [KeyringID] = []
    /// The puppets this keyring's removal removes besides its `removed`
    /// list (`Spec/format.md §8.4` rule 6): the keys that a keyring outside
    /// its ancestors, signed by a member it removes or by such a puppet,
    /// enrols (lists where no parent does), and that are not *vouched for*
    /// against it — a key it saw and does not remove, or one that a keyring
    /// outside its ancestors signed by a vouched-for key enrols. Vouching
    /// starts from the keys it keeps, never from the puppets, so keys its
    /// removed member brought in that enrol each other are puppets too
    /// (ninth review R9-1). Empty unless it removes someone.
    public internal(set) var removedPuppets: [KeyringMember] = []
    /// True when a parent key it carries does not match its parent's key
    /// commitment (rule 5.2), which is reported only if rule 5.1 passes.
    var parentKeyMismatch = false

    /// The epoch it defines.
    public var epoch: UInt32 { record.epoch }
    /// Its parents' ids.
    public var parents: [KeyringID] { record.publicPart.parents }
}

/// The keys a credential unlocked and what was learned about the keyrings.
@_spi(Format) public struct UnlockedKeys: Sendable {
    /// The keys to read and write with.
    public let keys: KeySet
    /// Frame index → epoch of each trusted keyring (both copies).
    public let trustedKeyrings: [Int: UInt32]
    /// Every committed keyring, in file order (one per id).
    public let keyrings: [KeyringInfo]
    /// Problems found (rejected keyrings and the like); none is fatal.
    public let issues: [KeyError]
    /// The keyrings this credential cannot open although a current member
    /// of a keyring it trusts made them (their link verifies under a key the
    /// credential holds, `Spec/format.md §8.6`), in file order. Any makes the
    /// credential *behind*: it was removed, or a member made a keyring that
    /// leaves it out. It may read, not write records; it may change keys
    /// only as §8.6 allows.
    public let newerKeyrings: [NewerKeyring]
    /// The trusted keyring, first in file order, that lists this
    /// credential's own signing key in `removed`, if any (its `signer` is
    /// nil): the device was removed, or the recovery key replaced.
    public let removedIn: NewerKeyring?
    /// Ed25519 keys of every member of a trusted keyring: who may attest
    /// commits (`Spec/format.md §9.4`).
    public let attestors: Set<[UInt8]>
    /// The link signatures the evaluation checked (Ed25519 verifications
    /// of rule 5.11), for tests.
    @_spi(Testing) public var linkSignatureChecks = 0
    /// The slots of the credential's own kind that the evaluation tried
    /// (`Spec/format.md §8.5` step 2: one sealed box each, after Argon2id
    /// for a passphrase), for tests.
    @_spi(Testing) public var slotTrials = 0
    /// The keyrings whose sealed part the evaluation tried to open with a
    /// reached key (`Spec/format.md §8.5` step 3: each at most once), for
    /// tests.
    @_spi(Testing) public var keyringOpens = 0

    /// The newest trusted keyring, whose content describes the vault now.
    public var newestTrusted: KeyringInfo? { keyrings.last(where: \.isTrusted) }

    /// True when a current member made a keyring this credential cannot
    /// open (``newerKeyrings`` is not empty).
    public var isBehind: Bool { !newerKeyrings.isEmpty }

    /// Why this credential cannot follow the newest keys, in words an
    /// application shows, or nil: `this key was removed from the vault
    /// (epoch 2)`, or `this key cannot open the vault's newest keys (epoch
    /// 2, made by the device "Laptop"): it was removed, or left out of
    /// them`, naming the member who made the newest keyring it cannot open
    /// (`Spec/format.md §8.6`) — not who removed it, which that keyring
    /// may only build on (a removal by the recovery key before it: trial
    /// 26).
    public var behindReason: String? {
        if let removedIn { return "this key was removed from the vault (epoch \(removedIn.epoch))" }
        guard let newest = newerKeyrings.max(by: { $0.epoch < $1.epoch }) else { return nil }
        let maker = newest.signer.map(PrivacyStatement.phrase(for:)) ?? "a member"
        return "this key cannot open the vault's newest keys (epoch \(newest.epoch), made by \(maker)): it was removed, or left out of them"
    }

    /// The highest epoch this credential cannot follow: that of its newest
    /// ``newerKeyrings`` entry or of ``removedIn``; nil when neither.
    public var unreadableNewerEpoch: UInt32? {
        (newerKeyrings.map(\.epoch) + (removedIn.map { [$0.epoch] } ?? [])).max()
    }
}

extension KeySet {
    /// The keys of `rings` (keyrings trusted, or trusted once a change is
    /// written, in file order; one without an epoch key adds none): a key's
    /// epoch is the highest one of them claims for it (`Spec/format.md
    /// §5.1`; a commit's is judged by its own line, §9.3), its blob key that
    /// of the first in file order (§7.3).
    init(keysOf rings: [KeyringInfo]) {
        self.init()
        var highest: [[UInt8]: UInt32] = [:]
        for ring in rings {
            highest[ring.record.publicPart.keyCommit] = max(highest[ring.record.publicPart.keyCommit] ?? 0, ring.epoch)
        }
        for ring in rings {
            guard let key = ring.epochKey, let epoch = highest[ring.record.publicPart.keyCommit] else { continue }
            add(epoch == key.epoch ? key : EpochKey(epoch: epoch, key: key.key, blobKey: key.blobKey))
        }
    }

    /// True when a head of epoch `a.epoch` whose key has commitment
    /// `a.commitment` comes before `b` as the write key (`Spec/keys.md §5`):
    /// the higher epoch, then the smaller key commitment.
    static func precedesAsWriteKey(_ a: (epoch: UInt32, commitment: [UInt8]), _ b: (epoch: UInt32, commitment: [UInt8])) -> Bool {
        a.epoch != b.epoch ? a.epoch > b.epoch : a.commitment.lexicographicallyPrecedes(b.commitment)
    }
}

/// A keyring a credential cannot follow (`Spec/format.md §8.6`).
@_spi(Format) public struct NewerKeyring: Sendable, Equatable {
    /// Where its first intact copy is.
    public let location: FrameLocation
    /// Its id.
    public let id: KeyringID
    /// The epoch it defines.
    public let epoch: UInt32
    /// The member of the trusted parent whose link signed it (whose name
    /// an application shows); nil for the keyring that removed this
    /// credential.
    public let signer: KeyringMember?
}

/// Finds the keyrings of a vault, reaches the epoch keys a credential can
/// open — by key commitment, never by trial — and decides which keyrings to
/// trust (`Spec/format.md §8.5`, `§8.6`).
///
/// Work is linear in the file: each slot is tried once, each keyring opened
/// at most once, each parent key hashed once, and the removal rule is decided
/// in at most six passes over the trusted graph (rule 6: a fixpoint within
/// a constant number of passes, two or three in practice).
@_spi(Format) public enum KeyringEvaluator {
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
        try unlock(vault, with: credential, includingTail: false)
    }

    /// ``unlock(_:with:)``; with `includingTail`, the keyring frames of the
    /// tail count as committed: for commit recovery only, whose damaged
    /// commit may be made under the key of a keyring it holds
    /// (`Spec/format.md §10.3`, §9.2).
    package static func unlock(_ vault: VaultFile, with credential: Credential, includingTail: Bool) throws(KeyError) -> UnlockedKeys {
        var e = Evaluation(vault: vault, credential: credential)
        e.includingTail = includingTail
        try e.collect()
        try e.reach()
        e.decideTrust()
        let result = try e.result()
        // Guarded memory ran out in a step that cannot throw: the outcome
        // says nothing about the file (Spec/format.md §5.1).
        if e.outOfGuardedMemory { throw .format(.outOfGuardedMemory) }
        return result
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
    /// Keyrings rejected from their public part (Spec/format.md §8.5 step
    /// 1): by rule 1's public checks (their slots are not tried) or by rule
    /// 2's (tried, to tell a rejected keyring from a wrong credential). Either
    /// is never opened and contributes no key, however its key is reached
    /// (step 3; the Python reader's open reading 7).
    var rejectedByRule1 = Set<Int>()
    var rejectedByRule2 = Set<Int>()
    /// Keyrings whose sealed part a reached key decrypted: *opened* in
    /// Spec/format.md §8.5, whether or not they then passed rules 1–3.
    var decrypted = Set<Int>()
    var limitError: KeyError?
    /// Keyrings holding a passphrase slot refused for its cost.
    var overCost = Set<Int>()
    /// The ancestors of each keyring of T0, once it passed rules 1–5.
    var ancestors: [Int: Bits] = [:]
    /// For each removed key, the keyrings of T0 that list it in `removed`.
    var removers: [[UInt8]: [Int]] = [:]
    var passphraseCache = SlotCrypto.PassphraseCache()
    /// Member keys already found to be usable Ed25519 points.
    var usableMemberKeys = Set<[UInt8]>()
    /// Link signatures checked (Ed25519 verifications), for tests.
    var linkSignatureChecks = 0
    /// Slots of the credential's own kind tried (§8.5 step 2), for tests.
    var slotTrials = 0
    /// Sealed parts of keyrings opened with a reached key (§8.5 step 3), for tests.
    var keyringOpens = 0
    /// Guarded memory ran out (Spec/format.md §5.1): the evaluation throws
    /// ``FormatError/outOfGuardedMemory`` once the step ends, and nothing
    /// it decided since counts — no keyring is damaged, no credential wrong.
    var outOfGuardedMemory = false
    /// Keyrings whose slots were tried (§8.5 step 2: each at most once).
    var tried = Set<Int>()
    /// Keyrings *linked* now (§8.5 step 2): a link of theirs opens under
    /// the key of its parent, reached, and none under a reached parent's key
    /// fails.
    var linked = Set<Int>()
    /// Keyrings a link of which does not open under its parent's reached
    /// key: never linked again.
    var unlinkable = Set<Int>()
    /// For each key commitment, the keyrings (and the index among their
    /// parents) that name a parent with it: their links are checked when
    /// that key is reached.
    var linkWaiters: [[UInt8]: [(Int, Int)]] = [:]
    /// True once a root whose signer, key commitment and salt derive the
    /// vault id was opened (§8.5 step 2: the bootstrap ends).
    var rootReached = false
    /// The tail's keyring frames count as committed (commit recovery).
    var includingTail = false

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
        // By index: iterating the frames themselves copies every frame
        // (tens of thousands) to keep a few.
        let end = includingTail ? structure.frames.count : structure.committedFrameCount
        let keyringFrames = structure.frames.keyringFrameIndices(below: end).map { structure.frames[$0] }
        var intactIDs = Set<KeyringID>()
        var unparsed = Set<KeyringID>()
        // The copy used is the first intact one whose frame header's key id
        // is its key commitment's; when there is none, the first intact one
        // (which rule 1 rejects). The keyring id does not cover the header,
        // so a keyless writer can copy a body under another key id and place
        // it first (thirteenth review R13-1): such a copy is damaged.
        var rightHeader: [KeyringID: Int] = [:]
        var expectedKeyID: [KeyringID: KeyID] = [:]
        for (n, frame) in keyringFrames.enumerated() where frame.malformation == nil && frame.checksumIntact == true {
            let id = KeyringID(unchecked: frame.trailer)
            if intactIDs.insert(id).inserted, let body = frame.plaintextBody,
                let record = try? KeyringRecord(body: body, location: frame.location)
            {
                expectedKeyID[id] = KeyID(commitment: record.publicPart.keyCommit)
            }
            if rightHeader[id] == nil, frame.header.keyID == expectedKeyID[id] { rightHeader[id] = n }
        }
        for (n, frame) in keyringFrames.enumerated() {
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
            if let used = rightHeader[id], used != n, frame.header.keyID != expectedKeyID[id] {
                issues.append(.keyringCopyDamaged(frame.location))
                continue
            }
            if let known = byID[id] {
                copies[id, default: []].append(frame.location.index)
                rings[known].copyFrames.append(frame.location.index)
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
            var info = KeyringInfo(
                location: frame.location, id: id, record: record, epochKey: nil, content: nil, signer: nil, isTrusted: false, problem: nil)
            info.copyFrames = [frame.location.index]
            let pub = record.publicPart
            if frame.header.keyID != KeyID(commitment: pub.keyCommit) {
                info.problem = .malformedKeyring(frame.location, reason: "its frame header's key id is not its key commitment's")
            } else if pub.isEscrowFree && pub.slots.contains(where: { if case .escrow = $0 { true } else { false } }) {
                info.problem = .escrowForbidden(frame.location)
            } else if pub.isEscrowFree
                && pub.slots.contains(where: { $0.isUnknown && (!pub.requiredSlotKinds.contains($0.kind) || $0.memberKey == nil) })
            {
                // What cannot be checked is rejected in escrow-free mode: a
                // slot of an unknown kind is allowed only when required and
                // naming a member (Spec/format.md §8.4 rule 2).
                info.problem = .escrowForbidden(frame.location)
            }
            if let p = info.problem {
                issues.append(p)
                if case .escrowForbidden = p { rejectedByRule2.insert(rings.count) } else { rejectedByRule1.insert(rings.count) }
            }
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
            // A keyring is linked once a link of it opens under a reached
            // parent's key, and for good unless one under another reached
            // parent's key does not (it can then never pass rule 5.11): one
            // AEAD per keyring a keyless writer makes.
            for (i, index) in linkWaiters[commit] ?? [] where !unlinkable.contains(i) {
                let parent = rings[byID[rings[i].parents[index]]!]
                let parentKey = EpochKey(epoch: parent.epoch, key: key)
                guard derivesLinkKey(parentKey) else { return true }
                if rings[i].record.openLink(parentIndex: index, parentKey: parentKey, vaultID: vaultID) != nil {
                    linked.insert(i)
                } else {
                    unlinkable.insert(i)
                    linked.remove(i)
                }
            }
            return true
        }
        // Step 3: opens every keyring of each reached key, once, and follows
        // its parent keys, until nothing new is reached.
        func followChain() {
            while !queue.isEmpty {
                let commit = queue.removeFirst()
                guard let key = reached[commit] else { continue }
                for i in byCommit[commit] ?? []
                where rings[i].content == nil && !failed.contains(i) && !rejectedByRule1.contains(i) && !rejectedByRule2.contains(i) {
                    for (c, k) in open(i, key: key) { _ = learn(c, k) }
                }
            }
        }
        // Tries keyring `i`'s slots, unless they were tried or its key is
        // reached; stops at the first slot that opens.
        func trySlots(_ i: Int) {
            followChain()
            let pub = rings[i].record.publicPart
            // Only keyrings that passed rule 1's public checks (step 2).
            guard !rejectedByRule1.contains(i), reached[pub.keyCommit] == nil, tried.insert(i).inserted else { return }
            for slot in pub.slots {
                if SlotCrypto.isOwnKind(slot, of: credential) { slotTrials += 1 }
                let key: SymmetricKey?
                do throws(KeyError) {
                    key = try SlotCrypto.open(slot, with: credential, vaultID: vaultID, epoch: pub.epoch, cache: &passphraseCache)
                } catch {
                    if error.isOutOfGuardedMemory {
                        outOfGuardedMemory = true
                        return
                    }
                    limitError = error
                    // Reported once per keyring, where it is: a warning if
                    // the vault opens anyway (Spec/format.md §8.5).
                    if case .kdfLimitsExceeded(let ops, let mem) = error, !overCost.contains(i) {
                        overCost.insert(i)
                        issues.append(.kdfLimitsExceededInKeyring(rings[i].location, opsLimit: ops, memLimitBytes: mem))
                    }
                    continue
                }
                guard let key else { continue }
                openedBySlot.insert(i)
                // Key commitment: the slot must carry this keyring's key.
                // A keyring rejected here is never opened later, however its
                // key is reached (Spec/format.md §8.5 step 3; fifteenth
                // review R15-1: opened through the parentKeys of a keyring
                // nobody trusts, it no longer counted as newer, §8.6).
                guard EpochKey.commitment(of: key) == pub.keyCommit else {
                    fail(
                        i,
                        .malformedKeyring(rings[i].location, reason: "a slot opened a key that is not the one its key commitment names")
                    )
                    break
                }
                // A keyring rejected by rule 2 from its public part is
                // reached, and its key is not (step 2).
                if !rejectedByRule2.contains(i) { _ = learn(pub.keyCommit, key) }
                break
            }
        }
        if case .epochKey(let key) = credential {
            _ = learn(key.commitment, key.key)
        } else {
            // Step 2, interleaved with step 3 (Spec/format.md §8.5): a key a
            // slot reaches is followed down its chain before the next
            // keyring's slots are tried. Whose slots are tried goes in three
            // phases: the bootstrap, in file order, until the root key is
            // reached; then only keyrings *linked* under a key already
            // reached (a keyless writer cannot make a link that opens),
            // newest first; then, only if a linked keyring's key is still
            // unreached, every other keyring, newest first.
            for (i, ring) in rings.enumerated() {
                for (index, parent) in ring.parents.enumerated() {
                    if let p = byID[parent] { linkWaiters[rings[p].record.publicPart.keyCommit, default: []].append((i, index)) }
                }
            }
            // A passphrase's Argon2id runs go to the newest keyrings' slots,
            // then, if none names the derived key, to the first ones in file
            // order, whatever order slots are tried in (Spec/keys.md §2.3).
            if case .passphrase(let passphrase) = credential {
                try SlotCrypto.choosePassphraseRuns(
                    passphrase, keyrings: rings.map(\.record.publicPart.slots), cache: &passphraseCache)
            }
            for i in rings.indices {
                followChain()
                if rootReached { break }
                trySlots(i)
            }
            var pending: [Int] = []  // linked, ascending file order
            var queued = Set<Int>()
            while true {
                followChain()
                for i in linked.subtracting(queued) {
                    queued.insert(i)
                    pending.insert(i, at: pending.firstIndex(where: { $0 > i }) ?? pending.endIndex)
                }
                guard let i = pending.popLast() else { break }
                if linked.contains(i) { trySlots(i) }
            }
            if linked.contains(where: { reached[rings[$0].record.publicPart.keyCommit] == nil }) {
                for i in rings.indices.reversed() { trySlots(i) }
            }
        }
        followChain()
        if outOfGuardedMemory { throw .format(.outOfGuardedMemory) }
        guard rings.contains(where: { $0.content != nil }) else {
            if let limitError { throw limitError }
            if passphraseCache.skipped > 0 { throw .kdfBudgetExceeded(untried: passphraseCache.skipped) }
            // A keyring the credential reached but could not use is damaged:
            // say so rather than blame the credential. A damaged keyring it
            // did not reach says nothing about the credential, unless no
            // intact keyring is left to judge it by.
            let reachedRings = rings.indices.filter { openedBySlot.contains($0) || failed.contains($0) }
            for i in reachedRings {
                if let p = rings[i].problem, p.isMalformedKeyring { throw p }
            }
            // Keyrings were reached but none opened: the first one's reason,
            // in file order (Spec/format.md §8.5, the last fatal case).
            for i in reachedRings {
                if let p = rings[i].problem { throw p }
            }
            // Nothing reached, and every keyring failed rule 1 or is damaged.
            // A keyring rejected by rule 2 from its public part does not
            // count: its slots were tried, and none opened for the credential.
            if !rings.contains(where: { $0.problem?.isMalformedKeyring != true }) {
                for issue in issues where issue.isMalformedKeyring { throw issue }
            }
            if case .passphrase = credential, !rings.isEmpty,
                !rings.contains(where: { $0.record.publicPart.slots.contains { if case .passphrase = $0 { true } else { false } } })
            {
                throw .noPassphrase
            }
            throw credential.wrongError
        }
    }

    /// True unless keyring `i`'s sealed part fails to authenticate under
    /// `key` (Spec/format.md §8.6: the test of a reached key on a keyring the
    /// credential did not open). Opens nothing: the evaluation's state is
    /// unchanged.
    func sealedPartDecrypts(_ i: Int, key: SymmetricKey) -> Bool {
        let ring = rings[i]
        do {
            _ = try ring.record.open(key: EpochKey(epoch: ring.epoch, key: key), vaultID: vaultID, location: ring.location)
            return true
        } catch {
            return error.code != "authentication_failed"
        }
    }

    /// Opens keyring `i` with a reached key and checks what can be checked of
    /// it alone; returns the parent keys it carries, by commitment.
    mutating func open(_ i: Int, key: SymmetricKey) -> [([UInt8], SymmetricKey)] {
        let ring = rings[i]
        let epochKey = EpochKey(epoch: ring.epoch, key: key)
        let opened: OpenedKeyring
        keyringOpens += 1
        do {
            opened = try ring.record.open(key: epochKey, vaultID: vaultID, location: ring.location)
        } catch {
            if error == .outOfGuardedMemory {
                outOfGuardedMemory = true
                return []
            }
            if error.code != "authentication_failed" { decrypted.insert(i) }
            let reason = error.code == "authentication_failed" ? "its key does not open its sealed part" : error.description
            fail(i, .malformedKeyring(ring.location, reason: reason))
            return []
        }
        decrypted.insert(i)
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
        // Its readers must fit, with the recovery slot, in the slots of a
        // new epoch (Spec/format.md §8.4 rule 1).
        let readers = KeyringReaders.count(members: content.members, escrow: content.escrow, slots: ring.record.publicPart.slots)
        if readers > Limits.maxReadersPerKeyring {
            fail(
                i,
                .malformedKeyring(
                    ring.location, reason: "it lists \(readers) readers; at most \(Limits.maxReadersPerKeyring) fit in a new epoch's slots")
            )
            return []
        }
        if content.parentKeys.count != ring.parents.count {
            fail(
                i,
                .malformedKeyring(
                    ring.location, reason: "it carries \(content.parentKeys.count) parent keys for \(ring.parents.count) parents"))
            return []
        }
        let pub = ring.record.publicPart
        if pub.isEscrowFree {
            // What an escrow-free keyring wraps must match what it lists
            // (Spec/format.md §8.4 rule 2).
            let deviceSlots = pub.slots.filter { if case .device = $0 { true } else { false } }.count
            let recoverySlots = pub.slots.filter { if case .recovery = $0 { true } else { false } }.count
            let passphraseKeys = pub.slots.compactMap { if case .passphrase(_, _, _, let pk, _) = $0 { pk } else { nil } }
            // Device slots by members of role device and key type ed25519;
            // each slot of an unknown kind names a device or recovery member
            // by its tag under the epoch key over the slot's kind, one slot
            // per (member, kind) (tenth review R10-4, thirteenth review
            // R13-2, fourteenth review R14-4).
            let devices = content.members.filter { $0.role == "device" && $0.isEd25519 }.count
            let readerKeys = content.members.filter { $0.role == "device" || $0.role == "recovery" }.map(\.publicKey)
            let readers: Set<[UInt8]> = Set(
                Set(pub.slots.filter(\.isUnknown).map(\.kind)).flatMap { kind in
                    readerKeys.map { epochKey.slotMemberTag(vaultID: vaultID, memberKey: $0, kind: kind) + Array(kind.utf8) }
                })
            let tagged = pub.slots.compactMap { s in s.memberKey.map { $0 + Array(s.kind.utf8) } }
            let taggedOK = pub.slots.allSatisfy { s in
                !s.isUnknown || s.memberKey.map { readers.contains($0 + Array(s.kind.utf8)) } == true
            }
            if deviceSlots != devices || recoverySlots != 1 || Set(passphraseKeys).count != passphraseKeys.count || !taggedOK
                || Set(tagged).count != tagged.count
            {
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
        // The root key (§8.5 step 2): every root that derives the vault id
        // has this key commitment, so the bootstrap can end here.
        if ring.parents.isEmpty, ring.epoch == 1, let salt = content.vaultSalt,
            rootVaultID(signer: opened.signer, keyCommit: ring.record.publicPart.keyCommit, salt: salt) == vaultID
        {
            rootReached = true
        }
        var learned: [([UInt8], SymmetricKey)] = []
        for (p, parentKey) in zip(ring.parents, content.parentKeys) {
            guard let j = byID[p] else { continue }  // rule 5.1 reports a missing parent
            let commit = EpochKey.commitment(of: parentKey)
            guard commit == rings[j].record.publicPart.keyCommit else {
                rings[i].content = nil
                rings[i].epochKey = nil
                rings[i].parentKeyMismatch = true
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
        ancestors = [:]
        removers = [:]
        // Parents before children, whatever their places in the file: a
        // keyring's trust never depends on where a copy of it stands
        // (Spec/format.md §8.4, rule 5.1).
        let order = topologicalOrder()
        for i in order {
            if let problem = childProblem(i, t0: t0) {
                rings[i].problem = problem
                continue
            }
            t0.insert(i)
        }
        // Rule 5.2 is reported in rule 5's order, after 5.1 (Spec/format.md
        // §8.5 step 3): a keyring whose parent key did not match, one of
        // whose parents is missing or did not pass rules 1–5, fails 5.1.
        for i in rings.indices where rings[i].parentKeyMismatch {
            guard rings[i].parents.contains(where: { p in byID[p].map { !t0.contains($0) } ?? true }) else { continue }
            let first = KeyError.keyringUnauthenticated(rings[i].location, reason: "a parent keyring is missing or not trusted")
            if let old = rings[i].problem, let at = issues.firstIndex(of: old) { issues[at] = first }
            rings[i].problem = first
        }
        let (cut, tied, mutual, puppets) = removalCuts(t0)
        for i in tied { issues.append(.removalTie(rings[i].location)) }
        for i in mutual { issues.append(.removalMutual(rings[i].location)) }
        for (i, keys) in puppets { rings[i].removedPuppets = keys }
        for i in order where t0.contains(i) {
            rings[i].passesRules1To5 = true
            if let (reason, by) = cut[i] {
                rings[i].problem = .keyringUnauthenticated(rings[i].location, reason: reason)
                rings[i].cutBy = by.map { rings[$0].id }
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

    /// The opened keyrings without a problem, each after all its parents
    /// (ids are hashes of what names the parents, so the graph has no
    /// cycle); ties in file order. A keyring whose parents cannot all come
    /// first (a parent missing, unopened or rejected) comes when the rest
    /// have, and fails rule 5.1.
    func topologicalOrder() -> [Int] {
        let candidates = rings.indices.filter { rings[$0].problem == nil && rings[$0].content != nil }
        let isCandidate = Set(candidates)
        var waiting: [Int: Int] = [:]
        var children: [Int: [Int]] = [:]
        var ready: [Int] = []
        for i in candidates {
            let parents = Set(rings[i].parents.compactMap { byID[$0] }).filter { isCandidate.contains($0) && $0 != i }
            for j in parents { children[j, default: []].append(i) }
            if parents.isEmpty { ready.append(i) } else { waiting[i] = parents.count }
        }
        var order: [Int] = []
        order.reserveCapacity(candidates.count)
        var next = 0
        while next < ready.count {
            let i = ready[next]
            next += 1
            order.append(i)
            for c in children[i] ?? [] {
                waiting[c]! -= 1
                if waiting[c] == 0 {
                    waiting[c] = nil
                    ready.append(c)
                }
            }
        }
        // Only a hash cycle (out of reach) leaves keyrings waiting.
        order.append(contentsOf: waiting.keys.sorted())
        return order
    }

    /// Rules 2 (opened part), 4 and 5 for keyring `i`, given the keyrings
    /// already in T0 (all its parents have been decided). Records the
    /// ancestors and the removals of a keyring that passes.
    mutating func childProblem(_ i: Int, t0: Set<Int>) -> KeyError? {
        let ring = rings[i]
        let pub = ring.record.publicPart
        let content = ring.content!
        let signer = ring.signer!
        let loc = ring.location
        func refused(_ reason: String) -> KeyError { .keyringUnauthenticated(loc, reason: reason) }
        let ownRemoved = Set(content.removed.map(\.publicKey))
        if content.members.contains(where: { ownRemoved.contains($0.publicKey) }) {
            return .removedDeviceSlot(loc)
        }
        func accept(_ own: Bits) -> KeyError? {
            ancestors[i] = own
            for key in ownRemoved { removers[key, default: []].append(i) }
            return nil
        }
        if pub.parents.isEmpty {
            // A root is bound to the vault id, with its key: only its signer
            // could have made it, wherever it stands in the file, and only at
            // epoch 1 with the vault's first key.
            guard ring.epoch == 1 else {
                return refused("it has no parent, but its epoch is \(ring.epoch), not 1")
            }
            guard let salt = content.vaultSalt, rootVaultID(signer: signer, keyCommit: pub.keyCommit, salt: salt) == vaultID else {
                return refused("it has no parent, but its signer, key commitment and salt do not derive this vault's id")
            }
            guard
                content.members.contains(where: { $0.publicKey == signer && $0.isEd25519 && ($0.role == "device" || $0.role == "recovery") }
                )
            else {
                return refused("the root keyring is not signed by one of its own members")
            }
            // A removed key was a member of a parent (rule 5.10): a root has none.
            guard content.removed.isEmpty else { return refused("it has no parent, so it can remove nobody") }
            return accept(Bits(count: rings.count))
        }
        var parents: [KeyringInfo] = []
        var own = Bits(count: rings.count)
        for p in pub.parents {
            guard let j = byID[p], t0.contains(j) else {
                return refused("a parent keyring is missing or not trusted")
            }
            parents.append(rings[j])
            own.insert(j)
            own.formUnion(ancestors[j]!)
        }
        // Removal is sticky through the whole ancestry: lists are not
        // carried forward, each keyring lists whom it removes (rule 5.9).
        func removedByAncestor(_ key: [UInt8]) -> Bool { (removers[key] ?? []).contains { own.contains($0) } }
        func isMember(_ key: [UInt8], of r: KeyringInfo) -> Bool {
            r.content!.members.contains { $0.publicKey == key && $0.isEd25519 && ($0.role == "device" || $0.role == "recovery") }
        }
        // 5.3
        guard parents.contains(where: { isMember(signer, of: $0) }) else {
            return refused("its signer is not a member of a parent keyring")
        }
        guard !removedByAncestor(signer) else {
            return refused("its signer was removed in an earlier keyring")
        }
        // A keyring signed while behind answers the keyrings it lists; one
        // of them that the reader opened may not remove its signer — unless
        // a recovery member of a parent signed it (a replaced recovery key
        // answers its replacement, scenario 7).
        let signedByRecovery = parents.contains { $0.content!.members.first { $0.role == "recovery" }?.publicKey == signer }
        for answered in content.answers where !signedByRecovery {
            if let j = byID[answered], rings[j].content?.removed.contains(where: { $0.publicKey == signer }) == true {
                return refused("its signer answers keyring \(rings[j].location), which removed it")
            }
        }
        // 5.4
        let top = parents.map(\.epoch).max()!
        if ring.epoch == top {
            guard parents.contains(where: { $0.epoch == top && $0.record.publicPart.keyCommit == pub.keyCommit }) else {
                return refused("it reuses epoch \(top) with a different key")
            }
        } else if UInt64(ring.epoch) != UInt64(top) + 1 {
            return refused("its epoch \(ring.epoch) does not follow its parents' epoch \(top)")
        } else if (byCommit[pub.keyCommit] ?? []).contains(where: { own.contains($0) }) {
            // A new epoch has a new key: an ancestor's key would open it to
            // every former holder and make its commits stale.
            return refused("it starts epoch \(ring.epoch) with the key of an earlier epoch")
        }
        // 5.5
        if content.reason != "rekey" {
            let sameKey = parents.filter { $0.record.publicPart.keyCommit == pub.keyCommit }
            let allowed = sameKey.isEmpty ? parents : sameKey
            guard allowed.contains(where: { $0.content!.blobKey == content.blobKey }) else {
                return refused("its blob key is not its parents' (only a rekey changes it)")
            }
        }
        // 5.6 — not for a keyring the recovery key signs: it may drop the
        // names and kinds, so that none a thief lists blocks its removal
        // (twelfth review R12-1).
        for p in parents where !signedByRecovery {
            for kind in p.record.publicPart.requiredSlotKinds where !pub.requiredSlotKinds.contains(kind) {
                return refused("it drops the slot kind \"\(kind)\" its parents require")
            }
            for name in p.record.publicPart.criticalExtensions where !pub.criticalExtensions.contains(name) {
                return refused("it drops the critical extension \"\(name)\" of its parents")
            }
        }
        // 5.7: escrow-free mode is for good.
        if parents.contains(where: { $0.record.publicPart.isEscrowFree }) && !pub.isEscrowFree { return .escrowForbidden(loc) }
        // 5.8: the recovery member, kept or replaced by a keyring that
        // removes the old one.
        let recovery = content.members.first { $0.role == "recovery" }!.publicKey
        let parentRecovery = Set(parents.compactMap { $0.content!.members.first { $0.role == "recovery" }?.publicKey })
        if !parentRecovery.contains(recovery) {
            guard content.reason == "recovery", parentRecovery.allSatisfy({ ownRemoved.contains($0) || removedByAncestor($0) }) else {
                return refused("its recovery member is not its parents', and it does not replace theirs")
            }
        }
        // 5.9
        if content.members.contains(where: { removedByAncestor($0.publicKey) }) { return .removedDeviceSlot(loc) }
        // 5.10: a removal removes members of its parents — one, or the
        // recovery members of its parents other than its own (a join after
        // concurrent replacements) — and adds no reader.
        if !ownRemoved.isEmpty {
            let parentMembers = Set(parents.flatMap { $0.content!.members.map(\.publicKey) })
            guard ownRemoved.isSubset(of: parentMembers) else {
                return refused("it removes a key that is not a member of any of its parents")
            }
            // A removal starts a new epoch: at its parents' epoch it would
            // keep their key, which the member it removes holds (eighth
            // review R8-2 item 4).
            guard ring.epoch > parents.map(\.epoch).max()! else {
                return refused("it removes a member without starting a new epoch")
            }
            // A keyring signed by a recovery member may remove any number
            // (a lockdown); others remove one, or only extra recovery members.
            let extraRecovery = parentRecovery.subtracting([recovery])
            guard ownRemoved.count == 1 || ownRemoved.isSubset(of: extraRecovery) || parentRecovery.contains(signer) else {
                return refused("it removes \(ownRemoved.count) members at once; only the recovery key removes several")
            }
            let parentEscrow = Set(parents.flatMap { $0.content!.escrow.map(\.publicKey) })
            let parentPassphrases = Set(parents.flatMap { passphraseKeys($0) })
            let parentKinds = Set(parents.flatMap { $0.record.publicPart.slots.map(\.kind) })
            let addsMember = content.members.contains {
                !parentMembers.contains($0.publicKey) && !($0.role == "recovery" && content.reason == "recovery")
            }
            let addsEscrow = content.escrow.contains { !parentEscrow.contains($0.publicKey) }
            let addsPassphrase = passphraseKeys(ring).contains { !parentPassphrases.contains($0) }
            let addsKind = pub.slots.contains { !parentKinds.contains($0.kind) && !($0.kind == "recovery") }
            if addsMember || addsEscrow || addsPassphrase || addsKind {
                return refused("it removes a member and adds a reader at the same time")
            }
        }
        // 5.11: every link opens under its parent's key and carries this
        // keyring's signer. Every link signs one message (Spec/format.md
        // §8.2), so a signature already verified over it is not checked
        // again: a join of 64 heads carries one signature 64 times.
        let message = ring.record.linkMessage(vaultID: vaultID)
        var verified = Set<[UInt8]>()
        for (index, parent) in parents.enumerated() {
            guard let parentKey = parent.epochKey, derivesLinkKey(parentKey),
                let link = ring.record.openLink(parentIndex: index, parentKey: parentKey, vaultID: vaultID),
                link.signer == signer, linkVerifies(link.signature, message: message, signer: signer, verified: &verified)
            else {
                return refused("its link to parent \(index) does not carry its signer's signature")
            }
        }
        return accept(own)
    }

    /// True when `key`'s link key is derived (and kept with it, for
    /// ``KeyringRecord/openLink(parentIndex:parentKey:vaultID:)``, which
    /// cannot tell running out of guarded memory from a link that does not
    /// open); false, and ``outOfGuardedMemory`` set, when it cannot be.
    mutating func derivesLinkKey(_ key: EpochKey) -> Bool {
        do {
            _ = try key.subkey(.link)
            return true
        } catch {
            outOfGuardedMemory = true
            return false
        }
    }

    /// True when `signature` by `signer` verifies over `message`; a
    /// signature in `verified` (checked over the same message and signer)
    /// is not checked again.
    mutating func linkVerifies(_ signature: [UInt8], message: [UInt8], signer: [UInt8], verified: inout Set<[UInt8]>) -> Bool {
        if verified.contains(signature) { return true }
        linkSignatureChecks += 1
        guard Ed25519.verify(signature: signature, message: message, publicKey: signer) else { return false }
        verified.insert(signature)
        return true
    }

    func passphraseKeys(_ r: KeyringInfo) -> [[UInt8]] {
        r.record.publicPart.slots.compactMap { if case .passphrase(_, _, _, let pk, _) = $0 { pk } else { nil } }
    }

    /// Rule 6's passes after the first (`Spec/format.md §8.4`
    /// "Termination"): a constant, so the rule's cost is a constant number
    /// of passes whatever the graph (fifth review F9): at most five passes,
    /// then, when the fifth is not a fixpoint, one last pass — six in all.
    /// Every scenario of §8.4 but the tie (scenario 12) settles within three.
    static let removalPassLimit = 4

    /// Rule 6's primary set (`Spec/format.md §8.4` "Passes"): the first pass
    /// takes every relevant keyring as primary; each next pass takes what
    /// `unsilenced` leaves of the one before; the passes stop at a fixpoint,
    /// or after ``removalPassLimit`` passes after the first, and then a
    /// keyring is primary when either of the last two passes left it
    /// primary. `unsilenced` is called at most ``removalPassLimit`` + 1
    /// times. `alternating` holds the keyrings that the last two passes
    /// left primary in one and not the other: empty at a fixpoint.
    static func settlePrimary(_ relevant: Bits, count n: Int, unsilenced: (Bits) -> Bits) -> (primary: Bits, alternating: Bits) {
        var primary = relevant
        var older = relevant
        for _ in 0...removalPassLimit {
            let next = unsilenced(primary)
            if next == primary { return (primary, Bits(count: n)) }
            older = primary
            primary = next
        }
        var alternating = Bits(count: n)
        for i in relevant.elements where primary.contains(i) != older.contains(i) { alternating.insert(i) }
        primary.formUnion(older)
        return (primary, alternating)
    }

    /// Rule 6 (`Spec/format.md §8.4`): the keyrings of T0 that are cut,
    /// with why and by which removals. Decided from the graph alone, in
    /// passes — defies, then behind and against, contested and silenced
    /// with every removal primary; then the same with *behind* only of the
    /// primary removals (those the pass before did not silence), until the
    /// primary removals are stable; then cut — so the order of the file
    /// does not matter. `tied` lists the removals the last pass had to
    /// settle (the passes reached no fixpoint), each reported
    /// [`removal_tie`].
    func removalCuts(_ t0: Set<Int>) -> (
        cuts: [Int: (reason: String, by: [Int])], tied: [Int], mutual: [Int], puppets: [Int: [KeyringMember]]
    ) {
        let members = t0.sorted()
        let n = rings.count
        func isAncestor(_ a: Int, of b: Int) -> Bool { ancestors[b]?.contains(a) ?? false }
        func concurrent(_ a: Int, _ b: Int) -> Bool { a != b && !isAncestor(a, of: b) && !isAncestor(b, of: a) }
        var removes: [Int: Set<[UInt8]>] = [:]
        var recoverySigned = Set<Int>()
        var bySigner: [[UInt8]: [Int]] = [:]
        // The keyrings whose recovery member each key is.
        var holders: [[UInt8]: [Int]] = [:]
        for i in members {
            let ring = rings[i]
            let parents = ring.parents.compactMap { byID[$0] }
            let removed = Set(ring.content!.removed.map(\.publicKey))
            if !removed.isEmpty { removes[i] = removed }
            let signer = ring.signer!
            let sources = parents.isEmpty ? [ring] : parents.map { rings[$0] }
            if sources.contains(where: { $0.content!.members.first { $0.role == "recovery" }?.publicKey == signer }) {
                recoverySigned.insert(i)
            }
            if let q = ring.content!.members.first(where: { $0.role == "recovery" })?.publicKey { holders[q, default: []].append(i) }
            bySigner[signer, default: []].append(i)
        }
        // K defies R when they are concurrent and R removes K's signer, or R
        // is signed by a recovery member and K removes (replaces) R's signer.
        var defies: [Int: Set<Int>] = [:]
        var definers: [Int: Bits] = [:]
        var defiers = Bits(count: n)
        func add(_ k: Int, _ r: Int) {
            defies[k, default: []].insert(r)
            definers[r, default: Bits(count: n)].insert(k)
            defiers.insert(k)
        }
        // Each removal's puppets: every key enrolled (listed by no parent)
        // by a keyring that is neither the removal nor an ancestor of it and
        // whose signer it removes or is one of its puppets — a fixpoint from
        // the keys it lists, over the keyrings those keys signed (seventh
        // review R7-2: a key a removed member enrolled where the removal did
        // not see it is that member's, wherever it signs) — except the keys
        // vouched for against the removal: those it saw and does not remove,
        // and those a keyring outside its ancestors signed by a vouched-for
        // key enrols (eighth review R8-1: enrolling needs only a public key,
        // so a removed member can enrol anyone's on its fork; ninth review
        // R9-1: found from the keys the removal saw, never from the puppets,
        // so keys the removed member made enrol each other are puppets).
        var enrolled: [Int: [KeyringMember]] = [:]
        func enrols(_ i: Int) -> [KeyringMember] {
            if let known = enrolled[i] { return known }
            let parentKeys = Set(rings[i].parents.compactMap { byID[$0] }.flatMap { rings[$0].content!.members.map(\.publicKey) })
            let new = rings[i].parents.isEmpty ? [] : rings[i].content!.members.filter { !parentKeys.contains($0.publicKey) }
            enrolled[i] = new
            return new
        }
        // The keys removal `r` saw, never its puppets: those listed by `r`,
        // an ancestor of `r`, or a clean descendant of `r` — all of whose
        // parents are `r`, ancestors of `r` or clean, signed by a member `r`
        // keeps or by a key a clean descendant enrolled (a scan in ancestor
        // order, independent of the puppets).
        func seenBy(_ r: Int, removing keys: Set<[UInt8]>) -> Set<[UInt8]> {
            func listed(_ i: Int) -> [[UInt8]] { rings[i].content!.members.map(\.publicKey) }
            let before = Set(ancestors[r]?.elements ?? []).union([r])
            var seen = Set(before.flatMap(listed))
            var legit = Set(listed(r)).subtracting(keys)
            var clean = Set<Int>()
            let depth = Dictionary(uniqueKeysWithValues: members.map { ($0, ancestors[$0]?.elements.count ?? 0) })
            let after = members.filter { isAncestor(r, of: $0) }.sorted { (depth[$0]!, $0) < (depth[$1]!, $1) }
            for d in after where legit.contains(rings[d].signer!) {
                guard rings[d].parents.allSatisfy({ p in byID[p].map { before.contains($0) || clean.contains($0) } ?? false })
                else { continue }
                clean.insert(d)
                legit.formUnion(enrols(d).map(\.publicKey))
                seen.formUnion(listed(d))
            }
            return seen
        }
        var puppets: [Int: [KeyringMember]] = [:]
        for (r, keys) in removes {
            func outside(_ k: Int) -> Bool { k != r && !isAncestor(k, of: r) }
            // Vouched for against `r`: a least fixpoint from the keys `r` saw
            // and does not remove, through the keyrings outside `r`'s
            // ancestors that a vouched-for key signed. It never looks at
            // the puppets, so the order of the passes does not matter.
            var vouched = seenBy(r, removing: keys).subtracting(keys)
            var grew = true
            while grew {
                grew = false
                for k in members where outside(k) && vouched.contains(rings[k].signer!) {
                    for m in enrols(k) where !keys.contains(m.publicKey) && vouched.insert(m.publicKey).inserted {
                        grew = true
                    }
                }
            }
            // The puppets: a least fixpoint from the keys `r` removes, over
            // the keyrings outside `r`'s ancestors they signed, of the keys
            // those enrol that are not vouched for.
            var removed = keys
            grew = true
            while grew {
                grew = false
                for signer in Array(removed) {
                    for k in bySigner[signer] ?? [] where outside(k) {
                        for m in enrols(k) where !vouched.contains(m.publicKey) && removed.insert(m.publicKey).inserted {
                            grew = true
                        }
                    }
                }
            }
            // In keyring order, each once: the key state lists them in order.
            var listed = keys
            for k in members where outside(k) && removed.contains(rings[k].signer!) {
                for m in enrols(k) where removed.contains(m.publicKey) && listed.insert(m.publicKey).inserted {
                    puppets[r, default: []].append(m)
                }
            }
        }
        for (r, keys) in removes {
            for m in keys {
                for k in bySigner[m] ?? [] where concurrent(k, r) { add(k, r) }
            }
        }
        for r in recoverySigned {
            for k in removers[rings[r].signer!] ?? [] where concurrent(k, r) { add(k, r) }
        }
        func defiesRel(_ k: Int, _ r: Int) -> Bool { defies[k]?.contains(r) ?? false }
        // K opposes R when K defies R, or a puppet of R signed K and K is
        // neither R nor an ancestor of R (concurrent, or after R: rule 5.3
        // does not know puppets). Opposing puts a keyring on a branch
        // against R and lets R cut it; *mutual* and *contested* stay with
        // *defies*.
        var opposes = defies
        var opposers = definers
        var opposing = defiers
        for (r, list) in puppets {
            for m in list {
                for k in bySigner[m.publicKey] ?? [] where k != r && !isAncestor(k, of: r) {
                    opposes[k, default: []].insert(r)
                    opposers[r, default: Bits(count: n)].insert(k)
                    opposing.insert(k)
                }
            }
        }
        func opposesRel(_ k: Int, _ r: Int) -> Bool { opposes[k]?.contains(r) ?? false }
        // Two removals the last pass treats as mutual (a tie, below): each
        // lies on a branch the other's removed member started, and the
        // passes alternated on both.
        var tiedWith: [Int: Set<Int>] = [:]
        func mutual(_ k: Int, _ r: Int) -> Bool { defiesRel(k, r) && defiesRel(r, k) || tiedWith[r]?.contains(k) == true }

        /// What follows from a *behind* relation: recovery-signed for,
        /// contested and silenced, each memoised. Rule 6 judges in passes,
        /// each with *behind* restricted to the primary removals the pass
        /// before found, until they are stable.
        final class Judge {
            var behind: (Int, Int) -> Bool = { _, _ in false }
            var counts: (Int, Int) -> Bool = { _, _ in true }
            var recoveryMemo: [Int: Bool] = [:]
            var contestedMemo: [Int: Bool] = [:]
            var silencedMemo: [Int: Bool] = [:]
        }
        func judge(_ j: Judge) -> (recoveryFor: (Int, Int) -> Bool, contested: (Int) -> Bool, silenced: (Int) -> Bool) {
            func against(_ z: Int, _ r: Int) -> Bool { opposesRel(z, r) || j.behind(z, r) }
            // A is signed by a recovery member, as far as B is concerned,
            // when that key is the recovery member of some keyring not
            // against B: a recovery member installed only on a branch that
            // B's removed member started does not count.
            func recoveryFor(_ a: Int, _ b: Int) -> Bool {
                guard recoverySigned.contains(a) else { return false }
                let key = a &* n &+ b
                if let known = j.recoveryMemo[key] { return known }
                let result = (holders[rings[a].signer!] ?? []).contains { !against($0, b) }
                j.recoveryMemo[key] = result
                return result
            }
            func contested(_ r: Int) -> Bool {
                if let known = j.contestedMemo[r] { return known }
                let result = (defies[r] ?? []).contains { x in
                    if j.behind(x, r) { return !recoveryFor(r, x) && recoveryFor(x, r) }
                    return (!mutual(x, r) || recoveryFor(x, r)) && (j.counts(x, r) || recoveryFor(x, r))
                }
                j.contestedMemo[r] = result
                return result
            }
            // A keyring behind an uncontested removal cuts nothing, unless
            // it is signed by a recovery member as far as that removal is
            // concerned.
            func silenced(_ r: Int) -> Bool {
                if let known = j.silencedMemo[r] { return known }
                var result = false
                if var onBranch = ancestors[r] {
                    // The keyring itself and its ancestors (seventh review R7-1).
                    onBranch.insert(r)
                    onBranch.formIntersection(opposing)
                    outer: for x in onBranch.elements {
                        for r2 in opposes[x] ?? [] where j.behind(r, r2) && !contested(r2) && !recoveryFor(r, r2) {
                            result = true
                            break outer
                        }
                    }
                }
                j.silencedMemo[r] = result
                return result
            }
            return (recoveryFor, contested, silenced)
        }
        // Z is behind R when R is primary and an ancestor Y of Z defies R,
        // Y neither mutual with R nor an ancestor of a keyring mutual with
        // R — in every pass. A keyring that is not primary counts towards
        // contesting only when the recovery key signed it.
        var branchStarters: [Int: Bits] = [:]
        var relevant = opposing
        func findStarters() {
            for (r, d) in opposers {
                relevant.insert(r)
                let mutuals = d.elements.filter { mutual($0, r) } + (tiedWith[r] ?? [])
                var starters = Bits(count: n)
                for y in d.elements where !mutuals.contains(y) && !mutuals.contains(where: { isAncestor(y, of: $0) }) { starters.insert(y) }
                branchStarters[r] = starters
            }
        }
        findStarters()
        // Z lies on a branch that R's removed member started, whether or
        // not R is primary: a starter is an ancestor of Z, or Z itself while
        // R does not oppose Z (seventh review R7-1: a removed member's own
        // keyring lies on its branch; a removal that a puppet's keyring
        // answers does not lie on the puppet's).
        func onBranchAgainst(_ z: Int, _ r: Int) -> Bool {
            guard let d = branchStarters[r], let a = ancestors[z] else { return false }
            return a.intersects(d) || (d.contains(z) && !opposesRel(r, z))
        }
        func judging(_ primary: Bits) -> Judge {
            let j = Judge()
            j.behind = { z, r in primary.contains(r) && onBranchAgainst(z, r) }
            j.counts = { x, _ in primary.contains(x) }
            return j
        }
        // Passes: the first takes every keyring as primary; each next takes
        // as primary what the one before did not silence, until that set is
        // stable. Primacy at pass i+1 depends only on primacy at pass i of
        // other removals, so without a cycle of such dependencies it is
        // stable after at most one pass per keyring that defies or is
        // defied, plus one; on a cycle it may not be, and then a keyring is
        // primary when either of the last two passes left it primary.
        var pass = judge(judging(relevant))
        let (primary, alternating) = Evaluation.settlePrimary(relevant, count: n) { primary in
            pass = judge(judging(primary))
            var next = Bits(count: n)
            for i in relevant.elements where !pass.silenced(i) { next.insert(i) }
            return next
        }
        // No fixpoint: the last pass treats as mutual every two removals the
        // last two passes alternated on, each on a branch the other's removed
        // member started (a tie, scenario 12). Both stand, neither is
        // silenced by the other, and each cuts what the other's removed
        // member signs after it, as in scenario 2. Each removal the passes
        // alternated on is reported.
        let tied = alternating.elements.filter { removes[$0] != nil }
        for r in tied {
            for r2 in tied where r2 != r && onBranchAgainst(r, r2) && onBranchAgainst(r2, r) {
                tiedWith[r, default: []].insert(r2)
            }
        }
        if !tiedWith.isEmpty { findStarters() }
        pass = judge(judging(primary))
        let finalJudge = judging(primary)
        func behind(_ z: Int, _ r: Int) -> Bool { finalJudge.behind(z, r) }
        let recoveryFor = pass.recoveryFor
        let contested = pass.contested
        let silenced = pass.silenced
        var cut: [Int: (reason: String, by: [Int])] = [:]
        for k in opposes.keys.sorted() {
            var by: [Int] = []
            for r in opposes[k]!.sorted() where !contested(r) && !silenced(r) {
                if behind(r, k) && recoveryFor(k, r) { continue }
                let wins =
                    recoveryFor(r, k)
                    || (!mutual(k, r) && !(defies[r] ?? []).contains { mutual($0, r) && isAncestor(k, of: $0) }
                        && !(tiedWith[r] ?? []).contains { isAncestor(k, of: $0) })
                if wins { by.append(r) }
            }
            guard let first = by.first else { continue }
            let reason =
                (removes[first] ?? []).contains(rings[k].signer!)
                ? "it is signed by a member removed in keyring \(rings[first].location)"
                : (puppets[first] ?? []).contains { $0.publicKey == rings[k].signer! }
                    ? "it is signed by a key that a member removed in keyring \(rings[first].location) enrolled (a puppet)"
                    : "it replaces the recovery key that signed keyring \(rings[first].location), whose keyrings win"
            cut[k] = (reason, by)
        }
        // A removal that stands while a keyring its removed member (or a
        // puppet) signed outside its ancestors also stands: an answer the
        // file cannot tell from a concurrent removal (scenarios 2 and 3),
        // reported [`removal_mutual`] unless it is a tie.
        var cutBits = Bits(count: n)
        for k in cut.keys { cutBits.insert(k) }
        func untrusted(_ i: Int) -> Bool { cutBits.contains(i) || (ancestors[i]?.intersects(cutBits) ?? false) }
        let mutualRemovals = removes.keys.sorted().filter { r in
            !untrusted(r) && !tied.contains(r) && (opposers[r]?.elements ?? []).contains { !untrusted($0) }
        }
        return (cut, tied, mutualRemovals, puppets)
    }

    /// True when `key` may sign in `ring`: a member of role device or
    /// recovery with an Ed25519 key, not removed there.
    func isSigningMember(_ key: [UInt8], of ring: KeyringInfo) -> Bool {
        guard let c = ring.content else { return false }
        return c.members.contains { $0.publicKey == key && $0.isEd25519 && ($0.role == "device" || $0.role == "recovery") }
            && !c.removed.contains { $0.publicKey == key }
    }

    // MARK: 4. Result

    /// A warning at each trusted keyring that starts a key (no parent has its
    /// key commitment) that another trusted keyring starts at another epoch,
    /// naming its signer (`Spec/format.md §5.1`, ninth review R9-4): only a
    /// member reusing a key makes one, and one of the two signers is the
    /// device to remove. In file order.
    func keyClaimedTwice() -> [KeyError] {
        var epochs: [[UInt8]: Set<UInt32>] = [:]
        for ring in rings where ring.isTrusted { epochs[ring.record.publicPart.keyCommit, default: []].insert(ring.epoch) }
        var out: [KeyError] = []
        for ring in rings where ring.isTrusted {
            let commit = ring.record.publicPart.keyCommit
            guard let claimed = epochs[commit], claimed.count > 1 else { continue }
            let starts = !ring.parents.contains { byID[$0].map { rings[$0].record.publicPart.keyCommit == commit } ?? false }
            guard starts, let signer = ring.signer else { continue }
            let member =
                (ring.content?.members ?? []).first { $0.publicKey == signer }
                ?? ring.parents.lazy.compactMap {
                    self.byID[$0].flatMap { self.rings[$0].content?.members.first { $0.publicKey == signer } }
                }.first
            out.append(
                .keyEpochClaimedTwice(
                    ring.location, epoch: ring.epoch, otherEpochs: claimed.subtracting([ring.epoch]).sorted(),
                    signer: member.map(PrivacyStatement.phrase(for:)) ?? "a member"))
        }
        return out
    }

    mutating func result() throws(KeyError) -> UnlockedKeys {
        guard rings.contains(where: \.isTrusted) else {
            // The credential reached keys, but every keyring it reached was
            // rejected: report why, not "wrong credential".
            if let rejected = rings.first(where: { $0.content != nil && $0.problem != nil })?.problem { throw rejected }
            if let i = failed.min(), let rejected = rings[i].problem { throw rejected }
            throw .keyringUnauthenticated(rings[0].location, reason: "no keyring could be authenticated")
        }
        var keys = KeySet(keysOf: rings.filter(\.isTrusted))
        var trusted: [Int: UInt32] = [:]
        var attestors = Set<[UInt8]>()
        var childOf = Set<KeyringID>()
        var issues = self.issues
        issues += keyClaimedTwice()
        for ring in rings where ring.isTrusted {
            trusted[ring.location.index] = ring.epoch
            for copy in copies[ring.id] ?? [] { trusted[copy] = ring.epoch }
            for m in ring.content!.members where m.isEd25519 && (m.role == "device" || m.role == "recovery") {
                attestors.insert(m.publicKey)
            }
            for m in ring.content!.removed where m.isEd25519 && (m.role == "device" || m.role == "recovery") {
                attestors.insert(m.publicKey)
            }
            childOf.formUnion(ring.parents)
        }
        // The write key: the newest head of the highest epoch (ties: the
        // smallest key commitment), Spec/keys.md §5.
        let heads = rings.filter { $0.isTrusted && !childOf.contains($0.id) }
        let write = heads.min {
            KeySet.precedesAsWriteKey(
                ($0.epoch, $0.record.publicPart.keyCommit), ($1.epoch, $1.record.publicPart.keyCommit))
        }!
        keys.writeKey = write.epochKey
        // An unopened newer keyring that a trusted parent's key authenticates
        // means this credential was removed — or that a holder of that key
        // forged it. A keyring nobody authenticates stops nobody.
        // Members removed in any trusted keyring: their links count for
        // nothing, whichever older parent they name.
        let removedSigners = Set(rings.filter(\.isTrusted).flatMap { ($0.content!.removed + $0.removedPuppets).map(\.publicKey) })
        // A keyring this credential cannot open, that a current member of a
        // keyring it trusts made, means it is behind (Spec/format.md §8.6):
        // removed, or left out by a member. A keyring nobody authenticates
        // stops nobody.
        // *Did not open it*, and does not hold its key (Spec/format.md
        // §8.6): no keyring it trusts has its keyCommit (§8.5 step 4's held
        // keys). A keyring whose slot opened to a key failing its commitment
        // counts, as long as it passed rule 1's public checks. One whose key
        // the credential holds does not: a keyless writer can replay a
        // genuine public part, links included, with another sealed part or
        // with slots rule 2 rejects. A key only reached does not exclude it
        // (fifteenth review R15-1): a holder of that key can hand it over
        // through the parentKeys of a keyring nobody trusts.
        let held = Set(rings.filter(\.isTrusted).map(\.record.publicPart.keyCommit))
        var newer: [NewerKeyring] = []
        for (i, ring) in rings.enumerated()
        where !decrypted.contains(i) && !rejectedByRule1.contains(i) && !held.contains(ring.record.publicPart.keyCommit) {
            for (index, p) in ring.parents.enumerated() {
                // A link only members can sign, readable only by those who
                // hold the parent's key.
                guard let j = byID[p], rings[j].isTrusted, let parentKey = rings[j].epochKey, derivesLinkKey(parentKey),
                    let linker = ring.record.linkSigner(parentIndex: index, parentKey: parentKey, vaultID: vaultID),
                    isSigningMember(linker, of: rings[j]), !removedSigners.contains(linker)
                else { continue }
                // Its key reached, and its own sealed part does not decrypt
                // under it (a test, not an opening): a copy that a writer
                // without the key changed, such as a replay of a keyring the
                // credential opened but does not trust (sixteenth review
                // R16-1). A genuine keyring always decrypts.
                if let key = reached[ring.record.publicPart.keyCommit], !sealedPartDecrypts(i, key: key) { break }
                let member = rings[j].content!.members.first { $0.publicKey == linker }!
                newer.append(NewerKeyring(location: ring.location, id: ring.id, epoch: ring.epoch, signer: member))
                break
            }
        }
        // This credential's own signing key listed in `removed` of a keyring
        // it trusts: it was removed (or, for a recovery key, replaced).
        var removedIn: KeyringInfo?
        if let own = try credential.signingPublicKey {
            // Puppets included: the removed keys of `Spec/keys.md §5`.
            removedIn = rings.first { $0.isTrusted && ($0.content!.removed + $0.removedPuppets).contains { $0.publicKey == own } }
        }
        return UnlockedKeys(
            keys: keys, trustedKeyrings: trusted, keyrings: rings, issues: issues, newerKeyrings: newer,
            removedIn: removedIn.map { NewerKeyring(location: $0.location, id: $0.id, epoch: $0.epoch, signer: nil) }, attestors: attestors,
            linkSignatureChecks: linkSignatureChecks, slotTrials: slotTrials, keyringOpens: keyringOpens)
    }
}

/// A set of keyring indices as a bit field: the ancestor sets of rule 6 cost
/// one bit per keyring, and union and membership are word operations.
struct Bits: Sendable, Equatable {
    private(set) var words: [UInt64]

    init(count: Int) { words = [UInt64](repeating: 0, count: (count + 63) / 64) }

    func contains(_ i: Int) -> Bool { words[i >> 6] & (1 << UInt64(i & 63)) != 0 }

    mutating func insert(_ i: Int) { words[i >> 6] |= 1 << UInt64(i & 63) }

    mutating func formUnion(_ other: Bits) {
        for w in words.indices { words[w] |= other.words[w] }
    }

    mutating func formIntersection(_ other: Bits) {
        for w in words.indices { words[w] &= other.words[w] }
    }

    func intersects(_ other: Bits) -> Bool {
        for w in words.indices where words[w] & other.words[w] != 0 { return true }
        return false
    }

    /// The members, ascending.
    var elements: [Int] {
        var out: [Int] = []
        for (w, word) in words.enumerated() where word != 0 {
            var rest = word
            while rest != 0 {
                out.append(w << 6 + rest.trailingZeroBitCount)
                rest &= rest - 1
            }
        }
        return out
    }
}

/// The parent graph of some keyrings: each one's ancestors among them, as
/// bit fields over their indices. Parents outside the list are ignored.
struct KeyGraph {
    /// `ancestors[i]`: the indices of the ancestors of keyring `i`.
    let ancestors: [Bits]

    init(_ rings: [KeyringInfo]) {
        let byID = Dictionary(rings.enumerated().map { ($0.element.id, $0.offset) }, uniquingKeysWith: { a, _ in a })
        let parents = rings.map { ring in Set(ring.parents.compactMap { byID[$0] }) }
        var children: [[Int]] = Array(repeating: [], count: rings.count)
        var waiting = parents.map(\.count)
        var ready: [Int] = []
        for (i, ps) in parents.enumerated() {
            for p in ps { children[p].append(i) }
            if ps.isEmpty { ready.append(i) }
        }
        var result = Array(repeating: Bits(count: rings.count), count: rings.count)
        var next = 0
        while next < ready.count {
            let i = ready[next]
            next += 1
            for p in parents[i] {
                result[i].insert(p)
                result[i].formUnion(result[p])
            }
            for c in children[i] {
                waiting[c] -= 1
                if waiting[c] == 0 { ready.append(c) }
            }
        }
        ancestors = result
    }
}
