import Foundation
import Testing
@_spi(Format) @_spi(Crypto) import Quire
@_spi(Crypto) import QuireCrypto
@_spi(Format) import QuireFormat
@_spi(Format) import QuireKeys
import QuireSystem

/// Regressions for what a new user broke (2026-11-29): each test holds the
/// value the fix must give.
@Suite struct RobustnessTests {
    func body(_ text: String, _ n: Int = 0) -> EntryBody {
        EntryBody(created: 1_700_000_000_000 + Int64(n), timeZone: "UTC", text: text)
    }

    func texts(_ v: Vault) throws -> [String] { try v.entries().map(\.body.text) }

    /// One `Vault` shared by four threads: nothing lost, nothing damaged.
    @Test func oneHandleSharedBetweenThreads() throws {
        let dir = TemporaryDirectory()
        let (vault, recovery) = try makeVault(dir)
        DispatchQueue.concurrentPerform(iterations: 4) { t in
            for i in 0..<25 { _ = try? vault.add(body("t\(t)-\(i)", t * 100 + i)) }
        }
        let reopened = try Vault.open(at: dir.file("v.quire"), credential: .recoveryKey(recovery), options: fast)
        #expect(try reopened.entries().count == 100)
        #expect(reopened.verify().issues.isEmpty)
        #expect(try vault.entries().count == 100)
    }

    /// A sync tool renames a new copy over the path while a handle is open:
    /// the next add goes into the file now at the path, not the old inode.
    @Test func fileReplacedUnderAnOpenHandle() throws {
        let dir = TemporaryDirectory()
        let (vault, recovery) = try makeVault(dir)
        try vault.add(body("before", 1))
        let path = dir.file("v.quire")
        try FileManager.default.copyItem(atPath: path, toPath: dir.file("copy"))
        try FileSystem.rename(dir.file("copy"), to: path)
        try vault.add(body("after the replacement", 2))
        let reopened = try Vault.open(at: path, credential: .recoveryKey(recovery), options: fast)
        #expect(try texts(reopened) == ["before", "after the replacement"])
        #expect(reopened.verify().issues.isEmpty)
    }

    /// Opening a FIFO fails at once instead of waiting for a writer.
    @Test func fifoIsRefusedWithoutHanging() throws {
        let dir = TemporaryDirectory()
        let fifo = dir.file("pipe.quire")
        #expect(mkfifo(fifo, 0o600) == 0)
        #expect(throws: QuireError.self) {
            try Vault.open(at: fifo, credential: .recoveryKey(testRecoveryKey()))
        }
        do {
            _ = try VaultFile(path: fifo)
        } catch {
            #expect(error.code == "io")
            #expect(error.description.contains("not a regular file"))
        }
    }

    /// A source file that shrinks while it is stored is refused, and the
    /// vault is as it was.
    @Test func attachmentSourceChangingWhileReadIsRefused() throws {
        let dir = TemporaryDirectory()
        let (vault, _) = try makeVault(dir)
        let source = dir.file("big.bin")
        _ = FileManager.default.createFile(atPath: source, contents: Data(SeededRandom(label: "big").bytes(300_000)))
        let reader = try FileByteSource(path: source)
        let handle = FileHandle(forWritingAtPath: source)!
        handle.truncateFile(atOffset: 100_000)
        handle.closeFile()
        let before = try Data(contentsOf: URL(fileURLWithPath: dir.file("v.quire")))
        #expect(throws: FormatError.sourceChanged(path: source)) {
            do {
                try vault.commit { tx in _ = try tx.storeAttachment(from: reader, mediaType: "application/octet-stream") }
            } catch let error as QuireError {
                if case .format(let f) = error.detail { throw f }
                throw error
            }
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: dir.file("v.quire"))) == before)
    }

    /// Two bits flipped in the last commit's header: the commit is rebuilt
    /// and its MAC verified (commit recovery), so its records stay committed
    /// and the next add keeps them.
    @Test func damagedLastCommitHeaderIsRecovered() throws {
        let dir = TemporaryDirectory()
        let (vault, recovery) = try makeVault(dir)
        try vault.commit { tx in for i in 0..<5 { try tx.append(EntryRevision(entryID: EntryID(using: SystemRandom()), revisionID: RevisionID(using: SystemRandom()), clock: HybridLogicalClock(rawValue: 1), body: body("batch \(i)", i))) } }
        let path = dir.file("v.quire")
        var bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        let commit = bytes.count - FrameHeader.byteCount - CommitChain.bodyByteCount
        bytes[commit + 4] ^= 0x03
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let damaged = try Vault.open(at: path, credential: .recoveryKey(recovery), options: fast)
        #expect(try damaged.entries().count == 5)
        #expect(damaged.verify().issues.map(\.code) == ["frame_repaired"])
        #expect(damaged.verify().issues.first?.offset == UInt64(commit))
        try damaged.add(body("after", 9))
        let reopened = try Vault.open(at: path, credential: .recoveryKey(recovery), options: fast)
        #expect(try reopened.entries().count == 6)
    }

    /// A length field rewritten (check recomputed) to run past the end of
    /// the file, in the middle: the committed frames after it are found
    /// again; only that record is lost, and the next add keeps the rest.
    @Test func overrunningLengthInTheMiddleIsDamageNotTail() throws {
        let dir = TemporaryDirectory()
        let (vault, recovery) = try makeVault(dir)
        for i in 0..<6 { try vault.add(body("entry \(i)", i)) }
        let path = dir.file("v.quire")
        let frames = vault.file.structure.frames.filter { $0.header.kind == .entryRevision }
        let hit = frames[2]
        var bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        let at = Int(hit.location.offset)
        let length = UInt32(bytes.count)  // plausible, but past the end of the file
        for i in 0..<4 { bytes[at + 4 + i] = UInt8(truncatingIfNeeded: length >> (8 * UInt32(i))) }
        let check = BLAKE2b.hash(Array(bytes[at..<at + 8]), byteCount: 16)
        for i in 0..<4 { bytes[at + 8 + i] = check[i] }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let damaged = try Vault.open(at: path, credential: .recoveryKey(recovery), options: fast)
        #expect(try texts(damaged) == ["entry 0", "entry 1", "entry 3", "entry 4", "entry 5"])
        // Nothing shows what the damaged commit chained from, but the commit
        // before it is attested by a member, so it stays verified
        // (Spec/format.md §9.3).
        #expect(damaged.verify().issues.map(\.code) == ["frame_damaged", "commit_mismatch"])
        try damaged.add(body("after", 9))
        let reopened = try Vault.open(at: path, credential: .recoveryKey(recovery), options: fast)
        #expect(try texts(reopened) == ["entry 0", "entry 1", "entry 3", "entry 4", "entry 5", "after"])
    }

    /// Two damaged headers with an intact frame between them: the intact
    /// one is kept (§10.2).
    @Test func intactFrameBetweenTwoDamagedHeadersIsKept() throws {
        let dir = TemporaryDirectory()
        let (vault, recovery) = try makeVault(dir)
        try vault.commit { tx in
            for i in 0..<8 {
                try tx.append(EntryRevision(entryID: EntryID(using: SystemRandom()), revisionID: RevisionID(using: SystemRandom()), clock: HybridLogicalClock(rawValue: 1), body: body("m-\(i)", i)))
            }
        }
        let path = dir.file("v.quire")
        let frames = vault.file.structure.frames.filter { $0.header.kind == .entryRevision }
        var bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        bytes[Int(frames[3].location.offset) + 1] ^= 0xff
        bytes[Int(frames[5].location.offset) + 1] ^= 0xff
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let damaged = try Vault.open(at: path, credential: .recoveryKey(recovery), options: fast)
        #expect(try texts(damaged) == ["m-0", "m-1", "m-2", "m-4", "m-6", "m-7"])
        #expect(damaged.verify().issues.map(\.code) == ["frame_damaged", "frame_damaged", "commit_mismatch"])
    }

    /// A writer that holds the lock too long makes the next one give up
    /// with `locked`, not wait for ever.
    @Test func lockTimeout() throws {
        let dir = TemporaryDirectory()
        let (_, recovery) = try makeVault(dir)
        let holder = try SystemFile(path: dir.file("v.quire"), mode: .readWrite)
        try holder.lockExclusive()
        defer { holder.unlock() }
        let vault = try Vault.open(at: dir.file("v.quire"), credential: .recoveryKey(recovery), options: WriteOptions(synchronous: false, lockTimeoutSeconds: 0.2))
        #expect(throws: QuireError.format(.locked(path: dir.file("v.quire"), seconds: 0.2))) {
            try vault.add(body("blocked"))
        }
    }

    /// A 16 MiB payload (the record limit) fits a frame even incompressible;
    /// one byte more is refused with the record limit in the message.
    @Test func sixteenMebibytePayloadFits() throws {
        let dir = TemporaryDirectory()
        let (vault, _) = try makeVault(dir)
        let payload = SeededRandom(label: "16 MiB").bytes(Limits.maxRecordByteCount)
        try vault.file.commit(random: SeededRandom(label: "x"), options: fast, attestWith: nil) { (tx: PendingCommit) throws(FormatError) in
            try tx.appendSealed(kind: RecordKind(rawValue: 0xbf), payload: payload, compress: false)
        }
        #expect(throws: FormatError.recordTooLarge(byteCount: Limits.maxRecordByteCount + 1, limit: Limits.maxRecordByteCount)) {
            try vault.file.commit(random: SeededRandom(label: "y"), options: fast, attestWith: nil) { (tx: PendingCommit) throws(FormatError) in
                try tx.appendSealed(kind: RecordKind(rawValue: 0xbf), payload: payload + [0], compress: false)
            }
        }
    }

    /// A commit with nothing in it writes nothing.
    @Test func emptyCommitWritesNothing() throws {
        let dir = TemporaryDirectory()
        let (vault, _) = try makeVault(dir)
        let size = try FileSystem.size(dir.file("v.quire"))
        try vault.commit { _ in }
        #expect(try FileSystem.size(dir.file("v.quire")) == size)
    }

    /// A typed character that looks like a space says which character it is.
    @Test func recoveryCodeNamesTheCodePoint() {
        #expect(throws: QuireError.keys(.recoveryCodeInvalid(reason: "\"\u{00A0}\" (U+00A0) is not a recovery-key character"))) {
            try RecoveryKey(code: "ABCD\u{00A0}EFGH")
        }
    }
}
