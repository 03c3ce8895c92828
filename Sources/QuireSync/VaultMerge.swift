import Dispatch
@_spi(Crypto) public import QuireCrypto
@_spi(Format) public import QuireFormat
@_spi(Format) public import QuireKeys
import QuireSystem

/// What a merge did (`Spec/merge.md §3`).
public struct MergeReport: Sendable {
    /// True when the vault file was replaced by the merged one.
    public let changed: Bool
    /// Bytes at the start that both copies share and the result keeps as they were.
    @_spi(Format) public let commonPrefixByteCount: UInt64
    /// Frames of the copy that the vault did not hold and now does.
    @_spi(Format) public let framesAdded: Int
    /// Of those, frames this credential cannot open or read (an epoch it
    /// never had, or a record kind this version does not know), carried
    /// byte for byte.
    @_spi(Format) public let framesCarriedUnopened: Int
    /// Of those, frames sealed again under the current key because the
    /// result holds a rekey they predate (`Spec/merge.md §3.4`); a chunk is
    /// not counted, its attachment's manifest is.
    @_spi(Format) public let framesResealed: Int
    /// Commits written for them.
    @_spi(Format) public let commitsWritten: Int
    /// Of those, commits written unattested: their source commit was
    /// unattested, or its attestation failed (``failedAttestations``).
    @_spi(Format) public let unattestedCommits: Int
    /// The carried commits whose attestation failed — a sign that a holder
    /// of the vault's key wrote or rewrote them (`Spec/format.md §9.4`) —
    /// each with the file it is in and the commit frame's place there. The
    /// result writes them unattested (`Spec/merge.md §3.3`), so the merge
    /// says so: `quire verify` reports them on the file they came from as
    /// `attestation_failed`, and the merged vault no longer can.
    @_spi(Format) public internal(set) var failedAttestations: [FailedAttestation] = []
    /// Frames of the copy left out, each with why: damaged, malformed,
    /// stale, or unverified (a commit that does not vouch for it). A copy
    /// with any of these is not complete in the result.
    @_spi(Format) public let leftOut: [FormatError]
    /// Frames of the vault's own tail that the result does not keep, for
    /// the same reasons (the copy holding them intact brings them back).
    @_spi(Format) public let droppedFromVault: [FormatError]
    /// Temporary files the merge made and could not remove (an I/O error):
    /// the next write beside the vault removes them (`Spec/merge.md §3.5`).
    @_spi(Format) public internal(set) var temporariesLeft: [String] = []

    /// A carried commit whose attestation failed (``MergeReport/failedAttestations``).
    @_spi(Format) public struct FailedAttestation: Sendable, Equatable {
        /// The file the commit is in: the copy (true) or the vault's own tail.
        public let inCopy: Bool
        /// `attestationFailed`, at the commit frame, with the reason.
        public let issue: FormatError
    }
}

/// Merges two copies of one vault (`Spec/merge.md §3`).
///
/// The result holds the longest committed prefix both files share, byte for
/// byte, then every other frame of either side that is intact, once
/// (identity: the frame's header and trailer), in blocks — one per source
/// commit, ordered by the highest epoch among their frames, then by a
/// digest of their identities — each block committed anew. Two devices that
/// merge the same two copies hold the same keys and write the same bytes.
@_spi(Format) public enum VaultMerge {
    /// Merges the copy at `copyPath` into the vault at `vaultPath`
    /// (`Spec/merge.md §3`).
    ///
    /// Both files are scanned and verified with the keys the credential
    /// reaches in either; the result — the common prefix, then each side's
    /// carried commit groups as blocks in canonical order, each frame once — is
    /// written to a temporary file, checked, and renamed over the vault.
    /// Blocks written whole keep their attestation; a block whose frames
    /// changed is attested by the merging member if its source was attested.
    /// When the result holds a rekey, what is folded in from older epochs is
    /// sealed again under the current key (`Spec/merge.md §3.3`).
    ///
    /// - Throws: ``SyncError/differentVaults(vault:copy:)``,
    ///   ``SyncError/copyUnreadable(path:_:)``, ``SyncError/vaultUnreadable(path:_:)``,
    ///   ``SyncError/keys(_:)`` (the credential does not open the vault, or
    ///   cannot sign: a passphrase or an escrow key reads but does not merge),
    ///   ``SyncError/removed(newerEpoch:)``, ``SyncError/unknownCriticalKind(path:_:author:)``, ``SyncError/locked(path:)``,
    ///   ``SyncError/resultDoesNotVerify(reason:)``, ``SyncError/io(_:)``.
    public static func merge(
        vaultAt vaultPath: String, copyAt copyPath: String, credential: Credential,
        random: any RandomSource = SystemRandom(), options: WriteOptions = WriteOptions()
    ) throws(SyncError) -> MergeReport {
        try merge(vaultAt: vaultPath, copyAt: copyPath, credential: credential, random: random, options: options, reusing: nil)
    }

    /// ``merge(vaultAt:copyAt:credential:random:options:)``, reusing
    /// `scanned`, a handle on the vault the caller has just opened, instead
    /// of scanning the vault again, when it is still the file at
    /// `vaultPath` (same device and inode) with the size it had when
    /// scanned, once the vault's lock is held. Its commit verdicts are
    /// replaced by the merge's. (A merge of 10k entries scanned the vault
    /// twice, once for the command that unlocked it.) `scannedKeys`, what
    /// ``KeyringEvaluator/unlock(_:with:)`` gave for `scanned` with
    /// `credential` (as ``Vault``'s `unlocked`), stands for the vault's
    /// own evaluation when `scanned` is reused: the same handle, the same
    /// keyring frames, the same credential. The caller must pass the two
    /// from one moment of one handle (as the CLI passes a just-opened
    /// ``Vault``'s): nothing here ties the keys to the credential or to
    /// frames `scanned` read later; the evaluation over both files that
    /// follows checks the keys again for what a merge commits.
    package static func merge(
        vaultAt vaultPath: String, copyAt copyPath: String, credential: Credential,
        random: any RandomSource = SystemRandom(), options: WriteOptions = WriteOptions(), reusing scanned: VaultFile?,
        scannedKeys: UnlockedKeys? = nil
    ) throws(SyncError) -> MergeReport {
        // The vault ids first, from the headers alone: a copy of another vault
        // (or a huge file) is refused before anything is scanned.
        let vaultHeader: FileHeader
        let copyHeader: FileHeader
        do { vaultHeader = try ConflictCopies.readHeader(vaultPath) } catch { throw .vaultUnreadable(path: vaultPath, error) }
        do { copyHeader = try ConflictCopies.readHeader(copyPath) } catch { throw .copyUnreadable(path: copyPath, error) }
        guard vaultHeader.vaultID == copyHeader.vaultID else {
            throw .differentVaults(vault: vaultHeader.vaultID, copy: copyHeader.vaultID)
        }
        let maybeSigner: Ed25519.KeyPair?
        do { maybeSigner = try credential.signingKeyPair() } catch { throw .keys(error) }
        guard let signer = maybeSigner else {
            throw .keys(
                .operationRefused(
                    reason:
                        "a passphrase or an escrow key can read this vault but not merge into it; merge with a device or the recovery key"))
        }
        // The copy is scanned before the vault's lock is taken, so a large
        // copy does not keep writers waiting.
        // Where the caller's scan of the vault is at hand, the copy's frames
        // up to where the two files part are taken from it: only the rest
        // of the copy is scanned.
        let b = try Side(path: copyPath, role: .copy, sharingPrefixWith: scanned)
        // Hold the vault's lock so no writer appends while we rewrite.
        let lockHandle = try lockForRewrite(vaultPath, timeoutSeconds: options.lockTimeoutSeconds)
        defer { lockHandle.unlock() }
        let a = try Side(path: vaultPath, role: .vault, reusing: scanned)
        guard a.file.vaultID == b.file.vaultID else {
            throw .differentVaults(vault: a.file.vaultID, copy: b.file.vaultID)
        }
        // Keys: the vault must open; the copy may not (a copy from before
        // this device was enrolled). Trust is decided over the keyrings of
        // both files at once, as the result will hold them: a keyring one
        // file alone trusts (a removed device's fork) neither verifies nor
        // carries anything (Spec/merge.md §3.2).
        let unlockedA: UnlockedKeys
        if let scannedKeys, let scanned, a.file === scanned {
            unlockedA = scannedKeys
        } else {
            do { unlockedA = try KeyringEvaluator.unlock(a.file, with: credential) } catch { throw .keys(error) }
        }
        let union = try KeyringUnion([a, b], vaultPath: vaultPath, credential: credential, random: random)
        // A credential that cannot open a newer epoch was removed: its
        // commits would be stale for everyone else, so it does not merge.
        if let newer = unlockedA.unreadableNewerEpoch ?? union.unlocked.unreadableNewerEpoch { throw .removed(newerEpoch: newer) }
        let keys = union.unlocked.keys
        let attestors = union.unlocked.attestors
        let removedMembers = union.unlocked.removedMembers
        let removing = union.unlocked.removingKeyrings
        a.file.verifyCommits(
            keys: keys, trustedKeyrings: union.trustedKeyrings(in: a), attestors: attestors, removedMembers: removedMembers,
            removals: a.file.removals(of: removing))
        b.file.verifyCommits(
            keys: keys, trustedKeyrings: union.trustedKeyrings(in: b), attestors: attestors, removedMembers: removedMembers,
            removals: b.file.removals(of: removing))
        // A merge writes records: while a frame of a critical kind this
        // version does not know sits in a commit a current member attested,
        // in either file (judged over both files' keyrings, as the result
        // will hold them), it is refused. Carried and attested again by the
        // merging member, the frame would outlive its author's removal
        // (Spec/format.md §4.3, merge.md §3.1, eleventh review R11-3).
        for (side, path) in [(a, vaultPath), (b, copyPath)] {
            try refuseUnknownCriticalKind(side, path: path, keyrings: union.unlocked.keyrings)
        }

        let prefix = try commonPrefix(a, b)
        // A commit both tails hold ranks by the higher of its two standings,
        // in the chunk rule, the block order and the attestations alike
        // (Spec/merge.md §3.2, "Standing in a merge", twelfth review R12-3).
        rankAcross(a, b, after: prefix.groups)
        let tails = bothTails(a, b, after: prefix.groups, keyrings: union, recognizing: signer)
        var aTail = try tails.vault.get()
        var bTail = try tails.copy.get()
        // Of two versions of a chunk, the side with which its attachment
        // reads whole wins (Spec/merge.md §3.2, tenth review R10-1).
        let repair = try repairChunks(a, b, vaultBlocks: aTail.blocks, copyBlocks: bTail.blocks)
        aTail.leftOut += repair.vaultLeftOut
        bTail.leftOut += repair.copyLeftOut
        let notWritten = { (f: Side.Carried) -> Bool in (f.side === a ? repair.vault : repair.copy).contains(f.identity) }
        let leftOut = bTail.leftOut
        let trustedRings = union.unlocked.keyrings.filter(\.isTrusted)
        // A rekey in the result: what is folded in from before it is sealed
        // again, unless the result already holds it sealed again.
        let rekeyFloor = trustedRings.filter { $0.content?.reason == "rekey" }.map(\.epoch).max() ?? 0
        let superseded = try resealedAlready(a: a, b: b, tails: aTail.blocks + bTail.blocks, floor: rekeyFloor)
        // Every question put to the prefix's identities is about a tail
        // frame's (is it in the vault already?). Equal identities are equal
        // bytes, so equal header and trailer: only the prefix frames that
        // share both with a tail frame need their bodies read and hashed,
        // not the whole vault.
        var tailSummaries = Set((aTail.blocks + bTail.blocks).flatMap { $0.frames.map { $0.side.summary(of: $0.index) } })
        for u in aTail.unverifiedRecords { tailSummaries.insert(a.summary(of: u.index)) }
        let prefixIDs = Set(try a.identities(of: 0..<prefix.frames, matching: tailSummaries))
        let aIDs = Set(aTail.blocks.flatMap { $0.frames.map(\.identity) }).union(prefixIDs).union(superseded)
        let newFromB = bTail.blocks.flatMap { $0.frames }.filter { !aIDs.contains($0.identity) && !notWritten($0) }
        let aTailSuperseded = aTail.blocks.contains { $0.frames.contains { superseded.contains($0.identity) } }
        // The vault's own records that authenticate but sit in commits that
        // do not verify: the result cannot vouch for them, so unless the copy
        // brings them in a verified commit, a merge would lose them. Refuse
        // instead (Spec/merge.md §3.1): compaction would refuse them too.
        let carriedIDs = aIDs.union(bTail.blocks.flatMap { $0.frames.map(\.identity) })
        let wouldLose = aTail.unverifiedRecords.filter { !carriedIDs.contains($0.identity) }.map(\.issue)
        if !wouldLose.isEmpty { throw .wouldLoseRecords(issues: wouldLose) }
        guard !newFromB.isEmpty || !aTail.leftOut.isEmpty || aTailSuperseded else {
            var report = MergeReport(
                changed: false, commonPrefixByteCount: prefix.bytes, framesAdded: 0, framesCarriedUnopened: 0, framesResealed: 0,
                commitsWritten: 0, unattestedCommits: 0, leftOut: leftOut, droppedFromVault: [])
            report.temporariesLeft = union.temporariesLeft
            return report
        }
        let unopened = newFromB.filter(\.unopened).count
        let needsReseal = { (f: Side.Carried) -> Bool in f.sealedUnder > 0 && f.sealedUnder < rekeyFloor && f.kind != .keyring }

        // The vault is a prefix of an intact copy: the result is the copy.
        if aTail.blocks.isEmpty && aTail.leftOut.isEmpty && bTail.leftOut.isEmpty && prefix.groups == a.file.structure.groups.count
            && b.file.structure.fileSize == b.file.structure.committedEnd && !newFromB.contains(where: { needsReseal($0) })
            && superseded.isEmpty
        {
            try replace(
                vaultPath,
                with: { (temp: String) throws(SyncError) in
                    try copyFile(copyPath, to: temp, byteCount: b.file.structure.committedEnd)
                    // Each header after the prefix as corrected (§3.3), as
                    // every other result carries it (``Side/bytes(of:)``):
                    // a repaired header copied as stored stayed damaged in
                    // the vault (trial 28).
                    try correctRepairedHeaders(of: b, from: prefix.frames, in: temp)
                },
                credential: credential, firstNewGroup: prefix.groups, random: random, options: options,
                copied: VaultScanner.prefix(of: b.file.structure, groups: b.file.structure.groups.count))
            var report = MergeReport(
                changed: true, commonPrefixByteCount: prefix.bytes, framesAdded: newFromB.count, framesCarriedUnopened: unopened,
                framesResealed: 0, commitsWritten: b.file.structure.groups.count - prefix.groups,
                unattestedCommits: (prefix.groups..<b.file.structure.groups.count).filter {
                    if case .unattested = b.file.attestation(ofGroup: $0) { true } else { false }
                }.count,
                leftOut: leftOut, droppedFromVault: [])
            report.temporariesLeft = union.temporariesLeft
            return report
        }

        let writeKey = try resultWriteKey(trustedRings, keys: keys)
        // A keyring carried unopened above the write key's epoch would be
        // committed under an older key than its own: stale for every reader
        // that trusts it (Spec/format.md §9.3 step 2). Refuse instead.
        let unopenedAbove = (aTail.blocks + bTail.blocks).flatMap(\.frames).filter {
            $0.kind == .keyring && $0.epoch > writeKey.epoch
                && union.verdict(KeyringID(unchecked: $0.side.file.structure.frames[$0.index].trailer)) == .unopened
        }
        if let newest = unopenedAbove.map(\.epoch).max() { throw .behindNewerKeyring(newerEpoch: newest) }
        // The key of each trusted keyring that starts the write key's epoch
        // (its epoch above its parents'), when held: a block carrying one is
        // committed under it (Spec/merge.md §3.3, eighth review R8-3).
        let ringByID = Dictionary(union.unlocked.keyrings.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        func startsWriteEpoch(_ f: Side.Carried) -> EpochKey? {
            guard f.kind == .keyring, let ring = ringByID[KeyringID(unchecked: f.side.file.structure.frames[f.index].trailer)],
                ring.isTrusted, ring.epoch == writeKey.epoch,
                ring.parents.allSatisfy({ (ringByID[$0]?.epoch ?? 0) < ring.epoch })
            else { return nil }
            return keys.key(commitment: ring.record.publicPart.keyCommit)
        }
        let blocks = canonicalOrder(
            aTail.blocks + bTail.blocks, mergingMember: signer.publicKey,
            placed: Set(unlockedA.keyrings.map(\.id)).filter { id in
                a.keyringIndex(id).map { $0 < prefix.frames } ?? false
            })
        var commits = 0
        var unattested = 0
        var resealed = 0
        var failedAttestations: [MergeReport.FailedAttestation] = []
        // The result starts with the common prefix, copied from the vault:
        // its frames are known from the vault's scan, not scanned again.
        let copiedPrefix = VaultScanner.prefix(of: a.file.structure, groups: prefix.groups)
        try replace(
            vaultPath,
            with: { (temp: String) throws(SyncError) in
                try copyFile(vaultPath, to: temp, byteCount: prefix.bytes)
                // No common prefix (a header copy differs): a clean header.
                if prefix.bytes == 0 { try writeHeader(vaultHeader, to: temp) }
                let out: VaultFile
                do {
                    out =
                        try copiedPrefix.map { (known: VaultStructure) throws(FormatError) in
                            try VaultFile(path: temp, writable: true, copiedPrefix: known)
                        }
                        ?? VaultFile(path: temp, writable: true)
                } catch let e as FormatError { throw e.asSyncError } catch { throw .resultDoesNotVerify(reason: "\(error)") }
                var setKeys = keys
                setKeys.writeKey = writeKey
                out.verifyCommits(keys: setKeys, trustedKeyrings: [:], attestors: attestors, removedMembers: removedMembers)
                var emitted = prefixIDs
                for block in blocks {
                    let frames = block.frames.filter {
                        !emitted.contains($0.identity) && !superseded.contains($0.identity) && !notWritten($0)
                    }
                    guard !frames.isEmpty else { continue }
                    for f in frames { emitted.insert(f.identity) }
                    let reseal = frames.contains { needsReseal($0) }
                    // Under the key of a keyring it carries that starts the
                    // write key's epoch (the smallest key commitment among
                    // several), so that a member that keyring removes, which
                    // may hold the write key through a concurrent rotation,
                    // cannot recompute the commit; otherwise the write key.
                    let blockKey =
                        frames.compactMap(startsWriteEpoch).min { $0.commitment.lexicographicallyPrecedes($1.commitment) } ?? writeKey
                    // The attestation signs the key the group was committed under
                    // and the head it extended: it is carried only when the block
                    // is written whole, under that same key, after that same head
                    // (Spec/format.md §9.2, merge.md §3.3). Under another key the
                    // block counts as moved.
                    let whole =
                        !reseal && frames.count == block.frames.count && block.isWholeGroup
                        && out.chainTipHead == block.previousHead && block.keyCommitment == blockKey.commitment
                    // A block written whole in its place keeps its attestation (a
                    // removed member's stays one: readers report it as such);
                    // another block is attested by the merging member only when a
                    // current member attested its source, or when it holds nothing
                    // but keyrings the result trusts (so that they count for the
                    // floor, Spec/format.md §9.3). An attestation is never laundered.
                    // Nor does the merging member attest a frame of a kind it
                    // does not know: such a block, moved or partial, is written
                    // unattested (Spec/merge.md §3.3, eleventh review R11-3).
                    let unknownKind = frames.contains { !$0.kind.isKnown }
                    let attestation: CommitAttestation =
                        switch block.attestation {
                        case .some(let plain) where whole: .carried(plain)
                        case .some(let plain) where plain != CommitChain.unattested && !block.byRemovedMember && !unknownKind:
                            .sign(signer)
                        default: block.onlyTrustedKeyrings ? .sign(signer) : .none
                        }
                    do {
                        try out.commit(
                            random: random, options: WriteOptions(synchronous: false, lockTimeoutSeconds: options.lockTimeoutSeconds),
                            attestation: attestation
                        ) {
                            (tx: PendingCommit) throws(FormatError) in
                            if blockKey.commitment != writeKey.commitment { tx.commitKey = blockKey }
                            for f in frames {
                                if needsReseal(f) {
                                    try f.side.reseal(f, into: tx)
                                    if f.kind != .blobChunk { resealed += 1 }
                                } else {
                                    try tx.appendRaw(frame: try f.side.bytes(of: f.index))
                                }
                            }
                        }
                    } catch let e as FormatError {
                        throw e.asSyncError
                    } catch {
                        throw .resultDoesNotVerify(reason: "\(error)")
                    }
                    commits += 1
                    if case .none = attestation {
                        unattested += 1
                        if let failure = block.attestationFailure {
                            failedAttestations.append(.init(inCopy: frames[0].side.role == .copy, issue: failure))
                        }
                    }
                }
            }, credential: credential, firstNewGroup: prefix.groups, random: random, options: options, copied: copiedPrefix)
        var report = MergeReport(
            changed: true, commonPrefixByteCount: prefix.bytes, framesAdded: newFromB.count, framesCarriedUnopened: unopened,
            framesResealed: resealed, commitsWritten: commits, unattestedCommits: unattested, leftOut: leftOut,
            droppedFromVault: aTail.leftOut)
        report.temporariesLeft = union.temporariesLeft
        report.failedAttestations = failedAttestations
        return report
    }

    /// The blocks of the vault's tail and of the copy's
    /// (``Side/blocks(after:keyrings:)``). Each side's
    /// attestations are checked first, on every core (within one of two
    /// threads they would run on that thread alone); then each side's
    /// blocks are made on its own thread: the two read different files.
    /// One side after the other left the second core idle while each
    /// hashed, opened and decoded its tail's frames.
    static func bothTails(_ a: Side, _ b: Side, after first: Int, keyrings union: KeyringUnion, recognizing own: Ed25519.KeyPair)
        -> (vault: Result<Side.Tail, SyncError>, copy: Result<Side.Tail, SyncError>)
    {
        a.checkAttestations(after: first, recognizing: own)
        b.checkAttestations(after: first, recognizing: own)
        let slots = TailSlots(a, b)
        DispatchQueue.concurrentPerform(iterations: 2) { i in
            let side = i == 0 ? slots.a : slots.b
            let tail = Result { () throws(SyncError) -> Side.Tail in try side.blocks(after: first, keyrings: union) }
            slots.results.withLock { $0[i] = tail }
        }
        return slots.results.withLock { ($0[0]!, $0[1]!) }
    }

    /// The two sides and their tails' slots, handed to
    /// ``bothTails(_:_:after:keyrings:recognizing:)``'s two threads: each
    /// thread reads its side (whose file locks itself) and writes its own
    /// slot, and the slots are read after both threads end.
    private final class TailSlots: @unchecked Sendable {
        let a: Side
        let b: Side
        let results = Locked<[Result<Side.Tail, SyncError>?]>([nil, nil])

        init(_ a: Side, _ b: Side) {
            self.a = a
            self.b = b
        }
    }

    /// Throws ``SyncError/unknownCriticalKind(path:_:author:)`` when `side`
    /// holds a frame of a critical kind this version does not know in a
    /// commit a current member attested (`Spec/format.md §4.3`, merge.md
    /// §3.1), naming that member from `keyrings` when one lists it. Call
    /// after verifying the side's commits.
    static func refuseUnknownCriticalKind(_ side: Side, path: String, keyrings: [KeyringInfo]) throws(SyncError) {
        guard let fatal = side.file.fatalCriticalKind, case .unknownCriticalKind(let location, _) = fatal else { return }
        let s = side.file.structure
        let group = s.groups.firstIndex { g in g.members.contains { s.frames.location(at: $0).offset == location.offset } }
        let signer = group.flatMap { side.file.commits.attestor($0) }
        let member = signer.flatMap { key in
            keyrings.lazy.compactMap { $0.content?.members.first { $0.publicKey == key } }.first
        }
        throw .unknownCriticalKind(path: path, fatal, author: member.map(PrivacyStatement.phrase(for:)))
    }

    /// Standing in a merge (`Spec/merge.md §3.2`, twelfth review R12-3): a
    /// commit of the vault's tail and one of the copy's tail (groups from
    /// `first` on) that store the same head and are both verified are one
    /// commit — the head covers its link, group digest and attestation — and
    /// rank by the higher of their two standings. Judged over the same
    /// keyrings their attestations agree; only format.md §9.4 step 5 can
    /// differ, as it follows the links of the file that holds the removal:
    /// a removed member's commit from before its removal ranks as a current
    /// member's in the file whose removal extends it and as a removed
    /// member's in a copy from before it. The lower one is raised
    /// (``VaultFile/ranksAsMember(inMerge:)``) before the tails' blocks are
    /// made, so the chunk rule, the block order and the re-attestation all
    /// read the same standing. Call after verifying both sides' commits.
    static func rankAcross(_ a: Side, _ b: Side, after first: Int) {
        // Only a removal makes the two differ.
        guard !a.file.removals.isEmpty || !b.file.removals.isEmpty, !a.file.removedMembers.isEmpty else { return }
        func verifiedHeads(_ side: Side) -> [[UInt8]: Int] {
            let groups = side.file.structure.groups
            let statuses = side.file.commitStatuses
            var out: [[UInt8]: Int] = [:]
            for g in first..<max(first, groups.count) where g < statuses.count && statuses[g] == .verified {
                out[groups[g].storedHead] = out[groups[g].storedHead] ?? g
            }
            return out
        }
        let aHeads = verifiedHeads(a)
        guard !aHeads.isEmpty else { return }
        var raiseA: [Int] = []
        var raiseB: [Int] = []
        for (head, gb) in verifiedHeads(b) {
            guard let ga = aHeads[head], a.file.attestation(ofGroup: ga) == b.file.attestation(ofGroup: gb) else { continue }
            switch (a.file.ranksAsMember(group: ga), b.file.ranksAsMember(group: gb)) {
            case (true, false): raiseB.append(gb)
            case (false, true): raiseA.append(ga)
            default: break
            }
        }
        a.file.ranksAsMember(inMerge: raiseA)
        b.file.ranksAsMember(inMerge: raiseB)
    }

    /// What ``repairChunks(_:_:vaultBlocks:copyBlocks:)`` decided: the
    /// identities of each side's carried frames not written from that side,
    /// and the chunks left out, with why.
    struct ChunkRepair {
        var vault = Set<[UInt8]>()
        var copy = Set<[UInt8]>()
        var vaultLeftOut: [FormatError] = []
        var copyLeftOut: [FormatError] = []
    }

    /// Two versions of a chunk (`Spec/merge.md §3.2`, tenth review R10-1,
    /// eleventh review R11-1). The chain covers a chunk's tag only, so a
    /// holder of its epoch key can rewrite a chunk in place keeping its tag:
    /// both versions authenticate at one standing, and carrying both would
    /// leave the stream with a duplicate index for good. A (stream, index)
    /// is in conflict when both tails carry chunks of it that differ and
    /// each side's differing chunks have the same standing (their source
    /// commits'); where the standings differ both are carried and format.md
    /// §7.4 takes the higher, so a non-member reusing a member's public
    /// stream id cannot evict the member's chunks. The attachment is judged
    /// with a manifest frame of that stream that both tails carry, of at
    /// least that standing (the highest, then the first in the vault's
    /// tail); without one both versions are carried. The side whose own
    /// file reads it whole keeps its chunks (the vault tried first, then the
    /// copy); the other side's differing chunks of that standing are left
    /// out. Another frame of a group that lost a chunk is written from the
    /// winning side instead only when the winning side carries it in a
    /// group of at least the losing group's standing, so no frame moves
    /// into a group of lower standing.
    static func repairChunks(_ a: Side, _ b: Side, vaultBlocks: [Side.Block], copyBlocks: [Side.Block]) throws(SyncError)
        -> ChunkRepair
    {
        struct Slot: Hashable {
            let stream: StreamID
            let index: UInt32
        }
        func standing(_ f: Side.Carried) -> Int { f.side.file.standing(ofFrame: f.index) }
        func slots(_ blocks: [Side.Block]) -> [Slot: [Side.Carried]] {
            var out: [Slot: [Side.Carried]] = [:]
            for block in blocks {
                for f in block.frames where f.kind == .blobChunk && !f.unopened {
                    guard let chunk = f.side.file.structure.frames[f.index].chunk else { continue }
                    out[Slot(stream: chunk.stream, index: chunk.index), default: []].append(f)
                }
            }
            return out
        }
        let aSlots = slots(vaultBlocks)
        let bSlots = slots(copyBlocks)
        var conflicts: [StreamID: [Slot: Int]] = [:]
        for (slot, frames) in aSlots {
            guard let other = bSlots[slot] else { continue }
            let aIDs = Set(frames.map(\.identity))
            let bIDs = Set(other.map(\.identity))
            guard aIDs != bIDs,
                let aTop = frames.filter({ !bIDs.contains($0.identity) }).map(standing).max(),
                let bTop = other.filter({ !aIDs.contains($0.identity) }).map(standing).max(),
                aTop == bTop
            else { continue }
            conflicts[slot.stream, default: [:]][slot] = aTop
        }
        var repair = ChunkRepair()
        guard !conflicts.isEmpty else { return repair }
        func manifests(_ blocks: [Side.Block], of stream: StreamID) -> [(f: Side.Carried, manifest: BlobManifest)] {
            blocks.flatMap(\.frames).compactMap { f in
                guard f.kind == .blobManifest, !f.unopened, let payload = try? f.side.file.openRecord(frame: f.index),
                    let manifest = try? BlobManifest(decoding: payload), manifest.stream == stream
                else { return nil }
                return (f, manifest)
            }
        }
        for stream in conflicts.keys.sorted(by: { $0.bytes.lexicographicallyPrecedes($1.bytes) }) {
            let level = conflicts[stream]!.values.max()!
            // One manifest frame both tails carry, of the highest standing
            // (the lower of its two), then the first in the vault's tail.
            let inCopy = Dictionary(
                manifests(copyBlocks, of: stream).map { ($0.f.identity, standing($0.f)) }, uniquingKeysWith: { max($0, $1) })
            var found: (manifest: BlobManifest, blobKey: SymmetricKey?, standing: Int)?
            for m in manifests(vaultBlocks, of: stream) {
                guard let other = inCopy[m.f.identity] else { continue }
                let s = min(standing(m.f), other)
                guard s >= level, s > (found?.standing ?? -1) else { continue }
                found = (m.manifest, m.f.side.file.openingKey(frame: m.f.index)?.blobKey, s)
            }
            guard let found, let blobKey = found.blobKey else { continue }
            var problems: [FormatError?] = []
            for side in [a, b] {
                do {
                    try readsWhole(side.file.openBlob(found.manifest, blobKey: blobKey))
                    problems.append(nil)
                } catch .io(let e) {
                    throw .io(e)
                } catch {
                    problems.append(error)
                }
            }
            guard let winner = problems.firstIndex(where: { $0 == nil }) else { continue }
            let (keep, lose) = winner == 0 ? (aSlots, bSlots) : (bSlots, aSlots)
            let why = problems[1 - winner] ?? .chunkDuplicate(stream: stream.description, index: 0)
            let kept = Set(conflicts[stream]!.keys.flatMap { keep[$0]!.map(\.identity) })
            for (slot, level) in conflicts[stream]! {
                for f in lose[slot]! where !kept.contains(f.identity) && standing(f) == level {
                    if winner == 0 {
                        repair.copy.insert(f.identity)
                        repair.copyLeftOut.append(why)
                    } else {
                        repair.vault.insert(f.identity)
                        repair.vaultLeftOut.append(why)
                    }
                }
            }
        }
        // The other frames of a group that lost a chunk are written from
        // the winning side's group where it carries them in a group of at
        // least the same standing (eleventh review R11-1).
        func carried(_ blocks: [Side.Block]) -> [[UInt8]: Int] {
            Dictionary(blocks.flatMap(\.frames).map { ($0.identity, standing($0)) }, uniquingKeysWith: { max($0, $1) })
        }
        let aCarried = carried(vaultBlocks)
        let bCarried = carried(copyBlocks)
        for block in vaultBlocks where block.frames.contains(where: { repair.vault.contains($0.identity) }) {
            let level = block.frames.first.map(standing) ?? 0
            for f in block.frames where (bCarried[f.identity] ?? -1) >= level { repair.vault.insert(f.identity) }
        }
        for block in copyBlocks where block.frames.contains(where: { repair.copy.contains($0.identity) }) {
            let level = block.frames.first.map(standing) ?? 0
            for f in block.frames where (aCarried[f.identity] ?? -1) >= level { repair.copy.insert(f.identity) }
        }
        return repair
    }

    /// Reads `reader` to its end, in bounded memory: it throws unless the
    /// attachment is whole (`Spec/format.md §7.4`).
    static func readsWhole(_ reader: BlobReader) throws(FormatError) {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
        defer {
            buffer.initializeMemory(as: UInt8.self, repeating: 0)
            buffer.deallocate()
        }
        while try reader.readChecked(into: buffer) > 0 {}
    }

    /// The identities of the carried frames below the rekey floor whose
    /// re-sealed replacement the result already holds (`Spec/merge.md §3.4`):
    /// a record of the same kind and payload, or a manifest naming the same
    /// blob id, sealed under a key of an epoch at or above `floor`. A chunk
    /// below the floor is never carried (its manifest stores the content
    /// again), so it is always among them. Empty when there is no rekey.
    static func resealedAlready(a: Side, b: Side, tails: [Side.Block], floor: UInt32) throws(SyncError) -> Set<[UInt8]> {
        guard floor > 0 else { return [] }
        let candidates = tails.flatMap(\.frames).filter { $0.sealedUnder > 0 && $0.sealedUnder < floor && $0.kind != .keyring }
        guard !candidates.isEmpty else { return [] }
        var held = Set<[UInt8]>()
        for side in [a, b] {
            for i in 0..<side.file.structure.committedFrameCount where side.sealedEpoch(of: i) >= floor {
                for key in side.replacementKeys(of: i) { held.insert(key) }
            }
        }
        var out = Set<[UInt8]>()
        for f in candidates {
            if f.kind == .blobChunk {
                out.insert(f.identity)
                continue
            }
            let keys = f.side.replacementKeys(of: f.index)
            if !keys.isEmpty && keys.allSatisfy(held.contains) { out.insert(f.identity) }
        }
        return out
    }

    /// The key a merge commits with: the write key of the result's key state
    /// (the newest head of the highest epoch; ties: the smallest key
    /// commitment), so that two devices merging the same copies write the
    /// same bytes.
    static func resultWriteKey(_ trusted: [KeyringInfo], keys: KeySet) throws(SyncError) -> EpochKey {
        let parents = Set(trusted.flatMap(\.parents))
        let heads = trusted.filter { !parents.contains($0.id) }
        guard let top = heads.map(\.epoch).max(),
            let head = heads.filter({ $0.epoch == top }).min(by: {
                $0.record.publicPart.keyCommit.lexicographicallyPrecedes($1.record.publicPart.keyCommit)
            }),
            let key = keys.key(commitment: head.record.publicPart.keyCommit)
        else { throw .resultDoesNotVerify(reason: "no epoch key to commit with") }
        return key
    }

    /// Blocks in canonical order (`Spec/merge.md §3.3`): a block holding a
    /// keyring comes after every block holding one of its parents; among the
    /// blocks that may come next, first those a current member vouches for
    /// (an attested source commit, or only trusted keyrings), then the one
    /// with the lowest highest epoch, then the smallest digest. The author of
    /// an unattested block can grind its digest, but cannot place it before
    /// an attested one.
    static func canonicalOrder(_ blocks: [Side.Block], mergingMember: [UInt8], placed: Set<KeyringID>) -> [Side.Block] {
        // Blocks attested by another member come before the merging
        // member's own: a block that moves is attested again by the merging
        // member (its attestation signs the head it extended), which loses
        // nothing for its own blocks (Spec/merge.md §3.3).
        func others(_ b: Side.Block) -> Bool {
            guard let a = b.attestation, a != CommitChain.unattested else { return false }
            return !a[0..<32].elementsEqual(mergingMember)
        }
        // Each block's keys, worked out once: a block is picked from up to
        // every block left, once per block (a merge of 200 one-entry
        // commits copied the blocks and their arrays 40,000 times over).
        let vouched = blocks.map(\.vouched)
        let byOthers = blocks.map(others)
        func before(_ x: Int, _ y: Int) -> Bool {
            if vouched[x] != vouched[y] { return vouched[x] }
            if blocks[x].maxEpoch != blocks[y].maxEpoch { return blocks[x].maxEpoch < blocks[y].maxEpoch }
            if byOthers[x] != byOthers[y] { return byOthers[x] }
            if blocks[x].linkPosition != blocks[y].linkPosition { return blocks[x].linkPosition < blocks[y].linkPosition }
            return blocks[x].digest.lexicographicallyPrecedes(blocks[y].digest)
        }
        // The blocks not placed yet, by their index in `blocks`, in order.
        var remaining = Array(blocks.indices)
        var placedIDs = placed
        func ready(_ i: Int) -> Bool {
            let parents = blocks[i].parentKeyrings
            guard !parents.isEmpty else { return true }
            let own = Set(blocks[i].keyrings)
            return parents.allSatisfy { p in
                placedIDs.contains(p) || own.contains(p) || !remaining.contains { blocks[$0].keyrings.contains(p) }
            }
        }
        var out: [Side.Block] = []
        out.reserveCapacity(blocks.count)
        while !remaining.isEmpty {
            let candidates = remaining.indices.filter { ready(remaining[$0]) }
            // A cycle cannot happen (a parent comes earlier in its own file);
            // if it did, fall back to the plain order rather than loop.
            let pick = (candidates.isEmpty ? Array(remaining.indices) : candidates).min { before(remaining[$0], remaining[$1]) }!
            let block = remaining.remove(at: pick)
            placedIDs.formUnion(blocks[block].keyrings)
            out.append(blocks[block])
        }
        return out
    }

    static func lockForRewrite(_ path: String, timeoutSeconds: Double) throws(SyncError) -> SystemFile {
        // Another rewrite may rename a new file over the path while we wait
        // for the old one's lock: then the lock excludes no one. Lock again
        // until the locked file is the one at the path, for as long as the
        // timeout allows: a fixed number of tries lost to rewrites that
        // kept replacing the file, and a compaction failed "locked" while
        // others went on (RaceRetryTests, under load).
        let deadline = ProcessStats.monotonicNanoseconds() + UInt64(max(0, timeoutSeconds) * 1e9)
        while true {
            let handle: SystemFile
            do { handle = try SystemFile(path: path, mode: .readWrite) } catch { throw .vaultUnreadable(path: path, .io(error)) }
            let now = ProcessStats.monotonicNanoseconds()
            let remaining = now < deadline ? Double(deadline - now) / 1e9 : 0
            let locked: Bool
            do { locked = try handle.lockExclusive(timeoutSeconds: remaining) } catch { throw .io(error) }
            guard locked else { throw .locked(path: path) }
            if let mine = try? handle.identity(), mine == FileSystem.identity(path) {
                // Holding the lock on the file the path names: a rewrite's
                // temporary file beside it is a killed writer's.
                Leftovers.removeStale(besideVault: path, holdingLock: true)
                return handle
            }
            handle.unlock()
            guard ProcessStats.monotonicNanoseconds() < deadline else { throw .locked(path: path) }
        }
    }

    /// The key new commits are made with: the highest epoch held, and of
    /// several keys for it (concurrent rotations) the one whose commit key
    /// has the smallest BLAKE2b-256 digest, so that two devices holding the
    /// same keys choose the same one.
    /// Writes the result to a temporary file with `write`, flushes it,
    /// checks it opens with `credential` and that every commit from group
    /// `firstNewGroup` on verifies, then renames it over `path` and flushes
    /// the folder. On any failure the temporary file is removed and `path`
    /// is untouched. `copied` describes the bytes `write` copied to the start
    /// of the file from a file already scanned (``VaultScanner/prefix(of:groups:)``):
    /// the check scans only what follows them.
    static func replace(
        _ path: String, with write: (String) throws(SyncError) -> Void, credential: Credential, firstNewGroup: Int?,
        random: any RandomSource, options: WriteOptions, copied: VaultStructure? = nil
    ) throws(SyncError) {
        // Through a symbolic link, the file it points to is replaced and the
        // link kept: renaming over the link would fork the vault.
        let target = FileSystem.resolvingSymbolicLinks(path)
        let folder = FileSystem.directory(of: target)
        let name = String(target.split(separator: "/").last ?? "vault")
        let temp = folder + "/." + name + ".merge-" + hex(random.bytes(6))
        do {
            try write(temp)
            do {
                let f = try SystemFile(path: temp, mode: .readWrite)
                if options.synchronous { try f.sync() }
            } catch {
                throw SyncError.io(error)
            }
            let check: VaultFile
            do {
                check =
                    try copied.map { (known: VaultStructure) throws(FormatError) in try VaultFile(path: temp, copiedPrefix: known) }
                    ?? VaultFile(path: temp)
            } catch { throw SyncError.resultDoesNotVerify(reason: "\(error)") }
            let unlocked: UnlockedKeys
            do { unlocked = try KeyringEvaluator.unlock(check, with: credential) } catch {
                throw SyncError.resultDoesNotVerify(reason: "the merged file does not open with this key: \(error)")
            }
            check.verifyCommits(with: unlocked)
            if let first = firstNewGroup {
                for (i, status) in check.commitStatuses.enumerated() where i >= first && status != .verified {
                    throw SyncError.resultDoesNotVerify(reason: "merged commit \(i) is \(status)")
                }
            }
            do {
                try FileSystem.rename(temp, to: target)
                try FileSystem.syncDirectory(folder)
            } catch {
                throw SyncError.io(error)
            }
        } catch let e as SyncError {
            try? FileSystem.remove(temp)
            throw e
        } catch {
            try? FileSystem.remove(temp)
            throw .resultDoesNotVerify(reason: "\(error)")
        }
    }

    /// Writes `header`'s 64 bytes, both copies intact, at the start of `path`.
    static func writeHeader(_ header: FileHeader, to path: String) throws(SyncError) {
        do { try SystemFile(path: path, mode: .readWrite).write(header.encoded(), at: 0) } catch { throw .io(error) }
    }

    /// Writes, at their offsets in `path` (a byte copy of `side`'s file), the
    /// corrected headers of `side`'s committed frames from index `first`
    /// whose header was repaired on read (`Spec/format.md §10.2`).
    static func correctRepairedHeaders(of side: Side, from first: Int, in path: String) throws(SyncError) {
        let frames = side.file.structure.frames
        let repaired = (first..<side.file.structure.committedFrameCount).filter { frames[$0].repaired }
        guard !repaired.isEmpty else { return }
        do {
            let output = try SystemFile(path: path, mode: .readWrite)
            for i in repaired { try output.write(frames[i].headerBytes, at: frames[i].location.offset) }
        } catch {
            throw .io(error)
        }
    }

    /// Copies the first `byteCount` bytes of `source` to a new file `destination` (mode 0600),
    /// in the kernel where it can (``SystemFile/copy(_:from:at:)``), and
    /// starts writing them back (``SystemFile/startWriteback(from:count:)``):
    /// the disk takes them while the merge seals its commits, so the flush
    /// before the check waits for little more than those (a 7.5 MB prefix
    /// was written back by that flush alone).
    static func copyFile(_ source: String, to destination: String, byteCount: UInt64) throws(SyncError) {
        do {
            let input = try SystemFile(path: source, mode: .readOnly)
            let output = try SystemFile(path: destination, mode: .createExclusive(permissions: 0o600))
            try output.copy(byteCount, from: input, at: 0)
            if byteCount > 0 { output.startWriteback(from: 0, count: Int(byteCount)) }
        } catch {
            throw .io(error)
        }
    }

    /// The committed prefix both files share byte for byte: whole commit
    /// groups from the start, compared by their bytes.
    static func commonPrefix(_ a: Side, _ b: Side) throws(SyncError) -> (bytes: UInt64, groups: Int, frames: Int) {
        var bytes = UInt64(FileHeader.byteCount)
        var frames = 0
        guard try a.read(0, FileHeader.byteCount) == b.read(0, FileHeader.byteCount) else { return (0, 0, 0) }
        let ga = a.file.structure.groups
        let gb = b.file.structure.groups
        var groups = 0
        // The groups the copy's open compared with this very handle on the
        // vault (``Side/sharedGroups``): equal bytes, not read again.
        if let shared = b.sharedGroups, shared.with === a.file, shared.count <= ga.count, shared.count <= gb.count {
            groups = shared.count
            if groups > 0 {
                bytes = a.file.structure.frames.end(at: ga[groups - 1].commitFrame)
                frames = ga[groups - 1].commitFrame + 1
            }
        }
        while groups < ga.count && groups < gb.count {
            let endA = a.file.structure.frames.end(at: ga[groups].commitFrame)
            let endB = b.file.structure.frames.end(at: gb[groups].commitFrame)
            guard endA == endB, ga[groups].storedHead == gb[groups].storedHead else { break }
            // Compare the group's bytes in 1 MiB pieces.
            var offset = bytes
            var same = true
            while offset < endA {
                let n = Int(min(UInt64(1 << 20), endA - offset))
                if try a.read(offset, n) != b.read(offset, n) {
                    same = false
                    break
                }
                offset += UInt64(n)
            }
            guard same else { break }
            bytes = endA
            frames = ga[groups].commitFrame + 1
            groups += 1
        }
        return (bytes, groups, frames)
    }
}

/// One input of a merge.
final class Side {
    enum Role { case vault, copy }
    let path: String
    let role: Role
    let file: VaultFile
    let handle: SystemFile
    /// The file this side's first commit groups were compared with byte
    /// for byte, through ``handle``, when it was opened (the `known` of
    /// ``init(path:role:reusing:sharingPrefixWith:)``), and how many groups
    /// both hold: ``VaultMerge/commonPrefix(_:_:)`` does not compare them
    /// again when the other side is that file.
    private(set) var sharedGroups: (with: VaultFile, count: Int)?

    /// Scans the file at `path`, or takes `scanned` when it is that same
    /// file (device and inode) at the size it was scanned at.
    /// With `known` (another copy, already scanned), the frames both files
    /// hold byte for byte at their start are taken from its scan
    /// (``VaultFile/sharedPrefix(withFileAt:)``) and only the rest is scanned.
    init(path: String, role: Role, reusing scanned: VaultFile? = nil, sharingPrefixWith known: VaultFile? = nil) throws(SyncError) {
        self.path = path
        self.role = role
        do {
            handle = try SystemFile(path: path, mode: .readOnly)
            // A file opened from a cached prefix structure was not scanned
            // whole: merge copies frames, so it scans them itself.
            if let scanned, scanned.cachedPrefixFrameCount == 0, let identity = scanned.fileIdentity, identity == (try handle.identity()),
                try handle.size() == scanned.structure.fileSize
            {
                file = scanned
            } else if let known, let prefix = try known.sharedPrefix(with: handle) {
                file = try VaultFile(path: path, copiedPrefix: prefix)
                // The bytes compared are this handle's: trusted for the
                // common prefix only while the scan read the same file.
                if let identity = file.fileIdentity, identity == (try handle.identity()) {
                    sharedGroups = (known, prefix.groups.count)
                }
            } else {
                file = try VaultFile(path: path)
            }
        } catch let e as FormatError {
            throw role == .vault ? .vaultUnreadable(path: path, e) : .copyUnreadable(path: path, e)
        } catch let e as SystemError {
            throw role == .vault ? .vaultUnreadable(path: path, .io(e)) : .copyUnreadable(path: path, .io(e))
        } catch {
            throw .copyUnreadable(path: path, .notAVault)
        }
    }

    func read(_ offset: UInt64, _ count: Int) throws(SyncError) -> [UInt8] {
        do { return try handle.read(count: count, at: offset) } catch { throw .io(error) }
    }

    /// A frame as merge and compaction carry it: its header as corrected
    /// (`Spec/format.md §10.2`; `Spec/merge.md §1` names a frame by it),
    /// then its body as stored. A header with one flipped bit, carried as
    /// stored, failed the writer's check and stopped the merge or the
    /// compaction for good (trial 28).
    func bytes(of index: Int) throws(FormatError) -> [UInt8] {
        let f = file.structure.frames[index]
        var frame: [UInt8]
        do { frame = try handle.read(count: Int(f.end - f.location.offset), at: f.location.offset) } catch { throw .io(error) }
        frame.replaceSubrange(0..<FrameHeader.byteCount, with: f.headerBytes)
        return frame
    }

    /// The identity of a frame (`Spec/merge.md §1`): its 16-byte header and
    /// the BLAKE2b-256 of its whole body, for every kind. (Not the stored
    /// body hash: that hashes the body without itself, so the block digests
    /// that order the result would differ from every other implementation's.)
    func identity(of index: Int) throws(SyncError) -> [UInt8] {
        let f = file.structure.frames[index]
        let body: [UInt8]
        do { body = try handle.read(count: Int(f.header.bodyLength), at: f.bodyOffset) } catch { throw .io(error) }
        return f.headerBytes + BLAKE2b.hash(body, byteCount: 32)
    }

    /// A frame's 16-byte header followed by its trailer: equal for two
    /// frames with equal identities (the trailer is part of the body).
    func summary(of index: Int) -> [UInt8] {
        let f = file.structure.frames[index]
        return f.headerBytes + f.trailer
    }

    /// The identities of the frames in `range` (commits aside) whose
    /// ``summary(of:)`` is in `summaries`: the only ones that can equal the
    /// identity of a frame with one of those summaries.
    func identities(of range: Range<Int>, matching summaries: Set<[UInt8]>) throws(SyncError) -> [[UInt8]] {
        // A summary is the frame's 16-byte header, then its trailer (a body
        // hash or a chunk tag, at least 16 bytes): a frame whose trailer
        // starts with none of the summaries' trailer words is passed over
        // on two words, without building its summary and hashing it byte
        // by byte. (Headers alone sort out little: frames of one kind and
        // length under one key have equal headers.)
        func words(_ bytes: [UInt8], at offset: Int) -> TrailerWords? {
            guard bytes.count >= offset + 16 else { return nil }
            return bytes.withUnsafeBytes { raw in
                TrailerWords(
                    a: raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self),
                    b: raw.loadUnaligned(fromByteOffset: offset + 8, as: UInt64.self))
            }
        }
        // (A frame passed over has a 16-byte header and a trailer of at
        // least 16 bytes: its summary, were it among them, would have put
        // its trailer's words in the set.)
        let trailers = Set(summaries.compactMap { words($0, at: FrameHeader.byteCount) })
        let frames = file.structure.frames
        var out: [[UInt8]] = []
        for i in range {
            let f = frames[i]
            guard !f.isCommit else { continue }
            if f.headerBytes.count == FrameHeader.byteCount, let w = words(f.trailer, at: 0), !trailers.contains(w) {
                continue
            }
            guard summaries.contains(f.headerBytes + f.trailer) else { continue }
            out.append(try identity(of: i))
        }
        return out
    }

    /// The first 16 bytes of a frame's trailer as two words, a set member
    /// hashed at once.
    private struct TrailerWords: Hashable {
        let a: UInt64
        let b: UInt64
    }

    /// The frame index of the first copy of keyring `id` in this file.
    /// The epoch of the key frame `index` is sealed under; 0 when it is not
    /// sealed or the key is not held.
    func sealedEpoch(of index: Int) -> UInt32 {
        let f = file.structure.frames[index]
        guard f.header.isSealed else { return 0 }
        return file.keys.keys(for: f.header.keyID).map(\.epoch).max() ?? 0
    }

    /// What makes a frame a re-sealed replacement (`Spec/merge.md §3.4`):
    /// for a record, its kind and the BLAKE2b-256 of its payload; for a
    /// manifest, the blob ids it answers to — its blob id and its aliases.
    /// A frame to replace is replaced when every one of its keys is held by
    /// replacements: a manifest, when each id it answers to is answered by a
    /// replacement, which is what re-sealing it would write (the old blob id
    /// and the old aliases). A replacement answering its blob id alone is not
    /// enough: a revision may name the content by one of its aliases. Empty
    /// for a frame that does not open, a keyring, a chunk or a commit.
    func replacementKeys(of index: Int) -> [[UInt8]] {
        let f = file.structure.frames[index]
        guard f.header.isSealed, f.header.kind != .keyring, f.header.kind != .blobChunk, !f.isCommit,
            let payload = try? file.openRecord(frame: index)
        else { return [] }
        if f.header.kind == .blobManifest {
            guard let m = try? BlobManifest(decoding: payload) else { return [] }
            return ([m.blob] + m.aliases).map { [0x62] + $0.bytes }
        }
        return [[0x72, f.header.kind.rawValue] + BLAKE2b.hash(payload, byteCount: 32)]
    }

    func keyringIndex(_ id: KeyringID) -> Int? {
        file.structure.frames.firstIndex { $0.header.kind == .keyring && $0.trailer == id.bytes }
    }

    struct Carried {
        let side: Side
        let index: Int
        let identity: [UInt8]
        let kind: RecordKind
        /// The epoch of the key the frame is sealed under (0 when not held or
        /// not sealed); a keyring's own epoch for ordering.
        let epoch: UInt32
        /// For sealed frames: the epoch of their key (0 when not held).
        let sealedUnder: UInt32
        let unopened: Bool
    }

    struct Block {
        let frames: [Carried]
        let maxEpoch: UInt32
        let digest: [UInt8]
        /// Ids of the keyrings in the block, and of their parents.
        let keyrings: [KeyringID]
        let parentKeyrings: [KeyringID]
        /// The source commit's plaintext attestation (96 bytes; zeros when
        /// unattested); nil when it failed or could not be opened.
        let attestation: [UInt8]?
        /// Why the source commit's attestation failed, at its commit frame;
        /// nil when it did not.
        let attestationFailure: FormatError?
        /// True when that attestation is a removed member's.
        let byRemovedMember: Bool
        /// The key commitment of the key the source commit is sealed under,
        /// which its attestation signs; nil when it was not opened.
        let keyCommitment: [UInt8]?
        /// The head the source commit extended, which its attestation signs.
        let previousHead: [UInt8]?
        /// The index of the source commit in its file.
        let sourceCommit: Int
        /// The position of the source commit in its file's link order
        /// (``Side/linkOrder``): a side's blocks of one standing keep that
        /// order, so they stay in place, and a keyless writer who moved
        /// whole groups in the file moves no block (§3.3, fifth review F8).
        let linkPosition: Int
        /// True when every frame of the source group is carried.
        let isWholeGroup: Bool
        /// True when every carried frame is a keyring the result trusts.
        let onlyTrustedKeyrings: Bool

        /// True when a current member vouches for the block: its source
        /// commit is attested by one, or it holds only trusted keyrings
        /// (which the merging member attests). Such blocks are placed first.
        var vouched: Bool { onlyTrustedKeyrings || (attestation.map { $0 != CommitChain.unattested } ?? false) && !byRemovedMember }
    }

    /// What ``blocks(after:keyrings:)`` gives: a tail's
    /// blocks, the frames left out, and the records that would be released
    /// unverified.
    typealias Tail = (blocks: [Block], leftOut: [FormatError], unverifiedRecords: [Unverified])

    /// A record of this file that authenticates under the keys held but
    /// sits in a commit that does not verify: the merge cannot vouch for it.
    struct Unverified {
        let index: Int
        let identity: [UInt8]
        let issue: FormatError
    }

    /// Each commit group's position in the file's *link order*
    /// (`Spec/merge.md §3.3`): the order of the reader's walk
    /// (format.md §9.3: depth first over the link tree, siblings by stored
    /// head), which moving whole groups does not change.
    func linkOrder() -> [Int] {
        file.commitWalkPositions
    }

    /// Checks the attestations of this side's verified commit groups from
    /// `first` on — the ones a block may ask for — in parallel on every
    /// core (each verified alone: the verdicts one by one gives), `own`'s
    /// recognized by signing again. Those already checked are not checked
    /// again.
    func checkAttestations(after first: Int, recognizing own: Ed25519.KeyPair?) {
        let statuses = file.commitStatuses
        let count = file.structure.groups.count
        guard first < count else { return }
        file.checkAttestations(
            ofGroups: (first..<count).filter { statuses.indices.contains($0) && statuses[$0] == .verified }, recognizing: own)
    }

    /// The blocks of this side's tail, the groups from `first` on
    /// (`Spec/merge.md §3.2`), with the frames left out and the records
    /// that would be released unverified. Call ``checkAttestations(after:recognizing:)``
    /// first, off the thread this runs on: a group whose attestation is
    /// still unchecked is checked here, one at a time.
    func blocks(after first: Int, keyrings union: KeyringUnion) throws(SyncError) -> Tail {
        var blocks: [Block] = []
        var leftOut: [FormatError] = []
        var unverified: [Unverified] = []
        let groups = file.structure.groups
        guard first < groups.count else { return ([], [], []) }
        // Statuses only: the attestation of a group is checked when its
        // block needs it, not every one of the file's.
        let statuses = file.commitStatuses
        let linkPositions = linkOrder()
        let previousHeads = file.commitPreviousHeads
        for g in first..<groups.count {
            let status = statuses.indices.contains(g) ? statuses[g] : .unverifiable
            let commitFrame = file.structure.frames[groups[g].commitFrame]
            var carried: [Carried] = []
            var keyrings: [KeyringID] = []
            var parents: [KeyringID] = []
            for i in groups[g].members {
                let f = file.structure.frames[i]
                if let reason = f.malformation {
                    leftOut.append(.malformedFrame(f.location, reason: reason))
                    continue
                }
                var unopened = false
                let notVouched: FormatError? =
                    switch status {
                    case .verified: nil
                    case .mismatch: .commitMismatch(f.location)
                    case .tampered: .commitTampered(f.location)
                    case .orphaned: .commitOrphaned(f.location)
                    case .unverifiable: .commitUnverifiable(f.location, keyID: commitFrame.header.keyID)
                    case .stale(let epoch, let current): .staleEpoch(f.location, epoch: epoch, currentEpoch: current)
                    }
                // A keyring is carried when the result trusts it, whatever
                // its commit (its signature decides); one the credential
                // cannot open only when a member made it with an epoch at
                // most one above its trusted parents' (ninth review R9-2),
                // from a verified commit or from an unverifiable one under
                // its own key (a removal this credential cannot open is
                // committed under its new key, eighth review R8-3); one it
                // rejects — a decoy, a forgery — never (Spec/merge.md §3.2).
                if f.header.kind == .keyring && !f.header.isSealed && f.checksumIntact == true {
                    let id = KeyringID(unchecked: f.trailer)
                    switch union.verdict(id) {
                    case .trusted:
                        // A copy under another key id is damaged and left
                        // out (Spec/format.md §8.1, thirteenth review R13-1).
                        if f.header.keyID != union.trustedKeyIDs[id] {
                            leftOut.append(.untrustedKeyring(f.location, reason: "a copy under another key id (damaged)"))
                            continue
                        }
                    case .unopened:
                        // So is a copy under another key id of one the
                        // credential does not open (fourteenth review R14-2).
                        if f.header.keyID != ownKeyCommit(f) {
                            leftOut.append(.untrustedKeyring(f.location, reason: "a copy under another key id (damaged)"))
                            continue
                        }
                        if union.memberMade[id] == nil {
                            leftOut.append(
                                .untrustedKeyring(f.location, reason: "no member made it, or its epoch is out of reach of its parents"))
                            continue
                        }
                        if let notVouched, !(status == .unverifiable && ownKeyCommit(f) == commitFrame.header.keyID) {
                            leftOut.append(notVouched)
                            continue
                        }
                    case .rejected(let why):
                        leftOut.append(.untrustedKeyring(f.location, reason: why))
                        continue
                    }
                } else if let notVouched, f.header.kind != .commit {
                    // What the chain does not vouch for is not committed as
                    // vouched for (format.md §9.3). A record that would be
                    // released unverified is noted: dropping it loses it.
                    leftOut.append(notVouched)
                    if status.isUnverified, let id = try authenticatedIdentity(of: i) {
                        unverified.append(Unverified(index: i, identity: id, issue: notVouched))
                    }
                    continue
                }
                let held = file.keys.keys(for: f.header.keyID).map(\.epoch).max()
                var epoch = f.header.isSealed ? held ?? 0 : 0
                switch (f.header.kind, f.header.isSealed) {
                case (.commit, _):
                    continue
                case (.blobChunk, _):
                    // A chunk under a held key is carried only if it
                    // authenticates: a copy with altered chunk bytes (its
                    // commit still verifies, the chain covers only the tag)
                    // must not add a second version of the chunk
                    // (Spec/merge.md §3.2). Under no held key, as it is.
                    unopened = held == nil
                    if !unopened && file.chunkAuthenticates(frame: i) != true {
                        leftOut.append(.authenticationFailed(f.location))
                        continue
                    }
                case (.keyring, false):
                    guard f.checksumIntact == true, let body = f.plaintextBody else {
                        leftOut.append(.authenticationFailed(f.location))
                        continue
                    }
                    if let record = try? KeyringRecord(body: body, location: f.location) {
                        epoch = record.epoch
                        keyrings.append(KeyringID(unchecked: f.trailer))
                        parents += record.publicPart.parents
                    }
                case (_, false):
                    guard f.checksumIntact == true else {
                        leftOut.append(.authenticationFailed(f.location))
                        continue
                    }
                    unopened = !f.header.kind.isKnown
                case (_, true):
                    do {
                        // A record that opens must also keep its kind's
                        // schema (Spec/merge.md §3.2): what a reader would
                        // not release is not committed again.
                        let payload = try file.openRecord(frame: i)
                        switch f.header.kind {
                        case .entryRevision: _ = try EntryRevision(decoding: payload, location: f.location)
                        case .blobManifest: _ = try BlobManifest(decoding: payload, location: f.location)
                        case .profile: _ = try Profile(decoding: payload, location: f.location)
                        default: break
                        }
                    } catch {
                        if case .unknownKey = error {
                            unopened = true
                        } else if case .io = error {
                            // The file could not be read: no verdict on the
                            // frame, so the merge stops (nothing written)
                            // rather than leave it out as damaged.
                            throw error.asSyncError
                        } else {
                            leftOut.append(error)
                            continue
                        }
                    }
                    if !f.header.kind.isKnown { unopened = true }
                }
                carried.append(
                    Carried(
                        side: self, index: i, identity: try identity(of: i), kind: f.header.kind, epoch: epoch,
                        sealedUnder: f.header.isSealed ? held ?? 0 : 0, unopened: unopened))
            }
            guard !carried.isEmpty else { continue }
            var h = BLAKE2b.Hasher(byteCount: 32)
            for c in carried { h.update(c.identity) }
            var attestation: [UInt8]? = nil
            var keyCommitment: [UInt8]? = nil
            var byRemovedMember = false
            var attestationFailure: FormatError? = nil
            let checked = status == .verified ? file.attestation(ofGroup: g) : .notChecked
            switch checked {
            case .attested, .removedMember:
                // With colliding key ids, the key that opens it.
                // It is sealed over the head the commit verified from (format.md §9.2).
                let from = (g < previousHeads.count ? previousHeads[g] : nil) ?? groups[g].storedPreviousHead
                let opened = file.keys.keys(for: commitFrame.header.keyID).lazy.compactMap { key in
                    CommitChain.openAttestation(
                        body: groups[g].commitBody, previousHead: from, digest: groups[g].digest, key: key, vaultID: self.file.vaultID,
                        commitHeader: commitFrame.header
                    )
                    .map { (plain: $0, commitment: key.commitment) }
                }.first
                attestation = opened?.plain
                keyCommitment = opened?.commitment
                // A removed member's commit before its removal ranks as a
                // current member's (format.md §9.4 step 5, eleventh review
                // R11-2): moved, it is attested again like one.
                if case .removedMember = checked, !file.ranksAsMember(group: g) { byRemovedMember = true }
            case .unattested:
                attestation = CommitChain.unattested
            case .failed(let reason):
                attestationFailure = .attestationFailed(file.structure.frames.location(at: groups[g].commitFrame), reason: reason)
            case .notChecked:
                break
            }
            let onlyTrustedKeyrings = carried.allSatisfy {
                $0.kind == .keyring && union.verdict(KeyringID(unchecked: file.structure.frames[$0.index].trailer)) == .trusted
            }
            blocks.append(
                Block(
                    frames: carried, maxEpoch: carried.map(\.epoch).max()!, digest: h.finalize(), keyrings: keyrings,
                    parentKeyrings: parents,
                    attestation: attestation, attestationFailure: attestationFailure, byRemovedMember: byRemovedMember,
                    keyCommitment: keyCommitment,
                    previousHead: g < previousHeads.count ? previousHeads[g] : nil, sourceCommit: g,
                    linkPosition: g < linkPositions.count ? linkPositions[g] : linkPositions.count + g,
                    isWholeGroup: carried.count == groups[g].members.count,
                    onlyTrustedKeyrings: onlyTrustedKeyrings))
        }
        return (blocks, leftOut, unverified)
    }

    /// The key id of the key a keyring frame defines (`keyCommit[0..<6]`,
    /// `Spec/format.md §5.1`); nil when its public part does not decode.
    func ownKeyCommit(_ f: ScannedFrame) -> KeyID? {
        guard let body = f.plaintextBody, let record = try? KeyringRecord(body: body, location: f.location) else { return nil }
        return KeyID(commitment: record.publicPart.keyCommit)
    }

    /// The identity of frame `index` if it is a record the reader would
    /// release (unverified) from its commit: a sealed record of a known kind
    /// that opens and decodes, or a chunk that authenticates, under the keys
    /// held. Nil for anything else (`Spec/merge.md §3.1`).
    func authenticatedIdentity(of index: Int) throws(SyncError) -> [UInt8]? {
        let f = file.structure.frames[index]
        guard f.header.isSealed, f.header.kind.isKnown else { return nil }
        if f.header.kind == .blobChunk {
            guard file.releaseVerdict(frame: index) == nil, file.chunkAuthenticates(frame: index) == true else { return nil }
            return try identity(of: index)
        }
        guard let payload = try? file.openRecord(frame: index) else { return nil }
        let decodes: Bool =
            switch f.header.kind {
            case .entryRevision: (try? EntryRevision(decoding: payload)) != nil
            case .blobManifest: (try? BlobManifest(decoding: payload)) != nil
            case .profile: (try? Profile(decoding: payload)) != nil
            default: true
            }
        return decodes ? try identity(of: index) : nil
    }

    /// Writes a sealed frame of an older epoch again under `tx`'s key
    /// (`Spec/merge.md §3.3`): a record's payload is sealed again; a
    /// manifest's attachment is stored again, under the current blob key,
    /// with its old blob id as an alias; a chunk is dropped (its manifest
    /// stores the content again).
    func reseal(_ f: Carried, into tx: PendingCommit) throws(FormatError) {
        let frame = file.structure.frames[f.index]
        switch frame.header.kind {
        case .blobChunk:
            return
        case .blobManifest:
            let manifest = try BlobManifest(decoding: try file.openRecord(frame: f.index))
            let blobKey = file.openingKey(frame: f.index)?.blobKey
            let reader = try file.openBlob(manifest, blobKey: blobKey)
            _ = try tx.appendBlob(from: BlobSource(reader), mediaType: manifest.mediaType, aliases: [manifest.blob] + manifest.aliases)
        default:
            _ = try tx.appendSealed(
                kind: frame.header.kind, payload: try file.openRecord(frame: f.index),
                compress: frame.header.isCompressed || frame.header.kind.isAlwaysCompressed)
        }
    }
}

extension FormatError {
    var asSyncError: SyncError {
        if case .io(let e) = self { return .io(e) }
        if case .cancelled = self { return .cancelled }
        return .resultDoesNotVerify(reason: description)
    }
}
