#!/usr/bin/env bash
# make demo: the quire CLI on a real journal (Pepys's diary), step by step.
#
#   Scripts/demo.sh [path/to/quire]     (default: .build/release/quire)
#
# Everything happens in a temporary folder, with both devices' key stores
# inside it (QUIRE_HOME), so the user's own key store is never touched.
# Each step prints one line: what it did and how long it took; a step that
# fails prints quire's error and the demo ends with exit 1.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
quire=${1:-$root/.build/release/quire}
fixture=$root/Tests/Fixtures/pepys-dayone.zip
[ -x "$quire" ] && quire=$(cd "$(dirname "$quire")" && pwd)/$(basename "$quire")
[ -x "$quire" ] || { echo "demo: error: no quire binary at $quire" >&2; echo "demo: hint: run 'make demo' (it builds one)" >&2; exit 1; }
[ -f "$fixture" ] || { echo "demo: error: no $fixture" >&2; exit 1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/quire-demo.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"
export QUIRE_HOME="$work/laptop-home" NO_COLOR=1 TZ=${TZ:-Europe/London}
phone_home="$work/phone-home"
cp "$fixture" pepys-dayone.zip

step_no=0
failed=0
acc=0
# run NAME CMD… : runs the command with stdout in $work/out and stderr in
# $work/err; sets $status and $elapsed (milliseconds).
run() {
    local start=${EPOCHREALTIME/./}
    set +e
    "$@" >"$work/out" 2>"$work/err"
    status=$?
    set -e
    elapsed=$(( (${EPOCHREALTIME/./} - start) / 1000 ))
    acc=$((acc + elapsed))
}
# line TEXT: prints the step with the time of every run since the last line.
line() { step_no=$((step_no + 1)); printf '%2d. %s (%s ms)\n' "$step_no" "$1" "$acc"; acc=0; }
plural() { if [ "$1" -eq 1 ]; then echo "$1 $2"; else echo "$1 ${3:-$2s}"; fi; }
fail() { # WHAT: after a failed run, the step and quire's error.
    step_no=$((step_no + 1))
    printf '%2d. FAILED: %s (exit %s)\n' "$step_no" "$1" "$status"
    sed 's/^/    /' "$work/err"
    failed=1
}
must() { # WHAT: stop the demo when the last run failed.
    if [ "$status" -ne 0 ]; then
        fail "$1"
        exit 1
    fi
}
json_number() { sed -n "s/^ *\"$1\" : \([0-9]*\).*/\1/p" "$work/out" | head -n 1; }

echo "Quire demo: Samuel Pepys's diary (1660–1669) through the quire CLI, in $work"

run "$quire" init Journal.quire --name "The Diary of Samuel Pepys" --device-name Laptop --recovery-key-file recovery.txt
must "create the vault"
line "quire init: made this device's key (Laptop) and Journal.quire; the recovery key went to recovery.txt (mode 0600), not the screen"

run "$quire" import dayone pepys-dayone.zip Journal.quire --json
if [ "$status" -eq 0 ]; then
    line "quire import dayone: $(json_number entriesAdded) entries and $(json_number attachmentsStored) attachments from pepys-dayone.zip ($(du -k pepys-dayone.zip | cut -f1) KiB); Journal.quire is now $(du -k Journal.quire | cut -f1) KiB"
else
    fail "import the Day One export (pepys-dayone.zip)"
fi

run sh -c 'echo "Read Pepys all evening; to bed late." | "$1" add Journal.quire - --tag today' sh "$quire"
must "add an entry"
line "quire add: a new entry, id $(head -c 8 "$work/out")…"

run "$quire" list Journal.quire
must "list the entries"
entries=$(wc -l <"$work/out")
run "$quire" search Journal.quire "my wife"
must "search"
line "quire list: $(plural "$entries" entry entries); quire search \"my wife\" (case-insensitive, on this device): $(plural "$(wc -l <"$work/out")" entry entries)"

run "$quire" stats Journal.quire --json
must "stats"
line "quire stats: $(json_number words) words; the longest run of days written on: $(sed -n '/"longestStreak"/,/}/s/^ *"days" : \([0-9]*\).*/\1/p' "$work/out") days"

run env QUIRE_HOME="$phone_home" "$quire" device code --device-name Phone
must "show the phone's device code"
code=$(cat "$work/out")
run "$quire" device add Journal.quire "$code" --name Phone
must "enroll the phone"
line "quire device code on the phone, quire device add on the laptop: $(sed -n 's/^enrolled \("Phone" (fingerprint [-0-9A-Z]*)\).*/\1/p' "$work/out") is enrolled"

# Both devices write while the sync tool is offline: each appends to its own
# copy, and the sync tool keeps the phone's as a Syncthing conflict copy.
cp Journal.quire phone-copy.quire
run env QUIRE_HOME="$phone_home" "$quire" add phone-copy.quire "Written on the phone, on the train."
must "write on the phone"
run "$quire" add Journal.quire "Written on the laptop, at the same time."
must "write on the laptop"
conflict="Journal.sync-conflict-$(date +%Y%m%d-%H%M%S)-PHONE01.quire"
mv phone-copy.quire "$conflict"
line "both devices wrote at once, each to its own copy; the sync tool kept the phone's as $conflict"

run "$quire" resolve Journal.quire
must "fold the conflicted copy"
line "quire resolve: $(head -n 1 "$work/out")"

run "$quire" verify Journal.quire
must "verify"
line "quire verify: $(head -n 1 "$work/out")"

run "$quire" keys status Journal.quire
must "keys status"
line "quire keys status: who can decrypt what, derived from the file, follows"
sed 's/^/    /' "$work/out"

for format in md epub pdf; do
    run "$quire" export Journal.quire --format "$format" -o "Pepys.$format" --json
    if [ "$status" -eq 0 ]; then
        line "quire export --format $format: $(json_number entries) entries, $(json_number attachments) attachments, $(json_number bytes) bytes in Pepys.$format"
    else
        fail "export $format"
    fi
done

# The books, checked by the standard validators (installed by make deps).
if [ -f Pepys.epub ] && command -v java >/dev/null && [ -f /usr/share/java/epubcheck.jar ]; then
    run java -jar /usr/share/java/epubcheck.jar Pepys.epub
    if [ "$status" -eq 0 ]; then
        line "epubcheck Pepys.epub: $(grep -o 'Messages: .*' "$work/out" "$work/err" | head -n 1 | sed 's/^[^:]*:Messages: //')"
    else
        step_no=$((step_no + 1)); printf '%2d. FAILED: epubcheck Pepys.epub\n' "$step_no"; sed 's/^/    /' "$work/out" "$work/err" | head -n 20; failed=1
    fi
fi
if [ -f Pepys.pdf ] && command -v qpdf >/dev/null; then
    run qpdf --check Pepys.pdf
    if [ "$status" -eq 0 ]; then
        line "qpdf --check Pepys.pdf: $(grep -c . "$work/out") lines, no errors; $(qpdf --show-npages Pepys.pdf) pages"
    else
        step_no=$((step_no + 1)); printf '%2d. FAILED: qpdf --check Pepys.pdf\n' "$step_no"; sed 's/^/    /' "$work/out" "$work/err" | head -n 20; failed=1
    fi
fi

if [ "$failed" -ne 0 ]; then
    echo "demo failed"
    exit 1
fi
echo "demo finished (the temporary folder and both key stores are removed)"
