@_spi(Crypto) import QuireCrypto
import Testing

@Suite struct BLAKE2bTests {
    /// ``BLAKE2b/hash(_:into:)`` (no heap block: a scan checks every frame
    /// header so) gives the array form's digest, at every output length
    /// and around the 128-byte block.
    @Test func hashIntoCallerMemoryEqualsTheArrayHash() {
        let data = SeededRandom(label: "blake2b into").bytes(300)
        for n in [0, 1, 12, 127, 128, 129, 300] {
            for size in [16, 20, 32, 64] {
                var out = [UInt8](repeating: 0, count: size)
                Array(data[0..<n]).withUnsafeBytes { d in out.withUnsafeMutableBytes { BLAKE2b.hash(d, into: $0) } }
                #expect(out == BLAKE2b.hash(Array(data[0..<n]), byteCount: size), "\(n) bytes, \(size)-byte digest")
            }
        }
    }

    @Test func rfc7693AppendixA() {
        // RFC 7693, appendix A: BLAKE2b-512("abc").
        let expected = hexBytes(
            """
            ba80a53f981c4d0d6a2797b69f12f6e94c212f14685ac4b74b12bb6fdbffa2d1
            7d87c5392aab792dc252d5de4533cc9518d38aa8dbf1925ab92386edd4009923
            """)
        #expect(BLAKE2b.hash(Array("abc".utf8), byteCount: 64) == expected)
    }

    @Test func otherLengthsKnownAnswers() {
        // Independent values (Python hashlib.blake2b).
        #expect(BLAKE2b.hash(Array("abc".utf8), byteCount: 16) == hexBytes("cf4ab791c62b8d2b2109c90275287816"))
        #expect(BLAKE2b.hash([], byteCount: 32) == hexBytes("0e5751c026e543b2e8ab2eb06099daa1d1e5df47778f7787faab45cdf12fe3a8"))
    }

    @Test func outputLengthIsAParameterNotATruncation() {
        let data = Array("abc".utf8)
        let long = BLAKE2b.hash(data, byteCount: 64)
        for n in BLAKE2b.minimumByteCount...BLAKE2b.maximumByteCount {
            let h = BLAKE2b.hash(data, byteCount: n)
            #expect(h.count == n)
            if n < 64 { #expect(h != Array(long.prefix(n))) }
        }
        #expect(BLAKE2b.minimumByteCount == 16)
        #expect(BLAKE2b.maximumByteCount == 64)
    }

    @Test func keyedKnownAnswer() {
        #expect(
            BLAKE2b.mac(Array("abc".utf8), key: countingKey(), byteCount: 32)
                == hexBytes("d63a32d3e44738d7907f964316c241adaba0abfeabc32349677578a15a203f7f"))
    }

    @Test func keyedAndUnkeyedDiffer() throws {
        let data = Array("journal".utf8)
        let unkeyed = BLAKE2b.hash(data, byteCount: 32)
        let keyA = BLAKE2b.mac(data, key: countingKey(), byteCount: 32)
        let keyB = BLAKE2b.mac(data, key: try SymmetricKey(bytes: counting(32, from: 1)), byteCount: 32)
        #expect(unkeyed != keyA)
        #expect(keyA != keyB)
        #expect(keyA == BLAKE2b.mac(data, key: countingKey(), byteCount: 32))
        #expect(BLAKE2b.mac(data, key: countingKey(), byteCount: 16).count == 16)
    }

    @Test func incrementalEqualsOneShotAtEverySplit() {
        let data = SeededRandom(label: "blake2b split").bytes(300)
        let expected = BLAKE2b.hash(data, byteCount: 32)
        for split in stride(from: 0, through: data.count, by: 7) {
            var hasher = BLAKE2b.Hasher(byteCount: 32)
            hasher.update(Array(data[0..<split]))
            hasher.update([])
            hasher.update(Array(data[split...]))
            #expect(hasher.finalize() == expected, "split at \(split)")
        }
    }

    @Test func incrementalByteByByteAndFromPointers() {
        let data = SeededRandom(label: "blake2b bytes").bytes(200)
        var hasher = BLAKE2b.Hasher(byteCount: 64)
        for b in data { hasher.update([b]) }
        #expect(hasher.finalize() == BLAKE2b.hash(data, byteCount: 64))
        // The pointer API over a slice of a larger buffer.
        let padded = [0xaa, 0xbb] + data + [0xcc]
        let viaPointer = padded.withUnsafeBytes { BLAKE2b.hash(UnsafeRawBufferPointer(rebasing: $0[2..<202]), byteCount: 64) }
        #expect(viaPointer == BLAKE2b.hash(data, byteCount: 64))
    }

    @Test func keyedIncrementalEqualsMac() {
        let data = SeededRandom(label: "blake2b keyed").bytes(129)
        var hasher = BLAKE2b.Hasher(byteCount: 32, key: countingKey())
        hasher.update(Array(data[0..<64]))
        hasher.update(Array(data[64...]))
        #expect(hasher.finalize() == BLAKE2b.mac(data, key: countingKey(), byteCount: 32))
    }
}

@Suite struct KeyDerivationTests {
    // Values computed independently as BLAKE2b-256(key, salt = id LE ‖ 0⁸,
    // personal = context ‖ 0⁸) of the empty message, which is what
    // crypto_kdf_derive_from_key computes.
    @Test(arguments: [
        (UInt64(1), "quire v1", "433bb94d82e49a4d8d2256595e8e4b6a5aebe010c0ebb54974c5dfc7256d9388"),
        (UInt64(2), "quire v1", "657537b78be713cd70a7f31f9cd9dcd70a6e2a213a224fd7b5141865181a1a5d"),
        (UInt64(3), "quire v1", "df50a3b0a5bca0203b964ddfb682ba935f1209bb7c3805a7eb98e17330417cc4"),
        (UInt64(0), "testctx1", "0091b70367bf96abafeb892769719fa18f42cd7c17a615670e10780e45039a53"),
        (UInt64.max, "testctx1", "1da91696e2e24863a256a1478cb441e8abf2ead7245c4124248528236dced6eb"),
        (UInt64(1), "quire rk", "e9dec7393d16b485b9a52fc0f7720f03c64b763dd65f4e4e8dbb638ac01c349f"),
    ])
    func knownAnswers(subkeyID: UInt64, context: String, expected: String) throws {
        let derived = try KeyDerivation.derive(from: countingKey(), subkeyID: subkeyID, context: context)
        #expect(derived.storage.copyBytes() == hexBytes(expected))
    }

    @Test func deterministic() throws {
        let a = try KeyDerivation.derive(from: countingKey(), subkeyID: 7, context: "abcdefgh")
        let b = try KeyDerivation.derive(from: countingKey(), subkeyID: 7, context: "abcdefgh")
        #expect(a == b)
        #expect(a.storage.count == 32)
    }

    @Test func separatedBySubkeyIDContextAndKey() throws {
        let base = try KeyDerivation.derive(from: countingKey(), subkeyID: 1, context: "quire v1")
        let otherID = try KeyDerivation.derive(from: countingKey(), subkeyID: 2, context: "quire v1")
        let otherContext = try KeyDerivation.derive(from: countingKey(), subkeyID: 1, context: "quire v2")
        let otherKey = try KeyDerivation.derive(from: try SymmetricKey(bytes: counting(32, from: 1)), subkeyID: 1, context: "quire v1")
        let all = [base, otherID, otherContext, otherKey].map { $0.storage.copyBytes() }
        #expect(Set(all).count == 4)
        #expect(base != countingKey())
    }

    @Test func manySubkeyIDsAreDistinct() throws {
        let keys = try (0..<64).map {
            try KeyDerivation.derive(from: countingKey(), subkeyID: UInt64($0), context: "distinct").storage.copyBytes()
        }
        #expect(Set(keys).count == 64)
        #expect(KeyDerivation.contextByteCount == 8)
    }
}

@Suite struct RandomSourceTests {
    // Independent computation: seed = BLAKE2b-256("abc"); call n is the
    // ChaCha20-IETF keystream (nonce "LibsodiumDRG") under
    // crypto_kdf_derive_from_key(seed, n, "quirerng").
    @Test func seededKnownAnswer() {
        let r = SeededRandom(label: "abc")
        #expect(r.bytes(16) == hexBytes("21d86eb84c726d83797601c16ccfe6fe"))
        #expect(r.bytes(8) == hexBytes("dcb063ee18502141"))
        #expect(r.bytes(40) == hexBytes("08a447fe59d6b3e46110d807672370bd4b0338789b9b386d2d6a84c58b3209e9bacde4d5f387edb8"))
    }

    @Test func seedInitializerMatchesLabel() {
        let a = SeededRandom(label: "abc")
        let b = SeededRandom(seed: BLAKE2b.hash(Array("abc".utf8), byteCount: 32))
        #expect(a.bytes(64) == b.bytes(64))
    }

    @Test func repeatableAndLabelsDiffer() {
        let first = SeededRandom(label: "repeat")
        let second = SeededRandom(label: "repeat")
        let other = SeededRandom(label: "repeaT")
        let a = (0..<5).map { first.bytes(10 + $0) }
        let b = (0..<5).map { second.bytes(10 + $0) }
        let c = (0..<5).map { other.bytes(10 + $0) }
        #expect(a == b)
        #expect(a != c)
        #expect(a[0] != c[0])
    }

    @Test func successiveCallsDifferAndEmptyRequestsDoNotAdvance() {
        let r = SeededRandom(label: "abc")
        #expect(r.bytes(0) == [])
        #expect(r.bytes(16) == hexBytes("21d86eb84c726d83797601c16ccfe6fe"))
        let s = SeededRandom(label: "successive")
        #expect(s.bytes(32) != s.bytes(32))
    }

    @Test func streamDependsOnRequestSequenceNotOnlyOnTotal() {
        // Call n is keyed by n, so 16+16 is not the same as one 32-byte request.
        let a = SeededRandom(label: "split")
        let b = SeededRandom(label: "split")
        let joined = a.bytes(16) + a.bytes(16)
        let whole = b.bytes(32)
        #expect(Array(whole[0..<16]) == Array(joined[0..<16]))
        #expect(Array(whole[16...]) != Array(joined[16...]))
    }

    @Test func systemRandomDraws() {
        let r = SystemRandom()
        let a = r.bytes(32)
        let b = r.bytes(32)
        #expect(a.count == 32)
        #expect(a != b)
        #expect(r.bytes(0) == [])
    }
}
