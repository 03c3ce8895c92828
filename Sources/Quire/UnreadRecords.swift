import QuireFormat
import QuireSystem

/// The records a read of the vault's entries could not give back, and where
/// they are (`Spec/format.md §9.3`, §10.2, §12): what a list, a search or an
/// export leaves out. Nothing is dropped silently: an app shows
/// ``count`` beside what it lists, and an export refuses (or says it is
/// partial) when it is not zero.
///
/// Counted, each once, in file order:
/// - every entry revision, attachment manifest or profile record that was
///   not released or did not decode (damaged, altered, malformed, stale, or
///   sealed under an epoch this key does not hold);
/// - every damaged region (bytes that are not frames: the records that were
///   there cannot be counted, so the region counts as one);
/// - every commit that does not verify or is stale (records it covered may
///   have been removed: a deleted record leaves nothing else behind).
///
/// A torn tail is not counted: nothing in it was ever committed.
public struct UnreadRecords: Sendable, Equatable {
    /// One record (or region, or commit) that could not be read.
    public struct Record: Sendable, Equatable, CustomStringConvertible {
        /// The stable error code (`Spec/format.md §12`), such as
        /// `authentication_failed`, `frame_damaged` or `commit_mismatch`.
        public let code: String
        /// The byte offset in the file.
        public let offset: UInt64?
        /// The frame index, when the problem is one frame.
        public let frameIndex: Int?
        /// A sentence a person can act on (it names places, never content).
        public let message: String

        public var description: String { message }
    }

    /// Every record not read, in file order.
    public let records: [Record]

    /// How many records (regions, commits) could not be read.
    public var count: Int { records.count }
    /// True when everything committed was read.
    public var isEmpty: Bool { records.isEmpty }
    /// Of ``records``, those sealed under an epoch this key does not hold
    /// (`unknown_epoch`): for a removed device, the records written after it
    /// was removed. Not damage.
    public var notReadableWithThisKey: Int { records.filter { $0.code == "unknown_epoch" }.count }

    /// Nothing unread.
    public init() { records = [] }

    init(recordIssues: [FormatError], structure: VaultStructure, commitIssues: [FormatError]) {
        var found: [Record] = []
        var seen = Set<Int>()
        for e in recordIssues {
            if let i = e.location?.index {
                guard !seen.contains(i) else { continue }
                seen.insert(i)
            }
            found.append(Record(code: e.code, offset: e.offset, frameIndex: e.location?.index, message: e.description))
        }
        for region in structure.damagedRegions {
            let e = FormatError.frameDamaged(offset: region.offset, byteCount: region.byteCount)
            found.append(Record(code: e.code, offset: region.offset, frameIndex: nil, message: e.description))
        }
        for e in commitIssues {
            switch e {
            case .commitMismatch, .staleEpoch:
                found.append(Record(code: e.code, offset: e.offset, frameIndex: e.location?.index, message: e.description))
            default:
                // An unverifiable commit (no key for its epoch) is reported
                // through its records' unknown_epoch.
                break
            }
        }
        records = found.sorted { ($0.offset ?? 0, $0.frameIndex ?? -1) < ($1.offset ?? 0, $1.frameIndex ?? -1) }
    }
}

extension Vault {
    /// The records reading this vault's entries could not give back
    /// (``UnreadRecords``). Uses the entry index (built now if it is not
    /// loaded: one pass that decrypts every revision once).
    ///
    /// - Throws: ``VaultError/format(_:)`` for I/O.
    public func unreadRecords() throws(VaultError) -> UnreadRecords {
        try lock.withLock { () throws(VaultError) -> UnreadRecords in
            let index = try loadIndex()
            return UnreadRecords(recordIssues: index.issues, structure: file.structure, commitIssues: file.commitIssues)
        }
    }
}
