import Foundation
import Testing

/// Issue 13 (data loss), the re-trial's `forknw` case on the command line:
/// a sync tool renames over the vault a copy forked from an older state
/// and written to since on another device, whose greatest clock passes
/// §7's clock test. A fresh command must suspect a rollback from device
/// memory's `newest` entries (`Spec/keys.md §7`, test 3) and refuse writes.
@Suite struct ForkMemoryCommandTests {
    /// Five commits, a copy taken, three more commits; the phone writes to
    /// the copy (a newer clock) and the copy is renamed over the path. The
    /// file as it was is kept as `newer.quire`. Returns the id of an entry
    /// both hold.
    static func forknw(_ box: Sandbox) throws -> String {
        try box.makeVault()
        let phone = try box.enrollPhone()
        var first: [String] = []
        for i in 0..<5 { first.append(try box.add("first \(i)")) }
        try FileManager.default.copyItem(atPath: box.path("Journal.quire"), toPath: box.path("copy.quire"))
        for i in 0..<3 { _ = try box.add("second \(i)") }
        let added = try box.quire(["add", "copy.quire", "on the phone's history"], env: phone)
        #expect(added.status == 0, "\(added)")
        try FileManager.default.copyItem(atPath: box.path("Journal.quire"), toPath: box.path("newer.quire"))
        #expect(rename(box.path("copy.quire"), box.path("Journal.quire")) == 0)
        return first[0]
    }

    @Test func anotherHistoryIsSuspectedAndWritesAreRefused() throws {
        let box = try Sandbox()
        let kept = try Self.forknw(box)
        let list = try box.quire(["list", "Journal.quire"])
        #expect(list.status == 0, "\(list)")
        #expect(list.stderr.contains("looks older than the copy this device last saw: another history"), "\(list)")
        #expect(list.stderr.contains("3 of the 8 newest entries"), "\(list)")
        let json = try box.quire(["list", "Journal.quire", "--json"])
        #expect(UnreadRecordCommandTests.unread(try json.json()).codes.contains("rollback_suspected"), "\(json)")
        let show = try box.quire(["show", "Journal.quire", kept])
        #expect(show.status == 0, "\(show)")
        #expect(show.stderr.contains("another history"), "\(show)")
        let refused = try box.quire(["add", "Journal.quire", "after", "--json"])
        #expect(refused.status == 1, "\(refused)")
        let error = try #require(refused.json()["error"] as? [String: Any])
        #expect(error["code"] as? String == "rolled_back")
        // Merging the newer copy back lifts it.
        let merge = try box.quire(["merge", "Journal.quire", "newer.quire"])
        #expect(merge.status == 0, "\(merge)")
        let again = try box.quire(["list", "Journal.quire"])
        #expect(again.stderr == "", "\(again)")
        #expect(again.stdout.contains("second 2") && again.stdout.contains("phone's history"), "\(again)")
        let written = try box.quire(["add", "Journal.quire", "after the merge"])
        #expect(written.status == 0 && written.stderr == "", "\(written)")
    }

    @Test func acceptRollbackClearsIt() throws {
        let box = try Sandbox()
        _ = try Self.forknw(box)
        let accept = try box.quire(["keys", "accept-rollback", "Journal.quire"])
        #expect(accept.status == 0, "\(accept)")
        let list = try box.quire(["list", "Journal.quire"])
        #expect(list.stderr == "", "\(list)")
        #expect(!list.stdout.contains("second 2"), "\(list)")
        let written = try box.quire(["add", "Journal.quire", "after accepting"])
        #expect(written.status == 0 && written.stderr == "", "\(written)")
    }
}
