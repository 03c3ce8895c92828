import Foundation
@_spi(Format) @_spi(Testing) @_spi(Crypto) import Quire
@_spi(Format) import QuireFormat
@_spi(Format) import QuireKeys
import Testing

/// The entry index hashes a revision's payload to tell two frames of one
/// revision id apart (`Spec/merge.md §5`). A revision this handle writes has
/// a fresh random id: its hash waits until a second frame of the id appears.
@Suite struct PayloadHashTests {
    @Test func ownRevisionsAreHashedOnlyWhenTheirIdAppearsAgain() throws {
        let dir = TemporaryDirectory()
        let (vault, recovery) = try makeVault(dir)
        try vault.add(EntryBody(created: 1_700_000_000_000, text: "before the index"))
        _ = try vault.profile()   // loads the index: one hash per revision read from the file
        let loaded = vault.payloadHashCount
        #expect(loaded == 1)
        var added: [EntryRevision] = []
        for i in 0..<3 { added.append(try vault.add(EntryBody(created: 1_700_000_000_001 + Int64(i), text: "entry \(i)"))) }
        // Before, each add hashed its payload: 3 more.
        #expect(vault.payloadHashCount == loaded)

        // Another writer appends a frame with the id of the first added
        // revision and other content; this handle indexes it at its next
        // commit, hashes both, and reports the conflict.
        let raw = try VaultFile(path: dir.file("v.quire"), writable: true)
        let unlocked = try KeyringEvaluator.unlock(raw, with: .recoveryKey(recovery))
        raw.verifyCommits(keys: unlocked.keys, trustedKeyrings: unlocked.trustedKeyrings, attestors: unlocked.attestors)
        let first = added[0]
        let shadow = EntryRevision(entryID: first.entryID, revisionID: first.revisionID, clock: first.clock, isDeleted: true, body: EntryBody())
        try raw.commit(random: SeededRandom(label: "shadow"), options: fast, attestWith: nil) { (tx: PendingCommit) throws(FormatError) in
            _ = try tx.appendSealed(kind: .entryRevision, payload: shadow.encoded())
        }
        try vault.add(EntryBody(created: 1_700_000_000_010, text: "after the other writer"))
        #expect(vault.payloadHashCount == loaded + 2)
        #expect(try vault.unreadRecords().records.map(\.code).contains("revision_conflict"))
        // The attested revision keeps its place.
        #expect(try vault.entry(first.entryID)?.body.text == "entry 0")
    }
}
