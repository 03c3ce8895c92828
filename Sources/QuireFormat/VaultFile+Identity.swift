public import QuireSystem

extension VaultFile {
    /// The device and inode of the file this handle scanned (nil when
    /// `fstat` fails): with ``VaultStructure/fileSize``, how a caller that
    /// opens the same path again tells that a scan it holds still describes
    /// the file (a rewrite renames a new file over the path; a writer
    /// appends).
    public var fileIdentity: FileIdentity? {
        try? file.identity()
    }
}
