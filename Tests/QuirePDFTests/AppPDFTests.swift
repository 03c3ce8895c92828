import Foundation
import Quire
import QuireExport
import QuirePDF
import Testing

// An app's view of the PDF book: this file imports the modules without
// `@_spi`, so only what an app can call compiles here.

/// The PDF book as an app calls it: `async`, off the caller's actor.
@Suite struct AppPDFTests {
    /// A two-entry vault.
    static func vault(_ dir: TemporaryDirectory) throws -> Vault {
        try makeVault(dir, name: "Book", entries: [("2024-01-02", "One"), ("2024-01-03", "Two")], zone: "UTC", offset: 0)
    }

    /// `exportPDFBook` from the main actor, with and without progress: the
    /// report counts the entries; the handler sees `done` reach 2.
    @MainActor @Test func asyncExportPDFBook() async throws {
        let dir = TemporaryDirectory()
        let vault = try Self.vault(dir)
        let report = try await exportPDFBook(vault, to: dir.file("a.pdf"), locale: "en_GB")
        #expect(report.entries == 2)
        #expect(report.bytes > 0)
        let seen = Seen()
        let again = try await exportPDFBook(vault, to: dir.file("b.pdf")) { p in
            seen.set(p.done)
            return .proceed
        }
        #expect(again.entries == 2)
        #expect(seen.value == 2)
    }

    /// A cancelled task's book writes nothing and says so. (On the old code,
    /// with only a blocking `exportPDFBook`, `try await` did not compile.)
    @MainActor @Test func cancelledPDFBookWritesNothing() async throws {
        let dir = TemporaryDirectory()
        let vault = try Self.vault(dir)
        let task = Task { @MainActor in
            withUnsafeCurrentTask { $0?.cancel() }
            return try await exportPDFBook(vault, to: dir.file("c.pdf"))
        }
        switch await task.result {
        case .success: Issue.record("a cancelled book completed")
        case .failure(let error):
            #expect((error as? ExportError)?.category == .cancelled)
            #expect(error.localizedDescription == "The export was cancelled; nothing was saved.")
        }
        #expect(!FileManager.default.fileExists(atPath: dir.file("c.pdf")))
    }

    /// The highest `done` a progress handler saw.
    final class Seen: @unchecked Sendable {  // guarded by `lock`
        private let lock = NSLock()
        private var done = 0
        func set(_ d: Int) { lock.withLock { done = max(done, d) } }
        var value: Int { lock.withLock { done } }
    }
}
