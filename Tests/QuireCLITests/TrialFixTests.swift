import Foundation
import Testing

/// Defects a new-user trial found; each test asserts the right value.
@Suite struct TrialFixTests {
    @Test func infoDescribesTheNewestKeyringAfterDeviceAddAndPassphrase() throws {
        let box = try Sandbox()
        try box.makeVault()
        _ = try box.enrollPhone()
        let r = try box.quire(["info", "Journal.quire"])
        #expect(r.stdout.contains("has key slots: 2 device, 1 recovery\n"), "\(r)")
        try box.write("pp.txt", "correct horse\n")
        let set = try box.quire(["keys", "passphrase", "Journal.quire", "--new-passphrase-file", "pp.txt"])
        #expect(set.status == 0, "\(set)")
        let j = try box.quire(["info", "Journal.quire", "--json"]).json()
        let latest = try #require(j["latestKeyring"] as? [String: Any])
        #expect((latest["passphrases"] as? [Any])?.count == 1)
        #expect(latest["slots"] as? [String: Int] == ["device": 2, "recovery": 1, "passphrase": 1])
        #expect(j["keyringHeads"] as? Int == 1)
    }

    @Test func infoOnAHeaderOnlyFileSaysNone() throws {
        let box = try Sandbox()
        try box.makeVault()
        let bytes = try Data(contentsOf: URL(fileURLWithPath: box.path("Journal.quire")))
        try bytes.prefix(64).write(to: URL(fileURLWithPath: box.path("h.quire")))
        let r = try box.quire(["info", "h.quire"])
        #expect(r.stdout.contains("frames:       0 in 0 commits\n"), "\(r)")
        #expect(r.stdout.contains("epochs:       none\n"), "\(r)")
        #expect(r.stdout.contains("key ids:      none\n"), "\(r)")
    }

    @Test func infoIgnoresKeyringsInATornTail() throws {
        let box = try Sandbox()
        try box.makeVault()
        let before = try Data(contentsOf: URL(fileURLWithPath: box.path("Journal.quire")))
        #expect(try box.quire(["keys", "rotate", "Journal.quire"]).status == 0)
        let after = try Data(contentsOf: URL(fileURLWithPath: box.path("Journal.quire")))
        // Cut the last commit frame (28 bytes) off: the new keyring is a torn tail.
        try after.prefix(after.count - 28).write(to: URL(fileURLWithPath: box.path("t.quire")))
        #expect(after.count > before.count + 28)
        let r = try box.quire(["info", "t.quire", "--json"])
        let latest = try #require(try r.json()["latestKeyring"] as? [String: Any])
        #expect(latest["epoch"] as? Int == 1, "\(r)")
    }

    /// A device behind a keyring it cannot open may remove that keyring's
    /// signer (Spec/format.md §8.6); the CLI warns first, as keys.md §6
    /// asks (third review, item 2).
    @Test func aBehindDeviceIsWarnedBeforeRemovingWhoLeftItOut() throws {
        let box = try Sandbox()
        try box.makeVault()
        let phone = try box.enrollPhone()
        #expect(try box.quire(["device", "remove", "Journal.quire", "Phone"]).status == 0)
        let r = try box.quire(["device", "remove", "Journal.quire", "Laptop"], env: phone)
        #expect(r.status == 0, "\(r)")
        #expect(r.stderr.contains("quire: warning: this device cannot open a keyring the device \"Laptop\" made"), "\(r)")
        #expect(r.stderr.contains("prefer the recovery key"), "\(r)")
        // The laptop removed the phone: readers reject the phone's answer.
        #expect(try box.quire(["device", "list", "Journal.quire"]).stdout.contains("Laptop"))
        #expect(try box.add("the laptop writes on").isEmpty == false)
    }

    @Test func aRemovedDeviceIsToldItWasRemovedNotThatTheFileIsDamaged() throws {
        let box = try Sandbox()
        try box.makeVault()
        _ = try box.add("one")
        let phone = try box.enrollPhone()
        #expect(try box.quire(["device", "remove", "Journal.quire", "Phone"]).status == 0)
        _ = try box.add("after the phone was removed")
        let v = try box.quire(["verify", "Journal.quire"], env: phone)
        #expect(v.status == 1, "\(v)")
        #expect(!v.stdout.contains("DAMAGED"), "\(v)")
        #expect(v.stdout.contains("not readable with this key (this key cannot open the vault's newest keys (epoch 2, made by the device \"Laptop\"): it was removed, or left out of them: the records sealed since were made without it)"), "\(v)")
        #expect(v.stderr.contains("quire: hint: verify on a device that can read them, or with --recovery-key-file FILE"), "\(v)")
        let j = try box.quire(["verify", "Journal.quire", "--json"], env: phone).json()
        #expect(j["intact"] as? Bool == true)
        #expect((j["unreadableWithThisKey"] as? Int ?? 0) >= 1)
        let list = try box.quire(["list", "Journal.quire"], env: phone)
        #expect(list.status == 0)
        #expect(list.stdout.contains("one") && !list.stdout.contains("after the phone"))
        #expect(list.stderr.hasPrefix("quire: warning: newer records exist that this key cannot read (1 entry revision): this key cannot open the vault's newest keys (epoch 2, made by the device \"Laptop\"): it was removed, or left out of them, so what is shown stops there and writing with this key is refused."), "\(list)")
        let search = try box.quire(["search", "Journal.quire", "one"], env: phone)
        #expect(search.stderr.contains("quire: warning: newer records exist that this key cannot read"), "\(search)")
        // Writing is refused, naming who made the keyring it cannot open;
        // the keys before listed the phone, so it was removed (or left out
        // on purpose), and the way back is a new key (trial 26 N2).
        let w = try box.quire(["add", "Journal.quire", "from the removed phone"], env: phone)
        #expect(w.status != 0, "\(w)")
        #expect(
            w.stderr.contains(
                "this device was removed from the vault, or left out on purpose: it has no key to epoch 2, which the device \"Laptop\" made"),
            "\(w)")
        #expect(w.stderr.contains("quire: hint: to come back, run 'quire device code --new-key' here"), "\(w)")
        // The laptop, still enrolled, sees no warning.
        #expect(try box.quire(["list", "Journal.quire"]).stderr == "")
    }

    @Test func verifyOfATruncatedFileWithNoKeyringIsDamage() throws {
        let box = try Sandbox()
        try box.makeVault()
        let bytes = try Data(contentsOf: URL(fileURLWithPath: box.path("Journal.quire")))
        try bytes.prefix(1000).write(to: URL(fileURLWithPath: box.path("t.quire")))
        let r = try box.quire(["verify", "t.quire"])
        #expect(r.status == 2, "\(r)")
        #expect(r.stdout.hasPrefix("t.quire: DAMAGED. "), "\(r)")
        #expect(r.stderr.contains("quire: hint: restore it from a backup or another device's copy of the vault"), "\(r)")
    }

    @Test func listWarnsWhenTheCommitsDidNotVerify() throws {
        let box = try Sandbox()
        try box.makeVault()
        _ = try box.add("one")
        _ = try box.add("two")
        // Flip a bit in the last commit's stored head: the first 32 of the
        // commit body's 200 bytes, which end the file (Spec/format.md §9.2).
        var bytes = try Data(contentsOf: URL(fileURLWithPath: box.path("Journal.quire")))
        bytes[bytes.count - 200 + 3] ^= 0x01
        try bytes.write(to: URL(fileURLWithPath: box.path("Journal.quire")))
        let r = try box.quire(["list", "Journal.quire"])
        #expect(r.stderr.contains("run 'quire verify Journal.quire'"), "\(r)")
        #expect(r.stderr.hasPrefix("quire: warning: "), "\(r)")
        let s = try box.quire(["search", "Journal.quire", "one"])
        #expect(s.stderr.contains("run 'quire verify Journal.quire'"), "\(s)")
    }

    @Test func helpForACommandGroupAndAnUnknownSubcommand() throws {
        let box = try Sandbox()
        for group in ["keys", "device"] {
            let r = try box.quire(["help", group])
            #expect(r.status == 0, "\(r)")
            #expect(r.stdout.hasPrefix("Usage: quire \(group) SUBCOMMAND [ARGUMENTS] [OPTIONS]\n\n"), "\(r)")
            #expect(r.stdout.contains("\n\nSubcommands:\n  \(group) "), "\(r)")
        }
        #expect(try box.quire(["help", "device"]).stdout.contains("  device remove [VAULT] NAME  remove a device (lost or sold)\n"))
        let frob = try box.quire(["device", "frob"])
        #expect(frob.status == 64)
        #expect(frob.stderr == "quire: error: unknown subcommand 'frob' of 'quire device'; it has: code, add, remove, list\nquire: hint: see 'quire help device'\n")
    }

    @Test func hintsForPathsThatAreNotVaults() throws {
        let box = try Sandbox()
        try box.makeVault()
        let folder = try box.quire(["list", "."])
        #expect(folder.status == 1)
        #expect(folder.stderr.hasPrefix("quire: error: . is a folder, not a vault file\nquire: hint: "), "\(folder)")
        try box.write("empty.quire", "")
        try box.write("text.quire", "just some text, not a vault, but long enough to pass the sixty-four byte header check")
        for name in ["empty.quire", "text.quire"] {
            let r = try box.quire(["list", name])
            #expect(r.status == 1)
            #expect(r.stderr.contains("not a Quire vault"), "\(r)")
            #expect(r.stderr.contains("quire: hint: check the path: \(name) is not a Quire vault"), "\(r)")
        }
        let stranger = ["QUIRE_HOME": box.path("stranger")]
        let rk = try box.quire(["list", "Journal.quire", "--recovery-key-file", "."], env: stranger)
        #expect(rk.stderr.hasPrefix("quire: error: the recovery key file . is a folder, not a file\nquire: hint: "), "\(rk)")
        try box.write("empty-pp.txt", "")
        let pp = try box.quire(["list", "Journal.quire", "--passphrase-file", "empty-pp.txt"], env: stranger)
        #expect(pp.stderr.hasPrefix("quire: error: the passphrase file empty-pp.txt is empty\nquire: hint: "), "\(pp)")
    }

    @Test func missingFoldersAreNamedBeforeAnyWork() throws {
        let box = try Sandbox()
        try box.makeVault()
        let cases: [[String]] = [
            ["init", "/nonexistent/dir/x.quire"], ["export", "Journal.quire", "--format", "md", "-o", "/nonexistent/dir/x.epub"],
            ["merge", "Journal.quire", "Journal.quire", "-o", "/nonexistent/x"],
        ]
        for args in cases {
            let r = try box.quire(args)
            #expect(r.status == 1, "\(args) \(r)")
            #expect(r.stderr.contains("does not exist"), "\(args) \(r)")
            #expect(r.stderr.contains("quire: hint: create the folder first"), "\(args) \(r)")
            #expect(!r.stderr.contains("could not be completed"))
        }
        #expect(!FileManager.default.fileExists(atPath: "/nonexistent"))
        let empty = try box.quire(["export", "Journal.quire", "--format", "md", "-o", ""])
        #expect(empty.status == 64, "\(empty)")
    }

    @Test func hintsForDeviceMistakesAndEmptyEntries() throws {
        let box = try Sandbox()
        try box.makeVault()
        let bad = try box.quire(["device", "add", "Journal.quire", "NOT-A-CODE", "--name", "X"])
        #expect(bad.status == 1)
        #expect(bad.stderr.contains("quire: hint: copy the whole code 'quire device code' prints"), "\(bad)")
        let long = try box.quire(["device", "add", "Journal.quire", String(repeating: "A", count: 100_000), "--name", "X"])
        #expect(long.stderr.hasPrefix("quire: error: that device code is not valid: it has 100000 characters;"), "\(long)")
        let phone = ["QUIRE_HOME": box.path("phone")]
        let code = try box.quire(["device", "code", "--device-name", "Phone"], env: phone).stdout.trimmingCharacters(in: .newlines)
        #expect(try box.quire(["device", "add", "Journal.quire", code, "--name", ""]).status == 64)
        #expect(try box.quire(["device", "add", "Journal.quire", code, "--name", "Phone"]).status == 0)
        let twice = try box.quire(["device", "add", "Journal.quire", code, "--name", "Phone 2"])
        #expect(twice.status == 1)
        #expect(twice.stderr.contains("quire: hint: nothing to do: 'quire device list Journal.quire'"), "\(twice)")
        let me = try box.quire(["device", "remove", "Journal.quire", "Laptop"])
        #expect(me.stderr.contains("quire: hint: run 'quire device remove Journal.quire \"Laptop\"' on another enrolled device"), "\(me)")
        #expect(try box.quire(["device", "remove", "Journal.quire", "Phone"]).status == 0)
        let again = try box.quire(["device", "remove", "Journal.quire", "Phone"])
        #expect(again.stderr.hasPrefix("quire: error: \"Phone\" was already removed from Journal.quire\nquire: hint: "), "\(again)")
        let empty = try box.quire(["add", "Journal.quire", ""])
        #expect(empty.stderr.contains("quire: hint: give the text as TEXT"), "\(empty)")
        let dir = try box.quire(["add", "Journal.quire", "x", "--attach", box.dir])
        #expect(dir.stderr.hasPrefix("quire: error: cannot attach \(box.dir): it is a folder, not a file\n"), "\(dir)")
    }

    /// Fourth review, K4: removing a phone that replaced the recovery key
    /// asks whose replacement that was; without a terminal or a flag it
    /// refuses rather than guess, and `--replacement-mine` keeps the new
    /// code working (the writer of b792bf0 cut it silently).
    @Test func removingAReplacerAsksWhoseReplacementItWas() throws {
        let box = try Self.vaultWhosePhoneReplacedTheRecoveryKey()
        let unsure = try box.quire(["device", "remove", "Journal.quire", "Phone"])
        #expect(unsure.status == 64, "\(unsure)")
        #expect(unsure.stderr.hasPrefix("quire: error: \"Phone\" replaced the recovery key (on "), "\(unsure)")
        #expect(unsure.stderr.contains("--replacement-not-mine"), "\(unsure)")
        let both = try box.quire(["device", "remove", "Journal.quire", "Phone", "--replacement-mine", "--replacement-not-mine"])
        #expect(both.status == 64, "\(both)")
        let mine = try box.quire(["device", "remove", "Journal.quire", "Phone", "--replacement-mine"])
        #expect(mine.status == 0, "\(mine)")
        #expect(!mine.stderr.contains("cut the replacement"), "\(mine)")
        let list = try box.quire(["device", "list", "Journal.quire", "--recovery-key-file", "q2.txt"])
        #expect(list.status == 0, "\(list)")
        #expect(list.stdout.contains("Laptop"), "\(list)")
    }

    /// K4, the thief's case: told the replacement was not the user's, the
    /// removal cuts it and says so.
    @Test func removingAThiefsReplacerCutsItAndWarns() throws {
        let box = try Self.vaultWhosePhoneReplacedTheRecoveryKey()
        let cut = try box.quire(["device", "remove", "Journal.quire", "Phone", "--replacement-not-mine"])
        #expect(cut.status == 0, "\(cut)")
        #expect(cut.stderr.contains("quire: warning: this removal cut the replacement of the recovery key made on "), "\(cut)")
        let list = try box.quire(["device", "list", "Journal.quire"])
        #expect(list.status == 0 && list.stdout.contains("Phone  removed"), "\(list)")
    }

    /// A vault made on `Laptop`, with `Phone` enrolled, which replaced the
    /// recovery key (the new one in `q2.txt`).
    static func vaultWhosePhoneReplacedTheRecoveryKey() throws -> Sandbox {
        let box = try Sandbox()
        try box.makeVault()
        let phone = ["QUIRE_HOME": box.path("phone")]
        let code = try box.quire(["device", "code", "--device-name", "Phone"], env: phone).stdout.trimmingCharacters(in: .newlines)
        #expect(try box.quire(["device", "add", "Journal.quire", code, "--name", "Phone"]).status == 0)
        let replaced = try box.quire(["keys", "recovery-key", "Journal.quire", "--replace", "--new-recovery-key-file", "q2.txt"], env: phone)
        #expect(replaced.status == 0, "\(replaced)")
        return box
    }

    @Test func mergeHintsForAnotherVaultOrANonVault() throws {
        let box = try Sandbox()
        try box.makeVault()
        #expect(try box.quire(["init", "Other.quire", "--recovery-key-file", "other-recovery.txt"]).status == 0)
        let other = try box.quire(["merge", "Journal.quire", "Other.quire"])
        #expect(other.status == 1)
        #expect(other.stderr.contains("quire: hint: Other.quire is a different journal"), "\(other)")
        try box.write("text.quire", "not a vault")
        let text = try box.quire(["merge", "Journal.quire", "text.quire"])
        #expect(text.stderr.contains("quire: hint: text.quire is not a Quire vault"), "\(text)")
    }

    @Test func nits() throws {
        let box = try Sandbox()
        try box.makeVault()
        let id = try box.add("first")
        #expect(try box.quire(["edit", "Journal.quire", String(id.prefix(8)), "second"]).status == 0)
        let show = try box.quire(["show", "Journal.quire", String(id.prefix(8))])
        #expect(show.stdout.contains("\nversions: 2 "), "\(show)")
        #expect(try box.quire(["help", "edit"]).stdout.contains(#""changed""#))
        #expect(try box.quire(["help", "keys", "status"]).stdout.contains(#""phrase""#))
        _ = try box.enrollPhone()
        #expect(try box.quire(["keys", "rotate", "Journal.quire"]).status == 0)
        let status = try box.quire(["keys", "status", "Journal.quire", "--json"]).json()
        let older = try #require((status["olderRecords"] as? [[String: Any]])?.first)
        #expect(older["epochs"] as? [Int] == [1])
        let none = try box.quire(["export", "Journal.quire", "--format", "md", "-o", "none.md", "--tag", "nothing-has-this"])
        #expect(none.status == 0)
        #expect(none.stderr.contains("quire: warning: no entries match the filters"), "\(none)")
        let backwards = try box.quire(["export", "Journal.quire", "--format", "md", "-o", "b.md", "--since", "2026-02-01", "--until", "2026-01-01"])
        #expect(backwards.status == 64, "\(backwards)")
    }

    @Test func aFullDiskIsSaidNotCrashedOn() throws {
        let box = try Sandbox()
        try box.makeVault()
        _ = try box.add("one")
        let r = try box.shell("quire list Journal.quire > /dev/full")
        #expect(r.status == 1, "\(r)")
        #expect(r.stderr == "quire: error: cannot write to standard output: the disk is full\nquire: hint: the disk is full: free some space (or write somewhere else) and run the command again\n", "\(r)")
    }
}
