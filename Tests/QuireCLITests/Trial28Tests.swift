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
}
