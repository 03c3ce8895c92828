import Foundation
import Testing
@_spi(Format) import Quire
import QuireSystem

/// A valid vault followed by a large hole of zeros (a sparse file, or a
/// file system's zero fill after a crash) opens quickly: zero runs are
/// skipped a word at a time (Spec/format.md §10.2).
@Suite struct SparseTailTests {
    @Test func largeZeroTailOpensQuickly() throws {
        let dir = TemporaryDirectory()
        let (vault, recovery) = try makeVault(dir)
        try vault.add(EntryBody(created: 1, text: "before the hole"))
        let path = dir.file("v.quire")
        let size = try FileSystem.size(path)
        let handle = FileHandle(forWritingAtPath: path)!
        handle.truncateFile(atOffset: size + (256 << 20))  // 256 MiB of zeros
        handle.closeFile()
        // (A byte-by-byte scan of this hole took minutes in a debug build;
        // with zero runs skipped the test takes about a second. No timing is
        // asserted: the suite's own duration shows a regression.)
        let opened = try Vault.open(at: path, credential: .recoveryKey(recovery), writable: false)
        #expect(try opened.entries().map(\.body.text) == ["before the hole"])
        #expect(opened.verify().issues.map(\.code) == ["torn_tail"])
    }
}
