import Foundation
import Testing

/// `quire edit` writes a revision only when something changed.
@Suite struct EditTests {
    @Test func editsThatChangeNothingWriteNothing() throws {
        let box = try Sandbox()
        try box.makeVault()
        let id = try box.add("The same words", ["--date", "2026-03-01", "--mood", "3"])
        let first = try box.quire(["edit", "Journal.quire", id, "--mood", "1", "--json"]).json()
        #expect(first["changed"] as? Bool == true)
        for _ in 0..<2 {
            let again = try box.quire(["edit", "Journal.quire", id, "--mood", "1", "--json"]).json()
            #expect(again["changed"] as? Bool == false, "\(again)")
        }
        for _ in 0..<2 {
            let text = try box.quire(["edit", "Journal.quire", id, "The same words", "--json"]).json()
            #expect(text["changed"] as? Bool == false, "\(text)")
        }
        let piped = try box.quire(["edit", "Journal.quire", id, "-"], stdin: "The same words")
        #expect(piped.stdout == "unchanged: \(id.prefix(8))\n", "\(piped)")
        let shown = try box.quire(["show", "Journal.quire", id, "--json"]).json()
        #expect(shown["revisions"] as? Int == 2)
        #expect(shown["mood"] as? Int == 1)
    }

    @Test func anEditToEmptyTextIsRefusedAsAnAddIs() throws {
        let box = try Sandbox()
        try box.makeVault()
        let id = try box.add("Something", ["--date", "2026-03-01"])
        let r = try box.quire(["edit", "Journal.quire", id, "-"], stdin: " \n")
        #expect(r.status == 1, "\(r)")
        #expect(r.stderr.hasPrefix("quire: error: the entry would be empty; nothing was changed\n"), "\(r)")
        #expect(try box.quire(["show", "Journal.quire", id, "--json"]).json()["text"] as? String == "Something")
    }
}
