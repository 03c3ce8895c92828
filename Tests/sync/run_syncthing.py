#!/usr/bin/env python3
"""make test-sync: one vault shared by two Syncthing instances on 127.0.0.1.

Both instances live in a temporary directory, talk only to each other over
loopback (static addresses; discovery, relays, NAT traversal, usage
reporting, crash reporting and upgrades off), and share one folder holding a
Quire vault. The test pauses both, appends a different entry on each side,
resumes them so that Syncthing keeps a `.sync-conflict` copy, folds the copy
back on the side that has it, and checks that after the next sync both sides
hold every entry in byte-identical files and no conflict copy is left. It
stops every process it started, by PID. (Spec/merge.md §4; issue 4.)

Usage: run_syncthing.py HELPER   (the quire-sync-helper executable)
"""

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
import xml.sax.saxutils

FOLDER_ID = "quire-test"
VAULT = "Journal.quire"
TIMEOUT = int(os.environ.get("QUIRE_TEST_SYNC_TIMEOUT", "90"))


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def log(message):
    print("test-sync: " + message, flush=True)


class Instance:
    def __init__(self, root, name):
        self.name = name
        self.home = os.path.join(root, name + "-home")
        self.folder = os.path.join(root, name + "-folder")
        self.quire_home = os.path.join(root, name + "-quire")
        self.listen = free_port()
        self.gui = free_port()
        self.api_key = "quire-test-" + name
        self.process = None
        os.makedirs(self.folder)
        os.makedirs(os.path.join(self.folder, ".stfolder"))
        subprocess.run(["syncthing", "generate", "--home=" + self.home, "--no-default-folder", "--skip-port-probing"],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.device_id = subprocess.run(["syncthing", "serve", "--home=" + self.home, "--device-id"],
                                        check=True, capture_output=True, text=True).stdout.strip()

    def write_config(self, peer):
        e = xml.sax.saxutils.quoteattr
        devices = "".join(
            f'<device id={e(d.device_id)} name={e(d.name)} compression="metadata" introducer="false">'
            f"<address>tcp://127.0.0.1:{d.listen}</address><autoAcceptFolders>false</autoAcceptFolders></device>"
            for d in (self, peer))
        config = f"""<configuration version="36">
  <folder id={e(FOLDER_ID)} label="Quire test" path={e(self.folder)} type="sendreceive" rescanIntervalS="3600" fsWatcherEnabled="false" ignorePerms="false" autoNormalize="true">
    <filesystemType>basic</filesystemType>
    <device id={e(self.device_id)}></device>
    <device id={e(peer.device_id)}></device>
    <minDiskFree unit="%">0</minDiskFree>
    <maxConflicts>10</maxConflicts>
    <versioning></versioning>
  </folder>
  {devices}
  <gui enabled="true" tls="false" debugging="false">
    <address>127.0.0.1:{self.gui}</address>
    <apikey>{self.api_key}</apikey>
  </gui>
  <options>
    <listenAddress>tcp://127.0.0.1:{self.listen}</listenAddress>
    <globalAnnounceEnabled>false</globalAnnounceEnabled>
    <localAnnounceEnabled>false</localAnnounceEnabled>
    <relaysEnabled>false</relaysEnabled>
    <natEnabled>false</natEnabled>
    <reconnectionIntervalS>5</reconnectionIntervalS>
    <urAccepted>-1</urAccepted>
    <urSeen>3</urSeen>
    <autoUpgradeIntervalH>0</autoUpgradeIntervalH>
    <startBrowser>false</startBrowser>
    <crashReportingEnabled>false</crashReportingEnabled>
    <announceLANAddresses>false</announceLANAddresses>
    <setLowPriority>false</setLowPriority>
    <minHomeDiskFree unit="%">0</minHomeDiskFree>
  </options>
</configuration>
"""
        with open(os.path.join(self.home, "config.xml"), "w") as f:
            f.write(config)

    def start(self):
        env = dict(os.environ, STNOUPGRADE="1", STNORESTART="1", STNODEFAULTFOLDER="1")
        self.logfile = open(os.path.join(self.home, "syncthing.log"), "w")
        self.process = subprocess.Popen(
            ["syncthing", "serve", "--home=" + self.home, "--no-browser", "--no-restart", "--no-upgrade", "--no-default-folder"],
            stdout=self.logfile, stderr=subprocess.STDOUT, env=env)
        deadline = time.time() + TIMEOUT
        while time.time() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"{self.name}: Syncthing exited with status {self.process.returncode}")
            try:
                self.get("/rest/system/ping")
                return
            except Exception:
                time.sleep(0.3)
        raise RuntimeError(f"{self.name}: Syncthing's API did not answer within {TIMEOUT} s")

    def stop(self):
        if self.process and self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.kill(self.process.pid, signal.SIGKILL)
                self.process.wait()
        if getattr(self, "logfile", None):
            self.logfile.close()

    def request(self, method, path):
        req = urllib.request.Request(f"http://127.0.0.1:{self.gui}{path}", method=method, headers={"X-API-Key": self.api_key})
        with urllib.request.urlopen(req, timeout=10) as r:
            body = r.read()
            return json.loads(body) if body.strip() else None

    def get(self, path):
        return self.request("GET", path)

    def post(self, path):
        return self.request("POST", path)

    def scan(self):
        self.post(f"/rest/db/scan?folder={FOLDER_ID}")

    def helper(self, helper, *args):
        env = dict(os.environ, QUIRE_HOME=self.quire_home)
        r = subprocess.run([helper, *args], env=env, capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"{self.name}: quire-sync-helper {' '.join(args)} failed: {r.stderr.strip()}")
        return r.stdout

    def indexed_size(self):
        """The size Syncthing's index holds for the vault on this side."""
        info = self.get(f"/rest/db/file?folder={FOLDER_ID}&file={VAULT}")
        return (info.get("local") or {}).get("size")

    def vault(self):
        return os.path.join(self.folder, VAULT)

    def conflicts(self):
        return sorted(n for n in os.listdir(self.folder) if ".sync-conflict-" in n)


def read(path):
    try:
        with open(path, "rb") as f:
            return f.read()
    except FileNotFoundError:
        return None


def wait_for(what, condition, nodes):
    deadline = time.time() + TIMEOUT
    while time.time() < deadline:
        for n in nodes:
            n.scan()
        if condition():
            return
        time.sleep(1)
    raise RuntimeError(f"timed out after {TIMEOUT} s waiting for {what}")


def main():
    helper = os.path.abspath(sys.argv[1])
    root = tempfile.mkdtemp(prefix="quire-test-sync-")
    a, b = Instance(root, "laptop"), Instance(root, "desktop")
    try:
        a.write_config(b)
        b.write_config(a)
        # The vault: made on the laptop, the desktop enrolled by its device code.
        a.helper(helper, "create", a.vault(), "Laptop")
        code = b.helper(helper, "code", "Desktop").strip()
        a.helper(helper, "enroll", a.vault(), code, "Desktop")
        a.helper(helper, "add", a.vault(), "written before syncing")
        log(f"two Syncthing {subprocess.run(['syncthing', '--version'], capture_output=True, text=True).stdout.split()[1]} instances on 127.0.0.1:{a.listen} and :{b.listen}")
        a.start()
        b.start()
        log(f"started PIDs {a.process.pid} and {b.process.pid}")
        wait_for("the vault to reach the desktop", lambda: read(b.vault()) == read(a.vault()), [a, b])
        log("the desktop has the vault")

        expected = ["written before syncing"]
        # Round 1: both offline, each side writes, both reconnect.
        # Round 2: the same, but the laptop also compacts with a rekey while
        # apart (the file is rewritten under a new epoch) — the everyday case
        # of Spec/merge.md §6 that must not break sync.
        for round, laptop_ops in ((1, ["add"]), (2, ["add", "compact"])):
            for n in (a, b):
                n.post("/rest/system/pause")
            time.sleep(1)
            for op in laptop_ops:
                if op == "add":
                    a.helper(helper, "add", a.vault(), f"written on the laptop while apart ({round})")
                else:
                    log(f"laptop: {a.helper(helper, 'compact', a.vault()).strip()}")
            time.sleep(1.1)  # distinct modification times
            b.helper(helper, "add", b.vault(), f"written on the desktop while apart ({round})")
            expected += [f"written on the laptop while apart ({round})", f"written on the desktop while apart ({round})"]
            # Each side must have indexed its own change before they reconnect,
            # or Syncthing would take the other's file as a plain update.
            wait_for("each side to index its own change", lambda: all(n.indexed_size() == os.path.getsize(n.vault()) for n in (a, b)), [a, b])
            for n in (a, b):
                n.post("/rest/system/resume")
            wait_for("Syncthing to keep a conflict copy", lambda: a.conflicts() or b.conflicts(), [a, b])
            side = a if a.conflicts() else b
            log(f"round {round}: Syncthing kept {side.conflicts()[0]} on the {side.name}")
            # Let the conflict copy settle on both sides before folding.
            wait_for("the conflict copy on both sides", lambda: a.conflicts() == b.conflicts() and read(a.vault()) == read(b.vault()), [a, b])

            report = side.helper(helper, "fold", side.vault()).strip()
            log(f"fold on the {side.name}: {report}")
            if "deleted" not in report:
                raise RuntimeError("the fold did not delete the conflict copy")
            wait_for("both sides to hold the merged vault and no conflict copy",
                     lambda: not a.conflicts() and not b.conflicts() and read(a.vault()) == read(b.vault()), [a, b])
            # A few more scans: the merge must not start a storm of new conflicts.
            for _ in range(3):
                for n in (a, b):
                    n.scan()
                time.sleep(1)
            if a.conflicts() or b.conflicts() or read(a.vault()) != read(b.vault()):
                raise RuntimeError("a new conflict appeared after the fold")
            expected.sort()
            for n in (a, b):
                got = n.helper(helper, "list", n.vault()).splitlines()
                if got != expected:
                    raise RuntimeError(f"{n.name} lists {got}, expected {expected}")
        log(f"both sides hold all {len(expected)} entries in byte-identical files ({len(read(a.vault()))} bytes); no conflict copy left")
        log("passed")
        return 0
    except Exception as e:
        log(f"FAILED: {e}")
        for n in (a, b):
            p = os.path.join(n.home, "syncthing.log")
            if os.path.exists(p):
                print(f"--- {n.name} syncthing.log (last 30 lines)")
                with open(p) as f:
                    print("".join(f.readlines()[-30:]))
        return 1
    finally:
        for n in (a, b):
            n.stop()
        if os.environ.get("QUIRE_TEST_SYNC_KEEP"):
            log(f"kept {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
