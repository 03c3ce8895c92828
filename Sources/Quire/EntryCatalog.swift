@_spi(Format) package import QuireFormat
import QuireSystem

/// The live entries a predicate selects, in creation order, holding no
/// entry body: each ``EntrySnapshot`` is read from the file again when it is
/// accessed. Made by ``Vault/entryCatalog(where:)`` for work that must not
/// hold a whole journal in memory (export, `Spec/export-json.md §1`).
///
/// Memory: about 100 bytes per revision in the vault (ids, parents, clock,
/// frame index) while the catalog is made, and one `(id, frame)` pair per
/// selected entry after; one entry body at a time when iterating.
package struct EntryCatalog: RandomAccessCollection, Sendable {
    struct Item: Sendable {
        let id: EntryID
        let frame: Int
        let created: Int64
        let conflictingHeads: [RevisionID]
        let revisionCount: Int
        let isVerified: Bool
        let attestedBy: [UInt8]?
        let removedAttestor: [UInt8]?
    }

    let vault: Vault
    /// The file the catalog was made from. A ``Vault/reload()`` onto a file
    /// another process compacted renumbers the frames; the catalog keeps
    /// reading the file (the open descriptor) its frame indices belong to.
    let file: VaultFile
    let items: [Item]
    let failures: FailureCount
    /// The entry revisions (and damaged regions, and commits that do not
    /// verify) the catalog could not read when it was made: entries it
    /// leaves out. Work that must be complete (an export) checks it first.
    public let unreadRecords: UnreadRecords

    /// Counts entries that could not be read again after the catalog was
    /// made (an I/O error, or the file changed under the vault).
    // @unchecked Sendable: `value` and `firstError` are read and written under `lock` only.
    final class FailureCount: @unchecked Sendable {
        private let lock = RecursiveLock()
        private var value = 0
        private var firstError: QuireError?
        func record(_ error: QuireError) {
            lock.withLock {
                value += 1
                if firstError == nil { firstError = error }
            }
        }
        var count: Int { lock.withLock { value } }
        var first: QuireError? { lock.withLock { firstError } }
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { items.count }

    /// The entry at `position`, read and decrypted now from the file the
    /// catalog was made from, so it stays the same across a
    /// ``Vault/reload()``. If it cannot be read again (see ``readError``), a
    /// snapshot with an empty body and the entry's creation time is
    /// returned and counted.
    public subscript(position: Int) -> EntrySnapshot {
        let item = items[position]
        do throws(QuireError) {
            let revision = try Vault.revision(frame: item.frame, in: file)
            // The frame must still hold the revision indexed from it.
            guard revision.entryID == item.id else { throw QuireError.catalogStale }
            return EntrySnapshot(
                id: item.id, revision: revision, conflictingHeads: item.conflictingHeads, revisionCount: item.revisionCount,
                isVerified: item.isVerified, attestedBy: item.attestedBy, attestedByRemovedMember: item.removedAttestor)
        } catch {
            failures.record(error)
            let placeholder = EntryRevision(
                entryID: item.id, revisionID: RevisionID(unchecked: Array(repeating: 0, count: RevisionID.byteCount)), parents: [],
                clock: HybridLogicalClock(rawValue: 0), device: nil, body: EntryBody(created: item.created))
            return EntrySnapshot(
                id: item.id, revision: placeholder, conflictingHeads: [], revisionCount: item.revisionCount, isVerified: false,
                attestedBy: nil,
                attestedByRemovedMember: nil)
        }
    }

    /// The selected entries' ids, in the catalog's order, without reading
    /// any entry again (exports use it to know which entries a link may
    /// point at).
    public var ids: [EntryID] { items.map(\.id) }

    /// The first error met re-reading an entry through the subscript
    /// (``QuireError/catalogStale`` when the file no longer holds the
    /// entry), or nil when every access succeeded. Work that wrote what it read should
    /// check it at the end and discard its output when it is not nil.
    public var readError: QuireError? { failures.first }
}

extension Vault {
    /// The live (not deleted) entries whose winning body `include` accepts,
    /// ordered by creation time then id, as ``entries()`` orders them, but
    /// without keeping any body: every revision is decrypted once to find
    /// the heads and is then dropped (`Spec/merge.md §5`); the catalog reads
    /// each selected entry again when it is accessed.
    ///
    /// - Throws: ``QuireError`` for I/O.
    package func entryCatalog(where include: (EntryBody) -> Bool) throws(QuireError) -> EntryCatalog {
        return lock.withLock { () -> EntryCatalog in
            var summaries = EntryIndex()
            var created: [Int: Int64] = [:]
            var accepted = Set<Int>()
            var undecoded: [FormatError] = []
            let issues = file.forEachRecord(kinds: [.entryRevision]) { record in
                let r: EntryRevision
                do throws(FormatError) { r = try EntryRevision(decoding: record.payload, location: record.frame.location) } catch {
                    undecoded.append(error)
                    return true
                }
                let frame = record.frame.location.index
                summaries.insert(
                    r, frame: frame, verified: record.commitVerified, attestedBy: record.attestedBy,
                    removedAttestor: record.removedAttestor, ranksAsMember: record.ranksAsMember, retain: false)
                created[frame] = r.body.createdMilliseconds
                if !r.isDeleted, include(r.body) { accepted.insert(frame) }
                return true
            }
            // Damaged records are left out, as entries() leaves them out, and counted.
            let unread = makeUnreadRecords(issues + undecoded)
            var items: [EntryCatalog.Item] = []
            for (id, list) in summaries.revisions {
                let heads = summaries.heads(of: id)
                guard let winner = heads.first, !winner.isDeleted, accepted.contains(winner.frame) else { continue }
                items.append(
                    EntryCatalog.Item(
                        id: id, frame: winner.frame, created: created[winner.frame] ?? 0,
                        conflictingHeads: heads.dropFirst().map(\.revisionID),
                        revisionCount: list.count, isVerified: winner.isVerified, attestedBy: winner.attestedBy,
                        removedAttestor: winner.removedAttestor))
            }
            items.sort { a, b in a.created != b.created ? a.created < b.created : a.id < b.id }
            return EntryCatalog(vault: self, file: file, items: items, failures: EntryCatalog.FailureCount(), unreadRecords: unread)
        }
    }
}
