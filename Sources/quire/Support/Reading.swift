import Foundation
import Quire

/// Reading entries for the commands that show them.
enum Reading {
    /// Opens the vault read-only and returns its live entries, warning on
    /// stderr about records they leave out (``warnAboutUnreadRecords(_:entries:path:out:)``).
    static func entries(_ path: String, _ unlock: UnlockOptions, out: Output) throws(CLIFailure) -> (OpenedVault, [EntrySnapshot]) {
        let opened = try Unlock.open(path, unlock, out: out, writable: false)
        let entries: [EntrySnapshot]
        do { entries = try opened.vault.entries() } catch { throw .vault(error, path: path) }
        warnAboutUnreadRecords(opened.vault, entries: entries, path: path, out: out)
        return (opened, entries)
    }

    /// `quire: warning:` lines for records the entries shown leave out:
    /// newer records this key cannot read (a removed device), damaged
    /// regions and commits that did not verify, entries shown unverified.
    /// From what opening the vault learned: no extra pass over the file.
    static func warnAboutUnreadRecords(_ vault: Vault, entries: [EntrySnapshot], path: String, out: Output) {
        let unread = vault.unreadRecords()
        if let newer = unread.newerEpoch {
            let hidden = unread.hiddenEntryRevisions
            out.warning(
                "newer records exist that this key cannot read\(hidden == 0 ? "" : " (" + plural(hidden, "entry revision") + ")"): "
                    + "this device was removed from the vault (epoch \(newer)), so what is shown stops there. "
                    + "Open the vault on a device still enrolled, or with --recovery-key-file FILE")
        }
        let unverified = entries.filter { !$0.isVerified }.count
        if unread.damagedRecords > 0 {
            out.warning("\(plural(unread.damagedRecords, "record")) in \(path) may be damaged or unreadable; run 'quire verify \(path)'")
        } else if unverified > 0 {
            out.warning("\(plural(unverified, "entry", "entries")) shown could not be verified; run 'quire verify \(path)'")
        }
    }

    /// Says on stderr that nothing matched, so an empty result is not silence.
    static func sayNothingMatched(_ count: Int, total: Int, filtered: Bool, what: String? = nil, out: Output) {
        guard count == 0, !out.json else { return }
        if total == 0 && !filtered && what == nil {
            out.note("no entries yet: write one with 'quire add'")
        } else if let what {
            out.note("no entries match \(what)")
        } else {
            out.note("no entries match the filters")
        }
    }
}
