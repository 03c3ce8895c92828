#!/usr/bin/env python3
# What a keyless writer's flood of made-up keyrings costs a reader when it
# is *inserted* before the root (right after the file header) rather than
# appended (Spec/format.md §8.5 step 2, "Why a gate"; ninth review R9-3).
# The bootstrap tries keyrings in file order until the root key is reached,
# so every made-up slot of the credential's kind placed before the root
# costs one sealed box; appended, the gate never tries them.
#
#   python3 Scripts/bench-inserted-flood.py [--keyrings 40,160] [--slots 256] [--rounds 3] [--quire PATH]
#
# The base vault is the merge vector `concurrent-edits` a.quire (a device,
# seed 0x61…, that the vector names). For each flood size it builds three
# files: the base, the base with the flood (N keyrings of S device slots
# with random boxes, random key commitments, and one junk commit frame of
# random bytes under a random key id) appended, and the same flood inserted
# after the 64-byte header. Then, for each file:
#   - the Python reader (Conformance/python): slot trials (SlotOpener.try_slot
#     calls), its CPU seconds (process_time), the issues;
#   - with --quire: `quire verify FILE` as a whole process with the device
#     key in a scratch QUIRE_HOME (key file of keys.md §3.3 written from the
#     seed), CPU (user + sys of the child, wait4) and wall; median of --rounds.
# It prints the cost per MiB of flood and per made-up slot, and the size of
# a one-slot made-up keyring against a slot of a 256-slot one (what a
# per-slot hint that anyone holding the recipient's public key can compute
# would at best divide a flood's cost by: one trial per keyring instead of
# one per slot). Reports only: never fails on a timing.

import argparse
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "Conformance", "python"))
from quire_reader import cbor  # noqa: E402
from quire_reader import keyrings as KR  # noqa: E402
from quire_reader.crypto import blake2b, h256  # noqa: E402
from quire_reader.frames import HEADER_SIZE, KIND_COMMIT, KIND_KEYRING, build_header  # noqa: E402
from quire_reader.reader import Credential, read_vault  # noqa: E402

BASE = os.path.join(ROOT, "Vectors", "merge", "concurrent-edits", "a.quire")
SEED = bytes.fromhex("61" * 32)


def made_up_keyring(rng, slots):
    """One keyring frame from no key: a random key commitment, `slots`
    device slots with random 100-byte boxes, a random sealed part. It
    passes rule 1's public checks, so a reader that turns to it tries
    every slot of its kind."""
    kc = rng.randbytes(32)
    pub = cbor.CMap([("epoch", 1), ("keyCommit", kc),
                     ("slots", [cbor.CMap([("kind", "device"), ("box", rng.randbytes(100))]) for _ in range(slots)])])
    k = cbor.CMap([("nonce", rng.randbytes(24)), ("public", cbor.encode(pub)), ("sealed", rng.randbytes(64))])
    body = cbor.encode(k)
    body += h256(body)
    return build_header(KIND_KEYRING, 0, kc[:6], len(body)) + body


def flood(rng, keyrings, slots):
    frames = b"".join(made_up_keyring(rng, slots) for _ in range(keyrings))
    return frames + build_header(KIND_COMMIT, 0, rng.randbytes(6), 200) + rng.randbytes(200)


def python_open(data):
    count = [0]
    orig = KR.SlotOpener.try_slot

    def counting(self, *a, **k):
        count[0] += 1
        return orig(self, *a, **k)

    KR.SlotOpener.try_slot = counting
    try:
        t = time.process_time()
        res = read_vault(data, Credential.device(SEED))
        cpu = time.process_time() - t
    finally:
        KR.SlotOpener.try_slot = orig
    return count[0], cpu, sorted({i.code for i in res.issues}), len(res.records)


def key_file(home):
    m = cbor.CMap([("version", 1), ("seed", SEED), ("name", "bench"), ("created", 1767225600000)])
    body = b"QUIREDEV" + cbor.encode(m)
    os.makedirs(home, mode=0o700, exist_ok=True)
    path = os.path.join(home, "device.key")
    with open(path, "wb") as f:
        f.write(body + blake2b(body, 16))
    os.chmod(path, 0o600)


def timed_verify(quire, home, path):
    """(cpu seconds, wall seconds, exit status, output) of one `quire verify`."""
    env = dict(os.environ, QUIRE_HOME=home, NO_COLOR="1")
    start = time.perf_counter()
    p = subprocess.Popen([quire, "verify", path], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    out = p.stdout.read()
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.perf_counter() - start
    p.stdout.close()
    return usage.ru_utime + usage.ru_stime, wall, os.waitstatus_to_exitcode(status), out.decode(errors="replace")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--keyrings", default="40,160")
    ap.add_argument("--slots", type=int, default=256)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--quire")
    args = ap.parse_args()
    base = open(BASE, "rb").read()
    rng = random.Random(12)
    print("load average at start: %.2f %.2f %.2f" % os.getloadavg())
    one = len(made_up_keyring(rng, 1))
    full = len(made_up_keyring(rng, 256))
    print("made-up keyring frame: 1 slot %d bytes; 256 slots %d bytes (%.1f bytes a slot): ratio %.2f"
          % (one, full, full / 256, one / (full / 256)))
    scratch = tempfile.mkdtemp(prefix="quire-inserted-flood-")
    try:
        home = os.path.join(scratch, "home")
        if args.quire:
            key_file(home)
        for n in [int(x) for x in args.keyrings.split(",")]:
            g = flood(rng, n, args.slots)
            mib = len(g) / 2**20
            files = [("clean", base), ("appended", base + g), ("inserted after the header", base[:HEADER_SIZE] + g + base[HEADER_SIZE:])]
            print("\nflood: %d keyrings x %d device slots = %d slots, %.2f MiB" % (n, args.slots, n * args.slots, mib))
            py = {}
            for name, data in files:
                trials, cpu, issues, records = python_open(data)
                py[name] = (trials, cpu)
                print("  python  %-26s slot trials %7d  cpu %7.2f s  records %d  issues %s" % (name, trials, cpu, records, issues))
            extra = py["inserted after the header"][0] - py["clean"][0]
            dcpu = py["inserted after the header"][1] - py["clean"][1]
            print("  python  inserted: %d slot trials more than clean (%.0f per MiB of flood), %.2f s CPU more"
                  " (%.2f s per MiB, %.0f us per made-up slot)" % (extra, extra / mib, dcpu, dcpu / mib, dcpu / max(1, extra) * 1e6))
            if args.quire:
                sw = {}
                for name, data in files:
                    path = os.path.join(scratch, name.split()[0] + "-%d.quire" % n)
                    with open(path, "wb") as f:
                        f.write(data)
                    runs = []
                    for _ in range(args.rounds):
                        runs.append(timed_verify(args.quire, home, path))
                    cpu = statistics.median(r[0] for r in runs)
                    wall = statistics.median(r[1] for r in runs)
                    sw[name] = cpu
                    first = runs[0][3].strip().splitlines()
                    print("  quire   %-26s cpu %7.3f s  wall %7.3f s  exit %d  %s"
                          % (name, cpu, wall, runs[0][2], first[0][:90] if first else ""))
                d = sw["inserted after the header"] - sw["clean"]
                print("  quire   inserted: %.3f s CPU more than clean (%.3f s per MiB, %.1f us per made-up slot);"
                      " appended: %.3f s more" % (d, d / mib, d / (n * args.slots) * 1e6, sw["appended"] - sw["clean"]))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print("\nload average at end: %.2f %.2f %.2f" % os.getloadavg())


if __name__ == "__main__":
    main()
