@_spi(Format) import QuireFormat
@_spi(Format) import QuireKeys
@_spi(Format) import QuireSync
import QuireSystem

extension QuireError {
    /// What an app can do about an error, in a few kinds: the small, total
    /// mapping of ``QuireError/category`` from the many errors of the
    /// container, key, sync and device store layers. Show a message and
    /// choose an action by category; log ``QuireError/code`` and
    /// ``QuireError/message`` for the detail.
    public enum Category: Sendable, Hashable {
        /// The passphrase, recovery key, device key or code does not open
        /// the vault (or a code was mistyped): ask again.
        case wrongCredential
        /// The entry or attachment asked for is not in the vault (or the
        /// entry is deleted).
        case notFound
        /// Another writer holds the vault, a call was interrupted, or a
        /// reader the caller kept is stale: try again later (and make a new
        /// ``EntryCatalog``).
        case busy
        /// The storage is full: no space left (`ENOSPC`), the disk quota is
        /// used up (`EDQUOT`), or guarded memory for keys ran out.
        case outOfSpace
        /// The file is missing, not downloaded yet (a cloud placeholder),
        /// not a vault, of a newer format version, changed underneath the
        /// handle, or the storage failed: reopen it when it is there.
        case unavailable
        /// The file, a record or the device's key store is damaged or does
        /// not verify: offer verification and repair (`Spec/format.md §9`).
        case damaged
        /// This copy is older than one this device saw (rolled back), a
        /// commit was altered (tampered), or concurrent key changes must be
        /// joined: writing waits until a newer copy is merged or the user
        /// decides (`Spec/keys.md §7`).
        case needsMerge
        /// The vault can be read but not written with this credential or
        /// handle: this device was removed or is behind a newer keyring,
        /// only a passphrase or escrow key opened it, or it was opened
        /// read-only (`Spec/format.md §8.6`).
        case readOnly
        /// The caller cancelled the operation; nothing of it was committed.
        case cancelled
        /// The call was given something it cannot take: an invalid argument,
        /// an existing path to create, a record too large, another vault's
        /// copy. A bug to fix in the caller, not something to show.
        case programmerError
    }
}

extension VaultError {
    /// The kind of this error an app can act on (``Category``). Every case
    /// maps to exactly one category, including those nested in
    /// ``format(_:)``, ``keys(_:)``, ``sync(_:)`` and ``deviceStore(_:)``.
    @_spi(Format) public var category: QuireError.Category {
        switch self {
        case .format(let e): e.category
        case .keys(let e): e.category
        case .entryNotFound, .entryDeleted, .attachmentNotFound: .notFound
        case .removedFromVault, .behindNewerKeyring: .readOnly
        case .rolledBack, .tampered: .needsMerge
        case .deviceStore(let e): e.category
        case .sync(let e): e.category
        case .damagedHeader: .damaged
        case .catalogStale: .busy
        case .cancelled: .cancelled
        }
    }
}

extension FormatError {
    /// The container layer's part of ``VaultError/category``.
    var category: QuireError.Category {
        switch self {
        case .truncatedHeader(let count): count == 0 ? .unavailable : .damaged
        case .notAVault, .unsupportedVersion, .unsupportedFeature, .unknownCriticalKind, .vaultChanged: .unavailable
        case .headerDamaged, .headerCopiesDiffer, .frameDamaged, .frameRepaired, .malformedFrame, .tornTail,
            .authenticationFailed, .unknownKey, .staleEpoch, .badPadding, .decompressionFailed,
            .decompressedSizeMismatch, .revisionConflict, .commitMismatch, .commitUnverifiable, .commitOrphaned,
            .commitFork, .attestationFailed, .untrustedKeyring, .chunkMissing, .chunkDuplicate, .chunkOutOfOrder,
            .chunkFinalMissing, .chunkFinalRepeated, .chunkNoncanonical, .blobSizeMismatch, .blobIDMismatch,
            .blobPaddingInvalid:
            .damaged
        // Without a place in the file, the size or record was the caller's.
        case .sizeLimitExceeded(let location, _, _, _): location == nil ? .programmerError : .damaged
        case .malformedRecord(let location, _): location == nil ? .programmerError : .damaged
        case .commitTampered: .needsMerge
        case .blobNotFound: .notFound
        case .recordTooLarge, .alreadyExists: .programmerError
        case .locked, .sourceChanged: .busy
        case .notWritable: .readOnly
        case .io(let e): e.category
        case .outOfGuardedMemory: .outOfSpace
        case .cancelled: .cancelled
        }
    }
}

extension KeyError {
    /// The key layer's part of ``VaultError/category``.
    var category: QuireError.Category {
        switch self {
        case .recoveryCodeInvalid, .deviceCodeInvalid, .wrongRecoveryKey, .wrongPassphrase, .noPassphrase,
            .wrongDeviceKey, .wrongKey, .kdfBudgetExceeded:
            .wrongCredential
        case .noKeyring, .kdfLimitsExceeded, .kdfLimitsExceededInKeyring, .keyringUnauthenticated, .escrowForbidden,
            .removedDeviceSlot, .malformedKeyring, .keyringCopyDamaged, .removalTie, .removalMutual, .keyEpochClaimedTwice:
            .damaged
        case .escrowRefused: .programmerError
        case .rollbackSuspected, .recoveryKeyChoiceNeeded: .needsMerge
        case .deviceMemoryNotSaved: .unavailable
        case .operationRefused: .readOnly
        case .format(let e): e.category
        }
    }
}

extension SyncError {
    /// The sync layer's part of ``VaultError/category``.
    var category: QuireError.Category {
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
}

extension DeviceStoreError {
    /// The device key store's part of ``VaultError/category``.
    var category: QuireError.Category {
        switch self {
        case .alreadyExists, .noDirectory, .invalid: .programmerError
        case .permissionsTooOpen, .notOwned, .damaged: .damaged
        case .noKey: .wrongCredential
        case .io(let e): e.category
        }
    }
}

extension SystemError {
    /// A failed system call's part of ``VaultError/category``, by `errno`.
    var category: QuireError.Category {
        if isOutOfSpace { return .outOfSpace }
        if isBusy { return .busy }
        if isReadOnlyFileSystem { return .readOnly }
        if isInvalidArgument { return .programmerError }
        // ENOENT (missing, or evicted by a sync tool), EACCES, EIO and the
        // rest: the file cannot be reached now.
        return .unavailable
    }
}
