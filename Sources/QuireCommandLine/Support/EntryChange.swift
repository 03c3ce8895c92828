import Foundation
@_spi(Format) import Quire

/// Writing a changed entry the way every command that changes one does:
/// as a change made from the revisions that were read (so a change
/// written meanwhile becomes a conflict, never lost), and only when
/// something changed.
enum EntryChange {
    /// The revisions `e` was read at: its winner and every conflicting head.
    static func base(of e: EntrySnapshot) -> [RevisionID] { [e.revision.revisionID] + e.conflictingHeads }

    /// Writes `body` as the new content of `e`, with `attach` stored in the
    /// same commit and appended to its attachments; returns the revision.
    static func write(_ body: EntryBody, of e: EntrySnapshot, attach: [FilePath] = [], in vault: Vault, path: String) throws(CLIFailure)
        -> EntryRevision
    {
        var body = body
        body.modifiedMilliseconds = NaturalDate.now
        if attach.isEmpty {
            do { return try vault.edit(e.id, body: body, replacing: base(of: e)) } catch { throw .vault(error, path: path) }
        }
        var made: EntryRevision?
        do {
            try vault.commit { tx in
                body.attachments += try AttachmentFiles.store(attach, in: tx)
                made = try tx.edit(e.id, body: body, replacing: base(of: e))
            }
        } catch {
            if let other = error.underlyingError { throw CLIFailure("\(other)") }
            throw .vault(error, path: path)
        }
        return made!
    }
}

/// `{"id", "revision", "changed"}`: what `edit`, `star` and `unstar` print.
struct EditJSON: JSONShape {
    let id: String
    let revision: String
    let changed: Bool

    static var example: EditJSON { EditJSON(id: "", revision: "", changed: false) }
}
