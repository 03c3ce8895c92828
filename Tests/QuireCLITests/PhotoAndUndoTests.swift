import Foundation
import Testing

/// Photos on existing entries, several values for --attach, the form
/// --tag takes; rm that asks, and restore.
@Suite struct PhotoAndUndoTests {
    @Test func photosCanBeAddedToAnEntryAndSeveralAtOnce() throws {
        let box = try Sandbox()
        try box.makeVault()
        for name in ["a.jpg", "b.jpg", "c.png"] { try Data(name.utf8).write(to: URL(fileURLWithPath: box.path(name))) }
        let id = try box.add("Two photos", ["--date", "2026-03-01", "--attach", "a.jpg", "b.jpg"])
        #expect(try box.quire(["attachments", "Journal.quire", id, "--json"]).json()["attachments"].map { ($0 as? [Any])?.count } == 2)
        let edit = try box.quire(["edit", "Journal.quire", id, "--attach", "c.png"])
        #expect(edit.status == 0, "\(edit)")
        let shown = try box.quire(["show", "Journal.quire", id, "--json"]).json()
        let names = (shown["attachments"] as? [[String: Any]])?.compactMap { $0["fileName"] as? String }
        #expect(names == ["a.jpg", "b.jpg", "c.png"])
        #expect(shown["text"] as? String == "Two photos")
    }

    @Test func aTagOrFileAfterAnotherSaysWhichFormToUse() throws {
        let box = try Sandbox()
        try box.makeVault()
        let tags = try box.quire(["add", "Journal.quire", "--tag", "reading", "rain", "Day 6"])
        #expect(tags.status == 64, "\(tags)")
        #expect(tags.stderr.hasPrefix("quire: error: 'rain' follows --tag reading: give each TAG its own --tag (--tag reading --tag rain)\n"), "\(tags)")
        try Data("x".utf8).write(to: URL(fileURLWithPath: box.path("a.jpg")))
        let files = try box.quire(["add", "--attach", "a.jpg", "missing.jpg", "Day 6"], env: ["QUIRE_VAULT": box.path("Journal.quire")])
        #expect(files.status == 64, "\(files)")
        #expect(files.stderr.hasPrefix("quire: error: 'missing.jpg' follows --attach a.jpg: give each FILE its own --attach (--attach a.jpg --attach missing.jpg); 'missing.jpg' was not taken as another FILE: no such file\n"), "\(files)")
        #expect(try box.quire(["list", "Journal.quire"]).stdout == "")
        // The form the tour uses: the text after the tags.
        #expect(try box.quire(["add", "Journal.quire", "--tag", "walk", "A walk by the river"]).status == 0)
    }

    @Test func rmAsksOnATerminalAndRestoreBringsTheEntryBack() throws {
        let box = try Sandbox()
        try box.makeVault()
        let id = try box.add("Keep me, perhaps", ["--date", "2026-03-01"])
        let short = String(id.prefix(8))
        let no = try box.onTerminal(["rm", "Journal.quire", short], answers: ["n"])
        #expect(no.exit == 1, "\(no.output)")
        #expect(no.output.contains("Delete \(short) (2026-03-01: Keep me, perhaps)? [y/N] "), "\(no.output)")
        #expect(try box.quire(["list", "Journal.quire"]).stdout.contains("Keep me"))
        let yes = try box.onTerminal(["rm", "Journal.quire", short], answers: ["y"])
        #expect(yes.exit == 0, "\(yes.output)")
        #expect(try box.quire(["list", "Journal.quire"]).stdout == "")
        let deleted = try box.quire(["restore", "Journal.quire", "--list"])
        #expect(deleted.stdout.hasPrefix("\(short)  2026-03-01        Keep me, perhaps  (deleted "), "\(deleted)")
        let restored = try box.quire(["restore", "Journal.quire", short])
        #expect(restored.stdout == "restored \(short) (Keep me, perhaps)\n", "\(restored)")
        #expect(try box.quire(["show", "Journal.quire", short, "--json"]).json()["text"] as? String == "Keep me, perhaps")
        // Without a terminal, rm does not ask; after compaction, nothing is left to restore.
        #expect(try box.quire(["rm", "Journal.quire", short]).status == 0)
        #expect(try box.quire(["compact", "Journal.quire"]).status == 0)
        let gone = try box.quire(["restore", "Journal.quire", short])
        #expect(gone.status == 1)
        #expect(gone.stderr.hasPrefix("quire: error: entry \(short) cannot be restored: the vault was compacted after it was deleted"), "\(gone)")
    }
}
