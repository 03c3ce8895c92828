#!/usr/bin/env python3
"""Runs the Quire merge vectors (Vectors/README.md, "Merge vectors")
against quire_reader.merge.

usage: python3 run_merge.py [-v] MERGE_VECTORS_DIR

Each subdirectory holds a.quire (the vault), b.quire (the copy),
merged.quire and expect.txt. The runner merges b into a with the
credential, and compares: `changed`; the result's BLAKE2b-256 with
`merged:` (or, for `merged: resealed`, only the content); that the result
opens and every commit after the common prefix verifies; the number of
unattested commits after the prefix; each `entry:` line (deleted or live,
the number of heads, the winner's text); each `attachment:` line; and the
`profile:` line when there is one (the name of the journal's profile).
A vector with a `refused:` line expects the merge to fail with that error
code instead, and checks nothing else.

Prints PASS or FAIL per vector, then, as its last line, "N/M merge vectors
pass". Exit status: 0 when at least one ran and all passed, 1 otherwise,
2 for a usage error.
"""

from __future__ import annotations

import json
import os
import sys
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from quire_reader import cbor                                    # noqa: E402
from quire_reader.crypto import blake2b                          # noqa: E402
from quire_reader.errors import QuireError                       # noqa: E402
from quire_reader.merge import merge                             # noqa: E402
from quire_reader.keyrings import SlotOpener                      # noqa: E402
from quire_reader.reader import Credential, read_vault           # noqa: E402


def load(path):
    lines = {}
    entries, attachments = [], []
    with open(os.path.join(path, "expect.txt"), encoding="utf-8") as fh:
        first = fh.readline().rstrip("\n")
        if first != "quire merge vector 2":
            raise ValueError("not a merge vector of version 2: %r" % first)
        for line in fh:
            key, _, value = line.rstrip("\n").partition(": ")
            if key == "entry":
                entries.append(value)
            elif key == "attachment":
                attachments.append(value)
            else:
                lines[key] = value
    return lines, entries, attachments


def credential(spec):
    kind, _, value = spec.partition(" ")
    if kind == "device":
        return Credential.device(bytes.fromhex(value))
    if kind == "recovery-key":
        return Credential.recovery(value)
    raise ValueError("unknown credential %r" % spec)


def entries(result):
    """merge.md §5: entry id -> (heads, winner), from the released
    revisions (a revision id seen twice is one revision: the frame of the
    highest standing, then the first in file order)."""
    revisions, standing = {}, {}
    for r in result.records:
        if r.kind != 0x10:
            continue
        v = cbor.decode(r.payload)
        rank = r.standing
        key = (v.get("entry"), v.get("revision"))
        if key not in standing or rank > standing[key]:
            standing[key] = rank
            revisions.setdefault(v.get("entry"), {})[v.get("revision")] = v
    out = {}
    for entry, revs in revisions.items():
        # A revision not released from a commit a current member attested
        # does not retire (as a parent) one that is.
        by_attested = {p for rid, v in revs.items() if standing[(entry, rid)] == 3 for p in v.get("parents", [])}
        by_others = {p for rid, v in revs.items() if standing[(entry, rid)] != 3 for p in v.get("parents", [])}
        heads = [v for rid, v in revs.items()
                 if rid not in by_attested and (standing[(entry, rid)] == 3 or rid not in by_others)]
        # The winner: the highest standing, then the greatest clock, then
        # the greatest revision id (a clock is its writer's claim, R10-2).
        out[entry] = heads, max(heads, key=lambda v: (standing[(entry, v.get("revision"))],
                                                       v.get("clock", 0), v.get("revision")))
    return out


def profile(result):
    """records.md §5: the journal's profile, of the released ones: the
    highest standing (attested by a current member, verified, unverified),
    then the greatest clock, then the later in the file."""
    best, key = None, None
    for r in result.records:
        if r.kind != 0x80:
            continue
        v = cbor.decode(r.payload)
        k = (r.standing, v.get("clock", 0))
        if key is None or k >= key:
            best, key = v, k
    return best


def winners(result):
    return [win for _, win in entries(result).values()]


def entry_lines(result):
    out = []
    for entry, (heads, win) in sorted(entries(result).items()):
        deleted = win.get("deleted", False)
        body = win.get("body")
        text = "" if deleted or body is None else body.get("text", "")
        out.append("%s %s heads=%d text=%s" % (entry.hex(), "deleted" if deleted else "live",
                                               len(heads), json.dumps(text, ensure_ascii=False)))
    return out


def attachment_lines(result):
    """Read as: each blob id that an attachment reference of an entry's
    winning revision names, resolved as format.md §7.3 says (through
    `aliases`); Vectors/README.md does not describe these lines."""
    out = set()
    for v in winners(result):
        body = v.get("body")
        for ref in (body.get("attachments", []) if body is not None else []):
            content = result.resolve(ref.get("blob"))
            out.add("%s size=%s content=%s" % (
                ref.get("blob").hex(), "?" if content is None else len(content),
                "unresolved" if content is None else blake2b(content, 32).hex()))
    return sorted(out)


def check(path):
    lines, entries, attachments = load(path)
    a = open(os.path.join(path, "a.quire"), "rb").read()
    b = open(os.path.join(path, "b.quire"), "rb").read()
    cred = credential(lines["credential"])
    diffs = []
    if "refused" in lines:
        # a refused merge (merge.md §3.1): that error, nothing written
        try:
            merge(a, b, cred)
        except QuireError as e:
            if e.code != lines["refused"]:
                diffs.append("refused: expected %s, got %s" % (lines["refused"], e.code))
            return diffs
        return diffs + ["refused: expected %s, the merge went through" % lines["refused"]]
    got = merge(a, b, cred)
    if ("yes" if got.changed else "no") != lines["changed"]:
        diffs.append("changed: expected %s, got %s" % (lines["changed"], got.changed))
    if lines["merged"] != "resealed":
        h = blake2b(got.data, 32).hex()
        if h != lines["merged"]:
            want = open(os.path.join(path, "merged.quire"), "rb").read()
            at = next((i for i in range(min(len(want), len(got.data))) if want[i] != got.data[i]),
                      min(len(want), len(got.data)))
            diffs.append("merged: expected %s, got %s (%d bytes against %d, first difference "
                         "at %d)" % (lines["merged"], h, len(got.data), len(want), at))
    try:
        res = read_vault(got.data, cred)
    except QuireError as e:
        return diffs + ["the result does not open: %s" % e]
    after = [c for c in res.commits if c.frame.offset >= got.prefix]
    bad = [c.frame.offset for c in after if not c.verified or c.stale]
    if bad:
        diffs.append("commits after the common prefix that do not verify: %s" % bad)
    unattested = sum(1 for c in after if c.verified and not c.attested)
    if str(unattested) != lines["unattested-commits"]:
        diffs.append("unattested-commits: expected %s, got %d"
                     % (lines["unattested-commits"], unattested))
    if "kept-attestations" in lines:
        # Read as: the commits after the common prefix whose attestation is
        # a current member's other than the merging one's (kept in place).
        merger = SlotOpener(cred).own_key
        kept = sum(1 for c in after if c.verified and c.attested and c.signer != merger)
        if str(kept) != lines["kept-attestations"]:
            diffs.append("kept-attestations: expected %s, got %d" % (lines["kept-attestations"], kept))
    if "profile" in lines:
        # Read as: the name of the journal's profile, a JSON string.
        p = profile(res)
        name = json.dumps("" if p is None else p.get("name", ""), ensure_ascii=False)
        if name != lines["profile"]:
            diffs.append("profile: expected %s, got %s" % (lines["profile"], name))
    have = entry_lines(res)
    diffs += ["missing entry %s" % e for e in entries if e not in have]
    diffs += ["unexpected entry %s" % e for e in have if e not in entries]
    if attachments:
        have = attachment_lines(res)
        diffs += ["missing attachment %s" % x for x in attachments if x not in have]
        diffs += ["unexpected attachment %s" % x for x in have if x not in attachments]
    return diffs


def main(argv):
    verbose = "-v" in argv
    args = [x for x in argv if x != "-v"]
    if len(args) != 1 or not os.path.isdir(args[0]):
        print(__doc__.strip().split("\n\n")[1])
        return 2
    root = args[0]
    names = sorted(n for n in os.listdir(root) if os.path.isdir(os.path.join(root, n)))
    passed, failed = 0, []
    for name in names:
        try:
            diffs = check(os.path.join(root, name))
        except Exception:
            diffs = ["merge crashed:\n" + traceback.format_exc()]
        if diffs:
            failed.append(name)
            print("FAIL %s" % name)
            for d in diffs:
                print("     " + d)
        else:
            passed += 1
            if verbose:
                print("PASS %s" % name)
    if failed:
        print("\nfailing: " + ", ".join(failed))
    print("%d/%d merge vectors pass" % (passed, len(names)))
    return 0 if names and not failed else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
