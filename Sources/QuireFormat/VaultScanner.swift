@_spi(Crypto) import QuireCrypto
public import QuireSystem

/// One frame found by the scanner, with what can be learned without a key.
@_spi(Format) public struct ScannedFrame: Sendable {
    /// Where the frame is.
    public let location: FrameLocation
    /// Its header (after single-bit repair, if there was one).
    public let header: FrameHeader
    /// The header's 16 bytes (as corrected, if it was repaired).
    public let headerBytes: [UInt8]
    /// The bytes that stand for the body in the commit chain: the last 32
    /// (the body hash) of every frame but a chunk, the last 16 (the AEAD tag)
    /// of a chunk (`Spec/format.md §9.2`). For a commit, its stored head.
    public let trailer: [UInt8]
    /// True when the header failed its check and one flipped bit was
    /// corrected (`Spec/format.md §10.2`).
    public let repaired: Bool
    /// The public chunk header, for attachment chunk frames.
    public let chunk: ChunkHeader?
    /// For keyring frames: the body without its body hash.
    public let plaintextBody: [UInt8]?
    /// For plaintext frames other than commits: whether the body hash is the
    /// BLAKE2b-256 of the rest of the body. Nil for sealed frames and commits.
    public let checksumIntact: Bool?
    /// For a well-formed commit: its whole 200-byte body (head, previous
    /// head, nonce, sealed attestation).
    public var commitBody: [UInt8]? = nil
    /// Why the frame breaks the rules of its known kind, if it does.
    public let malformation: String?

    /// Offset of the body (just after the header).
    public var bodyOffset: UInt64 { location.offset + UInt64(FrameHeader.byteCount) }
    /// Offset just past the frame.
    public var end: UInt64 { bodyOffset + UInt64(header.bodyLength) }
    /// True for a well-formed commit frame.
    public var isCommit: Bool { header.kind == .commit && malformation == nil }
}

/// The frames between two commits and the commit that closes them.
@_spi(Format) public struct CommitGroup: Sendable {
    /// Index of the commit frame.
    public let commitFrame: Int
    /// Indices of the frames the commit covers (those since the previous commit).
    public let members: Range<Int>
    /// D_k, the digest of the members' summaries (`Spec/format.md §9`).
    public let digest: [UInt8]
    /// The head stored in the commit frame (its first 32 bytes).
    public let storedHead: [UInt8]
    /// The commit frame's whole body (head ‖ previous head ‖ nonce ‖ sealed attestation).
    public let commitBody: [UInt8]
    /// The previous head `h_(k−1)` stored in the commit frame (bytes 32..<64):
    /// the head of the commit it extends, or `h_0` (`Spec/format.md §9.2`).
    public var storedPreviousHead: [UInt8] { CommitChain.storedPreviousHead(body: commitBody) }
    /// True when the commit frame stores `head` as its previous head
    /// (``storedPreviousHead``), compared in place: no array is made.
    /// Word by word: a generic `elementsEqual` of a slice cost about 500
    /// instructions a commit, 27 M for an open of 50,000 commits.
    package func storesPreviousHead(_ head: [UInt8]) -> Bool {
        let start = CommitChain.headByteCount
        guard commitBody.count == CommitChain.bodyByteCount, head.count == CommitChain.nonceOffset - start else { return false }
        return commitBody.withUnsafeBytes { body in
            head.withUnsafeBytes { h in
                var at = 0
                while at + 8 <= h.count {
                    let stored = body.loadUnaligned(fromByteOffset: start + at, as: UInt64.self)
                    guard stored == h.loadUnaligned(fromByteOffset: at, as: UInt64.self) else { return false }
                    at += 8
                }
                while at < h.count {
                    guard body[start + at] == h[at] else { return false }
                    at += 1
                }
                return true
            }
        }
    }
    /// True when damaged bytes lie between the previous commit and this one.
    public let containsDamage: Bool
}

/// A run of bytes that could not be read as frames.
@_spi(Format) public struct DamagedRegion: Sendable, Hashable {
    /// Offset of the first damaged byte.
    public let offset: UInt64
    /// Number of bytes skipped.
    public let byteCount: UInt64
}

/// The layout of a vault file as a keyless scan sees it
/// (`Spec/format.md §10`): the header, every frame, the commit groups, the
/// damaged regions and the torn tail.
@_spi(Format) public struct VaultStructure: Sendable {
    /// The file header.
    public let header: FileHeader
    /// Whether one header copy was damaged.
    public let headerDamage: FileHeader.Damage
    /// The file size when scanned, in bytes.
    public internal(set) var fileSize: UInt64
    /// Every frame found, in file order.
    public internal(set) var frames: FrameList
    /// The commit groups, in file order.
    public internal(set) var groups: [CommitGroup]
    /// Regions skipped as damaged before the end of the last commit.
    public internal(set) var damagedRegions: [DamagedRegion]
    /// Offset just past the last commit frame (64 when there is none).
    public internal(set) var committedEnd: UInt64
    /// Frames after the last commit (uncommitted, part of the tail).
    public internal(set) var uncommittedFrames: Range<Int>
    /// True when the tail holds bytes that are not frames between its frames
    /// (so it cannot be a commit whose header alone was damaged, §10.3).
    public internal(set) var tailHasDamage = false

    /// Number of bytes after the last commit: an unfinished write, ignored.
    public var tailByteCount: UInt64 { fileSize - committedEnd }

    /// Indices of committed frames (those covered by some commit group).
    public var committedFrameCount: Int { uncommittedFrames.lowerBound }

    /// True when a commit group's commit frame stores `head` and ends at
    /// byte `length`: the file extends that state (this device's memory of
    /// the vault, a tampered commit the user accepted). Looked for from the
    /// last group back, the stored head compared first: the state asked
    /// about is usually the last commit or close to it, and finding a
    /// frame's end costs lookups in a prefix kept packed (``FrameList``),
    /// so that an open of a vault written an entry a commit does not pay
    /// them once per commit.
    package func hasCommit(endingAt length: UInt64, storedHead head: [UInt8]) -> Bool {
        for g in groups.indices.reversed() where groups[g].storedHead == head {
            if frames.end(at: groups[g].commitFrame) == length { return true }
        }
        return false
    }

    /// The group a committed frame belongs to, by frame index.
    public func groupIndex(ofFrame index: Int) -> Int? {
        var lo = 0
        var hi = groups.count - 1
        while lo <= hi {
            let mid = (lo + hi) / 2
            let g = groups[mid]
            if index < g.members.lowerBound { hi = mid - 1 } else if index > g.commitFrame { lo = mid + 1 } else { return mid }
        }
        return nil
    }
}

/// Finds the frames of a vault file without any key (`Spec/format.md §10`).
@_spi(Format) public enum VaultScanner {
    /// Scans the whole file at `path`.
    ///
    /// - Throws: the header errors of ``FileHeader/parse(_:)`` and
    ///   ``FormatError/io(_:)``.
    public static func scan(path: String) throws(FormatError) -> VaultStructure {
        let file: SystemFile
        do { file = try SystemFile(path: path, mode: .readOnly) } catch { throw .io(error) }
        return try scan(file: file)
    }

    /// Scans the whole of `file`.
    ///
    /// - Throws: the header errors of ``FileHeader/parse(_:)`` and
    ///   ``FormatError/io(_:)``.
    public static func scan(file: SystemFile) throws(FormatError) -> VaultStructure {
        let size: UInt64
        do { size = try file.size() } catch { throw .io(error) }
        guard size >= UInt64(FileHeader.byteCount) else { throw .truncatedHeader(fileByteCount: size) }
        let window = FileWindow(file: file, fileSize: size)
        let (header, damage) = try FileHeader.parse(try window.bytes(0, FileHeader.byteCount))
        var structure = VaultStructure(
            header: header, headerDamage: damage, fileSize: size, frames: [], groups: [], damagedRegions: [],
            committedEnd: UInt64(FileHeader.byteCount), uncommittedFrames: 0..<0)
        try continueScan(&structure, window: window)
        return structure
    }

    /// What a scan finds in the first `groups` commit groups of the file
    /// `structure` was scanned from: the frames and groups up to the end of
    /// group `groups − 1`, nothing after. Nil when the header or a region
    /// before that end was damaged (a scan of those bytes alone is then
    /// left to ``scan(file:)``). A writer that copies those bytes into a new
    /// file continues from this with ``rescanTail(_:file:)`` instead of
    /// scanning them again.
    public static func prefix(of structure: VaultStructure, groups: Int) -> VaultStructure? {
        guard groups > 0, groups <= structure.groups.count, structure.headerDamage == .none else { return nil }
        let commitFrame = structure.groups[groups - 1].commitFrame
        let end = structure.frames.end(at: commitFrame)
        guard !structure.damagedRegions.contains(where: { $0.offset < end }) else { return nil }
        let frameCount = commitFrame + 1
        return VaultStructure(
            header: structure.header, headerDamage: .none, fileSize: end, frames: structure.frames.keepingFirst(frameCount),
            groups: Array(structure.groups[0..<groups]), damagedRegions: [], committedEnd: end, uncommittedFrames: frameCount..<frameCount)
    }

    /// Rescans `structure` from its committed end to the current end of
    /// `file`, replacing its tail; used by a writer to follow appends made by
    /// other processes. Earlier frames are kept as they are.
    ///
    /// - Throws: ``FormatError/io(_:)``.
    public static func rescanTail(_ structure: inout VaultStructure, file: SystemFile) throws(FormatError) {
        let size: UInt64
        do { size = try file.size() } catch { throw .io(error) }
        // Removing no frames would still copy every frame of a list that
        // shares its storage (a merge's copied prefix).
        if !structure.uncommittedFrames.isEmpty { structure.frames.removeSubrange(structure.uncommittedFrames) }
        structure.uncommittedFrames = structure.frames.count..<structure.frames.count
        structure.tailHasDamage = false
        structure.fileSize = size
        guard size >= structure.committedEnd else { return }
        try continueScan(&structure, window: FileWindow(file: file, fileSize: size))
    }

    private static func continueScan(_ s: inout VaultStructure, window: FileWindow) throws(FormatError) {
        let size = window.fileSize
        var pos = s.committedEnd
        var digest = CommitChain.Digest()
        var groupStart = s.frames.count
        var groupDamaged = false
        var pendingDamage: [DamagedRegion] = []

        // After a large frame the scanner reads sparsely (headers, chunk
        // headers and trailers only), so opening a vault of big attachments
        // does not read their bodies.
        var sparse = false

        // Once a few hundred frames are read, the frame list grows by the
        // frames the rest of the file likely holds at the mean frame size so
        // far (at least an eighth more, so a bounded number of growths
        // whatever the estimate; at most 65,536 frames or twice the list at
        // once), instead of doubling: each growth moves every frame (10,100
        // of them, 1.5 MB, a dozen times in a 10k-entry vault) into fresh
        // memory.
        let start = UInt64(FileHeader.byteCount)
        func makeRoom(before offset: UInt64) {
            guard s.frames.roomLeft == 0 else { return }
            let count = s.frames.count
            var room = max(count, 16)
            if count >= 256, offset > start {
                let left = size > offset ? size - offset : 0
                let expected = Double(count) * Double(left) / Double(offset - start) * 1.125 + 16
                room = max(count / 8 + 16, Int(min(expected, Double(max(count, 1 << 16)))))
            }
            s.frames.reserveRoom(for: room)
        }

        func take(at offset: UInt64, header h: FrameHeader, headerBytes: [UInt8], repaired: Bool) throws(FormatError) -> UInt64 {
            sparse = h.isSealed && Int(h.bodyLength) >= Self.sparseThreshold
            makeRoom(before: offset)
            let frame = try readFrame(
                at: offset, header: h, headerBytes: headerBytes, repaired: repaired, index: s.frames.count, window: window, sparse: sparse)
            s.frames.append(frame)
            if frame.isCommit {
                s.groups.append(
                    CommitGroup(
                        commitFrame: frame.location.index, members: groupStart..<frame.location.index,
                        digest: digest.take(), storedHead: frame.trailer, commitBody: frame.commitBody ?? [], containsDamage: groupDamaged))
                groupStart = s.frames.count
                groupDamaged = false
                s.damagedRegions += pendingDamage
                pendingDamage = []
                s.committedEnd = frame.end
            } else {
                digest.add(header: frame.headerBytes, trailer: frame.trailer)
            }
            return frame.end
        }

        func damage(_ from: UInt64, _ to: UInt64) {
            guard to > from else { return }
            pendingDamage.append(DamagedRegion(offset: from, byteCount: to - from))
            groupDamaged = true
        }

        while pos < size {
            let left = size - pos
            if left < UInt64(FrameHeader.byteCount) { break }
            let rawHeader = try window.bytes(pos, FrameHeader.byteCount, readAhead: sparse ? 4096 : nil)
            var header = rawHeader.withUnsafeBytes { FrameHeader.parseChecked($0, at: 0) }
            var checkedButOverrunning = false
            if let h = header, pos + UInt64(FrameHeader.byteCount) + UInt64(h.bodyLength) > size {
                // A frame running past the end of the file is a torn write
                // (§10.3) — unless committed frames follow inside it: then
                // its length was damaged, and the scanner resynchronises.
                guard let q = try resynchronize(after: pos, window: window), try commitFollows(from: q, window: window) else { break }
                header = nil
                checkedButOverrunning = true
            }
            if header == nil {
                if !checkedButOverrunning, let h = try repairHeader(at: pos, window: window) {
                    pos = try take(at: pos, header: h, headerBytes: h.encoded(), repaired: true)
                    continue
                }
                guard let next = try resynchronize(after: pos, window: window) else { break }  // the rest is tail
                // Between the damage and the next confirmed frame, keep every
                // checked frame that fits (§10.2): an intact frame between two
                // damaged ones is not lost with them.
                var from = pos + 1
                var regionStart = pos
                while let (at, h) = try firstChecked(from: from, before: next, window: window) {
                    damage(regionStart, at)
                    let end = try take(at: at, header: h, headerBytes: try window.bytes(at, FrameHeader.byteCount), repaired: false)
                    regionStart = end
                    from = end
                }
                damage(regionStart, next)
                pos = next
                continue
            }
            pos = try take(at: pos, header: header!, headerBytes: rawHeader, repaired: false)
        }
        s.uncommittedFrames = groupStart..<s.frames.count
        s.tailHasDamage = !pendingDamage.isEmpty
    }

    /// The first position in `[from, before)` with a checked header whose
    /// frame ends at or before `before`.
    private static func firstChecked(from: UInt64, before limit: UInt64, window: FileWindow) throws(FormatError) -> (UInt64, FrameHeader)? {
        var q = from
        while q + UInt64(FrameHeader.byteCount) <= limit {
            guard let (at, h) = try nextCheckedHeader(from: q, before: limit, window: window) else { return nil }
            if at + UInt64(FrameHeader.byteCount) + UInt64(h.bodyLength) <= limit { return (at, h) }
            q = at + 1
        }
        return nil
    }

    /// True when, following checked headers from `offset`, a well-formed
    /// commit frame is reached before anything unchecked or the end.
    private static func commitFollows(from offset: UInt64, window: FileWindow) throws(FormatError) -> Bool {
        var q = offset
        while window.fileSize - q >= UInt64(FrameHeader.byteCount) {
            guard let h = try window.withBytes(q, FrameHeader.byteCount, readAhead: 4096, { FrameHeader.parseChecked($0, at: 0) }) else {
                return false
            }
            let end = q + UInt64(FrameHeader.byteCount) + UInt64(h.bodyLength)
            guard end <= window.fileSize else { return false }
            if h.kind == .commit && malformation(of: h) == nil { return true }
            q = end
        }
        return false
    }

    /// Sealed bodies at least this long are skipped, not read, by the scanner.
    static let sparseThreshold = 32 << 10

    /// Reads what the scanner keeps of the frame at `offset`.
    static func readFrame(
        at offset: UInt64, header: FrameHeader, headerBytes: [UInt8], repaired: Bool, index: Int, window: FileWindow, sparse: Bool
    ) throws(FormatError) -> ScannedFrame {
        let location = FrameLocation(offset: offset, index: index)
        let bodyOffset = offset + UInt64(FrameHeader.byteCount)
        let bodyLength = Int(header.bodyLength)
        let end = bodyOffset + UInt64(bodyLength)
        let small = sparse ? 64 : nil
        let malformation = malformation(of: header)
        let trailerCount = header.trailerByteCount
        var trailer = try window.bytes(end - UInt64(trailerCount), trailerCount, readAhead: small)
        var chunk: ChunkHeader? = nil
        var plaintextBody: [UInt8]? = nil
        var checksumIntact: Bool? = nil
        var commitBody: [UInt8]? = nil
        if malformation == nil && header.kind == .blobChunk {
            chunk = ChunkHeader.parse(try window.bytes(bodyOffset + 24, ChunkHeader.byteCount, readAhead: small))
        }
        if header.kind == .commit && malformation == nil {
            let body = try window.bytes(bodyOffset, bodyLength)
            commitBody = body
            trailer = Array(body[0..<CommitChain.headByteCount])
        } else if !header.isSealed && header.kind != .commit {
            let keep = header.kind == .keyring
            let content = try window.withBytes(bodyOffset, bodyLength) { raw in
                (SealedFrame.bodyHashMatches(raw), keep ? Array(raw[0..<(bodyLength - FrameHeader.bodyHashByteCount)]) : nil)
            }
            checksumIntact = content.0
            plaintextBody = content.1
        }
        var reason = malformation
        if reason == nil && header.kind == .blobChunk && chunk == nil { reason = "the chunk header's final byte is not 0 or 1" }
        // The summary uses the header bytes as found (or as corrected): no
        // second hash to rebuild them.
        var frame = ScannedFrame(
            location: location, header: header, headerBytes: headerBytes, trailer: trailer, repaired: repaired, chunk: chunk,
            plaintextBody: plaintextBody, checksumIntact: checksumIntact, malformation: reason)
        frame.commitBody = commitBody
        return frame
    }

    static func malformation(of h: FrameHeader) -> String? {
        guard h.kind.isKnown else { return nil }
        if h.kind.isSealedKind != h.isSealed {
            return h.kind.isSealedKind ? "a \(h.kind) frame must be sealed" : "a \(h.kind) frame must not be sealed"
        }
        switch h.kind {
        case .commit:
            if h.bodyLength != UInt32(CommitChain.bodyByteCount) { return "a commit body must be \(CommitChain.bodyByteCount) bytes" }
        case .blobChunk:
            if h.isCompressed { return "attachment chunks are never compressed" }
            let minimum = SealedFrame.chunkBodyLength(plaintextCount: 1)
            if h.bodyLength < UInt32(minimum) { return "a chunk body must be at least \(minimum) bytes" }
            if h.bodyLength > UInt32(SealedFrame.fullChunkBodyLength) {
                return "a chunk body must be at most \(SealedFrame.fullChunkBodyLength) bytes"
            }
        case .entryRevision, .blobManifest, .profile:
            let minimum = 24 + 1 + 16 + FrameHeader.bodyHashByteCount
            if h.bodyLength < UInt32(minimum) { return "a sealed record body must be at least \(minimum) bytes" }
        default:
            break
        }
        return nil
    }

    private static func confirmedFrame(_ h: FrameHeader, at offset: UInt64, window: FileWindow) throws(FormatError) -> Bool {
        let end = offset + UInt64(FrameHeader.byteCount) + UInt64(h.bodyLength)
        if end > window.fileSize { return false }
        if end == window.fileSize { return true }
        if window.fileSize - end < UInt64(FrameHeader.byteCount) { return false }
        return try window.withBytes(end, FrameHeader.byteCount) { FrameHeader.parseChecked($0, at: 0) } != nil
    }

    /// Tries the 96 single-bit corrections of a header that failed its check,
    /// lowest bit first; returns the first that gives a confirmed frame.
    private static func repairHeader(at offset: UInt64, window: FileWindow) throws(FormatError) -> FrameHeader? {
        var bytes = try window.bytes(offset, FrameHeader.byteCount)
        for bit in 0..<(FrameHeader.byteCount * 8) {
            bytes[bit / 8] ^= UInt8(1 << (bit % 8))
            defer { bytes[bit / 8] ^= UInt8(1 << (bit % 8)) }
            let candidate = bytes.withUnsafeBytes { FrameHeader.parseChecked($0, at: 0) }
            if let h = candidate, try confirmedFrame(h, at: offset, window: window) { return h }
        }
        return nil
    }

    /// The offset of the next confirmed frame after a damaged `offset`, or
    /// nil when none follows.
    private static func resynchronize(after offset: UInt64, window: FileWindow) throws(FormatError) -> UInt64? {
        var q = offset + 1
        while let (candidate, h) = try nextCheckedHeader(from: q, before: window.fileSize, window: window) {
            if try confirmedFrame(h, at: candidate, window: window) { return candidate }
            q = candidate + 1
        }
        return nil
    }

    /// The first position in `[from, limit)` where a checked, plausible
    /// header starts. Runs of zero bytes (a file system's zero fill, a
    /// sparse hole) are skipped a word at a time: a header whose length
    /// field is all zeros is never plausible.
    private static func nextCheckedHeader(from: UInt64, before limit: UInt64, window: FileWindow) throws(FormatError) -> (
        UInt64, FrameHeader
    )? {
        var q = from
        while q + UInt64(FrameHeader.byteCount) <= limit {
            let span = Int(min(UInt64(1 << 20), limit - q))
            let found = try window.withBytes(q, span) { raw -> Int? in
                var i = 0
                let last = raw.count - FrameHeader.byteCount
                while i <= last {
                    if raw[i + 8] == 0 && raw[i + 9] == 0 && raw[i + 10] == 0 && raw[i + 11] == 0 {
                        // Find the next non-zero byte; no plausible header can
                        // start more than 11 bytes before it (its length,
                        // bytes 8..<12, is never zero).
                        var j = i + 12
                        while j + 8 <= raw.count && raw.loadUnaligned(fromByteOffset: j, as: UInt64.self) == 0 { j += 8 }
                        while j < raw.count && raw[j] == 0 { j += 1 }
                        i = max(i + 1, j - 11)
                        continue
                    }
                    if FrameHeader.parseChecked(raw, at: i) != nil { return i }
                    i += 1
                }
                return nil
            }
            if let i = found {
                let at = q + UInt64(i)
                let h = try window.withBytes(at, FrameHeader.byteCount) { FrameHeader.parseChecked($0, at: 0) }!
                return (at, h)
            }
            q += UInt64(max(1, span - FrameHeader.byteCount + 1))
        }
        return nil
    }
}
