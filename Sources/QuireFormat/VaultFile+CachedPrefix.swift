@_spi(Crypto) import QuireCrypto
import QuireSystem

/// What a keyless scan found in the committed prefix of a vault file, kept
/// by the device-local index cache so that a later open scans only the
/// bytes after it (`Spec/index-cache.md §1`, the `prefix` part; §5).
///
/// Two byte strings: `frames`, for each frame in file order its 16 header
/// bytes, then — for every frame but a commit — its trailer (the 32-byte
/// body hash, or a chunk's 16-byte AEAD tag), then — for an attachment
/// chunk — its 21-byte chunk header; and `digests`, the group digest `D_k`
/// of each commit group in file order (32 bytes each). Offsets are not
/// stored: the frames of such a prefix are contiguous from byte 64.
package struct PrefixFrameTable: Sendable, Equatable {
    /// The frames column.
    package var frames: [UInt8]
    /// The group digests column.
    package var digests: [UInt8]

    /// The columns as stored.
    package init(frames: [UInt8], digests: [UInt8]) {
        self.frames = frames
        self.digests = digests
    }

    /// The table of the first `frameCount` frames of `structure`, which
    /// must end with a commit; nil when that prefix holds anything a scan
    /// reports — a damaged header copy or region, a repaired header, a
    /// malformed frame, a plaintext frame whose body hash does not check,
    /// a group marked damaged — so that such a file is always scanned whole.
    package init?(of structure: VaultStructure, frameCount: Int) {
        guard frameCount > 0, frameCount <= structure.frames.count, structure.headerDamage == .none,
            structure.frames[frameCount - 1].isCommit
        else { return nil }
        let end = structure.frames[frameCount - 1].end
        guard !structure.damagedRegions.contains(where: { $0.offset < end }) else { return nil }
        var frames: [UInt8] = []
        frames.reserveCapacity(frameCount * 48)
        var expected = UInt64(FileHeader.byteCount)
        for f in structure.frames[0..<frameCount] {
            guard f.location.offset == expected, !f.repaired, f.malformation == nil, f.checksumIntact != false,
                f.headerBytes.count == FrameHeader.byteCount
            else { return nil }
            expected = f.end
            frames += f.headerBytes
            if f.header.kind == .commit {
                guard f.commitBody?.count == CommitChain.bodyByteCount else { return nil }
                continue
            }
            guard f.trailer.count == f.header.trailerByteCount else { return nil }
            frames += f.trailer
            if f.header.kind == .blobChunk {
                guard let chunk = f.chunk else { return nil }
                frames += chunk.encoded()
            }
        }
        var digests: [UInt8] = []
        for g in structure.groups {
            guard g.commitFrame < frameCount else { break }
            guard !g.containsDamage, g.digest.count == CommitChain.digestByteCount else { return nil }
            digests += g.digest
        }
        self.init(frames: frames, digests: digests)
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
    /// `committedLength` bytes; the table's frames, laid end to end from
    /// byte 64, end at `committedLength` with a commit, number
    /// `frameCount` and each have a well-formed header; each commit frame,
    /// read at its offset (216 bytes), has the header the table holds, and
    /// the commit frames' bytes hash to `commitsDigest`, the last one
    /// storing `chainHead`; every plaintext frame (a keyring) is read at
    /// its offset and its body hash checked against the trailer the table
    /// holds (the keyring evaluation then reads those bodies, as after a
    /// scan). The bodies of sealed frames are not read: a record whose
    /// bytes changed fails its AEAD tag when it is read. The table's
    /// headers are taken as written (their check bytes are not hashed
    /// again: the table is authenticated), their fields checked for
    /// plausibility and the rules of their kind.
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
            // Scanned here, while this is the only reference to the frames:
            // appending to a shared array would copy 50,000 frames.
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
        guard frameCount > 0, size >= committedLength, committedLength > UInt64(FileHeader.byteCount) else { return nil }
        let window = FileWindow(file: file, fileSize: size, preferredByteCount: 0)
        let (header, damage) = try FileHeader.parse(try window.bytes(0, FileHeader.byteCount))
        guard damage == .none else { return nil }
        var frames: [ScannedFrame] = []
        frames.reserveCapacity(frameCount)
        var groups: [CommitGroup] = []
        var commits = BLAKE2b.Hasher(byteCount: 32)
        var offset = UInt64(FileHeader.byteCount)
        var groupStart = 0
        var at = 0
        let t = table.frames
        let digestCount = table.digests.count / CommitChain.digestByteCount
        guard table.digests.count == digestCount * CommitChain.digestByteCount else { return nil }
        while at < t.count {
            guard frames.count < frameCount, t.count - at >= FrameHeader.byteCount, offset < committedLength else { return nil }
            // The table is authenticated (sealed under the cache key) and
            // was written from checked headers: its headers are not hashed
            // again (a BLAKE2b per frame), only their fields checked; a
            // commit's header is compared with the file's bytes below.
            let h = t.withUnsafeBytes { FrameHeader.unchecked($0, at: at) }
            guard h.isPlausible, VaultScanner.malformation(of: h) == nil else { return nil }
            let headerBytes = Array(t[at..<(at + FrameHeader.byteCount)])
            at += FrameHeader.byteCount
            let location = FrameLocation(offset: offset, index: frames.count)
            let bodyOffset = offset + UInt64(FrameHeader.byteCount)
            let end = bodyOffset + UInt64(h.bodyLength)
            guard end <= committedLength else { return nil }
            if h.kind == .commit {
                let stored = try window.bytes(offset, FrameHeader.byteCount + CommitChain.bodyByteCount)
                guard Array(stored[0..<FrameHeader.byteCount]) == headerBytes, groups.count < digestCount else { return nil }
                commits.update(stored)
                let body = Array(stored[FrameHeader.byteCount...])
                let head = Array(body[0..<CommitChain.headByteCount])
                var frame = ScannedFrame(
                    location: location, header: h, headerBytes: headerBytes, trailer: head, repaired: false, chunk: nil,
                    plaintextBody: nil, checksumIntact: nil, malformation: nil)
                frame.commitBody = body
                frames.append(frame)
                let d = groups.count * CommitChain.digestByteCount
                groups.append(
                    CommitGroup(
                        commitFrame: location.index, members: groupStart..<location.index,
                        digest: Array(table.digests[d..<(d + CommitChain.digestByteCount)]), storedHead: head, commitBody: body,
                        containsDamage: false))
                groupStart = frames.count
            } else {
                let n = h.trailerByteCount
                guard t.count - at >= n else { return nil }
                let trailer = Array(t[at..<(at + n)])
                at += n
                var chunk: ChunkHeader?
                if h.kind == .blobChunk {
                    guard t.count - at >= ChunkHeader.byteCount, let c = ChunkHeader.parse(t[at..<(at + ChunkHeader.byteCount)]) else {
                        return nil
                    }
                    chunk = c
                    at += ChunkHeader.byteCount
                }
                var plaintextBody: [UInt8]?
                var checksumIntact: Bool?
                if !h.isSealed {
                    // A keyring (or a plaintext kind this reader does not
                    // know): its body is read and its hash checked, as a
                    // scan does; the table's trailer must be that hash.
                    let bodyLength = Int(h.bodyLength)
                    guard bodyLength >= FrameHeader.bodyHashByteCount else { return nil }
                    let body = try window.bytes(bodyOffset, bodyLength)
                    let intact = body.withUnsafeBytes { SealedFrame.bodyHashMatches($0) }
                    guard intact, Array(body[(bodyLength - FrameHeader.bodyHashByteCount)...]) == trailer else { return nil }
                    checksumIntact = true
                    if h.kind == .keyring { plaintextBody = Array(body[0..<(bodyLength - FrameHeader.bodyHashByteCount)]) }
                }
                frames.append(
                    ScannedFrame(
                        location: location, header: h, headerBytes: headerBytes, trailer: trailer, repaired: false, chunk: chunk,
                        plaintextBody: plaintextBody, checksumIntact: checksumIntact, malformation: nil))
            }
            offset = end
        }
        guard frames.count == frameCount, offset == committedLength, groupStart == frameCount, groups.count == digestCount,
            groups.last?.storedHead == chainHead, commits.finalize() == commitsDigest
        else { return nil }
        return VaultStructure(
            header: header, headerDamage: .none, fileSize: committedLength, frames: frames, groups: groups, damagedRegions: [],
            committedEnd: committedLength, uncommittedFrames: frameCount..<frameCount)
    }
}
