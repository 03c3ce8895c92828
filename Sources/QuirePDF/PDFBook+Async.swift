@_spi(Format) public import Quire
public import QuireExport

/// Writes the entries `filter` selects as a PDF book to `path`, on the
/// vault's own serial executor: ``writePDFBook(_:to:filter:locale:progress:)``
/// in `async` form, cancellable.
///
/// Cancelling the task, or answering ``ProgressReply/cancel`` from
/// `progress`, stops at the next entry laid out or drawn; the temporary
/// file is removed and nothing is left at `path`.
///
/// - Parameter progress: called on the vault's executor with `done` 0
///   before the measuring pass, then after each entry drawn.
/// - Throws: as the synchronous form; ``ExportError/vault(_:)`` with
///   ``QuireError/cancelled`` when cancelled.
public func writePDFBook(
    _ vault: Vault, to path: String, filter: ExportFilter = ExportFilter(), locale: String? = nil,
    progress: @escaping @Sendable (ExportProgress) -> ProgressReply = { _ in .proceed }
) async throws(ExportError) -> PDFBookReport {
    try await VaultCancellation.withProgress { (reply) async throws(ExportError) -> PDFBookReport in
        try await vault.perform(
            { () throws(ExportError) -> PDFBookReport in
                try writePDFBook(vault, to: path, filter: filter, locale: locale) { reply(progress($0)) }
            }, cancelled: { .vault(.cancelled) })
    }
}
