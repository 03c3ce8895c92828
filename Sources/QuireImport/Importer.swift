public import Foundation
@_spi(Format) public import Quire
import QuireDayOne
import QuireSystem
import QuireZip

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
    public init(done: Int, total: Int?) {
        self.done = done
        self.total = total
    }
}

/// Errors that stop an import. One bad entry or attachment never throws: it
/// is listed in ``ImportReport/skipped``.
///
/// Show `localizedDescription` (`LocalizedError`): one sentence saying what
/// failed and what to do, never entry text nor a secret. ``category`` is the
/// ``QuireError/Category`` of the vault error an import wraps; log ``code``
/// and `description` for the detail.
public enum ImportError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The source cannot be read or is not of the named format: path and
    /// reason. Nothing was written.
    case unreadableSource(path: String, reason: String)
    /// The vault refused a write, or the import was cancelled
    /// (``QuireError/Category/cancelled``). The batches committed before it
    /// stay; importing again writes only what is missing.
    case vault(QuireError)

    /// The stable, machine-readable name of the error.
    public var code: String {
        switch self {
        case .unreadableSource: "import_unreadable_source"
        case .vault(let e): e.code
        }
    }

    /// What an app can do about a vault error (``vault(_:)``): its
    /// ``QuireError/category``, such as ``QuireError/Category/cancelled``
    /// for a cancelled import; nil for ``unreadableSource(path:reason:)``,
    /// which is about the source, not the vault.
    public var category: QuireError.Category? {
        if case .vault(let e) = self { return e.category }
        return nil
    }

    /// A message a person can act on (no secrets).
    public var description: String {
        switch self {
        case .unreadableSource(let path, let reason): "cannot import \(path): \(reason)"
        case .vault(let e): e.description
        }
    }
}

extension ImportError: LocalizedError {
    /// The last component of `path`: what an alert names a source by.
    static func fileName(_ path: String) -> String { URL(fileURLWithPath: path).lastPathComponent }

    /// One or two sentences for a person (an alert): what failed, what was
    /// kept, and what to do. It names the source by its file name (the
    /// whole path, which in an app is a container's, is in `description`)
    /// and the reason, never entry text nor a secret. English; an app that localizes maps the case
    /// and ``category`` to its own strings.
    public var errorDescription: String? {
        switch self {
        case .unreadableSource(let path, let reason):
            "Nothing was imported: “\(Self.fileName(path))” could not be read as this kind of export "
                + "(\(reason.replacingOccurrences(of: path, with: "“\(Self.fileName(path))”"))). "
                + "Check that you chose the export file or folder and its format."
        case .vault(let e) where e.category == .cancelled:
            "The import was cancelled. Entries imported before it are kept; importing the same export again adds only the rest."
        case .vault(let e):
            "The import stopped: \(e.localizedDescription) Entries imported before it are kept; importing the same export again adds only the rest."
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
    /// Entries the vault holds in a newer version (a later modification
    /// time) or has deleted: nothing written, the vault's version kept.
    public var entriesNotNewer = 0
    /// Entries that appeared more than once in the export (the same uuid):
    /// the version modified last is kept, as one entry.
    public var duplicatesMerged = 0
    /// Attachments stored (a blob already in the vault counts once).
    public var attachmentsStored = 0
    /// Media items whose content the vault already held: referenced, not stored again.
    public var attachmentsDeduplicated = 0
    /// Media items listed by an entry whose file is not in the export (each
    /// listed in ``missingMedia``, not in ``skipped``); the entry keeps the
    /// item's metadata.
    public var attachmentsMissing = 0
    /// Attached media items the entry's text does not link to: kept as
    /// attachments all the same.
    public var unreferencedAttachments = 0
    /// Journal names seen, in first-seen order.
    public var journals: [String] = []
    /// Items not imported (entries, attachment files, journal files) and
    /// entry fields not mapped as written, each with its reason.
    public var skipped: [SkippedItem] = []
    /// Media items an entry lists whose file is not in the export, each with
    /// the file expected: the entry itself was imported, keeping the
    /// item's metadata (counted in ``attachmentsMissing``).
    public var missingMedia: [SkippedItem] = []
    /// What the import decided on the person's behalf, entry by entry: a
    /// time zone inferred (`Spec/import.md §4`), a link to an entry that is
    /// neither in the export nor in the vault kept as written (§3.4). The
    /// entries were imported; these say how to read them.
    public var notes: [SkippedItem] = []
    public init() {}
}

/// One item an import skipped and why.
public struct SkippedItem: Sendable, Equatable {
    /// Where it was: a file, or a file and an entry id.
    public var item: String
    /// Why, in words a person can act on.
    public var reason: String
    public init(item: String, reason: String) {
        self.item = item
        self.reason = reason
    }
}

/// Imports `format` from `path` into `vault` (`Spec/import.md`), blocking
/// the calling thread: for the CLI and tests. An app calls the `async` form,
/// ``importJournal(_:from:into:options:progress:)``, which runs on the
/// vault's executor and can be cancelled.
///
/// Entries are committed in batches as they are read; one bad entry or
/// attachment is skipped and listed in ``ImportReport/skipped``. Importing
/// the same export again writes nothing; a changed entry becomes a new
/// revision of the same entry.
///
/// The import changes no setting of `vault`. Its memory grows with the
/// vault's text unless the vault was opened with `retainsEntryBodies: false`
/// (``Vault/open(at:credential:writable:random:options:retainsEntryBodies:)``),
/// as the CLI opens it (`Spec/import.md §7`).
///
/// - Parameter path: for ``ImportFormat/dayOne`` a ZIP archive, its unzipped
///   folder, or one `<Journal>.json` file.
/// - Throws: ``ImportError/unreadableSource(path:reason:)`` when `path`
///   cannot be opened as that format (nothing written);
///   ``ImportError/vault(_:)`` when the vault refuses a write (batches
///   committed before it stay).
@_spi(Format) public func importJournal(
    _ format: ImportFormat, from path: String, into vault: Vault,
    options: ImportOptions = ImportOptions(),
    progress: (ImportProgress) -> Void = { _ in }
) throws(ImportError) -> ImportReport {
    return try withoutActuallyEscaping(progress) { (progress) throws(ImportError) -> ImportReport in
        let files = try exportFiles(at: path, format: format)
        let name = URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent
        switch format {
        case .dayOne:
            let zone = options.timeZone ?? TimeZone.current.identifier
            return try DayOneImporter(vault: vault, files: files, defaultTimeZone: zone, progress: progress).run(
                source: path, singleFile: files.isSingleFile)
        case .dayOneClassic:
            var journal = options.journal ?? "Journal"
            if options.journal == nil {
                let url = URL(fileURLWithPath: path)
                if url.pathExtension == "dayone" { journal = name }
                if url.lastPathComponent == "entries", url.deletingLastPathComponent().pathExtension == "dayone" {
                    journal = url.deletingLastPathComponent().deletingPathExtension().lastPathComponent
                }
            }
            let zone = options.timeZone ?? TimeZone.current.identifier
            return try ClassicImporter.run(
                source: path, files: files, journal: journal, defaultTimeZone: zone, vault: vault, progress: progress)
        case .jrnl:
            let zone = options.timeZone ?? TimeZone.current.identifier
            return try JrnlImporter.run(
                source: path, files: files, journal: options.journal ?? name, timeZone: zone, vault: vault, progress: progress)
        case .markdown:
            return try MarkdownImporter.run(source: path, files: files, vault: vault, progress: progress)
        }
    }
}

/// Choices for an import.
public struct ImportOptions: Sendable, Equatable {
    /// The IANA zone in which to read times that carry no zone (jrnl's
    /// `date` and `time`), and the zone of Day One entries that name none
    /// usable, neither themselves nor in their location (`Spec/import.md
    /// §4`); nil: the system's current zone.
    public var timeZone: String?
    /// The journal name for formats that do not name one (jrnl); nil: the
    /// file name without its extension.
    public var journal: String?

    /// Options with the given fields.
    public init(timeZone: String? = nil, journal: String? = nil) {
        self.timeZone = timeZone
        self.journal = journal
    }
}

/// The files of the export at `path`: a folder, a ZIP archive, or one file.
///
/// A Day One folder is read three levels deep at most (a wrapping folder,
/// a media folder, its files), so a wrong folder is not walked whole. A
/// jrnl source that is a file is always read as that one file (jrnl writes
/// JSON, never a ZIP).
func exportFiles(at path: String, format: ImportFormat) throws(ImportError) -> any ExportFiles {
    var isDirectory: ObjCBool = false
    guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
        throw .unreadableSource(path: path, reason: "no such file or folder")
    }
    if isDirectory.boolValue { return FolderExportFiles(root: path, maxDepth: format == .dayOne ? 3 : nil) }
    let lower = path.lowercased()
    if lower.hasSuffix(".json") || lower.hasSuffix(".doentry") || format == .jrnl { return FolderExportFiles(file: path) }
    do { return try ZipExportFiles(path: path) } catch { throw .unreadableSource(path: path, reason: error.description) }
}
