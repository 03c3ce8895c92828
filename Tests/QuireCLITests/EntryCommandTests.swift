import Foundation
import Testing

/// True when `text` matches the regular expression `pattern` as a whole.
func matches(_ text: String, _ pattern: String) -> Bool {
    guard let re = try? NSRegularExpression(pattern: "^" + pattern + "$", options: [.dotMatchesLineSeparators]) else { return false }
    return re.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) != nil
}

@Suite struct InitTests {
    @Test func initWritesTheRecoveryKeyToANewPrivateFile() throws {
        let box = try Sandbox()
        let r = try box.quire(["init", "Journal.quire", "--name", "Test journal", "--device-name", "Laptop", "--recovery-key-file", "recovery.txt"])
        #expect(r.status == 0, "\(r)")
        #expect(matches(r.stdout, #"""
            Created Journal\.quire: the journal "Test journal", vault id [0-9a-f]{32}\.
            This device: "Laptop", fingerprint [0-9A-Z]{4}-[0-9A-Z]{4}-[0-9A-Z]{4}-[0-9A-Z]{4} \(its key was made now\)\.
            The recovery key was written to recovery\.txt \(mode 0600\)\. Copy it somewhere safe, away
            from this device \(on paper, or in a password manager\), then delete the file\.

            """#), "\(r)")
        #expect(r.stderr == "")
        let attributes = try FileManager.default.attributesOfItem(atPath: box.path("recovery.txt"))
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        let code = try String(contentsOfFile: box.path("recovery.txt"), encoding: .utf8)
        #expect(matches(code, "([0-9A-Z]{4}-){13}[0-9A-Z]{4}\n"), "\(code)")
        #expect(!r.stdout.contains(code.trimmingCharacters(in: .newlines)))
        let vaultMode = try FileManager.default.attributesOfItem(atPath: box.path("Journal.quire"))[.posixPermissions] as? Int
        #expect(vaultMode == 0o600)
    }

    @Test func initPrintsTheRecoveryKeyOnceWithoutAFile() throws {
        let box = try Sandbox()
        let r = try box.quire(["init", "J.quire", "--device-name", "Laptop"])
        #expect(r.status == 0)
        #expect(matches(r.stdout, #"""
            Created J\.quire: the journal "J", vault id [0-9a-f]{32}\.
            This device: "Laptop", fingerprint [-0-9A-Z]{19} \(its key was made now\)\.

            Recovery key \(shown once; write it down and keep it away from this device\):

                ([0-9A-Z]{4}-){13}[0-9A-Z]{4}

            It opens the journal on any device\. Without it, losing every enrolled device
            loses the journal; with it, anyone can read it\.

            """#), "\(r)")
        // The second vault on this device reuses its key.
        let again = try box.quire(["init", "K.quire", "--escrow-free", "--recovery-key-file", "k.txt"])
        #expect(again.status == 0)
        #expect(again.stdout.contains("This device: \"Laptop\", fingerprint "))
        #expect(!again.stdout.contains("its key was made now"))
        #expect(again.stdout.contains("Escrow-free: no escrow key can ever be added."))
    }

    @Test func initRefusesExistingFilesAndChangesNothing() throws {
        let box = try Sandbox()
        try box.makeVault()
        let r = try box.quire(["init", "Journal.quire", "--recovery-key-file", "other.txt"])
        #expect(r.status == 1)
        #expect(r.stdout == "")
        #expect(r.stderr == "quire: error: Journal.quire already exists; nothing was changed\nquire: hint: choose another name, or open the existing vault\n")
        #expect(!FileManager.default.fileExists(atPath: box.path("other.txt")))
        let clash = try box.quire(["init", "New.quire", "--recovery-key-file", "recovery.txt"])
        #expect(clash.status == 1)
        #expect(clash.stderr.hasPrefix("quire: error: recovery.txt already exists; nothing was changed\n"))
        #expect(!FileManager.default.fileExists(atPath: box.path("New.quire")))
    }

    @Test func initJSONAndUsageErrors() throws {
        let box = try Sandbox()
        let r = try box.quire(["init", "J.quire", "--json", "--device-name", "Laptop", "--recovery-key-file", "rk.txt"])
        #expect(r.status == 0)
        let j = try r.json()
        #expect(Set(j.keys) == ["path", "vaultID", "name", "escrowFree", "passphrase", "device", "recoveryKey", "recoveryKeyFile"])
        #expect(j["path"] as? String == "J.quire")
        #expect(j["name"] as? String == "J")
        #expect(j["escrowFree"] as? Bool == false)
        #expect(j["recoveryKey"] is NSNull)
        #expect(j["recoveryKeyFile"] as? String == "rk.txt")
        let device = try #require(j["device"] as? [String: Any])
        #expect(device["name"] as? String == "Laptop")
        #expect(device["created"] as? Bool == true)
        #expect((j["vaultID"] as? String)?.count == 32)
        for args in [["init"], ["init", "a", "b"], ["init", "x.quire", "--escrow-free", "--escrow-key", String(repeating: "ab", count: 32)],
                     ["init", "x.quire", "--escrow-key", "zz"], ["init", "x.quire", "--frob"], ["init", "x.quire", "--name"]] {
            let u = try box.quire(args)
            #expect(u.status == 64, "\(args)")
            #expect(u.stderr.hasPrefix("quire: error: "), "\(args)")
            #expect(u.stderr.hasSuffix("\nquire: hint: see 'quire help init'\n"), "\(args): \(u.stderr)")
        }
        let p = try box.quire(["init", "x.quire", "--passphrase"])
        #expect(p.status == 64)
        #expect(p.stderr == "quire: error: a passphrase can only be typed on a terminal\nquire: hint: give it in a file with --passphrase-file FILE (mode 0600)\n")
    }
}

@Suite struct EntryCommandTests {
    @Test func addListShowExact() throws {
        let box = try Sandbox()
        try box.makeVault()
        let walk = try box.add("A walk by the river.\nThe swans were out.", ["--date", "2026-03-01T08:30", "--tag", "walk", "--tag", "spring"])
        let office = try box.add("Up betimes, and to the office.", ["--date", "2026-03-02", "--mood", "4", "--journal", "Work"])
        let piped = try box.quire(["add", "Journal.quire", "-", "--date", "2026-03-03T21:00:05Z"], stdin: "Read late.\n")
        #expect(piped.status == 0)
        let read = piped.stdout.trimmingCharacters(in: .newlines)
        for id in [walk, office, read] { #expect(matches(id, "[0-9a-f]{32}"), "\(id)") }
        let list = try box.quire(["list", "Journal.quire"])
        #expect(list.status == 0)
        #expect(list.stderr == "")
        #expect(list.stdout == """
            \(walk.prefix(8))  2026-03-01 08:30  A walk by the river.  #walk #spring
            \(office.prefix(8))  2026-03-02        Up betimes, and to the office.  (mood 4)
            \(read.prefix(8))  2026-03-03 21:00  Read late.

            """)
        let since = try box.quire(["list", "Journal.quire", "--since", "2026-03-02", "--until", "2026-03-02"])
        #expect(since.stdout == "\(office.prefix(8))  2026-03-02        Up betimes, and to the office.  (mood 4)\n")
        let tagged = try box.quire(["list", "Journal.quire", "--tag", "SPRING"])
        #expect(tagged.stdout.hasPrefix(String(walk.prefix(8))) && tagged.stdout.split(separator: "\n").count == 1)
        let journal = try box.quire(["list", "Journal.quire", "--journal", "work"])
        #expect(journal.stdout.split(separator: "\n").count == 1)
        let show = try box.quire(["show", "Journal.quire", String(walk.prefix(5))])
        #expect(show.status == 0)
        #expect(matches(show.stdout, """
            entry \(walk)
            date:     2026-03-01 08:30 \\(written in (GMT|UTC)\\)
            tags:     walk, spring

            A walk by the river\\.
            The swans were out\\.

            """), "\(show)")
        let showOffice = try box.quire(["show", "Journal.quire", office])
        #expect(showOffice.stdout.contains("journal:  Work\nmood:     4 of 5\n"))
    }

    @Test func listAndShowJSON() throws {
        let box = try Sandbox()
        try box.makeVault()
        let id = try box.add("Hello there\nsecond line", ["--date", "2026-03-01T08:30+01:00", "--tag", "t", "--mood", "5"])
        let j = try box.quire(["list", "Journal.quire", "--json"]).json()
        #expect(j["count"] as? Int == 1)
        let e = try #require((j["entries"] as? [[String: Any]])?.first)
        #expect(Set(e.keys) == ["id", "created", "timeZone", "allDay", "title", "tags", "journal", "mood", "starred", "attachments", "attested", "conflict"])
        #expect(e["id"] as? String == id)
        #expect(e["created"] as? String == "2026-03-01T07:30:00Z")
        #expect(e["title"] as? String == "Hello there")
        #expect(e["tags"] as? [String] == ["t"])
        #expect(e["mood"] as? Int == 5)
        #expect(e["attachments"] as? Int == 0)
        let s = try box.quire(["show", "Journal.quire", id, "--json"]).json()
        #expect(Set(s.keys) == ["id", "created", "modified", "timeZone", "timeZoneInferred", "allDay", "text", "tags", "journal", "mood", "starred", "pinned",
                                "location", "weather", "attachments", "revisions", "conflictingRevisions", "verified", "attested", "attestationFailed", "unreadRecords"])
        #expect(s["text"] as? String == "Hello there\nsecond line")
        #expect(s["revisions"] as? Int == 1)
        #expect(s["verified"] as? Bool == true)
        #expect(s["attested"] as? Bool == true)
        #expect(s["location"] is NSNull)
        let add = try box.quire(["add", "Journal.quire", "x", "--json", "--date", "2026-01-01"]).json()
        #expect(Set(add.keys) == ["id", "created", "timeZone", "allDay", "attachments"])
        #expect(add["allDay"] as? Bool == true)
        #expect(add["created"] as? String == "2026-01-01T00:00:00Z")
    }

    @Test func addRefusesWhatItCannotUse() throws {
        let box = try Sandbox()
        try box.makeVault()
        let noText = try box.quire(["add", "Journal.quire"])
        #expect(noText.status == 64)
        #expect(noText.stderr == "quire: error: no TEXT: give the text, or '-' to read it from standard input (the editor opens only on a terminal)\nquire: hint: see 'quire help add'\n")
        let empty = try box.quire(["add", "Journal.quire", "-"], stdin: "  \n")
        #expect(empty.status == 1)
        #expect(empty.stderr == "quire: error: the entry is empty; nothing was added\nquire: hint: give the text as TEXT, '-' to read it from standard input, or no TEXT on a terminal to open the editor\n")
        let badDate = try box.quire(["add", "Journal.quire", "x", "--date", "2026-02-30"])
        #expect(badDate.status == 64)
        #expect(badDate.stderr.hasPrefix("quire: error: --date '2026-02-30' is not a date I read\n"))
        let badMood = try box.quire(["add", "Journal.quire", "x", "--mood", "9"])
        #expect(badMood.status == 64)
        let missing = try box.quire(["add", "Nope.quire", "x"])
        #expect(missing.status == 1)
        #expect(missing.stderr == "quire: error: no vault at Nope.quire\nquire: hint: check the path, or create a vault with 'quire init Nope.quire'\n")
        let noFile = try box.quire(["add", "Journal.quire", "x", "--attach", "nothing.jpg"])
        #expect(noFile.status == 1)
        #expect(try box.quire(["list", "Journal.quire"]).stdout == "")
    }

    @Test func idPrefixesEditRemoveSearch() throws {
        let box = try Sandbox()
        try box.makeVault()
        var ids: [String] = []
        for i in 0..<40 { ids.append(try box.add("Entry \(i) about the River Thames", ["--date", "2026-01-\(String(format: "%02d", i % 28 + 1))"])) }
        let short = try box.quire(["show", "Journal.quire", "abc"])
        #expect(short.status == 64)
        #expect(short.stderr == "quire: error: 'abc' is not an entry id\nquire: hint: give 4 or more hex digits of an id 'quire list' shows\n")
        let none = try box.quire(["show", "Journal.quire", ids[0].hasPrefix("0000") ? "ffff0000" : "0000ffff"])
        #expect(none.status == 1)
        #expect(none.stderr.hasPrefix("quire: error: no entry has an id starting with "))
        // Some 1-hex-digit prefix is shared by two of 40 ids; pad it to 4 with the common prefix.
        var byFirst: [Character: [String]] = [:]
        for id in ids { byFirst[id.first!, default: []].append(id) }
        if let pair = byFirst.values.first(where: { $0.count >= 2 }) {
            let common = String(zip(pair[0], pair[1]).prefix { $0 == $1 }.map(\.0))
            if common.count >= 4 {
                let amb = try box.quire(["show", "Journal.quire", common])
                #expect(amb.status == 64)
            }
        }
        let edit = try box.quire(["edit", "Journal.quire", String(ids[3].prefix(6)), "Rewritten: a quiet day", "--tag", "quiet"])
        #expect(edit.status == 0)
        #expect(edit.stdout == "edited \(ids[3].prefix(8))\n")
        let shown = try box.quire(["show", "Journal.quire", ids[3], "--json"]).json()
        #expect(shown["text"] as? String == "Rewritten: a quiet day")
        #expect(shown["tags"] as? [String] == ["quiet"])
        #expect(shown["revisions"] as? Int == 2)
        let unchanged = try box.quire(["edit", "Journal.quire", ids[3], "Rewritten: a quiet day", "--tag", "quiet"])
        #expect(unchanged.stdout == "unchanged: \(ids[3].prefix(8))\n")
        let nothing = try box.quire(["edit", "Journal.quire", ids[3]])
        #expect(nothing.status == 64)
        let rm = try box.quire(["rm", "Journal.quire", ids[5]])
        #expect(rm.status == 0)
        #expect(rm.stdout == "deleted \(ids[5].prefix(8)) (Entry 5 about the River Thames)\n")
        #expect(try box.quire(["show", "Journal.quire", ids[5]]).status == 1)
        let search = try box.quire(["search", "Journal.quire", "RIVER thames"])
        #expect(search.status == 0)
        #expect(search.stdout.split(separator: "\n").count == 38)
        let byTag = try box.quire(["search", "Journal.quire", "QUIE", "--json"]).json()
        #expect(byTag["count"] as? Int == 1)
        #expect(((byTag["entries"] as? [[String: Any]])?.first?["id"] as? String) == ids[3])
        let rmJSON = try box.quire(["rm", "Journal.quire", ids[6], "--json"]).json()
        #expect(rmJSON["deleted"] as? Bool == true)
        #expect(rmJSON["id"] as? String == ids[6])
    }

    @Test func attachmentsAndExtract() throws {
        let box = try Sandbox()
        try box.makeVault()
        let photo = (0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 7) }
        try Data(photo).write(to: URL(fileURLWithPath: box.path("photo.jpg")))
        let id = try box.add("With a photo", ["--attach", "photo.jpg", "--date", "2026-03-01"])
        let list = try box.quire(["attachments", "Journal.quire", id])
        #expect(list.status == 0)
        #expect(matches(list.stdout, "[0-9a-f]{32}  image/jpeg  195\\.3 KiB  photo\\.jpg\n"), "\(list)")
        let j = try box.quire(["attachments", "Journal.quire", id, "--json"]).json()
        let a = try #require((j["attachments"] as? [[String: Any]])?.first)
        #expect(a["byteCount"] as? Int == 200_000)
        #expect(a["mediaType"] as? String == "image/jpeg")
        #expect(a["fileName"] as? String == "photo.jpg")
        let blob = try #require(a["id"] as? String)
        let x = try box.quire(["extract", "Journal.quire", String(blob.prefix(8)), "-o", "out.jpg"])
        #expect(x.status == 0)
        #expect(x.stdout == "wrote out.jpg (195.3 KiB, image/jpeg)\n")
        #expect(try Data(contentsOf: URL(fileURLWithPath: box.path("out.jpg"))) == Data(photo))
        let again = try box.quire(["extract", "Journal.quire", String(blob.prefix(8)), "-o", "out.jpg"])
        #expect(again.status == 1)
        #expect(again.stderr == "quire: error: out.jpg already exists; nothing was written\nquire: hint: choose another name or remove it first\n")
        // Without -o: the attachment's own name here, never over a file that exists.
        let noOut = try box.quire(["extract", "Journal.quire", String(blob.prefix(8))])
        #expect(noOut.status == 0, "\(noOut)")
        #expect(noOut.stdout == "wrote photo-2.jpg (195.3 KiB, image/jpeg)\n")
        #expect(try Data(contentsOf: URL(fileURLWithPath: box.path("photo-2.jpg"))) == Data(photo))
        #expect(try box.quire(["extract", "Journal.quire", String(blob.prefix(8))]).stdout == "wrote photo-3.jpg (195.3 KiB, image/jpeg)\n")
        let wrong = try box.quire(["extract", "Journal.quire", blob.hasPrefix("0000") ? "1111" : "0000", "-o", "y"])
        #expect(wrong.status == 1)
        let none = try box.quire(["attachments", "Journal.quire", try box.add("plain")])
        #expect(none.status == 0)
        #expect(none.stdout == "")
        #expect(none.stderr.hasSuffix("has no attachments\n"))
        let extractJSON = try box.quire(["extract", "Journal.quire", blob, "-o", "o2.jpg", "--json"]).json()
        #expect(extractJSON["byteCount"] as? Int == 200_000)
        #expect(extractJSON["path"] as? String == "o2.jpg")
    }
}
