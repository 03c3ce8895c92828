import Foundation

/// `--recovery-key-file` and `--passphrase-file`: how to unlock a vault
/// this device is not enrolled in (``Unlock``).
struct UnlockOptions: ParsableArguments {
    @Option(help: "unlock with the recovery key in FILE") var recoveryKeyFile: FilePath?
    @Option(help: "unlock with the passphrase in FILE") var passphraseFile: FilePath?
}

/// `--json`.
struct JSONOption: ParsableArguments {
    @Flag(help: "print JSON on stdout (shape below)") var json: Bool
}

/// `--no-pager`.
struct PagerOption: ParsableArguments {
    @Flag(help: "print straight to the terminal, without the pager ($PAGER, else less)") var noPager: Bool
}

/// The filters every command that reads entries takes (``EntryFilter``).
struct EntryFilterOptions: ParsableArguments {
    @Option(placeholder: "DATE", help: "entries created at or after DATE") var since: When?
    @Option(placeholder: "DATE", help: "entries created before DATE (a day: up to its end)") var until: When?
    @Option(placeholder: "TAG", help: "entries with this tag, ignoring case (any of them when repeated)") var tag: [String]
    @Option(placeholder: "NAME", help: "entries in this journal (notebook), ignoring case (any of them when repeated)")
    var journal: [String]
}

/// Filters for browsing: starred, mood, photos, this day, how many.
struct BrowseOptions: ParsableArguments {
    @Flag(help: "starred entries only") var starred: Bool
    @Option(help: "entries with this mood, or a range of moods (1–5)") var mood: MoodRange?
    @Flag(help: "entries with photos only") var hasPhotos: Bool
    @Flag(help: "entries written on this day of the year, in any year") var onThisDay: Bool
    @Option(short: "n", help: "at most N entries, the newest, newest first") var limit: Count?
}
