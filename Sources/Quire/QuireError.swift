@_spi(Format) public import QuireFormat
@_spi(Format) public import QuireKeys
@_spi(Format) public import QuireSync

/// The one error type an app sees through `import Quire`: everything the
/// ``Vault`` facade throws is a `QuireError`.
///
/// Switch on ``category`` to choose what to show or do (ask for the
/// passphrase again, offer a merge, offer repair…); log ``code``, the stable
/// snake_case name the specification and the `quire` CLI use
/// (`wrong_passphrase`, `removed_from_vault`, `frame_damaged`,
/// `rolled_back`…), and ``message``, a sentence for a person:
///
/// ```swift
/// do {
///     let vault = try Vault.open(at: path, credential: .passphrase(typed))
/// } catch {
///     switch error.category {
///     case .wrongCredential: askAgain()
///     case .damaged: offerRepair(error.message, at: error.offset)
///     case .needsMerge: offerMerge(error.message)   // code "rolled_back", "commit_tampered"…
///     default: show(error.message)
///     }
/// }
/// ```
///
/// Two errors are equal when they are the same error with the same details.
/// The message never holds a secret (a passphrase, a key, entry text).
public struct QuireError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The detailed error of the layer that failed (the container, key, sync
    /// or device store layer), for the package's own tools.
    @_spi(Format) public let detail: VaultError

    /// An error with this detail.
    @_spi(Format) public init(_ detail: VaultError) { self.detail = detail }

    /// The stable, machine-readable name of the error: the snake_case code
    /// of the specification (`Spec/format.md §9`, `Spec/keys.md`) and of the
    /// CLI's `--json` output, such as `wrong_passphrase` or `frame_damaged`.
    /// Codes are never renamed; new ones may appear.
    public var code: String { detail.code }

    /// What an app can do about this error (``Category``).
    public var category: Category { detail.category }

    /// A sentence for a person: what happened and what to do. The same text
    /// the `quire` CLI prints.
    public var message: String { detail.description }

    /// ``message``.
    public var description: String { detail.description }

    /// The entry the error is about (`entry_not_found`, `entry_deleted`),
    /// or nil.
    public var entryID: EntryID? {
        switch detail {
        case .entryNotFound(let id), .entryDeleted(let id): id
        default: nil
        }
    }

    /// The byte offset in the vault file the error is about (the frame that
    /// is damaged, altered or does not verify), or nil when it is not about
    /// one place in the file.
    public var offset: UInt64? {
        switch detail {
        case .format(let e), .keys(.format(let e)): e.offset
        case .tampered(let location): location.offset
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
    /// ``VaultError/behindNewerKeyring(newerEpoch:madeBy:)``.
    @_spi(Format) public static func behindNewerKeyring(newerEpoch: UInt32, madeBy: String) -> QuireError {
        QuireError(.behindNewerKeyring(newerEpoch: newerEpoch, madeBy: madeBy))
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
