public import Quire

extension ExportFilter {
    /// True when `body` passes the filter: `created` in `[since, until)`
    /// (milliseconds, UTC), at least one of ``tags`` (exact, case-sensitive
    /// match) when the list is not empty, and a journal in ``journals`` when
    /// that list is not empty.
    public func accepts(_ body: EntryBody) -> Bool {
        if let since, body.created < since { return false }
        if let until, body.created >= until { return false }
        if !tags.isEmpty, !body.tags.contains(where: { tags.contains($0) }) { return false }
        if !journals.isEmpty, !journals.contains(body.journal) { return false }
        return true
    }
}

/// The entries of `vault` that `filter` selects, oldest first: ordered by
/// `created` (milliseconds, UTC), then by entry id, as ``Vault/entries()``
/// orders them. Deleted entries are never selected.
///
/// Memory: the library's entry index holds every live revision once it is
/// loaded (proportional to the vault); the returned snapshots share their
/// text storage with it, so selection adds one small struct per selected
/// entry. Exporters then write one entry at a time and stream attachments
/// in 64 KiB chunks, so what an export adds on top of the index is bounded
/// by the largest single entry plus fixed buffers (see `Spec/export-json.md §1`).
///
/// Shared with `QuirePDF`.
///
/// - Throws: ``ExportError/vault(_:)`` when the vault cannot be read.
public func selectEntries(_ vault: Vault, filter: ExportFilter) throws(ExportError) -> [EntrySnapshot] {
    let all: [EntrySnapshot]
    do { all = try vault.entries() } catch { throw .vault(error) }
    return all.filter { filter.accepts($0.body) }
}
