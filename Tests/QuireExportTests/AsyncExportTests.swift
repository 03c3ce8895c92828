import Foundation
@_spi(Format) import Quire
@_spi(Format) import QuireExport
import Testing

/// The `async` export (issue 13, need 5): its progress handler can stop it,
/// and a stopped export leaves nothing at its path nor beside it.
@Suite struct AsyncExportTests {
    /// Every format, stopped after the third entry: `.vault(.cancelled)`,
    /// nothing at the path, no temporary left; run again, it completes.
    @Test(arguments: ExportFormat.allCases) func progressCanCancelAnExport(_ format: ExportFormat) async throws {
        let dir = TemporaryDirectory()
        let vault = try makeVault(dir)
        for i in 0..<12 { try vault.add(EntryBody(created: utcMilliseconds(2024, 1, i + 1), timeZone: "UTC", text: "entry \(i)")) }
        let out = dir.file("out")
        let names = try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted()
        let seen = Counter()
        await #expect(throws: ExportError.vault(.cancelled)) {
            try await exportJournal(vault, format: format, to: out) { p in
                seen.set(p.done)
                return p.done >= 3 ? .cancel : .proceed
            }
        }
        #expect(seen.value >= 3 && seen.value < 12)
        #expect(!FileManager.default.fileExists(atPath: out))
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted() == names)
        let report = try await exportJournal(vault, format: format, to: out)
        #expect(report.entries == 12)
        #expect(FileManager.default.fileExists(atPath: out))
    }

    /// The last `done` a progress handler saw.
    final class Counter: @unchecked Sendable {  // guarded by `lock`
        private let lock = NSLock()
        private var done = 0
        func set(_ d: Int) { lock.withLock { done = max(done, d) } }
        var value: Int { lock.withLock { done } }
    }
}
