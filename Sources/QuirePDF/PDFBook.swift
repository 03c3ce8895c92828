public import Quire
public import QuireExport

/// Writes the entries `filter` selects as an A5 PDF book to `path`.
///
/// - Throws: ``ExportError``; nothing is left at `path` on failure.
public func exportPDFBook(
    _ vault: Vault, to path: String, filter: ExportFilter = ExportFilter(),
    progress: (ExportProgress) -> Void = { _ in }
) throws(ExportError) -> ExportReport {
    throw .notImplemented("pdf")
}
