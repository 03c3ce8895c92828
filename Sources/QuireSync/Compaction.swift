public import QuireCrypto
public import QuireFormat
public import QuireKeys
import QuireSystem

/// What to keep when compacting (`Spec/merge.md §6`).
public struct CompactionOptions: Sendable {
    /// Revisions of history to keep per entry besides its heads (0: heads only).
    public var keepHistory: Int
    /// Drop an entry whose heads are all tombstones older than this many
    /// milliseconds before `now`; nil (the default) keeps every tombstone,
    /// so that no stale copy merged later can bring a deleted entry back.
    public var tombstoneHorizonMilliseconds: Int64?
    /// Re-seal every record and attachment under a fresh epoch, which only
    /// current readers get, so that removed devices and former escrow or
    /// passphrase keys open nothing in the new file.
    public var rekey: Bool

    /// Heads only, every tombstone, no rekey unless asked.
    public init(keepHistory: Int = 0, tombstoneHorizonMilliseconds: Int64? = nil, rekey: Bool = false) {
        self.keepHistory = keepHistory
        self.tombstoneHorizonMilliseconds = tombstoneHorizonMilliseconds
        self.rekey = rekey
    }
}

/// What a compaction did.
public struct CompactionReport: Sendable {
    /// File size before and after, in bytes.
    public let bytesBefore: UInt64
    public let bytesAfter: UInt64
    /// Entry revisions before and after.
    public let revisionsBefore: Int
    public let revisionsAfter: Int
    /// Attachments (manifests) kept, and dropped as no kept revision names them.
    public let attachmentsKept: Int
    public let attachmentsDropped: Int
    /// Keyrings dropped because no reader trusts them (forged or broken), counted once per keyring.
    public let untrustedKeyringsDropped: Int
    /// The epoch new records are sealed under after a rekey, else nil.
    public let rekeyedEpoch: UInt16?
}

/// Rewrites a vault with only what it needs (`Spec/merge.md §6`).
public enum Compaction {
    /// Compacts the vault at `path`: keeps every entry's heads (and
    /// `keepHistory` earlier revisions), tombstones within the horizon, the
    /// attachments kept revisions name, the newest profile, every trusted
    /// keyring, and records of kinds this version does not know; drops the
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
    ///   vault or (for a rekey) cannot sign; ``SyncError/removed(newerEpoch:)``;
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
        file.verifyCommits(keys: unlocked.keys, trustedKeyrings: unlocked.trustedKeyrings)
        let frames = file.structure.frames
        let committed = 0..<file.structure.committedFrameCount

        // Read every record; refuse when anything is damaged or unverified.
        var damage: [FormatError] = file.commitIssues
        var revisions: [(index: Int, revision: EntryRevision)] = []
        var seenRevisions = Set<RevisionID>()
        var manifests: [BlobID: (index: Int, manifest: BlobManifest)] = [:]
        var manifestCount = 0
        var profile: (index: Int, clock: HybridLogicalClock)?
        var unknown: [Int] = []
        var keyrings: [(epoch: UInt16, body: [UInt8])] = []
        var keptKeyringIDs = Set<KeyringID>()
        var untrustedIDs = Set<KeyringID>()
        for i in committed {
            let f = frames[i]
            if let reason = f.malformation { damage.append(.malformedFrame(f.location, reason: reason)); continue }
            switch f.header.kind {
            case .commit, .blobChunk:
                continue
            case .keyring:
                // One body per trusted keyring (its first intact copy); both
                // copies are written again below.
                if unlocked.trustedKeyrings[i] != nil, let body = f.plaintextBody, f.checksumIntact == true {
                    let id = KeyringBuilder.id(ofBody: body)
                    if !keptKeyringIDs.contains(id) {
                        keptKeyringIDs.insert(id)
                        keyrings.append((f.header.epoch, body))
                    }
                } else if let body = f.plaintextBody, f.checksumIntact == true {
                    untrustedIDs.insert(KeyringBuilder.id(ofBody: body))
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
                    // One revision id is one revision: the first in file order (merge.md §5).
                    let r = try EntryRevision(decoding: payload)
                    if seenRevisions.insert(r.revisionID).inserted { revisions.append((i, r)) }
                case .blobManifest:
                    let m = try BlobManifest(decoding: payload)
                    manifestCount += 1
                    if manifests[m.blob] == nil { manifests[m.blob] = (i, m) }
                case .profile:
                    let p = try Profile(decoding: payload)
                    if profile == nil || p.clock >= profile!.clock { profile = (i, p.clock) }
                default:
                    unknown.append(i)
                }
            } catch {
                damage.append(error)
            }
        }
        guard damage.isEmpty else { throw .damaged(issues: damage) }

        // Which revisions to keep.
        var byEntry: [EntryID: [(index: Int, revision: EntryRevision)]] = [:]
        for r in revisions { byEntry[r.revision.entryID, default: []].append(r) }
        var keep = Set<Int>()
        for (_, list) in byEntry {
            let named = Set(list.flatMap(\.revision.parents))
            let heads = list.filter { !named.contains($0.revision.revisionID) }
            if let horizon = options.tombstoneHorizonMilliseconds, heads.allSatisfy({ $0.revision.isDeleted }),
                heads.allSatisfy({ Int64(clamping: $0.revision.clock.milliseconds) < now - horizon }) {
                continue
            }
            for h in heads { keep.insert(h.index) }
            let older = list.filter { r in !heads.contains { $0.index == r.index } }.sorted { $0.revision.clock > $1.revision.clock }
            for r in older.prefix(max(0, options.keepHistory)) { keep.insert(r.index) }
        }
        var liveBlobs = Set<BlobID>()
        for r in revisions where keep.contains(r.index) { for a in r.revision.body.attachments { liveBlobs.insert(a.blob) } }
        let keptManifests = manifests.values.filter { liveBlobs.contains($0.manifest.blob) }.sorted { $0.index < $1.index }

        var rekeyed: UInt16?
        try VaultMerge.replace(path, with: { (temp: String) throws(SyncError) in
            // A clean header (both copies intact), whatever the old one's state.
            try VaultMerge.copyFile(path, to: temp, byteCount: 0)
            try VaultMerge.writeHeader(FileHeader(vaultID: file.vaultID), to: temp)
            let out: VaultFile
            do throws(FormatError) { out = try VaultFile(path: temp, writable: true) } catch { throw error.asSyncError }
            var keys = unlocked.keys
            var proposal: KeyringProposal?
            if options.rekey {
                guard let signer = credential.signingKeyPair() else {
                    throw .keys(.operationRefused(reason: "only an enrolled device or the recovery key can rekey"))
                }
                let state: KeyState
                do throws(KeyError) {
                    state = try KeyState(unlocked, vaultID: file.vaultID)
                    proposal = try KeyOperations.keyring(for: .rekey, state: state, signer: signer, now: now, random: random)
                } catch {
                    throw .keys(error)
                }
                keys.add(proposal!.epochKey)
                keys.writeKey = proposal!.epochKey
                rekeyed = proposal!.epoch
            } else {
                keys.writeKey = try VaultMerge.commitKey(unlocked.keys)
            }
            out.verifyCommits(keys: keys, trustedKeyrings: [:])
            do {
                try out.commit(random: random, options: WriteOptions(synchronous: false, lockTimeoutSeconds: writeOptions.lockTimeoutSeconds)) {
                    (tx: PendingCommit) throws(FormatError) in
                    // Keyrings first, in file order, each written twice, then the new one.
                    for k in keyrings { try tx.appendKeyring(epoch: k.epoch, body: k.body) }
                    if let proposal { try tx.appendKeyring(epoch: proposal.epoch, body: proposal.body) }
                    if let profile { try carry(profile.index, tx) }
                    for m in keptManifests {
                        if options.rekey {
                            let reader = try file.openBlob(m.manifest)
                            _ = try tx.appendBlob(from: BlobSource(reader), mediaType: m.manifest.mediaType)
                        } else {
                            for c in try file.chunkFrames(for: m.manifest) { try tx.appendRaw(frame: try side.bytes(of: c)) }
                            try tx.appendRaw(frame: try side.bytes(of: m.index))
                        }
                    }
                    for r in revisions where keep.contains(r.index) { try carry(r.index, tx) }
                    for i in unknown { try carry(i, tx) }
                }
            } catch let e as FormatError {
                throw e.asSyncError
            } catch {
                throw .resultDoesNotVerify(reason: "\(error)")
            }

            /// A record as it is, or sealed again under the new epoch.
            func carry(_ index: Int, _ tx: PendingCommit) throws(FormatError) {
                let f = frames[index]
                if options.rekey && f.header.isSealed {
                    _ = try tx.appendSealed(kind: f.header.kind, payload: try file.openRecord(frame: index))
                } else {
                    try tx.appendRaw(frame: try side.bytes(of: index))
                }
            }
        }, credential: credential, firstNewGroup: 0, random: random, options: writeOptions)

        let after = (try? FileSystem.size(path)) ?? 0
        return CompactionReport(
            bytesBefore: file.structure.fileSize, bytesAfter: after, revisionsBefore: revisions.count, revisionsAfter: keep.count,
            attachmentsKept: keptManifests.count, attachmentsDropped: manifestCount - keptManifests.count,
            untrustedKeyringsDropped: untrustedIDs.subtracting(keptKeyringIDs).count, rekeyedEpoch: rekeyed)
    }
}

/// Reads an attachment as a byte source, to store it again.
final class BlobSource: ByteSource {
    let reader: BlobReader
    init(_ reader: BlobReader) { self.reader = reader }
    func read(into buffer: UnsafeMutableRawBufferPointer) throws(FormatError) -> Int { try reader.read(into: buffer) }
}
