import Foundation
@_spi(Crypto) import QuireCrypto
@_spi(Format) import QuireFormat
@_spi(Format) import QuireKeys
import Testing

/// Device codes, fingerprints and names (`Spec/keys.md §3.1`, §3.2).
@Suite struct DeviceIdentityTests {
    /// The device whose Ed25519 seed is 00 01 … 1f.
    static func countingDevice(name: String = "Laptop") throws -> DeviceIdentity {
        try DeviceIdentity(keyPair: Ed25519.KeyPair(seed: secure(counting(32))), name: name, created: 0)
    }

    /// Known answers, computed independently with PyNaCl and hashlib.
    @Test func knownAnswers() throws {
        let device = try Self.countingDevice()
        #expect(hex(device.publicKey) == "03a107bff3ce10be1d70dd18e74bc09967e4d6309ba50d5f1ddc8664125531b8")
        #expect(device.code == "0EGG-FFZK-SR8B-W7BG-VMCE-EJY0-K5KY-9NHG-KEJG-TQRX-VJ36-84JN-66WC-4Q43")
        #expect(device.fingerprint == "DN8X-H7Q6-01V2-BCGK")
        #expect(hex(device.id.bytes) == "9d24e2eeaf27c2a088a564a32fc03a88")
        #expect(try DeviceCode.parse(device.code) == device.publicKey)
    }

    @Test func codeParsingIgnoresCaseSpacesAndDashesAndReadsConfusables() throws {
        let device = try Self.countingDevice()
        let sloppy = device.code.lowercased().replacingOccurrences(of: "-", with: " ").replacingOccurrences(of: "0", with: "o")
        #expect(try DeviceCode.parse(sloppy) == device.publicKey)
    }

    @Test func everySingleChangedCharacterIsCaught() throws {
        let code = Array(try Self.countingDevice().code.filter { $0 != "-" })
        #expect(code.count == 56)
        let alphabet = Array("0123456789ABCDEFGHJKMNPQRSTVWXYZ")
        var caught = 0
        for i in code.indices {
            var typo = code
            typo[i] = alphabet[(alphabet.firstIndex(of: code[i])! + 7) % 32]
            do {
                _ = try DeviceCode.parse(String(typo))
            } catch {
                caught += 1
            }
        }
        // Every position changes the key or the checksum; a 24-bit checksum
        // misses a given typo with probability 2^-24.
        #expect(caught == code.count)
    }

    @Test func badCodes() throws {
        #expect(throws: KeyError.deviceCodeInvalid(reason: "it has 55 characters; a device code has 56 (not counting dashes)")) {
            _ = try DeviceCode.parse(String(try Self.countingDevice().code.dropLast()))
        }
        #expect(throws: KeyError.deviceCodeInvalid(reason: "\"U\" (U+0055) is not a device-code character")) {
            _ = try DeviceCode.parse("U" + String(try Self.countingDevice().code.dropFirst()))
        }
        #expect(throws: KeyError.deviceCodeInvalid(reason: "this is a recovery key, not a device code: keep it secret, and type the code the new device shows for itself instead")) {
            _ = try DeviceCode.parse(countingRecoveryKey().code())
        }
        // A key that is not a point on the curve, with a right checksum.
        var notAPoint = [UInt8](repeating: 0xff, count: 32)
        notAPoint[31] = 0x7f
        let forged = try hand(notAPoint)
        #expect(throws: KeyError.deviceCodeInvalid(reason: "it does not hold a valid public key")) { _ = try DeviceCode.parse(forged) }
    }

    /// A device code for any 32 bytes, checksum included.
    func hand(_ key: [UInt8]) throws -> String {
        let check = Array(BLAKE2b.hash(Array("quire-device-code-v1".utf8) + key, byteCount: 16).prefix(3))
        // Base32 by hand so the test does not reuse the encoder under test.
        let alphabet = Array("0123456789ABCDEFGHJKMNPQRSTVWXYZ")
        var out = ""
        var acc = 0
        var bits = 0
        for b in key + check {
            acc = (acc << 8 | Int(b)) & 0xffff
            bits += 8
            while bits >= 5 {
                bits -= 5
                out.append(alphabet[(acc >> bits) & 31])
            }
        }
        return out
    }

    @Test(arguments: [
        ("", "a device name must be 1 to 64 characters long (this one has 0)"),
        (String(repeating: "é", count: 65), "a device name must be 1 to 64 characters long (this one has 65)"),
        ("tab\there", "a device name cannot contain the invisible or control character U+0009"),
        ("right\u{202E}to left", "a device name cannot contain the invisible or control character U+202E"),
        ("zero\u{200B}width", "a device name cannot contain the invisible or control character U+200B"),
    ])
    func badNames(name: String, reason: String) {
        #expect(throws: KeyError.operationRefused(reason: reason)) { try DeviceIdentity.validateName(name) }
    }

    @Test func goodNames() throws {
        for name in ["Sam's laptop", "电话", "Телефон Льва", String(repeating: "x", count: 64)] {
            try DeviceIdentity.validateName(name)
        }
    }

    @Test func descriptionHoldsNoSecret() throws {
        let device = try Self.countingDevice()
        #expect(device.description == "DeviceIdentity(Laptop, DN8X-H7Q6-01V2-BCGK)")
        #expect(!"\(device.keyPair)".contains("000102"))
    }
}
