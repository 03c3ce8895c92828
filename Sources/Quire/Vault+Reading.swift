@_spi(Format) import QuireFormat
@_spi(Format) import QuireKeys
import QuireSystem

extension Vault {
    /// True when `issue` is about a record (or commit) sealed under a key
    /// this credential does not hold (`unknown_key`, `commit_unverifiable`)
    /// while its device was removed: records written without it, not damage
    /// (`Spec/keys.md §6.3`).
    package func isUnreadableWithThisKey(_ issue: VerifyReport.Issue) -> Bool {
        lock.withLock { () -> Bool in
            let structure = file.structure
            guard unlocked.unreadableNewerEpoch != nil, let f = issue.frameIndex, f < structure.frames.count,
                issue.code == "unknown_key" || issue.code == "commit_unverifiable"
            else { return false }
            return unlocked.keys.keys(for: structure.frames.header(at: f).keyID).isEmpty
        }
    }
}
