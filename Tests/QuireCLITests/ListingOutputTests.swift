import Foundation
import Testing

/// Issue 14: `list`, `search` and `show` print the same bytes as before
/// while making their dates, lines and JSON without ICU formatters or
/// JSONEncoder per entry.
@Suite struct ListingOutputTests {
    /// The nine real Day One exports of `Tests/Fixtures/import/dayone/`
    /// imported into one vault (ids come from the exports' UUIDs), listed
    /// and searched in New York time: the bytes are those the listing
    /// printed before it stopped using ICU formatters and JSONEncoder per
    /// entry (`Tests/Fixtures/listing/`, written by the quire of `01c85c9`).
    @Test func aListingPrintsWhatItPrintedBefore() throws {
        let box = try Sandbox()
        try box.makeVault()
        let exports = try FileManager.default.contentsOfDirectory(atPath: repositoryRoot + "/Tests/Fixtures/import/dayone")
            .filter { $0.hasSuffix(".json") }.sorted()
        #expect(exports.count == 9)
        for name in exports {
            let r = try box.quire(["import", "dayone", repositoryRoot + "/Tests/Fixtures/import/dayone/" + name, "Journal.quire"])
            #expect(r.status == 0, "\(r)")
        }
        let zone = ["TZ": "America/New_York"]
        for (file, args) in [
            ("dayone-list.txt", ["list", "Journal.quire"]),
            ("dayone-list-newest-40.json", ["list", "Journal.quire", "-n", "40", "--json"]),
            ("dayone-search-garden.txt", ["search", "Journal.quire", "garden"]),
            ("dayone-search-pizza-5.json", ["search", "Journal.quire", "pizza", "--json", "-n", "5"]),
        ] {
            let expected = try String(contentsOfFile: repositoryRoot + "/Tests/Fixtures/listing/" + file, encoding: .utf8)
            let r = try box.quire(args, env: zone)
            #expect(r.status == 0 && r.stderr == "", "\(r)")
            #expect(r.stdout == expected, "\(args.joined(separator: " ")) differs from \(file)")
        }
    }
}
