/// Errors reading or writing a ZIP archive.
public enum ZipError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The archive could not be opened or is not a ZIP file: the path and libzip's reason.
    case cannotOpen(path: String, reason: String)
    /// A member's name is unsafe (absolute, `..`, or a NUL): it is refused, never extracted.
    case unsafeName(String)
    /// A member, or the archive's total, is larger than the stated limit (bytes).
    case tooLarge(name: String, limit: UInt64)
    /// Reading or writing failed: the member (or "" for the archive) and libzip's reason.
    case io(name: String, reason: String)

    /// The stable, machine-readable name of the error.
    public var code: String {
        switch self {
        case .cannotOpen: "zip_cannot_open"
        case .unsafeName: "zip_unsafe_name"
        case .tooLarge: "zip_too_large"
        case .io: "zip_io"
        }
    }

    public var description: String {
        switch self {
        case .cannotOpen(let path, let reason): "cannot open \(path) as a ZIP archive: \(reason)"
        case .unsafeName(let name): "the archive holds a member with an unsafe name (\(name.debugDescription)); it was not extracted"
        case .tooLarge(let name, let limit): "\(name.isEmpty ? "the archive" : name) is larger than the limit of \(limit) bytes"
        case .io(let name, let reason): "ZIP \(name.isEmpty ? "archive" : name): \(reason)"
        }
    }
}
