/// The frames of a ``VaultStructure``, in file order: those a scan found,
/// one ``ScannedFrame`` each, after — when the structure was opened from the
/// index cache's frame table — a committed prefix kept packed as that
/// table's columns (``PackedFrames``), each frame built when it is asked
/// for (`Spec/index-cache.md §1`, §5). An open from the cache so touches
/// O(frames read) frames, not one value per frame of the file.
///
/// A collection of ``ScannedFrame`` indexed from 0 by frame index. Element
/// access to a packed frame builds its value (two small arrays): loops over
/// every frame that need only a header, an offset or an end use
/// ``header(at:)``, ``location(at:)`` and ``end(at:)``, which build none.
///
/// Not a `RangeReplaceableCollection` (whose `filter` would return a frame
/// list): it changes by ``append(_:)``, ``append(contentsOf:)``,
/// ``removeSubrange(_:)`` and ``replaceSubrange(_:with:)``.
@_spi(Format) public struct FrameList: RandomAccessCollection, Sendable {
    /// The packed prefix (frames `0 ..< packed.count`), if any.
    var packed: PackedFrames?
    /// The frames after it, as scanned.
    var scanned: [ScannedFrame]

    /// No frames.
    public init() {
        packed = nil
        scanned = []
    }

    /// The frames given.
    public init(_ frames: [ScannedFrame]) {
        packed = nil
        scanned = frames
    }

    /// A packed prefix and nothing after it.
    init(packed: PackedFrames) {
        self.packed = packed
        scanned = []
    }

    /// The number of frames kept packed (0 when none).
    public var packedCount: Int { packed?.count ?? 0 }

    /// 0.
    public var startIndex: Int { 0 }
    /// The number of frames.
    public var endIndex: Int { packedCount + scanned.count }

    /// Frame `position` (built from the columns when it is packed).
    public subscript(position: Int) -> ScannedFrame {
        let p = packedCount
        if position < p, let packed { return packed.frame(position) }
        return scanned[position - p]
    }

    /// The header of frame `i`, building no frame value.
    public func header(at i: Int) -> FrameHeader {
        let p = packedCount
        if i < p, let packed { return packed.header(i) }
        return scanned[i - p].header
    }

    /// The kind of frame `i`, decoding no other header field.
    public func kind(at i: Int) -> RecordKind {
        let p = packedCount
        if i < p, let packed { return packed.kind(i) }
        return scanned[i - p].header.kind
    }

    /// Where frame `i` is, building no frame value.
    public func location(at i: Int) -> FrameLocation {
        let p = packedCount
        if i < p, let packed { return FrameLocation(offset: packed.offsets[i], index: i) }
        return scanned[i - p].location
    }

    /// The offset just past frame `i`, building no frame value.
    public func end(at i: Int) -> UInt64 {
        let p = packedCount
        if i < p, let packed { return packed.offsets[i] + UInt64(FrameHeader.byteCount) + UInt64(packed.header(i).bodyLength) }
        return scanned[i - p].end
    }

    /// The public chunk header of frame `i` (nil unless an attachment chunk),
    /// building no frame value.
    public func chunk(at i: Int) -> ChunkHeader? {
        let p = packedCount
        if i < p, let packed { return packed.chunk(i) }
        return scanned[i - p].chunk
    }

    /// The first `count` frames, the packed prefix kept packed.
    func keepingFirst(_ count: Int) -> FrameList {
        if let packed, count >= packed.count {
            var out = FrameList(packed: packed)
            out.scanned = Array(scanned[0..<(count - packed.count)])
            return out
        }
        return FrameList(Array(self[0..<count]))
    }

    /// Replaces the frames in `subrange` with `newElements`.
    public mutating func replaceSubrange<C: Collection>(_ subrange: Range<Int>, with newElements: C)
    where C.Element == ScannedFrame {
        let p = packedCount
        if subrange.lowerBound < p {
            // Changing the packed prefix (never done by a reader): every
            // frame becomes a value.
            scanned = Array(self)
            packed = nil
            scanned.replaceSubrange(subrange, with: newElements)
            return
        }
        scanned.replaceSubrange((subrange.lowerBound - p)..<(subrange.upperBound - p), with: newElements)
    }

    /// Removes the frames in `subrange`.
    public mutating func removeSubrange(_ subrange: Range<Int>) {
        replaceSubrange(subrange, with: EmptyCollection())
    }

    /// Appends `frame`.
    public mutating func append(_ frame: ScannedFrame) { scanned.append(frame) }

    /// Appends `frames`.
    public mutating func append(contentsOf frames: some Sequence<ScannedFrame>) { scanned.append(contentsOf: frames) }

    /// Appends `rhs` to `lhs`.
    public static func += (lhs: inout FrameList, rhs: some Sequence<ScannedFrame>) { lhs.append(contentsOf: rhs) }
}

extension FrameList: ExpressibleByArrayLiteral {
    /// The frames listed.
    public init(arrayLiteral elements: ScannedFrame...) { self.init(elements) }
}

/// A committed prefix of frames as the index cache's frame table holds
/// them (``PrefixFrameTable``, `Spec/index-cache.md §1`), with what the
/// open that checked it against the file read there: each frame's offset,
/// the commit frames' bodies and the plaintext frames' bodies. A frame's
/// ``ScannedFrame`` is built when asked for. Immutable, shared.
final class PackedFrames: Sendable {
    /// The number of frames.
    let count: Int
    /// 16 header bytes per frame.
    let headers: [UInt8]
    /// 32 bytes per frame: the body hash, a chunk's AEAD tag then 16 zero
    /// bytes, or 32 zero bytes for a commit.
    let trailers: [UInt8]
    /// The frames' offsets in the file.
    let offsets: [UInt64]
    /// Frame indices of the attachment chunks, ascending, uint32 LE.
    let chunkFrames: [UInt8]
    /// Their 21-byte public chunk headers, in the same order.
    let chunkHeaders: [UInt8]
    /// Frame indices of the commits, ascending.
    let commitFrames: [Int]
    /// Their 200-byte bodies as read from the file.
    let commitBodies: [[UInt8]]
    /// Frame indices of the plaintext frames (keyrings), ascending.
    let plaintextFrames: [Int]
    /// A keyring's body without its body hash (nil for another plaintext kind).
    let plaintextBodies: [[UInt8]?]

    init(
        count: Int, headers: [UInt8], trailers: [UInt8], offsets: [UInt64], chunkFrames: [UInt8], chunkHeaders: [UInt8],
        commitFrames: [Int], commitBodies: [[UInt8]], plaintextFrames: [Int], plaintextBodies: [[UInt8]?]
    ) {
        self.count = count
        self.headers = headers
        self.trailers = trailers
        self.offsets = offsets
        self.chunkFrames = chunkFrames
        self.chunkHeaders = chunkHeaders
        self.commitFrames = commitFrames
        self.commitBodies = commitBodies
        self.plaintextFrames = plaintextFrames
        self.plaintextBodies = plaintextBodies
    }

    func header(_ i: Int) -> FrameHeader {
        headers.withUnsafeBytes { FrameHeader.unchecked($0, at: i * FrameHeader.byteCount) }
    }

    /// The kind of frame `i` (its header's first byte).
    func kind(_ i: Int) -> RecordKind { RecordKind(rawValue: headers[i * FrameHeader.byteCount]) }

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

    /// The frame index in row `c` of the chunk frames column.
    func chunkFrame(_ c: Int) -> Int {
        chunkFrames.withUnsafeBytes { Int(UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: c * 4, as: UInt32.self))) }
    }

    /// The position of frame `i` among the chunk frames, if it is one.
    func chunkPosition(_ i: Int) -> Int? {
        chunkFrames.withUnsafeBytes { raw -> Int? in
            var lo = 0
            var hi = raw.count / 4
            while lo < hi {
                let mid = (lo + hi) / 2
                let v = Int(UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: mid * 4, as: UInt32.self)))
                if v < i { lo = mid + 1 } else if v > i { hi = mid } else { return mid }
            }
            return nil
        }
    }

    func chunk(_ i: Int) -> ChunkHeader? {
        guard let c = chunkPosition(i) else { return nil }
        let at = c * ChunkHeader.byteCount
        return ChunkHeader.parse(chunkHeaders[at..<(at + ChunkHeader.byteCount)])
    }

    func frame(_ i: Int) -> ScannedFrame {
        let h = header(i)
        let location = FrameLocation(offset: offsets[i], index: i)
        let headerBytes = Array(headers[(i * FrameHeader.byteCount)..<((i + 1) * FrameHeader.byteCount)])
        if h.kind == .commit, let c = Self.find(i, in: commitFrames) {
            let body = commitBodies[c]
            var frame = ScannedFrame(
                location: location, header: h, headerBytes: headerBytes, trailer: Array(body[0..<CommitChain.headByteCount]),
                repaired: false, chunk: nil, plaintextBody: nil, checksumIntact: nil, malformation: nil)
            frame.commitBody = body
            return frame
        }
        let t = i * PrefixFrameTable.trailerWidth
        let trailer = Array(trailers[t..<(t + h.trailerByteCount)])
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
