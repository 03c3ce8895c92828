import Foundation
import Testing

/// The exact help texts: a change to the help is a change to this file.
@Suite struct HelpTests {
    static let overview = #"""
quire: an encrypted journal in one file, readable only by your devices.

Usage: quire COMMAND [ARGUMENTS] [OPTIONS]

Journal:
  init VAULT                    create a vault, and this device's key if it has
                                none
  add [VAULT] [TEXT | -]        write an entry; prints its id
  edit [VAULT] ID [TEXT | -]    change an entry's text, tags, date, mood or
                                photos
  rm [VAULT] ID                 delete an entry (asks first on a terminal)
  restore [VAULT] [ID]          bring a deleted entry back (--list: the deleted
                                entries)
  star [VAULT] ID               star an entry (a favourite; 'quire list
                                --starred')
  unstar [VAULT] ID             take an entry's star away
  attachments [VAULT] ID        an entry's attachments and their ids
  extract [VAULT] ATTACHMENT    write an attachment to a file

Reading and finding:
  list [VAULT]                  one line per entry: id, date, first line, tags,
                                marks
  show [VAULT] ID               one entry in full
  versions [VAULT] ID           every version of an entry, with its device and
                                time
  search [VAULT] QUERY...       entries holding every word of QUERY, in any
                                order
  on-this-day [VAULT]           entries written on this day in other years
  stats [VAULT]                 entries per year and month, words, streaks, tags
  tags [VAULT]                  every tag, with how many entries carry it

The file:
  verify [VAULT]                check every byte; exit 2 when something is lost
  info [VAULT]                  what the file shows without a key
  merge [VAULT] COPY            merge a copy into the vault (or, with -o, into a
                                new file)
  resolve [VAULT]               fold in the conflicted copies a sync tool left
  compact [VAULT]               rewrite without old revisions (--rekey: new
                                keys)
  import FORMAT SOURCE [VAULT]  import dayone, dayone-classic, jrnl or markdown
  export [VAULT]                export md, json, dayone, html, epub or pdf

Keys and devices:
  keys status [VAULT]           who can decrypt what, derived from the file
  keys rotate [VAULT]           start a new epoch key for the same devices
  keys escrow-free [VAULT]      turn on escrow-free mode, for good
  keys passphrase [VAULT]       set, change or remove the passphrase
  keys recovery-key [VAULT]     replace the recovery key (--replace)
  keys accept-rollback [VAULT]  accept this file after a rollback warning
  keys accept-tampered [VAULT]  write on after a tampered-commit error
  device code                   this device's code, to enroll it in a vault
  device add [VAULT] CODE       enroll a device from its code
  device remove [VAULT] NAME    remove a device (lost or sold)
  device list [VAULT]           the devices that can open the vault

Setting up:
  journals                      the journals named in the config, and the
                                default one
  journals add NAME VAULT       name a journal in the config (--default: use it
                                when none is named)
  completion SHELL              print shell completions (bash, zsh or fish)

VAULT is a vault's path or a journal's name from the config; left out,
the default journal ($QUIRE_VAULT, else the config's) is used.

Unlocking: --recovery-key-file if given; else this device's key; else --passphrase-file;
else, on a terminal, a prompt for the recovery key or the passphrase.

Environment:
  QUIRE_VAULT       the default journal: a vault's path, or a journal's name
                    from the config
  QUIRE_HOME        this device's key store (default: $XDG_DATA_HOME/quire, else
                    ~/.local/share/quire)
  QUIRE_CONFIG      the config file (default:
                    $XDG_CONFIG_HOME/quire/config.toml, else
                    ~/.config/quire/config.toml)
  VISUAL, EDITOR    the editor 'add' and 'edit' open
  PAGER             the pager for long output on a terminal (default: less;
                    empty or cat: none)
  NO_COLOR          no colour (there is none when stdout is not a terminal)
  TZ                the time zone dates are read and shown in

Exit codes: 0 success, 1 failure, 2 damage found by 'verify', 64 usage error.
Run 'quire help COMMAND' (or 'quire COMMAND --help') for its options.

"""#

    static let initHelp = #"""
Usage: quire init VAULT [OPTIONS]

Create a vault, and this device's key if it has none.

Arguments:
  VAULT  the new vault's path (it must not exist)

Options:
  --name NAME               the journal's name (default: the file name)
  --device-name NAME        name this device's new key (default: the host name)
  --escrow-free             no escrow key may ever be added
  --escrow-key KEY          also wrap the keys to this custodian (64 hex digits,
                            X25519)
  --passphrase              also unlock with a passphrase, typed on the terminal
  --passphrase-file FILE    also unlock with the passphrase in FILE
  --recovery-key-file FILE  write the recovery key to FILE (new, mode 0600)
                            instead of printing it
  --json                    print JSON on stdout (shape below)
  -h, --help                show this help

The recovery key is shown once: write it down and keep it away from
this device. It opens the vault on any device; without it, losing
every enrolled device loses the journal.

To use the vault without naming it: export QUIRE_VAULT=PATH, or
'quire journals add NAME PATH --default'.

JSON: {"path", "vaultID", "name", "escrowFree", "passphrase", "device":
{"name", "fingerprint", "created"}, "recoveryKey", "recoveryKeyFile"}
("recoveryKey" is null when it was written to a file.)

"""#

    static let addHelp = #"""
Usage: quire add [VAULT] [TEXT | -] [OPTIONS]

Write an entry; prints its id.

Arguments:
  VAULT     a vault's path or a journal's name (default: $QUIRE_VAULT, else the
            config's default journal)
  TEXT | -  the text (Markdown); '-': from standard input; left out: the editor

Options:
  --date WHEN               when it happened (default: now)
  --tag TAG...              a tag (--tag a --tag b for more)
  --mood N                  mood from 1 (very bad) to 5 (very good)
  --journal NAME            the journal (notebook) it belongs to
  --starred                 star it (a favourite)
  --attach FILE...          attach files (photos, audio, PDF…): --attach a.jpg
                            b.jpg
  --recovery-key-file FILE  unlock with the recovery key in FILE
  --passphrase-file FILE    unlock with the passphrase in FILE
  --json                    print JSON on stdout (shape below)
  -h, --help                show this help

Without TEXT on a terminal, $VISUAL or $EDITOR opens on a private
temporary file (mode 0600, in a per-user 0700 folder, in memory where
the system has a place for it) that is wiped and removed afterwards;
the editor sees the plaintext. Closing the editor on an empty file
adds nothing.

TEXT on the command line can be seen by other users of this computer
in the process list (ps) while quire runs: prefer the editor, or
'-' with the text on standard input (echo … | quire add -).

WHEN: YYYY-MM-DD[THH:MM[:SS]] in local time, ISO 8601 with an offset,
or yesterday, yesterday 9pm, last monday, 3 days ago, 2 weeks ago,
march 1; a day without a time makes an all-day entry. The entry
records the local time zone; quire says how it read a date in words.

JSON: {"id", "created", "timeZone", "allDay", "attachments"}

Unlocking: --recovery-key-file if given; else this device's key; else --passphrase-file;
else, on a terminal, a prompt for the recovery key or the passphrase.

"""#

    static let listHelp = #"""
Usage: quire list [VAULT] [OPTIONS]

One line per entry: id, date, first line, tags, marks.

Arguments:
  VAULT  a vault's path or a journal's name (default: $QUIRE_VAULT, else the
         config's default journal)

Options:
  --since DATE              entries created at or after DATE
  --until DATE              entries created before DATE (a day: up to its end)
  --tag TAG...              entries with this tag, ignoring case (any of them
                            when repeated)
  --journal NAME...         entries in this journal (notebook), ignoring case
                            (any of them when repeated)
  --starred                 starred entries only
  --mood N[-M]              entries with this mood, or a range of moods (1–5)
  --has-photos              entries with photos only
  --on-this-day             entries written on this day of the year, in any year
  -n, --limit N             at most N entries, the newest, newest first
  --no-pager                print straight to the terminal, without the pager
                            ($PAGER, else less)
  --recovery-key-file FILE  unlock with the recovery key in FILE
  --passphrase-file FILE    unlock with the passphrase in FILE
  --json                    print JSON on stdout (shape below)
  -h, --help                show this help

Oldest first; with --limit N, the newest N, newest first. Dates are
local (TZ); an all-day entry shows its day alone. Marks say when an
entry is starred, has a mood or photos, has conflicting versions
('quire versions ID'), or shows a version no member vouches for
('unattested': a removed device, a passphrase or another program
wrote it; 'unverified': its commit did not verify). Ids are shown
by their first 8 hex digits; every command that takes an entry id
accepts any unique prefix of 4 or more. DATE takes the forms --date
does ('quire help add'). On a terminal, output longer than the
screen goes through the pager.

JSON: {"count", "entries": [{"id", "created", "timeZone", "allDay",
"title", "tags", "journal", "mood", "starred", "attachments",
"conflict", "attested"}], "unreadRecords": {"count", "records":
[{"code", "offset", "frame", "message"}]}}

Unlocking: --recovery-key-file if given; else this device's key; else --passphrase-file;
else, on a terminal, a prompt for the recovery key or the passphrase.

"""#

    static let searchHelp = #"""
Usage: quire search [VAULT] QUERY... [OPTIONS]

Entries holding every word of QUERY, in any order.

Arguments:
  VAULT     a vault's path or a journal's name (default: $QUIRE_VAULT, else the
            config's default journal)
  QUERY...  words, "phrases" and #tags to look for

Options:
  --since DATE              entries created at or after DATE
  --until DATE              entries created before DATE (a day: up to its end)
  --tag TAG...              entries with this tag, ignoring case (any of them
                            when repeated)
  --journal NAME...         entries in this journal (notebook), ignoring case
                            (any of them when repeated)
  --starred                 starred entries only
  --mood N[-M]              entries with this mood, or a range of moods (1–5)
  --has-photos              entries with photos only
  --on-this-day             entries written on this day of the year, in any year
  -n, --limit N             at most N entries, the newest, newest first
  --no-pager                print straight to the terminal, without the pager
                            ($PAGER, else less)
  --recovery-key-file FILE  unlock with the recovery key in FILE
  --passphrase-file FILE    unlock with the passphrase in FILE
  --json                    print JSON on stdout (shape below)
  -h, --help                show this help

Words match anywhere in the text, tags, journal, place, weather and
attachment names, ignoring case and accents (cafe finds Café); a
"quoted phrase" matches those words in that order; #tag matches a
tag. Text without spaces between words (Chinese, Japanese) is found
by any run of its characters. Prints lines as 'quire list' does, and
says so when nothing matches.

The search runs on this device: the vault is decrypted here and
nothing leaves it. QUERY on the command line can be seen by other
users of this computer in the process list (ps) while quire runs.

JSON: {"count", "entries": [{"id", "created", "timeZone", "allDay",
"title", "tags", "journal", "mood", "starred", "attachments",
"conflict", "attested"}], "unreadRecords": {"count", "records":
[{"code", "offset", "frame", "message"}]}}

Unlocking: --recovery-key-file if given; else this device's key; else --passphrase-file;
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
                               (["help", "add"], Self.addHelp), (["help", "list"], Self.listHelp), (["list", "-h"], Self.listHelp),
                               (["search", "--help"], Self.searchHelp)] {
            let r = try box.quire(args)
            #expect(r.status == 0, "\(args)")
            #expect(r.stdout == golden, "\(args)")
            #expect(r.stderr == "")
        }
    }

    @Test func everyCommandHasHelpWithItsUsageLine() throws {
        let box = try Sandbox()
        let names = ["init", "add", "edit", "rm", "restore", "star", "unstar", "attachments", "extract", "list", "show", "versions", "search",
                     "on-this-day", "stats", "tags", "verify", "info", "merge", "resolve", "compact", "import", "export", "keys status", "keys rotate",
                     "keys escrow-free", "keys passphrase", "keys recovery-key", "keys accept-rollback", "keys accept-tampered", "device code", "device add", "device remove", "device list", "journals add",
                     "completion"]
        for name in names {
            let r = try box.quire(name.split(separator: " ").map(String.init) + ["--help"])
            #expect(r.status == 0, "\(name)")
            #expect(r.stdout.hasPrefix("Usage: quire \(name)"), "\(name): \(r.stdout)")
            #expect(r.stdout.contains("-h, --help"), "\(name)")
            #expect(Self.overview.contains("  \(name) ") || Self.overview.contains("  \(name)\n"), "\(name) is missing from the overview")
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
        #expect(k.stderr == "quire: error: 'quire keys' needs one of: status, rotate, escrow-free, passphrase, recovery-key, accept-rollback, accept-tampered\nquire: hint: see 'quire help keys'\n")
    }
}
