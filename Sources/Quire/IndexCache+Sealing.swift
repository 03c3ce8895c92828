@_spi(Crypto) package import QuireCrypto
@_spi(Format) package import QuireFormat

/// Sealing and opening the cache file's bytes (`Spec/index-cache.md §4`):
///
/// ```
/// prefix = "QUIRE-IC" ‖ version (1) ‖ len(sealed header) (4) ‖ len(sealed summaries) (8)   (big-endian)
/// file   = prefix
///          ‖ nonce₁ (24) ‖ XChaCha20-Poly1305(key, nonce₁, pad(header),    prefix ‖ vault id)
///          ‖ nonce₂ (24) ‖ XChaCha20-Poly1305(key, nonce₂, pad(summaries), prefix ‖ vault id ‖ 0x01 ‖ header)
///          ‖ nonce₃ (24) ‖ XChaCha20-Poly1305(key, nonce₃, pad(search),    prefix ‖ vault id ‖ 0x02 ‖ header)
/// ```
///
/// The header is opened first, so that a cache of another state of the file
/// is discarded before anything else is decrypted; the other parts' associated
/// data bind them to that header (vault id, format version and file
/// identity) and to their place. The search index is sealed apart so that an
/// open that does not search yet decrypts only the summaries.
extension IndexCache {
    /// The sealed file bytes of `contents` under `key`, with fresh nonces
    /// from `random`.
    package static func seal(_ contents: Contents, key: IndexCacheKey, random: any RandomSource = SystemRandom()) -> [UInt8] {
        let header = encodeHeader(vaultID: contents.vaultID, identity: contents.identity)
        var parts = [header, encodeSummaries(contents), encodeSearch(contents.search)]
        for i in parts.indices { Padding.pad(&parts[i]) }
        defer { for i in parts.indices { wipe(&parts[i]) } }
        let tag = XChaCha20Poly1305.tagByteCount
        var prefix = magic + [formatVersion]
        appendLE(UInt32(parts[0].count + tag).byteSwapped, to: &prefix)
        appendLE(UInt64(parts[1].count + tag).byteSwapped, to: &prefix)
        let total = prefix.count + parts.reduce(0) { $0 + XChaCha20Poly1305.nonceByteCount + $1.count + tag }
        var out = [UInt8](repeating: 0, count: total)
        out.replaceSubrange(0..<prefix.count, with: prefix)
        var at = prefix.count
        for (i, part) in parts.enumerated() {
            let nonce = random.bytes(XChaCha20Poly1305.nonceByteCount)
            out.replaceSubrange(at..<(at + nonce.count), with: nonce)
            at += nonce.count
            let ad = associatedData(part: i, prefix: prefix, vaultID: contents.vaultID, header: header)
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

    /// The associated data of part 0 (header), 1 (summaries) or 2 (search).
    private static func associatedData(part: Int, prefix: [UInt8], vaultID: VaultID, header: [UInt8]) -> [UInt8] {
        part == 0 ? prefix + vaultID.bytes : prefix + vaultID.bytes + [UInt8(part)] + header
    }

    /// Where the sealed search index starts (after its nonce) in a file of
    /// this 21-byte prefix; nil when the lengths are out of range.
    static func searchStart(prefix: [UInt8]) -> Int? {
        let tag = XChaCha20Poly1305.tagByteCount
        let nonce = XChaCha20Poly1305.nonceByteCount
        guard prefix.count == prefixByteCount else { return nil }
        let headerCount = prefix[9..<13].reduce(0) { $0 << 8 | Int($1) }
        let summariesCount = prefix[13..<21].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        guard headerCount > tag, summariesCount > UInt64(tag), summariesCount <= UInt64(maxFileBytes) else { return nil }
        return prefixByteCount + 3 * nonce + headerCount + Int(summariesCount)
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
        let nonce = XChaCha20Poly1305.nonceByteCount
        let tag = XChaCha20Poly1305.tagByteCount
        guard bytes.count >= prefixByteCount, bytes.starts(with: magic), bytes[magic.count] == formatVersion else {
            return .discarded(.unknownFormat)
        }
        guard let searchStart = searchStart(prefix: Array(bytes[0..<prefixByteCount])),
            search ? bytes.count > searchStart + tag : bytes.count >= searchStart
        else { return .discarded(.unknownFormat) }
        let headerCount = bytes[9..<13].reduce(0) { $0 << 8 | Int($1) }
        let summariesCount = Int(bytes[13..<21].reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
        let headerStart = prefixByteCount + nonce
        let summariesStart = headerStart + headerCount + nonce
        let prefix = Array(bytes[0..<prefixByteCount])

        /// The padded payload of the part sealed in `range`, opened; nil
        /// when it does not verify or its padding is not canonical.
        func openPart(_ part: Int, _ range: Range<Int>, header: [UInt8]) -> [UInt8]?? {
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

        guard let openedHeader = openPart(0, headerStart..<(headerStart + headerCount), header: []) else {
            return .discarded(.notAuthentic)
        }
        guard let header = openedHeader, let (foundVault, identity) = decodeHeader(header) else { return .discarded(.malformed) }
        // The tag already binds the vault id; a mismatch is a writer bug.
        guard foundVault == vaultID else { return .discarded(.otherVault) }
        if let reason = check(identity) { return .discarded(reason) }

        guard let openedSummaries = openPart(1, summariesStart..<(summariesStart + summariesCount), header: header) else {
            return .discarded(.notAuthentic)
        }
        guard var summaries = openedSummaries else { return .discarded(.malformed) }
        defer { wipe(&summaries) }
        guard let entries = summaries.withUnsafeBytes({ decodeSummaries($0) }) else { return .discarded(.malformed) }
        var stored: StoredSearch?
        if search {
            guard let openedSearch = openPart(2, searchStart..<bytes.count, header: header) else { return .discarded(.notAuthentic) }
            guard var searchBytes = openedSearch else { return .discarded(.malformed) }
            defer { wipe(&searchBytes) }
            guard let decoded = searchBytes.withUnsafeBytes({ decodeSearch($0, entryCount: entries.count) }) else {
                return .discarded(.malformed)
            }
            stored = decoded
        }
        return .loaded(Contents(vaultID: vaultID, identity: identity, entries: entries, search: stored))
    }
}
