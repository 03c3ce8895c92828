@_spi(Format) public import QuireCrypto
@_spi(Format) public import QuireFormat
@_spi(Format) public import QuireKeys
@_spi(Format) public import QuireSync

// `QuireError` itself lives in QuireCrypto, the lowest module `import Quire`
// re-exports, so that every layer's public API can throw it. What follows
// needs the facade's `VaultError`.
extension QuireError {
    /// An error with this detail. The layer's error is kept as it is
    /// (``VaultError/format(_:)`` as the `FormatError`…), so an error made
    /// here equals the same error thrown by a layer.
    @_spi(Format) public init(_ detail: VaultError) {
        switch detail {
        case .format(let e): self = QuireError.fromFormat(e)
        case .keys(let e): self = QuireError.fromKeys(e)
        case .sync(let e): self = QuireError.fromSync(e)
        case .deviceStore(let e): self = QuireError.fromDeviceStore(e)
        case .other(let e): self = e
        default: self.init(layer: detail)
        }
    }

    /// The detailed error of the layer that failed (the container, key, sync
    /// or device store layer), for the package's own tools. An error of a
    /// layer the facade does not name (crypto, or one an app made) is
    /// ``VaultError/other(_:)``.
    @_spi(Format) public var detail: VaultError {
        switch layer {
        case let e as VaultError: e
        case let e as FormatError: .format(e)
        case let e as KeyError: .keys(e)
        case let e as SyncError: .sync(e)
        case let e as DeviceStoreError: .deviceStore(e)
        default: .other(self)
        }
    }

    /// The entry the error is about (`entry_not_found`, `entry_deleted`),
    /// or nil: for the CLI, which names it. An app knows the entry it
    /// asked for; ``category`` (`.notFound`) and ``code`` say what became
    /// of it.
    @_spi(Format) public var entryID: EntryID? {
        switch detail {
        case .entryNotFound(let id), .entryDeleted(let id), .entryNotRestorable(let id): id
        default: nil
        }
    }
}

// The cases of ``VaultError`` as values of `QuireError`, so that code
// written against the detailed enum (`throw .cancelled`,
// `throw .format(error)`) throws the facade's type unchanged.
extension QuireError {
    /// ``VaultError/format(_:)``.
    @_spi(Format) public static func format(_ e: FormatError) -> QuireError { QuireError(.format(e)) }
    /// ``VaultError/keys(_:)``.
    @_spi(Format) public static func keys(_ e: KeyError) -> QuireError { QuireError(.keys(e)) }
    /// ``VaultError/entryNotFound(_:)``.
    @_spi(Format) public static func entryNotFound(_ id: EntryID) -> QuireError { QuireError(.entryNotFound(id)) }
    /// ``VaultError/entryDeleted(_:)``.
    @_spi(Format) public static func entryDeleted(_ id: EntryID) -> QuireError { QuireError(.entryDeleted(id)) }
    /// ``VaultError/attachmentNotFound(_:)``.
    @_spi(Format) public static func attachmentNotFound(_ id: BlobID) -> QuireError { QuireError(.attachmentNotFound(id)) }
    /// ``VaultError/removedFromVault(newerEpoch:)``.
    @_spi(Format) public static func removedFromVault(newerEpoch: UInt32) -> QuireError {
        QuireError(.removedFromVault(newerEpoch: newerEpoch))
    }
    /// ``VaultError/behindNewerKeyring(newerEpoch:madeBy:wasMember:)``.
    @_spi(Format) public static func behindNewerKeyring(newerEpoch: UInt32, madeBy: String, wasMember: Bool = false) -> QuireError {
        QuireError(.behindNewerKeyring(newerEpoch: newerEpoch, madeBy: madeBy, wasMember: wasMember))
    }
    /// ``VaultError/rolledBack(reason:)``.
    @_spi(Format) public static func rolledBack(reason: String) -> QuireError { QuireError(.rolledBack(reason: reason)) }
    /// ``VaultError/tampered(_:)``.
    @_spi(Format) public static func tampered(_ location: FrameLocation) -> QuireError { QuireError(.tampered(location)) }
    /// ``VaultError/deviceStore(_:)``.
    @_spi(Format) public static func deviceStore(_ e: DeviceStoreError) -> QuireError { QuireError(.deviceStore(e)) }
    /// ``VaultError/sync(_:)``.
    @_spi(Format) public static func sync(_ e: SyncError) -> QuireError { QuireError(.sync(e)) }
    /// ``VaultError/damagedHeader(reason:)``.
    @_spi(Format) public static func damagedHeader(reason: String) -> QuireError { QuireError(.damagedHeader(reason: reason)) }
    /// ``VaultError/catalogStale``.
    @_spi(Format) public static var catalogStale: QuireError { QuireError(.catalogStale) }
    /// ``VaultError/cancelled``.
    @_spi(Format) public static var cancelled: QuireError { QuireError(.cancelled) }
}
