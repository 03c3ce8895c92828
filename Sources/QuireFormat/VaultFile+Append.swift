public import QuireCrypto
import QuireSystem

/// The records of one commit being written (`Spec/format.md §9.1`).
///
/// Frames are written to the end of the file as they are appended (through
/// a 4 MiB buffer); nothing is committed until the closure given to
/// ``VaultFile/commit(random:options:_:)`` returns and the commit frame is
/// written and flushed. If the closure throws, every byte it wrote is cut
/// off again and the file is as it was.
public final class PendingCommit {
    unowned let vault: VaultFile
    /// The key records are sealed under.
    public let key: EpochKey
    let random: any RandomSource
    let start: UInt64
    var position: UInt64
    var buffer: [UInt8] = []
    var bufferStart: UInt64
    var frames: [ScannedFrame] = []
    var trustedKeyringEpochs: [Int: UInt16] = [:]
    /// Frames other writers committed since this handle last looked,
    /// absorbed under the lock before this commit began. Index them before
    /// deciding anything from the vault's content (an edit's parents).
    public internal(set) var externalFrames: Range<Int> = 0..<0
    var pendingKeyringCopies: [(UInt16, [UInt8])] = []
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
    /// - Parameter compress: try zstd, keeping it only when smaller.
    /// - Returns: where the frame was written.
    /// - Throws: ``FormatError/recordTooLarge(byteCount:limit:)``, ``FormatError/io(_:)``.
    @discardableResult
    public func appendSealed(kind: RecordKind, payload: [UInt8], compress: Bool = true) throws(FormatError) -> FrameLocation {
        let frame = try SealedFrame.seal(kind: kind, payload: payload, key: key, vaultID: vault.vaultID, compress: compress, random: random)
        return try appendFrameBytes(frame, plaintextBody: nil, chunk: nil)
    }

    /// Appends a plaintext record of `kind` (a keyring, or in tests a
    /// plaintext record of an unknown kind): `body ‖ BLAKE2b-128(body)`.
    ///
    /// - Parameter trusted: for a keyring, whether the key layer vouches for
    ///   it (it does for keyrings this device builds).
    /// - Throws: ``FormatError/recordTooLarge(byteCount:limit:)``, ``FormatError/io(_:)``.
    @discardableResult
    public func appendPlaintext(kind: RecordKind, epoch: UInt16, body: [UInt8], trusted: Bool = true) throws(FormatError) -> FrameLocation {
        guard body.count + 16 <= Limits.maxFrameBodyByteCount else {
            throw .recordTooLarge(byteCount: body.count, limit: Limits.maxFrameBodyByteCount - 16)
        }
        let header = FrameHeader(kind: kind, flags: 0, epoch: epoch, bodyLength: UInt32(body.count + 16))
        let frame = header.encoded() + body + BLAKE2b.hash(body, byteCount: 16)
        let keep = kind == .keyring
        let location = try appendFrameBytes(frame, plaintextBody: keep ? body : nil, chunk: nil)
        if kind == .keyring && trusted { trustedKeyringEpochs[location.index] = epoch }
        return location
    }

    /// Appends a keyring as two identical frames (`Spec/format.md §8.1`), so
    /// that damage to one copy costs nothing. Call it first in a commit:
    /// the second copy is written when the commit is finished, as its last
    /// record, away from the first.
    ///
    /// - Throws: ``FormatError/recordTooLarge(byteCount:limit:)``, ``FormatError/io(_:)``.
    @discardableResult
    public func appendKeyring(epoch: UInt16, body: [UInt8]) throws(FormatError) -> FrameLocation {
        let location = try appendPlaintext(kind: .keyring, epoch: epoch, body: body, trusted: true)
        pendingKeyringCopies.append((epoch, body))
        return location
    }

    /// Appends a frame exactly as given (header and body), as merge does to
    /// carry records it cannot or need not open. The header must pass its
    /// check and the frame must not be a commit.
    ///
    /// - Throws: ``FormatError/malformedFrame(_:reason:)``, ``FormatError/io(_:)``.
    @discardableResult
    public func appendRaw(frame bytes: [UInt8]) throws(FormatError) -> FrameLocation {
        let header = bytes.withUnsafeBytes { FrameHeader.parseChecked($0, at: 0) }
        let location = FrameLocation(offset: position, index: vault.structure.frames.count + frames.count)
        guard let header, bytes.count == FrameHeader.byteCount + Int(header.bodyLength), header.kind != .commit else {
            throw .malformedFrame(location, reason: "not a whole, checked, non-commit frame")
        }
        var chunk: ChunkHeader? = nil
        if header.kind == .blobChunk && bytes.count >= 12 + 24 + 21 { chunk = ChunkHeader.parse(bytes[36..<57]) }
        let keep = !header.isSealed && header.kind == .keyring
        let body = keep ? Array(bytes[12..<(bytes.count - 16)]) : nil
        return try appendFrameBytes(bytes, plaintextBody: body, chunk: chunk)
    }

    func appendFrameBytes(_ frame: [UInt8], plaintextBody: [UInt8]?, chunk: ChunkHeader?) throws(FormatError) -> FrameLocation {
        try frame.withBytes { (raw: UnsafeRawBufferPointer) throws(FormatError) -> FrameLocation in
            try appendFrame(raw, plaintextBody: plaintextBody, chunk: chunk)
        }
    }

    func appendFrame(_ raw: UnsafeRawBufferPointer, plaintextBody: [UInt8]?, chunk: ChunkHeader?) throws(FormatError) -> FrameLocation {
        let header = FrameHeader.unchecked(raw, at: 0)
        let location = FrameLocation(offset: position, index: vault.structure.frames.count + frames.count)
        let trailer = Array(raw[(raw.count - 16)...])
        var checksum: Bool? = nil
        if !header.isSealed && header.kind != .commit { checksum = true }
        frames.append(ScannedFrame(
            location: location, header: header, headerBytes: Array(raw[0..<FrameHeader.byteCount]), trailer: trailer, repaired: false, chunk: chunk,
            plaintextBody: plaintextBody, checksumIntact: checksum, malformation: VaultScanner.malformation(of: header)))
        buffer.append(contentsOf: raw)
        position += UInt64(raw.count)
        if buffer.count >= Self.flushThreshold { try flush() }
        return location
    }

    func flush() throws(FormatError) {
        guard !buffer.isEmpty else { return }
        do { try vault.file.write(buffer, at: bufferStart) } catch { throw .io(error) }
        bufferStart += UInt64(buffer.count)
        buffer.removeAll(keepingCapacity: true)
    }

    /// A point to roll back to with ``rollBack(to:)``.
    struct Mark { let position: UInt64; let frameCount: Int; let keyrings: [Int: UInt16] }

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

extension VaultFile {
    /// Appends one commit atomically (`Spec/format.md §9.1`): takes the
    /// advisory lock, follows appends other writers made since this handle
    /// last looked, cuts off a torn tail, lets `build` append records,
    /// flushes them, writes the commit frame and flushes again.
    ///
    /// - Throws: ``FormatError/notWritable(reason:)``,
    ///   ``FormatError/vaultChanged(path:)`` (the file was replaced or another
    ///   writer added a keyring: open it again),
    ///   ``FormatError/io(_:)``, and whatever `build` throws. On any error the
    ///   file holds exactly its committed bytes as before.
    public func commit(
        random: any RandomSource = SystemRandom(), options: WriteOptions = WriteOptions(),
        _ build: (PendingCommit) throws(FormatError) -> Void
    ) throws(FormatError) {
        try lock.withLock { () throws(FormatError) in try commitLocked(random: random, options: options, build) }
    }

    func commitLocked(
        random: any RandomSource, options: WriteOptions, _ build: (PendingCommit) throws(FormatError) -> Void
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
            if try tailStayedUnchanged(quietSeconds: options.tornTailQuietSeconds, deadline: deadline, seconds: options.lockTimeoutSeconds) {
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
            try finish(pending, options: options)
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
            do { onDisk = try file.read(count: 16, at: end - 16) } catch { throw .io(error) }
            guard onDisk == g.storedHead else { throw .vaultChanged(path: path) }
        }
        if size > end {
            let groupsBefore = structure.groups.count
            try VaultScanner.rescanTail(&structure, file: file)
            streamIndexCache = nil
            let newGroups = structure.groups[groupsBefore...]
            for g in newGroups {
                for i in g.members where structure.frames[i].header.kind == .keyring {
                    // Another writer changed the keys: the key layer must look.
                    throw .vaultChanged(path: path)
                }
                let previousStored = commits.statuses.isEmpty ? CommitChain.genesisHead : structure.groups[commits.statuses.count - 1].storedHead
                let previousComputed = commits.computedHeads.last ?? CommitChain.genesisHead
                let (status, head) = check(group: g, previousStored: previousStored, previousComputed: previousComputed, floor: commits.currentFloor)
                commits.statuses.append(status)
                commits.computedHeads.append(head)
                commits.floors.append(commits.currentFloor)
            }
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

    func finish(_ pending: PendingCommit, options: WriteOptions) throws(FormatError) {
        for (epoch, body) in pending.pendingKeyringCopies {
            try pending.appendPlaintext(kind: .keyring, epoch: epoch, body: body, trusted: true)
        }
        pending.pendingKeyringCopies = []
        try pending.flush()
        if options.synchronous {
            do { try file.sync() } catch { throw .io(error) }
        }
        var digest = CommitChain.Digest()
        for f in pending.frames { digest.add(header: f.headerBytes, trailer: f.trailer) }
        let d = digest.finalize()
        let header = CommitChain.commitHeader(epoch: pending.key.epoch)
        let previous = structure.groups.last?.storedHead ?? CommitChain.genesisHead
        let head = CommitChain.head(commitKey: pending.key.commitKey, vaultID: vaultID, previousHead: previous, digest: d, commitHeader: header)
        let commitFrame = header.encoded() + head
        let commitOffset = pending.position
        do {
            try file.write(commitFrame, at: commitOffset)
            let end = commitOffset + UInt64(commitFrame.count)
            if try file.size() > end { try file.truncate(to: end) }
            if options.synchronous { try file.sync() }
        } catch {
            throw .io(error)
        }
        // The commit is durable: record it.
        let commitIndex = structure.frames.count + pending.frames.count
        let firstMember = structure.frames.count
        structure.frames += pending.frames
        structure.frames.append(ScannedFrame(
            location: FrameLocation(offset: commitOffset, index: commitIndex), header: header, headerBytes: header.encoded(), trailer: head, repaired: false,
            chunk: nil, plaintextBody: nil, checksumIntact: nil, malformation: nil))
        structure.groups.append(CommitGroup(commitFrame: commitIndex, members: firstMember..<commitIndex, digest: d, storedHead: head, containsDamage: false))
        structure.committedEnd = commitOffset + UInt64(commitFrame.count)
        structure.fileSize = structure.committedEnd
        structure.uncommittedFrames = structure.frames.count..<structure.frames.count
        commits.statuses.append(.verified)
        commits.computedHeads.append(head)
        commits.floors.append(commits.currentFloor)
        for (index, epoch) in pending.trustedKeyringEpochs {
            trustedKeyrings[index] = epoch
            commits.currentFloor = max(commits.currentFloor, epoch)
        }
        if streamIndexCache != nil {
            for f in pending.frames { if let c = f.chunk { streamIndexCache![c.stream, default: []].append(f.location.index) } }
        }
    }

    /// Forgets the keys and the commit verdicts after a key change, so that
    /// ``verifyCommits(keys:trustedKeyrings:)`` can run again.
    public func rescan() throws(FormatError) {
        try lock.withLock { () throws(FormatError) in try rescanLocked() }
    }

    func rescanLocked() throws(FormatError) {
        structure = try VaultScanner.scan(file: file)
        streamIndexCache = nil
        commits = CommitReport()
    }
}
