@_spi(Format) public import QuireFormat
public import QuireKeys
public import QuireSync
public import QuireSystem

// Swift concurrency: an `async` form of every call that can block (open,
// create, commit, refresh, reload, queries, merge, fold, compact, verify).
// Each runs on the vault's own serial executor (``VaultWorker``, a
// DispatchQueue per handle), never on the caller's actor nor blocking a
// thread of the cooperative pool; calls on one handle run one at a time,
// in the order they were made. Cancelling the calling `Task` stops the work
// at the next record or chunk (``VaultError/cancelled``); a cancelled write
// commits nothing.

/// What a progress handler answers: go on, or stop the operation (which
/// then throws ``VaultError/cancelled``, as when its `Task` is cancelled).
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
}

extension Vault {
    /// Runs `work` on this handle's serial executor (see the top of this
    /// file).
    ///
    /// - Throws: ``VaultError/cancelled`` when the task was cancelled
    ///   before or during `work`; otherwise what `work` throws.
    package func perform<T: Sendable>(_ work: @Sendable () throws(VaultError) -> T) async throws(VaultError) -> T {
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
    /// - Throws: as the synchronous form; ``VaultError/cancelled`` when the
    ///   task was cancelled (nothing was opened).
    public static func open(
        at path: String, credential: Credential, writable: Bool = true, random: any RandomSource = SystemRandom(),
        options: WriteOptions = WriteOptions(), retainsEntryBodies: Bool = true
    ) async throws(VaultError) -> Vault {
        try await VaultWorker(label: "quire.open").run { () throws(VaultError) -> Vault in
            try open(
                at: path, credential: credential, writable: writable, random: random, options: options,
                retainsEntryBodies: retainsEntryBodies)
        }
    }

    /// Opens the vault at `path` with this device's key from `store`, off the
    /// caller's executor: ``open(at:store:writable:random:options:retainsEntryBodies:)``
    /// in `async` form.
    ///
    /// - Throws: as the synchronous form; ``VaultError/cancelled``.
    public static func open(
        at path: String, store: any DeviceKeyStore, writable: Bool = true, random: any RandomSource = SystemRandom(),
        options: WriteOptions = WriteOptions(), retainsEntryBodies: Bool = true
    ) async throws(VaultError) -> Vault {
        try await VaultWorker(label: "quire.open").run { () throws(VaultError) -> Vault in
            try open(at: path, store: store, writable: writable, random: random, options: options, retainsEntryBodies: retainsEntryBodies)
        }
    }

    /// Creates a new vault at `path`, off the caller's executor:
    /// ``create(at:setup:random:options:)`` in `async` form.
    ///
    /// - Throws: as the synchronous form; ``VaultError/cancelled`` (no file
    ///   is left at `path`).
    public static func create(
        at path: String, setup: VaultSetup, random: any RandomSource = SystemRandom(), options: WriteOptions = WriteOptions()
    ) async throws(VaultError) -> Vault {
        try await VaultWorker(label: "quire.create").run { () throws(VaultError) -> Vault in
            try create(at: path, setup: setup, random: random, options: options)
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
    /// - Throws: ``VaultError`` as ``commit(_:)`` (``VaultError/cancelled``
    ///   when cancelled); otherwise whatever `build` throws, unchanged.
    public func commit<T: Sendable>(_ build: @Sendable (VaultTransaction) throws -> T) async throws -> T {
        try await perform(
            { () throws -> T in
                var result: T?
                try self.commit { tx in result = try build(tx) }
                guard let result else { throw VaultError.format(.notWritable(reason: "the commit was abandoned")) }
                return result
            }, cancelled: { VaultError.cancelled })
    }

    /// Reads what other processes appended and says what changed, on this
    /// handle's executor: ``refresh()`` in `async` form.
    ///
    /// - Throws: as ``refresh()``; ``VaultError/cancelled`` when the task
    ///   was cancelled before it started (a refresh that started finishes:
    ///   its cost follows what was appended).
    public func refresh() async throws(VaultError) -> VaultChangeSet {
        try await perform { () throws(VaultError) -> VaultChangeSet in try self.refresh() }
    }

    /// Opens the path again, on this handle's executor: ``reload()`` in
    /// `async` form.
    ///
    /// - Throws: as ``reload()``; ``VaultError/cancelled``.
    public func reload() async throws(VaultError) {
        try await perform { () throws(VaultError) -> Void in try self.reload() }
    }

    /// A page of entries, on this handle's executor:
    /// ``entries(matching:after:)`` in `async` form. The first query of a
    /// handle builds its index (seconds on a large journal); that no longer
    /// blocks the caller.
    ///
    /// - Throws: as the synchronous form; ``VaultError/cancelled``.
    public func entries(matching query: EntryQuery, after cursor: EntryCursor? = nil) async throws(VaultError) -> EntryPage {
        try await perform { () throws(VaultError) -> EntryPage in try self.entries(matching: query, after: cursor) }
    }

    /// A page of search results, on this handle's executor:
    /// ``search(_:matching:after:)`` in `async` form.
    ///
    /// - Throws: as the synchronous form; ``VaultError/cancelled``.
    public func search(_ text: String, matching query: EntryQuery = EntryQuery(), after cursor: EntryCursor? = nil) async throws(VaultError)
        -> EntryPage
    {
        try await perform { () throws(VaultError) -> EntryPage in try self.search(text, matching: query, after: cursor) }
    }

    /// One entry, on this handle's executor: ``entry(_:)`` in `async` form.
    ///
    /// - Throws: as the synchronous form; ``VaultError/cancelled``.
    public func entry(_ id: EntryID) async throws(VaultError) -> EntrySnapshot? {
        try await perform { () throws(VaultError) -> EntrySnapshot? in try self.entry(id) }
    }

    /// The whole content of attachment `blob` (a photo, say), read on this
    /// handle's executor and checked chunk by chunk (`Spec/format.md §7`);
    /// cancelling stops at the next chunk.
    ///
    /// - Returns: the bytes, ``BlobManifest/byteCount`` of them.
    /// - Throws: ``VaultError/attachmentNotFound(_:)``, ``VaultError/format(_:)``
    ///   for a damaged chunk or I/O, ``VaultError/cancelled``.
    public func attachmentBytes(_ blob: BlobID) async throws(VaultError) -> [UInt8] {
        try await perform { () throws(VaultError) -> [UInt8] in
            let reader = try self.openAttachment(blob)
            var out: [UInt8] = []
            out.reserveCapacity(Int(min(reader.manifest.byteCount, 1 << 30)))
            var buffer = [UInt8](repeating: 0, count: Limits.chunkByteCount)
            while true {
                if VaultCancellation.isRequested { throw .cancelled }
                let n: Int
                do throws(FormatError) {
                    n = try buffer.withMutableBytes { (raw: UnsafeMutableRawBufferPointer) throws(FormatError) -> Int in
                        try reader.read(into: raw)
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
    /// - Throws: as ``merge(copyAt:)``; ``VaultError/cancelled``.
    @discardableResult
    public func merge(copyAt copyPath: String) async throws(VaultError) -> MergeReport {
        try await perform { () throws(VaultError) -> MergeReport in try self.merge(copyAt: copyPath) }
    }

    /// Merges every conflict copy beside the vault, on this handle's
    /// executor: ``foldConflictCopies()`` in `async` form. Cancelling stops
    /// the copy being merged; copies merged before stay merged.
    ///
    /// - Throws: as ``foldConflictCopies()``; ``VaultError/cancelled``.
    @discardableResult
    public func foldConflictCopies() async throws(VaultError) -> FoldReport {
        try await perform { () throws(VaultError) -> FoldReport in
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
    /// - Parameter now: milliseconds since the Unix epoch, UTC.
    /// - Throws: as ``compact(_:now:)``; ``VaultError/cancelled``.
    @discardableResult
    public func compact(_ options: CompactionOptions = CompactionOptions(), now: Int64 = ProcessStats.wallClockMilliseconds())
        async throws(VaultError)
        -> CompactionReport
    {
        try await perform { () throws(VaultError) -> CompactionReport in try self.compact(options, now: now) }
    }

    /// Checks every byte this credential can check, on this handle's
    /// executor: ``verify()`` in `async` form, stopping at the next record
    /// or attachment chunk when the task is cancelled.
    ///
    /// - Throws: ``VaultError/cancelled`` only (damage is in the report).
    public func verify() async throws(VaultError) -> VerifyReport {
        try await perform { () throws(VaultError) -> VerifyReport in try self.verifyReport(cancellable: true) }
    }
}
