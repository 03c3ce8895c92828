import Foundation
import Testing

/// The exact help texts: a change to the help is a change to this file.
@Suite struct HelpTests {
    static let overview = #"""
quire: an encrypted journal in one file, readable only by your devices.

Usage: quire COMMAND [ARGUMENTS] [OPTIONS]

Journal:
  init VAULT                  create a vault, and this device's key if it has none
  add VAULT [TEXT | -]        write an entry; prints its id
  list VAULT                  one line per entry: id, date, first line, tags
  show VAULT ID               one entry in full
  edit VAULT ID [TEXT | -]    replace an entry's text (and tags, date or mood)
  rm VAULT ID                 delete an entry
  search VAULT QUERY          entries whose text, tags or journal contain QUERY
  attachments VAULT ID        an entry's attachments
  extract VAULT ATTACHMENT    write an attachment to a file

The file:
  verify VAULT                check every byte; exit 2 when something is lost
  info VAULT                  what the file shows without a key
  merge A B                   merge copy B into A (or, with -o, into a new file)
  resolve VAULT               fold in the conflicted copies a sync tool left
  compact VAULT               rewrite without old revisions (--rekey: new keys)
  import FORMAT SOURCE VAULT  import dayone, dayone-classic, jrnl or markdown
  export VAULT                export md, json, dayone, html, epub or pdf

Keys and devices:
  keys status VAULT           who can decrypt what, derived from the file
  keys rotate VAULT           start a new epoch key for the same devices
  keys escrow-free VAULT      turn on escrow-free mode, for good
  keys passphrase VAULT       set, change or remove the passphrase
  device code                 this device's code, to enroll it in a vault
  device add VAULT CODE       enroll a device from its code
  device remove VAULT NAME    remove a device (lost or sold)
  device list VAULT           the devices that can open the vault

Unlocking: this device's key; else --recovery-key-file or --passphrase-file;
else, on a terminal, a prompt for the recovery key or the passphrase.

Environment:
  QUIRE_HOME        this device's key store (default: $XDG_DATA_HOME/quire,
                    else ~/.local/share/quire)
  VISUAL, EDITOR    the editor 'add' and 'edit' open
  NO_COLOR          no colour (there is none when stdout is not a terminal)
  TZ                the time zone dates are read and shown in

Exit codes: 0 success, 1 failure, 2 damage found by 'verify', 64 usage error.
Run 'quire help COMMAND' (or 'quire COMMAND --help') for its options.

"""#

    static let initHelp = #"""
Usage: quire init VAULT [OPTIONS]

Create a vault, and this device's key if it has none.

Options:
  --name NAME               the journal's name (default: the file name)
  --device-name NAME        name this device's new key (default: the host name)
  --escrow-free             no escrow key may ever be added
  --escrow-key KEY          also wrap the keys to this custodian (64 hex digits, X25519)
  --passphrase              also unlock with a passphrase, typed on the terminal
  --passphrase-file FILE    also unlock with the passphrase in FILE
  --recovery-key-file FILE  write the recovery key to FILE (new, mode 0600) instead of printing it
  --json                    print JSON on stdout (shape below)
  -h, --help                show this help

The recovery key is shown once: write it down and keep it away from
this device. It opens the vault on any device; without it, losing
every enrolled device loses the journal.

JSON: {"path", "vaultID", "name", "escrowFree", "passphrase",
"device": {"name", "fingerprint", "created"}, "recoveryKey" (null when
written to a file), "recoveryKeyFile"}

"""#

    static let addHelp = #"""
Usage: quire add VAULT [TEXT | -] [OPTIONS]

Write an entry; prints its id.

Options:
  --date WHEN               when it happened (default: now)
  --tag TAG...              a tag
  --mood N                  mood from 1 (very bad) to 5 (very good)
  --journal NAME            the journal (notebook) it belongs to
  --attach FILE...          attach a file (photo, audio, PDF…)
  --recovery-key-file FILE  unlock with the recovery key in FILE
  --passphrase-file FILE    unlock with the passphrase in FILE
  --json                    print JSON on stdout (shape below)
  -h, --help                show this help

TEXT is Markdown; '-' reads it from standard input. Without TEXT on a
terminal, $VISUAL or $EDITOR opens a temporary file (mode 0600, in a
0700 folder) that is wiped and removed afterwards; the editor sees the
plaintext. WHEN is YYYY-MM-DD or YYYY-MM-DDTHH:MM[:SS] in local time,
or ISO 8601 with an offset; the entry records the local time zone.

JSON: {"id", "created", "timeZone", "attachments"}

Unlocking: this device's key; else --recovery-key-file or --passphrase-file;
else, on a terminal, a prompt for the recovery key or the passphrase.

"""#

    static let listHelp = #"""
Usage: quire list VAULT [OPTIONS]

One line per entry: id, date, first line, tags.

Options:
  --since DATE              entries created at or after DATE
  --until DATE              entries created before DATE (a bare date: up to its end)
  --tag TAG...              entries with this tag (any of them when repeated)
  --journal NAME...         entries in this journal (any of them when repeated)
  --recovery-key-file FILE  unlock with the recovery key in FILE
  --passphrase-file FILE    unlock with the passphrase in FILE
  --json                    print JSON on stdout (shape below)
  -h, --help                show this help

Dates are local (TZ). Ids are shown by their first 8 hex digits; every
command that takes an entry id accepts any unique prefix of 4 or more.

JSON: {"count", "entries": [{"id", "created", "timeZone", "title",
"tags", "journal", "mood", "starred", "attachments", "conflict"}],
"unreadRecords": {"count", "records": [{"code", "offset", "frame", "message"}]}}

Unlocking: this device's key; else --recovery-key-file or --passphrase-file;
else, on a terminal, a prompt for the recovery key or the passphrase.

"""#

    @Test func overviewIsExact() throws {
        let box = try Sandbox()
        for args in [["--help"], ["help"], ["-h"]] {
            let r = try box.quire(args)
            #expect(r.status == 0)
            #expect(r.stdout == Self.overview)
            #expect(r.stderr == "")
        }
    }

    @Test func noArgumentsIsAUsageErrorWithTheOverviewOnStderr() throws {
        let r = try Sandbox().quire([])
        #expect(r.status == 64)
        #expect(r.stdout == "")
        #expect(r.stderr == Self.overview)
    }

    @Test func commandHelpIsExact() throws {
        let box = try Sandbox()
        for (args, golden) in [(["help", "init"], Self.initHelp), (["init", "--help"], Self.initHelp), (["add", "--help"], Self.addHelp),
                               (["help", "add"], Self.addHelp), (["help", "list"], Self.listHelp), (["list", "-h"], Self.listHelp)] {
            let r = try box.quire(args)
            #expect(r.status == 0, "\(args)")
            #expect(r.stdout == golden, "\(args)")
            #expect(r.stderr == "")
        }
    }

    @Test func everyCommandHasHelpWithItsUsageLine() throws {
        let box = try Sandbox()
        let names = ["init", "add", "list", "show", "edit", "rm", "search", "attachments", "extract", "verify", "info", "merge", "resolve",
                     "compact", "import", "export", "keys status", "keys rotate", "keys escrow-free", "keys passphrase", "device code",
                     "device add", "device remove", "device list"]
        for name in names {
            let r = try box.quire(name.split(separator: " ").map(String.init) + ["--help"])
            #expect(r.status == 0, "\(name)")
            #expect(r.stdout.hasPrefix("Usage: quire \(name)"), "\(name): \(r.stdout)")
            #expect(r.stdout.contains("-h, --help"), "\(name)")
            #expect(Self.overview.contains("  \(name)"), "\(name) is missing from the overview")
        }
    }

    @Test func unknownCommandsAndHelpTopics() throws {
        let box = try Sandbox()
        let r = try box.quire(["frobnicate"])
        #expect(r.status == 64)
        #expect(r.stdout == "")
        #expect(r.stderr == "quire: error: unknown command 'frobnicate'\nquire: hint: see 'quire help'\n")
        let h = try box.quire(["help", "nope"])
        #expect(h.status == 64)
        #expect(h.stderr == "quire: error: no command 'nope'\nquire: hint: see 'quire help'\n")
        let k = try box.quire(["keys"])
        #expect(k.status == 64)
        #expect(k.stderr == "quire: error: 'quire keys' needs one of: status, rotate, escrow-free, passphrase\nquire: hint: see 'quire help keys'\n")
    }
}
