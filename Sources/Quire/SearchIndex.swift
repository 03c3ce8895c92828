/// An in-memory inverted index over entries' text, tags and the other
/// words an entry is found by (journal, place, weather, attachments' file
/// names), built on the device: for each term, the documents holding it.
/// Documents are the slots of the ``EntrySummaryTable``.
///
/// Terms are those of ``TextTokenizer``: folded words, and for CJK runs
/// every character (unigram) and every pair of adjacent characters
/// (bigram). A query word matches every indexed word it begins (a prefix,
/// found by binary search in the sorted term list), so `walk` finds
/// `walked` but `ring` does not find `spring`. A query's CJK run matches
/// documents holding each of its bigrams (its unigram when it is one
/// character); a run of three or more characters is then checked against
/// the document's text (``SearchMatch/needsCheck``), since its bigrams may
/// occur apart.
struct SearchIndex: Sendable {
    /// What is indexed of one entry.
    struct Document: Sendable {
        /// The entry's text.
        var text: String
        /// Its tags.
        var tags: [String]
        /// Its journal's name, its place's parts (place name, locality,
        /// region, country), its weather's conditions and its attachments'
        /// file names: what `quire search` also looks in.
        var others: [String]

        /// The document of a body.
        init(_ body: EntryBody) {
            text = body.text
            tags = body.tags
            others = [body.journal] + body.attachments.map(\.fileName)
            if let l = body.location { others += [l.placeName, l.locality, l.region, l.country] }
            if let w = body.weather { others.append(w.conditions) }
        }

        init(text: String, tags: [String], others: [String] = []) {
            self.text = text
            self.tags = tags
            self.others = others
        }
    }

    /// A term's UTF-8 with its hash computed once.
    private struct Term: Hashable, Sendable {
        let bytes: [UInt8]
        let hash: UInt64

        init(_ bytes: [UInt8]) {
            self.bytes = bytes
            var h: UInt64 = 0xcbf2_9ce4_8422_2325  // FNV-1a
            for b in bytes { h = (h ^ UInt64(b)) &* 0x100_0000_01b3 }
            hash = h
        }

        func hash(into hasher: inout Hasher) { hasher.combine(hash) }
        static func == (a: Term, b: Term) -> Bool { a.hash == b.hash && a.bytes == b.bytes }
    }

    private var ids: [Term: Int32] = [:]
    /// Term bytes by term id.
    private var terms: [[UInt8]] = []
    /// Documents holding each term, ascending, by term id.
    private var postings: [[Int32]] = []
    /// Term ids in ascending bytewise order of their terms.
    private var sorted: [Int32] = []
    /// The term ids of each document, by slot (empty for none), and the
    /// term ids by term: derived from ``terms`` and ``postings`` only when
    /// a change or a lookup needs them (``deriveLookups()``), since an
    /// index loaded from the cache to be searched once needs neither.
    private var documentTerms: [[Int32]] = []
    private var lookupsDerived = true
    /// A loaded index's posting lists left encoded: list `id` is read from
    /// here into ``postings`` when a lookup first needs it (``decodeList(_:)``),
    /// all of them when a change or ``match(_:)`` needs every list.
    private var encoded: IndexCache.EncodedPostings?
    /// Which lists of ``encoded`` were decoded into ``postings``.
    private var decoded: [Bool] = []
    /// How many lists of ``encoded`` were decoded so far. For tests.
    private(set) var decodedListCount = 0
    /// The sealed posting groups a loaded index's lists are read from.
    private var postingGroups: IndexCache.PostingGroups?
    /// How many posting groups of a loaded index were opened so far; nil
    /// for an index not loaded from the cache. For tests.
    var postingGroupLoadCount: Int? { postingGroups?.loadCount }
    /// True once a list of ``encoded`` did not check when decoded: the
    /// index answers wrongly and must be dropped with the cache it came
    /// from (``CachedEntries/isUsable``).
    private(set) var isDamaged = false
    /// The number of document slots (one past the highest).
    private var documentCount = 0
    private var tokenizer = TextTokenizer()

    /// The number of distinct terms.
    var termCount: Int { terms.count }
    /// The number of (term, document) pairs.
    var postingCount: Int {
        guard let encoded else { return postings.reduce(0) { $0 + $1.count } }
        return postings.indices.reduce(0) { $0 + (decoded[$1] ? postings[$1].count : Int(encoded.counts[$1])) }
    }

    /// An index of `documents`, given in ascending slot order.
    init(_ documents: [(slot: Int32, document: Document)]) {
        var seen: [Int32] = []  // the last document each term was added for
        var tokenizer = TextTokenizer()
        for (slot, document) in documents {
            var mine: [Int32] = []
            Self.forEachTerm(of: document, using: &tokenizer) { term in
                let id = self.id(of: term)
                if Int(id) >= seen.count { seen.append(-1) }
                guard seen[Int(id)] != slot else { return }
                seen[Int(id)] = slot
                mine.append(id)
                postings[Int(id)].append(slot)
            }
            setTerms(mine, of: slot)
        }
        self.tokenizer = tokenizer
        sortTerms()
    }

    /// Applies changed documents: each slot gets its new document's terms,
    /// or none when the document is nil (the entry was deleted or left).
    mutating func apply(_ changes: [(slot: Int32, document: Document?)]) {
        deriveLookups()
        var added = false
        var tokenizer = TextTokenizer()
        swap(&tokenizer, &self.tokenizer)
        defer { swap(&tokenizer, &self.tokenizer) }
        for (slot, document) in changes {
            if Int(slot) < documentTerms.count {
                for id in documentTerms[Int(slot)] { Self.remove(slot, from: &postings[Int(id)]) }
                documentTerms[Int(slot)] = []
            }
            guard let document else { continue }
            var mine = Set<Int32>()
            let before = terms.count
            Self.forEachTerm(of: document, using: &tokenizer) { term in
                let id = self.id(of: term)
                if mine.insert(id).inserted { Self.insert(slot, into: &postings[Int(id)]) }
            }
            if terms.count != before { added = true }
            setTerms(mine.sorted(), of: slot)
        }
        if added { sortTerms() }
    }

    private mutating func setTerms(_ list: [Int32], of slot: Int32) {
        while documentTerms.count <= Int(slot) { documentTerms.append([]) }
        documentTerms[Int(slot)] = list
        documentCount = max(documentCount, documentTerms.count)
    }

    /// Builds ``documentTerms`` and ``ids`` when a stored index was loaded
    /// without them.
    private mutating func deriveLookups() {
        decodeAllLists()
        guard !lookupsDerived else { return }
        lookupsDerived = true
        var documentTerms = [[Int32]](repeating: [], count: documentCount)
        ids.reserveCapacity(terms.count)
        for (i, term) in terms.enumerated() {
            ids[Term(term)] = Int32(i)
            for d in postings[i] { documentTerms[Int(d)].append(Int32(i)) }
        }
        self.documentTerms = documentTerms
    }

    private mutating func sortTerms() {
        let terms = self.terms
        if sorted.count == terms.count { return }
        let known = sorted.count
        // New terms are few after the first build: sort them and merge.
        var fresh = (Int32(known)..<Int32(terms.count)).map { $0 }
        fresh.sort { terms[Int($0)].lexicographicallyPrecedes(terms[Int($1)]) }
        if known == 0 {
            sorted = fresh
            return
        }
        var merged: [Int32] = []
        merged.reserveCapacity(terms.count)
        var i = 0
        var j = 0
        while i < sorted.count || j < fresh.count {
            if j == fresh.count || (i < sorted.count && terms[Int(sorted[i])].lexicographicallyPrecedes(terms[Int(fresh[j])])) {
                merged.append(sorted[i])
                i += 1
            } else {
                merged.append(fresh[j])
                j += 1
            }
        }
        sorted = merged
    }

    private mutating func id(of bytes: [UInt8]) -> Int32 {
        let term = Term(bytes)
        if let id = ids[term] { return id }
        let id = Int32(terms.count)
        ids[term] = id
        terms.append(bytes)
        postings.append([])
        return id
    }

    /// Calls `body` with every term of `document` (repeats included).
    private static func forEachTerm(of document: Document, using tokenizer: inout TextTokenizer, _ body: (_ term: [UInt8]) -> Void) {
        var previous: [UInt8] = []
        var pair: [UInt8] = []
        for text in [document.text] + document.tags + document.others {
            tokenizer.scan(text, onWord: body) { character, index in
                body(character)
                if index > 0 {
                    pair.removeAll(keepingCapacity: true)
                    pair += previous
                    pair += character
                    body(pair)
                }
                previous.removeAll(keepingCapacity: true)
                previous += character
            }
        }
    }

    private static func remove(_ slot: Int32, from list: inout [Int32]) {
        let at = lowerBound(slot, in: list)
        if at < list.count && list[at] == slot { list.remove(at: at) }
    }

    private static func insert(_ slot: Int32, into list: inout [Int32]) {
        if list.last.map({ $0 < slot }) ?? true {
            list.append(slot)
            return
        }
        let at = lowerBound(slot, in: list)
        if at == list.count || list[at] != slot { list.insert(slot, at: at) }
    }

    private static func lowerBound(_ slot: Int32, in list: [Int32]) -> Int {
        var lo = 0
        var hi = list.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if list[mid] < slot { lo = mid + 1 } else { hi = mid }
        }
        return lo
    }

    /// Every term in ascending bytewise order with the documents holding
    /// it, each renumbered by `document` (a term's documents that it maps
    /// to nil are left out): what the device-local index cache stores
    /// (`Spec/index-cache.md §3`).
    func storedTerms(renumbering document: (Int32) -> Int32?) -> (terms: [[UInt8]], postings: [[Int32]]) {
        var outTerms: [[UInt8]] = []
        var outPostings: [[Int32]] = []
        outTerms.reserveCapacity(sorted.count)
        outPostings.reserveCapacity(sorted.count)
        for id in sorted {
            var list = list(Int(id)).compactMap(document)
            guard !list.isEmpty else { continue }
            list.sort()
            outTerms.append(terms[Int(id)])
            outPostings.append(list)
        }
        return (outTerms, outPostings)
    }

    /// The index of stored terms: `terms` in strictly ascending bytewise
    /// order, each with its documents (`postings`, strictly ascending, each
    /// below `documentCount`). Nil when the input breaks those rules.
    init?(storedTerms terms: [[UInt8]], postings: [[Int32]], documentCount: Int) {
        guard terms.count == postings.count, documentCount >= 0, terms.count < Int(Int32.max) else { return nil }
        for (i, term) in terms.enumerated() {
            if i > 0 && !terms[i - 1].lexicographicallyPrecedes(term) { return nil }
            var previous: Int32 = -1
            for d in postings[i] {
                guard d > previous, Int(d) < documentCount else { return nil }
                previous = d
            }
        }
        self.terms = terms
        self.postings = postings
        self.sorted = (0..<Int32(terms.count)).map { $0 }
        self.documentCount = documentCount
        self.lookupsDerived = false
    }

    /// A loaded index of stored terms whose posting lists are decoded and
    /// checked when first read (``IndexCache/EncodedPostings``): `terms`
    /// in strictly ascending bytewise order, one list each. Nil when the
    /// terms break that rule or their number is not the lists'.
    init?(storedTerms terms: [[UInt8]], encoded: IndexCache.EncodedPostings, documentCount: Int) {
        guard terms.count == encoded.count, documentCount >= 0, terms.count < Int(Int32.max) else { return nil }
        for i in terms.indices where i > 0 {
            if !terms[i - 1].lexicographicallyPrecedes(terms[i]) { return nil }
        }
        self.terms = terms
        self.postings = [[Int32]](repeating: [], count: terms.count)
        self.encoded = encoded
        self.postingGroups = encoded.groups
        self.decoded = [Bool](repeating: false, count: terms.count)
        self.sorted = (0..<Int32(terms.count)).map { $0 }
        self.documentCount = documentCount
        self.lookupsDerived = false
    }

    /// Decodes list `id` from ``encoded`` into ``postings`` when it is
    /// still encoded; a list that does not check is left empty and makes
    /// the index ``isDamaged``.
    private mutating func decodeList(_ id: Int) {
        guard let encoded, !decoded[id] else { return }
        decoded[id] = true
        decodedListCount += 1
        if let list = encoded.list(id) { postings[id] = list } else { isDamaged = true }
    }

    /// Decodes every list still encoded (``decodeList(_:)``): before the
    /// index is stored again, so that a list that does not check makes it
    /// ``isDamaged`` rather than stored empty.
    mutating func decodeAllLists() {
        guard encoded != nil else { return }
        for id in terms.indices { decodeList(id) }
        encoded = nil
        decoded = []
    }

    /// List `id` as it is or, still encoded, decoded now (empty when it
    /// does not check) without keeping it.
    private func list(_ id: Int) -> [Int32] {
        guard let encoded, !decoded[id] else { return postings[id] }
        return encoded.list(id) ?? []
    }

    /// The documents matching every word and CJK run of `query`; nil when
    /// the query holds no term (only spaces or punctuation).
    mutating func match(_ query: String) -> SearchMatch? {
        deriveLookups()
        var words: [[UInt8]] = []
        var runs: [[[UInt8]]] = []
        tokenizer.scan(
            query,
            onWord: { words.append($0) },
            onCJK: { character, index in
                if index == 0 { runs.append([]) }
                runs[runs.count - 1].append(character)
            })
        guard !words.isEmpty || !runs.isEmpty else { return nil }
        var result: Bitset?
        func and(_ bits: Bitset) {
            if result == nil { result = bits } else { result!.formIntersection(bits) }
        }
        let size = documentCount
        for word in Set(words) {
            var bits = Bitset(count: size)
            var at = lowerBound(term: word)
            while at < sorted.count {
                let id = Int(sorted[at])
                guard terms[id].starts(with: word) else { break }
                for slot in postings[id] { bits.insert(slot) }
                at += 1
            }
            and(bits)
        }
        var checks: [[UInt8]] = []
        for run in runs {
            var grams: [[UInt8]] = []
            if run.count == 1 {
                grams = run
            } else {
                for i in 1..<run.count { grams.append(run[i - 1] + run[i]) }
            }
            for gram in Set(grams) {
                var bits = Bitset(count: size)
                if let id = ids[Term(gram)] { for slot in postings[Int(id)] { bits.insert(slot) } }
                and(bits)
            }
            if run.count >= 3 { checks.append(run.flatMap { $0 }) }
        }
        return SearchMatch(documents: result ?? Bitset(count: size), needsCheck: checks)
    }

    /// The documents that may hold each of `segments` (runs of folded word
    /// characters, ``TextTokenizer/substringSegments(of:)``) and each of
    /// `characters` (CJK characters, ``TextTokenizer/unigramCharacters(of:)``)
    /// in their folded text: those holding, for each segment, a term that
    /// contains it, where a term's `й` also stands for the `и` Foundation's
    /// folding makes of it, and each character as a unigram. A superset of
    /// the documents whose folded text holds them all: a segment lies
    /// inside one word, and such a character is one of the unigrams
    /// (`Spec/index-cache.md §1`, "The search index and substring search").
    /// A document holding a Kana voiced sound mark is named for every
    /// segment: Foundation's folding drops the mark after a letter, so the
    /// words the tokenizer ends at it are one in the folded text
    /// (`heron\u{3099}ry` folds to `heronry`).
    func documents(containing segments: [[UInt8]], characters: [[UInt8]] = []) -> Bitset {
        var index = self
        return index.checkedDocuments(containing: segments, characters: characters) ?? Bitset(count: documentCount)
    }

    /// ``documents(containing:characters:)``, decoding (and keeping) only
    /// the posting lists it reads; nil when one of them does not check
    /// (the index is then ``isDamaged``).
    mutating func checkedDocuments(containing segments: [[UInt8]], characters: [[UInt8]] = []) -> Bitset? {
        var result: Bitset?
        let size = documentCount
        for character in Set(characters) where !character.isEmpty {
            var bits = Bitset(count: size)
            let at = lowerBound(term: character)
            if at < sorted.count, terms[Int(sorted[at])] == character {
                decodeList(Int(sorted[at]))
                for slot in postings[Int(sorted[at])] { bits.insert(slot) }
            }
            if result == nil { result = bits } else { result!.formIntersection(bits) }
        }
        var joined: [Int32] = []
        if segments.contains(where: { !$0.isEmpty }) {
            for mark in Self.voicedMarks {
                let at = lowerBound(term: mark)
                if at < sorted.count, terms[Int(sorted[at])] == mark {
                    decodeList(Int(sorted[at]))
                    joined += postings[Int(sorted[at])]
                }
            }
        }
        var spelled: [UInt8] = []
        for segment in Set(segments) where !segment.isEmpty {
            var bits = Bitset(count: size)
            for slot in joined { bits.insert(slot) }
            // Only a segment with и needs a term's й read as и.
            let hasI = Self.find([0xD0, 0xB8], in: segment)
            for id in terms.indices {
                let term = terms[id]
                guard term.count >= segment.count else { continue }
                if hasI {
                    // й (D0 B9) as и (D0 B8): both two bytes, so positions hold.
                    spelled.removeAll(keepingCapacity: true)
                    spelled += term
                    var i = 0
                    while i + 1 < spelled.count {
                        if spelled[i] == 0xD0 && spelled[i + 1] == 0xB9 { spelled[i + 1] = 0xB8 }
                        i += 1
                    }
                    guard Self.find(segment, in: spelled) else { continue }
                } else {
                    guard Self.find(segment, in: term) else { continue }
                }
                decodeList(id)
                for slot in postings[id] { bits.insert(slot) }
            }
            if result == nil { result = bits } else { result!.formIntersection(bits) }
        }
        guard !isDamaged else { return nil }
        return result ?? Bitset(count: size)
    }

    /// The unigrams of the Kana voiced sound marks: U+3099 and U+309A, and
    /// the nothing the tokenizer folds the half-width U+FF9E and U+FF9F to.
    private static let voicedMarks: [[UInt8]] = [[0xE3, 0x82, 0x99], [0xE3, 0x82, 0x9A], []]

    /// The first position in ``sorted`` whose term is not before `term`.
    private func lowerBound(term: [UInt8]) -> Int {
        var lo = 0
        var hi = sorted.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if terms[Int(sorted[mid])].lexicographicallyPrecedes(term) { lo = mid + 1 } else { hi = mid }
        }
        return lo
    }

    /// True when `document` holds each of `runs` (folded CJK runs, UTF-8)
    /// as consecutive characters of one of its CJK runs.
    mutating func contains(_ runs: [[UInt8]], in document: Document) -> Bool {
        var have: [UInt8] = []
        for text in [document.text] + document.tags {
            tokenizer.scan(
                text,
                onWord: { _ in },
                onCJK: { character, index in
                    if index == 0 { have.append(0) }
                    have += character
                })
        }
        return runs.allSatisfy { run in Self.find(run, in: have) }
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Bool {
        guard !needle.isEmpty, haystack.count >= needle.count else { return needle.isEmpty }
        var i = 0
        let last = haystack.count - needle.count
        while i <= last {
            if haystack[i] == needle[0] && haystack[i..<(i + needle.count)].elementsEqual(needle) { return true }
            i += 1
        }
        return false
    }
}

/// The documents a search matched.
struct SearchMatch: Sendable {
    /// Matching slots.
    let documents: Bitset
    /// CJK runs (folded UTF-8) each matching document's text must hold
    /// whole: its bigrams were found, perhaps apart.
    let needsCheck: [[UInt8]]
}

/// A set of small non-negative integers as bits.
struct Bitset: Sendable {
    private var words: [UInt64]

    init(count: Int) { words = Array(repeating: 0, count: (count + 63) / 64) }

    mutating func insert(_ i: Int32) {
        let w = Int(i) >> 6
        if w >= words.count { words += Array(repeating: 0, count: w - words.count + 1) }
        words[w] |= 1 << UInt64(i & 63)
    }

    func contains(_ i: Int32) -> Bool {
        let w = Int(i) >> 6
        return w < words.count && words[w] & (1 << UInt64(i & 63)) != 0
    }

    mutating func formIntersection(_ other: Bitset) {
        for i in words.indices { words[i] &= i < other.words.count ? other.words[i] : 0 }
    }

    var isEmpty: Bool { words.allSatisfy { $0 == 0 } }
}
