// The platform shim: one small Swift function per POSIX call Quire makes.
// Everything that differs between Linux and Apple platforms lives here.

#if canImport(Glibc)
    internal import Glibc
#elseif canImport(Musl)
    internal import Musl
#elseif canImport(Darwin)
    internal import Darwin
#else
    #error("Quire needs a POSIX platform")
#endif

/// A failed system call: the operation, the path it was about, and `errno`.
///
/// The message names the operation and the path and carries the C library's
/// description of the error number. It never contains file contents.
public struct SystemError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The POSIX call that failed, such as `"open"` or `"fsync"`.
    public let operation: String
    /// The path the call was about, or an empty string.
    public let path: String
    /// The `errno` value the call left.
    public let code: Int32

    /// Creates an error for `operation` on `path` with error number `code`.
    public init(operation: String, path: String, code: Int32) {
        self.operation = operation
        self.path = path
        self.code = code
    }

    /// `"open /tmp/x.quire: No such file or directory (errno 2)"`.
    public var description: String {
        let subject = path.isEmpty ? operation : "\(operation) \(path)"
        return "\(subject): \(reason)"
    }

    /// The C library's description of the error number, without the call
    /// or the path: `"No such file or directory (errno 2)"`. For a message
    /// about another path than the one the call was given (a temporary
    /// file written beside the one a person named).
    public var reason: String {
        guard let text = strerror(code) else { return "unknown error (errno \(code))" }
        return "\(String(cString: text)) (errno \(code))"
    }

    /// The error number a text that ends with a ``reason`` names
    /// (`"… (errno 2)"`: `ENOENT`), or nil when it ends with none: for an
    /// error that kept only the text, to choose what to tell a person.
    package static func errorNumber(endingReason text: String) -> Int32? {
        guard text.hasSuffix(")"), let open = text.lastIndex(of: "(") else { return nil }
        let inner = text[open...].dropFirst().dropLast()  // "errno 2"
        guard inner.hasPrefix("errno ") else { return nil }
        return Int32(inner.dropFirst(6))
    }

    /// True when the error means the path does not exist (`ENOENT`).
    public var isNotFound: Bool { code == ENOENT }
    /// True when the storage is full: no space left on the device
    /// (`ENOSPC`) or the user's disk quota is used up (`EDQUOT`).
    public var isOutOfSpace: Bool { code == ENOSPC || code == EDQUOT }
    /// True when the call may succeed if tried again later: the resource is
    /// busy or locked (`EAGAIN`, `EWOULDBLOCK`, `EBUSY`, `ETXTBSY`) or a
    /// signal interrupted it (`EINTR`).
    public var isBusy: Bool {
        code == EAGAIN || code == EWOULDBLOCK || code == EBUSY || code == ETXTBSY || code == EINTR
    }
    /// True when the file system is mounted read-only (`EROFS`).
    public var isReadOnlyFileSystem: Bool { code == EROFS }
    /// True when the call was given something it cannot take: an invalid
    /// argument or descriptor, a name too long, a directory or symbolic link
    /// where a file was wanted, or a path that exists (`EINVAL`, `EBADF`,
    /// `ENAMETOOLONG`, `EISDIR`, `ELOOP`, `EEXIST`).
    public var isInvalidArgument: Bool {
        [EINVAL, EBADF, ENAMETOOLONG, EISDIR, ELOOP, EEXIST].contains(code)
    }
    /// True when the error means the path already exists (`EEXIST`).
    public var isAlreadyExists: Bool { code == EEXIST }
    /// True when an open refused a symbolic link (`ELOOP` with `O_NOFOLLOW`).
    public var isSymbolicLinkRefused: Bool { code == ELOOP }
    /// True when the error means the call would block (`EWOULDBLOCK`).
    public var isWouldBlock: Bool { code == EWOULDBLOCK || code == EAGAIN }
}

/// Which file a path or descriptor names: device and inode numbers. Equal
/// identities mean the same file, so a path whose identity changed was
/// replaced (a sync tool renaming a new copy over it).
public struct FileIdentity: Sendable, Hashable {
    /// The device number (`st_dev`).
    public let device: UInt64
    /// The inode number (`st_ino`).
    public let inode: UInt64
}

/// What `stat`/`fstat` says of a file: owner, permission bits, type, size
/// and modification time.
public struct FileStatus: Sendable, Equatable {
    /// The owner's user id.
    public let owner: UInt32
    /// The permission bits (`st_mode & 0o7777`).
    public let permissions: UInt16
    /// True for a regular file.
    public let isRegularFile: Bool
    /// True for a directory.
    public let isDirectory: Bool
    /// True for a symbolic link (only from ``FileSystem/status(_:followingLinks:)`` with `followingLinks: false`).
    public let isSymbolicLink: Bool
    /// The size in bytes.
    public let size: UInt64
    /// The last modification, in nanoseconds since the Unix epoch.
    public let modifiedNanoseconds: Int64

    init(_ info: stat) {
        owner = UInt32(info.st_uid)
        permissions = UInt16(info.st_mode & 0o7777)
        isRegularFile = (info.st_mode & S_IFMT) == S_IFREG
        isDirectory = (info.st_mode & S_IFMT) == S_IFDIR
        isSymbolicLink = (info.st_mode & S_IFMT) == S_IFLNK
        size = UInt64(info.st_size)
        #if canImport(Darwin)
            modifiedNanoseconds = Int64(info.st_mtimespec.tv_sec) * 1_000_000_000 + Int64(info.st_mtimespec.tv_nsec)
        #else
            modifiedNanoseconds = Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec)
        #endif
    }
}

/// How to open a file.
public enum OpenMode: Sendable {
    /// Read only; the file must exist.
    case readOnly
    /// Read and write; the file must exist.
    case readWrite
    /// Read and write; create the file with the given permission bits, failing
    /// if it already exists (`O_CREAT | O_EXCL`).
    case createExclusive(permissions: UInt16)
}

/// An open file descriptor, closed when the value is released.
///
/// Offsets and counts are in bytes. Reads and writes are positional
/// (`pread`/`pwrite`), so a `SystemFile` has no current offset and is safe to
/// share between readers; writers must serialize through ``lockExclusive()``.
public final class SystemFile: @unchecked Sendable {
    /// The path the file was opened with.
    public let path: String
    private let descriptor: Int32

    /// Opens `path`, which must be a regular file unless `allowNonRegular`
    /// (a FIFO or a device is then read with blocking reads).
    ///
    /// - Throws: ``SystemError`` from `open(2)`, for example `ENOENT` or
    ///   `EEXIST`; `EINVAL` for a path that is not a regular file.
    ///
    /// - Parameter noFollow: refuse a symbolic link at `path` itself
    ///   (`O_NOFOLLOW`, error `ELOOP`), for files whose name another user
    ///   might swap.
    public init(path: String, mode: OpenMode, allowNonRegular: Bool = false, noFollow: Bool = false) throws(SystemError) {
        self.path = path
        var flags: Int32 = O_CLOEXEC | (noFollow ? O_NOFOLLOW : 0)
        var permissions: mode_t = 0
        switch mode {
        case .readOnly:
            flags |= O_RDONLY
        case .readWrite:
            flags |= O_RDWR
        case .createExclusive(let bits):
            flags |= O_RDWR | O_CREAT | O_EXCL
            permissions = mode_t(bits)
        }
        // O_NONBLOCK: opening a FIFO must not wait for a writer; it is then
        // refused below unless `allowNonRegular` (reads of regular files are
        // unaffected by the flag).
        let fd = retryOnInterrupt { open(path, flags | O_NONBLOCK, permissions) }
        guard fd >= 0 else { throw SystemError(operation: "open", path: path, code: errno) }
        // `descriptor` is set last: once every stored property is set, a
        // throw runs `deinit`, which would close `fd` a second time — by then
        // perhaps another thread's newly opened file.
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let code = errno
            _ = close(fd)
            throw SystemError(operation: "fstat", path: path, code: code)
        }
        let isRegular = (info.st_mode & S_IFMT) == S_IFREG
        guard isRegular || allowNonRegular else {
            _ = close(fd)
            throw SystemError(operation: "open (not a regular file)", path: path, code: EINVAL)
        }
        if !isRegular {
            // A pipe or device given on purpose (an attachment from stdin): block on reads.
            let current = fcntl(fd, F_GETFL)
            _ = fcntl(fd, F_SETFL, current & ~O_NONBLOCK)
        }
        descriptor = fd
    }

    deinit {
        _ = close(descriptor)
    }

    /// The file's size in bytes (`fstat`).
    ///
    /// - Throws: ``SystemError`` from `fstat(2)`.
    public func size() throws(SystemError) -> UInt64 {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            throw SystemError(operation: "fstat", path: path, code: errno)
        }
        return UInt64(info.st_size)
    }

    /// Which file the descriptor refers to.
    ///
    /// - Throws: ``SystemError`` from `fstat(2)`.
    public func identity() throws(SystemError) -> FileIdentity {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw SystemError(operation: "fstat", path: path, code: errno) }
        return FileIdentity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
    }

    /// What `fstat` says of the open file: the file itself, whatever its
    /// path names now.
    ///
    /// - Throws: ``SystemError`` from `fstat(2)`.
    public func status() throws(SystemError) -> FileStatus {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw SystemError(operation: "fstat", path: path, code: errno) }
        return FileStatus(info)
    }

    /// Takes the exclusive advisory lock if no one holds it, without
    /// waiting; true when taken.
    public func tryLockExclusive() -> Bool {
        retryOnInterrupt({ flock(descriptor, LOCK_EX | LOCK_NB) }) == 0
    }

    /// Reads up to `buffer.count` bytes at `offset`; returns how many were
    /// read, which is less than asked only at the end of the file.
    ///
    /// - Throws: ``SystemError`` from `pread(2)`.
    public func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws(SystemError) -> Int {
        var done = 0
        while done < buffer.count {
            let base = buffer.baseAddress!.advanced(by: done)
            let n = retryOnInterrupt { pread(descriptor, base, buffer.count - done, off_t(offset) + off_t(done)) }
            if n < 0 { throw SystemError(operation: "pread", path: path, code: errno) }
            if n == 0 { break }
            done += n
        }
        return done
    }

    /// Reads exactly `count` bytes at `offset`, or fewer at the end of the
    /// file. The buffer is not zero-filled first: `pread` writes straight
    /// into fresh storage (a 2.4 MB index cache part is touched once, not twice).
    ///
    /// - Throws: ``SystemError`` from `pread(2)`.
    public func read(count: Int, at offset: UInt64) throws(SystemError) -> [UInt8] {
        var failure: SystemError?
        let bytes = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            do throws(SystemError) {
                initialized = try read(into: UnsafeMutableRawBufferPointer(buffer), at: offset)
            } catch {
                failure = error
                initialized = 0
            }
        }
        if let failure { throw failure }
        return bytes
    }

    /// Writes all of `bytes` at `offset`.
    ///
    /// - Throws: ``SystemError`` from `pwrite(2)` (for example `ENOSPC`).
    public func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws(SystemError) {
        var done = 0
        while done < bytes.count {
            let base = bytes.baseAddress!.advanced(by: done)
            let n = retryOnInterrupt { pwrite(descriptor, base, bytes.count - done, off_t(offset) + off_t(done)) }
            if n < 0 { throw SystemError(operation: "pwrite", path: path, code: errno) }
            done += n
        }
    }

    /// Writes all of `bytes` at `offset`.
    ///
    /// - Throws: ``SystemError`` from `pwrite(2)`.
    public func write(_ bytes: [UInt8], at offset: UInt64) throws(SystemError) {
        try bytes.withBytes { (raw: UnsafeRawBufferPointer) throws(SystemError) in
            try write(raw, at: offset)
        }
    }

    /// Flushes the file's data and metadata to stable storage (`fsync`; on
    /// Apple platforms `F_FULLFSYNC`, which also flushes the drive's cache).
    ///
    /// - Throws: ``SystemError`` from `fsync(2)` or `fcntl(2)`.
    public func sync() throws(SystemError) {
        #if canImport(Darwin)
            if fcntl(descriptor, F_FULLFSYNC) == 0 { return }
        #endif
        guard retryOnInterrupt({ fsync(descriptor) }) == 0 else {
            throw SystemError(operation: "fsync", path: path, code: errno)
        }
    }

    /// Starts writing the `count` bytes from `offset` back to the disk
    /// without waiting for them (`sync_file_range(SYNC_FILE_RANGE_WRITE)` on
    /// Linux; nothing elsewhere), so that a later ``sync()`` after a large
    /// write waits for its last part only. A hint: what fails is left to
    /// ``sync()`` to report.
    public func startWriteback(from offset: UInt64, count: Int) {
        #if os(Linux)
            guard let call = Self.syncFileRange else { return }
            _ = call(descriptor, Int64(offset), Int64(count), 2)  // SYNC_FILE_RANGE_WRITE
        #endif
    }

    #if os(Linux)
        private typealias SyncFileRange = @convention(c) (Int32, Int64, Int64, UInt32) -> Int32
        /// glibc's `sync_file_range`, which its Swift module does not declare
        /// (the C header declares it for `_GNU_SOURCE` only).
        private static let syncFileRange: SyncFileRange? = dlsym(nil, "sync_file_range").map {
            unsafeBitCast($0, to: SyncFileRange.self)
        }
        private typealias CopyFileRange =
            @convention(c) (
                Int32, UnsafeMutablePointer<Int64>?, Int32, UnsafeMutablePointer<Int64>?, Int, UInt32
            ) -> Int
        /// glibc's `copy_file_range`, declared for `_GNU_SOURCE` only, as above.
        private static let copyFileRange: CopyFileRange? = dlsym(nil, "copy_file_range").map {
            unsafeBitCast($0, to: CopyFileRange.self)
        }
    #endif

    /// Copies the `count` bytes at `offset` of `source` to the same offset
    /// of this file. On Linux the kernel copies them (`copy_file_range`:
    /// they do not pass through this process, which a copy of a whole vault
    /// paid for in page faults and copies); elsewhere, or where the file
    /// system does not support it, through a 1 MiB buffer.
    ///
    /// - Throws: ``SystemError`` from the reads and writes, `EIO` when
    ///   `source` ends before `offset + count`.
    package func copy(_ count: UInt64, from source: SystemFile, at offset: UInt64) throws(SystemError) {
        var done: UInt64 = 0
        #if os(Linux)
            if let call = Self.copyFileRange {
                while done < count {
                    var from = Int64(offset + done)
                    var to = Int64(offset + done)
                    let n = retryOnInterrupt {
                        call(source.descriptor, &from, descriptor, &to, Int(min(count - done, 1 << 30)), 0)
                    }
                    if n > 0 {
                        done += UInt64(n)
                        continue
                    }
                    if n == 0 { throw SystemError(operation: "read", path: source.path, code: EIO) }
                    let code = errno
                    // Not supported here (another file system, an old
                    // kernel, a seccomp filter): copied through a buffer.
                    guard code == EXDEV || code == ENOSYS || code == EINVAL || code == EOPNOTSUPP || code == EPERM else {
                        throw SystemError(operation: "copy_file_range", path: path, code: code)
                    }
                    break
                }
            }
        #endif
        guard done < count else { return }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
        defer { buffer.deallocate() }
        while done < count {
            let n = Int(min(UInt64(buffer.count), count - done))
            let piece = UnsafeMutableRawBufferPointer(rebasing: buffer[0..<n])
            guard try source.read(into: piece, at: offset + done) == n else {
                throw SystemError(operation: "read", path: source.path, code: EIO)
            }
            try write(UnsafeRawBufferPointer(piece), at: offset + done)
            done += UInt64(n)
        }
    }

    /// How many bytes at the start of this file and of `other` are equal,
    /// up to `limit`: both read 1 MiB at a time into two buffers kept for
    /// the whole comparison and compared with `memcmp`.
    ///
    /// - Throws: ``SystemError`` from the reads.
    package func equalPrefixLength(with other: SystemFile, upTo limit: UInt64) throws(SystemError) -> UInt64 {
        let size = 1 << 20
        let mine = UnsafeMutableRawBufferPointer.allocate(byteCount: size, alignment: 16)
        let theirs = UnsafeMutableRawBufferPointer.allocate(byteCount: size, alignment: 16)
        defer {
            mine.deallocate()
            theirs.deallocate()
        }
        var same: UInt64 = 0
        while same < limit {
            let n = Int(min(UInt64(size), limit - same))
            let m = try read(into: UnsafeMutableRawBufferPointer(rebasing: mine[0..<n]), at: same)
            let t = try other.read(into: UnsafeMutableRawBufferPointer(rebasing: theirs[0..<n]), at: same)
            let k = min(m, t)
            if memcmp(mine.baseAddress!, theirs.baseAddress!, k) != 0 {
                var i = 0
                while mine[i] == theirs[i] { i += 1 }
                return same + UInt64(i)
            }
            same += UInt64(k)
            if k < n { break }
        }
        return same
    }

    /// Cuts the file to `size` bytes (`ftruncate`).
    ///
    /// - Throws: ``SystemError`` from `ftruncate(2)`.
    public func truncate(to size: UInt64) throws(SystemError) {
        guard retryOnInterrupt({ ftruncate(descriptor, off_t(size)) }) == 0 else {
            throw SystemError(operation: "ftruncate", path: path, code: errno)
        }
    }

    /// Takes the exclusive advisory lock (`flock(LOCK_EX)`), waiting for
    /// other holders. Released by ``unlock()`` or when the file is closed.
    ///
    /// - Throws: ``SystemError`` from `flock(2)`.
    public func lockExclusive() throws(SystemError) {
        guard retryOnInterrupt({ flock(descriptor, LOCK_EX) }) == 0 else {
            throw SystemError(operation: "flock", path: path, code: errno)
        }
    }

    /// Tries to take the exclusive advisory lock for up to `timeoutSeconds`,
    /// polling every 10 ms. Returns false when another holder kept it.
    ///
    /// - Throws: ``SystemError`` from `flock(2)` other than `EWOULDBLOCK`.
    public func lockExclusive(timeoutSeconds: Double) throws(SystemError) -> Bool {
        let deadline = ProcessStats.monotonicNanoseconds() + UInt64(max(0, timeoutSeconds) * 1e9)
        while true {
            if retryOnInterrupt({ flock(descriptor, LOCK_EX | LOCK_NB) }) == 0 { return true }
            let code = errno
            guard code == EWOULDBLOCK || code == EAGAIN else { throw SystemError(operation: "flock", path: path, code: code) }
            if ProcessStats.monotonicNanoseconds() >= deadline { return false }
            _ = usleep(10_000)
        }
    }

    /// Takes the shared advisory lock (`flock(LOCK_SH)`).
    ///
    /// - Throws: ``SystemError`` from `flock(2)`.
    public func lockShared() throws(SystemError) {
        guard retryOnInterrupt({ flock(descriptor, LOCK_SH) }) == 0 else {
            throw SystemError(operation: "flock", path: path, code: errno)
        }
    }

    /// Releases the advisory lock.
    public func unlock() {
        _ = flock(descriptor, LOCK_UN)
    }
}

/// File-system calls on paths.
public enum FileSystem {
    /// Renames `from` to `to` atomically, replacing `to` (`rename(2)`).
    ///
    /// - Throws: ``SystemError`` from `rename(2)`.
    public static func rename(_ from: String, to: String) throws(SystemError) {
        #if canImport(Glibc) || canImport(Musl)
            let result = Glibc.rename(from, to)
        #else
            let result = Darwin.rename(from, to)
        #endif
        guard result == 0 else { throw SystemError(operation: "rename", path: from, code: errno) }
    }

    /// Makes `to` a new name for the file `from`, failing with `EEXIST` if
    /// `to` exists (`link(2)`): an atomic create-if-absent for a finished file.
    ///
    /// - Throws: ``SystemError`` from `link(2)`.
    public static func link(_ from: String, to: String) throws(SystemError) {
        #if canImport(Glibc) || canImport(Musl)
            let result = Glibc.link(from, to)
        #else
            let result = Darwin.link(from, to)
        #endif
        guard result == 0 else { throw SystemError(operation: "link", path: to, code: errno) }
    }

    /// Removes the file at `path` (`unlink(2)`).
    ///
    /// - Throws: ``SystemError`` from `unlink(2)`.
    public static func remove(_ path: String) throws(SystemError) {
        guard unlink(path) == 0 else { throw SystemError(operation: "unlink", path: path, code: errno) }
    }

    /// Flushes a directory's entries to stable storage, so that a rename or a
    /// new file in it survives power loss.
    ///
    /// - Throws: ``SystemError`` from `open(2)` or `fsync(2)`.
    public static func syncDirectory(_ path: String) throws(SystemError) {
        let fd = retryOnInterrupt { open(path, O_RDONLY | O_CLOEXEC | O_DIRECTORY) }
        guard fd >= 0 else { throw SystemError(operation: "open", path: path, code: errno) }
        defer { _ = close(fd) }
        guard retryOnInterrupt({ fsync(fd) }) == 0 else {
            throw SystemError(operation: "fsync", path: path, code: errno)
        }
    }

    /// Creates a directory with the given permission bits; succeeds if it exists.
    ///
    /// - Throws: ``SystemError`` from `mkdir(2)` other than `EEXIST`.
    public static func makeDirectory(_ path: String, permissions: UInt16 = 0o700) throws(SystemError) {
        guard mkdir(path, mode_t(permissions)) == 0 || errno == EEXIST else {
            throw SystemError(operation: "mkdir", path: path, code: errno)
        }
    }

    /// Which file `path` names now, or nil when nothing is there.
    public static func identity(_ path: String) -> FileIdentity? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return FileIdentity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
    }

    /// True when `path` is a regular file (following symbolic links).
    public static func isRegularFile(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG
    }

    /// True when something exists at `path`.
    public static func exists(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0
    }

    /// True when `path` itself is a name in its directory — a file, or a
    /// symbolic link even to nothing (`lstat(2)`).
    public static func nameExists(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }

    /// The user id owning the file at `path` (following symbolic links).
    ///
    /// - Throws: ``SystemError`` from `stat(2)`.
    public static func owner(_ path: String) throws(SystemError) -> UInt32 {
        var info = stat()
        guard stat(path, &info) == 0 else { throw SystemError(operation: "stat", path: path, code: errno) }
        return UInt32(info.st_uid)
    }

    /// The effective user id of this process.
    public static func currentUserID() -> UInt32 { UInt32(geteuid()) }

    /// The permission bits of the file at `path`.
    ///
    /// - Throws: ``SystemError`` from `stat(2)`.
    public static func permissions(_ path: String) throws(SystemError) -> UInt16 {
        var info = stat()
        guard stat(path, &info) == 0 else { throw SystemError(operation: "stat", path: path, code: errno) }
        return UInt16(info.st_mode & 0o7777)
    }

    /// Sets the permission bits of the file at `path` (`chmod(2)`), such as
    /// `0o600` for a file holding decrypted content.
    ///
    /// - Throws: ``SystemError`` from `chmod(2)`.
    public static func setPermissions(_ path: String, _ permissions: UInt16) throws(SystemError) {
        guard chmod(path, mode_t(permissions)) == 0 else { throw SystemError(operation: "chmod", path: path, code: errno) }
    }

    /// The size in bytes of the file at `path`.
    ///
    /// - Throws: ``SystemError`` from `stat(2)`.
    public static func size(_ path: String) throws(SystemError) -> UInt64 {
        var info = stat()
        guard stat(path, &info) == 0 else { throw SystemError(operation: "stat", path: path, code: errno) }
        return UInt64(info.st_size)
    }

    /// The names in directory `path`, without `.` and `..`, sorted bytewise.
    ///
    /// - Throws: ``SystemError`` from `opendir(3)`.
    public static func listDirectory(_ path: String) throws(SystemError) -> [String] {
        guard let dir = opendir(path) else { throw SystemError(operation: "opendir", path: path, code: errno) }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
    }

    /// What `stat(2)` (or, with `followingLinks: false`, `lstat(2)`) says
    /// of `path`.
    ///
    /// - Throws: ``SystemError`` from `stat(2)`/`lstat(2)`.
    public static func status(_ path: String, followingLinks: Bool = true) throws(SystemError) -> FileStatus {
        var info = stat()
        let result = followingLinks ? stat(path, &info) : lstat(path, &info)
        guard result == 0 else { throw SystemError(operation: followingLinks ? "stat" : "lstat", path: path, code: errno) }
        return FileStatus(info)
    }

    /// True when `path` itself is a symbolic link (`lstat(2)`).
    public static func isSymbolicLink(_ path: String) -> Bool {
        (try? status(path, followingLinks: false))?.isSymbolicLink ?? false
    }

    /// What the symbolic link at `path` holds (`readlink(2)`), or nil when
    /// `path` is not a link.
    public static func symbolicLinkDestination(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: 4097)
        let n = readlink(path, &buffer, 4096)
        guard n >= 0 else { return nil }
        return String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The path of the file `path` names, with every symbolic link resolved
    /// (`realpath(3)`); `path` itself when it cannot be resolved (it does
    /// not exist). A rewrite that renames a new file over a vault must
    /// rename it over this path, not over a link to it.
    public static func resolvingSymbolicLinks(_ path: String) -> String {
        guard let resolved = realpath(path, nil) else { return path }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// True while a process with id `pid` exists (`kill(pid, 0)`; a
    /// process of another user counts). False only when the system says
    /// there is none (`ESRCH`).
    public static func processExists(_ pid: Int32) -> Bool {
        guard pid > 0 else { return false }
        return kill(pid, 0) == 0 || errno != ESRCH
    }

    /// The directory part of `path` (`"."` when there is none).
    public static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        let dir = String(path[..<slash])
        return dir.isEmpty ? "/" : dir
    }

    /// The value of the environment variable `name`, if set.
    public static func environment(_ name: String) -> String? {
        guard let value = getenv(name) else { return nil }
        return String(cString: value)
    }

    /// This process's id.
    public static var processID: Int32 { getpid() }
}

/// Process-level measurements for benchmarks.
public enum ProcessStats {
    /// The peak resident set size of this process so far, in bytes
    /// (`getrusage`; Linux reports kibibytes, Apple platforms bytes).
    public static func peakResidentBytes() -> UInt64 {
        var usage = rusage()
        #if canImport(Glibc)
            _ = getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        #else
            _ = getrusage(RUSAGE_SELF, &usage)
        #endif
        #if canImport(Darwin)
            return UInt64(usage.ru_maxrss)
        #else
            return UInt64(usage.ru_maxrss) * 1024
        #endif
    }

    /// The processors online now (`sysconf(_SC_NPROCESSORS_ONLN)`), at least 1.
    public static var processorCount: Int { max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))) }

    /// A monotonic clock reading in nanoseconds, for measuring intervals.
    public static func monotonicNanoseconds() -> UInt64 {
        var spec = timespec()
        _ = clock_gettime(CLOCK_MONOTONIC, &spec)
        return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
    }

    /// Sleeps for `nanoseconds` (`nanosleep`, resumed after a signal).
    public static func sleep(nanoseconds: UInt64) {
        var request = timespec(tv_sec: Int(nanoseconds / 1_000_000_000), tv_nsec: Int(nanoseconds % 1_000_000_000))
        var left = timespec()
        while nanosleep(&request, &left) == -1 && errno == EINTR { request = left }
    }

    /// The wall clock in milliseconds since the Unix epoch, UTC.
    public static func wallClockMilliseconds() -> Int64 {
        var spec = timespec()
        _ = clock_gettime(CLOCK_REALTIME, &spec)
        return Int64(spec.tv_sec) * 1000 + Int64(spec.tv_nsec) / 1_000_000
    }
}

@inline(__always)
private func retryOnInterrupt<T: FixedWidthInteger>(_ call: () -> T) -> T {
    while true {
        let result = call()
        if result == -1 && errno == EINTR { continue }
        return result
    }
}
