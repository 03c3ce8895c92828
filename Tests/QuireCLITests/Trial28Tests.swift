import Foundation
@_spi(Format) import Quire
import QuireSystem
import Testing

/// The CLI findings the 28th trial left open (`/work/notes/s28/trial-28.md`,
/// T28-3 to T28-5 and its observations): each test asserts the right value
/// and failed before its fix.
@Suite struct Trial28Tests {
    func bytes(_ box: Sandbox, _ name: String) throws -> [UInt8] {
        Array(try Data(contentsOf: URL(fileURLWithPath: box.path(name))))
    }

    /// T28-4: `stats --json` had no `unreadRecords`, so its counts did not
    /// say, in JSON, that they leave out a record that could not be read.
    @Test func statsJSONCountsTheRecordsItCouldNotRead() throws {
        let box = try Sandbox()
        try UnreadRecordCommandTests.damagedVault(box)
        let stats = try box.quire(["stats", "Journal.quire", "--json"])
        #expect(stats.status == 0, "\(stats)")
        #expect(stats.stderr.contains("1 record in Journal.quire could not be read"), "\(stats)")
        let json = try stats.json()
        #expect(json["entries"] as? Int == 2)
        #expect(UnreadRecordCommandTests.unread(json).count == 1, "\(stats)")
        #expect(UnreadRecordCommandTests.unread(json).codes == ["authentication_failed"], "\(stats)")
        // An intact vault counts zero.
        let clean = try Sandbox()
        try clean.makeVault()
        _ = try clean.add("fine")
        let ok = try clean.quire(["stats", "Journal.quire", "--json"])
        #expect(ok.stderr == "", "\(ok)")
        #expect(UnreadRecordCommandTests.unread(try ok.json()).count == 0, "\(ok)")
    }

    /// T28-5: a damaged stored previous head (a commit's body bytes
    /// 32..<64, repaired from the commit before it) was reported as "one
    /// flipped bit in its header", where nothing is wrong.
    @Test func aRepairedPreviousHeadIsSaidAsSuch() throws {
        let box = try Sandbox()
        try box.makeVault()
        for i in 1...3 { _ = try box.add("entry \(i)") }
        let commits = try VaultScanner.scan(path: box.path("Journal.quire")).frames.filter { $0.header.kind == .commit }
        let target = commits[commits.count - 2]
        var raw = try bytes(box, "Journal.quire")
        raw[Int(target.bodyOffset) + 40] ^= 0x01  // the stored previous head: body[32..<64]
        try Data(raw).write(to: URL(fileURLWithPath: box.path("Journal.quire")))
        let verify = try box.quire(["verify", "Journal.quire"])
        #expect(verify.status == 0, "\(verify)")
        #expect(!verify.stdout.contains("in its header"), "\(verify)")
        #expect(verify.stdout.contains("is a commit whose stored previous head was damaged and was repaired"), "\(verify)")
        let json = try box.quire(["verify", "Journal.quire", "--json"]).json()
        let issues = try #require(json["issues"] as? [[String: Any]])
        #expect(issues.compactMap { $0["code"] as? String } == ["frame_repaired"], "\(json)")
        #expect(issues.first?["offset"] as? Int == Int(target.location.offset), "\(json)")
    }

    /// `export -o x.json` said "0 attachments" for entries that have one:
    /// a JSON export describes attachments and leaves their bytes out
    /// (`Spec/export-json.md §4.4`); the line now says so.
    @Test func aJSONExportSaysItDescribesAttachmentsWithoutTheirBytes() throws {
        let box = try Sandbox()
        try box.makeVault()
        try Data([0xff, 0xd8, 0xff, 0xe0]).write(to: URL(fileURLWithPath: box.path("p.jpg")))
        _ = try box.add("With a photo", ["--attach", "p.jpg"])
        _ = try box.add("Plain")
        let json = try box.quire(["export", "Journal.quire", "-o", "J.json"])
        #expect(json.status == 0, "\(json)")
        #expect(!json.stdout.contains("0 attachments"), "\(json)")
        #expect(json.stdout.hasPrefix("exported 2 entries to J.json ("), "\(json)")
        #expect(
            json.stdout.contains(
                "; 1 attachment is described there without its bytes, which a JSON export leaves out (the md, html, epub and dayone exports hold them)\n"
            ), "\(json)")
        // Formats that hold the bytes count them as before.
        let html = try box.quire(["export", "Journal.quire", "-o", "J.html"])
        #expect(html.stdout.hasPrefix("exported 2 entries and 1 attachment to J.html ("), "\(html)")
        // No attachment: nothing to explain.
        let plain = try box.quire(["export", "Journal.quire", "-o", "P.json", "--tag", "none"])
        #expect(plain.stdout.hasPrefix("exported 0 entries and 0 attachments to P.json ("), "\(plain)")
    }

    /// Compaction said "record N at offset B" where `verify` says "frame N
    /// at byte B" for the same record: one wording now, verify's.
    @Test func compactionNamesARecordAsVerifyDoes() throws {
        let box = try Sandbox()
        try UnreadRecordCommandTests.damagedVault(box)
        let revisions = try VaultScanner.scan(path: box.path("Journal.quire")).frames.filter { $0.header.kind == .entryRevision }
        let last = try #require(revisions.last)
        let place = "frame \(last.location.index) at byte \(last.location.offset)"
        let verify = try box.quire(["verify", "Journal.quire"])
        #expect(verify.stdout.contains("lost: \(place): "), "\(verify)")
        let compact = try box.quire(["compact", "Journal.quire"])
        #expect(compact.status == 1, "\(compact)")
        #expect(compact.stderr.contains("(first: \(place) "), "\(compact)")
        #expect(!compact.stderr.contains("at offset"), "\(compact)")
    }
}
