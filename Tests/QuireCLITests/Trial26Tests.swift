import Foundation
import Testing

/// Findings the 25th trial (a hostile CLI trial) left open, F6–F11
/// (`/work/notes/trial-25.md`): each test asserts the right value.
@Suite struct Trial26Tests {
    static let conflictName = "Journal.sync-conflict-20261202-000001-BBBBBBB.quire"

    func bytes(_ box: Sandbox, _ name: String) throws -> [UInt8] {
        Array(try Data(contentsOf: URL(fileURLWithPath: box.path(name))))
    }

    /// F6: `resolve` merged a deliberate backup (any file with the vault's
    /// id) and brought back the text a compaction had dropped; it followed
    /// a symbolic link named like a conflict copy and unlinked it.
    @Test func resolveNeverMergesABackupNorFollowsASymlink() throws {
        let box = try Sandbox()
        try box.makeVault()
        _ = try box.add("keep me")
        let secret = try box.add("PRIVATE deleted thing")
        try FileManager.default.copyItem(atPath: box.path("Journal.quire"), toPath: box.path("Journal backup 2026.quire"))
        try FileManager.default.copyItem(atPath: box.path("Journal.quire"), toPath: box.path("Journal 2.quire"))
        #expect(try box.quire(["rm", "Journal.quire", secret, "--yes"]).status == 0)
        #expect(try box.quire(["compact", "Journal.quire"]).status == 0)
        try FileManager.default.createSymbolicLink(atPath: box.path(Self.conflictName), withDestinationPath: "Journal backup 2026.quire")
        let before = try bytes(box, "Journal backup 2026.quire")

        // Nothing is said to be waiting: none of them is a conflict copy.
        let list = try box.quire(["list", "Journal.quire"])
        #expect(!list.stderr.contains("resolve"), "\(list)")

        let r = try box.quire(["resolve", "Journal.quire"])
        #expect(r.status == 0, "\(r)")
        #expect(
            r.stdout.contains(
                "left: Journal backup 2026.quire (unknown tool): not merged: it holds records the vault does not, but its name is not a sync tool's conflict-copy name"
            ), "\(r)")
        #expect(r.stdout.contains("run quire merge Journal.quire 'Journal backup 2026.quire'"), "\(r)")
        #expect(r.stdout.contains("left: Journal 2.quire (iCloudDrive): not merged"), "\(r)")
        #expect(r.stdout.contains("run quire merge Journal.quire 'Journal 2.quire'\n"), "\(r)")
        #expect(!r.stdout.contains("folded"), "\(r)")
        // The deleted text stays gone; the backup, the link and its target are as they were.
        let restore = try box.quire(["restore", "Journal.quire", "--list"])
        #expect(!restore.stdout.contains("PRIVATE"), "\(restore)")
        #expect(FileManager.default.fileExists(atPath: box.path("Journal backup 2026.quire")))
        #expect(try bytes(box, "Journal backup 2026.quire") == before)
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: box.path(Self.conflictName))) == "Journal backup 2026.quire")

        let j = try box.quire(["resolve", "Journal.quire", "--json"]).json()
        let copies = try #require(j["copies"] as? [[String: Any]])
        #expect(copies.count == 2)
        for copy in copies {
            #expect(copy["folded"] as? Bool == false)
            #expect(copy["keptBecause"] as? String == "not_a_conflict_copy")
            #expect(copy["setAsideAs"] is NSNull)
        }
        // Named on purpose, the backup is merged.
        let m = try box.quire(["merge", "Journal.quire", "Journal backup 2026.quire"])
        #expect(m.status == 0, "\(m)")
        #expect(try box.quire(["restore", "Journal.quire", "--list"]).stdout.contains("PRIVATE"))
    }

    /// F7: a conflict copy with a damaged record was kept by `resolve`, and
    /// every command went on saying "run 'quire resolve'".
    @Test func aDamagedConflictCopyIsSetAsideAndNoLongerMentioned() throws {
        let box = try Sandbox()
        try box.makeVault()
        _ = try box.add("shared")
        try FileManager.default.copyItem(atPath: box.path("Journal.quire"), toPath: box.path(Self.conflictName))
        let start = try bytes(box, Self.conflictName).count
        _ = try box.add("damaged on the copy", vault: Self.conflictName)
        _ = try box.add("intact on the copy", vault: Self.conflictName)
        var raw = try bytes(box, Self.conflictName)
        raw[start + 120] ^= 0x01  // in the body of the first entry added
        try Data(raw).write(to: URL(fileURLWithPath: box.path(Self.conflictName)))

        #expect(try box.quire(["list", "Journal.quire"]).stderr.contains("run 'quire resolve Journal.quire'"))
        let r = try box.quire(["resolve", "Journal.quire"])
        #expect(r.status == 0, "\(r)")
        #expect(r.stdout.contains("folded \(Self.conflictName) (syncthing): "), "\(r)")
        #expect(r.stdout.contains("1 record in it could not be taken in, damaged or unverified"), "\(r)")
        #expect(
            r.stdout.contains(
                "the copy is damaged and was set aside as \(Self.conflictName).damaged, which no command will mention again: delete it"),
            "\(r)")
        #expect(!FileManager.default.fileExists(atPath: box.path(Self.conflictName)))
        #expect(FileManager.default.fileExists(atPath: box.path(Self.conflictName + ".damaged")))
        let list = try box.quire(["list", "Journal.quire"])
        #expect(list.status == 0 && list.stderr.isEmpty, "\(list)")
        #expect(list.stdout.contains("intact on the copy") && !list.stdout.contains("damaged on the copy"), "\(list)")
        // Nor does resolve (trial 28, T28-3): it listed the set-aside copy as
        // holding records the vault lacks, with a merge that wrote nothing.
        let again = try box.quire(["resolve", "Journal.quire"])
        #expect(again.status == 0, "\(again)")
        #expect(again.stdout == "no conflicted copies of Journal.quire\n", "\(again)")
        let againJSON = try box.quire(["resolve", "Journal.quire", "--json"])
        let copies = try #require(try againJSON.json()["copies"] as? [[String: Any]])
        #expect(copies.isEmpty, "\(againJSON)")
        // merge of the set-aside copy does not claim to hold everything.
        let m = try box.quire(["merge", "Journal.quire", Self.conflictName + ".damaged"])
        #expect(m.stdout.contains("already holds everything in \(Self.conflictName).damaged that can be read"), "\(m)")
        #expect(m.stdout.contains("1 record of \(Self.conflictName).damaged cannot be taken in (damaged or unverified)"), "\(m)")
    }

    /// A copy a sync tool made with no conflict-copy name (iCloud Drive's
    /// ' 2') whose only record the vault lacks is damaged: resolve said to
    /// merge it, and the merge adds nothing. It says what the copy holds,
    /// that merging adds nothing readable, and what can be done instead.
    @Test func aCopyHoldingOnlyDamagedRecordsIsNotSaidToBeMerged() throws {
        let box = try Sandbox()
        try box.makeVault()
        _ = try box.add("shared")
        let name = "Journal 2.quire"
        // Beside it, a copy (Google Drive's ' (1)') with a readable record
        // too: merging that one is still said; and one (OneDrive's '-NAME')
        // with two damaged records.
        let mixed = "Journal (1).quire"
        let twice = "Journal-Phone.quire"
        for copy in [name, mixed, twice] {
            try FileManager.default.copyItem(atPath: box.path("Journal.quire"), toPath: box.path(copy))
            let start = try bytes(box, copy).count
            _ = try box.add("damaged on the copy", vault: copy)
            let second = try bytes(box, copy).count
            if copy != name { _ = try box.add("second on the copy", vault: copy) }
            var raw = try bytes(box, copy)
            raw[start + 120] ^= 0x01  // in the body of the first entry added
            if copy == twice { raw[second + 120] ^= 0x01 }  // and of the second
            try Data(raw).write(to: URL(fileURLWithPath: box.path(copy)))
        }
        let vaultBefore = try bytes(box, "Journal.quire")
        let copyBefore = try bytes(box, name)

        let r = try box.quire(["resolve", "Journal.quire"])
        #expect(r.status == 0, "\(r)")
        #expect(!r.stdout.contains("quire merge Journal.quire 'Journal 2.quire'"), "\(r)")
        #expect(
            r.stdout.contains(
                "left: Journal 2.quire (iCloudDrive): not merged: the one record it holds that the vault does not is damaged (frame "),
            "\(r)")
        #expect(r.stdout.contains("does not authenticate: it is damaged"), "\(r)")
        #expect(
            r.stdout.contains(
                "so merging it would add nothing readable. Its name is not a sync tool's conflict-copy name, so it may be a backup: run quire verify 'Journal 2.quire' to see the damage, then keep it aside (move or rename it) or delete it if you do not need it\n"
            ), "\(r)")
        #expect(
            r.stdout.contains(
                "left: Journal-Phone.quire (onedrive): not merged: the 2 records it holds that the vault does not are all damaged (first: frame "
            ), "\(r)")
        #expect(
            r.stdout.hasSuffix(
                "run quire verify Journal-Phone.quire to see the damage, then keep it aside (move or rename it) or delete it if you do not need it\n"
            ), "\(r)")
        #expect(
            r.stdout.hasPrefix(
                "left: Journal (1).quire (googleDrive): not merged: it holds records the vault does not, but its name is not a sync tool's conflict-copy name"
            ), "\(r)")
        #expect(r.stdout.contains("run quire merge Journal.quire 'Journal (1).quire'\n"), "\(r)")
        let j = try box.quire(["resolve", "Journal.quire", "--json"]).json()
        let copies = try #require(j["copies"] as? [[String: Any]])
        #expect(
            copies.map { $0["keptBecause"] as? String } == ["not_a_conflict_copy", "only_damaged_records", "only_damaged_records"],
            "\(copies)")
        #expect(copies.allSatisfy { $0["folded"] as? Bool == false && $0["setAsideAs"] is NSNull }, "\(copies)")
        // Neither file was touched: a copy that is not a conflict copy is
        // never renamed.
        #expect(try bytes(box, "Journal.quire") == vaultBefore)
        #expect(try bytes(box, name) == copyBefore)
        // What it says holds: verify on the copy shows the damage, and a
        // merge of it writes nothing.
        let verify = try box.quire(["verify", name])
        #expect(verify.status == 2, "\(verify)")
        #expect(verify.stdout.contains("does not authenticate"), "\(verify)")
        let m = try box.quire(["merge", "Journal.quire", name])
        #expect(m.stdout.contains("already holds everything in \(name) that can be read; nothing was written"), "\(m)")
        #expect(try bytes(box, "Journal.quire") == vaultBefore)
        let list = try box.quire(["list", "Journal.quire"])
        #expect(list.status == 0 && list.stderr.isEmpty, "\(list)")
    }

    /// F9 and F10: entries a removed device wrote looked like any other in
    /// `list` and had no `attested` in its JSON; after a compaction with a
    /// rekey the removed device was told of a rollback and to write one.
    @Test func aRemovedDevicesEntriesAreMarkedAndItIsToldItWasRemoved() throws {
        let box = try Sandbox()
        try box.makeVault()
        _ = try box.add("written by the laptop")
        let phone = try box.enrollPhone()
        #expect(try box.quire(["list", "Journal.quire"], env: phone).status == 0)
        try FileManager.default.copyItem(atPath: box.path("Journal.quire"), toPath: box.path("before-remove.quire"))
        #expect(try box.quire(["device", "remove", "Journal.quire", "Phone"]).status == 0)
        // The removed phone writes to its old copy, which a sync tool then leaves beside the vault.
        let evil = try box.quire(["add", "before-remove.quire", "EVIL from removed phone"], env: phone)
        #expect(evil.status == 0, "\(evil)")
        try FileManager.default.moveItem(atPath: box.path("before-remove.quire"), toPath: box.path(Self.conflictName))
        #expect(try box.quire(["resolve", "Journal.quire"]).status == 0)

        let list = try box.quire(["list", "Journal.quire"])
        let lines = list.stdout.split(separator: "\n").map(String.init)
        #expect(lines.contains { $0.contains("EVIL from removed phone") && $0.hasSuffix("(unattested)") }, "\(list)")
        #expect(lines.contains { $0.contains("written by the laptop") && !$0.contains("unattested") }, "\(list)")
        let j = try box.quire(["list", "Journal.quire", "--json"]).json()
        let entries = try #require(j["entries"] as? [[String: Any]])
        #expect(entries.count == 2)
        for e in entries {
            #expect(e["attested"] as? Bool == !((e["title"] as? String ?? "").hasPrefix("EVIL")), "\(e)")
        }

        // F10: a compaction with a rekey, then the removed phone lists.
        _ = try box.add("after the removal")
        #expect(try box.quire(["compact", "Journal.quire", "--rekey"]).status == 0)
        let p = try box.quire(["list", "Journal.quire"], env: phone)
        #expect(p.status == 0, "\(p)")
        #expect(!p.stderr.contains("looks older"), "\(p)")
        #expect(
            p.stderr.contains("made by the device \"Laptop\"): it was removed, or left out of them"), "\(p)")
        #expect(p.stderr.contains("writing with this key is refused"), "\(p)")
        #expect(!p.stderr.contains("write one with 'quire add'"), "\(p)")
        #expect(p.stderr.contains("no entries this key can read"), "\(p)")
    }

    /// F11: a damaged `vaults/recorded` was blamed on the device key.
    @Test func aDamagedRecordedListIsNotCalledTheDeviceKey() throws {
        let box = try Sandbox()
        try box.makeVault()
        _ = try box.add("one")
        #expect(FileManager.default.fileExists(atPath: box.path("home/vaults/recorded")))
        try box.write("home/vaults/recorded", "APP0-XXXX-garbage\n")
        let r = try box.quire(["list", "Journal.quire"])
        #expect(!r.stderr.contains("the device key /"), "\(r)")
        #expect(!r.stderr.contains("enroll this device again"), "\(r)")
        #expect(r.stderr.contains("this device's list of the vault files it remembers"), "\(r)")
    }

    /// F11: the PDF book left out an image it could not draw without a word.
    @Test func thePDFBookSaysWhatItCouldNotDraw() throws {
        let box = try Sandbox()
        try box.makeVault()
        try box.write("fake.jpg", "this is not a JPEG")
        _ = try box.add("an entry with a photo that is not one", ["--attach", "fake.jpg"])
        let r = try box.quire(["export", "Journal.quire", "-o", "book.pdf"])
        #expect(r.status == 0, "\(r)")
        #expect(r.stderr.contains("quire: warning: 1 attachment could not be drawn in book.pdf and is only named there"), "\(r)")
        let names = try FileManager.default.contentsOfDirectory(atPath: box.dir)
        #expect(!names.contains { $0.contains("quire-tmp") || $0.contains("quire-export") }, "\(names)")
    }

    /// F11: an export told to stop (SIGTERM) left its decrypted temporary
    /// file or folder (`.OUT.quire-export-…`) beside OUT. Now it stops at the
    /// next entry, removes it, and ends by the same signal.
    @Test func anExportToldToStopLeavesNoTemporaryFile() throws {
        let box = try Sandbox()
        try box.makeVault()
        // A large attachment keeps the export busy long enough to be stopped.
        var x: UInt32 = 7
        var photo = [UInt8](repeating: 0, count: 24 << 20)
        for i in photo.indices {
            x = x &* 1_103_515_245 &+ 12345
            photo[i] = UInt8(truncatingIfNeeded: x >> 16)
        }
        try Data(photo).write(to: URL(fileURLWithPath: box.path("photo.bin")))
        for i in 0..<3 { _ = try box.add("entry \(i) with a photo", ["--attach", "photo.bin"]) }
        let script = """
            import os, signal, subprocess, sys, time
            d, args = sys.argv[1], sys.argv[2:]
            def default_signals():  # as from a shell: a test runner may ignore or block SIGTERM
                signal.signal(signal.SIGTERM, signal.SIG_DFL)
                signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGTERM])
            p = subprocess.Popen(args, cwd=d, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, preexec_fn=default_signals)
            seen, deadline = False, time.time() + 120
            while not seen and p.poll() is None and time.time() < deadline:
                seen = any(".quire-export-" in n for n in os.listdir(d))
                if not seen: time.sleep(0.0005)
            if seen: p.send_signal(signal.SIGTERM)
            err = p.communicate()[1].decode()
            print(seen, p.returncode)
            sys.stdout.write(err)
            """
        for (format, output) in [("md", "folder"), ("dayone", "out.zip")] {
            let r = try box.run(
                "/usr/bin/python3", ["-c", script, box.dir, box.binary, "export", "Journal.quire", "--format", format, "-o", output],
                stdin: nil, env: [:])
            #expect(r.stdout.hasPrefix("True -15\n"), "\(format): \(r)")
            #expect(r.stdout.contains("quire: warning: stopped: nothing was written to \(output)"), "\(format): \(r)")
            let names = try FileManager.default.contentsOfDirectory(atPath: box.dir)
            #expect(!names.contains { $0.contains("quire-export") }, "\(format): \(names)")
            #expect(!names.contains(output), "\(format): \(names)")
        }
    }

    /// F11: `verify` of an empty file said "damaged: not a Quire vault".
    @Test func verifyOfAnEmptyFileSaysItIsEmpty() throws {
        let box = try Sandbox()
        try box.makeVault()
        try box.write("empty.quire", "")
        let r = try box.quire(["verify", "empty.quire"])
        #expect(r.status == 2, "\(r)")
        #expect(r.stdout.hasPrefix("empty.quire: EMPTY. The file is 0 bytes long"), "\(r)")
        #expect(!r.stdout.contains("DAMAGED") && !r.stderr.contains("damaged"), "\(r)")
        #expect(r.stderr.contains("empty.quire is an empty file (0 bytes)"), "\(r)")
    }

    /// F11: a one-character passphrase was taken without a word.
    @Test func aShortPassphraseIsWarnedAbout() throws {
        let box = try Sandbox()
        try box.write("a.txt", "a\n")
        let r = try box.quire([
            "init", "J.quire", "--name", "J", "--device-name", "Laptop", "--recovery-key-file", "r.txt", "--passphrase-file", "a.txt",
        ])
        #expect(r.status == 0, "\(r)")
        #expect(r.stderr.contains("quire: warning: this passphrase has only 1 character:"), "\(r)")
        try box.write("long.txt", "four random words here\n")
        let ok = try box.quire(["keys", "passphrase", "J.quire", "--new-passphrase-file", "long.txt"])
        #expect(ok.status == 0 && !ok.stderr.contains("passphrase has only"), "\(ok)")
        let short = try box.quire(["keys", "passphrase", "J.quire", "--new-passphrase-file", "a.txt"])
        #expect(short.stderr.contains("this passphrase has only 1 character"), "\(short)")
    }
}
