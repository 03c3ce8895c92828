@_spi(Crypto) package import QuireCrypto
@_spi(Format) package import QuireFormat

/// Sealing and opening the cache file's bytes (`Spec/index-cache.md §4`):
///
/// ```
/// prefix = "QUIRE-IC" ‖ version (1) ‖ len(sealed header) (4) ‖ len(sealed frame table) (8)
///          ‖ len(sealed summaries) (8)                                                      (big-endian)
/// file   = prefix
///          ‖ nonce₀ (24) ‖ XChaCha20-Poly1305(key, nonce₀, pad(header),      prefix ‖ vault id)
///          ‖ nonce₁ (24) ‖ XChaCha20-Poly1305(key, nonce₁, pad(frame table), prefix ‖ vault id ‖ 0x03 ‖ header)
///          ‖ nonce₂ (24) ‖ XChaCha20-Poly1305(key, nonce₂, pad(summaries),   prefix ‖ vault id ‖ 0x01 ‖ header)
///          ‖ nonce₃ (24) ‖ XChaCha20-Poly1305(key, nonce₃, pad(search),      prefix ‖ vault id ‖ 0x02 ‖ header)
/// ```
///
/// The header is opened first, so that a cache of another state of the file
/// is discarded before anything else is decrypted; the frame table is what
/// an open reads before unlocking (``loadFrameTable(folder:key:vaultID:)``),
/// the summaries and search index what queries read. The other parts' associated
/// data bind them to that header (vault id, format version and file
/// identity) and to their place. The search index is sealed apart so that an
/// open that does not search yet decrypts only the summaries.
extension IndexCache {
    /// The sealed file bytes of `contents` under `key`, with fresh nonces
    /// from `random`.
    package static func seal(_ contents: Contents, key: IndexCacheKey, random: any RandomSource = SystemRandom()) -> [UInt8] {
        let header = encodeHeader(vaultID: contents.vaultID, identity: contents.identity)
        var parts = [header, encodeFrameTable(contents.frameTable), encodeSummaries(contents), encodeSearch(contents.search)]
        for i in parts.indices { Padding.pad(&parts[i]) }
        defer { for i in parts.indices { wipe(&parts[i]) } }
        let tag = XChaCha20Poly1305.tagByteCount
        var prefix = magic + [formatVersion]
        appendLE(UInt32(parts[0].count + tag).byteSwapped, to: &prefix)
        appendLE(UInt64(parts[1].count + tag).byteSwapped, to: &prefix)
        appendLE(UInt64(parts[2].count + tag).byteSwapped, to: &prefix)
        let total = prefix.count + parts.reduce(0) { $0 + XChaCha20Poly1305.nonceByteCount + $1.count + tag }
        var out = [UInt8](repeating: 0, count: total)
        out.replaceSubrange(0..<prefix.count, with: prefix)
        var at = prefix.count
        for (i, part) in parts.enumerated() {
            let nonce = random.bytes(XChaCha20Poly1305.nonceByteCount)
            out.replaceSubrange(at..<(at + nonce.count), with: nonce)
            at += nonce.count
            let ad = associatedData(part: Self.partTags[i], prefix: prefix, vaultID: contents.vaultID, header: header)
            let end = at + part.count + tag
            part.withUnsafeBytes { p in
                nonce.withUnsafeBytes { n in
                    ad.withUnsafeBytes { a in
                        out.withUnsafeMutableBytes { o in
                            XChaCha20Poly1305.seal(
                                p, into: UnsafeMutableRawBufferPointer(rebasing: o[at..<end]), key: key.sealing, nonce: n, authenticating: a
                            )
                        }
                    }
                }
            }
            at = end
        }
        return out
    }

    /// The tag of each part in file order in its associated data: the
    /// header, the frame table (3), the summaries (1), the search index (2).
    private static let partTags = [0, 3, 1, 2]

    /// The associated data of part 0 (header), 3 (frame table), 1 (summaries) or 2 (search).
    private static func associatedData(part: Int, prefix: [UInt8], vaultID: VaultID, header: [UInt8]) -> [UInt8] {
        part == 0 ? prefix + vaultID.bytes : prefix + vaultID.bytes + [UInt8(part)] + header
    }

    /// The sealed lengths of the header, the frame table and the summaries
    /// in this 29-byte prefix; nil when they are out of range.
    static func partLengths(prefix: [UInt8]) -> (header: Int, frameTable: Int, summaries: Int)? {
        let tag = XChaCha20Poly1305.tagByteCount
        guard prefix.count == prefixByteCount else { return nil }
        let headerCount = prefix[9..<13].reduce(0) { $0 << 8 | Int($1) }
        let tableCount = prefix[13..<21].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        let summariesCount = prefix[21..<29].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        guard headerCount > tag, tableCount > UInt64(tag), tableCount <= UInt64(maxFileBytes), summariesCount > UInt64(tag),
            summariesCount <= UInt64(maxFileBytes)
        else { return nil }
        return (headerCount, Int(tableCount), Int(summariesCount))
    }

    /// Where the sealed search index starts (after its nonce) in a file of
    /// this 29-byte prefix; nil when the lengths are out of range.
    static func searchStart(prefix: [UInt8]) -> Int? {
        guard let n = partLengths(prefix: prefix) else { return nil }
        return prefixByteCount + 4 * XChaCha20Poly1305.nonceByteCount + n.header + n.frameTable + n.summaries
    }

    /// Where the sealed summaries start (after their nonce) in a file of
    /// this 29-byte prefix: the end of what ``loadFrameTable(folder:key:vaultID:)`` reads.
    static func summariesStart(prefix: [UInt8]) -> Int? {
        guard let n = partLengths(prefix: prefix) else { return nil }
        return prefixByteCount + 3 * XChaCha20Poly1305.nonceByteCount + n.header + n.frameTable
    }

    /// Opens cache file bytes sealed for `vaultID` under `key`. `check`
    /// decides, from the file identity in the header, whether the cache
    /// still describes the vault file (nil) or why not; the rest is
    /// decrypted only then. With `search: false` the search index is
    /// neither decrypted nor decoded, and `bytes` may end where it starts.
    /// Any failure is a
    /// ``Load/discarded(_:)``, never partial contents.
    package static func open(
        _ bytes: [UInt8], key: IndexCacheKey, vaultID: VaultID, search: Bool = true, check: (Identity) -> Discard?
    ) -> Load {
        open(byteCount: bytes.count, key: key, vaultID: vaultID, search: search, check: check) { range in
            range.upperBound <= bytes.count ? Array(bytes[range]) : nil
        }
    }

    /// ``open(_:key:vaultID:search:check:)`` over a file of `byteCount`
    /// bytes whose parts `read` gives (nil: it could not be read). Each part
    /// is read when it is needed and its sealed bytes dropped once opened,
    /// and the summaries' plaintext once parsed: the frame table is not
    /// read at all, and a 50,000-entry cache never holds its ciphertext,
    /// plaintext and decoded entries at once.
    static func open(
        byteCount: Int, key: IndexCacheKey, vaultID: VaultID, search: Bool, check: (Identity) -> Discard?,
        read: (Range<Int>) -> [UInt8]?
    ) -> Load {
        let nonce = XChaCha20Poly1305.nonceByteCount
        let tag = XChaCha20Poly1305.tagByteCount
        guard byteCount >= prefixByteCount else { return .discarded(.unknownFormat) }
        guard let prefix = read(0..<prefixByteCount) else { return .discarded(.unreadable) }
        guard prefix.starts(with: magic), prefix[magic.count] == formatVersion else { return .discarded(.unknownFormat) }
        guard let searchStart = searchStart(prefix: prefix), search ? byteCount > searchStart + tag : byteCount >= searchStart,
            let lengths = partLengths(prefix: prefix)
        else { return .discarded(.unknownFormat) }
        let headerStart = prefixByteCount + nonce
        let tableStart = headerStart + lengths.header + nonce
        let summariesStart = tableStart + lengths.frameTable + nonce

        var readFailed = false
        /// The part sealed in `range` (its nonce just before it), read now.
        func openPart(_ part: Int, _ range: Range<Int>, header: [UInt8]) -> [UInt8]?? {
            guard range.lowerBound >= nonce, let sealed = read((range.lowerBound - nonce)..<range.upperBound) else {
                readFailed = true
                return .none
            }
            return Self.openPart(
                sealed, prefix: prefix, part: part, range: nonce..<sealed.count, key: key, vaultID: vaultID, header: header)
        }

        guard let openedHeader = openPart(0, headerStart..<(headerStart + lengths.header), header: []) else {
            return .discarded(readFailed ? .unreadable : .notAuthentic)
        }
        guard let header = openedHeader, let (foundVault, identity) = decodeHeader(header) else { return .discarded(.malformed) }
        // The tag already binds the vault id; a mismatch is a writer bug.
        guard foundVault == vaultID else { return .discarded(.otherVault) }
        if let reason = check(identity) { return .discarded(reason) }

        guard let openedSummaries = openPart(1, summariesStart..<(summariesStart + lengths.summaries), header: header) else {
            return .discarded(readFailed ? .unreadable : .notAuthentic)
        }
        guard var summaries = openedSummaries else { return .discarded(.malformed) }
        guard let entries = decodeSummaries(consuming: &summaries) else { return .discarded(.malformed) }
        var stored: StoredSearch?
        if search {
            guard let openedSearch = openPart(2, searchStart..<byteCount, header: header) else {
                return .discarded(readFailed ? .unreadable : .notAuthentic)
            }
            guard var searchBytes = openedSearch else { return .discarded(.malformed) }
            defer { wipe(&searchBytes) }
            guard let decoded = searchBytes.withUnsafeBytes({ decodeSearch($0, entryCount: entries.count) }) else {
                return .discarded(.malformed)
            }
            stored = decoded
        }
        return .loaded(Contents(vaultID: vaultID, identity: identity, entries: entries, search: stored))
    }

    /// The padded payload of the part sealed in `range` of `bytes`, opened;
    /// nil when it does not verify, `.some(nil)` when its padding is not canonical.
    private static func openPart(
        _ bytes: [UInt8], prefix: [UInt8], part: Int, range: Range<Int>, key: IndexCacheKey, vaultID: VaultID, header: [UInt8]
    ) -> [UInt8]?? {
        let nonce = XChaCha20Poly1305.nonceByteCount
        let tag = XChaCha20Poly1305.tagByteCount
        guard range.lowerBound >= nonce, range.count >= tag, range.upperBound <= bytes.count else { return .none }
        let ad = associatedData(part: part, prefix: prefix, vaultID: vaultID, header: header)
        var plain = [UInt8](repeating: 0, count: range.count - tag)
        let opened = bytes.withUnsafeBytes { raw in
            ad.withUnsafeBytes { a in
                plain.withUnsafeMutableBytes { o in
                    (try? XChaCha20Poly1305.open(
                        UnsafeRawBufferPointer(rebasing: raw[range]), into: o, key: key.sealing,
                        nonce: UnsafeRawBufferPointer(rebasing: raw[(range.lowerBound - nonce)..<range.lowerBound]), authenticating: a))
                        != nil
                }
            }
        }
        guard opened else {
            wipe(&plain)
            return .none
        }
        guard let count = plain.withUnsafeBytes({ Padding.payloadCount(in: $0) }) else {
            wipe(&plain)
            return .some(nil)
        }
        plain.removeLast(plain.count - count)
        return .some(plain)
    }

    /// The file identity and frame table in cache file bytes sealed for
    /// `vaultID` under `key` (`bytes` may end where the summaries start);
    /// the table is nil when the writer stored none (the prefix held
    /// something a scan reports). Any failure is a ``Load/discarded(_:)``.
    package static func openFrameTable(_ bytes: [UInt8], key: IndexCacheKey, vaultID: VaultID) -> Result<
        (identity: Identity, table: PrefixFrameTable?), Discard
    > {
        let nonce = XChaCha20Poly1305.nonceByteCount
        guard bytes.count >= prefixByteCount, bytes.starts(with: magic), bytes[magic.count] == formatVersion else {
            return .failure(.unknownFormat)
        }
        let prefix = Array(bytes[0..<prefixByteCount])
        guard let lengths = partLengths(prefix: prefix), let end = summariesStart(prefix: prefix), bytes.count >= end - nonce else {
            return .failure(.unknownFormat)
        }
        let headerStart = prefixByteCount + nonce
        let tableStart = headerStart + lengths.header + nonce
        guard
            let openedHeader = openPart(
                bytes, prefix: prefix, part: 0, range: headerStart..<(headerStart + lengths.header), key: key, vaultID: vaultID, header: [])
        else { return .failure(.notAuthentic) }
        guard let header = openedHeader, let (foundVault, identity) = decodeHeader(header) else { return .failure(.malformed) }
        guard foundVault == vaultID else { return .failure(.otherVault) }
        guard
            let openedTable = openPart(
                bytes, prefix: prefix, part: 3, range: tableStart..<(tableStart + lengths.frameTable), key: key, vaultID: vaultID,
                header: header)
        else { return .failure(.notAuthentic) }
        guard let tableBytes = openedTable, let table = decodeFrameTable(tableBytes) else { return .failure(.malformed) }
        return .success((identity, table))
    }
}
