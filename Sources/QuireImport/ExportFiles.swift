import Foundation
@_spi(Format) import Quire
@_spi(Format) import QuireFormat
import QuireSystem
import QuireZip

/// The files of an export, from a ZIP archive or a folder, read as streams
/// (`Spec/import.md §7`). Paths are relative and `/`-separated.
protocol ExportFiles: AnyObject {
    /// Every regular file, in a stable order.
    var files: [String] { get }
    /// Files refused (unsafe names), with the reason.
    var refused: [SkippedItem] { get }
    /// Opens `path` for reading from the start.
    func open(_ path: String) throws -> any ByteSource
    /// True when the source is one file given by itself (not a folder or ZIP).
    var isSingleFile: Bool { get }
}

/// An export packed in a ZIP archive.
final class ZipExportFiles: ExportFiles {
    let zip: ZipReader
    let files: [String]
    let refused: [SkippedItem]
    var isSingleFile: Bool { false }
    private let byName: [String: ZipReader.Member]

    init(path: String) throws(ZipError) {
        zip = try ZipReader(path: path)
        var map: [String: ZipReader.Member] = [:]
        for m in zip.members where !m.isDirectory { map[m.name] = m }
        byName = map
        files = zip.members.filter { !$0.isDirectory }.map(\.name)
        refused = zip.refused.map { SkippedItem(item: $0.name, reason: $0.error.description) }
    }

    func open(_ path: String) throws -> any ByteSource {
        guard let m = byName[path] else { throw ZipError.io(name: path, reason: "no such member") }
        return try zip.open(m)
    }
}

/// An export unpacked into a folder (or a single JSON file).
final class FolderExportFiles: ExportFiles {
    let root: String
    let files: [String]
    let refused: [SkippedItem] = []

    /// True when made with ``init(file:)``.
    let isSingleFile: Bool

    /// The regular files under `root` (symbolic links are not followed), at
    /// most `maxDepth` path components deep (nil: any depth).
    init(root: String, maxDepth: Int? = nil) {
        self.root = root
        isSingleFile = false
        var found: [String] = []
        if let walker = FileManager.default.enumerator(atPath: root) {
            while let rel = walker.nextObject() as? String {
                let full = root + "/" + rel
                if let maxDepth, rel.split(separator: "/").count >= maxDepth, !FileSystem.isRegularFile(full) {
                    walker.skipDescendants()
                    continue
                }
                if FileSystem.isRegularFile(full), (try? FileManager.default.destinationOfSymbolicLink(atPath: full)) == nil {
                    found.append(rel)
                }
            }
        }
        files = found.sorted()
    }

    /// One file only.
    init(file: String) {
        let url = URL(fileURLWithPath: file)
        root = url.deletingLastPathComponent().path
        files = [url.lastPathComponent]
        isSingleFile = true
    }

    func open(_ path: String) throws -> any ByteSource {
        try FileByteSource(path: root + "/" + path)
    }
}

/// Why reading an export file failed, in words: for a ZIP member the ZIP
/// error itself (libzip's reason, the limit passed), else `error`.
func readFailure(_ source: any ByteSource, _ error: any Error) -> String {
    if let member = source as? ZipMemberReader, let failure = member.failure { return failure.description }
    return "\(error)"
}

/// Stores an export file through ``VaultTransaction/storeAttachment(from:mediaType:)``,
/// telling the file's failure (the import skips that file and redoes the
/// commit without it) from the vault's (which stops the import).
///
/// - Throws: ``SourceFailure`` when reading the file failed; the vault's error otherwise.
func storeExportFile(_ files: any ExportFiles, _ path: String, mediaType: String, tx: VaultTransaction) throws -> StoredBlob {
    let source: any ByteSource
    do { source = try files.open(path) } catch { throw SourceFailure(path: path, reason: "\(error)") }
    var failed: FormatError?
    let watched = WatchedSource(source) { failed = $0 }
    do { return try tx.storeAttachment(from: watched, mediaType: mediaType) } catch {
        if let failed { throw SourceFailure(path: path, reason: readFailure(source, failed)) }
        throw error
    }
}

/// An export file that could not be read: its path and why.
struct SourceFailure: Error {
    let path: String
    let reason: String
}

/// Passes reads through and reports the error that stopped them.
private final class WatchedSource: ByteSource {
    let source: any ByteSource
    let failed: (FormatError) -> Void
    init(_ source: any ByteSource, failed: @escaping (FormatError) -> Void) {
        self.source = source
        self.failed = failed
    }
    func read(into buffer: UnsafeMutableRawBufferPointer) throws(QuireError) -> Int {
        do { return try source.read(into: buffer) } catch {
            failed((error.layer as? FormatError) ?? .source(error))
            throw error
        }
    }
}
