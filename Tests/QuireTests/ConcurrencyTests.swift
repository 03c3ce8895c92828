import Foundation
import Synchronization
import Testing
@_spi(Format) @_spi(Crypto) import Quire
@_spi(Crypto) import QuireCrypto
@_spi(Format) import QuireFormat
@_spi(Format) import QuireKeys

/// Several handles on one file, in one process. Each handle has its own file
/// descriptor, so the writers serialize through `flock` exactly as separate
/// processes would. (Child processes are not used: the test bundle has no
/// helper executable to run.)
@Suite struct ConcurrencyTests {
    /// State the writer and reader threads share.
    final class Shared: Sendable {
        let failures = Mutex<[String]>([])
        let reader = Mutex<(opens: Int, problems: [String])>((0, []))
        let done = Atomic<Int>(0)
    }

    /// Every entry revision in file order, decoded from a fresh open.
    static func textsInFileOrder(_ vault: Vault) -> [String] {
        var out: [String] = []
        let issues = vault.file.forEachRecord(kinds: [.entryRevision]) { record in
            out.append((try? EntryRevision(decoding: record.payload).body.text) ?? "<undecodable>")
            return true
        }
        #expect(issues == [])
        return out
    }

    @Test func twoHandlesAppendingAlternately() throws {
        let dir = TemporaryDirectory()
        let (creator, recovery) = try makeVault(dir, seed: "alternate")
        _ = creator
        let path = dir.file("v.quire")
        let a = try dmgOpen(path, recovery)
        let b = try dmgOpen(path, recovery)
        var written: [String] = []
        for i in 0..<12 {
            let handle = i % 2 == 0 ? a : b
            let text = "\(i % 2 == 0 ? "A" : "B") \(i): " + ["утро", "晚上", "🌙"][i % 3]
            try handle.add(dmgBody(text, created: 1_700_000_100_000 + Int64(i)))
            written.append(text)
            // The writer followed the other handle's commits before appending.
            #expect(handle.file.structure.groups.count == 2 + i, "after write \(i)")
            #expect(handle.file.commits.allVerified, "after write \(i)")
        }
        let reopened = try dmgOpen(path, recovery)
        #expect(try dmgTexts(reopened) == written)
        #expect(Self.textsInFileOrder(reopened) == written)
        #expect(dmgIssues(reopened) == [])
        #expect(reopened.file.structure.groups.count == 13)
        #expect(reopened.file.structure.groups.dropFirst().allSatisfy { $0.members.count == 1 })
        // Both handles still append after each other's commits.
        try a.add(dmgBody("A last", created: 1_700_000_200_000))
        try b.add(dmgBody("B last", created: 1_700_000_200_001))
        let final = try dmgOpen(path, recovery)
        #expect(try dmgTexts(final) == written + ["A last", "B last"])
        #expect(dmgIssues(final) == [])
    }

    /// A handle that has read the vault and then follows another handle's
    /// commits (while appending its own) should list the other handle's
    /// entries too: `commit` rescans the other writer's frames into the
    /// handle's structure, so its view of the file includes them. It should
    /// also be able to edit an entry the other handle created, and its edit
    /// of an entry the other handle changed should name that change as its
    /// parent (no spurious conflict).
    @Test func handleSeesOtherHandlesEntriesAfterItsOwnCommit() throws {
        let dir = TemporaryDirectory()
        let (_, recovery) = try makeVault(dir, seed: "stale-index")
        let path = dir.file("v.quire")
        let a = try dmgOpen(path, recovery)
        let b = try dmgOpen(path, recovery)
        let shared = try a.add(dmgBody("from A", created: 1_700_000_100_000))
        #expect(try dmgTexts(a) == ["from A"])  // builds a's entry index
        let fromB = try b.add(dmgBody("from B", created: 1_700_000_100_001))
        try b.edit(shared.entryID, body: dmgBody("from A, edited by B", created: 1_700_000_100_000))
        try a.add(dmgBody("from A again", created: 1_700_000_100_002))
        // a's structure now has all five commits...
        #expect(a.file.structure.groups.count == 5)
        // ...so its entries should include b's.
        let seenByA = try dmgTexts(a)
        #expect(seenByA == ["from A, edited by B", "from B", "from A again"])
        let entryB = try a.entry(fromB.entryID)
        #expect(entryB?.body.text == "from B")
        do {
            try a.edit(fromB.entryID, body: dmgBody("from B, edited by A", created: 1_700_000_100_001))
        } catch {
            Issue.record("a cannot edit b's entry: \(error)")
        }
        try a.edit(shared.entryID, body: dmgBody("from A, edited by B, then by A", created: 1_700_000_100_000))
        let fresh = try dmgOpen(path, recovery)
        let sharedNow = try #require(try fresh.entry(shared.entryID))
        #expect(sharedNow.body.text == "from A, edited by B, then by A")
        #expect(sharedNow.conflictingHeads == [], "a's edit did not name b's revision as a parent")
        #expect(dmgIssues(fresh) == [])
    }

    @Test(arguments: [2, 4])
    func threadsAppendingConcurrentlyThroughSeparateHandles(writers: Int) throws {
        let dir = TemporaryDirectory()
        let (_, recovery) = try makeVault(dir, seed: "threads-\(writers)")
        let path = dir.file("v.quire")
        let perWriter = 20
        let handles = try (0..<writers).map { _ in try dmgOpen(path, recovery) }
        let shared = Shared()

        // A reader opening and verifying while the writers append: it may see
        // a torn tail (a commit in progress) but never damage.
        let reader = Thread {
            while shared.done.load(ordering: .acquiring) < writers {
                do {
                    let v = try dmgOpen(path, recovery, writable: false)
                    let issues = v.verify().issues.filter { $0.code != "torn_tail" }
                    let texts = try dmgTexts(v)
                    shared.reader.withLock {
                        $0.opens += 1
                        if !issues.isEmpty { $0.problems.append("issues \(issues.map(\.code))") }
                        if texts.count != v.file.structure.groups.count - 1 { $0.problems.append("\(texts.count) entries in \(v.file.structure.groups.count) commits") }
                    }
                } catch {
                    shared.reader.withLock { $0.problems.append("\(error)") }
                }
            }
        }
        reader.start()

        DispatchQueue.concurrentPerform(iterations: writers) { w in
            defer { shared.done.add(1, ordering: .releasing) }
            for i in 0..<perWriter {
                do {
                    try handles[w].add(dmgBody("writer \(w) entry \(i) — запись 记录 ✍️", created: 1_700_000_000_000 + Int64(w * 1000 + i)))
                } catch {
                    shared.failures.withLock { $0.append("writer \(w) entry \(i): \(error)") }
                }
            }
        }
        while !reader.isFinished { Thread.sleep(forTimeInterval: 0.01) }

        #expect(shared.failures.withLock { $0 } == [])
        let r = shared.reader.withLock { $0 }
        #expect(r.problems == [], "reader saw problems in \(r.opens) opens")

        let vault = try dmgOpen(path, recovery)
        let expected = (0..<writers).flatMap { w in (0..<perWriter).map { "writer \(w) entry \($0) — запись 记录 ✍️" } }
        #expect(try dmgTexts(vault) == expected)
        #expect(dmgIssues(vault) == [])
        let s = vault.file.structure
        #expect(s.groups.count == 1 + writers * perWriter)
        // Nothing interleaved: every commit after the genesis one holds exactly
        // one entry, and each writer's entries appear in its own order.
        #expect(s.groups.dropFirst().allSatisfy { $0.members.count == 1 && s.frames[$0.members.lowerBound].header.kind == .entryRevision })
        let order = Self.textsInFileOrder(vault)
        #expect(order.count == writers * perWriter)
        for w in 0..<writers {
            #expect(order.filter { $0.hasPrefix("writer \(w) ") } == (0..<perWriter).map { "writer \(w) entry \($0) — запись 记录 ✍️" })
        }
        #expect(s.fileSize == s.committedEnd)
    }
}

/// One handle shared between threads (issue 13): the state a reload
/// replaces (the file, the keys, the key warnings) is read under the
/// handle's lock, so readers racing a reload see one file or the other,
/// whole. Run under `swift test --sanitize=thread` to check for races.
@Suite struct SharedHandleTests {
    @Test func readsRacingReloadsSeeWholeState() throws {
        let dir = TemporaryDirectory()
        let (vault, _) = try makeVault(dir)
        let id = vault.vaultID
        for i in 0..<5 { try vault.add(EntryBody(created: Int64(i), text: "entry \(i)")) }
        let failures = Mutex(0)
        DispatchQueue.concurrentPerform(iterations: 4) { worker in
            for round in 0..<25 {
                do {
                    if worker == 0 {
                        try vault.reload()
                        try vault.add(EntryBody(created: Int64(100 + round), text: "more"))
                    } else {
                        if vault.vaultID != id || !vault.keyWarnings.isEmpty { failures.withLock { $0 += 1 } }
                        if try vault.keyState().devices.count != 0 || vault.entries().count < 5 { failures.withLock { $0 += 1 } }
                    }
                } catch {
                    failures.withLock { $0 += 1 }
                }
            }
        }
        #expect(failures.withLock { $0 } == 0)
        #expect(try vault.entries().count == 30)
        #expect(vault.writeOptions.synchronous == false)
    }
}
