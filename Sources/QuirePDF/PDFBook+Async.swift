@_spi(Format) public import Quire
public import QuireExport

/// Writes the entries `filter` selects as a PDF book to `path`, on the
/// vault's own serial executor, never on the caller's actor: the book of
/// `writePDFBook(_:to:filter:locale:progress:)` without a progress
/// handler, cancellable.
///
/// Cancelling the task stops at the next entry laid out or drawn; the
/// temporary file is removed and nothing is left at `path`.
///
/// - Throws: ``ExportError/vault(_:)`` when the entries cannot be read
///   (with ``QuireError/cancelled`` when cancelled),
///   ``ExportError/cannotWrite(path:reason:)`` when the file cannot be
///   written or cairo fails.
public func writePDFBook(
    _ vault: Vault, to path: String, filter: ExportFilter = ExportFilter(), locale: String? = nil
) async throws(ExportError) -> PDFBookReport {
    try await writePDFBook(vault, to: path, filter: filter, locale: locale) { _ in .proceed }
}

/// Writes the entries `filter` selects as an A5 PDF book to `path`, on the
/// vault's own serial executor, never on the caller's actor, reporting
/// progress; cancellable. The layout, photos, fonts, determinism and memory
/// bounds are those of `Spec/export-json.md` (the PDF book).
///
/// Cancelling the task, or answering ``ProgressReply/cancel`` from
/// `progress`, stops at the next entry laid out or drawn; the temporary
/// file is removed and nothing is left at `path`.
///
/// - Parameter progress: called on the vault's executor with `done` 0
///   before the measuring pass, then after each entry drawn.
/// - Throws: as ``writePDFBook(_:to:filter:locale:)``;
///   ``ExportError/vault(_:)`` with ``QuireError/cancelled`` when cancelled.
public func writePDFBook(
    _ vault: Vault, to path: String, filter: ExportFilter = ExportFilter(), locale: String? = nil,
    progress: @escaping @Sendable (ExportProgress) -> ProgressReply
) async throws(ExportError) -> PDFBookReport {
    try await performExport(on: vault, progress: progress) { (report) throws(ExportError) -> PDFBookReport in
        try writePDFBook(vault, to: path, filter: filter, locale: locale, progress: report)
    }
}

/// Writes the entries `filter` selects as a PDF book to `path`, on the
/// vault's own serial executor, never on the caller's actor, and reports it
/// as the other export formats do (``ExportReport``: its `attachments` are
/// the distinct photos embedded); cancellable.
///
/// - Throws: as ``writePDFBook(_:to:filter:locale:)``.
public func exportPDFBook(
    _ vault: Vault, to path: String, filter: ExportFilter = ExportFilter(), locale: String? = nil
) async throws(ExportError) -> ExportReport {
    try await exportPDFBook(vault, to: path, filter: filter, locale: locale) { _ in .proceed }
}

/// ``exportPDFBook(_:to:filter:locale:)`` reporting progress: `progress` is
/// called on the vault's executor with `done` 0 before the measuring pass,
/// then after each entry drawn; answering ``ProgressReply/cancel`` stops
/// the book and leaves nothing at `path`.
///
/// - Throws: as ``writePDFBook(_:to:filter:locale:)``;
///   ``ExportError/vault(_:)`` with ``QuireError/cancelled`` when cancelled.
public func exportPDFBook(
    _ vault: Vault, to path: String, filter: ExportFilter = ExportFilter(), locale: String? = nil,
    progress: @escaping @Sendable (ExportProgress) -> ProgressReply
) async throws(ExportError) -> ExportReport {
    try await performExport(on: vault, progress: progress) { (report) throws(ExportError) -> ExportReport in
        try exportPDFBook(vault, to: path, filter: filter, locale: locale, progress: report)
    }
}
