@_spi(Format) public import Quire

/// Exports the entries of `vault` that `filter` selects to `path` in
/// `format`, on the vault's own serial executor:
/// ``exportJournal(_:format:to:filter:options:progress:)`` in `async` form,
/// cancellable.
///
/// Cancelling the task, or answering ``ProgressReply/cancel`` from
/// `progress`, stops after the entry being written; the temporary output is
/// removed and nothing is left at `path`.
///
/// - Parameter progress: called on the vault's executor first with
///   `done == 0`, then after each entry; its answer goes on or stops.
/// - Throws: as the synchronous form; ``ExportError/vault(_:)`` with
///   ``QuireError/cancelled`` when cancelled.
public func exportJournal(
    _ vault: Vault, format: ExportFormat, to path: String, filter: ExportFilter = ExportFilter(), options: ExportOptions = ExportOptions(),
    progress: @escaping @Sendable (ExportProgress) -> ProgressReply = { _ in .proceed }
) async throws(ExportError) -> ExportReport {
    try await VaultCancellation.withProgress { (reply) async throws(ExportError) -> ExportReport in
        try await vault.perform(
            { () throws(ExportError) -> ExportReport in
                try exportJournal(vault, format: format, to: path, filter: filter, options: options) { reply(progress($0)) }
            }, cancelled: { .vault(.cancelled) })
    }
}
