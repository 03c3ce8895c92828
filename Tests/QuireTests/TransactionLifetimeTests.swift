import Foundation
@_spi(Format) import Quire
import Testing

/// iOS review 27, §3.5: a `VaultTransaction` kept after its commit returned
/// must not write. Its commit's lock is released and its frames are in the
/// file: a late record would be lost without a word, and a late attachment
/// would be written where the commit's buffer ended — over what another
/// writer has committed since.
@Suite struct TransactionLifetimeTests {
    @Test func aTransactionKeptAfterItsCommitRefusesEveryWrite() throws {
        let dir = TemporaryDirectory()
        let (vault, recovery) = try makeVault(dir)
        var kept: VaultTransaction?
        try vault.commit { tx in
            try tx.add(EntryBody(created: 1, text: "inside the commit"))
            kept = tx
        }
        let tx = try #require(kept)
        // Another writer commits after it.
        let other = try Vault.open(at: dir.file("v.quire"), credential: .recoveryKey(recovery), options: fast)
        let theirs = try other.add(EntryBody(created: 2, text: "another writer's entry"))
        let size = try FileManager.default.attributesOfItem(atPath: dir.file("v.quire"))[.size] as? Int
        let attempts: [(String, () throws -> Void)] = [
            ("add", { _ = try tx.add(EntryBody(created: 3, text: "too late")) }),
            ("storeAttachment", { _ = try tx.storeAttachment(Array(repeating: 0x5A, count: 3 << 20), mediaType: "image/jpeg") }),
            ("edit", { _ = try tx.edit(theirs.entryID, body: EntryBody(created: 2, text: "too late"), replacing: [theirs.revisionID]) }),
            ("delete", { _ = try tx.delete(theirs.entryID) }),
        ]
        for (name, attempt) in attempts {
            let error = #expect(throws: QuireError.self, "\(name) after the commit") { try attempt() }
            #expect(error?.code == "transaction_ended", "\(name)")
            #expect(error?.category == .programmerError, "\(name)")
        }
        // Nothing was written: the other writer's entry reads, the file is whole.
        #expect(try FileManager.default.attributesOfItem(atPath: dir.file("v.quire"))[.size] as? Int == size)
        let reopened = try Vault.open(at: dir.file("v.quire"), credential: .recoveryKey(recovery), options: fast)
        #expect(try reopened.entry(theirs.entryID)?.body.text == "another writer's entry")
        #expect(reopened.verify().isIntact)
        #expect(try reopened.entries().count == 2)
    }
}
