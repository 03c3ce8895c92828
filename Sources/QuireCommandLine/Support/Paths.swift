import Foundation
import QuireSystem

/// Checks on paths given on the command line, made before any work so that
/// the error names the real problem (a folder, a missing folder) instead of
/// what a system call said later.
enum Paths {
    /// True when `path` names a folder (following symbolic links).
    static func isFolder(_ path: String) -> Bool {
        var folder: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &folder) && folder.boolValue
    }

    /// The folder a new file at `path` would go in: `.` for a bare name,
    /// `/` for a name in the root. Pure string work on `/`-separated
    /// components, so no path (one character, `/`, `..`) can trap.
    static func parentFolder(of path: String) -> String {
        var trimmed = Substring(path)
        while trimmed.count > 1 && trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
        guard let slash = trimmed.lastIndex(of: "/") else { return "." }
        let dir = trimmed[..<slash]
        return dir.isEmpty ? "/" : String(dir)
    }

    /// The last component of `path` (`Journal.quire` for
    /// `dir/Journal.quire`), ignoring trailing slashes; `path` itself when
    /// it has no other.
    static func lastComponent(of path: String) -> String {
        let parts = path.split(separator: "/")
        return parts.last.map(String.init) ?? path
    }

    /// `name` without its extension (`Journal` for `Journal.quire`); a name
    /// starting with its only dot (`.quire`) is kept whole.
    static func deletingExtension(of name: String) -> String {
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return name }
        return String(name[..<dot])
    }

    /// The extension of the last component of `path`, without the dot, or
    /// `""` when it has none.
    static func pathExtension(of path: String) -> String {
        let name = lastComponent(of: path)
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return "" }
        return String(name[name.index(after: dot)...])
    }

    /// Checks that the folder a new file at `path` goes in exists.
    ///
    /// - Throws: ``CLIFailure`` (exit 1, `not_found`) naming the missing folder.
    static func requireParentFolder(_ path: String, nothing: String = "nothing was written") throws(CLIFailure) {
        let dir = parentFolder(of: path)
        guard isFolder(dir) else {
            throw CLIFailure(
                "cannot write \(path): the folder \(dir) does not exist; \(nothing)",
                hint: "create the folder first (mkdir -p \(dir)), or choose a path in a folder that exists", code: "not_found")
        }
    }

    /// A Foundation error in words, from its underlying POSIX error when it
    /// has one (never "The operation could not be completed").
    static func describe(_ error: any Error) -> String {
        let ns = error as NSError
        if let under = ns.userInfo[NSUnderlyingErrorKey] as? NSError { return "\(under.localizedDescription) (errno \(under.code))" }
        if let path = ns.userInfo[NSFilePathErrorKey] as? String, ns.domain == NSCocoaErrorDomain {
            switch ns.code {
            case NSFileNoSuchFileError, NSFileReadNoSuchFileError: return "\(path) does not exist"
            case NSFileWriteOutOfSpaceError: return "the disk is full (errno 28)"
            default: break
            }
        }
        return ns.domain == NSCocoaErrorDomain ? "system error \(ns.code)" : "\(error)"
    }
}
