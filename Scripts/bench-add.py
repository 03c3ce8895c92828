#!/usr/bin/env python3
# `quire add` as a whole process at 1k and 50k entries, and the fsyncs it
# makes (issue 14: the device key store's state besides the vault's own).
#
#   python3 Scripts/bench-add.py --quire AFTER [--before BEFORE] [--sizes 1000,50000] [--rounds N]
#
# Builds the seeded synthetic journal of Scripts/bench-peers.py once per size
# and imports it with `quire import jrnl` (as Scripts/bench-listing.py does),
# in a scratch folder on the disk (/var/tmp: fsync is real there), with a
# scratch QUIRE_HOME. Two cases, each run for every binary given, one process
# at a time, the binaries interleaved round by round (the order swapped every
# round) so that load from other work falls on both alike; wall time and the
# child's CPU time (user + system, from wait4) per run; medians and the
# median of the per-round ratios. Each case is also traced once with
# `strace -f -e trace=fsync,fdatasync` to count the flushes:
#
#   add          `quire add V TEXT`, the device memory as the last add left it
#                (each run adds one more entry), through the device-local
#                index cache: each build has its own copy of the vault and
#                key store, whose cache that build wrote first (`quire list
#                -n 1`), so an add opens from the cache's frame table;
#   add, synced  `quire add V TEXT --attach photo.bin` on the vault as another
#                device's commits reached it: the memory is the one `quire init`
#                left, the file holds the imported journal (restored before
#                each run, untimed).
#
# Reports only: it never fails because of a timing.

import argparse
import importlib.util
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
spec = importlib.util.spec_from_file_location("bench_peers", os.path.join(ROOT, "Scripts", "bench-peers.py"))
peers = importlib.util.module_from_spec(spec)
spec.loader.exec_module(peers)


log = peers.log
run = peers.run


def timed(env, argv, prepare=None):
    """One run: (wall ms, CPU ms of the child, user + system)."""
    if prepare:
        subprocess.run(prepare.split(), env=env, check=True)
    start = time.perf_counter()
    p = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(p.pid, 0)
    wall = (time.perf_counter() - start) * 1000
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"failed: {' '.join(argv)}: {p.stderr.read().decode()[-2000:]}")
    p.stderr.close()
    return wall, (usage.ru_utime + usage.ru_stime) * 1000


def fsyncs(env, argv, prepare=None):
    if prepare:
        subprocess.run(prepare.split(), env=env, check=True)
    r = subprocess.run(["strace", "-f", "-e", "trace=fsync,fdatasync", "-o", "/dev/stdout", "-qq"] + argv,
                       env=env, capture_output=True, text=True)
    lines = [l for l in r.stdout.splitlines() if "fsync(" in l or "fdatasync(" in l]
    return len(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quire", required=True)
    ap.add_argument("--before")
    ap.add_argument("--sizes", default="1000,50000")
    ap.add_argument("--rounds", type=int, default=15)
    args = ap.parse_args()
    builds = [("after", os.path.abspath(args.quire))] + ([("before", os.path.abspath(args.before))] if args.before else [])
    if shutil.which("strace") is None:
        raise SystemExit("missing: strace (apt-get install strace)")
    scratch = tempfile.mkdtemp(prefix="quire-bench-add-", dir="/var/tmp")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("QUIRE_", "XDG_"))}
    home = os.path.join(scratch, "home")
    env.update(QUIRE_HOME=home, NO_COLOR="1", LC_ALL="C.UTF-8", TZ="UTC", HOME=scratch)
    photo = os.path.join(scratch, "photo.bin")
    with open(photo, "wb") as f:
        f.write(os.urandom(200_000))
    q = builds[0][1]
    rows = []
    try:
        for n in [int(s) for s in args.sizes.split(",")]:
            log(f"building the {n:,}-entry vault …")
            export = os.path.join(scratch, f"j{n}.json")
            with open(export, "w") as f:
                json.dump({"tags": {}, "entries": [
                    {"title": t, "body": b, "date": w.strftime("%Y-%m-%d"), "time": w.strftime("%H:%M"), "tags": tags, "starred": False}
                    for w, t, b, tags in peers.entries(n, peers.SEED)]}, f)
            vault = os.path.join(scratch, f"v{n}.quire")
            run([q, "init", vault, "--recovery-key-file", vault + ".recovery", "--device-name", "bench"], env)
            # The memory `init` left, for the synced case.
            shutil.copytree(home, home + f".init{n}", symlinks=True)
            run([q, "import", "jrnl", export, vault, "--time-zone", "UTC"], env)
            shutil.copy(vault, vault + ".imported")
            # Restores the state before each run of the synced case.
            synced = os.path.join(scratch, f"synced{n}.sh")
            with open(synced, "w") as f:
                f.write(f"rm -rf {home} && cp -a {home}.init{n} {home} && cp {vault}.imported {vault}\n")
            synced = f"sh {synced}"
            def caseArgs(case, argv, binary):
                """(env, argv) of one run: `add` on the build's own cached copy."""
                if case == "add":
                    v, benv = steady[binary]
                    return benv, [binary, "add", v, "Added.entry.text"]
                return env, argv(binary)

            cases = [("add", lambda b: [b, "add", vault, "Added.entry.text"], None),
                     ("add --attach, synced", lambda b: [b, "add", vault, "photo", "--attach", photo], synced)]
            # The steady case, per build: its own copy of the vault and key
            # store, with the index cache that build wrote (`quire list -n 1`
            # writes it; cache formats differ between builds and each would
            # discard the other's), then one add so that the memory is as an
            # add left it. So each `add` opens through its own cache.
            steady = {}
            for build, binary in builds:
                subprocess.run(synced.split(), env=env, check=True)
                d = os.path.join(scratch, f"steady{n}-{build}")
                shutil.rmtree(d, ignore_errors=True)
                os.makedirs(d)
                shutil.copytree(home, os.path.join(d, "home"), symlinks=True)
                shutil.copy(vault, os.path.join(d, "v.quire"))
                benv = dict(env, QUIRE_HOME=os.path.join(d, "home"))
                run([binary, "list", os.path.join(d, "v.quire"), "-n", "1"], benv)
                run([binary, "add", os.path.join(d, "v.quire"), "Added.entry.text"], benv)
                steady[binary] = (os.path.join(d, "v.quire"), benv)
            for case, argv, prepare in cases:
                if case != "add":
                    subprocess.run(synced.split(), env=env, check=True)
                    run(argv(builds[0][1]), env)
                samples = {build: [] for build, _ in builds}
                for r in range(args.rounds + 1):
                    order = builds if r % 2 == 0 else builds[::-1]
                    for build, binary in order:
                        t = timed(*caseArgs(case, argv, binary), prepare)
                        if r > 0:  # the first round warms the page cache
                            samples[build].append(t)
                syncs = {build: fsyncs(*caseArgs(case, argv, binary), prepare) for build, binary in builds}
                for build, _ in builds:
                    walls = [w for w, _ in samples[build]]
                    cpus = [c for _, c in samples[build]]
                    ratio = ""
                    if build == "after" and len(builds) > 1:
                        ratios = sorted(a[0] / b[0] for a, b in zip(samples["after"], samples["before"]))
                        cratios = sorted(a[1] / b[1] for a, b in zip(samples["after"], samples["before"]))
                        ratio = f"{statistics.median(ratios):.2f} ({statistics.median(cratios):.2f})"
                    rows.append((case, n, build, statistics.median(walls), statistics.median(cpus), syncs[build], ratio))
                    log(f"  {case}, {n:,}, {build}: {rows[-1][3]:,.1f} ms (CPU {rows[-1][4]:,.1f}), {syncs[build]} fsyncs {ratio}")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print("| case | entries | build | wall, median (ms) | CPU, median (ms) | fsyncs | after ÷ before, median of rounds: wall (CPU) |")
    print("|:---|---:|:---|---:|---:|---:|---:|")
    for case, n, build, wall, cpu, syncs, ratio in rows:
        print(f"| {case} | {n:,} | {build} | {wall:,.1f} | {cpu:,.1f} | {syncs} | {ratio} |")


if __name__ == "__main__":
    main()
