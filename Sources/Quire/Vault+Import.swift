@_spi(Format) package import QuireFormat

// What an importer needs inside one commit: an entry's current state, and a
// revision of an entry whose id the importer chose (`Spec/import.md §6`).

extension VaultTransaction {
    /// The winning revision of entry `id` as it stands inside this
    /// transaction: the last revision appended to it in this transaction,
    /// else the vault's winning head; nil when the vault has no revision of it.
    ///
    /// - Throws: a container error (`.damaged`, `.unavailable`, `.outOfSpace`…) for I/O.
    package func currentRevision(of id: EntryID) throws(QuireError) -> EntryRevision? {
        if let mine = newRevisions.last(where: { $0.1.entryID == id }) { return mine.1 }
        return try vault.snapshot(id, index: vault.loadIndex())?.revision
    }

    /// Appends a revision of entry `id` with `body`, with the vault's next
    /// hybrid logical clock value and this credential's author id
    /// (`Spec/records.md §3`): the entry's first revision when the vault
    /// has none, otherwise one naming every current head as a parent (the
    /// revision appended to it earlier in this transaction, if any), as
    /// ``Vault/edit(_:body:)`` does.
    ///
    /// - Throws: a container error (`.damaged`, `.unavailable`, `.outOfSpace`…) (``FormatError/recordTooLarge(byteCount:limit:)``, I/O).
    @discardableResult
    package func put(_ body: EntryBody, id: EntryID) throws(QuireError) -> EntryRevision {
        let parents: [RevisionID]
        if let mine = newRevisions.last(where: { $0.1.entryID == id }) {
            parents = [mine.1.revisionID]
        } else {
            parents = try vault.loadIndex().heads(of: id).map(\.revisionID).sorted()
        }
        let revision = EntryRevision(
            entryID: id, revisionID: RevisionID(using: vault.random), parents: parents, clock: vault.nextClock(),
            device: vault.author, body: body)
        try append(revision)
        return revision
    }
}
