import Foundation
@_spi(Format) @testable import QuireSync
import QuireSystem
import Testing

/// The lock a rewrite (merge, compaction) takes on the vault file.
@Suite struct RewriteLockTests {
    /// Another process's rewrites keep renaming a new file over the path
    /// while this one waits: each time it gets the old file's lock, sees
    /// the path names another file and waits again. It gave up after eight
    /// such rounds with `locked`, however much of its timeout was left (a
    /// compaction failed "locked by another Quire process" in
    /// `RaceRetryTests` under load); it now waits until its timeout.
    @Test func aRewriteWaitsThroughTenReplacementsOfTheFile() throws {
        let dir = TemporaryDirectory()
        let path = dir.file("Journal.quire")
        try Data("version 0".utf8).write(to: URL(fileURLWithPath: path))
        var held = try SystemFile(path: path, mode: .readWrite)
        try held.lockExclusive()
        let result = Locked<String>("")
        let waiter = Thread {
            do {
                let handle = try VaultMerge.lockForRewrite(path, timeoutSeconds: 20)
                handle.unlock()
                result.mutate { $0 = "locked" }
            } catch {
                result.mutate { $0 = "\(error)" }
            }
        }
        waiter.start()
        for round in 1...10 {
            Thread.sleep(forTimeInterval: 0.05)
            let next = dir.file("next-\(round)")
            try Data("version \(round)".utf8).write(to: URL(fileURLWithPath: next))
            let handle = try SystemFile(path: next, mode: .readWrite)
            try handle.lockExclusive()
            try FileSystem.rename(next, to: path)
            held.unlock()
            held = handle
        }
        Thread.sleep(forTimeInterval: 0.05)
        held.unlock()
        let deadline = Date().addingTimeInterval(20)
        while result.value.isEmpty && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        #expect(result.value == "locked")
    }
}
