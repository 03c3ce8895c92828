@_spi(Format) import Quire
@_spi(Crypto) import QuireCrypto
@_spi(Format) import QuireFormat
import QuireSystem
import Testing

/// An entry's heads when it has one revision: the revision, unless it
/// names itself as a parent (`Spec/merge.md §5`).
@Suite struct EntryHeadsTests {
    @Test func aLoneRevisionIsTheHeadUnlessItNamesItself() throws {
        let dir = TemporaryDirectory()
        let (vault, _) = try makeVault(dir)
        let random = SystemRandom()
        let plain = EntryRevision(
            entryID: EntryID(using: random), revisionID: RevisionID(using: random), clock: HybridLogicalClock(rawValue: 1),
            body: EntryBody(text: "plain"))
        let child = EntryRevision(
            entryID: EntryID(using: random), revisionID: RevisionID(using: random), parents: [RevisionID(using: random)],
            clock: HybridLogicalClock(rawValue: 2), body: EntryBody(text: "child of a revision not held"))
        let selfID = RevisionID(using: random)
        let own = EntryRevision(
            entryID: EntryID(using: random), revisionID: selfID, parents: [selfID], clock: HybridLogicalClock(rawValue: 3),
            body: EntryBody(text: "its own parent"))
        try vault.commit { tx in
            for r in [plain, child, own] { try tx.append(r) }
        }
        #expect(Set(try vault.entries().map(\.id)) == [plain.entryID, child.entryID])
        #expect(try vault.entry(plain.entryID)?.revision == plain)
        #expect(try vault.entry(child.entryID)?.revision == child)
        #expect(try vault.entry(own.entryID) == nil)
    }
}
