import Foundation
import Testing

/// Warnings raised during a write reach the user (issue 15).
@Suite struct WriteWarningTests {
    @Test(.enabled(if: straceWorks)) func warningsRaisedDuringAWriteReachTheUser() throws {
        let box = try Sandbox()
        try box.makeVault()
        _ = try box.add("x")
        // Every rename fails: the key change commits (appends need none), but
        // this device cannot save its memory of the new keyrings.
        let r = try box.run("/usr/bin/strace", ["-f", "-o", "/dev/null", "-e", "trace=rename,renameat,renameat2", "-e", "inject=rename,renameat,renameat2:error=ENOSPC", box.binary, "keys", "rotate", "Journal.quire"], stdin: nil, env: [:])
        #expect(r.status == 0, "\(r)")
        #expect(r.stderr.contains("quire: warning: this device could not update its memory of the vault ("), "\(r)")
        #expect(r.stderr.contains("whatever this command wrote is saved in the vault"), "\(r)")
        // Reading on a full key store still works, with the same warning.
        let list = try box.run("/usr/bin/strace", ["-f", "-o", "/dev/null", "-e", "trace=rename,renameat,renameat2", "-e", "inject=rename,renameat,renameat2:error=ENOSPC", box.binary, "list", "Journal.quire"], stdin: nil, env: [:])
        #expect(list.status == 0, "\(list)")
        #expect(list.stdout.contains("  x\n"), "\(list)")
        // A read wrote nothing: the warning must not claim a key change was saved.
        #expect(!list.stderr.contains("key change"), "\(list)")
        #expect(list.stderr.contains("quire: warning: this device could not update its memory of the vault ("), "\(list)")
    }
}
