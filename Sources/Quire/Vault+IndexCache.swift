@_spi(Crypto) import QuireCrypto
@_spi(Format) import QuireFormat
@_spi(Format) import QuireKeys
import QuireSystem

/// The device-local index cache as an open handle uses it
/// (`Spec/index-cache.md §5`); guarded by the vault's lock.
struct IndexCacheBinding: Sendable {
    let key: IndexCacheKey
    let folder: String
    /// The identity of the cache file as this handle last loaded or wrote
    /// it, and whether that file holds the search index: a cache of the
    /// same state is not written again.
    var current: IndexCache.Identity?
    var currentHasSearch = false
    /// What queries answer from while the entry index is not loaded.
    var view: CachedEntries?
    /// True once the cache file was loaded (or found unusable): it is
    /// loaded at the first query, so that an open that only writes or
    /// reads everything anyway does not pay for it.
    var loadAttempted = false
    /// True once this handle rewrote the cache file because a row group of
    /// the frame table it opened from was not used (so it is not rewritten
    /// again for the same refusal).
    var rewroteRefusedTable = false
}

/// The entries as a loaded cache and the records read after it describe
/// them: what ``Vault/entries(matching:after:)`` and ``Vault/search(_:matching:after:)``
/// answer from before anything loads the entry index.
struct CachedEntries: Sendable {
    /// The identity of the cache file it was loaded from (its search part
    /// is loaded from the same file, when a search asks for it).
    let identity: IndexCache.Identity
    /// How many entries that file held: slots `0..<cachedCount` are its
    /// rows, in its order; later slots were added from the tail.
    let cachedCount: Int
    /// The frames it reflects: `0..<frameCount`.
    var frameCount: Int
    /// The cache file's entries, slots `0..<cachedCount`, decoded when
    /// read (``entry(_:)``).
    let cached: PackedSummaries
    /// The entries the tail changed among those, by slot.
    private var changed: [Int32: IndexCache.Entry] = [:]
    /// The entries the tail added: slots from `cachedCount` on.
    private var added: [IndexCache.Entry] = []
    var table: EntrySummaryTable
    /// Loaded at the first search.
    var search: SearchIndex?
    /// The search documents of the entries the tail added or changed, by
    /// slot (nil: deleted), until ``search`` is loaded.
    var tailDocuments: [(slot: Int32, document: SearchIndex.Document?)] = []

    /// False once a row group of the cache file's summaries did not read,
    /// authenticate or check when a query first read a row in it (its rows
    /// then read as placeholders): whatever was read through the view
    /// since must be dropped with it (``Vault/dropCachedViewIfFailed(_:)``).
    /// Likewise once a posting list of its search index, decoded when a
    /// search first read it, did not check (``SearchIndex/isDamaged``).
    var isUsable: Bool { cached.failure == nil && search?.isDamaged != true }

    init(identity: IndexCache.Identity, cached: PackedSummaries, table: EntrySummaryTable) {
        self.identity = identity
        cachedCount = cached.count
        frameCount = identity.frameCount
        self.cached = cached
        self.table = table
    }

    /// The number of slots with an entry: `0..<entryCount`.
    var entryCount: Int { cachedCount + added.count }

    /// The entry in `slot` (below ``entryCount``).
    func entry(_ slot: Int32) -> IndexCache.Entry {
        let i = Int(slot)
        if i >= cachedCount { return added[i - cachedCount] }
        return changed[slot] ?? cached.entry(i)
    }

    /// Replaces the entry in `slot` (below ``entryCount``).
    mutating func replace(_ slot: Int32, with entry: IndexCache.Entry) {
        let i = Int(slot)
        if i >= cachedCount { added[i - cachedCount] = entry } else { changed[slot] = entry }
    }

    /// Adds an entry in slot ``entryCount``.
    mutating func append(_ entry: IndexCache.Entry) { added.append(entry) }

    /// Every entry the view holds whose winning head (the highest
    /// standing of its heads) is in a commit that verifies.
    var verifiedEntryIDs: Set<EntryID> {
        var out = Set<EntryID>(minimumCapacity: entryCount)
        for slot in table.order {
            let summary = table.summary(slot)
            if summary.standing >= 1 { out.insert(summary.id) }
        }
        return out
    }

    /// Every entry's state.
    var states: [EntryID: EntryChange.State] {
        var out: [EntryID: EntryChange.State] = [:]
        out.reserveCapacity(entryCount)
        for slot in table.order {
            let id = table.summary(slot).id
            if let s = state(of: id) { out[id] = s }
        }
        return out
    }

    /// The state of entry `id` (``EntryChange/State``); nil when the view
    /// does not hold it (the vault has no revision of it).
    func state(of id: EntryID) -> EntryChange.State? {
        guard let slot = table.slot(of: id) else { return nil }
        let e = entry(slot)
        // The order EntryIndex.heads(of:) gives: the highest standing, then
        // the greatest clock, then the greater revision id.
        let others = e.otherHeads.sorted { a, b in
            EntryIndex.winsOver(
                Int(a.standing), HybridLogicalClock(rawValue: a.clock), a.revision, Int(b.standing), HybridLogicalClock(rawValue: b.clock),
                b.revision)
        }
        return EntryChange.State(winner: e.revision, isDeleted: e.summary.isDeleted, conflictingHeads: others.map(\.revision))
    }
}

extension Vault {
    /// Sets up this device's index cache of the vault in `folder`; the
    /// first query loads it, and queries then answer from it until
    /// something needs every revision. A device this vault removed, or that a newer epoch left
    /// out (it cannot read it: rekeyed away), deletes its cache instead.
    /// Stale temporary files a killed writer left are removed. At open,
    /// before the handle is shared.
    func attachIndexCache(device: DeviceIdentity, folder: String) {
        lock.withLock {
            guard let key = try? IndexCacheKey(device: device, vaultID: vaultID) else { return }
            IndexCache.removeStaleTemporaries(folder: folder, key: key)
            if unlocked.removedIn != nil || unlocked.isBehind || unlocked.unreadableNewerEpoch != nil {
                IndexCache.remove(folder: folder, key: key)
                return
            }
            indexCache = IndexCacheBinding(key: key, folder: folder)
        }
    }

    /// The vault file at `path` opened from the frame table of this
    /// device's index cache in `folder`, scanning only the bytes after the
    /// prefix it covers (`Spec/index-cache.md §5`, ``VaultFile/open(path:writable:cachedPrefix:frameCount:committedLength:chainHead:commitsDigest:)``
    /// says what is checked), with the keyring heads the cache was written
    /// under; nil when there is no cache, it holds no frame table, or the
    /// file does not extend it: the caller scans the file whole.
    static func openFromIndexCache(
        path: String, writable: Bool, device: DeviceIdentity, folder: String
    ) -> (file: VaultFile, keyringHeads: [KeyringID])? {
        guard let raw = try? SystemFile(path: path, mode: .readOnly).read(count: FileHeader.byteCount, at: 0),
            raw.count == FileHeader.byteCount, let (header, damage) = try? FileHeader.parse(raw), damage == .none,
            let key = try? IndexCacheKey(device: device, vaultID: header.vaultID)
        else { return nil }
        let load = IndexCache.loadFrameTable(folder: folder, key: key, vaultID: header.vaultID)
        if case .failure(let why) = load, why != .missing {
            // A frame table that does not open — its directory damaged, the
            // file cut or extended past its row groups, an unknown version —
            // is discarded (`Spec/index-cache.md §5`): the summaries and
            // index, sealed apart, may still load, so nothing else would
            // replace the file, and every open would scan the vault whole
            // (crypto review of session 41, F2). Removed, the next full
            // read writes a new one.
            IndexCache.remove(folder: folder, key: key)
        }
        guard case .success(let found) = load, var table = found.table else { return nil }
        // A row group that does not open (damaged, moved, another file's) is
        // not used, and its frames are read from the vault file; the cache
        // file is removed too, so that it is not refused again at every
        // open: the next full read writes a new one (F2).
        let loadGroup = table.load
        table.load = { g in
            let group = loadGroup(g)
            if group == nil { IndexCache.remove(folder: folder, key: key) }
            return group
        }
        let id = found.identity
        let opened = VaultFile.open(
            path: path, writable: writable, cachedPrefix: table, frameCount: id.frameCount, committedLength: id.committedLength,
            chainHead: id.chainHead, commitsDigest: id.commitsDigest)
        guard case .opened(let file) = opened, file.vaultID == header.vaultID else { return nil }
        return (file, id.keyringHeads)
    }

    /// Scans the vault file whole when this handle's file was opened from
    /// a cached prefix structure: for a path that checks or copies every
    /// byte (verify, merge). Under the lock.
    func scanWholeFileIfCachedPrefix() throws(QuireError) {
        guard currentFile.cachedPrefixFrameCount > 0 else { return }
        try reloadUnjudged()
    }

    /// Loads the cache at the first query that can use it (under the lock).
    private func loadIndexCacheIfNotTried() {
        guard index == nil, let binding = indexCache, !binding.loadAttempted else { return }
        indexCache!.loadAttempted = true
        loadIndexCache()
    }

    /// The keyring heads the cache is keyed to (`Spec/index-cache.md §5` step 4).
    private var cacheKeyringHeads: [KeyringID]? {
        (try? KeyState(unlocked, vaultID: vaultID))?.heads.map(\.id)
    }

    /// True when the cache may be used or written: this credential reads
    /// every epoch, nothing suspects a rollback, and every commit verified
    /// (a file with anything to report is read whole, so that every
    /// verdict comes from the file).
    private var cacheable: Bool {
        unlocked.removedIn == nil && !unlocked.isBehind && unlocked.unreadableNewerEpoch == nil && rollbackRefusal == nil
            && file.everyCommitVerified && file.fatalCriticalKind == nil
    }

    /// Loads the cache file and reads the tail after it into
    /// ``IndexCacheBinding/view``; on any discard, removes the file (the
    /// next full read writes a new one) and leaves no view. Under the lock.
    private func loadIndexCache() {
        guard var binding = indexCache, index == nil else { return }
        binding.view = nil
        indexCache = binding
        guard cacheable, let heads = cacheKeyringHeads else { return }
        let structure = file.structure
        let verified = file.cachedPrefixCommitsDigest.map { (frameCount: file.cachedPrefixFrameCount, commitsDigest: $0) }
        // The summaries' row groups are opened when a query reads a row in
        // them: a page of the newest entries opens the last one or two.
        let load = IndexCache.load(folder: binding.folder, key: binding.key, vaultID: vaultID, search: false, checkEveryRow: false) {
            $0.check(against: structure, keyringHeads: heads, verifiedPrefix: verified)
        }
        let contents: IndexCache.Contents
        switch load {
        case .loaded(let c): contents = c
        case .discarded(let why):
            if why != .missing { IndexCache.remove(folder: binding.folder, key: binding.key) }
            return
        }
        // The newest row group of the summaries now, which a first page
        // reads anyway: a cache whose newest rows do not check is
        // discarded here, before any query uses it.
        guard let packed = contents.packed, packed.groups.isEmpty || packed.open(group: packed.groups.count - 1) == nil,
            let table = contents.makeTable()
        else {
            IndexCache.remove(folder: binding.folder, key: binding.key)
            return
        }
        binding.current = contents.identity
        binding.currentHasSearch = false
        var view = CachedEntries(identity: contents.identity, cached: packed, table: table)
        var ignored: [EntryID: EntryChange.State?] = [:]
        guard advance(&view, changed: &ignored) else {
            if !view.isUsable {
                // Removed by advance: the full read writes a new one.
                binding.current = nil
            }
            indexCache = binding
            return
        }
        binding.view = view
        indexCache = binding
        rememberNewestFromCachedView()
        rewriteIndexCacheIfTailLong()
    }

    /// Rewrites the cache file from the cached view when the tail read
    /// after it holds at least ``IndexCache/tailFramesBeforeRewrite``
    /// frames (`Spec/index-cache.md §8`): writers (`quire add`) never load
    /// the view and never pay for it; the first query after many of them
    /// folds their tail into the cache, so that later opens scan and read
    /// a short tail again. The search part is carried over from the file
    /// the view was loaded from, with the tail's documents added. Best
    /// effort, under the lock, only when the file has nothing to report.
    private func rewriteIndexCacheIfTailLong() {
        guard var binding = indexCache, var view = binding.view, index == nil, cacheable else { return }
        let s = file.structure
        guard s.committedFrameCount - view.identity.frameCount >= IndexCache.tailFramesBeforeRewrite, file.commitIssues.isEmpty,
            let heads = cacheKeyringHeads, let identity = IndexCache.Identity(committedIn: s, keyringHeads: heads),
            binding.current != identity
        else { return }
        if view.search == nil {
            guard let loaded = withCachedSearch(view) else { return }
            view = loaded
            binding.view = view
            indexCache = binding
        }
        // Every posting list is stored again: each checked first (a
        // damaged one fails the view, dropped below).
        view.search?.decodeAllLists()
        let table = view.table
        let entries = view
        var contents = IndexCache.Contents(vaultID: vaultID, identity: identity, table: table, search: view.search) { summary in
            guard let slot = table.slot(of: summary.id) else { return nil }
            let e = entries.entry(slot)
            return (e.revision, e.frameOffset, e.clock, e.otherHeads, e.revisionCount)
        }
        // Every row was read: a row group that failed leaves placeholders,
        // never written.
        if dropCachedViewIfFailed(view) { return }
        contents.frameTable = PrefixFrameTable(of: s, frameCount: identity.frameCount)
        guard (try? IndexCache.write(contents, key: binding.key, folder: binding.folder, random: random)) != nil else { return }
        binding.current = identity
        binding.currentHasSearch = true
        indexCache = binding
    }

    /// Reads the committed frames after those `view` reflects into it.
    /// New entries are added; an entry the view holds is changed when the
    /// tail holds one revision of it whose parents are exactly the heads
    /// the view holds (an edit or deletion of what was shown: it becomes
    /// the single head, when a current member attested it). False (the view
    /// is then unusable) for any other change to an entry the view holds (a
    /// conflict, a revision from an older base, one no current member
    /// attested), when a record does not read, or when a commit does not
    /// verify or its attestation fails: the entry index, read whole, says
    /// those. `changed` gets each touched entry's state before.
    private func advance(_ view: inout CachedEntries, changed: inout [EntryID: EntryChange.State?]) -> Bool {
        let s = file.structure
        let frames = view.frameCount..<s.committedFrameCount
        guard !frames.isEmpty else { return true }
        guard cacheable else { return false }
        var tail = EntryIndex()
        Self.absorb(file: file, into: &tail, frames: frames, retain: true)
        guard tail.issues.isEmpty else { return false }
        var groups: [Int] = []
        for i in frames { if let g = s.groupIndex(ofFrame: i), groups.last != g { groups.append(g) } }
        for g in groups { if case .failed = file.attestation(ofGroup: g) { return false } }
        var changes: [(id: EntryID, summary: EntrySummary?)] = []
        var added: [(entry: IndexCache.Entry, document: SearchIndex.Document?, existing: Int32?)] = []
        var before: [(EntryID, EntryChange.State?)] = []
        var offsets = UTCOffsets()
        for (id, list) in tail.revisions {
            let heads = tail.heads(of: id)
            guard let w = heads.first, let revision = w.revision else { return false }
            let existing = view.table.slot(of: id)
            var revisionCount = list.count
            if let existing {
                let old = view.entry(existing)
                let held = Set([old.revision] + old.otherHeads.map(\.revision))
                // Only a revision a current member attested retires what it
                // names (merge.md §5): any other leaves a conflict, which the
                // entry index, read whole, says.
                guard list.count == 1, w.standing == 2, !held.contains(w.revisionID), Set(revision.parents) == held,
                    revision.parents.count == held.count
                else {
                    return false
                }
                revisionCount = old.revisionCount + 1
            }
            before.append((id, view.state(of: id)))
            let summary = EntrySummary(
                id: id, winner: revision, frame: w.frame, headCount: heads.count, standing: w.standing, offsets: &offsets)
            changes.append((id, summary))
            let entry = IndexCache.Entry(
                summary: summary, revision: w.revisionID, frameOffset: s.frames.location(at: w.frame).offset, clock: w.clock.rawValue,
                otherHeads: heads.dropFirst().map { Self.cacheHead($0, structure: s) }, revisionCount: revisionCount)
            added.append((entry, revision.isDeleted ? nil : SearchIndex.Document(revision.body), existing))
        }
        let slots = view.table.apply(changes)
        for (slot, new) in zip(slots, added) {
            guard let slot else { return false }
            if let existing = new.existing {
                guard slot == existing else { return false }
                view.replace(slot, with: new.entry)
            } else {
                guard Int(slot) == view.entryCount else { return false }
                view.append(new.entry)
                // A new entry that is deleted has no document to add.
                if new.document == nil { continue }
            }
            if view.search != nil { view.search!.apply([(slot, new.document)]) } else { view.tailDocuments.append((slot, new.document)) }
        }
        // An id looked up in a row group that failed reads as absent.
        if dropCachedViewIfFailed(view) { return false }
        for (id, state) in before where changed.index(forKey: id) == nil { changed[id] = .some(state) }
        view.frameCount = s.committedFrameCount
        observe(tail.maxClock)
        return true
    }

    /// A head as the cache stores it.
    private static func cacheHead(_ h: RevisionSummary, structure s: VaultStructure) -> IndexCache.Head {
        IndexCache.Head(
            revision: h.revisionID, clock: h.clock.rawValue, standing: UInt8(h.standing), frame: h.frame,
            frameOffset: s.frames.location(at: h.frame).offset)
    }

    /// Brings the cached view up to the file after this handle committed
    /// (or read other writers' commits); drops it when it cannot follow.
    /// Under the lock.
    func advanceCachedView() {
        var ignored: [EntryID: EntryChange.State?] = [:]
        advanceCachedView(changed: &ignored)
    }

    /// ``advanceCachedView()``, noting in `changed` the state before of
    /// each entry the new frames touched (kept when already noted); false
    /// when there is no view after it. Under the lock.
    @discardableResult
    func advanceCachedView(changed: inout [EntryID: EntryChange.State?]) -> Bool {
        guard index == nil, var view = indexCache?.view else { return false }
        indexCache!.view = nil
        guard advance(&view, changed: &changed) else { return false }
        indexCache!.view = view
        return true
    }

    /// The cached view when queries answer from it (no entry index
    /// loaded), after loading the cache if no query did yet. Under the lock.
    func currentCachedView() -> CachedEntries? {
        loadIndexCacheIfNotTried()
        guard index == nil else { return nil }
        return indexCache?.view
    }

    /// Drops the cached view: the entry index, read whole, answers from now on.
    func dropCachedView() {
        indexCache?.view = nil
    }

    /// When a row group of `view`'s summaries failed (``CachedEntries/isUsable``):
    /// drops the cached view, removes the cache file and forgets that this
    /// handle loaded it, so that the entry index, read whole, answers and
    /// writes a new one; true then. What was read through the view since
    /// must not be used. Under the lock.
    @discardableResult
    func dropCachedViewIfFailed(_ view: CachedEntries) -> Bool {
        guard !view.isUsable else { return false }
        indexCache?.view = nil
        removeIndexCacheFile()
        return true
    }

    /// Removes this handle's cache file and forgets that it loaded it, so
    /// that the next full read writes a new one. Under the lock.
    private func removeIndexCacheFile() {
        guard let binding = indexCache else { return }
        IndexCache.remove(folder: binding.folder, key: binding.key)
        indexCache!.current = nil
        indexCache!.currentHasSearch = false
    }

    /// When a record of the prefix this handle took from the index cache's
    /// frame table fails to read (`issues`, from reading every record), the
    /// file changed under the cache: the table holds identities the file no
    /// longer has, so the commits that hold them would verify from the table
    /// where a read of the file finds them mismatches (`Spec/index-cache.md
    /// §5`, trial of stop 39, F1). Removes the cache file, scans the file
    /// whole and evaluates its keys again, as ``reload()`` does; true then,
    /// and the caller reads every record again. False when nothing of the
    /// cached prefix failed, or the file cannot be opened again (the
    /// answers then stay those of the first read). Under the lock.
    func rescanIfTheCachedPrefixFailed(_ issues: [FormatError]) -> Bool {
        let prefix = file.cachedPrefixFrameCount
        guard prefix > 0, issues.contains(where: { ($0.location?.index ?? Int.max) < prefix }) else { return false }
        removeIndexCacheFile()
        let reopened: VaultFile
        let keys: UnlockedKeys
        do {
            reopened = try VaultFile(path: file.path, writable: file.isWritable)
            keys = try Self.unlock(reopened, with: credential)
        } catch {
            return false
        }
        noteReloading(onto: reopened)
        currentKeys = keys
        currentFile = reopened
        return true
    }

    /// True while queries answer from the cache (no entry index loaded).
    /// For tests and benchmarks.
    package var answersFromIndexCache: Bool {
        lock.withLock {
            loadIndexCacheIfNotTried()
            return index == nil && indexCache?.view != nil
        }
    }

    /// How many row groups of the cached view's summaries were opened so
    /// far, and how many the cache file holds; nil when queries do not
    /// answer from the cache. For tests and benchmarks.
    package var cachedSummaryGroupLoads: (opened: Int, groups: Int)? {
        lock.withLock {
            guard index == nil, let view = indexCache?.view else { return nil }
            return (view.cached.loadedGroupCount, view.cached.groups.count)
        }
    }

    /// How many times the cached view's id part was opened so far (0 or
    /// 1); nil when queries do not answer from the cache. For tests.
    package var cachedSummaryIDPartLoads: Int? {
        lock.withLock {
            guard index == nil, let view = indexCache?.view else { return nil }
            return view.cached.idPartLoadCount
        }
    }

    /// The ids of the live entries between `lowest` and `highest`
    /// (bytewise, both included) that `matches` accepts, oldest first (as
    /// ``entries()`` orders them), from the cached view; nil when the
    /// handle does not answer from the cache. A loaded cache's ids are
    /// looked up in its id part, and only the row groups of the rows in
    /// the range are opened. For the CLI's id prefixes.
    ///
    /// A row the cache marks deleted that `matches` accepts is left out
    /// only once its winning record — the deletion — reads as the cache
    /// describes it: a lookup by id reads that one record, so a deletion
    /// damaged after the cache was written (the entry then live, with a
    /// warning, in a full read) is not hidden without one
    /// (`Spec/index-cache.md §5`, "Reading through it"; crypto review of
    /// session 41, F1). When it does not read, the view is dropped and nil
    /// returned: the caller reads every entry.
    package func cachedLiveEntryIDs(from lowest: EntryID, through highest: EntryID, where matches: (EntryID) -> Bool) -> [EntryID]? {
        lock.withLock { () -> [EntryID]? in
            loadIndexCacheIfNotTried()
            guard index == nil, let view = indexCache?.view else { return nil }
            var out: [EntryID] = []
            var deleted: [IndexCache.Entry] = []
            for slot in view.table.slots(withIDsIn: IDKey(lowest)...IDKey(highest)) {
                let (id, isDeleted) = view.table.idAndDeletion(slot)
                guard matches(id) else { continue }
                if isDeleted { deleted.append(view.entry(slot)) } else { out.append(id) }
            }
            if dropCachedViewIfFailed(view) { return nil }
            if !deleted.isEmpty {
                guard let read = cachedSnapshots(deleted), read.allSatisfy(\.isDeleted) else {
                    dropCachedView()
                    return nil
                }
            }
            return out
        }
    }

    /// The live entries whose folded text may hold each of `foldedTerms`
    /// as a substring, oldest first (as ``entries()`` orders them), read
    /// through the cached view: a superset of those whose text, tags,
    /// journal, place, weather or attachment names, folded as Foundation
    /// folds (`folding(options: [.caseInsensitive, .diacriticInsensitive,
    /// .widthInsensitive])`, lowercased), hold every term, found from the
    /// cache's search index without reading the others' records
    /// (`Spec/index-cache.md §1`, "The search index and substring search").
    /// For `quire search`.
    ///
    /// Nil when the handle does not answer from the cache, the cache holds
    /// no search index, no term has a run or a CJK character the index can
    /// narrow by, or a record does not read as the cache says (the view is
    /// then dropped: read through ``entries()``).
    package func cachedLiveEntries(mayContain foldedTerms: [String]) -> [EntrySnapshot]? {
        cachedCandidates(mayContain: foldedTerms) { view, slots in
            var candidates: [IndexCache.Entry] = []
            for slot in slots {
                guard !view.table.idAndDeletion(slot).isDeleted else { continue }
                candidates.append(view.entry(slot))
            }
            if dropCachedViewIfFailed(view) { return nil }
            return cachedSnapshots(candidates)
        }
    }

    /// The newest `limit` live entries whose folded text may hold each of
    /// `foldedTerms` (as ``cachedLiveEntries(mayContain:)`` finds them) and
    /// that `accept` accepts, newest first: the candidates' records are
    /// read newest first, each handed to `accept`, until `limit` are
    /// accepted, so a page of a search reads the records of its own rows
    /// and of the newer candidates `accept` turned down, not every
    /// candidate's. A candidate whose cached summary `rowMayMatch` turns
    /// down (its date, tags, journal or flags: what a page takes from the
    /// cache, `Spec/index-cache.md §5`) is not read at all; it must accept
    /// every summary of an entry `accept` would accept. For `quire search
    /// -n N`: its output is the newest N of
    /// ``cachedLiveEntries(mayContain:)``'s entries that `accept` accepts.
    ///
    /// Nil when ``cachedLiveEntries(mayContain:)`` would be (a record it
    /// reads that does not read as the cache says drops the view; one it
    /// does not reach is not read, `Spec/index-cache.md §5`). The closures
    /// are called under the vault's lock, and must not use the vault.
    package func cachedLiveEntries(
        mayContain foldedTerms: [String], newestFirst limit: Int, rowMayMatch: ((EntrySummary) -> Bool)? = nil,
        where accept: (EntrySnapshot) -> Bool
    ) -> [EntrySnapshot]? {
        cachedCandidates(mayContain: foldedTerms) { view, slots in
            var out: [EntrySnapshot] = []
            var next = slots.count - 1
            while out.count < limit && next >= 0 {
                // As many candidates as rows still wanted: each of them is
                // read whatever the others give, so none is read for nothing.
                var batch: [IndexCache.Entry] = []
                while batch.count < limit - out.count && next >= 0 {
                    let slot = slots[next]
                    next -= 1
                    if let rowMayMatch {
                        let summary = view.table.summary(slot)
                        guard !summary.isDeleted && rowMayMatch(summary) else { continue }
                    } else if view.table.idAndDeletion(slot).isDeleted {
                        continue
                    }
                    batch.append(view.entry(slot))
                }
                if dropCachedViewIfFailed(view) { return nil }
                guard let read = cachedSnapshots(batch) else { return nil }
                out += read.lazy.filter(accept)
            }
            return out
        }
    }

    /// The slots the cached search index names for `foldedTerms`, oldest
    /// first (in ``EntrySummaryTable/order``), handed with the view (its
    /// search index loaded) to `read`, under the lock; `read`'s answer,
    /// the view kept when it gives one. Nil when the handle does not
    /// answer from the cache, the cache holds no search index, or no term
    /// has anything the index narrows by (`read` is then not called); the
    /// view is dropped when `read` gives nil.
    private func cachedCandidates(
        mayContain foldedTerms: [String], _ read: (CachedEntries, [Int32]) -> [EntrySnapshot]?
    ) -> [EntrySnapshot]? {
        let segments = foldedTerms.flatMap(TextTokenizer.substringSegments(of:))
        let characters = foldedTerms.flatMap(TextTokenizer.unigramCharacters(of:))
        guard !segments.isEmpty || !characters.isEmpty else { return nil }
        return lock.withLock { () -> [EntrySnapshot]? in
            loadIndexCacheIfNotTried()
            guard index == nil, let cached = indexCache?.view else { return nil }
            indexCache!.view = nil
            guard var view = withCachedSearch(cached) else { return nil }
            let documents = view.search!.checkedDocuments(containing: segments, characters: characters)
            // A posting list that did not check: the cache is dropped, and
            // the caller reads every entry.
            if dropCachedViewIfFailed(view) { return nil }
            guard let documents else { return nil }
            // Named slots in date order, found without opening a row group.
            let slots = documents.isEmpty ? [] : view.table.order.filter { documents.contains($0) }
            guard let found = read(view, slots) else { return nil }
            indexCache!.view = view
            return found
        }
    }

    /// How many posting lists of the cached view's search index were
    /// decoded so far (each when a search first read it); nil when the
    /// handle has no cached view or has not loaded its search index. For
    /// tests.
    package var cachedSearchDecodedListCount: Int? { lock.withLock { indexCache?.view?.search?.decodedListCount } }

    /// How many sealed posting groups of the cached view's search index
    /// were opened so far (each when a list in it was first read); nil when
    /// the handle has no cached view or has not loaded its search index.
    /// For tests.
    package var cachedSearchPostingGroupLoads: Int? { lock.withLock { indexCache?.view?.search?.postingGroupLoadCount } }

    /// The number of live entries: from the cached view when the handle
    /// answers from it, else from the entries read whole. For `quire
    /// search`, which reads only some entries and says this count only
    /// when it prints it.
    ///
    /// - Throws: a container error when the entries are read whole and a
    ///   record no longer reads.
    package func liveEntryCount() throws(QuireError) -> Int {
        let cached = lock.withLock { () -> Int? in
            guard let view = currentCachedView() else { return nil }
            // From the summaries' directory (a live count a row group);
            // rows are counted only where the tail changed the view.
            let live = view.table.liveCount
            if dropCachedViewIfFailed(view) { return nil }
            return live
        }
        if let cached { return cached }
        return try entries().count
    }

    /// Builds the search index from the entries read (and writes this
    /// device's index cache with it, `Spec/index-cache.md §8`), so that the
    /// next ``cachedLiveEntries(mayContain:)`` can answer: for `quire
    /// search` after it read every entry. Does nothing when the handle
    /// answers from the cache, has no cache, or reads a file it would not
    /// write a cache of (§8: something to report), where the index would
    /// be built for nothing.
    ///
    /// - Throws: a container error for a record that no longer reads.
    package func prepareSearchIndex() throws(QuireError) {
        try lock.withLock { () throws(QuireError) in
            guard let index, index.issues.isEmpty, indexCache != nil, cacheable else { return }
            try prepareQueryIndexes(search: true)
        }
    }

    /// Entry `id` as it stands, read through the cached view; nil when the
    /// handle does not answer from the cache, the entry is not in it, or
    /// its record does not read as the cache says (the view is then
    /// dropped: read it through ``entries()``).
    package func cachedSnapshot(of id: EntryID) -> EntrySnapshot? {
        lock.withLock { () -> EntrySnapshot? in
            if case .found(let snapshot) = cachedLookup(id) { return snapshot }
            return nil
        }
    }

    /// What the cached view says of entry `id`.
    enum CachedLookup {
        /// The handle does not answer from the cache (or the record did
        /// not read as the cache says: the view is dropped).
        case unavailable
        /// The vault has no revision of it.
        case absent
        case found(EntrySnapshot)
    }

    /// Entry `id` read through the cached view (``cachedSnapshot(of:)``),
    /// telling an entry the vault does not hold from a view that cannot
    /// answer. Under the lock.
    func cachedLookup(_ id: EntryID) -> CachedLookup {
        guard let view = currentCachedView() else { return .unavailable }
        let slot = view.table.slot(of: id)
        let entry = slot.map { view.entry($0) }
        if dropCachedViewIfFailed(view) { return .unavailable }
        guard let entry else { return .absent }
        guard let snapshot = cachedSnapshot(entry) else {
            dropCachedView()
            return .unavailable
        }
        return .found(snapshot)
    }

    /// One page of `query` (of the entries whose text holds `text`, when
    /// given) answered from the cached view; nil when there is none, or
    /// when a record it names does not read as it describes (it is then
    /// dropped, and the caller reads the entry index). Under the lock.
    func cachedPage(_ query: EntryQuery, after cursor: EntryCursor?, searching text: String?) -> EntryPage? {
        loadIndexCacheIfNotTried()
        guard index == nil, var view = indexCache?.view else { return nil }
        indexCache!.view = nil
        var documents: Bitset?
        var needsCheck: [[UInt8]] = []
        if let text {
            guard let loaded = withCachedSearch(view) else { return nil }
            view = loaded
            guard let found = view.search!.match(text) else {
                indexCache!.view = view
                return EntryPage(entries: [], next: nil)
            }
            documents = found.documents
            needsCheck = found.needsCheck
        }
        var failed = false
        var checked: [Int32: EntrySnapshot] = [:]
        let (slots, more): ([Int32], Bool)
        if needsCheck.isEmpty {
            (slots, more) = view.table.page(query, after: cursor, documents: documents)
        } else {
            // Long CJK runs: check each candidate's text, reading bodies
            // only until the page is full.
            var search = view.search!
            (slots, more) = view.table.page(query, after: cursor, documents: documents) { slot in
                guard !failed, let snapshot = self.cachedSnapshot(view.entry(slot)) else {
                    failed = true
                    return false
                }
                checked[slot] = snapshot
                return search.contains(needsCheck, in: SearchIndex.Document(snapshot.body))
            }
            view.search = search
        }
        guard !failed else { return nil }
        if dropCachedViewIfFailed(view) { return nil }
        var rows: [EntrySnapshot] = []
        rows.reserveCapacity(slots.count)
        for slot in slots {
            guard let snapshot = checked[slot] ?? cachedSnapshot(view.entry(slot)) else { return nil }
            rows.append(snapshot)
        }
        let next = more ? slots.last.map { EntryCursor(view.table.summary($0).key) } : nil
        if dropCachedViewIfFailed(view) { return nil }
        indexCache!.view = view
        return EntryPage(entries: rows, next: next)
    }

    /// `view` with its search index: as it is when loaded already, else
    /// ``loadCachedSearch(_:)``'s (the tail's documents then in it); nil
    /// when the cache file holds none.
    private func withCachedSearch(_ view: CachedEntries) -> CachedEntries? {
        guard view.search == nil else { return view }
        guard let search = loadCachedSearch(view) else { return nil }
        var view = view
        view.search = search
        view.tailDocuments = []
        return view
    }

    /// The search index of the cache file the view was loaded from, with
    /// the tail's documents added; nil when the file no longer is that
    /// cache or holds no search index.
    private func loadCachedSearch(_ view: CachedEntries) -> SearchIndex? {
        guard let binding = indexCache else { return nil }
        let want = view.identity
        guard
            case .loaded(let c) = IndexCache.load(
                folder: binding.folder, key: binding.key, vaultID: vaultID, search: true, checkEveryRow: false,
                lazyPostings: true, check: { $0 == want ? nil : .staleFile }),
            let packed = c.packed, packed.count == view.cachedCount, var search = c.makeSearchIndex()
        else { return nil }
        // The same summaries: the same row groups, tag for tag (their
        // directory is authenticated; none of them is opened here).
        guard packed.rowsPerGroup == view.cached.rowsPerGroup, packed.groups == view.cached.groups else { return nil }
        if !view.tailDocuments.isEmpty { search.apply(view.tailDocuments.map { ($0.slot, $0.document) }) }
        // A posting list the tail's changes decoded did not check.
        if search.isDamaged {
            removeIndexCacheFile()
            return nil
        }
        return search
    }

    /// The snapshot of a cached entry, its winning revision read from the
    /// file now; nil when that record does not read as the cache describes
    /// it (another record, another revision, another standing).
    private func cachedSnapshot(_ e: IndexCache.Entry) -> EntrySnapshot? {
        let frame = e.summary.frame
        var found: ReadRecord?
        let issues = file.forEachRecord(kinds: [.entryRevision], in: frame..<(frame + 1)) { record in
            found = record
            return false
        }
        guard issues.isEmpty, let found else { return nil }
        return cachedSnapshot(e, record: found)
    }

    /// The snapshots of cached entries `entries`, in their order, their
    /// records read in one pass over the file (``cachedSnapshot(_:)``);
    /// nil when any record does not read as the cache describes it.
    private func cachedSnapshots(_ entries: [IndexCache.Entry]) -> [EntrySnapshot]? {
        let frames = Set(entries.map(\.summary.frame)).sorted()
        var records: [Int: ReadRecord] = [:]
        records.reserveCapacity(frames.count)
        let issues = file.forEachRecord(kinds: [.entryRevision], atFrames: frames) { record in
            records[record.frame.location.index] = record
            return true
        }
        guard issues.isEmpty else { return nil }
        var out: [EntrySnapshot] = []
        out.reserveCapacity(entries.count)
        for e in entries {
            guard let record = records[e.summary.frame], let snapshot = cachedSnapshot(e, record: record) else { return nil }
            out.append(snapshot)
        }
        return out
    }

    /// The snapshot of cached entry `e` from `record`, the record read at
    /// its frame; nil when it is not the one the cache describes.
    private func cachedSnapshot(_ e: IndexCache.Entry, record: ReadRecord) -> EntrySnapshot? {
        guard record.frame.location.index == e.summary.frame, record.frame.location.offset == e.frameOffset,
            let revision = try? EntryRevision(decoding: record.payload, location: record.frame.location),
            revision.entryID == e.summary.id, revision.revisionID == e.revision, revision.clock.rawValue == e.clock
        else { return nil }
        let verified = record.commitVerified
        let attestedBy = verified ? record.attestedBy : nil
        let standing = UInt8(record.standing)
        guard standing == e.summary.standing else { return nil }
        // The order EntryIndex.heads(of:) gives: the highest standing, then
        // the greatest clock, then the greater revision id.
        let others = e.otherHeads.sorted { a, b in
            EntryIndex.winsOver(
                Int(a.standing), HybridLogicalClock(rawValue: a.clock), a.revision, Int(b.standing), HybridLogicalClock(rawValue: b.clock),
                b.revision)
        }
        return EntrySnapshot(
            id: e.summary.id, revision: revision, conflictingHeads: others.map(\.revision), revisionCount: e.revisionCount,
            isVerified: verified, attestedBy: attestedBy, attestedByRemovedMember: verified ? record.removedAttestor : nil)
    }

    /// Writes the cache of the entry index's query summaries (and search
    /// index, when built) when they reflect another state of the file than
    /// the cache this handle last loaded or wrote, and nothing in the file
    /// is to be reported. Best effort: a cache that cannot be written costs
    /// time at the next open, nothing else. Under the lock.
    func writeIndexCacheIfAdvanced() {
        guard var binding = indexCache, let index, let query = index.query, index.queryStale.isEmpty, index.issues.isEmpty, cacheable,
            let heads = cacheKeyringHeads
        else { return }
        let s = file.structure
        guard let identity = IndexCache.Identity(committedIn: s, keyringHeads: heads) else { return }
        let hasSearch = query.search != nil
        // A frame table row group this handle could not use (its frames read
        // from the vault file): the file it loaded is rewritten even when it
        // reflects this state, so later opens use a whole table again (F2).
        let tableRefused = file.cachedPrefixRowGroupLoads.file > 0 && !binding.rewroteRefusedTable
        guard binding.current != identity || (hasSearch && !binding.currentHasSearch) || tableRefused else { return }
        // Failed attestations are reported from the file; the cache keeps
        // none (every attestation is checked once, here, before it is written).
        guard file.commitIssues.isEmpty else { return }
        var contents = IndexCache.Contents(vaultID: vaultID, identity: identity, table: query.table, search: query.search) { summary in
            let heads = index.heads(of: summary.id)
            guard let w = heads.first else { return nil }
            return (
                w.revisionID, s.frames.location(at: w.frame).offset, w.clock.rawValue,
                heads.dropFirst().map { Self.cacheHead($0, structure: s) },
                index.revisions[summary.id]?.count ?? 1
            )
        }
        contents.frameTable = PrefixFrameTable(of: s, frameCount: identity.frameCount)
        guard (try? IndexCache.write(contents, key: binding.key, folder: binding.folder, random: random)) != nil else { return }
        binding.current = identity
        binding.currentHasSearch = hasSearch
        if tableRefused { binding.rewroteRefusedTable = true }
        indexCache = binding
    }
}
