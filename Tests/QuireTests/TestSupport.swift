import Foundation
@_spi(Format) @_spi(Crypto) import Quire
@_spi(Crypto) import QuireCrypto
@_spi(Format) import QuireFormat
@_spi(Format) import QuireKeys

/// A fresh temporary directory, removed when the value is released.
final class TemporaryDirectory {
    let path: String

    init() {
        let base = FileManager.default.temporaryDirectory.path
        path = base + "/quire-test-" + UUID().uuidString
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    func file(_ name: String) -> String { path + "/" + name }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}

/// Options that skip fsync: tests check logic, not durability.
/// No flush, and torn tails cut at once (no sync tool writes into test files).
let fast = WriteOptions(synchronous: false, tornTailQuietSeconds: 0)

/// `setup` with its passphrase slot at the Argon2id floor for a new
/// passphrase (`Spec/keys.md §2.3`), to keep a test short: for the tests
/// written against plain `import Quire`, which cannot set it.
func withPassphraseFloor(_ setup: VaultSetup) -> VaultSetup {
    var setup = setup
    setup.passphraseOpsLimit = 2
    setup.passphraseMemLimitBytes = 64 << 20
    return setup
}

/// A recovery key from a fixed label, so tests are repeatable.
func testRecoveryKey(_ label: String = "test") -> RecoveryKey {
    RecoveryKey(secret: try! SymmetricKey(bytes: BLAKE2b.hash(Array(label.utf8), byteCount: 32)))
}

func makeVault(_ dir: TemporaryDirectory, name: String = "v.quire", seed: String = "vault") throws -> (Vault, RecoveryKey) {
    let recovery = testRecoveryKey(seed)
    let vault = try Vault.create(
        at: dir.file(name), setup: VaultSetup(name: "Test Journal", recoveryKey: recovery, now: 1_700_000_000_000),
        random: SeededRandom(label: seed), options: fast)
    return (vault, recovery)
}
