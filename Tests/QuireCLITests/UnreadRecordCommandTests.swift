import Foundation
@_spi(Format) import Quire
import QuireSystem
import Testing

/// Issue 15: nothing lost, nothing silent, nothing left on disk — the CLI side.
@Suite struct UnreadRecordCommandTests {
    /// A vault of three entries whose last entry's sealed body has one byte
    /// damaged (as `printf '\0' | dd … seek=…` does), 40 bytes into its
    /// body: in its ciphertext, which only its tag covers (format 2; a
    /// byte of the tag itself is covered by the commit's head too).
    static func damagedVault(_ box: Sandbox) throws {
        try box.makeVault()
        for i in 1...3 { _ = try box.add("entry \(i)") }
        let revisions = try VaultScanner.scan(path: box.path("Journal.quire")).frames.filter { $0.header.kind == .entryRevision }
        let last = try #require(revisions.last)
        var bytes = try Data(contentsOf: URL(fileURLWithPath: box.path("Journal.quire")))
        bytes[Int(last.bodyOffset) + 40] ^= 0xff
        try bytes.write(to: URL(fileURLWithPath: box.path("Journal.quire")))
    }

    static func unread(_ json: [String: Any]) -> (count: Int?, codes: [String]) {
        let u = json["unreadRecords"] as? [String: Any]
        return (u?["count"] as? Int, (u?["records"] as? [[String: Any]])?.compactMap { $0["code"] as? String } ?? [])
    }

    @Test func listSearchShowSayHowManyRecordsTheyCouldNotReadAndWhere() throws {
        let box = try Sandbox()
        try Self.damagedVault(box)
        let list = try box.quire(["list", "Journal.quire"])
        #expect(list.status == 0)
        #expect(list.stdout.split(separator: "\n").count == 2)
        #expect(list.stderr.hasPrefix("quire: warning: 1 record in Journal.quire could not be read (frame "), "\(list)")
        #expect(list.stderr.contains(": authentication_failed); what is shown leaves them out. Run 'quire verify Journal.quire'"), "\(list)")
        let listJSON = try box.quire(["list", "Journal.quire", "--json"]).json()
        #expect(listJSON["count"] as? Int == 2)
        #expect(Self.unread(listJSON).count == 1)
        #expect(Self.unread(listJSON).codes == ["authentication_failed"])
        let search = try box.quire(["search", "Journal.quire", "entry", "--json"])
        #expect(search.stderr.contains("1 record in Journal.quire could not be read"), "\(search)")
        #expect(Self.unread(try search.json()).count == 1)
        let id = try #require(list.stdout.split(separator: " ").first.map(String.init))
        let show = try box.quire(["show", "Journal.quire", id, "--json"])
        #expect(show.status == 0)
        #expect(show.stderr.contains("1 record in Journal.quire could not be read"), "\(show)")
        #expect(Self.unread(try show.json()).count == 1)
        // An intact vault says nothing and counts zero.
        let clean = try Sandbox()
        try clean.makeVault()
        _ = try clean.add("fine")
        let ok = try clean.quire(["list", "Journal.quire", "--json"])
        #expect(ok.stderr == "")
        #expect(Self.unread(try ok.json()).count == 0)
    }

    @Test func exportRefusesUnlessAPartialExportIsAskedFor() throws {
        let box = try Sandbox()
        try Self.damagedVault(box)
        let refused = try box.quire(["export", "Journal.quire", "--format", "json", "-o", "out.json"])
        #expect(refused.status == 1, "\(refused)")
        #expect(refused.stdout == "")
        #expect(refused.stderr.contains("quire: error: 1 record in Journal.quire could not be read"), "\(refused)")
        #expect(refused.stderr.contains("nothing was exported"), "\(refused)")
        #expect(refused.stderr.contains("--partial"), "\(refused)")
        #expect(!FileManager.default.fileExists(atPath: box.path("out.json")))
        #expect(try FileManager.default.contentsOfDirectory(atPath: box.dir).filter { $0.contains("out.json") } == [])
        let refusedJSON = try box.quire(["export", "Journal.quire", "--format", "md", "-o", "out", "--json"])
        #expect(refusedJSON.status == 1)
        #expect((try refusedJSON.json()["error"] as? [String: Any])?["code"] as? String == "records_unreadable")
        #expect(!FileManager.default.fileExists(atPath: box.path("out")))

        let partial = try box.quire(["export", "Journal.quire", "--format", "json", "-o", "out.json", "--partial"])
        #expect(partial.status == 0, "\(partial)")
        #expect(partial.stdout.contains("exported 2 entries"), "\(partial)")
        #expect(partial.stdout.contains("a PARTIAL export (--partial)"), "\(partial)")
        #expect(partial.stderr.contains("quire: warning: partial export: 1 record in Journal.quire could not be read"), "\(partial)")
        let partialJSON = try box.quire(["export", "Journal.quire", "--format", "json", "-o", "out2.json", "--partial", "--json"]).json()
        #expect(partialJSON["partial"] as? Bool == true)
        #expect(partialJSON["entries"] as? Int == 2)
        #expect(Self.unread(partialJSON).count == 1)
    }

    @Test func aDeletedMiddleEntryIsSaidByList() throws {
        let box = try Sandbox()
        try box.makeVault()
        for i in 1...3 { _ = try box.add("entry \(i)") }
        // Cut the second entry's revision frame (its commit stays, now empty).
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: box.path("Journal.quire"))))
        let revisions = try VaultScanner.scan(path: box.path("Journal.quire")).frames.filter { $0.header.kind == .entryRevision }
            .map { (Int($0.location.offset), Int($0.end)) }
        #expect(revisions.count == 3)
        let (start, end) = revisions[1]
        try Data(bytes[..<start] + bytes[end...]).write(to: URL(fileURLWithPath: box.path("Journal.quire")))
        let list = try box.quire(["list", "Journal.quire"])
        #expect(list.stdout.split(separator: "\n").count == 2)
        // Altered after the next commit was written: tampered; the commit
        // before it, attested by a member, stays verified (format.md §9.3).
        #expect(list.stderr.contains("1 record in Journal.quire could not be read (frame "), "\(list)")
        #expect(!list.stderr.contains("commit_orphaned"), "\(list)")
        #expect(list.stderr.contains(": commit_tampered)"), "\(list)")
    }
}
