import QuireCrypto
public import QuireFormat

/// One keyring of a vault as the key layer sees it.
public struct KeyringInfo: Sendable {
    /// Where its frame is.
    public let location: FrameLocation
    /// Its id (the frame trailer).
    public let id: KeyringID
    /// The epoch it defines.
    public let epoch: UInt16
    /// The parsed record.
    public let record: KeyringRecord
    /// The epoch key, when the credential reached it.
    public internal(set) var epochKey: EpochKey?
    /// The sealed content, when opened.
    public internal(set) var content: KeyringContent?
    /// The Ed25519 key that signed it, when opened.
    public internal(set) var signer: [UInt8]?
    /// True when authenticated (`Spec/format.md §8.4`).
    public internal(set) var isTrusted: Bool
    /// Why it is not trusted, when it is not.
    public internal(set) var problem: KeyError?
}

/// The keys a credential unlocked and what was learned about the keyrings.
public struct UnlockedKeys: Sendable {
    /// The keys to read and write with.
    public let keys: KeySet
    /// Frame index → epoch of each trusted keyring.
    public let trustedKeyrings: [Int: UInt16]
    /// Every committed keyring, in file order.
    public let keyrings: [KeyringInfo]
    /// Problems found (rejected keyrings and the like); none is fatal.
    public let issues: [KeyError]
    /// The newest epoch of an intact keyring that this credential cannot
    /// open (a device removed since), if any.
    public let unreadableNewerEpoch: UInt16?

    /// The newest trusted keyring, whose content describes the vault now.
    public var newestTrusted: KeyringInfo? { keyrings.last(where: \.isTrusted) }
}

/// Finds the keyrings of a vault, unwraps the epoch keys a credential can
/// reach, and decides which keyrings to trust (`Spec/format.md §8.4`).
public enum KeyringEvaluator {
    /// Unlocks `vault` with `credential`.
    ///
    /// - Throws: ``KeyError/noKeyring``, the credential's wrong-credential
    ///   error (``KeyError/wrongRecoveryKey``, ``KeyError/wrongPassphrase``,
    ///   ``KeyError/wrongDeviceKey``, ``KeyError/wrongKey``),
    ///   ``KeyError/kdfLimitsExceeded(opsLimit:memLimitBytes:)`` when the only
    ///   passphrase slots are over the limits, and
    ///   ``KeyError/keyringUnauthenticated(_:reason:)`` when keys were reached
    ///   but no keyring is trusted.
    public static func unlock(_ vault: VaultFile, with credential: Credential) throws(KeyError) -> UnlockedKeys {
        let vaultID = vault.vaultID
        var issues: [KeyError] = []
        var rings: [KeyringInfo] = []
        var copies: [KeyringID: [Int]] = [:]
        let structure = vault.structure
        // Writers store every keyring twice (Spec/format.md §8.1): an intact
        // copy stands for both, and a damaged copy of an intact keyring costs
        // nothing.
        let keyringFrames = structure.frames[0..<structure.committedFrameCount].filter { $0.header.kind == .keyring }
        var intactIDs = Set<KeyringID>()
        for frame in keyringFrames where frame.malformation == nil && frame.checksumIntact == true {
            intactIDs.insert(KeyringID(unchecked: frame.trailer))
        }
        var seenIDs = Set<KeyringID>()
        for frame in keyringFrames {
            guard frame.malformation == nil, frame.checksumIntact == true, let body = frame.plaintextBody else {
                let bodyID = frame.plaintextBody.map { KeyringID(unchecked: BLAKE2b.hash($0, byteCount: 16)) }
                if intactIDs.contains(KeyringID(unchecked: frame.trailer)) || bodyID.map(intactIDs.contains) == true {
                    issues.append(.keyringCopyDamaged(frame.location))
                } else {
                    issues.append(.malformedKeyring(frame.location, reason: frame.malformation ?? "its checksum does not match (damaged)"))
                }
                continue
            }
            let id = KeyringID(unchecked: frame.trailer)
            guard seenIDs.insert(id).inserted else {
                copies[id, default: []].append(frame.location.index)
                continue
            }
            let record: KeyringRecord
            do {
                record = try KeyringRecord(body: body, epoch: frame.header.epoch, location: frame.location)
            } catch {
                issues.append(.malformedKeyring(frame.location, reason: error.description))
                continue
            }
            var info = KeyringInfo(
                location: frame.location, id: id, epoch: frame.header.epoch, record: record,
                epochKey: nil, content: nil, signer: nil, isTrusted: false, problem: nil)
            if frame.header.epoch == 0 {
                info.problem = .malformedKeyring(frame.location, reason: "epoch 0 is reserved")
            } else if record.publicPart.isEscrowFree && record.publicPart.slots.contains(where: { if case .escrow = $0 { true } else { false } }) {
                info.problem = .escrowForbidden(frame.location)
            }
            if let p = info.problem { issues.append(p) }
            rings.append(info)
        }
        guard !rings.isEmpty else {
            for issue in issues where !issue.isWarning { throw issue }
            throw .noKeyring
        }

        // 1. Reach epoch keys: through the credential, then through history.
        var known: [UInt16: [SymmetricKey]] = [:]
        func learn(_ epoch: UInt16, _ key: SymmetricKey) {
            if !(known[epoch] ?? []).contains(where: { $0 == key }) { known[epoch, default: []].append(key) }
        }
        var limitError: KeyError?
        var openedBySlot = Set<Int>()
        var passphraseCache = SlotCrypto.PassphraseCache()
        var directBlobKey: SymmetricKey?
        switch credential {
        case let .epochKey(key, blobKey):
            learn(key.epoch, key.key)
            directBlobKey = blobKey
        default:
            for (i, ring) in rings.enumerated().reversed() {
                for slot in ring.record.publicPart.slots {
                    do throws(KeyError) {
                        if let key = try SlotCrypto.open(slot, with: credential, vaultID: vaultID, epoch: ring.epoch, cache: &passphraseCache) {
                            learn(ring.epoch, key)
                            openedBySlot.insert(i)
                        }
                    } catch {
                        limitError = error
                        issues.append(error)
                    }
                }
            }
        }
        var changed = true
        var failed = Set<Int>()
        while changed {
            changed = false
            for i in rings.indices where rings[i].content == nil && !failed.contains(i) {
                for key in known[rings[i].epoch] ?? [] {
                    let epochKey = EpochKey(epoch: rings[i].epoch, key: key)
                    // With several keys for one epoch, only one opens this keyring.
                    guard let inner = try? rings[i].record.openInner(key: epochKey, vaultID: vaultID, location: rings[i].location) else { continue }
                    let content: KeyringContent
                    do {
                        content = try KeyringContent(decoding: inner.contentBytes, location: rings[i].location)
                    } catch {
                        if rings[i].problem == nil {
                            rings[i].problem = .malformedKeyring(rings[i].location, reason: error.description)
                            issues.append(rings[i].problem!)
                        }
                        failed.insert(i)
                        break
                    }
                    // Every member key must be a usable Ed25519 point, or no
                    // later keyring could wrap to it (records.md §6.3).
                    if content.members.contains(where: { (try? Ed25519.agreementPublicKey(from: $0.publicKey)) == nil }) {
                        if rings[i].problem == nil {
                            rings[i].problem = .malformedKeyring(rings[i].location, reason: "a member's key is not a valid Ed25519 public key")
                            issues.append(rings[i].problem!)
                        }
                        failed.insert(i)
                        break
                    }
                    let message = KeyringRecord.signedMessage(vaultID: vaultID, epoch: rings[i].epoch, publicBytes: rings[i].record.publicBytes, contentBytes: inner.contentBytes)
                    guard Ed25519.verify(signature: inner.signature, message: message, publicKey: inner.signer) else {
                        if rings[i].problem == nil {
                            rings[i].problem = .keyringUnauthenticated(rings[i].location, reason: "its signature does not verify")
                            issues.append(rings[i].problem!)
                        }
                        failed.insert(i)
                        break
                    }
                    rings[i].epochKey = epochKey
                    rings[i].content = content
                    rings[i].signer = inner.signer
                    for h in content.history where h.epoch < rings[i].epoch { learn(h.epoch, h.key) }
                    changed = true
                    break
                }
            }
        }
        // A key that a slot of this very keyring gave must open it: if none
        // does, the keyring is damaged.
        for i in openedBySlot.sorted() where rings[i].content == nil && rings[i].problem == nil {
            rings[i].problem = .malformedKeyring(rings[i].location, reason: "a slot opened but the sealed part does not")
            issues.append(rings[i].problem!)
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
            }
            throw credential.wrongError
        }

        // 2. Decide trust in file order: a chain of signatures from the first keyring.
        var byID: [KeyringID: Int] = [:]
        for i in rings.indices {
            defer { byID[rings[i].id] = byID[rings[i].id] ?? i }
            guard rings[i].problem == nil, let content = rings[i].content, let signer = rings[i].signer else { continue }
            let parents = rings[i].record.publicPart.parents
            if parents.isEmpty {
                // A root is bound to the vault id: only its signer could have
                // made it, wherever it stands in the file.
                guard let salt = rings[i].record.publicPart.vaultSalt, rootVaultID(signer: signer, salt: salt) == vaultID else {
                    rings[i].problem = .keyringUnauthenticated(rings[i].location, reason: "it has no parent, but its signer and salt do not derive this vault's id")
                    continue
                }
                guard content.members.contains(where: { $0.publicKey == signer }) else {
                    rings[i].problem = .keyringUnauthenticated(rings[i].location, reason: "the root keyring is not signed by one of its own members")
                    continue
                }
                rings[i].isTrusted = true
                continue
            }
            var parentRings: [KeyringInfo] = []
            for p in parents {
                guard let j = byID[p], rings[j].isTrusted else { break }
                parentRings.append(rings[j])
            }
            guard parentRings.count == parents.count else {
                rings[i].problem = .keyringUnauthenticated(rings[i].location, reason: "a parent keyring is missing or not trusted")
                continue
            }
            guard parentRings.contains(where: { $0.content!.members.contains(where: { $0.publicKey == signer }) }) else {
                rings[i].problem = .keyringUnauthenticated(rings[i].location, reason: "its signer is not a member of a parent keyring")
                continue
            }
            // The blob key is the vault's for life (Spec/format.md §8.4 rule 5).
            guard parentRings.allSatisfy({ $0.content!.blobKey == content.blobKey }) else {
                rings[i].problem = .keyringUnauthenticated(rings[i].location, reason: "its blob key differs from its parents'")
                continue
            }
            // Escrow-free mode is for good: a keyring after an escrow-free one
            // is escrow-free too (Spec/format.md §8.4 rule 5).
            if parentRings.contains(where: { $0.record.publicPart.isEscrowFree }) && !rings[i].record.publicPart.isEscrowFree {
                rings[i].problem = .escrowForbidden(rings[i].location)
                continue
            }
            let top = parentRings.map(\.epoch).max()!
            if rings[i].epoch == top {
                let same = parentRings.filter { $0.epoch == top }.contains { $0.epochKey!.key == rings[i].epochKey!.key }
                guard same else {
                    rings[i].problem = .keyringUnauthenticated(rings[i].location, reason: "it reuses epoch \(top) with a different key")
                    continue
                }
            } else if rings[i].epoch != top &+ 1 {
                rings[i].problem = .keyringUnauthenticated(rings[i].location, reason: "its epoch \(rings[i].epoch) does not follow its parents' epoch \(top)")
                continue
            }
            rings[i].isTrusted = true
        }

        // 3. Sticky removal: a keyring signed by (or listing) a removed member
        //    is trusted only if it is an ancestor of the removal.
        var removalChanged = true
        while removalChanged {
            removalChanged = false
            let ancestors = ancestorSets(rings, byID: byID, among: rings.indices.filter { rings[$0].isTrusted })
            for r in rings.indices where rings[r].isTrusted {
                for removed in rings[r].content!.removed {
                    for k in rings.indices where rings[k].isTrusted && k != r && !ancestors[r].contains(k) {
                        let signedByRemoved = rings[k].signer == removed.publicKey
                        let listsRemoved = ancestors[k].contains(r) && rings[k].content!.members.contains(where: { $0.publicKey == removed.publicKey })
                        guard signedByRemoved || listsRemoved else { continue }
                        rings[k].isTrusted = false
                        rings[k].problem = listsRemoved ? .removedDeviceSlot(rings[k].location)
                            : .keyringUnauthenticated(rings[k].location, reason: "it is signed by a member removed in keyring \(rings[r].location)")
                        removalChanged = true
                    }
                }
            }
            // Descendants of an untrusted keyring are untrusted too.
            for k in rings.indices where rings[k].isTrusted {
                for p in rings[k].record.publicPart.parents {
                    if let j = byID[p], !rings[j].isTrusted {
                        rings[k].isTrusted = false
                        rings[k].problem = .keyringUnauthenticated(rings[k].location, reason: "a parent keyring is not trusted")
                        removalChanged = true
                        break
                    }
                }
            }
        }
        // A device removed in a trusted keyring may not use a slot of a later one.
        if case .device(let pair) = credential {
            for r in rings.indices where rings[r].isTrusted && rings[r].content!.removed.contains(where: { $0.publicKey == pair.publicKey }) {
                let ancestors = ancestorSets(rings, byID: byID, among: rings.indices.filter { rings[$0].isTrusted })
                for k in rings.indices where rings[k].isTrusted && (k == r || ancestors[k].contains(r)) {
                    rings[k].isTrusted = false
                    rings[k].problem = .removedDeviceSlot(rings[k].location)
                }
            }
        }
        for ring in rings where !ring.isTrusted && ring.content != nil {
            if let p = ring.problem, !issues.contains(p) { issues.append(p) }
        }
        guard rings.contains(where: \.isTrusted) else {
            // The credential reached keys, but every keyring it reached was
            // rejected: report why, not "wrong credential".
            if let rejected = rings.first(where: { $0.content != nil && $0.problem != nil })?.problem { throw rejected }
            throw .keyringUnauthenticated(rings[0].location, reason: "no keyring could be authenticated")
        }

        // 4. The key set.
        var keys = KeySet()
        var trusted: [Int: UInt16] = [:]
        for ring in rings where ring.isTrusted {
            keys.add(ring.epochKey!)
            for h in ring.content!.history where h.epoch < ring.epoch { keys.add(EpochKey(epoch: h.epoch, key: h.key)) }
            trusted[ring.location.index] = ring.epoch
            for copy in copies[ring.id] ?? [] { trusted[copy] = ring.epoch }
            keys.blobKey = ring.content!.blobKey
        }
        if let direct = directBlobKey { keys.blobKey = direct }
        let newest = rings.filter(\.isTrusted).max { $0.epoch < $1.epoch }!
        keys.writeKey = newest.epochKey
        // A newer keyring this credential cannot open means it was removed —
        // or that someone who can write the file appended one. The recovery
        // key is in every genuine keyring, so for it such a keyring is
        // never genuine and does not stop it from writing (keys.md §7).
        let unreadable: UInt16?
        if case .recoveryKey = credential {
            unreadable = nil
        } else {
            unreadable = rings.filter { $0.problem == nil && $0.content == nil && $0.epoch > newest.epoch }.map(\.epoch).max()
        }
        return UnlockedKeys(keys: keys, trustedKeyrings: trusted, keyrings: rings, issues: issues, unreadableNewerEpoch: unreadable)
    }

    /// For each keyring, the indices of its ancestors (through parents).
    ///
    /// Only the keyrings in `among` (the trusted ones, ascending) count, as
    /// nodes and as ancestors: keyrings nobody can authenticate — which
    /// anyone who can write the file may append by the thousand — cost
    /// nothing here. A parent comes before its child in `among` (trust is
    /// decided in file order), so one pass in that order builds every set
    /// from its parents' sets.
    static func ancestorSets(_ rings: [KeyringInfo], byID: [KeyringID: Int], among: [Int]) -> [Set<Int>] {
        var result = [Set<Int>](repeating: [], count: rings.count)
        let members = Set(among)
        for i in among {
            var set = Set<Int>()
            for p in rings[i].record.publicPart.parents {
                guard let j = byID[p], j != i, members.contains(j), j < i else { continue }
                set.insert(j)
                set.formUnion(result[j])
            }
            result[i] = set
        }
        return result
    }
}
