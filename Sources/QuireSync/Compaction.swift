@_spi(Crypto) package import QuireCrypto
@_spi(Format) public import QuireFormat
@_spi(Format) package import QuireKeys
import QuireSystem

/// What to keep when compacting (`Spec/merge.md §6`).
@_spi(Format) public struct CompactionOptions: Sendable {
    /// Revisions of history to keep per entry besides its heads (0: heads only).
    public var keepHistory: Int
    /// Drop the history of an entry whose heads are all tombstones older
    /// than this many milliseconds before `now`, keeping only those
    /// tombstones, which still retire the revisions they name, so that no
    /// stale copy merged later brings the entry back; nil (the default)
    /// keeps the `keepHistory` revisions of deleted entries too.
    public var tombstoneHorizonMilliseconds: Int64?
    /// Re-seal every record and attachment under a fresh epoch, which only
    /// current readers get, so that removed devices and former escrow or
    /// passphrase keys open nothing in the new file.
    public var rekey: Bool
    /// Compact even though some records are damaged or sit in commits that
    /// do not verify (a mismatch, a tampered or orphaned commit, a stale
    /// one): they are dropped and listed in ``CompactionReport/dropped``.
    /// Off by default, when compaction refuses instead
    /// (``SyncError/damaged(issues:)``). It is the way out of a vault whose
    /// commit was tampered with and of which no intact copy exists
    /// (`Spec/merge.md §6`): the result holds only what the chain vouches for.
    public var dropUnverified: Bool

    /// Heads only, every tombstone, no rekey unless asked, nothing dropped.
    public init(keepHistory: Int = 0, tombstoneHorizonMilliseconds: Int64? = nil, rekey: Bool = false, dropUnverified: Bool = false) {
        self.keepHistory = keepHistory
        self.tombstoneHorizonMilliseconds = tombstoneHorizonMilliseconds
        self.rekey = rekey
        self.dropUnverified = dropUnverified
    }
}

/// What a compaction did.
public struct CompactionReport: Sendable {
    /// File size before and after, in bytes.
    public let bytesBefore: UInt64
    /// File size after, in bytes.
    public let bytesAfter: UInt64
    /// Entry revisions before and after.
    @_spi(Format) public let revisionsBefore: Int
    /// Entry revisions after.
    @_spi(Format) public let revisionsAfter: Int
    /// Attachments (manifests) kept, and dropped as no kept revision names them.
    @_spi(Format) public let attachmentsKept: Int
    /// Attachments dropped.
    @_spi(Format) public let attachmentsDropped: Int
    /// Keyrings dropped, counted once per keyring: those the credential
    /// rejected (forged or broken), and those it could not open outside a
    /// verified commit (`Spec/merge.md §6`).
    @_spi(Format) public let untrustedKeyringsDropped: Int
    /// The epoch new records are sealed under after a rekey, else nil.
    @_spi(Format) public let rekeyedEpoch: UInt32?
    /// What ``CompactionOptions/dropUnverified`` dropped: damaged records,
    /// and records and commits the chain does not vouch for. Empty otherwise.
    @_spi(Format) public let dropped: [FormatError]
    /// What a rekey dropped: sealed records of kinds this version does not
    /// know whose commit no current member attested, which it cannot seal
    /// again (`Spec/merge.md §6`). Empty without a rekey.
    @_spi(Format) public let droppedUnknownKinds: [FrameLocation]
}

/// Rewrites a vault with only what it needs (`Spec/merge.md §6`).
package enum Compaction {
    /// `now − horizon`, saturated: options are input, and extreme ones
    /// (`now` = `Int64.min`, horizon = `Int64.max`) must not trap.
    static func cutoff(now: Int64, horizon: Int64) -> Int64 {
        let (value, overflow) = now.subtractingReportingOverflow(horizon)
        guard overflow else { return value }
        return horizon > 0 ? .min : .max
    }

    /// Compacts the vault at `path`: keeps every entry's heads (and
    /// `keepHistory` earlier revisions; a deleted entry past the tombstone
    /// horizon only its tombstones), the attachments kept revisions name, the newest profile, every trusted
    /// keyring and every keyring it cannot open from a verified commit (byte
    /// for byte), and records of kinds this version does not know; drops the
    /// rest. With ``CompactionOptions/rekey`` every kept record and
    /// attachment is sealed again under a new epoch (`KeyChange.rekey`).
    ///
    /// The result is written to a temporary file, flushed, opened again
    /// and checked (it opens with the credential, every commit verifies),
    /// renamed over the vault, and the folder flushed: a crash leaves the
    /// old file or the new one, whole.
    ///
    /// - Parameter now: milliseconds since the Unix epoch, UTC (the rekey
    ///   keyring's time and the tombstone horizon's reference).
    /// - Throws: ``SyncError/keys(_:)`` when the credential does not open the
    ///   vault or (for a rekey) cannot sign, or when a rekey would keep a
    ///   sealed record of an unknown kind that a current member attested
    ///   (one no current member attested is dropped and listed in
    ///   ``CompactionReport/droppedUnknownKinds``);
    ///   ``SyncError/unknownCriticalKind(path:_:author:)`` while a frame of
    ///   an unknown critical kind sits in a commit a current member attested
    ///   (remove that member first); ``SyncError/removed(newerEpoch:)``;
    ///   ``SyncError/damaged(issues:)`` when the vault has damaged or
    ///   unverified records (compaction would drop them: fold copies or
    ///   repair first); ``SyncError/resultDoesNotVerify(reason:)``,
    ///   ``SyncError/io(_:)``, ``SyncError/locked(path:)``. The vault is
    ///   unchanged when one is thrown.
    public static func compact(
        vaultAt path: String, credential: Credential, options: CompactionOptions = CompactionOptions(),
        now: Int64, random: any RandomSource = SystemRandom(), writeOptions: WriteOptions = WriteOptions()
    ) throws(SyncError) -> CompactionReport {
        let lockHandle = try VaultMerge.lockForRewrite(path, timeoutSeconds: writeOptions.lockTimeoutSeconds)
        defer { lockHandle.unlock() }

        let side = try Side(path: path, role: .vault)
        let file = side.file
        let unlocked: UnlockedKeys
        do { unlocked = try KeyringEvaluator.unlock(file, with: credential) } catch { throw .keys(error) }
        if let newer = unlocked.unreadableNewerEpoch { throw .removed(newerEpoch: newer) }
        let maybeSigner: Ed25519.KeyPair?
        do { maybeSigner = try credential.signingKeyPair() } catch { throw .keys(error) }
        guard let signer = maybeSigner else {
            throw .keys(
                .operationRefused(
                    reason:
                        "a passphrase or an escrow key can read this vault but not compact it; compact with a device or the recovery key"))
        }
        file.verifyCommits(with: unlocked)
        // Compaction writes records: like merge, it is refused while a frame
        // of a critical kind this version does not know sits in a commit a
        // current member attested (Spec/merge.md §6, §3.1; twelfth review
        // R12-2), naming that member; its removal lifts the refusal.
        try VaultMerge.refuseUnknownCriticalKind(side, path: path, keyrings: unlocked.keyrings)
        let frames = file.structure.frames
        let committed = 0..<file.structure.committedFrameCount

        // Read every record; refuse when anything is damaged or unverified
        // (or, when asked, drop it and say so).
        // A member's fork (commit_fork) loses nothing: both lines are verified.
        // Nor does a repaired previous head (frame_repaired at a commit: its
        // head verified from the commit before it, Spec/format.md §9.3 step
        // 2); the new commits store heads of their own.
        var damage: [FormatError] = file.commitIssues.filter {
            $0.code != "attestation_failed" && $0.code != "commit_fork" && $0.code != "frame_repaired"
        }
        var revisions: [(index: Int, revision: EntryRevision)] = []
        var revisionSlot: [RevisionID: Int] = [:]
        var manifests: [(index: Int, manifest: BlobManifest)] = []
        // The journal's profile (the highest standing, then the greatest
        // clock, then the later, records.md §5) and the profile with the
        // greatest clock, when that is another (merge.md §6).
        var profile: (index: Int, profile: Profile, standing: Int)?
        var newestProfile: (index: Int, clock: HybridLogicalClock)?
        var unknown: [Int] = []
        var damagedChunks = Set<Int>()
        var keyrings: [(keyID: KeyID, epoch: UInt32, body: [UInt8], trusted: Bool)] = []
        var keptKeyringIDs = Set<KeyringID>()
        var untrustedIDs = Set<KeyringID>()
        var unopened: [KeyringID: KeyringInfo] = [:]
        var memberMade = Set<KeyringID>()
        for ring in unlocked.keyrings where ring.content == nil && ring.problem == nil {
            unopened[ring.id] = ring
            do { if try unlocked.memberMade(ring, vaultID: file.vaultID) { memberMade.insert(ring.id) } } catch { throw .keys(error) }
        }
        for i in committed {
            let f = frames[i]
            if let reason = f.malformation {
                damage.append(.malformedFrame(f.location, reason: reason))
                continue
            }
            // With dropUnverified, nothing of a commit that does not verify
            // is kept but its keyrings, which their signatures vouch for.
            if options.dropUnverified, f.header.kind != .keyring, let g = file.structure.groupIndex(ofFrame: i),
                g < file.commits.statuses.count, file.commits.statuses[g] != .verified
            {
                continue
            }
            switch f.header.kind {
            case .commit:
                continue
            case .blobChunk:
                // A chunk never passes the record reader: its tag is checked
                // here, so a damaged attachment is refused as a damaged entry
                // is (merge.md §6), never copied into the new commit.
                if file.chunkAuthenticates(frame: i) == false {
                    damage.append(.authenticationFailed(f.location))
                    damagedChunks.insert(i)
                }
                continue
            case .keyring:
                // One body per trusted keyring (its first intact copy); both
                // copies are written again below, byte for byte.
                if let epoch = unlocked.trustedKeyrings[i], let body = f.plaintextBody, f.checksumIntact == true {
                    let id = KeyringBuilder.id(ofBody: body)
                    if !keptKeyringIDs.contains(id) {
                        keptKeyringIDs.insert(id)
                        keyrings.append((f.header.keyID, epoch, body, true))
                    }
                } else if let body = f.plaintextBody, f.checksumIntact == true {
                    // One the credential did not open (neither trusted nor
                    // rejected: not its to judge) is carried byte for byte
                    // when a member made it with an epoch at most one above
                    // its trusted parents' (ninth review R9-2), from a
                    // verified commit or from an unverifiable one under its
                    // own key, as merge carries it (merge.md §3.2, §6):
                    // another reader may trust it.
                    let id = KeyringBuilder.id(ofBody: body)
                    // Its first intact copy under its own key id (format.md
                    // §8.1, thirteenth review R13-1).
                    if let ring = unopened[id], !keptKeyringIDs.contains(id),
                        f.header.keyID == KeyID(commitment: ring.record.publicPart.keyCommit),
                        let g = file.structure.groupIndex(ofFrame: i),
                        g < file.commits.statuses.count, memberMade.contains(id),
                        file.commits.statuses[g] == .verified
                            || (file.commits.statuses[g] == .unverifiable
                                && file.structure.frames.header(at: file.structure.groups[g].commitFrame).keyID
                                    == KeyID(commitment: ring.record.publicPart.keyCommit))
                    {
                        keptKeyringIDs.insert(id)
                        keyrings.append((f.header.keyID, ring.epoch, body, false))
                    } else {
                        untrustedIDs.insert(id)
                    }
                }
                continue
            default:
                break
            }
            let payload: [UInt8]
            do { payload = try file.openRecord(frame: i) } catch {
                damage.append(error)
                continue
            }
            do {
                switch f.header.kind {
                case .entryRevision:
                    // One revision id is one revision: the frame of the
                    // highest standing, then the first in file order
                    // (merge.md §5) — never a duplicate an epoch-key holder
                    // appended over an attested one.
                    let r = try EntryRevision(decoding: payload)
                    if let slot = revisionSlot[r.revisionID] {
                        if file.standing(ofFrame: i) > file.standing(ofFrame: revisions[slot].index) { revisions[slot] = (i, r) }
                    } else {
                        revisionSlot[r.revisionID] = revisions.count
                        revisions.append((i, r))
                    }
                case .blobManifest:
                    let m = try BlobManifest(decoding: payload)
                    manifests.append((i, m))
                case .profile:
                    let p = try Profile(decoding: payload)
                    let standing = file.standing(ofFrame: i)
                    if Profile.replaces(p, standing: standing, current: profile?.profile, standing: profile?.standing ?? 0) {
                        profile = (i, p, standing)
                    }
                    if newestProfile == nil || p.clock >= newestProfile!.clock { newestProfile = (i, p.clock) }
                default:
                    unknown.append(i)
                }
            } catch {
                damage.append(error)
            }
        }
        // An attachment whose chunks are missing or damaged cannot be read
        // whole: damage too (its manifest is dropped with dropUnverified).
        var whole: [(index: Int, manifest: BlobManifest)] = []
        for m in manifests {
            do throws(FormatError) {
                if let bad = try file.chunkFrames(for: m.manifest).first(where: damagedChunks.contains) {
                    throw .authenticationFailed(frames[bad].location)
                }
                whole.append(m)
            } catch {
                if !damage.contains(error) { damage.append(error) }
            }
        }
        guard damage.isEmpty || options.dropUnverified else { throw .damaged(issues: damage) }
        keyrings = Self.parentsFirst(keyrings)
        // A keyring kept unopened above the write key's epoch would sit in a
        // commit under an older key than its own, stale for every reader
        // that trusts it (Spec/format.md §9.3 step 2): refuse instead.
        if let writeEpoch = unlocked.keys.writeKey?.epoch,
            let newest = keyrings.filter({ !$0.trusted && $0.epoch > writeEpoch }).map(\.epoch).max()
        {
            throw .behindNewerKeyring(newerEpoch: newest)
        }

        // Which revisions to keep.
        var byEntry: [EntryID: [(index: Int, revision: EntryRevision)]] = [:]
        for r in revisions { byEntry[r.revision.entryID, default: []].append(r) }
        var keep = Set<Int>()
        let tombstoneCutoff: Int64? = options.tombstoneHorizonMilliseconds.map { cutoff(now: now, horizon: $0) }
        for (_, list) in byEntry {
            // An unattested revision naming an attested one as its parent
            // does not retire it (merge.md §5): it stays a head and is kept.
            let heads = EntryRevision.heads(
                of: list, id: \.revision.revisionID, parents: \.revision.parents,
                attested: { file.standing(ofFrame: $0.index) == 2 })
            for h in heads { keep.insert(h.index) }
            // Past the horizon an all-tombstone entry keeps its tombstones
            // (no body; one, unless deletions were concurrent) and none of
            // its history: each names the revisions it retires by id, so a
            // stale copy merged later does not bring the entry back (merge.md
            // §6, tenth review R10-7).
            if let cutoff = tombstoneCutoff, heads.allSatisfy({ $0.revision.isDeleted }),
                heads.allSatisfy({ Int64(clamping: $0.revision.clock.milliseconds) < cutoff })
            {
                continue
            }
            let older = list.filter { r in !heads.contains { $0.index == r.index } }.sorted { $0.revision.clock > $1.revision.clock }
            for r in older.prefix(max(0, options.keepHistory)) { keep.insert(r.index) }
        }
        // The revision with the greatest clock is always kept, past any
        // horizon: a device remembers it to tell a rewrite from a rollback
        // (Spec/merge.md §6, keys.md §7).
        // That is the greatest clock a member attested (records.md §3.2);
        // the greatest of all is kept too, as before.
        if let newest = revisions.max(by: { $0.revision.clock < $1.revision.clock }) { keep.insert(newest.index) }
        let attestedRevisions = revisions.filter { r in
            file.structure.groupIndex(ofFrame: r.index).map { file.commits.isAttested($0) } ?? false
        }
        if let newest = attestedRevisions.max(by: { $0.revision.clock < $1.revision.clock }) { keep.insert(newest.index) }
        var liveBlobs = Set<BlobID>()
        for r in revisions where keep.contains(r.index) { for a in r.revision.body.attachments { liveBlobs.insert(a.blob) } }
        // What each kept reference resolves to: of the manifests whose
        // stream is whole and whose blob id or one of whose aliases is the
        // reference's, the one of highest standing, then one whose own blob
        // id it is, then the first in file order (records.md §4, format.md
        // §7.3), each once. Two
        // manifests can share a blob id and differ in aliases (each side of
        // two concurrent rekeys stored the content again, and a later rekey
        // stored both again): both stay when references need both.
        var resolved: [Int: (index: Int, manifest: BlobManifest)] = [:]
        for blob in liveBlobs {
            let answering = whole.filter { $0.manifest.answers(to: blob) }
            if let m = answering.max(by: { a, b in
                let (sa, sb) = (file.standing(ofFrame: a.index), file.standing(ofFrame: b.index))
                if sa != sb { return sa < sb }
                let (ea, eb) = (a.manifest.blob == blob, b.manifest.blob == blob)
                return ea != eb ? eb : a.index > b.index
            }) {
                resolved[m.index] = m
            }
        }
        let keptManifests = resolved.values.sorted { $0.index < $1.index }
        // The journal's profile; the one with the greatest clock too, when it
        // is another (of a lower standing: it stays behind the journal's, in
        // commit 2), as the record with the greatest clock is kept.
        let keptProfiles = Set([profile?.index, newestProfile?.index].compactMap { $0 }).sorted()
        // Records that were released unattested stay unattested: they go in a
        // commit of their own that nobody attests (Spec/merge.md §6).
        // A removed member's records from before its removal rank as a
        // current member's (format.md §9.4 step 5, eleventh review R11-2):
        // they go in the attested commit 1, or a revision it retired would
        // retire nothing in the result and win again.
        func attested(_ i: Int) -> Bool { file.standing(ofFrame: i) == 2 }
        // Records of unknown kinds go by their commit's own, strict
        // attestation, not a standing another rule lends it: the compacting
        // member never vouches for a frame it cannot read that no current
        // member vouched for (twelfth review R12-2).
        func strictlyAttested(_ i: Int) -> Bool { if case .attested = file.attestation(ofFrame: i) { true } else { false } }

        // A rekey seals every kept record again under the new key, so that
        // old keys open nothing. A sealed record of a kind this version does
        // not know cannot be sealed again (its layout may bind it to its
        // key), and old keys would still open it. When a current member
        // attested its commit it is a newer version's real record: refuse
        // (tenth review R10-4). Otherwise no current member vouched for it
        // (a passphrase or escrow holder, a removed member wrote it): it is
        // dropped and listed, so that such a holder cannot block every
        // rekey, the remedy for its own access (Spec/merge.md §6, twelfth
        // review R12-2).
        var droppedUnknown: [FrameLocation] = []
        if options.rekey {
            let sealedUnknown = unknown.filter { frames[$0].header.isSealed }
            let vouched = sealedUnknown.filter(attested)
            if let first = vouched.first {
                throw .keys(
                    .operationRefused(
                        reason:
                            "this vault holds \(vouched.count) sealed records of kinds this version of Quire does not know (kind 0x\(String(frames[first].header.kind.rawValue, radix: 16))) that a current member attested, which a rekey cannot seal again, so the old keys would still open them; update Quire before rekeying, or compact without a rekey"
                    ))
            }
            droppedUnknown = sealedUnknown.map { frames[$0].location }
            unknown.removeAll { frames[$0].header.isSealed }
        }
        var rekeyed: UInt32?
        try VaultMerge.replace(
            path,
            with: { (temp: String) throws(SyncError) in
                // A clean header (both copies intact), whatever the old one's state.
                try VaultMerge.copyFile(path, to: temp, byteCount: 0)
                try VaultMerge.writeHeader(FileHeader(vaultID: file.vaultID), to: temp)
                let out: VaultFile
                do throws(FormatError) { out = try VaultFile(path: temp, writable: true) } catch { throw error.asSyncError }
                var keys = unlocked.keys
                var proposals: [KeyringProposal] = []
                if options.rekey {
                    do throws(KeyError) {
                        let state = try KeyState(unlocked, vaultID: file.vaultID)
                        proposals = try KeyOperations.keyrings(for: .rekey, state: state, signer: signer, now: now, random: random)
                    } catch {
                        throw .keys(error)
                    }
                    for p in proposals { keys.add(p.epochKey) }
                    keys.writeKey = proposals.last!.epochKey
                    rekeyed = proposals.last!.epoch
                }
                out.verifyCommits(keys: keys, trustedKeyrings: [:], attestors: unlocked.attestors, removedMembers: unlocked.removedMembers)
                let noSync = WriteOptions(synchronous: false, lockTimeoutSeconds: writeOptions.lockTimeoutSeconds)
                do {
                    try out.commit(random: random, options: noSync, attestWith: signer) { (tx: PendingCommit) throws(FormatError) in
                        // Keyrings first, in file order, each written twice, then the new ones.
                        for k in keyrings { try tx.appendKeyring(keyID: k.keyID, epoch: k.epoch, body: k.body, trusted: k.trusted) }
                        for p in proposals { try tx.appendKeyring(keyID: p.epochKey.id, epoch: p.epoch, body: p.body) }
                        for i in keptProfiles where attested(i) { try carry(i, tx) }
                        for m in keptManifests where attested(m.index) { try carryBlob(m, tx) }
                        for r in revisions where keep.contains(r.index) && attested(r.index) { try carry(r.index, tx) }
                        for i in unknown where strictlyAttested(i) { try carry(i, tx) }
                    }
                    try out.commit(random: random, options: noSync, attestation: .none) { (tx: PendingCommit) throws(FormatError) in
                        for i in keptProfiles where !attested(i) { try carry(i, tx) }
                        for m in keptManifests where !attested(m.index) { try carryBlob(m, tx) }
                        for r in revisions where keep.contains(r.index) && !attested(r.index) { try carry(r.index, tx) }
                        for i in unknown where !strictlyAttested(i) { try carry(i, tx) }
                    }
                } catch let e as FormatError {
                    throw e.asSyncError
                } catch {
                    throw .resultDoesNotVerify(reason: "\(error)")
                }

                func carryBlob(_ m: (index: Int, manifest: BlobManifest), _ tx: PendingCommit) throws(FormatError) {
                    if options.rekey {
                        // Stored again under the new blob key; the old id stays an alias.
                        let blobKey = file.openingKey(frame: m.index)?.blobKey
                        let reader = try file.openBlob(m.manifest, blobKey: blobKey)
                        _ = try tx.appendBlob(
                            from: BlobSource(reader), mediaType: m.manifest.mediaType, aliases: [m.manifest.blob] + m.manifest.aliases)
                    } else {
                        for c in try file.chunkFrames(for: m.manifest) { try tx.appendRaw(frame: try side.bytes(of: c)) }
                        try tx.appendRaw(frame: try side.bytes(of: m.index))
                    }
                }

                func carry(_ index: Int, _ tx: PendingCommit) throws(FormatError) {
                    let f = frames[index]
                    if options.rekey && f.header.isSealed {
                        _ = try tx.appendSealed(
                            kind: f.header.kind, payload: try file.openRecord(frame: index),
                            compress: f.header.isCompressed || f.header.kind.isAlwaysCompressed)
                    } else {
                        try tx.appendRaw(frame: try side.bytes(of: index))
                    }
                }
            }, credential: credential, firstNewGroup: 0, random: random, options: writeOptions)

        let after = (try? FileSystem.size(path)) ?? 0
        return CompactionReport(
            bytesBefore: file.structure.fileSize, bytesAfter: after, revisionsBefore: revisions.count, revisionsAfter: keep.count,
            attachmentsKept: keptManifests.count, attachmentsDropped: manifests.count - keptManifests.count,
            untrustedKeyringsDropped: untrustedIDs.subtracting(keptKeyringIDs).count, rekeyedEpoch: rekeyed,
            dropped: options.dropUnverified ? damage : [], droppedUnknownKinds: droppedUnknown)
    }
}

extension Compaction {
    /// The kept keyrings in topological order, file order among those
    /// ready (`Spec/merge.md §6`): a keyring comes after every parent that
    /// is kept. File order of first intact copies is not enough — a keyless
    /// writer can insert an early copy of a child before its parent.
    static func parentsFirst<T>(_ keyrings: [(keyID: KeyID, epoch: UInt32, body: [UInt8], trusted: T)]) -> [(
        keyID: KeyID, epoch: UInt32, body: [UInt8], trusted: T
    )] {
        let ids = keyrings.map { KeyringBuilder.id(ofBody: $0.body) }
        let kept = Set(ids)
        let parents = keyrings.map { k in
            ((try? KeyringRecord(body: k.body, location: nil))?.publicPart.parents ?? []).filter { kept.contains($0) }
        }
        var written = Set<KeyringID>()
        var out: [(keyID: KeyID, epoch: UInt32, body: [UInt8], trusted: T)] = []
        var pending = Array(keyrings.indices)
        while !pending.isEmpty {
            // The first pending keyring whose kept parents are all written;
            // ids are hashes of what names the parents, so one always is.
            let next = pending.firstIndex { parents[$0].allSatisfy(written.contains) } ?? 0
            let i = pending.remove(at: next)
            written.insert(ids[i])
            out.append(keyrings[i])
        }
        return out
    }
}

final class BlobSource: ByteSource {
    let reader: BlobReader
    init(_ reader: BlobReader) { self.reader = reader }
    func read(into buffer: UnsafeMutableRawBufferPointer) throws(QuireError) -> Int { try reader.read(into: buffer) }
}
