import Foundation
import QuireFormat
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
    func open(_ path: String) throws -> any ExportStream
    /// True when the source is one file given by itself (not a folder or ZIP).
    var isSingleFile: Bool { get }
}

/// Bytes of one export file, read in order.
protocol ExportStream: AnyObject {
    /// Reads up to `buffer.count` bytes; 0 at the end.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int
}

final class ZipStream: ExportStream {
    let member: ZipMemberReader
    init(_ member: ZipMemberReader) { self.member = member }
    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int { try member.read(into: buffer) }
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

    func open(_ path: String) throws -> any ExportStream {
        guard let m = byName[path] else { throw ZipError.io(name: path, reason: "no such member") }
        return ZipStream(try zip.open(m))
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

    func open(_ path: String) throws -> any ExportStream {
        FileStream(try FileByteSource(path: root + "/" + path))
    }
}

final class FileStream: ExportStream {
    let source: FileByteSource
    init(_ source: FileByteSource) { self.source = source }
    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int { try source.read(into: buffer) }
}

/// Feeds an export file to ``VaultTransaction/storeAttachment(from:mediaType:)``,
/// keeping the error that stopped it.
final class ExportByteSource: ByteSource {
    let stream: any ExportStream
    let name: String
    private(set) var failure: (any Error)?

    init(_ stream: any ExportStream, name: String) {
        self.stream = stream
        self.name = name
    }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws(FormatError) -> Int {
        do { return try stream.read(into: buffer) } catch {
            failure = error
            throw .io(SystemError(operation: "read", path: name, code: 5))
        }
    }
}
