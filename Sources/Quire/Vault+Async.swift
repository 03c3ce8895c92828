public import Foundation
@_spi(Format) public import QuireFormat
@_spi(Format) public import QuireKeys
@_spi(Format) public import QuireSync
import QuireSystem

// Swift concurrency: an `async` form of every call that can block (open,
// create, commit, refresh, reload, queries, merge, fold, compact, verify).
// Each runs on the vault's own serial executor (``VaultWorker``, a
// DispatchQueue per handle), never on the caller's actor nor blocking a
// thread of the cooperative pool; calls on one handle run one at a time,
// in the order they were made. Cancelling the calling `Task` stops the work
// at the next record or chunk (``QuireError/cancelled``); a cancelled write
// commits nothing.

/// What a progress handler answers: go on, or stop the operation (which
/// then throws `.cancelled` (`cancelled`), as when its `Task` is cancelled).
public enum ProgressReply: Sendable, Equatable {
    /// Go on.
    case proceed
    /// Stop at the next record or entry; what was not committed is not
    /// written.
    case cancel
}

/// Cooperative cancellation as the facade and the modules above it check it:
/// the calling task is cancelled, or a progress handler answered
/// ``ProgressReply/cancel``.
package enum VaultCancellation {
    /// True when the current operation should stop.
    package static var isRequested: Bool { OperationCancellation.isRequested }

    /// Runs `operation` with a fresh flag bound, handing it `reply`, the
    /// function that records a progress handler's answer: after
    /// ``ProgressReply/cancel`` the operation stops at its next check.
    package static func withProgress<T: Sendable, E: Error>(
        _ operation: (_ reply: @escaping @Sendable (ProgressReply) -> Void) async throws(E) -> T
    ) async throws(E) -> T {
        let flag = CancellationFlag()
        let result: Result<T, E> = await OperationCancellation.$flag.withValue(flag) {
            do throws(E) {
                return .success(try await operation { if $0 == .cancel { flag.set() } })
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// Runs `operation` synchronously with `flag` bound: the operation stops
    /// at its next check once the flag reads as set (for example a
    /// ``CancellationFlag`` made with `alsoSetWhen:` over a trapped signal, so
    /// that a command told to stop removes its temporary files first).
    package static func with<T, E: Error>(_ flag: CancellationFlag, _ operation: () throws(E) -> T) throws(E) -> T {
        let result: Result<T, E> = OperationCancellation.$flag.withValue(flag) {
            do throws(E) {
                return .success(try operation())
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }
}

extension Vault {
    /// Runs `work` on this handle's serial executor (see the top of this
    /// file).
    ///
    /// - Throws: `.cancelled` (`cancelled`) when the task was cancelled
    ///   before or during `work`; otherwise what `work` throws.
    package func perform<T: Sendable>(_ work: @Sendable () throws(QuireError) -> T) async throws(QuireError) -> T {
        try await concurrency.worker.run(work)
    }

    /// ``perform(_:)`` for work that throws `E`; `cancelled` makes the `E`
    /// that says it was cancelled.
    package func perform<T: Sendable, E: Error>(
        _ work: @Sendable () throws(E) -> T, cancelled: @Sendable @escaping () -> E
    ) async throws(E) -> T {
        try await concurrency.worker.run(work, cancelled: cancelled)
    }

    /// Opens the vault at `path` with `credential`, off the caller's
    /// executor: ``open(at:credential:writable:random:options:retainsEntryBodies:)``
    /// in `async` form (the scan, the key evaluation and the commit checks
    /// run on a queue of their own).
    ///
    /// - Throws: as the synchronous form; `.cancelled` (`cancelled`) when the
    ///   task was cancelled (nothing was opened).
    public static func open(
        at path: String, credential: Credential, writable: Bool = true, random: any RandomSource = SystemRandom()
    ) async throws(QuireError) -> Vault {
        try await open(at: path, credential: credential, writable: writable, random: random, options: WriteOptions())
    }

    /// ``open(at:credential:writable:random:)`` with the open-time tuning
    /// of the CLI, the importers and the tests: how appends reach the disk
    /// and whether the index keeps every revision's body.
    @_spi(Format)
    public static func open(
        at path: String, credential: Credential, writable: Bool = true, random: any RandomSource = SystemRandom(),
        options: WriteOptions, retainsEntryBodies: Bool = true
    ) async throws(QuireError) -> Vault {
        try await VaultWorker(label: "quire.open").run { () throws(QuireError) -> Vault in
            try open(
                at: path, credential: credential, writable: writable, random: random, options: options,
                retainsEntryBodies: retainsEntryBodies)
        }
    }

    /// Opens the vault at `path` with this device's key from `store`, off the
    /// caller's executor: ``open(at:store:writable:random:options:retainsEntryBodies:)``
    /// in `async` form.
    ///
    /// - Throws: as the synchronous form; `.cancelled` (`cancelled`).
    public static func open(
        at path: String, store: any DeviceKeyStore, writable: Bool = true, random: any RandomSource = SystemRandom()
    ) async throws(QuireError) -> Vault {
        try await open(at: path, store: store, writable: writable, random: random, options: WriteOptions())
    }

    /// ``open(at:store:writable:random:)`` with the open-time tuning of the
    /// CLI, the importers and the tests (as the credential form).
    @_spi(Format)
    public static func open(
        at path: String, store: any DeviceKeyStore, writable: Bool = true, random: any RandomSource = SystemRandom(),
        options: WriteOptions, retainsEntryBodies: Bool = true
    ) async throws(QuireError) -> Vault {
        try await VaultWorker(label: "quire.open").run { () throws(QuireError) -> Vault in
            try open(at: path, store: store, writable: writable, random: random, options: options, retainsEntryBodies: retainsEntryBodies)
        }
    }

    /// Creates a new vault at `path`, off the caller's executor:
    /// ``create(at:setup:store:random:options:)`` in `async` form. With
    /// `store`, the handle returned knows it (device memory, index cache),
    /// as one from ``open(at:store:writable:random:options:retainsEntryBodies:)``.
    ///
    /// - Throws: as the synchronous form; `.cancelled` (`cancelled`) (no file
    ///   is left at `path`).
    public static func create(
        at path: String, setup: VaultSetup, store: (any DeviceKeyStore)? = nil, random: any RandomSource = SystemRandom()
    ) async throws(QuireError) -> Vault {
        try await create(at: path, setup: setup, store: store, random: random, options: WriteOptions())
    }

    /// ``create(at:setup:store:random:)`` with how appends reach the disk
    /// (the CLI, the importers and the tests).
    @_spi(Format)
    public static func create(
        at path: String, setup: VaultSetup, store: (any DeviceKeyStore)? = nil, random: any RandomSource = SystemRandom(),
        options: WriteOptions
    ) async throws(QuireError) -> Vault {
        try await VaultWorker(label: "quire.create").run { () throws(QuireError) -> Vault in
            try create(at: path, setup: setup, store: store, random: random, options: options)
        }
    }

    /// Appends one commit built by `build`, atomically, on this handle's
    /// executor, and returns what `build` returned: ``commit(_:)`` in
    /// `async` form.
    ///
    /// ```swift
    /// let id = try await vault.commit { tx in
    ///     let photo = try tx.storeAttachment(from: MemoryByteSource(jpeg), mediaType: "image/jpeg")
    ///     return try tx.add(body).entryID
    /// }
    /// ```
    ///
    /// Cancelling the task stops the commit at the next record or
    /// attachment chunk; nothing of it is written and the file is as it was.
    ///
    /// This call throws ``QuireError`` only, as ``commit(_:)``: a
    /// `QuireError` that `build` throws comes out unchanged, any other error
    /// of the app's wrapped (``QuireError/underlyingError``). `build` is
    /// `@Sendable` and runs on the handle's executor: copy what it needs
    /// from a `@MainActor` model into `let`s first.
    ///
    /// - Throws: ``QuireError`` as ``commit(_:)``; `.cancelled`
    ///   (`cancelled`) when the task was cancelled.
    public func commit<T: Sendable>(_ build: @Sendable (VaultTransaction) throws -> T) async throws(QuireError) -> T {
        try await perform { () throws(QuireError) -> T in
            var result: T?
            try self.commit { tx in result = try build(tx) }
            guard let result else { throw QuireError.format(.notWritable(reason: "the commit was abandoned")) }
            return result
        }
    }

    /// Reads what other processes appended and says what changed, on this
    /// handle's executor: ``refresh()`` in `async` form.
    ///
    /// - Throws: as ``refresh()``; `.cancelled` (`cancelled`) when the task
    ///   was cancelled before it started (a refresh that started finishes:
    ///   its cost follows what was appended).
    public func refresh() async throws(QuireError) -> VaultChangeSet {
        try await perform { () throws(QuireError) -> VaultChangeSet in try self.refresh() }
    }

    /// Opens the path again, on this handle's executor: ``reload()`` in
    /// `async` form.
    ///
    /// - Throws: as ``reload()``; `.cancelled` (`cancelled`).
    @_spi(Format)
    public func reload() async throws(QuireError) {
        try await perform { () throws(QuireError) -> Void in try self.reload() }
    }

    /// A page of entries, on this handle's executor:
    /// ``entries(matching:after:)`` in `async` form. The first query of a
    /// handle builds its index (seconds on a large journal); that no longer
    /// blocks the caller.
    ///
    /// - Throws: as the synchronous form; `.cancelled` (`cancelled`).
    public func entries(matching query: EntryQuery, after cursor: EntryCursor? = nil) async throws(QuireError) -> EntryPage {
        try await perform { () throws(QuireError) -> EntryPage in try self.entries(matching: query, after: cursor) }
    }

    /// A page of search results, on this handle's executor:
    /// ``search(_:matching:after:)`` in `async` form.
    ///
    /// - Throws: as the synchronous form; `.cancelled` (`cancelled`).
    public func search(_ text: String, matching query: EntryQuery = EntryQuery(), after cursor: EntryCursor? = nil) async throws(QuireError)
        -> EntryPage
    {
        try await perform { () throws(QuireError) -> EntryPage in try self.search(text, matching: query, after: cursor) }
    }

    /// One entry, on this handle's executor: ``entry(_:)`` in `async` form.
    ///
    /// - Throws: as the synchronous form; `.cancelled` (`cancelled`).
    public func entry(_ id: EntryID) async throws(QuireError) -> EntrySnapshot? {
        try await perform { () throws(QuireError) -> EntrySnapshot? in try self.entry(id) }
    }

    /// The whole content of attachment `blob` (a photo, say), read on this
    /// handle's executor and checked chunk by chunk (`Spec/format.md §7`);
    /// cancelling stops at the next chunk.
    ///
    /// - Returns: the bytes, ``BlobManifest/byteCount`` of them.
    /// - Throws: `.notFound` (`blob_not_found`), a container error (`.damaged`, `.unavailable`, `.outOfSpace`…)
    ///   for a damaged chunk or I/O, `.cancelled` (`cancelled`).
    public func attachmentBytes(_ blob: BlobID) async throws(QuireError) -> [UInt8] {
        try await perform { () throws(QuireError) -> [UInt8] in
            let reader = try self.openAttachment(blob)
            var out: [UInt8] = []
            out.reserveCapacity(Int(min(reader.manifest.byteCount, 1 << 30)))
            var buffer = [UInt8](repeating: 0, count: Limits.chunkByteCount)
            while true {
                if VaultCancellation.isRequested { throw .cancelled }
                let n: Int
                do throws(FormatError) {
                    n = try buffer.withMutableBytes { (raw: UnsafeMutableRawBufferPointer) throws(FormatError) -> Int in
                        try reader.readChecked(into: raw)
                    }
                } catch {
                    throw .format(error)
                }
                if n == 0 { return out }
                out += buffer[0..<n]
            }
        }
    }

    /// Merges the copy at `copyPath` into this vault, on this handle's
    /// executor: ``merge(copyAt:)`` in `async` form. Cancelling stops the
    /// merge at the next frame it writes; the vault is left as it was and
    /// the temporary file removed.
    ///
    /// - Throws: as ``merge(copyAt:)``; `.cancelled` (`cancelled`).
    @discardableResult
    public func merge(copyAt copyPath: String) async throws(QuireError) -> MergeReport {
        try await perform { () throws(QuireError) -> MergeReport in try self.merge(copyAt: copyPath) }
    }

    /// Merges every conflict copy beside the vault, on this handle's
    /// executor: ``foldConflictCopies()`` in `async` form. Cancelling stops
    /// the copy being merged; copies merged before stay merged.
    ///
    /// - Throws: as ``foldConflictCopies()``; `.cancelled` (`cancelled`).
    @discardableResult
    public func foldConflictCopies() async throws(QuireError) -> FoldReport {
        try await perform { () throws(QuireError) -> FoldReport in
            let report = try self.foldConflictCopies()
            // A fold reports a failed copy in its report rather than
            // throwing: say a cancellation as itself.
            if VaultCancellation.isRequested { throw .cancelled }
            return report
        }
    }

    /// Compacts the vault, on this handle's executor: ``compact(_:now:)`` in
    /// `async` form. Cancelling stops the rewrite at the next record; the
    /// vault is left as it was and the temporary file removed.
    ///
    /// - Parameter now: the time of the compaction (what the tombstone
    ///   horizon counts back from), stored to the millisecond.
    /// - Throws: as ``compact(_:now:)``; `.cancelled` (`cancelled`).
    @discardableResult
    public func compact(_ options: CompactionOptions = CompactionOptions(), now: Date = Date()) async throws(QuireError)
        -> CompactionReport
    {
        let ms = now.millisecondsSince1970
        return try await perform { () throws(QuireError) -> CompactionReport in try self.compact(options, now: ms) }
    }

    /// Checks every byte this credential can check, on this handle's
    /// executor: ``verify()`` in `async` form, stopping at the next record
    /// or attachment chunk when the task is cancelled.
    ///
    /// - Throws: `.cancelled` (`cancelled`) only (damage is in the report).
    public func verify() async throws(QuireError) -> VerifyReport {
        try await perform { () throws(QuireError) -> VerifyReport in try self.verifyReport(cancellable: true) }
    }
}

// The `async` forms of the reading and key operations (iOS review 25,
// finding 5): each runs its synchronous form on the handle's executor, so
// that a call from the main actor never blocks it (the key operations read
// every keyring and append a commit; a reading call may build the entry
// index first, seconds on a large journal). Records are added, edited,
// deleted and restored inside ``commit(_:)`` (`async`), through
// ``VaultTransaction``. Times are `Date`s, stored to the millisecond.
extension Vault {
    /// Every entry that is not deleted, oldest first, on this handle's
    /// executor: ``entries()`` in `async` form. Prefer
    /// ``entries(matching:after:)``, which pages.
    ///
    /// - Throws: as ``entries()``; `.cancelled` (`cancelled`).
    @_spi(Format)
    public func entries() async throws(QuireError) -> [EntrySnapshot] {
        try await perform { () throws(QuireError) -> [EntrySnapshot] in try self.entries() }
    }

    /// Every deleted entry, newest deletion first, on this handle's
    /// executor: ``deletedEntries()`` in `async` form.
    ///
    /// - Throws: as ``deletedEntries()``; `.cancelled` (`cancelled`).
    public func deletedEntries() async throws(QuireError) -> [EntrySnapshot] {
        try await perform { () throws(QuireError) -> [EntrySnapshot] in try self.deletedEntries() }
    }

    /// Every revision of entry `id`, oldest clock first, on this handle's
    /// executor: ``revisions(of:)`` in `async` form (what a conflict screen
    /// shows beside the winner).
    ///
    /// - Throws: as ``revisions(of:)``; `.cancelled` (`cancelled`).
    public func revisions(of id: EntryID) async throws(QuireError) -> [EntryRevision] {
        try await perform { () throws(QuireError) -> [EntryRevision] in try self.revisions(of: id) }
    }

    /// The manifest of attachment `blob` (its size and media type), on this
    /// handle's executor: ``attachment(_:)`` in `async` form. Its bytes:
    /// ``attachmentBytes(_:)``.
    ///
    /// - Throws: as ``attachment(_:)``; `.cancelled` (`cancelled`).
    public func attachment(_ blob: BlobID) async throws(QuireError) -> BlobManifest {
        try await perform { () throws(QuireError) -> BlobManifest in try self.attachment(blob) }
    }

    /// The journal profile, on this handle's executor: ``profile()`` in
    /// `async` form.
    ///
    /// - Throws: as ``profile()``; `.cancelled` (`cancelled`).
    public func profile() async throws(QuireError) -> Profile? {
        try await perform { () throws(QuireError) -> Profile? in try self.profile() }
    }

    /// The records this credential cannot read, on this handle's executor:
    /// ``unreadRecords()`` in `async` form.
    ///
    /// - Throws: as ``unreadRecords()``; `.cancelled` (`cancelled`).
    public func unreadRecords() async throws(QuireError) -> UnreadRecords {
        try await perform { () throws(QuireError) -> UnreadRecords in try self.unreadRecords() }
    }

    /// The conflict copies a sync tool left beside the vault, on this
    /// handle's executor: ``conflictCopies()`` in `async` form (it reads
    /// the folder and each candidate's header).
    ///
    /// - Throws: as ``conflictCopies()``; `.cancelled` (`cancelled`).
    public func conflictCopies() async throws(QuireError) -> [ConflictCopy] {
        try await perform { () throws(QuireError) -> [ConflictCopy] in try self.conflictCopies() }
    }

    /// Uses `store` for this device's memory of the vault, and checks it
    /// now, on this handle's executor: ``remember(in:)`` in `async` form.
    ///
    /// - Throws: as ``remember(in:)``; `.cancelled` (`cancelled`).
    @_spi(Format)
    public func remember(in store: any DeviceKeyStore) async throws(QuireError) {
        try await perform { () throws(QuireError) -> Void in try self.remember(in: store) }
    }

    /// Who holds keys now, on this handle's executor: ``keyState()`` in
    /// `async` form.
    ///
    /// - Throws: as ``keyState()``; `.cancelled` (`cancelled`).
    public func keyState() async throws(QuireError) -> KeyState {
        try await perform { () throws(QuireError) -> KeyState in try self.keyState() }
    }

    /// Who can decrypt which records, in plain words, on this handle's
    /// executor: ``privacyStatement()`` in `async` form.
    ///
    /// - Throws: as ``privacyStatement()``; `.cancelled` (`cancelled`).
    public func privacyStatement() async throws(QuireError) -> PrivacyStatement {
        try await perform { () throws(QuireError) -> PrivacyStatement in try self.privacyStatement() }
    }

    /// Enrolls the device whose code the user typed, on this handle's
    /// executor: ``enrollDevice(code:name:now:)`` in `async` form.
    ///
    /// - Parameter now: the time of the keyring, stored to the millisecond.
    /// - Returns: the new member.
    /// - Throws: as ``enrollDevice(code:name:now:)``; `.cancelled` (`cancelled`)
    ///   (before it started: nothing was written).
    @discardableResult
    public func enrollDevice(code: String, name: String, now: Date = Date()) async throws(QuireError) -> KeyringMember {
        let ms = now.millisecondsSince1970
        return try await perform { () throws(QuireError) -> KeyringMember in try self.enrollDevice(code: code, name: name, now: ms) }
    }

    /// Removes the enrolled device called exactly `name`, on this handle's
    /// executor: the synchronous `removeDevice(named:now:replacement:)` in
    /// `async` form. For the CLI, which takes a name on the command line; an
    /// app removes a member by its key, ``removeDevice(publicKey:now:replacement:)``.
    ///
    /// - Parameter now: the time of the keyring, stored to the millisecond.
    /// - Throws: as the synchronous form; `.cancelled` (`cancelled`).
    @discardableResult
    @_spi(Format)
    public func removeDevice(named name: String, now: Date = Date(), replacement: RecoveryReplacementOwner = .mine) async throws(QuireError)
        -> KeyringMember
    {
        let ms = now.millisecondsSince1970
        return try await perform { () throws(QuireError) -> KeyringMember in
            try self.removeDevice(named: name, now: ms, replacement: replacement)
        }
    }

    /// Removes the enrolled device whose Ed25519 public key is `publicKey`,
    /// on this handle's executor: a new epoch without it (`Spec/keys.md
    /// §6.3`). The device is named by its key, never by its display name
    /// (two devices may share one): pass a member's
    /// ``KeyringMember/publicKey`` from ``keyState()``'s
    /// ``KeyState/members`` (shown to people by its ``KeyringMember/name``
    /// and fingerprint), or a ``DeviceIdentity/publicKey``. The removed
    /// device keeps what it could read until the vault is compacted with a
    /// rekey; it opens the vault read-only from then on.
    ///
    /// - Parameter publicKey: the member's Ed25519 public key, 32 bytes.
    /// - Parameter now: the time of the keyring, stored to the millisecond.
    /// - Parameter replacement: when the device (or a device it enrolled)
    ///   replaced the recovery key, whose replacement it was: `.mine` (the
    ///   default) keeps it; `.notMine` (a thief's) builds on the keys from
    ///   before it (`Spec/keys.md §6.3`).
    /// - Returns: the member removed.
    /// - Throws: `.readOnly` or `.wrongCredential` when this credential may
    ///   not change the keys; a key error (code `operation_refused`) when no
    ///   enrolled device has that key; `.cancelled` (`cancelled`).
    @discardableResult
    public func removeDevice(publicKey: [UInt8], now: Date = Date(), replacement: RecoveryReplacementOwner = .mine) async throws(QuireError)
        -> KeyringMember
    {
        let ms = now.millisecondsSince1970
        return try await perform { () throws(QuireError) -> KeyringMember in
            try self.removeDevice(publicKey: publicKey, now: ms, replacement: replacement)
        }
    }

    /// The replacements of the recovery key a removal of `publicKey` would
    /// cut, on this handle's executor: ``recoveryReplacements(removing:)``
    /// in `async` form.
    ///
    /// - Throws: as the synchronous form; `.cancelled` (`cancelled`).
    public func recoveryReplacements(removing publicKey: [UInt8]) async throws(QuireError) -> [RecoveryKeyReplacement] {
        try await perform { () throws(QuireError) -> [RecoveryKeyReplacement] in try self.recoveryReplacements(removing: publicKey) }
    }

    /// Removes the devices called `names` in one keyring signed by the
    /// recovery key, on this handle's executor:
    /// ``lockDown(removingDevicesNamed:now:)`` in `async` form.
    ///
    /// - Parameter now: the time of the keyring, stored to the millisecond.
    /// - Throws: as the synchronous form; `.cancelled` (`cancelled`).
    @discardableResult
    public func lockDown(removingDevicesNamed names: [String], now: Date = Date()) async throws(QuireError) -> [KeyringMember] {
        let ms = now.millisecondsSince1970
        return try await perform { () throws(QuireError) -> [KeyringMember] in try self.lockDown(removingDevicesNamed: names, now: ms) }
    }

    /// Rotates the epoch key, on this handle's executor: ``rotateKeys(now:)``
    /// in `async` form.
    ///
    /// - Parameter now: the time of the keyring, stored to the millisecond.
    /// - Throws: as ``rotateKeys(now:)``; `.cancelled` (`cancelled`).
    public func rotateKeys(now: Date = Date()) async throws(QuireError) {
        let ms = now.millisecondsSince1970
        try await perform { () throws(QuireError) -> Void in try self.rotateKeys(now: ms) }
    }

    /// Sets, changes or removes the passphrase, on this handle's executor:
    /// ``setPassphrase(_:opsLimit:memLimitBytes:now:)`` in `async` form (the
    /// Argon2id derivation takes about a second at the moderate cost).
    ///
    /// - Parameter now: the time of the keyring, stored to the millisecond.
    /// - Throws: as the synchronous form; `.cancelled` (`cancelled`).
    public func setPassphrase(
        _ passphrase: SecureBytes?, opsLimit: UInt64 = Argon2id.moderateOpsLimit, memLimitBytes: UInt64 = Argon2id.moderateMemLimitBytes,
        now: Date = Date()
    ) async throws(QuireError) {
        let ms = now.millisecondsSince1970
        try await perform { () throws(QuireError) -> Void in
            try self.setPassphrase(passphrase, opsLimit: opsLimit, memLimitBytes: memLimitBytes, now: ms)
        }
    }

    /// Accepts this file as it is after a suspected rollback, on this
    /// handle's executor: ``acceptRollback()`` in `async` form.
    ///
    /// - Throws: as ``acceptRollback()``; `.cancelled` (`cancelled`).
    public func acceptRollback() async throws(QuireError) {
        try await perform { () throws(QuireError) -> Void in try self.acceptRollback() }
    }

    /// Accepts the tampered commits the file holds now, on this handle's
    /// executor: ``acceptTampered()`` in `async` form.
    ///
    /// - Returns: how many tampered commits were accepted now.
    /// - Throws: as ``acceptTampered()``; `.cancelled` (`cancelled`).
    @discardableResult
    public func acceptTampered() async throws(QuireError) -> Int {
        try await perform { () throws(QuireError) -> Int in try self.acceptTampered() }
    }

    /// The recovery keys concurrent replacements left, on this handle's
    /// executor: ``recoveryKeyChoices()`` in `async` form.
    ///
    /// - Throws: as ``recoveryKeyChoices()``; `.cancelled` (`cancelled`).
    public func recoveryKeyChoices() async throws(QuireError) -> [RecoveryKeyChoice] {
        try await perform { () throws(QuireError) -> [RecoveryKeyChoice] in try self.recoveryKeyChoices() }
    }

    /// Says which recovery key to keep, on this handle's executor:
    /// ``keepRecoveryKey(_:)`` in `async` form.
    ///
    /// - Throws: as ``keepRecoveryKey(_:)``; `.cancelled` (`cancelled`).
    public func keepRecoveryKey(_ publicKey: [UInt8]) async throws(QuireError) {
        try await perform { () throws(QuireError) -> Void in try self.keepRecoveryKey(publicKey) }
    }
}
