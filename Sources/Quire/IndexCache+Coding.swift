@_spi(Crypto) import QuireCrypto
@_spi(Format) import QuireFormat
import Synchronization

/// The plaintexts of the index cache (`Spec/index-cache.md §1`): a header
/// (vault id and file identity), the summaries and the search index, each
/// one deterministic CBOR map. The columns are byte strings of
/// fixed-width little-endian numbers or LEB128 varints, so that 50,000
/// entries cost a few dozen CBOR items, not millions.
extension IndexCache {
    // MARK: header

    /// The header: `{"commits": bstr(32), "frames": uint, "head": bstr(32),
    /// "keyrings": [bstr(32)…], "length": uint, "vault": bstr(16)}`.
    static func encodeHeader(vaultID: VaultID, identity: Identity) -> [UInt8] {
        CBOREncoder.encode(
            .map(
                CBORMap(text: [
                    ("vault", .bytes(vaultID.bytes)),
                    ("length", .unsigned(identity.committedLength)),
                    ("frames", .unsigned(UInt64(identity.frameCount))),
                    ("head", .bytes(identity.chainHead)),
                    ("keyrings", .array(identity.keyringHeads.map { .bytes($0.bytes) })),
                    ("commits", .bytes(identity.commitsDigest)),
                ])))
    }

    /// The vault id and identity in a header; nil when malformed.
    static func decodeHeader(_ bytes: [UInt8]) -> (vaultID: VaultID, identity: Identity)? {
        guard case .map(let m)? = try? CBORDecoder.decode(bytes), m.count == 6,
            case .bytes(let vault)? = m[text: "vault"], vault.count == VaultID.byteCount,
            case .unsigned(let length)? = m[text: "length"],
            case .unsigned(let frames)? = m[text: "frames"], frames <= UInt64(Int32.max),
            case .bytes(let head)? = m[text: "head"], head.count == 32,
            case .array(let rings)? = m[text: "keyrings"],
            case .bytes(let commits)? = m[text: "commits"], commits.count == 32
        else { return nil }
        var heads: [KeyringID] = []
        for r in rings {
            guard case .bytes(let b) = r, b.count == KeyringID.byteCount else { return nil }
            heads.append(KeyringID(unchecked: b))
        }
        guard heads == heads.sorted() else { return nil }
        return (
            VaultID(unchecked: vault),
            Identity(
                committedLength: length, frameCount: Int(frames), chainHead: head, keyringHeads: heads, commitsDigest: commits)
        )
    }

    // MARK: body

    /// The bits of the `flags` column.
    enum Flag {
        static let starred: UInt8 = 1
        static let attachments: UInt8 = 2
        static let photos: UInt8 = 4
        static let deleted: UInt8 = 8
        static let conflict: UInt8 = 16
        static let all: UInt8 = 31
    }

    /// One row group of the summaries: its entries as columns, tags and
    /// journals through a table of the distinct strings its rows name.
    static func encodeSummaryGroup(_ entries: ArraySlice<Entry>) -> [UInt8] {
        let n = entries.count
        var ids: [UInt8] = []
        var revisions: [UInt8] = []
        var created: [UInt8] = []
        var offsets: [UInt8] = []
        var flags: [UInt8] = []
        var standing: [UInt8] = []
        var frames: [UInt8] = []
        var frameOffsets: [UInt8] = []
        var journals: [UInt8] = []
        var tags: [UInt8] = []
        var clocks: [UInt8] = []
        var heads: [UInt8] = []
        var counts: [UInt8] = []
        clocks.reserveCapacity(8 * n)
        ids.reserveCapacity(16 * n)
        revisions.reserveCapacity(16 * n)
        created.reserveCapacity(8 * n)
        offsets.reserveCapacity(4 * n)
        frames.reserveCapacity(8 * n)
        frameOffsets.reserveCapacity(8 * n)
        var strings: [String] = []
        var stringIndex: [String: UInt64] = [:]
        func index(of s: String) -> UInt64 {
            if let i = stringIndex[s] { return i }
            let i = UInt64(strings.count)
            strings.append(s)
            stringIndex[s] = i
            return i
        }
        for e in entries {
            let s = e.summary
            s.id.storage.append(to: &ids)
            e.revision.storage.append(to: &revisions)
            appendLE(UInt64(bitPattern: s.created), to: &created)
            appendLE(UInt32(bitPattern: s.utcOffsetSeconds), to: &offsets)
            var f: UInt8 = 0
            if s.isStarred { f |= Flag.starred }
            if s.hasAttachments { f |= Flag.attachments }
            if s.hasPhotos { f |= Flag.photos }
            if s.isDeleted { f |= Flag.deleted }
            if s.hasConflict { f |= Flag.conflict }
            flags.append(f)
            standing.append(s.standing)
            appendLE(UInt64(s.frame), to: &frames)
            appendLE(e.frameOffset, to: &frameOffsets)
            appendVarint(index(of: s.journal), to: &journals)
            appendLE(e.clock, to: &clocks)
            appendVarint(UInt64(e.otherHeads.count), to: &heads)
            for h in e.otherHeads {
                h.revision.storage.append(to: &heads)
                appendLE(h.clock, to: &heads)
                heads.append(h.standing)
                appendVarint(UInt64(h.frame), to: &heads)
                appendVarint(h.frameOffset, to: &heads)
            }
            appendVarint(UInt64(s.tags.count), to: &tags)
            for t in s.tags { appendVarint(index(of: t), to: &tags) }
            appendVarint(UInt64(e.revisionCount), to: &counts)
        }
        let pairs: [(String, CBOR)] = [
            ("count", .unsigned(UInt64(n))),
            ("ids", .bytes(ids)), ("revisions", .bytes(revisions)), ("created", .bytes(created)),
            ("offsets", .bytes(offsets)), ("flags", .bytes(flags)), ("standing", .bytes(standing)),
            ("frames", .bytes(frames)), ("frameOffsets", .bytes(frameOffsets)),
            ("clocks", .bytes(clocks)), ("heads", .bytes(heads)),
            ("strings", .array(strings.map { .text($0) })), ("journals", .bytes(journals)), ("tags", .bytes(tags)),
            ("revisionCounts", .bytes(counts)),
        ]
        return CBOREncoder.encode(.map(CBORMap(text: pairs)))
    }

    /// Bytes per row of the summaries directory's `groups` column: sealed
    /// length (uint32 LE), tag (16), the first and the last row's
    /// `created` (int64 LE) and entry id (16), then the group's live
    /// (not deleted) row count (uint32 LE).
    static let summaryGroupEntryWidth = 72

    /// The summaries' directory: `{"count": uint, "groups": bstr, "ids":
    /// bstr, "rows": uint}`, the rows per group, each group's place, bounds
    /// and live count (``SummaryGroupEntry``), and the id part's sealed
    /// length (uint32 LE) and tag (16) (``SummaryIDPart``).
    static func encodeSummaryDirectory(count: Int, rowsPerGroup: Int, groups: [SummaryGroupEntry], ids: SummaryIDPartEntry)
        -> [UInt8]
    {
        var column: [UInt8] = []
        column.reserveCapacity(groups.count * summaryGroupEntryWidth)
        for g in groups {
            appendLE(UInt32(g.sealedLength), to: &column)
            column += g.tag
            for key in [g.first, g.last] {
                appendLE(UInt64(bitPattern: key.created), to: &column)
                key.id.storage.append(to: &column)
            }
            appendLE(UInt32(g.live), to: &column)
        }
        var idsEntry: [UInt8] = []
        appendLE(UInt32(ids.sealedLength), to: &idsEntry)
        idsEntry += ids.tag
        let pairs: [(String, CBOR)] = [
            ("count", .unsigned(UInt64(count))), ("rows", .unsigned(UInt64(rowsPerGroup))), ("groups", .bytes(column)),
            ("ids", .bytes(idsEntry)),
        ]
        return CBOREncoder.encode(.map(CBORMap(text: pairs)))
    }

    /// The summaries' directory in `payload`; nil when it is malformed or
    /// inconsistent: the group count is not the rows' in groups of `rows`,
    /// a sealed length is out of range, a group's first key is after its
    /// last or not after the last key of the group before, or a group's
    /// live count is more than its rows.
    static func decodeSummaryDirectory(_ payload: UnsafeRawBufferPointer) -> (
        count: Int, rowsPerGroup: Int, groups: [SummaryGroupEntry], ids: SummaryIDPartEntry
    )? {
        guard let fields = try? CBORDecoder.mapFieldRanges(payload), fields.count == 4 else { return nil }
        func unsigned(_ name: String) -> UInt64? {
            guard let f = fields[name], !f.isBytes,
                case .unsigned(let v)? = try? CBORDecoder.decode(UnsafeRawBufferPointer(rebasing: payload[f.range]))
            else { return nil }
            return v
        }
        let tag = XChaCha20Poly1305.tagByteCount
        guard let count = unsigned("count"), let rows = unsigned("rows"), let f = fields["groups"], f.isBytes,
            let idsField = fields["ids"], idsField.isBytes, idsField.range.count == 4 + tag,
            count <= UInt64(Int32.max), rows >= 1, rows <= UInt64(Int32.max)
        else { return nil }
        let idsColumn = UnsafeRawBufferPointer(rebasing: payload[idsField.range])
        let ids = SummaryIDPartEntry(sealedLength: Int(loadLE(UInt32.self, idsColumn, at: 0)), tag: Array(idsColumn[4...]))
        guard ids.sealedLength > tag, ids.sealedLength <= maxFileBytes else { return nil }
        let n = Int(count)
        let r = Int(rows)
        let groupCount = (n + r - 1) / r
        let column = UnsafeRawBufferPointer(rebasing: payload[f.range])
        guard column.count == groupCount * summaryGroupEntryWidth else { return nil }
        var groups: [SummaryGroupEntry] = []
        groups.reserveCapacity(groupCount)
        for g in 0..<groupCount {
            let at = g * summaryGroupEntryWidth
            let sealed = Int(loadLE(UInt32.self, column, at: at))
            func key(_ offset: Int) -> EntrySortKey {
                EntrySortKey(
                    created: Int64(bitPattern: loadLE(UInt64.self, column, at: at + offset)),
                    id: EntryID(uncheckedRaw: UnsafeRawBufferPointer(rebasing: column[(at + offset + 8)..<(at + offset + 24)])))
            }
            let live = Int(loadLE(UInt32.self, column, at: at + 68))
            let entry = SummaryGroupEntry(
                sealedLength: sealed, tag: Array(column[(at + 4)..<(at + 20)]), first: key(20), last: key(44), live: live)
            guard sealed > tag, sealed <= maxFileBytes, !(entry.last < entry.first), live <= min(r, n - g * r) else { return nil }
            if let previous = groups.last, !(previous.last < entry.first) { return nil }
            groups.append(entry)
        }
        return (n, r, groups, ids)
    }

    /// The summaries' id part: `{"count": uint, "ids": bstr, "rows": bstr}`,
    /// every row's entry id (16 bytes each) in strictly ascending bytewise
    /// order, and with each, its row (uint32 LE, the low 31 bits) and
    /// whether its winning head is a tombstone (the top bit).
    static func encodeSummaryIDPart(_ entries: [Entry]) -> [UInt8] {
        let order = entries.indices.sorted { IDKey(entries[$0].summary.id) < IDKey(entries[$1].summary.id) }
        var ids: [UInt8] = []
        var rows: [UInt8] = []
        ids.reserveCapacity(16 * entries.count)
        rows.reserveCapacity(4 * entries.count)
        for i in order {
            entries[i].summary.id.storage.append(to: &ids)
            appendLE(UInt32(i) | (entries[i].summary.isDeleted ? 1 << 31 : 0), to: &rows)
        }
        let pairs: [(String, CBOR)] = [("count", .unsigned(UInt64(entries.count))), ("ids", .bytes(ids)), ("rows", .bytes(rows))]
        return CBOREncoder.encode(.map(CBORMap(text: pairs)))
    }

    // MARK: frame table

    /// A row group's place in the sealed file: the offset of its first
    /// frame in the vault file, its sealed length and its AEAD tag.
    struct RowGroupEntry: Sendable, Equatable {
        var start: UInt64
        var sealedLength: Int
        var tag: [UInt8]
    }

    /// Bytes per row of the `groups` column: offset (uint64 LE), sealed
    /// length (uint32 LE), tag (16).
    static let groupEntryWidth = 28

    /// The frame table's directory (``FrameTableDirectory``) and the row
    /// groups' places: `{"commits": bstr, "digests": bstr, "frames": uint,
    /// "groups": bstr, "plaintext": bstr, "rows": uint}`, or `{}` when no
    /// table is stored.
    static func encodeFrameDirectory(_ directory: FrameTableDirectory?, groups: [RowGroupEntry]) -> [UInt8] {
        guard let d = directory else { return CBOREncoder.encode(.map(CBORMap(text: []))) }
        var column: [UInt8] = []
        column.reserveCapacity(groups.count * groupEntryWidth)
        for g in groups {
            appendLE(g.start, to: &column)
            appendLE(UInt32(g.sealedLength), to: &column)
            column += g.tag
        }
        return CBOREncoder.encode(
            .map(
                CBORMap(text: [
                    ("rows", .unsigned(UInt64(d.rowsPerGroup))), ("frames", .unsigned(UInt64(d.frameCount))), ("groups", .bytes(column)),
                    ("commits", .bytes(d.commits)), ("digests", .bytes(d.digests)), ("plaintext", .bytes(d.plaintext)),
                ])))
    }

    /// The directory and row group places in `payload`: `.some(nil)` for
    /// `{}`, nil when malformed (counts that do not match, a row group
    /// start that does not match its entry). Its columns are checked
    /// against the vault file when an open uses it.
    static func decodeFrameDirectory(_ payload: [UInt8]) -> (FrameTableDirectory, [RowGroupEntry])?? {
        guard case .map(let m)? = try? CBORDecoder.decode(payload) else { return nil }
        if m.count == 0 { return .some(nil) }
        guard m.count == 6, case .unsigned(let rows)? = m[text: "rows"], case .unsigned(let frames)? = m[text: "frames"],
            case .bytes(let column)? = m[text: "groups"], case .bytes(let commits)? = m[text: "commits"],
            case .bytes(let digests)? = m[text: "digests"], case .bytes(let plaintext)? = m[text: "plaintext"],
            rows > 0, rows <= UInt64(UInt32.max), frames > 0, frames <= UInt64(UInt32.max), column.count % groupEntryWidth == 0
        else { return nil }
        var groups: [RowGroupEntry] = []
        for at in stride(from: 0, to: column.count, by: groupEntryWidth) {
            let start = column.withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(fromByteOffset: at, as: UInt64.self)) }
            let length = column.withUnsafeBytes { Int(UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: at + 8, as: UInt32.self))) }
            guard length > XChaCha20Poly1305.tagByteCount else { return nil }
            groups.append(RowGroupEntry(start: start, sealedLength: length, tag: Array(column[(at + 12)..<(at + 28)])))
        }
        let d = FrameTableDirectory(
            rowsPerGroup: Int(rows), frameCount: Int(frames), groupStarts: groups.map(\.start), commits: commits, digests: digests,
            plaintext: plaintext)
        guard d.groupCount == groups.count else { return nil }
        return .some((d, groups))
    }

    /// A row group: `{"chunkFrames": bstr, "chunkHeaders": bstr, "headers":
    /// bstr, "trailers": bstr}`.
    static func encodeRowGroup(_ r: FrameTableRowGroup) -> [UInt8] {
        CBOREncoder.encode(
            .map(
                CBORMap(text: [
                    ("headers", .bytes(r.headers)), ("trailers", .bytes(r.trailers)), ("chunkFrames", .bytes(r.chunkFrames)),
                    ("chunkHeaders", .bytes(r.chunkHeaders)),
                ])))
    }

    /// The row group in `raw`; nil when malformed. Its rows are checked
    /// against the directory when it is used.
    static func decodeRowGroup(_ raw: UnsafeRawBufferPointer) -> FrameTableRowGroup? {
        guard let fields = try? CBORDecoder.mapFieldRanges(raw), fields.count == 4 else { return nil }
        func column(_ name: String) -> [UInt8]? {
            guard let f = fields[name], f.isBytes else { return nil }
            return Array(raw[f.range])
        }
        guard let headers = column("headers"), let trailers = column("trailers"), let chunkFrames = column("chunkFrames"),
            let chunkHeaders = column("chunkHeaders")
        else { return nil }
        return FrameTableRowGroup(headers: headers, trailers: trailers, chunkFrames: chunkFrames, chunkHeaders: chunkHeaders)
    }

    // MARK: search

    /// The search index split for sealing (`Spec/index-cache.md §1`): the
    /// plaintext of each posting group, and what the term table needs of
    /// them. Each list's gaps lie end to end in one stream of postings,
    /// cut into groups of `groupBytes` bytes (the last may hold fewer).
    struct SearchSplit {
        /// The term table's fields but the group directory, or nil when no
        /// index is stored.
        var search: StoredSearch?
        /// Per term, a varint count then a varint byte length of its gaps.
        var lists: [UInt8] = []
        /// The bytes of the postings stream.
        var postingBytes = 0
        /// Bytes per posting group.
        var groupBytes = 0
        /// Each posting group's encoded plaintext, `{"postings": bstr}`.
        var groups: [[UInt8]] = []
    }

    /// Posting bytes per group in the reference writer.
    package static let defaultPostingGroupBytes = 8192

    /// `search` as a term table's columns and its postings in groups of
    /// `groupBytes` bytes.
    static func splitSearch(_ search: StoredSearch?, groupBytes: Int) -> SearchSplit {
        guard let search else { return SearchSplit() }
        var split = SearchSplit(search: search, groupBytes: max(1, groupBytes))
        var postings: [UInt8] = []
        for list in search.postings {
            let before = postings.count
            var previous: Int64 = -1
            for d in list {
                appendVarint(UInt64(Int64(d) - previous - 1), to: &postings)
                previous = Int64(d)
            }
            appendVarint(UInt64(list.count), to: &split.lists)
            appendVarint(UInt64(postings.count - before), to: &split.lists)
        }
        split.postingBytes = postings.count
        for start in stride(from: 0, to: postings.count, by: split.groupBytes) {
            let slice = Array(postings[start..<min(start + split.groupBytes, postings.count)])
            split.groups.append(CBOREncoder.encode(.map(CBORMap(text: [("postings", .bytes(slice))]))))
        }
        return split
    }

    /// A posting group's place in the sealed file: its sealed length
    /// (ciphertext and tag) and its AEAD tag.
    struct PostingGroupEntry: Sendable, Equatable {
        var sealedLength: Int
        var tag: [UInt8]
    }

    /// Bytes per row of the term table's `groups` column: sealed length
    /// (uint32 LE), tag (16).
    static let postingGroupEntryWidth = 20

    /// The term table: `{}` when no index is stored, else `{"groupBytes":
    /// uint, "groups": bstr, "lists": bstr, "postingBytes": uint,
    /// "termCount": uint, "termLengths": bstr, "terms": bstr}`.
    static func encodeSearch(_ split: SearchSplit, groups: [PostingGroupEntry]) -> [UInt8] {
        var pairs: [(String, CBOR)] = []
        if let search = split.search {
            var termBytes: [UInt8] = []
            var termLengths: [UInt8] = []
            for term in search.terms {
                appendVarint(UInt64(term.count), to: &termLengths)
                termBytes += term
            }
            var column: [UInt8] = []
            for g in groups {
                appendLE(UInt32(g.sealedLength), to: &column)
                column += g.tag
            }
            pairs += [
                ("termCount", .unsigned(UInt64(search.terms.count))), ("terms", .bytes(termBytes)),
                ("termLengths", .bytes(termLengths)), ("lists", .bytes(split.lists)),
                ("postingBytes", .unsigned(UInt64(split.postingBytes))), ("groupBytes", .unsigned(UInt64(split.groupBytes))),
                ("groups", .bytes(column)),
            ]
        }
        return CBOREncoder.encode(.map(CBORMap(text: pairs)))
    }

    /// The term table of an encoded search index over `n` entries, its
    /// posting lists left in their groups, which `load` opens (group `g`:
    /// its postings bytes, or why it did not open and check). `.some(nil)`
    /// for `{}`; nil when malformed or inconsistent: terms or lists that do
    /// not add up, a count above `n`, a list's byte length below its count
    /// or above ten bytes a varint, lists that do not fill the stream, or
    /// a group directory whose count is not the stream's in groups of
    /// `groupBytes`, or whose sealed groups do not fill `groupsSpace`
    /// bytes (nonces included).
    static func decodeSearchLazily(
        _ bytes: UnsafeRawBufferPointer, entryCount n: Int, groupsSpace: Int,
        load: @escaping @Sendable (_ group: Int, _ entry: PostingGroupEntry, _ byteCount: Int, _ offset: Int) -> Result<[UInt8], Discard>
    ) -> LazySearch?? {
        guard let fields = try? CBORDecoder.mapFieldRanges(bytes) else { return nil }
        if fields.isEmpty { return groupsSpace == 0 ? .some(nil) : nil }
        func column(_ name: String) -> UnsafeRawBufferPointer? {
            guard let f = fields[name], f.isBytes else { return nil }
            return UnsafeRawBufferPointer(rebasing: bytes[f.range])
        }
        func unsigned(_ name: String) -> UInt64? {
            guard let f = fields[name], !f.isBytes,
                case .unsigned(let v)? = try? CBORDecoder.decode(UnsafeRawBufferPointer(rebasing: bytes[f.range]))
            else { return nil }
            return v
        }
        let tag = XChaCha20Poly1305.tagByteCount
        guard fields.count == 7, let termCount = unsigned("termCount"), let postingBytes = unsigned("postingBytes"),
            let groupBytes = unsigned("groupBytes"), groupBytes >= 1, groupBytes <= UInt64(maxFileBytes),
            postingBytes <= UInt64(maxFileBytes), let termBytes = column("terms"), let termLengths = column("termLengths"),
            let lists = column("lists"), let groupColumn = column("groups"), termCount <= UInt64(termLengths.count)
        else { return nil }
        let groupCount = (Int(postingBytes) + Int(groupBytes) - 1) / Int(groupBytes)
        guard groupColumn.count == groupCount * postingGroupEntryWidth else { return nil }
        var groups: [PostingGroupEntry] = []
        groups.reserveCapacity(groupCount)
        var offsets: [Int] = []
        offsets.reserveCapacity(groupCount)
        var space = 0
        for g in 0..<groupCount {
            offsets.append(space)
            let at = g * postingGroupEntryWidth
            let sealed = Int(loadLE(UInt32.self, groupColumn, at: at))
            guard sealed > tag, sealed <= maxFileBytes else { return nil }
            groups.append(PostingGroupEntry(sealedLength: sealed, tag: Array(groupColumn[(at + 4)..<(at + 20)])))
            space += XChaCha20Poly1305.nonceByteCount + sealed
        }
        guard space == groupsSpace else { return nil }
        var lengths = VarintReader(termLengths)
        var listReader = VarintReader(lists)
        var terms: [[UInt8]] = []
        var starts: [Int] = []
        var counts: [Int32] = []
        terms.reserveCapacity(Int(termCount))
        starts.reserveCapacity(Int(termCount) + 1)
        counts.reserveCapacity(Int(termCount))
        var at = 0
        var position = 0
        for _ in 0..<Int(termCount) {
            guard let length = lengths.next(), length <= UInt64(termBytes.count - at),
                let listCount = listReader.next(), listCount <= UInt64(n), let listBytes = listReader.next(),
                listBytes >= listCount, listBytes <= 10 * listCount, listBytes <= postingBytes - UInt64(position)
            else { return nil }
            terms.append(Array(UnsafeRawBufferPointer(rebasing: termBytes[at..<(at + Int(length))])))
            at += Int(length)
            starts.append(position)
            counts.append(Int32(listCount))
            position += Int(listBytes)
        }
        starts.append(position)
        guard at == termBytes.count, lengths.atEnd, listReader.atEnd, position == Int(postingBytes) else { return nil }
        let store = PostingGroups(groups: groups, groupBytes: Int(groupBytes), postingBytes: position) { [offsets] g, entry, count in
            load(g, entry, count, offsets[g])
        }
        return .some(
            LazySearch(terms: terms, postings: EncodedPostings(groups: store, starts: starts, counts: counts, entryCount: n)))
    }

    /// A search index as loaded for one search: its terms decoded, its
    /// posting lists encoded in their sealed groups.
    struct LazySearch: Sendable {
        /// The terms, in the order stored.
        var terms: [[UInt8]]
        /// Their posting lists.
        var postings: EncodedPostings
    }

    /// The posting groups of a loaded search index: each opened (through
    /// `load`) when a list in it is first read, and kept as opened.
    final class PostingGroups: Sendable {
        /// The directory's entries.
        let groups: [PostingGroupEntry]
        /// Bytes of the postings stream per group.
        let groupBytes: Int
        /// Bytes of the postings stream.
        let postingBytes: Int
        private let load: @Sendable (Int, PostingGroupEntry, Int) -> Result<[UInt8], Discard>
        /// Opened groups' postings bytes (nil: not yet opened, or failed),
        /// how many were opened, and the first failure.
        private let state: Mutex<(opened: [[UInt8]?], loads: Int, failure: Discard?)>

        init(
            groups: [PostingGroupEntry], groupBytes: Int, postingBytes: Int,
            load: @escaping @Sendable (Int, PostingGroupEntry, Int) -> Result<[UInt8], Discard>
        ) {
            self.groups = groups
            self.groupBytes = groupBytes
            self.postingBytes = postingBytes
            self.load = load
            state = Mutex((opened: [[UInt8]?](repeating: nil, count: groups.count), loads: 0, failure: nil))
        }

        /// How many groups were opened so far. For tests.
        var loadCount: Int { state.withLock { $0.loads } }

        /// Why a group did not open or check; nil while every one opened did.
        var failure: Discard? { state.withLock { $0.failure } }

        /// The bytes of group `g` of the stream; nil when it does not open
        /// or holds another number of bytes than its place says.
        func bytes(ofGroup g: Int) -> [UInt8]? {
            if let done = state.withLock({ $0.opened[g] }) { return done }
            if state.withLock({ $0.failure }) != nil { return nil }
            let count = min(groupBytes, postingBytes - g * groupBytes)
            let result = load(g, groups[g], count)
            return state.withLock { s -> [UInt8]? in
                s.loads += 1
                switch result {
                case .success(let b) where b.count == count:
                    s.opened[g] = b
                    return b
                case .success:
                    s.failure = s.failure ?? .malformed
                case .failure(let why):
                    s.failure = s.failure ?? why
                }
                return nil
            }
        }

        /// The stream's bytes `range`, from the groups holding them; nil
        /// when one of them does not open.
        func bytes(_ range: Range<Int>) -> [UInt8]? {
            guard !range.isEmpty else { return [] }
            let first = range.lowerBound / groupBytes
            let last = (range.upperBound - 1) / groupBytes
            if first == last {
                guard let b = bytes(ofGroup: first) else { return nil }
                let base = first * groupBytes
                return Array(b[(range.lowerBound - base)..<(range.upperBound - base)])
            }
            var out: [UInt8] = []
            out.reserveCapacity(range.count)
            for g in first...last {
                guard let b = bytes(ofGroup: g) else { return nil }
                let base = g * groupBytes
                let lo = max(range.lowerBound, base) - base
                let hi = min(range.upperBound, base + b.count) - base
                out += b[lo..<hi]
            }
            return out
        }
    }

    /// The posting lists of a stored search index, left encoded (gaps as
    /// varints, `Spec/index-cache.md §1`) in sealed groups until a search
    /// needs one: each list's groups are opened and the list decoded and
    /// checked (every gap below the entry count, every document below it,
    /// so strictly ascending, the count of varints exact, filling its byte
    /// length exactly) when it is read.
    struct EncodedPostings: Sendable {
        /// The groups holding the postings stream.
        let groups: PostingGroups
        /// Where each list's gaps begin in the stream; list `i` ends where
        /// list `i + 1` begins (one more entry than lists).
        let starts: [Int]
        /// Each list's count, as stored.
        let counts: [Int32]
        /// The number of entries (documents) the lists index.
        let entryCount: Int

        /// The number of lists.
        var count: Int { counts.count }

        /// List `i` decoded; nil when it does not check or a group holding
        /// it does not open.
        func list(_ i: Int) -> [Int32]? {
            guard let bytes = groups.bytes(starts[i]..<starts[i + 1]) else { return nil }
            let n = entryCount
            var out: [Int32] = []
            out.reserveCapacity(Int(counts[i]))
            let ok = bytes.withUnsafeBytes { raw -> Bool in
                var reader = VarintReader(raw)
                var previous: Int64 = -1
                for _ in 0..<Int(counts[i]) {
                    guard let gap = reader.next(), gap < UInt64(n) else { return false }
                    previous += Int64(gap) + 1
                    guard previous < Int64(n) else { return false }
                    out.append(Int32(previous))
                }
                // The bytes the term table gives the list are exactly these varints.
                return reader.atEnd
            }
            return ok ? out : nil
        }
    }

    // MARK: numbers

    static func appendLE<T: FixedWidthInteger>(_ value: T, to out: inout [UInt8]) {
        withUnsafeBytes(of: value.littleEndian) { out.append(contentsOf: $0) }
    }

    /// The little-endian `T` at `offset` of `bytes` (the caller checked the length).
    static func loadLE<T: FixedWidthInteger>(_: T.Type, _ bytes: [UInt8], at offset: Int) -> T {
        bytes.withUnsafeBytes { loadLE(T.self, $0, at: offset) }
    }

    /// The little-endian `T` at `offset` of `raw` (the caller checked the length).
    static func loadLE<T: FixedWidthInteger>(_: T.Type, _ raw: UnsafeRawBufferPointer, at offset: Int) -> T {
        T(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: T.self))
    }

    /// Appends `value` as an unsigned LEB128 varint.
    static func appendVarint(_ value: UInt64, to out: inout [UInt8]) {
        var v = value
        while v >= 0x80 {
            out.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        out.append(UInt8(v))
    }

    /// Reads unsigned LEB128 varints, refusing overlong or over-64-bit
    /// ones, from bytes that outlive the reader (a column read in place).
    struct VarintReader {
        private let bytes: UnsafeRawBufferPointer
        /// The offset of the next byte to read.
        private(set) var position = 0

        init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

        /// A reader of `bytes` from offset `position` (at most their count).
        init(_ bytes: UnsafeRawBufferPointer, at position: Int) {
            self.bytes = bytes
            self.position = min(max(0, position), bytes.count)
        }

        var atEnd: Bool { position == bytes.count }

        /// The next `count` bytes (a view of them); nil when fewer are left.
        mutating func take(_ count: Int) -> UnsafeRawBufferPointer? {
            guard bytes.count - position >= count else { return nil }
            defer { position += count }
            return UnsafeRawBufferPointer(rebasing: bytes[position..<(position + count)])
        }

        /// The next varint; nil at the end or for a malformed one.
        mutating func next() -> UInt64? {
            // One byte, the usual case (string indices, counts): what the
            // loop below gives for it, without the loop.
            if position < bytes.count, bytes[position] < 0x80 {
                position += 1
                return UInt64(bytes[position - 1])
            }
            var value: UInt64 = 0
            var shift: UInt64 = 0
            while position < bytes.count {
                let b = bytes[position]
                position += 1
                guard shift < 64, shift < 63 || b <= 1 else { return nil }
                value |= UInt64(b & 0x7f) << shift
                if b & 0x80 == 0 {
                    // The shortest form only: no trailing zero group.
                    return b == 0 && shift > 0 ? nil : value
                }
                shift += 7
            }
            return nil
        }
    }
}

extension EntrySummary {
    /// A summary of the given fields (as the index cache stores them).
    package init(
        id: EntryID, created: Int64, utcOffsetSeconds: Int32, tags: [String], journal: String, isStarred: Bool,
        hasAttachments: Bool, hasPhotos: Bool, isDeleted: Bool, hasConflict: Bool, standing: UInt8, frame: Int
    ) {
        self.id = id
        self.created = created
        self.utcOffsetSeconds = utcOffsetSeconds
        self.tags = tags
        self.journal = journal
        self.isStarred = isStarred
        self.hasAttachments = hasAttachments
        self.hasPhotos = hasPhotos
        self.isDeleted = isDeleted
        self.hasConflict = hasConflict
        self.standing = standing
        self.frame = frame
    }
}
