public import Foundation
@_spi(Crypto) import QuireCrypto
@_spi(Format) public import QuireFormat
@_spi(Format) import QuireKeys
import QuireSystem

/// What the index keeps of one revision; the body is read on demand.
struct RevisionSummary: Sendable {
    let frame: Int
    /// The decoded revision. The index decrypts every revision once when it
    /// is built; keeping them avoids decrypting winners again.
    let revision: EntryRevision?
    let revisionID: RevisionID
    let parents: [RevisionID]
    let clock: HybridLogicalClock
    let isDeleted: Bool
    /// False when the commit covering the revision did not verify
    /// (`Spec/format.md §9.3`): it is shown, but nothing vouches for it.
    let isVerified: Bool
    /// The Ed25519 public key of the member that attested the revision's
    /// commit; nil when it is unattested (`Spec/format.md §9.4`).
    let attestedBy: [UInt8]?
    /// The key of a removed member whose attestation covers the revision's
    /// commit (`Spec/format.md §9.4`); nil otherwise.
    let removedAttestor: [UInt8]?
    /// True when the revision's commit ranks with a current member's
    /// standing: attested by a current member, or by a removed member
    /// before its removal (`Spec/format.md §9.4` step 5, eleventh review
    /// R11-2).
    var ranksAsMember = false
    /// BLAKE2b-256 of the revision's payload: two frames of one revision id
    /// must carry the same one (`Spec/merge.md §5`). Nil for a revision this
    /// handle wrote under a fresh random revision id, whose payload is
    /// `revision.encoded()`: it is hashed only if a second frame of its id
    /// appears (``payloadDigest``), which almost never happens.
    let payloadHash: [UInt8]?

    /// The payload hash, computed from the retained revision when it was
    /// deferred.
    var payloadDigest: [UInt8] {
        if let payloadHash { return payloadHash }
        return BLAKE2b.hash(revision?.encoded() ?? [], byteCount: 32)
    }

    /// 2 current-member standing (attested by a current member, or by a
    /// removed member before its removal), 1 verified, 0 unverified.
    var standing: Int { attestedBy != nil || ranksAsMember ? 2 : isVerified ? 1 : 0 }
}

/// A manifest a blob id may resolve to (`Spec/format.md §7.3`).
struct BlobCandidate: Sendable {
    let manifest: BlobManifest
    let frame: Int
    /// The blob key the manifest's content is hashed under (the blob key of
    /// the keyring whose key seals the manifest).
    let blobKey: SymmetricKey?
    /// 2 attested by a member, 1 verified, 0 unverified.
    let standing: Int
    /// True when the id is the manifest's `blob`, false for an alias.
    let exact: Bool

    /// Resolution order: the higher standing, then an exact blob id before
    /// an alias, then the earlier frame (`Spec/format.md §7.3`).
    func precedes(_ other: BlobCandidate) -> Bool {
        if standing != other.standing { return standing > other.standing }
        if exact != other.exact { return exact }
        return frame < other.frame
    }
}

/// The entry index: every revision by entry, the blobs, the profile.
struct EntryIndex: Sendable {
    var revisions: [EntryID: [RevisionSummary]] = [:]
    /// Every released manifest whose stream is whole in structure, by each
    /// id it answers to, best first (``BlobCandidate/precedes(_:)``).
    var blobs: [BlobID: [BlobCandidate]] = [:]
    var profile: Profile?
    /// The standing of ``profile``'s record: 2 attested by a member, 1
    /// verified, 0 unverified.
    var profileStanding = 0
    var issues: [FormatError] = []
    /// The greatest clock of a revision or profile a member attested: the
    /// clock a writer's own clock follows and the rollback test compares
    /// (`Spec/records.md §3.2`). Unattested clocks do not count, so an
    /// epoch-key holder cannot push them to 2⁶⁴ − 1.
    var maxClock = HybridLogicalClock(rawValue: 0)
    /// Payload hashes computed so far (for tests: a revision this handle
    /// wrote is hashed only when a second frame of its id appears).
    var payloadHashes = 0
    /// The query summaries and search index, built at the first query
    /// (`Vault+Query.swift`); dropped with the index on a reload.
    var query: QueryIndexes?
    /// Entries that gained a revision since ``query`` was last brought up
    /// to date.
    var queryStale: Set<EntryID> = []

    /// Adds a revision; `retain: false` keeps only its summary (the body is
    /// read again from `frame` when needed). `payloadHash`, when given, is
    /// the BLAKE2b-256 of `payload`, computed already. `ownPayload: true` says that
    /// `payload` is `r.encoded()` as this handle sealed it: with `retain`,
    /// its hash is left until a second frame of the id needs it (counted by
    /// ``payloadHashes``). A second frame of the same
    /// revision id replaces the first only when it has a higher standing;
    /// when their payloads differ, the conflict is reported
    /// [`revision_conflict`] (`Spec/merge.md §5`).
    mutating func insert(
        _ r: EntryRevision, frame: Int, location: FrameLocation? = nil, payload: [UInt8]? = nil, verified: Bool = true,
        attestedBy: [UInt8]? = nil, removedAttestor: [UInt8]? = nil, ranksAsMember: Bool = false, retain: Bool = true,
        ownPayload: Bool = false, payloadHash: [UInt8]? = nil
    ) {
        var list = revisions[r.entryID, default: []]
        let deferred = ownPayload && retain
        if !deferred { payloadHashes += 1 }
        let summary = RevisionSummary(
            frame: frame, revision: retain ? r : nil, revisionID: r.revisionID, parents: r.parents, clock: r.clock,
            isDeleted: r.isDeleted, isVerified: verified, attestedBy: verified ? attestedBy : nil,
            removedAttestor: verified ? removedAttestor : nil, ranksAsMember: verified && ranksAsMember,
            payloadHash: deferred ? nil : payloadHash ?? BLAKE2b.hash(payload ?? r.encoded(), byteCount: 32))
        if let at = list.firstIndex(where: { $0.revisionID == r.revisionID }) {
            let existing = list[at]
            if existing.payloadHash == nil { payloadHashes += 1 }
            if summary.payloadHash == nil { payloadHashes += 1 }
            if existing.payloadDigest != summary.payloadDigest, let location {
                issues.append(.revisionConflict(location, revision: r.revisionID.description))
            }
            guard summary.standing > existing.standing else { return }
            list[at] = summary
        } else {
            list.append(summary)
        }
        revisions[r.entryID] = list
        if query != nil { queryStale.insert(r.entryID) }
        if summary.attestedBy != nil && r.clock > maxClock { maxClock = r.clock }
    }

    /// Adds a manifest under its blob id and each of its aliases.
    mutating func insert(_ m: BlobManifest, frame: Int, blobKey: SymmetricKey?, standing: Int) {
        for id in [m.blob] + m.aliases {
            let candidate = BlobCandidate(manifest: m, frame: frame, blobKey: blobKey, standing: standing, exact: id == m.blob)
            var list = blobs[id, default: []]
            let at = list.firstIndex { candidate.precedes($0) } ?? list.count
            list.insert(candidate, at: at)
            blobs[id] = list
        }
    }

    /// The manifest `id` resolves to (`Spec/format.md §7.3`): the highest
    /// standing; then one whose `blob` is `id` before one that lists it in
    /// `aliases`; then the first in file order. No other candidate is tried
    /// when its content does not read whole.
    func resolve(_ id: BlobID) -> BlobCandidate? { blobs[id]?.first }

    /// True when an upload with blob id `id` under `blobKey` may be
    /// deduplicated: a manifest of a commit a member attested names it as
    /// its own blob id under that blob key (`Spec/format.md §7.3`).
    func holdsAttested(_ id: BlobID, blobKey: SymmetricKey?) -> Bool {
        guard let blobKey else { return false }
        return blobs[id]?.contains { $0.exact && $0.standing == 2 && $0.blobKey == blobKey } ?? false
    }

    /// The heads of an entry: revisions no other revision retires (names as a
    /// parent; one not attested by a member never retires one that is,
    /// `Spec/merge.md §5`), winner first: the highest standing, then the
    /// greatest clock, then the greatest revision id. Standing comes first
    /// so that whoever holds only an epoch key cannot outrank a member's
    /// head with a clock of 2⁶⁴ − 1 (tenth review R10-2).
    func heads(of entry: EntryID) -> [RevisionSummary] {
        guard let list = revisions[entry] else { return [] }
        // Most entries have one revision: it is the head, unless it names
        // itself as a parent. Returned as it is, without a copy.
        if list.count == 1, !list[0].parents.contains(list[0].revisionID) { return list }
        return EntryRevision.heads(of: list, id: \.revisionID, parents: \.parents, attested: { $0.standing == 2 }).sorted {
            Self.winsOver($0.standing, $0.clock, $0.revisionID, $1.standing, $1.clock, $1.revisionID)
        }
    }

    /// The winner order of heads (`Spec/merge.md §5`): true when a head of
    /// standing `sa`, clock `ca` and revision id `ra` comes before one of
    /// `sb`, `cb`, `rb`.
    static func winsOver(
        _ sa: Int, _ ca: HybridLogicalClock, _ ra: RevisionID, _ sb: Int, _ cb: HybridLogicalClock, _ rb: RevisionID
    ) -> Bool {
        if sa != sb { return sa > sb }
        return ca != cb ? ca > cb : rb < ra
    }
}

/// An entry as it stands: the winning head's content, and any conflicting
/// heads (`Spec/merge.md`). `Identifiable` by its entry id, so that a list
/// of them can drive a SwiftUI `List` or `ForEach` directly; `Equatable`,
/// so a view can tell whether a row it shows changed.
public struct EntrySnapshot: Sendable, Identifiable, Equatable {
    /// The entry id.
    public let id: EntryID
    /// The winning head revision.
    public let revision: EntryRevision
    /// Other heads, when concurrent edits conflict; empty otherwise.
    public let conflictingHeads: [RevisionID]
    /// The number of revisions the vault holds for this entry (the CLI's
    /// `show`; an app lists what it shows with `versions(of:)`, and a
    /// deleted entry's history with `revisions(of:)`).
    @_spi(Format) public let revisionCount: Int
    /// False when the winning revision's commit did not verify: the record
    /// authenticated under a key of the vault, but the commit chain cannot
    /// vouch for it (damage, or tampering by a holder of an old key). Show
    /// it as unverified (`Spec/threat-model.md §3.4`).
    public let isVerified: Bool
    /// The Ed25519 public key of the member (a device, or the recovery key)
    /// whose attestation covers the winning revision's commit; match it
    /// against ``KeyState``'s members to name the device. Nil when the
    /// revision is unattested — written with a passphrase or an escrow key,
    /// or by another implementation — or unverified: such a revision must
    /// not be shown as written by a member (`Spec/format.md §9.4`).
    @_spi(Format) public let attestedBy: [UInt8]?
    /// The Ed25519 public key of a member whose attestation covers the
    /// winning revision's commit but whom a trusted keyring has since
    /// removed. The file cannot show that the commit was written before the
    /// removal (a removed device can insert commits into the past), so the
    /// revision is not attested (``attestedBy`` is nil); an app may say
    /// "attested by a removed member" (`Spec/format.md §9.4`).
    @_spi(Format) public let attestedByRemovedMember: [UInt8]?

    /// True when a current member attested the winning revision (signed the
    /// commit that holds it, `Spec/format.md §9.4`).
    public var isAttested: Bool { attestedBy != nil }

    /// The entry's content.
    public var body: EntryBody { revision.body }
    /// True when the winning head is a tombstone.
    public var isDeleted: Bool { revision.isDeleted }
}

/// A deleted entry as a "Recently deleted" screen lists it
/// (``Vault/deletedEntries()``): the entry as it was before the deletion,
/// and when it was deleted. Bring it back with
/// ``VaultTransaction/restore(_:)``.
public struct DeletedEntry: Sendable, Identifiable, Equatable {
    /// The entry id.
    public let id: EntryID
    /// The deletion: the tombstone revision, the entry's winning head.
    package let tombstone: EntryRevision
    /// The last revision before the deletion that is not a tombstone (as
    /// ``body`` says), nil when the vault no longer holds one.
    package let lastLive: EntryRevision?

    /// The entry's content before it was deleted: that of the last
    /// revision the deletion replaced (when two devices had changed it
    /// apart, the version the vault showed first, `Spec/merge.md §5`).
    /// Nil when the vault was compacted after the deletion, so only the
    /// deletion is left: the entry cannot be restored from this vault
    /// (a copy from before the compaction still holds it).
    public var body: EntryBody? { lastLive?.body }
    /// The revision that deleted the entry (a tombstone, whose own body is empty).
    public var deletion: RevisionID { tombstone.revisionID }
    /// When the entry was deleted, by the deleting writer's clock (the
    /// tombstone's hybrid logical clock, to the millisecond).
    public var deleted: Date { Date(timeIntervalSince1970: Double(tombstone.clock.milliseconds) / 1000) }
}

extension Vault {
    func loadIndex() throws(QuireError) -> EntryIndex {
        if let index { return index }
        // A frame of an unknown critical kind in a commit a current member
        // attested: no record is released (Spec/format.md §4.3).
        if let fatal = file.fatalCriticalKind { throw .format(fatal) }
        fullIndexLoadCount += 1
        // Everything is read now: the cached view is not needed any more.
        dropCachedView()
        var built = EntryIndex()
        Self.absorb(file: file, into: &built, frames: nil, retain: retainsEntryBodies)
        if rescanIfTheCachedPrefixFailed(built.issues) {
            built = EntryIndex()
            Self.absorb(file: file, into: &built, frames: nil, retain: retainsEntryBodies)
        }
        index = built
        observe(built.maxClock)
        rememberIfNotRolledBack()
        return built
    }

    /// Indexes records other writers committed (frames `range`), if the
    /// index is loaded; the next load covers them otherwise.
    func absorb(_ range: Range<Int>) {
        guard index != nil, !range.isEmpty else { return }
        Self.absorb(file: file, into: &index!, frames: range, retain: retainsEntryBodies) { id, index in
            self.noteBeforeAbsorbing(id, in: index)
        }
        observe(index!.maxClock)
    }

    /// Indexes the records of `frames` (all when nil) into `built`;
    /// `willInsert` sees each entry revision's id and the index just before
    /// it is inserted (``refresh()`` notes what changed).
    static func absorb(
        file: VaultFile, into built: inout EntryIndex, frames: Range<Int>?, retain: Bool = true,
        kinds: Set<RecordKind> = [.entryRevision, .blobManifest, .profile], willInsert: ((EntryID, EntryIndex) -> Void)? = nil
    ) {
        // Revisions are decoded on every core; the index takes the records
        // one by one, in file order.
        let issues = file.forEachDecodedRecord(kinds: kinds, in: frames) { record, decoded in
            do throws(FormatError) {
                switch record.frame.header.kind {
                case .entryRevision:
                    // Decoded with its payload hashed on the reader's threads.
                    guard let decoded else { return true }
                    let (r, payloadHash) = try decoded.map { ($0.revision, $0.payloadHash) }.get()
                    willInsert?(r.entryID, built)
                    built.insert(
                        r, frame: record.frame.location.index, location: record.frame.location, verified: record.commitVerified,
                        attestedBy: record.attestedBy, removedAttestor: record.removedAttestor, ranksAsMember: record.ranksAsMember,
                        retain: retain, payloadHash: payloadHash)
                case .blobManifest:
                    let m = try BlobManifest(decoding: record.payload, location: record.frame.location)
                    if (try? file.chunkFrames(for: m)) != nil {
                        let blobKey = file.openingKey(frame: record.frame.location.index)?.blobKey
                        // A revision names content by its blob id or by an
                        // earlier id a rekey kept as an alias; an alias is
                        // checked against the content when it is read.
                        let standing = record.standing
                        built.insert(m, frame: record.frame.location.index, blobKey: blobKey, standing: standing)
                    }
                case .profile:
                    let p = try Profile(decoding: record.payload, location: record.frame.location)
                    let standing = record.standing
                    if Profile.replaces(p, standing: standing, current: built.profile, standing: built.profileStanding) {
                        built.profile = p
                        built.profileStanding = standing
                    }
                    if record.attestedBy != nil && p.clock > built.maxClock { built.maxClock = p.clock }
                default:
                    break
                }
            } catch {
                built.issues.append(error)
            }
            return true
        }
        built.issues += issues
    }

    /// Lets the writer's clock follow a reading it saw — a revision or
    /// profile a member attested, or one this vault appended — unless the
    /// reading is more than a day ahead of the wall clock: a far-future
    /// reading would make every later revision of this device win, or
    /// saturate at 2⁶⁴ − 1 (`Spec/records.md §3.2`). A reading from the
    /// file (`committed`) also counts in ``readClock``; one of a record
    /// being appended does not, until its commit lands.
    func observe(_ seen: HybridLogicalClock, committed: Bool = true) {
        if committed, seen > readClock { readClock = seen }
        let now = UInt64(max(0, ProcessStats.wallClockMilliseconds()))
        guard seen.milliseconds <= now &+ HybridLogicalClock.maxLeadMilliseconds else { return }
        if seen > clock { clock = seen }
    }

    func nextClock() -> HybridLogicalClock {
        clock = clock.tick(now: UInt64(max(0, ProcessStats.wallClockMilliseconds())))
        return clock
    }

    func revision(frame: Int) throws(QuireError) -> EntryRevision {
        try Self.revision(frame: frame, in: file)
    }

    /// The entry revision at frame `frame` of `file`.
    ///
    /// - Throws: ``QuireError/catalogStale`` when `file` has no such
    ///   committed frame; a container error (`.damaged`, `.unavailable`, `.outOfSpace`…).
    static func revision(frame: Int, in file: VaultFile) throws(QuireError) -> EntryRevision {
        // Under the file's lock: an observer's refresh may extend the
        // structure of the file a catalog reads, from another thread.
        guard let location = file.committedFrameLocation(frame) else { throw .catalogStale }
        do {
            let payload = try file.openRecord(frame: frame)
            return try EntryRevision(decoding: payload, location: location)
        } catch {
            throw .format(error)
        }
    }

    /// Every entry that is not deleted, ordered by creation time (then id).
    ///
    /// - Throws: a container error (`.damaged`, `.unavailable`, `.outOfSpace`…) for I/O.
    @_spi(Format)
    public func entries() throws(QuireError) -> [EntrySnapshot] {
        return try lock.withLock { () throws(QuireError) -> [EntrySnapshot] in
            let index = try loadIndex()
            var out: [EntrySnapshot] = []
            out.reserveCapacity(index.revisions.count)
            for id in index.revisions.keys {
                if let s = try snapshot(id, index: index), !s.isDeleted { out.append(s) }
            }
            // The keys are sorted, not the snapshots: a sort moves its
            // elements many times, and a snapshot is dozens of words (at
            // 50,000 entries the moves were an eighth of `quire list`).
            var order = out.indices.map { (created: out[$0].body.createdMilliseconds, id: out[$0].id, at: $0) }
            order.sort { a, b in a.created != b.created ? a.created < b.created : a.id < b.id }
            // Put each snapshot in its place along the permutation's cycles,
            // each moved once, instead of building a second array of them.
            var source = order.map(\.at)
            for start in source.indices where source[start] != start {
                let first = out[start]
                var at = start
                while source[at] != start {
                    let from = source[at]
                    out[at] = out[from]
                    source[at] = at
                    at = from
                }
                out[at] = first
                source[at] = at
            }
            return out
        }
    }

    /// Every deleted entry (its winning head is a tombstone), newest
    /// deletion first: what a "Recently deleted" screen lists and
    /// ``VaultTransaction/restore(_:)`` brings back. Each row shows the
    /// entry as it was before the deletion (``DeletedEntry/body``), nil
    /// when a compaction left only the deletion.
    ///
    /// - Throws: a container error (`.damaged`, `.unavailable`, `.outOfSpace`…) for I/O.
    @_spi(Format)
    public func deletedEntries() throws(QuireError) -> [DeletedEntry] {
        return try lock.withLock { () throws(QuireError) -> [DeletedEntry] in
            let index = try loadIndex()
            var out: [DeletedEntry] = []
            for id in index.revisions.keys {
                guard let winner = index.heads(of: id).first, winner.isDeleted else { continue }
                out.append(
                    DeletedEntry(
                        id: id, tombstone: try revision(of: winner), lastLive: try lastLiveRevision(of: id, deletedBy: winner, index: index)
                    ))
            }
            return out.sorted { a, b in
                a.tombstone.clock != b.tombstone.clock ? a.tombstone.clock > b.tombstone.clock : a.id < b.id
            }
        }
    }

    /// The revision `summary` stands for: kept in the index, or read from its frame.
    func revision(of summary: RevisionSummary) throws(QuireError) -> EntryRevision {
        if let cached = summary.revision { return cached }
        return try revision(frame: summary.frame)
    }

    /// The entry as it was before the tombstone `tombstone` deleted it: of
    /// the revisions it replaced that are not tombstones, the one the vault
    /// would pick as the winning head (`Spec/merge.md §5`: the highest
    /// standing, then the greatest clock, then the greatest revision id);
    /// when all it replaced are tombstones, the same among what those
    /// replaced, and so on. Nil when the vault holds none (compacted away).
    func lastLiveRevision(of id: EntryID, deletedBy tombstone: RevisionSummary, index: EntryIndex) throws(QuireError)
        -> EntryRevision?
    {
        var byID: [RevisionID: RevisionSummary] = [:]
        for s in index.revisions[id] ?? [] { byID[s.revisionID] = s }
        var seen: Set<RevisionID> = [tombstone.revisionID]
        var frontier = tombstone.parents
        while !frontier.isEmpty {
            let found = frontier.compactMap { seen.insert($0).inserted ? byID[$0] : nil }
            let live = found.filter { !$0.isDeleted }.sorted {
                EntryIndex.winsOver($0.standing, $0.clock, $0.revisionID, $1.standing, $1.clock, $1.revisionID)
            }
            if let best = live.first { return try revision(of: best) }
            frontier = found.flatMap(\.parents)
        }
        return nil
    }

    /// One entry as it stands (including a deleted one), or nil when the
    /// vault has no revision of it.
    ///
    /// - Throws: a container error (`.damaged`, `.unavailable`, `.outOfSpace`…).
    @_spi(Format)
    public func entry(_ id: EntryID) throws(QuireError) -> EntrySnapshot? {
        return try lock.withLock { () throws(QuireError) -> EntrySnapshot? in
            // Through the index cache when queries answer from it: one
            // record read, checked against the cache (`Spec/index-cache.md §5`).
            switch cachedLookup(id) {
            case .found(let snapshot): return snapshot
            case .absent: return nil
            case .unavailable: return try snapshot(id, index: loadIndex())
            }
        }
    }

    func snapshot(_ id: EntryID, index: EntryIndex) throws(QuireError) -> EntrySnapshot? {
        let heads = index.heads(of: id)
        guard let winner = heads.first else { return nil }
        let winning: EntryRevision
        if let cached = winner.revision { winning = cached } else { winning = try revision(frame: winner.frame) }
        return EntrySnapshot(
            id: id, revision: winning, conflictingHeads: heads.dropFirst().map(\.revisionID),
            revisionCount: index.revisions[id]?.count ?? 0, isVerified: winner.isVerified, attestedBy: winner.attestedBy,
            attestedByRemovedMember: winner.removedAttestor)
    }

    /// Who attested each revision of an entry: for every revision of `id`
    /// whose commit verified and was attested by a member, that member's
    /// Ed25519 public key (match it against ``KeyState``'s members to name
    /// the device). A revision missing here is unattested or unverified and
    /// must not be shown as written by a member (`Spec/format.md §9.4`).
    ///
    /// - Throws: ``QuireError``.
    package func attestations(of id: EntryID) throws(QuireError) -> [RevisionID: [UInt8]] {
        return try lock.withLock { () throws(QuireError) -> [RevisionID: [UInt8]] in
            var out: [RevisionID: [UInt8]] = [:]
            for s in try loadIndex().revisions[id] ?? [] { if let key = s.attestedBy { out[s.revisionID] = key } }
            return out
        }
    }

    /// Every revision of an entry, oldest clock first.
    ///
    /// - Throws: ``QuireError``.
    @_spi(Format)
    public func revisions(of id: EntryID) throws(QuireError) -> [EntryRevision] {
        return try lock.withLock { () throws(QuireError) -> [EntryRevision] in
            let index = try loadIndex()
            var out: [EntryRevision] = []
            for s in (index.revisions[id] ?? []).sorted(by: { $0.clock < $1.clock }) {
                if let cached = s.revision { out.append(cached) } else { out.append(try revision(frame: s.frame)) }
            }
            return out
        }
    }

    /// Adds a new entry with `body`; returns its first revision.
    ///
    /// - Throws: ``QuireError``.
    @_spi(Format)
    @discardableResult
    public func add(_ body: EntryBody, id: EntryID? = nil) throws(QuireError) -> EntryRevision {
        return try lock.withLock { () throws(QuireError) -> EntryRevision in
            let entryID = id ?? EntryID(using: random)
            let revisionID = RevisionID(using: random)
            var added: EntryRevision?
            try commitTyped { (tx: VaultTransaction) throws(QuireError) in
                // The clock is drawn in the commit, after a retry has read
                // the file again: drawn before, it was part of what the
                // handle had read when the retry judged the file it met
                // (Spec/keys.md §7, "On refresh"), newer than any file,
                // and a compaction looked like a file cut back.
                let revision = EntryRevision(
                    entryID: entryID, revisionID: revisionID, parents: [], clock: nextClock(), device: author, body: body)
                try tx.append(revision)
                added = revision
            }
            return added!
        }
    }

    /// Replaces an entry's content; the new revision names every current
    /// head as a parent, which also resolves a conflict. The library sets
    /// the body's `modified` to now (milliseconds since the Unix epoch, UTC).
    ///
    /// - Throws: `.notFound` (`entry_not_found`); `.notFound` (`entry_deleted`)
    ///   when the entry is deleted (bring it back with
    ///   ``restore(_:body:replacing:)``); ``QuireError``.
    @_spi(Format)
    @discardableResult
    public func edit(_ id: EntryID, body: EntryBody) throws(QuireError) -> EntryRevision {
        return try lock.withLock { () throws(QuireError) -> EntryRevision in
            try change(id, body: body, deleted: false)
        }
    }

    /// Replaces an entry's content as a change made from the revisions
    /// `base`, the heads the caller read before changing it (an editor's
    /// starting point): the new revision names exactly them as parents. A
    /// revision written meanwhile (another edit, a synced copy renamed over
    /// the vault) is not among them, so it stays a head and the two become
    /// a conflict that is kept and shown (`Spec/records.md §3`), never
    /// silently superseded. With `base` equal to the current heads this is
    /// ``edit(_:body:)``.
    ///
    /// The library sets the body's `modified` to now.
    ///
    /// - Parameter base: revision ids of this entry, usually
    ///   `[snapshot.revision.revisionID] + snapshot.conflictingHeads`.
    /// - Throws: `.notFound` (`entry_not_found`) when the vault holds no
    ///   revision of the entry or `base` names none of them;
    ///   `.notFound` (`entry_deleted`) when every revision in `base` is a
    ///   deletion (use ``restore(_:body:replacing:)``); ``QuireError``.
    @_spi(Format)
    @discardableResult
    public func edit(_ id: EntryID, body: EntryBody, replacing base: [RevisionID]) throws(QuireError) -> EntryRevision {
        return try lock.withLock { () throws(QuireError) -> EntryRevision in
            try change(id, body: body, deleted: false, base: base)
        }
    }

    /// Brings a deleted entry back with `body` (usually the body of its last
    /// revision before the deletion, from ``revisions(of:)``): a revision
    /// replacing the tombstone, with `modified` set to now. On an entry that
    /// is not deleted it is an edit.
    ///
    /// - Parameter base: the revisions replaced, as in
    ///   ``edit(_:body:replacing:)``; nil: the current heads.
    /// - Throws: `.notFound` (`entry_not_found`), ``QuireError``.
    @_spi(Format)
    @discardableResult
    public func restore(_ id: EntryID, body: EntryBody, replacing base: [RevisionID]? = nil) throws(QuireError) -> EntryRevision {
        return try lock.withLock { () throws(QuireError) -> EntryRevision in
            try change(id, body: body, deleted: false, base: base, restoring: true)
        }
    }

    /// Deletes an entry by appending a tombstone revision.
    ///
    /// - Throws: `.notFound` (`entry_not_found`), ``QuireError``.
    @_spi(Format)
    @discardableResult
    public func delete(_ id: EntryID) throws(QuireError) -> EntryRevision {
        return try lock.withLock { () throws(QuireError) -> EntryRevision in
            try change(id, body: EntryBody(), deleted: true)
        }
    }

    private func change(
        _ id: EntryID, body: EntryBody, deleted: Bool, base: [RevisionID]? = nil, restoring: Bool = false
    ) throws(QuireError) -> EntryRevision {
        var made: EntryRevision?
        try commitTyped { (tx: VaultTransaction) throws(QuireError) in
            made = try tx.change(id, body: body, deleted: deleted, base: base, restoring: restoring)
        }
        return made!
    }

    /// The manifest of an attachment.
    ///
    /// - Throws: `.notFound` (`blob_not_found`).
    @_spi(Format)
    public func attachment(_ blob: BlobID) throws(QuireError) -> BlobManifest {
        return try lock.withLock { () throws(QuireError) -> BlobManifest in
            guard let c = try loadIndex().resolve(blob) else { throw .attachmentNotFound(blob) }
            return c.manifest
        }
    }

    /// Opens an attachment for streaming or chunk-by-chunk reading. When
    /// `blob` resolves through a manifest's `aliases`, reading to the end
    /// also checks that it is the content's blob id under the blob key of a
    /// trusted keyring (`Spec/format.md §7.3`).
    ///
    /// - Throws: `.notFound` (`blob_not_found`), a container error (`.damaged`, `.unavailable`, `.outOfSpace`…).
    @_spi(Format)
    public func openAttachment(_ blob: BlobID) throws(QuireError) -> BlobReader {
        return try lock.withLock { () throws(QuireError) -> BlobReader in
            guard let c = try loadIndex().resolve(blob) else { throw .attachmentNotFound(blob) }
            var aliasKeys: [SymmetricKey] = []
            if !c.exact {
                for key in unlocked.keys.all {
                    if let k = key.blobKey, !aliasKeys.contains(k) { aliasKeys.append(k) }
                }
            }
            do throws(FormatError) {
                return try file.openBlob(c.manifest, blobKey: c.blobKey, alias: c.exact ? nil : blob, aliasBlobKeys: aliasKeys)
            } catch {
                throw .format(error)
            }
        }
    }
}
