// Vaults the benchmarks share: creation with a recovery key, bulk filling
// with batched commits, and the large vault the read benchmark reuses.

@_spi(Format) @_spi(Crypto) import Quire
@_spi(Crypto) import QuireCrypto
@_spi(Format) import QuireFormat
@_spi(Format) @_spi(Crypto) import QuireKeys
import QuireSystem

/// A vault file the benchmarks built, with the key that opens it.
struct BuiltVault {
    let path: String
    let recovery: RecoveryKey
    /// Entry revisions it holds.
    let entryCount: Int
}

/// State shared between benchmarks within one run.
final class SharedFixtures {
    let workspace: TempDirectory
    let quick: Bool
    /// The largest entry vault the append benchmark built, kept for the read
    /// benchmark so that it is not built twice.
    var largeVault: BuiltVault?

    init(workspace: TempDirectory, quick: Bool) {
        self.workspace = workspace
        self.quick = quick
    }

    /// Entries in the vault the read benchmark reads.
    var readEntryCount: Int { quick ? 10_000 : 100_000 }
}

enum Fixtures {
    /// Appends without fsync (the benchmarks' default: the targets exclude fsync).
    static let noSync = WriteOptions(synchronous: false)

    /// Revisions per commit when filling a vault.
    static let batch = 5_000

    /// A new vault at `path` opened by a fresh recovery key (no passphrase,
    /// so no Argon2id), writing without fsync.
    static func create(at path: String) throws -> (Vault, RecoveryKey) {
        let recovery = try RecoveryKey()
        let vault = try Vault.create(
            at: path, setup: VaultSetup(name: "Benchmark journal", recoveryKey: recovery), options: noSync)
        return (vault, recovery)
    }

    /// Opens `path` with the recovery key, writing without fsync.
    static func open(_ path: String, _ recovery: RecoveryKey, writable: Bool = true) throws -> Vault {
        try Vault.open(at: path, credential: .recoveryKey(recovery), writable: writable, options: noSync)
    }

    /// Appends `count` generated entries in commits of ``batch`` revisions.
    static func fill(_ vault: Vault, count: Int, generator: inout EntryGenerator) throws {
        var done = 0
        while done < count {
            let n = min(batch, count - done)
            var revisions: [EntryRevision] = []
            revisions.reserveCapacity(n)
            for _ in 0..<n { revisions.append(generator.revision()) }
            try vault.commit { (tx: VaultTransaction) throws(QuireError) in
                for r in revisions { try tx.append(r) }
            }
            done += n
        }
    }

    /// Builds a vault of `count` entries at `path`; returns it open.
    static func build(at path: String, count: Int, seed: UInt64) throws -> (Vault, BuiltVault, seconds: Double) {
        let start = now()
        let (vault, recovery) = try create(at: path)
        var generator = EntryGenerator(seed: seed)
        try fill(vault, count: count, generator: &generator)
        let seconds = Double(now() - start) / 1e9
        return (vault, BuiltVault(path: path, recovery: recovery, entryCount: count), seconds)
    }
}
