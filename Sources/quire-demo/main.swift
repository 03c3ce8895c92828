// quire-demo: the library underneath the `quire` CLI, step by step (the
// second half of `make demo`, after Scripts/demo.sh drives the CLI): damage
// that stays local, a torn write, a lost phone removed and locked out by a
// rekey. Each step prints one line: what it did and how long it took.

import Foundation
@_spi(Format) @_spi(Crypto) import Quire
@_spi(Crypto) import QuireCrypto
@_spi(Format) import QuireFormat
@_spi(Format) @_spi(Crypto) import QuireKeys
import QuireSystem

let fixtures = CommandLine.arguments.count > 1 ? CommandLine.arguments[1] : "Tests/Fixtures"
guard FileManager.default.fileExists(atPath: fixtures + "/pepys.jsonl") else {
    FileHandle.standardError.write(
        Data(
            "quire-demo: error: no pepys.jsonl in \(fixtures)\nquire-demo: hint: run it from the repository root, or give the fixtures folder: quire-demo Tests/Fixtures\n"
                .utf8))
    exit(1)
}
let work = NSTemporaryDirectory() + "quire-demo-\(getpid())"
try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(atPath: work) }
let path = work + "/Journal.quire"

var stepNumber = 0
@MainActor func step(_ what: () throws -> String) rethrows {
    stepNumber += 1
    let start = ProcessStats.monotonicNanoseconds()
    let line = try what()
    let ms = Double(ProcessStats.monotonicNanoseconds() - start) / 1e6
    print(String(format: "%2d. %@ (%.0f ms)", stepNumber, line, ms))
}

print("Quire library demo: Samuel Pepys's diary (1660–1669) through the Swift API, in \(work)")

// 1. This device's key (in a key store inside the demo folder, never the
// user's own), and a vault sealed to it and to a fresh recovery key.
let laptopStore = FileDeviceKeyStore(directory: work + "/laptop-home")
let recovery = try RecoveryKey()
var vault: Vault!
try step {
    let (laptop, _) = try laptopStore.loadOrCreate(name: "Laptop", now: ProcessStats.wallClockMilliseconds(), using: SystemRandom())
    _ = try Vault.create(at: path, setup: VaultSetup(name: "The Diary of Samuel Pepys", recoveryKey: recovery, device: laptop))
    vault = try Vault.open(at: path, store: laptopStore)
    return
        "made this device's key (\(laptop.name), fingerprint \(laptop.fingerprint)) and Journal.quire; recovery key (shown once): \(recovery.code())"
}

// 2. Every diary entry, from the bundled JSON lines, in commits of 500.
struct Line: Decodable {
    let date: String
    let text: String
}
let lines = try String(contentsOfFile: fixtures + "/pepys.jsonl", encoding: .utf8).split(separator: "\n")
let london = TimeZone(identifier: "Europe/London")!
var calendar = Calendar(identifier: .gregorian)
calendar.timeZone = london
try step {
    var count = 0
    var bytes = 0
    var batch: [EntryBody] = []
    @MainActor func flush() throws {
        let bodies = batch
        let author = vault.author
        try vault.commit { (tx: VaultTransaction) throws(QuireError) in
            for body in bodies {
                try tx.append(
                    EntryRevision(
                        entryID: EntryID(using: SystemRandom()), revisionID: RevisionID(using: SystemRandom()),
                        clock: HybridLogicalClock(milliseconds: UInt64(ProcessStats.wallClockMilliseconds()), counter: 0), device: author,
                        body: body))
            }
        }
        batch = []
    }
    for line in lines {
        let entry = try JSONDecoder().decode(Line.self, from: Data(line.utf8))
        let parts = entry.date.split(separator: "-").compactMap { Int($0) }
        let date = calendar.date(from: DateComponents(year: parts[0], month: parts[1], day: parts[2], hour: 22))!
        batch.append(
            EntryBody(
                created: Int64(date.timeIntervalSince1970 * 1000), timeZone: "Europe/London", isAllDay: true, text: entry.text,
                tags: ["pepys"], journal: "Diary"))
        count += 1
        bytes += entry.text.utf8.count
        if batch.count == 500 { try flush() }
    }
    try flush()
    return "appended \(count) entries (\(bytes / 1_000_000) MB of text) in \((count + 499) / 500) commits"
}

// 3. One more entry, with a photo streamed in as an attachment.
try step {
    var stored: StoredBlob?
    let source = try FileByteSource(path: fixtures + "/photo.jpg")
    let author = vault.author
    try vault.commit { (tx: VaultTransaction) throws(QuireError) in
        stored = try tx.storeAttachment(from: source, mediaType: "image/jpeg")
        let ref = AttachmentReference(id: Array("photo-1".utf8), blob: stored!.blob, mediaType: "image/jpeg", fileName: "photo.jpg")
        try tx.append(
            EntryRevision(
                entryID: EntryID(using: SystemRandom()), revisionID: RevisionID(using: SystemRandom()),
                clock: HybridLogicalClock(milliseconds: UInt64(ProcessStats.wallClockMilliseconds()), counter: 1), device: author,
                body: EntryBody(
                    created: ProcessStats.wallClockMilliseconds(), timeZone: "Europe/London",
                    text: "Read Pepys all evening. ![](quire-attachment://70686f746f2d31)", tags: ["today"], attachments: [ref])))
    }
    let size = (try? FileSystem.size(path)) ?? 0
    return "added today's entry with a \(stored!.byteCount)-byte photo; the vault is \(size / 1024) KiB"
}

// 4. Reopen with the recovery key and read everything back.
try step {
    let reopened = try Vault.open(at: path, credential: .recoveryKey(recovery), writable: false)
    let entries = try reopened.entries()
    let f = DateFormatter()
    f.dateFormat = "yyyy-MM-dd"
    f.timeZone = london
    let first = f.string(from: Date(timeIntervalSince1970: Double(entries.first!.body.createdMilliseconds) / 1000))
    let last = entries.last!
    let photo = try reopened.openAttachment(last.body.attachments[0].blob).readAll()
    return "reopened with the recovery key: \(entries.count) entries from \(first) to today; the photo reads back (\(photo.count) bytes)"
}

// 5. Verify every byte.
try step {
    let report = try Vault.open(at: path, credential: .recoveryKey(recovery), writable: false).verify()
    return "verify: \(report.intactRecordCount) records intact in \(report.commitCount) commits, \(report.issues.count) issues"
}

// 6. What the file shows to someone without a key.
try step {
    let s = try VaultScanner.scan(path: path)
    var kinds: [String: Int] = [:]
    for f in s.frames { kinds[f.header.kind.description, default: 0] += 1 }
    // "entry revision" → "entry revisions" for counts other than one.
    let list = kinds.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)\($0.value == 1 ? "" : "s")" }.joined(separator: ", ")
    return
        "without a key the file shows: vault id \(s.header.vaultID.description.prefix(8))…, \(list) (each keyring is stored twice); no text, dates, names or tags"
}

// 7. Damage: flip one bit in the middle of the file.
try step {
    let damaged = work + "/Damaged.quire"
    var bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
    bytes[bytes.count / 2] ^= 0x10
    try Data(bytes).write(to: URL(fileURLWithPath: damaged))
    let v = try Vault.open(at: damaged, credential: .recoveryKey(recovery), writable: false)
    let report = v.verify()
    let lost = report.issues.filter(\.isDamage).map { "\($0.code) at offset \($0.offset ?? 0)" }.joined(separator: "; ")
    defer { try? FileManager.default.removeItem(atPath: damaged) }  // not a conflicted copy: step 12 must not find it
    return
        "a flipped bit in a copy (Damaged.quire): \(try v.entries().count) of \(lines.count + 1) entries still read; verify names the damage: \(lost)"
}

// 8. A crash in the middle of an append.
try step {
    let torn = work + "/Torn.quire"
    try FileManager.default.copyItem(atPath: path, toPath: torn)
    let handle = FileHandle(forWritingAtPath: torn)!
    handle.seekToEndOfFile()
    handle.write(Data([0x10, 0x03, 0x01, 0x00, 0xc8, 0x01, 0x00, 0x00, 0x01, 0x02]))
    handle.closeFile()
    let v = try Vault.open(at: torn, credential: .recoveryKey(recovery))
    let before = try v.entries().count
    try v.add(EntryBody(created: ProcessStats.wallClockMilliseconds(), text: "Written after the crash."))
    let after = try Vault.open(at: torn, credential: .recoveryKey(recovery), writable: false)
    defer { try? FileManager.default.removeItem(atPath: torn) }
    return
        "a torn write at the end of a copy (Torn.quire): \(before) entries survive; the next append cuts the tail off; now \(try after.entries().count), verify: \(after.verify().issues.count) issues"
}

// 9. A second device: it shows its code, the laptop enrolls it after the
// user compares the fingerprint on both screens.
let phoneStore = FileDeviceKeyStore(directory: work + "/phone-home")
try step {
    let (phone, _) = try phoneStore.loadOrCreate(name: "Phone", now: ProcessStats.wallClockMilliseconds(), using: SystemRandom())
    let member = try vault.enrollDevice(code: phone.code, name: "Phone")
    let onPhone = try Vault.open(at: path, store: phoneStore)
    try onPhone.add(EntryBody(created: ProcessStats.wallClockMilliseconds(), text: "Written on the phone."))
    try vault.reload()
    return
        "enrolled \"\(member.name)\" in Journal.quire from its device code (fingerprint \(DeviceCode.fingerprint(of: member.publicKey)) on both screens); it wrote an entry; the laptop reads \(try vault.entries().count) entries"
}

// 10. The phone is lost: remove it. New records are sealed under a new
// epoch it never gets; what it could read before, it still can.
try step {
    try vault.removeDevice(named: "Phone")
    try vault.add(EntryBody(created: ProcessStats.wallClockMilliseconds(), text: "Written after the phone was lost."))
    let phone = try phoneStore.load()!
    let phoneView = try Vault.open(at: path, credential: .device(phone.keyPair), writable: false)
    return
        "removed the phone (epoch \(try vault.keyState().epoch)) and wrote one more entry: the laptop reads \(try vault.entries().count) entries, the lost phone still \(try phoneView.entries().count), none written after its removal"
}

// 11. Who can decrypt what, derived from the file.
var statementText = ""
try step {
    statementText = try vault.privacyStatement().text
    return "keys status: the privacy statement, derived from the file's keyrings, follows"
}
print(statementText.split(separator: "\n", omittingEmptySubsequences: true).map { "    " + $0 }.joined(separator: "\n"))

// 12. Two writes at once: the sync tool keeps both files. Fold the copy back.
try step {
    let name = "Journal.sync-conflict-20261129-101530-LAPTOP1.quire"
    let conflict = work + "/" + name
    try FileManager.default.copyItem(atPath: path, toPath: conflict)
    let laptop = try laptopStore.load()!
    try Vault.open(at: conflict, credential: .device(laptop.keyPair)).add(
        EntryBody(created: ProcessStats.wallClockMilliseconds(), text: "Written in the other copy."))
    try vault.add(EntryBody(created: ProcessStats.wallClockMilliseconds(), text: "Written here at the same time."))
    let report = try vault.foldConflictCopies()
    let copy = report.copies[0]
    return
        "a sync tool kept a conflicted copy (\(name), \(copy.copy.tool.map(\.rawValue) ?? "unknown tool")); folding it added \(copy.merge?.framesAdded ?? 0) record\(copy.merge?.framesAdded == 1 ? "" : "s") and kept the first \(copy.merge?.commonPrefixByteCount ?? 0) bytes as they were; the copy was \(copy.deleted ? "deleted" : "kept"); the vault reads \(try vault.entries().count) entries"
}

// 13. Compact with a rekey: the lost phone now opens nothing.
try step {
    let report = try vault.compact(CompactionOptions(rekey: true))
    let phone = try phoneStore.load()!
    let phoneReads = try Vault.open(at: path, credential: .device(phone.keyPair), writable: false).entries().count
    return
        "compacted with a rekey (epoch \(report.rekeyedEpoch ?? 0)): \(report.bytesBefore / 1024) KiB → \(report.bytesAfter / 1024) KiB, \(report.revisionsAfter) entries sealed again; the laptop reads \(try vault.entries().count), the lost phone \(phoneReads)"
}
print("demo finished")
