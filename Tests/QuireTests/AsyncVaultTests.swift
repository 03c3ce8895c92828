import Foundation
@_spi(Format) import Quire
import QuireSystem
import Testing

/// The `async` forms (issue 13, need 5): they return what the synchronous
/// forms return, run on the handle's own executor, and a cancelled task
/// stops the work with ``QuireError/cancelled`` and writes nothing.
@Suite struct AsyncVaultTests {
    /// The vault file's bytes.
    static func bytes(_ path: String) throws -> Data { try Data(contentsOf: URL(fileURLWithPath: path)) }

    /// The synchronous compaction, called from a task (an `async` context
    /// would pick the `async` form).
    static func compactNow(_ vault: Vault) throws(QuireError) -> CompactionReport { try vault.compact() }

    @Test func openCommitAndQueryAsync() async throws {
        let dir = TemporaryDirectory()
        let (vault, recovery) = try makeVault(dir)
        let id = try await vault.commit { tx in try tx.add(EntryBody(created: 1_800_000_000_000, timeZone: "UTC", text: "async")).entryID }
        #expect(try await vault.entry(id)?.body.text == "async")
        let reopened = try await Vault.open(at: dir.file("v.quire"), credential: .recoveryKey(recovery), options: fast)
        #expect(try await reopened.entries(matching: EntryQuery(limit: 10)).entries.map(\.id) == [id])
        #expect(try await reopened.search("async").entries.map(\.id) == [id])
        #expect(try await reopened.verify().issues.isEmpty)
        #expect(try await reopened.refresh().isEmpty)
    }

    /// Cancelled after the fifth record of twenty: the commit is abandoned,
    /// the file keeps its bytes, and the handle writes on afterwards.
    @Test func aCommitCancelledMidwayWritesNothing() async throws {
        let dir = TemporaryDirectory()
        let (vault, recovery) = try makeVault(dir)
        let before = try Self.bytes(dir.file("v.quire"))
        let task = Task { () async throws -> Int in
            try await vault.commit { tx in
                for i in 0..<20 {
                    try tx.add(EntryBody(created: Int64(i), text: "entry \(i)"))
                    if i == 4 { withUnsafeCurrentTask { $0?.cancel() } }
                }
                return 20
            }
        }
        let result = await task.result
        #expect(throws: QuireError.cancelled) { try result.get() }
        #expect(try Self.bytes(dir.file("v.quire")) == before)
        let reopened = try await Vault.open(at: dir.file("v.quire"), credential: .recoveryKey(recovery), options: fast)
        #expect(try await reopened.entries().isEmpty)
        #expect(try await vault.entries().isEmpty)
        let id = try await vault.commit { tx in try tx.add(EntryBody(created: 1, text: "after")).entryID }
        #expect(try await vault.entry(id)?.body.text == "after")
        #expect(QuireError.cancelled.code == "cancelled")
        #expect(QuireError.cancelled.description.contains("run it again"))
    }

    /// A task cancelled before the call does not start the work.
    @Test func aCancelledTaskDoesNotStart() async throws {
        let dir = TemporaryDirectory()
        let (vault, recovery) = try makeVault(dir)
        let refresh = await Task { () async throws(QuireError) -> VaultChangeSet in
            withUnsafeCurrentTask { $0?.cancel() }
            return try await vault.refresh()
        }.result
        #expect(throws: QuireError.cancelled) { try refresh.get() }
        let open = await Task { () async throws(QuireError) -> Vault in
            withUnsafeCurrentTask { $0?.cancel() }
            return try await Vault.open(at: dir.file("v.quire"), credential: .recoveryKey(recovery))
        }.result
        #expect(throws: QuireError.cancelled) { try open.get() }
    }

    /// A compaction cancelled at its first record: the temporary file is
    /// removed and the vault keeps its bytes; uncancelled, it compacts.
    @Test func aCancelledCompactionLeavesTheVaultAsItWas() async throws {
        let dir = TemporaryDirectory()
        let (vault, _) = try makeVault(dir)
        var ids: [EntryID] = []
        for i in 0..<10 { ids.append(try vault.add(EntryBody(created: Int64(i), text: "entry \(i)")).entryID) }
        for id in ids.prefix(3) { try vault.delete(id) }
        let before = try Self.bytes(dir.file("v.quire"))
        let names = try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted()
        let cancelled = await Task { () async throws(QuireError) -> CompactionReport in
            withUnsafeCurrentTask { $0?.cancel() }
            // The synchronous form checks too: the rewrite stops at its first record.
            return try Self.compactNow(vault)
        }.result
        #expect(throws: QuireError.sync(.cancelled)) { try cancelled.get() }
        #expect(try Self.bytes(dir.file("v.quire")) == before)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted() == names)
        try await vault.compact()
        #expect(try Self.bytes(dir.file("v.quire")) != before)
        #expect(try await vault.entries().count == 7)
    }

    /// `vault.merge(copyAt:)` takes in what a copy holds, through the handle.
    @Test func mergeACopyThroughTheHandle() async throws {
        let dir = TemporaryDirectory()
        let (vault, recovery) = try makeVault(dir)
        try FileManager.default.copyItem(atPath: dir.file("v.quire"), toPath: dir.file("copy.quire"))
        let other = try await Vault.open(at: dir.file("copy.quire"), credential: .recoveryKey(recovery), options: fast)
        let theirs = try other.add(EntryBody(created: 2, text: "written on the other copy"))
        let mine = try vault.add(EntryBody(created: 1, text: "written here"))
        let report = try await vault.merge(copyAt: dir.file("copy.quire"))
        #expect(report.changed)
        #expect(Set(try await vault.entries().map(\.id)) == [theirs.entryID, mine.entryID])
    }
}
