import Foundation
@_spi(Format) import Quire
import QuireSystem
import Testing

/// Queries and search follow what `refresh()` brings in from another
/// handle, by append and by a replaced (compacted) file (issue 13, needs 1–3).
@Suite struct QueryRefreshTests {
    @Test func aRefreshedAppendShowsInQueriesAndSearch() throws {
        let dir = TemporaryDirectory()
        let (writer, recovery, _, _) = try RefreshTests.setUp(dir)
        let reader = try RefreshTests.open(dir, recovery)
        // Build the reader's summaries and search index before the append.
        #expect(try reader.entries(matching: EntryQuery()).entries.count == 3)
        #expect(try reader.search("heron").entries.isEmpty)

        let added = try writer.add(EntryBody(created: 1_900_000_000_000, text: "A heron by the weir", tags: ["birds"]))
        #expect(try reader.refresh().ids(.added) == [added.entryID])

        let page = try reader.entries(matching: EntryQuery(order: .newestFirst, limit: 2))
        #expect(page.entries.map(\.id).first == added.entryID)
        #expect(try reader.search("her").entries.map(\.id) == [added.entryID])
        var tagged = EntryQuery()
        tagged.tags = ["Birds"]
        #expect(try reader.entries(matching: tagged).entries.map(\.id) == [added.entryID])

        _ = try writer.delete(added.entryID)
        #expect(try reader.refresh().ids(.deleted) == [added.entryID])
        #expect(try reader.search("heron").entries.isEmpty)
        #expect(try reader.entries(matching: EntryQuery()).entries.count == 3)
    }

    @Test func aCompactedFileKeepsQueriesAndSearchRight() throws {
        let dir = TemporaryDirectory()
        let (writer, recovery, ids, _) = try RefreshTests.setUp(dir)
        let reader = try RefreshTests.open(dir, recovery)
        #expect(try reader.search("entry").entries.count == 3)

        let edited = try writer.edit(ids[0], body: EntryBody(created: 1_700_000_000_000, text: "kingfisher"))
        _ = try writer.compact(now: ProcessStats.wallClockMilliseconds())
        let changes = try reader.refresh()
        #expect(changes.fileReplaced)
        #expect(changes.ids(.changed) == [edited.entryID])

        #expect(try reader.search("kingfisher").entries.map(\.id) == [ids[0]])
        #expect(try reader.search("entry").entries.count == 2)
        #expect(try reader.entries(matching: EntryQuery(order: .oldestFirst)).entries.map(\.id) == ids)
    }
}
