#!/usr/bin/env python3
# The cold open through the device-local index cache (Spec/index-cache.md)
# as whole processes at 1k, 10k and 50k entries: `quire add`, `quire list -n
# 20`, `quire show`, and the library's cached open + first page of 50
# (`quire-bench --child open-cached`, which prints its own time from before
# `Vault.open` to the page and its VmHWM) — for this tree's release build and,
# with --before, another build (its quire and quire-bench) in the same run.
#
#   python3 Scripts/bench-cache.py --bin AFTER_BIN_DIR [--before BEFORE_BIN_DIR] [--sizes 1000,10000,50000] [--rounds N]
#
# Each size: the seeded synthetic journal of Scripts/bench-peers.py imported
# with `quire import jrnl`, then one `quire list -n 1` that writes the cache.
# Each build gets its own copy of the vault and key store (cache formats
# differ between builds: each would discard the other's). Every run starts
# from that state (restored untimed before each run of `add`, which grows the
# vault), one process at a time, the builds interleaved round by round (order
# swapped every round); wall time and the child's CPU (user + system, wait4);
# medians, and the median of the per-round after ÷ before ratios (a case
# whose binary a build folder lacks is left out, said on stderr). Peak
# memory is the library child's own VmHWM (a child's ru_maxrss keeps the
# forking parent's size across exec). The load average is printed at start
# and end. Reports only: never fails on a timing.

import argparse
import importlib.util
import os
import json
import shutil
import statistics
import subprocess
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
spec = importlib.util.spec_from_file_location("bench_peers", os.path.join(ROOT, "Scripts", "bench-peers.py"))
peers = importlib.util.module_from_spec(spec)
spec.loader.exec_module(peers)
log = peers.log
run = peers.run


def timed(env, argv):
    start = time.perf_counter()
    p = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out = p.stdout.read()
    _, status, usage = os.wait4(p.pid, 0)
    wall = (time.perf_counter() - start) * 1000
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"failed: {' '.join(argv)}: {p.stderr.read().decode()[-2000:]}")
    p.stdout.close()
    p.stderr.close()
    return wall, (usage.ru_utime + usage.ru_stime) * 1000, usage.ru_maxrss / 1024, out.decode()


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--bin", required=True)
    ap.add_argument("--before")
    ap.add_argument("--sizes", default="1000,10000,50000")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--scratch", help="keep vaults here (reused when present)")
    args = ap.parse_args()
    builds = [("after", os.path.abspath(args.bin))] + ([("before", os.path.abspath(args.before))] if args.before else [])
    scratch = args.scratch or tempfile.mkdtemp(prefix="quire-bench-cache-", dir="/var/tmp")
    os.makedirs(scratch, exist_ok=True)
    base = {k: v for k, v in os.environ.items() if not k.startswith(("QUIRE_", "XDG_"))}
    base.update(NO_COLOR="1", LC_ALL="C.UTF-8", TZ="UTC", HOME=scratch)
    load_start = peers.loadavg()
    rows = []
    try:
        for n in [int(s) for s in args.sizes.split(",")]:
            pristine = os.path.join(scratch, f"n{n}")
            if not os.path.exists(os.path.join(pristine, "done")):
                log(f"building the {n:,}-entry vault …")
                shutil.rmtree(pristine, ignore_errors=True)
                os.makedirs(pristine)
                env = dict(base, QUIRE_HOME=os.path.join(pristine, "home"))
                export = os.path.join(pristine, "j.json")
                with open(export, "w") as f:
                    json.dump({"tags": {}, "entries": [
                        {"title": t, "body": b, "date": w.strftime("%Y-%m-%d"), "time": w.strftime("%H:%M"), "tags": tags,
                         "starred": False} for w, t, b, tags in peers.entries(n, peers.SEED)]}, f)
                v = os.path.join(pristine, "v.quire")
                q = os.path.join(builds[0][1], "quire")
                run([q, "init", v, "--recovery-key-file", v + ".recovery", "--device-name", "bench"], env)
                run([q, "import", "jrnl", export, v, "--time-zone", "UTC"], env)
                os.remove(export)
                open(os.path.join(pristine, "done"), "w").close()
            states = {}
            for build, binary in builds:
                d = os.path.join(scratch, f"n{n}-{build}")
                shutil.rmtree(d, ignore_errors=True)
                shutil.rmtree(d + ".state", ignore_errors=True)
                shutil.copytree(pristine, d, symlinks=True)
                env = dict(base, QUIRE_HOME=os.path.join(d, "home"))
                v = os.path.join(d, "v.quire")
                run([os.path.join(binary, "quire"), "list", v, "-n", "1"], env)  # writes the cache
                middle = run([os.path.join(binary, "quire"), "list", v], env).splitlines()[n // 2].split()[0]
                shutil.copytree(d, d + ".state", symlinks=True)
                states[build] = (d, env, v, middle)

            def restore(build):
                d = states[build][0]
                subprocess.run(["sh", "-c", f"rm -rf {d} && cp -a {d}.state {d}"], check=True)

            cases = [
                ("cached open + first page of 50 (library)", lambda b, s: [os.path.join(b, "quire-bench"), "--child", "open-cached", s[2],
                                                                         s[1]["QUIRE_HOME"]], False),
                ("quire add", lambda b, s: [os.path.join(b, "quire"), "add", s[2], "Added.entry.text"], True),
                ("quire list -n 20", lambda b, s: [os.path.join(b, "quire"), "list", s[2], "-n", "20"], False),
                ("quire show (middle entry)", lambda b, s: [os.path.join(b, "quire"), "show", s[2], s[3]], False),
            ]
            for case, argv, restores in cases:
                # A build folder without quire-bench (a bare quire, as
                # `make release` builds) leaves the library case out.
                if not all(os.path.exists(argv(binary, states[build])[0]) for build, binary in builds):
                    log(f"  {case}: left out (not every build has {os.path.basename(argv(builds[0][1], states[builds[0][0]])[0])})")
                    continue
                samples = {b: [] for b, _ in builds}
                for r in range(args.rounds + 1):
                    order = builds if r % 2 == 0 else builds[::-1]
                    for build, binary in order:
                        if restores:
                            restore(build)
                        wall, cpu, rss, out = timed(states[build][1], argv(binary, states[build]))
                        inner = None
                        rss = None  # ru_maxrss keeps the forking parent's size across exec: only VmHWM is reported
                        for line in out.splitlines():
                            if line.startswith("ns="):
                                inner = int(line[3:]) / 1e6
                            if line.startswith("hwm="):
                                rss = int(line[4:]) / 1048576
                        if r > 0:
                            samples[build].append((wall, cpu, rss, inner))
                for build, _ in builds:
                    s = samples[build]
                    med = lambda i: statistics.median(x[i] for x in s) if s[0][i] is not None else None
                    ratio = ""
                    if build == "after" and len(builds) > 1:
                        rw = statistics.median(sorted(a[0] / b[0] for a, b in zip(samples["after"], samples["before"])))
                        rc = statistics.median(sorted(a[1] / b[1] for a, b in zip(samples["after"], samples["before"])))
                        ratio = f"{rw:.2f} ({rc:.2f})"
                    rows.append((case, n, build, med(0), med(1), med(2), med(3), ratio))
                    inner = f", VmHWM {med(2):.1f} MiB, in-process {med(3):.1f} ms" if med(3) is not None else ""
                    log(f"  {case}, {n:,}, {build}: wall {med(0):.1f} ms, CPU {med(1):.1f} ms{inner} {ratio}")
            for build, _ in builds:
                restore(build)
    finally:
        if not args.scratch:
            shutil.rmtree(scratch, ignore_errors=True)
    print(f"load average at start {load_start}, at end {peers.loadavg()}; nproc {os.cpu_count()}")
    print("| case | entries | build | wall (ms) | CPU user+sys (ms) | VmHWM (MiB) | in-process open+page (ms) | after ÷ before: wall (CPU) |")
    print("|:---|---:|:---|---:|---:|---:|---:|---:|")
    for case, n, build, wall, cpu, rss, inner, ratio in rows:
        i = f"{inner:.1f}" if inner is not None else "–"
        r = f"{rss:.1f}" if rss is not None else "–"
        print(f"| {case} | {n:,} | {build} | {wall:.1f} | {cpu:.1f} | {r} | {i} | {ratio} |")


if __name__ == "__main__":
    main()
