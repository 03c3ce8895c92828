@_spi(Format) import Quire
import Testing

/// The body-free ways through a vault (import and export use them so their
/// memory does not grow with the journal's text): the same entries, in the
/// same order, with the same winners and conflicts, as `entries()`.
@Suite struct EntryCatalogTests {
    /// A vault with 30 entries, edits, deletions and two tags.
    static func sample(_ dir: TemporaryDirectory) throws -> Vault {
        let (vault, _) = try makeVault(dir)
        var ids: [EntryID] = []
        for i in 0..<30 {
            let body = EntryBody(created: 1_700_000_000_000 + Int64((i * 7919) % 30) * 60_000, text: "entry \(i)", tags: [i % 2 == 0 ? "even" : "odd"])
            ids.append(try vault.add(body).entryID)
        }
        for i in stride(from: 0, to: 30, by: 5) { try vault.edit(ids[i], body: EntryBody(created: 1_600_000_000_000 + Int64(i), text: "edited \(i)", tags: ["even"])) }
        for i in stride(from: 1, to: 30, by: 7) { try vault.delete(ids[i]) }
        return vault
    }

    static func describe(_ s: EntrySnapshot) -> String {
        "\(s.id) \(s.body.createdMilliseconds) \(s.body.text) \(s.body.tags) \(s.conflictingHeads) \(s.revisionCount) \(s.isVerified)"
    }

    @Test func catalogMatchesEntries() throws {
        let dir = TemporaryDirectory()
        let vault = try Self.sample(dir)
        let all = try vault.entries()
        #expect(all.count == 30 - 5)
        let catalog = try vault.entryCatalog { _ in true }
        #expect(catalog.map(Self.describe) == all.map(Self.describe))
        let even = try vault.entryCatalog { $0.tags.contains("even") }
        #expect(even.map(Self.describe) == all.filter { $0.body.tags.contains("even") }.map(Self.describe))
        #expect(even.count == all.filter { $0.body.tags.contains("even") }.count)
        #expect(catalog.readError == nil)
    }

    @Test func anIndexWithoutBodiesReadsTheSame() throws {
        let dir = TemporaryDirectory()
        let vault = try Self.sample(dir)
        let with = try vault.entries().map(Self.describe)
        let lean = try Vault.open(
            at: dir.file("v.quire"), credential: .recoveryKey(testRecoveryKey("vault")), options: fast, retainsEntryBodies: false)
        #expect(!lean.retainsEntryBodies)
        #expect(try lean.entries().map(Self.describe) == with)
        // Writing while bodies are not kept: the new revision reads back.
        let added = try lean.add(EntryBody(created: 1, text: "added without bodies"))
        #expect(try lean.entry(added.entryID)?.body.text == "added without bodies")
        try vault.reload()
        #expect(try vault.entries().count == with.count + 1)
    }
}

/// A catalog a caller holds while the vault reloads a file another process
/// compacted (issue 13): every row is still the entry it names.
@Suite struct EntryCatalogReloadTests {
    @Test func aCatalogKeptAcrossAReloadOntoACompactedFileReadsItsOwnEntries() throws {
        let dir = TemporaryDirectory()
        let (vault, recovery) = try makeVault(dir)
        var texts: [EntryID: String] = [:]
        for i in 0..<50 {
            let r = try vault.add(EntryBody(created: 1_700_000_000_000 + Int64(i) * 60_000, text: "entry \(i)"))
            texts[r.entryID] = "entry \(i)"
        }
        let catalog = try vault.entryCatalog { _ in true }
        #expect(catalog.count == 50)
        // Another process deletes, compacts (frames renumbered), then adds
        // more than there were, so that every old frame index still exists.
        let other = try Vault.open(at: dir.file("v.quire"), credential: .recoveryKey(recovery), options: fast)
        for id in catalog.ids.prefix(10) { try other.delete(id) }
        _ = try other.compact()
        for i in 0..<80 { try other.add(EntryBody(created: 1_800_000_000_000 + Int64(i), text: "later \(i)")) }
        try vault.reload()
        var wrong = 0
        for (position, id) in catalog.ids.enumerated() {
            let row = catalog[position]
            if row.id != id || row.body.text != texts[id] { wrong += 1 }
        }
        if let error = catalog.readError {
            // A catalog that cannot stay correct says so with a typed error.
            #expect(error.code == "catalog_stale")
        } else {
            #expect(wrong == 0)
        }
    }
}
