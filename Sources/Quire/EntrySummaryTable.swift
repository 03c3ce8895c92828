@_spi(Format) import QuireFormat

/// Every entry's ``EntrySummary`` (deleted ones too), in date order: what
/// queries scan instead of entry bodies. Each entry has a slot, a number
/// that stays the same while the entry is in the table, which the search
/// index uses as its document number.
struct EntrySummaryTable: Sendable {
    /// A loaded cache's rows, slots `0..<baseCount`, decoded when read
    /// (``init(packed:)``); nil for a table built from summaries.
    private var base: PackedSummaries?
    private var baseCount = 0
    /// The base slots whose summary changed since it was loaded (nil:
    /// the entry left; the slot is free or holds another entry now).
    private var baseChanges: [Int32: EntrySummary?] = [:]
    /// Summaries by slot from `baseCount` on; nil for a free slot.
    private var rows: [EntrySummary?] = []
    /// The slot of each entry, by its id as a fixed-size key (no heap
    /// allocation per key: building it for 50,000 entries keyed by
    /// ``EntryID``'s byte arrays cost more than decoding them). With a
    /// base, only the entries added after it: a base row is found
    /// through the base's own id table.
    private var slots: [IDKey: Int32] = [:]
    /// Slots in ascending ``EntrySortKey`` order.
    private(set) var order: [Int32] = []
    private var freeSlots: [Int32] = []

    /// A table of `summaries` (one per entry id).
    init(_ summaries: [EntrySummary]) {
        rows.reserveCapacity(summaries.count)
        for s in summaries {
            slots[IDKey(s.id)] = Int32(rows.count)
            rows.append(s)
        }
        order = (0..<Int32(rows.count)).map { $0 }
        sortOrder()
    }

    /// The table of the index cache's `entries`, given in ascending
    /// ``EntrySortKey`` order as the cache stores them: the order is checked
    /// in one pass instead of sorted (and sorted when it does not hold).
    /// Each row's summary is read in place, with no copy of the rest of its
    /// entry (its revision and heads are not retained and released per row).
    init(inOrder entries: [IndexCache.Entry]) {
        let n = entries.count
        rows.reserveCapacity(n)
        slots.reserveCapacity(n)
        var ascending = true
        entries.withUnsafeBufferPointer { buffer in
            for i in 0..<n {
                slots[IDKey(buffer[i].summary.id)] = Int32(i)
                if ascending, i > 0, !(buffer[i - 1].summary.key < buffer[i].summary.key) { ascending = false }
                rows.append(buffer[i].summary)
            }
        }
        order = (0..<Int32(n)).map { $0 }
        if !ascending { sortOrder() }
    }

    /// The table of a loaded cache's rows (slot `i` is row `i`), which
    /// are decoded only when read: a page decodes its own rows. The rows
    /// are in ascending order (``PackedSummaries`` checks it group by
    /// group as they load).
    init(packed: PackedSummaries) {
        base = packed
        baseCount = packed.count
        order = Array(0..<Int32(packed.count))
    }

    /// The number of entries (deleted ones included).
    var count: Int { order.count }

    /// The number of slots, free ones included: slots are `0..<slotCount`.
    var slotCount: Int { baseCount + rows.count }

    /// The number of distinct entry ids: ``count`` unless two summaries
    /// given to ``init(inOrder:)`` shared an id.
    var distinctCount: Int { base == nil ? slots.count : count }

    /// The slot of entry `id`, if it is in the table.
    func slot(of id: EntryID) -> Int32? {
        let key = IDKey(id)
        if let slot = slots[key] { return slot }
        guard let base, let row = base.row(of: key) else { return nil }
        let slot = Int32(row)
        if let changed = baseChanges[slot] { return changed?.id == id ? slot : nil }
        return slot
    }

    /// The summary in `slot`, nil for a free one.
    func row(_ slot: Int32) -> EntrySummary? {
        let i = Int(slot)
        guard i < baseCount else { return rows[i - baseCount] }
        if !baseChanges.isEmpty, let changed = baseChanges[slot] { return changed }
        return base!.summary(i)
    }

    /// The summary in `slot`.
    func summary(_ slot: Int32) -> EntrySummary { row(slot)! }

    /// The base row `slot` holds when it is a loaded cache's row that no
    /// change has replaced (its columns can be read in place); nil otherwise.
    private func unchangedBaseRow(_ slot: Int32) -> Int? {
        Int(slot) < baseCount && (baseChanges.isEmpty || baseChanges.index(forKey: slot) == nil) ? Int(slot) : nil
    }

    /// The sort key of the entry in `slot` (not free), decoding no more
    /// than its date and id.
    func key(_ slot: Int32) -> EntrySortKey {
        if let row = unchangedBaseRow(slot) { return base!.key(row) }
        return summary(slot).key
    }

    /// The id of the entry in `slot` (not free) and whether its winning
    /// head is a tombstone, decoding no more than those.
    func idAndDeletion(_ slot: Int32) -> (id: EntryID, isDeleted: Bool) {
        if let row = unchangedBaseRow(slot) { return (base!.id(row), base!.isDeleted(row)) }
        let s = summary(slot)
        return (s.id, s.isDeleted)
    }

    /// The slots of the entries whose ids lie in `range` (bytewise, both
    /// bounds included), in ``order``: a loaded cache's rows are found in
    /// its id part, opening no row group here.
    func slots(withIDsIn range: ClosedRange<IDKey>) -> [Int32] {
        var found: [Int32] = []
        if let base {
            for row in base.rows(withIDsIn: range) where baseChanges.isEmpty || baseChanges.index(forKey: Int32(row)) == nil {
                found.append(Int32(row))
            }
        }
        for (slot, changed) in baseChanges {
            if let changed, range.contains(IDKey(changed.id)) { found.append(slot) }
        }
        for (i, row) in rows.enumerated() {
            if let row, range.contains(IDKey(row.id)) { found.append(Int32(baseCount + i)) }
        }
        // Slot order is the table's order while nothing changed or joined.
        if rows.isEmpty && baseChanges.isEmpty { return found.sorted() }
        return found.sorted { key($0) < key($1) }
    }

    /// The number of live (not deleted) entries: for a loaded cache's
    /// rows that nothing changed or joined, from its directory's count of
    /// each row group, opening none.
    var liveCount: Int {
        if let base, rows.isEmpty, baseChanges.isEmpty, order.count == baseCount { return base.liveCount }
        return order.reduce(0) { $0 + (idAndDeletion($1).isDeleted ? 0 : 1) }
    }

    /// How many live (not deleted) entries carry each tag, by the
    /// summaries' lowercased form: an entry whose tags fold to the same
    /// form twice counts once for it. Tags with no live entry are absent.
    var liveTagCounts: [String: Int] {
        var counts: [String: Int] = [:]
        for slot in order {
            guard let s = row(slot), !s.isDeleted else { continue }
            for (i, tag) in s.tags.enumerated() where !s.tags[..<i].contains(tag) { counts[tag, default: 0] += 1 }
        }
        return counts
    }

    /// How many live (not deleted) entries each journal holds, by the
    /// summaries' lowercased name (`""`: the main journal). Journals with
    /// no live entry are absent.
    var liveJournalCounts: [String: Int] {
        var counts: [String: Int] = [:]
        for slot in order {
            guard let s = row(slot), !s.isDeleted else { continue }
            counts[s.journal, default: 0] += 1
        }
        return counts
    }

    /// The date of the entry in `slot` (not free).
    private func created(_ slot: Int32) -> Int64 {
        if let row = unchangedBaseRow(slot) { return base!.created(row) }
        return summary(slot).created
    }

    /// Sets the summary in `slot` (nil: frees it).
    private mutating func set(_ slot: Int32, _ summary: EntrySummary?) {
        if Int(slot) < baseCount {
            baseChanges[slot] = .some(summary)
        } else {
            rows[Int(slot) - baseCount] = summary
        }
    }

    /// Applies new summaries: each entry id gets its summary, or leaves the
    /// table when it is nil. Returns each entry's slot (the one it left
    /// when it left; nil when it was not in the table and is still not), in
    /// the order given, for the search index.
    @discardableResult
    mutating func apply(_ changes: [(id: EntryID, summary: EntrySummary?)]) -> [Int32?] {
        // Many changes: place them, then sort once.
        let bulk = changes.count > 64 && changes.count * 8 > order.count
        var out: [Int32?] = []
        out.reserveCapacity(changes.count)
        var removedAny = false
        for (id, new) in changes {
            let key = IDKey(id)
            if let slot = slot(of: id) {
                if !bulk, let at = position(of: self.key(slot)) { order.remove(at: at) }
                if let new {
                    set(slot, new)
                    if !bulk { order.insert(slot, at: insertionPoint(new.key)) }
                    out.append(slot)
                } else {
                    set(slot, nil)
                    slots[key] = nil
                    freeSlots.append(slot)
                    removedAny = true
                    out.append(slot)
                }
            } else if let new {
                let slot: Int32
                if let free = freeSlots.popLast() {
                    slot = free
                    set(slot, new)
                } else {
                    slot = Int32(slotCount)
                    rows.append(new)
                }
                slots[key] = slot
                if bulk { order.append(slot) } else { order.insert(slot, at: insertionPoint(new.key)) }
                out.append(slot)
            } else {
                out.append(nil)
            }
        }
        if bulk {
            if removedAny {
                let table = self
                order.removeAll { table.row($0) == nil }
            }
            sortOrder()
        }
        return out
    }

    private mutating func sortOrder() {
        if base == nil {
            let rows = self.rows
            order.sort { a, b in rows[Int(a)]!.key < rows[Int(b)]!.key }
        } else {
            let table = self
            order.sort { a, b in table.key(a) < table.key(b) }
        }
    }

    /// The first position in ``order`` whose key is not less than `key`.
    /// A loaded cache's row is compared through its group's bounds when
    /// they decide it, so that the search loads at most the group `key`
    /// falls in.
    func insertionPoint(_ key: EntrySortKey) -> Int {
        partitionPoint { slot in
            if let row = self.unchangedBaseRow(slot) { return self.base!.isBefore(row, key) }
            return self.key(slot) < key
        }
    }

    /// The first position in ``order`` whose date is at least `created`
    /// (through a loaded cache's group bounds, as ``insertionPoint(_:)``).
    func firstPosition(createdAtLeast created: Int64) -> Int {
        partitionPoint { slot in
            if let row = self.unchangedBaseRow(slot) { return self.base!.isCreatedBefore(row, created) }
            return self.created(slot) < created
        }
    }

    /// The first position in ``order`` whose slot `before` rejects;
    /// `before` accepts a prefix of the order.
    private func partitionPoint(_ before: (Int32) -> Bool) -> Int {
        var lo = 0
        var hi = order.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if before(order[mid]) { lo = mid + 1 } else { hi = mid }
        }
        return lo
    }

    /// The position of `key` in ``order``, if an entry has it.
    func position(of key: EntrySortKey) -> Int? {
        let at = insertionPoint(key)
        return at < order.count && self.key(order[at]) == key ? at : nil
    }

    /// The slots of the rows of one page: those in `documents` (when
    /// given) that `query` selects and `accept` accepts (tested last),
    /// after `cursor` in the query's order, at most `query.limit`; and
    /// whether another such row follows.
    func page(
        _ query: EntryQuery, after cursor: EntryCursor?, documents: Bitset? = nil, accept: ((Int32) -> Bool)? = nil
    ) -> (slots: [Int32], more: Bool) {
        let filter = SummaryFilter(query)
        guard !filter.isEmptyByConstruction, !(documents?.isEmpty ?? false) else { return ([], false) }
        // Positions [lo, hi) can hold a selected row.
        var lo = 0
        var hi = order.count
        if let from = filter.fromDay {
            // An entry's own day starts at most 18 hours (the widest
            // offset, Spec/records.md §3.3) before the UTC day.
            let (start, o) = from.multipliedReportingOverflow(by: 86_400_000)
            if !o { lo = firstPosition(createdAtLeast: start &- (EntryBody.utcOffsetRange.upperBound * 1000 + 1)) }
        }
        if let through = filter.throughDay {
            let (end, o) = (through &+ 1).multipliedReportingOverflow(by: 86_400_000)
            if !o { hi = firstPosition(createdAtLeast: end &+ (-EntryBody.utcOffsetRange.lowerBound * 1000 + 1)) }
        }
        if let cursor {
            // The row at the cursor's place, if any, is on the page only
            // for a cursor before it (EntryCursor(before:)).
            let at = insertionPoint(cursor.key)
            let row = at < order.count && key(order[at]) == cursor.key ? 1 : 0
            switch query.order {
            case .newestFirst: hi = min(hi, cursor.includesRow ? at + row : at)
            case .oldestFirst: lo = max(lo, cursor.includesRow ? at : at + row)
            }
        }
        let limit = max(1, query.limit)
        var out: [Int32] = []
        out.reserveCapacity(min(limit, max(0, hi - lo)))
        guard lo < hi else { return ([], false) }
        var more = false
        func visit(_ position: Int) -> Bool {
            let slot = order[position]
            if let documents, !documents.contains(slot) { return true }
            guard filter.accepts(summary(slot)) else { return true }
            if let accept, !accept(slot) { return true }
            if out.count == limit {
                more = true
                return false
            }
            out.append(slot)
            return true
        }
        switch query.order {
        case .newestFirst:
            var p = hi - 1
            while p >= lo, visit(p) { p -= 1 }
        case .oldestFirst:
            var p = lo
            while p < hi, visit(p) { p += 1 }
        }
        return (out, more)
    }
}

/// A 16-byte entry id as two words: a dictionary key that hashes and
/// compares without following a pointer.
struct IDKey: Hashable, Sendable, Comparable {
    let high: UInt64
    let low: UInt64

    /// The ids' bytewise order (the words are big-endian).
    static func < (a: IDKey, b: IDKey) -> Bool { (a.high, a.low) < (b.high, b.low) }

    /// The key of the id whose bytes are the big-endian words `high`, `low`.
    init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    init(_ id: EntryID) {
        switch id.storage {
        case .words(let h, let l):
            high = h
            low = l
        case .other(let b):
            var h: UInt64 = 0
            var l: UInt64 = 0
            for i in 0..<min(8, b.count) { h = h << 8 | UInt64(b[i]) }
            for i in 8..<max(8, min(16, b.count)) { l = l << 8 | UInt64(b[i]) }
            high = h
            // Ids are 16 bytes (decoding checks it); the length is mixed in
            // for any other, so that distinct ids never share a key.
            low = l ^ (UInt64(b.count) << 56) ^ 0x5A5A
        }
    }
}

/// An ``EntryQuery``'s filters, prepared for testing summaries.
struct SummaryFilter {
    let fromDay: Int64?
    let throughDay: Int64?
    let onThisDay: (year: Int, month: Int, day: Int)?
    let tags: [String]
    let journal: String?
    let query: EntryQuery

    init(_ query: EntryQuery) {
        self.query = query
        fromDay = query.from?.dayNumber
        throughDay = query.through?.dayNumber
        onThisDay = query.onThisDay.map { ($0.year, $0.month, $0.day) }
        tags = query.tags.map { $0.lowercased() }
        journal = query.journal?.lowercased()
    }

    /// True when no entry can match (an empty date range).
    var isEmptyByConstruction: Bool {
        if let fromDay, let throughDay, fromDay > throughDay { return true }
        return false
    }

    func accepts(_ s: EntrySummary) -> Bool {
        if s.isDeleted { return false }
        if let v = query.isStarred, s.isStarred != v { return false }
        if let v = query.hasAttachments, s.hasAttachments != v { return false }
        if let v = query.hasPhotos, s.hasPhotos != v { return false }
        if let v = query.hasConflicts, s.hasConflict != v { return false }
        if let journal, s.journal != journal { return false }
        if !tags.isEmpty && !s.tags.contains(where: { tags.contains($0) }) { return false }
        if fromDay != nil || throughDay != nil || onThisDay != nil {
            let day = s.localDay
            if let fromDay, day < fromDay { return false }
            if let throughDay, day > throughDay { return false }
            if let onThisDay {
                let d = CivilCalendar.date(fromDays: day)
                if d.month != onThisDay.month || d.day != onThisDay.day || d.year >= onThisDay.year { return false }
            }
        }
        return true
    }
}
