@_spi(Format) import QuireCrypto
@_spi(Format) import QuireFormat
@_spi(Format) import QuireKeys
@_spi(Format) import QuireSync

extension VaultError {
    /// The kind of this error an app can act on (``Category``). Every case
    /// maps to exactly one category, including those nested in
    /// ``format(_:)``, ``keys(_:)``, ``sync(_:)`` and ``deviceStore(_:)``.
    @_spi(Format) public var category: QuireError.Category {
        switch self {
        case .format(let e): e.category
        case .keys(let e): e.category
        case .entryNotFound, .entryDeleted, .entryNotRestorable, .attachmentNotFound, .attachmentNotStored: .notFound
        case .removedFromVault, .behindNewerKeyring: .readOnly
        case .rolledBack, .tampered: .needsMerge
        case .deviceStore(let e): e.category
        case .sync(let e): e.category
        case .damagedHeader: .damaged
        case .catalogStale: .busy
        case .transactionEnded: .programmerError
        case .cancelled: .cancelled
        case .other(let e): e.category
        }
    }

    /// The byte offset in the vault file the error is about, or nil.
    package var offset: UInt64? {
        switch self {
        case .format(let e), .keys(.format(let e)): e.offset
        case .tampered(let location): location.offset
        case .other(let e): e.offset
        default: nil
        }
    }
}

extension VaultError: QuireErrorLayer {
    /// The `errno` of the failed system call a nested error carries.
    package var errorNumber: Int32? {
        switch self {
        case .format(let e): e.errorNumber
        case .keys(let e): e.errorNumber
        case .deviceStore(let e): e.errorNumber
        case .sync(let e): e.errorNumber
        case .other(let e): e.layer.errorNumber
        default: nil
        }
    }
}
