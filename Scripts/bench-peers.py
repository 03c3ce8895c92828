#!/usr/bin/env python3
# Quire beside its peers, same machine, same run (issue 14, "Everyday speed").
#
#   python3 Scripts/bench-peers.py [--quire PATH] [--quick | --sizes N,M] [--before OLD-QUIRE] [--write BENCHMARKS.md]
#   make bench-peers
#
# Builds one synthetic journal (seeded: the same entries every run) three
# ways: an encrypted jrnl journal, a KeePassXC database holding one entry per
# journal entry (title, notes = body, tags, creation time) and a Quire vault
# imported from jrnl's own export (`jrnl --export json`, then `quire import
# jrnl`). Then it times whole processes with hyperfine (medians of several
# runs, no shell for jrnl, age and quire; KeePassXC reads its password from
# standard input, so its commands run under `sh -c "printf … | …"`) and
# prints the table of issue 14 with the ratios peer ÷ quire (above 1: quire
# is faster). The attachments are timed differently: quire and age (and an
# older quire given with --before) run in turn, round by round, the order
# rotated each round, each process's CPU time taken from wait4, so that the
# ratio to age is one of the same moment's runs (a shared machine's load
# moves by more than the difference being measured).
#
# What it installs when missing: jrnl (pinned) from PyPI into a virtual
# environment under $XDG_CACHE_HOME/quire/bench-peers (default ~/.cache);
# keepassxc-cli, age and hyperfine come from Debian (`make bench-peers`
# installs them; this script says so when one is missing).
#
# Nothing here reaches the user's own key stores or configuration: every tool
# runs with HOME, XDG_* and QUIRE_HOME in a scratch folder, jrnl's password
# comes from a keyring backend written into that folder (it returns a fixed
# bench password), and the folder is removed at the end (--keep keeps it).
# Reports only: it never fails because of a timing.

import argparse
import base64
import datetime
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from xml.sax.saxutils import escape

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SECTION = "Beside jrnl, KeePassXC and age"
JRNL_VERSION = "4.6"
PASSWORD = "bench-password-not-secret"
SEED = 14
SEARCH_WORD = "heron"  # in about 1 entry in 50

WORDS = (
    "the a of and to in walked morning river garden letter rain light evening friend coffee train book "
    "wrote read city market bread window quiet long short cold warm bright grey blue green old new small "
    "large house street office meeting supper dinner breakfast church music song wind snow sun cloud field "
    "road bridge harbour ship boat dog cat bird tree flower stone hill valley lake sea shore sand wave "
    "thought felt saw heard said went came stayed slept woke worked talked laughed waited remembered"
).split()


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def loadavg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def run(cmd, env=None, cwd=None, stdin=None, capture=True):
    r = subprocess.run(cmd, env=env, cwd=cwd, input=stdin, capture_output=capture, text=True)
    if r.returncode != 0:
        if capture:
            log(r.stdout[-3000:])
            log(r.stderr[-3000:])
        raise SystemExit(f"failed ({r.returncode}): {' '.join(cmd)}")
    return r.stdout if capture else ""


# --- the synthetic journal ---------------------------------------------------

def sentence(rng, lo, hi):
    n = rng.randint(lo, hi)
    words = [rng.choice(WORDS) for _ in range(n)]
    if rng.random() < 0.02:
        words[rng.randrange(n)] = SEARCH_WORD
    s = " ".join(words)
    return s[0].upper() + s[1:] + "."


def entries(count, seed, start=datetime.datetime(2000, 1, 1, 8, 0)):
    """`count` entries, 5 hours apart: (datetime, title, body, tags).
    Bodies are 300–900 bytes of words, a few paragraphs."""
    rng = random.Random(seed)
    out = []
    for i in range(count):
        when = start + datetime.timedelta(hours=5 * i)
        title = sentence(rng, 3, 9)
        paragraphs = []
        size = rng.randint(300, 900)
        while sum(len(p) for p in paragraphs) < size:
            paragraphs.append(" ".join(sentence(rng, 6, 16) for _ in range(rng.randint(2, 4))))
        tags = ["@" + rng.choice(["work", "family", "travel", "reading", "garden", "music"])] if rng.random() < 0.3 else []
        body = "\n\n".join(paragraphs)
        if tags:
            body += " " + " ".join(tags)
        out.append((when, title, body, tags))
    return out


# --- jrnl ----------------------------------------------------------------------

KEYRING_BACKEND = '''
from keyring.backend import KeyringBackend
class BenchKeyring(KeyringBackend):
    """jrnl's password for this benchmark only; stores nothing."""
    priority = 100
    def get_password(self, service, username):
        return %r
    def set_password(self, service, username, password):
        pass
    def delete_password(self, service, username):
        pass
''' % PASSWORD

JRNL_CONFIG = """colors: {body: none, date: none, tags: none, title: none}
default_hour: 9
default_minute: 0
editor: ''
encrypt: true
highlight: false
indent_character: '|'
journals:
  default:
    journal: %s
    encrypt: true
linewrap: 79
tagsymbols: '#@'
template: false
timeformat: '%%Y-%%m-%%d %%H:%%M'
version: v4.6
"""

ENCRYPT_JOURNAL = """
import sys
from jrnl.encryption.Jrnlv3Encryption import Jrnlv3Encryption
e = Jrnlv3Encryption("default", {})
e.password = sys.argv[3]
with open(sys.argv[1], encoding="utf-8") as f:
    text = f.read()
with open(sys.argv[2], "wb") as f:
    f.write(e.encrypt(text))
"""


def cache_dir():
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "quire", "bench-peers")


def ensure_jrnl():
    venv = os.path.join(cache_dir(), f"jrnl-{JRNL_VERSION}")
    jrnl = os.path.join(venv, "bin", "jrnl")
    if not os.path.exists(jrnl):
        log(f"installing jrnl {JRNL_VERSION} from PyPI into {venv} …")
        run([sys.executable, "-m", "venv", venv])
        run([os.path.join(venv, "bin", "pip"), "install", "--quiet", f"jrnl=={JRNL_VERSION}"])
    return venv


def ensure_debian_tools():
    missing = [t for t in ("keepassxc-cli", "age", "age-keygen", "hyperfine") if shutil.which(t) is None]
    if missing:
        raise SystemExit(
            "missing: " + ", ".join(missing) + " — `make bench-peers` installs them from Debian "
            "(apt-get install keepassxc age hyperfine)")


# --- a scratch world -----------------------------------------------------------

class World:
    def __init__(self, scratch, venv, quire):
        self.dir = scratch
        self.venv = venv
        self.quire = quire
        self.home = os.path.join(scratch, "home")
        os.makedirs(os.path.join(self.home, ".config", "jrnl"))
        with open(os.path.join(scratch, "bench_keyring.py"), "w") as f:
            f.write(KEYRING_BACKEND)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("XDG_", "QUIRE_", "PYTHON", "KEYRING"))}
        env.update(
            HOME=self.home, XDG_CONFIG_HOME=os.path.join(self.home, ".config"),
            XDG_DATA_HOME=os.path.join(self.home, ".local", "share"), XDG_CACHE_HOME=os.path.join(self.home, ".cache"),
            XDG_RUNTIME_DIR=os.path.join(self.home, "run"),
            PYTHONPATH=scratch, PYTHON_KEYRING_BACKEND="bench_keyring.BenchKeyring",
            QUIRE_HOME=os.path.join(scratch, "quire-home"), NO_COLOR="1", LC_ALL="C.UTF-8", TZ="UTC")
        env.pop("QUIRE_VAULT", None)
        os.makedirs(env["XDG_RUNTIME_DIR"], mode=0o700)
        self.env = env

    def path(self, *parts):
        return os.path.join(self.dir, *parts)

    def jrnl_cmd(self, config):
        return [os.path.join(self.venv, "bin", "jrnl"), "--config-file", config]

    def jrnl_config(self, journal):
        config = self.path(os.path.basename(journal) + ".yaml")
        with open(config, "w") as f:
            f.write(JRNL_CONFIG % journal)
        return config


def write_jrnl(world, items, journal):
    """An encrypted jrnl journal holding `items`, written as jrnl writes it
    (its text format, encrypted by jrnl's own Jrnlv3Encryption)."""
    plain = world.path(os.path.basename(journal) + ".plain")
    with open(plain, "w", encoding="utf-8") as f:
        for when, title, body, _ in items:
            f.write(f"[{when:%Y-%m-%d %H:%M}] {title}\n{body}\n\n")
    run([os.path.join(world.venv, "bin", "python"), "-c", ENCRYPT_JOURNAL, plain, journal, PASSWORD], env=world.env)
    os.remove(plain)
    return world.jrnl_config(journal)


def keepass_xml(export, path, base_count=None, namespace=0):
    """KeePass 2 XML of a jrnl JSON export: one entry per journal entry, in one
    group. The first `base_count` entries get UUIDs from their position (two
    databases built from one base share them, as copies of one database do);
    the entries after them get UUIDs in `namespace`, so that two copies'
    new entries differ."""
    with open(export, encoding="utf-8") as f:
        data = json.load(f)

    def b64uuid(n):
        return base64.b64encode(uuid.UUID(int=n).bytes).decode()

    parts = []
    for i, e in enumerate(data["entries"]):
        n = i + 1 if base_count is None or i < base_count else (namespace << 64) + i + 1
        stamp = f"{e['date']}T{e['time']}:00Z"
        parts.append(
            f"<Entry><UUID>{b64uuid(n)}</UUID><Times><CreationTime>{stamp}</CreationTime>"
            f"<LastModificationTime>{stamp}</LastModificationTime></Times>"
            f"<Tags>{escape(';'.join(t.lstrip('@') for t in e.get('tags', [])))}</Tags>"
            f"<String><Key>Title</Key><Value>{escape(e['title'])}</Value></String>"
            f"<String><Key>Notes</Key><Value>{escape(e['body'])}</Value></String>"
            "<String><Key>UserName</Key><Value></Value></String><String><Key>Password</Key><Value></Value></String>"
            "<String><Key>URL</Key><Value></Value></String></Entry>")
    with open(path, "w", encoding="utf-8") as f:
        f.write('<?xml version="1.0" encoding="UTF-8"?>\n<KeePassFile><Meta><Generator>quire bench-peers</Generator>'
                f'<DatabaseName>Journal</DatabaseName></Meta><Root><Group><UUID>{b64uuid((1 << 100) + 1)}</UUID>'
                f'<Name>Journal</Name>{"".join(parts)}</Group></Root></KeePassFile>\n')


def kp_import(world, xml, db):
    run(["keepassxc-cli", "import", "-q", "-p", xml, db], env=world.env, stdin=f"{PASSWORD}\n{PASSWORD}\n")


def kp(cmd):
    """A KeePassXC command line reading the password from standard input."""
    return f"sh -c \"printf '%s\\n' | {cmd}\"" % PASSWORD


def jrnl_export(world, config, out):
    r = subprocess.run(world.jrnl_cmd(config) + ["--export", "json"], env=world.env, capture_output=True, text=True)
    if r.returncode != 0 or not r.stdout.lstrip().startswith("{"):
        log(r.stdout[-2000:] + r.stderr[-2000:])
        raise SystemExit("jrnl --export json failed")
    with open(out, "w", encoding="utf-8") as f:
        f.write(r.stdout)


# --- timing --------------------------------------------------------------------

def hyperfine(world, name, command, runs, prepare=None, shell=False, warmup=0):
    """Median wall time (ms) of `command` over `runs` runs, and the mean CPU
    time (user + system, ms)."""
    out = world.path("hf-" + name + ".json")
    cmd = ["hyperfine", "--style", "none", "--runs", str(runs), "--warmup", str(warmup), "--export-json", out]
    if not shell:
        cmd.append("-N")
    if prepare:
        cmd += ["--prepare", f"sh -c '{prepare}'"]
    cmd.append(command)
    run(cmd, env=world.env, cwd=world.dir)
    with open(out) as f:
        r = json.load(f)["results"][0]
    median = statistics.median(r["times"]) * 1000
    cpu = (r["user"] + r["system"]) * 1000
    log(f"  {name}: median {median:,.0f} ms over {runs} runs (CPU {cpu:,.0f} ms)")
    return median


def interleaved(world, cases, rounds):
    """Whole-process runs of several commands in turn, A B C A B C …, the
    order rotated every round, so that the machine's load moves them alike.
    `cases` are (name, argv, prepare shell line or None). Returns, per name,
    the median wall time and the median CPU time (user + system, from
    wait4) in ms, and every round's wall times."""
    walls = {name: [] for name, _, _ in cases}
    cpus = {name: [] for name, _, _ in cases}
    for r in range(rounds + 1):  # round 0 warms up and is not counted
        order = cases[r % len(cases):] + cases[:r % len(cases)]
        for name, argv, prepare in order:
            if prepare:
                subprocess.run(["sh", "-c", prepare], env=world.env, cwd=world.dir, check=True)
            t = time.monotonic()
            p = subprocess.Popen(argv, env=world.env, cwd=world.dir, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            _, status, usage = os.wait4(p.pid, 0)
            took = (time.monotonic() - t) * 1000
            p.returncode = os.waitstatus_to_exitcode(status)
            if p.returncode != 0:
                raise SystemExit(f"failed ({p.returncode}): {' '.join(argv)}")
            if r > 0:
                walls[name].append(took)
                cpus[name].append((usage.ru_utime + usage.ru_stime) * 1000)
    out = {}
    for name, _, _ in cases:
        out[name] = (statistics.median(walls[name]), statistics.median(cpus[name]), walls[name])
        log(f"  {name}: median {out[name][0]:,.0f} ms over {rounds} interleaved runs (CPU {out[name][1]:,.0f} ms)")
    return out


def paired_ratio(a, b):
    """The median over rounds of b ÷ a (peer ÷ quire), and its min and max."""
    ratios = sorted(y / x for x, y in zip(a, b))
    return statistics.median(ratios), ratios[0], ratios[-1]


def runs_for(world, command, shell, budget_s, lo=3, hi=15, prepare=None):
    """How many runs fit `budget_s`, from one probe run."""
    if prepare:
        subprocess.run(["sh", "-c", prepare], env=world.env, cwd=world.dir, capture_output=True)
    t = time.monotonic()
    subprocess.run(command if shell else command.split(), shell=shell, env=world.env, cwd=world.dir, capture_output=True)
    took = time.monotonic() - t
    return max(lo, min(hi, int(budget_s / max(took, 0.001))))


def q(world, *args):
    return " ".join([world.quire] + list(args))


# --- the run -----------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quire", help="the quire binary (default: build this tree's release quire)")
    ap.add_argument("--quick", action="store_true", help="1k and 5k entries and an 8 MiB attachment instead of 10k, 50k and 64 MiB")
    ap.add_argument("--write", metavar="FILE", help="replace (or add) the section in FILE, such as BENCHMARKS.md")
    ap.add_argument("--keep", action="store_true", help="keep the scratch folder")
    ap.add_argument("--before", metavar="PATH", help="another quire binary (an older build) timed beside it for attachments and merge")
    ap.add_argument("--budget", type=float, default=20.0, help="seconds of runs per measurement (each has 3 to 15 runs)")
    ap.add_argument("--sizes", help="journal sizes, comma-separated (default 10000,50000; --quick 1000,5000); merge uses the first")
    ap.add_argument("--rounds", type=int, default=15, help="interleaved rounds of the attachment runs (quire, age, before)")
    args = ap.parse_args()

    ensure_debian_tools()
    venv = ensure_jrnl()
    quire = args.quire
    if not quire:
        log("building quire (release) …")
        run(["swift", "build", "-c", "release", "--static-swift-stdlib", "--product", "quire"], cwd=ROOT, capture=False)
        quire = os.path.join(run(["swift", "build", "-c", "release", "--static-swift-stdlib", "--show-bin-path"], cwd=ROOT).strip(), "quire")
    quire = os.path.abspath(quire)
    before = os.path.abspath(args.before) if args.before else None
    sizes_n = [int(x) for x in args.sizes.split(",")] if args.sizes else ([1000, 5000] if args.quick else [10_000, 50_000])
    small = sizes_n[0]
    mib = 8 if args.quick else 64
    started = time.monotonic()
    load_start = loadavg()
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    scratch = tempfile.mkdtemp(prefix="quire-bench-peers-")
    world = World(scratch, venv, quire)
    B = args.budget
    results = {}
    try:
        qh = world.env["QUIRE_HOME"]
        qh_snapshot = world.path("quire-home.snapshot")

        def restore(*copies):
            """A --prepare command: QUIRE_HOME and the given files back as built
            (a device refuses to write to a file shorter than one it saw)."""
            cps = "; ".join(f"cp {src} {dst}" for src, dst in copies)
            return f"rm -rf {qh} && cp -a {qh_snapshot} {qh}" + (f" && {cps}" if cps else "")

        # Device 1 (QUIRE_HOME) makes every vault; device 2 is enrolled for the merge.
        run([quire, "init", world.path("tiny.quire"), "--recovery-key-file", world.path("recovery.txt"), "--device-name", "bench"], env=world.env)

        sizes = {}
        for n in sizes_n:
            log(f"building the {n:,}-entry journal (jrnl, KeePassXC, quire) …")
            items = entries(n, SEED)
            journal = world.path(f"j{n}.txt")
            config = write_jrnl(world, items, journal)
            shutil.copy(journal, journal + ".orig")
            export = world.path(f"j{n}.json")
            t = time.monotonic()
            jrnl_export(world, config, export)
            log(f"  jrnl --export json: {time.monotonic() - t:.1f} s")
            keepass_xml(export, world.path(f"kp{n}.xml"))
            kp_import(world, world.path(f"kp{n}.xml"), world.path(f"kp{n}.kdbx"))
            shutil.copy(world.path(f"kp{n}.kdbx"), world.path(f"kp{n}.kdbx.orig"))
            vault = world.path(f"v{n}.quire")
            run([quire, "init", vault, "--recovery-key-file", world.path(f"recovery{n}.txt"), "--device-name", "bench"], env=world.env)
            t = time.monotonic()
            run([quire, "import", "jrnl", export, vault, "--time-zone", "UTC"], env=world.env)
            log(f"  quire import jrnl: {time.monotonic() - t:.1f} s")
            sizes[n] = (os.path.getsize(journal), os.path.getsize(world.path(f"kp{n}.kdbx")), os.path.getsize(vault))

        # The merge case: two copies of the small vault, 100 new entries on
        # each (one commit each, by two devices), and the same in KeePassXC.
        log(f"building the merge case ({small:,} + 100 / + 100) …")
        base = world.path(f"v{small}.quire")
        h2 = world.path("quire-home-2")
        env2 = dict(world.env, QUIRE_HOME=h2)
        code = run([quire, "device", "code"], env=env2).strip().splitlines()[-1]
        run([quire, "device", "add", base, code, "--name", "second"], env=world.env)
        shutil.copy(base, world.path("merge-a.quire"))
        shutil.copy(base, world.path("merge-b.quire"))
        extra_a = entries(100, SEED + 1, start=datetime.datetime(2030, 1, 1, 8, 0))
        extra_b = entries(100, SEED + 2, start=datetime.datetime(2030, 1, 1, 10, 0))
        for items, path, env in ((extra_a, "merge-a.quire", world.env), (extra_b, "merge-b.quire", env2)):
            for _, title, body, _ in items:
                run([quire, "add", world.path(path), "-"], env=env, stdin=title + "\n\n" + body)
        for name, items in (("a", extra_a), ("b", extra_b)):
            more = world.path(f"merge-{name}.json")
            with open(world.path(f"j{small}.json"), encoding="utf-8") as f:
                data = json.load(f)
            data["entries"] += [{"title": t, "body": b, "date": f"{w:%Y-%m-%d}", "time": f"{w:%H:%M}", "tags": tags, "starred": False}
                                for w, t, b, tags in items]
            with open(more, "w", encoding="utf-8") as f:
                json.dump(data, f)
            keepass_xml(more, world.path(f"merge-{name}.xml"), base_count=small, namespace=1 if name == "a" else 2)
        kp_import(world, world.path("merge-a.xml"), world.path("merge-a.kdbx"))
        kp_import(world, world.path("merge-b.xml"), world.path("merge-b.kdbx"))

        # The attachment case: a small vault, an age key pair, random bytes.
        log(f"building the attachment case ({mib} MiB) …")
        blob = world.path("attachment.bin")
        with open(blob, "wb") as f:
            rng = random.Random(SEED)
            for _ in range(mib):
                f.write(rng.randbytes(1 << 20))
        run(["age-keygen", "-o", world.path("age.key")], env=world.env)
        with open(world.path("age.key")) as f:
            recipient = [l.split(": ")[1].strip() for l in f if l.startswith("# public key:")][0]
        run(["age", "-r", recipient, "-o", world.path("attachment.age"), blob], env=world.env)
        tiny = world.path("tiny.quire")
        shutil.copy(tiny, tiny + ".orig")
        attached = world.path("attached.quire")
        shutil.copy(tiny, attached)
        attachment_id = run([quire, "add", attached, "photo", "--attach", blob], env=world.env).strip()
        attachment = json.loads(run([quire, "attachments", attached, attachment_id, "--json"], env=world.env))["attachments"][0]["id"]

        # Everything the snapshots restore is in place: take QUIRE_HOME's.
        shutil.copytree(qh, qh_snapshot, symlinks=True)
        log(f"measuring (load average {loadavg()}) …")

        for n in sizes_n:
            journal = world.path(f"j{n}.txt")
            config = world.jrnl_config(journal)
            jr = " ".join(world.jrnl_cmd(config))
            db = world.path(f"kp{n}.kdbx")
            vault = world.path(f"v{n}.quire")
            # add one entry: each run adds one more (the sizes stay within 15 entries of n)
            c = f"{jr} Added.entry.text"
            results[("add", n, "jrnl")] = hyperfine(world, f"jrnl-add-{n}", c, runs_for(world, c, False, B))
            c = kp(f"keepassxc-cli add -q {db} Added-$$ --notes text")
            results[("add", n, "kp")] = hyperfine(world, f"kp-add-{n}", c, runs_for(world, c, True, B), shell=True)
            c = q(world, "add", vault, "Added.entry.text")
            results[("add", n, "quire")] = hyperfine(world, f"quire-add-{n}", c, runs_for(world, c, False, B), warmup=1)
            # list all
            c = f"{jr} -n 100000000"
            results[("list", n, "jrnl")] = hyperfine(world, f"jrnl-list-{n}", c, runs_for(world, c, False, B))
            c = kp(f"keepassxc-cli ls -q -R -f {db}")
            results[("list", n, "kp")] = hyperfine(world, f"kp-list-{n}", c, runs_for(world, c, True, B), shell=True)
            c = q(world, "list", vault)
            results[("list", n, "quire")] = hyperfine(world, f"quire-list-{n}", c, runs_for(world, c, False, B), warmup=1)
            c = q(world, "list", vault, "--json")
            results[("list-json", n, "quire")] = hyperfine(world, f"quire-list-json-{n}", c, runs_for(world, c, False, B), warmup=1)
            c = q(world, "search", vault, SEARCH_WORD)
            results[("search", n, "quire")] = hyperfine(world, f"quire-search-{n}", c, runs_for(world, c, False, B), warmup=1)
            c = q(world, "verify", vault)
            results[("verify", n, "quire")] = hyperfine(world, f"quire-verify-{n}", c, runs_for(world, c, False, B), warmup=1)

        # attachments, in (a fresh small vault each run, or the second run
        # would find the content already held) and out, interleaved with age
        # (and the older quire) round by round: the ratios are per round.
        out = world.path("extracted.bin")
        age_out = world.path("age-out.age")
        prep_in = restore((tiny + ".orig", tiny))
        cases = [("quire", [quire, "add", tiny, "photo", "--attach", blob], prep_in),
                 ("age", ["age", "-r", recipient, "-o", age_out, blob], f"rm -f {age_out}")]
        if before:
            cases.append(("before", [before, "add", tiny, "photo", "--attach", blob], prep_in))
        log(f"attachment in, {args.rounds} interleaved rounds …")
        r_in = interleaved(world, cases, args.rounds)
        cases = [("quire", [quire, "extract", attached, attachment, "-o", out], f"rm -f {out}"),
                 ("age", ["age", "-d", "-i", world.path("age.key"), "-o", out, world.path("attachment.age")], f"rm -f {out}")]
        if before:
            cases.append(("before", [before, "extract", attached, attachment, "-o", out], f"rm -f {out}"))
        log(f"attachment out, {args.rounds} interleaved rounds …")
        r_out = interleaved(world, cases, args.rounds)
        for key, r in (("attach-in", r_in), ("attach-out", r_out)):
            for who in r:
                results[(key, mib, who)] = r[who][0]
                results[(key + "-cpu", mib, who)] = r[who][1]
            results[(key + "-ratio", mib, "age")] = paired_ratio(r["quire"][2], r["age"][2])

        # merge: into a fresh copy of A each run
        shutil.copy(world.path("merge-a.quire"), world.path("merge-a.quire.orig"))
        shutil.copy(world.path("merge-a.kdbx"), world.path("merge-a.kdbx.orig"))
        prep = restore((world.path("merge-a.quire.orig"), world.path("merge-a.quire")))
        c = q(world, "merge", world.path("merge-a.quire"), world.path("merge-b.quire"))
        results[("merge", small, "quire")] = hyperfine(world, "quire-merge", c, runs_for(world, c, False, B, prepare=prep), prepare=prep, warmup=1)
        if before:
            c = c.replace(quire, before, 1)
            results[("merge", small, "before")] = hyperfine(world, "before-merge", c, runs_for(world, c, False, B, prepare=prep), prepare=prep, warmup=1)
        prep = f"cp {world.path('merge-a.kdbx.orig')} {world.path('merge-a.kdbx')}"
        c = kp(f"keepassxc-cli merge -q -s {world.path('merge-a.kdbx')} {world.path('merge-b.kdbx')}")
        results[("merge", small, "kp")] = hyperfine(world, "kp-merge", c, runs_for(world, c, True, B, prepare=prep), prepare=prep, shell=True)
        check_merges(world, small)

        load_end = loadavg()
        elapsed = time.monotonic() - started
        text = report(results, sizes, sizes_n, mib, quire, stamp, load_start, load_end, elapsed, args)
        print(text)
        if args.write:
            write_section(args.write, text)
            log(f"wrote the section '{SECTION}' of {args.write}")
    finally:
        if args.keep:
            log(f"kept {scratch}")
        else:
            shutil.rmtree(scratch, ignore_errors=True)


def check_merges(world, small):
    """Both merges did the work: the result holds base + 200 entries."""
    listed = run(["sh", "-c", kp(f"keepassxc-cli ls -q -R -f {world.path('merge-a.kdbx')}")], env=world.env)
    kp_count = len([l for l in listed.splitlines() if l.strip() and not l.endswith("/")])
    qj = json.loads(run([world.quire, "list", world.path("merge-a.quire"), "--json"], env=world.env))
    q_count = len(qj["entries"]) if isinstance(qj, dict) else len(qj)
    log(f"  after merging: KeePassXC {kp_count:,} entries, quire {q_count:,} entries (expected {small + 200:,} plus the probe adds)")


def ratio(peer, mine):
    return f"{peer / mine:,.1f}×" if peer and mine else "–"


def ms(x):
    return f"{x:,.0f} ms" if x is not None else "–"


def report(r, sizes, sizes_n, mib, quire, stamp, load_start, load_end, elapsed, args):
    small = sizes_n[0]
    def g(*k):
        return r.get(k)

    k = lambda n: f"{n // 1000}k"
    rows = []
    for n in sizes_n:
        rows.append((f"add one entry, {k(n)} entries", g("add", n, "jrnl"), g("add", n, "kp"), None, g("add", n, "quire"), ""))
    for n in sizes_n:
        rows.append((f"list all, {k(n)}", g("list", n, "jrnl"), g("list", n, "kp"), None, g("list", n, "quire"),
                     f"`--json`: {ms(g('list-json', n, 'quire'))}"))
    for n in sizes_n:
        rows.append((f"search, {k(n)}", None, None, None, g("search", n, "quire"), ""))
    for n in sizes_n:
        rows.append((f"verify (reads and checks everything), {k(n)}", None, None, None, g("verify", n, "quire"), ""))
    def was(key):
        b = g(key, mib if key != "merge" else small, "before")
        return f"before: {ms(b)}" if b else ""

    def attach(key):
        m, lo, hi = g(key + "-ratio", mib, "age")
        cpu = f"CPU: age {ms(g(key + '-cpu', mib, 'age'))}, quire {ms(g(key + '-cpu', mib, 'quire'))}"
        if g(key + "-cpu", mib, "before"):
            cpu += f", before {ms(g(key + '-cpu', mib, 'before'))}"
        return f"{was(key)}{'; ' if was(key) else ''}age ÷ quire per round {lo:.2f}–{hi:.2f} (median {m:.2f}); {cpu}"

    rows.append((f"attachment in, {mib} MiB", None, None, g("attach-in", mib, "age"), g("attach-in", mib, "quire"), attach("attach-in")))
    rows.append((f"attachment out, {mib} MiB", None, None, g("attach-out", mib, "age"), g("attach-out", mib, "quire"), attach("attach-out")))
    rows.append((f"merge {k(small)} + 100 / + 100", None, g("merge", small, "kp"), None, g("merge", small, "quire"), was("merge")))

    lines = [
        f"## {SECTION}",
        "",
        "Issue 14's table, rerun with `make bench-peers` (`Scripts/bench-peers.py`): the same seeded synthetic journal "
        f"({' and '.join(f'{n:,}' for n in sizes_n)} entries of 300–900 bytes, 5 hours apart, a tag on 3 in 10) as an encrypted jrnl {JRNL_VERSION} journal, "
        "a KeePassXC database (one entry per journal entry: title, notes, tags, time; imported from KeePass XML) and a Quire vault "
        "imported from jrnl's own `--export json`. Whole processes, hyperfine medians (3–15 runs each, fitted to a time budget), "
        "except the attachments: quire and age (and an older quire with `--before`) run in turn, round by round, their order "
        f"rotated each round ({args.rounds} rounds after one warm-up), medians of wall and CPU time (user + system) and of the per-round ratio; "
        "jrnl, age and quire run without a shell, KeePassXC under `sh -c` because it reads its password from standard input. "
        "Ratios are peer ÷ quire: above 1, quire is faster. Every tool ran with a scratch HOME and QUIRE_HOME.",
        "",
        "Commands: jrnl `jrnl TEXT`, `jrnl -n 100000000` (every entry, full text); KeePassXC `keepassxc-cli add DB TITLE --notes TEXT`, "
        "`ls -R -f DB`, `merge -s A B`; age `age -r RECIPIENT -o OUT FILE`, `age -d -i KEY -o OUT FILE`; quire `add`, `list`, `list --json`, "
        f"`search VAULT {SEARCH_WORD}`, `verify`, `add VAULT TEXT --attach FILE` (into a small vault restored before each run), "
        "`extract VAULT ID -o OUT`, `merge A B` (A restored before each run; A and B each got 100 entries, one commit each, from "
        "two devices). The attachment is random bytes (incompressible, as photos and video are).",
        "",
        f"Command: `python3 Scripts/bench-peers.py{' --quick' if args.quick else ''}{' --sizes ' + args.sizes if args.sizes else ''}{' --before ' + args.before if args.before else ''}"
        f"{' --write ' + args.write if args.write else ''}`; "
        f"{stamp}; {elapsed / 60:.0f} min; `nproc` = {os.cpu_count()}; load average (1/5/15 min) at start {load_start}, at end {load_end}.",
        "",
        "| work | jrnl | KeePassXC | age | quire | peer ÷ quire | note |",
        "|:---|---:|---:|---:|---:|:---|:---|",
    ]
    for work, jr, kpv, agev, mine, note in rows:
        ratios = []
        if jr:
            ratios.append(f"jrnl {ratio(jr, mine)}")
        if kpv:
            ratios.append(f"KeePassXC {ratio(kpv, mine)}")
        if agev:
            ratios.append(f"age {ratio(agev, mine)}")
        lines.append(f"| {work} | {ms(jr)} | {ms(kpv)} | {ms(agev)} | {ms(mine)} | {', '.join(ratios) or '–'} | {note} |")
    lines += ["", "| size | jrnl journal | KeePassXC database | quire vault |", "|:---|---:|---:|---:|"]
    for n, (a, b, c) in sizes.items():
        lines.append(f"| {n:,} entries | {a / 1e6:.1f} MB | {b / 1e6:.1f} MB | {c / 1e6:.1f} MB |")
    return "\n".join(lines) + "\n"


def write_section(path, text):
    old = ""
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            old = f.read()
    head = f"## {SECTION}"
    if head in old:
        start = old.index(head)
        nxt = old.find("\n## ", start + len(head))
        old = old[:start] + text + ("\n" + old[nxt + 1:] if nxt >= 0 else "")
    else:
        old = old.rstrip("\n") + "\n\n" + text
    with open(path, "w", encoding="utf-8") as f:
        f.write(old)


if __name__ == "__main__":
    main()
