@_spi(Format) public import QuireFormat
@_spi(Format) public import QuireKeys
@_spi(Format) public import QuireSync

/// Every error the ``Vault`` facade throws: an error of the container layer,
/// of the key layer, or about the request itself.
@_spi(Format) public enum VaultError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file or a record is damaged, malformed or unreadable.
    case format(FormatError)
    /// A credential or keyring problem.
    case keys(KeyError)
    /// No entry with this id.
    case entryNotFound(EntryID)
    /// The entry is deleted (its winning head is a tombstone): it cannot be
    /// edited until it is brought back with ``Vault/restore(_:body:replacing:)``.
    case entryDeleted(EntryID)
    /// The entry is deleted and the vault no longer holds a revision from
    /// before the deletion (a compaction dropped them): it cannot be
    /// restored from this vault.
    case entryNotRestorable(EntryID)
    /// No attachment with this id.
    case attachmentNotFound(BlobID)
    /// An entry's attachment reference names a blob that is neither stored
    /// in the commit nor in the vault (a `StoredBlob` of an abandoned
    /// commit, or of another vault): the commit is refused.
    case attachmentNotStored(BlobID)
    /// This credential's own key is listed as removed in a keyring it
    /// trusts (`Spec/format.md §8.6`): it can read what it could, and write
    /// nothing — a recovery key that a device replaced may still remove the
    /// member who replaced it, from a fork (`Spec/keys.md §6.3`).
    case removedFromVault(newerEpoch: UInt32)
    /// A current member made a keyring, of epoch `newerEpoch`, that this
    /// credential cannot open (`Spec/format.md §8.6`): it is *behind* — it
    /// was removed, or that member left it out. It can read, not write
    /// records nor change keys, except that it may remove the member who made
    /// that keyring (the recovery key: any removal or a replacement).
    /// `madeBy` names that member as the privacy statement does, such as
    /// `the device "Phone"` or `the recovery key`. `wasMember` is true when
    /// this credential is a device that a keyring it trusts, a parent of
    /// that keyring, lists as a member: its maker saw the device and gave
    /// it no key, which a removal does (or a member leaving it out on
    /// purpose), not a keyring made where the device was not enrolled yet;
    /// the device cannot open the keyring to tell which (trial 26 N2).
    case behindNewerKeyring(newerEpoch: UInt32, madeBy: String, wasMember: Bool = false)
    /// This file is older than the copy this device last saw (a rollback):
    /// writing is refused until the newer copy is merged back or the file is
    /// accepted (`Spec/keys.md §7`).
    case rolledBack(reason: String)
    /// A commit of this file was altered after later commits were written,
    /// with no sign of damage (`Spec/format.md §9.3`, [`commit_tampered`]):
    /// writing is refused until a copy that holds the commit is merged back,
    /// or the vault is compacted without what cannot be verified
    /// (``CompactionOptions/dropUnverified``), or the user accepts it
    /// (``Vault/acceptTampered()``, `Spec/keys.md §7`).
    case tampered(FrameLocation)
    /// This device's key store could not be read or written.
    case deviceStore(DeviceStoreError)
    /// Finding, merging or folding copies failed (`Spec/merge.md`).
    case sync(SyncError)
    /// The file is a Quire vault whose header is destroyed: neither copy
    /// starts with the magic, yet the file shows it was a vault (its line
    /// endings were converted, or frames follow an overwritten start). It is
    /// damage (`header_damaged`), not a foreign file; `reason` says what was found.
    case damagedHeader(reason: String)
    /// An ``EntryCatalog`` (or another reader a caller kept) names a record
    /// its file no longer holds where it was: make a new one.
    case catalogStale
    /// A ``VaultTransaction`` was used after the commit it was made for
    /// returned or gave up: every change belongs inside the closure given
    /// to `commit`.
    case transactionEnded
    /// The caller cancelled the operation (its `Task`, or a progress handler
    /// that answered ``ProgressReply/cancel``) before it finished. A write
    /// cancelled this way committed nothing: the vault is as it was
    /// (an import keeps the batches it had committed; running it again
    /// goes on from there).
    case cancelled
    /// An error of a layer this enum does not name: the crypto layer, or one
    /// an app made (an attachment source or a device key store of its own).
    case other(QuireError)

    /// The stable, machine-readable name of the error.
    public var code: String {
        switch self {
        case .format(let e): e.code
        case .keys(let e): e.code
        case .entryNotFound: "entry_not_found"
        case .entryDeleted: "entry_deleted"
        case .entryNotRestorable: "not_restorable"
        case .attachmentNotFound: "blob_not_found"
        case .attachmentNotStored: "attachment_not_stored"
        case .removedFromVault: "removed_from_vault"
        case .behindNewerKeyring: "behind_newer_keyring"
        case .rolledBack: "rolled_back"
        case .tampered: "commit_tampered"
        case .deviceStore(let e): e.code
        case .sync(let e): e.code
        case .damagedHeader: "header_damaged"
        case .catalogStale: "catalog_stale"
        case .transactionEnded: "transaction_ended"
        case .cancelled: "cancelled"
        case .other(let e): e.code
        }
    }

    public var description: String {
        switch self {
        case .format(let e): e.description
        case .keys(let e): e.description
        case .entryNotFound(let id): "no entry \(id) in this vault"
        case .entryDeleted(let id): "entry \(id) is deleted; restore it first to change it"
        case .entryNotRestorable(let id):
            "entry \(id) cannot be restored: the vault was compacted after it was deleted, so only the deletion is left; a copy of the vault from before the compaction (a backup, another device's copy) still holds it"
        case .attachmentNotFound(let id): "no attachment \(id) in this vault"
        case .attachmentNotStored(let id):
            "attachment \(id) is not stored in this vault, so the entry was not saved: store the photo or file again in the same commit as the entry (a stored attachment of a commit that failed, or of another vault, is not in this one)"
        case .rolledBack(let reason):
            "this file is older than the copy of this vault this device last saw (\(reason)); nothing was written. Merge the newer copy back, or, if this file was restored on purpose, accept it as it is"
        case .tampered(let loc):
            "commit \(loc) of this file was altered after later commits were written, with no sign of damage (records were deleted, replaced or inserted); nothing was written. Merge a copy that holds the commit, or, if none exists, compact the vault without what cannot be verified, which keeps only what the chain vouches for, or accept it and write on, its records staying unverified"
        case .removedFromVault(let epoch):
            "this key was removed from the vault (in the keyring of epoch \(epoch)): it can read older records but cannot write or change the keys. Open the vault with an enrolled device or the recovery key"
        case .behindNewerKeyring(let epoch, let madeBy, true):
            // Not "if you do not trust X, remove it": X may have only built
            // on the removal, and the device cannot see whether the
            // recovery key removed it since (trial 26 N2).
            "this device was removed from the vault, or left out on purpose: it has no key to epoch \(epoch), which \(madeBy) made, though the keys before listed it as a member. It can read older records but cannot write. It comes back only as a new device, with a new key; if you did not remove it, a device that did may be stolen: remove that device with the recovery key"
        case .behindNewerKeyring(let epoch, let madeBy, false):
            "this key cannot open epoch \(epoch), which \(madeBy) made: this key was removed, or left out of it. It can read older records but cannot write. Open the vault on a device that can read it (its next write lets this key read again if it is still a member), or, if you do not trust \(madeBy), remove it"
        case .deviceStore(let e): e.description
        case .sync(let e): e.description
        case .catalogStale:
            "the vault file changed since this list of entries was made, and an entry in it is no longer where it was; make the list again and repeat the work"
        case .transactionEnded:
            "this transaction's commit has ended, so nothing was written: make every change inside the closure given to commit, and keep no reference to the transaction after it returns"
        case .cancelled:
            "the operation was cancelled before it finished; nothing of it was written — run it again to complete it"
        case .damagedHeader(let reason):
            "this Quire vault is damaged and cannot be opened: \(reason). Restore it from a copy (another device's copy, or a backup)"
        case .other(let e): e.message
        }
    }
}
