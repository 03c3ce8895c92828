import Foundation
import Quire
import QuireImport
import Testing

// An app's view of import: this file imports the modules without `@_spi`,
// so only what an app can call compiles here (the helpers it uses are the
// target's own).

/// The import as an app calls it: `async` only, errors an alert can show.
@Suite struct AppImportTests {
    static let jrnlExport = importFixtures + "/jrnl/marph91__jimmy-test-data__myjournal.json"

    /// From the main actor, `try await` reaches the `async` form (the blocking
    /// one is not public): it imports the jrnl export.
    @MainActor @Test func asyncImportFromTheMainActor() async throws {
        let dir = TemporaryDirectory()
        let vault = try makeVault(dir)
        let report = try await importJournal(
            .jrnl, from: Self.jrnlExport, into: vault, options: ImportOptions(timeZone: "Europe/Berlin", journal: "myjournal"))
        #expect(report.entriesAdded > 0)
        #expect(try vault.liveEntryCount() == report.entriesAdded)
    }

    /// A cancelled task writes no entry and throws an error whose category is
    /// `.cancelled` and whose message says what was kept.
    @MainActor @Test func aCancelledImportSaysSo() async throws {
        let dir = TemporaryDirectory()
        let vault = try makeVault(dir)
        let task = Task { @MainActor in
            withUnsafeCurrentTask { $0?.cancel() }
            return try await importJournal(.jrnl, from: Self.jrnlExport, into: vault, options: ImportOptions(timeZone: "UTC"))
        }
        switch await task.result {
        case .success: Issue.record("a cancelled import completed")
        case .failure(let error):
            let e = try #require(error as? ImportError)
            #expect(e.category == .cancelled)
            #expect(e.code == "cancelled")
            #expect(
                e.localizedDescription
                    == "The import was cancelled. Entries imported before it are kept; importing the same export again adds only the rest.")
        }
        #expect(try vault.liveEntryCount() == 0)
    }

    /// A source that is not an export: nothing written, no vault category, a
    /// message naming the file (not the container path an app's picker
    /// gives: third iOS trial) and what to check.
    @Test func anUnreadableSourceSaysWhatToCheck() async throws {
        let dir = TemporaryDirectory()
        let vault = try makeVault(dir)
        let missing = dir.file("nothing-here.zip")
        do {
            _ = try await importJournal(.dayOne, from: missing, into: vault)
            Issue.record("a missing source imported")
        } catch {
            #expect(error.category == nil)
            #expect(error.code == "import_unreadable_source")
            #expect(
                error.localizedDescription
                    == "Nothing was imported: “nothing-here.zip” could not be read as this kind of export (no such file or folder). "
                    + "Check that you chose the export file or folder and its format.")
        }
        #expect(try vault.liveEntryCount() == 0)
    }

    /// A file of the wrong kind (a photo picked as a Day One export): the
    /// alert names the file, and its reason does not repeat the path the
    /// picker gave (fourth iOS trial: "cannot open /…/photo.jpg as a ZIP
    /// archive").
    @Test func aSourceOfTheWrongKindIsNamedByItsFileOnly() async throws {
        let dir = TemporaryDirectory()
        let vault = try makeVault(dir)
        let photo = dir.file("photo.jpg")
        try Data([0xFF, 0xD8, 0xFF, 0xE0] + Array(repeating: 7, count: 200)).write(to: URL(fileURLWithPath: photo))
        do {
            _ = try await importJournal(.dayOne, from: photo, into: vault)
            Issue.record("a photo imported")
        } catch {
            #expect(error.code == "import_unreadable_source")
            #expect(error.localizedDescription.hasPrefix("Nothing was imported: “photo.jpg” could not be read as this kind of export ("))
            #expect(!error.localizedDescription.contains(dir.path), "\(error.localizedDescription)")
            #expect(error.description.contains(photo))
        }
    }
}
