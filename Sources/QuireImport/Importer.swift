public import Quire

/// The source formats `quire import` reads (`Spec/import.md`).
public enum ImportFormat: String, CaseIterable, Sendable {
    /// A Day One JSON export: a ZIP or its unzipped folder.
    case dayOne = "dayone"
    /// A Day One Classic `Journal.dayone` folder of `.doentry` property lists.
    case dayOneClassic = "dayone-classic"
    /// A jrnl JSON export (`jrnl --export json`).
    case jrnl
    /// A folder of Markdown files with YAML front matter (the Markdown export's shape).
    case markdown
}

/// How far an import has got, for a progress bar.
public struct ImportProgress: Sendable, Equatable {
    /// Items (entries and attachments) handled so far.
    public var done: Int
    /// Items in total, when known.
    public var total: Int?
    public init(done: Int, total: Int?) { self.done = done; self.total = total }
}

/// Errors that stop an import before it changes anything. One bad entry or
/// attachment never throws: it is listed in ``ImportReport/skipped``.
public enum ImportError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The source cannot be read or is not of the named format: path and reason.
    case unreadableSource(path: String, reason: String)
    /// The vault refused a write.
    case vault(VaultError)
    /// Not yet implemented (issue 6).
    case notImplemented(ImportFormat)

    /// The stable, machine-readable name of the error.
    public var code: String {
        switch self {
        case .unreadableSource: "import_unreadable_source"
        case .vault(let e): e.code
        case .notImplemented: "not_implemented"
        }
    }

    public var description: String {
        switch self {
        case .unreadableSource(let path, let reason): "cannot import \(path): \(reason)"
        case .vault(let e): e.description
        case .notImplemented(let f): "importing \(f.rawValue) is not built yet (issue 6)"
        }
    }
}

/// What an import did.
public struct ImportReport: Sendable, Equatable {
    /// Entries new to the vault.
    public var entriesAdded = 0
    /// Entries already in the vault whose content changed: a new revision each.
    public var entriesUpdated = 0
    /// Entries already in the vault unchanged: nothing written.
    public var entriesUnchanged = 0
    /// Attachments stored (a blob already in the vault counts once).
    public var attachmentsStored = 0
    /// Journal names seen, in first-seen order.
    public var journals: [String] = []
    /// Items skipped, each with its reason.
    public var skipped: [SkippedItem] = []
    public init() {}
}

/// One item an import skipped and why.
public struct SkippedItem: Sendable, Equatable {
    /// Where it was: a file, or a file and an entry id.
    public var item: String
    /// Why, in words a person can act on.
    public var reason: String
    public init(item: String, reason: String) { self.item = item; self.reason = reason }
}

/// Imports `format` from `path` into `vault`.
///
/// - Throws: ``ImportError``; the vault is unchanged unless entries were committed.
public func importJournal(
    _ format: ImportFormat, from path: String, into vault: Vault,
    progress: (ImportProgress) -> Void = { _ in }
) throws(ImportError) -> ImportReport {
    throw .notImplemented(format)
}
