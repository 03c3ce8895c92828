import QuireFormat
import QuireKeys
import QuireSystem

/// Records the entries a vault shows leave out, as opening it learned
/// them: no extra pass over the file.
public struct UnreadRecords: Sendable, Equatable {
    /// The newest epoch this credential cannot open because its device was
    /// removed from the vault; nil when there is none.
    public let newerEpoch: UInt16?
    /// Committed entry revisions sealed under epochs newer than this
    /// credential's keys (up to ``newerEpoch``): written after the removal.
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
            if let newer = unlocked.unreadableNewerEpoch {
                let held = unlocked.keys.newestEpoch ?? 0
                hidden = s.frames[0..<s.committedFrameCount].filter {
                    $0.header.kind == .entryRevision && $0.header.epoch > held && $0.header.epoch <= newer
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

    /// True when `issue` is about a record (or commit) under an epoch this
    /// credential cannot open because its device was removed: records
    /// written without it, not damage (`Spec/keys.md §6.3`).
    public func isUnreadableWithThisKey(_ issue: VerifyReport.Issue) -> Bool {
        lock.withLock { () -> Bool in
            let structure = file.structure
            guard let newer = unlocked.unreadableNewerEpoch, let f = issue.frameIndex, f < structure.frames.count,
                issue.code == "unknown_epoch" || issue.code == "commit_unverifiable"
            else { return false }
            let epoch = structure.frames[f].header.epoch
            return unlocked.keys.keys(for: epoch).isEmpty && epoch <= newer
        }
    }
}
