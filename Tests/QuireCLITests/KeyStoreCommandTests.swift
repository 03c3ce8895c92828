import Foundation
import Testing

/// The key store under kills (issue 15).
@Suite struct KeyStoreCommandTests {
    @Test func aKilledKeyStoreWriteIsRemovedByTheNextOne() throws {
        let box = try Sandbox()
        // The first write of a new device key is killed.
        let killed = try box.quireKilledAfter(blocks: 0, ["init", "Journal.quire", "--recovery-key-file", "rk.txt"])
        #expect(killed.status != 0, "\(killed)")
        #expect(!FileManager.default.fileExists(atPath: box.path("Journal.quire")))
        #expect(leftoverNames(box.path("home")).count == 1, "\(leftoverNames(box.path("home")))")
        try? FileManager.default.removeItem(atPath: box.path("rk.txt"))
        try box.makeVault()
        _ = try box.add("x")
        #expect(leftoverNames(box.path("home")) == [])
        #expect(leftoverNames(box.path("home/vaults")) == [])
        #expect(leftoverNames(box.dir) == [])
    }
}
