import Foundation
import Quire  // alone: what an app sees
import Testing

/// Issue 13, need 7: an app catches one error type, ``QuireError``, and
/// acts on its ``QuireError/category``; its ``QuireError/code`` is the
/// specification's and the CLI's. Written against `import Quire` without
/// any `@_spi`, as an app is.
@Suite struct AppErrorTests {
    typealias Store = AppKeyStoreTests.KeychainLikeStore
    static let now: Int64 = 1_767_225_600_000
    /// ``now`` as an entry's date.
    static let date = Date(timeIntervalSince1970: 1_767_225_600)

    static func store(_ name: String) throws -> Store {
        let store = Store()
        _ = try store.loadOrCreate(name: name)
        return store
    }

    /// What the app's error handling does with an error, by category: the
    /// way an app is written (a `switch` in a typed `catch`).
    static func action(_ body: () async throws(QuireError) -> Void) async -> (action: String, code: String, message: String)? {
        do {
            try await body()
            return nil
        } catch {
            let action =
                switch error.category {
                case .wrongCredential: "ask again"
                case .readOnly: "read only"
                case .damaged: "offer repair"
                case .needsMerge: "offer merge"
                case .cancelled: "nothing"
                default: "show"
                }
            return (action, error.code, error.message)
        }
    }

    @Test func aWrongPassphraseAsksAgain() async throws {
        let dir = TemporaryDirectory()
        let path = dir.file("Journal.quire")
        var setup = VaultSetup(name: "Journal", recoveryKey: try RecoveryKey())
        setup.passphrase = "correct horse"
        setup = withPassphraseFloor(setup)  // (test support, SPI: the Argon2id floor, to keep the test short)
        _ = try await Vault.create(at: path, setup: setup, store: Self.store("Laptop"))

        let result = await Self.action { () async throws(QuireError) in
            _ = try await Vault.open(at: path, credential: .passphrase("wrong horse"))
        }
        let got = try #require(result)
        #expect(got.action == "ask again")
        #expect(got.code == "wrong_passphrase")
        #expect(!got.message.contains("horse"))
        // Caught as `any Error` (a `Task`'s value), it is the same type.
        let untyped: () async throws -> Void = { _ = try await Vault.open(at: path, credential: .passphrase("wrong horse")) }
        do {
            try await untyped()
            Issue.record("opened with a wrong passphrase")
        } catch let error as QuireError {
            #expect(error.category == .wrongCredential)
        }
    }

    @Test func aRemovedDeviceReadsButCannotWrite() async throws {
        let dir = TemporaryDirectory()
        let path = dir.file("Journal.quire")
        let laptopStore = try Self.store("Laptop")
        let phoneStore = try Self.store("Phone")
        let laptop = try await Vault.create(
            at: path, setup: VaultSetup(name: "Journal", recoveryKey: try RecoveryKey()), store: laptopStore)
        let phone = try #require(try phoneStore.load())
        try await laptop.enrollDevice(code: phone.code, name: "Phone")
        _ = try await laptop.commit { tx in try tx.add(EntryBody(created: Self.date, text: "before")) }
        try await laptop.removeDevice(publicKey: phone.publicKey, keepingEnrolled: [])

        let onPhone = try await Vault.open(at: path, store: phoneStore)
        let status = try #require(onPhone.removedFromVault)
        #expect(status.category == .readOnly)
        #expect(status.code == "behind_newer_keyring")
        let result = await Self.action { () async throws(QuireError) in _ = try await onPhone.commit { tx in try tx.add(EntryBody(created: Self.date + 1, text: "after")) } }
        let got = try #require(result)
        #expect(got.action == "read only")
        #expect(got.code == "behind_newer_keyring")
        #expect(got.message.contains("cannot write"))
    }

    @Test func aDamagedFileOffersRepair() async throws {
        let dir = TemporaryDirectory()
        let path = dir.file("Journal.quire")
        let recovery = try RecoveryKey()
        _ = try await Vault.create(at: path, setup: VaultSetup(name: "Journal", recoveryKey: recovery))
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        bytes[20] ^= 0x10  // both copies of the header (Spec/format.md §3)
        bytes[52] ^= 0x10
        try Data(bytes).write(to: URL(fileURLWithPath: path))

        let result = await Self.action { () async throws(QuireError) in _ = try await Vault.open(at: path, credential: .recoveryKey(recovery)) }
        let got = try #require(result)
        #expect(got.action == "offer repair")
        #expect(got.code == "header_damaged")
    }

    @Test func aRolledBackFileOffersAMerge() async throws {
        let dir = TemporaryDirectory()
        let path = dir.file("Journal.quire")
        let store = try Self.store("Laptop")
        let vault = try await Vault.create(
            at: path, setup: VaultSetup(name: "Journal", recoveryKey: try RecoveryKey()), store: store)
        _ = try await vault.commit { tx in try tx.add(EntryBody(created: Self.date, text: "one")) }
        let old = try Data(contentsOf: URL(fileURLWithPath: path))
        let tablet = try #require(try Self.store("Tablet").load())
        try await vault.enrollDevice(code: tablet.code, name: "Tablet")  // a keyring the old copy lacks
        try old.write(to: URL(fileURLWithPath: path))

        let rolledBack = try await Vault.open(at: path, store: store)
        #expect(rolledBack.keyWarnings.map(\.code) == ["rollback_suspected"])
        let result = await Self.action { () async throws(QuireError) in _ = try await rolledBack.commit { tx in try tx.add(EntryBody(created: Self.date + 1, text: "two")) } }
        let got = try #require(result)
        #expect(got.action == "offer merge")
        #expect(got.code == "rolled_back")
    }
}
