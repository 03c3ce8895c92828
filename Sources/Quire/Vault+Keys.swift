@_spi(Crypto) public import QuireCrypto
@_spi(Format) public import QuireFormat
@_spi(Format) public import QuireKeys
public import QuireSystem

/// Key operations on an open vault (`Spec/keys.md §6`). Each appends one
/// keyring (written twice) in its own commit and re-reads the keys.
extension Vault {
    /// Opens the vault at `path` with this device's key from `store`.
    ///
    /// Compares the keyring heads in the file with those this device trusted
    /// last time; a missing one is reported in ``keyWarnings`` as
    /// ``KeyError/rollbackSuspected(reason:)``.
    ///
    /// - Throws: the key store's errors (``DeviceStoreError/noKey``
    ///   when the store has no key yet, or the store's read errors);
    ///   a key error (`.wrongCredential`, `.readOnly`, `.needsMerge`, `.damaged`) with
    ///   ``KeyError/wrongDeviceKey`` when this device is not enrolled;
    ///   a container error (`.damaged`, `.unavailable`, `.outOfSpace`…).
    ///
    /// `options` and `retainsEntryBodies` are as in
    /// ``open(at:credential:writable:random:options:retainsEntryBodies:)``.
    @_spi(Format)
    public static func open(
        at path: String, store: any DeviceKeyStore, writable: Bool = true, random: any RandomSource = SystemRandom(),
        options: WriteOptions = WriteOptions(), retainsEntryBodies: Bool = true
    ) throws(QuireError) -> Vault {
        try open(
            at: path, store: store, writable: writable, random: random, options: options, retainsEntryBodies: retainsEntryBodies,
            usesFrameTable: true)
    }

    /// ``open(at:store:writable:random:options:retainsEntryBodies:)``;
    /// with `usesFrameTable` false the file is scanned whole even when the
    /// index cache holds a frame table of its prefix (`Spec/index-cache.md §5`):
    /// for a caller that checks every byte next (`quire verify`), which
    /// would otherwise open from the table and then scan the file again.
    /// The cache still answers queries.
    package static func open(
        at path: String, store: any DeviceKeyStore, writable: Bool = true, random: any RandomSource = SystemRandom(),
        options: WriteOptions = WriteOptions(), retainsEntryBodies: Bool = true, usesFrameTable: Bool
    ) throws(QuireError) -> Vault {
        let identity: DeviceIdentity?
        identity = try store.load()
        guard let identity else { throw .deviceStore(.noKey) }
        let vault: Vault
        if usesFrameTable, let folder = store.indexCacheFolder,
            let (file, keyringHeads) = openFromIndexCache(path: path, writable: writable, device: identity, folder: folder)
        {
            vault = try open(
                file: file, credential: .device(identity.keyPair), random: random, options: options, retainsEntryBodies: retainsEntryBodies,
                cachedKeyringHeads: keyringHeads)
        } else {
            vault = try open(
                at: path, credential: .device(identity.keyPair), writable: writable, random: random, options: options,
                retainsEntryBodies: retainsEntryBodies)
        }
        vault.deviceStore = store
        try vault.checkRememberedHeads()
        if let folder = store.indexCacheFolder { vault.attachIndexCache(device: identity, folder: folder) }
        return vault
    }

    /// Uses `store` to remember the keyring heads this device trusts, and
    /// checks them now.
    ///
    /// - Throws: the key store's errors.
    @_spi(Format)
    public func remember(in store: any DeviceKeyStore) throws(QuireError) {
        try lock.withLock { () throws(QuireError) -> Void in
            deviceStore = store
            try checkRememberedHeads()
        }
    }

    /// Where `store` keeps this device's memory of the vault
    /// (`Spec/keys.md §3.3`): the file's canonical path for a store that
    /// keeps memory per path (``DeviceKeyStore/keepsMemoryPerPath``), else
    /// `vault:` and the vault id in lowercase hex, the same wherever the
    /// file is (an iOS app's container path changes on an app update).
    func memoryLocation(in store: any DeviceKeyStore) -> String {
        store.keepsMemoryPerPath ? (FileSystem.canonicalPath(file.path) ?? file.path) : "vault:\(vaultID)"
    }

    /// This device's memory of the vault in `store`, at
    /// ``memoryLocation(in:)``. A store that keeps memory per vault id and
    /// has none there may hold one the library wrote before memory was
    /// kept per vault id, at the file's canonical path: that one is
    /// returned (with its old path, so that the next write, which puts the
    /// location in, differs from it and moves it: the migration happens on
    /// the first open). A memory at a path the file no longer has is not
    /// found: the store must have been per vault id when that path changed.
    ///
    /// - Throws: what the store throws.
    func storedMemory(in store: any DeviceKeyStore) throws(QuireError) -> VaultMemory? {
        let location = memoryLocation(in: store)
        if let memory = try store.memory(of: vaultID, path: location) { return memory }
        guard !store.keepsMemoryPerPath else { return nil }
        return try store.memory(of: vaultID, path: FileSystem.canonicalPath(file.path) ?? file.path)
    }

    /// Warns when a remembered head is gone; otherwise remembers today's heads.
    func checkRememberedHeads() throws(QuireError) {
        guard let store = deviceStore else { return }
        let memory: VaultMemory?
        memory = try storedMemory(in: store)
        warnings.removeAll { $0.code == "rollback_suspected" }
        rollbackRefusal = nil
        replacementRefusal = nil
        if acceptedTampered == nil, let kept = memory?.acceptedTampered, holdsAcceptance(kept) { acceptedTampered = kept }
        if let memory {
            if case .device(let pair) = credential, memory.removedKey == pair.publicKey, unlocked.removedIn == nil {
                // This device saw itself removed, and the file no longer
                // shows it. Only a file that passes the rollback tests and
                // lists it as a member again (its removal was cut by rule 6)
                // re-admits it; a rolled-back file does not (Spec/keys.md §7).
                let isMember = (try? KeyState(unlocked, vaultID: vaultID))?.member(withKey: pair.publicKey) != nil
                if !isMember || rollbackReason(against: memory) != nil {
                    rollbackRefusal = "this device was removed from this vault; a copy from before the removal does not bring it back"
                    warnings.append(.rollbackSuspected(reason: rollbackRefusal!))
                    return
                }
            }
            var suspicion = rollbackReason(against: memory)
            if suspicion != nil {
                // Another process may have written the file, and remembered
                // it, after this handle read it: read the file again (it is
                // at least as new as the memory read before) and judge that.
                try reloadUnjudged()
                suspicion = rollbackReason(against: memory)
            }
            if let reason = suspicion {
                rollbackRefusal = reason
                warnings.append(.rollbackSuspected(reason: reason))
                return
            }
        }
        // Written only when what the device remembers changed (no write,
        // and no fsync, on every open); a failure to write is a warning:
        // reading the vault must not fail because this device cannot save
        // its memory (a full disk), but the user must hear that it is stale.
        do throws(QuireError) { try rememberHeads(previous: memory) } catch {
            // rememberHeads throws only what the store threw.
            noteMemoryNotSaved(error)
        }
    }

    /// Why the file looks older than what `memory` saw, or nil when it
    /// extends it or is a rewrite that kept everything (`Spec/keys.md §7`).
    func rollbackReason(against memory: VaultMemory) -> String? {
        // A remembered head is lost when it is absent from the file, or was
        // opened and is not trusted; one this credential cannot open says
        // nothing (Spec/keys.md §7).
        let byID = Dictionary(unlocked.keyrings.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        let remembered = Set(memory.keyringHeads)
        var answered = 0
        let missing = memory.keyringHeads.filter { id in
            guard let ring = byID[id] else { return true }
            guard ring.content != nil && !ring.isTrusted else { return false }
            if answersAReplacement(ring, byID: byID) {
                answered += 1
                return true
            }
            return !removalIsNews(ring, remembered: remembered, byID: byID)
        }
        if answered > 0 {
            return "a keyring signed with a recovery key that a keyring this device trusted had replaced cuts that replacement: "
                + "whoever holds the old recovery code answered it; accept this only if you did"
        }
        if !missing.isEmpty {
            return
                "\(missing.count) keyring\(missing.count == 1 ? "" : "s") this device trusted \(missing.count == 1 ? "is" : "are") missing from it"
        }
        let s = file.structure
        let extends = s.hasCommit(endingAt: memory.committedLength, storedHead: memory.chainHead)
        if extends || memory.committedLength == UInt64(FileHeader.byteCount) { return nil }
        // Rewritten (compaction, merge) or replaced: a rewrite keeps every
        // entry head, and the newest revision is always a head. A credential
        // behind the file (removed, or left out of its newest keys) cannot
        // open what a rewrite sealed under the epochs it is behind, so its
        // count says nothing: it is told it is behind instead, and it cannot
        // write (Spec/keys.md §7, test 3; trial 25, F10).
        if unlocked.unreadableNewerEpoch != nil { return nil }
        let index = try? loadIndex()
        if index?.maxClock.rawValue ?? 0 >= memory.newestClock {
            // Another history (a copy forked from an older state and
            // written to since) passes the clock test; the entries this
            // device saw newest after the fork are the ones it lacks
            // (Spec/keys.md §7, test 3). A memory an older version wrote
            // has none, and skips this.
            guard let index, !memory.newest.isEmpty else { return nil }
            let lacking = memory.newest.count { remembered in
                !(index.revisions[remembered.entry]?.contains { $0.standing == 2 && $0.clock.rawValue >= remembered.clock } ?? false)
            }
            if lacking == 0 { return nil }
            return "another history replaced it: it lacks what this device saw of \(lacking) of the \(memory.newest.count) newest entries "
                + "it remembers (a rewrite keeps every entry's heads and tombstones), so a copy forked from an older state and "
                + "written to since took the place of the one this device wrote to"
        }
        if s.committedEnd < memory.committedLength && s.fileSize < memory.committedLength {
            return "it ends at byte \(s.fileSize), before the end of what this device saw committed (byte \(memory.committedLength)): "
                + "records committed there were cut off"
        }
        return "it lacks records newer than any it holds, which this device saw"
    }

    /// True when remembered head `ring` is untrusted because rule 6 cut it
    /// or an ancestor, and some keyring that did the cutting is signed by a
    /// recovery key that one of the cut keyrings had replaced: a leaked old
    /// code answering its replacement is not news, whoever signed it
    /// (`Spec/keys.md §7`, test 1; third review, item 9).
    func answersAReplacement(_ ring: KeyringInfo, byID: [KeyringID: KeyringInfo]) -> Bool {
        func recoveryKey(_ r: KeyringInfo) -> [UInt8]? { r.content?.members.first { $0.role == "recovery" }?.publicKey }
        var cutters: [KeyringID] = []
        var replaced = Set<[UInt8]>()
        var stack = [ring.id]
        var seen = Set<KeyringID>()
        while let id = stack.popLast() {
            guard seen.insert(id).inserted, let r = byID[id], !r.isTrusted else { continue }
            if let now = recoveryKey(r) {
                for p in r.parents { if let old = byID[p].flatMap(recoveryKey), old != now { replaced.insert(old) } }
            }
            if r.cutBy.isEmpty { stack.append(contentsOf: r.parents) } else { cutters.append(contentsOf: r.cutBy) }
        }
        return cutters.contains { id in byID[id]?.signer.map { replaced.contains($0) } ?? false }
    }

    /// True when remembered head `ring` is untrusted only because rule 6 cut
    /// it or an ancestor, and every keyring that did the cutting is signed
    /// by a recovery member or descends from another remembered head that
    /// is still trusted: the removal is news, not a rollback (`Spec/keys.md
    /// §7`, test 1).
    func removalIsNews(_ ring: KeyringInfo, remembered: Set<KeyringID>, byID: [KeyringID: KeyringInfo]) -> Bool {
        var cutters: [KeyringID] = []
        var stack = [ring.id]
        var seen = Set<KeyringID>()
        while let id = stack.popLast() {
            guard seen.insert(id).inserted, let r = byID[id], !r.isTrusted else { continue }
            if r.cutBy.isEmpty { stack.append(contentsOf: r.parents) } else { cutters.append(contentsOf: r.cutBy) }
        }
        guard !cutters.isEmpty else { return false }
        func recoverySigned(_ r: KeyringInfo) -> Bool {
            let sources = r.parents.isEmpty ? [r] : r.parents.compactMap { byID[$0] }
            return sources.contains { $0.content?.members.first { $0.role == "recovery" }?.publicKey == r.signer }
        }
        func descendsFromRememberedTrusted(_ start: KeyringInfo) -> Bool {
            var stack = start.parents
            var seen = Set<KeyringID>()
            while let id = stack.popLast() {
                guard seen.insert(id).inserted, let r = byID[id] else { continue }
                if id != ring.id && remembered.contains(id) && r.isTrusted { return true }
                stack.append(contentsOf: r.parents)
            }
            return false
        }
        return cutters.allSatisfy { id in byID[id].map { recoverySigned($0) || descendsFromRememberedTrusted($0) } ?? false }
    }

    /// Remembers the file as it is now (its committed end, last head and
    /// greatest clock) after the index was built or a write committed, when
    /// the file still extends or keeps what this device remembers; a
    /// suspected rollback is left for the user (`Spec/keys.md §7`). Without
    /// this, the remembered clock stayed 0 (the index is not loaded when the
    /// vault opens) and a file cut back past commits this device saw passed
    /// the rewrite test unnoticed.
    func rememberIfNotRolledBack() {
        guard let store = deviceStore, rollbackRefusal == nil else { return }
        // Inside a commit: its own write, after it, covers this one.
        if deviceMemoryWriteDeferred { return }
        let stored: VaultMemory?
        do throws(QuireError) { stored = try storedMemory(in: store) } catch { return }
        if let memory = stored, rollbackReason(against: memory) != nil { return }
        do throws(QuireError) { try rememberHeads(previous: .some(stored)) } catch { noteMemoryNotSaved(error) }
    }

    /// Says that device memory could not be saved (`device_memory_not_saved`,
    /// `Spec/keys.md §7`): one warning, with the latest reason. Reading and
    /// a committed write go on; the user hears the memory is stale.
    func noteMemoryNotSaved(_ error: QuireError) {
        warnings.removeAll { $0.code == "device_memory_not_saved" }
        warnings.append(.deviceMemoryNotSaved(reason: error.message))
    }

    /// Where device memory ranks `ring` (`Spec/keys.md §7`): its epoch and
    /// its depth in the key graph, both fixed by signed content (fifth
    /// review, F7: a file position, even that of a copy in a member's
    /// attested commit, is one a keyless writer moves by moving groups).
    @_spi(Testing) public func memoryRank(of ring: KeyringInfo) -> VaultMemory.KeyringRank {
        let byID = Dictionary(unlocked.keyrings.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        return VaultMemory.KeyringRank(epoch: ring.epoch, depth: Self.keyGraphDepths(byID)[ring.id] ?? 0)
    }

    /// The depth of every keyring of `byID`: the length of its longest chain
    /// of parents in the file (iterative: a chain of thousands of keyrings
    /// must not exhaust the stack).
    static func keyGraphDepths(_ byID: [KeyringID: KeyringInfo]) -> [KeyringID: Int] {
        var depth: [KeyringID: Int] = [:]
        var onPath = Set<KeyringID>()
        for start in byID.keys where depth[start] == nil {
            var stack: [(KeyringID, Bool)] = [(start, false)]
            while let (id, expanded) = stack.popLast() {
                if depth[id] != nil { continue }
                let parents = byID[id]?.parents.filter { byID[$0] != nil } ?? []
                if expanded {
                    onPath.remove(id)
                    depth[id] = parents.map { depth[$0].map { $0 + 1 } ?? 0 }.max() ?? 0
                } else {
                    onPath.insert(id)
                    stack.append((id, true))
                    // A parent on the path would be a cycle, which ids that
                    // hash their parents rule out: it counts as depth 0.
                    for p in parents where depth[p] == nil && !onPath.contains(p) { stack.append((p, false)) }
                }
            }
        }
        return depth
    }

    /// The keyrings device memory keeps of this file, the first ranked
    /// first (`Spec/keys.md §7`): the trusted heads and the keyrings this
    /// credential is behind — a file that lost one of them was rolled back —
    /// at most 64.
    @_spi(Testing) public func rememberedKeyrings() -> [KeyringID] {
        guard let state = try? KeyState(unlocked, vaultID: vaultID) else { return [] }
        return rememberedKeyrings(state)
    }

    func rememberedKeyrings(_ state: KeyState) -> [KeyringID] {
        // The 64 ranked latest (keys.md §7): by epoch, then depth in the key
        // graph, then id — no file position, which a keyless writer moves.
        let byID = Dictionary(unlocked.keyrings.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        let depths = Self.keyGraphDepths(byID)
        return VaultMemory.remembered(
            (state.heads.map(\.id) + unlocked.newerKeyrings.map(\.id)).compactMap { id in
                byID[id].map { (id, VaultMemory.KeyringRank(epoch: $0.epoch, depth: depths[id] ?? 0)) }
            })
    }

    /// Writes what this device now knows of the file, unless it equals
    /// `previous` (what the store holds, when the caller read it).
    func rememberHeads(previous stored: VaultMemory?? = .none) throws(QuireError) {
        guard let store = deviceStore, let state = try? KeyState(unlocked, vaultID: vaultID) else { return }
        let path = memoryLocation(in: store)
        let s = file.structure
        let previous: VaultMemory? = if case .some(let m) = stored { m } else { try? storedMemory(in: store) }
        // What the handle read or committed, never the clock of a record
        // not committed (a commit abandoned): the memory must never get
        // ahead of the file (Spec/keys.md §7).
        let known = max(index?.maxClock.rawValue ?? 0, readClock.rawValue)
        // A device remembers finding its own key removed, for good — until a
        // file that passes the rollback tests lists it as a member again.
        var removedKey = previous?.removedKey
        if case .device(let pair) = credential {
            if unlocked.removedIn != nil {
                removedKey = pair.publicKey
            } else if removedKey == pair.publicKey && state.member(withKey: pair.publicKey) != nil {
                removedKey = nil
            }
        }
        var memory = VaultMemory(
            vaultID: vaultID, path: path, committedLength: s.committedEnd, chainHead: s.groups.last?.storedHead ?? CommitChain.genesisHead,
            newestClock: max(previous?.newestClock ?? 0, known), keyringHeads: rememberedKeyrings(state),
            removedKey: removedKey, acceptedTampered: acceptedTamperedInFile(previous), newest: previous?.newest ?? [])
        // The file as remembered: its newest entries are those remembered
        // (no pass over the entries on every open).
        if memory == previous, !memory.newest.isEmpty { return }
        memory.newest = newestEntriesSeen(previous: previous?.newest ?? [])
        if memory == previous { return }
        try store.remember(memory)
        // Carried over, neither the index nor the cached view loaded (an
        // open, before its first query): the view remembers them once it
        // is loaded (``rememberNewestFromCachedView()``).
        newestMemoryStale = index == nil && indexCache?.view == nil
    }

    /// The entries device memory keeps as `newest` (`Spec/keys.md §7`):
    /// each entry's greatest clock among its revisions of a current
    /// member's standing (attested by a current member, or by a removed
    /// member before its removal: `Spec/format.md §9.4`), as test 3 of
    /// ``rollbackReason(against:)`` counts them — from the entry index when
    /// it is loaded; else from the cached view (its heads of that
    /// standing: the newest revision is always a head); else `previous`,
    /// the memory's, with the entries this handle committed. Under the
    /// lock.
    func newestEntriesSeen(previous: [VaultMemory.NewestEntry]) -> [VaultMemory.NewestEntry] {
        var candidates: [VaultMemory.NewestEntry] = []
        if let index {
            candidates.reserveCapacity(index.revisions.count)
            for (id, list) in index.revisions {
                var best: UInt64?
                for r in list where r.standing == 2 { best = max(best ?? 0, r.clock.rawValue) }
                if let best { candidates.append(VaultMemory.NewestEntry(entry: id, clock: best)) }
            }
            return VaultMemory.newestEntries(candidates)
        }
        if let view = indexCache?.view, view.isUsable {
            candidates.reserveCapacity(view.entryCount)
            for slot in 0..<Int32(view.entryCount) {
                let e = view.entry(slot)
                var best: UInt64?
                if e.summary.standing == 2 { best = e.clock }
                for h in e.otherHeads where h.standing == 2 { best = max(best ?? 0, h.clock) }
                if let best { candidates.append(VaultMemory.NewestEntry(entry: e.summary.id, clock: best)) }
            }
            // A row group that failed as it was read gave placeholders.
            if view.isUsable { return VaultMemory.newestEntries(candidates + committedNewest) }
        }
        return VaultMemory.newestEntries(previous + committedNewest)
    }

    /// Remembers `newest` from the cached view just loaded, when device
    /// memory was written at this open (the file had changed since it was
    /// remembered) without a source for it — the index and the view not
    /// loaded, so the remembered entries were carried over. Without this, a
    /// device that only reads through its cache never remembered the
    /// entries other devices wrote, and a fork lacking them passed test 3
    /// (`Spec/keys.md §7`). Costs nothing on an unchanged file. Best
    /// effort, under the lock.
    func rememberNewestFromCachedView() {
        guard newestMemoryStale, let store = deviceStore, rollbackRefusal == nil, !deviceMemoryWriteDeferred,
            let view = indexCache?.view, view.isUsable
        else { return }
        newestMemoryStale = false
        guard var memory = try? storedMemory(in: store),
            memory.committedLength == file.structure.committedEnd, rollbackReason(against: memory) == nil
        else { return }
        let newest = newestEntriesSeen(previous: memory.newest)
        guard newest != memory.newest else { return }
        memory.newest = newest
        do throws(QuireError) { try store.remember(memory) } catch { noteMemoryNotSaved(error) }
    }

    /// The acceptance of tampered commits (this handle's, else
    /// `previous`'s) while the file still extends it: what device memory
    /// keeps (`Spec/keys.md §7`).
    func acceptedTamperedInFile(_ previous: VaultMemory?) -> VaultMemory.TamperedAcceptance? {
        guard let accepted = acceptedTampered ?? previous?.acceptedTampered, holdsAcceptance(accepted) else { return nil }
        return accepted
    }

    /// True when the file still has a commit frame ending at `accepted`'s
    /// committed end with its stored head: the file extends the state the
    /// user accepted.
    func holdsAcceptance(_ accepted: VaultMemory.TamperedAcceptance) -> Bool {
        file.structure.hasCommit(endingAt: accepted.committedLength, storedHead: accepted.chainHead)
    }

    /// True when tampered commit group `g` is covered by the user's
    /// acceptance (`Spec/keys.md §7`, "Accepting a tampered commit"): it
    /// ends at or before the accepted committed end, the file still extends
    /// the state accepted, and no more tampered commits end there than then.
    func isAcceptedTampered(_ g: Int) -> Bool {
        guard let accepted = acceptedTampered, holdsAcceptance(accepted) else { return false }
        let s = file.structure
        let covered = file.tamperedCommits.filter { s.frames.end(at: s.groups[$0].commitFrame) <= accepted.committedLength }
        return s.frames.end(at: s.groups[g].commitFrame) <= accepted.committedLength && UInt64(covered.count) <= accepted.count
    }

    /// Accepts the tampered commits this file holds (`Spec/keys.md §7`,
    /// "Accepting a tampered commit"): writing, refused with
    /// `.needsMerge` (`commit_tampered`) while the file holds a tampered commit,
    /// goes on over these — their records stay unverified, and every reader
    /// still reports them. Through a key store the device remembers the
    /// acceptance for this file as a watermark (the committed end, its
    /// stored head, how many tampered commits end there), however many
    /// commits it covers; a commit tampered later (after the watermark, or
    /// one more before it) is refused again. Use it when no copy holding
    /// the commits is left to merge back and compacting them away is not
    /// wanted.
    ///
    /// - Returns: how many tampered commits were accepted now (0 when the
    ///   file holds none, or all were accepted before).
    /// - Throws: the key store's errors.
    @discardableResult
    @_spi(Format)
    public func acceptTampered() throws(QuireError) -> Int {
        try lock.withLock { () throws(QuireError) -> Int in
            let fresh = file.tamperedCommits.filter { !isAcceptedTampered($0) }
            let s = file.structure
            if !fresh.isEmpty, let last = s.groups.last {
                acceptedTampered = VaultMemory.TamperedAcceptance(
                    committedLength: s.frames.end(at: last.commitFrame), chainHead: last.storedHead,
                    count: UInt64(file.tamperedCommits.count))
            }
            guard let store = deviceStore else { return fresh.count }
            let path = memoryLocation(in: store)
            let previous: VaultMemory?
            previous = try storedMemory(in: store)
            if var memory = previous {
                memory.acceptedTampered = acceptedTamperedInFile(previous)
                memory.path = path
                try store.remember(memory)
            } else if rollbackRefusal == nil {
                try rememberHeads(previous: .some(nil))
            }
            return fresh.count
        }
    }

    /// The recovery keys that concurrent replacements left among the keyring
    /// heads, when there is more than one (`Spec/keys.md §6.9`); empty
    /// otherwise. The next change that starts an epoch — a key change, or
    /// the join before writing records — keeps one and removes the others,
    /// and refuses with ``KeyError/recoveryKeyChoiceNeeded(_:)`` until
    /// ``keepRecoveryKey(_:)`` says which: show these to the user (who made
    /// each, and when) and ask which recovery code they hold.
    ///
    /// - Throws: a key error (`.wrongCredential`, `.readOnly`, `.needsMerge`, `.damaged`) when no keyring is trusted.
    @_spi(Format)
    public func recoveryKeyChoices() throws(QuireError) -> [RecoveryKeyChoice] {
        KeyOperations.recoveryKeyChoices(in: try keyState())
    }

    /// Says which recovery key to keep when a change joins concurrent
    /// replacements of the recovery key (one of ``recoveryKeyChoices()``, by
    /// its public key; `Spec/keys.md §6.9`). Kept for this handle.
    ///
    /// - Throws: a key error (`.wrongCredential`, `.readOnly`, `.needsMerge`, `.damaged`) with
    ///   ``KeyError/operationRefused(reason:)`` when `publicKey` is none of
    ///   the choices.
    @_spi(Format)
    public func keepRecoveryKey(_ publicKey: [UInt8]) throws(QuireError) {
        let choices = try recoveryKeyChoices()
        guard choices.contains(where: { $0.publicKey == publicKey }) else {
            throw .keys(.operationRefused(reason: "that recovery key is not one of those the concurrent replacements left"))
        }
        lock.withLock { keptRecoveryKey = publicKey }
    }

    /// Accepts this file as it is after a suspected rollback: what the device
    /// remembers is replaced by what the file holds now, and writing is
    /// allowed again (`Spec/keys.md §7`). Use it only for a file restored on
    /// purpose; otherwise merge the newer copy back.
    ///
    /// - Throws: the key store's errors.
    @_spi(Format)
    public func acceptRollback() throws(QuireError) {
        try lock.withLock { () throws(QuireError) -> Void in
            guard let store = deviceStore, let state = try? KeyState(unlocked, vaultID: vaultID) else { return }
            let path = memoryLocation(in: store)
            let s = file.structure
            var memory = VaultMemory(
                vaultID: vaultID, path: path, committedLength: s.committedEnd,
                chainHead: s.groups.last?.storedHead ?? CommitChain.genesisHead,
                newestClock: (try? loadIndex().maxClock.rawValue) ?? 0, keyringHeads: rememberedKeyrings(state),
                removedKey: nil, acceptedTampered: acceptedTamperedInFile(try? storedMemory(in: store)))
            // The file's newest entries, as it is: not what this handle
            // committed to the file it had before.
            committedNewest = []
            memory.newest = index != nil ? newestEntriesSeen(previous: []) : []
            try store.remember(memory)
            warnings.removeAll { $0.code == "rollback_suspected" }
            rollbackRefusal = nil
            replacementRefusal = nil
        }
    }

    /// What this handle has read of the file, as device memory would keep
    /// it (its committed end, last head, greatest clock, newest entries and
    /// trusted keyrings): what a file that replaces it must extend or keep
    /// (`Spec/keys.md §7`). Nil when no keyring is trusted, or when the
    /// handle has no device memory (it makes no rollback test, as an open
    /// without a key store makes none). Under the lock.
    func seenMemory() -> VaultMemory? {
        guard deviceStore != nil, let state = try? KeyState(unlocked, vaultID: vaultID) else { return nil }
        let s = file.structure
        return VaultMemory(
            vaultID: vaultID, path: file.path, committedLength: s.committedEnd,
            chainHead: s.groups.last?.storedHead ?? CommitChain.genesisHead,
            newestClock: index.map { $0.maxClock.rawValue } ?? readClock.rawValue, keyringHeads: rememberedKeyrings(state),
            removedKey: nil, acceptedTampered: nil,
            // The newest entries this handle read or committed: a file that
            // holds every entry but reverts one of them (another history
            // that passes the clock test) is judged as an open judges it.
            newest: newestEntriesSeen(previous: []))
    }

    /// The entries this handle has read (those of which its entry index,
    /// or its cached view, holds a head in a commit that verifies): what a
    /// file that replaces the one it read must still hold a revision of.
    /// An entry whose heads all fail to verify is left out: a compaction
    /// that drops what does not verify may drop it. Nil when the handle
    /// has read neither, or has no device memory (as ``seenMemory()``).
    /// Under the lock.
    func seenEntries() -> Set<EntryID>? {
        guard deviceStore != nil else { return nil }
        if let index { return Self.verifiedEntryIDs(index) }
        guard let view = indexCache?.view else { return nil }
        // A row group found damaged as it is read (only the newest is
        // checked at open) reads as placeholders: then the entries of the
        // frames the view reflected, from the file (as baselineStates).
        let ids = view.verifiedEntryIDs
        if view.isUsable { return ids }
        var prefix = EntryIndex()
        Self.absorb(file: file, into: &prefix, frames: 0..<view.frameCount, retain: false, kinds: [.entryRevision])
        return Self.verifiedEntryIDs(prefix)
    }

    /// The entries of `index` whose winning head (the highest standing of
    /// their heads) is in a commit that verifies.
    static func verifiedEntryIDs(_ index: EntryIndex) -> Set<EntryID> {
        var out = Set<EntryID>(minimumCapacity: index.revisions.count)
        for id in index.revisions.keys where (index.heads(of: id).first?.standing ?? 0) >= 1 { out.insert(id) }
        return out
    }

    /// After the handle switched to the file now at the path: applies the
    /// rollback test of an open (`Spec/keys.md §7`) to it, against `seen`
    /// (what the handle had read before; while a replacement is refused,
    /// what it had read before that one), not against the device memory
    /// (§7, "On refresh"). Then, as §7's clock test lets another history
    /// pass (a copy that forked from an older state and wrote since), it
    /// counts the entries of `entries` (those the handle had read) of which the
    /// file holds no revision at all: a rewrite never drops every revision
    /// of an entry (it keeps heads and tombstones, `Spec/merge.md §6`), so
    /// when the file's records all read (nothing unread could hold them),
    /// any such entry fails it too. A file that fails is reported as an
    /// open reports a rollback (``keyWarnings`` gets `rollback_suspected`)
    /// and refused for writing, and the device memory is not updated from
    /// it; one that passes lifts a refusal this test set. Only for a handle
    /// with device memory (``remember(in:)``, an open with a key store), as
    /// an open tests only then. Under the lock.
    func judgeReplacement(seen: VaultMemory?, entries: Set<EntryID>?) {
        guard deviceStore != nil else { return }
        let seen = replacementRefusal.map { $0.seen } ?? seen
        let entries = replacementRefusal.map { $0.entries } ?? entries
        // Reading the index for the tests must not remember a file they
        // refuse: the memory is written after them, when it passes.
        let outer = !deviceMemoryWriteDeferred
        deviceMemoryWriteDeferred = true
        // Judged against what this handle read, not against the device
        // memory, which is read after the file: another process of this
        // device may commit to the very file this handle has just read and
        // save its memory in between, and that memory (a longer file, a
        // newer clock) made the handle's reading look cut back, refusing
        // ordinary writes (torture, 4 writers beside merges, compactions or
        // key rotations). Open judges against the memory and reads the file
        // again when that fails (Spec/keys.md §7, "On refresh").
        var reason: String?
        if let seen { reason = rollbackReason(against: seen) }
        if reason == nil, let entries { reason = lostEntriesReason(entries, seen: seen) }
        if outer { deviceMemoryWriteDeferred = false }
        if let reason {
            if replacementRefusal == nil, rollbackRefusal != nil { return }
            warnings.removeAll { $0.code == "rollback_suspected" }
            warnings.append(.rollbackSuspected(reason: reason))
            rollbackRefusal = reason
            replacementRefusal = (reason, seen, entries)
            return
        }
        if let refused = replacementRefusal {
            warnings.removeAll { $0.code == "rollback_suspected" }
            if rollbackRefusal == refused.reason { rollbackRefusal = nil }
            replacementRefusal = nil
        }
        if outer, index != nil { rememberIfNotRolledBack() }
    }

    /// Why the file at the path lost entries of `entries` (the handle had
    /// read them; the file holds no revision of them), or nil when it
    /// holds a revision of each, extends `seen` (it starts with what the
    /// handle read), or cannot be judged: a credential behind the file, or
    /// records that do not read (damage, a key this credential lacks),
    /// which may be the lost revisions and are reported as unread records
    /// instead. Under the lock.
    func lostEntriesReason(_ entries: Set<EntryID>, seen: VaultMemory?) -> String? {
        guard !entries.isEmpty, unlocked.unreadableNewerEpoch == nil else { return nil }
        if let seen, file.structure.hasCommit(endingAt: seen.committedLength, storedHead: seen.chainHead) { return nil }
        guard let index = try? loadIndex(), index.issues.isEmpty else { return nil }
        let lost = entries.count(where: { index.revisions[$0]?.isEmpty ?? true })
        guard lost > 0 else { return nil }
        return "it holds no revision of \(lost) entr\(lost == 1 ? "y" : "ies") this handle read (a rewrite keeps every entry's "
            + "heads and tombstones): another history, or a copy from before they were written, replaced the file"
    }

    /// Who holds keys now, as the trusted keyrings say.
    ///
    /// - Throws: a key error (`.wrongCredential`, `.readOnly`, `.needsMerge`, `.damaged`) when no keyring is trusted.
    @_spi(Format)
    public func keyState() throws(QuireError) -> KeyState {
        try lock.withLock { () throws(QuireError) -> KeyState in
            do throws(KeyError) { return try KeyState(unlocked, vaultID: vaultID) } catch { throw .keys(error) }
        }
    }

    /// Before records are written: when concurrent key changes (merged from
    /// two copies) left several keyring heads and the newest one — whose key
    /// new records would be sealed under — does not wrap to exactly the
    /// readers of the joined key state (a device removed in the other head,
    /// an escrow key dropped by escrow-free in the other head), first writes
    /// a keyring that joins them (`Spec/keys.md §6`, "Joining before writing").
    ///
    /// - Throws: a key error (`.wrongCredential`, `.readOnly`, `.needsMerge`, `.damaged`) with ``KeyError/operationRefused(reason:)``
    ///   when a join is needed and the credential cannot sign one.
    func joinConcurrentKeyrings() throws(QuireError) {
        guard !changingKeys, !keyringsJoined else { return }
        guard let state = try? KeyState(unlocked, vaultID: vaultID), state.heads.count > 1,
            let write = unlocked.keys.writeKey,
            let ring = state.heads.first(where: { $0.record.publicPart.keyCommit == write.commitment }),
            !state.wrapsExactly(ring) || !KeyOperations.recoveryKeyChoices(in: state).isEmpty
        else {
            keyringsJoined = true
            return
        }
        guard signer != nil else {
            throw .keys(
                .operationRefused(
                    reason:
                        "the keys were changed on two devices at once and must be joined before anything is written; open the vault with an enrolled device or the recovery key once"
                ))
        }
        try changeKeys(.rotate)
    }

    /// What a keyring this handle's credential signs now would drop of a
    /// newer version's protection, for a warning before writing it: when it
    /// is the recovery key, every `critical` name, `required` slot kind and
    /// member key type of the vault this version does not know; empty for a
    /// device, which refuses instead (`Spec/keys.md §6`, "Refusals for what
    /// a writer does not know"; twelfth review R12-1). Entries read
    /// `critical "name"`, `required "kind"`, `member "name" (keyType "type")`.
    ///
    /// - Throws: the errors of ``keyState()``.
    package func droppedProtections() throws(QuireError) -> [String] {
        guard let signer else { return [] }
        return KeyOperations.droppedProtections(in: try keyState(), signer: signer.publicKey)
    }

    /// Makes `change` to the vault's keys: builds the keyring from the keys
    /// as they are at the moment of writing (another process's change is
    /// read first), appends it twice in one commit, and re-reads the keys.
    ///
    /// - Parameter now: milliseconds since the Unix epoch, UTC, recorded in the keyring.
    /// - Returns: the keyring written.
    /// - Throws: a key error (`.wrongCredential`, `.readOnly`, `.needsMerge`, `.damaged`) (``KeyError/operationRefused(reason:)``
    ///   when the credential cannot sign — a passphrase or escrow key — or the
    ///   change is not possible, ``KeyError/escrowRefused``); the errors of
    ///   ``commit(_:)``.
    @discardableResult
    package func changeKeys(_ change: KeyChange, now: Int64 = ProcessStats.wallClockMilliseconds()) throws(QuireError) -> KeyringProposal {
        try changeKeys(change, now: now, replacement: .mine)
    }

    /// ``changeKeys(_:now:)``, saying for a device's removal whose
    /// replacement of the recovery key the target's was (`Spec/keys.md §6.3`).
    @discardableResult
    func changeKeys(
        _ change: KeyChange, now: Int64, replacement: RecoveryReplacementOwner, keepingEnrolled: Set<[UInt8]> = []
    ) throws(QuireError) -> KeyringProposal {
        // A change other than a rotation, over concurrent replacements of the
        // recovery key the user chose between, first joins them keeping the
        // chosen one (a rotation), so that the change — a replacement of that
        // key, say — starts from a state with one recovery member.
        if case .rotate = change {
        } else if keptRecoveryKey != nil, !(try recoveryKeyChoices()).isEmpty {
            try changeKeys(.rotate, now: now, replacement: .mine)
        }
        return try reportingOwnWrite { () throws(QuireError) -> KeyringProposal in
            guard let signer else {
                throw .keys(
                    .operationRefused(
                        reason:
                            "only an enrolled device or the recovery key can change the keys; a passphrase or an escrow key can only read"))
            }
            var written: KeyringProposal?
            var byRecoveryKey = false
            changingKeys = true
            defer { changingKeys = false }
            do {
                try commit(keyChange: change) { (tx: VaultTransaction) throws(QuireError) in
                    let proposals: [KeyringProposal]
                    let placement: KeyOperations.CommitPlacement
                    do throws(KeyError) {
                        let state = try KeyState(self.unlocked, vaultID: self.vaultID)
                        // A removal by the recovery key keeps the removed
                        // devices' keyrings that other members wrote under
                        // (Spec/keys.md §6.3): it needs who wrote under which key.
                        var writers: [[UInt8]: Set<[UInt8]>] = [:]
                        switch change {
                        case .remove, .lockdown:
                            if state.member(withKey: signer.publicKey)?.role != "device" {
                                writers = self.file.attestorsByEpochKey()
                                byRecoveryKey = true
                            }
                        default: break
                        }
                        proposals = try KeyOperations.keyrings(
                            for: change, state: state, signer: signer, now: now, random: self.random, replacement: replacement,
                            keepRecoveryKey: self.keptRecoveryKey, writersByEpochKey: writers, keepingEnrolled: keepingEnrolled)
                        placement = try KeyOperations.commitPlacement(for: proposals, state: state, writeKey: tx.pending.key)
                    } catch {
                        throw .keys(error)
                    }
                    for proposal in proposals {
                        do throws(FormatError) {
                            try tx.pending.appendKeyring(keyID: proposal.epochKey.id, epoch: proposal.epoch, body: proposal.body)
                        } catch {
                            throw QuireError.format(error)
                        }
                    }
                    // A change that starts a new epoch is committed under
                    // the write key of the state it makes (Spec/format.md
                    // §9.2, seventh review R7-3): a member it removes cannot
                    // recompute that commit. A removal that cuts keyrings (a
                    // lockdown cutting the lost device's rotation, say) is
                    // committed under that state's write key whatever its
                    // epoch, and extends the tip of the chain a reader of
                    // that state walks: the commits under the keys it cuts
                    // do not verify there (Spec/keys.md §6.3).
                    tx.pending.commitKey = placement.commitKey
                    if let kept = placement.keptKeys {
                        // The tip a reader of the state after it finds: the
                        // walk again, with the keys that state holds.
                        tx.pending.previousHead = self.file.chainTipHead(holding: kept, removing: placement.removed)
                    }
                    written = proposals.last
                }
            }
            try reloadUnjudged()
            // A removal that does not take (its keyring is not trusted, or
            // the device is still a member) is said, never reported as done
            // (review 18 R18-1).
            let targets: [[UInt8]]
            switch change {
            case .remove(let key): targets = [key]
            case .lockdown(let keys): targets = keys
            default: targets = []
            }
            if !targets.isEmpty, let written {
                let after = try keyState()
                if !after.trusted.contains(where: { $0.id == written.id }) {
                    throw .keys(
                        .operationRefused(
                            reason:
                                "the removal was written but did not take: its keyring is not trusted (another change in the vault cuts it); "
                                + "run 'quire verify' and report this"))
                }
                if let still = targets.compactMap({ after.member(withKey: $0) }).first {
                    throw .keys(
                        .operationRefused(
                            reason:
                                "the removal was written but did not take: \"\(still.name)\" is still a member (another change in the vault "
                                + "cuts it); run 'quire verify' and report this"))
                }
                // A removal by the recovery key leaves no keyring a suspect
                // signed standing beside it (review 23 R23-1: a puppet's
                // answer the lockdown failed to remove again kept reading).
                if byRecoveryKey {
                    let beside = KeyOperations.suspectsBeside(
                        written.id, removing: Set(targets), keeping: keepingEnrolled, signer: signer.publicKey, in: after)
                    // A second recovery key a device being removed put in
                    // the keys (review 26 R26-1) has the recovery key's
                    // power here: no removal undoes it.
                    if let second = beside.first(where: \.isRecoveryKey) {
                        throw .keys(
                            .operationRefused(
                                reason:
                                    "the removal was written but did not take: a second recovery key (\"\(second.name)\"), installed on "
                                    + "a copy by a device being removed and kept by a later join, signs keyrings beside it, and it can undo "
                                    + "any removal; move the journal to a new vault (quire export --format dayone, quire init, "
                                    + "quire import dayone) and stop using this one"))
                    }
                    if let other = beside.first {
                        throw .keys(
                            .operationRefused(
                                reason:
                                    "the removal was written but did not take: a keyring \"\(other.name)\" signed still stands beside it "
                                    + "and may keep reading; run 'quire verify' and report this"))
                    }
                }
            }
            warnings.removeAll { $0.code == "rollback_suspected" }
            // The change is committed: failing to remember the new heads is
            // a warning, not an error.
            do throws(QuireError) { try rememberHeads() } catch { noteMemoryNotSaved(error) }
            return written!
        }
    }

    /// Enrolls the device whose code the user typed, after they compared its
    /// fingerprint (``DeviceCode/fingerprint(of:)``) on both screens.
    ///
    /// - Parameters:
    ///   - code: the device code the new device shows (its ``DeviceIdentity/code``).
    ///   - name: a name for it, unique in the vault, 1–64 characters.
    /// - Returns: the new member.
    /// - Throws: a key error (`.wrongCredential`, `.readOnly`, `.needsMerge`, `.damaged`) with ``KeyError/deviceCodeInvalid(reason:)``
    ///   or ``KeyError/operationRefused(reason:)``; the errors of ``changeKeys(_:now:)``.
    @discardableResult
    @_spi(Format)
    public func enrollDevice(code: String, name: String, now: Int64 = ProcessStats.wallClockMilliseconds()) throws(QuireError)
        -> KeyringMember
    {
        let publicKey: [UInt8]
        do { publicKey = try DeviceCode.parse(code) } catch { throw .keys(error) }
        try changeKeys(.enroll(publicKey: publicKey, name: name), now: now)
        guard let member = try keyState().member(withKey: publicKey) else {
            throw .keys(.operationRefused(reason: "the device was written to the keyring but is not a member after re-reading it"))
        }
        return member
    }

    /// Removes the enrolled device called exactly `name` (names are compared
    /// as written, not case-insensitively): a new epoch without it. It
    /// keeps what it could read until `compact --rekey`.
    ///
    /// - Throws: a key error (`.wrongCredential`, `.readOnly`, `.needsMerge`, `.damaged`) with ``KeyError/operationRefused(reason:)``
    ///   when no device has that name, or when more than one has (devices
    ///   enrolled on two copies at once): then remove it by key with
    ///   ``removeDevice(publicKey:now:)``; the errors of ``changeKeys(_:now:)``.
    /// - Parameter replacement: when the device (or a device it enrolled)
    ///   replaced the recovery key (``recoveryReplacements(removing:)``),
    ///   whose replacement it was: `.mine` (the default) keeps it and builds
    ///   on the current keys; `.notMine` (a thief's) builds on the keys from
    ///   before it, which cuts it with every later keyring — the previous
    ///   recovery key comes back, devices enrolled since are gone, and
    ///   records sealed since become unreadable (`Spec/keys.md §6.3`).
    @discardableResult
    @_spi(Format)
    public func removeDevice(
        named name: String, now: Int64 = ProcessStats.wallClockMilliseconds(), replacement: RecoveryReplacementOwner = .mine
    ) throws(QuireError) -> KeyringMember {
        let state = try keyState()
        let matches = state.devices.filter { $0.name == name }
        guard let member = matches.first else {
            let names = state.devices.map { "\"\($0.name)\"" }.joined(separator: ", ")
            throw .keys(
                .operationRefused(reason: "no enrolled device is named \"\(name)\"; the devices are \(names.isEmpty ? "none" : names)"))
        }
        guard matches.count == 1 else {
            let fingerprints = matches.map { DeviceCode.fingerprint(of: $0.publicKey) }.joined(separator: ", ")
            throw .keys(
                .operationRefused(
                    reason: "\(matches.count) enrolled devices are named \"\(name)\" (fingerprints \(fingerprints)); remove one by its key")
            )
        }
        try changeKeys(.remove(publicKey: member.publicKey), now: now, replacement: replacement)
        return member
    }

    /// Removes the enrolled device whose Ed25519 public key is `publicKey`
    /// (32 bytes; ``KeyringMember/publicKey``, shown to people as
    /// ``DeviceCode/fingerprint(of:)``): a new epoch without it. It keeps
    /// what it could read until `compact --rekey`. With the recovery key,
    /// a device already removed is removed again (one that answered its
    /// removal from an old copy: `Spec/keys.md §6.3`).
    ///
    /// - Throws: a key error (`.wrongCredential`, `.readOnly`, `.needsMerge`, `.damaged`) with ``KeyError/operationRefused(reason:)``
    ///   when no enrolled device (or, with the recovery key, removed one) has that key; the errors of ``changeKeys(_:now:)``.
    /// - Parameter replacement: when the device (or a device it enrolled)
    ///   replaced the recovery key (``recoveryReplacements(removing:)``),
    ///   whose replacement it was: `.mine` (the default) keeps it and builds
    ///   on the current keys; `.notMine` (a thief's) builds on the keys from
    ///   before it, which cuts it with every later keyring — the previous
    ///   recovery key comes back, devices enrolled since are gone, and
    ///   records sealed since become unreadable (`Spec/keys.md §6.3`).
    /// - Parameter keepingEnrolled: with the recovery key, the devices
    ///   (Ed25519 keys) of ``devicesEnrolled(by:)`` the user vouches for:
    ///   kept. The removal removes the others with the device: the file
    ///   cannot tell a thief's puppet from a device the user enrolled on the
    ///   lost one (`Spec/keys.md §6.3`). Ignored when a device removes.
    @discardableResult
    @_spi(Format)
    public func removeDevice(
        publicKey: [UInt8], now: Int64 = ProcessStats.wallClockMilliseconds(), replacement: RecoveryReplacementOwner = .mine,
        keepingEnrolled: Set<[UInt8]> = []
    ) throws(QuireError) -> KeyringMember {
        let state = try keyState()
        // The recovery key also removes again a device already removed on
        // one side — one that answered its removal from an old copy (a
        // mutual removal, Spec/format.md §8.4 scenario 8), which is what
        // the `removal_mutual` warning tells the user to do.
        let byRecoveryKey = signer.map { state.member(withKey: $0.publicKey)?.role != "device" } ?? false
        guard
            let member = state.devices.first(where: { $0.publicKey == publicKey })
                ?? (byRecoveryKey ? state.removed.first { $0.publicKey == publicKey && $0.role == "device" } : nil)
        else {
            throw .keys(
                .operationRefused(reason: "no enrolled device has the key with fingerprint \(DeviceCode.fingerprint(of: publicKey))"))
        }
        try changeKeys(.remove(publicKey: member.publicKey), now: now, replacement: replacement, keepingEnrolled: keepingEnrolled)
        return member
    }

    /// The current devices that a removal of the devices with keys
    /// `publicKeys` by the recovery key removes with them unless kept:
    /// those that only they, or a device they enrolled, enrolled
    /// (`Spec/keys.md §6.3`, *suspects*). Ask the user which of these
    /// were theirs before such a removal, showing name and fingerprint.
    ///
    /// - Throws: the errors of ``keyState()``.
    @_spi(Format)
    public func devicesEnrolled(by publicKeys: Set<[UInt8]>) throws(QuireError) -> [KeyringMember] {
        KeyOperations.enrolledBy(publicKeys, in: try keyState(), signer: signer?.publicKey)
    }

    /// The replacements of the recovery key signed by the device whose key
    /// is `publicKey`, or by a device it enrolled (and so on), that passed
    /// rules 1–5: what a removal of that device with `.notMine` cuts. Ask
    /// the user whose they were before removing it (`Spec/keys.md §6.3`).
    ///
    /// - Throws: the errors of ``keyState()``.
    @_spi(Format)
    public func recoveryReplacements(removing publicKey: [UInt8]) throws(QuireError) -> [RecoveryKeyReplacement] {
        KeyOperations.recoveryReplacements(by: publicKey, in: try keyState())
    }

    /// Whether this credential was removed from the vault, or is behind a
    /// newer keyring a current member made that it cannot open: nil while
    /// it reads the current keys; otherwise the error a write would throw
    /// (`Spec/format.md §8.6`). For a removed device that is `.readOnly`
    /// (`behind_newer_keyring`): the keyring that removed it is sealed under
    /// a key it is not given, so it cannot tell a removal from being left
    /// out (`Spec/keys.md §7`). `.readOnly` (`removed_from_vault`) is for a
    /// credential that opens the keyring listing it as removed (a replaced
    /// recovery key). Such a handle opens and reads what was
    /// written before (nothing after a `compact --rekey`) but cannot write;
    /// an app should say so rather than show a journal that merely looks
    /// short or empty.
    public var removedFromVault: QuireError? {
        lock.withLock {
            if let removed = unlocked.removedIn { return QuireError.removedFromVault(newerEpoch: removed.epoch) }
            guard let newest = unlocked.newerKeyrings.max(by: { $0.epoch < $1.epoch }) else { return nil }
            return QuireError.behindNewerKeyring(
                newerEpoch: newest.epoch, madeBy: newest.signer.map(PrivacyStatement.phrase(for:)) ?? "a member",
                wasMember: wasMember(before: newest))
        }
    }
}

extension Vault {
    /// Removes the devices called `names` (case-insensitive) in one keyring
    /// signed by the recovery key: a *lockdown* (`Spec/keys.md §6.3`). Its
    /// parents leave out what those devices signed last, and rule 6 cuts
    /// every keyring they signed outside it — whatever they do concurrently
    /// or from an old copy. It works with a recovery key that a device
    /// replaced, and removes again a device that is already removed but
    /// answered its removal from a fork.
    ///
    /// - Parameter names: devices of the key state, or devices it lists as
    ///   removed.
    /// - Parameter keepingEnrolled: the devices (Ed25519 keys) of
    ///   ``devicesEnrolled(by:)`` the user vouches for; the others go with
    ///   the named devices.
    /// - Returns: the members the keyring removes.
    /// - Throws: a key error (`.wrongCredential`, `.readOnly`, `.needsMerge`, `.damaged`) with ``KeyError/operationRefused(reason:)``
    ///   when the vault was not opened with the recovery key, or a name
    ///   matches no device; the errors of ``changeKeys(_:now:)``.
    @discardableResult
    @_spi(Format)
    public func lockDown(
        removingDevicesNamed names: [String], keepingEnrolled: Set<[UInt8]> = [], now: Int64 = ProcessStats.wallClockMilliseconds()
    ) throws(QuireError) -> [KeyringMember] {
        guard case .recoveryKey = credential else {
            throw .keys(
                .operationRefused(
                    reason: "only the recovery key removes several devices at once; open the vault with the recovery key"))
        }
        let state = try keyState()
        let known = state.devices + state.removed.filter { $0.role == "device" }
        var keys: [[UInt8]] = []
        for name in names {
            guard let member = known.first(where: { $0.name.lowercased() == name.lowercased() }) else {
                let all = state.devices.map { "\"\($0.name)\"" }.joined(separator: ", ")
                throw .keys(.operationRefused(reason: "no device is named \"\(name)\"; the devices are \(all.isEmpty ? "none" : all)"))
            }
            if !keys.contains(member.publicKey) { keys.append(member.publicKey) }
        }
        let written = try changeKeys(.lockdown(publicKeys: keys), now: now, replacement: .mine, keepingEnrolled: keepingEnrolled)
        return try keyState().trusted.first { $0.id == written.id }?.content?.removed ?? []
    }

    /// Who can decrypt which records, in plain words (`Spec/keys.md §8`):
    /// `quire keys status`. ``PrivacyStatement/text`` is the printed form.
    ///
    /// - Throws: a key error (`.wrongCredential`, `.readOnly`, `.needsMerge`, `.damaged`) when no keyring is trusted;
    ///   a container error (`.damaged`, `.unavailable`, `.outOfSpace`…) when the profile cannot be read.
    @_spi(Format)
    public func privacyStatement() throws(QuireError) -> PrivacyStatement {
        try lock.withLock { () throws(QuireError) -> PrivacyStatement in
            let name = (try? profile())??.name ?? ""
            var thisDevice: [UInt8]?
            if case .device(let pair) = credential { thisDevice = pair.publicKey }
            do throws(KeyError) {
                return try PrivacyStatement(
                    unlocked: unlocked, structure: file.structure, vaultName: name, thisDevice: thisDevice, warnings: warnings)
            } catch {
                throw .keys(error)
            }
        }
    }

    /// Rotates the epoch key: a new epoch for the same keys.
    ///
    /// - Throws: the errors of ``changeKeys(_:now:)``.
    @_spi(Format)
    public func rotateKeys(now: Int64 = ProcessStats.wallClockMilliseconds()) throws(QuireError) {
        try changeKeys(.rotate, now: now)
    }

    /// Sets, changes or removes the passphrase. `nil` removes it; setting
    /// one when one exists changes it (a new epoch; the old one can still
    /// read what was written before, until `compact --rekey`).
    ///
    /// - Parameters:
    ///   - passphrase: UTF-8, in guarded memory (mapped to Unicode NFC before
    ///     Argon2id, `Spec/keys.md §2.3`); nil to remove.
    ///   - opsLimit: Argon2id passes (1…8).
    ///   - memLimitBytes: Argon2id memory in bytes (8 KiB…1 GiB).
    /// - Throws: the errors of ``changeKeys(_:now:)``, with
    ///   ``KeyError/kdfLimitsExceeded(opsLimit:memLimitBytes:)`` for a cost
    ///   outside the limits.
    @_spi(Format)
    public func setPassphrase(
        _ passphrase: SecureBytes?, opsLimit: UInt64 = Argon2id.moderateOpsLimit, memLimitBytes: UInt64 = Argon2id.moderateMemLimitBytes,
        now: Int64 = ProcessStats.wallClockMilliseconds()
    ) throws(QuireError) {
        let hasOne = try !keyState().passphrases.isEmpty
        switch (passphrase, hasOne) {
        case (nil, _): try changeKeys(.removePassphrase, now: now)
        case (let p?, false): try changeKeys(.setPassphrase(p, opsLimit: opsLimit, memLimitBytes: memLimitBytes), now: now)
        case (let p?, true): try changeKeys(.changePassphrase(p, opsLimit: opsLimit, memLimitBytes: memLimitBytes), now: now)
        }
    }
}
