@_spi(Crypto) import QuireCrypto
@_spi(Format) @_spi(Crypto) import QuireKeys
import Testing

@Suite struct RecoveryKeyTests {
    // Independent computation: 00…1f ‖ first 3 bytes of
    // BLAKE2b-128("quire-recovery-v1" ‖ key), in Crockford base32, grouped by 4.
    static let countingCode = "000G-40R4-0M30-E209-185G-R38E-1W81-24GK-2GAH-C5RR-34D1-P70X-3RFT-BT6J"
    static let alphabet = Array("0123456789ABCDEFGHJKMNPQRSTVWXYZ")

    static func invalid(_ code: String) -> KeyError? {
        do {
            _ = try RecoveryKey(code: code)
            return nil
        } catch {
            return error.layer as? KeyError
        }
    }

    @Test func codeKnownAnswerAndShape() {
        let code = countingRecoveryKey().code()
        #expect(code == Self.countingCode)
        // 56 characters in 14 groups of 4, joined by 13 dashes: 69 in all.
        #expect(code.count == 69)
        let groups = code.split(separator: "-", omittingEmptySubsequences: false)
        #expect(groups.count == 14)
        #expect(groups.allSatisfy { $0.count == 4 })
        #expect(code.filter { $0 != "-" }.allSatisfy { Self.alphabet.contains($0) })
    }

    @Test func randomCodesHaveTheSameShapeAndRoundTrip() throws {
        for i in 0..<50 {
            let key = try RecoveryKey(using: SeededRandom(label: "rk \(i)"))
            let code = key.code()
            #expect(code.count == 69)
            #expect(code.split(separator: "-").map(\.count) == Array(repeating: 4, count: 14))
            #expect(try RecoveryKey(code: code).secret == key.secret)
        }
    }

    @Test func roundTrip() throws {
        let parsed = try RecoveryKey(code: Self.countingCode)
        #expect(parsed.secret.storage.copyBytes() == counting(32))
        #expect(parsed.code() == Self.countingCode)
    }

    @Test func caseSpacesAndDashesAreIgnored() throws {
        let bare = Self.countingCode.replacing("-", with: "")
        let variants = [
            Self.countingCode.lowercased(),
            bare,
            bare.lowercased(),
            Self.countingCode.replacing("-", with: " "),
            "  " + Self.countingCode.replacing("-", with: "\t") + "\n",
            Self.countingCode.replacing("-", with: "\r\n"),
            String(bare.enumerated().map { $0.offset % 2 == 0 ? Character($0.element.lowercased()) : $0.element }),
            bare.map { "\($0)-" }.joined(),
        ]
        for v in variants {
            #expect(try RecoveryKey(code: v).secret == countingRecoveryKey().secret, "\(v)")
        }
    }

    /// The bytes-based parser (used by the CLI, so that a typed code never
    /// becomes a String) reads every form the String one reads, and fails
    /// alike, without naming a non-ASCII byte's character wrongly.
    @Test func codeBytesParseLikeTheString() throws {
        let bare = Self.countingCode.replacing("-", with: "")
        for v in [Self.countingCode, Self.countingCode.lowercased(), bare, "  " + Self.countingCode + "\r\n", Self.countingCode.replacing("1", with: "l")] {
            #expect(try RecoveryKey(codeBytes: Array(v.utf8)).secret == countingRecoveryKey().secret, "\(v)")
        }
        for bad in [String(Self.countingCode.dropLast()), Self.countingCode + "Z", Self.countingCode.replacing("0", with: "\u{00E9}")] {
            var fromBytes = ""
            do { _ = try RecoveryKey(codeBytes: Array(bad.utf8)) } catch { fromBytes = error.description }
            #expect(!fromBytes.isEmpty && fromBytes == Self.invalid(bad)?.description, "\(bad)")
        }
        #expect(throws: KeyError.self) { try RecoveryKey(codeBytes: [0xff] + Array(bare.utf8.dropFirst())) }
    }

    @Test func confusableLettersAreRead() throws {
        #expect(Self.countingCode.contains("0") && Self.countingCode.contains("1"))
        let variants = [
            Self.countingCode.replacing("0", with: "O"),
            Self.countingCode.replacing("0", with: "o"),
            Self.countingCode.replacing("1", with: "I"),
            Self.countingCode.replacing("1", with: "i"),
            Self.countingCode.replacing("1", with: "L"),
            Self.countingCode.replacing("1", with: "l"),
        ]
        for v in variants {
            #expect(try RecoveryKey(code: v).secret == countingRecoveryKey().secret, "\(v)")
        }
    }

    @Test func everySingleChangedCharacterFailsTheChecksum() {
        let chars = Array(Self.countingCode)
        for i in chars.indices where chars[i] != "-" {
            for step in [1, 17] {
                var changed = chars
                let index = Self.alphabet.firstIndex(of: chars[i])!
                changed[i] = Self.alphabet[(index + step) % 32]
                #expect(
                    Self.invalid(String(changed)) == .recoveryCodeInvalid(reason: "its checksum does not match; check for a mistyped character"),
                    "position \(i)")
            }
        }
        // Two swapped neighbours.
        var swapped = chars
        swapped.swapAt(0, 3)
        #expect(Self.invalid(String(swapped)) == .recoveryCodeInvalid(reason: "its checksum does not match; check for a mistyped character"))
    }

    @Test(arguments: [0, 1, 55, 57, 60, 112])
    func wrongLengthIsInvalid(count: Int) {
        let bare = Array(Self.countingCode.replacing("-", with: ""))
        let text = String((0..<count).map { bare[$0 % bare.count] })
        #expect(Self.invalid(text) == .recoveryCodeInvalid(reason: "it has \(count) characters; a recovery key has 56 (not counting dashes)"))
    }

    @Test(arguments: ["U", "u", "*", "é", "_", "+", "="])
    func charactersOutsideTheAlphabetAreRejected(bad: String) {
        var chars = Array(Self.countingCode)
        chars[5] = Character(bad)
        let scalar = bad.unicodeScalars.first!.value
        let digits = String(scalar, radix: 16, uppercase: true)
        let codePoint = "U+" + String(repeating: "0", count: max(0, 4 - digits.count)) + digits
        #expect(Self.invalid(String(chars)) == .recoveryCodeInvalid(reason: "\"\(bad)\" (\(codePoint)) is not a recovery-key character"))
    }

    @Test func derivedKeysKnownAnswers() throws {
        let key = countingRecoveryKey()
        // Seed crypto_kdf_derive_from_key(32, 2, "quire rk", 00…1f), computed independently.
        let signer = try key.signingKeyPair()
        #expect(hex(signer.publicKey) == "67db7b064a1d180c4dfbc30df55cc66b81f57a4cab02ff7cf9585e4aa0e106c3")
        #expect(try key.signingKeyPair().publicKey == signer.publicKey)
        #expect(key.description == "RecoveryKey(hidden)")
        #expect(!"\(key)".contains("000G"))
    }

    @Test func differentKeysDiffer() throws {
        let a = recoveryKey("a"), b = recoveryKey("b")
        #expect(a.code() != b.code())
        #expect(try a.signingKeyPair().publicKey != b.signingKeyPair().publicKey)
        #expect(recoveryKey("a").code() == a.code())
    }
}
