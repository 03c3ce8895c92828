@_spi(Crypto) package import QuireCrypto
@_spi(Format) package import QuireFormat
import Synchronization

/// Sealing and opening the cache file's bytes (`Spec/index-cache.md §4`):
///
/// ```
/// prefix = "QUIRE-IC" ‖ version (1) ‖ len(sealed header) (4) ‖ len(sealed frame directory) (8)
///          ‖ len(sealed summaries directory) (8) ‖ len(summaries' id part and row groups) (8) ‖ len(sealed search) (8)
///          ‖ len(search's posting groups) (8)   (big-endian)
/// file   = prefix
///          ‖ nonce₀ (24) ‖ XChaCha20-Poly1305(key, nonce₀, pad(header),          prefix ‖ vault id)
///          ‖ nonce₁ (24) ‖ XChaCha20-Poly1305(key, nonce₁, pad(frame directory), prefix ‖ vault id ‖ 0x03 ‖ header)
///          ‖ nonce₂ (24) ‖ XChaCha20-Poly1305(key, nonce₂, pad(summaries directory), prefix ‖ vault id ‖ 0x01 ‖ header)
///          ‖ nonce (24) ‖ XChaCha20-Poly1305(key, nonce, pad(summaries' id part),
///                             magic ‖ version ‖ vault id ‖ 0x06 ‖ rows (uint32) ‖ header)
///          ‖ for each row group s of the summaries:
///            nonce (24) ‖ XChaCha20-Poly1305(key, nonce, pad(summaries group s),
///                             magic ‖ version ‖ vault id ‖ 0x05 ‖ s ‖ rows (uint32 each) ‖ header)
///          ‖ nonce₃ (24) ‖ XChaCha20-Poly1305(key, nonce₃, pad(search term table), prefix ‖ vault id ‖ 0x02 ‖ header)
///          ‖ for each posting group p of the search index:
///            nonce (24) ‖ XChaCha20-Poly1305(key, nonce, pad(posting group p),
///                             magic ‖ version ‖ vault id ‖ 0x07 ‖ p ‖ postings bytes (uint32 each) ‖ header)
///          ‖ for each row group g of the frame table:
///            nonce (24) ‖ XChaCha20-Poly1305(key, nonce, pad(row group g),
///                             magic ‖ version ‖ vault id ‖ 0x04 ‖ g ‖ first frame ‖ rows (uint32 each) ‖ first offset (uint64))
/// ```
///
/// The header is opened first, so that a cache of another state of the file
/// is discarded before anything else is decrypted; the frame directory is
/// what an open reads before unlocking (``loadFrameTable(folder:key:vaultID:)``),
/// each row group only when a frame in it is needed, the summaries (each
/// of their row groups only when a row in it is read, their id part only
/// when an id is looked up) and search index what queries read. The other parts' associated data bind
/// them to that header (vault id, format version and file identity) and to
/// their place; a row group's binds it to its place in the table, and the
/// directory (bound to the header) lists its sealed length and tag, so
/// that a row group of another cache file is refused.
extension IndexCache {
    /// The sealed file bytes of `contents` under `key`, with fresh nonces
    /// from `random`, the summaries in row groups of `summaryRowsPerGroup`
    /// rows and the frame table in row groups of `rowsPerGroup` frames.
    /// `summaries` and `summaryIDs`, for tests, replace each encoded row
    /// group of the summaries and their encoded id part before they are
    /// sealed (a writer bug a reader must refuse).
    package static func seal(
        _ contents: Contents, key: IndexCacheKey, random: any RandomSource = SystemRandom(),
        rowsPerGroup: Int = FrameTableDirectory.defaultRowsPerGroup, summaryRowsPerGroup: Int = defaultSummaryRowsPerGroup,
        summaries: (([UInt8]) -> [UInt8])? = nil, summaryIDs: (([UInt8]) -> [UInt8])? = nil,
        postingGroupBytes: Int = defaultPostingGroupBytes
    ) -> [UInt8] {
        let nonceCount = XChaCha20Poly1305.nonceByteCount
        let tag = XChaCha20Poly1305.tagByteCount
        // The row groups first: the directories list their tags.
        let split = contents.frameTable?.split(rowsPerGroup: rowsPerGroup)
        var sealedGroups: [[UInt8]] = []
        var entries: [RowGroupEntry] = []
        if let (directory, groups) = split {
            for (g, group) in groups.enumerated() {
                var plain = encodeRowGroup(group)
                Padding.pad(&plain)
                let nonce = random.bytes(nonceCount)
                let frames = directory.frames(ofGroup: g)
                let ad = rowGroupAssociatedData(
                    vaultID: contents.vaultID, group: g, first: frames.lowerBound, rows: frames.count, start: directory.groupStarts[g])
                var out = nonce + [UInt8](repeating: 0, count: plain.count + tag)
                sealPart(plain, into: &out, at: nonceCount, nonce: nonce, ad: ad, key: key)
                let sealedLength = plain.count + tag
                wipe(&plain)
                entries.append(RowGroupEntry(start: directory.groupStarts[g], sealedLength: sealedLength, tag: Array(out.suffix(tag))))
                sealedGroups.append(out)
            }
        }
        let header = encodeHeader(vaultID: contents.vaultID, identity: contents.identity)
        // The summaries in row groups, each bound to the header and its place.
        let rows = max(1, summaryRowsPerGroup)
        // Rows are stored in ascending (date, id) order, which a reader
        // checks: entries given in another order are sorted, and the
        // search postings renumbered with them.
        var all = contents.entries
        var search = contents.search
        if zip(all, all.dropFirst()).contains(where: { !($0.summary.key < $1.summary.key) }) {
            let order = all.indices.sorted { all[$0].summary.key < all[$1].summary.key }
            var position = [Int32](repeating: 0, count: all.count)
            for (new, old) in order.enumerated() { position[old] = Int32(new) }
            all = order.map { all[$0] }
            search = search.map { found in
                StoredSearch(
                    terms: found.terms,
                    postings: found.postings.map { list in
                        list.map { p in p >= 0 && Int(p) < position.count ? position[Int(p)] : p }.sorted()
                    })
            }
        }
        var summaryGroups: [SummaryGroupEntry] = []
        var sealedSummaryGroups: [UInt8] = []
        for (g, start) in stride(from: 0, to: all.count, by: rows).enumerated() {
            let slice = all[start..<min(start + rows, all.count)]
            let encoded = encodeSummaryGroup(slice)
            var plain = summaries.map { $0(encoded) } ?? encoded
            Padding.pad(&plain)
            let nonce = random.bytes(nonceCount)
            let ad = summaryGroupAssociatedData(vaultID: contents.vaultID, group: g, rows: slice.count, header: header)
            var out = nonce + [UInt8](repeating: 0, count: plain.count + tag)
            sealPart(plain, into: &out, at: nonceCount, nonce: nonce, ad: ad, key: key)
            wipe(&plain)
            summaryGroups.append(
                SummaryGroupEntry(
                    sealedLength: out.count - nonceCount, tag: Array(out.suffix(tag)), first: slice.first!.summary.key,
                    last: slice.last!.summary.key, live: slice.reduce(0) { $0 + ($1.summary.isDeleted ? 0 : 1) }))
            sealedSummaryGroups += out
        }
        // The id part, before the row groups.
        var idPlain = summaryIDs.map { $0(encodeSummaryIDPart(all)) } ?? encodeSummaryIDPart(all)
        Padding.pad(&idPlain)
        let idNonce = random.bytes(nonceCount)
        var idSealed = idNonce + [UInt8](repeating: 0, count: idPlain.count + tag)
        sealPart(
            idPlain, into: &idSealed, at: nonceCount, nonce: idNonce,
            ad: summaryIDPartAssociatedData(vaultID: contents.vaultID, rows: all.count, header: header), key: key)
        wipe(&idPlain)
        let idEntry = SummaryIDPartEntry(sealedLength: idSealed.count - nonceCount, tag: Array(idSealed.suffix(tag)))
        sealedSummaryGroups = idSealed + sealedSummaryGroups
        // The search index's posting groups, each bound to the header and
        // its place; the term table lists their tags.
        let searchSplit = splitSearch(search, groupBytes: postingGroupBytes)
        var postingEntries: [PostingGroupEntry] = []
        var sealedPostingGroups: [UInt8] = []
        for (g, encoded) in searchSplit.groups.enumerated() {
            var plain = encoded
            Padding.pad(&plain)
            let nonce = random.bytes(nonceCount)
            let count = min(searchSplit.groupBytes, searchSplit.postingBytes - g * searchSplit.groupBytes)
            let ad = postingGroupAssociatedData(vaultID: contents.vaultID, group: g, byteCount: count, header: header)
            var out = nonce + [UInt8](repeating: 0, count: plain.count + tag)
            sealPart(plain, into: &out, at: nonceCount, nonce: nonce, ad: ad, key: key)
            wipe(&plain)
            postingEntries.append(PostingGroupEntry(sealedLength: out.count - nonceCount, tag: Array(out.suffix(tag))))
            sealedPostingGroups += out
        }
        var parts = [
            header, encodeFrameDirectory(split?.0, groups: entries),
            encodeSummaryDirectory(count: all.count, rowsPerGroup: rows, groups: summaryGroups, ids: idEntry),
            encodeSearch(searchSplit, groups: postingEntries),
        ]
        for i in parts.indices { Padding.pad(&parts[i]) }
        defer { for i in parts.indices { wipe(&parts[i]) } }
        var prefix = magic + [formatVersion]
        appendLE(UInt32(parts[0].count + tag).byteSwapped, to: &prefix)
        appendLE(UInt64(parts[1].count + tag).byteSwapped, to: &prefix)
        appendLE(UInt64(parts[2].count + tag).byteSwapped, to: &prefix)
        appendLE(UInt64(sealedSummaryGroups.count).byteSwapped, to: &prefix)
        appendLE(UInt64(parts[3].count + tag).byteSwapped, to: &prefix)
        appendLE(UInt64(sealedPostingGroups.count).byteSwapped, to: &prefix)
        let total =
            prefix.count + parts.reduce(0) { $0 + nonceCount + $1.count + tag } + sealedSummaryGroups.count
            + sealedPostingGroups.count + sealedGroups.reduce(0) { $0 + $1.count }
        var out = [UInt8](repeating: 0, count: total)
        out.replaceSubrange(0..<prefix.count, with: prefix)
        var at = prefix.count
        for (i, part) in parts.enumerated() {
            if i == 3 {
                // The summaries' row groups lie between their directory and the search part.
                out.replaceSubrange(at..<(at + sealedSummaryGroups.count), with: sealedSummaryGroups)
                at += sealedSummaryGroups.count
            }
            let nonce = random.bytes(nonceCount)
            out.replaceSubrange(at..<(at + nonce.count), with: nonce)
            at += nonce.count
            let ad = associatedData(part: Self.partTags[i], prefix: prefix, vaultID: contents.vaultID, header: header)
            sealPart(part, into: &out, at: at, nonce: nonce, ad: ad, key: key)
            at += part.count + tag
        }
        // The posting groups follow the search index's term table.
        out.replaceSubrange(at..<(at + sealedPostingGroups.count), with: sealedPostingGroups)
        at += sealedPostingGroups.count
        for g in sealedGroups {
            out.replaceSubrange(at..<(at + g.count), with: g)
            at += g.count
        }
        return out
    }

    /// Rows per row group of the summaries in the reference writer.
    package static let defaultSummaryRowsPerGroup = 1024

    /// The associated data of the summaries' row group `g` of `rows` rows:
    /// `magic ‖ version ‖ vault id ‖ 0x05 ‖ g ‖ rows` (uint32 BE each) `‖
    /// header`: bound to the file identity and its place; the summaries'
    /// directory, bound to the prefix and header, lists its tag.
    static func summaryGroupAssociatedData(vaultID: VaultID, group g: Int, rows: Int, header: [UInt8]) -> [UInt8] {
        var ad = magic + [formatVersion] + vaultID.bytes + [5]
        appendLE(UInt32(truncatingIfNeeded: g).byteSwapped, to: &ad)
        appendLE(UInt32(truncatingIfNeeded: rows).byteSwapped, to: &ad)
        return ad + header
    }

    /// The associated data of the search index's posting group `g` holding
    /// `byteCount` bytes of the postings stream: `magic ‖ version ‖ vault
    /// id ‖ 0x07 ‖ g ‖ byteCount` (uint32 BE each) `‖ header`: bound to the
    /// file identity and its place; the term table, bound to the prefix
    /// and header, lists its sealed length and tag.
    static func postingGroupAssociatedData(vaultID: VaultID, group g: Int, byteCount: Int, header: [UInt8]) -> [UInt8] {
        var ad = magic + [formatVersion] + vaultID.bytes + [7]
        appendLE(UInt32(truncatingIfNeeded: g).byteSwapped, to: &ad)
        appendLE(UInt32(truncatingIfNeeded: byteCount).byteSwapped, to: &ad)
        return ad + header
    }

    /// Opens the search index's posting group `g` from `sealed` (its
    /// nonce, then its ciphertext and tag) when its length and tag are the
    /// ones the term table lists, it authenticates, and it holds
    /// `{"postings": bstr}` of `byteCount` bytes: those bytes.
    static func openPostingGroup(
        _ sealed: [UInt8], group g: Int, byteCount: Int, entry: PostingGroupEntry, key: IndexCacheKey, vaultID: VaultID,
        header: [UInt8]
    ) -> Result<[UInt8], Discard> {
        let ad = postingGroupAssociatedData(vaultID: vaultID, group: g, byteCount: byteCount, header: header)
        return openListedPart(sealed, sealedLength: entry.sealedLength, tag: entry.tag, ad: ad, key: key) { bytes, payload in
            // The postings are copied out: the opened buffer is wiped.
            defer { wipe(&bytes) }
            return bytes.withUnsafeBytes { raw -> [UInt8]? in
                let p = UnsafeRawBufferPointer(rebasing: raw[payload])
                guard let fields = try? CBORDecoder.mapFieldRanges(p), fields.count == 1, let f = fields["postings"], f.isBytes,
                    f.range.count == byteCount
                else { return nil }
                return Array(p[f.range])
            }
        }
    }

    /// The associated data of the summaries' id part for `rows` rows:
    /// `magic ‖ version ‖ vault id ‖ 0x06 ‖ rows` (uint32 BE) `‖ header`:
    /// bound to the file identity; the summaries' directory lists its tag.
    static func summaryIDPartAssociatedData(vaultID: VaultID, rows: Int, header: [UInt8]) -> [UInt8] {
        var ad = magic + [formatVersion] + vaultID.bytes + [6]
        appendLE(UInt32(truncatingIfNeeded: rows).byteSwapped, to: &ad)
        return ad + header
    }

    /// Opens the summaries' id part from `sealed` (its nonce, then its
    /// ciphertext and tag) when its length and tag are the ones the
    /// directory lists, it authenticates, and it checks
    /// (``SummaryIDPart/make(_:payload:count:)``).
    static func openSummaryIDPart(
        _ sealed: [UInt8], rows: Int, entry: SummaryIDPartEntry, key: IndexCacheKey, vaultID: VaultID, header: [UInt8]
    ) -> Result<SummaryIDPart, Discard> {
        let ad = summaryIDPartAssociatedData(vaultID: vaultID, rows: rows, header: header)
        return openListedPart(sealed, sealedLength: entry.sealedLength, tag: entry.tag, ad: ad, key: key) { bytes, payload in
            SummaryIDPart.make(bytes, payload: payload, count: rows)
        }
    }

    /// Opens the summaries' row group `g` from `sealed` (its nonce, then
    /// its ciphertext and tag) when its length and tag are the ones the
    /// directory lists, it authenticates, and its rows check
    /// (``SummaryRowGroup/make(_:payload:rows:first:last:live:)``).
    static func openSummaryGroup(
        _ sealed: [UInt8], group g: Int, rows: Int, entry: SummaryGroupEntry, key: IndexCacheKey, vaultID: VaultID, header: [UInt8]
    ) -> Result<SummaryRowGroup, Discard> {
        let ad = summaryGroupAssociatedData(vaultID: vaultID, group: g, rows: rows, header: header)
        return openListedPart(sealed, sealedLength: entry.sealedLength, tag: entry.tag, ad: ad, key: key) { bytes, payload in
            SummaryRowGroup.make(bytes, payload: payload, rows: rows, first: entry.first, last: entry.last, live: entry.live)
        }
    }

    /// Opens a part a directory lists by its sealed length and tag (a
    /// summaries' row group, the id part, a posting group) from `sealed`
    /// (its nonce, then its ciphertext and tag): refused unless the length
    /// and tag are the listed ones and it authenticates under `ad`; then
    /// `make` checks the opened bytes and their payload range (nil:
    /// malformed). The opened bytes are wiped on failure; on success they
    /// are `make`'s to keep or wipe.
    private static func openListedPart<T>(
        _ sealed: [UInt8], sealedLength: Int, tag listed: [UInt8], ad: [UInt8], key: IndexCacheKey,
        make: (inout [UInt8], Range<Int>) -> T?
    ) -> Result<T, Discard> {
        let nonce = XChaCha20Poly1305.nonceByteCount
        let tag = XChaCha20Poly1305.tagByteCount
        guard sealed.count == nonce + sealedLength, sealed.suffix(tag).elementsEqual(listed) else { return .failure(.notAuthentic) }
        var bytes = sealed
        guard let opened = openPart(inPlace: &bytes, ad: ad, range: nonce..<bytes.count, key: key) else {
            wipe(&bytes)
            return .failure(.notAuthentic)
        }
        guard let payload = opened, let made = make(&bytes, payload) else {
            wipe(&bytes)
            return .failure(.malformed)
        }
        return .success(made)
    }

    /// Seals `plain` into `out` at `at` (ciphertext then tag).
    private static func sealPart(_ plain: [UInt8], into out: inout [UInt8], at: Int, nonce: [UInt8], ad: [UInt8], key: IndexCacheKey) {
        let end = at + plain.count + XChaCha20Poly1305.tagByteCount
        plain.withUnsafeBytes { p in
            nonce.withUnsafeBytes { n in
                ad.withUnsafeBytes { a in
                    out.withUnsafeMutableBytes { o in
                        XChaCha20Poly1305.seal(
                            p, into: UnsafeMutableRawBufferPointer(rebasing: o[at..<end]), key: key.sealing, nonce: n, authenticating: a)
                    }
                }
            }
        }
    }

    /// The associated data of row group `g`: `magic ‖ version ‖ vault id ‖
    /// 0x04 ‖ g ‖ first frame ‖ rows` (uint32 BE each) `‖ first offset`
    /// (uint64 BE). Not bound to the header, so that a row group a rewrite
    /// does not change could be kept; the directory lists its tag.
    static func rowGroupAssociatedData(vaultID: VaultID, group g: Int, first: Int, rows: Int, start: UInt64) -> [UInt8] {
        var ad = magic + [formatVersion] + vaultID.bytes + [4]
        appendLE(UInt32(truncatingIfNeeded: g).byteSwapped, to: &ad)
        appendLE(UInt32(truncatingIfNeeded: first).byteSwapped, to: &ad)
        appendLE(UInt32(truncatingIfNeeded: rows).byteSwapped, to: &ad)
        appendLE(start.byteSwapped, to: &ad)
        return ad
    }

    /// Opens row group `g` of `directory` from `sealed` (its nonce, then
    /// its ciphertext and tag) when its length and tag are the ones the
    /// directory lists and it authenticates; nil otherwise. The plaintext
    /// is wiped once decoded.
    static func openRowGroup(
        _ sealed: [UInt8], group g: Int, directory: FrameTableDirectory, entry: RowGroupEntry, key: IndexCacheKey, vaultID: VaultID
    ) -> FrameTableRowGroup? {
        let nonce = XChaCha20Poly1305.nonceByteCount
        let tag = XChaCha20Poly1305.tagByteCount
        guard g < directory.groupCount, sealed.count == nonce + entry.sealedLength, sealed.suffix(tag).elementsEqual(entry.tag) else {
            return nil
        }
        let frames = directory.frames(ofGroup: g)
        let ad = rowGroupAssociatedData(vaultID: vaultID, group: g, first: frames.lowerBound, rows: frames.count, start: entry.start)
        var bytes = sealed
        defer { wipe(&bytes) }
        guard let opened = openPart(inPlace: &bytes, ad: ad, range: nonce..<bytes.count, key: key), let payload = opened else { return nil }
        return bytes.withUnsafeBytes { decodeRowGroup(UnsafeRawBufferPointer(rebasing: $0[payload])) }
    }

    /// The tag of each part in file order in its associated data: the
    /// header, the frame directory (3), the summaries (1), the search index (2).
    private static let partTags = [0, 3, 1, 2]

    /// The associated data of part 0 (header), 3 (frame directory), 1 (summaries) or 2 (search).
    private static func associatedData(part: Int, prefix: [UInt8], vaultID: VaultID, header: [UInt8]) -> [UInt8] {
        part == 0 ? prefix + vaultID.bytes : prefix + vaultID.bytes + [UInt8(part)] + header
    }

    /// The sealed lengths of the header, the frame directory, the
    /// summaries' directory, the summaries' row groups (all of them, their
    /// nonces included), the search index's term table and its posting
    /// groups (all of them, their nonces included) in this prefix; nil when
    /// they are out of range.
    static func partLengths(prefix: [UInt8]) -> (
        header: Int, frameTable: Int, summaries: Int, summaryGroups: Int, search: Int, postingGroups: Int
    )? {
        let tag = XChaCha20Poly1305.tagByteCount
        guard prefix.count == prefixByteCount else { return nil }
        func field(_ range: Range<Int>) -> UInt64 { prefix[range].reduce(UInt64(0)) { $0 << 8 | UInt64($1) } }
        let headerCount = Int(field(9..<13))
        let tableCount = field(13..<21)
        let summariesCount = field(21..<29)
        let summaryGroupsCount = field(29..<37)
        let searchCount = field(37..<45)
        let postingGroupsCount = field(45..<53)
        let limit = UInt64(maxFileBytes)
        guard headerCount > tag, tableCount > UInt64(tag), tableCount <= limit, summariesCount > UInt64(tag), summariesCount <= limit,
            summaryGroupsCount <= limit, searchCount > UInt64(tag), searchCount <= limit, postingGroupsCount <= limit
        else { return nil }
        return (
            headerCount, Int(tableCount), Int(summariesCount), Int(summaryGroupsCount), Int(searchCount), Int(postingGroupsCount)
        )
    }

    /// Where the sealed search index starts (after its nonce) in a file of
    /// this prefix; nil when the lengths are out of range.
    static func searchStart(prefix: [UInt8]) -> Int? {
        guard let n = partLengths(prefix: prefix) else { return nil }
        return prefixByteCount + 4 * XChaCha20Poly1305.nonceByteCount + n.header + n.frameTable + n.summaries + n.summaryGroups
    }

    /// Where the row groups start in a file of this prefix (the end of the
    /// search index's posting groups); nil when the lengths are out of range.
    static func rowGroupsStart(prefix: [UInt8]) -> Int? {
        guard let n = partLengths(prefix: prefix), let s = searchStart(prefix: prefix) else { return nil }
        return s + n.search + n.postingGroups
    }

    /// Where the sealed summaries' directory starts (after its nonce) in a
    /// file of this prefix: the end of what ``loadFrameTable(folder:key:vaultID:)`` reads first.
    static func summariesStart(prefix: [UInt8]) -> Int? {
        guard let n = partLengths(prefix: prefix) else { return nil }
        return prefixByteCount + 3 * XChaCha20Poly1305.nonceByteCount + n.header + n.frameTable
    }

    /// Opens cache file bytes sealed for `vaultID` under `key`. `check`
    /// decides, from the file identity in the header, whether the cache
    /// still describes the vault file (nil) or why not; the rest is
    /// decrypted only then. With `search: false` the search index is
    /// neither decrypted nor decoded, and `bytes` may end where it starts.
    /// With `checkEveryRow` (the default) every row group of the summaries
    /// is opened and checked now, else when a row in it is first read.
    /// Any failure found here is a ``Load/discarded(_:)``, never partial
    /// contents.
    package static func open(
        _ bytes: [UInt8], key: IndexCacheKey, vaultID: VaultID, search: Bool = true, checkEveryRow: Bool = true,
        check: (Identity) -> Discard?
    ) -> Load {
        open(byteCount: bytes.count, key: key, vaultID: vaultID, search: search, checkEveryRow: checkEveryRow, check: check) { range in
            range.upperBound <= bytes.count ? Array(bytes[range]) : nil
        }
    }

    /// ``open(_:key:vaultID:search:checkEveryRow:check:)`` over a file of
    /// `byteCount` bytes whose parts `read` gives (nil: it could not be
    /// read). Each part is read when it is needed and its sealed bytes
    /// dropped once opened: the frame table is not read at all, and the
    /// summaries' row groups are read (through `read`, which must stay
    /// usable while the summaries are) and kept as opened, decoded row by
    /// row (``PackedSummaries``). With `lazyPostings`, the search index's
    /// posting lists are left encoded (``EncodedPostings``).
    static func open(
        byteCount: Int, key: IndexCacheKey, vaultID: VaultID, search: Bool, checkEveryRow: Bool, lazyPostings: Bool = false,
        check: (Identity) -> Discard?,
        read: @escaping @Sendable (Range<Int>) -> [UInt8]?
    ) -> Load {
        let nonce = XChaCha20Poly1305.nonceByteCount
        guard byteCount >= prefixByteCount else { return .discarded(.unknownFormat) }
        guard let prefix = read(0..<prefixByteCount) else { return .discarded(.unreadable) }
        guard prefix.starts(with: magic), prefix[magic.count] == formatVersion else { return .discarded(.unknownFormat) }
        guard let searchStart = searchStart(prefix: prefix), let lengths = partLengths(prefix: prefix),
            search ? byteCount >= searchStart + lengths.search + lengths.postingGroups : byteCount >= searchStart
        else { return .discarded(.unknownFormat) }
        let headerStart = prefixByteCount + nonce
        let tableStart = headerStart + lengths.header + nonce
        let summariesStart = tableStart + lengths.frameTable + nonce

        var readFailed = false
        /// Reads the part sealed in `range` (its nonce just before it) into
        /// `buffer` and opens it there, in place: where its payload is (see
        /// ``openPart(inPlace:prefix:part:range:key:vaultID:header:)``).
        func openPart(_ part: Int, _ range: Range<Int>, header: [UInt8], into buffer: inout [UInt8]) -> Range<Int>?? {
            // Read straight into `buffer`, so that it is the array's only
            // reference and opening it in place copies nothing.
            buffer = range.lowerBound >= nonce ? read((range.lowerBound - nonce)..<range.upperBound) ?? [] : []
            guard buffer.count == nonce + range.count else {
                readFailed = true
                return .none
            }
            return Self.openPart(
                inPlace: &buffer, prefix: prefix, part: part, range: nonce..<buffer.count, key: key, vaultID: vaultID, header: header)
        }

        var headerBuffer: [UInt8] = []
        guard let headerPayload = openPart(0, headerStart..<(headerStart + lengths.header), header: [], into: &headerBuffer) else {
            return .discarded(readFailed ? .unreadable : .notAuthentic)
        }
        guard let headerPayload else { return .discarded(.malformed) }
        let header = Array(headerBuffer[headerPayload])
        guard let (foundVault, identity) = decodeHeader(header) else { return .discarded(.malformed) }
        // The tag already binds the vault id; a mismatch is a writer bug.
        guard foundVault == vaultID else { return .discarded(.otherVault) }
        if let reason = check(identity) { return .discarded(reason) }

        // The summaries' directory now; each row group when a row in it
        // is read (PackedSummaries), from its place after the directory.
        var directoryBytes: [UInt8] = []
        defer { wipe(&directoryBytes) }
        guard
            let directoryPayload = openPart(1, summariesStart..<(summariesStart + lengths.summaries), header: header, into: &directoryBytes)
        else {
            return .discarded(readFailed ? .unreadable : .notAuthentic)
        }
        guard let directoryPayload,
            let directory = directoryBytes.withUnsafeBytes({
                decodeSummaryDirectory(UnsafeRawBufferPointer(rebasing: $0[directoryPayload]))
            })
        else { return .discarded(.malformed) }
        var places: [Range<Int>] = []
        places.reserveCapacity(directory.groups.count)
        let idPlace = (summariesStart + lengths.summaries)..<(summariesStart + lengths.summaries + nonce + directory.ids.sealedLength)
        var at = idPlace.upperBound
        for g in directory.groups {
            places.append(at..<(at + nonce + g.sealedLength))
            at += nonce + g.sealedLength
        }
        // The groups fill the space the prefix gives them, exactly.
        guard at == summariesStart + lengths.summaries + lengths.summaryGroups else { return .discarded(.malformed) }
        let (count, rows, groups, idEntry) = directory
        let packed = PackedSummaries(
            count: count, rowsPerGroup: rows, groups: groups,
            load: { [places] g in
                guard let sealed = read(places[g]) else { return .failure(.unreadable) }
                return openSummaryGroup(
                    sealed, group: g, rows: min(rows, count - g * rows), entry: groups[g], key: key, vaultID: vaultID, header: header)
            },
            loadIDs: {
                guard let sealed = read(idPlace) else { return .failure(.unreadable) }
                return openSummaryIDPart(sealed, rows: count, entry: idEntry, key: key, vaultID: vaultID, header: header)
            })
        if checkEveryRow, let why = packed.loadAll() { return .discarded(why) }
        var stored: StoredSearch?
        if search {
            var searchBytes: [UInt8] = []
            defer { wipe(&searchBytes) }
            guard let searchPayload = openPart(2, searchStart..<(searchStart + lengths.search), header: header, into: &searchBytes) else {
                return .discarded(readFailed ? .unreadable : .notAuthentic)
            }
            // The posting groups lie after the term table, each read and
            // opened when a list in it is first read.
            let groupsStart = searchStart + lengths.search
            let entryCount = packed.count
            guard let searchPayload,
                let decoded = searchBytes.withUnsafeBytes({
                    decodeSearchLazily(
                        UnsafeRawBufferPointer(rebasing: $0[searchPayload]), entryCount: entryCount, groupsSpace: lengths.postingGroups
                    ) { g, entry, byteCount, offset in
                        let place = (groupsStart + offset)..<(groupsStart + offset + nonce + entry.sealedLength)
                        guard let sealed = read(place) else { return .failure(.unreadable) }
                        return openPostingGroup(
                            sealed, group: g, byteCount: byteCount, entry: entry, key: key, vaultID: vaultID, header: header)
                    }
                })
            else {
                return .discarded(.malformed)
            }
            if lazyPostings {
                return .loaded(Contents(vaultID: vaultID, identity: identity, packed: packed, search: nil, lazySearch: decoded))
            }
            if let decoded {
                var postings: [[Int32]] = []
                postings.reserveCapacity(decoded.postings.count)
                for i in 0..<decoded.postings.count {
                    guard let list = decoded.postings.list(i) else { return .discarded(decoded.postings.groups.failure ?? .malformed) }
                    postings.append(list)
                }
                stored = StoredSearch(terms: decoded.terms, postings: postings)
            }
        }
        return .loaded(Contents(vaultID: vaultID, identity: identity, packed: packed, search: stored))
    }

    /// Opens the part sealed in `range` of `bytes` (its nonce just before
    /// it) in place: its plaintext is written over its ciphertext, with no
    /// second buffer. The range of the payload in `bytes`, padding removed;
    /// nil when it does not verify (`bytes` then unchanged), `.some(nil)`
    /// when its padding is not canonical.
    private static func openPart(
        inPlace bytes: inout [UInt8], prefix: [UInt8], part: Int, range: Range<Int>, key: IndexCacheKey, vaultID: VaultID,
        header: [UInt8]
    ) -> Range<Int>?? {
        openPart(inPlace: &bytes, ad: associatedData(part: part, prefix: prefix, vaultID: vaultID, header: header), range: range, key: key)
    }

    /// ``openPart(inPlace:prefix:part:range:key:vaultID:header:)`` with the associated data `ad`.
    private static func openPart(inPlace bytes: inout [UInt8], ad: [UInt8], range: Range<Int>, key: IndexCacheKey) -> Range<Int>?? {
        let nonce = XChaCha20Poly1305.nonceByteCount
        let tag = XChaCha20Poly1305.tagByteCount
        guard range.lowerBound >= nonce, range.count >= tag, range.upperBound <= bytes.count else { return .none }
        let plain = range.lowerBound..<(range.upperBound - tag)
        let opened = bytes.withUnsafeMutableBytes { raw in
            ad.withUnsafeBytes { a in
                let n = UnsafeRawBufferPointer(rebasing: raw[(range.lowerBound - nonce)..<range.lowerBound])
                return
                    (try? XChaCha20Poly1305.open(
                        UnsafeRawBufferPointer(rebasing: raw[range]), into: UnsafeMutableRawBufferPointer(rebasing: raw[plain]),
                        key: key.sealing, nonce: n, authenticating: a)) != nil
            }
        }
        guard opened else { return .none }
        guard let count = bytes.withUnsafeBytes({ Padding.payloadCount(in: UnsafeRawBufferPointer(rebasing: $0[plain])) }) else {
            return .some(nil)
        }
        return .some(plain.lowerBound..<(plain.lowerBound + count))
    }

    /// The file identity and frame table in cache file bytes sealed for
    /// `vaultID` under `key`, every row group opened and checked now (for
    /// tests); the table is nil when the writer stored none (the prefix
    /// held something a scan reports). Any failure is a ``Load/discarded(_:)``.
    package static func openFrameTable(_ bytes: [UInt8], key: IndexCacheKey, vaultID: VaultID) -> Result<
        (identity: Identity, table: CachedFrameTable?), Discard
    > {
        let nonce = XChaCha20Poly1305.nonceByteCount
        guard bytes.count >= prefixByteCount else { return .failure(.unknownFormat) }
        let prefix = Array(bytes[0..<prefixByteCount])
        guard let lengths = partLengths(prefix: prefix), let end = summariesStart(prefix: prefix), bytes.count >= end - nonce else {
            return .failure(.unknownFormat)
        }
        let tableStart = prefixByteCount + nonce + lengths.header
        var headerPart = Array(bytes[prefixByteCount..<tableStart])
        var tablePart = Array(bytes[tableStart..<(end - nonce)])
        let opened = openFrameTable(
            prefix: prefix, headerPart: &headerPart, tablePart: &tablePart, key: key, vaultID: vaultID, fileSize: bytes.count
        ) { range in
            range.upperBound <= bytes.count ? Array(bytes[range]) : nil
        }
        if case .success(let found) = opened, let table = found.table {
            for g in 0..<table.directory.groupCount where table.load(g) == nil { return .failure(.notAuthentic) }
        }
        return opened
    }

    /// Where each row group's sealed bytes (its nonce first) are in the
    /// cache file `bytes`; nil when its header or frame directory does not
    /// open or it has none. For tests.
    package static func rowGroupPlaces(_ bytes: [UInt8], key: IndexCacheKey, vaultID: VaultID) -> [Range<Int>]? {
        let nonce = XChaCha20Poly1305.nonceByteCount
        guard bytes.count >= prefixByteCount else { return nil }
        let prefix = Array(bytes[0..<prefixByteCount])
        guard let lengths = partLengths(prefix: prefix), let end = summariesStart(prefix: prefix), bytes.count >= end - nonce else {
            return nil
        }
        let tableStart = prefixByteCount + nonce + lengths.header
        var headerPart = Array(bytes[prefixByteCount..<tableStart])
        var tablePart = Array(bytes[tableStart..<(end - nonce)])
        final class Seen: Sendable { let ranges = Mutex<[Range<Int>]>([]) }
        let seen = Seen()
        let opened = openFrameTable(
            prefix: prefix, headerPart: &headerPart, tablePart: &tablePart, key: key, vaultID: vaultID, fileSize: bytes.count
        ) { range in
            seen.ranges.withLock { $0.append(range) }
            return nil
        }
        guard case .success(let found) = opened, let table = found.table else { return nil }
        for g in 0..<table.directory.groupCount { _ = table.load(g) }
        return seen.ranges.withLock { $0 }
    }

    /// Where each row group of the summaries (its nonce first) is in the
    /// cache file `bytes`; nil when its header or the summaries' directory
    /// does not open. For tests.
    package static func summaryGroupPlaces(_ bytes: [UInt8], key: IndexCacheKey, vaultID: VaultID) -> [Range<Int>]? {
        placesRead(bytes, key: key, vaultID: vaultID) { packed in
            for g in packed.groups.indices { _ = packed.open(group: g) }
        }
    }

    /// Where each posting group of the search index (its nonce first) is
    /// in the cache file `bytes`, in order; nil when its header, the
    /// summaries' directory or the search index's term table does not open.
    /// For tests.
    package static func postingGroupPlaces(_ bytes: [UInt8], key: IndexCacheKey, vaultID: VaultID) -> [Range<Int>]? {
        final class Seen: Sendable { let ranges = Mutex<[Range<Int>]>([]) }
        let seen = Seen()
        let load = open(
            byteCount: bytes.count, key: key, vaultID: vaultID, search: true, checkEveryRow: false, lazyPostings: true,
            check: { _ in nil },
            read: { range in
                guard range.upperBound <= bytes.count else { return nil }
                seen.ranges.withLock { $0.append(range) }
                return Array(bytes[range])
            })
        guard case .loaded(let contents) = load, let lazy = contents.lazySearch else { return nil }
        let before = seen.ranges.withLock { $0.count }
        let groups = lazy.postings.groups
        for g in groups.groups.indices { _ = groups.bytes(ofGroup: g) }
        return seen.ranges.withLock { Array($0[before...]) }
    }

    /// Where the summaries' id part (its nonce first) is in the cache file
    /// `bytes`; nil when its header or the summaries' directory does not
    /// open. For tests.
    package static func summaryIDPartPlace(_ bytes: [UInt8], key: IndexCacheKey, vaultID: VaultID) -> Range<Int>? {
        let places = placesRead(bytes, key: key, vaultID: vaultID) { packed in
            _ = packed.rows(withIDsIn: IDKey(high: 0, low: 0)...IDKey(high: 0, low: 0))
        }
        guard let places, places.count == 1 else { return nil }
        return places[0]
    }

    /// The ranges of the cache file `bytes` that `touch` reads through the
    /// summaries a load gives (after the load's own reads), in order; nil
    /// when its header or the summaries' directory does not open.
    private static func placesRead(
        _ bytes: [UInt8], key: IndexCacheKey, vaultID: VaultID, touching touch: (PackedSummaries) -> Void
    ) -> [Range<Int>]? {
        final class Seen: Sendable { let ranges = Mutex<[Range<Int>]>([]) }
        let seen = Seen()
        let read: @Sendable (Range<Int>) -> [UInt8]? = { range in
            guard range.upperBound <= bytes.count else { return nil }
            seen.ranges.withLock { $0.append(range) }
            return Array(bytes[range])
        }
        let load = open(
            byteCount: bytes.count, key: key, vaultID: vaultID, search: false, checkEveryRow: false, check: { _ in nil }, read: read)
        guard case .loaded(let contents) = load, let packed = contents.packed else { return nil }
        let before = seen.ranges.withLock { $0.count }
        touch(packed)
        return seen.ranges.withLock { Array($0[before...]) }
    }

    /// ``openFrameTable(_:key:vaultID:)`` over the 53-byte `prefix`, the
    /// header's nonce and sealed bytes and the frame directory's, both
    /// opened in place, of a cache file of `fileSize` bytes: the row groups
    /// are not read here but by the table's loader, through `read`, when
    /// they are needed. The file must end where the last row group does.
    static func openFrameTable(
        prefix: [UInt8], headerPart: inout [UInt8], tablePart: inout [UInt8], key: IndexCacheKey, vaultID: VaultID, fileSize: Int,
        read: @escaping @Sendable (Range<Int>) -> [UInt8]?
    ) -> Result<(identity: Identity, table: CachedFrameTable?), Discard> {
        let nonce = XChaCha20Poly1305.nonceByteCount
        guard prefix.count == prefixByteCount, prefix.starts(with: magic), prefix[magic.count] == formatVersion,
            let lengths = partLengths(prefix: prefix), headerPart.count == nonce + lengths.header,
            tablePart.count == nonce + lengths.frameTable, let groupsStart = rowGroupsStart(prefix: prefix)
        else { return .failure(.unknownFormat) }
        guard
            let openedHeader = openPart(
                inPlace: &headerPart, prefix: prefix, part: 0, range: nonce..<headerPart.count, key: key, vaultID: vaultID, header: [])
        else { return .failure(.notAuthentic) }
        guard let headerRange = openedHeader, let (foundVault, identity) = decodeHeader(Array(headerPart[headerRange])) else {
            return .failure(.malformed)
        }
        guard foundVault == vaultID else { return .failure(.otherVault) }
        guard
            let openedTable = openPart(
                inPlace: &tablePart, prefix: prefix, part: 3, range: nonce..<tablePart.count, key: key, vaultID: vaultID,
                header: Array(headerPart[headerRange]))
        else { return .failure(.notAuthentic) }
        defer { wipe(&tablePart) }
        guard let tableRange = openedTable, let decoded = decodeFrameDirectory(Array(tablePart[tableRange])) else {
            return .failure(.malformed)
        }
        guard let (directory, entries) = decoded else {
            return fileSize == groupsStart ? .success((identity, nil)) : .failure(.unknownFormat)
        }
        var ranges: [Range<Int>] = []
        var at = groupsStart
        for e in entries {
            ranges.append(at..<(at + nonce + e.sealedLength))
            at += nonce + e.sealedLength
        }
        let places = ranges
        // A truncated or extended file is refused before anything is used.
        guard at == fileSize else { return .failure(.unknownFormat) }
        let load: @Sendable (Int) -> FrameTableRowGroup? = { g in
            guard g >= 0, g < places.count, let sealed = read(places[g]) else { return nil }
            return openRowGroup(sealed, group: g, directory: directory, entry: entries[g], key: key, vaultID: vaultID)
        }
        return .success((identity, CachedFrameTable(directory: directory, load: load)))
    }
}
