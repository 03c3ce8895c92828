import Dispatch
@_spi(Format) import QuireFormat
import QuireSystem

/// Watches a vault's file and delivers what other processes change in it
/// as ``VaultChangeSet``s: an app keeps its timeline current without
/// polling. Made for a ``Vault`` handle; each delivery is
/// ``Vault/refresh()``'s answer, so its cost follows what was appended.
///
/// The file and its folder are watched through the platform shim
/// (``FileWatcher``: inotify on Linux, a dispatch source elsewhere), so a
/// sync tool that renames a new copy over the path is seen too. Events
/// are coalesced: the first starts a quiet period (`coalescing`) and one
/// refresh reads everything that arrived in it. Empty change sets (an
/// unrelated file in the folder) are not delivered; this handle's own
/// writes are delivered as they commit by the ``VaultEvent`` form
/// (``init(vault:coalescing:onEvent:)``, ``Vault/events(coalescing:)``),
/// which also survives failed refreshes and reports conflict copies.
///
/// ```swift
/// let observer = try VaultObserver(vault: vault) { result in
///     if case .success(let changes) = result { timeline.apply(changes) }
/// }
/// // …
/// observer.cancel()
/// ```
///
/// Each change is delivered once per handle (``Vault/refresh()`` consumes
/// it): one observer per handle; the handle's ``Vault/events(coalescing:)``
/// streams get every change whoever reads it. For Swift concurrency use
/// ``Vault/changes(coalescing:)`` or ``Vault/events(coalescing:)``. It is
/// `@unchecked Sendable` because its mutable state (whether a refresh is
/// scheduled, the copies reported) is touched only on its serial queue,
/// and `watcher` and `listener` are set once in `init` before the object
/// is shared, which the compiler cannot check.
@_spi(Format) public final class VaultObserver: @unchecked Sendable {
    /// What a delivery carries: the changes, or why refresh failed (the
    /// watch goes on; the next change tries again).
    public typealias Delivery = Result<VaultChangeSet, QuireError>

    let vault: Vault
    let queue: DispatchQueue
    let coalescing: DispatchTimeInterval
    let deliver: @Sendable (VaultEvent) -> Void
    /// Whether this handle's own commits and conflict copies are reported
    /// (the ``init(vault:coalescing:onEvent:)`` form).
    let reportsEverything: Bool
    /// Whether this is the watch the handle's ``Vault/events(coalescing:)``
    /// streams share: then ``Vault/refresh()`` broadcasts the changes it
    /// reads (whoever called it), and this watch does not deliver them a
    /// second time.
    let shared: Bool
    /// Set once the watcher exists (on init).
    private var watcher: FileWatcher?
    /// The token of this observer's listener of local commits, if any.
    private var listener: Int?
    /// True while a refresh is scheduled (on ``queue`` only).
    private var scheduled = false
    /// The conflict copies already reported (on ``queue`` only).
    private var knownCopies: Set<String> = []

    /// Starts watching `vault`'s file, and refreshes once at once (a change
    /// since the handle's baseline is delivered straight away).
    ///
    /// - Parameters:
    ///   - coalescing: how long to gather events before one refresh;
    ///     default 50 ms.
    ///   - onChange: called on a private serial queue with each non-empty
    ///     change set another process wrote, or with the error a refresh
    ///     threw (a container error (`.damaged`, `.unavailable`, `.outOfSpace`…) for I/O or a missing file,
    ///     a key error (`.wrongCredential`, `.readOnly`, `.needsMerge`, `.damaged`)). This handle's own writes are not
    ///     delivered; ``init(vault:coalescing:onEvent:)`` delivers them too.
    /// - Throws: a container error (`.damaged`, `.unavailable`, `.outOfSpace`…) (``FormatError/io(_:)``) when the
    ///   system refuses the watch.
    public convenience init(vault: Vault, coalescing: Duration = .milliseconds(50), onChange: @escaping @Sendable (Delivery) -> Void)
        throws(QuireError)
    {
        try self.init(vault: vault, coalescing: coalescing, everything: false) { event in
            switch event {
            case .changed(let changes, _): onChange(.success(changes))
            case .refreshFailed(let error): onChange(.failure(error))
            case .conflictCopiesAppeared: break
            }
        }
    }

    /// Starts watching `vault`'s file and its folder, and delivers every
    /// ``VaultEvent``: what other processes wrote, what this handle wrote
    /// (``VaultEvent/Origin/thisHandle``, at once, with the exact change
    /// set), a refresh that failed (the watch goes on), and conflict copies
    /// a sync tool put beside the vault (those there already are reported
    /// first).
    ///
    /// - Parameters:
    ///   - coalescing: how long to gather file events before one refresh;
    ///     default 50 ms.
    ///   - onEvent: called on a private serial queue, one event at a time.
    /// - Throws: a container error (`.damaged`, `.unavailable`, `.outOfSpace`…) (``FormatError/io(_:)``) when the
    ///   system refuses the watch.
    public convenience init(vault: Vault, coalescing: Duration = .milliseconds(50), onEvent: @escaping @Sendable (VaultEvent) -> Void)
        throws(QuireError)
    {
        try self.init(vault: vault, coalescing: coalescing, everything: true, deliver: onEvent)
    }

    /// The watch shared by a handle's ``Vault/events(coalescing:)`` streams
    /// (see ``shared``).
    convenience init(vault: Vault, coalescing: Duration, shared: Bool, deliver: @escaping @Sendable (VaultEvent) -> Void)
        throws(QuireError)
    {
        try self.init(vault: vault, coalescing: coalescing, everything: true, shared: shared, deliver: deliver)
    }

    init(
        vault: Vault, coalescing: Duration, everything: Bool, shared: Bool = false,
        deliver: @escaping @Sendable (VaultEvent) -> Void
    ) throws(QuireError) {
        self.vault = vault
        self.shared = shared
        queue = DispatchQueue(label: "quire.vault-observer")
        let (seconds, attoseconds) = coalescing.components
        self.coalescing = .nanoseconds(Int(max(0, seconds) * 1_000_000_000 + attoseconds / 1_000_000_000))
        self.deliver = deliver
        reportsEverything = everything
        let path = vault.file.path
        do {
            watcher = try FileWatcher(path: path, queue: queue, includingSiblings: everything) { [weak self] in self?.changed() }
        } catch {
            throw .format(.io(error))
        }
        if everything {
            // Registered before the first refresh: a commit from now on is
            // reported by its writer (here), never by a refresh.
            listener = vault.concurrency.addListener { [weak self] changes, origin in
                guard let self else { return }
                // Shared: given at once, under the vault's lock, so that the
                // streams see writes and refreshes in the order they ran
                // (other writers' changes: the refresh gave them already).
                if self.shared {
                    if origin == .thisHandle, self.isWatching { self.deliver(.changed(changes, origin: origin)) }
                } else {
                    self.queue.async { self.send(.changed(changes, origin: origin)) }
                }
            }
        }
        queue.async { [weak self] in self?.refreshNow() }
    }

    deinit { cancel() }

    /// True until ``cancel()``.
    public var isWatching: Bool { watcher?.isWatching ?? false }

    /// Stops watching and releases the watch's descriptors. No change is
    /// delivered after the refresh running now, if any.
    public func cancel() {
        watcher?.cancel()
        if let listener { vault.concurrency.removeListener(listener) }
    }

    /// An event: refresh after the quiet period, once per burst (on ``queue``).
    private func changed() {
        guard !scheduled else { return }
        scheduled = true
        queue.asyncAfter(deadline: .now() + coalescing) { [weak self] in
            guard let self else { return }
            self.scheduled = false
            self.refreshNow()
        }
    }

    /// Delivers `event` unless cancelled (on ``queue``).
    private func send(_ event: VaultEvent) {
        guard isWatching else { return }
        deliver(event)
    }

    /// Refreshes and delivers what changed (on ``queue``); then, in the
    /// full form, the conflict copies that appeared.
    private func refreshNow() {
        guard isWatching else { return }
        do throws(QuireError) {
            let changes = try vault.refresh()
            // Shared: the refresh broadcast them to every stream already.
            if !changes.isEmpty && !shared { send(.changed(changes, origin: .otherWriter)) }
        } catch {
            // A transient failure (a file briefly missing while a sync tool
            // replaces it, an I/O error): said, and the watch goes on.
            send(.refreshFailed(error))
        }
        guard reportsEverything, let found = vault.copiesToAnnounce() else { return }
        let copies = Set(found)
        let appeared = copies.subtracting(knownCopies)
        knownCopies = copies
        if !appeared.isEmpty { send(.conflictCopiesAppeared(appeared.sorted())) }
    }
}

/// What ``Vault/events(coalescing:)`` delivers.
public enum VaultEvent: Sendable, Equatable {
    /// Who wrote a change.
    public enum Origin: Sendable, Equatable {
        /// Another process or handle (read by a refresh).
        case otherWriter
        /// This handle, through any of its writes (reported as it commits).
        case thisHandle
    }

    /// Entries, keys or the profile changed (never an empty change set).
    case changed(VaultChangeSet, origin: Origin)
    /// A refresh failed: a container error (`.damaged`, `.unavailable`, `.outOfSpace`…) for I/O or a file
    /// missing (a sync tool replacing it), a key error (`.wrongCredential`, `.readOnly`, `.needsMerge`, `.damaged`) when a
    /// replaced file no longer opens with this credential, or `.needsMerge`
    /// (`rolled_back`) when a handle with device memory finds an older copy
    /// at the path, or another history that lacks entries the handle read
    /// (``Vault/refresh()``). The watch goes
    /// on, and the next change to the file tries again.
    case refreshFailed(QuireError)
    /// Copies of this vault appeared beside it: their paths, sorted
    /// bytewise. Every file in the vault's folder whose header names this
    /// vault counts (what ``Vault/conflictCopies()`` lists), whatever its
    /// name: a sync tool's conflict copy (Syncthing's
    /// `.sync-conflict-…`, Dropbox's `(… conflicted copy …)`), and also
    /// iCloud Drive's `Journal 2.quire`, Google Drive's `Journal (1).quire`
    /// or a copy a person made. Each is announced once per watch, when it
    /// appears (a stream joining a running watch is first told those there
    /// now). Call ``Vault/foldConflictCopies()``: it merges the sync
    /// tools' conflict copies, and reports every other copy unmerged with
    /// ``FoldReport/Copy/keptBecause``; for
    /// ``FoldReport/KeptReason/notAConflictCopy`` (it holds entries the
    /// journal lacks) ask the person whether to merge it, with
    /// ``Vault/merge(copyAt:)``.
    case conflictCopiesAppeared([String])
}

/// The change sets of a vault as an `AsyncSequence` (see
/// ``Vault/changes(coalescing:)``). Each iterator watches the file on its
/// own; it ends when the iterating task is cancelled, and throws the first
/// ``QuireError`` a refresh meets.
@_spi(Format) public struct VaultChanges: AsyncSequence, Sendable {
    /// A change set (never empty).
    public typealias Element = VaultChangeSet
    /// The iterator.
    public typealias AsyncIterator = AsyncThrowingStream<VaultChangeSet, any Error>.Iterator

    let vault: Vault
    let coalescing: Duration

    /// Starts a watch (a ``VaultObserver``) that lives as long as the
    /// iteration: cancelling the task, or leaving the loop, stops it and
    /// releases its descriptors.
    public func makeAsyncIterator() -> AsyncIterator {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: VaultChangeSet.self)
        do throws(QuireError) {
            let observer = try VaultObserver(vault: vault, coalescing: coalescing) { delivery in
                switch delivery {
                case .success(let changes): continuation.yield(changes)
                case .failure(let error): continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in observer.cancel() }
        } catch {
            continuation.finish(throwing: error)
        }
        return stream.makeAsyncIterator()
    }
}

extension Vault {
    /// What other processes change in this vault, as it happens: an
    /// `AsyncSequence` of ``VaultChangeSet``s, each the answer of a
    /// ``refresh()`` after the file (or its folder) changed, events within
    /// `coalescing` gathered into one.
    ///
    /// ```swift
    /// for try await changes in vault.changes() {
    ///     for change in changes.entries { timeline.update(change.id) }
    /// }
    /// ```
    ///
    /// The iteration ends when its task is cancelled (the watch stops and
    /// its descriptors are closed); it throws the ``QuireError`` of a
    /// refresh that fails (I/O, a file that is gone or no longer opens with
    /// this credential) or of a watch the system refuses.
    @_spi(Format) public func changes(coalescing: Duration = .milliseconds(50)) -> VaultChanges {
        VaultChanges(vault: self, coalescing: coalescing)
    }

    /// Everything that happens to this vault, as it happens: an
    /// `AsyncSequence` of ``VaultEvent``s — other writers' changes, this
    /// handle's own writes, refreshes that failed (the watch goes on) and
    /// copies of the vault appearing beside the file (a sync tool's conflict
    /// copy, iCloud Drive's `Journal 2.quire`…).
    ///
    /// ```swift
    /// for await event in vault.events() {
    ///     switch event {
    ///     case .changed(let changes, _): timeline.apply(changes)
    ///     case .refreshFailed(let error): banner = .retrying(error)
    ///     case .conflictCopiesAppeared:
    ///         let report = try await vault.foldConflictCopies()
    ///         askToMerge(report.copies.filter { $0.keptBecause == .notAConflictCopy })
    ///     }
    /// }
    /// ```
    ///
    /// Any number of streams may follow one handle — a timeline, a sidebar,
    /// a widget: each gets every event from the moment it was made, and
    /// they share one watch of the file. The first stream starts the watch
    /// (with its `coalescing`; later streams join it as it is, and are first
    /// told the copies waiting now); cancelling the iterating
    /// task, or leaving the loop, ends a stream, and the last one to end
    /// stops the watch and releases its descriptors. A stream that is never
    /// iterated keeps the watch running until it is iterated and left.
    /// Iterate each stream once.
    ///
    /// What a direct `refresh()` reads is delivered to every stream too
    /// (as ``VaultEvent/changed(_:origin:)`` from another writer), so a
    /// pull-to-refresh and the timeline never take changes from each other.
    ///
    /// The stream never throws: a failed refresh of the watch is an event
    /// and the watch goes on. When the system refuses the watch, the stream
    /// yields that ``VaultEvent/refreshFailed(_:)`` and ends.
    public func events(coalescing: Duration = .milliseconds(50)) -> AsyncStream<VaultEvent> {
        concurrency.subscribe(self, coalescing: coalescing)
    }
}
