import Dispatch
@_spi(Crypto) import QuireCrypto
import QuireSystem
import Synchronization

/// A record a reader released: its frame and its verified content.
@_spi(Format) public struct ReadRecord: Sendable {
    /// The frame.
    public let frame: ScannedFrame
    /// The record body: decrypted, decompressed and unpadded for a sealed
    /// frame; the body without its trailer for a plaintext frame. Empty
    /// for an entry revision from a concurrent read, which decoded it
    /// (``VaultFile/forEachDecodedRecord(kinds:in:_:)``).
    public internal(set) var payload: [UInt8]
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
        readRecordsLocked(recordFramesLocked(kinds: kinds, among: frames), body)
    }

    /// Opens the records at `frames` (as ``recordFramesLocked(kinds:among:)``
    /// gives them) in order on this thread, calling `body` with each.
    private func readRecordsLocked(_ frames: [Int], _ body: (ReadRecord) -> Bool) -> [FormatError] {
        var issues: [FormatError] = []
        let window = FileWindow(file: file, fileSize: structure.fileSize)
        let context = DecompressionContext()
        let commits = verdicts
        for index in frames {
            do {
                if !body(try readRecordLocked(index, window: window, context: context, commits: commits)) { break }
            } catch {
                issues.append(error)
            }
        }
        return issues
    }

    /// ``forEachRecord(kinds:in:_:)`` with the entry revisions decoded on
    /// every core: each record is opened (body hash, AEAD, padding,
    /// decompression, checked as ``forEachRecord(kinds:in:_:)`` checks it)
    /// and each entry revision decoded and its payload hashed
    /// (``DecodedRevision``) by several threads, a batch at a time; then
    /// `body` is called on this thread with the batch's records in file
    /// order, as the sequential reader calls it (never while the threads
    /// read: it may change what they read, such as an attestation checked).
    /// The problems are returned in file order.
    ///
    /// `body` gets an entry revision's record without its payload (freed by
    /// the thread that read it) and what its decoding gave; any other
    /// record with its payload, and nil.
    ///
    /// Memory is bounded by a batch of ``concurrentBatchCount`` records
    /// plus a read window a thread.
    package func forEachDecodedRecord(
        kinds: Set<RecordKind>, in range: Range<Int>? = nil, _ body: (ReadRecord, Result<DecodedRevision, FormatError>?) -> Bool
    ) -> [FormatError] {
        lock.withLock { () -> [FormatError] in
            let frames = recordFramesLocked(kinds: kinds, in: range)
            let threads = min(8, ProcessStats.processorCount, max(1, frames.count / Self.concurrentMinimumPerThread))
            if threads < 2 {
                return readRecordsLocked(frames) { record in
                    var record = record
                    let decoded = DecodedRevision.decode(&record)
                    return body(record, decoded)
                }
            }
            var issues: [FormatError] = []
            let commits = verdicts
            let window = FileWindow(file: file, fileSize: structure.fileSize, preferredByteCount: Self.concurrentWindowByteCount)
            let context = DecompressionContext()
            // A read window and zstd context for each other thread's block,
            // made here: a block touches them, and this file, only for a
            // chunk it took, which this thread waits for.
            let readers = (1..<threads).map { _ in
                ThreadReader(
                    window: FileWindow(file: file, fileSize: structure.fileSize, preferredByteCount: Self.concurrentWindowByteCount),
                    context: DecompressionContext())
            }
            var at = 0
            batches: while at < frames.count {
                let batch = RecordBatch(frames[at..<min(at + Self.concurrentBatchCount, frames.count)])
                at = batch.end
                // The other threads and this one read the batch; `body` runs
                // once every chunk is read.
                for reader in readers {
                    DispatchQueue.global().async {
                        batch.read { i throws(FormatError) in
                            try self.readRecordLocked(i, window: reader.window, context: reader.context, commits: commits)
                        }
                    }
                }
                batch.read { i throws(FormatError) in try readRecordLocked(i, window: window, context: context, commits: commits) }
                batch.waitUntilRead()
                for i in 0..<batch.count {
                    switch batch.take(i) {
                    case .success(let (record, decoded)): if !body(record, decoded) { break batches }
                    case .failure(let error): issues.append(error)
                    }
                }
            }
            return issues
        }
    }

    /// Records a concurrent read hands to its threads at a time.
    static let concurrentBatchCount = 4096
    /// Records below which a concurrent read gives a thread no part: a
    /// short read (a refresh's few frames) stays on the calling thread.
    static let concurrentMinimumPerThread = 256
    /// The read window of a thread of a concurrent read: the threads take
    /// chunks of a batch in turn, so each reads ahead little.
    static let concurrentWindowByteCount = 512 << 10

    /// The committed frames of `kinds` in `range` that a reader opens, in
    /// file order, once the attestations of their groups are checked.
    private func recordFramesLocked(kinds: Set<RecordKind>, in range: Range<Int>?) -> [Int] {
        recordFramesLocked(
            kinds: kinds, among: range.map { $0.clamped(to: 0..<structure.committedFrameCount) } ?? 0..<structure.committedFrameCount)
    }

    /// ``recordFramesLocked(kinds:in:)`` among committed frames `all`
    /// (ascending).
    private func recordFramesLocked(kinds: Set<RecordKind>, among all: some Collection<Int>) -> [Int] {
        var frames: [Int] = []
        for index in all {
            let kind = structure.frames.kind(at: index)
            if kinds.contains(kind), kind != .blobChunk, kind != .commit { frames.append(index) }
        }
        // Who attested each record: check the attestations of the groups
        // holding the records asked for, all at once (on every core).
        if !uncheckedAttestations.isEmpty {
            var groups: [Int] = []
            for index in frames {
                if let g = structure.groupIndex(ofFrame: index), uncheckedAttestations[g] != nil, groups.last != g { groups.append(g) }
            }
            checkAttestations(of: groups)
        }
        findRemovalAncestorsLocked()
        return frames
    }

    /// The committed record at frame `index`, opened and checked, with what
    /// `commits` says of its commit. Reads nothing but `window`, `context`
    /// and this file's state: several threads call it at once (each with a
    /// window and context of its own) while the caller holds the lock.
    private func readRecordLocked(
        _ index: Int, window: FileWindow, context: DecompressionContext, commits: CommitReport
    ) throws(FormatError) -> ReadRecord {
        let frame = structure.frames[index]
        let payload = try open(frame: frame, window: window, context: context)
        let g = structure.groupIndex(ofFrame: index)
        let verified = g.map { $0 < commits.statuses.count && commits.statuses[$0] == .verified } ?? false
        let signer = g.flatMap { commits.attestor($0) }
        let removed = g.flatMap { commits.removedAttestor($0) }
        var record = ReadRecord(frame: frame, payload: payload, commitVerified: verified, attestedBy: signer, removedAttestor: removed)
        record.ranksAsMember = g.map { commits.ranksAsMember($0) } ?? false
        return record
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

/// An entry revision decoded by a thread of a concurrent read
/// (``VaultFile/forEachDecodedRecord(kinds:in:_:)``).
package struct DecodedRevision: Sendable {
    /// The revision.
    package let revision: EntryRevision
    /// The BLAKE2b-256 of its payload (`Spec/merge.md §5`: two frames of
    /// one revision id must carry the same payload).
    package let payloadHash: [UInt8]

    /// For an entry revision's record: the revision decoded, or why it does
    /// not decode; the record's payload is dropped. Nil for another kind.
    static func decode(_ record: inout ReadRecord) -> Result<DecodedRevision, FormatError>? {
        guard record.frame.header.kind == .entryRevision else { return nil }
        defer { record.payload = [] }
        do throws(FormatError) {
            let r = try EntryRevision(decoding: record.payload, location: record.frame.location)
            return .success(DecodedRevision(revision: r, payloadHash: BLAKE2b.hash(record.payload, byteCount: 32)))
        } catch {
            return .failure(error)
        }
    }
}

/// The read window and zstd context of one other thread of a concurrent
/// read, used for one chunk at a time.
// @unchecked Sendable: used only while reading a chunk its block took, and the caller waits for
// every chunk of a batch before the next batch's blocks can take one.
private final class ThreadReader: @unchecked Sendable {
    let window: FileWindow
    let context: DecompressionContext

    init(window: FileWindow, context: DecompressionContext) {
        self.window = window
        self.context = context
    }
}

/// One batch of a concurrent read: its frames, and a slot for each that
/// the threads fill, taking chunks of it in turn.
///
/// The caller reads chunks too until none is left, then waits only for the
/// chunks other threads took, which are under way: never for a thread to
/// start, so a read cannot wait on a queue that its own callers hold up.
/// A block that starts after every chunk was taken does nothing.
// @unchecked Sendable: each slot is written by the one thread that took its chunk (`next` hands
// each chunk out once) and read by the caller only after every chunk is done (`finished`, `done`).
private final class RecordBatch: @unchecked Sendable {
    typealias Slot = Result<(ReadRecord, Result<DecodedRevision, FormatError>?), FormatError>
    let frames: ArraySlice<Int>
    let slots: UnsafeMutableBufferPointer<Slot?>
    /// The first slot no thread has taken yet.
    private let next = Atomic<Int>(0)
    /// Chunks done; the thread that does the last one signals ``done``.
    private let finished = Atomic<Int>(0)
    private let done = DispatchSemaphore(value: 0)
    private let chunks: Int
    /// Records a thread takes at a time.
    static let chunkCount = 64

    init(_ frames: ArraySlice<Int>) {
        self.frames = frames
        chunks = (frames.count + Self.chunkCount - 1) / Self.chunkCount
        slots = .allocate(capacity: frames.count)
        slots.initialize(repeating: nil)
    }

    /// Waits until every chunk is read; the caller calls it once it has
    /// read chunks until none was left.
    func waitUntilRead() { done.wait() }

    deinit {
        slots.deinitialize()
        slots.deallocate()
    }

    var count: Int { frames.count }
    /// The position in the read's list of frames after the batch's last.
    var end: Int { frames.endIndex }

    /// Reads chunks of the batch with `open` until none is left.
    func read(_ open: (Int) throws(FormatError) -> ReadRecord) {
        while true {
            let first = next.add(Self.chunkCount, ordering: .sequentiallyConsistent).oldValue
            guard first < frames.count else { return }
            for i in first..<min(first + Self.chunkCount, frames.count) {
                do throws(FormatError) {
                    var record = try open(frames[frames.startIndex + i])
                    let decoded = DecodedRevision.decode(&record)
                    slots[i] = .success((record, decoded))
                } catch {
                    slots[i] = .failure(error)
                }
            }
            if finished.add(1, ordering: .sequentiallyConsistent).newValue == chunks { done.signal() }
        }
    }

    /// Takes slot `i`'s result, once the batch is read.
    func take(_ i: Int) -> Slot { slots[i].take()! }
}
