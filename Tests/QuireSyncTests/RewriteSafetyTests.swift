import Foundation
@_spi(Format) import Quire
import QuireSystem
import Testing

// Issue 15: rewrites through links, leftovers of killed writers, writers
// racing compactions, and a tail a sync tool is still writing.

/// The process id of a process that has exited (so no process has it, unless reused).
private func deadProcessID() throws -> Int32 {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: "/bin/true")
    try p.run()
    p.waitUntilExit()
    return p.processIdentifier
}

private func names(_ dir: TemporaryDirectory) -> Set<String> {
    Set((try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? [])
}

private func isSymbolicLink(_ path: String) -> Bool {
    ((try? FileManager.default.attributesOfItem(atPath: path)[.type]) as? FileAttributeType) == .typeSymbolicLink
}

private func inode(_ path: String) -> UInt64? {
    (try? FileManager.default.attributesOfItem(atPath: path)[.systemFileNumber] as? NSNumber)?.uint64Value
}

@Suite struct RewriteSafetyTests {
    @Test func compactionThroughASymbolicLinkRewritesTheFileItPointsTo() throws {
        let c = try TwoCopies("link-compact")
        let vault = try c.onLaptop(c.a)
        let id = try vault.add(EntryBody(created: t0 + 5, text: "draft")).entryID
        try vault.edit(id, body: EntryBody(created: t0 + 5, text: "final"))
        // A link in another folder, relative, as `ln -s ../Journal.quire` makes.
        try FileManager.default.createDirectory(atPath: c.dir.file("links"), withIntermediateDirectories: true)
        let link = c.dir.file("links/J.quire")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: "../Journal.quire")
        let before = inode(c.a)
        let report = try Compaction.compact(vaultAt: link, credential: .device(c.laptop.keyPair), now: t0 + 100, writeOptions: fast)
        #expect(report.revisionsAfter < report.revisionsBefore)
        #expect(isSymbolicLink(link), "the link was replaced by a file: the vault forked")
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link) == "../Journal.quire")
        #expect(inode(c.a) != before, "the file the link points to was not rewritten")
        #expect(try texts(c.a, .device(c.laptop.keyPair)) == ["final", "shared"])
        #expect(try texts(link, .device(c.laptop.keyPair)) == ["final", "shared"])
        #expect(names(c.dir).filter { $0.contains(".merge-") }.isEmpty)
        #expect(try FileManager.default.contentsOfDirectory(atPath: c.dir.file("links")) == ["J.quire"])
    }

    @Test func mergeThroughASymbolicLinkRewritesTheFileItPointsTo() throws {
        let c = try TwoCopies("link-merge")
        try c.onPhone(c.b).add(EntryBody(created: t0 + 6, text: "from the phone"))
        try c.onLaptop(c.a).add(EntryBody(created: t0 + 7, text: "from the laptop"))
        let link = c.dir.file("link.quire")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: c.a)
        let report = try VaultMerge.merge(vaultAt: link, copyAt: c.b, credential: .device(c.laptop.keyPair), options: fast)
        #expect(report.changed)
        #expect(isSymbolicLink(link))
        #expect(try texts(c.a, .device(c.laptop.keyPair)) == ["from the laptop", "from the phone", "shared"])
        // Writing through the link afterwards reaches the same file.
        try c.onLaptop(link).add(EntryBody(created: t0 + 8, text: "after"))
        #expect(try texts(c.a, .device(c.laptop.keyPair)).contains("after"))
    }

    @Test func aKilledWritersLeftoversAreRemovedByTheNextWriteAndNoOtherFile() throws {
        let c = try TwoCopies("leftovers")
        let copyBytes = bytes(c.a)
        let dead = try deadProcessID()
        let own = ProcessInfo.processInfo.processIdentifier
        // What killed writers leave: a rewrite's result (no owner once the
        // vault's lock is free), a new vault's or `merge -o`'s temporary file
        // of a process that is gone; and what must stay: a live process's
        // temporary file, another vault's rewrite, and a user's own files.
        let stale = [".Journal.quire.merge-0123456789ab", "Journal.quire.tmp-\(dead)-0123456789ab", "Out.quire.tmp-\(dead)-abcdefabcdef",
                     ".Out.quire.tmp-\(dead)-abcdefabcdef.merge-0123456789ab"]
        let kept = ["Journal.quire.tmp-\(own)-0123456789ab", ".Other.quire.merge-0123456789ab", "notes.tmp-\(dead)-0123456789ab", ".Journal.quire.merge-notes"]
        for name in stale + kept { try Data(copyBytes).write(to: URL(fileURLWithPath: c.dir.file(name))) }
        // notes.tmp-…: not a Quire file, whatever its name.
        try Data("my notes".utf8).write(to: URL(fileURLWithPath: c.dir.file("notes.tmp-\(dead)-0123456789ab")))
        try c.onLaptop(c.a).add(EntryBody(created: t0 + 9, text: "next write"))
        let left = names(c.dir)
        for name in stale { #expect(!left.contains(name), "\(name) was left") }
        for name in kept { #expect(left.contains(name), "\(name) was removed") }
    }
}
