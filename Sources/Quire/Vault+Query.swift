@_spi(Format) import QuireFormat
import QuireSystem

/// What queries and searches work from, kept with the ``EntryIndex`` it
/// reflects: the entry summaries in date order, and the search index once a
/// search asked for it. Both follow changes through the `apply` methods.
struct QueryIndexes: Sendable {
    var table: EntrySummaryTable
    var search: SearchIndex?

    /// Applies changed entries: each id's new summary (nil when the entry
    /// left the vault) and, when the search index is built, its new
    /// document from `documents` (none for a deleted entry or one that left).
    mutating func apply(_ changes: [(id: EntryID, summary: EntrySummary?)], documents: [EntryID: SearchIndex.Document]) {
        let slots = table.apply(changes)
        guard search != nil else { return }
        var docs: [(slot: Int32, document: SearchIndex.Document?)] = []
        for (change, slot) in zip(changes, slots) {
            // A slot freed by an entry that left is cleared too.
            guard let slot else { continue }
            docs.append((slot, change.summary?.isDeleted == false ? documents[change.id] : nil))
        }
        search!.apply(docs)
    }
}

extension Vault {
    /// One page of the live entries `query` selects, in its order, after
    /// `cursor` (from the previous page's ``EntryPage/next``; nil for the
    /// first page).
    ///
    /// The first call builds a summary of every entry (date, calendar,
    /// tags, journal, flags) from the entry index; later calls scan the
    /// summaries and read only the bodies of the page's rows. Entries this
    /// handle writes, and those other writers committed that it has read,
    /// are reflected at the next call.
    ///
    /// - Throws: a container error (`.damaged`, `.unavailable`, `.outOfSpace`…) for I/O or a record that no
    ///   longer reads.
    @_spi(Format)
    public func entries(matching query: EntryQuery, after cursor: EntryCursor? = nil) throws(QuireError) -> EntryPage {
        try lock.withLock { () throws(QuireError) -> EntryPage in
            if let page = cachedPage(query, after: cursor, searching: nil) { return page }
            try prepareQueryIndexes(search: false)
            let (slots, more) = index!.query!.table.page(query, after: cursor)
            return try makePage(slots, more: more)
        }
    }

    /// One page of the live entries whose text, tags, journal name, place,
    /// weather or attachments' file names hold every word of `text`, among
    /// those `query` selects, in its order, after `cursor`.
    ///
    /// Matching ignores case and diacritics (`cafe` finds `Café`, `елка`
    /// finds `Ёлка`), and full-width forms. Each word of `text` matches the
    /// words of an entry it begins: `walk` finds `walked`, but `ring` does
    /// not find `spring`. Chinese, Japanese and Korean text, written without
    /// spaces, matches as consecutive characters: `日记` finds `鲁迅日记`.
    /// Punctuation is ignored; a `text` of no letters, digits or CJK
    /// characters matches nothing.
    ///
    /// The first search builds an index of every live entry's text on this
    /// device (it stays in memory, follows changes, and is never written);
    /// later searches read only the bodies of the page's rows.
    ///
    /// - Throws: a container error (`.damaged`, `.unavailable`, `.outOfSpace`…) for I/O or a record that no
    ///   longer reads.
    @_spi(Format)
    public func search(_ text: String, matching query: EntryQuery = EntryQuery(), after cursor: EntryCursor? = nil) throws(QuireError)
        -> EntryPage
    {
        try lock.withLock { () throws(QuireError) -> EntryPage in
            if let page = cachedPage(query, after: cursor, searching: text) { return page }
            try prepareQueryIndexes(search: true)
            guard let found = index!.query!.search!.match(text) else { return EntryPage(entries: [], next: nil) }
            let documents = found.documents
            guard !found.needsCheck.isEmpty else {
                let (slots, more) = index!.query!.table.page(query, after: cursor, documents: documents)
                return try makePage(slots, more: more)
            }
            // Long CJK runs: check each candidate's text, reading bodies only
            // until the page is full.
            var checkFailure: QuireError?
            let table = index!.query!.table
            let (slots, more) = table.page(query, after: cursor, documents: documents) { slot in
                guard checkFailure == nil else { return false }
                do throws(QuireError) {
                    let body = try self.body(of: table.summary(slot))
                    return self.index!.query!.search!.contains(found.needsCheck, in: SearchIndex.Document(body))
                } catch {
                    checkFailure = error
                    return false
                }
            }
            if let checkFailure { throw checkFailure }
            return try makePage(slots, more: more)
        }
    }

    /// How many live entries carry each tag: what a sidebar lists beside
    /// each tag. Keys are tags lowercased (`String.lowercased()`), the
    /// folding ``EntryQuery/tags`` compares with, so `Travel` and `travel`
    /// are one key, `"travel"`, and `EntryQuery` with `tags = [key]`
    /// selects that many entries. Deleted entries are not counted; an
    /// entry counts once per key however many of its tags fold to it, and
    /// once however many heads it has in a conflict (by the version the
    /// vault shows). Tags no live entry carries are absent.
    ///
    /// Read from the entry summaries (`Spec/records.md §3.3`): from this
    /// device's index cache when the handle answers from it (no record is
    /// decrypted), else from those queries build; writes and refreshes
    /// are reflected as in ``entries(matching:after:)``.
    ///
    /// - Throws: a container error (`.damaged`, `.unavailable`, `.outOfSpace`…) for I/O or a record that no
    ///   longer reads.
    @_spi(Format)
    public func tagCounts() throws(QuireError) -> [String: Int] {
        try summaryCounts { $0.liveTagCounts }
    }

    /// How many live entries each journal holds: what a sidebar lists
    /// beside each journal. Keys are journal names lowercased
    /// (`String.lowercased()`), the folding ``EntryQuery/journal``
    /// compares with; `""` is the main journal. Deleted entries are not
    /// counted; an entry in conflict counts once, in the journal of the
    /// version the vault shows. Journals with no live entry are absent.
    ///
    /// Read as ``tagCounts()`` is.
    ///
    /// - Throws: a container error (`.damaged`, `.unavailable`, `.outOfSpace`…) for I/O or a record that no
    ///   longer reads.
    @_spi(Format)
    public func journalCounts() throws(QuireError) -> [String: Int] {
        try summaryCounts { $0.liveJournalCounts }
    }

    /// What `count` makes of the summaries: the cached view's when the
    /// handle answers from it (and none of its rows failed), else the
    /// query summaries', built or brought up to date first.
    private func summaryCounts(_ count: (EntrySummaryTable) -> [String: Int]) throws(QuireError) -> [String: Int] {
        try lock.withLock { () throws(QuireError) -> [String: Int] in
            if let view = currentCachedView() {
                let counts = count(view.table)
                if !dropCachedViewIfFailed(view) { return counts }
            }
            try prepareQueryIndexes(search: false)
            return count(index!.query!.table)
        }
    }

    /// The page of rows in `slots`, read now.
    private func makePage(_ slots: [Int32], more: Bool) throws(QuireError) -> EntryPage {
        let table = index!.query!.table
        var rows: [EntrySnapshot] = []
        rows.reserveCapacity(slots.count)
        for slot in slots {
            let id = table.summary(slot).id
            guard let s = try snapshot(id, index: index!) else {
                throw .format(.malformedRecord(nil, reason: "entry \(id) left the index"))
            }
            rows.append(s)
        }
        let next = more ? slots.last.map { EntryCursor(table.summary($0).key) } : nil
        return EntryPage(entries: rows, next: next)
    }

    /// Loads the entry index, and builds the query summaries (and with
    /// `search` the search index) when missing, or brings them up to date
    /// with the entries the index changed since (``EntryIndex/queryStale``).
    /// Under the lock.
    func prepareQueryIndexes(search: Bool) throws(QuireError) {
        _ = try loadIndex()
        if index!.query == nil {
            index!.query = QueryIndexes(table: EntrySummaryTable(try makeSummaries(of: Array(index!.revisions.keys))), search: nil)
            index!.queryStale = []
        } else if !index!.queryStale.isEmpty {
            let ids = Array(index!.queryStale)
            index!.queryStale = []
            try updateQueryIndexes(for: ids)
        }
        if search && index!.query!.search == nil {
            let table = index!.query!.table
            var documents: [(slot: Int32, document: SearchIndex.Document)] = []
            documents.reserveCapacity(table.count)
            for slot in 0..<Int32(table.slotCount) {
                guard let s = table.row(slot), !s.isDeleted else { continue }
                documents.append((slot, SearchIndex.Document(try body(of: s))))
            }
            index!.query!.search = SearchIndex(documents)
        }
        writeIndexCacheIfAdvanced()
    }

    /// Recomputes the summaries (and search documents) of entries `ids`
    /// from the entry index and applies them: what a refresh calls with the
    /// entries it found changed. Does nothing before the first query.
    /// Under the lock.
    func updateQueryIndexes(for ids: [EntryID]) throws(QuireError) {
        guard index?.query != nil, !ids.isEmpty else { return }
        let summaries = try makeSummaries(of: ids)
        var byID: [EntryID: EntrySummary] = [:]
        for s in summaries { byID[s.id] = s }
        let changes = ids.map { (id: $0, summary: byID[$0]) }
        var documents: [EntryID: SearchIndex.Document] = [:]
        if index!.query!.search != nil {
            for s in summaries where !s.isDeleted { documents[s.id] = SearchIndex.Document(try body(of: s)) }
        }
        index!.query!.apply(changes, documents: documents)
    }

    /// The summaries of entries `ids` (those the index has a head for),
    /// computed in date order so that time-zone offsets are looked up once
    /// per daylight-saving span.
    private func makeSummaries(of ids: [EntryID]) throws(QuireError) -> [EntrySummary] {
        var winners: [(id: EntryID, revision: EntryRevision, head: RevisionSummary, heads: Int)] = []
        var created: [(ms: Int64, at: Int)] = []
        winners.reserveCapacity(ids.count)
        created.reserveCapacity(ids.count)
        for id in ids {
            let heads = index!.heads(of: id)
            guard let winner = heads.first else { continue }
            let revision: EntryRevision
            if let cached = winner.revision { revision = cached } else { revision = try self.revision(frame: winner.frame) }
            created.append((revision.body.createdMilliseconds, winners.count))
            winners.append((id, revision, winner, heads.count))
        }
        // Sorting small pairs, not the revisions: the order only has to
        // group instants for UTCOffsets; the table sorts by the full key.
        created.sort { $0.ms < $1.ms }
        var offsets = UTCOffsets()
        return created.map {
            let w = winners[$0.at]
            return EntrySummary(
                id: w.id, winner: w.revision, frame: w.head.frame, headCount: w.heads, standing: w.head.standing, offsets: &offsets)
        }
    }

    /// The search index's size, when built: distinct terms and (term,
    /// entry) pairs. For benchmarks.
    package var searchIndexSize: (terms: Int, postings: Int)? {
        lock.withLock { index?.query?.search.map { ($0.termCount, $0.postingCount) } }
    }

    /// The winning body a summary describes.
    private func body(of s: EntrySummary) throws(QuireError) -> EntryBody {
        if let cached = index!.revisions[s.id]?.first(where: { $0.frame == s.frame })?.revision { return cached.body }
        return try revision(frame: s.frame).body
    }
}
