import QuireSystem

/// The temporary file a merge or a compaction killed mid-way (`kill -9`)
/// leaves beside the vault, `.NAME.merge-HEX` (trial 25 F4): the vault is
/// intact, and the next write removes it under the vault's write lock
/// (`Leftovers`, `Spec/merge.md §3.5`). `verify` and `info` mention one
/// that is provably stale, so it is not a mystery file until then.
enum RewriteLeftovers {
    /// The stale rewrite leftovers beside the vault at `path` (links
    /// resolved): name and size of each `.NAME.merge-HEX` that is a regular
    /// file of this user, on which no one holds a lock, while no one holds
    /// the vault's lock either (a running merge or compaction holds both).
    /// Empty when the vault's lock is held. Nothing is removed: that is the
    /// next write's, under the lock.
    static func stale(besideVault path: String) -> [(name: String, bytes: UInt64)] {
        let real = FileSystem.resolvingSymbolicLinks(path)
        let folder = FileSystem.directory(of: real)
        let vaultName = String(real.split(separator: "/").last ?? "")
        let prefix = "." + vaultName + ".merge-"
        guard !vaultName.isEmpty, let names = try? FileSystem.listDirectory(folder) else { return [] }
        let candidates = names.filter { name in
            guard name.hasPrefix(prefix) else { return false }
            let hex = name.utf8.dropFirst(prefix.utf8.count)
            return hex.count == 12 && hex.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
        }
        guard !candidates.isEmpty else { return [] }
        // A rewrite holds the vault's lock from start to rename.
        guard let vault = try? SystemFile(path: real, mode: .readOnly), vault.tryLockExclusive() else { return [] }
        defer { vault.unlock() }
        return candidates.sorted().compactMap { name in
            guard let file = try? SystemFile(path: folder + "/" + name, mode: .readOnly, noFollow: true), let status = try? file.status(),
                status.isRegularFile, status.owner == FileSystem.currentUserID(), file.tryLockExclusive()
            else { return nil }
            file.unlock()
            return (name, status.size)
        }
    }

    /// The sentence for `leftover`.
    static func describe(_ leftover: (name: String, bytes: UInt64)) -> String {
        "\(leftover.name) (\(leftover.bytes) bytes) beside it is what a merge or a compaction that was stopped left: "
            + "not part of the vault; the next write removes it"
    }
}
