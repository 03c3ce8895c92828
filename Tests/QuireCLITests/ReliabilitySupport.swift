import Foundation
@_spi(Format) import Quire
import QuireSystem
import Testing

/// Names in `dir` that a writer made and should have removed.
func leftoverNames(_ dir: String) -> [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []).filter { $0.contains(".tmp-") || $0.contains(".merge-") }.sorted()
}

/// True when strace can trace here (installed by `make deps`; ptrace allowed).
let straceWorks: Bool = {
    guard FileManager.default.isExecutableFile(atPath: "/usr/bin/strace") else { return false }
    let p = Process()
    p.executableURL = URL(fileURLWithPath: "/usr/bin/strace")
    p.arguments = ["-o", "/dev/null", "/bin/true"]
    p.standardOutput = FileHandle.nullDevice
    p.standardError = FileHandle.nullDevice
    guard (try? p.run()) != nil else { return false }
    p.waitUntilExit()
    return p.terminationStatus == 0
}()

extension Sandbox {
    /// A vault holding a 200 KB attachment, so that its copies are larger than the limits below.
    func bigVault(_ name: String = "Journal.quire") throws {
        try makeVault(name)
        var photo = [UInt8](repeating: 0, count: 200_000)
        var x: UInt32 = 12345
        for i in photo.indices { x = x &* 1_103_515_245 &+ 12345; photo[i] = UInt8(truncatingIfNeeded: x >> 16) }
        try Data(photo).write(to: URL(fileURLWithPath: path("photo.bin")))
        _ = try add("with a photo", ["--attach", "photo.bin"], vault: name)
    }

    /// Runs `quire args…` with a file-size limit of `blocks` × 512 bytes: the
    /// process is killed (SIGXFSZ, default action restored and unblocked: a
    /// test runner may ignore or block it) by the first write past it, as a kill at a random moment
    /// would stop it; with `ignoreSignal` the write fails with EFBIG instead,
    /// as on a full disk.
    func quireKilledAfter(blocks: Int, _ args: [String], ignoreSignal: Bool = false) throws -> RunResult {
        let script = """
            import os, resource, signal, sys
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN if sys.argv[1] == "ignore" else signal.SIG_DFL)
            signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGXFSZ])
            resource.setrlimit(resource.RLIMIT_FSIZE, (int(sys.argv[2]) * 512, resource.RLIM_INFINITY))
            os.execv(sys.argv[3], sys.argv[3:])
            """
        return try run("/usr/bin/python3", ["-c", script, ignoreSignal ? "ignore" : "default", "\(blocks)", binary] + args, stdin: nil, env: [:])
    }
}
