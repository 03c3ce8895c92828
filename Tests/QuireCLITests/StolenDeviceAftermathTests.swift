import Foundation
@_spi(Format) import Quire
import QuireSystem
import Testing

/// What the CLI says after the README's lockdown of a stolen device
/// (`device remove NAME --recovery-key-file FILE`, `Spec/keys.md §6.3`):
/// trials 25 and 26 (F3, F4, N3, N5).
@Suite struct StolenDeviceAftermathTests {
    /// The laptop makes the vault and enrols the phone; the phone, stolen,
    /// enrols a puppet, sets a passphrase and writes.
    static func stolenPhone(_ box: Sandbox) throws {
        try box.makeVault()
        _ = try box.add("before the theft")
        let phone = ["QUIRE_HOME": box.path("phone")]
        for (name, home, enroller) in [("Phone", "phone", [String: String]()), ("Puppet", "puppet", phone)] {
            let code = try box.quire(["device", "code", "--device-name", name], env: ["QUIRE_HOME": box.path(home)])
            let add = try box.quire(
                ["device", "add", "Journal.quire", code.stdout.trimmingCharacters(in: .newlines), "--name", name], env: enroller)
            #expect(add.status == 0, "\(add)")
        }
        try box.write("thief.txt", "the thief's passphrase")
        let set = try box.quire(["keys", "passphrase", "Journal.quire", "--new-passphrase-file", "thief.txt"], env: phone)
        #expect(set.status == 0, "\(set)")
        #expect(try box.quire(["add", "Journal.quire", "the thief writes"], env: phone).status == 0)
    }

    /// Trial 26 N5: after a successful lockdown, `verify` exited 2 and called
    /// the thief's keyrings, cut on purpose, "DAMAGED … Restore the lost
    /// ones from another copy". They are said as cut by the removal, exit 0;
    /// a changed byte is still damage, exit 2.
    @Test func recordsALockdownCutAreSaidAsCutNotAsDamage() throws {
        let box = try Sandbox()
        try Self.stolenPhone(box)
        let removal = try box.quire([
            "device", "remove", "Journal.quire", "Phone", "--recovery-key-file", "recovery.txt", "--remove-enrolled",
        ])
        #expect(removal.status == 0, "\(removal)")
        _ = try box.add("after the lockdown")
        for env in [[:], ["QUIRE_HOME": box.path("stranger")]] {
            let unlock = env.isEmpty ? [] : ["--recovery-key-file", "recovery.txt"]
            let verify = try box.quire(["verify", "Journal.quire"] + unlock, env: env)
            #expect(verify.status == 0, "\(verify)")
            #expect(verify.stdout.hasPrefix("Journal.quire: intact; 2 keyrings cut on purpose by a device removal (below)."), "\(verify)")
            #expect(verify.stdout.contains("2 keyrings were cut on purpose by a removal the recovery key signed: not damage"), "\(verify)")
            #expect(!verify.stdout.contains("record was cut") && !verify.stdout.contains("records were cut"), "\(verify)")
            #expect(verify.stdout.contains("  cut: frame "), "\(verify)")
            #expect(verify.stdout.contains(": by the removal of \"Phone\" (keyring frame "), "\(verify)")
            #expect(!verify.stdout.contains("DAMAGED") && !verify.stdout.contains("Restore"), "\(verify)")
            let json = try box.quire(["verify", "Journal.quire", "--json"] + unlock, env: env).json()
            #expect(json["intact"] as? Bool == true, "\(json)")
            #expect(json["cutByRemoval"] as? Int == 2, "\(json)")
            let issues = (json["issues"] as? [[String: Any]]) ?? []
            #expect(issues.filter { $0["code"] as? String == "keyring_unauthenticated" && $0["damage"] as? Bool == false }.count == 2)
        }
        // A changed byte in the entry written after: damage, exit 2.
        let revisions = try VaultScanner.scan(path: box.path("Journal.quire")).frames.filter { $0.header.kind == .entryRevision }
        let last = try #require(revisions.last)
        var bytes = try Data(contentsOf: URL(fileURLWithPath: box.path("Journal.quire")))
        bytes[Int(last.bodyOffset) + 40] ^= 0xff
        try bytes.write(to: URL(fileURLWithPath: box.path("Journal.quire")))
        let damaged = try box.quire(["verify", "Journal.quire"])
        #expect(damaged.status == 2, "\(damaged)")
        #expect(damaged.stdout.hasPrefix("Journal.quire: DAMAGED. 1 record lost or untrusted;"), "\(damaged)")
        #expect(damaged.stdout.contains("[authentication_failed]"), "\(damaged)")
        #expect(damaged.stdout.contains("  cut: frame "), "\(damaged)")
    }

    /// The laptop makes the vault and enrols the phone; the phone, stolen,
    /// removes the laptop and writes under its new key; a stranger's
    /// machine locks it down with the recovery key (`--remove-enrolled`).
    /// Returns the stranger's environment.
    static func thiefRemovedTheLaptopThenLockdown(_ box: Sandbox) throws -> [String: String] {
        try box.makeVault()
        _ = try box.add("laptop, before")
        let phone = ["QUIRE_HOME": box.path("phone")]
        let code = try box.quire(["device", "code", "--device-name", "Phone"], env: phone)
        #expect(
            try box.quire(["device", "add", "Journal.quire", code.stdout.trimmingCharacters(in: .newlines), "--name", "Phone"]).status == 0)
        #expect(try box.quire(["device", "remove", "Journal.quire", "Laptop"], env: phone).status == 0)
        #expect(try box.quire(["add", "Journal.quire", "the thief writes"], env: phone).status == 0)
        let stranger = ["QUIRE_HOME": box.path("stranger")]
        let removal = try box.quire(
            ["device", "remove", "Journal.quire", "Phone", "--recovery-key-file", "recovery.txt", "--remove-enrolled"], env: stranger)
        #expect(removal.status == 0, "\(removal)")
        return stranger
    }

    /// Trial 25 F3 / trial 26 N3 and N5: the stolen phone removes the
    /// laptop on the live file and writes under its new key; the lockdown
    /// cuts that key. The phone's keyring, and the record and commits the
    /// phone wrote and signed under that key, which the key proves (the
    /// commits' heads compute under its commit key, their attestations
    /// open under it and the phone signed them, the record opens under
    /// it), are said as cut by the removal: intact, exit 0. Before, the
    /// record and commits were said as lost, exit 2, after every lockdown
    /// where the thief wrote anything.
    @Test func recordsTheThiefWroteUnderAKeyTheLockdownCutAreSaidAsCut() throws {
        let box = try Sandbox()
        let stranger = try Self.thiefRemovedTheLaptopThenLockdown(box)
        let list = try box.quire(["list", "Journal.quire", "--recovery-key-file", "recovery.txt"], env: stranger)
        #expect(list.status == 0, "\(list)")
        #expect(list.stderr.contains("1 record in Journal.quire could not be read (frame "), "\(list)")
        let verify = try box.quire(["verify", "Journal.quire", "--recovery-key-file", "recovery.txt"], env: stranger)
        #expect(verify.status == 0, "\(verify)")
        #expect(
            verify.stdout.hasPrefix("Journal.quire: intact; 1 keyring, 1 record and 2 commits cut on purpose by a device removal (below)."),
            "\(verify)")
        #expect(
            verify.stdout.contains("1 keyring, 1 record and 2 commits were cut on purpose by a removal the recovery key signed"),
            "\(verify)")
        #expect(!verify.stdout.contains("lost:") && !verify.stdout.contains("DAMAGED"), "\(verify)")
        let cut = verify.stdout.split(separator: "\n").filter { $0.hasPrefix("  cut: ") }
        #expect(cut.count == 4, "\(verify)")
        #expect(cut.allSatisfy { $0.contains(": by the removal of \"Phone\" (keyring frame ") }, "\(verify)")
        for code in ["keyring_unauthenticated", "unknown_key", "commit_unverifiable"] {
            #expect(cut.contains { $0.hasSuffix("[\(code)]") }, "\(verify)")
        }
        let json = try box.quire(["verify", "Journal.quire", "--json", "--recovery-key-file", "recovery.txt"], env: stranger).json()
        #expect(json["intact"] as? Bool == true, "\(json)")
        #expect(json["cutByRemoval"] as? Int == 4, "\(json)")
        let issues = (json["issues"] as? [[String: Any]]) ?? []
        #expect(!issues.contains { $0["damage"] as? Bool == true }, "\(json)")
    }

    /// Trial 25 F3 / trial 26 N3: the stolen phone removed the laptop; the
    /// README's lockdown, run on the laptop, said only `removed "Phone"`,
    /// and no command made the new device key the laptop needs to come
    /// back. The lockdown now says who stays removed and how to come back;
    /// `device code --new-key` makes the key (the old one kept aside), and
    /// the errors on the way name it.
    @Test func aLockdownSaysWhoStaysRemovedAndANewKeyBringsItBack() throws {
        let box = try Sandbox()
        try box.makeVault()
        _ = try box.add("laptop, before")
        let phone = ["QUIRE_HOME": box.path("phone")]
        let code = try box.quire(["device", "code", "--device-name", "Phone"], env: phone)
        #expect(
            try box.quire(["device", "add", "Journal.quire", code.stdout.trimmingCharacters(in: .newlines), "--name", "Phone"]).status == 0)
        #expect(try box.quire(["device", "remove", "Journal.quire", "Laptop"], env: phone).status == 0)
        let oldCode = try box.quire(["device", "code"]).stdout.trimmingCharacters(in: .newlines)

        let removal = try box.quire([
            "device", "remove", "Journal.quire", "Phone", "--recovery-key-file", "recovery.txt", "--remove-enrolled",
        ])
        #expect(removal.status == 0, "\(removal)")
        #expect(removal.stdout.contains("\"Laptop\" (fingerprint "), "\(removal)")
        #expect(removal.stdout.contains(") stays removed: \"Phone\" (or a device it enrolled) removed it"), "\(removal)")
        #expect(removal.stdout.contains("on it, run 'quire device code --new-key'"), "\(removal)")
        // Its own error says it was removed, not "if you do not trust the
        // device \"Phone\", remove it": it cannot open the lockdown, so it
        // cannot know that was done (trial 26 N2).
        let write = try box.quire(["add", "Journal.quire", "from the laptop"])
        #expect(write.status == 1 && write.stderr.contains("'quire device code --new-key' here"), "\(write)")
        #expect(write.stderr.hasPrefix("quire: error: this device was removed from the vault, or left out on purpose: "), "\(write)")
        #expect(!write.stderr.contains("if you do not trust"), "\(write)")

        let stranger = ["QUIRE_HOME": box.path("stranger")]
        let again = try box.quire(
            ["device", "add", "Journal.quire", oldCode, "--name", "Laptop again", "--recovery-key-file", "recovery.txt"], env: stranger)
        #expect(again.status == 1, "\(again)")
        #expect(again.stderr.contains("quire: hint: on that device, run 'quire device code --new-key'"), "\(again)")

        let fresh = try box.quire(["device", "code", "--new-key"])
        #expect(fresh.status == 0, "\(fresh)")
        let newCode = fresh.stdout.trimmingCharacters(in: .newlines)
        #expect(newCode.count == oldCode.count && newCode != oldCode, "\(fresh)")
        #expect(fresh.stderr.contains("is kept in "), "\(fresh)")
        #expect(fresh.stderr.contains("This is the device code of \"Laptop\" (its key was made now)"), "\(fresh)")
        let kept = try FileManager.default.contentsOfDirectory(atPath: box.path("home")).filter { $0.hasPrefix("device.key.replaced-") }
        #expect(kept.count == 1, "\(kept)")
        let enrol = try box.quire(
            ["device", "add", "Journal.quire", newCode, "--name", "Laptop again", "--recovery-key-file", "recovery.txt"], env: stranger)
        #expect(enrol.status == 0, "\(enrol)")
        let back = try box.quire(["add", "Journal.quire", "from the laptop, back"])
        #expect(back.status == 0, "\(back)")
    }

    /// The phone removed the laptop; the laptop, which cannot open the
    /// phone's keyring, removes the phone with its own key. The warning
    /// told it to "wait for a device that can open it to write again",
    /// which never gives a removed device a key: it says the laptop comes
    /// back only as a new device. A device merely behind (enrolled where
    /// the newer keyring's maker did not see it) keeps the old advice.
    @Test func aRemovedDeviceRemovingItsRemoverIsToldHowItComesBack() throws {
        let box = try Sandbox()
        try box.makeVault()
        let phone = try box.enrollPhone()
        #expect(try box.quire(["device", "remove", "Journal.quire", "Laptop"], env: phone).status == 0)
        let removal = try box.quire(["device", "remove", "Journal.quire", "Phone"])
        #expect(removal.stderr.contains("removing \"Phone\" undoes that: if \"Phone\" is trusted, it removed this device on purpose"), "\(removal)")
        #expect(removal.stderr.contains("only as a new device ('quire device code --new-key' here"), "\(removal)")
        #expect(!removal.stderr.contains("wait for a device that can open it"), "\(removal)")
    }

    /// Trial 26 N2: the laptop removes the phone; the phone, from an old
    /// copy, removes the laptop; the tablet merges both and writes, which
    /// builds on both removals (mutual: `verify` notes each, asking for a
    /// removal with the recovery key). Once the recovery key removed the
    /// phone, `verify` still repeated both notes as open, asking for what
    /// was done; and the laptop's error said "if you do not trust the
    /// device \"Tablet\", remove it" of the honest tablet.
    @Test func aRecoveryKeyRemovalSettlesAMutualRemoval() throws {
        let box = try Sandbox()
        try box.makeVault()
        _ = try box.add("laptop, before")
        for name in ["Phone", "Tablet"] {
            let code = try box.quire(["device", "code", "--device-name", name], env: ["QUIRE_HOME": box.path(name.lowercased())])
            let add = try box.quire(["device", "add", "Journal.quire", code.stdout.trimmingCharacters(in: .newlines), "--name", name])
            #expect(add.status == 0, "\(add)")
        }
        try FileManager.default.copyItem(atPath: box.path("Journal.quire"), toPath: box.path("Old.quire"))
        let tablet = ["QUIRE_HOME": box.path("tablet")]
        #expect(try box.quire(["device", "remove", "Journal.quire", "Phone"]).status == 0)
        #expect(try box.quire(["device", "remove", "Old.quire", "Laptop"], env: ["QUIRE_HOME": box.path("phone")]).status == 0)
        #expect(try box.quire(["merge", "Journal.quire", "Old.quire"], env: tablet).status == 0)
        #expect(try box.quire(["add", "Journal.quire", "from the tablet"], env: tablet).status == 0)
        let open = try box.quire(["verify", "Journal.quire"], env: tablet)
        #expect(open.stdout.components(separatedBy: "[removal_mutual]").count == 3, "\(open)")
        #expect(open.stdout.contains("remove the one who answered with the recovery key"), "\(open)")

        let removal = try box.quire(
            ["device", "remove", "Journal.quire", "Phone", "--recovery-key-file", "recovery.txt", "--remove-enrolled"],
            env: ["QUIRE_HOME": box.path("stranger")])
        #expect(removal.status == 0, "\(removal)")
        let verify = try box.quire(["verify", "Journal.quire"], env: tablet)
        #expect(verify.status == 0, "\(verify)")
        #expect(!verify.stdout.contains("remove the one who answered"), "\(verify)")
        let settled = verify.stdout.split(separator: "\n").filter { $0.contains("[removal_mutual]") }
        #expect(settled.count == 1, "\(verify)")
        let words = "settled by the removal of \"Phone\" that the recovery key signed (keyring frame "
        #expect(settled.first?.contains(words) == true, "\(verify)")
        let json = try box.quire(["verify", "Journal.quire", "--json"], env: tablet).json()
        let mutual = ((json["issues"] as? [[String: Any]]) ?? []).filter { $0["code"] as? String == "removal_mutual" }
        #expect(mutual.count == 2, "\(json)")
        #expect(mutual.allSatisfy { ($0["message"] as? String)?.contains("settled by the removal of \"Phone\"") == true }, "\(json)")

        let laptop = try box.quire(["add", "Journal.quire", "from the laptop"])
        #expect(laptop.status == 1, "\(laptop)")
        #expect(laptop.stderr.hasPrefix("quire: error: this device was removed from the vault, or left out on purpose: "), "\(laptop)")
        #expect(!laptop.stderr.contains("if you do not trust") && !laptop.stderr.contains("\"Tablet\", remove"), "\(laptop)")
    }

    /// `--new-key` never shuts this device out of a vault silently: while
    /// its key still opens one as an enrolled device, it is refused and the
    /// key stays.
    @Test func aNewKeyIsRefusedWhileTheOldOneStillOpensAVault() throws {
        let box = try Sandbox()
        try box.makeVault()
        _ = try box.add("kept")
        let before = try box.quire(["device", "code"]).stdout
        let refused = try box.quire(["device", "code", "--new-key"])
        #expect(refused.status == 1, "\(refused)")
        #expect(
            refused.stderr.contains("Journal.quire as an enrolled device; a new key in its place would shut this device out of it"),
            "\(refused)")
        #expect(refused.stderr.contains("quire: hint: keep this key, and make the new one in a key store of its own"), "\(refused)")
        #expect(try box.quire(["device", "code"]).stdout == before)
        #expect(try box.quire(["add", "Journal.quire", "still enrolled"]).status == 0)
        // A device without a key just gets one.
        let none = try box.quire(["device", "code", "--new-key"], env: ["QUIRE_HOME": box.path("none")])
        #expect(none.status == 0 && none.stderr.contains("(its key was made now)"), "\(none)")
    }

    /// Trial 26, minor: removing again, with the recovery key, a device
    /// removed before said `removed "Phone"` as if it were new.
    @Test func removingAgainSaysItWasAlreadyRemoved() throws {
        let box = try Sandbox()
        try box.makeVault()
        let code = try box.quire(["device", "code", "--device-name", "Phone"], env: ["QUIRE_HOME": box.path("phone")])
        #expect(
            try box.quire(["device", "add", "Journal.quire", code.stdout.trimmingCharacters(in: .newlines), "--name", "Phone"]).status == 0)
        #expect(try box.quire(["device", "remove", "Journal.quire", "Phone"]).status == 0)
        let again = try box.quire(
            ["device", "remove", "Journal.quire", "Phone", "--recovery-key-file", "recovery.txt"], env: ["QUIRE_HOME": box.path("stranger")]
        )
        #expect(again.status == 0, "\(again)")
        #expect(again.stdout.hasPrefix("\"Phone\" (fingerprint "), "\(again)")
        #expect(
            again.stdout.contains(") was already removed; removed again with the recovery key: new records are sealed under epoch 3"),
            "\(again)")
        #expect(!again.stdout.contains("removed \"Phone\""), "\(again)")
    }

    /// Trial 25 F4: `kill -9` during a merge or `compact --rekey` can leave
    /// `.VAULT.merge-HEX` beside the vault. `verify` and `info` say what it
    /// is while no rewrite holds the vault's lock; the next write removes it.
    @Test func aKilledRewritesLeftoverIsSaidAndTheNextWriteRemovesIt() throws {
        let box = try Sandbox()
        try box.makeVault()
        _ = try box.add("one")
        let header = try Data(contentsOf: URL(fileURLWithPath: box.path("Journal.quire"))).prefix(64)
        let leftover = box.path(".Journal.quire.merge-0123456789ab")
        try header.write(to: URL(fileURLWithPath: leftover))
        let verify = try box.quire(["verify", "Journal.quire"])
        #expect(verify.status == 0, "\(verify)")
        #expect(
            verify.stdout.contains("  note: .Journal.quire.merge-0123456789ab (64 bytes) beside it is what a merge or a compaction"),
            "\(verify)")
        let info = try box.quire(["info", "Journal.quire"])
        #expect(info.stdout.contains("leftover:     .Journal.quire.merge-0123456789ab (64 bytes)"), "\(info)")
        // While a rewrite holds the vault's lock, it is its own: nothing said.
        let held = try SystemFile(path: box.path("Journal.quire"), mode: .readOnly)
        #expect(held.tryLockExclusive())
        #expect(!(try box.quire(["verify", "Journal.quire"]).stdout.contains("merge-0123456789ab")))
        held.unlock()
        #expect(FileManager.default.fileExists(atPath: leftover))
        _ = try box.add("two")
        #expect(!FileManager.default.fileExists(atPath: leftover))
        #expect(!(try box.quire(["verify", "Journal.quire"]).stdout.contains("merge-")))
    }
}
