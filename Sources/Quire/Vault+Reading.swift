@_spi(Format) import QuireFormat
@_spi(Format) import QuireKeys
import QuireSystem

extension Vault {
    /// True when `issue` is about a record (or commit) sealed under a key
    /// this credential does not hold (`unknown_key`, `commit_unverifiable`)
    /// while its device was removed: records written without it, not damage
    /// (`Spec/keys.md §6.3`).
    package func isUnreadableWithThisKey(_ issue: VerifyReport.Issue) -> Bool {
        lock.withLock { () -> Bool in
            let structure = file.structure
            guard unlocked.unreadableNewerEpoch != nil, let f = issue.frameIndex, f < structure.frames.count,
                issue.code == "unknown_key" || issue.code == "commit_unverifiable"
            else { return false }
            return unlocked.keys.keys(for: structure.frames.header(at: f).keyID).isEmpty
        }
    }
}

extension Vault {
    /// The keyring frames a removal signed by the recovery key, which this
    /// vault's trusted keyrings record, cut on purpose (`Spec/keys.md §6.3`;
    /// trial 26 N5), each with that removal in words (`the removal of
    /// "Phone" (keyring frame 14 at byte 8058)`): the lost device's keyrings
    /// a lockdown leaves behind are not damage, and nothing needs restoring.
    ///
    /// A keyring is here when it opened with this credential and its
    /// signature verifies, yet it is not trusted, because its signer was
    /// removed in a trusted keyring the recovery key signed that comes
    /// after it in file order (review 36b F2), because rule 6
    /// cut it for such a removal (`Spec/format.md §8.4`), or because every
    /// untrusted parent it has is here; so is every copy of it. Nothing
    /// else is: records and commits written under the keys they made are
    /// in ``framesWrittenUnderCutKeys()``, only where that key proves them
    /// (a header's key id is a label anyone can write — stop 33 review
    /// F1); what a device's removal cut is not cut on purpose (a thief's
    /// removal of the laptop cuts the laptop's keyrings: review F2).
    package func framesCutByRemoval() -> [Int: String] {
        lock.withLock { () -> [Int: String] in
            let rings = unlocked.keyrings
            let byID = Dictionary(rings.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
            let byRecoveryKey = Self.isSignedByRecoveryKey
            let removedIn = Self.removedByRecoveryKey(rings)
            func words(_ removal: KeyringInfo, signer: [UInt8]?) -> String {
                let removed = removal.content?.removed ?? []
                let named = removed.first { $0.publicKey == signer } ?? removed.first
                return named.map { "the removal of \"\($0.name)\" (keyring \(removal.location))" }
                    ?? "keyring \(removal.location), which this vault trusts"
            }
            // Decided parents first, without recursion: a thief's chain of
            // keyrings may be long. nil: not cut by a trusted removal.
            var cause: [KeyringID: String?] = [:]
            var visiting = Set<KeyringID>()
            func decide(_ r: KeyringInfo?, parents: [String?]?) -> String? {
                guard let r, !r.isTrusted, r.content != nil, let signer = r.signer else { return nil }
                if let (removal, name) = removedIn[signer] {
                    // Signed by the removed device after its removal in file
                    // order: it still writes where the vault is stored; not
                    // cut, as its commits are not (review 36b F2).
                    guard r.location.index < removal.location.index else { return nil }
                    return "the removal of \"\(name)\" (keyring \(removal.location))"
                }
                if !r.cutBy.isEmpty {
                    let cutters = r.cutBy.compactMap { byID[$0] }
                    guard cutters.count == r.cutBy.count, cutters.allSatisfy({ $0.isTrusted && byRecoveryKey($0) }) else { return nil }
                    return words(cutters[0], signer: signer)
                }
                guard let parents, !parents.isEmpty, parents.allSatisfy({ $0 != nil }) else { return nil }
                return parents[0]
            }
            for start in rings {
                var stack: [(KeyringID, Bool)] = [(start.id, false)]
                while let (id, expanded) = stack.popLast() {
                    if cause[id] != nil { continue }
                    let r = byID[id]
                    // Only a keyring that is neither removed-signed nor cut
                    // waits for its untrusted parents.
                    let untrusted = r?.parents.filter { byID[$0].map { !$0.isTrusted } ?? true } ?? []
                    let direct = r.map { $0.cutBy.isEmpty && $0.signer.map { removedIn[$0] == nil } ?? false } ?? false
                    if expanded || !direct || untrusted.isEmpty {
                        let parents: [String?] = untrusted.map { cause[$0] ?? nil }
                        cause[id] = .some(decide(r, parents: parents))
                        visiting.remove(id)
                        continue
                    }
                    guard visiting.insert(id).inserted else {
                        // A cycle, which ids that hash their parents rule out.
                        cause[id] = .some(nil)
                        continue
                    }
                    stack.append((id, true))
                    for p in untrusted where cause[p] == nil && !visiting.contains(p) { stack.append((p, false)) }
                }
            }
            var out: [Int: String] = [:]
            for ring in rings {
                guard let why = cause[ring.id] ?? nil else { continue }
                for f in [ring.location.index] + ring.copyFrames { out[f] = why }
            }
            return out
        }
    }

    /// Who each trusted keyring the recovery key signed removed (its
    /// `removed` list, by public key), with that keyring and the name it
    /// gives; the first removal in file order kept.
    static func removedByRecoveryKey(_ rings: [KeyringInfo]) -> [[UInt8]: (ring: KeyringInfo, name: String)] {
        var removedIn: [[UInt8]: (ring: KeyringInfo, name: String)] = [:]
        for ring in rings where ring.isTrusted && isSignedByRecoveryKey(ring) {
            for m in ring.content?.removed ?? [] where removedIn[m.publicKey] == nil { removedIn[m.publicKey] = (ring, m.name) }
        }
        return removedIn
    }

    /// The records and commits written by a removed device under a key the
    /// keyrings of ``framesCutByRemoval()`` made, by frame index, each with
    /// the removal in words (`the removal of "Phone" (keyring frame 14 at
    /// byte 8058)`), trial 26 N5: what a lockdown cut on purpose, not
    /// damage.
    ///
    /// Each is proven by the key, never by a header's key id (a label
    /// anyone can write: review 33 F1). A commit is here when its stored
    /// head computes under such a keyring's opened epoch key from its stored
    /// previous head (`Spec/format.md §9.2`), and its attestation opens
    /// under that key and is signed by a member that a trusted removal the
    /// recovery key signed lists in `removed` (§9.4): an unattested commit,
    /// or one a current member attested (a laptop that wrote under the
    /// thief's rotation: review 33 F3), is not. A record is here when such
    /// a commit covers it and it opens under the same key (body hash and
    /// AEAD). Attachment chunks never are, nor a later commit that stores
    /// the same head (a byte copy of the group, put anywhere), nor what it
    /// covers. A changed byte fails one of these, so what it hits is still
    /// said as lost. Only a group whose commit comes before, in file order,
    /// the removal of its signer is cut; one after it is in
    /// ``CutKeyWrites/afterRemoval`` (review 36 B1): the removed device
    /// (or whoever has its keys) still wrote to where the vault is stored
    /// after it was removed, and that is not what a lockdown cut.
    package func framesWrittenUnderCutKeys() -> CutKeyWrites {
        let cutRings = framesCutByRemoval()
        guard !cutRings.isEmpty else { return CutKeyWrites() }
        return lock.withLock { () -> CutKeyWrites in
            let rings = unlocked.keyrings
            let removedIn = Self.removedByRecoveryKey(rings)
            var keys: [EpochKey] = []
            var seen = Set<[UInt8]>()
            for ring in rings where cutRings[ring.location.index] != nil {
                if let key = ring.epochKey, seen.insert(key.commitment).inserted { keys.append(key) }
            }
            guard !keys.isEmpty, !removedIn.isEmpty else { return CutKeyWrites() }
            let current = currentFile
            let groups = current.structure.groups
            var out = CutKeyWrites()
            var heads = Set<[UInt8]>()
            for g in groups.indices {
                // A head computes under one key at most.
                guard let shown = keys.lazy.compactMap({ current.authenticate(group: g, under: $0) }).first,
                    let signer = shown.signer, let (removal, name) = removedIn[signer],
                    // A byte copy of a cut group, wherever it is put, stays lost.
                    heads.insert(groups[g].storedHead).inserted
                else { continue }
                let words = "the removal of \"\(name)\" (keyring \(removal.location))"
                // Written after its removal was in this file: not cut (review 36 B1).
                let after = groups[g].commitFrame > removal.location.index
                for f in [groups[g].commitFrame] + shown.opened {
                    if after { out.afterRemoval[f] = words } else { out.cut[f] = words }
                }
            }
            return out
        }
    }

    /// What ``Vault/framesWrittenUnderCutKeys()`` finds, by frame index,
    /// each with the removal in words.
    package struct CutKeyWrites: Sendable {
        /// Written by the removed device before its removal, in file
        /// order: cut on purpose, not damage.
        package var cut: [Int: String] = [:]
        /// Written by the removed device under a cut key, but committed
        /// after its removal in file order (review 36 B1): whoever has its
        /// keys still writes where the vault is stored. Still lost.
        package var afterRemoval: [Int: String] = [:]

        package init() {}
    }

    /// The keyrings reported `removal_mutual` (by frame index, each copy)
    /// that a removal the recovery key signed has since settled, each with
    /// that removal in words (`the removal of "Phone" that the recovery key
    /// signed (keyring frame 21 at byte 13730)`), trial 26 N2: a trusted
    /// keyring the recovery key signed, built on the mutual removal, that
    /// removes its signer or a member it removed — what the warning asks
    /// for. Both removed members still stay removed; the warning need not
    /// ask again.
    package func mutualRemovalsSettled() -> [Int: String] {
        lock.withLock { () -> [Int: String] in
            let rings = unlocked.keyrings
            let byID = Dictionary(rings.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
            var out: [Int: String] = [:]
            for removal in rings where removal.isTrusted && Self.isSignedByRecoveryKey(removal) {
                let removed = removal.content?.removed ?? []
                guard !removed.isEmpty else { continue }
                // Its ancestors, without recursion: a chain of keyrings may be long.
                var seen = Set<KeyringID>()
                var stack = removal.parents
                while let id = stack.popLast() {
                    guard seen.insert(id).inserted, let ring = byID[id] else { continue }
                    stack.append(contentsOf: ring.parents)
                }
                for id in seen {
                    guard let ring = byID[id], ring.isTrusted, let content = ring.content, !content.removed.isEmpty,
                        out[ring.location.index] == nil
                    else { continue }
                    let involved = Set(content.removed.map(\.publicKey) + (ring.signer.map { [$0] } ?? []))
                    guard let named = removed.first(where: { involved.contains($0.publicKey) }) else { continue }
                    let words = "the removal of \"\(named.name)\" that the recovery key signed (keyring \(removal.location))"
                    for f in [ring.location.index] + ring.copyFrames { out[f] = words }
                }
            }
            return out
        }
    }

    /// True when the recovery key signed `ring`: a recovery member it lists
    /// has the signer's key.
    static func isSignedByRecoveryKey(_ ring: KeyringInfo) -> Bool {
        guard let signer = ring.signer else { return false }
        return ring.content?.members.contains { $0.role == "recovery" && $0.publicKey == signer } ?? false
    }
}
