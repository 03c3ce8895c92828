package import QuireCrypto
package import QuireFormat

/// Sealing and opening the cache file's bytes (`Spec/index-cache.md §4`):
///
/// ```
/// "QUIRE-IC" ‖ version (1) ‖ len(sealed header) (4, big-endian)
/// ‖ nonce₁ (24) ‖ XChaCha20-Poly1305(key, nonce₁, pad(header), ad₁)
/// ‖ nonce₂ (24) ‖ XChaCha20-Poly1305(key, nonce₂, pad(body), ad₂)
/// ad₁ = prefix (13) ‖ vault id
/// ad₂ = prefix (13) ‖ vault id ‖ header
/// ```
///
/// The header is opened first, so that a cache of another state of the file
/// is discarded before its body is decrypted; the body's associated data
/// binds it to that header (vault id, format version and file identity).
extension IndexCache {
    /// The sealed file bytes of `contents` under `key`, with fresh nonces
    /// from `random`.
    package static func seal(_ contents: Contents, key: IndexCacheKey, random: any RandomSource = SystemRandom()) -> [UInt8] {
        let header = encodeHeader(vaultID: contents.vaultID, identity: contents.identity)
        var paddedHeader = header
        Padding.pad(&paddedHeader)
        var body = encodeBody(contents)
        Padding.pad(&body)
        defer { wipe(&body) }
        let sealedHeaderCount = paddedHeader.count + XChaCha20Poly1305.tagByteCount
        var out = magic + [formatVersion]
        appendLE(UInt32(sealedHeaderCount).byteSwapped, to: &out)  // big-endian
        let prefix = out
        let n1 = random.bytes(XChaCha20Poly1305.nonceByteCount)
        let n2 = random.bytes(XChaCha20Poly1305.nonceByteCount)
        out.reserveCapacity(out.count + 2 * n1.count + sealedHeaderCount + body.count + XChaCha20Poly1305.tagByteCount)
        out += n1
        out += XChaCha20Poly1305.seal(paddedHeader, key: key.sealing, nonce: n1, authenticating: prefix + contents.vaultID.bytes)
        out += n2
        let bodyStart = out.count
        out += repeatElement(0, count: body.count + XChaCha20Poly1305.tagByteCount)
        let ad = prefix + contents.vaultID.bytes + header
        body.withUnsafeBytes { p in
            n2.withUnsafeBytes { n in
                ad.withUnsafeBytes { a in
                    out.withUnsafeMutableBytes { o in
                        XChaCha20Poly1305.seal(p, into: UnsafeMutableRawBufferPointer(rebasing: o[bodyStart...]), key: key.sealing, nonce: n, authenticating: a)
                    }
                }
            }
        }
        return out
    }

    /// Opens cache file bytes sealed for `vaultID` under `key`. `check`
    /// decides, from the file identity in the header, whether the cache
    /// still describes the vault file (nil) or why not; the body is
    /// decrypted only then. With `search: false` the search index is not
    /// decoded. Any failure is a ``Load/discarded(_:)``, never partial
    /// contents.
    package static func open(
        _ bytes: [UInt8], key: IndexCacheKey, vaultID: VaultID, search: Bool = true, check: (Identity) -> Discard?
    ) -> Load {
        let nonce = XChaCha20Poly1305.nonceByteCount
        let tag = XChaCha20Poly1305.tagByteCount
        guard bytes.count >= prefixByteCount, bytes.starts(with: magic), bytes[magic.count] == formatVersion else {
            return .discarded(.unknownFormat)
        }
        let sealedHeaderCount = Int(bytes[9]) << 24 | Int(bytes[10]) << 16 | Int(bytes[11]) << 8 | Int(bytes[12])
        let bodyStart = prefixByteCount + nonce + sealedHeaderCount + nonce
        guard sealedHeaderCount >= tag + 1, bytes.count >= bodyStart + tag + 1 else { return .discarded(.unknownFormat) }
        let prefix = Array(bytes[0..<prefixByteCount])
        let n1 = Array(bytes[prefixByteCount..<(prefixByteCount + nonce)])
        let sealedHeader = Array(bytes[(prefixByteCount + nonce)..<(bodyStart - nonce)])
        guard var paddedHeader = try? XChaCha20Poly1305.open(sealedHeader, key: key.sealing, nonce: n1, authenticating: prefix + vaultID.bytes) else {
            return .discarded(.notAuthentic)
        }
        guard let headerCount = paddedHeader.withUnsafeBytes({ Padding.payloadCount(in: $0) }) else { return .discarded(.malformed) }
        paddedHeader.removeLast(paddedHeader.count - headerCount)
        let header = paddedHeader
        guard let (foundVault, identity) = decodeHeader(header) else { return .discarded(.malformed) }
        // The tag already binds the vault id; a mismatch is a writer bug.
        guard foundVault == vaultID else { return .discarded(.otherVault) }
        if let reason = check(identity) { return .discarded(reason) }

        let n2 = Array(bytes[(bodyStart - nonce)..<bodyStart])
        let ad = prefix + vaultID.bytes + header
        var body = [UInt8](repeating: 0, count: bytes.count - bodyStart - tag)
        defer { wipe(&body) }
        let opened = bytes.withUnsafeBytes { raw in
            n2.withUnsafeBytes { n in
                ad.withUnsafeBytes { a in
                    body.withUnsafeMutableBytes { o in
                        (try? XChaCha20Poly1305.open(UnsafeRawBufferPointer(rebasing: raw[bodyStart...]), into: o, key: key.sealing, nonce: n, authenticating: a))
                            != nil
                    }
                }
            }
        }
        guard opened else { return .discarded(.notAuthentic) }
        guard let bodyCount = body.withUnsafeBytes({ Padding.payloadCount(in: $0) }) else { return .discarded(.malformed) }
        let decoded = body.withUnsafeBytes { raw in decodeBody(UnsafeRawBufferPointer(rebasing: raw[0..<bodyCount]), search: search) }
        guard let (entries, stored) = decoded else { return .discarded(.malformed) }
        return .loaded(Contents(vaultID: vaultID, identity: identity, entries: entries, search: stored))
    }
}
