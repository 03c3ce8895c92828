import Dispatch
@_spi(Crypto) import QuireCrypto
@_spi(Testing) @_spi(Format) import QuireFormat
import QuireSystem
import Synchronization
import Testing

/// The concurrent reader (``VaultFile/forEachDecodedRecord(kinds:in:_:)``)
/// against the sequential one: the same records, in the same order, with
/// the same problems, each revision decoded and hashed as the sequential
/// reader's payload decodes and hashes.
@Suite struct ConcurrentReadTests {
    /// More records than a batch, so that the threads take several.
    static let count = 2 * 4096 + 300

    /// Valid revisions (compressed and not), payloads that do not decode
    /// (every 97th), profiles (every 500th); two commits, the ciphertext of
    /// two records damaged (one a revision that decodes, one that does not
    /// decode, in different batches).
    static func vault() throws -> (RawKeyVault, VaultFile, damaged: [Int]) {
        let v = RawKeyVault(label: "concurrent")
        let random = SeededRandom(label: "concurrent entries")
        func append(_ tx: PendingCommit, _ i: Int) throws(FormatError) {
            if i % 500 == 499 {
                try tx.appendSealed(kind: .profile, payload: Array("profile \(i)".utf8))
            } else if i % 97 == 96 {
                try tx.appendSealed(kind: .entryRevision, payload: [0xff, UInt8(i & 0xff)], compress: false)
            } else {
                var body = EntryBody()
                body.text = "Entry \(i): " + String(repeating: "words ", count: i % 40)
                let r = EntryRevision(
                    entryID: EntryID(using: random), revisionID: RevisionID(using: random),
                    clock: HybridLogicalClock(rawValue: UInt64(i + 1)), body: body)
                _ = try tx.appendSealed(kind: .entryRevision, payload: r.encoded(), compress: i % 2 == 0)
            }
        }
        _ = try VaultFile.create(
            at: v.path, vaultID: v.vaultID, keys: v.keys, random: SeededRandom(label: "create concurrent"), options: fast,
            attestWith: v.member
        ) { (tx: PendingCommit) throws(FormatError) in
            for i in 0..<5000 { try append(tx, i) }
        }
        let writer = try v.open(writable: true)
        try writer.commit(random: SeededRandom(label: "concurrent commit"), options: fast, attestWith: v.member) {
            (tx: PendingCommit) throws(FormatError) in
            for i in 5000..<count { try append(tx, i) }
        }
        let damaged = [10, 96 + 97 * 50]
        for f in damaged {
            let at = writer.structure.frames[f].bodyOffset + 24 + 1
            try overwrite(v.path, at: at, with: [0x5a ^ (try fileBytes(v.path)[Int(at)])])
        }
        return (v, try v.open(), damaged)
    }

    /// What the sequential reader gives, each revision decoded after.
    static func sequential(_ vault: VaultFile, _ kinds: Set<RecordKind>, in range: Range<Int>? = nil) -> (
        [(frame: Int, payload: [UInt8])], [FormatError]
    ) {
        var out: [(frame: Int, payload: [UInt8])] = []
        let issues = vault.forEachRecord(kinds: kinds, in: range) { record in
            out.append((record.frame.location.index, record.payload))
            return true
        }
        return (out, issues)
    }

    /// Checks the concurrent reader's records against the sequential one's.
    static func expectSame(_ vault: VaultFile, _ kinds: Set<RecordKind>, in range: Range<Int>? = nil) throws -> Int {
        let (expected, expectedIssues) = sequential(vault, kinds, in: range)
        var seen: [(ReadRecord, Result<DecodedRevision, FormatError>?)] = []
        let issues = vault.forEachDecodedRecord(kinds: kinds, in: range) { record, decoded in
            seen.append((record, decoded))
            return true
        }
        #expect(issues == expectedIssues)
        #expect(seen.map(\.0.frame.location.index) == expected.map(\.frame))
        var decodeFailures = 0
        for ((record, decoded), (_, payload)) in zip(seen, expected) {
            guard record.frame.header.kind == .entryRevision else {
                #expect(decoded == nil)
                #expect(record.payload == payload)
                continue
            }
            #expect(record.payload.isEmpty)
            switch decoded {
            case .success(let d):
                #expect(d.revision == (try EntryRevision(decoding: payload, location: record.frame.location)))
                #expect(d.payloadHash == BLAKE2b.hash(payload, byteCount: 32))
            case .failure(let error):
                decodeFailures += 1
                #expect(throws: error) { try EntryRevision(decoding: payload, location: record.frame.location) }
            case nil:
                Issue.record("a revision was not decoded")
            }
        }
        return decodeFailures
    }

    @Test func sameRecordsOrderAndIssuesAsTheSequentialReader() throws {
        let (_, vault, damaged) = try Self.vault()
        let failures = try Self.expectSame(vault, [.entryRevision, .profile])
        // Every 97th record does not decode, but for the damaged one.
        #expect(failures == Self.count / 97 - 1)
        #expect(Self.sequential(vault, [.entryRevision]).1 == damaged.map { .authenticationFailed(vault.structure.frames[$0].location) })
        // Revisions alone; a range across a batch's end; a range short
        // enough to be read on this thread alone.
        _ = try Self.expectSame(vault, [.entryRevision])
        _ = try Self.expectSame(vault, [.entryRevision, .profile], in: 4000..<5100)
        _ = try Self.expectSame(vault, [.entryRevision, .profile], in: 95..<110)
    }

    @Test func stopsWhenTheBodySaysSo() throws {
        let (_, vault, _) = try Self.vault()
        for stop in [1, 4096, 5000] {
            var calls = 0
            _ = vault.forEachDecodedRecord(kinds: [.entryRevision]) { _, _ in
                calls += 1
                return calls < stop
            }
            #expect(calls == stop)
        }
    }

    /// Called from every thread of the queue its helpers run on, each read
    /// still ends: a reader waits only for chunks under way, never for a
    /// helper to start.
    @Test(.timeLimit(.minutes(1))) func readsWhenEveryQueueThreadIsBusy() throws {
        let (_, vault, _) = try Self.vault()
        let expected = Self.sequential(vault, [.entryRevision]).0.count
        let counts = Mutex<[Int]>([])
        DispatchQueue.concurrentPerform(iterations: 2 * ProcessStats.processorCount) { _ in
            var n = 0
            _ = vault.forEachDecodedRecord(kinds: [.entryRevision]) { _, _ in
                n += 1
                return true
            }
            counts.withLock { $0.append(n) }
        }
        #expect(counts.withLock { $0 } == Array(repeating: expected, count: 2 * ProcessStats.processorCount))
    }
}
