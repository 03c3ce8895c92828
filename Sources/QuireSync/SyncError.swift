package import QuireCrypto
@_spi(Format) public import QuireFormat
@_spi(Format) public import QuireKeys
public import QuireSystem

/// Why a sync operation (finding, merging or folding copies) failed
/// (`Spec/merge.md`). Nothing is changed when one is thrown.
@_spi(Format) public enum SyncError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The vault itself cannot be read as a vault.
    @_spi(Format) case vaultUnreadable(path: String, FormatError)
    /// The copy cannot be read as a vault (not a vault, truncated header, …).
    @_spi(Format) case copyUnreadable(path: String, FormatError)
    /// The copy is of another vault.
    @_spi(Format) case differentVaults(vault: VaultID, copy: VaultID)
    /// The credential does not open the vault.
    @_spi(Format) case keys(KeyError)
    /// This credential cannot open epoch `newerEpoch` of the vault or the
    /// copy: it was removed, so it cannot write a merge.
    @_spi(Format) case removed(newerEpoch: UInt32)
    /// The merge would have to commit a keyring of epoch `newerEpoch` that
    /// this credential cannot open, above the epoch of every key it holds:
    /// other readers would find that commit stale (`Spec/merge.md §3.3`).
    /// Nothing was changed.
    @_spi(Format) case behindNewerKeyring(newerEpoch: UInt32)
    /// The vault has damaged or unverified records that a compaction would
    /// drop; it was left as it was.
    @_spi(Format) case damaged(issues: [FormatError])
    /// The vault holds records that authenticate but sit in commits that
    /// do not verify, and the copy does not bring them in a verified commit:
    /// the merged file could not vouch for them, so the merge would lose
    /// them (`Spec/merge.md §3.1`). Nothing was changed.
    @_spi(Format) case wouldLoseRecords(issues: [FormatError])
    /// The file at `path` (the vault or the copy) holds a frame of a critical
    /// kind this version does not know (the ``FormatError`` says where and
    /// which), in a commit that a current member — `author`, the phrase
    /// naming it (`the device "Name"`), when known — attested. A
    /// merge writes records, and no record is written while that holds
    /// (`Spec/format.md §4.3`, `Spec/merge.md §3.1`); nothing was changed.
    /// Removing that member (a stolen device) lifts it; a newer version of
    /// Quire reads it.
    @_spi(Format) case unknownCriticalKind(path: String, FormatError, author: String?)
    /// The merged file did not open or verify; the vault was left as it was.
    @_spi(Format) case resultDoesNotVerify(reason: String)
    /// Another process holds the vault's lock.
    @_spi(Format) case locked(path: String)
    /// The vault's folder cannot be listed.
    @_spi(Format) case folderUnreadable(path: String, SystemError)
    /// Reading or writing failed.
    @_spi(Format) case io(SystemError)
    /// The caller cancelled the operation (its `Task`); the vault was left
    /// as it was and the temporary file removed.
    @_spi(Format) case cancelled

    /// A stable code for scripts and logs.
    public var code: String {
        switch self {
        case .vaultUnreadable(_, let e), .copyUnreadable(_, let e): e.code
        case .differentVaults: "different_vaults"
        case .keys(let e): e.code
        case .resultDoesNotVerify: "merge_not_verified"
        case .removed: "removed_from_vault"
        case .behindNewerKeyring: "behind_newer_keyring"
        case .damaged: "compaction_refused"
        case .wouldLoseRecords: "merge_refused"
        case .unknownCriticalKind(_, let e, _): e.code
        case .locked: "locked"
        case .folderUnreadable, .io: "io"
        case .cancelled: "cancelled"
        }
    }

    /// The error in words a person can act on.
    public var description: String {
        switch self {
        case .vaultUnreadable(let path, let e): "\(path) cannot be read as a vault: \(e)"
        case .copyUnreadable(let path, let e): "\(path) cannot be merged: \(e); nothing was changed"
        case .differentVaults(let vault, let copy):
            "the copy is of another vault (\(copy), not \(vault)); nothing was changed — merge only copies of the same vault"
        case .keys(let e): "this key does not open the vault: \(e)"
        case .damaged(let issues):
            "the vault has \(issues.count) damaged or unverified record\(issues.count == 1 ? "" : "s") (first: \(issues.first.map { "\($0)" } ?? "")) that compaction would drop; nothing was changed"
        case .wouldLoseRecords(let issues):
            "the vault holds \(issues.count) record\(issues.count == 1 ? "" : "s") in commits that do not verify (first: \(issues.first.map { "\($0)" } ?? "")), which a merge cannot vouch for and would lose; nothing was changed — merge a copy that holds them intact first, or compact the vault without what cannot be verified (quire compact --drop-unverified) to give them up"
        case .removed(let epoch):
            "this key cannot open epoch \(epoch) of the vault or its copy: a current member removed it, so it cannot merge; merge on an enrolled device or with the recovery key"
        case .behindNewerKeyring(let epoch):
            "the copy holds a keyring of epoch \(epoch) that this key cannot open, above every epoch it holds; nothing was changed — merge with the recovery key or on a device that opens it"
        case .unknownCriticalKind(let path, let e, let author):
            "\(path): \(Self.frameAndKind(e)), which this version does not know and may not skip, in a commit that \(author ?? "a current member") attested — a newer version of Quire wrote it, or a device that should not have. A merge writes records, which this version does not write beside it, so nothing was changed: update Quire, or, if you do not trust \(author ?? "the member that attested it"), remove it first, then merge again"
        case .resultDoesNotVerify(let reason): "the merged file did not verify (\(reason)); the vault was left as it was"
        case .locked(let path): "\(path) is locked by another Quire process; try again when it is done"
        case .folderUnreadable(let path, let e): "the folder \(path) cannot be listed: \(e)"
        case .io(let e): e.description
        case .cancelled: "the operation was cancelled; the vault was left as it was — run it again to complete it"
        }
    }

    /// `"<where> has record kind 0x…"` for an unknown critical kind.
    private static func frameAndKind(_ e: FormatError) -> String {
        if case .unknownCriticalKind(let loc, let kind) = e { return "\(loc) has record kind 0x\(String(kind, radix: 16))" }
        return e.description
    }
}

extension SyncError: QuireErrorLayer {
    /// The `errno` of a failed read, write or listing.
    package var errorNumber: Int32? {
        switch self {
        case .vaultUnreadable(_, let e), .copyUnreadable(_, let e), .unknownCriticalKind(_, let e, _): e.errorNumber
        case .keys(let e): e.errorNumber
        case .folderUnreadable(_, let e), .io(let e): e.code
        default: nil
        }
    }

    /// The sync layer's part of ``QuireError/category``.
    package var category: QuireError.Category {
        switch self {
        case .vaultUnreadable(_, let e), .copyUnreadable(_, let e): e.category
        case .differentVaults: .programmerError
        case .keys(let e): e.category
        case .removed, .behindNewerKeyring: .readOnly
        case .unknownCriticalKind(_, let e, _): e.category
        case .damaged, .wouldLoseRecords, .resultDoesNotVerify: .damaged
        case .locked: .busy
        case .folderUnreadable(_, let e), .io(let e): e.category
        case .cancelled: .cancelled
        }
    }

    package var offset: UInt64? { nil }
}

extension QuireError {
    /// The sync layer's `error` as a `QuireError`.
    package static func fromSync(_ error: SyncError) -> QuireError { QuireError(layer: error) }
}
