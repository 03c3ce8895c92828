@_spi(Crypto) import QuireCrypto
import QuireSystem

/// What a keyless scan found in the committed prefix of a vault file, kept
/// by the device-local index cache so that a later open scans only the
/// bytes after it (`Spec/index-cache.md §1`, the frame table; §5).
///
/// Fixed-width columns, so that an open reads a frame's fields at its
/// index and builds no value per frame (``FrameList``): `headers`, each
/// frame's 16 header bytes in file order; `trailers`, 32 bytes per frame —
/// the body hash, or an attachment chunk's 16-byte AEAD tag then 16 zero
/// bytes, or 32 zero bytes for a commit (whose head is read from the file);
/// `chunkFrames`, the frame index of each attachment chunk, ascending,
/// uint32 little-endian; `chunkHeaders`, their 21-byte public chunk headers
/// in the same order; and `digests`, the group digest `D_k` of each commit
/// group in file order (32 bytes each). Offsets are not stored: the frames
/// of such a prefix are contiguous from byte 64.
package struct PrefixFrameTable: Sendable, Equatable {
    /// Bytes per frame in the trailers column.
    package static let trailerWidth = 32
    /// The headers column.
    package var headers: [UInt8]
    /// The trailers column.
    package var trailers: [UInt8]
    /// The chunk frame indices column.
    package var chunkFrames: [UInt8]
    /// The chunk headers column.
    package var chunkHeaders: [UInt8]
    /// The group digests column.
    package var digests: [UInt8]

    /// The columns as stored.
    package init(headers: [UInt8], trailers: [UInt8], chunkFrames: [UInt8], chunkHeaders: [UInt8], digests: [UInt8]) {
        self.headers = headers
        self.trailers = trailers
        self.chunkFrames = chunkFrames
        self.chunkHeaders = chunkHeaders
        self.digests = digests
    }

    /// The number of frames the table describes (its headers column's rows).
    package var frameCount: Int { headers.count / FrameHeader.byteCount }

    /// The table of the first `frameCount` frames of `structure`, which
    /// must end with a commit; nil when that prefix holds anything a scan
    /// reports — a damaged header copy or region, a repaired header, a
    /// malformed frame, a plaintext frame whose body hash does not check,
    /// a group marked damaged — so that such a file is always scanned whole.
    package init?(of structure: VaultStructure, frameCount: Int) {
        guard frameCount > 0, frameCount <= structure.frames.count, structure.headerDamage == .none,
            structure.frames.kind(at: frameCount - 1) == .commit, structure.frames[frameCount - 1].isCommit
        else { return nil }
        let end = structure.frames.end(at: frameCount - 1)
        guard !structure.damagedRegions.contains(where: { $0.offset < end }) else { return nil }
        var digests: [UInt8] = []
        for g in structure.groups {
            guard g.commitFrame < frameCount else { break }
            guard !g.containsDamage, g.digest.count == CommitChain.digestByteCount else { return nil }
            digests += g.digest
        }
        var headers: [UInt8] = []
        headers.reserveCapacity(frameCount * FrameHeader.byteCount)
        var trailers: [UInt8] = []
        trailers.reserveCapacity(frameCount * Self.trailerWidth)
        var chunkFrames: [UInt8] = []
        var chunkHeaders: [UInt8] = []
        let zeros = [UInt8](repeating: 0, count: Self.trailerWidth)
        var expected = UInt64(FileHeader.byteCount)
        var start = 0
        if let packed = structure.frames.packed {
            // Opened from a table that was checked as this one would be:
            // its rows (each row group loaded from the cache, or read from
            // the file), cut at `frameCount`; the frames scanned after it
            // follow. A frame the file no longer holds as the table says
            // (malformed) leaves no table.
            start = min(packed.count, frameCount)
            for i in 0..<start {
                let (header, trailer, chunkHeader) = packed.rows(i)
                let kind = RecordKind(rawValue: header[0])
                guard kind.isKnown || !kind.isCritical else { return nil }
                headers += header
                if let trailer {
                    trailers += trailer
                } else {
                    let f = packed.frame(i)
                    guard f.malformation == nil, !f.repaired, f.checksumIntact != false else { return nil }
                    if f.header.kind == .commit {
                        trailers += zeros
                    } else {
                        guard f.trailer.count == f.header.trailerByteCount else { return nil }
                        trailers += f.trailer
                        trailers += zeros[0..<(Self.trailerWidth - f.trailer.count)]
                    }
                }
                if let chunkHeader {
                    chunkFrames += (0..<4).map { UInt8(truncatingIfNeeded: UInt32(i) >> (8 * UInt32($0))) }
                    chunkHeaders += chunkHeader
                }
            }
            if start > 0 { expected = structure.frames.end(at: start - 1) }
        }
        for f in structure.frames[start..<frameCount] {
            guard f.location.offset == expected, !f.repaired, f.malformation == nil, f.checksumIntact != false,
                f.header.kind.isKnown || !f.header.kind.isCritical,
                f.headerBytes.count == FrameHeader.byteCount, f.location.index <= Int(UInt32.max)
            else { return nil }
            expected = f.end
            headers += f.headerBytes
            if f.header.kind == .commit {
                guard f.commitBody?.count == CommitChain.bodyByteCount else { return nil }
                trailers += zeros
                continue
            }
            guard f.trailer.count == f.header.trailerByteCount else { return nil }
            trailers += f.trailer
            trailers += zeros[0..<(Self.trailerWidth - f.trailer.count)]
            if f.header.kind == .blobChunk {
                guard let chunk = f.chunk else { return nil }
                let index = UInt32(f.location.index)
                chunkFrames += (0..<4).map { UInt8(truncatingIfNeeded: index >> (8 * UInt32($0))) }
                chunkHeaders += chunk.encoded()
            }
        }
        self.init(headers: headers, trailers: trailers, chunkFrames: chunkFrames, chunkHeaders: chunkHeaders, digests: digests)
    }
}

/// What the open of a vault file from a cached prefix found
/// (``VaultFile/open(path:writable:cachedPrefix:frameCount:committedLength:chainHead:commitsDigest:)``).
package enum CachedPrefixOpen {
    /// The file extends the prefix the table describes: only the bytes
    /// after it were scanned.
    case opened(VaultFile)
    /// The table does not describe this file (or could not be checked);
    /// the reason, for tests. The caller scans the file whole.
    case refused(String)
}

extension VaultFile {
    /// Opens the vault at `path` from the structure of its committed
    /// prefix that an earlier scan found (``PrefixFrameTable``), scanning
    /// only the bytes after `committedLength` (`Spec/index-cache.md §5`).
    ///
    /// Before anything of the table is used, the file is checked to extend
    /// the prefix it describes, reading O(commits) bytes, not O(bytes): the
    /// file header parses with both copies intact; the file holds at least
    /// `committedLength` bytes; the table's columns have a row per frame
    /// (`frameCount`), its frames, laid end to end from byte 64, end at
    /// `committedLength` with a commit and each have a well-formed header;
    /// the chunk rows name exactly the chunk frames, in order, with
    /// well-formed chunk headers, and the trailers' padding is zero; each
    /// commit frame, read at its offset (216 bytes), has the header the
    /// table holds, and the commit frames' bytes hash to `commitsDigest`,
    /// the last one storing `chainHead`; every plaintext frame (a keyring)
    /// is read at its offset and its body hash checked against the trailer
    /// the table holds (the keyring evaluation then reads those bodies, as
    /// after a scan). The bodies of sealed frames are not read: a record
    /// whose bytes changed fails its AEAD tag when it is read. The table's
    /// headers are taken as written (their check bytes are not hashed
    /// again: the table is authenticated), their fields checked for
    /// plausibility and the rules of their kind. The prefix stays packed
    /// as the table's columns (``FrameList``): one pass over them, no value
    /// per frame.
    ///
    /// Never throws: anything inconsistent is ``CachedPrefixOpen/refused(_:)``.
    package static func open(
        path: String, writable: Bool, cachedPrefix table: PrefixFrameTable, frameCount: Int, committedLength: UInt64,
        chainHead: [UInt8], commitsDigest: [UInt8]
    ) -> CachedPrefixOpen {
        guard let cached = CachedFrameTable(table) else { return .refused("the table's columns do not have whole rows") }
        let opened = open(
            path: path, writable: writable, cachedPrefix: cached, frameCount: frameCount, committedLength: committedLength,
            chainHead: chainHead, commitsDigest: commitsDigest)
        // Held in memory: every row group is checked now.
        guard case .opened(let file) = opened, let packed = file.structure.frames.packed else { return opened }
        for g in 0..<packed.directory.groupCount { _ = packed.group(g) }
        guard packed.loads.file == 0 else { return .refused("a row group does not describe the file") }
        return opened
    }

    /// Opens the vault at `path` from the index cache's frame table as an
    /// open reads it (``CachedFrameTable``, `Spec/index-cache.md §5`): the
    /// directory is checked against the file now — the row groups' starts,
    /// each commit frame (216 bytes read at its offset: its header, the
    /// `commitsDigest` over them, the last one's head `chainHead` and end
    /// `committedLength`), each plaintext frame (its header as the table
    /// holds it, its body hash checked and equal to the table's trailer) —
    /// and each row group only when a frame in it is first needed
    /// (``PackedFrames``): an open that appends reads only the last.
    ///
    /// Never throws: anything inconsistent is ``CachedPrefixOpen/refused(_:)``.
    package static func open(
        path: String, writable: Bool, cachedPrefix table: CachedFrameTable, frameCount: Int, committedLength: UInt64,
        chainHead: [UInt8], commitsDigest: [UInt8]
    ) -> CachedPrefixOpen {
        let file: SystemFile
        do { file = try SystemFile(path: path, mode: writable ? .readWrite : .readOnly) } catch { return .refused("\(error)") }
        do throws(FormatError) {
            guard
                var structure = try prefixStructure(
                    file: file, table: table, frameCount: frameCount, committedLength: committedLength, chainHead: chainHead,
                    commitsDigest: commitsDigest)
            else { return .refused("the file does not extend the cached prefix") }
            let prefixFrames = structure.committedFrameCount
            let prefixEnd = structure.committedEnd
            try VaultScanner.rescanTail(&structure, file: file)
            let opened = VaultFile(
                file: file, writable: writable, cachedPrefixFrames: prefixFrames, scanStart: prefixEnd, structure: structure)
            opened.cachedPrefixCommitsDigest = commitsDigest
            return .opened(opened)
        } catch {
            return .refused("\(error)")
        }
    }

    /// Takes the heads of the cached prefix's commits as verified under
    /// `keys` (`Spec/index-cache.md §5`, "The chain"): ``chainReport()``
    /// then computes no head of them again while ``keys`` are `keys`. For
    /// the caller that found the index cache this handle was opened from
    /// describes the file under these keys: its header (sealed under a
    /// key only this device derives) records the keyring heads it was
    /// written under, equal to those `keys` were unlocked from, and this
    /// device writes a cache only when every commit of the prefix verified
    /// from its stored previous head; the open checked that the prefix's
    /// commit frames are those bytes (the `commits` digest) and took the
    /// group digests from the sealed directory — every input of each head
    /// check is the one it passed. A no-op for a file scanned whole.
    package func trustCachedPrefixHeads(keys: KeySet) {
        lock.withLock {
            let s = structure
            guard cachedPrefixFrameCount > 0, let last = s.groupIndex(ofFrame: cachedPrefixFrameCount - 1),
                s.groups[last].commitFrame == cachedPrefixFrameCount - 1
            else { return }
            trustedPrefixHeads = (last + 1, Self.keyFingerprint(keys))
        }
    }

    /// The commit groups whose heads ``chainReport()`` takes as verified:
    /// those ``trustCachedPrefixHeads(keys:)`` named, while the held keys
    /// are the ones it was given; 0 otherwise.
    var trustedPrefixGroupCount: Int {
        guard cachedPrefixFrameCount > 0, let trusted = trustedPrefixHeads, trusted.keys == Self.keyFingerprint(keys) else { return 0 }
        return trusted.groupCount
    }

    /// Each held key's commitment and epoch, sorted.
    private static func keyFingerprint(_ keys: KeySet) -> [[UInt8]] {
        keys.all.map { key in key.commitment + (0..<4).map { UInt8(truncatingIfNeeded: key.epoch >> (8 * UInt32($0))) } }
            .sorted { $0.lexicographicallyPrecedes($1) }
    }

    /// How many row groups of the cached prefix were loaded from the index
    /// cache and how many read from the vault file instead (tests and
    /// benchmarks; zeros when the file was scanned).
    package var cachedPrefixRowGroupLoads: (cache: Int, file: Int) {
        structure.frames.packed?.loads ?? (0, 0)
    }

    /// A copy of `range` of `bytes`, one allocation and one copy (an
    /// initializer the compiler specializes for bytes: the generic
    /// `unsafeUninitializedCapacity` one looks the array's type up at run
    /// time on each call).
    private static func copy(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>) -> [UInt8] {
        [UInt8](UnsafeRawBufferPointer(rebasing: bytes[range]))
    }

    /// The structure ``open(path:writable:cachedPrefix:frameCount:committedLength:chainHead:commitsDigest:)``
    /// checks and builds; nil when the file does not extend it.
    private static func prefixStructure(
        file: SystemFile, table: CachedFrameTable, frameCount: Int, committedLength: UInt64, chainHead: [UInt8],
        commitsDigest: [UInt8]
    ) throws(FormatError) -> VaultStructure? {
        let size: UInt64
        do { size = try file.size() } catch { throw .io(error) }
        let d = table.directory
        let commitCount = d.commits.count / FrameTableDirectory.commitRowWidth
        let plainCount = d.plaintext.count / FrameTableDirectory.plaintextRowWidth
        let digestCount = d.digests.count / CommitChain.digestByteCount
        guard frameCount > 0, frameCount <= Int(UInt32.max), d.frameCount == frameCount, d.rowsPerGroup > 0,
            size >= committedLength, committedLength > UInt64(FileHeader.byteCount),
            d.groupStarts.count == d.groupCount, d.groupStarts.first == UInt64(FileHeader.byteCount),
            d.commits.count == commitCount * FrameTableDirectory.commitRowWidth,
            d.plaintext.count == plainCount * FrameTableDirectory.plaintextRowWidth,
            d.digests.count == digestCount * CommitChain.digestByteCount, commitCount == digestCount, commitCount > 0
        else { return nil }
        for g in 1..<max(1, d.groupStarts.count) where d.groupStarts[g] <= d.groupStarts[g - 1] { return nil }
        guard let lastStart = d.groupStarts.last, lastStart < committedLength else { return nil }
        /// The row group whose bytes hold `offset` must be the one of frame `i`.
        func placed(_ i: Int, _ offset: UInt64) -> Bool {
            let g = i / d.rowsPerGroup
            let end = g + 1 < d.groupStarts.count ? d.groupStarts[g + 1] : committedLength
            return offset >= d.groupStarts[g] && offset < end && (offset == d.groupStarts[g]) == (i == g * d.rowsPerGroup)
        }
        let window = FileWindow(file: file, fileSize: size, preferredByteCount: 0)
        let (header, damage) = try FileHeader.parse(try window.bytes(0, FileHeader.byteCount))
        guard damage == .none else { return nil }
        var groups: [CommitGroup] = []
        var commitFrames: [Int] = []
        var commitOffsets: [UInt64] = []
        var commitHeaders: [UInt8] = []
        var commitBodies: [[UInt8]] = []
        var commits = BLAKE2b.Hasher(byteCount: 32)
        var groupStart = 0
        var previousEnd = UInt64(FileHeader.byteCount)
        commitFrames.reserveCapacity(commitCount)
        commitOffsets.reserveCapacity(commitCount)
        commitHeaders.reserveCapacity(commitCount * FrameHeader.byteCount)
        commitBodies.reserveCapacity(commitCount)
        groups.reserveCapacity(commitCount)
        let frameBytes = FrameHeader.byteCount + CommitChain.bodyByteCount
        let rowWidth = FrameTableDirectory.commitRowWidth
        // Commit frames close together (a vault written an entry a commit)
        // are read in runs, one read of at most `runBytes` for the run, in
        // one pass over the directory's offsets (ascending: the window
        // only moves forward); a commit far from the one before it is read
        // alone (216 bytes).
        let runBytes: UInt64 = 128 << 10
        let nearBytes: UInt64 = 4 << 10
        var windowEnd: UInt64 = 0
        for c in 0..<commitCount {
            let i = FrameTableDirectory.u32(d.commits, c * rowWidth)
            let offset = FrameTableDirectory.u64(d.commits, c * rowWidth + 4)
            // The frames before a commit in its group lie between it and
            // the previous commit, each at least a header and the least body.
            let least = UInt64(FrameHeader.byteCount + Limits.minFrameBodyByteCount)
            guard i >= groupStart, i < frameCount, offset >= previousEnd + UInt64(i - groupStart) * least, placed(i, offset) else {
                return nil
            }
            var readAhead = frameBytes
            if offset + UInt64(frameBytes) > windowEnd {
                // The run of commits from this one, each near the one before.
                var last = offset
                var j = c + 1
                while j < commitCount {
                    let next = FrameTableDirectory.u64(d.commits, j * rowWidth + 4)
                    guard next > last, next - last <= nearBytes, next + UInt64(frameBytes) - offset <= runBytes else { break }
                    last = next
                    j += 1
                }
                readAhead = Int(last - offset) + frameBytes
                windowEnd = offset + UInt64(readAhead)
            }
            let read = try window.withBytes(offset, frameBytes, readAhead: readAhead) {
                (stored: UnsafeRawBufferPointer) -> (body: [UInt8], head: [UInt8])? in
                let h = FrameHeader.unchecked(stored, at: 0)
                guard h.kind == .commit, h.isPlausible, VaultScanner.malformation(of: h) == nil,
                    Int(h.bodyLength) == CommitChain.bodyByteCount
                else { return nil }
                commits.update(stored)
                commitHeaders.append(contentsOf: UnsafeRawBufferPointer(rebasing: stored[0..<FrameHeader.byteCount]))
                return (
                    Self.copy(stored, FrameHeader.byteCount..<frameBytes),
                    Self.copy(stored, FrameHeader.byteCount..<(FrameHeader.byteCount + CommitChain.headByteCount))
                )
            }
            guard let read else { return nil }
            commitFrames.append(i)
            commitOffsets.append(offset)
            commitBodies.append(read.body)
            let at = c * CommitChain.digestByteCount
            let digest = d.digests.withUnsafeBytes { Self.copy($0, at..<(at + CommitChain.digestByteCount)) }
            groups.append(
                CommitGroup(
                    commitFrame: i, members: groupStart..<i, digest: digest, storedHead: read.head, commitBody: read.body,
                    containsDamage: false))
            groupStart = i + 1
            previousEnd = offset + UInt64(frameBytes)
        }
        guard groupStart == frameCount, previousEnd == committedLength, groups.last?.storedHead == chainHead,
            commits.finalize() == commitsDigest
        else { return nil }
        var plaintextFrames: [Int] = []
        var plaintextOffsets: [UInt64] = []
        var plaintextBodies: [[UInt8]?] = []
        for p in 0..<plainCount {
            let at = p * FrameTableDirectory.plaintextRowWidth
            let i = FrameTableDirectory.u32(d.plaintext, at)
            let offset = FrameTableDirectory.u64(d.plaintext, at + 4)
            guard i < frameCount, plaintextFrames.last.map({ i > $0 }) ?? true, plaintextOffsets.last.map({ offset > $0 }) ?? true,
                PackedFrames.find(i, in: commitFrames) == nil, placed(i, offset)
            else { return nil }
            let row = Array(d.plaintext[(at + 12)..<(at + 28)])
            let h = row.withUnsafeBytes { FrameHeader.unchecked($0, at: 0) }
            let n = h.trailerByteCount
            guard !h.isSealed, h.kind != .commit, h.isPlausible, VaultScanner.malformation(of: h) == nil,
                d.plaintext[(at + 28 + n)..<(at + 60)].allSatisfy({ $0 == 0 }),
                try window.bytes(offset, FrameHeader.byteCount).elementsEqual(row)
            else { return nil }
            // A keyring (or a plaintext kind this reader does not know):
            // its body is read and its hash checked, as a scan does; the
            // table's trailer must be that hash.
            let bodyLength = Int(h.bodyLength)
            let bodyOffset = offset + UInt64(FrameHeader.byteCount)
            guard bodyLength >= FrameHeader.bodyHashByteCount, bodyOffset + UInt64(bodyLength) <= committedLength else { return nil }
            let body = try window.bytes(bodyOffset, bodyLength)
            let intact = body.withUnsafeBytes { SealedFrame.bodyHashMatches($0) }
            guard intact, body[(bodyLength - FrameHeader.bodyHashByteCount)...].elementsEqual(d.plaintext[(at + 28)..<(at + 28 + n)])
            else { return nil }
            plaintextFrames.append(i)
            plaintextOffsets.append(offset)
            plaintextBodies.append(h.kind == .keyring ? Array(body[0..<(bodyLength - FrameHeader.bodyHashByteCount)]) : nil)
        }
        let packed = PackedFrames(
            directory: d, end: committedLength, commitFrames: commitFrames, commitOffsets: commitOffsets, commitHeaders: commitHeaders,
            commitBodies: commitBodies, plaintextFrames: plaintextFrames, plaintextOffsets: plaintextOffsets,
            plaintextBodies: plaintextBodies, load: table.load, file: file)
        return VaultStructure(
            header: header, headerDamage: .none, fileSize: committedLength, frames: FrameList(packed: packed), groups: groups,
            damagedRegions: [], committedEnd: committedLength, uncommittedFrames: frameCount..<frameCount)
    }
}
