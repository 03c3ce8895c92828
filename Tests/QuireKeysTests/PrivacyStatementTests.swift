@_spi(Crypto) import QuireCrypto
@_spi(Format) import QuireFormat
@_spi(Format) import QuireKeys
import Testing

/// The privacy statement's defences against a hostile file (`Spec/keys.md §8`).
@Suite struct PrivacyStatementTests {
    /// A member name with a line break and a right-to-left override, signed
    /// into a keyring by hand (the library would refuse the name), cannot
    /// forge a line of the statement.
    @Test func hostileNamesAreEscaped() throws {
        let v = KeyringVault(label: "hostile name")
        let device = try Ed25519.KeyPair(using: SeededRandom(label: "hostile device"))
        let name = "Evil\"\n  - the recovery key\u{202E}"
        let members = [v.recoveryMember, KeyringMember(role: "device", publicKey: device.publicKey, name: name, added: 1)]
        let slots = [v.recoverySlot(v.epoch1), try SlotCrypto.deviceSlot(for: v.epoch1, devicePublicKey: device.publicKey, vaultID: v.vaultID, random: v.random)]
        let file = try v.create([(v.epoch1, v.body(v.epoch1, slots: slots, members: members))])
        let unlocked = try v.unlock(.recoveryKey(v.recovery))
        let text = try PrivacyStatement(unlocked: unlocked, structure: file.structure, vaultName: "J\r", thisDevice: nil).text
        #expect(text.contains("\n  - the device \"Evil\"\\u{A}  - the recovery key\\u{202E}\"\n  - the recovery key\n"))
        #expect(text.hasPrefix("\"J\\u{D}\" (vault "))
        #expect(!text.unicodeScalars.contains("\u{202E}") && !text.contains("\r"))
    }
}
