@_spi(Crypto) import QuireCrypto
import Testing

@Suite struct XChaCha20Poly1305Tests {
    // draft-irtf-cfrg-xchacha-03, appendix A.3.1.
    static let kaKey = hexBytes("808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f")
    static let kaNonce = hexBytes("404142434445464748494a4b4c4d4e4f5051525354555657")
    static let kaAD = hexBytes("50515253c0c1c2c3c4c5c6c7")
    static let kaPlaintext = Array(
        "Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the future, sunscreen would be it.".utf8)
    static let kaCiphertext = hexBytes("""
        bd6d179d3e83d43b9576579493c0e939572a1700252bfaccbed2902c21396cbb
        731c7f1b0b4aa6440bf3a82f4eda7e39ae64c6708c54c216cb96b72e1213b452
        2f8c9ba40db5d945b11b69b982c1bb9e3f3fac2bc369488f76b2383565d3fff9
        21f9664c97637da9768812f615c68b13b52e
        """)
    static let kaTag = hexBytes("c0875924c1c7987947deafd8780acf49")

    @Test func constants() {
        #expect(XChaCha20Poly1305.keyByteCount == 32)
        #expect(XChaCha20Poly1305.nonceByteCount == 24)
        #expect(XChaCha20Poly1305.tagByteCount == 16)
    }

    @Test func draftKnownAnswerSeal() throws {
        let key = try SymmetricKey(bytes: Self.kaKey)
        #expect(Self.kaPlaintext.count == 114)
        let sealed = XChaCha20Poly1305.seal(Self.kaPlaintext, key: key, nonce: Self.kaNonce, authenticating: Self.kaAD)
        #expect(sealed.count == 114 + 16)
        #expect(Array(sealed[0..<114]) == Self.kaCiphertext)
        #expect(Array(sealed[114...]) == Self.kaTag)
    }

    @Test func draftKnownAnswerOpen() throws {
        let key = try SymmetricKey(bytes: Self.kaKey)
        let opened = try XChaCha20Poly1305.open(Self.kaCiphertext + Self.kaTag, key: key, nonce: Self.kaNonce, authenticating: Self.kaAD)
        #expect(opened == Self.kaPlaintext)
    }

    @Test func draftKnownAnswerPointerAPIInPlace() throws {
        let key = try SymmetricKey(bytes: Self.kaKey)
        var buffer = Self.kaPlaintext + [UInt8](repeating: 0xee, count: 16)
        let n = Self.kaPlaintext.count
        Self.kaNonce.withUnsafeBytes { nonce in
            Self.kaAD.withUnsafeBytes { ad in
                buffer.withUnsafeMutableBytes { raw in
                    XChaCha20Poly1305.seal(
                        UnsafeRawBufferPointer(rebasing: raw[0..<n]), into: raw, key: key, nonce: nonce, authenticating: ad)
                }
            }
        }
        #expect(buffer == Self.kaCiphertext + Self.kaTag)
        // Open in place too.
        try Self.kaNonce.withUnsafeBytes { nonce in
            try Self.kaAD.withUnsafeBytes { ad in
                try buffer.withUnsafeMutableBytes { raw in
                    try XChaCha20Poly1305.open(
                        UnsafeRawBufferPointer(raw), into: UnsafeMutableRawBufferPointer(rebasing: raw[0..<n]), key: key,
                        nonce: nonce, authenticating: ad)
                }
            }
        }
        #expect(Array(buffer[0..<n]) == Self.kaPlaintext)
    }

    @Test(arguments: [0, 1, 15, 16, 17, 63, 64, 65, 1000, 70_000])
    func roundTrip(size: Int) throws {
        let random = SeededRandom(label: "xchacha round trip \(size)")
        let key = try SymmetricKey(using: random)
        let nonce = random.bytes(24)
        let ad = random.bytes(size % 40)
        let plaintext = random.bytes(size)
        let sealed = XChaCha20Poly1305.seal(plaintext, key: key, nonce: nonce, authenticating: ad)
        #expect(sealed.count == size + 16)
        if size >= 16 { #expect(Array(sealed[0..<size]) != plaintext) }
        #expect(try XChaCha20Poly1305.open(sealed, key: key, nonce: nonce, authenticating: ad) == plaintext)
    }

    @Test func sealIsDeterministicForSameInputsAndNonceMatters() throws {
        let key = countingKey()
        let plaintext = Array("same message".utf8)
        let a = XChaCha20Poly1305.seal(plaintext, key: key, nonce: counting(24), authenticating: [])
        let b = XChaCha20Poly1305.seal(plaintext, key: key, nonce: counting(24), authenticating: [])
        let c = XChaCha20Poly1305.seal(plaintext, key: key, nonce: counting(24, from: 1), authenticating: [])
        #expect(a == b)
        #expect(a != c)
    }

    @Test func everyTamperedByteFailsAuthentication() throws {
        let key = try SymmetricKey(bytes: Self.kaKey)
        let sealed = Self.kaCiphertext + Self.kaTag
        // Ciphertext and tag.
        for i in sealed.indices {
            for bit in [0, 7] {
                #expect(throws: CryptoError.authenticationFailed) {
                    try XChaCha20Poly1305.open(flipped(sealed, at: i, bit: bit), key: key, nonce: Self.kaNonce, authenticating: Self.kaAD)
                }
            }
        }
        // Nonce.
        for i in Self.kaNonce.indices {
            #expect(throws: CryptoError.authenticationFailed) {
                try XChaCha20Poly1305.open(sealed, key: key, nonce: flipped(Self.kaNonce, at: i), authenticating: Self.kaAD)
            }
        }
        // Associated data.
        for i in Self.kaAD.indices {
            #expect(throws: CryptoError.authenticationFailed) {
                try XChaCha20Poly1305.open(sealed, key: key, nonce: Self.kaNonce, authenticating: flipped(Self.kaAD, at: i, bit: 3))
            }
        }
    }

    @Test func changedLengthsFailAuthentication() throws {
        let key = try SymmetricKey(bytes: Self.kaKey)
        let sealed = Self.kaCiphertext + Self.kaTag
        #expect(throws: CryptoError.authenticationFailed) {
            try XChaCha20Poly1305.open(Array(sealed.dropLast()), key: key, nonce: Self.kaNonce, authenticating: Self.kaAD)
        }
        #expect(throws: CryptoError.authenticationFailed) {
            try XChaCha20Poly1305.open(sealed + [0], key: key, nonce: Self.kaNonce, authenticating: Self.kaAD)
        }
        #expect(throws: CryptoError.authenticationFailed) {
            try XChaCha20Poly1305.open(Array(sealed[0..<15]), key: key, nonce: Self.kaNonce, authenticating: Self.kaAD)
        }
        #expect(throws: CryptoError.authenticationFailed) {
            try XChaCha20Poly1305.open([], key: key, nonce: Self.kaNonce, authenticating: Self.kaAD)
        }
        #expect(throws: CryptoError.authenticationFailed) {
            try XChaCha20Poly1305.open(sealed, key: key, nonce: Self.kaNonce, authenticating: Self.kaAD + [0])
        }
        #expect(throws: CryptoError.authenticationFailed) {
            try XChaCha20Poly1305.open(sealed, key: key, nonce: Self.kaNonce, authenticating: [])
        }
    }

    @Test func wrongKeyFails() throws {
        let sealed = Self.kaCiphertext + Self.kaTag
        for i in [0, 15, 31] {
            let wrong = try SymmetricKey(bytes: flipped(Self.kaKey, at: i))
            #expect(throws: CryptoError.authenticationFailed) {
                try XChaCha20Poly1305.open(sealed, key: wrong, nonce: Self.kaNonce, authenticating: Self.kaAD)
            }
        }
    }

    @Test func wrongNonceLengthOnOpen() throws {
        let key = countingKey()
        let sealed = XChaCha20Poly1305.seal([1, 2, 3], key: key, nonce: counting(24), authenticating: [])
        #expect(throws: CryptoError.wrongLength(what: "nonce", expected: 24, actual: 23)) {
            try XChaCha20Poly1305.open(sealed, key: key, nonce: counting(23), authenticating: [])
        }
        #expect(throws: CryptoError.wrongLength(what: "nonce", expected: 24, actual: 25)) {
            try XChaCha20Poly1305.open(sealed, key: key, nonce: counting(25), authenticating: [])
        }
    }

    @Test func emptyPlaintextTagStillAuthenticatesAD() throws {
        let key = countingKey()
        let sealed = XChaCha20Poly1305.seal([], key: key, nonce: counting(24), authenticating: [9, 9])
        #expect(sealed.count == 16)
        #expect(try XChaCha20Poly1305.open(sealed, key: key, nonce: counting(24), authenticating: [9, 9]) == [])
        #expect(throws: CryptoError.authenticationFailed) {
            try XChaCha20Poly1305.open(sealed, key: key, nonce: counting(24), authenticating: [9, 8])
        }
    }
}
