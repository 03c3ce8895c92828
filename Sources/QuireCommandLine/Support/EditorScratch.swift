import Foundation
@_spi(Format) import Quire
import QuireSystem

/// Where the editor's file lives: a per-user folder only this user can
/// open, memory-backed where the platform has one, holding one folder per
/// editing session. A session holds an advisory lock for as long as its
/// quire runs, so that a later run can tell a dead session (quire was
/// killed, even by SIGKILL) from a live one and wipe it.
///
/// The folder is the first of these that exists or can be made, and is a
/// directory owned by this user with no permission for others:
/// 1. `$XDG_RUNTIME_DIR/quire-editor` (a per-user tmpfs on most Linux desktops);
/// 2. `/dev/shm/quire-editor-UID` (memory-backed);
/// 3. `editing/` in this device's key store (`$QUIRE_HOME`…), on disk.
enum EditorScratch {
    /// The candidate folders, most private first.
    static func candidates() -> [String] {
        var out: [String] = []
        if let runtime = FileSystem.environment("XDG_RUNTIME_DIR"), runtime.hasPrefix("/"),
            let status = FileSystem.linkStatus(runtime), status.isDirectory,
            status.owner == FileSystem.currentUserID(), status.permissions & 0o077 == 0
        {
            out.append(runtime + "/quire-editor")
        }
        if let shm = FileSystem.linkStatus("/dev/shm"), shm.isDirectory {
            out.append("/dev/shm/quire-editor-\(FileSystem.currentUserID())")
        }
        if let store = try? FileDeviceKeyStore.standard() { out.append(store.directory + "/editing") }
        return out
    }

    /// True when `path` is a real directory (not a link) owned by this user
    /// that nobody else may enter.
    static func isPrivateFolder(_ path: String) -> Bool {
        guard let s = FileSystem.linkStatus(path) else { return false }
        return s.isDirectory && s.owner == FileSystem.currentUserID() && s.permissions & 0o077 == 0
    }

    /// The folder new sessions go in, made (mode 0700) when missing.
    ///
    /// - Throws: ``CLIFailure`` when no candidate is private and usable.
    static func root() throws(CLIFailure) -> String {
        for path in candidates() {
            if FileSystem.linkStatus(path) == nil {
                if let store = try? FileDeviceKeyStore.standard(), path.hasPrefix(store.directory + "/") {
                    try? FileSystem.makeDirectory(store.directory, permissions: 0o700)
                }
                try? FileSystem.makeNewDirectory(path, permissions: 0o700)
            }
            if isPrivateFolder(path) { return path }
        }
        throw CLIFailure(
            "there is no private folder for the editor's file",
            hint: "set XDG_RUNTIME_DIR to a folder only you can open, or give the text as TEXT or '-'")
    }

    /// Wipes and removes every session whose quire is gone, in every
    /// candidate folder that exists. Cheap when there is none (a `stat` per
    /// candidate). Runs at the start of every command that opens a vault.
    static func sweep() {
        for root in candidates() where isPrivateFolder(root) {
            guard let names = try? FileSystem.listDirectory(root) else { continue }
            for name in names where name.hasPrefix("session-") {
                let folder = root + "/" + name
                guard let status = FileSystem.linkStatus(folder), status.isDirectory else { continue }
                if EditorSession.isAbandoned(folder, name: name) { EditorSession.wipe(folder: folder) }
            }
        }
    }
}

/// One editing session: a fresh 0700 folder in ``EditorScratch/root()``
/// holding the entry's file (0600) and a lock file whose advisory lock this
/// process holds until the session ends.
final class EditorSession {
    let folder: String
    /// The file the editor opens.
    let path: String
    private let lock: SystemFile
    private var ended = false

    /// Makes the session and writes `initial` (UTF-8) to its file.
    ///
    /// - Throws: ``CLIFailure`` when the folder or a file cannot be made.
    init(initial: [UInt8]) throws(CLIFailure) {
        let root = try EditorScratch.root()
        var made: String?
        for _ in 0..<8 {
            let random = (0..<8).map { _ in String(UInt8.random(in: 0...255), radix: 16) }.joined()
            let candidate = root + "/session-\(FileSystem.processID)-" + random
            do {
                try FileSystem.makeNewDirectory(candidate, permissions: 0o700)
                made = candidate
                break
            } catch {
                if !error.isAlreadyExists {
                    throw CLIFailure("cannot make a private folder for the editor: \(error)")
                }
            }
        }
        guard let folder = made else { throw CLIFailure("cannot make a private folder for the editor in \(root)") }
        self.folder = folder
        path = folder + "/entry.md"
        do {
            lock = try SystemFile(path: folder + "/lock", mode: .createExclusive(permissions: 0o600))
            guard try lock.lockExclusive(timeoutSeconds: 0) else { throw SystemError(operation: "flock", path: folder + "/lock", code: 11) }
            let file = try SystemFile(path: path, mode: .createExclusive(permissions: 0o600))
            try file.write(initial, at: 0)
        } catch {
            EditorSession.wipe(folder: folder)
            throw CLIFailure("cannot write the temporary file for the editor: \(error)")
        }
    }

    /// Reads what the editor saved.
    ///
    /// - Throws: ``CLIFailure`` when the file is gone or unreadable.
    func read() throws(CLIFailure) -> [UInt8] {
        do {
            let file = try SystemFile(path: path, mode: .readOnly)
            return try file.read(count: Int(try file.size()), at: 0)
        } catch {
            throw CLIFailure("cannot read back what the editor saved: \(error)")
        }
    }

    /// Wipes every file in the folder (the entry, an editor's swap and
    /// backup files) and removes it, then releases the lock.
    func end() {
        guard !ended else { return }
        ended = true
        EditorSession.wipe(folder: folder)
        lock.unlock()
    }

    deinit { end() }

    /// True when the session's quire is gone: its lock can be taken, or it
    /// has no lock file and the process named in its folder name has ended.
    static func isAbandoned(_ folder: String, name: String) -> Bool {
        if let lock = try? SystemFile(path: folder + "/lock", mode: .readOnly) {
            return (try? lock.lockExclusive(timeoutSeconds: 0)) == true
        }
        let pid = name.split(separator: "-").dropFirst().first.flatMap { Int32($0) }
        return pid.map { !ProcessControl.isAlive($0) } ?? true
    }

    /// Overwrites and removes every file in `folder`, then the folder.
    static func wipe(folder: String) {
        for name in (try? FileSystem.listDirectory(folder)) ?? [] { FileSystem.wipeAndRemove(folder + "/" + name) }
        try? FileSystem.removeDirectory(folder)
    }
}
