// Private folders for plaintext that must exist for a while (the file an
// editor opens): who owns a folder, without following links; removing an
// emptied folder; overwriting a file before unlinking it.

#if canImport(Glibc)
    internal import Glibc
#elseif canImport(Musl)
    internal import Musl
#elseif canImport(Darwin)
    internal import Darwin
#else
    #error("Quire needs a POSIX platform")
#endif

/// What `lstat(2)` says about a path: the link itself, never its target.
public struct LinkStatus: Sendable, Equatable {
    /// A directory (not a symbolic link to one).
    public let isDirectory: Bool
    /// A regular file.
    public let isRegularFile: Bool
    /// A symbolic link.
    public let isSymbolicLink: Bool
    /// The owner's user id.
    public let owner: UInt32
    /// The permission bits (`0o700`…).
    public let permissions: UInt16
    /// The size in bytes.
    public let byteCount: UInt64
}

extension FileSystem {
    /// The status of `path` itself (`lstat(2)`), or nil when nothing is there.
    public static func linkStatus(_ path: String) -> LinkStatus? {
        var info = stat()
        guard lstat(path, &info) == 0 else { return nil }
        let type = info.st_mode & S_IFMT
        return LinkStatus(
            isDirectory: type == S_IFDIR, isRegularFile: type == S_IFREG, isSymbolicLink: type == S_IFLNK,
            owner: UInt32(info.st_uid), permissions: UInt16(info.st_mode & 0o7777), byteCount: UInt64(info.st_size))
    }

    /// Removes the empty directory at `path` (`rmdir(2)`).
    ///
    /// - Throws: ``SystemError`` from `rmdir(2)` (`ENOTEMPTY` when it is not empty).
    public static func removeDirectory(_ path: String) throws(SystemError) {
        guard rmdir(path) == 0 else { throw SystemError(operation: "rmdir", path: path, code: errno) }
    }

    /// Creates the directory `path` with `permissions` (masked only by the
    /// umask, never widened: no moment when it is more open), failing when
    /// anything exists there.
    ///
    /// - Throws: ``SystemError`` from `mkdir(2)`, `EEXIST` included.
    public static func makeNewDirectory(_ path: String, permissions: UInt16 = 0o700) throws(SystemError) {
        guard mkdir(path, mode_t(permissions)) == 0 else { throw SystemError(operation: "mkdir", path: path, code: errno) }
    }

    /// Overwrites the regular file at `path` with zeros, flushes it and
    /// removes it; a symbolic link or anything else is only unlinked (never
    /// followed). Best effort: errors are ignored, since this runs on the way
    /// out.
    public static func wipeAndRemove(_ path: String) {
        if let status = linkStatus(path), status.isRegularFile, status.byteCount > 0 {
            let fd = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW)
            if fd >= 0 {
                let zeros = [UInt8](repeating: 0, count: 64 * 1024)
                var offset: UInt64 = 0
                while offset < status.byteCount {
                    let n = min(UInt64(zeros.count), status.byteCount - offset)
                    let written = zeros.withUnsafeBytes { pwrite(fd, $0.baseAddress, Int(n), off_t(offset)) }
                    if written <= 0 { break }
                    offset += UInt64(written)
                }
                _ = fsync(fd)
                _ = close(fd)
            }
        }
        _ = unlink(path)
    }
}
