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
    /// The stored head of the chain's tip as a reader of the key state a
    /// key change makes would find it, before the change is written
    /// (`Spec/format.md §9.1` step 5's exception, `Spec/keys.md §6.3`): the
    /// walk of §9.3 over the file as it is, holding only `keys` (those of the
    /// keyrings trusted after the change) and with `removed` among the
    /// removed members. A removal that cuts the keys a lost device made
    /// extends this tip: the commits under those keys do not verify after
    /// it, so extending the chain tip of the state before it would orphan
    /// it, and going back along that chain is what a thief's commits can
    /// steer (review 34 F1). `h_0` when no commit joins that chain.
    /// Nothing this handle holds changes.
    package func chainTipHead(holding keys: KeySet, removing removed: Set<[UInt8]>) -> [UInt8] {
        lock.withLock {
            let saved = (keys: self.keys, removed: removedMembers, count: headVerifications)
            defer {
                self.keys = saved.keys
                removedMembers = saved.removed
                headVerifications = saved.count
            }
            self.keys = keys
            removedMembers.formUnion(removed)
            return chainReport().report.tipHead
        }
    }
}
