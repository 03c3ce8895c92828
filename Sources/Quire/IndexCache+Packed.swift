@_spi(Crypto) import QuireCrypto
@_spi(Format) import QuireFormat
import Synchronization

/// One row group of a loaded index cache's summaries kept as it was
/// opened: its columns (`Spec/index-cache.md §1`) are read where they lie,
/// and a row is decoded when it is asked for. Loading checks every row of
/// the group once, the way decoding them all did, but builds nothing per
/// row: it records where each row's varint fields start and checks that
/// no two rows share an id. A group that does not check is refused whole
/// (``make(_:payload:rows:first:last:)`` is nil), never read in part. The
/// plaintext is wiped when the last reference to it goes.
final class SummaryRowGroup: Sendable {
    /// Where one row's variable-length fields are: its journal's string
    /// index, the offsets of its tag count and head count in the tags and
    /// heads columns, and its revision count.
    private struct RowIndex {
        var journal: Int32
        var tagsAt: Int32
        var headsAt: Int32
        var revisionCount: Int32
    }

    /// The opened summaries part; every column lies in it.
    private let bytes: [UInt8]
    /// The number of rows.
    let count: Int
    /// Where the fixed-width columns start in ``bytes``.
    private let ids: Int
    private let revisions: Int
    private let created: Int
    private let offsets: Int
    private let flags: Int
    private let standing: Int
    private let frames: Int
    private let frameOffsets: Int
    private let clocks: Int
    /// The varint columns read per row.
    private let tags: Range<Int>
    private let heads: Range<Int>
    private let strings: [String]
    private let rows: [RowIndex]

    private init(bytes: [UInt8], count: Int, columns: [Int], tags: Range<Int>, heads: Range<Int>, strings: [String], rows: [RowIndex]) {
        self.bytes = bytes
        self.count = count
        ids = columns[0]
        revisions = columns[1]
        created = columns[2]
        offsets = columns[3]
        flags = columns[4]
        standing = columns[5]
        frames = columns[6]
        frameOffsets = columns[7]
        clocks = columns[8]
        self.tags = tags
        self.heads = heads
        self.strings = strings
        self.rows = rows
    }

    deinit { wipeShared(bytes) }

    /// The row group encoded at `payload` of `bytes` (the opened part;
    /// the result keeps it, and wipes it when it goes); nil when anything
    /// in it is malformed or inconsistent, it does not hold `rows` rows in
    /// strictly ascending (date, id) order from `first` to `last` (the
    /// keys the directory lists for it) of which `live` are not deleted,
    /// or two of its rows share an id.
    static func make(_ bytes: [UInt8], payload: Range<Int>, rows: Int, first: EntrySortKey, last: EntrySortKey, live: Int)
        -> SummaryRowGroup?
    {
        bytes.withUnsafeBytes { all in check(all, payload: payload, rows: rows, first: first, last: last, live: live) }.map { c in
            SummaryRowGroup(
                bytes: bytes, count: c.count, columns: c.columns, tags: c.tags, heads: c.heads, strings: c.strings, rows: c.rows)
        }
    }

    /// What ``make(_:payload:rows:first:last:live:)`` keeps, when every row checks.
    private static func check(
        _ all: UnsafeRawBufferPointer, payload: Range<Int>, rows expected: Int, first: EntrySortKey, last: EntrySortKey, live: Int
    )
        -> (count: Int, columns: [Int], tags: Range<Int>, heads: Range<Int>, strings: [String], rows: [RowIndex])?
    {
        typealias Flag = IndexCache.Flag
        guard payload.lowerBound >= 0, payload.upperBound <= all.count else { return nil }
        let raw = UnsafeRawBufferPointer(rebasing: all[payload])
        guard let fields = try? CBORDecoder.mapFieldRanges(raw) else { return nil }
        func bytes(_ name: String) -> Range<Int>? {
            guard let f = fields[name], f.isBytes else { return nil }
            return (payload.lowerBound + f.range.lowerBound)..<(payload.lowerBound + f.range.upperBound)
        }
        func item(_ name: String) -> CBOR? {
            guard let f = fields[name], !f.isBytes else { return nil }
            return try? CBORDecoder.decode(UnsafeRawBufferPointer(rebasing: raw[f.range]))
        }
        guard case .unsigned(let count)? = item("count"), count == UInt64(expected), expected > 0 else { return nil }
        let n = Int(count)
        func column(_ name: String, width: Int) -> Range<Int>? {
            guard let b = bytes(name), b.count == width * n else { return nil }
            return b
        }
        guard let ids = column("ids", width: 16), let revisions = column("revisions", width: 16),
            let created = column("created", width: 8), let offsets = column("offsets", width: 4),
            let flags = column("flags", width: 1), let standing = column("standing", width: 1),
            let frames = column("frames", width: 8), let frameOffsets = column("frameOffsets", width: 8),
            let clocks = column("clocks", width: 8), let heads = bytes("heads"),
            case .array(let stringItems)? = item("strings"), let journals = bytes("journals"),
            let tags = bytes("tags"), let counts = bytes("revisionCounts"),
            heads.count < Int(Int32.max), tags.count < Int(Int32.max)
        else { return nil }
        var strings: [String] = []
        strings.reserveCapacity(stringItems.count)
        for item in stringItems {
            guard case .text(let s) = item else { return nil }
            strings.append(s)
        }
        let stringCount = UInt64(strings.count)
        func view(_ r: Range<Int>) -> UnsafeRawBufferPointer { UnsafeRawBufferPointer(rebasing: all[r]) }
        var journalReader = IndexCache.VarintReader(view(journals))
        var tagReader = IndexCache.VarintReader(view(tags))
        var headReader = IndexCache.VarintReader(view(heads))
        var countReader = IndexCache.VarintReader(view(counts))
        var rows: [RowIndex] = []
        rows.reserveCapacity(n)
        var tableCount = 8
        while tableCount < 2 * n { tableCount <<= 1 }
        let mask = tableCount - 1
        var idTable = [Int32](repeating: 0, count: tableCount)
        var previous: (created: Int64, high: UInt64, low: UInt64) = (0, 0, 0)
        var liveCount = 0
        for i in 0..<n {
            let f = all[flags.lowerBound + i]
            if f & Flag.deleted == 0 { liveCount += 1 }
            guard f & ~Flag.all == 0, all[standing.lowerBound + i] <= 2, let journal = journalReader.next(), journal < stringCount else {
                return nil
            }
            let tagsAt = tagReader.position
            guard let tagCount = tagReader.next(), tagCount <= UInt64(tags.count) else { return nil }
            for _ in 0..<Int(tagCount) {
                guard let t = tagReader.next(), t < stringCount else { return nil }
            }
            guard IndexCache.loadLE(UInt64.self, all, at: frames.lowerBound + 8 * i) <= UInt64(Int32.max) else { return nil }
            let headsAt = headReader.position
            guard let headCount = headReader.next(), (headCount > 0) == (f & Flag.conflict != 0), headCount <= UInt64(heads.count),
                let revisionCount = countReader.next(), revisionCount > headCount, revisionCount <= UInt64(Int32.max)
            else { return nil }
            for _ in 0..<Int(headCount) {
                guard let fixed = headReader.take(25), fixed[24] <= 2, let headFrame = headReader.next(), headFrame <= UInt64(Int32.max),
                    headReader.next() != nil
                else { return nil }
            }
            rows.append(
                RowIndex(journal: Int32(journal), tagsAt: Int32(tagsAt), headsAt: Int32(headsAt), revisionCount: Int32(revisionCount)))
            // The id → row table; a second row with an id is refused.
            let (high, low) = idWords(all, at: ids.lowerBound + 16 * i)
            var b = bucket(high, low, mask: mask)
            while idTable[b] != 0 {
                let other = Int(idTable[b]) - 1
                let (otherHigh, otherLow) = idWords(all, at: ids.lowerBound + 16 * other)
                if otherHigh == high && otherLow == low { return nil }
                b = (b + 1) & mask
            }
            idTable[b] = Int32(i + 1)
            // Strictly ascending, from the directory's first key to its last.
            let date = Int64(bitPattern: IndexCache.loadLE(UInt64.self, all, at: created.lowerBound + 8 * i))
            if i > 0, !((previous.created, previous.high, previous.low) < (date, high, low)) { return nil }
            previous = (date, high, low)
            if i == 0, !Self.matches(first, date, high, low) { return nil }
        }
        guard Self.matches(last, previous.created, previous.high, previous.low), liveCount == live else { return nil }
        guard journalReader.atEnd, tagReader.atEnd, headReader.atEnd, countReader.atEnd else { return nil }
        let columns = [ids, revisions, created, offsets, flags, standing, frames, frameOffsets, clocks].map(\.lowerBound)
        return (n, columns, tags, heads, strings, rows)
    }

    /// Whether `key` is the row key `(created, high, low)`.
    private static func matches(_ key: EntrySortKey, _ created: Int64, _ high: UInt64, _ low: UInt64) -> Bool {
        let k = IDKey(key.id)
        return key.created == created && k.high == high && k.low == low
    }

    /// The 16-byte id at `offset` of `all` as two big-endian words: the
    /// order and equality of the ids' bytes.
    private static func idWords(_ all: UnsafeRawBufferPointer, at offset: Int) -> (high: UInt64, low: UInt64) {
        (
            UInt64(bigEndian: all.loadUnaligned(fromByteOffset: offset, as: UInt64.self)),
            UInt64(bigEndian: all.loadUnaligned(fromByteOffset: offset + 8, as: UInt64.self))
        )
    }

    /// The first bucket of an id given as its two big-endian words.
    static func bucket(_ high: UInt64, _ low: UInt64, mask: Int) -> Int {
        var x = high ^ (low &* 0x9E37_79B9_7F4A_7C15)
        x ^= x >> 32
        x = x &* 0xD6E8_FEB8_6659_FD93
        x ^= x >> 32
        return Int(truncatingIfNeeded: x) & mask
    }

    /// Row `i`'s id as two big-endian words.
    func idKey(_ i: Int) -> IDKey {
        bytes.withUnsafeBytes { all in
            let (high, low) = Self.idWords(all, at: ids + 16 * i)
            return IDKey(high: high, low: low)
        }
    }

    /// Row `i`'s entry id.
    func id(_ i: Int) -> EntryID {
        bytes.withUnsafeBytes { EntryID(uncheckedRaw: UnsafeRawBufferPointer(rebasing: $0[(ids + 16 * i)..<(ids + 16 * i + 16)])) }
    }

    /// Row `i`'s date (`created`).
    func created(_ i: Int) -> Int64 {
        bytes.withUnsafeBytes { Int64(bitPattern: IndexCache.loadLE(UInt64.self, $0, at: created + 8 * i)) }
    }

    /// Row `i`'s sort key.
    func key(_ i: Int) -> EntrySortKey { EntrySortKey(created: created(i), id: id(i)) }

    /// Whether row `i`'s winning head is a tombstone, read from its flags
    /// alone.
    func isDeleted(_ i: Int) -> Bool {
        bytes.withUnsafeBytes { $0[flags + i] & IndexCache.Flag.deleted != 0 }
    }

    /// Row `i`'s summary, decoded now.
    func summary(_ i: Int) -> EntrySummary {
        bytes.withUnsafeBytes { summary(in: $0, i) }
    }

    private func summary(in all: UnsafeRawBufferPointer, _ i: Int) -> EntrySummary {
        typealias Flag = IndexCache.Flag
        let r = rows[i]
        let f = all[flags + i]
        var tagReader = IndexCache.VarintReader(UnsafeRawBufferPointer(rebasing: all[tags]), at: Int(r.tagsAt))
        // Checked when loaded: every varint here reads.
        let tagCount = Int(tagReader.next() ?? 0)
        var entryTags: [String] = []
        if tagCount > 0 {
            entryTags.reserveCapacity(tagCount)
            for _ in 0..<tagCount { entryTags.append(strings[Int(tagReader.next() ?? 0)]) }
        }
        return EntrySummary(
            id: EntryID(uncheckedRaw: UnsafeRawBufferPointer(rebasing: all[(ids + 16 * i)..<(ids + 16 * i + 16)])),
            created: Int64(bitPattern: IndexCache.loadLE(UInt64.self, all, at: created + 8 * i)),
            utcOffsetSeconds: Int32(bitPattern: IndexCache.loadLE(UInt32.self, all, at: offsets + 4 * i)),
            tags: entryTags, journal: strings[Int(r.journal)],
            isStarred: f & Flag.starred != 0, hasAttachments: f & Flag.attachments != 0, hasPhotos: f & Flag.photos != 0,
            isDeleted: f & Flag.deleted != 0, hasConflict: f & Flag.conflict != 0, standing: all[standing + i],
            frame: Int(IndexCache.loadLE(UInt64.self, all, at: frames + 8 * i)))
    }

    /// Row `i`'s entry (summary, winning head and other heads), decoded now.
    func entry(_ i: Int) -> IndexCache.Entry {
        bytes.withUnsafeBytes { all in
            let r = rows[i]
            var headReader = IndexCache.VarintReader(UnsafeRawBufferPointer(rebasing: all[heads]), at: Int(r.headsAt))
            let headCount = Int(headReader.next() ?? 0)
            var otherHeads: [IndexCache.Head] = []
            for _ in 0..<headCount {
                guard let fixed = headReader.take(25), let frame = headReader.next(), let offset = headReader.next() else { break }
                otherHeads.append(
                    IndexCache.Head(
                        revision: RevisionID(uncheckedRaw: UnsafeRawBufferPointer(rebasing: fixed[0..<16])),
                        clock: IndexCache.loadLE(UInt64.self, fixed, at: 16), standing: fixed[24], frame: Int(frame), frameOffset: offset))
            }
            return IndexCache.Entry(
                summary: summary(in: all, i),
                revision: RevisionID(uncheckedRaw: UnsafeRawBufferPointer(rebasing: all[(revisions + 16 * i)..<(revisions + 16 * i + 16)])),
                frameOffset: IndexCache.loadLE(UInt64.self, all, at: frameOffsets + 8 * i),
                clock: IndexCache.loadLE(UInt64.self, all, at: clocks + 8 * i), otherHeads: otherHeads,
                revisionCount: Int(r.revisionCount))
        }
    }
}

/// Where a row group of the summaries is and what it holds, as the
/// summaries' directory lists it (`Spec/index-cache.md §1`): its sealed
/// length and AEAD tag, the sort keys of its first and last rows, and how
/// many of its rows are live (not deleted).
struct SummaryGroupEntry: Sendable, Equatable {
    var sealedLength: Int
    var tag: [UInt8]
    var first: EntrySortKey
    var last: EntrySortKey
    var live: Int
}

/// Where the summaries' id part is, as their directory lists it: its
/// sealed length and AEAD tag.
struct SummaryIDPartEntry: Sendable, Equatable {
    var sealedLength: Int
    var tag: [UInt8]
}

/// A loaded index cache's id part (`Spec/index-cache.md §1`): every row's
/// entry id in ascending id order, with its row and deletion flag, kept as
/// opened. Loading checks it whole: `count` ids, strictly ascending (so
/// no id twice), each row named once. An id or an id range is then found
/// by binary search without opening a row group; a row group, when it is
/// opened, is checked against it (``matches(_:firstRow:)``). The
/// plaintext is wiped when the last reference to it goes.
final class SummaryIDPart: Sendable {
    /// The opened part; the columns lie in it.
    private let bytes: [UInt8]
    /// The number of ids (the rows').
    let count: Int
    /// Where the `ids` and `rows` columns start in ``bytes``.
    private let ids: Int
    private let rows: Int
    /// The position in the part of each row's id.
    private let positions: [Int32]

    private init(bytes: [UInt8], count: Int, ids: Int, rows: Int, positions: [Int32]) {
        self.bytes = bytes
        self.count = count
        self.ids = ids
        self.rows = rows
        self.positions = positions
    }

    deinit { wipeShared(bytes) }

    /// The id part encoded at `payload` of `bytes` (the result keeps it);
    /// nil when it is malformed, does not hold `count` ids, holds an id
    /// not strictly after the one before, or a row out of range or twice.
    static func make(_ bytes: [UInt8], payload: Range<Int>, count expected: Int) -> SummaryIDPart? {
        let found = bytes.withUnsafeBytes { all -> (ids: Int, rows: Int, positions: [Int32])? in
            guard payload.lowerBound >= 0, payload.upperBound <= all.count else { return nil }
            let raw = UnsafeRawBufferPointer(rebasing: all[payload])
            guard let fields = try? CBORDecoder.mapFieldRanges(raw), fields.count == 3, let c = fields["count"], !c.isBytes,
                case .unsigned(let count)? = try? CBORDecoder.decode(UnsafeRawBufferPointer(rebasing: raw[c.range])),
                count == UInt64(expected), let idField = fields["ids"], idField.isBytes, idField.range.count == 16 * expected,
                let rowField = fields["rows"], rowField.isBytes, rowField.range.count == 4 * expected
            else { return nil }
            let ids = payload.lowerBound + idField.range.lowerBound
            let rows = payload.lowerBound + rowField.range.lowerBound
            var positions = [Int32](repeating: -1, count: expected)
            var previous = IDKey(high: 0, low: 0)
            for i in 0..<expected {
                let key = Self.key(all, ids + 16 * i)
                if i > 0, !(previous < key) { return nil }
                previous = key
                let row = Int(IndexCache.loadLE(UInt32.self, all, at: rows + 4 * i) & ~(1 << 31))
                guard row < expected, positions[row] < 0 else { return nil }
                positions[row] = Int32(i)
            }
            return (ids, rows, positions)
        }
        return found.map { SummaryIDPart(bytes: bytes, count: expected, ids: $0.ids, rows: $0.rows, positions: $0.positions) }
    }

    private static func key(_ all: UnsafeRawBufferPointer, _ offset: Int) -> IDKey {
        IDKey(
            high: UInt64(bigEndian: all.loadUnaligned(fromByteOffset: offset, as: UInt64.self)),
            low: UInt64(bigEndian: all.loadUnaligned(fromByteOffset: offset + 8, as: UInt64.self)))
    }

    /// The id at position `i` (in id order).
    func key(at i: Int) -> IDKey { bytes.withUnsafeBytes { Self.key($0, ids + 16 * i) } }

    /// The row of the id at position `i`.
    func row(at i: Int) -> Int { Int(bytes.withUnsafeBytes { IndexCache.loadLE(UInt32.self, $0, at: rows + 4 * i) } & ~(1 << 31)) }

    /// Whether the row of the id at position `i` is deleted.
    func isDeleted(at i: Int) -> Bool { bytes.withUnsafeBytes { IndexCache.loadLE(UInt32.self, $0, at: rows + 4 * i) } >> 31 != 0 }

    /// The first position whose id is not less than `key`.
    func lowerBound(_ key: IDKey) -> Int {
        var lo = 0
        var hi = count
        while lo < hi {
            let mid = (lo + hi) / 2
            if self.key(at: mid) < key { lo = mid + 1 } else { hi = mid }
        }
        return lo
    }

    /// Whether every row of `group`, rows `firstRow...` of the summaries,
    /// has the id and deletion flag this part gives it.
    func matches(_ group: SummaryRowGroup, firstRow: Int) -> Bool {
        for i in 0..<group.count {
            let row = firstRow + i
            guard row < count else { return false }
            let p = Int(positions[row])
            guard key(at: p) == group.idKey(i), isDeleted(at: p) == group.isDeleted(i) else { return false }
        }
        return true
    }
}

/// A loaded index cache's summaries: the directory of their row groups,
/// opened and checked at load, and each row group opened, checked and kept
/// (``SummaryRowGroup``) when a row in it is first read, so that a page of
/// the newest entries decrypts and checks the last row group or two, not
/// every summary. The order of the groups is the directory's (each group's
/// first key after the one before's last), and each group's rows are
/// checked to run from its listed first key to its last on load: the rows
/// are in strictly ascending (date, id) order throughout without loading
/// them, and a binary search by date or key loads only the group the
/// sought key falls in. A lookup by id opens the id part
/// (``SummaryIDPart``) and then only the group of the row it names; every
/// group opened while the id part is loaded is checked against it, so that
/// a row answers for the id the id part gives it.
///
/// A row group or the id part that does not read, authenticate or check,
/// or a group that does not agree with the id part, marks the summaries
/// as failed (``failure``): from then on a row of a group not loaded
/// reads as a deleted placeholder, and whoever read through them must drop
/// them and answer from the vault file (`Vault+IndexCache.swift` checks
/// after each use). ``loadAll()`` loads and checks the id part and every
/// group first.
final class PackedSummaries: Sendable {
    /// The number of rows.
    let count: Int
    /// Rows per group (the last may hold fewer).
    let rowsPerGroup: Int
    /// The groups as the directory lists them.
    let groups: [SummaryGroupEntry]
    /// Opens and checks row group `g`.
    private let load: @Sendable (Int) -> Result<SummaryRowGroup, IndexCache.Discard>
    /// Opens and checks the id part.
    private let loadIDs: @Sendable () -> Result<SummaryIDPart, IndexCache.Discard>

    private struct State: Sendable {
        var loaded: [SummaryRowGroup?]
        var failure: IndexCache.Discard?
        /// The id part, once opened.
        var ids: SummaryIDPart?
        var loads = 0
        var idLoads = 0
    }

    private let state: Mutex<State>

    init(
        count: Int, rowsPerGroup: Int, groups: [SummaryGroupEntry],
        load: @escaping @Sendable (Int) -> Result<SummaryRowGroup, IndexCache.Discard>,
        loadIDs: @escaping @Sendable () -> Result<SummaryIDPart, IndexCache.Discard>
    ) {
        self.count = count
        self.rowsPerGroup = rowsPerGroup
        self.groups = groups
        self.load = load
        self.loadIDs = loadIDs
        state = Mutex(State(loaded: [SummaryRowGroup?](repeating: nil, count: groups.count)))
    }

    /// Why a row group or the id part did not check, once one did not.
    var failure: IndexCache.Discard? { state.withLock { $0.failure } }

    /// How many row groups were opened so far (for tests).
    var loadedGroupCount: Int { state.withLock { $0.loads } }

    /// How many times the id part was opened so far: 0 or 1 (for tests).
    var idPartLoadCount: Int { state.withLock { $0.idLoads } }

    /// The number of live (not deleted) rows, from the directory's count
    /// of each group (checked when a group is opened): no group is opened.
    var liveCount: Int { groups.reduce(0) { $0 + $1.live } }

    /// Loads and checks the id part and every row group now; why they do
    /// not check, or nil.
    func loadAll() -> IndexCache.Discard? {
        state.withLock { s in
            guard Self.idPart(in: &s, rowsPerGroup: rowsPerGroup, loadIDs: loadIDs) != nil else { return s.failure }
            for g in s.loaded.indices {
                guard Self.group(g, in: &s, rowsPerGroup: rowsPerGroup, load: load) != nil else { break }
            }
            return s.failure
        }
    }

    /// Opens and checks row group `g` now (when it is not yet); why it
    /// does not check (or another did not before), or nil.
    func open(group g: Int) -> IndexCache.Discard? {
        state.withLock { s in
            _ = Self.group(g, in: &s, rowsPerGroup: rowsPerGroup, load: load)
            return s.failure
        }
    }

    /// Row group `g`, opened now when it is not yet (and checked against
    /// the id part when that is loaded); nil once the summaries failed and
    /// it was not loaded before.
    private static func group(
        _ g: Int, in s: inout State, rowsPerGroup: Int, load: @Sendable (Int) -> Result<SummaryRowGroup, IndexCache.Discard>
    ) -> SummaryRowGroup? {
        if let loaded = s.loaded[g] { return loaded }
        guard s.failure == nil else { return nil }
        s.loads += 1
        switch load(g) {
        case .success(let group):
            if let ids = s.ids, !ids.matches(group, firstRow: g * rowsPerGroup) {
                s.failure = .malformed
                return nil
            }
            s.loaded[g] = group
            return group
        case .failure(let why):
            s.failure = why
            return nil
        }
    }

    /// The id part, opened now when it is not yet, and every row group
    /// already loaded checked against it; nil once the summaries failed.
    private static func idPart(
        in s: inout State, rowsPerGroup: Int, loadIDs: @Sendable () -> Result<SummaryIDPart, IndexCache.Discard>
    ) -> SummaryIDPart? {
        if let ids = s.ids { return ids }
        guard s.failure == nil else { return nil }
        s.idLoads += 1
        switch loadIDs() {
        case .success(let ids):
            for (g, group) in s.loaded.enumerated() {
                guard let group else { continue }
                guard ids.matches(group, firstRow: g * rowsPerGroup) else {
                    s.failure = .malformed
                    return nil
                }
            }
            s.ids = ids
            return ids
        case .failure(let why):
            s.failure = why
            return nil
        }
    }

    /// The rows whose ids lie in `range` (bytewise, the bounds included),
    /// ascending, from the id part; no row group is opened. Empty once
    /// the summaries failed.
    func rows(withIDsIn range: ClosedRange<IDKey>) -> [Int] {
        state.withLock { s in
            guard let ids = Self.idPart(in: &s, rowsPerGroup: rowsPerGroup, loadIDs: loadIDs) else { return [] }
            var out: [Int] = []
            var p = ids.lowerBound(range.lowerBound)
            while p < ids.count, ids.key(at: p) <= range.upperBound {
                out.append(ids.row(at: p))
                p += 1
            }
            return out.sorted()
        }
    }

    /// `body` of row `i`'s group and its place in it; nil once the
    /// summaries failed and that group was not loaded before.
    private func withRow<T>(_ i: Int, _ body: (SummaryRowGroup, Int) -> T) -> T? {
        let g = i / rowsPerGroup
        guard let group = state.withLock({ s in Self.group(g, in: &s, rowsPerGroup: rowsPerGroup, load: load) }) else { return nil }
        return body(group, i - g * rowsPerGroup)
    }

    /// The id a row of a group that failed reads as.
    private static let placeholderID = EntryID(unchecked: [UInt8](repeating: 0, count: 16))

    /// What a row of a group that failed reads as: a deleted entry at its
    /// group's first date, which no page shows.
    private func placeholder(_ i: Int) -> EntrySummary {
        EntrySummary(
            id: Self.placeholderID, created: groups[i / rowsPerGroup].first.created, utcOffsetSeconds: 0, tags: [], journal: "",
            isStarred: false, hasAttachments: false, hasPhotos: false, isDeleted: true, hasConflict: false, standing: 0, frame: 0)
    }

    /// The row of the entry whose id has the key `key`, if one has it:
    /// found in the id part, and its row group opened (and checked
    /// against the id part).
    func row(of key: IDKey) -> Int? {
        state.withLock { (s: inout State) -> Int? in
            guard let ids = Self.idPart(in: &s, rowsPerGroup: rowsPerGroup, loadIDs: loadIDs) else { return nil }
            let p = ids.lowerBound(key)
            guard p < ids.count, ids.key(at: p) == key else { return nil }
            let row = ids.row(at: p)
            guard Self.group(row / rowsPerGroup, in: &s, rowsPerGroup: rowsPerGroup, load: load) != nil else { return nil }
            return row
        }
    }

    /// Row `i`'s entry id.
    func id(_ i: Int) -> EntryID { withRow(i) { $0.id($1) } ?? Self.placeholderID }

    /// Row `i`'s date (`created`).
    func created(_ i: Int) -> Int64 { withRow(i) { $0.created($1) } ?? groups[i / rowsPerGroup].first.created }

    /// Row `i`'s sort key.
    func key(_ i: Int) -> EntrySortKey { withRow(i) { $0.key($1) } ?? EntrySortKey(created: created(i), id: Self.placeholderID) }

    /// Whether row `i`'s key is less than `key`, from the directory's
    /// bounds of its group when they decide it (its group is then not loaded).
    func isBefore(_ i: Int, _ key: EntrySortKey) -> Bool {
        let bounds = groups[i / rowsPerGroup]
        if bounds.last < key { return true }
        if !(bounds.first < key) { return false }
        return self.key(i) < key
    }

    /// Whether row `i`'s date is less than `created`, from the directory's
    /// bounds of its group when they decide it.
    func isCreatedBefore(_ i: Int, _ created: Int64) -> Bool {
        let bounds = groups[i / rowsPerGroup]
        if bounds.last.created < created { return true }
        if bounds.first.created >= created { return false }
        return self.created(i) < created
    }

    /// Whether row `i`'s winning head is a tombstone, read from its flags
    /// alone.
    func isDeleted(_ i: Int) -> Bool { withRow(i) { $0.isDeleted($1) } ?? true }

    /// Row `i`'s summary, decoded now.
    func summary(_ i: Int) -> EntrySummary { withRow(i) { $0.summary($1) } ?? placeholder(i) }

    /// Row `i`'s entry (summary, winning head and other heads), decoded now.
    func entry(_ i: Int) -> IndexCache.Entry {
        withRow(i) { $0.entry($1) }
            ?? IndexCache.Entry(
                summary: placeholder(i), revision: RevisionID(unchecked: [UInt8](repeating: 0, count: 16)), frameOffset: 0, clock: 0)
    }
}
