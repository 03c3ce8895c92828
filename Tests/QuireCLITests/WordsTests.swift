import Foundation
import Testing

/// Words a new user meets: epoch and escrow explained where they first
/// appear; hints that name the right option.
@Suite struct WordsTests {
    @Test func keysStatusExplainsEpochAndEscrowOnce() throws {
        let box = try Sandbox()
        try box.makeVault()
        let r = try box.quire(["keys", "status", "Journal.quire"])
        let lines = r.stdout.split(separator: "\n").map(String.init)
        let epoch = try #require(lines.firstIndex { $0.lowercased().contains("epoch") })
        #expect(lines[epoch + 1].contains("(An epoch is one generation of the vault's keys"), "\(r)")
        let escrow = try #require(lines.firstIndex { $0.lowercased().contains("escrow") })
        #expect(lines[escrow + 1].contains("(An escrow key belongs to a custodian you chose"), "\(r)")
        #expect(r.stdout.components(separatedBy: "(An epoch is").count == 2)
        #expect(r.stdout.components(separatedBy: "(An escrow key").count == 2)
    }

    @Test func thePassphraseHintNamesTheRightOption() throws {
        let box = try Sandbox()
        try box.makeVault()
        let r = try box.quire(["keys", "passphrase", "Journal.quire"])
        #expect(r.status == 64)
        #expect(r.stderr == "quire: error: a passphrase can only be typed on a terminal\nquire: hint: give it in a file with --new-passphrase-file FILE (mode 0600)\n")
    }
}
