@_spi(Format) import Quire
import Testing

/// A profile set inside a commit shows only once the commit lands, whatever
/// else the commit stores (`Spec/records.md §4`). Found by the PDF work: a
/// profile set before an attachment in the same commit was lost until the
/// vault was reopened, and an abandoned commit's profile stayed visible.
@Suite struct ProfileTransactionTests {
    @Test func profileThenAttachmentInOneCommitIsSeen() throws {
        let dir = TemporaryDirectory()
        let (vault, recovery) = try makeVault(dir)
        try vault.commit { tx in
            try tx.setProfile(name: "Renamed")
            _ = try tx.storeAttachment(from: MemoryByteSource(Array("photo".utf8)), mediaType: "image/jpeg")
        }
        #expect(try vault.profile()?.name == "Renamed")
        let reopened = try Vault.open(at: dir.file("v.quire"), credential: .recoveryKey(recovery))
        #expect(try reopened.profile()?.name == "Renamed")
    }

    @Test func abandonedCommitLeavesTheProfileAsItWas() throws {
        struct Abandon: Error {}
        let dir = TemporaryDirectory()
        let (vault, _) = try makeVault(dir)
        let before = try vault.profile()?.name
        #expect(before == "Test Journal")
        // The commit throws QuireError only: the app's own error is wrapped.
        let abandoned = #expect(throws: QuireError.self) {
            try vault.commit { tx in
                try tx.setProfile(name: "Never committed")
                throw Abandon()
            }
        }
        #expect(abandoned?.underlyingError is Abandon && abandoned?.code == "commit_abandoned")
        #expect(try vault.profile()?.name == before)
    }
}
