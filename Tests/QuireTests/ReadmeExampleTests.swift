import Foundation
import Quire  // alone, as the README says: no @_spi in this file
import Testing

/// The README's library blocks, run as written: each test's lines between
/// its set-up and its `#expect`s are the README's lines, with the paths
/// made temporary and `print` recording what it prints. This file imports
/// `Quire` without `@_spi`, so it compiling proves the README compiles for
/// an app; it asserts through public names only. What an app would not
/// write (seeded bytes) is in ReadmeExampleSupport.swift.
@Suite struct ReadmeExampleTests {
    /// "The library in ten lines", with `QUIRE_HOME` pointed at a temporary
    /// folder.
    @Test func libraryInTenLines() async throws {
        let dir = TemporaryDirectory()
        let journal = dir.file("Journal.quire")
        let photoPath = dir.file("photo.jpg")
        let photoBytes = ReadmeExample.bytes("readme photo", count: 1000)
        _ = FileManager.default.createFile(atPath: photoPath, contents: Data(photoBytes))
        // No other test reads QUIRE_HOME: only this one uses the standard store.
        setenv("QUIRE_HOME", dir.file("home"), 1)
        defer { unsetenv("QUIRE_HOME") }
        let phoneStore = AppKeyStoreTests.KeychainLikeStore()  // the phone's own store
        let phoneCode = try phoneStore.loadOrCreate(name: "Phone").0.code
        let printed = ReadmeExample.Printed()
        func print(_ items: Any...) { printed.add(items) }

        let store = try FileDeviceKeyStore.standard()
        _ = try store.loadOrCreate(name: "Laptop")
        let recovery = try RecoveryKey()
        let vault = try await Vault.create(at: journal, setup: VaultSetup(name: "Journal", recoveryKey: recovery), store: store)
        try await vault.commit { tx in try tx.add(EntryBody(created: Date(), timeZone: TimeZone(identifier: "Europe/London"), text: "Up betimes.")) }
        try await vault.commit { tx in
            let photo = try tx.storeAttachment(contentsOf: URL(fileURLWithPath: photoPath), mediaType: "image/jpeg")
            try tx.add(EntryBody(created: Date() + 1, text: "A photo", attachments: [AttachmentReference(photo, mediaType: "image/jpeg")]))
        }
        print(try DeviceCode.fingerprint(ofCode: phoneCode))
        try await vault.enrollDevice(code: phoneCode, name: "Phone")
        print(try await vault.privacyStatement().text)
        let again = try await Vault.open(at: journal, credential: .recoveryKey(recovery))
        for entry in try await again.entries(matching: EntryQuery(order: .oldestFirst)).entries { print(entry.body.text, entry.isVerified ? "" : "(unverified)") }

        let phone = try #require(try phoneStore.load())
        let laptop = try #require(try store.load())
        #expect(printed.all.count == 4)
        #expect(printed.all.first == phone.fingerprint)
        #expect(printed.all.dropFirst().first?.contains("can be decrypted with:\n  - the device \"Laptop\" (this device)\n  - the device \"Phone\"\n  - the recovery key\n\n") == true)
        #expect(Array(printed.all.dropFirst(2)) == ["Up betimes. ", "A photo "])
        // The standard store is $QUIRE_HOME/device.key, and its device is a member.
        #expect(FileManager.default.fileExists(atPath: dir.file("home") + "/device.key"))
        #expect(laptop.name == "Laptop")
        let members = try await again.keyState().devices
        #expect(members.contains { $0.publicKey == laptop.publicKey && $0.name == "Laptop" })
        #expect(members.contains { $0.publicKey == phone.publicKey && $0.name == "Phone" })
        let rows = try await again.entries(matching: EntryQuery(order: .oldestFirst)).entries
        #expect(rows.map(\.isVerified) == [true, true])
        #expect(rows.first?.body.timeZone?.identifier == "Europe/London")
        #expect(try await again.versions(of: try #require(rows.last).id).map(\.deviceName) == ["Laptop"])  // written on the laptop
        let reference = try #require(rows.last?.body.attachments.first)
        #expect(reference.mediaType == "image/jpeg" && reference.link.hasPrefix("quire-attachment://"))
        #expect(rows.last?.body.attachment(forLink: reference.link) == reference)
        #expect(try await AppAttachmentFileTests.bytes(of: reference.blob, in: again) == photoBytes)
        #expect(try await again.verify().isIntact)
        // The phone, enrolled, opens the vault through its own store.
        #expect(try await Vault.open(at: journal, store: phoneStore).entries(matching: EntryQuery()).entries.count == 2)
        // The handle create returned remembered the vault through the store.
        #expect(try store.memory(of: vault.vaultID, path: URL(fileURLWithPath: journal).resolvingSymlinksInPath().path) != nil)
        #expect(vault.keyWarnings.isEmpty)
    }

    /// The README's error block, run as written: with a wrong passphrase
    /// typed, then the right one (nothing caught).
    @Test func libraryErrors() async throws {
        let dir = TemporaryDirectory()
        let journal = dir.file("Journal.quire")
        var setup = VaultSetup(name: "Journal", recoveryKey: try RecoveryKey())
        setup.passphrase = "correct horse"
        setup = withPassphraseFloor(setup)  // (test support, SPI: the Argon2id floor, to keep the test short)
        let store = AppKeyStoreTests.KeychainLikeStore()
        _ = try store.loadOrCreate(name: "Laptop")
        _ = try await Vault.create(at: journal, setup: setup, store: store)
        let done = ReadmeExample.Printed()
        func askForThePassphraseAgain() { done.add(["ask again"]) }
        func showReadOnly(_ text: String) { done.add(["read-only:", text]) }
        func offerRepair(_ text: String, details: String) { done.add(["repair:", text]) }
        func offerMerge(_ text: String) { done.add(["merge:", text]) }
        func show(_ what: Any) { done.add(["show:", what]) }

        for typed in ["wrong horse", "correct horse"] {
            do {
                let vault = try await Vault.open(at: journal, credential: .passphrase(typed))
                try await vault.commit { tx in try tx.add(EntryBody(created: Date(), text: "Up betimes.")) }
            } catch {  // error is a QuireError
                switch error.category {
                case .wrongCredential: askForThePassphraseAgain()  // wrong_passphrase, wrong_recovery_key…
                case .readOnly: showReadOnly(error.localizedDescription)  // removed_from_vault, behind_newer_keyring: this device was removed
                case .damaged: offerRepair(error.localizedDescription, details: error.message)  // header_damaged, frame_damaged…
                case .needsMerge: offerMerge(error.localizedDescription)  // rolled_back, commit_tampered: an older copy of the file
                case .cancelled: if let own = error.underlyingError { show(own) }  // a cancelled task, or the app's own error (commit_abandoned): nothing was written
                default: show(error.localizedDescription)  // busy, unavailable, outOfSpace, notFound (entry_not_found)…
                }
            }
        }

        // A passphrase reads but does not write (README, "Keys and
        // devices"): the right one opens, and its commit is refused.
        #expect(done.all.first == "ask again")
        #expect(done.all.count == 2 && done.all.last?.hasPrefix("read-only:") == true, "\(done.all)")
        #expect(try await Vault.open(at: journal, store: store).entries(matching: EntryQuery()).entries.isEmpty)
    }

    /// The README's timeline block, run as written, on a vault with an
    /// entry on this day a year ago.
    @Test func libraryTimeline() async throws {
        let dir = TemporaryDirectory()
        let store = AppKeyStoreTests.KeychainLikeStore()
        _ = try store.loadOrCreate(name: "Laptop")
        let vault = try await Vault.create(
            at: dir.file("Journal.quire"), setup: VaultSetup(name: "Journal", recoveryKey: try RecoveryKey()), store: store)
        let yearAgo = try #require(Calendar.current.date(byAdding: .year, value: -1, to: Date()))
        try await vault.commit { tx in
            try tx.add(EntryBody(created: yearAgo, timeZone: .current, text: "Up betimes, to 天津.", tags: ["Travel"]))
            try tx.add(EntryBody(created: yearAgo.addingTimeInterval(-40 * 86_400), timeZone: .current, text: "Not this day.", tags: ["travel", "Navy"]))
        }
        let row = try #require(try await vault.entries(matching: EntryQuery(order: .newestFirst, limit: 1)).entries.first)  // "Up betimes…"

        var query = EntryQuery(order: .newestFirst, limit: 50)  // also from/through, tags, journal, isStarred, hasPhotos…
        query.onThisDay = EntryQuery.Day(Date(), in: .current)  // same month and day, earlier years, in each entry's own calendar
        let page = try await vault.entries(matching: query)  // decrypts only the 50 rows' bodies
        let more = try await vault.entries(matching: query, after: page.next)  // a cursor: entries added or deleted between pages shift nothing
        let here = try await vault.entries(matching: query, after: EntryCursor(before: row))  // from row (an EntrySnapshot: a notification's entry) on; EntryCursor(after: row), order flipped, pages up
        let found = try await vault.search("betimes 天津", matching: EntryQuery())  // word prefixes in any case or accent; CJK by characters
        let sidebar = try await vault.tagCounts()  // ["travel": 12, …]: live entries per tag, lowercased as query.tags compares; journalCounts() per journal

        #expect(page.entries.map(\.body.text) == ["Up betimes, to 天津."])
        #expect(page.next == nil && more == page)  // no next page: `after: nil` is the first again
        #expect(found.entries.map(\.body.text) == ["Up betimes, to 天津."])
        #expect(here == page)  // the page from `row` on: `row` first
        #expect(sidebar == ["travel": 2, "navy": 1])
        #expect(try await vault.journalCounts() == ["": 2])
    }
}

extension VaultObserverTests {
    /// The README's "With Swift concurrency" block, run as written (the
    /// store an app's own, not QUIRE_HOME, which `libraryInTenLines` sets).
    /// In the observer suite, which is serialized: its watch would change
    /// the descriptor counts the other observer tests check.
    @Test func libraryWithSwiftConcurrency() async throws {
        let dir = TemporaryDirectory()
        let journal = dir.file("Journal.quire")
        let store = AppKeyStoreTests.KeychainLikeStore()
        _ = try store.loadOrCreate(name: "Laptop")
        _ = try await Vault.create(at: journal, setup: VaultSetup(name: "Journal", recoveryKey: RecoveryKey()), store: store)
        let photoBytes: [UInt8] = [0xFF, 0xD8, 0xFF] + ReadmeExample.bytes("readme jpeg", count: 200_000)
        let picked = URL(fileURLWithPath: dir.file("picked.jpg"))
        try Data(photoBytes).write(to: picked)
        let shown = URL(fileURLWithPath: dir.file("shown.jpg"))
        let printed = ReadmeExample.Printed()
        @Sendable func print(_ items: Any...) { printed.add(items) }

        let vault = try await Vault.open(at: journal, store: store)
        let watch = Task {
            for await event in vault.events() {
                switch event {
                case .changed(let changes, let origin): print(origin, changes.ids(.added), changes.conflictsAppeared)
                case .refreshFailed(let error): print("will retry:", error)
                case .conflictCopiesAppeared(let copies): print("sync conflict:", copies)
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
        let fold = try await vault.foldConflictCopies()
        for kept in fold.copies where kept.keptBecause == .notAConflictCopy { print("ask before merging:", kept.copy.path) }
        let compaction = Task { try await vault.compact() }
        compaction.cancel()

        #expect(page.entries.isEmpty)
        #expect(jpeg == photoBytes)
        #expect(try [UInt8](Data(contentsOf: shown)) == photoBytes)
        if case .failure(let error) = await compaction.result { #expect((error as? QuireError)?.category == .cancelled) }
        #expect(try await vault.verify().issues.isEmpty)
        #expect(try await vault.entry(id)?.body.text == "Sunset")
        let expected = "thisHandle [\(id)] []"
        let deadline = Date().addingTimeInterval(10)
        while !printed.all.contains(expected), Date() < deadline { try await Task.sleep(for: .milliseconds(10)) }
        #expect(printed.all.contains(expected))
        watch.cancel()
        await watch.value
    }

    /// The README's "Following other writers" block, run as written, with
    /// a second handle on the file standing for the other process.
    @Test func libraryFollowingOtherWriters() async throws {
        let dir = TemporaryDirectory()
        let journal = dir.file("Journal.quire")
        let store = AppKeyStoreTests.KeychainLikeStore()
        _ = try store.loadOrCreate(name: "Laptop")
        let recovery = try RecoveryKey()
        let vault = try await Vault.create(at: journal, setup: VaultSetup(name: "Journal", recoveryKey: recovery), store: store)
        let other = try await Vault.open(at: journal, credential: .recoveryKey(recovery))
        let first = try await other.commit { tx in try tx.add(EntryBody(created: Date(), text: "From the other process")) }
        let printed = ReadmeExample.Printed()
        @Sendable func print(_ items: Any...) { printed.add(items) }

        let changes = try await vault.refresh()
        for change in changes.entries where change.kind == .added { print("new:", change.id) }
        if !changes.conflictsAppeared.isEmpty { print("edited on two devices:", changes.conflictsAppeared) }
        if changes.keys?.thisCredentialRemoved == true { print("this device was removed from the journal") }

        // or, instead of calling refresh(), watch:
        let watch = Task {
            for await event in vault.events() {
                guard case .changed(let changes, origin: .otherWriter) = event else { continue }
                for change in changes.entries { print(change.kind, change.id) }
                for unread in changes.unreadRecords { print("cannot read:", unread) }
            }
        }
        try await Task.sleep(for: .milliseconds(100))  // (not in the README: lets the watch start before the write)
        let second = try await other.commit { tx in try tx.add(EntryBody(created: Date(), text: "And another")) }
        let deadline = Date().addingTimeInterval(10)
        while !printed.all.contains("added \(second.entryID)"), Date() < deadline { try await Task.sleep(for: .milliseconds(10)) }
        watch.cancel()
        await watch.value

        #expect(printed.all.first == "new: \(first.entryID)")
        #expect(printed.all.contains("added \(second.entryID)"))
        #expect(!printed.all.contains { $0.hasPrefix("cannot read") || $0.hasPrefix("edited") || $0.hasPrefix("this device") })
    }
}
