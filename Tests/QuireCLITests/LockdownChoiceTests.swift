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

    /// Review 17b G1/G3 through the CLI: the phone removes the tablet and
    /// rekeys; the laptop takes the copy and writes under the rekey. The
    /// recovery key's removal of the phone keeps the laptop's entry (the
    /// rekey is adopted) and the tablet out (review 18 R18-2), with no
    /// warning of records cut.
    @Test func aRecoveryKeyRemovalKeepsWhatOthersWroteUnderTheDevicesKeys() throws {
        let box = try Sandbox()
        try box.makeVault()
        for (name, home) in [("Phone", "phone"), ("Tablet", "tablet")] {
            let code = try box.quire(["device", "code", "--device-name", name], env: ["QUIRE_HOME": box.path(home)])
            let add = try box.quire(["device", "add", "Journal.quire", code.stdout.trimmingCharacters(in: .newlines), "--name", name])
            #expect(add.status == 0, "\(add)")
        }
        try FileManager.default.copyItem(atPath: box.path("Journal.quire"), toPath: box.path("Phone.quire"))
        let phone = ["QUIRE_HOME": box.path("phone")]
        #expect(try box.quire(["device", "remove", "Phone.quire", "Tablet"], env: phone).status == 0)
        let rekey = try box.quire(["compact", "Phone.quire", "--rekey"], env: phone)
        #expect(rekey.status == 0, "\(rekey)")
        let merge = try box.quire(["merge", "Journal.quire", "Phone.quire"])
        #expect(merge.status == 0, "\(merge)")
        _ = try box.add("laptop, under the rekey")
        let stranger = ["QUIRE_HOME": box.path("stranger")]
        let removal = try box.quire(["device", "remove", "Journal.quire", "Phone", "--recovery-key-file", "recovery.txt"], env: stranger)
        #expect(removal.status == 0, "\(removal)")
        #expect(removal.stderr.isEmpty, "\(removal)")
        let devices = try box.quire(["device", "list", "Journal.quire", "--json"]).json()
        #expect(((devices["devices"] as? [[String: Any]]) ?? []).compactMap { $0["name"] as? String } == ["Laptop"])
        let list = try box.quire(["list", "Journal.quire"])
        #expect(list.status == 0 && list.stderr.isEmpty && list.stdout.contains("laptop, under the rekey"), "\(list)")
    }

    /// Trial 25 F1: the README's stolen-device command run on the laptop
    /// (which has its own device key). The device key opened the vault
    /// first, so the recovery key was never used: `--remove-enrolled` was
    /// refused as "only with the recovery key", and without it the phone
    /// was removed by the laptop, its puppet left reading. An explicit
    /// `--recovery-key-file` now unlocks.
    @Test func theRecoveryKeyFileWinsOverThisDevicesKey() throws {
        let box = try Sandbox()
        try Self.setUp(box)
        let removal = try box.quire(["device", "remove", "Journal.quire", "Phone", "--recovery-key-file", "recovery.txt", "--remove-enrolled"])
        #expect(removal.status == 0, "\(removal)")
        #expect(removal.stdout.contains("removed \"Puppet\" (fingerprint "), "\(removal)")
        let left = try box.quire(["device", "list", "Journal.quire", "--json"]).json()
        #expect(((left["devices"] as? [[String: Any]]) ?? []).compactMap { $0["name"] as? String } == ["Laptop"])
        let puppet = try box.quire(["add", "Journal.quire", "from the puppet"], env: ["QUIRE_HOME": box.path("puppet")])
        #expect(puppet.status != 0, "\(puppet)")
    }

    /// Trial 26 N1: the laptop removed the stolen phone as a device; the
    /// user enrolled a new phone, also named "Phone". The README's
    /// recovery-key command then removed the honest new phone, leaving the
    /// old one's puppet reading. A name a current and a removed device
    /// share is now refused, both fingerprints listed, and --fingerprint
    /// says which.
    @Test func aNameAnEnrolledAndARemovedDeviceShareIsNotGuessed() throws {
        let box = try Sandbox()
        try Self.setUp(box)
        #expect(try box.quire(["device", "remove", "Journal.quire", "Phone"]).status == 0)
        let code = try box.quire(["device", "code", "--device-name", "Phone"], env: ["QUIRE_HOME": box.path("newphone")])
        let add = try box.quire(["device", "add", "Journal.quire", code.stdout.trimmingCharacters(in: .newlines), "--name", "Phone"])
        #expect(add.status == 0, "\(add)")
        let listed = try box.quire(["device", "list", "Journal.quire", "--json"]).json()
        let old = ((listed["removed"] as? [[String: Any]]) ?? []).first { $0["name"] as? String == "Phone" }?["fingerprint"] as? String ?? ""
        #expect(!old.isEmpty, "\(listed)")

        let stranger = ["QUIRE_HOME": box.path("stranger")]
        let asked = try box.quire(
            ["device", "remove", "Journal.quire", "Phone", "--recovery-key-file", "recovery.txt", "--remove-enrolled"], env: stranger)
        #expect(asked.status == 64, "\(asked)")
        #expect(asked.stderr.contains("2 devices are named \"Phone\""), "\(asked)")
        #expect(asked.stderr.contains("fingerprint \(old) (removed)"), "\(asked)")

        let removal = try box.quire(
            ["device", "remove", "Journal.quire", "Phone", "--recovery-key-file", "recovery.txt", "--remove-enrolled", "--fingerprint", old],
            env: stranger)
        #expect(removal.status == 0, "\(removal)")
        let left = try box.quire(["device", "list", "Journal.quire", "--json"]).json()
        #expect(Set(((left["devices"] as? [[String: Any]]) ?? []).compactMap { $0["name"] as? String }) == ["Laptop", "Phone"])
        let puppet = try box.quire(["add", "Journal.quire", "from the puppet"], env: ["QUIRE_HOME": box.path("puppet")])
        #expect(puppet.status != 0, "\(puppet)")
        let newPhone = try box.quire(["add", "Journal.quire", "from the new phone"], env: ["QUIRE_HOME": box.path("newphone")])
        #expect(newPhone.status == 0, "\(newPhone)")
    }

    /// Review 20 R20-2: what a recovery-key removal changes besides the
    /// devices it takes is said. The laptop removes the phone; the phone,
    /// from an old copy, removes the laptop (mutual); the tablet merges
    /// both. Removing the phone with the recovery key brings the laptop
    /// back — the file cannot tell that from a lost phone's removal of a
    /// stolen laptop — so quire warns, naming it. A passphrase the phone
    /// set is dropped: warned too.
    @Test func aRecoveryKeyRemovalSaysWhoComesBackAndWhatIsDropped() throws {
        let box = try Sandbox()
        try Self.setUp(box)
        let phone = ["QUIRE_HOME": box.path("phone")]
        let stranger = ["QUIRE_HOME": box.path("stranger")]
        try box.write("pw.txt", "the phone's passphrase")
        let set = try box.quire(["keys", "passphrase", "Journal.quire", "--new-passphrase-file", "pw.txt"], env: phone)
        #expect(set.status == 0, "\(set)")
        try FileManager.default.copyItem(atPath: box.path("Journal.quire"), toPath: box.path("Old.quire"))
        let byLaptop = try box.quire(["device", "remove", "Journal.quire", "Phone"])
        #expect(byLaptop.status == 0, "\(byLaptop)")
        let answer = try box.quire(["device", "remove", "Old.quire", "Laptop"], env: phone)
        #expect(answer.status == 0, "\(answer)")
        let merge = try box.quire(["merge", "Journal.quire", "Old.quire"], env: ["QUIRE_HOME": box.path("tablet")])
        #expect(merge.status == 0, "\(merge)")
        let before = try box.quire(["device", "list", "Journal.quire", "--json"], env: ["QUIRE_HOME": box.path("tablet")]).json()
        #expect(!((before["devices"] as? [[String: Any]]) ?? []).contains { $0["name"] as? String == "Laptop" }, "\(before)")

        let removal = try box.quire(
            ["device", "remove", "Journal.quire", "Phone", "--recovery-key-file", "recovery.txt", "--keep", "Tablet"], env: stranger)
        #expect(removal.status == 0, "\(removal)")
        #expect(removal.stderr.contains("\"Laptop\" (fingerprint "), "\(removal)")
        #expect(removal.stderr.contains("is a member again: the removal of it that \"Phone\" (or a device it enrolled) made"), "\(removal)")
        #expect(removal.stderr.contains("the passphrase no longer opens what is written from now on"), "\(removal)")
        let after = try box.quire(["device", "list", "Journal.quire", "--json"]).json()
        #expect(Set(((after["devices"] as? [[String: Any]]) ?? []).compactMap { $0["name"] as? String }) == ["Laptop", "Tablet"])
    }

    /// Review 18 R18-7: the phone enrols a puppet named "Tablet" on its
    /// copy while the laptop enrols the user's tablet, also "Tablet"; the
    /// copies are merged. `--keep Tablet` must not keep the puppet in the
    /// user's tablet's place: refused, with both fingerprints.
    @Test func keepRefusesANameTwoDevicesShare() throws {
        let box = try Sandbox()
        try box.makeVault()
        func code(_ home: String) throws -> String {
            let c = try box.quire(["device", "code", "--device-name", "Tablet"], env: ["QUIRE_HOME": box.path(home)])
            return c.stdout.trimmingCharacters(in: .newlines)
        }
        let phoneCode = try box.quire(["device", "code", "--device-name", "Phone"], env: ["QUIRE_HOME": box.path("phone")])
        #expect(try box.quire(["device", "add", "Journal.quire", phoneCode.stdout.trimmingCharacters(in: .newlines), "--name", "Phone"]).status == 0)
        try FileManager.default.copyItem(atPath: box.path("Journal.quire"), toPath: box.path("Phone.quire"))
        let puppet = try box.quire(["device", "add", "Phone.quire", try code("puppet"), "--name", "Tablet"], env: ["QUIRE_HOME": box.path("phone")])
        #expect(puppet.status == 0, "\(puppet)")
        #expect(try box.quire(["device", "add", "Journal.quire", try code("tablet"), "--name", "Tablet"]).status == 0)
        let merge = try box.quire(["merge", "Journal.quire", "Phone.quire"])
        #expect(merge.status == 0, "\(merge)")
        let stranger = ["QUIRE_HOME": box.path("stranger")]
        let keep = try box.quire(
            ["device", "remove", "Journal.quire", "Phone", "--recovery-key-file", "recovery.txt", "--keep", "Tablet"], env: stranger)
        #expect(keep.status == 64, "\(keep)")
        #expect(keep.stderr.contains("2 devices are named \"Tablet\""), "\(keep)")
        #expect(try box.quire(["device", "list", "Journal.quire"]).stdout.contains("Phone"))
    }
}
