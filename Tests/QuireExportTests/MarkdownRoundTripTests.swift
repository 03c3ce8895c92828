import Foundation
@_spi(Format) import Quire
@_spi(Format) import QuireExport
@_spi(Format) import QuireImport
import Testing

/// Issue 7's promise for the Markdown folder, end to end: export → the
/// Markdown importer → the same entries (ids, every body field, attachment
/// bytes) in a new vault.
@Suite struct MarkdownRoundTripTests {
    @Test func exportThenImportGivesTheSameEntries() throws {
        let dir = TemporaryDirectory()
        let vault = try makeSampleVault(dir)
        _ = try exportJournal(vault, format: .markdown, to: dir.file("md"))
        let copy = try makeVault(dir, name: "copy.quire", seed: "copy")
        let report = try importJournal(.markdown, from: dir.file("md"), into: copy)
        let before = try vault.entries()
        #expect(report.entriesAdded == before.count)
        #expect(report.skipped == [])
        let after = try copy.entries()
        #expect(after.map(\.id) == before.map(\.id))
        for (a, b) in zip(before, after) {
            var expected = a.body, got = b.body
            // Blob ids are keyed per vault: compare the attachments' bytes instead.
            #expect(got.attachments.count == expected.attachments.count)
            for (x, y) in zip(expected.attachments, got.attachments) {
                #expect(try Self.bytes(vault, x.blob) == Self.bytes(copy, y.blob))
            }
            expected.attachments = expected.attachments.map { var r = $0; r.blob = BlobID(unchecked: []); return r }
            got.attachments = got.attachments.map { var r = $0; r.blob = BlobID(unchecked: []); return r }
            #expect(got == expected, "\(a.id)")
        }
        // Importing the folder again adds nothing.
        let again = try importJournal(.markdown, from: dir.file("md"), into: copy)
        #expect(again.entriesAdded == 0 && again.entriesUpdated == 0 && again.entriesUnchanged == before.count)
    }

    static func bytes(_ vault: Vault, _ blob: BlobID) throws -> [UInt8] {
        let reader = try vault.openAttachment(blob)
        var out: [UInt8] = []
        for i in 0..<reader.chunkCount { out += try reader.chunk(i) }
        return out
    }
}
