@_spi(Format) public import Quire

/// Exports the entries of `vault` that `filter` selects to `path` in
/// `format`, on the vault's own serial executor, never on the caller's
/// actor: the export of `exportJournal(_:format:to:filter:options:progress:)`
/// without a progress handler, cancellable.
///
/// Cancelling the task stops after the entry being written; the temporary
/// output is removed and nothing is left at `path`.
///
/// - Throws: ``ExportError``: ``ExportError/vault(_:)`` when the vault
///   cannot be read (with ``QuireError/cancelled`` when cancelled),
///   ``ExportError/cannotWrite(path:reason:)`` for the output,
///   ``ExportError/zip(_:)`` for EPUB and Day One archives.
public func exportJournal(
    _ vault: Vault, format: ExportFormat, to path: String, filter: ExportFilter = ExportFilter()
) async throws(ExportError) -> ExportReport {
    try await exportJournal(vault, format: format, to: path, filter: filter, options: ExportOptions()) { _ in .proceed }
}

/// ``exportJournal(_:format:to:filter:)`` with ``ExportOptions``.
///
/// - Throws: as there.
public func exportJournal(
    _ vault: Vault, format: ExportFormat, to path: String, filter: ExportFilter = ExportFilter(), options: ExportOptions
) async throws(ExportError) -> ExportReport {
    try await exportJournal(vault, format: format, to: path, filter: filter, options: options) { _ in .proceed }
}

/// Exports the entries of `vault` that `filter` selects to `path` in
/// `format`, on the vault's own serial executor, never on the caller's
/// actor, reporting progress; cancellable.
///
/// Every format writes under a temporary name beside `path` and renames it
/// into place when complete; on any failure the temporary is removed and
/// nothing is left at `path`. A Markdown folder export refuses an existing
/// `path`; the single-file formats replace it (`Spec/export-json.md`).
///
/// Cancelling the task, or answering ``ProgressReply/cancel`` from
/// `progress`, stops after the entry being written; the temporary output is
/// removed and nothing is left at `path`.
///
/// - Parameter progress: called on the vault's executor first with
///   `done == 0`, then after each entry; its answer goes on or stops.
/// - Throws: as ``exportJournal(_:format:to:filter:options:)``;
///   ``ExportError/vault(_:)`` with ``QuireError/cancelled`` when cancelled.
public func exportJournal(
    _ vault: Vault, format: ExportFormat, to path: String, filter: ExportFilter = ExportFilter(), options: ExportOptions = ExportOptions(),
    progress: @escaping @Sendable (ExportProgress) -> ProgressReply
) async throws(ExportError) -> ExportReport {
    try await performExport(on: vault, progress: progress) { (report) throws(ExportError) -> ExportReport in
        try exportJournal(vault, format: format, to: path, filter: filter, options: options, progress: report)
    }
}

/// Runs `work`, a blocking export, on `vault`'s own serial executor, never
/// on the caller's actor: `work` gets a handler to report progress with,
/// which calls `progress` and stops the export when it answers
/// ``ProgressReply/cancel``; cancelling the task stops it too
/// (``ExportError/vault(_:)`` with ``QuireError/cancelled``). The async
/// forms of the export and of the PDF book.
package func performExport<R: Sendable>(
    on vault: Vault, progress: @escaping @Sendable (ExportProgress) -> ProgressReply,
    _ work: @escaping @Sendable (_ report: (ExportProgress) -> Void) throws(ExportError) -> R
) async throws(ExportError) -> R {
    try await VaultCancellation.withProgress { (reply) async throws(ExportError) -> R in
        try await vault.perform({ () throws(ExportError) -> R in try work { reply(progress($0)) } }, cancelled: { .vault(.cancelled) })
    }
}
