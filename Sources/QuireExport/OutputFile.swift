import Foundation
import QuireSystem
import Synchronization

/// A file being written under a temporary name beside its destination;
/// ``commit()`` renames it into place, and releasing it uncommitted removes
/// it (`Spec/export-json.md §1`: nothing partial is ever left at the output
/// path). Writes are buffered in 256 KiB.
final class OutputFile {
    let destination: String
    let temporaryPath: String
    private let file: SystemFile
    private var offset: UInt64 = 0
    private var buffer: [UInt8] = []
    private var committed = false
    private static let bufferLimit = 256 * 1024

    /// Creates the temporary file (mode 0600) in the destination's directory.
    ///
    /// - Throws: ``ExportError/cannotWrite(path:reason:)``.
    init(destination: String) throws(ExportError) {
        self.destination = destination
        temporaryPath = temporaryName(beside: destination)
        do { file = try SystemFile(path: temporaryPath, mode: .createExclusive(permissions: 0o600)) } catch {
            throw .cannotWrite(path: destination, reason: error.reason)
        }
        buffer.reserveCapacity(Self.bufferLimit)
    }

    deinit {
        if !committed { try? FileSystem.remove(temporaryPath) }
    }

    /// Bytes written so far.
    var byteCount: UInt64 { offset + UInt64(buffer.count) }

    func write(_ text: String) throws(ExportError) {
        var text = text
        text.withUTF8 { buffer.append(contentsOf: $0) }
        if buffer.count >= Self.bufferLimit { try flush() }
    }

    func write(_ bytes: some Sequence<UInt8>) throws(ExportError) {
        buffer.append(contentsOf: bytes)
        if buffer.count >= Self.bufferLimit { try flush() }
    }

    func write(_ bytes: UnsafeRawBufferPointer) throws(ExportError) {
        buffer.append(contentsOf: bytes)
        if buffer.count >= Self.bufferLimit { try flush() }
    }

    func flush() throws(ExportError) {
        guard !buffer.isEmpty else { return }
        do { try file.write(buffer, at: offset) } catch { throw .cannotWrite(path: destination, reason: error.reason) }
        offset += UInt64(buffer.count)
        buffer.removeAll(keepingCapacity: true)
    }

    /// Flushes, syncs and renames the file to its destination (replacing it).
    ///
    /// - Throws: ``ExportError/cannotWrite(path:reason:)``.
    func commit() throws(ExportError) {
        try ExportContext.checkCancelled()
        try flush()
        do {
            try file.sync()
            try FileSystem.rename(temporaryPath, to: destination)
        } catch {
            throw .cannotWrite(path: destination, reason: error.reason)
        }
        committed = true
    }
}

/// A directory being filled under a temporary name beside its destination;
/// ``commit()`` renames it into place (the destination must not exist), and
/// releasing it uncommitted removes it with everything in it.
final class OutputDirectory {
    let destination: String
    let temporaryPath: String
    private var committed = false
    private var made: Set<String> = []

    /// - Throws: ``ExportError/cannotWrite(path:reason:)`` when the
    ///   destination exists or the directory cannot be created.
    init(destination: String) throws(ExportError) {
        self.destination = destination
        if FileSystem.nameExists(destination) {
            let exists = SystemError(operation: "mkdir", path: destination, code: EEXIST)
            throw .cannotWrite(path: destination, reason: "it already exists; choose a new folder name: \(exists.reason)")
        }
        temporaryPath = temporaryName(beside: destination)
        do { try FileSystem.makeDirectory(temporaryPath, permissions: 0o700) } catch {
            throw .cannotWrite(path: destination, reason: error.reason)
        }
    }

    deinit {
        if !committed { try? FileManager.default.removeItem(atPath: temporaryPath) }
    }

    /// Creates the directories of relative path `relative` (a `/`-separated
    /// folder path inside the output).
    func makeDirectories(_ relative: String) throws(ExportError) {
        var path = temporaryPath
        for part in relative.split(separator: "/") {
            path += "/" + part
            if made.contains(path) { continue }
            do { try FileSystem.makeDirectory(path, permissions: 0o700) } catch {
                throw .cannotWrite(path: destination, reason: error.reason)
            }
            made.insert(path)
        }
    }

    /// A new file at relative path `relative`, written in place inside the
    /// temporary directory.
    func file(_ relative: String) throws(ExportError) -> DirectFile {
        if let slash = relative.lastIndex(of: "/") { try makeDirectories(String(relative[..<slash])) }
        return try DirectFile(path: temporaryPath + "/" + relative, reportedAs: destination)
    }

    /// Renames the directory into place.
    ///
    /// - Throws: ``ExportError/cannotWrite(path:reason:)``.
    func commit() throws(ExportError) {
        try ExportContext.checkCancelled()
        do { try FileSystem.rename(temporaryPath, to: destination) } catch {
            throw .cannotWrite(path: destination, reason: error.reason)
        }
        committed = true
    }
}

/// A file inside an ``OutputDirectory``; buffered like ``OutputFile``.
final class DirectFile {
    private let file: SystemFile
    private let reportedAs: String
    private var offset: UInt64 = 0
    private var buffer: [UInt8] = []

    init(path: String, reportedAs: String) throws(ExportError) {
        self.reportedAs = reportedAs
        do { file = try SystemFile(path: path, mode: .createExclusive(permissions: 0o600)) } catch {
            throw .cannotWrite(path: reportedAs, reason: error.reason)
        }
    }

    var byteCount: UInt64 { offset + UInt64(buffer.count) }

    func write(_ text: String) throws(ExportError) {
        var text = text
        text.withUTF8 { buffer.append(contentsOf: $0) }
        if buffer.count >= 256 * 1024 { try flush() }
    }

    func write(_ bytes: UnsafeRawBufferPointer) throws(ExportError) {
        buffer.append(contentsOf: bytes)
        if buffer.count >= 256 * 1024 { try flush() }
    }

    func flush() throws(ExportError) {
        guard !buffer.isEmpty else { return }
        do { try file.write(buffer, at: offset) } catch { throw .cannotWrite(path: reportedAs, reason: error.reason) }
        offset += UInt64(buffer.count)
        buffer.removeAll(keepingCapacity: true)
    }

    func close() throws(ExportError) { try flush() }
}

/// `.<name>.quire-export-<pid>-<n>.tmp` in the directory of `path`.
func temporaryName(beside path: String) -> String {
    let directory = FileSystem.directory(of: path)
    let name = path.split(separator: "/").last.map(String.init) ?? "export"
    let n = temporaryCounter.withLock { (c: inout Int) -> Int in
        c += 1
        return c
    }
    let stamp = ProcessStats.monotonicNanoseconds()
    return directory + "/." + name + ".quire-export-\(FileSystem.processID)-\(stamp)-\(n).tmp"
}

private let temporaryCounter = Mutex(0)
