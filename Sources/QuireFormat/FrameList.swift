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
/// A list's first frames taken by ``keepingFirst(_:)`` — a copied
/// prefix, as merge opens its inputs and its result from one scan — share
/// the scanned frames' storage with the list they came from (``shared``):
/// taking them copies no frame, and the frames scanned after them are
/// appended to a storage of their own. (A merge of 10,000 frames copied
/// and freed every frame value four times over, 1.5 MB each time.)
///
/// Not a `RangeReplaceableCollection` (whose `filter` would return a frame
/// list): it changes by ``append(_:)``, ``append(contentsOf:)``,
/// ``removeSubrange(_:)`` and ``replaceSubrange(_:with:)``.
@_spi(Format) public struct FrameList: RandomAccessCollection, Sendable {
    /// The packed prefix (frames `0 ..< packed.count`), if any.
    var packed: PackedFrames?
    /// The frames after it taken from another list, sharing its storage
    /// (never changed in place: a change copies them into ``scanned``);
    /// indexed from 0.
    var shared: ArraySlice<ScannedFrame>
    /// The frames after those, as scanned.
    var scanned: [ScannedFrame]

    /// No frames.
    public init() {
        packed = nil
        shared = []
        scanned = []
    }

    /// The frames given.
    public init(_ frames: [ScannedFrame]) {
        packed = nil
        shared = []
        scanned = frames
    }

    /// A packed prefix and nothing after it.
    init(packed: PackedFrames) {
        self.packed = packed
        shared = []
        scanned = []
    }

    /// A packed prefix (if any), then `shared`, whose storage is kept,
    /// not copied.
    init(packed: PackedFrames?, shared: ArraySlice<ScannedFrame>) {
        self.packed = packed
        self.shared = shared
        scanned = []
    }

    /// The number of frames kept packed (0 when none).
    public var packedCount: Int { packed?.count ?? 0 }

    /// The index of the first frame of ``scanned``.
    private var scannedStart: Int { packedCount + shared.count }

    /// 0.
    public var startIndex: Int { 0 }
    /// The number of frames.
    public var endIndex: Int { scannedStart + scanned.count }

    /// Frame `position` (built from the columns when it is packed).
    public subscript(position: Int) -> ScannedFrame {
        let p = packedCount
        if position < p, let packed { return packed.frame(position) }
        let s = p + shared.count
        if position < s { return shared[position - p] }
        return scanned[position - s]
    }

    /// The header of frame `i` past the packed prefix (`i >= p`, the
    /// packed count), copying no frame value (each part read in place).
    @inline(__always)
    private func unpackedHeader(_ i: Int, _ p: Int) -> FrameHeader {
        let s = p + shared.count
        if i < s { return shared[i - p].header }
        return scanned[i - s].header
    }

    /// The header of frame `i`, building no frame value.
    public func header(at i: Int) -> FrameHeader {
        let p = packedCount
        if i < p, let packed { return packed.header(i) }
        return unpackedHeader(i, p)
    }

    /// The header of the commit frame `i` of the `k`th commit group, as
    /// ``subscript(position:)`` gives it, building no frame value (and, for
    /// a packed prefix, searching no list: its commits are in group order).
    func commitHeader(group k: Int, frame i: Int) -> FrameHeader {
        let p = packedCount
        guard i < p, let packed else { return unpackedHeader(i, p) }
        if k < packed.commitFrames.count, packed.commitFrames[k] == i {
            return packed.commitHeader(k)
        }
        return packed.frame(i).header
    }

    /// The kind of frame `i`, decoding no other header field.
    public func kind(at i: Int) -> RecordKind {
        let p = packedCount
        if i < p, let packed { return packed.kind(i) }
        return unpackedHeader(i, p).kind
    }

    /// Where frame `i` is, building no frame value.
    public func location(at i: Int) -> FrameLocation {
        let p = packedCount
        if i < p, let packed { return FrameLocation(offset: packed.offset(i), index: i) }
        let s = p + shared.count
        if i < s { return shared[i - p].location }
        return scanned[i - s].location
    }

    /// The offset just past frame `i`, building no frame value.
    public func end(at i: Int) -> UInt64 {
        let p = packedCount
        if i < p, let packed { return packed.offset(i) + UInt64(FrameHeader.byteCount) + UInt64(packed.header(i).bodyLength) }
        let s = p + shared.count
        if i < s { return shared[i - p].end }
        return scanned[i - s].end
    }

    /// True when frame `i` is of a critical kind this reader does not know
    /// (`Spec/format.md §4.3`). A frame of the cached prefix whose row group
    /// is not loaded is not: the index cache stores no table for a prefix
    /// holding one, and a row group holding one is not used
    /// (`Spec/index-cache.md §1`, §5), so no row group is loaded to answer.
    package func isUnknownCriticalKind(at i: Int) -> Bool {
        let p = packedCount
        if i < p, let packed { return packed.isUnknownCriticalKind(i) }
        let kind = unpackedHeader(i, p).kind
        return !kind.isKnown && kind.isCritical
    }

    /// The frames in `range` of a critical kind this reader does not know
    /// (`Spec/format.md §4.3`), ascending, as ``isUnknownCriticalKind(at:)``
    /// answers: in the cached prefix only row groups already loaded are
    /// looked at, so the cost is O(row groups + frames after the prefix).
    package func unknownCriticalFrameIndices(in range: Range<Int>) -> [Int] {
        let p = packedCount
        var out: [Int] = []
        if let packed, range.lowerBound < p {
            out = packed.unknownCriticalFrames(below: Swift.min(range.upperBound, p)).filter { $0 >= range.lowerBound }
        }
        for i in Swift.max(range.lowerBound, p)..<Swift.max(range.upperBound, p) {
            let kind = unpackedHeader(i, p).kind
            if !kind.isKnown && kind.isCritical { out.append(i) }
        }
        return out
    }

    /// The indices of the keyring frames among the first `end` frames,
    /// ascending. For the cached prefix they are its plaintext frames the
    /// open checked against the file (`Spec/index-cache.md §5`): no row
    /// group is loaded to find them.
    package func keyringFrameIndices(below end: Int) -> [Int] {
        let p = packedCount
        var out: [Int] = []
        if let packed { out = packed.keyringFrames(below: Swift.min(end, p)) }
        if end > p {
            for i in p..<end where unpackedHeader(i, p).kind == .keyring { out.append(i) }
        }
        return out
    }

    /// The public chunk header of frame `i` (nil unless an attachment chunk),
    /// building no frame value.
    public func chunk(at i: Int) -> ChunkHeader? {
        let p = packedCount
        if i < p, let packed { return packed.chunk(i) }
        let s = p + shared.count
        if i < s { return shared[i - p].chunk }
        return scanned[i - s].chunk
    }

    /// The first `count` frames, the packed prefix kept packed and the
    /// others sharing this list's storage (no frame copied).
    func keepingFirst(_ count: Int) -> FrameList {
        let p = packedCount
        if count < p { return FrameList(Array(self[0..<count])) }
        let s = scannedStart
        if count <= s { return FrameList(packed: packed, shared: shared[0..<(count - p)]) }
        if shared.isEmpty { return FrameList(packed: packed, shared: scanned[0..<(count - s)]) }
        // Frames of both parts: one storage for them.
        return FrameList(packed: packed, shared: ArraySlice(Array(shared) + scanned[0..<(count - s)]))
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
            shared = []
            scanned.replaceSubrange(subrange, with: newElements)
            return
        }
        if subrange.lowerBound < scannedStart {
            // Changing shared frames: they are copied into this list's own storage.
            scanned = Array(shared) + scanned
            shared = []
        }
        let s = scannedStart
        scanned.replaceSubrange((subrange.lowerBound - s)..<(subrange.upperBound - s), with: newElements)
    }

    /// Removes the frames in `subrange`.
    public mutating func removeSubrange(_ subrange: Range<Int>) {
        replaceSubrange(subrange, with: EmptyCollection())
    }

    /// Appends `frame`.
    public mutating func append(_ frame: ScannedFrame) { scanned.append(frame) }

    /// How many frames fit before the next ``append(_:)`` grows the
    /// storage (moving every scanned frame to a new buffer).
    var roomLeft: Int { scanned.capacity - scanned.count }

    /// Makes room for `count` more frames without growing the storage
    /// again; a no-op when there is room.
    mutating func reserveRoom(for count: Int) {
        guard count > roomLeft else { return }
        scanned.reserveCapacity(scanned.count + count)
    }

    /// Appends `frames`.
    public mutating func append(contentsOf frames: some Sequence<ScannedFrame>) { scanned.append(contentsOf: frames) }

    /// Appends `rhs` to `lhs`.
    public static func += (lhs: inout FrameList, rhs: some Sequence<ScannedFrame>) { lhs.append(contentsOf: rhs) }
}

extension FrameList: ExpressibleByArrayLiteral {
    /// The frames listed.
    public init(arrayLiteral elements: ScannedFrame...) { self.init(elements) }
}
