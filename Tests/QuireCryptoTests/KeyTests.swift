@_spi(Crypto) import QuireCrypto
import Testing

@Suite struct SecureBytesAndKeyTests {
    @Test func descriptionNeverShowsBytes() {
        let bytes: [UInt8] = [0xde, 0xad, 0xbe, 0xef] + counting(28, from: 0x41)
        let s = secure(bytes)
        #expect(s.description == "SecureBytes(32 bytes)")
        #expect("\(s)" == "SecureBytes(32 bytes)")
        #expect(!s.description.lowercased().contains("dead"))
        let key = try! SymmetricKey(bytes: bytes)
        #expect(key.description == "SymmetricKey(hidden)")
        #expect(String(describing: key) == "SymmetricKey(hidden)")
        #expect(!String(reflecting: key.storage).contains("deadbeef"))
        #expect(secure([]).description == "SecureBytes(0 bytes)")
    }

    @Test func equalityIsContentEquality() {
        let a = secure(counting(32)), b = secure(counting(32))
        #expect(a !== b)
        #expect(a == b)
        #expect(a != secure(flipped(counting(32), at: 31, bit: 7)))
        #expect(a != secure(counting(31)))
        #expect(a != secure(counting(33)))
        #expect(secure([]) == secure([]))
        #expect(countingKey() == countingKey())
        #expect(countingKey() != (try! SymmetricKey(bytes: counting(32, from: 1))))
    }

    @Test func consumingWipesTheSourceAndCopyBytesReturnsContent() throws {
        var source = counting(40, from: 1)
        let s = try SecureBytes(consuming: &source)
        #expect(source == [UInt8](repeating: 0, count: 40))
        #expect(s.count == 40)
        #expect(s.copyBytes() == counting(40, from: 1))
        let copied = try counting(5).withUnsafeBytes { try SecureBytes(copying: $0) }
        #expect(copied.copyBytes() == [0, 1, 2, 3, 4])
        let zeroed = try SecureBytes(zeroedCount: 7)
        #expect(zeroed.copyBytes() == [0, 0, 0, 0, 0, 0, 0])
        zeroed.withUnsafeMutableBytes { $0[3] = 9 }
        #expect(zeroed.copyBytes() == [0, 0, 0, 9, 0, 0, 0])
        let random = try SecureBytes(randomCount: 16, using: SeededRandom(label: "abc"))
        #expect(random.copyBytes() == hexBytes("21d86eb84c726d83797601c16ccfe6fe"))
    }

    @Test func wipeAndConstantTimeEqual() {
        var b = counting(10, from: 1)
        wipe(&b)
        #expect(b == [UInt8](repeating: 0, count: 10))
        var empty: [UInt8] = []
        wipe(&empty)
        #expect(empty == [])
        let big = counting(20)
        #expect(constantTimeEqual(counting(5), big[0..<5]))
        #expect(constantTimeEqual(big[3..<8], counting(5, from: 3)))
        #expect(!constantTimeEqual(big[3..<8], counting(5)))
        #expect(!constantTimeEqual(counting(5), counting(6)))
        #expect(constantTimeEqual([UInt8](), [UInt8]()))
    }

    @Test(arguments: [0, 1, 16, 31, 33, 64])
    func symmetricKeyRejectsWrongLengths(count: Int) {
        #expect(throws: CryptoError.wrongLength(what: "key", expected: 32, actual: count)) {
            try SymmetricKey(bytes: counting(count))
        }
    }

    @Test func symmetricKeyFromSliceAndRandom() throws {
        let buffer = counting(48)
        let fromSlice = try SymmetricKey(bytes: buffer[16..<48])
        #expect(fromSlice.storage.copyBytes() == counting(32, from: 16))
        #expect(SymmetricKey.byteCount == 32)
        let seeded = try SymmetricKey(using: SeededRandom(label: "abc"))
        #expect(seeded.storage.copyBytes() == SeededRandom(label: "abc").bytes(32))
        #expect(try SymmetricKey() != SymmetricKey())
    }
}

@Suite struct HexTests {
    @Test func encode() {
        #expect(hex([0x00, 0x01, 0x7f, 0x80, 0xab, 0xff]) == "00017f80abff")
        #expect(hex([UInt8]()) == "")
        #expect(hex(counting(16)[4..<6]) == "0405")
    }

    @Test func decode() {
        #expect(bytes(fromHex: "00017f80abff") == [0x00, 0x01, 0x7f, 0x80, 0xab, 0xff])
        #expect(bytes(fromHex: "ABcdEF") == [0xab, 0xcd, 0xef])
        #expect(bytes(fromHex: "") == [])
        let text = "xx0a0Byy"
        #expect(bytes(fromHex: text.dropFirst(2).dropLast(2)) == [0x0a, 0x0b])
    }

    @Test(arguments: ["a", "abc", "0g", "g0", "zz", " 00", "00 ", "0x00", "-1", "é0"])
    func decodeRejects(text: String) {
        #expect(bytes(fromHex: text) == nil)
    }

    @Test func roundTrip() {
        let r = SeededRandom(label: "hex")
        for n in [0, 1, 2, 17, 255] {
            let b = r.bytes(n)
            #expect(bytes(fromHex: hex(b)) == b)
            #expect(bytes(fromHex: hex(b).uppercased()) == b)
            #expect(hex(b).count == 2 * n)
        }
    }
}

@Suite struct Ed25519Tests {
    // RFC 8032 §7.1, TEST 1.
    static let seed = hexBytes("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60")
    static let publicKey = hexBytes("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a")
    static let signature = hexBytes("""
        e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b
        """)

    @Test func rfc8032Test1() throws {
        let pair = try Ed25519.KeyPair(seed: secure(Self.seed))
        #expect(pair.publicKey == Self.publicKey)
        #expect(pair.sign([]) == Self.signature)
        #expect(Ed25519.verify(signature: Self.signature, message: [], publicKey: Self.publicKey))
        #expect(!Ed25519.verify(signature: Self.signature, message: [0], publicKey: Self.publicKey))
    }

    @Test func signVerifyAndModifiedMessageFails() throws {
        let pair = try Ed25519.KeyPair(using: SeededRandom(label: "ed25519"))
        let message = Array("Up betimes, and to the office.".utf8)
        let sig = pair.sign(message)
        #expect(sig.count == 64)
        #expect(sig == pair.sign(message))  // deterministic
        #expect(Ed25519.verify(signature: sig, message: message, publicKey: pair.publicKey))
        for i in message.indices {
            #expect(!Ed25519.verify(signature: sig, message: flipped(message, at: i), publicKey: pair.publicKey))
        }
        #expect(!Ed25519.verify(signature: sig, message: message + [0], publicKey: pair.publicKey))
        #expect(!Ed25519.verify(signature: sig, message: Array(message.dropLast()), publicKey: pair.publicKey))
        for i in stride(from: 0, to: 64, by: 5) {
            #expect(!Ed25519.verify(signature: flipped(sig, at: i), message: message, publicKey: pair.publicKey))
        }
        let other = try Ed25519.KeyPair(using: SeededRandom(label: "ed25519 other"))
        #expect(other.publicKey != pair.publicKey)
        #expect(!Ed25519.verify(signature: sig, message: message, publicKey: other.publicKey))
    }

    @Test func wrongLengthsGiveFalse() throws {
        let pair = try Ed25519.KeyPair(seed: secure(Self.seed))
        let sig = pair.sign([1, 2])
        #expect(!Ed25519.verify(signature: Array(sig.dropLast()), message: [1, 2], publicKey: pair.publicKey))
        #expect(!Ed25519.verify(signature: sig + [0], message: [1, 2], publicKey: pair.publicKey))
        #expect(!Ed25519.verify(signature: sig, message: [1, 2], publicKey: Array(pair.publicKey.dropLast())))
        #expect(!Ed25519.verify(signature: [], message: [1, 2], publicKey: []))
    }

    @Test func seedLengthChecked() {
        #expect(throws: CryptoError.wrongLength(what: "Ed25519 seed", expected: 32, actual: 31)) {
            try Ed25519.KeyPair(seed: secure(counting(31)))
        }
    }

    @Test func sameSeedSameKeys() throws {
        let a = try Ed25519.KeyPair(using: SeededRandom(label: "same"))
        let b = try Ed25519.KeyPair(using: SeededRandom(label: "same"))
        #expect(a.publicKey == b.publicKey)
        #expect(a.sign([7]) == b.sign([7]))
        #expect(a.description == "Ed25519.KeyPair(public: \(hex(a.publicKey.prefix(8)))…)")
    }

    @Test func agreementPublicKeyKnownAnswer() throws {
        // Montgomery u = (1 + y) / (1 − y), computed independently; equal to
        // X25519 of the clamped SHA-512 seed half.
        let expected = hexBytes("d85e07ec22b0ad881537c2f44d662d1a143cf830c57aca4305d85c7a90f6b62e")
        #expect(try Ed25519.agreementPublicKey(from: Self.publicKey) == expected)
        let pair = try Ed25519.KeyPair(seed: secure(Self.seed))
        #expect(try pair.agreementKeyPair().publicKey == expected)
    }

    @Test func agreementPublicKeyRejectsBadKeys() {
        #expect(throws: CryptoError.wrongLength(what: "Ed25519 public key", expected: 32, actual: 31)) {
            try Ed25519.agreementPublicKey(from: counting(31))
        }
        // The identity point (y = 1) has small order.
        var identity = [UInt8](repeating: 0, count: 32)
        identity[0] = 1
        #expect(throws: CryptoError.invalidPublicKey) { try Ed25519.agreementPublicKey(from: identity) }
        // y = 0 is a point of order 4.
        #expect(throws: CryptoError.invalidPublicKey) { try Ed25519.agreementPublicKey(from: [UInt8](repeating: 0, count: 32)) }
    }

    @Test func agreementKeyPairOpensBoxesSealedToConvertedKey() throws {
        let pair = try Ed25519.KeyPair(using: SeededRandom(label: "device"))
        let x = try Ed25519.agreementPublicKey(from: pair.publicKey)
        let message = secure(Array("epoch key material".utf8))
        let box = try X25519.seal(message, to: x, using: SeededRandom(label: "box"))
        let opened = try pair.agreementKeyPair().open(box)
        #expect(opened == message)
        let stranger = try Ed25519.KeyPair(using: SeededRandom(label: "stranger"))
        #expect(throws: CryptoError.authenticationFailed) { try stranger.agreementKeyPair().open(box) }
    }
}

@Suite struct X25519Tests {
    @Test func seedKeyPairKnownAnswer() throws {
        // crypto_box_seed_keypair: secret = SHA-512(seed)[0..<32]; computed independently.
        let pair = try X25519.KeyPair(seed: secure(counting(32)))
        #expect(pair.publicKey == hexBytes("4701d08488451f545a409fb58ae3e58581ca40ac3f7f114698cd71deac73ca01"))
        #expect(pair.description == "X25519.KeyPair(public: 4701d08488451f54…)")
        #expect(throws: CryptoError.wrongLength(what: "X25519 seed", expected: 32, actual: 33)) {
            try X25519.KeyPair(seed: secure(counting(33)))
        }
    }

    @Test(arguments: [0, 1, 50, 1000])
    func sealOpenRoundTrip(size: Int) throws {
        let recipient = try X25519.KeyPair(seed: secure(SeededRandom(label: "recipient").bytes(32)))
        let message = secure(SeededRandom(label: "message \(size)").bytes(size))
        let box = try X25519.seal(message, to: recipient.publicKey, using: SeededRandom(label: "ephemeral"))
        #expect(box.count == size + 48)
        #expect(box.count - size == X25519.sealOverheadByteCount)
        let opened = try recipient.open(box)
        #expect(opened.count == size)
        #expect(opened == message)
    }

    @Test func deterministicWithSameSeededRandom() throws {
        let recipient = try X25519.KeyPair(seed: secure(counting(32)))
        let message = secure([1, 2, 3, 4])
        let a = try X25519.seal(message, to: recipient.publicKey, using: SeededRandom(label: "eph"))
        let b = try X25519.seal(message, to: recipient.publicKey, using: SeededRandom(label: "eph"))
        let c = try X25519.seal(message, to: recipient.publicKey, using: SeededRandom(label: "eph2"))
        #expect(a == b)
        #expect(a != c)
        // The box starts with the ephemeral public key drawn from the source.
        let ephemeral = try X25519.KeyPair(seed: secure(SeededRandom(label: "eph").bytes(32)))
        #expect(Array(a[0..<32]) == ephemeral.publicKey)
    }

    @Test func wrongRecipientAndTamperingFail() throws {
        let recipient = try X25519.KeyPair(seed: secure(counting(32)))
        let other = try X25519.KeyPair(seed: secure(counting(32, from: 1)))
        let box = try X25519.seal(secure(counting(10)), to: recipient.publicKey, using: SeededRandom(label: "t"))
        #expect(throws: CryptoError.authenticationFailed) { try other.open(box) }
        for i in box.indices {
            #expect(throws: CryptoError.authenticationFailed) { try recipient.open(flipped(box, at: i)) }
        }
        #expect(throws: CryptoError.authenticationFailed) { try recipient.open(Array(box.dropLast())) }
        #expect(throws: CryptoError.authenticationFailed) { try recipient.open(Array(box[0..<47])) }
        #expect(throws: CryptoError.authenticationFailed) { try recipient.open([]) }
    }

    @Test func sealRejectsBadRecipients() {
        #expect(throws: CryptoError.wrongLength(what: "X25519 public key", expected: 32, actual: 31)) {
            try X25519.seal(secure([1]), to: counting(31), using: SeededRandom(label: "x"))
        }
        #expect(throws: CryptoError.invalidPublicKey) {
            try X25519.seal(secure([1]), to: [UInt8](repeating: 0, count: 32), using: SeededRandom(label: "x"))
        }
    }
}

@Suite struct Argon2idTests {
    @Test func knownAnswer() throws {
        // Argon2id v1.3, t = 1, m = 8 KiB, p = 1, computed with the reference
        // implementation (argon2-cffi).
        let key = try Argon2id.deriveKey(
            passphrase: secure(Array("password".utf8)), salt: counting(16), opsLimit: 1, memLimitBytes: 8192)
        #expect(key.storage.copyBytes() == hexBytes("3a008963c65f7ffa7331a90babd1fd17ea9f03bd05356b857ceb43f7b7080adc"))
        let empty = try Argon2id.deriveKey(
            passphrase: secure([]), salt: [UInt8](repeating: 0, count: 16), opsLimit: 2, memLimitBytes: 16384)
        #expect(empty.storage.copyBytes() == hexBytes("15a85392e9d8a1c89c438b640676bfcc7d4a17b5c50428fe0ce1ddb4fb5f41e6"))
    }

    @Test func deterministicAndSaltAndPassphraseMatter() throws {
        let pass = secure(Array("correct horse".utf8))
        let a = try Argon2id.deriveKey(passphrase: pass, salt: counting(16), opsLimit: 1, memLimitBytes: 8192)
        let b = try Argon2id.deriveKey(passphrase: pass, salt: counting(16), opsLimit: 1, memLimitBytes: 8192)
        let otherSalt = try Argon2id.deriveKey(passphrase: pass, salt: counting(16, from: 1), opsLimit: 1, memLimitBytes: 8192)
        let otherPass = try Argon2id.deriveKey(passphrase: secure(Array("correct horsE".utf8)), salt: counting(16), opsLimit: 1, memLimitBytes: 8192)
        let otherOps = try Argon2id.deriveKey(passphrase: pass, salt: counting(16), opsLimit: 2, memLimitBytes: 8192)
        let otherMem = try Argon2id.deriveKey(passphrase: pass, salt: counting(16), opsLimit: 1, memLimitBytes: 16384)
        #expect(a == b)
        let all = [a, otherSalt, otherPass, otherOps, otherMem].map { $0.storage.copyBytes() }
        #expect(Set(all).count == 5)
    }

    @Test func rejectsBadParameters() {
        let pass = secure([1])
        #expect(throws: CryptoError.wrongLength(what: "Argon2id salt", expected: 16, actual: 15)) {
            try Argon2id.deriveKey(passphrase: pass, salt: counting(15), opsLimit: 1, memLimitBytes: 8192)
        }
        #expect(throws: CryptoError.passwordHashFailed(opsLimit: 0, memLimitBytes: 8192)) {
            try Argon2id.deriveKey(passphrase: pass, salt: counting(16), opsLimit: 0, memLimitBytes: 8192)
        }
        #expect(throws: CryptoError.passwordHashFailed(opsLimit: 1, memLimitBytes: 4096)) {
            try Argon2id.deriveKey(passphrase: pass, salt: counting(16), opsLimit: 1, memLimitBytes: 4096)
        }
        #expect(Argon2id.saltByteCount == 16)
        #expect(Argon2id.moderateOpsLimit == 3)
        #expect(Argon2id.moderateMemLimitBytes == 268_435_456)
    }
}

@Suite struct CryptoErrorTests {
    @Test func descriptions() {
        #expect(CryptoError.authenticationFailed.description == "authentication failed: wrong key or altered data")
        #expect(CryptoError.badSignature.description == "signature does not verify")
        #expect(CryptoError.wrongLength(what: "key", expected: 32, actual: 3).description == "key must be 32 bytes, got 3")
        #expect(CryptoError.invalidPublicKey.description == "public key is not a valid curve point")
        #expect(CryptoError.passwordHashFailed(opsLimit: 1, memLimitBytes: 2).description == "Argon2id failed with opslimit 1 and memlimit 2 bytes")
        #expect(CryptoError.outOfSecureMemory(byteCount: 9).description == "could not allocate 9 bytes of guarded memory")
    }
}
