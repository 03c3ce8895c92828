import Foundation
@_spi(Format) import Quire
import QuireSystem

/// Files given with `--attach` (to `add` and `edit`).
enum AttachmentFiles {
    /// Accepts a word after `--attach FILE` as another file: an existing
    /// file that is not a vault (`--attach a.jpg b.jpg`).
    static func isAnotherFile(_ word: String) -> Bool {
        FileSystem.isRegularFile(word) && !VaultLocator().looksLikeVault(word)
    }

    /// Checks every file can be attached before anything is written.
    ///
    /// - Throws: ``CLIFailure`` naming the file and what is wrong with it.
    static func check(_ files: [FilePath]) throws(CLIFailure) {
        for file in files.map(\.path) where !FileSystem.isRegularFile(file) {
            if Paths.isFolder(file) {
                throw CLIFailure(
                    "cannot attach \(file): it is a folder, not a file", hint: "attach the files in it one by one: --attach FILE for each")
            }
            if FileSystem.exists(file) {
                throw CLIFailure(
                    "cannot attach \(file): it is not a regular file (a device, a pipe or a socket)",
                    hint: "attach a regular file; to attach what a program writes, save it to a file first")
            }
            throw CLIFailure("cannot attach \(file): no such file", hint: "check the path given to --attach")
        }
    }

    /// Stores `files` in the commit `tx`; returns their references, each
    /// with a fresh random 16-byte id (the id its text links use).
    static func store(_ files: [FilePath], in tx: VaultTransaction) throws -> [AttachmentReference] {
        var refs: [AttachmentReference] = []
        for file in files.map(\.path) {
            let type = EntryFormat.mediaType(forFile: file)
            let stored = try tx.storeAttachment(fromFile: file, mediaType: type)
            refs.append(AttachmentReference(stored, mediaType: type, fileName: Paths.lastComponent(of: file)))
        }
        return refs
    }
}
