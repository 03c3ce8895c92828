#!/usr/bin/env python3
"""Torture test of the quire CLI: kills and I/O errors at random system calls.

For every write operation (add, import, compact, compact --rekey, merge,
merge -o, resolve, edit, keys rotate, device add, device remove) it runs
the CLI under strace with, at a seeded random call of a seeded random
system call among those the operation makes,

  -e inject=SYSCALL:signal=SIGKILL:when=N   (a kill, as a crash or power loss)
  -e inject=SYSCALL:error=EIO|ENOSPC:when=N (an I/O error, as a failing disk)

and then checks, from a fresh process each:

  - the vault opens (list), every acknowledged entry is in it, and an
    operation that was cut left either the old state or the new one;
  - `quire verify` exits 0 (a torn tail is a warning, not damage);
  - the recovery key opens it on a device with no key;
  - after an injected error, nothing is left behind at once (a clean exit
    never leaves a temporary file); after a kill, the next write succeeds
    and nothing is left behind once it has run (stale temporary files of
    a killed writer are removed by the next write);
  - a removed device reads nothing written after its removal;
  - no run ever dies of anything but the injected SIGKILL.

Then concurrency mixes (writers racing compactions, rekeys, rotations and
merges: every add must succeed and be kept) and a disk-full run on a small
tmpfs (when this machine lets us mount one; otherwise it says it skipped).

Python 3 standard library only. strace comes from Debian (make deps).
Usage: torture.py --quire PATH [--quick] [--seed N] [--kills N] [--errors N]
Exit status 1 when any check failed.
"""

import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time

# The system calls a kill or an error is injected at: every call through
# which quire touches files or their names, and the flushes.
KILL_SYSCALLS = ["openat", "read", "pread64", "write", "pwrite64", "fsync", "fdatasync", "ftruncate", "rename",
                 "renameat", "renameat2", "link", "linkat", "unlink", "unlinkat", "mkdir", "flock", "close",
                 "newfstatat", "fstat", "getdents64", "lseek"]
ERROR_SYSCALLS = {"openat": "EIO", "read": "EIO", "pread64": "EIO", "write": "ENOSPC", "pwrite64": "ENOSPC",
                  "fsync": "EIO", "fdatasync": "EIO", "ftruncate": "EIO", "rename": "EIO", "renameat": "EIO",
                  "renameat2": "EIO", "link": "ENOSPC", "linkat": "ENOSPC", "unlink": "EIO", "mkdir": "ENOSPC",
                  "close": "EIO"}
LEFTOVER = re.compile(r"(\.tmp-\d+-[0-9a-f]+|\.merge-[0-9a-f]{12}|\.quire-tmp-|\.quire-export-)")
SYNCTHING_COPY = "V.sync-conflict-20260101-101010-ABCDEF1.quire"


def log(*parts):
    print(*parts, flush=True)


class Harness:
    def __init__(self, quire, work, seed, use_strace=True):
        self.quire = quire
        self.work = work
        self.rng = random.Random(seed)
        self.seed = seed
        self.template = os.path.join(work, "template")
        self.baseline = {}
        self.lock = threading.Lock()

    # -- running quire -------------------------------------------------
    def env(self, home, extra=None):
        e = {"PATH": "/usr/bin:/bin", "HOME": self.work, "QUIRE_HOME": home, "TZ": "UTC", "NO_COLOR": "1", "LANG": "C.UTF-8",
             "SWIFT_BACKTRACE": "enable=no"}
        if extra:
            e.update(extra)
        return e

    def run(self, args, cwd, home, strace=None, timeout=300):
        argv = [self.quire] + args
        if strace:
            argv = ["strace", "-f", "-qq", "-o", "/dev/null"] + strace + argv
        p = subprocess.run(argv, cwd=cwd, env=self.env(home), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=timeout)
        return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")

    def must(self, args, cwd, home):
        rc, out, err = self.run(args, cwd, home)
        if rc != 0:
            raise RuntimeError("setup step failed: quire %s: %s%s" % (" ".join(args), out, err))
        return out

    def texts(self, d, vault, home, extra=None):
        rc, out, err = self.run(["list", vault, "--json"] + (extra or []), d, home)
        if rc != 0:
            return None, err.strip()
        try:
            doc = json.loads(out)
        except ValueError:
            return None, "list --json printed no JSON"
        return [e["title"] for e in doc["entries"]], err.strip()

    # -- the template every trial starts from ---------------------------
    def make_template(self):
        t = self.template
        os.makedirs(t)
        home, phone, tablet = os.path.join(t, "home"), os.path.join(t, "phone"), os.path.join(t, "tablet")
        photo = os.path.join(t, "photo.bin")
        with open(photo, "wb") as f:
            f.write(random.Random(self.seed).randbytes(120_000))
        self.must(["init", "V.quire", "--name", "Torture", "--device-name", "Laptop", "--recovery-key-file", "rk.txt"], t, home)
        for i in range(12):
            extra = ["--attach", "photo.bin"] if i == 3 else []
            self.must(["add", "V.quire", "entry %02d" % i] + extra, t, home)
        code = self.must(["device", "code", "--device-name", "Phone"], t, phone).strip()
        self.must(["device", "add", "V.quire", code, "--name", "Phone", "--yes"], t, home)
        self.tablet_code = self.must(["device", "code", "--device-name", "Tablet"], t, tablet).strip()
        self.must(["add", "V.quire", "entry 12 before the copies"], t, home)
        listed = json.loads(self.must(["list", "V.quire", "--json"], t, home))
        self.edit_id = [e["id"] for e in listed["entries"] if e["title"] == "entry 05"][0]
        # A copy the phone wrote to (merge), and a Syncthing conflict copy (resolve).
        shutil.copy(os.path.join(t, "V.quire"), os.path.join(t, "C.quire"))
        self.must(["add", "C.quire", "from the phone copy"], t, phone)
        shutil.copy(os.path.join(t, "V.quire"), os.path.join(t, SYNCTHING_COPY))
        self.must(["add", SYNCTHING_COPY, "from the conflict copy"], t, phone)
        # A Markdown folder to import (a small journal of its own).
        src = os.path.join(t, "src")
        os.makedirs(src)
        self.must(["init", "S.quire", "--recovery-key-file", "srk.txt"], src, home)
        for i in range(8):
            self.must(["add", "S.quire", "imported %d" % i, "--date", "2025-01-%02dT10:00" % (i + 1)], src, home)
        self.must(["export", "S.quire", "--format", "md", "-o", os.path.join(t, "md")], src, home)
        shutil.rmtree(src)
        texts, _ = self.texts(t, "V.quire", home)
        self.base_texts = sorted(texts)
        self.copy_texts = ["from the phone copy"]
        self.conflict_texts = ["from the conflict copy"]
        self.md_texts = ["imported %d" % i for i in range(8)]
        # Baseline: the calls a run makes before it does anything (loader, runtime).
        self.baseline = self.count_calls(["--version"], t, home)

    def count_calls(self, args, cwd, home):
        trace = os.path.join(self.work, "count.trace")
        argv = ["strace", "-f", "-qq", "-o", trace, "-e", "trace=" + ",".join(KILL_SYSCALLS), self.quire] + args
        subprocess.run(argv, cwd=cwd, env=self.env(home), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, timeout=300)
        # strace counts `when=N` per thread: keep, for each system call, the
        # most calls one thread made (the main thread's, in practice).
        per_thread = {}
        with open(trace, errors="replace") as f:
            for line in f:
                m = re.match(r"^(\d+)\s+([a-z0-9_]+)\(", line)
                if m:
                    key = (m.group(1), m.group(2))
                    per_thread[key] = per_thread.get(key, 0) + 1
        os.remove(trace)
        counts = {}
        for (_, name), n in per_thread.items():
            counts[name] = max(counts.get(name, 0), n)
        return counts

    def fresh(self, name):
        d = os.path.join(self.work, name)
        if os.path.exists(d):
            shutil.rmtree(d)
        shutil.copytree(self.template, d, symlinks=True)
        return d

    # -- the operations -------------------------------------------------
    def operations(self):
        """name → (argv, the texts it adds when it succeeds, texts it may replace)."""
        return {
            "add": (["add", "V.quire", "acked add"], ["acked add"]),
            "add+attachment": (["add", "V.quire", "acked add with photo", "--attach", "photo.bin"], ["acked add with photo"]),
            "edit": (["edit", "V.quire", self.edit_id, "edited text"], ["edited text"]),
            "import": (["import", "markdown", "md", "V.quire", "--json"], self.md_texts),
            "compact": (["compact", "V.quire"], []),
            "compact --rekey": (["compact", "V.quire", "--rekey"], []),
            "merge": (["merge", "V.quire", "C.quire"], self.copy_texts),
            "merge -o": (["merge", "V.quire", "C.quire", "-o", "Out.quire"], []),
            "resolve": (["resolve", "V.quire"], self.conflict_texts),
            "keys rotate": (["keys", "rotate", "V.quire"], []),
            "device add": (["device", "add", "V.quire", self.tablet_code, "--name", "Tablet", "--yes"], []),
            "device remove": (["device", "remove", "V.quire", "Phone"], []),
        }

    def pick_injection(self, op, args, d, home, kind):
        """(syscall, N): a call the operation really makes, after start-up."""
        key = op
        with self.lock:
            counts = self.call_counts.get(key)
        if counts is None:
            probe = self.fresh("probe-" + re.sub(r"[^a-z]", "", op))
            counts = self.count_calls(args, probe, os.path.join(probe, "home"))
            shutil.rmtree(probe)
            with self.lock:
                self.call_counts[key] = counts
        pool = ERROR_SYSCALLS if kind == "error" else KILL_SYSCALLS
        choices = [(s, self.baseline.get(s, 0), n) for s, n in counts.items() if s in pool and n > self.baseline.get(s, 0)]
        weights = [n - b for _, b, n in choices]
        s, b, n = self.rng.choices(choices, weights=weights)[0]
        return s, self.rng.randint(b + 1, n)

    # -- one trial --------------------------------------------------------
    def plan(self, op, kind):
        """The injection for one trial: (system call, N), drawn from the seed."""
        args, _ = self.operations()[op]
        return self.pick_injection(op, args, None, None, kind)

    def trial(self, op, kind, syscall, n, slot):
        args, adds = self.operations()[op]
        d = self.fresh("trial-%d" % slot)
        home = os.path.join(d, "home")
        if kind == "kill":
            spec = ["-e", "trace=" + syscall, "-e", "inject=%s:signal=SIGKILL:when=%d" % (syscall, n)]
        else:
            spec = ["-e", "trace=" + syscall, "-e", "inject=%s:error=%s:when=%d" % (syscall, ERROR_SYSCALLS[syscall], n)]
        rc, out, err = self.run(args, d, home, strace=spec)
        where = "%s #%d" % (syscall, n)
        problems = []
        killed = rc in (-9, 137)
        completed = rc == 0
        if kind == "kill" and not killed and rc not in (0, 1):
            problems.append(("crash", "exit %d (%s): %s" % (rc, where, err.strip()[-300:])))
        if kind == "error" and rc not in (0, 1):
            problems.append(("crash", "exit %d after an injected error (%s): %s" % (rc, where, err.strip()[-300:])))
        if kind == "error" and rc == 1 and "quire: error:" not in err:
            problems.append(("silent", "exit 1 without an error message (%s)" % where))
        # After an error (a clean exit), nothing may be left behind, at once.
        if kind == "error":
            # A temporary file the error kept from removing is allowed when
            # the command said so (the next write removes it, checked below).
            left = [n for n in self.leftovers(d) if os.path.basename(n) not in err]
            if left:
                problems.append(("left behind", "after a clean exit (%s): %s" % (where, ", ".join(left))))
        if op == "import" and completed:
            # An import that could not read a source file says so and skips it.
            try:
                skipped = " ".join(i["item"] for i in json.loads(out)["skipped"])
            except (ValueError, KeyError):
                skipped = ""
            adds = [t for t in adds if t.replace(" ", "-") not in skipped]
        problems += self.check_state(op, d, home, adds, completed, where)
        shutil.rmtree(d, ignore_errors=True)
        return killed, completed, problems

    def leftovers(self, d):
        found = []
        for root in [d, os.path.join(d, "home"), os.path.join(d, "home", "vaults"), os.path.join(d, "phone"),
                     os.path.join(d, "phone", "vaults")]:
            if os.path.isdir(root):
                found += [os.path.relpath(os.path.join(root, n), d) for n in os.listdir(root) if LEFTOVER.search(n)]
        return sorted(found)

    def check_state(self, op, d, home, adds, completed, where):
        problems = []
        texts, err = self.texts(d, "V.quire", home)
        if texts is None:
            return [("unopenable", "%s: %s" % (where, err[-300:]))]
        present = set(texts)
        must = set(self.base_texts)
        if op == "edit":
            # The edited entry shows its old text or its new one.
            must.discard("entry 05")
            if len({"entry 05", "edited text"} & present) != 1:
                problems.append(("lost", "%s: the edited entry shows %s" % (where, sorted({"entry 05", "edited text"} & present))))
        if completed and op != "merge -o":
            must |= set(adds)
        lost = sorted(must - present)
        if lost:
            problems.append(("lost", "%s: %s" % (where, ", ".join(lost[:5]))))
        if op == "import":
            dup = [t for t in self.md_texts if texts.count(t) > 1]
            if dup:
                problems.append(("duplicated", "%s: %s" % (where, ", ".join(dup))))
        if op in ("merge", "resolve") and not completed:
            # All or nothing: a merge is whole or absent.
            extra = self.copy_texts if op == "merge" else self.conflict_texts
            if 0 < len(set(extra) & present) < len(extra):
                problems.append(("partial", "%s: part of the merge" % where))
        if op == "merge -o":
            out = os.path.join(d, "Out.quire")
            if os.path.exists(out):
                t2, e2 = self.texts(d, "Out.quire", home)
                if t2 is None or not (set(self.base_texts) | set(self.copy_texts)) <= set(t2):
                    problems.append(("partial output", "%s: Out.quire exists but is not the whole merge (%s)" % (where, e2[-200:])))
            elif completed:
                problems.append(("lost", "%s: merge -o succeeded but Out.quire is missing" % where))
        rc, out, verr = self.run(["verify", "V.quire", "--json"], d, home)
        if rc != 0:
            problems.append(("verify", "%s: verify exit %d: %s" % (where, rc, (out + verr).strip()[-300:])))
        else:
            try:
                issues = [i["code"] for i in json.loads(out)["issues"] if i.get("damage")]
            except (ValueError, KeyError):
                issues = ["unparsable"]
            if issues:
                problems.append(("verify", "%s: %s" % (where, ", ".join(issues))))
        # The recovery key opens it on a device with no key.
        t3, e3 = self.texts(d, "V.quire", os.path.join(d, "nobody"), ["--recovery-key-file", "rk.txt"])
        if t3 is None or set(t3) != present:
            problems.append(("recovery", "%s: the recovery key does not read the same entries: %s" % (where, e3[-200:])))
        # The next write works, and removes what a killed writer left.
        rc, out, aerr = self.run(["add", "V.quire", "the next write"], d, home)
        if rc != 0:
            problems.append(("next write", "%s: %s" % (where, aerr.strip()[-300:])))
        left = self.leftovers(d)
        if left:
            problems.append(("left behind", "%s: after the next write: %s" % (where, ", ".join(left))))
        # A removed device reads nothing written after its removal.
        rc, out, _ = self.run(["device", "list", "V.quire", "--json"], d, home)
        if rc == 0 and op == "device remove" and '"Phone"' not in out:
            t4, _ = self.texts(d, "V.quire", os.path.join(d, "phone"))
            if t4 is not None and "the next write" in t4:
                problems.append(("removed device reads", "%s: the removed phone reads a later entry" % where))
        return problems

    # -- concurrency ---------------------------------------------------------
    def concurrency(self, name, adders, adds_each, others, other_args, others_each):
        d = self.fresh("mix")
        home = os.path.join(d, "home")
        acked, failed, other_failed = [], [], []

        def adder(w):
            for i in range(adds_each):
                text = "mix %d-%d" % (w, i)
                rc, out, err = self.run(["add", "V.quire", text], d, home)
                with self.lock:
                    (acked if rc == 0 else failed).append(text if rc == 0 else "%s: %s" % (text, err.strip()[-200:]))

        def other(w):
            for i in range(others_each):
                args = [a.replace("{i}", "%d-%d" % (w, i)) for a in other_args]
                if "merge" in args:
                    copy = os.path.join(d, "copy-%d-%d.quire" % (w, i))
                    shutil.copy(os.path.join(d, "C.quire"), copy)
                    self.run(["add", os.path.basename(copy), "merged %d-%d" % (w, i)], d, os.path.join(d, "phone"))
                    args = ["merge", "V.quire", os.path.basename(copy)]
                rc, out, err = self.run(args, d, home)
                if rc != 0:
                    with self.lock:
                        other_failed.append(err.strip()[-200:])

        threads = [threading.Thread(target=adder, args=(w,)) for w in range(adders)]
        threads += [threading.Thread(target=other, args=(w,)) for w in range(others)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        texts, err = self.texts(d, "V.quire", home)
        problems = []
        if texts is None:
            problems.append(("unopenable", err))
        else:
            lost = [t for t in acked if t not in texts]
            if lost:
                problems.append(("lost", ", ".join(lost[:5])))
        if failed:
            problems.append(("add failed", "%d: %s" % (len(failed), failed[0])))
        if other_failed:
            problems.append(("%s failed" % other_args[0], "%d: %s" % (len(other_failed), other_failed[0])))
        rc, out, verr = self.run(["verify", "V.quire"], d, home)
        if rc != 0:
            problems.append(("verify", (out + verr).strip()[-300:]))
        left = self.leftovers(d)
        if left:
            problems.append(("left behind", ", ".join(left)))
        return len(acked), adders * adds_each, problems

    # -- disk full -------------------------------------------------------------
    def disk_full(self, trials):
        mount = os.path.join(self.work, "small")
        os.makedirs(mount, exist_ok=True)
        p = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=6m,mode=0700", "tmpfs", mount], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT)
        if p.returncode != 0:
            return None, "skipped: cannot mount a tmpfs here (%s)" % p.stdout.decode(errors="replace").strip()
        results = {}
        try:
            ops = [("add+attachment", ["add", "V.quire", "full-disk add", "--attach", "photo.bin"], ["full-disk add"]),
                   ("import", ["import", "markdown", "md", "V.quire"], self.md_texts),
                   ("compact", ["compact", "V.quire"], []), ("compact --rekey", ["compact", "V.quire", "--rekey"], []),
                   ("merge", ["merge", "V.quire", "C.quire"], self.copy_texts),
                   ("merge -o", ["merge", "V.quire", "C.quire", "-o", "Out.quire"], []),
                   ("export epub", ["export", "V.quire", "--format", "epub", "-o", "out.epub"], []),
                   ("export md", ["export", "V.quire", "--format", "md", "-o", "out-md"], [])]
            for t in range(trials):
                name, args, adds = ops[t % len(ops)]
                d = os.path.join(mount, "t")
                if os.path.exists(d):
                    shutil.rmtree(d)
                shutil.copytree(self.template, d, symlinks=True)
                home = os.path.join(d, "home")
                st = os.statvfs(mount)
                free = st.f_bavail * st.f_frsize
                leave = self.rng.randint(0, 400_000)
                filler = os.path.join(mount, "filler")
                with open(filler, "wb") as f:
                    f.write(b"\0" * max(0, free - leave))
                rc, out, err = self.run(args, d, home)
                problems = []
                if rc not in (0, 1):
                    problems.append(("crash", "exit %d: %s" % (rc, err[-200:])))
                if rc == 1 and "quire: error:" not in err:
                    problems.append(("silent", "exit 1 without a message"))
                if rc == 1:
                    for partial in ["Out.quire", "out.epub", "out-md"]:
                        if os.path.exists(os.path.join(d, partial)):
                            problems.append(("partial output", "%s left after a failure" % partial))
                left = self.leftovers(d)
                if left:
                    problems.append(("left behind", ", ".join(left)))
                os.remove(filler)
                texts, e = self.texts(d, "V.quire", home)
                if texts is None:
                    problems.append(("unopenable", e))
                else:
                    must = set(self.base_texts) | (set(adds) if rc == 0 and name != "merge -o" else set())
                    if must - set(texts):
                        problems.append(("lost", ", ".join(sorted(must - set(texts))[:3])))
                rc2, out2, e2 = self.run(["verify", "V.quire"], d, home)
                if rc2 != 0:
                    problems.append(("verify", (out2 + e2)[-200:]))
                r = results.setdefault(name, {"trials": 0, "failed cleanly": 0, "succeeded": 0, "problems": []})
                r["trials"] += 1
                r["succeeded" if rc == 0 else "failed cleanly"] += 1
                r["problems"] += problems
                shutil.rmtree(d)
        finally:
            subprocess.run(["umount", mount])
        return results, None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quire", required=True, help="the quire binary")
    ap.add_argument("--quick", action="store_true", help="a few trials per operation (make test, CI)")
    ap.add_argument("--seed", type=int, default=15)
    ap.add_argument("--kills", type=int, help="kill trials per operation")
    ap.add_argument("--errors", type=int, help="injected-error trials per operation")
    ap.add_argument("--only", help="comma-separated operations to run")
    ap.add_argument("--jobs", type=int, default=2, help="trials run at once")
    ap.add_argument("--no-mixes", action="store_true", help="skip the concurrency mixes")
    ap.add_argument("--no-disk-full", action="store_true", help="skip the disk-full run")
    ap.add_argument("--keep", action="store_true", help="keep the work folder")
    a = ap.parse_args()
    if shutil.which("strace") is None:
        log("torture: strace is missing (make deps installs it)")
        return 1
    quire = os.path.abspath(a.quire)
    kills = a.kills if a.kills is not None else (2 if a.quick else 92)
    errors = a.errors if a.errors is not None else (1 if a.quick else 28)
    work = tempfile.mkdtemp(prefix="quire-torture-")
    h = Harness(quire, work, a.seed)
    h.call_counts = {}
    started = time.time()
    failures = 0
    try:
        log("torture: seed %d, %d kill and %d error trials per operation, quire %s" % (a.seed, kills, errors, quire))
        h.make_template()
        ops = list(h.operations())
        if a.only:
            ops = [o for o in ops if o in a.only.split(",")]
        log("%-16s %7s %6s %10s %7s %9s  %s" % ("operation", "trials", "kills", "completed", "errors", "failures", "kinds"))
        totals = {"trials": 0, "kills": 0, "errors": 0, "failures": 0}
        kinds_total = {}
        # The plan is drawn from the seed first, in order; the trials then run
        # `--jobs` at a time, each in its own folder.
        plans = {op: [(kind, h.plan(op, kind)) for kind, count in (("kill", kills), ("error", errors)) for _ in range(count)] for op in ops}
        import concurrent.futures
        pool = concurrent.futures.ThreadPoolExecutor(max_workers=max(1, a.jobs))
        slots = iter(range(1_000_000))
        for op in ops:
            row = {"trials": 0, "kills": 0, "completed": 0, "errors": 0, "failures": 0}
            kinds = {}
            details = []
            futures = [(kind, pool.submit(h.trial, op, kind, sc, n, next(slots))) for kind, (sc, n) in plans[op]]
            for kind, future in futures:
                killed, completed, problems = future.result()
                row["trials"] += 1
                row["kills"] += killed
                row["completed"] += completed
                row["errors"] += kind == "error"
                if problems:
                    row["failures"] += 1
                    for k, text in problems:
                        kinds[k] = kinds.get(k, 0) + 1
                        kinds_total[k] = kinds_total.get(k, 0) + 1
                        details.append("  %s (%s): %s" % (op, k, text))
            log("%-16s %7d %6d %10d %7d %9d  %s" % (op, row["trials"], row["kills"], row["completed"], row["errors"], row["failures"],
                                                 ", ".join("%s %d" % kv for kv in sorted(kinds.items())) or "-"))
            for line in details[:10]:
                log(line)
            for k in totals:
                totals[k] += row.get(k, 0)
        log("%-16s %7d %6d %10s %7d %9d  %s" % ("total", totals["trials"], totals["kills"], "", totals["errors"], totals["failures"],
                                             ", ".join("%s %d" % kv for kv in sorted(kinds_total.items())) or "-"))
        failures += totals["failures"]

        pool.shutdown()
        log("")
        log("concurrency (every add must succeed and be kept):")
        scale = 1 if a.quick else 5
        mixes = [("8 writers x adds", 8, 4 * scale, 0, ["compact", "V.quire"], 0),
                 ("4 writers + 2 compactions", 4, 4 * scale, 2, ["compact", "V.quire"], 2 * scale),
                 ("4 writers + compact --rekey", 4, 4 * scale, 1, ["compact", "V.quire", "--rekey"], 2 * scale),
                 ("4 writers + key rotations", 4, 4 * scale, 1, ["keys", "rotate", "V.quire"], 2 * scale),
                 ("4 writers + merges", 4, 4 * scale, 1, ["merge"], 2 * scale)]
        for name, adders, each, others, other_args, others_each in ([] if a.no_mixes else mixes):
            ok, tried, problems = h.concurrency(name, adders, each, others, other_args, others_each)
            log("  %-30s adds acked %d/%d  %s" % (name, ok, tried, "; ".join("%s: %s" % p for p in problems) or "ok"))
            failures += len(problems)

        log("")
        results, skipped = (None, "skipped (--no-disk-full)") if a.no_disk_full else h.disk_full(4 if a.quick else 24)
        if skipped:
            log("disk full: " + skipped)
        else:
            log("disk full (a 6 MiB tmpfs, a filler leaving 0-400 kB free):")
            for name, r in results.items():
                log("  %-16s trials %d, failed cleanly %d, succeeded %d, problems %d%s" % (
                    name, r["trials"], r["failed cleanly"], r["succeeded"], len(r["problems"]),
                    "".join("\n    %s: %s" % p for p in r["problems"][:5])))
                failures += len(r["problems"])
        log("")
        log("torture: %d trials, %d kills, %d injected errors, %d failures, %.0f s" % (
            totals["trials"], totals["kills"], totals["errors"], failures, time.time() - started))
    finally:
        if not a.keep:
            shutil.rmtree(work, ignore_errors=True)
        else:
            log("work folder kept: " + work)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
