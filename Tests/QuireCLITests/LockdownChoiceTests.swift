import Foundation
import Testing

/// `quire device remove NAME --recovery-key-file FILE` when the device
/// enrolled others (`Spec/keys.md §6.3`, *suspects*): the file cannot tell a
/// thief's puppet from the user's tablet, so quire asks, or takes `--keep`
/// / `--remove-enrolled`, and never guesses.
@Suite struct LockdownChoiceTests {
    /// The laptop makes the vault and enrols the phone; the phone enrols a
    /// tablet and a puppet. A copy per answer.
    static func setUp(_ box: Sandbox) throws {
        try box.makeVault()
        for (name, home, enroller) in [("Phone", "phone", [String: String]()), ("Tablet", "tablet", ["QUIRE_HOME": box.path("phone")]),
            ("Puppet", "puppet", ["QUIRE_HOME": box.path("phone")])]
        {
            let code = try box.quire(["device", "code", "--device-name", name], env: ["QUIRE_HOME": box.path(home)])
            #expect(code.status == 0, "\(code)")
            let typed = code.stdout.trimmingCharacters(in: .newlines)
            let add = try box.quire(["device", "add", "Journal.quire", typed, "--name", name], env: enroller)
            #expect(add.status == 0, "\(add)")
        }
    }

    @Test func aRecoveryKeyRemovalAsksWhichEnrolledDevicesToKeep() throws {
        let box = try Sandbox()
        try Self.setUp(box)
        // No device key here: the recovery key opens.
        let stranger = ["QUIRE_HOME": box.path("stranger")]
        for name in ["Keep.quire", "All.quire"] {
            try FileManager.default.copyItem(atPath: box.path("Journal.quire"), toPath: box.path(name))
        }
        // No terminal and no answer: refused, nothing written.
        let asked = try box.quire(["device", "remove", "Journal.quire", "Phone", "--recovery-key-file", "recovery.txt"], env: stranger)
        #expect(asked.status == 64, "\(asked)")
        #expect(asked.stderr.contains("\"Phone\" enrolled \"Tablet\" (fingerprint "), "\(asked)")
        #expect(asked.stderr.contains("quire will not guess whether that was you or a thief"), "\(asked)")
        #expect(asked.stderr.contains("quire: hint: pass --keep NAME for each that is yours, or --remove-enrolled"), "\(asked)")
        #expect(try box.quire(["device", "list", "Journal.quire"]).stdout.contains("Phone"))

        // Keeping the tablet: the puppet goes with the phone.
        let keep = try box.quire(["device", "remove", "Keep.quire", "Phone", "--recovery-key-file", "recovery.txt", "--keep", "tablet"], env: stranger)
        #expect(keep.status == 0, "\(keep)")
        #expect(keep.stdout.contains("removed \"Puppet\" (fingerprint "), "\(keep)")
        #expect(!keep.stdout.contains("removed \"Tablet\""), "\(keep)")
        let kept = try box.quire(["device", "list", "Keep.quire", "--json"]).json()
        #expect(Set(((kept["devices"] as? [[String: Any]]) ?? []).compactMap { $0["name"] as? String }) == ["Laptop", "Tablet"])
        let tabletAdd = try box.quire(["add", "Keep.quire", "from the tablet"], env: ["QUIRE_HOME": box.path("tablet")])
        #expect(tabletAdd.status == 0, "\(tabletAdd)")

        // --remove-enrolled: all three go.
        let all = try box.quire(["device", "remove", "All.quire", "Phone", "--recovery-key-file", "recovery.txt", "--remove-enrolled"], env: stranger)
        #expect(all.status == 0, "\(all)")
        let left = try box.quire(["device", "list", "All.quire", "--json"]).json()
        #expect(((left["devices"] as? [[String: Any]]) ?? []).compactMap { $0["name"] as? String } == ["Laptop"])

        // --keep names only a device the removed one enrolled.
        let wrong = try box.quire(["device", "remove", "Journal.quire", "Phone", "--recovery-key-file", "recovery.txt", "--keep", "Laptop"], env: stranger)
        #expect(wrong.status == 64, "\(wrong)")
        #expect(wrong.stderr.contains("\"Laptop\" is not a device \"Phone\" enrolled"), "\(wrong)")
        // A device's removal takes no --keep.
        let byDevice = try box.quire(["device", "remove", "Journal.quire", "Phone", "--keep", "Tablet"])
        #expect(byDevice.status == 64, "\(byDevice)")
    }
}
