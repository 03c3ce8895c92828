@_spi(Crypto) import QuireCrypto
import QuireSystem

/// A record a reader released: its frame and its verified content.
@_spi(Format) public struct ReadRecord: Sendable {
    /// The frame.
    public let frame: ScannedFrame
    /// The record body: decrypted, decompressed and unpadded for a sealed
    /// frame; the body without its trailer for a plaintext frame.
    public let payload: [UInt8]
    /// True when the commit covering the record verified.
    public let commitVerified: Bool
    /// The Ed25519 public key of the member who attested the record's
    /// commit; nil when the commit is unverified or unattested
    /// (`Spec/format.md §9.4`).
    public let attestedBy: [UInt8]?
    /// The Ed25519 public key of a member a trusted keyring lists as removed
    /// whose attestation covers the record's commit: shown as attested by a
    /// removed member, never as a member's (`Spec/format.md §9.4`).
    public let removedAttestor: [UInt8]?
    /// True when the record's commit ranks with a current member's standing
    /// (`Spec/format.md §9.4` step 5): attested by a current member, or by a
    /// removed member before its removal — a link ancestor of the removal's
    /// commit (eleventh review R11-2). Its records are still shown as a
    /// removed member's; only the rules that rank by standing (an entry's
    /// heads and winner, the profile, `Spec/merge.md §5`) count it so.
    package var ranksAsMember = false

    /// 2 when the commit ranks with a current member's standing, 1 when it
    /// is verified, 0 otherwise (`Spec/merge.md §5`).
    package var standing: Int { ranksAsMember ? 2 : commitVerified ? 1 : 0 }
}

extension VaultFile {
    /// Reads every committed record of the given kinds in file order,
    /// calling `body` with each one that verifies, and returns the problems
    /// met (one per record that could not be released). Attachment chunks
    /// are never passed to `body`; read them with ``openBlob(_:)``.
    ///
    /// Memory is bounded by the largest record plus a 4 MiB read window.
    ///
    /// - Parameters:
    ///   - kinds: the kinds to read; other frames are skipped unopened.
    ///   - range: the frame indices to look at (default: every committed frame).
    ///   - body: return false to stop early.
    public func forEachRecord(kinds: Set<RecordKind>, in range: Range<Int>? = nil, _ body: (ReadRecord) -> Bool) -> [FormatError] {
        lock.withLock { forEachRecordLocked(kinds: kinds, in: range, body) }
    }

    /// ``forEachRecord(kinds:in:_:)`` over the committed frames among
    /// `frames` (ascending frame indices): one pass, one read window and
    /// one decompression context for all of them, however far apart.
    public func forEachRecord(kinds: Set<RecordKind>, atFrames frames: [Int], _ body: (ReadRecord) -> Bool) -> [FormatError] {
        lock.withLock {
            let committed = frames.filter { $0 >= 0 && $0 < structure.committedFrameCount }
            return forEachRecordLocked(kinds: kinds, frames: committed, body)
        }
    }

    func forEachRecordLocked(kinds: Set<RecordKind>, in range: Range<Int>?, _ body: (ReadRecord) -> Bool) -> [FormatError] {
        let frames = range.map { $0.clamped(to: 0..<structure.committedFrameCount) } ?? 0..<structure.committedFrameCount
        return forEachRecordLocked(kinds: kinds, frames: frames, body)
    }

    private func forEachRecordLocked(kinds: Set<RecordKind>, frames: some Collection<Int>, _ body: (ReadRecord) -> Bool) -> [FormatError] {
        var issues: [FormatError] = []
        let window = FileWindow(file: file, fileSize: structure.fileSize)
        let context = DecompressionContext()
        // Who attested each record: check the attestations of the groups
        // holding the records asked for, all at once (on every core).
        if !uncheckedAttestations.isEmpty {
            var groups: [Int] = []
            for index in frames where kinds.contains(structure.frames.kind(at: index)) {
                if let g = structure.groupIndex(ofFrame: index), uncheckedAttestations[g] != nil, groups.last != g { groups.append(g) }
            }
            checkAttestations(of: groups)
        }
        findRemovalAncestorsLocked()
        let commits = verdicts
        for index in frames {
            let kind = structure.frames.kind(at: index)
            guard kinds.contains(kind), kind != .blobChunk, kind != .commit else { continue }
            let frame = structure.frames[index]
            do {
                let payload = try open(frame: frame, window: window, context: context)
                let g = structure.groupIndex(ofFrame: index)
                let verified = g.map { $0 < commits.statuses.count && commits.statuses[$0] == .verified } ?? false
                let signer = g.flatMap { commits.attestor($0) }
                let removed = g.flatMap { commits.removedAttestor($0) }
                var record = ReadRecord(
                    frame: frame, payload: payload, commitVerified: verified, attestedBy: signer, removedAttestor: removed)
                record.ranksAsMember = g.map { commits.ranksAsMember($0) } ?? false
                if !body(record) { break }
            } catch {
                issues.append(error)
            }
        }
        return issues
    }

    /// The verified content of the committed record at frame `index`.
    ///
    /// - Throws: ``FormatError/authenticationFailed(_:)``,
    ///   ``FormatError/unknownKey(_:keyID:)``, ``FormatError/staleEpoch(_:epoch:currentEpoch:)``,
    ///   ``FormatError/malformedFrame(_:reason:)``, padding and decompression
    ///   errors, ``FormatError/io(_:)``.
    public func openRecord(frame index: Int) throws(FormatError) -> [UInt8] {
        try lock.withLock { () throws(FormatError) -> [UInt8] in try openRecordLocked(frame: index) }
    }

    /// The held key that opens sealed frame `index`: the only key with the
    /// frame's key id, or, when 48-bit key ids collide (`Spec/format.md
    /// §5.1`), the first in key-commitment order whose record key
    /// authenticates it. Nil when no held key opens it. Callers use it for
    /// what the key carries besides the record key: a manifest's blob key,
    /// a commit's attestation key.
    public func openingKey(frame index: Int) -> EpochKey? {
        let candidates = keys.keys(for: structure.frames.header(at: index).keyID)
        guard candidates.count > 1 else { return candidates.first }
        return lock.withLock { () -> EpochKey? in
            let frame = structure.frames[index]
            let candidates = candidateKeysLocked(for: frame)
            let window = FileWindow(file: file, fileSize: structure.fileSize, preferredByteCount: 0)
            let ad = vaultID.bytes + frame.headerBytes[0..<FrameHeader.fieldByteCount]
            return candidates.first { key in
                (try? window.withBytes(frame.bodyOffset, Int(frame.header.bodyLength)) { body throws(FormatError) in
                    try SealedFrame.open(
                        body: body, header: frame.header, associatedData: ad, location: frame.location, keys: [key],
                        context: DecompressionContext())
                }) != nil
            }
        }
    }

    /// What commit group `g` shows of `key`, which need not be held, for
    /// what `verify` says a removal cut (trial 26 N5): nil unless the
    /// commit's stored head computes under `key`'s commit key from its
    /// stored previous head over the group as the file holds it
    /// (`Spec/format.md §9.2`) — only a holder of `key` made it; else who
    /// signed its attestation under `key` (§9.4; nil when unattested or
    /// when it does not open or verify) and the frames of the group, the
    /// commit and attachment chunks aside, that `key` opens (body hash and
    /// AEAD, as a reader opens them). A group with damaged bytes shows
    /// nothing. No rule of trust is applied, and nothing is trusted by it.
    package func authenticate(group g: Int, under key: EpochKey) -> (signer: [UInt8]?, opened: [Int])? {
        lock.withLock { () -> (signer: [UInt8]?, opened: [Int])? in
            guard g < structure.groups.count else { return nil }
            let group = structure.groups[g]
            guard !group.containsDamage, group.commitBody.count == CommitChain.bodyByteCount else { return nil }
            let header = structure.frames.header(at: group.commitFrame)
            let previous = group.storedPreviousHead
            guard
                let head = try? CommitChain.head(
                    key: key, vaultID: vaultID, previousHead: previous, digest: group.digest, commitHeader: header, body: group.commitBody),
                constantTimeEqual(head, group.storedHead)
            else { return nil }
            var signer: [UInt8]?
            if case .signed(let s) = CommitChain.checkAttestation(
                body: group.commitBody, previousHead: previous, digest: group.digest, key: key, vaultID: vaultID, commitHeader: header)
            {
                signer = s
            }
            let window = FileWindow(file: file, fileSize: structure.fileSize, preferredByteCount: 0)
            let context = DecompressionContext()
            var opened: [Int] = []
            for f in group.members {
                let frame = structure.frames[f]
                guard frame.malformation == nil, frame.header.isSealed, frame.header.kind != .blobChunk, frame.header.kind != .commit
                else { continue }
                let ad = vaultID.bytes + frame.headerBytes[0..<FrameHeader.fieldByteCount]
                let opens =
                    (try? window.withBytes(frame.bodyOffset, Int(frame.header.bodyLength)) { body throws(FormatError) in
                        try SealedFrame.open(
                            body: body, header: frame.header, associatedData: ad, location: frame.location, keys: [key], context: context)
                    }) != nil
                if opens { opened.append(f) }
            }
            return (signer, opened)
        }
    }

    func openRecordLocked(frame index: Int) throws(FormatError) -> [UInt8] {
        let frame = structure.frames[index]
        let window = FileWindow(file: file, fileSize: structure.fileSize, preferredByteCount: 0)
        return try open(frame: frame, window: window, context: recordDecompression)
    }

    func open(frame: ScannedFrame, window: FileWindow, context: DecompressionContext) throws(FormatError) -> [UInt8] {
        if let reason = frame.malformation { throw .malformedFrame(frame.location, reason: reason) }
        if let verdict = releaseVerdictLocked(frame: frame.location.index) { throw verdict }
        if !frame.header.isSealed {
            guard frame.checksumIntact == true else { throw .authenticationFailed(frame.location) }
            if let body = frame.plaintextBody { return body }
            return try window.bytes(frame.bodyOffset, Int(frame.header.bodyLength) - FrameHeader.bodyHashByteCount)
        }
        let candidates = candidateKeysLocked(for: frame)
        guard !candidates.isEmpty else { throw .unknownKey(frame.location, keyID: frame.header.keyID) }
        let ad = vaultID.bytes + frame.headerBytes[0..<FrameHeader.fieldByteCount]
        return try window.withBytes(frame.bodyOffset, Int(frame.header.bodyLength)) { body throws(FormatError) in
            try SealedFrame.open(
                body: body, header: frame.header, associatedData: ad, location: frame.location, keys: candidates, context: context)
        }
    }
}
