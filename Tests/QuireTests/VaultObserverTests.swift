import Foundation
@_spi(Format) import Quire
import QuireSystem
import Testing

/// Watching a vault (issue 13, need 1): another handle writes, the
/// observer and `vault.changes()` deliver the change set; cancelling ends
/// the watch and closes its descriptor (counted among the watches of the
/// test's own folder: other suites watch theirs meanwhile). Serialized:
/// the timings of one test are not shared with another's.
@Suite(.serialized) struct VaultObserverTests {
    /// The inotify descriptors of this process that watch `folder`
    /// (Linux, from `/proc/self/fdinfo`), or nil. Only the test's own
    /// folder is counted: tests of other suites, run in parallel, open and
    /// close watches of their own folders at any time.
    static func watchDescriptors(on folder: String) -> Int? {
        #if os(Linux)
        var s = stat()
        guard stat(folder, &s) == 0, let names = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") else { return nil }
        let inode = " ino:" + String(UInt64(s.st_ino), radix: 16) + " "
        return names.filter { name in
            guard (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + name)) == "anon_inode:inotify",
                let info = try? String(contentsOfFile: "/proc/self/fdinfo/" + name, encoding: .utf8)
            else { return false }
            return info.split(separator: "\n").contains { $0.hasPrefix("inotify ") && $0.contains(inode) }
        }.count
        #else
        return nil
        #endif
    }

    /// Waits up to `seconds` for `condition`.
    static func eventually(_ seconds: Double = 10, _ condition: () -> Bool) async -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if condition() { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return condition()
    }

    /// Collects what an observer delivers.
    final class Inbox: @unchecked Sendable {  // guarded by `lock`
        private let lock = NSLock()
        private var items: [VaultObserver.Delivery] = []
        func add(_ d: VaultObserver.Delivery) { lock.withLock { items.append(d) } }
        var all: [VaultObserver.Delivery] { lock.withLock { items } }
        var changes: [VaultChangeSet] { all.compactMap { try? $0.get() } }
    }

    @Test func theAsyncSequenceYieldsAnotherHandlesWriteAndStopsWhenCancelled() async throws {
        let dir = TemporaryDirectory()
        let (writer, recovery) = try makeVault(dir)
        let reader = try await Vault.open(at: dir.file("v.quire"), credential: .recoveryKey(recovery), options: fast)
        let before = Self.watchDescriptors(on: dir.path)
        let received = Inbox()
        let task = Task {
            // A wide window: under load the ten adds below take more than 20 ms each, and each
            // would then arrive alone, each in its own change set.
            for try await changes in reader.changes(coalescing: .milliseconds(250)) { received.add(.success(changes)) }
        }
        // Let the watch start, then write from the other handle.
        #expect(await Self.eventually { Self.watchDescriptors(on: dir.path).map { $0 == (before ?? 0) + 1 } ?? true })
        try await Task.sleep(for: .milliseconds(50))
        let added = try writer.add(EntryBody(created: 1_800_000_000_000, text: "from another handle"))
        #expect(await Self.eventually { !received.changes.isEmpty })
        #expect(received.changes.first == VaultChangeSet(entries: [
            EntryChange(id: added.entryID, before: nil, after: EntryChange.State(winner: added.revisionID, isDeleted: false)),
        ]))
        // A burst of writes is coalesced into fewer change sets, none lost.
        var burst: [EntryID] = []
        for i in 0..<10 { burst.append(try writer.add(EntryBody(created: 1_800_000_000_001 + Int64(i), text: "burst \(i)")).entryID) }
        #expect(await Self.eventually { received.changes.flatMap(\.entries).count == 11 })
        #expect(Set(received.changes.dropFirst().flatMap { $0.ids(.added) }) == Set(burst))
        #expect(received.changes.count < 11)
        // Cancelling the task ends the iteration and closes the descriptor.
        task.cancel()
        _ = try await task.value
        if let before { #expect(await Self.eventually { Self.watchDescriptors(on: dir.path) == before }) }
        let count = received.changes.count
        try writer.add(EntryBody(created: 1_900_000_000_000, text: "not seen"))
        try await Task.sleep(for: .milliseconds(200))
        #expect(received.changes.count == count)
    }

    @Test func anObserverSeesARenameReplaceAndStopsOnCancel() async throws {
        let dir = TemporaryDirectory()
        let (_, recovery) = try makeVault(dir)
        let reader = try await Vault.open(at: dir.file("v.quire"), credential: .recoveryKey(recovery), options: fast)
        let inbox = Inbox()
        let observer = try VaultObserver(vault: reader, coalescing: .milliseconds(20)) { inbox.add($0) }
        #expect(observer.isWatching)
        try await Task.sleep(for: .milliseconds(50))
        // A sync tool writes the new copy beside the vault and renames it over.
        try FileManager.default.copyItem(atPath: dir.file("v.quire"), toPath: dir.file(".sync-tmp"))
        let elsewhere = try await Vault.open(at: dir.file(".sync-tmp"), credential: .recoveryKey(recovery), options: fast)
        let added = try elsewhere.add(EntryBody(created: 1_800_000_000_000, text: "synced"))
        #expect(rename(dir.file(".sync-tmp"), dir.file("v.quire")) == 0)
        #expect(await Self.eventually { !inbox.changes.isEmpty })
        #expect(inbox.changes.first?.ids(.added) == [added.entryID])
        #expect(inbox.changes.first?.fileReplaced == true)
        #expect(inbox.all.count == inbox.changes.count)
        observer.cancel()
        #expect(!observer.isWatching)
        let count = inbox.all.count
        let writer = try await Vault.open(at: dir.file("v.quire"), credential: .recoveryKey(recovery), options: fast)
        try writer.add(EntryBody(created: 1, text: "after cancelling"))
        try await Task.sleep(for: .milliseconds(200))
        #expect(inbox.all.count == count)
    }

    /// The vault's own writes are not delivered (the handle made them).
    @Test func ownWritesAreNotDelivered() async throws {
        let dir = TemporaryDirectory()
        let (vault, _) = try makeVault(dir)
        let inbox = Inbox()
        let observer = try VaultObserver(vault: vault, coalescing: .milliseconds(10)) { inbox.add($0) }
        defer { observer.cancel() }
        for i in 0..<3 { try vault.add(EntryBody(created: Int64(i), text: "own \(i)")) }
        try await Task.sleep(for: .milliseconds(200))
        #expect(inbox.all.isEmpty)
    }
    /// Collects events.
    final class EventInbox: @unchecked Sendable {  // guarded by `lock`
        private let lock = NSLock()
        private var items: [VaultEvent] = []
        func add(_ e: VaultEvent) { lock.withLock { items.append(e) } }
        var all: [VaultEvent] { lock.withLock { items } }
        func changes(_ origin: VaultEvent.Origin) -> [VaultChangeSet] {
            all.compactMap { if case .changed(let c, let o) = $0, o == origin { c } else { nil } }
        }
        var failures: [QuireError] { all.compactMap { if case .refreshFailed(let e) = $0 { e } else { nil } } }
        var copies: [[String]] { all.compactMap { if case .conflictCopiesAppeared(let p) = $0 { p } else { nil } } }
    }

    /// Review round 2, (4): `events()` reports this handle's own writes,
    /// keeps watching after a refresh fails (the file gone while a sync tool
    /// replaces it), and says when a conflict copy appears beside the vault.
    @Test func eventsReportOwnWritesSurviveFailuresAndSeeConflictCopies() async throws {
        let dir = TemporaryDirectory()
        let (vault, recovery) = try makeVault(dir)
        let writer = try await Vault.open(at: dir.file("v.quire"), credential: .recoveryKey(recovery), options: fast)
        let inbox = EventInbox()
        let task = Task { for await event in vault.events(coalescing: .milliseconds(20)) { inbox.add(event) } }
        try await Task.sleep(for: .milliseconds(100))
        // This handle's own write, with its exact change set.
        let own = try await vault.commit { tx in try tx.add(EntryBody(created: 1, text: "own")) }
        #expect(await Self.eventually { !inbox.changes(.thisHandle).isEmpty })
        #expect(inbox.changes(.thisHandle) == [VaultChangeSet(entries: [
            EntryChange(id: own.entryID, before: nil, after: EntryChange.State(winner: own.revisionID, isDeleted: false)),
        ])])
        // The file is gone for a moment: the refresh fails, the watch goes on.
        #expect(rename(dir.file("v.quire"), dir.file("v.hold")) == 0)
        #expect(await Self.eventually { !inbox.failures.isEmpty })
        #expect(rename(dir.file("v.hold"), dir.file("v.quire")) == 0)
        let theirs = try writer.add(EntryBody(created: 2, text: "from another handle"))
        #expect(await Self.eventually { inbox.changes(.otherWriter).flatMap { $0.ids(.added) }.contains(theirs.entryID) })
        #expect(!inbox.changes(.otherWriter).flatMap { $0.ids(.added) }.contains(own.entryID))
        // A sync tool's conflict copy appears beside the vault.
        let copy = dir.file("v.sync-conflict-20261202-040000-ABCDEF1.quire")
        try FileManager.default.copyItem(atPath: dir.file("v.quire"), toPath: copy)
        #expect(await Self.eventually { !inbox.copies.isEmpty })
        #expect(inbox.copies.first == [copy])
        task.cancel()
        await task.value
    }

    /// iOS trial, session 40: every write of a handle — a device enrolled,
    /// a device removed, conflict copies folded, a commit — reaches that
    /// handle's `events()` stream as `.thisHandle`, with its own change
    /// set, in the order the writes ran, and never again as `.otherWriter`
    /// when the watch reads the same bytes; another handle's stream gets
    /// each as `.otherWriter`.
    @Test func everyWriteOfTheHandleIsReportedAsItsOwn() async throws {
        let dir = TemporaryDirectory()
        let (vault, recovery) = try makeVault(dir)
        let other = try await Vault.open(at: dir.file("v.quire"), credential: .recoveryKey(recovery), options: fast)
        let inbox = EventInbox()
        let theirs = EventInbox()
        let task = Task { for await event in vault.events(coalescing: .milliseconds(20)) { inbox.add(event) } }
        let otherTask = Task { for await event in other.events(coalescing: .milliseconds(20)) { theirs.add(event) } }
        try await Task.sleep(for: .milliseconds(100))
        let tablet = KeyScenarioTests.device("Tablet")
        let member = try await vault.enrollDevice(code: tablet.code, name: "iPad")
        _ = try await vault.removeDevice(named: "iPad")
        // A sync tool's conflict copy holding an entry the vault lacks.
        let copy = dir.file("v.sync-conflict-20261204-040000-ABCDEF1.quire")
        try FileManager.default.copyItem(atPath: dir.file("v.quire"), toPath: copy)
        let copied = try await Vault.open(at: copy, credential: .recoveryKey(recovery), options: fast)
        let fromCopy = try copied.add(EntryBody(created: 1, text: "from the copy"))
        try await vault.foldConflictCopies()
        let own = try await vault.commit { tx in try tx.add(EntryBody(created: 2, text: "own")) }
        #expect(await Self.eventually { inbox.changes(.thisHandle).count >= 4 })
        // Long enough for the watch to read the file again (20 ms quiet).
        try await Task.sleep(for: .milliseconds(400))
        let mine = inbox.changes(.thisHandle)
        #expect(mine.count == 4)
        #expect(inbox.changes(.otherWriter) == [])
        if mine.count == 4 {
            #expect(mine[0].keys?.membersAdded == [member])
            #expect(mine[0].keys?.membersRemoved == [])
            #expect(mine[0].entries.isEmpty)
            #expect(mine[1].keys?.membersRemoved.map(\.name) == ["iPad"])
            #expect(mine[1].keys?.membersAdded == [])
            #expect(mine[1].entries.isEmpty)
            #expect(mine[2].keys == nil)
            #expect(mine[2].entries.map(\.id) == [fromCopy.entryID])
            #expect(mine[2].ids(.added) == [fromCopy.entryID])
            #expect(mine[3] == VaultChangeSet(entries: [
                EntryChange(id: own.entryID, before: nil, after: EntryChange.State(winner: own.revisionID, isDeleted: false)),
            ]))
        }
        // The other handle reads them all as another writer's.
        #expect(await Self.eventually { theirs.changes(.otherWriter).flatMap { $0.ids(.added) }.contains(own.entryID) })
        let read = theirs.changes(.otherWriter)
        #expect(read.flatMap { $0.ids(.added) }.contains(fromCopy.entryID))
        #expect(read.contains { $0.keys != nil })
        #expect(theirs.changes(.thisHandle) == [])
        task.cancel()
        otherTask.cancel()
        await task.value
        await otherTask.value
    }

    /// iOS review 27, §3.3: several `events()` streams on one handle (a
    /// timeline, a sidebar) each get every event — another writer's, this
    /// handle's own, and what a direct `refresh()` reads — exactly once;
    /// they share one watch, which stops with the last stream.
    @Test func severalEventStreamsOnOneHandleEachGetEveryChange() async throws {
        let dir = TemporaryDirectory()
        let (vault, recovery) = try makeVault(dir)
        let writer = try await Vault.open(at: dir.file("v.quire"), credential: .recoveryKey(recovery), options: fast)
        let before = Self.watchDescriptors(on: dir.path)
        let timeline = EventInbox()
        let sidebar = EventInbox()
        // A wide window: the watch's own refresh comes long after a direct one.
        let first = Task { for await e in vault.events(coalescing: .seconds(3)) { timeline.add(e) } }
        try await Task.sleep(for: .milliseconds(150))
        let second = Task { for await e in vault.events(coalescing: .milliseconds(20)) { sidebar.add(e) } }
        try await Task.sleep(for: .milliseconds(150))
        if let before { #expect(Self.watchDescriptors(on: dir.path) == before + 1) }
        func added(_ inbox: EventInbox, _ origin: VaultEvent.Origin) -> [EntryID] {
            inbox.changes(origin).flatMap { $0.ids(.added) }
        }
        // Another writer, read by the shared watch: both streams.
        let theirs = try writer.add(EntryBody(created: 2, text: "from another handle"))
        for inbox in [timeline, sidebar] { #expect(await Self.eventually { added(inbox, .otherWriter) == [theirs.entryID] }) }
        // This handle's own write: both streams.
        let own = try await vault.commit { tx in try tx.add(EntryBody(created: 1, text: "own")) }
        for inbox in [timeline, sidebar] { #expect(await Self.eventually { added(inbox, .thisHandle) == [own.entryID] }) }
        // A pull-to-refresh before the watch's quiet period ends: the caller
        // gets the change set, and so does every stream, once.
        let pulled = try writer.add(EntryBody(created: 3, text: "pulled"))
        let changes = try await vault.refresh()
        #expect(changes.ids(.added) == [pulled.entryID])
        for inbox in [timeline, sidebar] {
            #expect(await Self.eventually { added(inbox, .otherWriter) == [theirs.entryID, pulled.entryID] })
        }
        try await Task.sleep(for: .milliseconds(3_500))
        for inbox in [timeline, sidebar] { #expect(added(inbox, .otherWriter) == [theirs.entryID, pulled.entryID]) }
        // The first stream ends; the second goes on with the same watch.
        first.cancel()
        await first.value
        let later = try writer.add(EntryBody(created: 4, text: "later"))
        #expect(await Self.eventually { added(sidebar, .otherWriter).last == later.entryID })
        #expect(!added(timeline, .otherWriter).contains(later.entryID))
        if let before { #expect(Self.watchDescriptors(on: dir.path) == before + 1) }
        // The last stream ends: the watch stops and its descriptor closes.
        second.cancel()
        await second.value
        if let before { #expect(await Self.eventually { Self.watchDescriptors(on: dir.path) == before }) }
    }

    /// App review round 3, §2.1: the index cache stays in use on an app's
    /// ordinary paths — observing with `events()`, reading an entry by id,
    /// adding while observed, editing and deleting what the timeline shows,
    /// another device's edit — and none of them reads every record (no
    /// full index load, under the file lock or elsewhere). Each answer
    /// equals a full open's.
    @Test func ordinaryAppPathsKeepTheIndexCache() async throws {
        let f = try IndexCacheOpenTests.fixture("app paths")
        _ = try IndexCacheOpenTests.answers(try f.cached())  // writes the cache
        let vault = try f.cached()
        let page = try await vault.entries(matching: EntryQuery(limit: 5))
        #expect(vault.answersFromIndexCache)
        let inbox = EventInbox()
        let task = Task { for await event in vault.events(coalescing: .milliseconds(20)) { inbox.add(event) } }
        try await Task.sleep(for: .milliseconds(150))
        // Reading by id: a shown entry, and an id the vault does not hold.
        let shown = page.entries[2]
        let read = try #require(try await vault.entry(shown.id))
        let fullRead = try await f.full().entry(shown.id)
        #expect(read.revision.revisionID == shown.revision.revisionID && read.body.text == fullRead?.body.text)
        let missing = try await vault.entry(EntryID(unchecked: Array(repeating: 0xEE, count: 16)))
        #expect(missing == nil)
        // Adding while observed, then editing and deleting shown entries.
        let added = try vault.add(EntryBody(created: IndexCacheOpenTests.t0 + 9_000_000_000, text: "Added while observed"))
        var body = shown.body
        body.text = "Edited from the timeline"
        let edited = try vault.edit(shown.id, body: body, replacing: [shown.revision.revisionID])
        try vault.delete(page.entries[3].id)
        // A photo: stored (deduplicated against the manifests alone) and
        // named by a new entry in the same commit.
        let photo = Array("not really a jpeg".utf8)
        var withPhoto: EntryRevision?
        for _ in 0..<2 {
            withPhoto = try await vault.commit { tx in
                let stored = try tx.storeAttachment(from: MemoryByteSource(photo), mediaType: "image/jpeg")
                var b = EntryBody(created: IndexCacheOpenTests.t0 + 9_100_000_000, text: "With a photo")
                b.attachments = [AttachmentReference(id: [7], blob: stored.blob, mediaType: "image/jpeg", fileName: "p.jpg")]
                return try tx.add(b)
            }
        }
        #expect(await Self.eventually { inbox.changes(.thisHandle).flatMap(\.entries).count >= 5 })
        #expect(inbox.changes(.thisHandle).flatMap(\.entries).contains { $0.id == withPhoto?.entryID })
        let own = inbox.changes(.thisHandle).flatMap(\.entries)
        #expect(own.first { $0.id == added.entryID }?.before == nil)
        #expect(own.first { $0.id == shown.id }?.before == EntryChange.State(winner: shown.revision.revisionID, isDeleted: false))
        #expect(own.first { $0.id == shown.id }?.after == EntryChange.State(winner: edited.revisionID, isDeleted: false))
        #expect(own.first { $0.id == page.entries[3].id }?.after?.isDeleted == true)
        // Another device edits what it saw: delivered, from the cached view.
        let other = try await Vault.open(at: f.path, credential: .device(f.device.keyPair), options: fast)
        let target = page.entries[4]
        var theirs = target.body
        theirs.text = "Edited on the phone"
        let remote = try other.edit(target.id, body: theirs, replacing: [target.revision.revisionID])
        #expect(await Self.eventually { inbox.changes(.otherWriter).flatMap(\.entries).contains { $0.id == target.id } })
        #expect(inbox.changes(.otherWriter).flatMap(\.entries).first { $0.id == target.id }?.after?.winner == remote.revisionID)
        task.cancel()
        await task.value
        #expect(vault.answersFromIndexCache)
        #expect(vault.fullIndexLoads == 0)
        #expect(try IndexCacheOpenTests.answers(vault) == (try IndexCacheOpenTests.answers(try f.full())))
        #expect(vault.fullIndexLoads == 0)
    }
}
