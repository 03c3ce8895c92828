import Foundation
@_spi(Format) public import Quire

extension ExportFilter {
    /// True when `body` passes the filter: `created` in `[since, until)`
    /// (milliseconds, UTC), its own calendar's date in ``days`` when set
    /// (as a timeline's day range: ``EntryQuery/Day/init(of:)``), at least
    /// one of ``tags`` when the list is not empty, and a journal in
    /// ``journals`` when that list is not empty.
    /// Tags and journals are compared case-insensitively
    /// (`String.lowercased()`), as ``EntryQuery/tags``,
    /// ``EntryQuery/journal`` and the keys of `tagCounts()` and
    /// `journalCounts()` fold them: `food` selects an entry tagged `Food`.
    public func accepts(_ body: EntryBody) -> Bool {
        if let since = sinceMilliseconds, body.createdMilliseconds < since { return false }
        if let until = untilMilliseconds, body.createdMilliseconds >= until { return false }
        if let days, !days.contains(EntryQuery.Day(of: body)) { return false }
        if !tags.isEmpty {
            let wanted = Set(tags.map { $0.lowercased() })
            if !body.tags.contains(where: { wanted.contains($0.lowercased()) }) { return false }
        }
        if !journals.isEmpty, !journals.contains(where: { $0.lowercased() == body.journal.lowercased() }) { return false }
        return true
    }
}

/// The entries of `vault` that `filter` selects, oldest first: ordered by
/// `created` (milliseconds, UTC), then by entry id, as ``Vault/entries()``
/// orders them. Deleted entries are never selected.
///
/// Memory: the selection holds no entry body (``Vault/entryCatalog(where:)``):
/// about 100 bytes per revision while it is made, then one small item per
/// selected entry; each entry is read from the file again when an exporter
/// reaches it. Exporters write one entry at a time and stream attachments in
/// 64 KiB chunks, so an export's memory is that per-entry metadata plus the
/// largest single entry plus fixed buffers (`Spec/export-json.md §1`).
///
/// Shared with `QuirePDF`.
///
/// - Throws: ``ExportError/vault(_:)`` when the vault cannot be read.
package func selectEntries(_ vault: Vault, filter: ExportFilter) throws(ExportError) -> EntryCatalog {
    do { return try vault.entryCatalog(where: filter.accepts) } catch { throw .vault(error) }
}

/// Throws the first error met re-reading an entry of `entries` after
/// `output` was written, removing `output` first: an export never leaves
/// a file with an entry missing.
///
/// - Throws: ``ExportError/vault(_:)``.
package func checkReadBack(_ entries: EntryCatalog, output: String) throws(ExportError) {
    guard let error = entries.readError else { return }
    try? FileManager.default.removeItem(atPath: output)
    throw .vault(error)
}
