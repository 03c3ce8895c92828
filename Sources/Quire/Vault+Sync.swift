public import QuireSync
import QuireSystem
import QuireKeys

/// Copies of the vault left by sync tools (`Spec/merge.md`).
extension Vault {
    /// The conflict copies beside this vault's file (`Spec/merge.md §2`).
    ///
    /// - Throws: ``VaultError/sync(_:)``.
    public func conflictCopies() throws(VaultError) -> [ConflictCopy] {
        do { return try ConflictCopies.find(for: file.path) } catch { throw .sync(error) }
    }

    /// Merges every conflict copy into this vault with this vault's
    /// credential, deletes each copy the vault then holds entirely, and
    /// reads the vault again (`Spec/merge.md §4`).
    ///
    /// - Returns: what became of each copy.
    /// - Throws: ``VaultError/sync(_:)`` when the copies cannot be listed;
    ///   a failure on one copy is in its report entry.
    @discardableResult
    public func foldConflictCopies() throws(VaultError) -> FoldReport {
        try lock.withLock { () throws(VaultError) -> FoldReport in
            let report: FoldReport
            do throws(SyncError) { report = try ConflictCopies.fold(into: file.path, credential: credential, random: random, options: writeOptions) } catch {
                throw .sync(error)
            }
            try reload()
            return report
        }
    }
}
