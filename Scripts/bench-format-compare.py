#!/usr/bin/env python3
# Format 2 against format 1, same machine, same run (issue 12, "No regression").
#
#   python3 Scripts/bench-format-compare.py [--quick] [--rounds N] [--v1-ref REF] [--write BENCHMARKS.md]
#   make bench-compare
#
# Builds this tree's release quire-bench (format 2) and the quire-bench of
# commit b45ed56 (format 1, `main` before format 2 landed; from `git archive` into a scratch directory under
# /tmp, with Sources/quire-bench/CompareChild.swift copied in and its one
# dispatch line added to main.swift: nothing is committed or changed on
# `main`). Each binary builds its own vaults from the same seeds (the same
# entries), then the hidden `--compare-child` modes run one measurement per
# process, v1 and v2 interleaved round by round (the order swapped every
# round), so that load from other processes falls on both alike.
#
# Prints, per figure, the median over rounds of each side (wall time), the
# ratio of the medians (v2 / v1), the range of the per-round ratios, the
# ratio of the median CPU times of the whole child process (every thread:
# less disturbed by other work on a shared machine), and the load average.
# The target is judged on wall time. Reports only: it never fails because of
# a timing.

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DISPATCH_AFTER = 'if args.first == "--pdf-child" { return PDFBenchmark.runChild(Array(args.dropFirst())) }'
DISPATCH = '    if args.first == "--compare-child" { return CompareChild.main(Array(args.dropFirst())) }'
SECTION = "Format 2 against format 1"


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def loadavg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def run(cmd, cwd=None):
    r = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if r.returncode != 0:
        log(r.stdout[-4000:])
        log(r.stderr[-4000:])
        raise SystemExit(f"failed ({r.returncode}): {' '.join(cmd)}")
    return r.stdout


def build(tree):
    log(f"building quire-bench (release) in {tree} …")
    run(["swift", "build", "-c", "release", "--static-swift-stdlib", "--product", "quire-bench"], cwd=tree)
    return os.path.join(run(["swift", "build", "-c", "release", "--static-swift-stdlib", "--show-bin-path"], cwd=tree).strip(), "quire-bench")


def prepare_v1(ref, scratch):
    commit = run(["git", "-C", ROOT, "rev-parse", "--short", ref]).strip()
    tree = os.path.join(scratch, "quire-v1")
    stamp = os.path.join(tree, ".compare-child-source")
    source = os.path.join(ROOT, "Sources/quire-bench/CompareChild.swift")
    with open(source) as f:
        text = f"commit {commit}\n" + f.read()
    if not os.path.exists(stamp) or open(stamp).read() != text:
        if os.path.exists(tree):
            # Keep the .build directory: only the sources are replaced.
            for name in os.listdir(tree):
                if name != ".build":
                    p = os.path.join(tree, name)
                    shutil.rmtree(p) if os.path.isdir(p) and not os.path.islink(p) else os.remove(p)
        os.makedirs(tree, exist_ok=True)
        archive = subprocess.run(["git", "-C", ROOT, "archive", commit], capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", tree], input=archive, check=True)
        shutil.copy(source, os.path.join(tree, "Sources/quire-bench/CompareChild.swift"))
        main = os.path.join(tree, "Sources/quire-bench/main.swift")
        with open(main) as f:
            lines = f.read().split("\n")
        at = [i for i, l in enumerate(lines) if l.strip() == DISPATCH_AFTER]
        if len(at) != 1:
            raise SystemExit(f"cannot find the line to add the dispatch after in {main}")
        lines.insert(at[0] + 1, DISPATCH)
        with open(main, "w") as f:
            f.write("\n".join(lines))
        with open(stamp, "w") as f:
            f.write(text)
    return commit, build(tree)


def child(binary, *args):
    out = run([binary, "--compare-child", *map(str, args)])
    values = {}
    for line in out.splitlines():
        if "=" in line:
            k, v = line.split("=", 1)
            values[k] = v
    return values


def put_section(path, text):
    """Replaces the section SECTION of the Markdown file at `path` with
    `text`, or inserts it before the first numbered section."""
    with open(path) as f:
        doc = f.read()
    heading = f"## {SECTION}\n"
    if heading in doc:
        start = doc.index(heading)
        end = doc.find("\n## ", start + len(heading))
        doc = doc[:start] + text.rstrip("\n") + "\n" + ("\n" + doc[end + 1:] if end >= 0 else "")
    else:
        at = doc.find("\n## 1. ")
        doc = doc[:at + 1] + text.rstrip("\n") + "\n\n" + doc[at + 1:] if at >= 0 else doc.rstrip("\n") + "\n\n" + text
    with open(path + ".tmp", "w") as f:
        f.write(doc)
    os.replace(path + ".tmp", path)


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true", help="small sizes, two rounds (a smoke run)")
    ap.add_argument("--rounds", type=int, default=None, help="interleaved rounds (default 5, quick 2)")
    ap.add_argument("--v1-ref", default="b45ed56", help="git ref of format 1 (default b45ed56, main before format 2)")
    ap.add_argument("--scratch", default=tempfile.gettempdir(), help="where the format-1 tree is built (kept between runs)")
    ap.add_argument("--write", help="put the result, as the section \"%s\", into this Markdown file "
                    "(replacing that section, or adding it after the summary)" % SECTION)
    ap.add_argument("--only", help="comma-separated figure groups: add,open,read,sync,single")
    a = ap.parse_args()
    rounds = a.rounds or (2 if a.quick else 5)
    only = set(a.only.split(",")) if a.only else {"add", "open", "read", "sync", "single"}

    started = time.time()
    load_start = loadavg()
    v1_commit, v1 = prepare_v1(a.v1_ref, a.scratch)
    v2 = build(ROOT)
    v2_commit = run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"]).strip()
    dirty = run(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no"]).strip() != ""

    sizes = [1_000, 3_000, 10_000] if a.quick else [1_000, 10_000, 100_000]
    big = sizes[-1]
    single = 1_000 if a.quick else 10_000
    timed_adds = 50 if a.quick else 300
    reps = 5 if a.quick else 21
    read_reps = 2 if a.quick else 5
    diverge = 100 if a.quick else 1_000

    work = tempfile.mkdtemp(prefix="quire-compare-")
    try:
        sides = {"v1": v1, "v2": v2}
        vaults = {}
        builds = {}
        for side, binary in sides.items():
            for n in sizes:
                p = os.path.join(work, f"{side}-{n}.quire")
                log(f"{side}: building {n:,} entries (commits of 5,000) …")
                builds[(side, "batched", n)] = child(binary, "build", p, p + ".key", n)
                vaults[(side, n)] = p
            if "single" in only:
                p = os.path.join(work, f"{side}-single-{single}.quire")
                log(f"{side}: building {single:,} entries, one commit each …")
                builds[(side, "single", single)] = child(binary, "build-single", p, p + ".key", single)
                vaults[(side, "single")] = p

        # (figure name, group, mode, vault key, argument, value key, target)
        tasks = []
        if "add" in only:
            for n in sizes:
                tasks.append((f"add one entry on an open handle, {n:,}-entry vault (median of {timed_adds})", "add", "add", n, timed_adds, "ns", 1.2))
            for n in sizes:
                tasks.append((f"open + add one entry, {n:,}-entry vault (median of {reps // 2})", "add", "open-add", n, reps // 2, "ns", 1.2))
        if "open" in only:
            for n in sizes:
                tasks.append((f"open (scan, unlock, verify), {n:,} entries in commits of 5,000 (median of {reps})", "open", "open", n, reps, "ns", 1.2))
        if "single" in only:
            tasks.append((f"open (scan, unlock, verify), {single:,} entries in {single:,} one-entry commits (median of {reps})", "single", "open", "single", reps, "ns", None))
            tasks.append((f"read every record, {single:,} one-entry commits (median of {read_reps})", "single", "read", "single", read_reps, "ns", None))
        if "read" in only:
            for n in sizes[1:]:
                tasks.append((f"read every record (open + forEachRecord), {n:,} entries (median of {read_reps})", "read", "read", n, read_reps, "ns", 1.2))
        if "sync" in only:
            tasks.append((f"merge two copies of {big:,} entries diverged by {diverge:,} each", "sync", "sync", big, diverge, "merge", 1.2))

        results = {}   # figure -> {"v1": [(wall, cpu)], "v2": [...]}
        extra = {}     # compaction and the verify baseline, from the same sync child
        loads = []
        for r in range(rounds):
            order = ["v1", "v2"] if r % 2 == 0 else ["v2", "v1"]
            log(f"round {r + 1} of {rounds} (load {loadavg()}) …")
            for (name, group, mode, key, arg, value, _target) in tasks:
                for side in order:
                    path = vaults[(side, key)]
                    args = [mode, path, path + ".key", arg] + ([r] if mode == "sync" else [])
                    values = child(sides[side], *args)
                    cpu_key = "cpu" if value == "ns" else value + "CPU"
                    results.setdefault(name, {"v1": [], "v2": []})[side].append((int(values[value]), int(values[cpu_key])))
                    if mode == "sync":
                        for label, k in [(f"compact the merged vault ({big + 2 * diverge:,} entries)", "compact"),
                                         ("verify both inputs (the merge's baseline in BENCHMARKS.md §6)", "verify")]:
                            extra.setdefault(label, {"v1": [], "v2": []})[side].append((int(values[k]), int(values[k + "CPU"])))
            loads.append(loadavg())

        rows = []
        for (name, group, mode, key, arg, value, target) in tasks:
            rows.append((name, results[name], target))
            if mode == "sync":
                for label, v in extra.items():
                    rows.append((label, v, None))

        def ms(ns):
            return f"{ns / 1e6:,.3f}" if ns < 1e7 else f"{ns / 1e6:,.1f}"

        lines = []
        lines.append("| figure | v1 (ms) | v2 (ms) | v2 ÷ v1 | per-round ratios (min / median / max) | CPU time v2 ÷ v1 | target | verdict |")
        lines.append("|:---|---:|---:|---:|:---|---:|:---|:---|")
        for name, v, target in rows:
            w1, w2 = [x[0] for x in v["v1"]], [x[0] for x in v["v2"]]
            c1, c2 = [x[1] for x in v["v1"]], [x[1] for x in v["v2"]]
            m1, m2 = statistics.median(w1), statistics.median(w2)
            per = sorted(b / a for a, b in zip(w1, w2))
            ratio = m2 / m1
            cpu_ratio = statistics.median(c2) / statistics.median(c1)
            verdict = "reported" if target is None else ("met" if ratio <= target else "**NOT met**")
            if a.quick and target is not None:
                verdict = "not judged (quick)"
            lines.append(f"| {name} | {ms(m1)} | {ms(m2)} | {ratio:.2f}× | {per[0]:.2f} / {statistics.median(per):.2f} / {per[-1]:.2f} "
                         f"| {cpu_ratio:.2f}× | {'≤ %.1f×' % target if target else ''} | {verdict} |")
        builds_lines = ["| vault | v1 build (s) | v2 build (s) | v1 size (MB) | v2 size (MB) |", "|:---|---:|---:|---:|---:|"]
        for (side, kind, n), v in sorted(builds.items()):
            if side != "v1":
                continue
            w = builds[("v2", kind, n)]
            what = f"{n:,} entries, commits of 5,000" if kind == "batched" else f"{n:,} entries, one commit each"
            builds_lines.append(f"| {what} | {int(v['ns']) / 1e9:.1f} | {int(w['ns']) / 1e9:.1f} | {int(v['bytes']) / 1e6:.1f} | {int(w['bytes']) / 1e6:.1f} |")
        minutes = (time.time() - started) / 60
        head = [
            f"## {SECTION}",
            "",
            "Issue 12 asks that adding one entry, opening, reading every record and merging stay within 1.2× of format 1, "
            "as ratios in the same run. Format 1 is commit `b45ed56` (`main` before format 2 landed), so `make bench-compare` "
            "(`Scripts/bench-format-compare.py`) builds that commit's `quire-bench` from `git archive` in a scratch directory, "
            "adds the shared `Sources/quire-bench/CompareChild.swift` (written against the API both libraries share), builds "
            "both in release, lets each build the same vaults from the same seeds (generated entries of 500–2000 bytes, "
            "recovery key, no fsync), and then runs one measurement per child process, format 1 and format 2 interleaved, "
            "their order swapped every round. Writes go to a fresh copy of the vault each time. Each cell is the median over "
            "rounds of each child's own median; the ratio is of those medians, and the per-round ratios show the spread. CPU "
            "time is the whole child's (every thread) over the same spans: the machine is shared, and its load moves wall "
            "times far more than CPU times. Targets are judged on wall time.",
            "",
            f"Command: `python3 Scripts/bench-format-compare.py{' --quick' if a.quick else ''}"
            f"{' --rounds %d' % a.rounds if a.rounds else ''} --write BENCHMARKS.md` (`make bench-compare`); "
            f"v1 = `{a.v1_ref}` at {v1_commit}, v2 = this tree at {v2_commit}{' (with uncommitted changes)' if dirty else ''}; "
            f"{rounds} interleaved rounds; {minutes:.0f} min; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime(started))}; "
            f"`nproc` = {os.cpu_count()}; load average (1/5/15 min) at start {load_start}, after each round {' · '.join(loads)}.",
        ]
        why = [
            "What format 2 does that format 1 did not, on these paths (the figures of each are in the numbered sections):",
            "",
            "- every commit carries the writing member's Ed25519 signature, sealed (§1 and §8 give the raw cost of a "
            "signature and of its check here): adding one entry signs once, and reading a commit's records checks its "
            "signature once — a vault written one entry per commit checks one per entry, a batched one a handful;",
            "- every record ends with a 32-byte BLAKE2b-256 body hash that the chain covers, so a reader hashes every body "
            "it reads (§2's raw baseline does too), and every commit frame is 216 bytes instead of 28 (§4);",
            "- opening checks chain heads as before, plus keyring signatures and key commitments; commit attestations are "
            "left until something needs them (reading records, verify, merge), except for commits holding an unknown "
            "critical kind;",
            "- merge identifies every frame by a hash of its whole body (attachment chunks included), carries or re-seals "
            "attestations, and checks the result, attestations included, before the rename.",
        ]
        text = "\n".join(head + [""] + lines + [""] + why + ["", "**The vaults**", ""] + builds_lines) + "\n"
        print(text)
        if a.write:
            put_section(a.write, text)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
