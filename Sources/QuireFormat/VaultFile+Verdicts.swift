import QuireSystem

/// A summary of the commit verdicts for the device-local index cache
/// (`Spec/index-cache.md §5`), which is used only on a file with nothing
/// to report about its commits.
extension VaultFile {
    /// True when every commit group verified and is on the chain, no member
    /// forked it and no stored previous head was repaired: no commit issue
    /// but a failed attestation, which this does not check (checking every
    /// attestation costs an Ed25519 verification per commit).
    package var everyCommitVerified: Bool {
        lock.withLock {
            let v = verdicts
            let groups = structure.groups
            guard v.statuses.count == groups.count, v.allVerified, v.forks.isEmpty else { return false }
            for g in groups.indices where g < v.previousHeads.count {
                if let from = v.previousHeads[g], from != groups[g].storedPreviousHead { return false }
            }
            return true
        }
    }
}
