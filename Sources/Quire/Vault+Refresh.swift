@_spi(Format) import QuireFormat
@_spi(Format) import QuireKeys
import QuireSystem

/// What a handle remembers between two ``Vault/refresh()`` calls, to say
/// exactly what changed (guarded by the vault's lock).
struct RefreshLog: Sendable {
    /// True once a refresh set the baseline (or the index was built).
    var started = false
    /// The state, before the handle absorbed other writers' records (at a
    /// commit, or a refresh), of each entry those records touched since the
    /// last refresh; `.some(nil)`: the entry was unknown.
    var before: [EntryID: EntryChange.State?] = [:]
    /// Every entry's state at the last refresh, kept when a reload dropped
    /// the index since (with ``before`` folded in); nil otherwise.
    var baseline: [EntryID: EntryChange.State]?
    /// The profile's clock at the last refresh.
    var profile: HybridLogicalClock?
    /// How many issues the index held, and how many frames were committed,
    /// at the last refresh: what came after is new.
    var issues = 0
    var frames = 0
    /// The keys before the first reload since the last refresh.
    var keysBefore: KeySummary?
    /// The unread records said so far, by code and offset.
    var saidUnread: Set<UnreadKey> = []
    /// The uncommitted tail said by the last change set.
    var saidTail: UncommittedTail?
    /// True when the file was replaced since the last refresh.
    var replaced = false

    struct UnreadKey: Hashable, Sendable {
        let code: String
        let offset: UInt64?
        init(_ r: UnreadRecords.Record) {
            code = r.code
            offset = r.offset
        }
    }
}

/// The parts of the keys a ``KeysChange`` compares.
struct KeySummary: Sendable, Equatable {
    let epoch: UInt32
    let heads: [KeyringID]
    let members: [KeyringMember]
    let removed: Bool

    init(_ unlocked: UnlockedKeys, vaultID: VaultID) {
        let state = try? KeyState(unlocked, vaultID: vaultID)
        epoch = state?.epoch ?? 0
        heads = (state?.heads.map(\.id) ?? []).sorted()
        members = state?.members ?? []
        removed = unlocked.removedIn != nil || unlocked.isBehind
    }
}

extension EntryChange.State {
    /// The state of entry `id` in `index`; nil when it holds no revision.
    init?(_ id: EntryID, in index: EntryIndex) {
        let heads = index.heads(of: id)
        guard let winner = heads.first else { return nil }
        self.init(winner: winner.revisionID, isDeleted: winner.isDeleted, conflictingHeads: heads.dropFirst().map(\.revisionID))
    }
}

extension EntryIndex {
    /// Every entry's state.
    var states: [EntryID: EntryChange.State] {
        var out: [EntryID: EntryChange.State] = [:]
        out.reserveCapacity(revisions.count)
        for id in revisions.keys { if let s = EntryChange.State(id, in: self) { out[id] = s } }
        return out
    }
}

extension Vault {
    /// Reads what other processes appended to the vault since this handle
    /// last read it, and says exactly what changed (``VaultChangeSet``).
    ///
    /// Between compactions a vault file only grows (`Spec/format.md §9.1`):
    /// refresh reads the bytes after the last commit it knows, verifies the
    /// new commits against the chain tip and decrypts only their records,
    /// so its cost follows what was appended, not the size of the journal.
    /// When a sync tool renamed over the path a copy that starts with every
    /// byte this handle read (another device appended to it) and adds no
    /// keyring, it switches to that file and reads only its tail too (the
    /// new file is scanned and its commits verified, as an open does, but
    /// nothing already read is decrypted again). When the path names another
    /// file otherwise — another process compacted or merged it, it shrank,
    /// or its last known commit is gone — or when the new commits change the
    /// keys (or do not simply extend the chain), it opens the path again
    /// and compares every entry's heads before and after: the
    /// change set is the same as if the appends had been read one by one.
    ///
    /// Baseline: the first call reports what changed since the handle opened
    /// (or last reloaded); each later call, since the previous one. Changes
    /// this handle committed itself are not reported; other writers'
    /// records it read while committing are. While a ``VaultObserver`` or
    /// an ``events(coalescing:)`` stream follows the handle, its key
    /// changes, folds, merges and compactions are not reported either
    /// (they are delivered as its own when they land); otherwise a refresh
    /// after one reports what it changed. ``EntryCatalog``s made before
    /// stay correct: they read the file they were made from.
    ///
    /// Each change is returned once per handle: a ``VaultObserver`` on this
    /// handle and a direct call share the changes between them. Whoever
    /// calls it, what a refresh reads is also delivered to every
    /// ``events(coalescing:)`` stream of the handle.
    ///
    /// Thread-safe; it takes the handle's lock for as long as it reads.
    ///
    /// - Returns: the changes; ``VaultChangeSet/isEmpty`` when there are none.
    /// - Throws: a container error (`.damaged`, `.unavailable`, `.outOfSpace`…) for I/O, or when the file at the
    ///   path is missing or no vault; a key error (`.wrongCredential`, `.readOnly`, `.needsMerge`, `.damaged`) when the
    ///   credential no longer opens a replaced file. The handle then keeps
    ///   the state it had, and a later call tries again. On a handle with
    ///   device memory (opened with a key store, or after
    ///   ``remember(in:)``), `.needsMerge` (``VaultError/rolledBack(reason:)``,
    ///   `rolled_back`) when the file at the path fails the rollback test
    ///   of an open (`Spec/keys.md §7`) against what the handle read (an older copy a sync tool renamed over the
    ///   path), or holds no revision of some entry the handle had read
    ///   while all its records read (another history: a copy forked from
    ///   an older state and written to since, whose newest clock passes
    ///   §7's clock test; a rewrite keeps every entry's heads and
    ///   tombstones). The handle then reads that file as an open would,
    ///   says `rollback_suspected` in ``keyWarnings`` and refuses writes
    ///   with the same error; each later call throws it again, until
    ///   ``acceptRollback()`` (the next call then reports what the accepted
    ///   file changed, the lost entries as removed) or a file that passes
    ///   both tests replaces it. A fresh open in a new process sees another
    ///   history through device memory's newest entries (§7, test 3), the
    ///   16 this device saw newest.
    @_spi(Format)
    public func refresh() throws(QuireError) -> VaultChangeSet {
        try lock.withLock { () throws(QuireError) -> VaultChangeSet in
            let changes = try readChanges()
            // Every `events()` stream of this handle hears what any refresh
            // read, under the lock so that they see it in order.
            if !changes.isEmpty { concurrency.broadcast(.changed(changes, origin: .otherWriter)) }
            return changes
        }
    }

    /// Runs `write`, one of this handle's writes that does not go through
    /// ``commit(_:)`` (a key change, a fold, a merge into this vault, a
    /// compaction), and reports what it changed as this handle's own
    /// (``VaultEvent/Origin/thisHandle``), right after it, to the handle's
    /// observers and streams, once: a later ``refresh()`` (the watch's)
    /// does not read it again as another writer's. What other writers
    /// committed before is read first and reported as theirs. Without
    /// observers it only runs `write`. Takes the handle's lock.
    func reportingOwnWrite<T>(_ write: () throws(QuireError) -> T) throws(QuireError) -> T {
        try lock.withLock { () throws(QuireError) -> T in
            guard concurrency.hasListeners else { return try write() }
            // Other writers' changes, as theirs (the refresh gives them to
            // the streams; an observer of its own gets them here). A
            // refresh that fails leaves them to the write (which meets the
            // same file) and to the next refresh.
            if let theirs = try? refresh() { concurrency.tell(theirs, origin: .otherWriter) }
            let result = try write()
            // The write landed: what it changed is this handle's. Should
            // reading it fail, the next refresh reports it instead.
            if let changes = try? readChanges() { concurrency.tell(changes, origin: .thisHandle) }
            return result
        }
    }

    /// What changed since the last refresh (see ``refresh()``), without
    /// telling anyone. Under the lock.
    private func readChanges() throws(QuireError) -> VaultChangeSet {
        if !refreshLog.started {
            // The baseline: the file as the handle opened or reloaded it
            // — the cached view when queries answer from the index
            // cache (`Spec/index-cache.md §5`), else the entry index.
            if currentCachedView() == nil { _ = try loadIndex() }
            refreshLog.saidUnread = Set(makeUnreadRecords(index?.issues ?? []).records.map(RefreshLog.UnreadKey.init))
            refreshLog.profile = currentProfileClock()
            refreshLog.issues = index?.issues.count ?? 0
            refreshLog.frames = file.structure.committedFrameCount
            refreshLog.started = true
        }
        let found: AppendedFrames
        do throws(FormatError) { found = try file.readAppended() } catch { throw .format(error) }
        switch found {
        case .appended(let range):
            if index == nil, indexCache?.view != nil { try followWithCachedView() } else { absorb(range) }
        case .reopen:
            let seen = seenMemory()
            // A copy adopted from its tail holds every byte read: only
            // a reopen needs the entries read, to judge what it lost.
            var entries: Set<EntryID>?
            if try !adoptReplacement() {
                entries = seenEntries()
                try reloadUnjudged()
            }
            judgeReplacement(seen: seen, entries: entries)
        }
        // A replacement that fails the rollback test is not an ordinary
        // change: said as an open says it, each time, until the user
        // accepts it or a file that passes replaces it (Spec/keys.md §7).
        if let refused = replacementRefusal { throw .rolledBack(reason: refused.reason) }
        return changeSet()
    }

    /// Reads the frames other writers committed into the cached view,
    /// noting each touched entry's state before; when the view cannot
    /// follow them (a conflict, an unreadable record), keeps every entry's
    /// state as the view had it as the baseline and reads the entry index
    /// whole. Under the lock, with a cached view and no index.
    func followWithCachedView() throws(QuireError) {
        guard let view = indexCache?.view else { return }
        var before = refreshLog.before
        if advanceCachedView(changed: &before) {
            if refreshLog.started { refreshLog.before = before }
            return
        }
        if refreshLog.started && refreshLog.baseline == nil {
            var baseline = baselineStates(of: view)
            for (id, state) in refreshLog.before { baseline[id] = state }
            refreshLog.baseline = baseline
            refreshLog.before = [:]
        }
        _ = try loadIndex()
    }

    /// Every entry's state as `view` holds it: the baseline a refresh
    /// compares against once the view cannot follow the file. The rows of
    /// a row group of the cached summaries that failed read as
    /// placeholders (``CachedEntries/isUsable``), which would make the
    /// group's entries look added to the change set: then the view is
    /// dropped with its cache file, and the states are read from the vault
    /// file's frames the view reflected (`0..<frameCount`, the bytes this
    /// handle had read), as a full read of that file gives them. Under the
    /// lock.
    func baselineStates(of view: CachedEntries) -> [EntryID: EntryChange.State] {
        let states = view.states
        guard dropCachedViewIfFailed(view) else { return states }
        var prefix = EntryIndex()
        Self.absorb(file: file, into: &prefix, frames: 0..<view.frameCount, retain: false, kinds: [.entryRevision])
        return prefix.states
    }

    /// The journal profile's clock: from the entry index when it is
    /// loaded, else from the profile records alone (a cached view holds
    /// none). Under the lock.
    func currentProfileClock() -> HybridLogicalClock? {
        if let index { return index.profile?.clock }
        // The same choice as the index (records.md §5): standing, then clock.
        var best: (profile: Profile, standing: Int)?
        _ = file.forEachRecord(kinds: [.profile], in: nil) { record in
            let standing = record.standing
            if let p = try? Profile(decoding: record.payload, location: record.frame.location),
                Profile.replaces(p, standing: standing, current: best?.profile, standing: best?.standing ?? 0)
            {
                best = (p, standing)
            }
            return true
        }
        return best?.profile.clock
    }

    /// When the path names a new file that starts with every byte this
    /// handle committed-read (a sync tool's rename of a copy that only grew,
    /// the usual way another device's change arrives), and holds no new
    /// keyring: switches to it and reads only the frames after them, with
    /// the refresh's change set noting the replacement. The new file is
    /// scanned and its commits verified as an open does, and the old
    /// commits must keep their verdicts; false (nothing changed) for
    /// anything else, which ``reload()`` handles. Under the lock.
    func adoptReplacement() throws(QuireError) -> Bool {
        guard index != nil || indexCache?.view != nil else { return false }
        let old = file
        let before = old.structure
        let reopened: VaultFile
        do throws(FormatError) { reopened = try VaultFile(path: old.path, writable: old.isWritable) } catch { throw .format(error) }
        // Only another file at the path: the one read may have been
        // extended in place by readAppended (new keys, a fork) already.
        guard let oldIdentity = old.fileIdentity, let newIdentity = reopened.fileIdentity, oldIdentity != newIdentity else { return false }
        let after = reopened.structure
        guard after.header.vaultID == before.header.vaultID, after.committedEnd >= before.committedEnd,
            after.committedFrameCount >= before.committedFrameCount, after.groups.count >= before.groups.count
        else { return false }
        let tail = before.committedFrameCount..<after.committedFrameCount
        guard !tail.contains(where: { after.frames.kind(at: $0) == .keyring }) else { return false }
        do throws(FormatError) {
            guard try old.hasSamePrefix(as: reopened, byteCount: before.committedEnd) else { return false }
        } catch {
            throw .format(error)
        }
        let keys = try Self.unlock(reopened, with: credential)
        // The same bytes and keys give the old commits the same verdicts,
        // unless a later commit changed them (one chaining from a commit
        // that did not verify makes it tampered).
        let oldStatuses = old.commitStatuses
        guard reopened.commitStatuses.prefix(oldStatuses.count).elementsEqual(oldStatuses) else { return false }
        if refreshLog.keysBefore == nil { refreshLog.keysBefore = KeySummary(unlocked, vaultID: vaultID) }
        refreshLog.replaced = true
        currentKeys = keys
        currentFile = reopened
        if index == nil { try followWithCachedView() } else { absorb(tail) }
        return true
    }

    /// Notes, before other writers' records are indexed, the state of the
    /// entry they touch (``refresh()`` reports it).
    func noteBeforeAbsorbing(_ id: EntryID, in index: EntryIndex) {
        guard refreshLog.started, refreshLog.before.index(forKey: id) == nil else { return }
        refreshLog.before[id] = .some(EntryChange.State(id, in: index))
    }

    /// Keeps what a refresh compares against before ``reload()`` drops the
    /// index and the keys (the caller holds the lock).
    func noteReloading(onto reopened: VaultFile) {
        guard refreshLog.started else { return }
        if refreshLog.keysBefore == nil { refreshLog.keysBefore = KeySummary(unlocked, vaultID: vaultID) }
        if let identity = file.fileIdentity, identity != reopened.fileIdentity { refreshLog.replaced = true }
        if file.structure.committedEnd > reopened.structure.fileSize { refreshLog.replaced = true }
        guard refreshLog.baseline == nil else { return }
        var baseline: [EntryID: EntryChange.State]
        if let index { baseline = index.states } else if let view = indexCache?.view { baseline = baselineStates(of: view) } else { return }
        for (id, state) in refreshLog.before { baseline[id] = state }
        refreshLog.baseline = baseline
        refreshLog.before = [:]
    }

    /// The unread records among `issues` (met reading frames `range`) and
    /// the failed attestations of the commits that hold them, not said yet.
    private func newlyUnread(issues: [FormatError], groupsOf range: Range<Int>) -> [UnreadRecords.Record] {
        var out: [UnreadRecords.Record] = []
        for e in issues {
            out.append(UnreadRecords.Record(code: e.code, offset: e.offset, frameIndex: e.location?.index, message: e.description))
        }
        let s = file.structure
        var groups: [Int] = []
        for i in range { if let g = s.groupIndex(ofFrame: i), groups.last != g { groups.append(g) } }
        for g in groups {
            guard case .failed = file.attestation(ofGroup: g) else { continue }
            out += UnreadRecords.Record.untrusted(inCommit: s.groups[g], structure: s)
        }
        return sayOnce(out)
    }

    /// `records` not said before, in file order; remembers them.
    private func sayOnce(_ records: [UnreadRecords.Record]) -> [UnreadRecords.Record] {
        var out: [UnreadRecords.Record] = []
        for r in records.sorted(by: { ($0.offset ?? 0, $0.frameIndex ?? -1) < ($1.offset ?? 0, $1.frameIndex ?? -1) })
        where refreshLog.saidUnread.insert(RefreshLog.UnreadKey(r)).inserted {
            out.append(r)
        }
        return out
    }

    /// The change set since the last refresh, and a fresh log (the caller
    /// holds the lock; the index is brought up to date here).
    private func changeSet() -> VaultChangeSet {
        let log = refreshLog
        refreshLog = RefreshLog(started: true, saidUnread: log.saidUnread)
        var changes: [EntryChange] = []
        let unread: [UnreadRecords.Record]
        if index == nil, log.baseline == nil, let view = indexCache?.view {
            // Answered from the cached view: what the tail changed.
            for (id, before) in log.before {
                let after = view.state(of: id)
                if before != after { changes.append(EntryChange(id: id, before: before, after: after)) }
            }
            let frames = file.structure.committedFrameCount
            unread = newlyUnread(issues: [], groupsOf: min(log.frames, frames)..<frames)
            let profile = currentProfileClock()
            refreshLog.profile = profile
            refreshLog.issues = 0
            refreshLog.frames = frames
            return finishChangeSet(log: log, changes: changes, unread: unread, profileChanged: log.profile != profile)
        }
        guard let index = try? loadIndex() else { return VaultChangeSet() }
        if let baseline = log.baseline {
            // Reloaded since: compare every entry.
            let now = index.states
            for (id, after) in now where baseline[id] != after { changes.append(EntryChange(id: id, before: baseline[id], after: after)) }
            for (id, before) in baseline where now[id] == nil { changes.append(EntryChange(id: id, before: before, after: nil)) }
            unread = sayOnce(makeUnreadRecords(index.issues).records)
        } else {
            for (id, before) in log.before {
                let after = EntryChange.State(id, in: index)
                if before != after { changes.append(EntryChange(id: id, before: before, after: after)) }
            }
            let frames = file.structure.committedFrameCount
            unread = newlyUnread(
                issues: Array(index.issues[min(log.issues, index.issues.count)...]), groupsOf: min(log.frames, frames)..<frames)
        }
        let profileChanged = log.profile != index.profile?.clock
        refreshLog.profile = index.profile?.clock
        refreshLog.issues = index.issues.count
        refreshLog.frames = file.structure.committedFrameCount
        return finishChangeSet(log: log, changes: changes, unread: unread, profileChanged: profileChanged)
    }

    /// The change set of `changes` and `unread`, with the keys and the
    /// uncommitted tail compared against `log` (the caller holds the lock).
    private func finishChangeSet(
        log: RefreshLog, changes: [EntryChange], unread: [UnreadRecords.Record], profileChanged: Bool
    ) -> VaultChangeSet {
        var keys: KeysChange?
        if let old = log.keysBefore {
            let new = KeySummary(unlocked, vaultID: vaultID)
            if old != new {
                let oldKeys = Set(old.members.map(\.publicKey))
                let newKeys = Set(new.members.map(\.publicKey))
                keys = KeysChange(
                    epochBefore: old.epoch, epochAfter: new.epoch, headsBefore: old.heads, headsAfter: new.heads,
                    membersAdded: new.members.filter { !oldKeys.contains($0.publicKey) },
                    membersRemoved: old.members.filter { !newKeys.contains($0.publicKey) },
                    thisCredentialRemoved: new.removed && !old.removed)
            }
        }
        var tail: UncommittedTail?
        if let t = file.uncommittedTail { tail = UncommittedTail(offset: t.offset, byteCount: t.byteCount) }
        refreshLog.saidTail = tail
        if tail == log.saidTail { tail = nil }
        rememberIfNotRolledBack()
        return VaultChangeSet(
            entries: changes, keys: keys, profileChanged: profileChanged, unreadRecords: unread, uncommittedTail: tail,
            fileReplaced: log.replaced)
    }
}
