import CSodium
@_spi(Crypto) package import QuireCrypto

/// What a holder of a record key can do to a sealed record in format 1:
/// change its plaintext and keep its Poly1305 tag (issue 12 §2).
///
/// Poly1305 is a one-time MAC that is linear in the message blocks. Whoever
/// holds the AEAD key computes the one-time key `r` (block 0 of the
/// XChaCha20 keystream for that nonce) and can then change ciphertext block
/// `j` by `δ` and block `k > j` by `−δ·r^(k−j) (mod 2¹³⁰ − 5)`: the
/// polynomial, hence the tag, is unchanged. Version 1's chain covered a
/// record's header and tag only, so the rewritten record stayed verified;
/// version 2's chain covers the body hash, so it does not.
///
/// This is attack tooling for one test vector: it reads the keystream
/// through libsodium (`crypto_stream_xchacha20`, whose block 0 is the
/// one-time key of `crypto_aead_xchacha20poly1305_ietf`) and does the field
/// arithmetic itself; it encrypts nothing.
package enum TagForgery {
    /// An element of GF(2¹³⁰ − 5) in five 26-bit limbs (the poly1305-donna layout).
    struct Element: Equatable {
        var limbs: [UInt64]
        static let mask: UInt64 = (1 << 26) - 1

        /// From a little-endian integer of up to 20 bytes, reduced.
        init(littleEndian bytes: [UInt8]) {
            var wide = [UInt64](repeating: 0, count: 7)
            for (i, byte) in bytes.enumerated() {
                for bit in 0..<8 where byte >> bit & 1 == 1 {
                    let n = i * 8 + bit
                    wide[n / 26] |= 1 << UInt64(n % 26)
                }
            }
            // 2¹³⁰ ≡ 5: fold limbs 5 and 6 down.
            limbs = Array(wide[0..<5])
            limbs[0] += wide[5] * 5
            limbs[1] += wide[6] * 5
            carry()
        }

        init(limbs: [UInt64]) {
            self.limbs = limbs
            carry()
        }

        mutating func carry() {
            for _ in 0..<2 {
                for i in 0..<4 {
                    limbs[i + 1] += limbs[i] >> 26
                    limbs[i] &= Self.mask
                }
                let c = limbs[4] >> 26
                limbs[4] &= Self.mask
                limbs[0] += c * 5
            }
        }

        static func + (a: Element, b: Element) -> Element {
            Element(limbs: (0..<5).map { a.limbs[$0] + b.limbs[$0] })
        }

        /// `a − b`, as `a + (2p − b)` limb by limb (every limb of 2p exceeds a reduced limb).
        static func - (a: Element, b: Element) -> Element {
            let twoP: [UInt64] = [0x7ff_fff6, 0x7ff_fffe, 0x7ff_fffe, 0x7ff_fffe, 0x7ff_fffe]
            return Element(limbs: (0..<5).map { a.limbs[$0] + twoP[$0] - b.limbs[$0] })
        }

        static func * (a: Element, b: Element) -> Element {
            let h = a.limbs
            let r = b.limbs
            let s = r.map { $0 * 5 }
            let d0 = h[0] * r[0] + h[1] * s[4] + h[2] * s[3] + h[3] * s[2] + h[4] * s[1]
            let d1 = h[0] * r[1] + h[1] * r[0] + h[2] * s[4] + h[3] * s[3] + h[4] * s[2]
            let d2 = h[0] * r[2] + h[1] * r[1] + h[2] * r[0] + h[3] * s[4] + h[4] * s[3]
            let d3 = h[0] * r[3] + h[1] * r[2] + h[2] * r[1] + h[3] * r[0] + h[4] * s[4]
            let d4 = h[0] * r[4] + h[1] * r[3] + h[2] * r[2] + h[3] * r[1] + h[4] * r[0]
            var out = [d0, d1, d2, d3, d4]
            for i in 0..<4 {
                out[i + 1] += out[i] >> 26
                out[i] &= mask
            }
            let c = out[4] >> 26
            out[4] &= mask
            out[0] += c * 5
            return Element(limbs: out)
        }

        /// The canonical value (< p) as 17 little-endian bytes.
        var bytes: [UInt8] {
            var h = Element(limbs: limbs).limbs
            // g = h + 5; if g ≥ 2¹³⁰ then h ≥ p: use g − 2¹³⁰.
            var g = h
            g[0] += 5
            for i in 0..<4 {
                g[i + 1] += g[i] >> 26
                g[i] &= Self.mask
            }
            if g[4] >> 26 != 0 {
                g[4] &= Self.mask
                h = g
            }
            var out = [UInt8](repeating: 0, count: 17)
            for n in 0..<130 where h[n / 26] >> UInt64(n % 26) & 1 == 1 { out[n / 8] |= UInt8(1 << (n % 8)) }
            return out
        }
    }

    /// Rewrites `ciphertext` (without its tag) sealed under `key` and
    /// `nonce` (whatever the associated data) so that block `j` of
    /// the plaintext becomes `newBlock` and the tag stays valid; block `k`
    /// (one of `candidates`, each > j, each a full block) absorbs the
    /// difference and decrypts to noise. Nil when no candidate fits.
    package static func rewrite(
        ciphertext: [UInt8], plaintext: [UInt8], key: SymmetricKey, nonce: [UInt8], block j: Int, newBlock: [UInt8], candidates: [Int]
    ) -> [UInt8]? {
        precondition(newBlock.count == 16 && (j + 1) * 16 <= ciphertext.count)
        var stream = [UInt8](repeating: 0, count: 64 + ciphertext.count)
        key.withUnsafeBytes { k in
            _ = crypto_stream_xchacha20(&stream, UInt64(stream.count), nonce, k.baseAddress!.assumingMemoryBound(to: UInt8.self))
        }
        // Block 1 on is the cipher's keystream: check the layout before relying on block 0.
        for i in 0..<ciphertext.count where ciphertext[i] ^ plaintext[i] != stream[64 + i] { return nil }
        var rBytes = Array(stream[0..<16])
        for m in [3, 7, 11, 15] { rBytes[m] &= 0x0f }
        for m in [4, 8, 12] { rBytes[m] &= 0xfc }
        let r = Element(littleEndian: rBytes)
        func value(_ block: ArraySlice<UInt8>) -> Element { Element(littleEndian: Array(block) + [1]) }
        var out = ciphertext
        let oldJ = value(ciphertext[(j * 16)..<(j * 16 + 16)])
        let newCipherJ = (0..<16).map { ciphertext[j * 16 + $0] ^ plaintext[j * 16 + $0] ^ newBlock[$0] }
        let delta = value(newCipherJ[0...]) - oldJ
        for k in candidates where k > j && (k + 1) * 16 <= ciphertext.count {
            var rPower = r
            for _ in 1..<(k - j) { rPower = rPower * r }
            let oldK = value(ciphertext[(k * 16)..<(k * 16 + 16)])
            let newK = (oldK - delta * rPower).bytes
            // A full block's value is 2¹²⁸ + its 16 bytes: it must stay in [2¹²⁸, 2¹²⁹).
            guard newK[16] == 1 else { continue }
            for i in 0..<16 {
                out[j * 16 + i] = newCipherJ[i]
                out[k * 16 + i] = newK[i]
            }
            return out
        }
        return nil
    }
}
