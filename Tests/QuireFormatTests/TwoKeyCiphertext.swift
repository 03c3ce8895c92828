@_spi(Testing) @_spi(Crypto) import QuireCrypto

/// Builds one XChaCha20-Poly1305 ciphertext that authenticates under two
/// chosen keys (an "invisible salamander"): the review's L1 finding
/// (`Spec/format.md §5.2`, key commitment). Poly1305's tag is a polynomial
/// in the message blocks, evaluated at the one-time key `r` and offset by
/// `s`; with both one-time keys known, one free ciphertext block solves for
/// equal tags. Only arithmetic modulo 2¹³⁰ − 5 is written here; the keystream
/// and every check come from libsodium.
enum TwoKeyCiphertext {
    /// A nonce and a ciphertext ‖ tag that open under both `key1` and `key2`
    /// with `ad`, to 32-byte plaintexts that end in `0x80` (so both unpad to
    /// 31-byte payloads); nil if no nonce in `tries` worked.
    static func make(key1: SymmetricKey, key2: SymmetricKey, ad: [UInt8], tail: [UInt8], tries: Int = 20_000) -> (nonce: [UInt8], sealed: [UInt8])? {
        precondition(tail.count == 15)
        for attempt in 0..<tries {
            var nonce = [UInt8](repeating: 0, count: 24)
            for i in 0..<8 { nonce[i] = UInt8(truncatingIfNeeded: attempt >> (8 * i)) }
            nonce[23] = 0x5a
            let ks1 = XChaCha20Poly1305.keystream(byteCount: 96, key: key1, nonce: nonce)
            let ks2 = XChaCha20Poly1305.keystream(byteCount: 96, key: key2, nonce: nonce)
            // Both plaintexts must end in the padding marker 0x80.
            guard ks1[95] == ks2[95] else { continue }
            // Ciphertext block 1: reader 1 sees `tail ‖ 0x80` there.
            let c1 = (0..<16).map { (($0 < 15 ? tail[$0] : 0x80) as UInt8) ^ ks1[80 + $0] }
            guard let block0 = solve(ks1: ks1, ks2: ks2, ad: ad, c1: c1) else { continue }
            let ciphertext = block0 + c1
            let tag = poly1305(ks1, message: macInput(ad: ad, ciphertext: ciphertext))
            return (nonce, ciphertext + tag)
        }
        return nil
    }

    /// The Poly1305 input of the IETF AEAD: ad, padding, ciphertext,
    /// padding, the two lengths.
    static func macInput(ad: [UInt8], ciphertext: [UInt8]) -> [UInt8] {
        func pad(_ b: [UInt8]) -> [UInt8] { b + [UInt8](repeating: 0, count: (16 - b.count % 16) % 16) }
        func le64(_ n: Int) -> [UInt8] { (0..<8).map { UInt8(truncatingIfNeeded: n >> (8 * $0)) } }
        return pad(ad) + pad(ciphertext) + le64(ad.count) + le64(ciphertext.count)
    }

    /// The first ciphertext block that makes both tags equal, or nil.
    static func solve(ks1: [UInt8], ks2: [UInt8], ad: [UInt8], c1: [UInt8]) -> [UInt8]? {
        let template = macInput(ad: ad, ciphertext: [UInt8](repeating: 0, count: 16) + c1)
        let blocks = stride(from: 0, to: template.count, by: 16).map { Array(template[$0..<($0 + 16)]) }
        let free = ad.count.roundedUp16 / 16          // index of ciphertext block 0
        let (r1, s1) = oneTimeKey(ks1), (r2, s2) = oneTimeKey(ks2)
        let n = blocks.count
        // h_j = Σ m_i r_j^(n − i) over the fixed blocks; the free block adds m_free · r_j^(n − free).
        func fixedSum(_ r: Num) -> Num {
            var h = Num.zero
            for (i, b) in blocks.enumerated() where i != free { h = (h + Num.block(b) * r.power(n - i)).modP }
            return h
        }
        let a1 = fixedSum(r1), a2 = fixedSum(r2)
        let coefficient = (r1.power(n - free) + Num.p - r2.power(n - free)).modP
        guard !coefficient.isZero else { return nil }
        let inverse = coefficient.power(Num.p - Num(2))
        // Want (h1 + s1) ≡ (h2 + s2) mod 2¹²⁸: h1 − h2 = (s2 − s1 mod 2¹²⁸) + t·2¹²⁸ for a small t.
        let delta = (s2 + Num.two128 - s1).low128
        for t in 0..<8 {
            // target = delta + (t − 4)·2¹²⁸, kept non-negative by adding 4p.
            let target = (delta + Num(UInt64(t)) * Num.two128 + Num(4) * Num.p - Num(4) * Num.two128).modP
            let m = ((target + Num.p - a1 + a2).modP * inverse).modP
            guard m >= Num.two128, m < Num.two128 + Num.two128 else { continue }
            let block = (m - Num.two128).littleEndian(16)
            var candidate = blocks
            candidate[free] = block
            if poly1305(ks1, message: candidate.flatMap { $0 }) == poly1305(ks2, message: candidate.flatMap { $0 }) { return block }
        }
        return nil
    }

    static func oneTimeKey(_ keystream: [UInt8]) -> (Num, Num) {
        var r = Array(keystream[0..<16])
        for i in [3, 7, 11, 15] { r[i] &= 15 }
        for i in [4, 8, 12] { r[i] &= 252 }
        return (Num(littleEndian: r), Num(littleEndian: Array(keystream[16..<32])))
    }

    /// Poly1305 of `message` under the one-time key at the start of `keystream`.
    static func poly1305(_ keystream: [UInt8], message: [UInt8]) -> [UInt8] {
        let (r, s) = oneTimeKey(keystream)
        var h = Num.zero
        for start in stride(from: 0, to: message.count, by: 16) {
            let block = Array(message[start..<min(start + 16, message.count)])
            h = ((h + Num.block(block)) * r).modP
        }
        return (h + s).low128.littleEndian(16)
    }
}

extension Int {
    fileprivate var roundedUp16: Int { (self + 15) / 16 * 16 }
}

/// A non-negative integer below 2²⁵⁶, as eight 32-bit limbs (little endian);
/// enough for products of two numbers below 2¹³⁰.
struct Num: Comparable {
    var limbs: [UInt64]

    init(_ small: UInt64) { limbs = [small & 0xffff_ffff, small >> 32] + [UInt64](repeating: 0, count: 14) }
    init(limbs: [UInt64]) { self.limbs = limbs + [UInt64](repeating: 0, count: max(0, 16 - limbs.count)) }
    init(littleEndian bytes: [UInt8]) {
        var l = [UInt64](repeating: 0, count: 16)
        for (i, b) in bytes.enumerated() { l[i / 4] |= UInt64(b) << (8 * UInt64(i % 4)) }
        limbs = l
    }

    static let zero = Num(0)
    /// 2¹²⁸.
    static let two128 = Num(limbs: [0, 0, 0, 0, 1])
    /// 2¹³⁰ − 5.
    static let p = Num(limbs: [0xffff_fffb, 0xffff_ffff, 0xffff_ffff, 0xffff_ffff, 3])

    /// A Poly1305 block: its bytes little endian, plus 2^(8·count).
    static func block(_ bytes: [UInt8]) -> Num {
        var n = Num(littleEndian: bytes)
        n.limbs[bytes.count / 4] |= 1 << (8 * UInt64(bytes.count % 4))
        return n
    }

    var isZero: Bool { limbs.allSatisfy { $0 == 0 } }

    static func + (a: Num, b: Num) -> Num {
        var out = [UInt64](repeating: 0, count: 16), carry: UInt64 = 0
        for i in 0..<16 {
            let t = a.limbs[i] + b.limbs[i] + carry
            out[i] = t & 0xffff_ffff
            carry = t >> 32
        }
        return Num(limbs: out)
    }

    /// a − b for a ≥ b.
    static func - (a: Num, b: Num) -> Num {
        var out = [UInt64](repeating: 0, count: 16), borrow: UInt64 = 0
        for i in 0..<16 {
            let sub = b.limbs[i] + borrow
            if a.limbs[i] >= sub {
                out[i] = a.limbs[i] - sub
                borrow = 0
            } else {
                out[i] = a.limbs[i] + (1 << 32) - sub
                borrow = 1
            }
        }
        return Num(limbs: out)
    }

    static func * (a: Num, b: Num) -> Num {
        var out = [UInt64](repeating: 0, count: 17)
        for i in 0..<8 where a.limbs[i] != 0 {
            var carry: UInt64 = 0
            for j in 0..<8 {
                let t = out[i + j] + a.limbs[i] * b.limbs[j] + carry
                out[i + j] = t & 0xffff_ffff
                carry = t >> 32
            }
            out[i + 8] += carry
        }
        return Num(limbs: Array(out[0..<16]))
    }

    static func < (a: Num, b: Num) -> Bool {
        for i in (0..<16).reversed() where a.limbs[i] != b.limbs[i] { return a.limbs[i] < b.limbs[i] }
        return false
    }

    static func == (a: Num, b: Num) -> Bool { a.limbs == b.limbs }

    /// The value modulo 2¹²⁸.
    var low128: Num { Num(limbs: Array(limbs[0..<4])) }

    /// The value modulo 2¹³⁰ − 5: the bits from 130 up fold back times 5.
    var modP: Num {
        var x = self
        let bound = Num(limbs: [0, 0, 0, 0, 4])
        while x >= bound {
            var low = Array(x.limbs[0..<5])
            low[4] &= 3
            var high = [UInt64](repeating: 0, count: 16)
            for i in 0..<12 {
                let next: UInt64 = i + 5 < 16 ? x.limbs[i + 5] : 0
                high[i] = ((x.limbs[i + 4] >> 2) | (next << 30)) & 0xffff_ffff
            }
            x = Num(limbs: low) + Num(limbs: high) * Num(5)
        }
        while x >= Num.p { x = x - Num.p }
        return x
    }

    /// self^e modulo p, by square and multiply.
    func power(_ e: Int) -> Num { power(Num(UInt64(e))) }

    func power(_ e: Num) -> Num {
        var result = Num(1), base = self.modP
        for i in 0..<16 {
            var word = e.limbs[i]
            for _ in 0..<32 {
                if word & 1 == 1 { result = (result * base).modP }
                base = (base * base).modP
                word >>= 1
            }
        }
        return result
    }

    func littleEndian(_ count: Int) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: limbs[$0 / 4] >> (8 * UInt64($0 % 4))) }
    }
}
