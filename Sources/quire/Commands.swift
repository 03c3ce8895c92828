// The command table: every command's name, operands, options and help.
// `quire help`, `quire help CMD` and `quire CMD --help` print from here.

enum Options {
    static let json = OptionSpec(name: "json", help: "print JSON on stdout (shape below)")
    static let recoveryKeyFile = OptionSpec(name: "recovery-key-file", value: "FILE", help: "unlock with the recovery key in FILE")
    static let passphraseFile = OptionSpec(name: "passphrase-file", value: "FILE", help: "unlock with the passphrase in FILE")
    static let unlock = [recoveryKeyFile, passphraseFile]
    static let since = OptionSpec(name: "since", value: "DATE", help: "entries created at or after DATE")
    static let until = OptionSpec(name: "until", value: "DATE", help: "entries created before DATE (a bare date: up to its end)")
    static let tagFilter = OptionSpec(name: "tag", value: "TAG", repeatable: true, help: "entries with this tag (any of them when repeated)")
    static let journalFilter = OptionSpec(name: "journal", value: "NAME", repeatable: true, help: "entries in this journal (any of them when repeated)")
    static let filters = [since, until, tagFilter, journalFilter]
}

let unlockingText = """
    Unlocking: this device's key; else --recovery-key-file or --passphrase-file;
    else, on a terminal, a prompt for the recovery key or the passphrase.
    """

let commandTable: [CommandSpec] = [
    CommandSpec(
        name: "init", operands: "VAULT", summary: "create a vault, and this device's key if it has none", operandCount: 1...1,
        options: [
            OptionSpec(name: "name", value: "NAME", help: "the journal's name (default: the file name)"),
            OptionSpec(name: "device-name", value: "NAME", help: "name this device's new key (default: the host name)"),
            OptionSpec(name: "escrow-free", help: "no escrow key may ever be added"),
            OptionSpec(name: "escrow-key", value: "KEY", help: "also wrap the keys to this custodian (64 hex digits, X25519)"),
            OptionSpec(name: "passphrase", help: "also unlock with a passphrase, typed on the terminal"),
            OptionSpec(name: "passphrase-file", value: "FILE", help: "also unlock with the passphrase in FILE"),
            OptionSpec(name: "recovery-key-file", value: "FILE", help: "write the recovery key to FILE (new, mode 0600) instead of printing it"),
            Options.json,
        ],
        details: """
            The recovery key is shown once: write it down and keep it away from
            this device. It opens the vault on any device; without it, losing
            every enrolled device loses the journal.

            JSON: {"path", "vaultID", "name", "escrowFree", "passphrase",
            "device": {"name", "fingerprint", "created"}, "recoveryKey" (null when
            written to a file), "recoveryKeyFile"}
            """),
    CommandSpec(
        name: "add", operands: "VAULT [TEXT | -]", summary: "write an entry; prints its id", operandCount: 1...2,
        options: [
            OptionSpec(name: "date", value: "WHEN", help: "when it happened (default: now)"),
            OptionSpec(name: "tag", value: "TAG", repeatable: true, help: "a tag"),
            OptionSpec(name: "mood", value: "N", help: "mood from 1 (very bad) to 5 (very good)"),
            OptionSpec(name: "journal", value: "NAME", help: "the journal (notebook) it belongs to"),
            OptionSpec(name: "attach", value: "FILE", repeatable: true, help: "attach a file (photo, audio, PDF…)"),
        ] + Options.unlock + [Options.json],
        details: """
            TEXT is Markdown; '-' reads it from standard input. Without TEXT on a
            terminal, $VISUAL or $EDITOR opens a temporary file (mode 0600, in a
            0700 folder) that is wiped and removed afterwards; the editor sees the
            plaintext. WHEN is YYYY-MM-DD or YYYY-MM-DDTHH:MM[:SS] in local time,
            or ISO 8601 with an offset; the entry records the local time zone.

            JSON: {"id", "created", "timeZone", "attachments"}
            """),
    CommandSpec(
        name: "list", operands: "VAULT", summary: "one line per entry: id, date, first line, tags", operandCount: 1...1,
        options: Options.filters + Options.unlock + [Options.json],
        details: """
            Dates are local (TZ). Ids are shown by their first 8 hex digits; every
            command that takes an entry id accepts any unique prefix of 4 or more.

            JSON: {"count", "entries": [{"id", "created", "timeZone", "title",
            "tags", "journal", "mood", "starred", "attachments", "conflict"}]}
            """),
    CommandSpec(
        name: "show", operands: "VAULT ID", summary: "one entry in full", operandCount: 2...2,
        options: Options.unlock + [Options.json],
        details: """
            JSON: {"id", "created", "modified", "timeZone", "allDay", "text", "tags",
            "journal", "mood", "starred", "pinned", "location", "weather",
            "attachments": [{"id", "mediaType", "fileName", "byteCount"}],
            "revisions", "conflictingRevisions", "verified"}
            """),
    CommandSpec(
        name: "edit", operands: "VAULT ID [TEXT | -]", summary: "replace an entry's text (and tags, date or mood)", operandCount: 2...3,
        options: [
            OptionSpec(name: "date", value: "WHEN", help: "change when it happened"),
            OptionSpec(name: "tag", value: "TAG", repeatable: true, help: "replace the tags"),
            OptionSpec(name: "mood", value: "N", help: "change the mood (1–5)"),
        ] + Options.unlock + [Options.json],
        details: """
            Without TEXT (and without --tag, --date or --mood) on a terminal, the
            editor opens with the current text, as for 'quire add'. The edit is a
            new revision; the old one stays in the file until 'quire compact'.

            JSON: {"id", "revision", "changed" (false when nothing differed)}
            """),
    CommandSpec(
        name: "rm", operands: "VAULT ID", summary: "delete an entry", operandCount: 2...2, options: Options.unlock + [Options.json],
        details: """
            Appends a deletion mark; the text stays in earlier revisions until
            'quire compact'.

            JSON: {"id", "deleted": true}
            """),
    CommandSpec(
        name: "search", operands: "VAULT QUERY", summary: "entries whose text, tags or journal contain QUERY", operandCount: 2...2,
        options: Options.filters + Options.unlock + [Options.json],
        details: """
            Case-insensitive, on this device: the vault is decrypted here and
            nothing leaves it. Prints lines as 'quire list' does.

            JSON: as 'quire list'.
            """),
    CommandSpec(
        name: "attachments", operands: "VAULT ID", summary: "an entry's attachments", operandCount: 2...2,
        options: Options.unlock + [Options.json],
        details: """
            JSON: {"entry", "attachments": [{"id", "mediaType", "fileName", "byteCount"}]}
            """),
    CommandSpec(
        name: "extract", operands: "VAULT ATTACHMENT", summary: "write an attachment to a file", operandCount: 2...2,
        options: [OptionSpec(name: "output", short: "o", value: "FILE", help: "the file to write ('-': standard output); must not exist")]
            + Options.unlock + [Options.json],
        details: """
            ATTACHMENT is an id (or unique prefix) from 'quire attachments'.

            JSON: {"id", "path", "byteCount", "mediaType"}
            """),
    CommandSpec(
        name: "verify", operands: "VAULT", summary: "check every byte; exit 2 when something is lost", operandCount: 1...1,
        options: Options.unlock + [Options.json],
        details: """
            Exit 0: intact (warnings allowed); 2: records lost or untrusted,
            each listed with its frame and offset, or a file too damaged to
            open; 1: nothing damaged, but newer records are not readable with
            this key (a removed device): verify on an enrolled device.

            JSON: {"intact", "fileBytes", "frames", "commits", "intactRecords",
            "unreadableWithThisKey", "issues": [{"code", "message", "offset",
            "frame", "damage"}]}
            """),
    CommandSpec(
        name: "info", operands: "VAULT", summary: "what the file shows without a key", operandCount: 1...1, options: [Options.json],
        details: """
            Needs no key: reads only what anyone holding the file can read
            (Spec/threat-model.md §2).

            The keyring shown is the head of the keyring chain (the newest key
            change); keyrings in a torn tail after the last commit do not count.

            JSON: {"path", "formatVersion", "vaultID", "fileBytes", "frames",
            "framesByKind": {kind: count}, "commits", "epochs", "attachmentStreams",
            "keyrings", "keyringHeads", "latestKeyring": {"epoch", "slots": {kind: count},
            "escrowFree", "passphrases": [{"opsLimit", "memLimitBytes"}]},
            "tornTailBytes", "damagedRegions", "headerCopyDamaged"}
            """),
    CommandSpec(
        name: "merge", operands: "A B", summary: "merge copy B into A (or, with -o, into a new file)", operandCount: 2...2,
        options: [OptionSpec(name: "output", short: "o", value: "OUT", help: "write the merge to OUT (new) and leave A as it is")]
            + Options.unlock + [Options.json],
        details: """
            A and B must be copies of the same vault. The result holds every
            entry, attachment and key change of either.

            JSON: {"vault", "copy", "changed", "recordsAdded", "recordsCarriedUnopened",
            "commitsWritten", "commonPrefixBytes", "leftOut": [message], "droppedFromVault": [message]}
            """),
    CommandSpec(
        name: "resolve", operands: "VAULT", summary: "fold in the conflicted copies a sync tool left", operandCount: 1...1,
        options: Options.unlock + [Options.json],
        details: """
            Finds copies such as 'Journal.sync-conflict-…' (Syncthing),
            'Journal (… conflicted copy …)' (Dropbox), Nextcloud, OneDrive, iCloud
            and Google Drive names, or any file beside the vault that is a copy of
            it; merges each into the vault. A copy the vault then holds entirely
            is deleted only when its name is a Syncthing, Dropbox, Nextcloud or
            Unison conflict name; other copies (OneDrive-, iCloud- or Drive-like
            names, backups) are kept for you to delete. Exit 1 when a copy could
            not be folded.

            JSON: {"vault", "copies": [{"path", "tool", "recordsAdded", "deleted", "keptBecause", "error"}]}
            """),
    CommandSpec(
        name: "compact", operands: "VAULT", summary: "rewrite without old revisions (--rekey: new keys)", operandCount: 1...1,
        options: [
            OptionSpec(name: "rekey", help: "seal everything again under a new epoch: removed devices and old keys read nothing"),
            OptionSpec(name: "keep-history", value: "N", help: "keep N earlier revisions per entry (default 0)"),
            OptionSpec(
                name: "drop-unverified",
                help: "go on when records are damaged or in commits that do not verify: drop them and list them (the way out of a tampered vault)"),
        ] + Options.unlock + [Options.json],
        details: """
            The new file is written beside the vault, checked, and renamed over it.

            JSON: {"bytesBefore", "bytesAfter", "revisionsBefore", "revisionsAfter",
            "attachmentsKept", "attachmentsDropped", "rekeyedEpoch", "dropped"}
            """),
    CommandSpec(
        name: "import", operands: "FORMAT SOURCE VAULT", summary: "import dayone, dayone-classic, jrnl or markdown", operandCount: 3...3,
        options: [
            OptionSpec(name: "journal", value: "NAME", help: "journal name for jrnl and Classic entries (default: the file name)"),
            OptionSpec(name: "time-zone", value: "ZONE", help: "IANA zone for times without one, as in jrnl (default: this system's)"),
        ] + Options.unlock + [Options.json],
        details: """
            FORMAT: dayone (a Day One JSON export, zipped or not), dayone-classic,
            jrnl (jrnl --export json), markdown (a folder with front matter).
            Everything happens on this device. Importing again updates changed
            entries and skips unchanged ones; an entry the vault holds in a
            newer version is left as it is. One bad entry or file never stops
            the import: it is skipped and listed with its reason.

            JSON: {"format", "source", "entriesAdded", "entriesUpdated",
            "entriesUnchanged", "entriesNotNewer", "duplicatesMerged",
            "attachmentsStored", "attachmentsDeduplicated", "attachmentsMissing",
            "unreferencedAttachments", "journals", "skipped": [{"item", "reason"}],
            "missingMedia": [{"item", "reason"}]}
            """),
    CommandSpec(
        name: "export", operands: "VAULT", summary: "export md, json, dayone, html, epub or pdf", operandCount: 1...1,
        options: [
            OptionSpec(name: "format", value: "FORMAT", help: "md, json, dayone, html, epub or pdf"),
            OptionSpec(name: "output", short: "o", value: "OUT", help: "the file (or folder, for md) to write; must not exist"),
        ] + Options.filters + Options.unlock + [Options.json],
        details: """
            Decrypted on this device; nothing but OUT is written.

            JSON: {"format", "path", "entries", "attachments", "bytes"}
            """),
    CommandSpec(
        name: "keys status", operands: "VAULT", summary: "who can decrypt what, derived from the file", operandCount: 1...1,
        options: Options.unlock + [Options.json],
        details: """
            JSON: {"vaultName", "vaultID", "escrowFree", "escrowFreeSince", "epoch", "since",
            "readers": [{"kind", "name", "thisDevice", "retiredAt", "phrase"}],
            "olderRecords": [{"epochs": [epoch], "from", "until", "entryRevisions", "attachments",
            "alsoReadableBy": [reader]}], "notes", "text"}
            """),
    CommandSpec(
        name: "keys rotate", operands: "VAULT", summary: "start a new epoch key for the same devices", operandCount: 1...1,
        options: Options.unlock + [Options.json], details: "JSON: {\"epoch\"}"),
    CommandSpec(
        name: "keys escrow-free", operands: "VAULT", summary: "turn on escrow-free mode, for good", operandCount: 1...1,
        options: Options.unlock + [Options.json],
        details: """
            Removes any escrow key from new records and forbids adding one, ever.
            Needs a recovery method you hold: the recovery key, or a second
            enrolled device. Older records stay readable by a former escrow key
            until 'quire compact --rekey'.

            JSON: {"epoch", "escrowFree": true}
            """),
    CommandSpec(
        name: "keys passphrase", operands: "VAULT", summary: "set, change or remove the passphrase", operandCount: 1...1,
        options: [
            OptionSpec(name: "new-passphrase-file", value: "FILE", help: "the new passphrase, from FILE (default: typed twice)"),
            OptionSpec(name: "remove", help: "remove the passphrase"),
        ] + Options.unlock + [Options.json],
        details: "JSON: {\"epoch\", \"passphrase\": true|false}"),
    CommandSpec(
        name: "device code", operands: "", summary: "this device's code, to enroll it in a vault", operandCount: 0...0,
        options: [OptionSpec(name: "device-name", value: "NAME", help: "name this device's new key (default: the host name)"), Options.json],
        details: """
            Prints the code on stdout (and how to use it on stderr), so that
            "$(quire device code)" gives just the code. Makes this device's key
            first when it has none.

            JSON: {"name", "code", "fingerprint", "created"}
            """),
    CommandSpec(
        name: "device add", operands: "VAULT CODE", summary: "enroll a device from its code", operandCount: 2...2,
        options: [
            OptionSpec(name: "name", value: "NAME", help: "the new device's name in this vault (required)"),
            OptionSpec(name: "yes", help: "do not ask to compare fingerprints"),
        ] + Options.unlock + [Options.json],
        details: """
            Compare the fingerprint printed here with the one the new device
            shows; on a terminal you are asked to confirm.

            JSON: {"name", "fingerprint", "epoch"}
            """),
    CommandSpec(
        name: "device remove", operands: "VAULT NAME", summary: "remove a device (lost or sold)", operandCount: 2...2,
        options: Options.unlock + [Options.json],
        details: """
            New records are sealed under a new epoch it never gets. It can still
            read what it could before until 'quire compact --rekey'.

            JSON: {"name", "fingerprint", "epoch"}
            """),
    CommandSpec(
        name: "device list", operands: "VAULT", summary: "the devices that can open the vault", operandCount: 1...1,
        options: Options.unlock + [Options.json],
        details: """
            JSON: {"devices": [{"name", "fingerprint", "added", "thisDevice"}],
            "removed": [{"name", "fingerprint", "added"}], "recoveryKey": true}
            """),
]

/// The command named by the first one or two words of `arguments`, and the rest.
func findCommand(_ arguments: [String]) -> (CommandSpec, [String])? {
    guard let first = arguments.first else { return nil }
    if arguments.count >= 2, let spec = commandTable.first(where: { $0.name == first + " " + arguments[1] }) {
        return (spec, Array(arguments.dropFirst(2)))
    }
    if let spec = commandTable.first(where: { $0.name == first }) { return (spec, Array(arguments.dropFirst())) }
    return nil
}

enum Help {
    static let groups: [(String, [String])] = [
        ("Journal", ["init", "add", "list", "show", "edit", "rm", "search", "attachments", "extract"]),
        ("The file", ["verify", "info", "merge", "resolve", "compact", "import", "export"]),
        ("Keys and devices", ["keys status", "keys rotate", "keys escrow-free", "keys passphrase", "device code", "device add", "device remove", "device list"]),
    ]

    /// `quire help`.
    static var overview: String {
        var s = """
            quire: an encrypted journal in one file, readable only by your devices.

            Usage: quire COMMAND [ARGUMENTS] [OPTIONS]

            """
        for (title, names) in groups {
            s += "\n\(title):\n"
            for name in names {
                let spec = commandTable.first { $0.name == name }!
                s += "  " + pad(name + (spec.operands.isEmpty ? "" : " " + spec.operands), 28) + spec.summary + "\n"
            }
        }
        s += """

            \(unlockingText)

            Environment:
              QUIRE_HOME        this device's key store (default: $XDG_DATA_HOME/quire,
                                else ~/.local/share/quire)
              VISUAL, EDITOR    the editor 'add' and 'edit' open
              NO_COLOR          no colour (there is none when stdout is not a terminal)
              TZ                the time zone dates are read and shown in

            Exit codes: 0 success, 1 failure, 2 damage found by 'verify', 64 usage error.
            Run 'quire help COMMAND' (or 'quire COMMAND --help') for its options.

            """
        return s
    }

    /// `quire help keys`, `quire help device`: a group's subcommands; nil
    /// when `name` is no group.
    static func group(_ name: String) -> String? {
        let specs = commandTable.filter { $0.name.hasPrefix(name + " ") }
        guard !specs.isEmpty else { return nil }
        var s = "Usage: quire \(name) SUBCOMMAND [ARGUMENTS] [OPTIONS]\n\nSubcommands:\n"
        for spec in specs {
            s += "  " + pad(spec.name + (spec.operands.isEmpty ? "" : " " + spec.operands), 28) + spec.summary + "\n"
        }
        s += "\nRun 'quire help \(name) SUBCOMMAND' for its options.\n"
        return s
    }

    /// `quire help CMD`.
    static func text(for spec: CommandSpec) -> String {
        var s = "Usage: quire \(spec.name)\(spec.operands.isEmpty ? "" : " " + spec.operands) [OPTIONS]\n\n"
        s += capitalized(spec.summary) + ".\n\nOptions:\n"
        let rows = spec.options.map { ($0.display, $0.help) } + [("-h, --help", "show this help")]
        let width = min(30, (rows.map(\.0.count).max() ?? 0) + 2)
        for (left, right) in rows {
            if left.count + 2 > width {
                s += "  \(left)\n  " + String(repeating: " ", count: width) + right + "\n"
            } else {
                s += "  " + pad(left, width) + right + "\n"
            }
        }
        if !spec.details.isEmpty { s += "\n" + spec.details + "\n" }
        if spec.options.contains(where: { $0.name == "recovery-key-file" }) && spec.name != "init" { s += "\n" + unlockingText + "\n" }
        return s
    }

    static func pad(_ s: String, _ width: Int) -> String {
        s.count >= width ? s + " " : s + String(repeating: " ", count: width - s.count)
    }

    static func capitalized(_ s: String) -> String {
        guard let first = s.first else { return s }
        return first.uppercased() + s.dropFirst()
    }
}
