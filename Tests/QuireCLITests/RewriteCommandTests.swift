import Foundation
@_spi(Format) import Quire
import QuireSystem
import Testing

@Suite struct RewriteCommandTests {
    @Test func mergeOutputIsNeverLeftPartial() throws {
        let box = try Sandbox()
        try box.bigVault()
        try FileManager.default.copyItem(atPath: box.path("Journal.quire"), toPath: box.path("copy.quire"))
        _ = try box.add("only in the copy", vault: "copy.quire")
        // Killed while writing OUT (as on a full disk, or by a kill).
        let killed = try box.quireKilledAfter(blocks: 100, ["merge", "Journal.quire", "copy.quire", "-o", "Out.quire"])
        #expect(killed.status != 0, "\(killed)")
        #expect(!FileManager.default.fileExists(atPath: box.path("Out.quire")), "a partial Out.quire was published")
        // Failing cleanly (EFBIG, like ENOSPC) leaves nothing either.
        let failed = try box.quireKilledAfter(blocks: 100, ["merge", "Journal.quire", "copy.quire", "-o", "Out.quire"], ignoreSignal: true)
        #expect(failed.status == 1, "\(failed)")
        #expect(failed.stderr.contains("nothing was written"), "\(failed)")
        #expect(!FileManager.default.fileExists(atPath: box.path("Out.quire")))
        // The next merge completes, and removes what the killed one left.
        let ok = try box.quire(["merge", "Journal.quire", "copy.quire", "-o", "Out.quire"])
        #expect(ok.status == 0, "\(ok)")
        #expect(try box.quire(["list", "Out.quire"]).stdout.contains("only in the copy"))
        #expect(!(try box.quire(["list", "Journal.quire"]).stdout.contains("only in the copy")))
        #expect(leftoverNames(box.dir) == [])
        #expect(try box.quire(["verify", "Out.quire"]).status == 0)
    }

    @Test func compactAndMergeThroughALinkKeepTheLinkAndSaySo() throws {
        let box = try Sandbox()
        try FileManager.default.createDirectory(atPath: box.path("real"), withIntermediateDirectories: true)
        try box.makeVault("real/Journal.quire")
        let id = try box.add("draft", vault: "real/Journal.quire")
        _ = try box.quire(["edit", "real/Journal.quire", id, "final"])
        try FileManager.default.createSymbolicLink(atPath: box.path("link.quire"), withDestinationPath: "real/Journal.quire")
        let compact = try box.quire(["compact", "link.quire"])
        #expect(compact.status == 0, "\(compact)")
        #expect(compact.stdout.contains("link.quire is a symbolic link to real/Journal.quire: that file was rewritten and the link kept"), "\(compact)")
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: box.path("link.quire")) == "real/Journal.quire")
        _ = try box.add("after the compaction", vault: "link.quire")
        #expect(try box.quire(["list", "real/Journal.quire"]).stdout.contains("after the compaction"))
        try FileManager.default.copyItem(atPath: box.path("real/Journal.quire"), toPath: box.path("copy.quire"))
        _ = try box.add("in the copy", vault: "copy.quire")
        let merge = try box.quire(["merge", "link.quire", "copy.quire"])
        #expect(merge.status == 0, "\(merge)")
        #expect(merge.stdout.contains("link.quire is a symbolic link to real/Journal.quire"), "\(merge)")
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: box.path("link.quire")) == "real/Journal.quire")
        #expect(try box.quire(["list", "real/Journal.quire"]).stdout.contains("in the copy"))
        #expect(leftoverNames(box.dir) == [] && leftoverNames(box.path("real")) == [])
    }

    @Test func aKilledCompactionsCopyIsRemovedByTheNextWrite() throws {
        let box = try Sandbox()
        try box.bigVault()
        let killed = try box.quireKilledAfter(blocks: 100, ["compact", "Journal.quire"])
        #expect(killed.status != 0, "\(killed)")
        #expect(leftoverNames(box.dir).count == 1, "the kill left nothing to clean: \(leftoverNames(box.dir)) \(killed)")
        _ = try box.add("next write")
        #expect(leftoverNames(box.dir) == [])
        #expect(try box.quire(["verify", "Journal.quire"]).status == 0)
    }
}
