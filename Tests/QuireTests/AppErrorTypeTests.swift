import Foundation
import Quire  // alone: what an app sees
import Testing

/// Issue 13: everything `import Quire` throws is one type, ``QuireError``,
/// including the re-exported key, crypto, format and sync modules, and an
/// app can make one (for its own attachment source or key store, a test or
/// a preview). Written against `import Quire` without any `@_spi`.
@Suite struct AppErrorTypeTests {
    typealias Store = AppKeyStoreTests.KeychainLikeStore
    static let now: Int64 = 1_767_225_600_000
    /// ``now`` as an entry's date.
    static let date = Date(timeIntervalSince1970: 1_767_225_600)

    /// A source over a photo library asset whose read fails after the first
    /// chunk: the app throws ``QuireError/sourceFailed(_:)``.
    final class FailingSource: ByteSource {
        var reads = 0
        func read(into buffer: UnsafeMutableRawBufferPointer) throws(QuireError) -> Int {
            reads += 1
            if reads > 1 { throw .sourceFailed("the asset was deleted while it was read") }
            for i in 0..<buffer.count { buffer[i] = UInt8(truncatingIfNeeded: i) }
            return buffer.count
        }
    }

    static func vault(_ dir: TemporaryDirectory) async throws(QuireError) -> (Vault, String) {
        let path = dir.file("Journal.quire")
        let store = Store()
        _ = try store.loadOrCreate(name: "Phone")
        let vault = try await Vault.create(
            at: path, setup: VaultSetup(name: "Journal", recoveryKey: try RecoveryKey()), store: store)
        return (vault, path)
    }

    @Test func aFailingSourceThrowsItsErrorAndStoresNothing() async throws {
        let dir = TemporaryDirectory()
        let (vault, path) = try await Self.vault(dir)
        try await vault.commit { tx in _ = try tx.add(EntryBody(created: Self.date, text: "before")) }
        let before = try Data(contentsOf: URL(fileURLWithPath: path))

        do {
            try await vault.commit { tx in
                _ = try tx.add(EntryBody(created: Self.date + 1, text: "with a photo"))
                _ = try tx.storeAttachment(from: FailingSource(), mediaType: "image/jpeg")
            }
            Issue.record("a failing source was stored")
        } catch {
            #expect(error.category == .unavailable)
            #expect(error.code == "source_failed")
            #expect(error.message.contains("the asset was deleted"))
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
        #expect(try await vault.entries(matching: EntryQuery()).entries.map(\.body.text) == ["before"])
    }

    @Test func aCommitPassesTheAppsOwnErrorThroughUnchanged() async throws {
        let dir = TemporaryDirectory()
        let (vault, path) = try await Self.vault(dir)
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let mine = QuireError(category: .cancelled, code: "user_discarded_draft", message: "the user discarded the draft")
        do {
            try await vault.commit { tx in
                _ = try tx.add(EntryBody(created: Self.date, text: "draft"))
                throw mine
            }
            Issue.record("the commit did not throw")
        } catch {
            #expect(error == mine)
            #expect(error.code == "user_discarded_draft" && error.category == .cancelled)
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
        #expect(try await vault.entries(matching: EntryQuery()).entries.isEmpty)
    }

    @Test func anAsyncCommitIsTypedToo() async throws {
        let dir = TemporaryDirectory()
        let (vault, _) = try await Self.vault(dir)
        let id: EntryID = try await vault.commit { (tx: VaultTransaction) throws(QuireError) -> EntryID in
            try tx.add(EntryBody(created: Self.date, text: "async")).entryID
        }
        do {
            _ = try await vault.commit { (tx: VaultTransaction) throws(QuireError) -> Int in
                _ = try tx.storeAttachment(from: FailingSource(), mediaType: "image/jpeg")
                return 1
            }
            Issue.record("a failing source was stored")
        } catch {
            // `error` is a QuireError here, not `any Error`.
            #expect(error.category == .unavailable)
        }
        #expect(try await vault.entries(matching: EntryQuery()).entries.map(\.id) == [id])
    }

    @Test func keyWarningsHaveACategory() async throws {
        let dir = TemporaryDirectory()
        let path = dir.file("Journal.quire")
        let store = Store()
        _ = try store.loadOrCreate(name: "Laptop")
        let vault = try await Vault.create(
            at: path, setup: VaultSetup(name: "Journal", recoveryKey: try RecoveryKey()), store: store)
        try await vault.commit { tx in _ = try tx.add(EntryBody(created: Self.date, text: "one")) }
        let old = try Data(contentsOf: URL(fileURLWithPath: path))
        let tablet = try Store().loadOrCreate(name: "Tablet").0
        try await vault.enrollDevice(code: tablet.code, name: "Tablet")  // a keyring the old copy lacks
        try old.write(to: URL(fileURLWithPath: path))

        let rolledBack = try await Vault.open(at: path, store: store)
        let warnings: [QuireError] = rolledBack.keyWarnings
        #expect(warnings.map(\.category) == [.needsMerge])
        #expect(warnings.map(\.code) == ["rollback_suspected"])
    }

    @Test func mistypedCodesAreWrongCredentials() {
        #expect(throws: QuireError.self) { _ = try RecoveryKey(code: "7KQ4") }
        do {
            _ = try RecoveryKey(code: "7KQ4")
        } catch {
            #expect(error.category == .wrongCredential)
            #expect(error.code == "recovery_code_invalid")
        }
        do {
            _ = try DeviceCode.fingerprint(ofCode: "ABCD-EFGH")
            Issue.record("a short device code was accepted")
        } catch {
            #expect(error.category == .wrongCredential)
            #expect(error.code == "device_code_invalid")
        }
    }

    @Test func aLockedKeychainIsUnavailable() async throws {
        let dir = TemporaryDirectory()
        let (_, path) = try await Self.vault(dir)
        let locked = LockedStore()
        do {
            _ = try await Vault.open(at: path, store: locked)
            Issue.record("opened through a locked store")
        } catch {
            #expect(error.category == .unavailable)
            #expect(error.code == "key_store_unavailable")
            #expect(error.message.contains("errSecInteractionNotAllowed"))
        }
    }

    /// A Keychain store while the device is locked.
    final class LockedStore: DeviceKeyStore, Sendable {
        func load() throws(QuireError) -> DeviceIdentity? { throw .keyStoreUnavailable("errSecInteractionNotAllowed") }
        func create(_ identity: DeviceIdentity) throws(QuireError) { throw .keyStoreUnavailable("errSecInteractionNotAllowed") }
        func memory(of vaultID: VaultID, path: String) throws(QuireError) -> VaultMemory? {
            throw .keyStoreUnavailable("errSecInteractionNotAllowed")
        }
        func remember(_ memory: VaultMemory) throws(QuireError) { throw .keyStoreUnavailable("errSecInteractionNotAllowed") }
        var keepsMemoryPerPath: Bool { false }
        var indexCacheFolder: String? { nil }
    }

    @Test func anErrorHasAShortSentenceForAnAlert() async throws {
        let preview = QuireError(category: .wrongCredential, code: "wrong_passphrase", message: "wrong passphrase")
        #expect(preview.errorDescription == "The passphrase or key does not open this journal.")
        #expect(preview.localizedDescription == "The passphrase or key does not open this journal.")
        #expect(preview.message == "wrong passphrase" && preview.code == "wrong_passphrase")
        #expect(preview == QuireError(category: .wrongCredential, code: "wrong_passphrase", message: "wrong passphrase"))
        #expect(preview != QuireError(category: .damaged, code: "wrong_passphrase", message: "wrong passphrase"))
        // Every category has its own sentence, ending with a full stop.
        let categories: [QuireError.Category] = [
            .wrongCredential, .notFound, .busy, .outOfSpace, .unavailable, .damaged, .needsMerge, .readOnly, .cancelled,
            .programmerError,
        ]
        let sentences = categories.map { QuireError(category: $0, code: "x", message: "x").errorDescription ?? "" }
        #expect(Set(sentences).count == categories.count)
        #expect(sentences.allSatisfy { $0.first?.isUppercase == true && $0.hasSuffix(".") })

        // A real error: the alert's sentence, with the detail kept apart.
        let dir = TemporaryDirectory()
        let (_, path) = try await Self.vault(dir)
        do {
            _ = try await Vault.open(at: path, credential: .recoveryKey(try RecoveryKey()))
            Issue.record("opened with another vault's recovery key")
        } catch {
            #expect(error.category == .wrongCredential)
            #expect(error.localizedDescription == "The passphrase or key does not open this journal.")
            #expect(error.localizedDescription != error.message)
        }
    }

    @Test func guardedMemoryAndDeviceIdentityThrowQuireError() throws {
        var bytes = [UInt8](repeating: 0, count: 31)
        let short: SecureBytes = try { () throws(QuireError) -> SecureBytes in try SecureBytes(consuming: &bytes) }()
        do {
            _ = try DeviceIdentity(seed: short, name: "Phone", created: Date(timeIntervalSince1970: 0))
            Issue.record("a 31-byte seed was accepted")
        } catch {
            #expect(error.category == .readOnly || error.category == .programmerError)
        }
        let (device, _) = try Store().loadOrCreate(name: "Phone")
        let seed: SecureBytes = try { () throws(QuireError) -> SecureBytes in try device.secretSeed() }()
        #expect(try DeviceIdentity(seed: seed, name: "Phone", created: Date(timeIntervalSince1970: 0)).publicKey == device.publicKey)
    }
}
