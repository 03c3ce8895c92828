@_spi(Crypto) package import QuireCrypto
import QuireSystem

/// The temporary files writers make beside a vault, and the removal of
/// those a killed writer left (`Spec/merge.md §3.5`, `Spec/format.md §9.1`).
///
/// Two kinds, told apart by name:
///
/// - `NAME.tmp-PID-HEX` (12 lowercase hex digits): a new file being made
///   whole before it is linked or renamed to `NAME` (a new vault, the
///   output of `merge -o`), owned by process `PID`. It is stale when no
///   process `PID` exists.
/// - `.NAME.merge-HEX`: the result of a merge or a compaction of the vault
///   `NAME`, made while its writer holds the vault's write lock for the
///   whole rewrite. It is stale when the caller holds that lock on the
///   file the path names (no rewrite of it can be running); so is one of a
///   stale `NAME.tmp-PID-HEX`.
///
/// Only regular files owned by this user, that start with the vault magic
/// (or are shorter than a header: killed before writing one), and on which
/// no one holds an advisory lock, are removed. Nothing else is touched,
/// whatever its name.
package enum Leftovers {
    /// A temporary name for a new file at `path`, owned by this process:
    /// `path.tmp-PID-HEX`.
    public static func temporaryPath(for path: String, random: any RandomSource) -> String {
        path + ".tmp-\(FileSystem.processID)-" + hex(random.bytes(6))
    }

    /// Removes, in the folder of the vault at `path` (symbolic links
    /// resolved), the temporary files whose writer is gone; best effort,
    /// errors are ignored.
    ///
    /// - Parameter holdingLock: the caller holds the write lock on the file
    ///   `path` names, so no merge or compaction of it is running.
    /// - Returns: the names removed.
    @discardableResult
    public static func removeStale(besideVault path: String, holdingLock: Bool) -> [String] {
        let real = FileSystem.resolvingSymbolicLinks(path)
        let folder = FileSystem.directory(of: real)
        let vaultName = String(real.split(separator: "/").last ?? "")
        guard let names = try? FileSystem.listDirectory(folder) else { return [] }
        var removed: [String] = []
        for name in names where isStale(name, vaultName: vaultName, holdingLock: holdingLock) {
            if removeAbandoned(folder + "/" + name, vaultBytes: true) { removed.append(name) }
        }
        return removed
    }

    /// The rewrite results (`.NAME.merge-HEX`) of the vault at `path`
    /// (symbolic links resolved) that ``removeStale(besideVault:holdingLock:)``
    /// would remove, with their sizes in bytes; removes nothing.
    ///
    /// - Parameter holdingLock: as for ``removeStale(besideVault:holdingLock:)``.
    package static func staleRewrites(besideVault path: String, holdingLock: Bool) -> [(name: String, bytes: UInt64)] {
        let real = FileSystem.resolvingSymbolicLinks(path)
        let folder = FileSystem.directory(of: real)
        let vaultName = String(real.split(separator: "/").last ?? "")
        guard !vaultName.isEmpty, let names = try? FileSystem.listDirectory(folder) else { return [] }
        return names.sorted().compactMap { name in
            guard rewriteTarget(name) == vaultName, isStale(name, vaultName: vaultName, holdingLock: holdingLock) else { return nil }
            return withAbandoned(folder + "/" + name, vaultBytes: true) { _, status in (name, status.size) }
        }
    }

    static func isStale(_ name: String, vaultName: String, holdingLock: Bool) -> Bool {
        if let (_, pid) = ownedTemporary(name) { return !FileSystem.processExists(pid) }
        guard name.hasPrefix("."), let inner = rewriteTarget(name) else { return false }
        if holdingLock && inner == vaultName { return true }
        // The rewrite of a temporary file whose owner is gone.
        if let (_, pid) = ownedTemporary(inner) { return !FileSystem.processExists(pid) }
        return false
    }

    /// `NAME.tmp-PID-HEX` → (NAME, PID).
    static func ownedTemporary(_ name: String) -> (String, Int32)? {
        guard let (base, rest) = split(name, atLast: ".tmp-") else { return nil }
        let parts = rest.split(separator: "-", omittingEmptySubsequences: false)
        guard !base.isEmpty, parts.count == 2, let pid = Int32(parts[0]), pid > 0, isHex12(parts[1]) else { return nil }
        return (base, pid)
    }

    /// `.NAME.merge-HEX` → NAME.
    static func rewriteTarget(_ name: String) -> String? {
        guard name.hasPrefix("."), let (base, rest) = split(name, atLast: ".merge-"), isHex12(Substring(rest)) else { return nil }
        let inner = String(base.dropFirst())
        return inner.isEmpty ? nil : inner
    }

    /// `name` cut around the last occurrence of `marker`.
    static func split(_ name: String, atLast marker: String) -> (String, String)? {
        let bytes = Array(name.utf8)
        let m = Array(marker.utf8)
        guard bytes.count >= m.count else { return nil }
        for start in stride(from: bytes.count - m.count, through: 0, by: -1) where Array(bytes[start..<(start + m.count)]) == m {
            return (String(decoding: bytes[..<start], as: UTF8.self), String(decoding: bytes[(start + m.count)...], as: UTF8.self))
        }
        return nil
    }

    static func isHex12(_ s: Substring) -> Bool {
        s.utf8.count == 12 && s.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }

    /// Removes the temporary file at `path`, whose writer the caller judged
    /// gone, when it is a regular file of this user (not followed through a
    /// link), no one holds a lock on it and, with `vaultBytes`, it starts
    /// with the vault magic (or is shorter than it). Returns true when removed.
    @discardableResult
    public static func removeAbandoned(_ path: String, vaultBytes: Bool) -> Bool {
        withAbandoned(path, vaultBytes: vaultBytes) { file, _ in
            // The name must still be this file (not replaced since it was opened).
            guard let now = FileSystem.identity(path), let mine = try? file.identity(), now == mine else { return false }
            return (try? FileSystem.remove(path)) != nil
        } ?? false
    }

    /// Runs `body` with the temporary file at `path` open and locked when it
    /// is one ``removeAbandoned(_:vaultBytes:)`` may remove: a regular file
    /// of this user (not followed through a link) on which no one holds a
    /// lock and, with `vaultBytes`, that starts with the vault magic (or is
    /// shorter than it). Nil otherwise.
    static func withAbandoned<T>(_ path: String, vaultBytes: Bool, _ body: (SystemFile, FileStatus) -> T) -> T? {
        guard let file = try? SystemFile(path: path, mode: .readOnly, noFollow: true), let status = try? file.status(),
            status.isRegularFile, status.owner == FileSystem.currentUserID()
        else { return nil }
        if vaultBytes && status.size >= UInt64(FileHeader.magic.count) {
            guard let start = try? file.read(count: FileHeader.magic.count, at: 0), start == FileHeader.magic else { return nil }
        }
        guard file.tryLockExclusive() else { return nil }
        defer { file.unlock() }
        return body(file, status)
    }
}
