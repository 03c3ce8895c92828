@_spi(Crypto) import QuireCrypto
@_spi(Format) import QuireFormat

/// The summaries part of a loaded index cache kept as it was opened: its
/// columns (`Spec/index-cache.md §1`) are read where they lie, and a row is
/// decoded when it is asked for. Loading checks every row once, the way
/// decoding them all did, but builds nothing per row: it records where
/// each row's varint fields start and makes a flat id → row table, so that
/// a first page of a 50,000-entry cache decodes its 20 rows, not 50,000.
/// A cache that does not check is refused whole (``make(_:payload:)`` is
/// nil), never read in part. The plaintext is wiped when the last
/// reference to it goes.
final class PackedSummaries: Sendable {
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
    /// Open addressing by id: row + 1, 0 for an empty bucket.
    private let idTable: [Int32]
    /// True when the rows are in strictly ascending (date, id) order, as a
    /// writer stores them.
    let isAscending: Bool

    private init(
        bytes: [UInt8], count: Int, columns: [Int], tags: Range<Int>, heads: Range<Int>, strings: [String], rows: [RowIndex],
        idTable: [Int32], isAscending: Bool
    ) {
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
        self.idTable = idTable
        self.isAscending = isAscending
    }

    deinit { wipeShared(bytes) }

    /// The summaries encoded at `payload` of `bytes` (the opened part; the
    /// result keeps it, and wipes it when it goes); nil when anything in
    /// them is malformed or inconsistent, or two rows share an id.
    static func make(_ bytes: [UInt8], payload: Range<Int>) -> PackedSummaries? {
        bytes.withUnsafeBytes { all in check(all, payload: payload) }.map { c in
            PackedSummaries(
                bytes: bytes, count: c.count, columns: c.columns, tags: c.tags, heads: c.heads, strings: c.strings, rows: c.rows,
                idTable: c.idTable, isAscending: c.isAscending)
        }
    }

    /// What ``make(_:payload:)`` keeps, when every row checks.
    private static func check(_ all: UnsafeRawBufferPointer, payload: Range<Int>) -> (
        count: Int, columns: [Int], tags: Range<Int>, heads: Range<Int>, strings: [String], rows: [RowIndex], idTable: [Int32],
        isAscending: Bool
    )? {
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
        guard case .unsigned(let count)? = item("count"), count <= UInt64(raw.count) else { return nil }
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
        var isAscending = true
        var previous: (created: Int64, high: UInt64, low: UInt64) = (0, 0, 0)
        for i in 0..<n {
            let f = all[flags.lowerBound + i]
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
            let date = Int64(bitPattern: IndexCache.loadLE(UInt64.self, all, at: created.lowerBound + 8 * i))
            if isAscending, i > 0, !((previous.created, previous.high, previous.low) < (date, high, low)) { isAscending = false }
            previous = (date, high, low)
        }
        guard journalReader.atEnd, tagReader.atEnd, headReader.atEnd, countReader.atEnd else { return nil }
        let columns = [ids, revisions, created, offsets, flags, standing, frames, frameOffsets, clocks].map(\.lowerBound)
        return (n, columns, tags, heads, strings, rows, idTable, isAscending)
    }

    /// The first bucket of an id given as its two big-endian words.
    /// The 16-byte id at `offset` of `all` as two big-endian words: the
    /// order and equality of the ids' bytes.
    private static func idWords(_ all: UnsafeRawBufferPointer, at offset: Int) -> (high: UInt64, low: UInt64) {
        (
            UInt64(bigEndian: all.loadUnaligned(fromByteOffset: offset, as: UInt64.self)),
            UInt64(bigEndian: all.loadUnaligned(fromByteOffset: offset + 8, as: UInt64.self))
        )
    }

    private static func bucket(_ high: UInt64, _ low: UInt64, mask: Int) -> Int {
        var x = high ^ (low &* 0x9E37_79B9_7F4A_7C15)
        x ^= x >> 32
        x = x &* 0xD6E8_FEB8_6659_FD93
        x ^= x >> 32
        return Int(truncatingIfNeeded: x) & mask
    }

    /// The row of the entry whose id has the key `key`, if one has it.
    func row(of key: IDKey) -> Int? {
        bytes.withUnsafeBytes { all in
            let mask = idTable.count - 1
            var b = Self.bucket(key.high, key.low, mask: mask)
            while idTable[b] != 0 {
                let row = Int(idTable[b]) - 1
                let (high, low) = Self.idWords(all, at: ids + 16 * row)
                if high == key.high && low == key.low { return row }
                b = (b + 1) & mask
            }
            return nil
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
