@_spi(Format) import Quire
import QuireSystem

/// The temporary file a merge or a compaction killed mid-way (`kill -9`)
/// leaves beside the vault, `.NAME.merge-HEX` (trial 25 F4): the vault is
/// intact, and the next write removes it under the vault's write lock
/// (`Leftovers`, `Spec/merge.md §3.5`). `verify` and `info` mention one
/// that is provably stale, so it is not a mystery file until then.
enum RewriteLeftovers {
    /// The stale rewrite leftovers beside the vault at `path`: those the
    /// next write would remove (``Leftovers``), found while no one holds
    /// the vault's lock (a running merge or compaction holds it, and its
    /// own temporary file). Empty when the lock is held. Nothing is
    /// removed: that is the next write's, under the lock.
    static func stale(besideVault path: String) -> [(name: String, bytes: UInt64)] {
        // A rewrite holds the vault's lock from start to rename.
        guard let vault = try? SystemFile(path: FileSystem.resolvingSymbolicLinks(path), mode: .readOnly), vault.tryLockExclusive()
        else { return [] }
        defer { vault.unlock() }
        return Leftovers.staleRewrites(besideVault: path, holdingLock: true)
    }

    /// The sentence for `leftover`.
    static func describe(_ leftover: (name: String, bytes: UInt64)) -> String {
        "\(leftover.name) (\(leftover.bytes) bytes) beside it is what a merge or a compaction that was stopped left: "
            + "not part of the vault; the next write removes it"
    }
}
