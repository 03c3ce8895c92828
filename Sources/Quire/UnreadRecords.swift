@_spi(Format) import QuireFormat
@_spi(Format) import QuireKeys
import QuireSystem

/// The records a read of the vault's entries could not give back, and where
/// they are (`Spec/format.md §9.3`, §10.2, §12): what a list, a search or an
/// export leaves out. Nothing is dropped silently: an app shows how many
/// ``records`` there are beside what it lists, and an export refuses (or says it is
/// partial) when it is not zero.
///
/// Counted, each once, in file order:
/// - every entry revision, attachment manifest or profile record that was
///   not released or did not decode (damaged, altered, malformed, stale, or
///   sealed under a key this credential does not hold: `unknown_key`);
/// - every damaged region (bytes that are not frames: the records that were
///   there cannot be counted, so the region counts as one);
/// - every commit that does not verify or is stale (records it covered may
///   have been removed: a deleted record leaves nothing else behind);
/// - every entry revision, attachment manifest or profile record released
///   from a verified commit whose attestation failed (`attestation_failed`,
///   at the record): read, but not to be trusted — damage
///   to the attestation, not a writer that did not attest.
///
/// A torn tail is not counted: nothing in it was ever committed.
///
/// Only what the handle has read is counted. A handle that opened from
/// this device's index cache (`Spec/index-cache.md`), which is written
/// only after a pass that read every record, answers queries without
/// reading every record again: damage done to the file after the cache
/// was written, in a record nothing has read since (an attachment's
/// chunks, an earlier revision), is silent at open — `Vault.keyWarnings`
/// is empty and ``records`` is empty. It is found when that record is read
/// (reading the attachment throws a `.damaged` ``QuireError``; a page
/// that decrypts a damaged entry counts it here) or by `Vault.verify()`,
/// which reads every record. To know a journal is whole (after restoring
/// it, before an export the person relies on), call `verify()`.
public struct UnreadRecords: Sendable, Equatable {
    /// One record (or region, or commit) that could not be read.
    public struct Record: Sendable, Equatable, CustomStringConvertible {
        /// The stable error code (`Spec/format.md §12`), such as
        /// `authentication_failed`, `frame_damaged` or `commit_mismatch`.
        public let code: String
        /// The byte offset in the file.
        @_spi(Format) public let offset: UInt64?
        /// The frame index, when the problem is one frame.
        @_spi(Format) public let frameIndex: Int?
        /// A sentence a person can act on (it names places, never content).
        public let message: String

        /// ``message``.
        @_spi(Format) public var description: String { message }

        /// A record found unreadable outside the entry index, such as an
        /// attachment chunk that does not authenticate.
        @_spi(Format) public init(code: String, offset: UInt64?, frameIndex: Int?, message: String) {
            self.code = code
            self.offset = offset
            self.frameIndex = frameIndex
            self.message = message
        }
    }

    /// Every record not read, in file order: each one's ``Record/code``
    /// to log and ``Record/message`` to show in a "Details" view.
    public let records: [Record]
    /// The newest epoch this credential cannot open because its device was
    /// removed from the vault; nil when there is none.
    @_spi(Format) public let newerEpoch: UInt32?
    /// Committed entry revisions sealed under a key this credential does not
    /// hold, counted when ``newerEpoch`` is set: written after the removal
    /// (`Spec/format.md §5.1`).
    @_spi(Format) public let hiddenEntryRevisions: Int

    /// How many records (regions, commits) could not be read: the
    /// number of ``records`` (an app reads `records.count`). 0 does not
    /// prove the file whole when the handle opened from the index cache
    /// (see the type's comment).
    @_spi(Format) public var count: Int { records.count }
    /// True when everything committed was read (``records`` is empty).
    @_spi(Format) public var isEmpty: Bool { records.isEmpty }
    /// Of the unread records, those sealed under a key this credential does not
    /// hold (`unknown_key`): for a removed device, the records written after
    /// it was removed. Not damage. For the CLI's report: an app says a
    /// removed device by `Vault.removedFromVault`.
    @_spi(Format) public var notReadableWithThisKey: Int { records.filter { $0.code == "unknown_key" }.count }
    /// Of ``records``, those that are damage: all of them, but the
    /// `unknown_key` records of a removed device (``newerEpoch`` set).
    @_spi(Format) public var damaged: [Record] { records.filter { newerEpoch == nil || $0.code != "unknown_key" } }
    /// Of ``records``, those that were read but cannot be trusted: their
    /// commit's attestation failed (`attestation_failed`). They are shown
    /// (as not attested); the rest of ``damaged`` is left out.
    @_spi(Format) public var untrusted: [Record] { records.filter { $0.code == "attestation_failed" } }

    /// Nothing unread.
    @_spi(Format) public init() {
        records = []
        newerEpoch = nil
        hiddenEntryRevisions = 0
    }

    /// These records with `more` added (each frame once), in file order.
    @_spi(Format) public func adding(_ more: [Record]) -> UnreadRecords {
        let frames = Set(records.compactMap(\.frameIndex))
        let added = more.filter { $0.frameIndex.map { !frames.contains($0) } ?? true }
        return UnreadRecords(records: records + added, newerEpoch: newerEpoch, hiddenEntryRevisions: hiddenEntryRevisions)
    }

    private init(records: [Record], newerEpoch: UInt32?, hiddenEntryRevisions: Int) {
        self.records = records.sorted { ($0.offset ?? 0, $0.frameIndex ?? -1) < ($1.offset ?? 0, $1.frameIndex ?? -1) }
        self.newerEpoch = newerEpoch
        self.hiddenEntryRevisions = hiddenEntryRevisions
    }

    init(
        recordIssues: [FormatError], structure: VaultStructure, commitIssues: [FormatError], newerEpoch: UInt32?, hiddenEntryRevisions: Int
    ) {
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
            case .commitMismatch, .commitTampered, .commitOrphaned, .staleEpoch:
                found.append(Record(code: e.code, offset: e.offset, frameIndex: e.location?.index, message: e.description))
            case .attestationFailed(let commit, _):
                // Its records are readable but untrusted: each is counted
                // (chunks are the manifest's), at the record.
                guard let group = structure.groups.first(where: { $0.commitFrame == commit.index }) else { break }
                found += Record.untrusted(inCommit: group, structure: structure).filter { !seen.contains($0.frameIndex ?? -1) }
            default:
                // An unverifiable commit (no key for it) is reported through
                // its records' unknown_key.
                break
            }
        }
        records = found.sorted { ($0.offset ?? 0, $0.frameIndex ?? -1) < ($1.offset ?? 0, $1.frameIndex ?? -1) }
        self.newerEpoch = newerEpoch
        self.hiddenEntryRevisions = hiddenEntryRevisions
    }
}

extension UnreadRecords.Record {
    /// One `attestation_failed` record for each entry revision, manifest or
    /// profile of commit `group`, whose attestation does not check: read,
    /// but not to be trusted as a member's (`Spec/format.md §9.4`).
    static func untrusted(inCommit group: CommitGroup, structure: VaultStructure) -> [UnreadRecords.Record] {
        let commit = structure.frames.location(at: group.commitFrame)
        let code = FormatError.attestationFailed(commit, reason: "").code
        return group.members.compactMap { i -> UnreadRecords.Record? in
            let frame = structure.frames[i]
            guard [.entryRevision, .blobManifest, .profile].contains(frame.header.kind) else { return nil }
            return UnreadRecords.Record(
                code: code, offset: frame.location.offset, frameIndex: i,
                message:
                    "frame \(i) at byte \(frame.location.offset) is in commit \(commit.index), whose attestation does not check: it is read but cannot be trusted as written by a member"
            )
        }
    }
}

extension Vault {
    /// The records reading this vault's entries could not give back
    /// (``UnreadRecords``). Uses the entry index (built now if it is not
    /// loaded: one pass that decrypts every revision once).
    ///
    /// - Throws: a container error (`.damaged`, `.unavailable`, `.outOfSpace`…) for I/O.
    @_spi(Format)
    public func unreadRecords() throws(QuireError) -> UnreadRecords {
        try lock.withLock { () throws(QuireError) -> UnreadRecords in
            // The cache is used only when every commit verified and no
            // record failed to read, in the file it reflects and the tail
            // after it (Spec/index-cache.md §5): nothing to say.
            if index == nil, indexCache?.view != nil {
                return UnreadRecords(
                    recordIssues: [], structure: file.structure, commitIssues: [], newerEpoch: nil, hiddenEntryRevisions: 0)
            }
            let index = try loadIndex()
            return makeUnreadRecords(index.issues)
        }
    }

    /// The revisions released from a verified commit whose attestation
    /// failed (`attestation_failed`, `Spec/format.md §9.4`): shown as not
    /// attested because the attestation is damaged, not because their writer
    /// did not attest.
    ///
    /// - Throws: a container error (`.damaged`, `.unavailable`, `.outOfSpace`…) for I/O.
    package func revisionsWithFailedAttestation() throws(QuireError) -> Set<RevisionID> {
        try lock.withLock { () throws(QuireError) -> Set<RevisionID> in
            // A cache is used only when no attestation failed (Spec/index-cache.md §5).
            if index == nil, indexCache?.view != nil { return [] }
            let index = try loadIndex()
            let s = file.structure
            var frames = Set<Int>()
            for case .attestationFailed(let commit, _) in file.commitIssues {
                if let group = s.groups.first(where: { $0.commitFrame == commit.index }) { frames.formUnion(group.members) }
            }
            guard !frames.isEmpty else { return [] }
            var found = Set<RevisionID>()
            for list in index.revisions.values {
                for r in list where frames.contains(r.frame) { found.insert(r.revisionID) }
            }
            return found
        }
    }

    /// ``UnreadRecords`` from the record issues of a pass over the entries
    /// (the caller holds the lock).
    func makeUnreadRecords(_ recordIssues: [FormatError]) -> UnreadRecords {
        let s = file.structure
        var hidden = 0
        if unlocked.unreadableNewerEpoch != nil {
            hidden =
                (0..<s.committedFrameCount).filter {
                    let h = s.frames.header(at: $0)
                    return h.kind == .entryRevision && unlocked.keys.keys(for: h.keyID).isEmpty
                }.count
        }
        return UnreadRecords(
            recordIssues: recordIssues, structure: s, commitIssues: file.commitIssues, newerEpoch: unlocked.unreadableNewerEpoch,
            hiddenEntryRevisions: hidden)
    }
}
