import Foundation
import Testing
import QuireTestSupport

@Suite struct VerifyAndInfoTests {
    @Test func verifyIntactExitsZero() throws {
        let box = try Sandbox()
        try box.makeVault()
        _ = try box.add("one")
        let r = try box.quire(["verify", "Journal.quire"])
        #expect(r.status == 0)
        #expect(matches(r.stdout, "Journal\\.quire: intact\\. 3 records in 2 commits, [0-9.]+ KiB\\.\n"), "\(r)")
        #expect(r.stderr == "")  // no progress line: stderr is not a terminal
        let j = try box.quire(["verify", "Journal.quire", "--json"]).json()
        #expect(
            Set(j.keys) == [
                "intact", "fileBytes", "frames", "commits", "intactRecords", "unreadableWithThisKey", "cutByRemoval",
                "conflictingEntries", "unattestedCommits", "unattestedRecords", "issues",
            ])
        #expect(j["conflictingEntries"] as? Int == 0)
        #expect(j["unattestedCommits"] as? Int == 0)
        #expect(j["unattestedRecords"] as? Int == 0)
        #expect(j["cutByRemoval"] as? Int == 0)
        #expect(j["intact"] as? Bool == true)
        #expect(j["commits"] as? Int == 2)
        #expect((j["issues"] as? [Any])?.isEmpty == true)
    }

    @Test func verifyExitsTwoOnAFlippedBitAndNamesWhatWasLost() throws {
        let box = try Sandbox()
        try box.makeVault()
        _ = try box.add("before")
        let before = try FileManager.default.attributesOfItem(atPath: box.path("Journal.quire"))[.size] as! Int
        // Incompressible text, so the sealed record is large and the bit lands inside it.
        var state: UInt64 = 0x9e37_79b9_7f4a_7c15
        var letters: [Character] = []
        for _ in 0..<3000 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let k = Int((state >> 33) % 26)
            letters.append(Character(UnicodeScalar(UInt8(97 + k))))
        }
        let noise = String(letters)
        _ = try box.add(noise)
        _ = try box.add("after")
        var bytes = try Data(contentsOf: URL(fileURLWithPath: box.path("Journal.quire")))
        bytes[before + 500] ^= 0x10
        try bytes.write(to: URL(fileURLWithPath: box.path("Journal.quire")))
        let r = try box.quire(["verify", "Journal.quire"])
        #expect(r.status == 2, "\(r)")
        #expect(r.stdout.hasPrefix("Journal.quire: DAMAGED. 1 record lost or untrusted; "), "\(r)")
        #expect(r.stdout.contains("  lost: frame "), "\(r)")
        #expect(r.stdout.hasSuffix("Every other record reads as before. Restore the lost ones from another copy: 'quire merge Journal.quire COPY'.\n"))
        let j = try box.quire(["verify", "Journal.quire", "--json"])
        #expect(j.status == 2)
        let o = try j.json()
        #expect(o["intact"] as? Bool == false)
        let issue = try #require((o["issues"] as? [[String: Any]])?.first { $0["damage"] as? Bool == true })
        #expect(issue["frame"] is Int)
        #expect(issue["offset"] is Int)
        // Everything else still reads.
        let list = try box.quire(["list", "Journal.quire"])
        #expect(list.status == 0)
        #expect(list.stdout.contains("before") && list.stdout.contains("after"))
        #expect(!list.stdout.contains(String(noise.prefix(20))))
    }

    @Test func infoNeedsNoKey() throws {
        let box = try Sandbox()
        try box.makeVault()
        _ = try box.add("secret words")
        let stranger = ["QUIRE_HOME": box.path("stranger")]
        let r = try box.quire(["info", "Journal.quire"], env: stranger)
        #expect(r.status == 0, "\(r)")
        #expect(matches(r.stdout, #"""
            Journal\.quire: Quire vault, format version 2
            vault id:     [0-9a-f]{32}
            size:         [0-9.]+ KiB \([0-9]+ bytes\)
            frames:       6 in 2 commits: 2 commit, 1 entry revision, 2 keyring, 1 profile
            epochs:       1
            key ids:      [0-9a-f]{12} \(epoch 1, 6 frames\)
            attachments:  0 chunk streams \(sizes to within 64 KiB\)
            keyrings:     1 \(each stored twice\); the newest, epoch 1 \(key id [0-9a-f]{12}\), has key slots: 1 device, 1 recovery
            escrow-free:  no
            Not visible without a key: text, dates, tags, places, names, attachments' content and types, device names\.

            """#), "\(r)")
        #expect(!r.stdout.contains("secret"))
        #expect(!FileManager.default.fileExists(atPath: box.path("stranger/device.key")))
        let j = try box.quire(["info", "Journal.quire", "--json"], env: stranger).json()
        #expect(j["formatVersion"] as? Int == 2)
        #expect(j["epochs"] as? [Int] == [1])
        #expect(j["frames"] as? Int == 6)
        #expect((j["framesByKind"] as? [String: Int])?["entry revision"] == 1)
        #expect(j["keyrings"] as? Int == 1)
        let latest = try #require(j["latestKeyring"] as? [String: Any])
        #expect(latest["slots"] as? [String: Int] == ["device": 1, "recovery": 1])
        #expect(latest["escrowFree"] as? Bool == false)
        // Every committed frame carries the one key id the root keyring defines.
        let keys = try #require(j["keys"] as? [[String: Any]])
        #expect(keys.count == 1)
        #expect(keys.first?["epoch"] as? Int == 1)
        #expect(keys.first?["frames"] as? Int == 6)
        let keyID = try #require(latest["keyID"] as? String)
        #expect(keyID.count == 12)
        #expect(keys.first?["keyID"] as? String == keyID)
        #expect(r.stdout.contains("key ids:      \(keyID) (epoch 1, 6 frames)\n"), "\(r)")
        try box.write("junk.quire", "not a vault at all, just text")
        let junk = try box.quire(["info", "junk.quire"])
        #expect(junk.status == 1)
        #expect(junk.stderr.hasPrefix("quire: error: junk.quire is not a readable Quire vault: "))
    }
}

@Suite struct SyncCommandTests {
    @Test func resolveFoldsASyncthingConflictCopy() throws {
        let box = try Sandbox()
        try box.makeVault()
        _ = try box.add("shared")
        let none = try box.quire(["resolve", "Journal.quire"])
        #expect(none.status == 0)
        #expect(none.stdout == "no conflicted copies of Journal.quire\n")
        let copy = "Journal.sync-conflict-20261130-101530-ABCDEF1.quire"
        try FileManager.default.copyItem(atPath: box.path("Journal.quire"), toPath: box.path(copy))
        _ = try box.add("in the copy", vault: copy)
        _ = try box.add("in the vault")
        let r = try box.quire(["resolve", "Journal.quire"])
        #expect(r.status == 0, "\(r)")
        #expect(r.stdout == "folded \(copy) (syncthing): 1 record added; the copy was deleted\n")
        #expect(r.stderr == "")
        #expect(!FileManager.default.fileExists(atPath: box.path(copy)))
        let list = try box.quire(["list", "Journal.quire"]).stdout
        #expect(list.contains("in the copy") && list.contains("in the vault"))
        let j = try box.quire(["resolve", "Journal.quire", "--json"]).json()
        #expect(j["vault"] as? String == "Journal.quire")
        #expect((j["copies"] as? [Any])?.isEmpty == true)
    }

    @Test func mergeIntoANewFileAndInPlace() throws {
        let box = try Sandbox()
        try box.makeVault()
        _ = try box.add("shared")
        try FileManager.default.copyItem(atPath: box.path("Journal.quire"), toPath: box.path("Copy.quire"))
        _ = try box.add("only in copy", vault: "Copy.quire")
        let r = try box.quire(["merge", "Journal.quire", "Copy.quire", "-o", "Merged.quire"])
        #expect(r.status == 0, "\(r)")
        #expect(r.stdout == "merged Copy.quire into Merged.quire: 1 record added in 1 commit\n")
        #expect(r.stderr == "")
        #expect(try box.quire(["list", "Merged.quire"]).stdout.contains("only in copy"))
        #expect(!(try box.quire(["list", "Journal.quire"]).stdout.contains("only in copy")))
        let exists = try box.quire(["merge", "Journal.quire", "Copy.quire", "-o", "Merged.quire"])
        #expect(exists.status == 1)
        let j = try box.quire(["merge", "Journal.quire", "Copy.quire", "--json"]).json()
        #expect(j["changed"] as? Bool == true)
        #expect(j["recordsAdded"] as? Int == 1)
        let again = try box.quire(["merge", "Journal.quire", "Copy.quire"])
        #expect(again.stdout == "Journal.quire already holds everything in Copy.quire; nothing was written\n")
        try box.quire(["init", "Other.quire", "--recovery-key-file", "o.txt"])
        let foreign = try box.quire(["merge", "Journal.quire", "Other.quire"])
        #expect(foreign.status == 1)
        #expect(foreign.stderr.hasPrefix("quire: error: "))
        #expect(try box.quire(["merge", "Journal.quire"]).status == 64)
    }

    @Test func compactWithRekey() throws {
        let box = try Sandbox()
        try box.makeVault()
        let id = try box.add("first")
        _ = try box.quire(["edit", "Journal.quire", id, "second"])
        let r = try box.quire(["compact", "Journal.quire", "--rekey"])
        #expect(r.status == 0, "\(r)")
        #expect(matches(r.stdout, """
            compacted Journal\\.quire: [0-9.]+ KiB → [0-9.]+ KiB; revisions 2 → 1; attachments kept 0, dropped 0
            rekeyed: everything is sealed under epoch 2; removed devices and former keys open nothing in this file \\(older copies elsewhere are unchanged\\)

            """), "\(r)")
        #expect(r.stderr == "")
        let j = try box.quire(["compact", "Journal.quire", "--keep-history", "1", "--json"]).json()
        #expect(j["revisionsAfter"] as? Int == 1)
        #expect(j["rekeyedEpoch"] is NSNull)
        #expect(try box.quire(["compact", "Journal.quire", "--keep-history", "lots"]).status == 64)
        #expect(try box.quire(["show", "Journal.quire", id, "--json"]).json()["text"] as? String == "second")
    }
}

@Suite(.tags(.slow), .skippedByMakeCheck) struct KeyAndDeviceCommandTests {
    @Test func unlockingOrderAndRecoveryKeyFile() throws {
        let box = try Sandbox()
        try box.makeVault()
        _ = try box.add("hello")
        let stranger = ["QUIRE_HOME": box.path("stranger")]
        let locked = try box.quire(["list", "Journal.quire"], env: stranger)
        #expect(locked.status == 1)
        #expect(locked.stderr == """
            quire: error: this device has no key, so it cannot open Journal.quire
            quire: hint: unlock with --recovery-key-file FILE or --passphrase-file FILE, or enroll this device: 'quire device code' here, then 'quire device add Journal.quire CODE --name NAME' on an enrolled device

            """)
        let recovered = try box.quire(["list", "Journal.quire", "--recovery-key-file", "recovery.txt"], env: stranger)
        #expect(recovered.status == 0)
        #expect(recovered.stdout.contains("hello"))
        // A device with a key that is not enrolled.
        _ = try box.quire(["device", "code", "--device-name", "Tablet"], env: stranger)
        let wrong = try box.quire(["list", "Journal.quire"], env: stranger)
        #expect(wrong.status == 1)
        #expect(wrong.stderr.hasPrefix("quire: error: "))
        #expect(wrong.stderr.contains("quire: hint: enroll this device: run 'quire device code' here, then 'quire device add Journal.quire CODE --name NAME' on an enrolled device; or unlock with --recovery-key-file FILE\n"))
        // Another vault's recovery key.
        try box.quire(["init", "Other.quire", "--recovery-key-file", "other.txt"])
        let bad = try box.quire(["list", "Journal.quire", "--recovery-key-file", "other.txt"], env: stranger)
        #expect(bad.status == 1)
        #expect(bad.stderr.contains("quire: hint: check the recovery key file holds this vault's recovery key (56 characters)\n"))
        // A recovery key file others can read is refused.
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: box.path("recovery.txt"))
        let open = try box.quire(["list", "Journal.quire", "--recovery-key-file", "recovery.txt"], env: stranger)
        #expect(open.status == 1)
        #expect(open.stderr == "quire: error: the recovery key file recovery.txt can be read by other users (mode 644)\nquire: hint: run 'chmod 600 recovery.txt'\n")
    }

    @Test func keysStatusRotatePassphraseEscrowFree() throws {
        let box = try Sandbox()
        try box.makeVault()
        _ = try box.add("hello")
        let status = try box.quire(["keys", "status", "Journal.quire"])
        #expect(status.status == 0)
        #expect(status.stdout.hasPrefix("\"Test journal\" (vault "))
        #expect(status.stdout.contains("  - the device \"Laptop\" (this device)\n  - the recovery key\n"))
        let sj = try box.quire(["keys", "status", "Journal.quire", "--json"]).json()
        #expect(sj["epoch"] as? Int == 1)
        #expect(sj["escrowFree"] as? Bool == false)
        let readers = try #require(sj["readers"] as? [[String: Any]])
        #expect(readers.map { $0["kind"] as? String } == ["device", "recovery"])
        #expect(readers.first?["thisDevice"] as? Bool == true)
        let rotate = try box.quire(["keys", "rotate", "Journal.quire"])
        #expect(rotate.stdout == "rotated: new records are sealed under epoch 2, for the same devices and keys\n")
        try box.write("pass.txt", "correct horse battery\n")
        let set = try box.quire(["keys", "passphrase", "Journal.quire", "--new-passphrase-file", "pass.txt"])
        #expect(set.status == 0, "\(set)")
        #expect(set.stdout == "passphrase set (epoch 2)\n")
        let stranger = ["QUIRE_HOME": box.path("stranger")]
        let byPassphrase = try box.quire(["list", "Journal.quire", "--passphrase-file", "pass.txt"], env: stranger)
        #expect(byPassphrase.status == 0, "\(byPassphrase)")
        #expect(byPassphrase.stdout.contains("hello"))
        let noPrompt = try box.quire(["keys", "passphrase", "Journal.quire"])
        #expect(noPrompt.status == 64)
        let unproven = try box.quire(["keys", "escrow-free", "Journal.quire"])
        #expect(unproven.status == 1)
        #expect(unproven.stderr.hasSuffix("quire: hint: pass --recovery-key-file FILE to show you hold the recovery key, or enroll a second device first\n"), "\(unproven)")
        let escrowFree = try box.quire(["keys", "escrow-free", "Journal.quire", "--recovery-key-file", "recovery.txt"])
        #expect(escrowFree.status == 0, "\(escrowFree)")
        #expect(escrowFree.stdout.hasPrefix("escrow-free from epoch 3: no escrow key can be added, now or later\n"), "\(escrowFree)")
        let twice = try box.quire(["keys", "escrow-free", "Journal.quire", "--json"]).json()
        #expect(twice["changed"] as? Bool == false)
        let remove = try box.quire(["keys", "passphrase", "Journal.quire", "--remove", "--json"]).json()
        #expect(remove["passphrase"] as? Bool == false)
        // A removed passphrase still reads what it could, but writes nothing new.
        let late = try box.quire(["add", "Journal.quire", "late", "--passphrase-file", "pass.txt"], env: stranger)
        #expect(late.status == 1, "\(late)")
    }

    /// Third review, item 7 (Spec/keys.md §6.9): the recovery key replaced
    /// on two copies at once, then merged. A write must join the two and
    /// keep one; the CLI refuses, names the choices and the flag, and
    /// `keys recovery-key --keep N` keeps the code the user holds.
    @Test func concurrentRecoveryReplacementsAskWhichCodeToKeep() throws {
        let box = try Sandbox()
        _ = try box.makeVault()
        _ = try box.add("before")
        try FileManager.default.copyItem(atPath: box.path("Journal.quire"), toPath: box.path("Copy.quire"))
        let a = try box.quire(["keys", "recovery-key", "Journal.quire", "--replace", "--new-recovery-key-file", "a.txt"])
        #expect(a.status == 0, "\(a)")
        let b = try box.quire(["keys", "recovery-key", "Copy.quire", "--replace", "--new-recovery-key-file", "b.txt"])
        #expect(b.status == 0, "\(b)")
        let merged = try box.quire(["merge", "Journal.quire", "Copy.quire"])
        #expect(merged.status == 0, "\(merged)")
        let refused = try box.quire(["add", "Journal.quire", "after", "--json"])
        #expect(refused.status != 0, "\(refused)")
        #expect(refused.stdout.contains("recovery_key_choice_needed"), "\(refused)")
        #expect(refused.stdout.contains("--keep N"), "\(refused)")
        let badKeep = try box.quire(["keys", "recovery-key", "Journal.quire", "--keep", "3"])
        #expect(badKeep.status != 0, "\(badKeep)")
        let kept = try box.quire(["keys", "recovery-key", "Journal.quire", "--keep", "1"])
        #expect(kept.status == 0, "\(kept)")
        #expect(kept.stdout.hasPrefix("kept recovery key 1"), "\(kept)")
        _ = try box.add("after")
        let stranger = ["QUIRE_HOME": box.path("stranger")]
        let seen = try ["a.txt", "b.txt"].map { file in
            try box.quire(["list", "Journal.quire", "--recovery-key-file", file], env: stranger).stdout.contains("after")
        }
        #expect(seen.filter { $0 }.count == 1, "\(seen)")
    }

    /// Spec/keys.md §6.9: the new code opens the vault; the old one reads only
    /// what was written before, and writes nothing.
    @Test func recoveryKeyReplaceLocksTheOldCodeOutOfNewEpochs() throws {
        let box = try Sandbox()
        try box.makeVault()
        _ = try box.add("before")
        let bare = try box.quire(["keys", "recovery-key", "Journal.quire"])
        #expect(bare.status == 64)
        #expect(bare.stderr.contains("--replace"), "\(bare)")
        let taken = try box.quire(["keys", "recovery-key", "Journal.quire", "--replace", "--new-recovery-key-file", "recovery.txt"])
        #expect(taken.status == 1)
        #expect(taken.stderr.hasPrefix("quire: error: recovery.txt already exists; nothing was changed\n"), "\(taken)")
        let r = try box.quire(["keys", "recovery-key", "Journal.quire", "--replace", "--new-recovery-key-file", "new.txt", "--json"])
        #expect(r.status == 0, "\(r)")
        let j = try r.json()
        #expect(j["epoch"] as? Int == 2)
        #expect(j["recoveryKey"] is NSNull)
        #expect(j["recoveryKeyFile"] as? String == "new.txt")
        let mode = try FileManager.default.attributesOfItem(atPath: box.path("new.txt"))[.posixPermissions] as? Int
        #expect(mode == 0o600)
        _ = try box.add("after")
        let stranger = ["QUIRE_HOME": box.path("stranger")]
        let fresh = try box.quire(["list", "Journal.quire", "--recovery-key-file", "new.txt"], env: stranger)
        #expect(fresh.status == 0, "\(fresh)")
        #expect(fresh.stdout.contains("before") && fresh.stdout.contains("after"), "\(fresh)")
        let old = try box.quire(["list", "Journal.quire", "--recovery-key-file", "recovery.txt"], env: stranger)
        #expect(!old.stdout.contains("after"), "\(old)")
        let oldWrite = try box.quire(["add", "Journal.quire", "by the old code", "--recovery-key-file", "recovery.txt"], env: stranger)
        #expect(oldWrite.status != 0, "\(oldWrite)")
        let printed = try box.quire(["keys", "recovery-key", "Journal.quire", "--replace"])
        #expect(printed.status == 0, "\(printed)")
        #expect(printed.stdout.contains("New recovery key (shown once"), "\(printed)")
    }

    @Test func deviceCodeAddListRemove() throws {
        let box = try Sandbox()
        try box.makeVault()
        let phone = ["QUIRE_HOME": box.path("phone")]
        let code = try box.quire(["device", "code", "--device-name", "Phone"], env: phone)
        #expect(code.status == 0)
        let typed = code.stdout.trimmingCharacters(in: .newlines)
        #expect(matches(code.stdout, "[0-9A-Z-]{69}\n"), "\(code)")
        #expect(matches(code.stderr, #"""
            This is the device code of "Phone" \(its key was made now\); fingerprint ([0-9A-Z]{4}-){3}[0-9A-Z]{4}\.
            On a device already enrolled, run: quire device add VAULT CODE --name NAME
            and check that it shows the same fingerprint\.

            """#), "\(code)")
        let cj = try box.quire(["device", "code", "--json"], env: phone).json()
        #expect(cj["code"] as? String == typed)
        #expect(cj["created"] as? Bool == false)
        let fingerprint = try #require(cj["fingerprint"] as? String)
        let add = try box.quire(["device", "add", "Journal.quire", typed, "--name", "Phone"])
        #expect(add.status == 0, "\(add)")
        #expect(add.stdout == "enrolled \"Phone\" (fingerprint \(fingerprint)) in Journal.quire; it opens the vault with its own key now\n")
        #expect(try box.add("from the phone", vault: "Journal.quire").count == 32)
        #expect(try box.quire(["list", "Journal.quire"], env: phone).status == 0)
        let list = try box.quire(["device", "list", "Journal.quire"])
        #expect(matches(list.stdout, """
            [-0-9A-Z]{19}  Laptop  added [0-9-]{10}  \\(this device\\)
            \(fingerprint)  Phone  added [0-9-]{10}
            and the recovery key

            """), "\(list)")
        let lj = try box.quire(["device", "list", "Journal.quire", "--json"]).json()
        #expect((lj["devices"] as? [[String: Any]])?.count == 2)
        #expect(try box.quire(["device", "add", "Journal.quire", typed]).status == 64)
        let badCode = try box.quire(["device", "add", "Journal.quire", "NOT-A-CODE", "--name", "X"])
        #expect(badCode.status == 1)
        let remove = try box.quire(["device", "remove", "Journal.quire", "phone"])
        #expect(remove.status == 0, "\(remove)")
        #expect(remove.stdout == """
            removed "Phone" (fingerprint \(fingerprint)): new records are sealed under epoch 2, which it never gets
            it can still read what it could before until 'quire compact --rekey Journal.quire'

            """)
        let gone = try box.quire(["device", "remove", "Journal.quire", "Phone"])
        #expect(gone.status == 1)
        #expect(gone.stderr.hasPrefix("quire: error: "))
        let phoneAdd = try box.quire(["add", "Journal.quire", "after removal"], env: phone)
        #expect(phoneAdd.status == 1)
    }
}

@Suite struct ImportExportCommandTests {
    @Test func importSaysWhatIsWrongWithItsSource() throws {
        let box = try Sandbox()
        try box.makeVault()
        try box.write("empty.zip", "")
        let r = try box.quire(["import", "dayone", "empty.zip", "Journal.quire", "--json"])
        #expect(r.status == 1)
        #expect((try r.json()["error"] as? [String: Any])?["code"] as? String == "import_unreadable_source", "\(r)")
        let missing = try box.quire(["import", "jrnl", "nothing.json", "Journal.quire"])
        #expect(missing.status == 1)
        #expect(missing.stderr == "quire: error: no file or folder at nothing.json\nquire: hint: check the SOURCE path\n")
        let format = try box.quire(["import", "evernote", "empty.zip", "Journal.quire"])
        #expect(format.status == 64)
        #expect(format.stderr.hasPrefix("quire: error: unknown import format 'evernote'; the formats are dayone, dayone-classic, jrnl, markdown\n"))
    }

    /// A zone the importer inferred is said by the import and by `show`
    /// (issue 16, family 5: a Day One entry without a timeZone).
    @Test func inferredZonesAreSaid() throws {
        let box = try Sandbox()
        try box.makeVault()
        try box.write("Zones.json", """
            {"metadata": {"version": "1.0"}, "entries": [
            {"uuid": "0FA50000000000000000000000000001", "creationDate": "2018-12-10T16:56:18Z", "text": "From the location",
             "location": {"latitude": 39.6, "longitude": -104.9, "timeZoneName": "America/Denver"}},
            {"uuid": "0FA50000000000000000000000000002", "creationDate": "2018-12-11T16:56:18Z", "text": "Nothing"}]}
            """)
        let r = try box.quire(["import", "dayone", "Zones.json", "Journal.quire", "--time-zone", "Asia/Tokyo"])
        #expect(r.status == 0, "\(r)")
        #expect(r.stdout.contains("  notes (time zones inferred, links kept as written): 2\n"))
        #expect(r.stdout.contains("Zones.json: entry 0FA50000000000000000000000000002: timeZone: the entry has no time zone and its location names none: shown in Asia/Tokyo"))
        let json = try box.quire(["import", "dayone", "Zones.json", "Journal.quire", "--json"]).json()
        #expect((json["notes"] as? [[String: String]])?.count == 2)
        let location = try box.quire(["show", "Journal.quire", "0fa5000000000000000000000000000" + "1"])
        #expect(location.stdout.contains("(written in America/Denver, inferred from its location)"), "\(location)")
        #expect(location.stdout.contains("place:    39.60000° N, 104.90000° W"))
        let other = try box.quire(["show", "Journal.quire", "0fa50000000000000000000000000002", "--json"]).json()
        #expect(other["timeZone"] as? String == "Asia/Tokyo" && other["timeZoneInferred"] as? String == "import")
    }

    @Test func exportWritesEveryFormatAndTakesTheFormatFromTheName() throws {
        let box = try Sandbox()
        try box.makeVault()
        _ = try box.add("An entry to export", ["--date", "2026-03-01"])
        for format in ["md", "json", "html", "epub", "pdf"] {
            let r = try box.quire(["export", "Journal.quire", "--format", format, "-o", "out-\(format)", "--json"])
            #expect(r.status == 0, "\(format): \(r)")
            #expect(try r.json()["entries"] as? Int == 1, "\(format)")
            #expect(FileManager.default.fileExists(atPath: box.path("out-\(format)")))
        }
        let byName = try box.quire(["export", "Journal.quire", "-o", "book.epub", "--json"])
        #expect(byName.status == 0, "\(byName)")
        #expect(try byName.json()["format"] as? String == "epub")
        let unnamed = try box.quire(["export", "Journal.quire", "-o", "x"])
        #expect(unnamed.status == 64)
        #expect(unnamed.stderr.hasPrefix("quire: error: --format is required (md, json, dayone, html, epub or pdf): x's extension names no format\n"), "\(unnamed)")
        #expect(try box.quire(["export", "Journal.quire", "--format", "docx", "-o", "x"]).status == 64)
        #expect(try box.quire(["export", "Journal.quire", "--format", "md"]).status == 64)
    }
}

@Suite struct UsageErrorTests {
    /// Every command: a wrong command line is exit 64 with an error and a hint naming its help.
    @Test func everyCommandRejectsUnknownOptionsAndWrongOperandCounts() throws {
        let box = try Sandbox()
        let cases: [(String, [String])] = [
            ("init", []), ("add", []), ("list", []), ("show", ["V"]), ("edit", ["V"]), ("rm", ["V"]), ("search", ["V"]),
            ("attachments", ["V"]), ("extract", ["V"]), ("verify", []), ("info", []), ("merge", ["A"]), ("resolve", []),
            ("compact", []), ("import", ["dayone", "S"]), ("export", []), ("keys status", []), ("keys rotate", []),
            ("keys escrow-free", []), ("keys passphrase", []), ("keys recovery-key", []), ("keys accept-rollback", []), ("keys accept-tampered", []), ("device add", ["V"]), ("device remove", ["V"]), ("device list", []),
        ]
        for (name, tooFew) in cases {
            let words = name.split(separator: " ").map(String.init)
            let few = try box.quire(words + tooFew)
            #expect(few.status == 64, "\(name)")
            #expect(few.stdout == "")
            #expect(few.stderr.hasPrefix("quire: error: 'quire \(name)' needs "), "\(name): \(few.stderr)")
            // Without a default journal, a left-out VAULT is named in the hint.
            #expect(
                few.stderr.hasSuffix("quire: hint: see 'quire help \(name)'\n") || few.stderr.contains("(no default journal is set)\nquire: hint: give the vault's path, set QUIRE_VAULT"),
                "\(name): \(few.stderr)")
            let unknown = try box.quire(words + ["--no-such-option"])
            #expect(unknown.status == 64, "\(name)")
            #expect(unknown.stderr == "quire: error: unknown option --no-such-option for 'quire \(name)'\nquire: hint: see 'quire help \(name)'\n")
            let short = try box.quire(words + ["-z"])
            #expect(short.status == 64, "\(name)")
        }
        let extra = try box.quire(["device", "code", "surplus"])
        #expect(extra.status == 64)
        #expect(extra.stderr == "quire: error: unexpected 'surplus' for 'quire device code' (usage: quire device code)\nquire: hint: see 'quire help device code'\n")
        let twice = try box.quire(["list", "V", "--since", "2026-01-01", "--since", "2026-01-02"])
        #expect(twice.status == 64)
        #expect(twice.stderr == "quire: error: --since is given twice\nquire: hint: see 'quire help list'\n")
    }

    /// Every command that opens a vault: exit 1, and the same error and hint, when there is none.
    @Test func everyVaultCommandFailsWithExitOneWhenTheVaultIsMissing() throws {
        let box = try Sandbox()
        let cases: [[String]] = [
            ["add", "Nope.quire", "x"], ["list", "Nope.quire"], ["show", "Nope.quire", "abcd"], ["edit", "Nope.quire", "abcd", "x"],
            ["rm", "Nope.quire", "abcd"], ["search", "Nope.quire", "q"], ["attachments", "Nope.quire", "abcd"],
            ["extract", "Nope.quire", "abcd", "-o", "out"], ["verify", "Nope.quire"], ["info", "Nope.quire"],
            ["merge", "Nope.quire", "Other.quire"], ["resolve", "Nope.quire"], ["compact", "Nope.quire"],
            ["keys", "status", "Nope.quire"], ["keys", "rotate", "Nope.quire"], ["keys", "escrow-free", "Nope.quire"],
            ["keys", "passphrase", "Nope.quire", "--remove"], ["device", "add", "Nope.quire", "CODE", "--name", "X"],
            ["device", "remove", "Nope.quire", "X"], ["device", "list", "Nope.quire"],
            ["export", "Nope.quire", "--format", "md", "-o", "out"],
        ]
        for args in cases {
            let r = try box.quire(args)
            #expect(r.status == 1, "\(args): \(r)")
            #expect(r.stdout == "", "\(args)")
            if args[0] != "device" || args[1] != "add" {
                #expect(r.stderr == "quire: error: no vault at Nope.quire\nquire: hint: check the path, or create a vault with 'quire init Nope.quire'\n", "\(args): \(r.stderr)")
            }
            let j = try box.quire(args + ["--json"])
            #expect(j.status == 1)
            let error = try #require(try j.json()["error"] as? [String: Any], "\(args)")
            #expect(error["exitCode"] as? Int == 1)
        }
        try box.write("not-a-folder", "")
        let code = try box.quire(["device", "code"], env: ["QUIRE_HOME": box.path("not-a-folder")])
        #expect(code.status == 1)
        #expect(code.stdout == "")
        #expect(code.stderr.hasPrefix("quire: error: "))
        #expect(code.stderr.hasSuffix("quire: hint: check QUIRE_HOME (\(box.path("not-a-folder"))): it must be a folder only this user can read and write\n"), "\(code.stderr)")
    }

    @Test func anEscrowKeyShowsInTheStatementUntilEscrowFree() throws {
        let box = try Sandbox()
        let custodian = String(repeating: "5a", count: 32)
        let r = try box.quire(["init", "J.quire", "--escrow-key", custodian, "--recovery-key-file", "rk.txt"])
        #expect(r.status == 0, "\(r)")
        #expect(r.stdout.contains("An escrow key can also decrypt it (standard mode).\n"))
        #expect(try box.quire(["keys", "status", "J.quire"]).stdout.contains("  - the escrow key \"escrow\"\n"))
        #expect(try box.quire(["keys", "escrow-free", "J.quire", "--recovery-key-file", "rk.txt"]).status == 0)
        let after = try box.quire(["keys", "status", "J.quire", "--json"]).json()
        #expect(after["escrowFree"] as? Bool == true)
        #expect((after["readers"] as? [[String: Any]])?.map { $0["kind"] as? String } == ["device", "recovery"])
        let info = try box.quire(["info", "J.quire", "--json"]).json()
        #expect((info["latestKeyring"] as? [String: Any])?["escrowFree"] as? Bool == true)
    }
}

