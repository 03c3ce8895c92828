import Foundation
import Quire
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
    /// process is killed (SIGXFSZ) by the first write past it, as a full
    /// disk or a kill at a random moment would stop it.
    func quireKilledAfter(blocks: Int, _ args: [String], ignoreSignal: Bool = false) throws -> RunResult {
        let quoted = args.map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ")
        return try shell("\(ignoreSignal ? "trap '' XFSZ; " : "")ulimit -f \(blocks); exec '\(binary)' \(quoted)")
    }
}
