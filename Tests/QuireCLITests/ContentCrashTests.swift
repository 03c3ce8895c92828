import Foundation
import Quire
import QuireSystem
import Testing

@Suite struct ContentCrashTests {
    @Test func infoOnAKeyringSlotWithAHugeMemoryLimitDoesNotCrash() throws {
        let box = try Sandbox()
        try box.write("pass.txt", "a passphrase\n")
        let made = try box.quire(["init", "Journal.quire", "--passphrase-file", "pass.txt", "--recovery-key-file", "rk.txt"])
        #expect(made.status == 0, "\(made)")
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: box.path("Journal.quire"))))
        // The first frame is the keyring; its passphrase slot's memLimit, set to 2^64 − 1.
        let structure = try VaultScanner.scan(path: box.path("Journal.quire"))
        let k = try #require(structure.frames.first { $0.header.kind == .keyring }?.plaintextBody)
        let ring = try KeyringRecord(body: k, epoch: 1, location: nil)
        guard case .map(var pub) = try CBORDecoder.decode(ring.publicBytes), case .array(let slots)? = pub[text: "slots"] else {
            Issue.record("no slots")
            return
        }
        pub[text: "slots"] = .array(slots.map { slot -> CBOR in
            guard case .map(var m) = slot, case .text("passphrase")? = m[text: "kind"] else { return slot }
            m[text: "memLimit"] = .unsigned(UInt64.max)
            return .map(m)
        })
        let body = CBOREncoder.encode(.map(CBORMap(text: [("public", .bytes(CBOREncoder.encode(.map(pub)))), ("sealed", .bytes(ring.sealed))])))
        let header = FrameHeader(kind: .keyring, flags: 0, epoch: 1, bodyLength: UInt32(body.count + 16))
        let frame = header.encoded() + body + BLAKE2b.hash(body, byteCount: 16)
        let commit = FrameHeader(kind: .commit, flags: 0, epoch: 1, bodyLength: 16).encoded() + [UInt8](repeating: 7, count: 16)
        bytes += frame + frame + commit
        try Data(bytes).write(to: URL(fileURLWithPath: box.path("Journal.quire")))
        let info = try box.quire(["info", "Journal.quire"])
        #expect(info.status == 0, "\(info)")
        #expect(info.stdout.contains("passphrase:   Argon2id"), "\(info)")
        let json = try box.quire(["info", "Journal.quire", "--json"])
        #expect(json.status == 0, "\(json)")
    }

    @Test func anOutOfRangeOffsetIsRefusedOnImportAndCannotCrashAnExport() throws {
        let box = try Sandbox()
        try box.makeVault()
        _ = try box.add("an entry", ["--date", "2026-01-01"])
        _ = try box.add("a fine entry", ["--date", "2026-01-02"])
        #expect(try box.quire(["export", "Journal.quire", "--format", "md", "-o", "md"]).status == 0)
        let file = try #require(FileManager.default.enumerator(atPath: box.path("md"))?.compactMap { $0 as? String }.first { $0.hasSuffix("an-entry.md") })
        let text = try String(contentsOfFile: box.path("md/" + file), encoding: .utf8)
        try text.replacingOccurrences(of: "utcOffset: 0\n", with: "utcOffset: -9223372036854775808\n").replacingOccurrences(of: "an entry", with: "hostile")
            .write(toFile: box.path("md/" + file), atomically: true, encoding: .utf8)
        #expect(try box.quire(["init", "Other.quire", "--recovery-key-file", "other-recovery.txt"]).status == 0)
        _ = try box.add("a normal entry", vault: "Other.quire")
        let imported = try box.quire(["import", "markdown", "md", "Other.quire"])
        #expect(imported.status == 0, "\(imported)")
        #expect(imported.stdout.contains("entries: 1 added"), "\(imported)")
        #expect(imported.stdout.contains("utcOffset -9223372036854775808 is not an offset from UTC"), "\(imported)")
        // A holder of an epoch key writes such an entry directly: every reader
        // reads the offset as absent (records.md §3.3), so no export traps.
        let code = try String(contentsOfFile: box.path("other-recovery.txt"), encoding: .utf8).trimmingCharacters(in: .newlines)
        let vault = try Vault.open(at: box.path("Other.quire"), credential: .recoveryKey(try RecoveryKey(code: code)))
        try vault.add(EntryBody(created: 1_767_225_600_000, timeZone: "Europe/London", utcOffsetSeconds: Int64.min, text: "written directly"))
        for format in ["md", "epub", "pdf", "html", "json"] {
            let r = try box.quire(["export", "Other.quire", "--format", format, "-o", "out-\(format)"])
            #expect(r.status == 0, "\(format): \(r)")
        }
    }
}
