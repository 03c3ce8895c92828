import Foundation
import Testing

/// When the system refuses to lock key memory (`mlock`, RLIMIT_MEMLOCK at
/// 0), quire says so once instead of going on silently (issue 15).
@Suite struct KeyMemoryLockTests {
    /// `prlimit --memlock=0:0 quire args…`; as root, CAP_IPC_LOCK (which
    /// ignores the limit) is dropped first with setpriv.
    static func withoutLockedMemory(_ box: Sandbox, _ args: [String]) throws -> RunResult {
        var command = ["/usr/bin/prlimit", "--memlock=0:0", box.binary] + args
        if getuid() == 0 { command = ["/usr/bin/setpriv", "--bounding-set", "-ipc_lock", "--inh-caps", "-ipc_lock"] + command }
        return try box.run(command[0], Array(command.dropFirst()), stdin: nil, env: [:])
    }

    static let warning = "quire: warning: the system refused to lock key memory (RLIMIT_MEMLOCK); keys may be swapped to disk"

    static let toolsPresent =
        FileManager.default.isExecutableFile(atPath: "/usr/bin/prlimit")
        && (getuid() != 0 || FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv"))

    @Test(.enabled(if: toolsPresent, "needs prlimit (and setpriv as root), from util-linux"))
    func aRefusedMemoryLockIsSaidOnce() throws {
        let box = try Sandbox()
        try box.makeVault()
        _ = try box.add("locked or not")
        let refused = try Self.withoutLockedMemory(box, ["list", "Journal.quire"])
        #expect(refused.status == 0, "\(refused)")
        #expect(refused.stdout.contains("locked or not"), "\(refused)")
        #expect(refused.stderr.components(separatedBy: Self.warning).count - 1 == 1, "\(refused)")
        let written = try Self.withoutLockedMemory(box, ["add", "Journal.quire", "second"])
        #expect(written.status == 0, "\(written)")
        #expect(written.stderr.components(separatedBy: Self.warning).count - 1 == 1, "\(written)")
        let normal = try box.quire(["list", "Journal.quire"])
        #expect(normal.status == 0, "\(normal)")
        #expect(!normal.stderr.contains("lock key memory"), "\(normal)")
    }
}
