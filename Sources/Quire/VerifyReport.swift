@_spi(Crypto) import QuireCrypto
@_spi(Format) import QuireFormat
@_spi(Format) import QuireKeys
import QuireSystem

/// What `verify` found (`Spec/format.md §10`, §12): every damaged, altered
/// or untrusted part of the vault, one issue each, and what is intact.
public struct VerifyReport: Sendable {
    /// One problem, with its stable code and where it is: damage or a
    /// warning, as its message says (``VerifyReport/isIntact`` tells
    /// whether any is damage).
    public struct Issue: Sendable, Equatable, CustomStringConvertible {
        /// The stable error code (`Spec/format.md §12`).
        public let code: String
        /// Byte offset in the file, when the issue is about a place.
        @_spi(Format) public let offset: UInt64?
        /// Frame index, when the issue is about one frame.
        @_spi(Format) public let frameIndex: Int?
        /// A sentence a person can act on.
        public let message: String
        /// True for issues that lose or distrust data; false for warnings
        /// (a repaired header, a damaged header copy, a torn tail). For the
        /// CLI's report; an app reads the summary, ``VerifyReport/isIntact``.
        @_spi(Format) public let isDamage: Bool

        @_spi(Format) public var description: String { message }
    }

    /// The file size in bytes.
    @_spi(Format) public let fileByteCount: UInt64
    /// Frames found, including commits.
    @_spi(Format) public let frameCount: Int
    /// Commits found.
    @_spi(Format) public let commitCount: Int
    /// Records that verified and were readable (every kind but commits).
    @_spi(Format) public let intactRecordCount: Int
    /// Every problem, in file order.
    public let issues: [Issue]
    /// Verified commits no current member attested (unattested, or attested
    /// by a removed member, `Spec/format.md §9.4`): not damage, but what
    /// they hold is no member's (`Spec/cli-json.md §3.3`).
    package var unattestedCommitCount = 0
    /// Records (entry revisions, manifests, profiles) released from those
    /// commits.
    package var unattestedRecordCount = 0

    /// True when nothing was lost or distrusted (warnings allowed).
    public var isIntact: Bool { !issues.contains(where: \.isDamage) }
    /// The frame indices of records that were lost or distrusted.
    @_spi(Format) public var damagedFrames: [Int] { issues.filter(\.isDamage).compactMap(\.frameIndex) }
}

extension VaultReportBuilder {
    static func issue(_ e: FormatError) -> VerifyReport.Issue {
        let warning: Bool
        switch e {
        case .frameRepaired, .previousHeadRepaired, .tornTail, .commitFork: warning = true
        default: warning = false
        }
        return VerifyReport.Issue(code: e.code, offset: e.offset, frameIndex: e.location?.index, message: e.description, isDamage: !warning)
    }

    static func issue(_ e: KeyError) -> VerifyReport.Issue {
        var offset: UInt64? = nil
        var index: Int? = nil
        switch e {
        case .keyringUnauthenticated(let l, _), .escrowForbidden(let l), .removedDeviceSlot(let l), .malformedKeyring(let l, _):
            offset = l.offset
            index = l.index
        default: break
        }
        var warning = false
        if case .keyringCopyDamaged(let l) = e {
            offset = l.offset
            index = l.index
            warning = true
        }
        if case .removalTie(let l) = e {
            offset = l.offset
            index = l.index
            warning = true
        }
        if case .removalMutual(let l) = e {
            offset = l.offset
            index = l.index
            warning = true
        }
        if case .keyEpochClaimedTwice(let l, _, _, _) = e {
            offset = l.offset
            index = l.index
            warning = true
        }
        if case .kdfLimitsExceededInKeyring(let l, _, _) = e {
            offset = l.offset
            index = l.index
            warning = true
        }
        return VerifyReport.Issue(code: e.code, offset: offset, frameIndex: index, message: e.description, isDamage: !warning)
    }
}

enum VaultReportBuilder {}

extension Vault {
    /// Checks every byte of the vault that this credential can check: both
    /// header copies, every frame header, every commit, every keyring, every
    /// record (opened and decoded) and every attachment (every chunk opened,
    /// sizes and blob ids recomputed). Never modifies the file.
    ///
    /// Intact records stay readable whatever else is damaged; the report
    /// names each one that is not, with its offset and frame index.
    @_spi(Format)
    public func verify() -> VerifyReport {
        // Never throws when not cancellable.
        (try? verifyReport(cancellable: false))
            ?? VerifyReport(fileByteCount: 0, frameCount: 0, commitCount: 0, intactRecordCount: 0, issues: [])
    }

    /// ``verify()``; when `cancellable`, stops at the next record or chunk
    /// once the task is cancelled (``VaultCancellation``).
    ///
    /// - Throws: `.cancelled` (`cancelled`), only when `cancellable`.
    func verifyReport(cancellable: Bool) throws(QuireError) -> VerifyReport {
        func cancelled() -> Bool { cancellable && VaultCancellation.isRequested }
        return try lock.withLock { () throws(QuireError) -> VerifyReport in
            // Every byte is checked: a file opened from the index cache's
            // prefix structure is scanned whole first (Spec/index-cache.md §5).
            // Should that fail, the records are still read at the offsets
            // the cache gave and each is checked by its tag, but the
            // prefix's heads and signatures were taken from the cache: that
            // is damage to report, never an intact verdict.
            var issues: [VerifyReport.Issue] = []
            do throws(QuireError) { try scanWholeFileIfCachedPrefix() } catch {
                issues.append(
                    VerifyReport.Issue(
                        code: error.code, offset: nil, frameIndex: nil,
                        message: "the file could not be read again whole (\(error.message)), so its commits were not all checked; "
                            + "run verify again once the file can be read",
                        isDamage: true))
            }
            let s = file.structure
            if case .copyDamaged(let i) = s.headerDamage {
                issues.append(
                    VerifyReport.Issue(
                        code: "header_copy_damaged", offset: UInt64(i * 32), frameIndex: nil,
                        message: "header copy \(i + 1) of 2 is damaged; the other copy was used", isDamage: false))
            }
            var found: [(UInt64, VerifyReport.Issue)] = []
            for region in s.damagedRegions {
                found.append((region.offset, VaultReportBuilder.issue(.frameDamaged(offset: region.offset, byteCount: region.byteCount))))
            }
            for frame in s.frames[0..<s.committedFrameCount] {
                if frame.repaired { found.append((frame.location.offset, VaultReportBuilder.issue(.frameRepaired(frame.location)))) }
                // Commit and chunk frames never pass through the record reader below.
                if let reason = frame.malformation, frame.header.kind == .commit || frame.header.kind == .blobChunk {
                    found.append((frame.location.offset, VaultReportBuilder.issue(.malformedFrame(frame.location, reason: reason))))
                }
                if !frame.header.kind.isKnown && frame.header.kind.isCritical {
                    found.append(
                        (
                            frame.location.offset,
                            VaultReportBuilder.issue(.unknownCriticalKind(frame.location, kind: frame.header.kind.rawValue))
                        ))
                }
            }
            for e in file.commitIssues { found.append((e.offset ?? 0, VaultReportBuilder.issue(e))) }
            for e in unlocked.issues {
                let i = VaultReportBuilder.issue(e)
                found.append((i.offset ?? 0, i))
            }
            // Every record but chunks: open and decode.
            var intact = 0
            var unattestedRecords = 0
            var manifests: [(BlobManifest, FrameLocation, SymmetricKey?)] = []
            // Keyrings are checked by the key layer (its issues are above).
            // Frames of kinds this reader does not know are skipped without
            // checking their body hash or their commit's epoch: they are
            // never released, so never reported (Spec/format.md §4.2, §9.3);
            // an unknown critical kind is reported above.
            let kinds = Set(s.frames[0..<s.committedFrameCount].map(\.header.kind).filter(\.isKnown)).subtracting([
                .commit, .blobChunk, .keyring,
            ])
            intact += unlocked.keyrings.filter(\.isTrusted).count
            var stopped = false
            let recordIssues = file.forEachRecord(kinds: kinds) { record in
                if cancelled() {
                    stopped = true
                    return false
                }
                let loc = record.frame.location
                do throws(FormatError) {
                    switch record.frame.header.kind {
                    case .entryRevision: _ = try EntryRevision(decoding: record.payload, location: loc)
                    case .blobManifest:
                        let blobKey = file.openingKey(frame: loc.index)?.blobKey
                        manifests.append((try BlobManifest(decoding: record.payload, location: loc), loc, blobKey))
                    case .profile: _ = try Profile(decoding: record.payload, location: loc)
                    default: break
                    }
                    intact += 1
                    if record.commitVerified && record.attestedBy == nil { unattestedRecords += 1 }
                } catch {
                    found.append((loc.offset, VaultReportBuilder.issue(error)))
                }
                return true
            }
            if stopped { throw .cancelled }
            for e in recordIssues { found.append((e.offset ?? 0, VaultReportBuilder.issue(e))) }
            // Attachments: every released manifest, its stream's structure, every
            // chunk, the size and the id. A stream's problems are reported at the
            // manifest, a chunk's at the chunk (Spec/format.md §7.4, §12).
            for (m, loc, blobKey) in manifests {
                if cancelled() { throw .cancelled }
                do throws(FormatError) {
                    let reader = try file.openBlob(m, blobKey: blobKey)
                    var sink = [UInt8](repeating: 0, count: Limits.chunkByteCount)
                    while try sink.withMutableBytes({ (raw: UnsafeMutableRawBufferPointer) throws(FormatError) -> Int in
                        try reader.readChecked(into: raw)
                    }) > 0 {}
                    intact += reader.chunkCount
                } catch {
                    // A damaged chunk is reported where it is; a broken chunk
                    // structure (no single frame to blame) at the manifest.
                    let at = error.location ?? loc
                    let i = VaultReportBuilder.issue(error)
                    found.append(
                        (
                            at.offset,
                            VerifyReport.Issue(code: i.code, offset: at.offset, frameIndex: at.index, message: i.message, isDamage: true)
                        ))
                }
            }
            if s.tailByteCount > 0 {
                found.append(
                    (
                        s.committedEnd,
                        VaultReportBuilder.issue(
                            .tornTail(
                                offset: s.committedEnd, byteCount: s.tailByteCount, uncommittedFrameCount: s.uncommittedFrames.count))
                    ))
            }
            var held: Set<BlobID> = []
            for (m, _, _) in manifests { held.formUnion([m.blob] + m.aliases) }
            // Only when every record read: a reference to content whose
            // manifest is damaged is that damage, reported above.
            if !found.contains(where: { $0.1.isDamage }) { found += danglingAttachments(held: held) }
            issues += found.sorted { $0.0 < $1.0 }.map(\.1)
            let commits = file.commits
            let unattestedCommits = commits.statuses.indices.filter { commits.statuses[$0] == .verified && !commits.isAttested($0) }.count
            return VerifyReport(
                fileByteCount: s.fileSize, frameCount: s.frames.count, commitCount: s.groups.count, intactRecordCount: intact,
                issues: issues, unattestedCommitCount: unattestedCommits, unattestedRecordCount: unattestedRecords)
        }
    }

    /// An issue for each attachment reference of an entry's current
    /// version (every head that is not a tombstone) whose blob no released
    /// manifest of the file holds (`held`): its photo can never be read
    /// (`blob_not_found`, `Spec/records.md §4`). A warning, not damage:
    /// every record reads, and the content was lost before (a compaction
    /// that dropped it damaged) or never stored (an older version, another
    /// implementation, an import whose export lacked the file; this version
    /// refuses to commit such a reference, `attachment_not_stored`). Under
    /// the lock.
    func danglingAttachments(held: Set<BlobID>) -> [(UInt64, VerifyReport.Issue)] {
        guard let index = try? loadIndex() else { return [] }
        var out: [(UInt64, VerifyReport.Issue)] = []
        for id in index.revisions.keys {
            for head in index.heads(of: id) where !head.isDeleted {
                guard let body = (try? revision(of: head))?.body else { continue }
                for reference in body.attachments where !held.contains(reference.blob) {
                    let location = file.structure.frames[head.frame].location
                    out.append(
                        (
                            location.offset,
                            VerifyReport.Issue(
                                code: "blob_not_found", offset: location.offset, frameIndex: head.frame,
                                message: "entry \(id) names attachment \(reference.blob), which this vault does not hold: "
                                    + "it cannot be shown. Store it again from a copy that holds it, or remove it from the entry",
                                isDamage: false)
                        ))
                }
            }
        }
        return out
    }
}
