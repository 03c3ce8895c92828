import QuireSystem
import Synchronization

/// One row group of the index cache's frame table (`Spec/index-cache.md §1`):
/// the columns of ``PrefixFrameTable`` for frames `first ..< first + count`,
/// each row group sealed apart so that an open decrypts only the ones it
/// needs. `chunkFrames` holds absolute frame indices (uint32 LE).
package struct FrameTableRowGroup: Sendable, Equatable {
    package var headers: [UInt8]
    package var trailers: [UInt8]
    package var chunkFrames: [UInt8]
    package var chunkHeaders: [UInt8]

    package init(headers: [UInt8], trailers: [UInt8], chunkFrames: [UInt8], chunkHeaders: [UInt8]) {
        self.headers = headers
        self.trailers = trailers
        self.chunkFrames = chunkFrames
        self.chunkHeaders = chunkHeaders
    }
}

/// The part of the index cache's frame table an open checks before it uses
/// the table (`Spec/index-cache.md §1`, §5): where each row group starts in
/// the vault file, the commit frames and plaintext frames with where they
/// are, and the group digests — O(row groups + commits + keyrings), not
/// O(frames).
package struct FrameTableDirectory: Sendable, Equatable {
    /// Frames per row group (the last may hold fewer).
    package static let defaultRowsPerGroup = 1024
    /// A plaintext row: frame index (uint32 LE), offset (uint64 LE), its 16
    /// header bytes and its 32-byte trailer (the body hash).
    package static let plaintextRowWidth = 60
    /// A commit row: frame index (uint32 LE), offset (uint64 LE).
    package static let commitRowWidth = 12

    package var rowsPerGroup: Int
    package var frameCount: Int
    /// The offset of each row group's first frame.
    package var groupStarts: [UInt64]
    /// Commit rows, ascending.
    package var commits: [UInt8]
    /// The group digest `D_k` of each commit group, 32 bytes each.
    package var digests: [UInt8]
    /// Plaintext rows, ascending.
    package var plaintext: [UInt8]

    package init(rowsPerGroup: Int, frameCount: Int, groupStarts: [UInt64], commits: [UInt8], digests: [UInt8], plaintext: [UInt8]) {
        self.rowsPerGroup = rowsPerGroup
        self.frameCount = frameCount
        self.groupStarts = groupStarts
        self.commits = commits
        self.digests = digests
        self.plaintext = plaintext
    }

    /// The number of row groups `frameCount` frames make.
    package var groupCount: Int { rowsPerGroup > 0 ? (frameCount + rowsPerGroup - 1) / rowsPerGroup : 0 }

    /// The frames of row group `g`.
    package func frames(ofGroup g: Int) -> Range<Int> {
        (g * rowsPerGroup)..<min(frameCount, (g + 1) * rowsPerGroup)
    }

    static func u32(_ bytes: [UInt8], _ at: Int) -> Int {
        bytes.withUnsafeBytes { Int(UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: at, as: UInt32.self))) }
    }

    static func u64(_ bytes: [UInt8], _ at: Int) -> UInt64 {
        bytes.withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(fromByteOffset: at, as: UInt64.self)) }
    }
}

/// The index cache's frame table as an open reads it: the directory,
/// checked at open, and the row groups, each read, authenticated and
/// decoded by `load` only when a frame in it is first asked for (nil when
/// it cannot be: then those frames are read from the vault file instead).
package struct CachedFrameTable: Sendable {
    package var directory: FrameTableDirectory
    package var load: @Sendable (Int) -> FrameTableRowGroup?

    package init(directory: FrameTableDirectory, load: @escaping @Sendable (Int) -> FrameTableRowGroup?) {
        self.directory = directory
        self.load = load
    }

    /// `table` held in memory (its row groups cut from its columns): for
    /// writers and tests. Nil when its columns are inconsistent.
    package init?(_ table: PrefixFrameTable, rowsPerGroup: Int = FrameTableDirectory.defaultRowsPerGroup) {
        guard let (directory, groups) = table.split(rowsPerGroup: rowsPerGroup) else { return nil }
        self.init(directory: directory) { g in g < groups.count ? groups[g] : nil }
    }

    /// Every row group loaded and joined into one table; nil when one does
    /// not load. For writers and tests.
    package func materialized() -> PrefixFrameTable? {
        var t = PrefixFrameTable(headers: [], trailers: [], chunkFrames: [], chunkHeaders: [], digests: directory.digests)
        for g in 0..<directory.groupCount {
            guard let r = load(g) else { return nil }
            t.headers += r.headers
            t.trailers += r.trailers
            t.chunkFrames += r.chunkFrames
            t.chunkHeaders += r.chunkHeaders
        }
        return t
    }
}

extension PrefixFrameTable {
    /// The directory and row groups of this table, `rowsPerGroup` frames a
    /// group: offsets derived from the headers' body lengths from byte 64.
    /// Nil when the columns do not have whole, matching rows.
    package func split(rowsPerGroup: Int) -> (FrameTableDirectory, [FrameTableRowGroup])? {
        let n = frameCount
        let w = Self.trailerWidth
        let chunkCount = chunkFrames.count / 4
        guard rowsPerGroup > 0, n > 0, headers.count == n * FrameHeader.byteCount, trailers.count == n * w,
            chunkFrames.count == chunkCount * 4, chunkHeaders.count == chunkCount * ChunkHeader.byteCount,
            digests.count % CommitChain.digestByteCount == 0
        else { return nil }
        var starts: [UInt64] = []
        var commits: [UInt8] = []
        var plaintext: [UInt8] = []
        var groups: [FrameTableRowGroup] = []
        var offset = UInt64(FileHeader.byteCount)
        var chunk = 0
        func le(_ v: UInt64, _ bytes: Int, to out: inout [UInt8]) {
            for k in 0..<bytes { out.append(UInt8(truncatingIfNeeded: v >> (8 * UInt64(k)))) }
        }
        var g = 0
        while g * rowsPerGroup < n {
            let range = (g * rowsPerGroup)..<min(n, (g + 1) * rowsPerGroup)
            starts.append(offset)
            let firstChunk = chunk
            for i in range {
                let h = headers.withUnsafeBytes { FrameHeader.unchecked($0, at: i * FrameHeader.byteCount) }
                let row = Array(headers[(i * FrameHeader.byteCount)..<((i + 1) * FrameHeader.byteCount)])
                if h.kind == .commit {
                    le(UInt64(i), 4, to: &commits)
                    le(offset, 8, to: &commits)
                } else if !h.isSealed {
                    le(UInt64(i), 4, to: &plaintext)
                    le(offset, 8, to: &plaintext)
                    plaintext += row
                    plaintext += trailers[(i * w)..<((i + 1) * w)]
                }
                while chunk < chunkCount && FrameTableDirectory.u32(chunkFrames, chunk * 4) == i { chunk += 1 }
                offset += UInt64(FrameHeader.byteCount) + UInt64(h.bodyLength)
            }
            groups.append(
                FrameTableRowGroup(
                    headers: Array(headers[(range.lowerBound * 16)..<(range.upperBound * 16)]),
                    trailers: Array(trailers[(range.lowerBound * w)..<(range.upperBound * w)]),
                    chunkFrames: Array(chunkFrames[(firstChunk * 4)..<(chunk * 4)]),
                    chunkHeaders: Array(chunkHeaders[(firstChunk * ChunkHeader.byteCount)..<(chunk * ChunkHeader.byteCount)])))
            g += 1
        }
        guard chunk == chunkCount else { return nil }
        let directory = FrameTableDirectory(
            rowsPerGroup: rowsPerGroup, frameCount: n, groupStarts: starts, commits: commits, digests: digests, plaintext: plaintext)
        return (directory, groups)
    }
}

/// A row group of a packed prefix once loaded: its columns with each
/// frame's offset, or — when the cache could not give it — the frames read
/// from the vault file.
final class LoadedRowGroup: Sendable {
    let first: Int
    let headers: [UInt8]
    let trailers: [UInt8]
    let offsets: [UInt64]
    let chunkFrames: [Int]
    let chunkHeaders: [UInt8]
    /// Set when the frames were read from the vault file instead.
    let frames: [ScannedFrame]?

    init(first: Int, headers: [UInt8], trailers: [UInt8], offsets: [UInt64], chunkFrames: [Int], chunkHeaders: [UInt8]) {
        self.first = first
        self.headers = headers
        self.trailers = trailers
        self.offsets = offsets
        self.chunkFrames = chunkFrames
        self.chunkHeaders = chunkHeaders
        self.frames = nil
    }

    init(first: Int, frames: [ScannedFrame]) {
        self.first = first
        self.headers = []
        self.trailers = []
        self.offsets = []
        self.chunkFrames = []
        self.chunkHeaders = []
        self.frames = frames
    }
}

/// A committed prefix of frames as the index cache's frame table holds
/// them (``CachedFrameTable``, `Spec/index-cache.md §1`, §5), with what the
/// open that checked its directory against the file read there: the commit
/// frames' and plaintext frames' offsets and bodies. Each row group is
/// loaded, checked against the directory and kept when a frame in it is
/// first asked for; a frame's ``ScannedFrame`` is built when asked for.
/// Immutable but for the row groups loaded, shared.
final class PackedFrames: Sendable {
    /// The number of frames.
    let count: Int
    let directory: FrameTableDirectory
    /// The end of the prefix (the last commit frame's end).
    let end: UInt64
    /// Frame indices of the commits, ascending.
    let commitFrames: [Int]
    let commitOffsets: [UInt64]
    /// Their 16 header bytes, one commit after another (one array, not
    /// one a commit), and their 200-byte bodies, as read from the file.
    let commitHeaders: [UInt8]
    let commitBodies: [[UInt8]]
    /// Frame indices of the plaintext frames (keyrings), ascending.
    let plaintextFrames: [Int]
    let plaintextOffsets: [UInt64]
    /// A keyring's body without its body hash (nil for another plaintext kind).
    let plaintextBodies: [[UInt8]?]
    let load: @Sendable (Int) -> FrameTableRowGroup?
    /// The vault file, for a row group the cache cannot give.
    let file: SystemFile
    private let groups: Mutex<[LoadedRowGroup?]>
    /// How many row groups were loaded from the cache, and how many read
    /// from the vault file instead (tests, benchmarks).
    private let loadCounts = Mutex<(cache: Int, file: Int)>((0, 0))

    /// How many row groups were loaded from the cache, and how many read
    /// from the vault file instead.
    var loads: (cache: Int, file: Int) { loadCounts.withLock { $0 } }

    init(
        directory: FrameTableDirectory, end: UInt64, commitFrames: [Int], commitOffsets: [UInt64], commitHeaders: [UInt8],
        commitBodies: [[UInt8]], plaintextFrames: [Int], plaintextOffsets: [UInt64], plaintextBodies: [[UInt8]?],
        load: @escaping @Sendable (Int) -> FrameTableRowGroup?, file: SystemFile
    ) {
        self.count = directory.frameCount
        self.directory = directory
        self.end = end
        self.commitFrames = commitFrames
        self.commitOffsets = commitOffsets
        self.commitHeaders = commitHeaders
        self.commitBodies = commitBodies
        self.plaintextFrames = plaintextFrames
        self.plaintextOffsets = plaintextOffsets
        self.plaintextBodies = plaintextBodies
        self.load = load
        self.file = file
        self.groups = Mutex([LoadedRowGroup?](repeating: nil, count: directory.groupCount))
    }

    /// Row group `g`, loaded at the first call.
    func group(_ g: Int) -> LoadedRowGroup {
        if let loaded = groups.withLock({ $0[g] }) { return loaded }
        let made = makeGroup(g)
        return groups.withLock { slots in
            if let other = slots[g] { return other }
            slots[g] = made
            return made
        }
    }

    /// The row group holding frame `i`.
    @inline(__always) func group(ofFrame i: Int) -> LoadedRowGroup { group(i / directory.rowsPerGroup) }

    /// The byte range of row group `g` in the vault file.
    func byteRange(ofGroup g: Int) -> Range<UInt64> {
        directory.groupStarts[g]..<(g + 1 < directory.groupStarts.count ? directory.groupStarts[g + 1] : end)
    }

    private func makeGroup(_ g: Int) -> LoadedRowGroup {
        if let r = load(g), let checked = check(r, group: g) {
            loadCounts.withLock { $0.cache += 1 }
            return checked
        }
        loadCounts.withLock { $0.file += 1 }
        return readFromFile(g)
    }

    /// `r` as row group `g` when it agrees with the directory and the
    /// frames read at open (`Spec/index-cache.md §5`): every header
    /// plausible and within the rules of its kind, laid end to end from the
    /// group's start to the next group's, the commit and plaintext frames
    /// exactly those of the directory, at the same offsets with the same
    /// header bytes (and trailers), the chunk rows exactly its chunk frames
    /// with well-formed chunk headers, and the trailers' padding zero.
    private func check(_ r: FrameTableRowGroup, group g: Int) -> LoadedRowGroup? {
        let frames = directory.frames(ofGroup: g)
        let n = frames.count
        let w = PrefixFrameTable.trailerWidth
        let chunkCount = r.chunkFrames.count / 4
        guard r.headers.count == n * FrameHeader.byteCount, r.trailers.count == n * w, r.chunkFrames.count == chunkCount * 4,
            r.chunkHeaders.count == chunkCount * ChunkHeader.byteCount
        else { return nil }
        let range = byteRange(ofGroup: g)
        var offsets: [UInt64] = []
        offsets.reserveCapacity(n)
        var chunks: [Int] = []
        var offset = range.lowerBound
        var nextChunk = 0
        var commit = lowerBound(frames.lowerBound, in: commitFrames)
        var plain = lowerBound(frames.lowerBound, in: plaintextFrames)
        func zero(_ from: Int, _ to: Int) -> Bool { r.trailers.withUnsafeBytes { t in (from..<to).allSatisfy { t[$0] == 0 } } }
        for k in 0..<n {
            let i = frames.lowerBound + k
            guard offset < range.upperBound else { return nil }
            let h = r.headers.withUnsafeBytes { FrameHeader.unchecked($0, at: k * FrameHeader.byteCount) }
            guard h.isPlausible, VaultScanner.malformation(of: h) == nil, h.kind.isKnown || !h.kind.isCritical else { return nil }
            let row = r.headers[(k * 16)..<(k * 16 + 16)]
            offsets.append(offset)
            let isChunkRow = nextChunk < chunkCount && FrameTableDirectory.u32(r.chunkFrames, nextChunk * 4) == i
            guard isChunkRow == (h.kind == .blobChunk) else { return nil }
            let isCommitRow = commit < commitFrames.count && commitFrames[commit] == i
            guard isCommitRow == (h.kind == .commit) else { return nil }
            if isCommitRow {
                guard commitOffsets[commit] == offset, row.elementsEqual(commitHeaders[(commit * 16)..<(commit * 16 + 16)]),
                    zero(k * w, (k + 1) * w)
                else {
                    return nil
                }
                commit += 1
            } else {
                guard zero(k * w + h.trailerByteCount, (k + 1) * w) else { return nil }
                let isPlainRow = plain < plaintextFrames.count && plaintextFrames[plain] == i
                guard isPlainRow == !h.isSealed else { return nil }
                if isPlainRow {
                    let at = plain * FrameTableDirectory.plaintextRowWidth
                    let d = directory.plaintext
                    guard plaintextOffsets[plain] == offset, row.elementsEqual(d[(at + 12)..<(at + 28)]),
                        r.trailers[(k * w)..<((k + 1) * w)].elementsEqual(d[(at + 28)..<(at + 60)])
                    else { return nil }
                    plain += 1
                }
                if isChunkRow {
                    let at = nextChunk * ChunkHeader.byteCount
                    guard ChunkHeader.parse(r.chunkHeaders[at..<(at + ChunkHeader.byteCount)]) != nil else { return nil }
                    chunks.append(i)
                    nextChunk += 1
                }
            }
            offset += UInt64(FrameHeader.byteCount) + UInt64(h.bodyLength)
        }
        guard offset == range.upperBound, nextChunk == chunkCount,
            commit == lowerBound(frames.upperBound, in: commitFrames), plain == lowerBound(frames.upperBound, in: plaintextFrames)
        else { return nil }
        return LoadedRowGroup(
            first: frames.lowerBound, headers: r.headers, trailers: r.trailers, offsets: offsets, chunkFrames: chunks,
            chunkHeaders: r.chunkHeaders)
    }

    /// Row group `g` read from the vault file, as a scan reads it: each
    /// header checked, the frames laid end to end over the group's bytes.
    /// Where the file no longer holds such frames there (changed in place
    /// since the open), the frames left are reported malformed at the
    /// group's end, so that nothing is read from them.
    private func readFromFile(_ g: Int) -> LoadedRowGroup {
        let frames = directory.frames(ofGroup: g)
        let range = byteRange(ofGroup: g)
        var out: [ScannedFrame] = []
        out.reserveCapacity(frames.count)
        if let size = try? file.size(), size >= range.upperBound {
            let window = FileWindow(file: file, fileSize: size)
            var offset = range.lowerBound
            for i in frames {
                guard offset + UInt64(FrameHeader.byteCount) <= range.upperBound,
                    let raw = try? window.bytes(offset, FrameHeader.byteCount),
                    let h = raw.withUnsafeBytes({ FrameHeader.parseChecked($0, at: 0) }),
                    offset + UInt64(FrameHeader.byteCount) + UInt64(h.bodyLength) <= range.upperBound,
                    let frame = try? VaultScanner.readFrame(
                        at: offset, header: h, headerBytes: raw, repaired: false, index: i, window: window, sparse: true)
                else { break }
                out.append(frame)
                offset = frame.end
            }
            if out.count == frames.count && offset != range.upperBound { out.removeLast() }
        }
        while out.count < frames.count {
            let i = frames.lowerBound + out.count
            let h = FrameHeader(kind: RecordKind(rawValue: 0xFF), flags: FrameHeader.sealedFlag, keyID: KeyID(rawValue: 0), bodyLength: 0)
            out.append(
                ScannedFrame(
                    location: FrameLocation(offset: range.upperBound, index: i), header: h, headerBytes: h.encoded(), trailer: [],
                    repaired: false, chunk: nil, plaintextBody: nil, checksumIntact: nil,
                    malformation: "the index cache's frame table and the vault file disagree here"))
        }
        return LoadedRowGroup(first: frames.lowerBound, frames: out)
    }

    /// The first position in an ascending list whose value is at least `i`.
    private func lowerBound(_ i: Int, in list: [Int]) -> Int {
        var lo = 0
        var hi = list.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if list[mid] < i { lo = mid + 1 } else { hi = mid }
        }
        return lo
    }

    /// The position of `i` in an ascending list, if it is there.
    static func find(_ i: Int, in list: [Int]) -> Int? {
        var lo = 0
        var hi = list.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if list[mid] < i { lo = mid + 1 } else { hi = mid }
        }
        return lo < list.count && list[lo] == i ? lo : nil
    }

    /// Row group `g` if it is loaded already.
    private func loadedGroup(ofFrame i: Int) -> LoadedRowGroup? {
        groups.withLock { $0[i / directory.rowsPerGroup] }
    }

    /// The header of a commit or plaintext frame, known from the open
    /// (no row group loaded); nil for another frame.
    private func knownHeader(_ i: Int) -> (header: FrameHeader, offset: UInt64)? {
        if let c = Self.find(i, in: commitFrames) {
            return (commitHeader(c), commitOffsets[c])
        }
        if let p = Self.find(i, in: plaintextFrames) {
            let at = p * FrameTableDirectory.plaintextRowWidth + 12
            return (directory.plaintext.withUnsafeBytes { FrameHeader.unchecked($0, at: at) }, plaintextOffsets[p])
        }
        return nil
    }

    func header(_ i: Int) -> FrameHeader {
        if loadedGroup(ofFrame: i) == nil, let known = knownHeader(i) { return known.header }
        let r = group(ofFrame: i)
        if let frames = r.frames { return frames[i - r.first].header }
        return r.headers.withUnsafeBytes { FrameHeader.unchecked($0, at: (i - r.first) * FrameHeader.byteCount) }
    }

    /// The kind of frame `i`; a commit or plaintext frame's without loading
    /// its row group.
    func kind(_ i: Int) -> RecordKind { header(i).kind }

    /// The frames below `end` of an unknown critical kind, ascending, among
    /// the row groups loaded so far: only one read from the vault file can
    /// hold any (a row group from the cache holding one is refused), and
    /// the index cache stores no table for a prefix holding one
    /// (`Spec/index-cache.md §1`, §5). O(row groups).
    func unknownCriticalFrames(below end: Int) -> [Int] {
        let loaded = groups.withLock { $0 }
        var out: [Int] = []
        for case let r? in loaded {
            guard let frames = r.frames else { continue }
            for f in frames where f.location.index < end && !f.header.kind.isKnown && f.header.kind.isCritical {
                out.append(f.location.index)
            }
        }
        return out
    }

    /// The keyring frames below `end`, ascending: among the plaintext
    /// frames (every keyring is one), by the headers the open checked
    /// against the file. No row group is loaded.
    func keyringFrames(below end: Int) -> [Int] {
        plaintextFrames.filter { $0 < end && header($0).kind == .keyring }
    }

    /// True when frame `i` is of an unknown critical kind; false without
    /// loading its row group when it is not loaded (a checked row group
    /// holds none).
    func isUnknownCriticalKind(_ i: Int) -> Bool {
        guard loadedGroup(ofFrame: i) != nil else { return false }
        let kind = header(i).kind
        return !kind.isKnown && kind.isCritical
    }

    func offset(_ i: Int) -> UInt64 {
        if loadedGroup(ofFrame: i) == nil, let known = knownHeader(i) { return known.offset }
        let r = group(ofFrame: i)
        if let frames = r.frames { return frames[i - r.first].location.offset }
        return r.offsets[i - r.first]
    }

    func chunk(_ i: Int) -> ChunkHeader? {
        let r = group(ofFrame: i)
        if let frames = r.frames { return frames[i - r.first].chunk }
        guard let c = Self.find(i, in: r.chunkFrames) else { return nil }
        let at = c * ChunkHeader.byteCount
        return ChunkHeader.parse(r.chunkHeaders[at..<(at + ChunkHeader.byteCount)])
    }

    /// The 16 header bytes and the 32-byte trailer row of frame `i`
    /// (the trailer row is nil when the frame was read from the vault file).
    func rows(_ i: Int) -> (header: [UInt8], trailer: [UInt8]?, chunkHeader: [UInt8]?) {
        let r = group(ofFrame: i)
        if let frames = r.frames {
            let f = frames[i - r.first]
            return (f.headerBytes, nil, f.chunk?.encoded())
        }
        let k = i - r.first
        let w = PrefixFrameTable.trailerWidth
        var chunkHeader: [UInt8]?
        if let c = Self.find(i, in: r.chunkFrames) {
            chunkHeader = Array(r.chunkHeaders[(c * ChunkHeader.byteCount)..<((c + 1) * ChunkHeader.byteCount)])
        }
        return (Array(r.headers[(k * 16)..<(k * 16 + 16)]), Array(r.trailers[(k * w)..<((k + 1) * w)]), chunkHeader)
    }

    /// The header of the `c`th commit frame.
    func commitHeader(_ c: Int) -> FrameHeader {
        commitHeaders.withUnsafeBytes { FrameHeader.unchecked($0, at: c * FrameHeader.byteCount) }
    }

    func frame(_ i: Int) -> ScannedFrame {
        if let c = Self.find(i, in: commitFrames) {
            let body = commitBodies[c]
            var frame = ScannedFrame(
                location: FrameLocation(offset: commitOffsets[c], index: i), header: commitHeader(c),
                headerBytes: Array(commitHeaders[(c * 16)..<(c * 16 + 16)]),
                trailer: Array(body[0..<CommitChain.headByteCount]), repaired: false, chunk: nil, plaintextBody: nil, checksumIntact: nil,
                malformation: nil)
            frame.commitBody = body
            return frame
        }
        if loadedGroup(ofFrame: i) == nil, let p = Self.find(i, in: plaintextFrames) {
            // A keyring: its header, body hash and body as the open checked
            // them against the file, without loading its row group (a
            // loaded group holds the same: its check compares them).
            let at = p * FrameTableDirectory.plaintextRowWidth
            let headerBytes = Array(directory.plaintext[(at + 12)..<(at + 28)])
            let h = headerBytes.withUnsafeBytes { FrameHeader.unchecked($0, at: 0) }
            return ScannedFrame(
                location: FrameLocation(offset: plaintextOffsets[p], index: i), header: h, headerBytes: headerBytes,
                trailer: Array(directory.plaintext[(at + 28)..<(at + 28 + h.trailerByteCount)]), repaired: false, chunk: nil,
                plaintextBody: plaintextBodies[p], checksumIntact: true, malformation: nil)
        }
        let r = group(ofFrame: i)
        if let frames = r.frames { return frames[i - r.first] }
        let k = i - r.first
        let h = r.headers.withUnsafeBytes { FrameHeader.unchecked($0, at: k * FrameHeader.byteCount) }
        let location = FrameLocation(offset: r.offsets[k], index: i)
        let headerBytes = Array(r.headers[(k * FrameHeader.byteCount)..<((k + 1) * FrameHeader.byteCount)])
        let t = k * PrefixFrameTable.trailerWidth
        let trailer = Array(r.trailers[t..<(t + h.trailerByteCount)])
        var plaintextBody: [UInt8]?
        var checksumIntact: Bool?
        if !h.isSealed {
            checksumIntact = true
            if let p = Self.find(i, in: plaintextFrames) { plaintextBody = plaintextBodies[p] }
        }
        return ScannedFrame(
            location: location, header: h, headerBytes: headerBytes, trailer: trailer, repaired: false,
            chunk: h.kind == .blobChunk ? chunk(i) : nil, plaintextBody: plaintextBody, checksumIntact: checksumIntact,
            malformation: nil)
    }
}
