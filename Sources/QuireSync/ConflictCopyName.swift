/// The sync tools whose conflict-copy names Quire recognises
/// (`Spec/merge.md §2`). A name is only a hint: a copy is a copy because its
/// header names the same vault id.
@_spi(Format) public enum SyncTool: String, Sendable, CaseIterable {
    /// `Journal.sync-conflict-20261129-101530-ABCDEF1.quire`
    case syncthing
    /// `Journal (Sam's conflicted copy 2026-11-29).quire` and localized forms
    /// (a parenthesised phrase holding an ISO date).
    case dropbox
    /// `Journal (conflicted copy 2026-11-29 101530).quire` or
    /// `Journal_conflict-20261129-101530.quire` (Nextcloud, ownCloud).
    case nextcloud
    /// `Journal-LAPTOP.quire` (OneDrive adds the computer's name).
    case onedrive
    /// `Journal (1).quire`
    case googleDrive
    /// `Journal 2.quire`
    case iCloudDrive
    /// `Journal (conflict_on_2026-11-29).quire`
    case unison

    /// True when the tool's pattern is distinctive enough that a person is
    /// unlikely to give a file that name: a date-stamped marker (Syncthing,
    /// Dropbox, Nextcloud, Unison). OneDrive's `-NAME`, iCloud Drive's ` 2`
    /// and Google Drive's ` (1)` are also what people, browsers and file
    /// managers name backups and duplicates, so folding keeps those files
    /// after taking in their content (`Spec/merge.md §4`).
    public var nameIsDistinctive: Bool {
        switch self {
        case .syncthing, .dropbox, .nextcloud, .unison: true
        case .onedrive, .googleDrive, .iCloudDrive: false
        }
    }
}

/// Reads conflict-copy names (`Spec/merge.md §2`): which tool's pattern a
/// file name follows, for the vault file name it is a copy of.
package enum ConflictCopyName {
    /// The tool whose conflict-copy pattern `name` follows as a copy of
    /// `vaultName` (both bare file names, no directory), or nil.
    ///
    /// The vault name is split at its last dot into stem and extension
    /// (`"Journal"`, `".quire"`); the copy must keep the extension.
    /// Unison's and Nextcloud's parenthesised forms are tested before
    /// Dropbox's, which accepts any parenthesised phrase with a date.
    public static func tool(of name: String, copyOf vaultName: String) -> SyncTool? {
        guard name != vaultName else { return nil }
        let (stem, ext) = split(vaultName)
        guard name.hasPrefix(stem), name.hasSuffix(ext), name.count > stem.count + ext.count else { return nil }
        let middle = Array(name.dropFirst(stem.count).dropLast(ext.count))
        let m = String(middle)

        // Syncthing: ".sync-conflict-YYYYMMDD-HHMMSS-DEVICE"
        if m.hasPrefix(".sync-conflict-") {
            let rest = Array(m.dropFirst(".sync-conflict-".count))
            if rest.count >= 17, digits(rest[0..<8]), rest[8] == "-", digits(rest[9..<15]), rest[15] == "-",
                rest[16...].allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) })
            {
                return .syncthing
            }
            return nil
        }
        // Nextcloud: "_conflict-YYYYMMDD-HHMMSS"
        if m.hasPrefix("_conflict-") {
            let rest = Array(m.dropFirst("_conflict-".count))
            if rest.count == 15, digits(rest[0..<8]), rest[8] == "-", digits(rest[9..<15]) { return .nextcloud }
            return nil
        }
        // Parenthesised forms: " (…)"
        if m.hasPrefix(" ("), m.hasSuffix(")") {
            let inner = String(m.dropFirst(2).dropLast())
            if inner.hasPrefix("conflict_on_"), containsISODate(inner) { return .unison }
            if inner.hasPrefix("conflicted copy"), containsISODate(inner) { return .nextcloud }
            if !inner.isEmpty, inner.allSatisfy({ $0.isASCII && $0.isNumber }) { return .googleDrive }
            if containsISODate(inner) { return .dropbox }
            return nil
        }
        // iCloud Drive: " N"
        if m.hasPrefix(" "), m.count > 1, m.dropFirst().allSatisfy({ $0.isASCII && $0.isNumber }) { return .iCloudDrive }
        // OneDrive: "-COMPUTERNAME"
        if m.hasPrefix("-"), m.count > 1,
            m.dropFirst().allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") })
        {
            return .onedrive
        }
        return nil
    }

    /// `"Journal.quire"` → `("Journal", ".quire")`; a name without a dot
    /// (or only a leading one) has no extension.
    static func split(_ name: String) -> (stem: String, ext: String) {
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return (name, "") }
        return (String(name[..<dot]), String(name[dot...]))
    }

    static func digits(_ s: ArraySlice<Character>) -> Bool { s.allSatisfy { $0.isASCII && $0.isNumber } }

    /// True when `text` holds `YYYY-MM-DD` somewhere.
    static func containsISODate(_ text: String) -> Bool {
        let c = Array(text)
        guard c.count >= 10 else { return false }
        for i in 0...(c.count - 10) {
            if digits(c[i..<(i + 4)]), c[i + 4] == "-", digits(c[(i + 5)..<(i + 7)]), c[i + 7] == "-", digits(c[(i + 8)..<(i + 10)]) {
                return true
            }
        }
        return false
    }
}
