import QuireSystem

/// Buffered forward reads over a file: keeps a window of the file in memory
/// and refills it when a request falls outside. Memory is bounded by the
/// window size (or the largest single request).
///
/// A refill reads ahead `firstReadAhead` bytes, then twice as much as the
/// window held each time the reads go on from where it ended, up to the
/// window size: a reader that goes through small records soon reads 4 MiB
/// at a time, and one that reads a few records before large attachment
/// chunks (which it jumps over) does not read megabytes of them.
final class FileWindow {
    let file: SystemFile
    let fileSize: UInt64
    private(set) var buffer: [UInt8] = []
    private var start: UInt64 = 0
    private var count = 0
    private let preferred: Int
    /// What a refill reads when the reads do not go on from the window.
    static let firstReadAhead = 64 << 10

    init(file: SystemFile, fileSize: UInt64, preferredByteCount: Int = 4 << 20) {
        self.file = file
        self.fileSize = fileSize
        preferred = preferredByteCount
    }

    /// Makes `n` bytes at `offset` available and returns their index in
    /// ``buffer``. The range must lie inside the file.
    ///
    /// - Throws: ``FormatError/io(_:)``; also when the file shrank while
    ///   being read.
    ///
    /// - Parameter readAhead: how much to read when the bytes are not in the
    ///   window (default: the window size). Readers that skip over large
    ///   bodies ask for little, so they never pull the skipped bytes in.
    func load(_ offset: UInt64, _ n: Int, readAhead: Int? = nil) throws(FormatError) -> Int {
        precondition(offset + UInt64(n) <= fileSize)
        if offset >= start && offset + UInt64(n) <= start + UInt64(count) {
            return Int(offset - start)
        }
        // Going on from the window (within a window's length of its end):
        // read twice as much as it held.
        let goesOn = count > 0 && offset >= start && offset - start <= UInt64(2 * count)
        let ahead = readAhead ?? min(preferred, goesOn ? max(2 * count, Self.firstReadAhead) : Self.firstReadAhead)
        let want = Int(min(UInt64(max(n, ahead)), fileSize - offset))
        if buffer.count < want {
            // Not zeroed: the read fills what is used (count bytes), and the
            // pages past it are never touched (no page faults for them).
            let capacity = max(want, preferred)
            buffer = [UInt8](unsafeUninitializedCapacity: capacity) { _, initialized in initialized = capacity }
        }
        let got: Int
        do {
            got = try buffer.withMutableBytes { (raw: UnsafeMutableRawBufferPointer) throws(SystemError) -> Int in
                try file.read(into: UnsafeMutableRawBufferPointer(rebasing: raw[0..<want]), at: offset)
            }
        } catch {
            throw .io(error)
        }
        start = offset
        count = got
        guard got >= n else {
            // EIO (5): the file shrank under the read.
            throw .io(SystemError(operation: "pread", path: file.path, code: 5))
        }
        return 0
    }

    /// A copy of `n` bytes at `offset`.
    func bytes(_ offset: UInt64, _ n: Int, readAhead: Int? = nil) throws(FormatError) -> [UInt8] {
        let i = try load(offset, n, readAhead: readAhead)
        return Array(buffer[i..<i + n])
    }

    /// Calls `body` with a view of `n` bytes at `offset`.
    func withBytes<R>(_ offset: UInt64, _ n: Int, readAhead: Int? = nil, _ body: (UnsafeRawBufferPointer) throws(FormatError) -> R)
        throws(FormatError) -> R
    {
        let i = try load(offset, n, readAhead: readAhead)
        return try buffer.withBytes { (raw: UnsafeRawBufferPointer) throws(FormatError) -> R in
            try body(UnsafeRawBufferPointer(rebasing: raw[i..<i + n]))
        }
    }
}
