import Foundation
@_spi(Crypto) @_spi(Format) import Quire
import QuireSystem
import Testing
import QuireTestSupport

/// Runs `quire args…` on a pseudo-terminal, types `argv[1]` at the first
/// prompt (the recovery key), and at the second prompt (the question asked
/// after unlocking) reads the command's memory through /proc/PID/maps and
/// /proc/PID/mem. For each secret (`argv[2]`, hex, comma-separated) it prints
/// `<<FOUND i ADDRESS PERMS FLAGS NAME>>` for every readable region outside
/// guarded memory that holds it. Guarded memory is what libsodium's
/// `sodium_malloc` maps: marked do-not-dump (`dd` in smaps' VmFlags) and
/// locked where the system allows. Then it answers `n` and prints `EXIT n`.
let memoryDumpDriver = #"""
    import os, pty, re, select, sys, time
    answer, secrets, argv = sys.argv[1], [bytes.fromhex(h) for h in sys.argv[2].split(",")], sys.argv[3:]
    pid, fd = pty.fork()
    if pid == 0:
        os.execvp(argv[0], argv)
    out = b""
    def pump(until, seconds):
        global out
        end = time.time() + seconds
        while time.time() < end and not until(out):
            r, _, _ = select.select([fd], [], [], 0.1)
            if r:
                try: data = os.read(fd, 65536)
                except OSError: return
                if not data: return
                out += data
    pump(lambda o: o.rstrip().endswith(b":"), 60)
    os.write(fd, answer.encode() + b"\n")
    pump(lambda o: o.rstrip().endswith(b"]"), 120)
    time.sleep(0.3)
    regions, current = [], None
    for line in open("/proc/%d/smaps" % pid):
        m = re.match(r"^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \S+\s*(.*)$", line)
        if m:
            current = [int(m.group(1), 16), int(m.group(2), 16), m.group(3), m.group(4).strip(), ""]
            regions.append(current)
        elif line.startswith("VmFlags:"):
            current[4] = line.split(":", 1)[1].strip()
    scanned = 0
    mem = open("/proc/%d/mem" % pid, "rb", 0)
    for start, end, perms, name, flags in regions:
        if not perms.startswith("r") or "dd" in flags.split() or name in ("[vvar]", "[vsyscall]"): continue
        try:
            mem.seek(start); data = mem.read(end - start)
        except OSError: continue
        scanned += len(data)
        for i, s in enumerate(secrets):
            at = data.find(s)
            while at >= 0:
                out += b"<<FOUND %d %x %s %s %s>>" % (i, start + at, perms.encode(), flags.encode(), name.encode())
                at = data.find(s, at + 1)
    out += b"<<SCANNED %d>>" % scanned
    os.write(fd, b"n\n")
    pump(lambda o: False, 30)
    _, status = os.waitpid(pid, 0)
    sys.stdout.write(out.decode("utf-8", "replace") + "\nEXIT %d\n" % os.waitstatus_to_exitcode(status))
    """#

/// Reads the memory of process `argv[1]` (this test process) through
/// /proc/PID/smaps and /proc/PID/mem and prints `<<FOUND i …>>` for each
/// secret (`argv[2]`, hex) in a readable region outside guarded memory:
/// guarded memory is what libsodium's `sodium_malloc` maps, marked
/// do-not-dump (`dd` in smaps' VmFlags) and locked where the system allows.
let memoryScanner = #"""
    import re, sys
    pid, secrets = int(sys.argv[1]), [bytes.fromhex(h) for h in sys.argv[2].split(",")]
    regions, current, out = [], None, []
    for line in open("/proc/%d/smaps" % pid):
        m = re.match(r"^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \S+\s*(.*)$", line)
        if m:
            current = [int(m.group(1), 16), int(m.group(2), 16), m.group(3), m.group(4).strip(), ""]
            regions.append(current)
        elif line.startswith("VmFlags:"):
            current[4] = line.split(":", 1)[1].strip()
    scanned = 0
    mem = open("/proc/%d/mem" % pid, "rb", 0)
    for start, end, perms, name, flags in regions:
        if not perms.startswith("r") or "dd" in flags.split() or name in ("[vvar]", "[vsyscall]"): continue
        try:
            mem.seek(start); data = mem.read(end - start)
        except OSError: continue
        scanned += len(data)
        for i, s in enumerate(secrets):
            at = data.find(s)
            while at >= 0:
                out.append("<<FOUND %d %x %s %s %s>>" % (i, start + at, perms, flags, name))
                at = data.find(s, at + 1)
    print("".join(out) + "<<SCANNED %d>>" % scanned)
    """#

/// The hex of guarded bytes, made without a plain copy of them.
func guardedHex(_ key: SymmetricKey) -> String {
    key.withUnsafeBytes { raw in raw.map { String(format: "%02x", $0) }.joined() }
}

/// The hits ``memoryScanner`` or ``memoryDumpDriver`` printed, and how many bytes it read.
func memoryHits(_ text: String) -> (hits: [(index: Int, line: String)], scanned: Int) {
    let scanned = text.components(separatedBy: "<<SCANNED ").dropFirst().first.flatMap { Int($0.prefix { $0.isNumber }) } ?? 0
    let hits = text.components(separatedBy: "<<FOUND ").dropFirst().map { $0.components(separatedBy: ">>")[0] }
    return (hits.map { (Int($0.prefix { $0.isNumber }) ?? 0, $0) }, scanned)
}

/// After an unlock with the recovery key, no copy of the recovery code, the
/// recovery secret, an epoch key or the blob key is left in memory that can
/// be swapped out or dumped: secrets live in guarded memory only
/// (issue 15, "Secrets in memory and on disk").
@Suite(.tags(.slow), .skippedByMakeCheck) struct SecretsInMemoryTests {
    /// The epoch keys and blob keys of `vault`, from its recovery key, as
    /// (name, bytes) pairs.
    static func vaultKeys(_ box: Sandbox, recovery: RecoveryKey) throws -> [(String, [UInt8])] {
        let file = try VaultFile(path: box.path("Journal.quire"))
        let unlocked = try KeyringEvaluator.unlock(file, with: .recoveryKey(recovery))
        var secrets: [(String, [UInt8])] = [("recovery secret", recovery.secret.storage.copyBytes())]
        for key in unlocked.keys.all {
            secrets.append(("epoch \(key.epoch) key", key.key.storage.copyBytes()))
            if let blob = key.blobKey { secrets.append(("blob key (epoch \(key.epoch))", blob.storage.copyBytes())) }
        }
        #expect(unlocked.keys.all.count >= 4)
        return secrets
    }

    /// A new device to enroll, and its code.
    static func deviceCode(_ box: Sandbox) throws -> String {
        let shown = try box.quire(["device", "code"], env: ["QUIRE_HOME": box.path("phone")])
        #expect(shown.status == 0, "\(shown)")
        let words: [String] = shown.stdout.split(whereSeparator: \.isWhitespace).map(String.init)
        let codes: [String] = words.filter { (w: String) -> Bool in w.count == 69 && w.filter { $0 == "-" }.count == 13 }
        return try #require(codes.first, "\(shown)")
    }

    /// Runs 'quire device add' from a device that is not enrolled, types
    /// `typed` at the unlock prompt, and records every secret found
    /// outside guarded memory at the fingerprint question that follows.
    static func expectNoSecretAtTheQuestion(_ box: Sandbox, typing typed: String, secrets: [(String, [UInt8])]) throws {
        let deviceCode = try deviceCode(box)
        var env = box.environment
        env["QUIRE_HOME"] = box.path("new-device")
        env["PATH"] = (env["PATH"] ?? "") + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin")
        let hex = secrets.map { $0.1.map { String(format: "%02x", $0) }.joined() }.joined(separator: ",")
        let (status, text) = try python(
            memoryDumpDriver,
            [typed, hex, "/usr/bin/env", "-C", box.dir, box.binary, "device", "add", "Journal.quire", deviceCode, "--name", "Phone"],
            env: env)
        #expect(status == 0, "\(text)")
        if ProcessInfo.processInfo.environment["QUIRE_TEST_VERBOSE"] != nil { print(text) }
        #expect(text.contains("Does the new device show the fingerprint"), "the command did not reach its question: \(text)")
        let (hits, scanned) = memoryHits(text)
        #expect(scanned > 1_000_000, "the memory was not read: \(text)")
        for hit in hits { Issue.record("\(secrets[hit.index].0) is in ordinary memory: \(hit.line)") }
    }

    @Test func noSecretOutsideGuardedMemoryAtAPromptAfterUnlocking() throws {
        let box = try Sandbox()
        try box.makeVault()
        _ = try box.add("an entry")
        // Rotate a few times so that the newest keyring carries parent keys.
        for _ in 0..<3 {
            let r = try box.quire(["keys", "rotate", "Journal.quire"])
            #expect(r.status == 0, "\(r)")
        }
        let code = try String(contentsOfFile: box.path("recovery.txt"), encoding: .utf8).trimmingCharacters(in: .newlines)
        let secrets =
            [("recovery code as typed", Array(code.utf8)), ("recovery code without dashes", Array(code.filter { $0 != "-" }.utf8))]
            + (try Self.vaultKeys(box, recovery: try RecoveryKey(code: code)))
        try Self.expectNoSecretAtTheQuestion(box, typing: code, secrets: secrets)
    }

    /// The same after unlocking with a passphrase typed at the prompt.
    @Test func noPassphraseOutsideGuardedMemoryAtAPromptAfterUnlocking() throws {
        let box = try Sandbox()
        let passphrase = "nine quiet otters juggle 47 lanterns"
        try box.write("pass.txt", passphrase + "\n")
        let made = try box.quire(["init", "Journal.quire", "--passphrase-file", "pass.txt", "--recovery-key-file", "recovery.txt"])
        #expect(made.status == 0, "\(made)")
        for _ in 0..<3 {
            let r = try box.quire(["keys", "rotate", "Journal.quire"])
            #expect(r.status == 0, "\(r)")
        }
        try FileManager.default.removeItem(atPath: box.path("pass.txt"))
        let code = try String(contentsOfFile: box.path("recovery.txt"), encoding: .utf8).trimmingCharacters(in: .newlines)
        let secrets = [("passphrase", Array(passphrase.utf8))] + (try Self.vaultKeys(box, recovery: try RecoveryKey(code: code)))
        try Self.expectNoSecretAtTheQuestion(box, typing: passphrase, secrets: secrets)
    }

    /// Writing keyrings (each rotation seals the parent's epoch key and the
    /// blob key into the new keyring's content) leaves no key bytes in this
    /// process's ordinary memory, freed or not.
    @Test func writingKeyringsLeavesNoKeyInOrdinaryMemory() throws {
        let box = try Sandbox()
        try box.makeVault()
        let code = try String(contentsOfFile: box.path("recovery.txt"), encoding: .utf8).trimmingCharacters(in: .newlines)
        let recovery = try RecoveryKey(code: code)
        do {
            let vault = try Vault.open(at: box.path("Journal.quire"), credential: .recoveryKey(recovery))
            for _ in 0..<3 { try vault.rotateKeys() }
        }
        let file = try VaultFile(path: box.path("Journal.quire"))
        let unlocked = try KeyringEvaluator.unlock(file, with: .recoveryKey(recovery))
        var names: [String] = [], hexes: [String] = []
        for key in unlocked.keys.all {
            names.append("epoch \(key.epoch) key")
            hexes.append(guardedHex(key.key))
            if let blob = key.blobKey {
                names.append("blob key (epoch \(key.epoch))")
                hexes.append(guardedHex(blob))
            }
        }
        #expect(unlocked.keys.all.count >= 4)
        let (status, text) = try python(memoryScanner, [String(getpid()), hexes.joined(separator: ",")], env: ProcessInfo.processInfo.environment)
        #expect(status == 0, "\(text)")
        let (hits, scanned) = memoryHits(text)
        #expect(scanned > 1_000_000, "the memory was not read: \(text)")
        for hit in hits { Issue.record("\(names[hit.index]) is in ordinary memory: \(hit.line)") }
    }
}
