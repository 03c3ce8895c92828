import Foundation
import Quire
import QuireSystem
import Testing
import QuireTestSupport

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

/// The hits ``memoryScanner`` printed, and how many bytes it read.
func memoryHits(_ text: String) -> (hits: [(index: Int, line: String)], scanned: Int) {
    let scanned = text.components(separatedBy: "<<SCANNED ").dropFirst().first.flatMap { Int($0.prefix { $0.isNumber }) } ?? 0
    let hits = text.components(separatedBy: "<<FOUND ").dropFirst().map { $0.components(separatedBy: ">>")[0] }
    return (hits.map { (Int($0.prefix { $0.isNumber }) ?? 0, $0) }, scanned)
}

/// No secret is left in memory that can be swapped out or dumped: secrets
/// live in guarded memory only (issue 15, "Secrets in memory and on disk").
@Suite(.tags(.slow), .skippedByMakeCheck) struct SecretsInMemoryTests {
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
