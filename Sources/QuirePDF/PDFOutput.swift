import CPangoCairo
import QuireSystem

/// The file the PDF is streamed into: a temporary name beside the output
/// (`.<name>.quire-export-<pid>.tmp`, mode 0600, named like the other
/// exports' temporary files), buffered 64 KiB at a time,
/// fsynced and renamed over `path` by ``commit()``, removed by ``discard()``.
final class PDFOutput {
    let path: String
    let temporaryPath: String
    private var file: SystemFile?
    private var buffer: [UInt8] = []
    private(set) var bytesWritten: UInt64 = 0
    /// The first write error, kept for the report (cairo sees only a status).
    private(set) var failure: SystemError?

    static let bufferSize = 1 << 16

    init(path: String) throws(SystemError) {
        self.path = path
        let directory = FileSystem.directory(of: path)
        let name = path.split(separator: "/", omittingEmptySubsequences: false).last.map(String.init) ?? path
        temporaryPath = (directory.isEmpty ? "" : directory + "/") + "." + name + ".quire-export-\(FileSystem.processID).tmp"
        try? FileSystem.remove(temporaryPath)  // a leftover of a crashed run of this process id
        file = try SystemFile(path: temporaryPath, mode: .createExclusive(permissions: 0o600))
        buffer.reserveCapacity(Self.bufferSize)
    }

    /// Appends bytes; returns false once writing has failed.
    func write(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard failure == nil else { return false }
        if buffer.count + bytes.count > Self.bufferSize { flush() }
        if bytes.count >= Self.bufferSize {
            writeThrough(bytes)
        } else {
            buffer.append(contentsOf: bytes)
        }
        return failure == nil
    }

    private func flush() {
        guard !buffer.isEmpty else { return }
        buffer.withUnsafeBytes { writeThrough($0) }
        buffer.removeAll(keepingCapacity: true)
    }

    private func writeThrough(_ bytes: UnsafeRawBufferPointer) {
        guard failure == nil, let file else { return }
        do {
            try file.write(bytes, at: bytesWritten)
            bytesWritten += UInt64(bytes.count)
        } catch {
            failure = error
        }
    }

    /// Flushes, fsyncs and renames the temporary file to `path`.
    func commit() throws(SystemError) {
        flush()
        if let failure { throw failure }
        try file?.sync()
        file = nil
        try FileSystem.rename(temporaryPath, to: path)
        let directory = FileSystem.directory(of: path)
        try? FileSystem.syncDirectory(directory.isEmpty ? "." : directory)
    }

    /// Removes the temporary file (on any failure).
    func discard() {
        file = nil
        try? FileSystem.remove(temporaryPath)
    }
}

/// cairo's write callback: `closure` is an unretained ``PDFOutput``.
let pdfOutputWrite: cairo_write_func_t = { closure, data, length in
    guard let closure else { return CAIRO_STATUS_WRITE_ERROR }
    let output = Unmanaged<PDFOutput>.fromOpaque(closure).takeUnretainedValue()
    guard length == 0 || data != nil else { return CAIRO_STATUS_WRITE_ERROR }
    let ok = length == 0 ? true : output.write(UnsafeRawBufferPointer(start: data, count: Int(length)))
    return ok ? CAIRO_STATUS_SUCCESS : CAIRO_STATUS_WRITE_ERROR
}
