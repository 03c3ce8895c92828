public import Foundation
@_spi(Format) public import QuireFormat
@_spi(Format) import QuireKeys
import QuireSystem

/// One version of an entry, as a conflict screen shows it: "iPhone's
/// version, 10:32". An entry two devices changed apart has several
/// (`Spec/merge.md §5`); ``Vault/versions(of:)`` lists them, the one shown
/// first. To resolve the conflict, edit the entry replacing every
/// version's ``id``: `tx.edit(entryID, body: chosen, replacing: versions.map(\.id))`.
public struct EntryVersion: Sendable, Identifiable, Equatable {
    /// The revision that holds this version.
    public let id: RevisionID
    /// The version's content (empty for a deletion).
    public let body: EntryBody
    /// True when this version deletes the entry: one device deleted it
    /// while another changed it.
    public let isDeleted: Bool
    /// When this version was written, by its writer's clock (its
    /// revision's hybrid logical clock, to the millisecond;
    /// `Spec/records.md §3.2`). Not the body's `modified`, which an import
    /// may carry over.
    public let modified: Date
    /// The name of the device that wrote this version, as the vault's
    /// keyring records it for the device (the name given to
    /// ``Vault/enrollDevice(code:name:now:)``, or the first device's own).
    /// Nil when no enrolled device vouches for it: written with the
    /// recovery key, a passphrase or an escrow key, by a device since
    /// removed, or in a commit that does not verify (`Spec/format.md §9.4`):
    /// show such a version without a device.
    public let deviceName: String?
}

extension Vault {
    /// Every version of entry `id`, on this handle's executor: the one the
    /// vault shows first (``EntrySnapshot/revision``), then the others in
    /// the order of ``EntrySnapshot/conflictingHeads``. One version when
    /// the entry has no conflict; empty when the vault has no such entry.
    /// Earlier revisions that a later one replaced are not versions
    /// (``revisions(of:)`` lists those).
    ///
    /// - Throws: ``QuireError``: `.damaged`, `.unavailable` or `.outOfSpace` when the file cannot
    ///   be read; `.cancelled` (`cancelled`).
    public func versions(of id: EntryID) async throws(QuireError) -> [EntryVersion] {
        try await perform { () throws(QuireError) -> [EntryVersion] in try self.loadVersions(of: id) }
    }

    /// ``versions(of:)``, blocking.
    func loadVersions(of id: EntryID) throws(QuireError) -> [EntryVersion] {
        // Attestations name current members only; a version the recovery
        // key attested has no device (Spec/format.md §9.4).
        var names: [[UInt8]: String] = [:]
        for member in (try? keyState())?.members ?? [] where member.role == "device" { names[member.publicKey] = member.name }
        return try lock.withLock { () throws(QuireError) -> [EntryVersion] in
            var out: [EntryVersion] = []
            for head in try loadIndex().heads(of: id) {
                let revision: EntryRevision
                if let cached = head.revision { revision = cached } else { revision = try self.revision(frame: head.frame) }
                out.append(
                    EntryVersion(
                        id: head.revisionID, body: revision.body, isDeleted: revision.isDeleted,
                        modified: Date(timeIntervalSince1970: Double(head.clock.milliseconds) / 1000),
                        deviceName: head.attestedBy.flatMap { names[$0] }))
            }
            return out
        }
    }
}
