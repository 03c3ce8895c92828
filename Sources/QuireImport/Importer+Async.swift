@_spi(Format) public import Quire

/// Imports `format` from `path` into `vault` (`Spec/import.md`), on the
/// vault's own serial executor, never on the caller's actor; cancellable.
///
/// One bad entry or attachment never throws: it is listed in
/// ``ImportReport/skipped``. Importing the same export again writes
/// nothing; a changed entry becomes a new revision of the same entry.
///
/// Entries are committed in batches; cancelling the task, or answering
/// ``ProgressReply/cancel`` from `progress`, stops at the next record: the
/// batch being written is not committed, the batches committed before it
/// stay, and running the same import again writes only what is missing
/// (`Spec/import.md §6`: an import is idempotent).
///
/// - Parameter progress: called on the vault's executor after each batch
///   (entries done, of a total when known); its answer goes on or stops.
/// - Parameter path: for ``ImportFormat/dayOne`` a ZIP archive, its unzipped
///   folder, or one `<Journal>.json` file.
/// - Throws: ``ImportError/unreadableSource(path:reason:)`` when `path`
///   cannot be opened as that format (nothing written);
///   ``ImportError/vault(_:)`` when the vault refuses a write (batches
///   committed before it stay), with ``QuireError/cancelled`` when cancelled.
public func importJournal(
    _ format: ImportFormat, from path: String, into vault: Vault,
    options: ImportOptions = ImportOptions(),
    progress: @escaping @Sendable (ImportProgress) -> ProgressReply = { _ in .proceed }
) async throws(ImportError) -> ImportReport {
    try await VaultCancellation.withProgress { (reply) async throws(ImportError) -> ImportReport in
        try await vault.perform(
            { () throws(ImportError) -> ImportReport in
                try importJournal(format, from: path, into: vault, options: options) { reply(progress($0)) }
            }, cancelled: { .vault(.cancelled) })
    }
}
