import QuireSystem

/// What the layers above ask to reuse what they read from a file: the
/// device-local index cache (`Spec/index-cache.md §5`), used only on a
/// file with nothing to report about its commits, and a refresh that
/// finds the path replaced by a file starting with the same bytes.
extension VaultFile {
    /// True when every commit group verified and is on the chain, no member
    /// forked it and no stored previous head was repaired: no commit issue
    /// but a failed attestation, which this does not check (checking every
    /// attestation costs an Ed25519 verification per commit).
    package var everyCommitVerified: Bool {
        lock.withLock {
            if let everyCommitVerifiedCache { return everyCommitVerifiedCache }
            let answer = everyCommitVerifiedLocked
            everyCommitVerifiedCache = answer
            return answer
        }
    }

    private var everyCommitVerifiedLocked: Bool {
        let v = verdicts
        guard v.statuses.count == structure.groups.count, v.allVerified, v.forks.isEmpty else { return false }
        return structure.groups.withUnsafeBufferPointer { groups in
            v.previousHeads.withUnsafeBufferPointer { previous in
                for g in groups.indices where g < previous.count {
                    if let from = previous[g], !groups[g].storesPreviousHead(from) { return false }
                }
                return true
            }
        }
    }

    /// True when this file and `other` both hold at least `byteCount`
    /// bytes and their first `byteCount` bytes are equal, read 1 MiB at a
    /// time (stopping at the first difference).
    ///
    /// - Throws: ``FormatError/io(_:)``.
    package func hasSamePrefix(as other: VaultFile, byteCount: UInt64) throws(FormatError) -> Bool {
        let piece: UInt64 = 1 << 20
        var at: UInt64 = 0
        while at < byteCount {
            let n = Int(min(piece, byteCount - at))
            let mine: [UInt8]
            let theirs: [UInt8]
            do throws(SystemError) {
                mine = try lock.withLock { () throws(SystemError) -> [UInt8] in try file.read(count: n, at: at) }
                theirs = try other.lock.withLock { () throws(SystemError) -> [UInt8] in try other.file.read(count: n, at: at) }
            } catch {
                throw .io(error)
            }
            guard mine.count == n, mine == theirs else { return false }
            at += UInt64(n)
        }
        return true
    }
}

extension VaultFile {
    /// The stored head a commit that cuts keys chains from: going back from
    /// the chain tip along the verified commits' links, the first commit
    /// whose key `keeps` (the state the commit makes can verify it), or
    /// `h_0` (`Spec/keys.md §6.3`). The tip's own head when it is kept.
    package func chainHead(keeping keeps: (KeyID) -> Bool) -> [UInt8] {
        lock.withLock {
            let groups = structure.groups
            var byHead: [[UInt8]: Int] = [:]
            for g in groups.indices where g < verdicts.statuses.count && verdicts.statuses[g] == .verified {
                byHead[groups[g].storedHead] = g
            }
            var head = verdicts.tipHead
            var steps = 0
            while let g = byHead[head], !keeps(structure.frames.header(at: groups[g].commitFrame).keyID), steps <= groups.count {
                head = g < verdicts.previousHeads.count ? verdicts.previousHeads[g] ?? CommitChain.genesisHead : CommitChain.genesisHead
                steps += 1
            }
            return head
        }
    }
}
