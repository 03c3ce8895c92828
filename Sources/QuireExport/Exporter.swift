public import Quire

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
    /// Entries created at or after this instant: milliseconds since 1970, UTC.
    public var since: Int64?
    /// Entries created before this instant: milliseconds since 1970, UTC.
    public var until: Int64?
    /// Entries with at least one of these tags.
    public var tags: [String]
    /// Entries in one of these journals.
    public var journals: [String]
    public init(since: Int64? = nil, until: Int64? = nil, tags: [String] = [], journals: [String] = []) {
        self.since = since; self.until = until; self.tags = tags; self.journals = journals
    }
}

/// How far an export has got, for a progress bar.
public struct ExportProgress: Sendable, Equatable {
    /// Entries written so far.
    public var done: Int
    /// Entries in total.
    public var total: Int
    public init(done: Int, total: Int) { self.done = done; self.total = total }
}

/// What an export wrote.
public struct ExportReport: Sendable, Equatable {
    /// Entries written.
    public var entries = 0
    /// Attachments written.
    public var attachments = 0
    /// Bytes written in total.
    public var bytes: UInt64 = 0
    public init() {}
}

/// Errors that stop an export. Nothing partial is left at the output path.
public enum ExportError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The output path cannot be written: path and reason.
    case cannotWrite(path: String, reason: String)
    /// The vault could not be read.
    case vault(VaultError)
    /// Not yet implemented (issue 7).
    case notImplemented(String)

    /// The stable, machine-readable name of the error.
    public var code: String {
        switch self {
        case .cannotWrite: "export_cannot_write"
        case .vault(let e): e.code
        case .notImplemented: "not_implemented"
        }
    }

    public var description: String {
        switch self {
        case .cannotWrite(let path, let reason): "cannot write \(path): \(reason)"
        case .vault(let e): e.description
        case .notImplemented(let f): "exporting \(f) is not built yet (issue 7)"
        }
    }
}

/// Exports the entries of `vault` that `filter` selects to `path` in `format`.
///
/// - Throws: ``ExportError``; nothing is left at `path` on failure.
public func exportJournal(
    _ vault: Vault, format: ExportFormat, to path: String, filter: ExportFilter = ExportFilter(),
    progress: (ExportProgress) -> Void = { _ in }
) throws(ExportError) -> ExportReport {
    throw .notImplemented(format.rawValue)
}
