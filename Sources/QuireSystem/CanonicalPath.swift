#if canImport(Glibc)
    internal import Glibc
#elseif canImport(Darwin)
    internal import Darwin
#endif

extension FileSystem {
    /// The absolute path of `path` with every symbolic link, `.` and `..`
    /// resolved (`realpath(3)`), or nil when it does not exist or cannot be
    /// resolved. What a device remembers of a vault is keyed by it
    /// (`Spec/keys.md §7`).
    public static func canonicalPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}
