#!/usr/bin/env python3
# list, search and show as whole processes at 1k, 10k and 50k entries
# (issue 14: "every command flat in the journal's size").
#
#   python3 Scripts/bench-listing.py [--quire PATH] [--before PATH] [--sizes 1000,10000,50000] [--write BENCHMARKS.md]
#   make bench-listing
#
# Builds the seeded synthetic journal of Scripts/bench-peers.py (300–900
# bytes an entry, 5 hours apart, a tag on 3 in 10) once per size, imports it
# into a Quire vault (`quire import jrnl` of a jrnl-style JSON export written
# here; jrnl itself is not needed), then times each command with hyperfine
# (medians; CPU = user + system, means) for this tree's release quire and,
# with --before, another build in the same run. A page is `--limit 20`
# (newest first). Everything runs with a scratch QUIRE_HOME, TZ=UTC and
# NO_COLOR=1, in a folder removed at the end (--keep keeps it). Reports
# only: it never fails because of a timing.

import argparse
import datetime
import importlib.util
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SECTION = "list, search and show by journal size"

spec = importlib.util.spec_from_file_location("bench_peers", os.path.join(ROOT, "Scripts", "bench-peers.py"))
peers = importlib.util.module_from_spec(spec)
spec.loader.exec_module(peers)

WORK = [
    ("list all", ["list", "{v}"]),
    ("list all --json", ["list", "{v}", "--json"]),
    ("list a page (-n 20)", ["list", "{v}", "-n", "20"]),
    ("list a page --json", ["list", "{v}", "-n", "20", "--json"]),
    (f"search {peers.SEARCH_WORD}", ["search", "{v}", peers.SEARCH_WORD]),
    (f"search {peers.SEARCH_WORD} --json", ["search", "{v}", peers.SEARCH_WORD, "--json"]),
    ("show one entry", ["show", "{v}", "{id}"]),
    ("verify (reads everything)", ["verify", "{v}"]),
]


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def run(cmd, env):
    r = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if r.returncode != 0:
        log(r.stdout[-2000:] + r.stderr[-2000:])
        raise SystemExit(f"failed ({r.returncode}): {' '.join(cmd)}")
    return r.stdout


def hyperfine(scratch, env, name, argv, runs):
    out = os.path.join(scratch, "hf-" + name + ".json")
    subprocess.run(
        ["hyperfine", "-N", "--style", "none", "--warmup", "1", "--runs", str(runs), "--export-json", out, " ".join(argv)],
        env=env, check=True, capture_output=True)
    with open(out) as f:
        r = json.load(f)["results"][0]
    return statistics.median(r["times"]) * 1000, (r["user"] + r["system"]) * 1000


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quire", help="the quire binary (default: this tree's release build)")
    ap.add_argument("--before", help="another quire binary timed beside it")
    ap.add_argument("--sizes", default="1000,10000,50000")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--write", metavar="FILE", help="replace (or add) the section in FILE, such as BENCHMARKS.md")
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args()
    if shutil.which("hyperfine") is None:
        raise SystemExit("missing: hyperfine (apt-get install hyperfine)")
    quire = args.quire
    if not quire:
        subprocess.run(["swift", "build", "-c", "release", "--static-swift-stdlib", "--product", "quire"], cwd=ROOT, check=True)
        quire = os.path.join(run(["swift", "build", "-c", "release", "--static-swift-stdlib", "--show-bin-path"], dict(os.environ)).strip(), "quire")
    builds = [("quire", os.path.abspath(quire))] + ([("before", os.path.abspath(args.before))] if args.before else [])
    sizes = [int(s) for s in args.sizes.split(",")]

    scratch = tempfile.mkdtemp(prefix="quire-bench-listing-")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("QUIRE_", "XDG_"))}
    env.update(QUIRE_HOME=os.path.join(scratch, "home"), NO_COLOR="1", LC_ALL="C.UTF-8", TZ="UTC", HOME=scratch)
    started = datetime.datetime.now(datetime.timezone.utc)
    load_start = peers.loadavg()
    results = {}
    try:
        for n in sizes:
            log(f"building the {n:,}-entry vault …")
            export = os.path.join(scratch, f"j{n}.json")
            with open(export, "w") as f:
                json.dump({"tags": {}, "entries": [
                    {"title": t, "body": b, "date": w.strftime("%Y-%m-%d"), "time": w.strftime("%H:%M"), "tags": tags, "starred": False}
                    for w, t, b, tags in peers.entries(n, peers.SEED)]}, f)
            vault = os.path.join(scratch, f"v{n}.quire")
            run([builds[0][1], "init", vault, "--recovery-key-file", vault + ".recovery", "--device-name", "bench"], env)
            run([builds[0][1], "import", "jrnl", export, vault, "--time-zone", "UTC"], env)
            middle = run([builds[0][1], "list", vault], env).splitlines()[n // 2].split()[0]
            for label, argv in WORK:
                for build, binary in builds:
                    cmd = [binary] + [a.format(v=vault, id=middle) for a in argv]
                    results[(label, n, build)] = hyperfine(scratch, env, f"{build}-{n}-{len(results)}", cmd, args.runs)
                    log(f"  {build} {label}, {n:,}: median {results[(label, n, build)][0]:,.0f} ms (CPU {results[(label, n, build)][1]:,.0f} ms)")
    finally:
        if args.keep:
            log(f"kept {scratch}")
        else:
            shutil.rmtree(scratch, ignore_errors=True)

    def cell(label, n, build):
        r = results.get((label, n, build))
        return "–" if r is None else f"{r[0]:,.0f} ms ({r[1]:,.0f})"

    lines = [f"## {SECTION}", "",
             "Whole processes, hyperfine medians with the CPU time (user + system, means) in brackets; "
             f"{args.runs} runs after a warmup each. The journal is the seeded synthetic one of `bench-peers.py` "
             "imported with `quire import jrnl`; a page is `-n 20` (the newest 20, newest first); `show` shows the middle entry.", "",
             f"Command: `python3 Scripts/bench-listing.py{' --before BEFORE' if args.before else ''} --sizes {args.sizes}`; "
             f"{started:%Y-%m-%d %H:%M} UTC; `nproc` = {os.cpu_count()}; load average at start {load_start}, at end {peers.loadavg()}.", ""]
    header = "| work | " + " | ".join(f"{n:,} entries" + (f" ({b})" if len(builds) > 1 else "") for n in sizes for b, _ in builds) + " |"
    lines += [header, "|:---|" + "---:|" * (len(sizes) * len(builds))]
    for label, _ in WORK:
        lines.append(f"| {label} | " + " | ".join(cell(label, n, b) for n in sizes for b, _ in builds) + " |")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.write:
        # bench-peers.py's writer replaces the section named by its SECTION.
        peers.SECTION = SECTION
        peers.write_section(args.write, text)
        log(f"wrote the section '{SECTION}' of {args.write}")


if __name__ == "__main__":
    main()
