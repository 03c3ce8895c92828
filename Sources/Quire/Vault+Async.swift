public import Foundation
@_spi(Crypto) public import QuireCrypto
@_spi(Format) public import QuireFormat
@_spi(Format) @_spi(Crypto) public import QuireKeys
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
    /// executor (the scan, the key evaluation and the commit checks run on
    /// a queue of their own). The handle writes when `writable` (it takes
    /// the vault's lock only while it appends).
    ///
    /// - Throws: ``QuireError``: `.wrongCredential` for a credential that
    ///   does not open it (always distinct from damage); `.unavailable` for
    ///   a missing file, one that is not a vault or of a newer version;
    ///   `.damaged` for a damaged header or keyring; `.cancelled` (`cancelled`) when the task was
    ///   cancelled (nothing was opened).
    public static func open(at path: String, credential: Credential, writable: Bool = true) async throws(QuireError) -> Vault {
        try await open(at: path, credential: credential, writable: writable, random: SystemRandom(), options: WriteOptions())
    }

    /// ``open(at:credential:writable:)`` with the random source fixed (vectors and tests).
    ///
    /// - Throws: as ``open(at:credential:writable:)``.
    @_spi(Crypto)
    public static func open(
        at path: String, credential: Credential, writable: Bool = true, random: any RandomSource
    ) async throws(QuireError) -> Vault {
        try await open(at: path, credential: credential, writable: writable, random: random, options: WriteOptions())
    }

    /// ``open(at:credential:writable:)`` with the open-time tuning
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

    /// Opens the vault at `path` with this device's key from `store`, off
    /// the caller's executor. The store also keeps this device's memory of
    /// the vault: the keyring heads it trusted last time, so that a copy
    /// rolled back since is reported in ``keyWarnings`` (`rollback_suspected`,
    /// `Spec/keys.md §7`), and the index cache.
    ///
    /// - Throws: ``QuireError``: `.wrongCredential` (`no_device_key`) when
    ///   the store holds no key yet, or (`wrong_device_key`) when this device
    ///   is not enrolled; what the store throws; `.unavailable` or `.damaged`
    ///   for the file; `.cancelled` (`cancelled`).
    public static func open(at path: String, store: any DeviceKeyStore, writable: Bool = true) async throws(QuireError) -> Vault {
        try await open(at: path, store: store, writable: writable, random: SystemRandom(), options: WriteOptions())
    }

    /// ``open(at:store:writable:)`` with the random source fixed (vectors and tests).
    ///
    /// - Throws: as ``open(at:store:writable:)``.
    @_spi(Crypto)
    public static func open(
        at path: String, store: any DeviceKeyStore, writable: Bool = true, random: any RandomSource
    ) async throws(QuireError) -> Vault {
        try await open(at: path, store: store, writable: writable, random: random, options: WriteOptions())
    }

    /// ``open(at:store:writable:)`` with the open-time tuning of the
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

    /// Creates a new vault at `path` from `setup` (its name, recovery key,
    /// optional passphrase and first device), off the caller's executor.
    /// With `store`, the handle returned knows it (device memory, index
    /// cache), as one that ``open(at:store:writable:)`` returns.
    ///
    /// - Throws: ``QuireError``: `.programmerError` for an existing `path`
    ///   (`already_exists`), a passphrase cost out of bounds or a setup
    ///   naming another device than the store's; `.unavailable` or
    ///   `.outOfSpace` when the file cannot be written; what the store
    ///   throws; `.cancelled` (`cancelled`) (no file is left at `path`).
    public static func create(
        at path: String, setup: VaultSetup, store: (any DeviceKeyStore)? = nil
    ) async throws(QuireError) -> Vault {
        try await create(at: path, setup: setup, store: store, random: SystemRandom(), options: WriteOptions())
    }

    /// ``create(at:setup:store:)`` with the random source fixed (vectors and tests).
    ///
    /// - Throws: as ``create(at:setup:store:)``.
    @_spi(Crypto)
    public static func create(
        at path: String, setup: VaultSetup, store: (any DeviceKeyStore)? = nil, random: any RandomSource
    ) async throws(QuireError) -> Vault {
        try await create(at: path, setup: setup, store: store, random: random, options: WriteOptions())
    }

    /// ``create(at:setup:store:)`` with how appends reach the disk
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
    /// executor, and returns what `build` returned. `build` adds, edits,
    /// deletes and restores entries and stores attachments through the
    /// ``VaultTransaction`` it is given; they are written together, in one
    /// commit (`Spec/format.md §6`), or not at all. When another process
    /// appended in the meantime, the commit builds on what it wrote.
    ///
    /// ```swift
    /// let id = try await vault.commit { tx in
    ///     let photo = try tx.storeAttachment(jpeg, mediaType: "image/jpeg")
    ///     return try tx.add(body).entryID
    /// }
    /// ```
    ///
    /// Cancelling the task stops the commit at the next record or
    /// attachment chunk; nothing of it is written and the file is as it was.
    /// If `build` throws, nothing is committed either.
    ///
    /// This call throws ``QuireError`` only: a `QuireError` that `build`
    /// throws comes out unchanged, any other error of the app's is wrapped
    /// in one of category ``QuireError/Category/cancelled``, code
    /// `commit_abandoned` (``QuireError/underlyingError``). `build` is
    /// `@Sendable` and runs on the handle's executor: copy what it needs
    /// from a `@MainActor` model into `let`s first.
    ///
    /// - Throws: ``QuireError``: `.readOnly` (`behind_newer_keyring` for a removed
    ///   device, `removed_from_vault`, `not_writable`), `.needsMerge`
    ///   (`rolled_back`, `commit_tampered`), `.busy` (`locked`),
    ///   `.outOfSpace`, `.unavailable` or `.damaged` for the file,
    ///   `.programmerError` (`record_too_large`); what `build` threw, as
    ///   above; `.cancelled` (`cancelled`) when the task was cancelled.
    @discardableResult
    public func commit<T: Sendable>(_ build: @Sendable (VaultTransaction) throws -> T) async throws(QuireError) -> T {
        try await perform { () throws(QuireError) -> T in
            var result: T?
            try self.commit { tx in result = try build(tx) }
            guard let result else { throw QuireError.format(.notWritable(reason: "the commit was abandoned")) }
            return result
        }
    }

    /// Reads what other processes appended since this handle last looked
    /// and says what changed, on this handle's executor. A file a sync tool
    /// replaced is opened again.
    ///
    /// - Returns: what changed (empty when nothing did).
    /// - Throws: ``QuireError``: `.damaged`, `.unavailable` or `.outOfSpace` when the file cannot
    ///   be read, is missing or is no vault; `.wrongCredential` when the credential no longer opens
    ///   a replaced file (the handle then keeps the state it had, and a later call tries again);
    ///   `.needsMerge` (`rolled_back`) when a handle opened with a key store finds the path
    ///   replaced by an older copy (the rollback test of an open, `Spec/keys.md §7`) or by
    ///   another history that holds no revision of some entry the handle read (a fresh open
    ///   sees it by the newest entries the device memory keeps): ``keyWarnings`` then says
    ///   `rollback_suspected`, and writes are refused, until ``acceptRollback()``;
    ///   `.cancelled` (`cancelled`) when the task was cancelled before it started (a refresh
    ///   that started finishes: its cost follows what was appended).
    public func refresh() async throws(QuireError) -> VaultChangeSet {
        try await perform { () throws(QuireError) -> VaultChangeSet in try self.refresh() }
    }

    /// Opens the path again, on this handle's executor (the file may have
    /// been replaced by a sync tool, or had keys changed by another
    /// writer), and unlocks it with the same credential. A handle opened
    /// with a key store makes an open's rollback test on the new file
    /// (see ``refresh()``).
    ///
    /// - Throws: ``QuireError``: `.damaged`, `.unavailable` or `.outOfSpace` when the file cannot
    ///   be read; `.wrongCredential` when the credential no longer opens it; `.cancelled`
    ///   (`cancelled`).
    @_spi(Format)
    public func reload() async throws(QuireError) {
        try await perform { () throws(QuireError) -> Void in try self.reload() }
    }

    /// A page of the entries `query` selects, in its order, after `cursor`
    /// (nil: the first page), on this handle's executor. The first query of
    /// a handle builds its index (seconds on a large journal); that does not
    /// block the caller.
    ///
    /// - Returns: up to `query.limit` entries, and the cursor of the next
    ///   page (nil after the last).
    /// - Throws: ``QuireError``: `.damaged`, `.unavailable` or `.outOfSpace` when the file cannot
    ///   be read or a record no longer reads; `.cancelled` (`cancelled`).
    public func entries(matching query: EntryQuery, after cursor: EntryCursor? = nil) async throws(QuireError) -> EntryPage {
        try await perform { () throws(QuireError) -> EntryPage in try self.entries(matching: query, after: cursor) }
    }

    /// How many live entries carry each tag, on this handle's executor:
    /// what a sidebar lists beside each tag, without paging the vault.
    /// Keys are tags lowercased (`String.lowercased()`), the folding
    /// ``EntryQuery/tags`` compares with: `Travel` and `travel` are one
    /// key, `"travel"`, and a query with `tags = [key]` selects that many
    /// entries. Deleted entries are not counted; an entry counts once per
    /// key, and once in a conflict (by the version the vault shows). Read
    /// from the entry summaries (`Spec/records.md §3.3`): this device's
    /// index cache when present (no record is decrypted), else those the
    /// first query builds; writes and refreshes are reflected as in
    /// ``entries(matching:after:)``.
    ///
    /// ```swift
    /// let tags = try await vault.tagCounts()  // ["travel": 12, "work": 3]
    /// ```
    ///
    /// - Returns: each tag carried by a live entry, and how many carry it.
    /// - Throws: ``QuireError``: `.damaged`, `.unavailable` or `.outOfSpace` when the file cannot
    ///   be read or a record no longer reads; `.cancelled` (`cancelled`).
    public func tagCounts() async throws(QuireError) -> [String: Int] {
        try await perform { () throws(QuireError) -> [String: Int] in try self.tagCounts() }
    }

    /// How many live entries each journal holds, on this handle's
    /// executor: what a sidebar lists beside each journal. Keys are
    /// journal names lowercased (`String.lowercased()`), the folding
    /// ``EntryQuery/journal`` compares with; `""` is the main journal.
    /// Deleted entries are not counted; an entry in conflict counts once,
    /// in the journal of the version the vault shows. Read from the entry
    /// summaries as the tag counts are.
    ///
    /// - Returns: each journal holding a live entry, and how many it holds.
    /// - Throws: ``QuireError``: `.damaged`, `.unavailable` or `.outOfSpace` when the file cannot
    ///   be read or a record no longer reads; `.cancelled` (`cancelled`).
    public func journalCounts() async throws(QuireError) -> [String: Int] {
        try await perform { () throws(QuireError) -> [String: Int] in try self.journalCounts() }
    }

    /// A page of the entries whose text, tags or journal hold every word of
    /// `text`, among those `query` selects, in its order, after `cursor`
    /// (nil: the first page), on this handle's executor. An entry in
    /// conflict is found by the version the vault shows
    /// (``EntrySnapshot/revision``); the text of its other versions
    /// (``versions(of:)``) is found once the conflict is resolved in their
    /// favour.
    ///
    /// - Returns: up to `query.limit` entries, and the cursor of the next
    ///   page (nil after the last).
    /// - Throws: ``QuireError``: `.damaged`, `.unavailable` or `.outOfSpace` when the file cannot
    ///   be read or a record no longer reads; `.cancelled` (`cancelled`).
    public func search(_ text: String, matching query: EntryQuery = EntryQuery(), after cursor: EntryCursor? = nil) async throws(QuireError)
        -> EntryPage
    {
        try await perform { () throws(QuireError) -> EntryPage in try self.search(text, matching: query, after: cursor) }
    }

    /// Entry `id` as it reads now (its winning revision, deleted or not), or
    /// nil when the vault has no such entry, on this handle's executor.
    ///
    /// - Throws: ``QuireError``: `.damaged`, `.unavailable` or `.outOfSpace` when the file cannot
    ///   be read; `.cancelled` (`cancelled`).
    public func entry(_ id: EntryID) async throws(QuireError) -> EntrySnapshot? {
        try await perform { () throws(QuireError) -> EntrySnapshot? in try self.entry(id) }
    }

    /// The whole content of attachment `blob` (a photo, say), read on this
    /// handle's executor and checked chunk by chunk (`Spec/format.md §7`);
    /// cancelling stops at the next chunk. For the CLI and the tests: an app
    /// collects ``attachmentStream(_:)`` or decrypts to a file with
    /// ``writeAttachment(_:to:)``, the one way each to read an attachment.
    ///
    /// - Returns: the bytes, ``BlobManifest/byteCount`` of them.
    /// - Throws: `.notFound` (`blob_not_found`), a container error (`.damaged`, `.unavailable`,
    ///   `.outOfSpace`…) for a damaged chunk or I/O, `.cancelled` (`cancelled`).
    @_spi(Format)
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

    /// Merges the copy at `copyPath` (a sync tool's conflict copy, an older
    /// version the platform kept, a backup) into this vault, on this
    /// handle's executor and with its credential, then reads the vault
    /// again (`Spec/merge.md §3`). The copy itself is left where it is.
    /// Cancelling stops the merge at the next frame it writes; the vault is
    /// left as it was and the temporary file removed.
    ///
    /// - Returns: what the merge did (``MergeReport/changed`` false when the
    ///   vault already held everything the copy holds).
    /// - Throws: ``QuireError`` (nothing is changed then):
    ///   `.programmerError` for a copy of another vault; `.unavailable` or
    ///   `.damaged` when the copy cannot be read; `.wrongCredential` when
    ///   the credential does not open it; `.readOnly` when this credential
    ///   was removed; `.damaged` (`merge_refused`) when the merge would lose
    ///   records it cannot vouch for; `.busy` (`locked`); `.cancelled` (`cancelled`).
    @discardableResult
    public func merge(copyAt copyPath: String) async throws(QuireError) -> MergeReport {
        try await perform { () throws(QuireError) -> MergeReport in try self.merge(copyAt: copyPath) }
    }

    /// Folds the copies of this vault beside it (``conflictCopies()``)
    /// into it, on this handle's executor, then reads the vault again
    /// (`Spec/merge.md §4`). Only a copy whose name only a sync tool gives
    /// a file — Syncthing's `.sync-conflict-…`, Dropbox's, Nextcloud's or
    /// Unison's conflict names, which hold a date — is merged: deleted when
    /// the vault then holds all of it, set aside when it can never be
    /// taken in whole. Every other copy — iCloud Drive's `Journal 2.quire`,
    /// Google Drive's `Journal (1).quire`, OneDrive's `Journal-NAME.quire`,
    /// a backup — is never merged here, since merging a backup brings back
    /// what the vault dropped on purpose; its entry's
    /// ``FoldReport/Copy/keptBecause`` says what it holds:
    /// ``FoldReport/KeptReason/notAConflictCopy`` when it has entries the
    /// vault lacks (ask the person, and ``merge(copyAt:)`` it if they say
    /// so), ``FoldReport/KeptReason/nameNotDistinctive`` when the vault
    /// holds all of it. Cancelling stops the copy being merged; copies
    /// merged before stay merged.
    ///
    /// - Returns: what became of each copy; a failure on one copy is in its
    ///   entry (``FoldReport/Copy/error``).
    /// - Throws: ``QuireError``: `.unavailable` when the folder cannot be
    ///   listed or the vault's header read; `.cancelled` (`cancelled`).
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

    /// Compacts the vault, on this handle's executor (`Spec/merge.md §6`):
    /// rewrites the file with each entry's current revisions (every
    /// tombstone too), the attachments they name, the newest profile and
    /// every trusted keyring, leaving out older revisions and unreferenced
    /// attachments, then reads the vault again. The old file stays whole
    /// until the new one replaces it. Cancelling stops the rewrite at the
    /// next record; the vault is left as it was and the temporary file
    /// removed.
    ///
    /// - Returns: the file's size before and after.
    /// - Throws: ``QuireError``: `.damaged` (`compaction_refused`) when the
    ///   vault has damaged records, or records in commits that do not
    ///   verify, that compacting would drop (nothing is changed: verify,
    ///   fold its conflict copies or merge an intact copy first);
    ///   `.busy` (`locked`) while another writer holds it; `.readOnly` when
    ///   this credential cannot write; `.unavailable`, `.outOfSpace` when
    ///   the storage fails; `.cancelled` (`cancelled`).
    @discardableResult
    public func compact() async throws(QuireError) -> CompactionReport {
        try await compact(CompactionOptions())
    }

    /// Compacts the vault with `options` (history kept, the tombstone
    /// horizon, a rekey, dropping what does not verify), on this handle's
    /// executor: ``compact(_:now:)`` in `async` form. Cancelling stops the
    /// rewrite at the next record; the vault is left as it was and the
    /// temporary file removed.
    ///
    /// - Parameter now: the time of the compaction (what the tombstone
    ///   horizon counts back from), stored to the millisecond.
    /// - Throws: as ``compact(_:now:)``; `.cancelled` (`cancelled`).
    @discardableResult
    @_spi(Format)
    public func compact(_ options: CompactionOptions, now: Date = Date()) async throws(QuireError) -> CompactionReport {
        let ms = now.millisecondsSince1970
        return try await perform { () throws(QuireError) -> CompactionReport in try self.compact(options, now: ms) }
    }

    /// Checks every byte of the vault that this credential can check, on
    /// this handle's executor: both header copies, every frame header,
    /// every commit, every keyring, every record (opened and decoded) and
    /// every attachment (every chunk opened, sizes and blob ids
    /// recomputed). Never modifies the file. Intact records stay readable
    /// whatever else is damaged; the report names each one that is not.
    /// Cancelling stops at the next record or attachment chunk.
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
    /// executor. Prefer ``entries(matching:after:)``, which pages.
    ///
    /// - Throws: ``QuireError``: `.damaged`, `.unavailable` or `.outOfSpace` when the file cannot
    ///   be read; `.cancelled` (`cancelled`).
    @_spi(Format)
    public func entries() async throws(QuireError) -> [EntrySnapshot] {
        try await perform { () throws(QuireError) -> [EntrySnapshot] in try self.entries() }
    }

    /// Every deleted entry, newest deletion first, on this handle's
    /// executor (what a "Recently deleted" screen lists): each as it was
    /// before the deletion (``DeletedEntry/body``; nil when a compaction
    /// left only the deletion). Bring one back with
    /// `vault.commit { tx in try tx.restore(row.id) }`.
    ///
    /// - Throws: ``QuireError``: `.damaged`, `.unavailable` or `.outOfSpace` when the file cannot
    ///   be read; `.cancelled` (`cancelled`).
    public func deletedEntries() async throws(QuireError) -> [DeletedEntry] {
        try await perform { () throws(QuireError) -> [DeletedEntry] in try self.deletedEntries() }
    }

    /// Every revision of entry `id`, oldest clock first, on this handle's
    /// executor (what a conflict screen shows beside the winner); empty
    /// when the vault has no such entry.
    ///
    /// - Throws: ``QuireError``: `.damaged`, `.unavailable` or `.outOfSpace` when the file cannot
    ///   be read; `.cancelled` (`cancelled`).
    public func revisions(of id: EntryID) async throws(QuireError) -> [EntryRevision] {
        try await perform { () throws(QuireError) -> [EntryRevision] in try self.revisions(of: id) }
    }

    /// The manifest of attachment `blob` (its size and media type), on this
    /// handle's executor. Its bytes: ``attachmentBytes(_:)``. For the CLI
    /// and the tests: an app has the media type and file name in the
    /// entry's ``AttachmentReference``.
    ///
    /// - Throws: ``QuireError``: `.notFound` (`blob_not_found`) when the
    ///   vault has no such attachment; `.cancelled` (`cancelled`).
    @_spi(Format)
    public func attachment(_ blob: BlobID) async throws(QuireError) -> BlobManifest {
        try await perform { () throws(QuireError) -> BlobManifest in try self.attachment(blob) }
    }

    /// The vault's profile (its name and description) as the newest profile
    /// record says, or nil when it has none, on this handle's executor.
    ///
    /// - Throws: ``QuireError``: `.damaged`, `.unavailable` or `.outOfSpace` when the file cannot
    ///   be read; `.cancelled` (`cancelled`).
    public func profile() async throws(QuireError) -> Profile? {
        try await perform { () throws(QuireError) -> Profile? in try self.profile() }
    }

    /// The records reading this vault's entries could not give back
    /// (``UnreadRecords``: damaged, of an unknown kind, sealed under a key
    /// this credential does not hold), on this handle's executor. Uses the
    /// entry index (built now if it is not loaded). On a handle whose
    /// queries answer from the index cache, damage done to the file after
    /// the cache was written, in a record nothing has read since (an
    /// attachment's chunks), is not counted: it is found when that record
    /// is read or by ``verify()`` (see ``UnreadRecords``).
    ///
    /// - Throws: ``QuireError``: `.damaged`, `.unavailable` or `.outOfSpace` when the file cannot
    ///   be read; `.cancelled` (`cancelled`).
    public func unreadRecords() async throws(QuireError) -> UnreadRecords {
        try await perform { () throws(QuireError) -> UnreadRecords in try self.unreadRecords() }
    }

    /// The conflict copies a sync tool left beside the vault (files in its
    /// folder whose header names this vault), on this handle's executor
    /// (it reads the folder and each candidate's header;
    /// `Spec/merge.md §2`).
    ///
    /// - Throws: ``QuireError``: `.unavailable` when the folder cannot be
    ///   listed or the vault's header read; `.cancelled` (`cancelled`).
    public func conflictCopies() async throws(QuireError) -> [ConflictCopy] {
        try await perform { () throws(QuireError) -> [ConflictCopy] in try self.conflictCopies() }
    }

    /// Uses `store` for this device's memory of the vault (the keyring
    /// heads it trusts, for the rollback check of `Spec/keys.md §7`), and
    /// checks it now, on this handle's executor.
    ///
    /// - Throws: ``QuireError``: what the store throws; `.cancelled` (`cancelled`).
    @_spi(Format)
    public func remember(in store: any DeviceKeyStore) async throws(QuireError) {
        try await perform { () throws(QuireError) -> Void in try self.remember(in: store) }
    }

    /// Who holds keys now (devices, the recovery key, passphrases, escrow
    /// keys, removed members), as the trusted keyrings say, on this
    /// handle's executor.
    ///
    /// - Throws: ``QuireError``: `.damaged` when no keyring is trusted;
    ///   `.cancelled` (`cancelled`).
    public func keyState() async throws(QuireError) -> KeyState {
        try await perform { () throws(QuireError) -> KeyState in try self.keyState() }
    }

    /// Who can decrypt which records, in plain words (`Spec/keys.md §8`),
    /// on this handle's executor. ``PrivacyStatement/text`` is the printed
    /// form.
    ///
    /// - Throws: ``QuireError``: `.damaged` when no keyring is trusted; `.damaged`,
    ///   `.unavailable` or `.outOfSpace` when the file cannot be read (the profile); `.cancelled`
    ///   (`cancelled`).
    public func privacyStatement() async throws(QuireError) -> PrivacyStatement {
        try await perform { () throws(QuireError) -> PrivacyStatement in try self.privacyStatement() }
    }

    /// Enrolls the device whose code the user typed (its
    /// ``DeviceIdentity/code``, after they compared its fingerprint on both
    /// screens), on this handle's executor: a keyring of a new epoch with it
    /// (`Spec/keys.md §6`).
    ///
    /// - Parameters:
    ///   - code: the device code the new device shows.
    ///   - name: a name for it, unique in the vault, 1–64 characters.
    ///   - now: the time of the keyring, stored to the millisecond.
    /// - Returns: the new member.
    /// - Throws: ``QuireError``: `.wrongCredential` (`device_code_invalid`) for a mistyped code;
    ///   `.readOnly` (`operation_refused`) for a name already taken or a device already enrolled;
    ///   `.wrongCredential`, `.readOnly` (a passphrase or escrow key cannot sign; this device was
    ///   removed), `.needsMerge` (`rolled_back`, `commit_tampered`, a recovery key to choose) or
    ///   `.damaged` when this handle cannot change the keys; `.busy` (`locked`) while another
    ///   writer holds the vault; `.cancelled` (`cancelled`) before it started (nothing was
    ///   written).
    @discardableResult
    public func enrollDevice(code: String, name: String, now: Date = Date()) async throws(QuireError) -> KeyringMember {
        let ms = now.millisecondsSince1970
        return try await perform { () throws(QuireError) -> KeyringMember in try self.enrollDevice(code: code, name: name, now: ms) }
    }

    /// Removes the enrolled device called exactly `name` (names are
    /// compared as written), on this handle's executor: a keyring of a new
    /// epoch without it (`Spec/keys.md §6`). The device keeps what it could
    /// already read until the vault is compacted with a rekey; it reads
    /// nothing written after.
    ///
    /// - Parameter now: the time of the keyring, stored to the millisecond.
    /// - Returns: the member removed.
    /// - Throws: ``QuireError``: `.readOnly` (`operation_refused`) when no
    ///   device has that name or more than one has (devices enrolled on two
    ///   copies at once: remove it by its key with
    ///   ``removeDevice(publicKey:keepingEnrolled:now:)``); `.wrongCredential`, `.readOnly`,
    ///   `.needsMerge` or `.damaged` when this handle cannot change the
    ///   keys; `.cancelled` (`cancelled`) before it started (nothing was
    ///   written).
    @discardableResult
    @_spi(Format)
    public func removeDevice(named name: String, now: Date = Date()) async throws(QuireError) -> KeyringMember {
        try await removeDevice(named: name, now: now, replacement: .mine)
    }

    /// Removes the enrolled device called exactly `name`, on this handle's
    /// executor, saying whose replacement of the recovery key it was when
    /// the device replaced it. For the CLI, which takes a name on the
    /// command line; an app removes a member by its key,
    /// ``removeDevice(publicKey:keepingEnrolled:now:)``.
    ///
    /// - Parameter now: the time of the keyring, stored to the millisecond.
    /// - Throws: as the synchronous form; `.cancelled` (`cancelled`).
    @discardableResult
    @_spi(Format)
    public func removeDevice(named name: String, now: Date = Date(), replacement: RecoveryReplacementOwner) async throws(QuireError)
        -> KeyringMember
    {
        let ms = now.millisecondsSince1970
        return try await perform { () throws(QuireError) -> KeyringMember in
            try self.removeDevice(named: name, now: ms, replacement: replacement)
        }
    }

    /// Removes the enrolled device whose Ed25519 public key is `publicKey`
    /// (32 bytes), on this handle's executor:
    /// ``removeDevice(publicKey:keepingEnrolled:now:)`` keeping none of the
    /// devices it enrolled (for the CLI and the tests: an app says which it
    /// keeps, even when that is none).
    ///
    /// - Parameter now: the time of the keyring, stored to the millisecond.
    /// - Returns: the member removed.
    /// - Throws: as ``removeDevice(publicKey:keepingEnrolled:now:)``.
    @discardableResult
    @_spi(Format)
    public func removeDevice(publicKey: [UInt8], now: Date = Date()) async throws(QuireError) -> KeyringMember {
        try await removeDevice(publicKey: publicKey, now: now, replacement: .mine)
    }

    /// Removes the enrolled device whose Ed25519 public key is `publicKey`
    /// (32 bytes), on this handle's executor: a keyring of a new epoch
    /// without it (`Spec/keys.md §6`). The device is named by its key,
    /// never by its display name (two devices may share one): pass a
    /// device's ``KeyringMember/publicKey`` from ``keyState()``'s
    /// ``KeyState/devices`` (shown to people by its name and fingerprint),
    /// or a ``DeviceIdentity/publicKey``. The device keeps what it could
    /// already read until the vault is compacted with a rekey; it reads
    /// nothing written after, and opens the vault read-only.
    ///
    /// Opened with the recovery key (a lost device), it also removes every
    /// device that only the removed device (or one it enrolled) enrolled,
    /// but those in `keepingEnrolled`: the file cannot tell a thief's
    /// puppet from a device the user enrolled on the lost one
    /// (`Spec/keys.md §6.3`). List them first with ``devicesEnrolled(by:)``
    /// and ask, showing each name and fingerprint. Opened by a device, it
    /// removes only the device named (pass `[]`).
    ///
    /// - Parameter publicKey: the member's Ed25519 public key, 32 bytes.
    /// - Parameter keepingEnrolled: the Ed25519 keys of the devices to keep,
    ///   among those ``devicesEnrolled(by:)`` lists (`[]`: none); the
    ///   others go with it.
    /// - Parameter now: the time of the keyring, stored to the millisecond.
    /// - Returns: the member removed.
    /// - Throws: ``QuireError``: `.readOnly` (`operation_refused`) when no
    ///   enrolled device has that key, or when a kept device cannot be kept
    ///   (the lost device removed it, or its enrolment builds on such a
    ///   removal); `.wrongCredential`, `.readOnly`, `.needsMerge` or
    ///   `.damaged` when this handle cannot change the keys; `.cancelled`
    ///   (`cancelled`) before it started (nothing was written).
    @discardableResult
    public func removeDevice(publicKey: [UInt8], keepingEnrolled: Set<[UInt8]>, now: Date = Date()) async throws(QuireError)
        -> KeyringMember
    {
        let ms = now.millisecondsSince1970
        return try await perform { () throws(QuireError) -> KeyringMember in
            try self.removeDevice(publicKey: publicKey, now: ms, replacement: .mine, keepingEnrolled: keepingEnrolled)
        }
    }

    /// The current devices that a removal of the devices with Ed25519 keys
    /// `publicKeys` by the recovery key removes with them unless kept: those
    /// only they, or a device they enrolled, enrolled (`Spec/keys.md §6.3`).
    /// Empty when there are none, and for a removal by a device, which
    /// removes only the device named.
    ///
    /// - Throws: `.damaged` or `.cancelled` (`cancelled`) when the key
    ///   state cannot be read.
    public func devicesEnrolled(by publicKeys: Set<[UInt8]>) async throws(QuireError) -> [KeyringMember] {
        try await perform { () throws(QuireError) -> [KeyringMember] in try self.devicesEnrolled(by: publicKeys) }
    }

    /// Removes the enrolled device whose Ed25519 public key is `publicKey`,
    /// on this handle's executor, saying whose replacement of the recovery
    /// key it was when the device replaced it:
    /// ``removeDevice(publicKey:now:replacement:)`` in `async` form.
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
    @_spi(Format)
    public func removeDevice(publicKey: [UInt8], now: Date = Date(), replacement: RecoveryReplacementOwner) async throws(QuireError)
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
    @_spi(Format)
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
    @_spi(Format)
    public func lockDown(removingDevicesNamed names: [String], now: Date = Date()) async throws(QuireError) -> [KeyringMember] {
        let ms = now.millisecondsSince1970
        return try await perform { () throws(QuireError) -> [KeyringMember] in try self.lockDown(removingDevicesNamed: names, now: ms) }
    }

    /// Rotates the epoch key, on this handle's executor: ``rotateKeys(now:)``
    /// in `async` form.
    ///
    /// - Parameter now: the time of the keyring, stored to the millisecond.
    /// - Throws: as ``rotateKeys(now:)``; `.cancelled` (`cancelled`).
    @_spi(Format)
    public func rotateKeys(now: Date = Date()) async throws(QuireError) {
        let ms = now.millisecondsSince1970
        try await perform { () throws(QuireError) -> Void in try self.rotateKeys(now: ms) }
    }

    /// Sets, changes or removes the passphrase (nil removes it), on this
    /// handle's executor: a keyring of a new epoch (`Spec/keys.md §6`); an
    /// old passphrase still reads what was written before it, until the
    /// vault is compacted with a rekey. The cost is libsodium's moderate
    /// Argon2id cost (3 passes, 256 MiB; the derivation takes about a
    /// second).
    ///
    /// The library copies the UTF-8 bytes of `passphrase` into guarded
    /// memory and wipes the intermediate copy it makes; it cannot wipe the
    /// string itself (a Swift `String` offers no way to overwrite its
    /// storage), so drop it as soon as this returns.
    ///
    /// - Parameters:
    ///   - passphrase: the new passphrase (mapped to Unicode NFC before
    ///     Argon2id, `Spec/keys.md §2.3`), or nil to remove it.
    ///   - now: the time of the keyring, stored to the millisecond.
    /// - Throws: ``QuireError``: `.wrongCredential`, `.readOnly` (a passphrase or escrow key cannot sign; this
    ///   device was removed), `.needsMerge` (`rolled_back`, `commit_tampered`, a recovery key to
    ///   choose) or `.damaged` when this handle cannot change the keys; `.busy` (`locked`) while
    ///   another writer holds the vault; `.cancelled` (`cancelled`).
    public func setPassphrase(_ passphrase: String?, now: Date = Date()) async throws(QuireError) {
        let guarded = try passphrase.map { (text: String) throws(QuireError) -> SecureBytes in try SecureBytes.guarded(utf8: text) }
        try await setPassphrase(guarded: guarded, now: now)
    }

    /// ``setPassphrase(_:now:)`` with the passphrase in guarded memory and
    /// the Argon2id cost given (the CLI, vectors and tests): `opsLimit`
    /// passes (1…8), `memLimitBytes` bytes (8 KiB…1 GiB).
    ///
    /// - Throws: as ``setPassphrase(_:now:)``; `.damaged`
    ///   (`kdf_limits_exceeded`) for a cost outside the limits.
    @_spi(Crypto)
    public func setPassphrase(
        guarded passphrase: SecureBytes?, opsLimit: UInt64 = Argon2id.moderateOpsLimit,
        memLimitBytes: UInt64 = Argon2id.moderateMemLimitBytes, now: Date = Date()
    ) async throws(QuireError) {
        let ms = now.millisecondsSince1970
        try await perform { () throws(QuireError) -> Void in
            try self.setPassphrase(passphrase, opsLimit: opsLimit, memLimitBytes: memLimitBytes, now: ms)
        }
    }

    /// Accepts this file as it is after a suspected rollback
    /// (``keyWarnings`` has `rollback_suspected`), on this handle's
    /// executor: what the device remembers is replaced by what the file
    /// holds now, and writing is allowed again (`Spec/keys.md §7`). Use it
    /// only for a file restored on purpose; otherwise merge the newer copy
    /// back.
    ///
    /// - Throws: ``QuireError``: what the device key store throws; `.cancelled` (`cancelled`).
    public func acceptRollback() async throws(QuireError) {
        try await perform { () throws(QuireError) -> Void in try self.acceptRollback() }
    }

    /// Accepts the tampered commits this file holds now (`Spec/keys.md §7`),
    /// on this handle's executor: writing, refused with `.needsMerge`
    /// (`commit_tampered`) while the file holds one, goes on over them;
    /// their records stay unverified and every reader still reports them. A
    /// commit tampered later is refused again. Use it when no copy holding
    /// the commits is left to merge back.
    ///
    /// - Returns: how many tampered commits were accepted now (0 when the
    ///   file holds none, or all were accepted before).
    /// - Throws: ``QuireError``: what the device key store throws; `.cancelled` (`cancelled`).
    @discardableResult
    public func acceptTampered() async throws(QuireError) -> Int {
        try await perform { () throws(QuireError) -> Int in try self.acceptTampered() }
    }

    /// The recovery keys that concurrent replacements left among the
    /// keyring heads, when there is more than one (`Spec/keys.md §6.9`);
    /// empty otherwise. The next key change or write refuses with
    /// `.needsMerge` (`recovery_key_choice_needed`) until
    /// ``keepRecoveryKey(_:)`` says which to keep: show these (who made
    /// each, and when) and ask which recovery code the user holds.
    ///
    /// - Throws: ``QuireError``: `.damaged` when no keyring is trusted;
    ///   `.cancelled` (`cancelled`).
    public func recoveryKeyChoices() async throws(QuireError) -> [RecoveryKeyChoice] {
        try await perform { () throws(QuireError) -> [RecoveryKeyChoice] in try self.recoveryKeyChoices() }
    }

    /// Says which recovery key to keep when a change joins concurrent
    /// replacements of the recovery key: one of ``recoveryKeyChoices()``,
    /// by its public key (`Spec/keys.md §6.9`). Kept for this handle.
    ///
    /// - Throws: ``QuireError``: `.readOnly` (`operation_refused`) when
    ///   `publicKey` is none of the choices; `.damaged` when no keyring is
    ///   trusted; `.cancelled` (`cancelled`).
    public func keepRecoveryKey(_ publicKey: [UInt8]) async throws(QuireError) {
        try await perform { () throws(QuireError) -> Void in try self.keepRecoveryKey(publicKey) }
    }
}
