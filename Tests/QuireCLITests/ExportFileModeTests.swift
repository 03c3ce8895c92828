import Foundation
@_spi(Format) import Quire
import QuireSystem
import Testing

@Suite struct ExportFileModeTests {
    /// Every file the export creates beside OUT is created 0600: none is
    /// readable by others for a moment (libzip's own temporary file included).
    @Test(.enabled(if: straceWorks)) func anEPUBIsCreatedPrivateFromTheStart() throws {
        let box = try Sandbox()
        try box.makeVault()
        _ = try box.add("private text")
        let trace = box.path("trace.txt")
        let r = try box.run(
            "/usr/bin/strace", ["-f", "-o", trace, "-e", "trace=open,openat,creat", box.binary, "export", "Journal.quire", "--format", "epub", "-o", "out.epub"],
            stdin: nil, env: [:])
        #expect(r.status == 0, "\(r)")
        let created = try String(contentsOfFile: trace, encoding: .utf8).split(separator: "\n")
            .filter { $0.contains("O_CREAT") && $0.contains("out.epub") }
        #expect(created.count >= 1, "\(created)")
        for line in created {
            // The mode argument: `…, 0600) = 4` (or libzip's `0100600`, the target's st_mode).
            let mode = line.split(separator: ",").last?.split(separator: ")").first?.trimmingCharacters(in: .whitespaces) ?? ""
            #expect(mode.hasSuffix("600"), "created with mode \(mode): \(line)")
        }
    }
}
