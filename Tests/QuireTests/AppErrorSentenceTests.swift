import Foundation
import Quire  // alone: what an app sees
import Testing

/// iOS trial of session 41, finding 2: the sentence an alert shows
/// (`localizedDescription`) was chosen by category alone, so a missing
/// folder or photo said "cannot be reached right now. Try again later."
/// (retrying never helps) and an unenrolled device or a mistyped device
/// code said "The passphrase or key does not open this journal." (the
/// person typed neither). Those errors now have sentences of their own;
/// their categories are unchanged. Written against `import Quire` without
/// any `@_spi`, as an app is.
@Suite struct AppErrorSentenceTests {
    typealias Store = AppKeyStoreTests.KeychainLikeStore
    static let missing = "The file or folder is not there. Check that it exists, or wait until it has downloaded."
    static let notEnrolled =
        "This device has not been added to this journal. Add it from a device that opens the journal, or open it with the recovery key."

    /// The error `body` throws, or nil.
    static func error(_ body: () async throws(QuireError) -> Void) async -> QuireError? {
        do {
            try await body()
            return nil
        } catch {
            return error
        }
    }

    static func store(_ name: String) throws -> Store {
        let store = Store()
        _ = try store.loadOrCreate(name: name)
        return store
    }

    @Test func aMissingFolderOrFileSaysSo() async throws {
        let dir = TemporaryDirectory()
        let store = try Self.store("Phone")
        let create = try #require(
            await Self.error { () async throws(QuireError) in
                _ = try await Vault.create(
                    at: dir.file("nope/Journal.quire"), setup: VaultSetup(name: "J", recoveryKey: try RecoveryKey()), store: store)
            })
        #expect(create.category == .unavailable)
        #expect(create.localizedDescription == Self.missing)

        let vault = try await Vault.create(at: dir.file("Journal.quire"), setup: VaultSetup(name: "J", recoveryKey: try RecoveryKey()), store: store)
        let picked = URL(fileURLWithPath: dir.file("missing.jpg"))
        let attach = try #require(
            await Self.error { () async throws(QuireError) in
                _ = try await vault.commit { tx in _ = try tx.storeAttachment(contentsOf: picked, mediaType: "image/jpeg") }
            })
        #expect(attach.category == .unavailable)
        #expect(attach.localizedDescription == Self.missing)
        let open = try #require(
            await Self.error { () async throws(QuireError) in _ = try await Vault.open(at: dir.file("Other.quire"), store: store) })
        #expect(open.localizedDescription == Self.missing)

        // A folder picked as a photo (iOS re-trial of session 41): it said
        // "The app asked for something the journal cannot do."
        let folder = URL(fileURLWithPath: dir.path)
        let picked2 = try #require(
            await Self.error { () async throws(QuireError) in
                _ = try await vault.commit { tx in _ = try tx.storeAttachment(contentsOf: folder, mediaType: "image/jpeg") }
            })
        #expect(picked2.localizedDescription == "That is a folder, not a file. Choose a file.", "\(picked2.code): \(picked2.message)")
    }

    @Test func anUnenrolledDeviceAndAMistypedCodeSaySo() async throws {
        let dir = TemporaryDirectory()
        let path = dir.file("Journal.quire")
        let vault = try await Vault.create(at: path, setup: VaultSetup(name: "J", recoveryKey: try RecoveryKey()), store: Self.store("Phone"))
        let tablet = try Self.store("Tablet")
        let open = try #require(await Self.error { () async throws(QuireError) in _ = try await Vault.open(at: path, store: tablet) })
        #expect(open.category == .wrongCredential)
        #expect(open.code == "wrong_device_key")
        #expect(open.localizedDescription == Self.notEnrolled)
        let empty = try #require(await Self.error { () async throws(QuireError) in _ = try await Vault.open(at: path, store: Store()) })
        #expect(empty.category == .wrongCredential)
        #expect(empty.localizedDescription == Self.notEnrolled)

        let code = try #require(await Self.error { () async throws(QuireError) in _ = try await vault.enrollDevice(code: "ABC", name: "X") })
        #expect(code.category == .wrongCredential)
        #expect(code.code == "device_code_invalid")
        #expect(code.localizedDescription == "This device code is not valid. Check it and type it again.")

        // A wrong passphrase keeps its category's sentence.
        let wrong = try #require(
            await Self.error { () async throws(QuireError) in _ = try await Vault.open(at: path, credential: .passphrase("nope")) })
        #expect(wrong.category == .wrongCredential)
        #expect(wrong.localizedDescription == "The passphrase or key does not open this journal.")
    }

    /// Third iOS trial, session 42: a photo renamed `.quire` said "The
    /// journal cannot be reached right now. Try again later.", a mistyped
    /// recovery key "The passphrase or key does not open this journal.",
    /// and a file of another journal picked to merge "The app asked for
    /// something the journal cannot do." Each now says what it is; the
    /// categories are unchanged.
    @Test func aFileThatIsNotAJournalAMistypedRecoveryKeyAndAnotherJournalSaySo() async throws {
        let dir = TemporaryDirectory()
        let store = try Self.store("Phone")
        let photo = dir.file("Photo.quire")
        var jpeg: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10] + Array("JFIF".utf8)
        jpeg += (0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        try Data(jpeg).write(to: URL(fileURLWithPath: photo))
        let notAJournal = try #require(
            await Self.error { () async throws(QuireError) in _ = try await Vault.open(at: photo, store: store) })
        #expect(notAJournal.code == "not_a_vault", "\(notAJournal.message)")
        #expect(notAJournal.category == .unavailable)
        #expect(notAJournal.localizedDescription == "This file is not a Quire journal. Choose the journal's .quire file.")

        let key = try RecoveryKey()
        var typo = Array(key.code())
        typo[0] = typo[0] == "7" ? "8" : "7"
        for code in ["ABC", String(typo)] {
            let mistyped = try #require(await Self.error { () async throws(QuireError) in _ = try RecoveryKey(code: code) })
            #expect(mistyped.code == "recovery_code_invalid")
            #expect(mistyped.category == .wrongCredential)
            #expect(
                mistyped.localizedDescription
                    == "This recovery key is not valid. Check each character against the recovery key you kept and type it again.")
        }

        let vault = try await Vault.create(at: dir.file("Journal.quire"), setup: VaultSetup(name: "J", recoveryKey: key), store: store)
        let other = dir.file("Other.quire")
        _ = try await Vault.create(at: other, setup: VaultSetup(name: "O", recoveryKey: try RecoveryKey()), store: store)
        let merge = try #require(await Self.error { () async throws(QuireError) in _ = try await vault.merge(copyAt: other) })
        #expect(merge.code == "different_vaults")
        #expect(
            merge.localizedDescription
                == "The chosen file is a copy of another journal, so it cannot be merged into this one. Choose a copy of this journal.")
    }

    @Test func anAppsOwnSourceAndALockedKeyStoreSaySo() {
        let source = QuireError.sourceFailed("the photo library refused")
        #expect(source.category == .unavailable)
        #expect(source.localizedDescription == "The attachment could not be read, so it was not added. Try adding it again.")
        let locked = QuireError.keyStoreUnavailable("errSecInteractionNotAllowed")
        #expect(locked.category == .unavailable)
        #expect(locked.localizedDescription == "This device's key cannot be used while the device is locked. Unlock it and try again.")
        // A journal a newer version wrote: update, not "try again later".
        for code in ["unsupported_version", "unsupported_feature", "unknown_critical_kind"] {
            let newer = QuireError(category: .unavailable, code: code, message: "format version 3")
            #expect(newer.localizedDescription == "This version of the app cannot read this journal's format. Update the app to open it.")
        }
        // A deleted entry compacted away, and a photo the journal does not
        // hold: said, not "not in the journal" beside a row that shows it.
        let compacted = QuireError(category: .notFound, code: "not_restorable", message: "compacted")
        #expect(compacted.localizedDescription == "This entry can no longer be restored: its text was removed when the journal was compacted.")
        let photo = QuireError(category: .notFound, code: "attachment_not_stored", message: "blob")
        #expect(
            photo.localizedDescription == "A photo or file in this entry is not stored in the journal. Remove it from the entry, or add it again.")
        // Any other unavailable error keeps the category's sentence.
        let other = QuireError(category: .unavailable, code: "io", message: "EIO")
        #expect(other.localizedDescription == "The journal cannot be reached right now. Try again later.")
    }
}
