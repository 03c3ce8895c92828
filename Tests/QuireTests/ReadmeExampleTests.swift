import Foundation
import Testing
@_spi(Format) import Quire  // alone, as the README says
@_spi(Crypto) import QuireCrypto  // SeededRandom: repeatable test data, not for an app

/// The README's "library in ten lines", run as written (paths made
/// temporary, `QUIRE_HOME` pointed at a temporary folder).
@Suite struct ReadmeExampleTests {
    @Test func libraryInTenLines() async throws {
        let dir = TemporaryDirectory()
        let journal = dir.file("Journal.quire")
        let photoPath = dir.file("photo.jpg")
        let photoBytes = SeededRandom(label: "readme photo").bytes(1000)
        _ = FileManager.default.createFile(atPath: photoPath, contents: Data(photoBytes))
        // No other test reads QUIRE_HOME: only this one uses the standard store.
        setenv("QUIRE_HOME", dir.file("home"), 1)
        defer { unsetenv("QUIRE_HOME") }
        let phone = try DeviceIdentity.generate(name: "Phone", now: 0, using: SeededRandom(label: "readme phone"))
        let phoneCode = phone.code

        let store = try FileDeviceKeyStore.standard()
        let (laptop, _) = try store.loadOrCreate(name: "Laptop")
        let recovery = try RecoveryKey()
        let vault = try await Vault.create(at: journal, setup: VaultSetup(name: "Journal", recoveryKey: recovery), store: store)
        let first = try await vault.commit { tx in try tx.add(EntryBody(created: Date(), timeZone: TimeZone(identifier: "Europe/London"), text: "Up betimes.")) }
        try await vault.commit { tx in
            let photo = try tx.storeAttachment(fromFile: photoPath, mediaType: "image/jpeg")
            try tx.add(EntryBody(created: Date() + 1, text: "A photo", attachments: [AttachmentReference(photo, mediaType: "image/jpeg")]))
        }
        let shown = try DeviceCode.fingerprint(ofCode: phoneCode)
        try await vault.enrollDevice(code: phoneCode, name: "Phone")
        let statement = try await vault.privacyStatement().text
        let again = try await Vault.open(at: journal, credential: .recoveryKey(recovery))
        var texts: [String] = []
        for entry in try await again.entries(matching: EntryQuery(order: .oldestFirst)).entries { texts.append(entry.body.text + (entry.isVerified ? "" : " (unverified)")) }

        #expect(shown == phone.fingerprint)
        #expect(try await again.entries().last?.revision.device == laptop.id)
        #expect(store.keyPath == dir.file("home") + "/device.key")
        #expect(try store.load()?.publicKey == laptop.publicKey)
        #expect(texts == ["Up betimes.", "A photo"])
        #expect(try await again.entry(first.entryID)?.body.timeZone?.identifier == "Europe/London")
        let reference = try #require(try await again.entries().last?.body.attachments.first)
        let blob = reference.blob
        #expect(reference.id.count == 16 && reference.mediaType == "image/jpeg")
        #expect(try again.openAttachment(blob).readAll() == photoBytes)
        #expect(try await again.verify().isIntact)
        #expect(statement.contains("can be decrypted with:\n  - the device \"Laptop\" (this device)\n  - the device \"Phone\"\n  - the recovery key\n\n"))
        #expect(try await Vault.open(at: journal, credential: .device(phone.keyPair)).entries().count == 2)
        // The handle create returned remembered the vault through the store.
        #expect(try store.memory(of: vault.vaultID, path: URL(fileURLWithPath: journal).resolvingSymlinksInPath().path) != nil)
        #expect(vault.keyWarnings.isEmpty)
    }
}

extension VaultObserverTests {
    /// The README's "With Swift concurrency" block, run as written (the
    /// store in a temporary folder rather than QUIRE_HOME, which
    /// `libraryInTenLines` sets). In the observer suite, which is
    /// serialized: its watch would change the descriptor counts the other
    /// observer tests check.
    @Test func libraryWithSwiftConcurrency() async throws {
        let dir = TemporaryDirectory()
        let journal = dir.file("Journal.quire")
        let store = FileDeviceKeyStore(directory: dir.file("home"))
        let (laptop, _) = try store.loadOrCreate(name: "Laptop")
        _ = try await Vault.create(at: journal, setup: VaultSetup(name: "Journal", recoveryKey: RecoveryKey(), device: laptop))
        let photoBytes: [UInt8] = [0xFF, 0xD8, 0xFF] + SeededRandom(label: "readme jpeg").bytes(200_000)
        let picked = URL(fileURLWithPath: dir.file("picked.jpg"))
        try Data(photoBytes).write(to: picked)
        let shown = URL(fileURLWithPath: dir.file("shown.jpg"))
        let seen = Seen()

        let vault = try await Vault.open(at: journal, store: store)
        let watch = Task {
            for await event in vault.events() {
                switch event {
                case .changed(let changes, let origin): seen.add("\(origin) \(changes.ids(.added).count) \(changes.conflictsAppeared.count)")
                case .refreshFailed(let error): seen.add("will retry: \(error)")
                case .conflictCopiesAppeared(let copies): seen.add("sync conflict: \(copies)")
                }
            }
        }
        try await Task.sleep(for: .milliseconds(100))  // (not in the README: lets the watch start before the commit)
        let page = try await vault.entries(matching: EntryQuery(order: .newestFirst, limit: 50))
        let id = try await vault.commit { tx in
            let photo = try tx.storeAttachment(contentsOf: picked, mediaType: "image/jpeg")
            let ref = AttachmentReference(photo, mediaType: "image/jpeg")
            return try tx.add(EntryBody(created: Date(), timeZone: TimeZone(identifier: "Europe/London"), text: "Sunset", attachments: [ref])).entryID
        }
        let ref = try await vault.entry(id)!.body.attachments[0]
        var jpeg: [UInt8] = []
        for try await chunk in vault.attachmentStream(ref.blob) { jpeg += chunk }
        try await vault.writeAttachment(ref.blob, to: shown)
        try await vault.foldConflictCopies()
        let compaction = Task { try await vault.compact() }
        compaction.cancel()

        #expect(page.entries.isEmpty)
        #expect(jpeg == photoBytes)
        #expect(try [UInt8](Data(contentsOf: shown)) == photoBytes)
        let compacted = await compaction.result
        if case .failure(let error) = compacted { #expect(error as? QuireError == .cancelled) }
        #expect(try await vault.verify().issues.isEmpty)
        #expect(try await vault.entry(id)?.body.text == "Sunset")
        let deadline = Date().addingTimeInterval(10)
        while !seen.all.contains("thisHandle 1 0"), Date() < deadline { try await Task.sleep(for: .milliseconds(10)) }
        #expect(seen.all.contains("thisHandle 1 0"))
        watch.cancel()
        await watch.value
    }

    /// The README's "Following other writers" block, run as written, with
    /// a second handle on the file standing for the other process.
    @Test func libraryFollowingOtherWriters() async throws {
        let dir = TemporaryDirectory()
        let journal = dir.file("Journal.quire")
        let store = FileDeviceKeyStore(directory: dir.file("home"))
        let (laptop, _) = try store.loadOrCreate(name: "Laptop")
        let recovery = try RecoveryKey()
        let vault = try await Vault.create(at: journal, setup: VaultSetup(name: "Journal", recoveryKey: recovery, device: laptop))
        let other = try await Vault.open(at: journal, credential: .recoveryKey(recovery))
        let first = try other.add(EntryBody(text: "From the other process"))
        let seen = Seen()

        let changes = try await vault.refresh()
        for change in changes.entries where change.kind == .added { seen.add("new: \(change.id)") }
        if !changes.conflictsAppeared.isEmpty { seen.add("edited on two devices: \(changes.conflictsAppeared)") }
        if changes.keys?.thisCredentialRemoved == true { seen.add("this device was removed from the journal") }

        let watch = Task {
            for await event in vault.events() {
                guard case .changed(let changes, origin: .otherWriter) = event else { continue }
                for change in changes.entries { seen.add("\(change.kind) \(change.id)") }
                for unread in changes.unreadRecords { seen.add("cannot read: \(unread)") }
            }
        }
        try await Task.sleep(for: .milliseconds(100))  // (not in the README: lets the watch start before the write)
        let second = try other.add(EntryBody(text: "And another"))
        let deadline = Date().addingTimeInterval(10)
        while !seen.all.contains("added \(second.entryID)"), Date() < deadline { try await Task.sleep(for: .milliseconds(10)) }
        watch.cancel()
        await watch.value

        #expect(seen.all.first == "new: \(first.entryID)")
        #expect(seen.all.contains("added \(second.entryID)"))
        #expect(!seen.all.contains { $0.hasPrefix("cannot read") || $0.hasPrefix("edited") || $0.hasPrefix("this device") })
    }

    /// What the watch printed.
    final class Seen: @unchecked Sendable {  // guarded by `lock`
        private let lock = NSLock()
        private var lines: [String] = []
        func add(_ line: String) { lock.withLock { lines.append(line) } }
        var all: [String] { lock.withLock { lines } }
    }
}
