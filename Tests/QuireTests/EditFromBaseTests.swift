import Foundation
@_spi(Format) import Quire
import Testing

/// `Vault.edit(_:body:replacing:)`: an edit names the revisions it was made
/// from, so a change written meanwhile becomes a conflict, never lost.
@Suite struct EditFromBaseTests {
    @Test func aChangeWrittenMeanwhileStaysAHead() throws {
        let dir = TemporaryDirectory()
        let (vault, recovery) = try makeVault(dir)
        let first = try vault.add(EntryBody(created: 1, text: "first"))
        let read = try #require(try vault.entry(first.entryID))
        // Another process edits the entry while this one holds `read`.
        let other = try Vault.open(at: dir.file("v.quire"), credential: .recoveryKey(recovery), options: fast)
        let meanwhile = try other.edit(first.entryID, body: EntryBody(created: 1, text: "meanwhile"))
        let mine = try vault.edit(first.entryID, body: EntryBody(created: 1, text: "mine"), replacing: [read.revision.revisionID] + read.conflictingHeads)
        #expect(mine.parents == [first.revisionID])
        let after = try #require(try Vault.open(at: dir.file("v.quire"), credential: .recoveryKey(recovery)).entry(first.entryID))
        #expect(after.revisionCount == 3)
        #expect(Set([after.revision.revisionID] + after.conflictingHeads) == [meanwhile.revisionID, mine.revisionID])
    }

    @Test func replacingEveryHeadResolvesAConflict() throws {
        let dir = TemporaryDirectory()
        let (vault, _) = try makeVault(dir)
        let first = try vault.add(EntryBody(created: 1, text: "first"))
        let a = try vault.edit(first.entryID, body: EntryBody(created: 1, text: "a"), replacing: [first.revisionID])
        let b = try vault.edit(first.entryID, body: EntryBody(created: 1, text: "b"), replacing: [first.revisionID])
        let conflicted = try #require(try vault.entry(first.entryID))
        #expect(conflicted.conflictingHeads.count == 1)
        let joined = try vault.edit(first.entryID, body: EntryBody(created: 1, text: "both"), replacing: [a.revisionID, b.revisionID])
        #expect(Set(joined.parents) == [a.revisionID, b.revisionID])
        let resolved = try #require(try vault.entry(first.entryID))
        #expect(resolved.conflictingHeads.isEmpty)
        #expect(resolved.body.text == "both")
    }

    @Test func aBaseOfAnotherEntryIsRefused() throws {
        let dir = TemporaryDirectory()
        let (vault, _) = try makeVault(dir)
        let one = try vault.add(EntryBody(created: 1, text: "one"))
        let two = try vault.add(EntryBody(created: 2, text: "two"))
        #expect(throws: QuireError.entryNotFound(one.entryID)) {
            try vault.edit(one.entryID, body: EntryBody(created: 1, text: "x"), replacing: [two.revisionID])
        }
        #expect(try vault.entry(one.entryID)?.body.text == "one")
    }
}
