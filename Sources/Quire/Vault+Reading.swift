import QuireFormat
import QuireKeys
import QuireSystem

/// Records the entries a vault shows leave out, as opening it learned
/// them: no extra pass over the file.
public struct UnreadRecords: Sendable, Equatable {
    /// The newest epoch this credential cannot open because its device was
    /// removed from the vault; nil when there is none.
    public let newerEpoch: UInt32?
    /// Committed entry revisions sealed under a key this credential does not
    /// hold (their frame's key id matches none of its keys), counted when
    /// ``newerEpoch`` is set: written after the removal
    /// (`Spec/format.md §5.1`).
    public let hiddenEntryRevisions: Int
    /// Records in damaged regions or in commits that did not verify
    /// (`Spec/format.md §9.3`, §10).
    public let damagedRecords: Int
}

extension Vault {
    /// What the entries shown leave out (``UnreadRecords``), for a warning.
    public func unreadRecords() -> UnreadRecords {
        lock.withLock { () -> UnreadRecords in
            let s = file.structure
            var hidden = 0
            if unlocked.unreadableNewerEpoch != nil {
                hidden = s.frames[0..<s.committedFrameCount].filter {
                    $0.header.kind == .entryRevision && unlocked.keys.keys(for: $0.header.keyID).isEmpty
                }.count
            }
            var damaged = s.damagedRegions.count
            for (g, status) in file.commits.statuses.enumerated() {
                switch status {
                case .mismatch, .stale: damaged += s.groups[g].members.count
                default: break
                }
            }
            return UnreadRecords(newerEpoch: unlocked.unreadableNewerEpoch, hiddenEntryRevisions: hidden, damagedRecords: damaged)
        }
    }

    /// True when `issue` is about a record (or commit) sealed under a key
    /// this credential does not hold (`unknown_key`, `commit_unverifiable`)
    /// while its device was removed: records written without it, not damage
    /// (`Spec/keys.md §6.3`).
    public func isUnreadableWithThisKey(_ issue: VerifyReport.Issue) -> Bool {
        lock.withLock { () -> Bool in
            let structure = file.structure
            guard unlocked.unreadableNewerEpoch != nil, let f = issue.frameIndex, f < structure.frames.count,
                issue.code == "unknown_key" || issue.code == "commit_unverifiable"
            else { return false }
            return unlocked.keys.keys(for: structure.frames[f].header.keyID).isEmpty
        }
    }
}
