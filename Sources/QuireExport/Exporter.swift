public import Foundation
@_spi(Format) public import Quire
import QuireSystem
public import QuireZip

/// The formats `quire export` writes, except PDF (`QuirePDF`).
public enum ExportFormat: String, CaseIterable, Sendable {
    /// A folder of Markdown files with YAML front matter and a media folder.
    case markdown = "md"
    /// One JSON document (`Spec/export-json.md`).
    case json
    /// A ZIP shaped like a Day One JSON export.
    case dayOne = "dayone"
    /// One self-contained HTML file.
    case html
    /// An EPUB 3 book.
    case epub
}

/// Which entries an export takes. Empty lists mean "all".
public struct ExportFilter: Sendable, Equatable {
    /// Entries created at or after this instant: milliseconds since 1970,
    /// UTC (``since`` as the container stores it).
    @_spi(Format) public var sinceMilliseconds: Int64?
    /// Entries created before this instant: milliseconds since 1970, UTC
    /// (``until`` as the container stores it).
    @_spi(Format) public var untilMilliseconds: Int64?
    /// Entries with at least one of these tags, compared case-insensitively
    /// (`String.lowercased()`), as a timeline's ``EntryQuery/tags`` and the
    /// keys of `tagCounts()`: `food` selects an entry tagged `Food`.
    public var tags: [String]
    /// Entries in one of these journals, compared case-insensitively (`""`
    /// is the main journal), as ``EntryQuery/journal`` and the keys of
    /// `journalCounts()`.
    public var journals: [String]
    /// Entries whose date in their own calendar is in this range, as a
    /// timeline's ``EntryQuery/from`` and ``EntryQuery/through`` read it
    /// (an entry written at 23:30 at UTC+10 is on that local day, wherever
    /// the export runs); nil: any day. To export what a timeline shows for
    /// one day, give that day as both bounds: `day...day`.
    public var days: ClosedRange<EntryQuery.Day>?

    /// Entries created at or after this instant (to the millisecond, as the
    /// vault stores times; a finer part is dropped).
    public var since: Date? {
        get { sinceMilliseconds.map(Self.date) }
        set { sinceMilliseconds = newValue.map(Self.milliseconds) }
    }

    /// Entries created before this instant (to the millisecond, as the
    /// vault stores times; a finer part is dropped).
    public var until: Date? {
        get { untilMilliseconds.map(Self.date) }
        set { untilMilliseconds = newValue.map(Self.milliseconds) }
    }

    /// A filter; the defaults take every entry.
    public init(since: Date? = nil, until: Date? = nil, tags: [String] = [], journals: [String] = []) {
        self.init(
            sinceMilliseconds: since.map(Self.milliseconds), untilMilliseconds: until.map(Self.milliseconds), tags: tags,
            journals: journals)
    }

    /// A filter with its bounds in milliseconds since 1970, UTC (the CLI's
    /// `--since` and `--until`).
    @_spi(Format) public init(sinceMilliseconds: Int64?, untilMilliseconds: Int64? = nil, tags: [String] = [], journals: [String] = []) {
        self.sinceMilliseconds = sinceMilliseconds
        self.untilMilliseconds = untilMilliseconds
        self.tags = tags
        self.journals = journals
    }

    /// `date` in whole milliseconds since 1970, rounded down.
    static func milliseconds(_ date: Date) -> Int64 {
        let ms = (date.timeIntervalSince1970 * 1000).rounded(.down)
        return ms.isFinite ? Int64(max(min(ms, 9.2e18), -9.2e18)) : 0
    }

    /// The instant `ms` milliseconds after 1970, UTC.
    static func date(_ ms: Int64) -> Date { Date(timeIntervalSince1970: Double(ms) / 1000) }
}

/// How far an export has got, for a progress bar.
public struct ExportProgress: Sendable, Equatable {
    /// Entries written so far.
    public var done: Int
    /// Entries in total.
    public var total: Int
    /// Progress of `done` entries out of `total`.
    public init(done: Int, total: Int) {
        self.done = done
        self.total = total
    }
}

/// What an export wrote.
public struct ExportReport: Sendable, Equatable {
    /// Entries written.
    public var entries = 0
    /// Attachments written.
    public var attachments = 0
    /// Bytes written in total.
    public var bytes: UInt64 = 0
    /// Attachment references whose content the vault does not hold (a
    /// damaged or partial copy): their metadata is exported, their bytes
    /// cannot be.
    public var missingAttachments = 0
    /// Attachments the PDF book names instead of drawing them: other media
    /// types, and images that are damaged, not the JPEG or PNG their type
    /// says, or over the size limits. 0 for every other format.
    public var attachmentsNotShown = 0
    /// An empty report.
    public init() {}
}

/// Errors that stop an export. Nothing partial is left at the output path.
///
/// Show `localizedDescription` (`LocalizedError`): one sentence saying what
/// failed and what to do, never entry text nor a secret. ``category`` is the
/// ``QuireError/Category`` of the vault error an export wraps; log ``code``
/// and `description` for the detail.
public enum ExportError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The output path cannot be written: path and reason.
    case cannotWrite(path: String, reason: String)
    /// The vault could not be read, or the export was cancelled
    /// (``QuireError/Category/cancelled``).
    case vault(QuireError)
    /// The ZIP archive could not be written.
    case zip(ZipError)

    /// The stable, machine-readable name of the error.
    public var code: String {
        switch self {
        case .cannotWrite: "export_cannot_write"
        case .vault(let e): e.code
        case .zip(let e): e.code
        }
    }

    /// What an app can do about a vault error (``vault(_:)``): its
    /// ``QuireError/category``, such as ``QuireError/Category/cancelled``
    /// for a cancelled export; nil for ``cannotWrite(path:reason:)`` and
    /// ``zip(_:)``, which are about the output, not the vault.
    public var category: QuireError.Category? {
        if case .vault(let e) = self { return e.category }
        return nil
    }

    /// A message a person can act on (no secrets).
    public var description: String {
        switch self {
        case .cannotWrite(let path, let reason): "cannot write \(path): \(reason)"
        case .vault(let e): e.description
        case .zip(let e): e.description
        }
    }
}

extension ExportError: LocalizedError {
    /// One or two sentences for a person (an alert): what failed, that
    /// nothing was saved, and what to do. For ``cannotWrite(path:reason:)``
    /// it names the output by its file name and says why in words (its
    /// folder is not there, no space is left, the folder cannot be written
    /// to, the name is taken); the full path and the system's reason are in
    /// `description`. Never entry text nor a secret. English; an app that
    /// localizes maps the case and ``category`` to its own strings.
    public var errorDescription: String? {
        switch self {
        case .cannotWrite(let path, let reason):
            Self.notSaved(path, reason: reason)
        case .vault(let e) where e.category == .cancelled:
            "The export was cancelled; nothing was saved."
        case .vault(let e):
            "The export stopped and nothing was saved: \(e.localizedDescription)"
        case .zip:
            "The export could not write its archive, so nothing was saved. Check that the disk has space free and try again."
        }
    }
}

extension ExportError {
    /// The sentence of ``cannotWrite(path:reason:)``: chosen by the error
    /// number `reason` ends with (a ``SystemError``'s reason), naming the
    /// output by its file name only.
    static func notSaved(_ path: String, reason: String) -> String {
        let last = path.split(separator: "/").last.map(String.init) ?? path
        let name = "\u{201C}\(last)\u{201D}"
        return switch SystemError.errorNumber(endingReason: reason) {
        case ENOENT, ENOTDIR: "Nothing was saved: the folder chosen for \(name) is not there. Choose a folder that exists."
        case ENOSPC, EDQUOT: "Nothing was saved: there is not enough storage space for \(name). Free some space, or choose another place."
        case EACCES, EPERM, EROFS: "Nothing was saved: \(name) cannot be written in that folder. Choose a folder you can write to."
        case EEXIST: "Nothing was saved: something named \(name) is already there. Choose another name."
        default: "Nothing was saved: \(name) could not be written. Choose a folder that exists and that you can write to, with space free."
        }
    }
}

/// Choices that apply to some formats. The defaults suit `quire export`.
public struct ExportOptions: Sendable, Equatable {
    /// JSON only: also write attachment files into a sibling folder
    /// `<output>.media/` and name them in each attachment's `path`
    /// (`Spec/export-json.md §4.4`). Default false: attachments are
    /// described (blob id, type, name, size) but their bytes are omitted.
    public var jsonMedia: Bool
    /// The book's title (HTML, EPUB); nil means the vault profile's name,
    /// else "Journal".
    public var title: String?
    /// EPUB and HTML language (BCP 47, such as `"en"`); nil means guessed
    /// from the text (`en`, `ru`, `zh`, `ja`, …, else `und`).
    public var language: String?
    /// HTML and EPUB: the locale of the book's headings, contents page and
    /// dates (a BCP 47 or ICU identifier such as `zh-Hans` or `ru`); nil
    /// means the profile's `settings["locale"]`, else the system's
    /// (``BookLocale``).
    public var locale: String?
    /// Attachments whose bytes cannot be read (a damaged chunk): exported
    /// as missing ones are (their details, not their bytes), but not counted
    /// in ``ExportReport/missingAttachments`` — the caller reports them as
    /// records it could not read (a partial export).
    public var unreadableAttachments: Set<BlobID> = []

    /// Options with the given values.
    public init(jsonMedia: Bool = false, title: String? = nil, language: String? = nil, locale: String? = nil) {
        self.jsonMedia = jsonMedia
        self.title = title
        self.language = language
        self.locale = locale
    }
}

/// Exports the entries of `vault` that `filter` selects to `path` in `format`.
///
/// Every format writes under a temporary name beside `path` and renames it
/// into place when complete; on any failure the temporary is removed and
/// nothing is left at `path`. A Markdown folder export refuses an existing
/// `path`; the single-file formats replace it. Nothing decrypted is written
/// anywhere else. `progress` is called after every entry (`done` counts
/// entries written, `total` the entries selected), first with `done == 0`.
///
/// The export reads entries through an ``EntryCatalog`` (no body kept) and
/// changes no setting of `vault`; open the vault with `retainsEntryBodies:
/// false` for memory independent of the journal's size
/// (`Spec/export-json.md §1`).
///
/// This form blocks its thread; apps call the `async` form.
///
/// - Throws: ``ExportError``: ``ExportError/vault(_:)`` when the vault
///   cannot be read, ``ExportError/cannotWrite(path:reason:)`` for the
///   output, ``ExportError/zip(_:)`` for EPUB and Day One archives.
@_spi(Format) public func exportJournal(
    _ vault: Vault, format: ExportFormat, to path: String, filter: ExportFilter = ExportFilter(),
    progress: (ExportProgress) -> Void = { _ in }
) throws(ExportError) -> ExportReport {
    try exportJournal(vault, format: format, to: path, filter: filter, options: ExportOptions(), progress: progress)
}

/// ``exportJournal(_:format:to:filter:progress:)`` with ``ExportOptions``.
///
/// - Throws: ``ExportError``, as there.
@_spi(Format) public func exportJournal(
    _ vault: Vault, format: ExportFormat, to path: String, filter: ExportFilter = ExportFilter(), options: ExportOptions,
    progress: (ExportProgress) -> Void = { _ in }
) throws(ExportError) -> ExportReport {
    let entries = try selectEntries(vault, filter: filter)
    progress(ExportProgress(done: 0, total: entries.count))
    let result: Result<ExportReport, ExportError> = withoutActuallyEscaping(progress) { escapable in
        var context = ExportContext(vault: vault, entries: entries, options: options, progress: escapable)
        do throws(ExportError) {
            switch format {
            case .markdown: try MarkdownFolderExporter.export(&context, to: path)
            case .json: try JSONExporter.export(&context, to: path)
            case .html: try HTMLExporter.export(&context, to: path)
            case .epub: try EPUBExporter.export(&context, to: path)
            case .dayOne: try DayOneExporter.export(&context, to: path)
            }
        } catch {
            return .failure(error)
        }
        return .success(context.report)
    }
    let report = try result.get()
    try checkReadBack(entries, output: path)
    return report
}
