@_spi(Crypto) public import QuireCrypto
import QuireSystem

/// The records of one commit being written (`Spec/format.md §9.1`).
///
/// Frames are written to the end of the file as they are appended (through
/// a 4 MiB buffer); nothing is committed until the closure given to
/// ``VaultFile/commit(random:options:_:)`` returns and the commit frame is
/// written and flushed. If the closure throws, every byte it wrote is cut
/// off again and the file is as it was.
@_spi(Format) public final class PendingCommit {
    unowned let vault: VaultFile
    /// The key records are sealed under.
    public let key: EpochKey
    /// The key the commit frame is computed, sealed and attested under when
    /// it is not ``key``: the key of a keyring in this commit that starts a
    /// new epoch — the write key of the key state the commit makes
    /// (`Spec/format.md §9.2`, seventh review R7-3). Nil: ``key``.
    public var commitKey: EpochKey?
    /// The stored head the commit extends when it is not the chain tip's:
    /// a removal that cuts keys extends the tip of the walk of the state it
    /// makes (``VaultFile/chainTipHead(holding:removing:)``,
    /// `Spec/format.md §9.1` step 5). Nil: the tip's.
    package var previousHead: [UInt8]?
    let random: any RandomSource
    let start: UInt64
    var position: UInt64
    var buffer: [UInt8] = []
    var bufferStart: UInt64
    var frames: [ScannedFrame] = []
    var trustedKeyringEpochs: [Int: UInt32] = [:]
    /// Frames other writers committed since this handle last looked,
    /// absorbed under the lock before this commit began. Index them before
    /// deciding anything from the vault's content (an edit's parents).
    public internal(set) var externalFrames: Range<Int> = 0..<0
    var pendingKeyringCopies: [(KeyID, UInt32, [UInt8], Bool)] = []
    static let flushThreshold = 4 << 20

    init(vault: VaultFile, key: EpochKey, random: any RandomSource, start: UInt64) {
        self.vault = vault
        self.key = key
        self.random = random
        self.start = start
        position = start
        bufferStart = start
    }

    /// Number of frames appended so far.
    public var frameCount: Int { frames.count }

    /// Seals `payload` as a record of `kind` and appends it.
    ///
    /// - Parameter compress: try zstd, keeping it only when smaller, and
    ///   always for entry revisions and profiles (`Spec/format.md §6.1`);
    ///   false only to build vectors of frames a writer does not make.
    /// - Returns: where the frame was written.
    /// - Throws: ``FormatError/recordTooLarge(byteCount:limit:)``, ``FormatError/io(_:)``.
    @discardableResult
    public func appendSealed(kind: RecordKind, payload: [UInt8], compress: Bool = true) throws(FormatError) -> FrameLocation {
        let frame = try SealedFrame.seal(
            kind: kind, payload: payload, key: key, vaultID: vault.vaultID, compress: compress, random: random,
            context: compress ? vault.recordCompression : nil)
        return try appendFrameBytes(frame, plaintextBody: nil, chunk: nil)
    }

    /// Appends a plaintext frame: `body` followed by its BLAKE2b-256 body hash
    /// (`Spec/format.md §4.2`). `keyID` is the key the frame belongs to (a
    /// keyring's own key). A keyring frame appended with `trusted` counts for
    /// the floor of later commits once this commit lands.
    ///
    /// - Throws: ``FormatError/recordTooLarge(byteCount:limit:)``, I/O errors.
    @discardableResult
    public func appendPlaintext(kind: RecordKind, keyID: KeyID, epoch: UInt32 = 0, body: [UInt8], trusted: Bool = true) throws(FormatError)
        -> FrameLocation
    {
        let limit = Limits.maxFrameBodyByteCount - FrameHeader.bodyHashByteCount
        guard body.count <= limit else { throw .recordTooLarge(byteCount: body.count, limit: limit) }
        let header = FrameHeader(kind: kind, flags: 0, keyID: keyID, bodyLength: UInt32(body.count + FrameHeader.bodyHashByteCount))
        let frame = header.encoded() + body + BLAKE2b.hash(body, byteCount: FrameHeader.bodyHashByteCount)
        let keep = kind == .keyring
        let location = try appendFrameBytes(frame, plaintextBody: keep ? body : nil, chunk: nil)
        if kind == .keyring && trusted { trustedKeyringEpochs[location.index] = epoch }
        return location
    }

    /// Appends a keyring frame now and its second copy just before the
    /// commit frame (`Spec/format.md §8.1`). `trusted` is false for a
    /// keyring carried unopened (compaction, `Spec/merge.md §6`): it counts
    /// for no floor.
    ///
    /// - Throws: as ``appendPlaintext(kind:keyID:epoch:body:trusted:)``.
    @discardableResult
    public func appendKeyring(keyID: KeyID, epoch: UInt32, body: [UInt8], trusted: Bool = true) throws(FormatError) -> FrameLocation {
        let location = try appendPlaintext(kind: .keyring, keyID: keyID, epoch: epoch, body: body, trusted: trusted)
        pendingKeyringCopies.append((keyID, epoch, body, trusted))
        return location
    }

    /// Appends a whole frame as it is (merge and compaction carry frames byte
    /// for byte). It must be a checked, complete, non-commit frame.
    ///
    /// - Throws: ``FormatError/malformedFrame(_:reason:)`` for anything else.
    @discardableResult
    public func appendRaw(frame bytes: [UInt8]) throws(FormatError) -> FrameLocation {
        let header = bytes.withUnsafeBytes { FrameHeader.parseChecked($0, at: 0) }
        let location = FrameLocation(offset: position, index: vault.structure.frames.count + frames.count)
        guard let header, bytes.count == FrameHeader.byteCount + Int(header.bodyLength), header.kind != .commit else {
            throw .malformedFrame(location, reason: "not a whole, checked, non-commit frame")
        }
        var chunk: ChunkHeader? = nil
        let h = FrameHeader.byteCount
        if header.kind == .blobChunk && bytes.count >= h + 24 + 21 { chunk = ChunkHeader.parse(bytes[(h + 24)..<(h + 45)]) }
        let keep = !header.isSealed && header.kind == .keyring
        let body = keep ? Array(bytes[h..<(bytes.count - FrameHeader.bodyHashByteCount)]) : nil
        return try appendFrameBytes(bytes, plaintextBody: body, chunk: chunk)
    }

    func appendFrameBytes(_ frame: [UInt8], plaintextBody: [UInt8]?, chunk: ChunkHeader?) throws(FormatError) -> FrameLocation {
        try frame.withBytes { (raw: UnsafeRawBufferPointer) throws(FormatError) -> FrameLocation in
            try appendFrame(raw, plaintextBody: plaintextBody, chunk: chunk)
        }
    }

    func appendFrame(_ raw: UnsafeRawBufferPointer, plaintextBody: [UInt8]?, chunk: ChunkHeader?) throws(FormatError) -> FrameLocation {
        // Each record, copied frame and attachment chunk: a cancelled task
        // (or a progress handler that said stop) abandons the commit here,
        // before its commit frame, so the file stays as it was.
        try OperationCancellation.check()
        let location = note(raw, plaintextBody: plaintextBody, chunk: chunk)
        buffer.append(contentsOf: raw)
        if buffer.count >= Self.flushThreshold { try flush() }
        return location
    }

    /// Appends chunk frames of `frameLength` bytes each, one after another
    /// in `raw` (the last one may be shorter: the stream's final chunk),
    /// written straight from `raw` (after what is buffered) rather than
    /// copied into the buffer: an attachment batch is already one large
    /// write.
    func appendChunkFrames(_ raw: UnsafeRawBufferPointer, frameLength: Int, chunks: [ChunkHeader]) throws(FormatError) {
        precondition(!chunks.isEmpty && raw.count > frameLength * (chunks.count - 1) && raw.count <= frameLength * chunks.count)
        try OperationCancellation.check()
        try flush()
        let start = position
        for (i, chunk) in chunks.enumerated() {
            let end = min((i + 1) * frameLength, raw.count)
            _ = note(UnsafeRawBufferPointer(rebasing: raw[(i * frameLength)..<end]), plaintextBody: nil, chunk: chunk)
        }
        do { try vault.file.write(raw, at: start) } catch { throw .io(error) }
        // The disk writes a large attachment while the next chunks are
        // sealed, not all of it in the commit's fsync.
        vault.file.startWriteback(from: start, count: raw.count)
        bufferStart = position
    }

    /// Records the frame `raw` at the current position and moves past it.
    private func note(_ raw: UnsafeRawBufferPointer, plaintextBody: [UInt8]?, chunk: ChunkHeader?) -> FrameLocation {
        let header = FrameHeader.unchecked(raw, at: 0)
        let location = FrameLocation(offset: position, index: vault.structure.frames.count + frames.count)
        let trailer = Array(raw[(raw.count - header.trailerByteCount)...])
        var checksum: Bool? = nil
        if !header.isSealed && header.kind != .commit { checksum = true }
        frames.append(
            ScannedFrame(
                location: location, header: header, headerBytes: Array(raw[0..<FrameHeader.byteCount]), trailer: trailer, repaired: false,
                chunk: chunk,
                plaintextBody: plaintextBody, checksumIntact: checksum, malformation: VaultScanner.malformation(of: header)))
        position += UInt64(raw.count)
        return location
    }

    func flush() throws(FormatError) {
        guard !buffer.isEmpty else { return }
        do { try vault.file.write(buffer, at: bufferStart) } catch { throw .io(error) }
        bufferStart += UInt64(buffer.count)
        buffer.removeAll(keepingCapacity: true)
    }

    /// A point to roll back to with ``rollBack(to:)``.
    struct Mark {
        let position: UInt64
        let frameCount: Int
        let keyrings: [Int: UInt32]
    }

    func mark() -> Mark { Mark(position: position, frameCount: frames.count, keyrings: trustedKeyringEpochs) }

    /// Forgets every frame appended after `mark`.
    func rollBack(to mark: Mark) {
        frames.removeSubrange(mark.frameCount...)
        trustedKeyringEpochs = mark.keyrings
        if mark.position >= bufferStart {
            buffer.removeSubrange(Int(mark.position - bufferStart)...)
        } else {
            // Already flushed: later writes overwrite those bytes and the
            // commit cuts the file at its end.
            buffer.removeAll(keepingCapacity: true)
            bufferStart = mark.position
        }
        position = mark.position
    }
}

/// Who vouches for a commit's group (`Spec/format.md §9.4`).
@_spi(Format) public enum CommitAttestation: Sendable {
    /// Nobody: an unattested commit (96 zero bytes).
    case none
    /// A member signs the group digest with this key pair.
    case sign(Ed25519.KeyPair)
    /// An attestation carried from another copy of the same group (merge),
    /// 96 bytes as it was. It signs the key the group was committed under and
    /// the head it extended there, so merge carries it only where the group
    /// is committed under the same key and extends the same head.
    case carried([UInt8])
}

extension VaultFile {
    /// Appends one commit: `build` appends frames to the pending commit, then
    /// the frames are flushed, the commit frame written and flushed again
    /// (`Spec/format.md §9.1`). `attestWith` signs the group as a member;
    /// nil writes an unattested commit.
    ///
    /// Holds the file's advisory lock throughout. If `build` throws, or
    /// writing fails, the file is cut back to where it was: nothing partial
    /// stays committed.
    ///
    /// - Throws: ``FormatError/notWritable(reason:)``,
    ///   ``FormatError/locked(path:seconds:)``,
    ///   ``FormatError/vaultChanged(path:)`` (the file was replaced or another
    ///   writer changed the keys: open it again), I/O errors, and whatever
    ///   `build` throws.
    public func commit(
        random: any RandomSource = SystemRandom(), options: WriteOptions = WriteOptions(), attestWith signer: Ed25519.KeyPair?,
        _ build: (PendingCommit) throws(FormatError) -> Void
    ) throws(FormatError) {
        let attestation: CommitAttestation = signer.map { .sign($0) } ?? .none
        try lock.withLock { () throws(FormatError) in try commitLocked(random: random, options: options, attestation: attestation, build) }
    }

    /// As ``commit(random:options:attestWith:_:)`` with any attestation.
    public func commit(
        random: any RandomSource = SystemRandom(), options: WriteOptions = WriteOptions(), attestation: CommitAttestation,
        _ build: (PendingCommit) throws(FormatError) -> Void
    ) throws(FormatError) {
        try lock.withLock { () throws(FormatError) in try commitLocked(random: random, options: options, attestation: attestation, build) }
    }

    func commitLocked(
        random: any RandomSource, options: WriteOptions, attestation: CommitAttestation,
        _ build: (PendingCommit) throws(FormatError) -> Void
    ) throws(FormatError) {
        guard isWritable else { throw .notWritable(reason: "it was opened read-only") }
        guard let key = keys.writeKey else { throw .notWritable(reason: "no epoch key to write with is unlocked") }
        let locked: Bool
        do { locked = try file.lockExclusive(timeoutSeconds: options.lockTimeoutSeconds) } catch { throw .io(error) }
        guard locked else { throw .locked(path: path, seconds: options.lockTimeoutSeconds) }
        defer { file.unlock() }
        var external = try synchronizeLocked()
        // A torn tail is cut only once the file has stayed unchanged for the
        // quiet period: a sync tool may be writing another device's commit
        // into it in place (Spec/format.md §10.3).
        let deadline = ProcessStats.monotonicNanoseconds() + UInt64(max(0, options.lockTimeoutSeconds) * 1e9)
        while structure.fileSize > structure.committedEnd {
            if try tailStayedUnchanged(quietSeconds: options.tornTailQuietSeconds, deadline: deadline, seconds: options.lockTimeoutSeconds)
            {
                try cutTailLocked()
                break
            }
            let more = try synchronizeLocked()
            external = external.lowerBound..<more.upperBound
        }
        if !leftoversChecked {
            // Under the lock on the file the path names, no merge or
            // compaction of it is running: its temporary files are a killed
            // writer's.
            leftoversChecked = true
            Leftovers.removeStale(besideVault: path, holdingLock: true)
        }
        let start = structure.committedEnd
        let pending = PendingCommit(vault: self, key: key, random: random, start: start)
        pending.externalFrames = external
        do {
            try build(pending)
            // Nothing appended: no commit to write.
            if pending.frames.isEmpty && pending.pendingKeyringCopies.isEmpty { return }
            try finish(pending, options: options, attestation: attestation)
        } catch {
            try? file.truncate(to: start)
            throw error
        }
    }

    /// Brings the structure up to date with the file under the lock and
    /// returns the frames other writers committed since this handle last
    /// looked.
    func synchronizeLocked() throws(FormatError) -> Range<Int> {
        // A sync tool that renames a new copy over the path leaves this
        // handle on the old file: appending there would be lost (§9.1).
        if let identity, FileSystem.identity(path) != identity { throw .vaultChanged(path: path) }
        let size: UInt64
        do { size = try file.size() } catch { throw .io(error) }
        let end = structure.committedEnd
        guard size >= end else { throw .vaultChanged(path: path) }
        let framesBefore = structure.committedFrameCount
        if let g = structure.groups.last {
            let onDisk: [UInt8]
            do { onDisk = try file.read(count: CommitChain.bodyByteCount, at: end - UInt64(CommitChain.bodyByteCount)) } catch {
                throw .io(error)
            }
            guard onDisk == g.commitBody else { throw .vaultChanged(path: path) }
        }
        if size > end {
            let groupsBefore = structure.groups.count
            try VaultScanner.rescanTail(&structure, file: file)
            streamIndexCache = nil
            let newGroups = structure.groups[groupsBefore...]
            for g in newGroups {
                for i in g.members where structure.frames.kind(at: i) == .keyring {
                    // Another writer changed the keys: the key layer must look.
                    throw .vaultChanged(path: path)
                }
            }
            // A new commit can confirm, or pass by, the commits before it
            // (Spec/format.md §9.3): verify the chain again.
            if !newGroups.isEmpty { (verdicts, uncheckedAttestations) = chainReport() }
        }
        // A last commit that does not verify stays reported (its records are
        // unverified); the new commit chains to its stored head, so the vault
        // stays writable (Spec/format.md §9.1).
        return framesBefore..<structure.committedFrameCount
    }

    /// Cuts off the torn tail after the last commit (§9.1 step 3).
    func cutTailLocked() throws(FormatError) {
        do { try file.truncate(to: structure.committedEnd) } catch { throw .io(error) }
        structure.frames.removeSubrange(structure.uncommittedFrames)
        structure.uncommittedFrames = structure.frames.count..<structure.frames.count
        structure.fileSize = structure.committedEnd
        structure.tailHasDamage = false
    }

    /// Waits until the file has kept the size it was scanned at, and its
    /// modification time, for `quietSeconds` (counted from its last
    /// modification): true then; false as soon as it changes (read it
    /// again). Throws ``FormatError/locked(path:seconds:)`` when it is still
    /// changing at `deadline`.
    func tailStayedUnchanged(quietSeconds: Double, deadline: UInt64, seconds: Double) throws(FormatError) -> Bool {
        let quiet = Int64(max(0, quietSeconds) * 1e9)
        let first: FileStatus
        do { first = try file.status() } catch { throw .io(error) }
        guard first.size == structure.fileSize else { return false }
        let sinceModified = ProcessStats.wallClockMilliseconds() * 1_000_000 - first.modifiedNanoseconds
        if sinceModified >= quiet { return true }
        let start = ProcessStats.monotonicNanoseconds()
        // Quiet since the last modification, or since now if the clocks disagree.
        let remaining = UInt64(quiet - max(0, sinceModified))
        while true {
            let now = ProcessStats.monotonicNanoseconds()
            if now - start >= remaining { return true }
            if now >= deadline { throw .locked(path: path, seconds: seconds) }
            ProcessStats.sleep(nanoseconds: min(50_000_000, remaining - (now - start)))
            let again: FileStatus
            do { again = try file.status() } catch { throw .io(error) }
            if again.size != first.size || again.modifiedNanoseconds != first.modifiedNanoseconds { return false }
        }
    }

    /// Writes the keyrings' second copies, flushes, writes the commit frame
    /// and flushes again; then records the commit in the structure.
    func finish(_ pending: PendingCommit, options: WriteOptions, attestation: CommitAttestation) throws(FormatError) {
        for (keyID, epoch, body, trusted) in pending.pendingKeyringCopies {
            try pending.appendPlaintext(kind: .keyring, keyID: keyID, epoch: epoch, body: body, trusted: trusted)
        }
        pending.pendingKeyringCopies = []
        // With flushes, the records are on the disk before the commit frame
        // is written (Spec/format.md §9.1). Without, two writes promise no
        // order either (the kernel writes pages back as it likes): the
        // records and the commit frame go in one write, a system call less
        // per commit (merge and compaction write thousands so).
        if options.synchronous {
            try pending.flush()
            do { try file.sync() } catch { throw .io(error) }
        }
        var digest = CommitChain.Digest()
        for f in pending.frames { digest.add(header: f.headerBytes, trailer: f.trailer) }
        let d = digest.finalize()
        // A commit that starts a new epoch is made under the new key
        // (Spec/format.md §9.2, seventh review R7-3).
        let commitKey = pending.commitKey ?? pending.key
        // Its records would be sealed under the old key, which a member the
        // new keyring removes still holds: no writer puts records there
        // (§9.2, eighth review R8-2 item 3). Nothing is committed.
        if commitKey.epoch > pending.key.epoch, pending.frames.contains(where: { $0.header.isSealed && $0.header.keyID == pending.key.id })
        {
            throw .notWritable(
                reason:
                    "a commit that starts epoch \(commitKey.epoch) holds records sealed under epoch \(pending.key.epoch); write them in a commit of their own after the key change"
            )
        }
        let header = CommitChain.commitHeader(keyID: commitKey.id)
        // The chain tip: the last commit on the chain. Commits after it that
        // are not on it (junk, damaged, a copy, a fork, stale) are passed by,
        // so this commit never vouches for them (Spec/format.md §9.1).
        let previous = pending.previousHead ?? verdicts.tipHead
        let plainAttestation: [UInt8]
        let recorded: CommitReport.Attestation
        switch attestation {
        case .none:
            plainAttestation = CommitChain.unattested
            recorded = .unattested
        case .sign(let pair):
            plainAttestation = CommitChain.attestation(
                keyCommitment: commitKey.commitment, previousHead: previous, digest: d, vaultID: vaultID, signer: pair)
            recorded = .attested(signer: pair.publicKey)
        case .carried(let bytes):
            precondition(bytes.count == CommitChain.attestationByteCount)
            plainAttestation = bytes
            let signer = Array(bytes[0..<32])
            recorded =
                bytes == CommitChain.unattested
                ? .unattested : removedMembers.contains(signer) ? .removedMember(signer: signer) : .attested(signer: signer)
        }
        // The attestation is sealed first; the head covers it (Spec/format.md §9.2).
        let body = try CommitChain.body(
            previousHead: previous, digest: d, attestation: plainAttestation, key: commitKey, vaultID: vaultID, commitHeader: header)
        let head = Array(body[0..<CommitChain.headByteCount])
        let commitFrame = header.encoded() + body
        let commitOffset = pending.position
        if !options.synchronous {
            pending.buffer.append(contentsOf: commitFrame)
            try pending.flush()
        }
        do {
            if options.synchronous { try file.write(commitFrame, at: commitOffset) }
            let end = commitOffset + UInt64(commitFrame.count)
            if try file.size() > end { try file.truncate(to: end) }
            if options.synchronous { try file.sync() }
        } catch {
            throw .io(error)
        }
        // The commit is durable: record it. What was found of unknown
        // critical kinds stays found, extended by this commit's frames.
        let unknownCritical = unknownCriticalCache
        let commitIndex = structure.frames.count + pending.frames.count
        let firstMember = structure.frames.count
        structure.frames += pending.frames
        var frame = ScannedFrame(
            location: FrameLocation(offset: commitOffset, index: commitIndex), header: header, headerBytes: header.encoded(), trailer: head,
            repaired: false, chunk: nil, plaintextBody: nil, checksumIntact: nil, malformation: nil)
        frame.commitBody = body
        structure.frames.append(frame)
        structure.groups.append(
            CommitGroup(
                commitFrame: commitIndex, members: firstMember..<commitIndex, digest: d, storedHead: head, commitBody: body,
                containsDamage: false))
        structure.committedEnd = commitOffset + UInt64(commitFrame.count)
        structure.fileSize = structure.committedEnd
        structure.uncommittedFrames = structure.frames.count..<structure.frames.count
        // A verified commit adds nothing to the tampered ones.
        let tampered = tamperedCache
        verdicts.appendVerified(head: head, previousHead: previous, epoch: commitKey.epoch, attestation: recorded)
        for (index, epoch) in pending.trustedKeyringEpochs {
            trustedKeyrings[index] = epoch
            if case .attested = recorded {
                verdicts.currentFloor = max(verdicts.currentFloor, epoch)
                verdicts.tipLineFloor = max(verdicts.tipLineFloor, epoch)
            }
        }
        tamperedCache = tampered
        if var found = unknownCritical {
            found.extend(to: structure.committedFrameCount, of: structure)
            unknownCriticalCache = found
        }
        if streamIndexCache != nil {
            for f in pending.frames { if let c = f.chunk { streamIndexCache![c.stream, default: []].append(f.location.index) } }
        }
    }

    /// Forgets the keys and the commit verdicts after a key change, so that
    /// ``verifyCommits(keys:trustedKeyrings:attestors:removedMembers:)`` can run again.
    public func rescan() throws(FormatError) {
        try lock.withLock { () throws(FormatError) in try rescanLocked() }
    }

    func rescanLocked() throws(FormatError) {
        structure = try VaultScanner.scan(file: file)
        cachedPrefixFrameCount = 0
        cachedPrefixCommitsDigest = nil
        trustedPrefixHeads = nil  // the prefix is read from the file now: every head is computed
        scanStartOffset = UInt64(FileHeader.byteCount)
        streamIndexCache = nil
        verdicts = CommitReport()
        uncheckedAttestations = [:]
    }
}
