#!/usr/bin/env python3
"""Runs the Quire test vectors (Vectors/README.md) against quire_reader.

usage: python3 run_vectors.py [-v] VECTORS_DIR_OR_FILE...

Each argument is a directory of *.qv files or one .qv file. For every
vector the runner opens the vault with the vector's credential and compares
with the vector header (Vectors/README.md, "File format"):

  - `expect: error`: the error code (`error:`);
  - otherwise: the outcome class, the set of `issue:` lines, `records`,
    `records-hash`, `unverified`, `attachments` and `attachments-hash`.

A header line the comparison needs but the vector lacks counts as a
difference, so a vector without `unverified:` fails rather than passing
unchecked.

Prints PASS or FAIL per vector (with every difference), then, as its last
line, "N/M vectors pass". -v also prints the issues of passing vectors.
Exit status: 0 when at least one vector ran and all passed; 1 when any
failed or none was found; 2 for a usage error.
"""

from __future__ import annotations

import os
import struct
import sys
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

try:
    from quire_reader.crypto import blake2b
    from quire_reader.errors import WARNINGS, QuireError
    from quire_reader.reader import Credential, read_vault
except ImportError as e:                      # PyNaCl or zstandard missing
    print("cannot import the reader (%s); install: python3 -m pip install -r %s"
          % (e, os.path.join(HERE, "requirements.txt")))
    print("0/0 vectors pass")
    sys.exit(1)

# The header lines compared for a vault that opens (Vectors/README.md).
OPEN_KEYS = ("expect", "records", "records-hash", "unverified", "unattested",
             "attachments", "attachments-hash")
ERROR_KEYS = ("expect", "error")


def load_vector(path):
    """Returns (header dict with a sorted "issues" list, vault bytes).

    The header is `key: value` lines up to the first empty line; the vault
    is every byte after that line's newline."""
    with open(path, "rb") as fh:
        raw = fh.read()
    cut = raw.find(b"\n\n")
    if cut < 0:
        raise ValueError("no empty line ends the header")
    header = {}
    issues = []
    for line in raw[:cut].decode("utf-8").split("\n"):
        key, sep, value = line.partition(": ")
        if not sep:
            raise ValueError("header line without ': ': %r" % line)
        if key == "issue":
            code, at, offset = value.partition(" @ ")     # `code @ offset`
            if not at:
                raise ValueError("issue line without ' @ ': %r" % value)
            issues.append("%s@%d" % (code, int(offset)))
        else:
            header[key] = value
    header["issues"] = sorted(issues)
    return header, raw[cut + 2:]


def credential(header):
    if "recovery-key" in header:
        return Credential.recovery(header["recovery-key"])
    if "passphrase" in header:
        return Credential.passphrase(header["passphrase"])
    if "device-seed" in header:
        return Credential.device(bytes.fromhex(header["device-seed"]))
    raise ValueError("the vector names no credential")


def digest(items):
    return blake2b(b"".join(items), 32).hex()


def outcome(data, cred):
    """Computes, for one vault, the values the vector header describes."""
    try:
        res = read_vault(data, cred)
    except QuireError as e:
        return {"expect": "error", "error": e.code, "detail": e.detail}
    issues = sorted({"%s@%d" % (i.code, i.offset) for i in res.issues})
    if not issues:
        expect = "success"
    elif all(i.split("@")[0] in WARNINGS for i in issues):
        expect = "recovered"
    else:
        expect = "damaged"
    return {
        "expect": expect,
        "records": str(len(res.records)),
        "records-hash": digest(bytes([r.kind]) + struct.pack("<I", len(r.payload)) + r.payload
                               for r in res.records),
        "unverified": str(sum(1 for r in res.records if not r.verified)),
        "unattested": str(sum(1 for r in res.records if r.verified and not r.attested)),
        "attachments": str(len(res.attachments)),
        "attachments-hash": digest(blob + struct.pack("<Q", len(content)) + content
                                   for blob, content in res.attachments),
        "issues": issues,
    }


def compare(header, got):
    """Returns the list of differences (empty when the vector passes)."""
    diffs = []
    keys = ERROR_KEYS if header.get("expect") == "error" else OPEN_KEYS
    for k in keys:
        if k not in header:
            diffs.append("vector lacks its %r line" % k)
        elif header[k] != got.get(k):
            diffs.append("%s: expected %s, got %s" % (k, header[k], got.get(k)))
    if header.get("expect") != "error" and got.get("expect") != "error":
        want, have = set(header["issues"]), set(got["issues"])
        diffs += ["missing issue %s" % i for i in sorted(want - have)]
        diffs += ["unexpected issue %s" % i for i in sorted(have - want)]
    if got.get("expect") == "error" and header.get("expect") != "error":
        diffs.append("reader error detail: %s" % got.get("detail"))
    return diffs


def vector_paths(args):
    paths, missing = [], []
    for a in args:
        if os.path.isdir(a):
            paths += sorted(os.path.join(a, n) for n in os.listdir(a) if n.endswith(".qv"))
        elif os.path.isfile(a):
            paths.append(a)
        else:
            missing.append(a)
    return paths, missing


def main(argv):
    verbose = "-v" in argv
    args = [a for a in argv if a != "-v"]
    if not args:
        print(__doc__.strip().split("\n\n")[1])
        return 2
    paths, missing = vector_paths(args)
    for a in missing:
        print("no such vector file or directory: %s" % a)
    passed, failed = 0, []
    for path in paths:
        name = os.path.basename(path)
        try:
            header, data = load_vector(path)
            got = outcome(data, credential(header))
            diffs = compare(header, got)
        except Exception:
            got, diffs = {}, ["reader crashed:\n" + traceback.format_exc()]
        if diffs:
            failed.append(name)
            print("FAIL %s" % name)
            for d in diffs:
                print("     " + d)
        else:
            passed += 1
            print("PASS %s" % name)
            if verbose:
                for i in got.get("issues", []):
                    print("     issue %s" % i)
    if failed:
        print("\nfailing: " + ", ".join(failed))
    print("%d/%d vectors pass" % (passed, len(paths)))
    return 0 if paths and not failed and not missing else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
