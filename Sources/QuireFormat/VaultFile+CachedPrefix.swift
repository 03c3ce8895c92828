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
            // its columns, cut at `frameCount`; the frames scanned after it
            // follow.
            start = min(packed.count, frameCount)
            var kept = 0
            while kept < packed.chunkFrames.count / 4 && packed.chunkFrame(kept) < start { kept += 1 }
            headers += packed.headers[0..<(start * FrameHeader.byteCount)]
            trailers += packed.trailers[0..<(start * Self.trailerWidth)]
            chunkFrames += packed.chunkFrames[0..<(kept * 4)]
            chunkHeaders += packed.chunkHeaders[0..<(kept * ChunkHeader.byteCount)]
            expected = structure.frames.end(at: start - 1)
        }
        for f in structure.frames[start..<frameCount] {
            guard f.location.offset == expected, !f.repaired, f.malformation == nil, f.checksumIntact != false,
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
            return .opened(
                VaultFile(file: file, writable: writable, cachedPrefixFrames: prefixFrames, scanStart: prefixEnd, structure: structure))
        } catch {
            return .refused("\(error)")
        }
    }

    /// The structure ``open(path:writable:cachedPrefix:frameCount:committedLength:chainHead:commitsDigest:)``
    /// checks and builds; nil when the file does not extend it.
    private static func prefixStructure(
        file: SystemFile, table: PrefixFrameTable, frameCount: Int, committedLength: UInt64, chainHead: [UInt8],
        commitsDigest: [UInt8]
    ) throws(FormatError) -> VaultStructure? {
        let size: UInt64
        do { size = try file.size() } catch { throw .io(error) }
        let width = PrefixFrameTable.trailerWidth
        let chunkCount = table.chunkFrames.count / 4
        let digestCount = table.digests.count / CommitChain.digestByteCount
        guard frameCount > 0, frameCount <= Int(UInt32.max), size >= committedLength, committedLength > UInt64(FileHeader.byteCount),
            table.headers.count == frameCount * FrameHeader.byteCount, table.trailers.count == frameCount * width,
            table.chunkFrames.count == chunkCount * 4, table.chunkHeaders.count == chunkCount * ChunkHeader.byteCount,
            table.digests.count == digestCount * CommitChain.digestByteCount
        else { return nil }
        let window = FileWindow(file: file, fileSize: size, preferredByteCount: 0)
        let (header, damage) = try FileHeader.parse(try window.bytes(0, FileHeader.byteCount))
        guard damage == .none else { return nil }
        // Appended per frame, not zero-filled first (800 KB at 100,000 frames).
        var offsets: [UInt64] = []
        offsets.reserveCapacity(frameCount)
        var groups: [CommitGroup] = []
        var commitFrames: [Int] = []
        var commitBodies: [[UInt8]] = []
        var plaintextFrames: [Int] = []
        var plaintextBodies: [[UInt8]?] = []
        var commits = BLAKE2b.Hasher(byteCount: 32)
        var offset = UInt64(FileHeader.byteCount)
        var groupStart = 0
        var nextChunk = 0
        let headers = table.headers
        let trailers = table.trailers
        let chunkFrames = table.chunkFrames
        func chunkFrame(_ c: Int) -> Int {
            chunkFrames.withUnsafeBytes { Int(UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: c * 4, as: UInt32.self))) }
        }
        func zero(_ range: Range<Int>) -> Bool { trailers.withUnsafeBytes { t in range.allSatisfy { t[$0] == 0 } } }
        for i in 0..<frameCount {
            guard offset < committedLength else { return nil }
            // The table is authenticated (sealed under the cache key) and
            // was written from checked headers: its headers are not hashed
            // again (a BLAKE2b per frame), only their fields checked; a
            // commit's header is compared with the file's bytes below.
            let h = headers.withUnsafeBytes { FrameHeader.unchecked($0, at: i * FrameHeader.byteCount) }
            guard h.isPlausible, VaultScanner.malformation(of: h) == nil else { return nil }
            offsets.append(offset)
            let bodyOffset = offset + UInt64(FrameHeader.byteCount)
            let end = bodyOffset + UInt64(h.bodyLength)
            guard end <= committedLength else { return nil }
            let isChunkRow = nextChunk < chunkCount && chunkFrame(nextChunk) == i
            guard isChunkRow == (h.kind == .blobChunk) else { return nil }
            if h.kind == .commit {
                guard zero((i * width)..<((i + 1) * width)), groups.count < digestCount else { return nil }
                let stored = try window.bytes(offset, FrameHeader.byteCount + CommitChain.bodyByteCount)
                guard stored[0..<FrameHeader.byteCount].elementsEqual(headers[(i * 16)..<(i * 16 + 16)]) else { return nil }
                commits.update(stored)
                let body = Array(stored[FrameHeader.byteCount...])
                let head = Array(body[0..<CommitChain.headByteCount])
                commitFrames.append(i)
                commitBodies.append(body)
                let d = groups.count * CommitChain.digestByteCount
                groups.append(
                    CommitGroup(
                        commitFrame: i, members: groupStart..<i, digest: Array(table.digests[d..<(d + CommitChain.digestByteCount)]),
                        storedHead: head, commitBody: body, containsDamage: false))
                groupStart = i + 1
            } else {
                let n = h.trailerByteCount
                guard zero((i * width + n)..<((i + 1) * width)) else { return nil }
                if isChunkRow {
                    let at = nextChunk * ChunkHeader.byteCount
                    guard ChunkHeader.parse(table.chunkHeaders[at..<(at + ChunkHeader.byteCount)]) != nil else { return nil }
                    nextChunk += 1
                }
                if !h.isSealed {
                    // A keyring (or a plaintext kind this reader does not
                    // know): its body is read and its hash checked, as a
                    // scan does; the table's trailer must be that hash.
                    let bodyLength = Int(h.bodyLength)
                    guard bodyLength >= FrameHeader.bodyHashByteCount else { return nil }
                    let body = try window.bytes(bodyOffset, bodyLength)
                    let intact = body.withUnsafeBytes { SealedFrame.bodyHashMatches($0) }
                    guard intact,
                        body[(bodyLength - FrameHeader.bodyHashByteCount)...].elementsEqual(trailers[(i * width)..<(i * width + n)])
                    else { return nil }
                    plaintextFrames.append(i)
                    plaintextBodies.append(h.kind == .keyring ? Array(body[0..<(bodyLength - FrameHeader.bodyHashByteCount)]) : nil)
                }
            }
            offset = end
        }
        guard offset == committedLength, nextChunk == chunkCount, groupStart == frameCount, groups.count == digestCount,
            groups.last?.storedHead == chainHead, commits.finalize() == commitsDigest
        else { return nil }
        let packed = PackedFrames(
            count: frameCount, headers: headers, trailers: trailers, offsets: offsets, chunkFrames: chunkFrames,
            chunkHeaders: table.chunkHeaders, commitFrames: commitFrames, commitBodies: commitBodies, plaintextFrames: plaintextFrames,
            plaintextBodies: plaintextBodies)
        return VaultStructure(
            header: header, headerDamage: .none, fileSize: committedLength, frames: FrameList(packed: packed), groups: groups,
            damagedRegions: [], committedEnd: committedLength, uncommittedFrames: frameCount..<frameCount)
    }
}
