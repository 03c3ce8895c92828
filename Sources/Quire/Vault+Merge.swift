@_spi(Format) import QuireFormat
@_spi(Format) public import QuireSync
import QuireSystem

extension Vault {
    /// Merges the copy at `copyPath` — a sync tool's conflict copy, an
    /// older version the platform kept (such as an `NSFileVersion`), a
    /// backup — into this vault, under this handle's lock and with its
    /// credential and write options, then reads the vault again
    /// (`Spec/merge.md §3`). The copy itself is left where it is.
    ///
    /// Unlike ``VaultMerge/merge(vaultAt:copyAt:credential:random:options:)``,
    /// no other write of this handle can interleave, the credential is not
    /// asked for again, and this device's memory of the vault
    /// (`Spec/keys.md §7`) is brought up to date.
    ///
    /// - Returns: what the merge did (``MergeReport/changed`` false when the
    ///   vault already held everything the copy holds).
    /// - Throws: a sync error with the errors of
    ///   ``VaultMerge/merge(vaultAt:copyAt:credential:random:options:)``
    ///   (nothing is changed then); a container error (`.damaged`, `.unavailable`, `.outOfSpace`…) or
    ///   a key error (`.wrongCredential`, `.readOnly`, `.needsMerge`, `.damaged`) when the merged vault cannot be read again.
    @discardableResult
    @_spi(Format)
    public func merge(copyAt copyPath: String) throws(QuireError) -> MergeReport {
        try reportingOwnWrite { () throws(QuireError) -> MergeReport in
            let report: MergeReport
            do throws(SyncError) {
                report = try VaultMerge.merge(
                    vaultAt: file.path, copyAt: copyPath, credential: credential, random: random, options: writeOptions, reusing: file)
            } catch {
                throw .sync(error)
            }
            if report.changed {
                try reload()
                rememberIfNotRolledBack()
            }
            return report
        }
    }
}
