import Foundation
import Testing

/// Third iOS trial, session 42: `quire export --tag food` said "exported 0
/// entries" while `quire list --tag food` showed the entry tagged `Food`:
/// the export's filter compared tags and journals exactly. It now folds
/// case as `list` does.
@Suite struct ExportFilterCaseTests {
    @Test func exportFoldsTagAndJournalCaseAsListDoes() throws {
        let box = try Sandbox()
        try box.makeVault()
        _ = try box.add("Lunch by the harbour.", ["--tag", "Food", "--journal", "Travel"])
        _ = try box.add("Minutes.", ["--tag", "work"])
        let list = try box.quire(["list", "Journal.quire", "--tag", "food", "--no-pager"])
        #expect(list.status == 0 && list.stdout.contains("Lunch"), "\(list)")

        let tag = try box.quire(["export", "Journal.quire", "--tag", "food", "-o", "f.json"])
        #expect(tag.status == 0, "\(tag)")
        #expect(tag.stdout.hasPrefix("exported 1 entry "), "\(tag)")
        #expect(try String(contentsOfFile: box.path("f.json"), encoding: .utf8).contains("Lunch by the harbour."))
        let journal = try box.quire(["export", "Journal.quire", "--journal", "travel", "-o", "j.json", "--json"])
        #expect(journal.status == 0, "\(journal)")
        #expect(try journal.json()["entries"] as? Int == 1, "\(journal)")
    }
}
