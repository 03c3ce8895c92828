// quire-example-app: the data layer of a Day One–style diary app, written
// on `import Quire` alone, in Swift 6 language mode with strict concurrency
// (issue 13, need 8). It stands in for the app: a timeline paged newest
// first, an entry written with a photo, search, a second process (another
// device's sync) appending to the vault, a conflict shown and resolved, and
// observation with change sets. Every step checks what it got; any
// mismatch prints `MISMATCH` and the exit status is 1. `make test` and
// `make check` run it (`make example`), in a temporary folder, with a
// temporary QUIRE_HOME, and without the network.
//
//   quire-example-app                      run the whole example
//   quire-example-app append VAULT KEYFILE TEXT      (the second process)
//   quire-example-app edit VAULT KEYFILE ENTRY TEXT  (the second process)

import Foundation
import Quire
import Synchronization

// MARK: - This device's key store

/// Where the app keeps this device's key, its memory of each vault and its
/// index caches (`DeviceKeyStore`). An iOS app keeps the seed and the
/// memories as Keychain items; this one keeps them in memory, as the
/// Keychain keeps bytes under a name.
final class AppKeyStore: DeviceKeyStore {
    private let items = Mutex<[String: [UInt8]]>([:])
    private let identity = Mutex<(name: String, created: Date)>(("", Date(timeIntervalSince1970: 0)))

    /// The app's caches folder (on iOS: `Library/Caches`, not backed up).
    let indexCacheFolder: String?

    init(indexCacheFolder: String) { self.indexCacheFolder = indexCacheFolder }

    func load() throws(QuireError) -> DeviceIdentity? {
        guard let seed = items.withLock({ $0["seed"] }) else { return nil }
        let (name, created) = identity.withLock { $0 }
        do throws(QuireError) {
            var copy = seed
            let secret = try SecureBytes(consuming: &copy)  // wipes the copy
            return try DeviceIdentity(seed: secret, name: name, created: created)
        } catch {
            throw QuireError(category: .damaged, code: "device_key_damaged", message: "the stored device key is damaged: \(error.message)")
        }
    }

    func create(_ new: DeviceIdentity) throws(QuireError) {
        let seed = try new.secretSeed().copyBytes()
        let stored = items.withLock { items -> Bool in
            guard items["seed"] == nil else { return false }
            items["seed"] = seed
            return true
        }
        guard stored else {
            throw QuireError(category: .programmerError, code: "device_key_exists", message: "a device key is in the keychain already")
        }
        identity.withLock { $0 = (new.name, new.created) }
    }

    func memory(of vaultID: VaultID, path: String) throws(QuireError) -> VaultMemory? {
        items.withLock { $0["memory " + path] }.flatMap(VaultMemory.init(decoding:)).flatMap { $0.vaultID == vaultID ? $0 : nil }
    }

    func remember(_ memory: VaultMemory) throws(QuireError) {
        items.withLock { $0["memory " + memory.path] = memory.encoded() }
    }

    /// The locations of the memories kept.
    var memoryKeys: [String] {
        items.withLock { $0.keys.filter { $0.hasPrefix("memory ") }.map { String($0.dropFirst(7)) }.sorted() }
    }
}

// MARK: - Checks

/// The checks made and the mismatches found (main actor only).
@MainActor enum Checks {
    static var count = 0
    static var mismatches: [String] = []

    /// Records whether `actual` equals `expected`.
    static func expect<T: Equatable>(_ actual: T, _ expected: T, _ what: String) {
        count += 1
        if actual != expected { mismatches.append("\(what): got \(actual), expected \(expected)") }
    }

    /// Records whether `condition` holds.
    static func expect(_ condition: Bool, _ what: String) {
        count += 1
        if !condition { mismatches.append(what) }
    }
}

/// Waits up to `seconds` for `condition`, checking every 10 ms.
@MainActor func eventually(_ seconds: Double = 10, _ condition: () async -> Bool) async -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if await condition() { return true }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return await condition()
}

// MARK: - The app's model

/// Everything the vault told the app, as the app's observation loop
/// received it (`vault.events()`).
actor EventLog {
    private(set) var events: [VaultEvent] = []

    func add(_ event: VaultEvent) { events.append(event) }

    /// The change sets of `origin`.
    func changes(_ origin: VaultEvent.Origin) -> [VaultChangeSet] {
        events.compactMap { if case .changed(let c, let o) = $0, o == origin { c } else { nil } }
    }

    /// The conflict copies reported.
    var copies: [String] {
        events.flatMap { (event) -> [String] in
            if case .conflictCopiesAppeared(let paths) = event { return paths }
            return []
        }
    }
}

/// The timeline screen's model: rows newest first, loaded a page at a time
/// (on the main actor, as a SwiftUI view model would be; the vault's work
/// runs on the vault's own executor, so the main actor never blocks).
@MainActor final class Timeline {
    let vault: Vault
    private(set) var rows: [EntrySnapshot] = []
    private var next: EntryCursor?
    private(set) var finished = false

    init(vault: Vault) { self.vault = vault }

    /// Loads the next page of `pageSize` entries.
    func loadMore(pageSize: Int = 10) async throws(QuireError) {
        guard !finished else { return }
        let page = try await vault.entries(matching: EntryQuery(order: .newestFirst, limit: pageSize), after: next)
        rows += page.entries
        next = page.next
        finished = page.next == nil
    }
}

// MARK: - The second process

/// Another device's sync, played by a child process: opens the vault with
/// the recovery key in `keyFile` and appends or edits one entry.
func secondProcess(_ arguments: [String]) async -> Int32 {
    do {
        let code = try String(contentsOfFile: arguments[3], encoding: .utf8)
        let key = try RecoveryKey(code: code.trimmingCharacters(in: .whitespacesAndNewlines))
        let vault = try await Vault.open(at: arguments[2], credential: .recoveryKey(key))
        switch arguments[1] {
        case "append":
            let revision = try await vault.commit { tx in
                try tx.add(
                    EntryBody(
                        created: instant(1_767_225_600_000), timeZone: TimeZone(identifier: "Europe/London"), text: arguments[4],
                        tags: ["phone"]))
            }
            print(revision.entryID)
        case "edit":
            guard let id = EntryID(hex: arguments[4]), let current = try await vault.entry(id) else { return 2 }
            var edited = current.body
            edited.text = arguments[5]
            let body = edited
            let base = [current.revision.revisionID] + current.conflictingHeads
            _ = try await vault.commit { tx in try tx.edit(id, body: body, replacing: base) }
        default:
            return 2
        }
        return 0
    } catch {
        FileHandle.standardError.write(Data("quire-example-app: second process: \(error)\n".utf8))
        return 1
    }
}

/// Runs this executable again as the second process; returns its output.
func runSecondProcess(_ arguments: [String]) throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0]).standardizedFileURL
    process.arguments = arguments
    let pipe = Pipe()
    process.standardOutput = pipe
    try process.run()
    let output = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else { throw ExampleFailure(what: "the second process exited with \(process.terminationStatus)") }
    return String(decoding: output, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
}

struct ExampleFailure: Error, CustomStringConvertible {
    let what: String
    var description: String { what }
}

// MARK: - The example

/// A stand-in JPEG: its magic, then 4 KiB of bytes.
let photo: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0] + (0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }

/// One day, in milliseconds.
let day: Int64 = 86_400_000
/// 1 January 2025 00:00 UTC, in milliseconds.
let start: Int64 = 1_735_689_600_000

/// The instant `milliseconds` after 1970-01-01 00:00 UTC.
func instant(_ milliseconds: Int64) -> Date { Date(timeIntervalSince1970: Double(milliseconds) / 1000) }
/// The zones the entries are written in.
let london = TimeZone(identifier: "Europe/London")
let utc = TimeZone(identifier: "UTC")

@MainActor func runExample() async throws {
    let started = Date()
    let work = NSTemporaryDirectory() + "quire-example-app-\(getpid())"
    try FileManager.default.createDirectory(atPath: work + "/home", withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: work) }
    // Never the user's key store: the app keeps this device's key in a
    // store of its own (AppKeyStore), and QUIRE_HOME points at the
    // example's folder besides.
    setenv("QUIRE_HOME", work + "/home", 1)
    let path = work + "/Journal.quire"

    // 1. First launch: this device's key, then the journal, created
    //    through the store (off the main actor): the handle remembers the
    //    vault (rollback detection) and keeps an index cache.
    let store = AppKeyStore(indexCacheFolder: work + "/Caches")
    let (thisPhone, _) = try store.loadOrCreate(name: "This phone")
    let recovery = try RecoveryKey()
    let keyFile = work + "/recovery.txt"
    try recovery.code().write(toFile: keyFile, atomically: true, encoding: .utf8)
    let vault = try await Vault.create(at: path, setup: VaultSetup(name: "Diary", recoveryKey: recovery), store: store)
    Checks.expect(try await vault.keyState().devices.map(\.name), ["This phone"], "this device is the first member")

    // 2. Observe: every change, with its origin, into the app's log.
    let log = EventLog()
    let observation = Task { for await event in vault.events(coalescing: .milliseconds(20)) { await log.add(event) } }
    try await Task.sleep(for: .milliseconds(50))

    // 3. Write with a photo: the photo and the entry in one commit. The
    //    photo is the file a picker handed over, streamed in from its URL
    //    (a URL is Sendable: the commit's closure may capture it).
    let picked = URL(fileURLWithPath: work + "/picked.jpg")
    try Data(photo).write(to: picked)
    let withPhoto = try await vault.commit { tx in
        let stored = try tx.storeAttachment(contentsOf: picked, mediaType: "image/jpeg")
        let body = EntryBody(
            created: instant(start + 100 * day), timeZone: london, text: "Sunset over the river, photo attached.", tags: ["walk"],
            attachments: [AttachmentReference(stored, mediaType: "image/jpeg", fileName: "sunset.jpg")])
        return try tx.add(body)
    }
    let shown = try await vault.entry(withPhoto.entryID)
    Checks.expect(shown?.body.attachments.count, 1, "the photo entry has one attachment")
    let blob = shown?.body.attachments.first?.blob
    // Shown without holding it whole: chunk by chunk into an image
    // decoder, or decrypted to a file for AVPlayer or QuickLook.
    var photoBytes: [UInt8] = []
    if let blob { for try await chunk in vault.attachmentStream(blob) { photoBytes += chunk } }
    Checks.expect(photoBytes, photo, "the photo reads back byte for byte, as a stream")
    let shownFile = URL(fileURLWithPath: work + "/shown.jpg")
    if let blob { try await vault.writeAttachment(blob, to: shownFile) }
    Checks.expect(try? [UInt8](Data(contentsOf: shownFile)), photo, "the photo decrypts to a file for a viewer")
    try? FileManager.default.removeItem(at: shownFile)  // plaintext: the app's to delete once shown
    var photos = EntryQuery(limit: 10)
    photos.hasPhotos = true
    Checks.expect(try await vault.entries(matching: photos).entries.map(\.id), [withPhoto.entryID], "has-photos filter")

    // 4. Thirty more entries in one commit (an import, say).
    let texts = (0..<30).map { i in i % 3 == 0 ? "Walk by the river, day \(i)." : i == 1 ? "Прогулка у реки." : "Quiet day \(i) at home." }
    let written = try await vault.commit { tx in
        try (0..<30).map { i in
            let tags = i == 3 ? ["river", "River", "Walk"] : i % 3 == 0 ? ["River"] : []
            return try tx.add(EntryBody(created: instant(start + Int64(i) * day), timeZone: utc, text: texts[i], tags: tags)).entryID
        }
    }

    // 5. The timeline, newest first, ten at a time.
    let timeline = Timeline(vault: vault)
    var pages = 0
    while !timeline.finished {
        try await timeline.loadMore()
        pages += 1
    }
    let expectedOrder = [withPhoto.entryID] + written.reversed()
    Checks.expect(timeline.rows.map(\.id), expectedOrder, "the timeline holds every entry once, newest first")
    Checks.expect(pages, 4, "31 entries in pages of 10")

    // 6. Search (word prefixes, any script).
    let river = try await vault.search("river", matching: EntryQuery(order: .oldestFirst, limit: 50)).entries.map(\.id)
    Checks.expect(river, stride(from: 0, to: 30, by: 3).map { written[$0] } + [withPhoto.entryID], "search 'river'")
    Checks.expect(try await vault.search("рек").entries.map(\.id), [written[1]], "search 'рек' (Russian, a prefix)")

    // 7. Observation: this handle's own writes were reported, exactly.
    let allMine = Set([withPhoto.entryID] + written)
    Checks.expect(
        await eventually { Set(await log.changes(.thisHandle).flatMap { $0.ids(.added) }) == allMine }, "own writes observed as added")

    // 8. Another device syncs: a second process appends to the same file.
    let phoneID = try runSecondProcess(["append", path, keyFile, "Written on the phone."])
    Checks.expect(
        await eventually { await log.changes(.otherWriter).flatMap { $0.ids(.added) }.map(\.description).contains(phoneID) },
        "the second process's entry observed as added by another writer")
    Checks.expect(try await vault.entries(matching: EntryQuery(limit: 1)).entries.first?.body.text, "Written on the phone.", "newest entry")

    // The sidebar: live entries per tag and per journal, tags folded as
    // the tags filter compares them (one entry tagged river and River
    // counts once), without paging the vault.
    Checks.expect(try await vault.tagCounts(), ["river": 10, "walk": 2, "phone": 1], "the sidebar's tag counts")
    Checks.expect(try await vault.journalCounts(), ["": 32], "the sidebar's journal counts: all in the main journal")

    // 9. A conflict: the phone edits day 0 in its own copy while this
    //    device edits it here; the sync tool then leaves the phone's copy
    //    beside the vault as a conflicted copy.
    let target = written[0]
    let phoneCopy = work + "/phone.quire"
    try FileManager.default.copyItem(atPath: path, toPath: phoneCopy)
    _ = try runSecondProcess(["edit", phoneCopy, keyFile, target.description, "Walk by the river (phone's version)."])
    guard let mine = try await vault.entry(target) else { throw ExampleFailure(what: "entry \(target) is missing") }
    var local = mine.body
    local.text = "Walk by the river (laptop's version)."
    let laptopBody = local
    _ = try await vault.commit { tx in try tx.edit(target, body: laptopBody, replacing: [mine.revision.revisionID]) }
    let conflicted = work + "/Journal.sync-conflict-20261202-101530-PHONE01.quire"
    try FileManager.default.moveItem(atPath: phoneCopy, toPath: conflicted)
    Checks.expect(await eventually { await log.copies.contains(conflicted) }, "the conflicted copy observed")
    let fold = try await vault.foldConflictCopies()
    Checks.expect(fold.copies.count, 1, "one copy folded")
    Checks.expect(FileManager.default.fileExists(atPath: conflicted), false, "the folded copy is removed")
    guard let conflict = try await vault.entry(target) else { throw ExampleFailure(what: "entry \(target) is missing after the fold") }
    Checks.expect(conflict.conflictingHeads.count, 1, "the entry shows a conflict of two versions")
    Checks.expect(try await vault.tagCounts()["river"], 10, "an entry in conflict counted once in the sidebar")
    // The fold is this handle's write: its change set comes as this
    // handle's, with the phone's version as a conflict that appeared.
    Checks.expect(
        await eventually { await log.changes(.thisHandle).flatMap(\.conflictsAppeared).contains(target) },
        "the conflict observed as appeared, from this handle's fold")
    Checks.expect(
        await log.changes(.otherWriter).flatMap(\.conflictsAppeared).contains(target), false,
        "the fold's conflict not observed again as another writer's")

    // 10. Resolve: keep the laptop's text and the phone's words, replacing both heads.
    var resolved = conflict.body
    resolved.text = "Walk by the river (both versions, merged by hand)."
    let heads = [conflict.revision.revisionID] + conflict.conflictingHeads
    let resolvedBody = resolved
    _ = try await vault.commit { tx in try tx.edit(target, body: resolvedBody, replacing: heads) }
    let after = try await vault.entry(target)
    Checks.expect(after?.conflictingHeads.count, 0, "the conflict is resolved")
    Checks.expect(after?.body.text, resolved.text, "the resolved text")
    Checks.expect(
        await eventually { await log.changes(.thisHandle).flatMap(\.conflictsResolved).contains(target) }, "the resolution observed")

    // 11. Cancellation: a commit cancelled midway writes nothing.
    let before = try await vault.entries(matching: EntryQuery(limit: 1000)).entries.count
    let cancelled = Task { () async throws -> Int in
        try await vault.commit { tx in
            for i in 0..<100 {
                try tx.add(EntryBody(created: instant(start + Int64(i)), timeZone: utc, text: "never committed"))
                if i == 9 { withUnsafeCurrentTask { $0?.cancel() } }
            }
            return 100
        }
    }
    var cancelError: QuireError?
    do { _ = try await cancelled.value } catch { cancelError = error as? QuireError }
    Checks.expect(cancelError?.category, .cancelled, "a cancelled commit throws a QuireError of category .cancelled")
    Checks.expect(cancelError?.code, "cancelled", "whose code is cancelled")
    Checks.expect(try await vault.entries(matching: EntryQuery(limit: 1000)).entries.count, before, "and writes nothing")
    Checks.expect(try await vault.verify().issues.count, 0, "the vault verifies")

    // 12. A second device joins, then is removed (a lost tablet).
    // The tablet makes its key in a key store of its own.
    let tabletStore = AppKeyStore(indexCacheFolder: work + "/TabletCaches")
    let (tablet, _) = try tabletStore.loadOrCreate(name: "Tablet")
    let joined = try await vault.enrollDevice(code: tablet.code, name: "Tablet")
    Checks.expect(joined.publicKey, tablet.publicKey, "the tablet enrolled by its device code")
    Checks.expect(try await vault.keyState().devices.map(\.name).sorted(), ["Tablet", "This phone"], "two devices")
    _ = try await vault.removeDevice(publicKey: tablet.publicKey, keepingEnrolled: [])
    Checks.expect(try await vault.keyState().devices.map(\.name), ["This phone"], "the tablet removed")

    // 13. The next launch opens through the store, from the index cache.
    let cold = try await Vault.open(at: path, store: store)
    Checks.expect(cold.keyWarnings.count, 0, "no rollback suspected on the next launch")
    Checks.expect(
        try await cold.entries(matching: EntryQuery(limit: 10)).entries.map(\.id),
        try await vault.entries(matching: EntryQuery(limit: 10)).entries.map(\.id), "the first page after a cold open")
    Checks.expect(try await cold.tagCounts(), try await vault.tagCounts(), "the sidebar's tag counts after a cold open, from the cache")
    let caches = (try? FileManager.default.contentsOfDirectory(atPath: work + "/Caches")) ?? []
    Checks.expect(caches.count, 1, "one index cache file for the vault")
    Checks.expect(store.memoryKeys, ["vault:\(vault.vaultID)"], "device memory kept by vault id")
    Checks.expect(thisPhone.publicKey, try store.load()?.publicKey, "the same device key")

    observation.cancel()
    await observation.value
    let milliseconds = Int(Date().timeIntervalSince(started) * 1000)
    if Checks.mismatches.isEmpty {
        print("quire-example-app: \(Checks.count) checks passed in \(milliseconds) ms")
    } else {
        for m in Checks.mismatches { print("MISMATCH: \(m)") }
        print("quire-example-app: \(Checks.mismatches.count) of \(Checks.count) checks failed")
    }
}

@main struct ExampleApp {
    static func main() async {
        let arguments = CommandLine.arguments
        if arguments.count > 1 { exit(await secondProcess(arguments)) }
        do {
            try await runExample()
        } catch {
            print("MISMATCH: the example stopped: \(error)")
            exit(1)
        }
        exit(Checks.mismatches.isEmpty ? 0 : 1)
    }
}
