import QuireCrypto
import QuireSystem

/// What ``VaultFile/readAppended()`` found at the vault's path.
package enum AppendedFrames: Sendable, Equatable {
    /// The file is the one this handle reads, extended by the frames in the
    /// range (committed by other writers since the handle last looked; empty
    /// when nothing was committed), every new commit verified on the chain.
    case appended(Range<Int>)
    /// Reading on cannot give the exact state: the path names another file
    /// (a sync tool renamed a copy over it, a compaction or merge replaced
    /// it), the file shrank or its last known commit changed, or the new
    /// commits change the keys or do not simply extend the chain (damage,
    /// a fork, a stale epoch). Open the path again.
    case reopen(reason: String)
}

extension VaultFile {
    /// Reads only what other writers appended since this handle last looked
    /// (`Spec/format.md §9.1`: between compactions the file only grows),
    /// without the writers' lock: a commit still being written stays an
    /// uncommitted tail until its commit frame lands.
    ///
    /// Cheap checks decide whether the file is still the one read: the
    /// path's identity (device and inode), a size not below the committed
    /// end, and the last known commit frame's body (its chain head covers
    /// every commit before it) still at its offset. New commit groups are
    /// verified one by one in the common case — each chains from the chain
    /// tip under a held key, holds no keyring and no damage, and is not
    /// stale — which is what ``chainReport()`` would decide for them,
    /// without walking the whole chain. Anything else answers
    /// ``AppendedFrames/reopen(reason:)``, after bringing the verdicts up to
    /// date with the frames read (a handle that goes on using this file
    /// never chains from an old tip).
    ///
    /// - Throws: ``FormatError/io(_:)``.
    package func readAppended() throws(FormatError) -> AppendedFrames {
        try lock.withLock { () throws(FormatError) -> AppendedFrames in try readAppendedLocked() }
    }

    private func readAppendedLocked() throws(FormatError) -> AppendedFrames {
        if let identity, FileSystem.identity(path) != identity { return .reopen(reason: "another file was put at the path") }
        let size: UInt64
        do { size = try file.size() } catch { throw .io(error) }
        let end = structure.committedEnd
        guard size >= end else { return .reopen(reason: "the file is shorter than its committed end") }
        if let g = structure.groups.last {
            let onDisk: [UInt8]
            do { onDisk = try file.read(count: CommitChain.bodyByteCount, at: end - UInt64(CommitChain.bodyByteCount)) } catch {
                throw .io(error)
            }
            guard onDisk == g.commitBody else { return .reopen(reason: "the last commit this handle read is no longer at its offset") }
        }
        let framesBefore = structure.committedFrameCount
        // Nothing new, and the tail (if any) as it was.
        if size == structure.fileSize { return .appended(framesBefore..<framesBefore) }
        let groupsBefore = structure.groups.count
        try VaultScanner.rescanTail(&structure, file: file)
        streamIndexCache = nil
        guard structure.groups.count > groupsBefore else { return .appended(framesBefore..<framesBefore) }
        if let reason = extendVerdicts(from: groupsBefore) {
            (verdicts, uncheckedAttestations) = chainReport()
            return .reopen(reason: reason)
        }
        return .appended(framesBefore..<structure.committedFrameCount)
    }

    /// Appends the verdicts of commit groups `first...` when each extends
    /// the chain tip as ``chainReport()`` would verify it; nil then, or why
    /// not (the verdicts are then left as they were, possibly partly
    /// extended: the caller recomputes them).
    private func extendVerdicts(from first: Int) -> String? {
        let tampered = tamperedCache
        defer { tamperedCache = tampered }
        for k in first..<structure.groups.count {
            let group = structure.groups[k]
            let frame = structure.frames[group.commitFrame]
            let before = k == 0 ? CommitChain.genesisHead : structure.groups[k - 1].storedHead
            guard verdicts.statuses.count == k, verdicts.tipHead == before, group.storedPreviousHead == before else {
                return "a new commit does not extend the chain tip"
            }
            guard !group.containsDamage, !frame.repaired else { return "a new commit holds damage" }
            if group.members.contains(where: { structure.frames.kind(at: $0) == .keyring }) {
                return "a new commit changes the keys"
            }
            let stored = group.storedHead
            let key = keys.keys(for: frame.header.keyID).first { key in
                headVerifications += 1
                return
                    (try? CommitChain.head(
                        key: key, vaultID: vaultID, previousHead: before, digest: group.digest, commitHeader: frame.header,
                        body: group.commitBody))
                    .map { constantTimeEqual($0, stored) } ?? false
            }
            guard let key else { return "a new commit does not verify with a held key" }
            let floor = verdicts.tipLineFloor  // it extends the tip: the floor along the tip's line
            guard key.epoch >= floor else { return "a new commit is sealed under a stale epoch" }
            // As chainReport: the attestation decides the floor only where
            // the commit would raise it; elsewhere it is checked when asked.
            var attestation = CommitReport.Attestation.notChecked
            if key.epoch > floor {
                attestation = self.attestation(of: group, previousHead: before, key: key)
            } else {
                uncheckedAttestations[k] = key
            }
            verdicts.appendVerified(head: stored, previousHead: before, epoch: key.epoch, attestation: attestation)
        }
        return nil
    }

    /// Where committed frame `index` is, read under the handle's lock (a
    /// refresh may extend the structure from another thread meanwhile);
    /// nil when the file has no such committed frame.
    package func committedFrameLocation(_ index: Int) -> FrameLocation? {
        lock.withLock { index >= 0 && index < structure.committedFrameCount ? structure.frames.location(at: index) : nil }
    }

    /// The bytes after the last commit (a commit being written, or a torn
    /// or damaged tail, `Spec/format.md §10.3`): where they start and how
    /// many there are, or nil when the file ends at its last commit.
    package var uncommittedTail: (offset: UInt64, byteCount: UInt64)? {
        lock.withLock {
            let s = structure
            return s.fileSize > s.committedEnd ? (s.committedEnd, s.fileSize - s.committedEnd) : nil
        }
    }
}

extension CommitReport {
    /// Records a commit that joined the chain at its tip, verified from
    /// `previousHead` under a key of `epoch` (a commit this handle wrote, or
    /// one another writer appended at the tip): it becomes the tip, and the
    /// floor rises to its epoch when a member attested it
    /// (`Spec/format.md §9.3`).
    mutating func appendVerified(head: [UInt8], previousHead: [UInt8], epoch: UInt32, attestation: Attestation) {
        statuses.append(.verified)
        attestations.append(attestation)
        computedHeads.append(head)
        previousHeads.append(previousHead)
        // Right after the tip in link order (Spec/merge.md §3.3); only a
        // file whose tip line is not the last of its siblings shifts others.
        let position = tipPosition + 1
        if position < walkPositions.count {
            for i in walkPositions.indices where walkPositions[i] >= position { walkPositions[i] += 1 }
        }
        walkPositions.append(position)
        tipPosition = position
        linkParents.append(tipGroup)
        tipGroup = statuses.count - 1
        removalAncestors = nil
        epochs.append(epoch)
        floors.append(currentFloor)
        tipHead = head
        if case .attested = attestation {
            currentFloor = max(currentFloor, epoch)
            tipLineFloor = max(tipLineFloor, epoch)
        }
    }
}
