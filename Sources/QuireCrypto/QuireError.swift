public import Foundation
import QuireSystem

/// The one error type an app sees through `import Quire`: everything the
/// `Vault` facade and the modules it re-exports throw is a `QuireError`.
///
/// Switch on ``category`` to choose what to show or do (ask for the
/// passphrase again, offer a merge, offer repair…); show
/// `localizedDescription` (`LocalizedError`: one short sentence a person
/// can act on, by category or, where the category's would mislead, by
/// code); log ``code``, the stable snake_case name
/// the specification and the `quire` CLI use (`wrong_passphrase`,
/// `removed_from_vault`, `frame_damaged`, `rolled_back`…), and ``message``,
/// the detailed text the CLI prints (with offsets, epochs and paths):
///
/// ```swift
/// do {
///     let vault = try await Vault.open(at: path, credential: .passphrase(typed))
/// } catch {
///     switch error.category {
///     case .wrongCredential: askAgain()
///     case .damaged: offerRepair(error.localizedDescription, details: error.message)
///     case .needsMerge: offerMerge(error.localizedDescription)   // code "rolled_back", "commit_tampered"…
///     default: show(error.localizedDescription)
///     }
/// }
/// ```
///
/// Two errors are equal when they are the same error with the same details.
/// The message never holds a secret (a passphrase, a key, entry text).
public struct QuireError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The error of the layer that failed (the container, key, sync, crypto
    /// or device store layer, the facade, or one an app made).
    package let layer: any QuireErrorLayer

    /// An error of `layer`.
    package init(layer: any QuireErrorLayer) { self.layer = layer }

    /// An error made by an app: for a `ByteSource` or a device key store
    /// of its own that fails, a fake vault in tests, or a SwiftUI preview
    /// of an error screen.
    ///
    /// - Parameters:
    ///   - category: what the caller can do about it.
    ///   - code: a stable snake_case name to log, such as `source_failed`.
    ///   - message: the detailed text, for a log or a "Details" view.
    public init(category: Category, code: String, message: String) {
        layer = MadeError(category: category, code: code, message: message)
    }

    /// The stable, machine-readable name of the error: the snake_case code
    /// of the specification (`Spec/format.md §9`, `Spec/keys.md`) and of the
    /// CLI's `--json` output, such as `wrong_passphrase` or `frame_damaged`.
    /// Codes are never renamed; new ones may appear.
    public var code: String { layer.code }

    /// What an app can do about this error (``Category``).
    public var category: Category { layer.category }

    /// The detailed text, for a log or a "Details" view: what happened and
    /// what to do, with the offsets, epochs and paths involved. The same
    /// text the `quire` CLI prints (and `description`). For the sentence to
    /// show a person, use `localizedDescription`.
    public var message: String { layer.description }

    /// ``message``.
    @_spi(Format) public var description: String { layer.description }

    /// The byte offset in the vault file the error is about (the frame that
    /// is damaged, altered or does not verify), or nil when it is not about
    /// one place in the file.
    package var offset: UInt64? { layer.offset }

    /// The same error with the same details (see the type's comment).
    @_spi(Format) public static func == (a: QuireError, b: QuireError) -> Bool { a.layer.isSame(as: b.layer) }
}

extension QuireError: LocalizedError {
    /// One short sentence for a person, chosen by ``category``, such as
    /// "The passphrase or key does not open this journal.": what an alert
    /// shows (`localizedDescription`). A few errors whose category's
    /// sentence would send the person the wrong way have their own, by
    /// ``code`` (the category is the same):
    ///
    /// - `wrong_device_key`, `no_device_key` (`.wrongCredential`): "This
    ///   device has not been added to this journal. Add it from a device
    ///   that opens the journal, or open it with the recovery key."
    /// - `device_code_invalid` (`.wrongCredential`): "This device code is
    ///   not valid. Check it and type it again."
    /// - `recovery_code_invalid` (`.wrongCredential`, a mistyped recovery
    ///   key): "This recovery key is not valid. Check each character
    ///   against the recovery key you kept and type it again."
    /// - `not_a_vault` (`.unavailable`: a photo or any other file picked as
    ///   a journal): "This file is not a Quire journal. Choose the
    ///   journal's .quire file."
    /// - `unsupported_version`, `unsupported_feature`, `unknown_critical_kind`
    ///   (`.unavailable`: a journal in a format this version does not read,
    ///   usually one a newer version wrote): "This version of the app cannot
    ///   read this journal's format. Update the app to open it."
    /// - `not_restorable` (`.notFound`: a deleted entry whose text a
    ///   compaction removed): "This entry can no longer be restored: its
    ///   text was removed when the journal was compacted."
    /// - `attachment_not_stored` (`.notFound`: an entry naming a photo or
    ///   file the journal does not hold): "A photo or file in this entry is
    ///   not stored in the journal. Remove it from the entry, or add it
    ///   again."
    /// - `different_vaults` (`.programmerError`: a file of another journal
    ///   picked to merge): "The chosen file is a copy of another journal,
    ///   so it cannot be merged into this one. Choose a copy of this
    ///   journal."
    /// - `source_failed` (`.unavailable`): "The attachment could not be
    ///   read, so it was not added. Try adding it again."
    /// - `key_store_unavailable` (`.unavailable`): "This device's key
    ///   cannot be used while the device is locked. Unlock it and try
    ///   again."
    /// - a file or folder that does not exist (`ENOENT`: creating a vault
    ///   in a missing folder, storing an attachment from a missing file,
    ///   opening a missing vault; code `io`, `.unavailable`): "The file or
    ///   folder is not there. Check that it exists, or wait until it has
    ///   downloaded."
    /// - a folder where a file was expected (`EISDIR`: a folder picked as an
    ///   attachment; code `io`): "That is a folder, not a file. Choose a
    ///   file."
    ///
    /// English; an app that localizes maps ``category`` (and these codes)
    /// to its own strings. ``message`` has the details.
    @_spi(Format) public var errorDescription: String? { sentence }

    /// The sentence of ``errorDescription``: by code for the errors listed
    /// there, else by category.
    var sentence: String {
        switch code {
        case "wrong_device_key", "no_device_key":
            "This device has not been added to this journal. Add it from a device that opens the journal, or open it with the recovery key."
        case "device_code_invalid": "This device code is not valid. Check it and type it again."
        case "recovery_code_invalid":
            "This recovery key is not valid. Check each character against the recovery key you kept and type it again."
        case "not_a_vault": "This file is not a Quire journal. Choose the journal's .quire file."
        case "unsupported_version", "unsupported_feature", "unknown_critical_kind":
            "This version of the app cannot read this journal's format. Update the app to open it."
        case "not_restorable": "This entry can no longer be restored: its text was removed when the journal was compacted."
        case "attachment_not_stored":
            "A photo or file in this entry is not stored in the journal. Remove it from the entry, or add it again."
        case "different_vaults":
            "The chosen file is a copy of another journal, so it cannot be merged into this one. Choose a copy of this journal."
        case "source_failed": "The attachment could not be read, so it was not added. Try adding it again."
        case "key_store_unavailable": "This device's key cannot be used while the device is locked. Unlock it and try again."
        default:
            switch layer.errorNumber {
            case ENOENT: "The file or folder is not there. Check that it exists, or wait until it has downloaded."
            case EISDIR: "That is a folder, not a file. Choose a file."
            default: category.sentence
            }
        }
    }
}

extension QuireError {
    /// The source of an attachment (a ``ByteSource`` of the app's) could not
    /// be read: category ``Category/unavailable``, code `source_failed`.
    /// Throw it from `ByteSource.read(into:)`; the attachment is not
    /// stored and the commit that stored it writes nothing.
    ///
    /// - Parameter reason: what failed, for the log (``message``).
    public static func sourceFailed(_ reason: String) -> QuireError {
        QuireError(category: .unavailable, code: "source_failed", message: "the attachment's source could not be read: \(reason)")
    }

    /// The device's key store cannot be read or written now, though it may
    /// be later (a Keychain while the device is locked,
    /// `errSecInteractionNotAllowed`): category ``Category/unavailable``,
    /// code `key_store_unavailable`. Throw it from a device key store of the
    /// app's; try again when the device is unlocked.
    ///
    /// - Parameter reason: what failed, for the log (``message``).
    public static func keyStoreUnavailable(_ reason: String) -> QuireError {
        QuireError(
            category: .unavailable, code: "key_store_unavailable",
            message: "this device's key store cannot be used now: \(reason)")
    }
}

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
        /// list of entries the caller kept is stale: try again later.
        case busy
        /// The storage is full: no space left (`ENOSPC`), the disk quota is
        /// used up (`EDQUOT`), or guarded memory for keys ran out.
        case outOfSpace
        /// The file is missing, not downloaded yet (a cloud placeholder),
        /// not a vault, of a newer format version, changed underneath the
        /// handle, or the storage failed; the device's key store cannot be
        /// used now (`key_store_unavailable`: a Keychain while the device is
        /// locked); or an attachment's source failed (`source_failed`): try
        /// again when it is there. A file that is not a vault at all
        /// (`not_a_vault`) has its own sentence: choose another file.
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
        /// copy. A bug to fix in the caller, not something to show, except
        /// another vault's copy picked to merge (`different_vaults`), whose
        /// sentence says so.
        case programmerError

        /// The short sentence of ``QuireError/errorDescription``.
        var sentence: String {
            switch self {
            case .wrongCredential: "The passphrase or key does not open this journal."
            case .notFound: "This entry or attachment is not in the journal."
            case .busy: "The journal is busy. Try again in a moment."
            case .outOfSpace: "There is not enough storage space left."
            case .unavailable: "The journal cannot be reached right now. Try again later."
            case .damaged: "Part of the journal is damaged and cannot be read."
            case .needsMerge: "This copy of the journal must be merged with a newer copy before it can be changed."
            case .readOnly: "This journal can be read but not changed here."
            case .cancelled: "The operation was cancelled. Nothing was changed."
            case .programmerError: "The app asked for something the journal cannot do."
            }
        }
    }
}

/// The error of one layer that a ``QuireError`` carries: each layer's error
/// type (`CryptoError`, `FormatError`, `KeyError`, `DeviceStoreError`,
/// `SyncError`, `VaultError`) conforms, with its total mapping to a category.
package protocol QuireErrorLayer: Error, Sendable, CustomStringConvertible {
    /// The stable snake_case code.
    var code: String { get }
    /// What an app can do about it.
    var category: QuireError.Category { get }
    /// The byte offset in the vault file it is about, or nil.
    var offset: UInt64? { get }
    /// True when `other` is the same error with the same details.
    func isSame(as other: any QuireErrorLayer) -> Bool
    /// The `errno` of the failed system call this error carries (such as
    /// `ENOENT` for a missing file or folder), or nil.
    var errorNumber: Int32? { get }
}

extension QuireErrorLayer {
    /// None: the error is not a failed system call.
    package var errorNumber: Int32? { nil }
}

extension QuireErrorLayer where Self: Equatable {
    package func isSame(as other: any QuireErrorLayer) -> Bool { (other as? Self) == self }
}

/// An error of the caller's own that a call taking a closure (`Vault.commit`)
/// caught: category ``QuireError/Category/cancelled``, code `commit_abandoned`.
struct CallerError: QuireErrorLayer {
    let error: any Error
    var code: String { "commit_abandoned" }
    var category: QuireError.Category { .cancelled }
    var offset: UInt64? { nil }
    var description: String { "the commit was abandoned: \(error)" }
    func isSame(as other: any QuireErrorLayer) -> Bool {
        guard let other = other as? CallerError else { return false }
        return String(reflecting: other.error) == String(reflecting: error)
    }
}

extension QuireError {
    /// `error` as a `QuireError`: itself when it is one, else the caller's
    /// own error wrapped (``underlyingError``).
    package static func wrapping(_ error: any Error) -> QuireError {
        if let e = error as? QuireError { return e }
        return QuireError(layer: CallerError(error: error))
    }

    /// The error of the app's own that its closure threw inside
    /// `Vault.commit`, which wrapped it in this `QuireError` (category
    /// ``Category/cancelled``, code `commit_abandoned`); nil otherwise.
    public var underlyingError: (any Error)? { (layer as? CallerError)?.error }
}

/// An error an app made with ``QuireError/init(category:code:message:)``.
struct MadeError: QuireErrorLayer, Equatable {
    let category: QuireError.Category
    let code: String
    let message: String
    var offset: UInt64? { nil }
    var description: String { message }
}

extension CryptoError: QuireErrorLayer {
    /// The crypto layer's code.
    package var code: String {
        switch self {
        case .authenticationFailed: "authentication_failed"
        case .badSignature: "bad_signature"
        case .wrongLength: "wrong_length"
        case .invalidPublicKey: "invalid_public_key"
        case .passwordHashFailed: "kdf_failed"
        case .outOfSecureMemory: "out_of_guarded_memory"
        }
    }

    /// The crypto layer's part of ``QuireError/category``.
    package var category: QuireError.Category {
        switch self {
        case .authenticationFailed: .damaged
        case .badSignature: .damaged
        case .wrongLength, .invalidPublicKey: .programmerError
        case .passwordHashFailed(_, _): .outOfSpace
        case .outOfSecureMemory: .outOfSpace
        }
    }

    package var offset: UInt64? { nil }
}

extension SystemError {
    /// A failed system call's part of ``QuireError/category``, by `errno`.
    package var category: QuireError.Category {
        if isOutOfSpace { return .outOfSpace }
        if isBusy { return .busy }
        if isReadOnlyFileSystem { return .readOnly }
        if isInvalidArgument { return .programmerError }
        // ENOENT (missing, or evicted by a sync tool), EACCES, EIO and the
        // rest: the file cannot be reached now.
        return .unavailable
    }
}

extension QuireError {
    /// The crypto layer's `error` as a `QuireError`.
    package static func crypto(_ error: CryptoError) -> QuireError { QuireError(layer: error) }
}
