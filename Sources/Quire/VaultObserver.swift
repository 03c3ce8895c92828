import Dispatch
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
/// refresh reads everything that arrived in it. Empty change sets (this
/// handle's own writes, an unrelated file in the folder) are not delivered.
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
/// it): one observer per handle. For Swift concurrency use
/// ``Vault/changes(coalescing:)``. It is
/// `@unchecked Sendable` because its mutable state (whether a refresh is
/// scheduled) is touched only on its serial queue, which the compiler
/// cannot check.
public final class VaultObserver: @unchecked Sendable {
    /// What a delivery carries: the changes, or why refresh failed (the
    /// watch goes on; the next change tries again).
    public typealias Delivery = Result<VaultChangeSet, VaultError>

    let vault: Vault
    let queue: DispatchQueue
    let coalescing: DispatchTimeInterval
    let deliver: @Sendable (Delivery) -> Void
    /// Set once the watcher exists (on init).
    private var watcher: FileWatcher?
    /// True while a refresh is scheduled (on ``queue`` only).
    private var scheduled = false

    /// Starts watching `vault`'s file, and refreshes once at once (a change
    /// since the handle's baseline is delivered straight away).
    ///
    /// - Parameters:
    ///   - coalescing: how long to gather events before one refresh;
    ///     default 50 ms.
    ///   - onChange: called on a private serial queue with each non-empty
    ///     change set, or with the error a refresh threw
    ///     (``VaultError/format(_:)`` for I/O or a missing file,
    ///     ``VaultError/keys(_:)``).
    /// - Throws: ``VaultError/format(_:)`` (``FormatError/io(_:)``) when the
    ///   system refuses the watch.
    public init(vault: Vault, coalescing: Duration = .milliseconds(50), onChange: @escaping @Sendable (Delivery) -> Void) throws(VaultError) {
        self.vault = vault
        queue = DispatchQueue(label: "quire.vault-observer")
        let (seconds, attoseconds) = coalescing.components
        self.coalescing = .nanoseconds(Int(max(0, seconds) * 1_000_000_000 + attoseconds / 1_000_000_000))
        deliver = onChange
        let path = vault.file.path
        do {
            watcher = try FileWatcher(path: path, queue: queue) { [weak self] in self?.changed() }
        } catch {
            throw .format(.io(error))
        }
        queue.async { [weak self] in self?.refreshNow() }
    }

    deinit { watcher?.cancel() }

    /// True until ``cancel()``.
    public var isWatching: Bool { watcher?.isWatching ?? false }

    /// Stops watching and releases the watch's descriptors. No change is
    /// delivered after the refresh running now, if any.
    public func cancel() { watcher?.cancel() }

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

    /// Refreshes and delivers what changed (on ``queue``).
    private func refreshNow() {
        guard isWatching else { return }
        let result: Delivery
        do throws(VaultError) { result = .success(try vault.refresh()) } catch { result = .failure(error) }
        if case .success(let changes) = result, changes.isEmpty { return }
        guard isWatching else { return }
        deliver(result)
    }
}

/// The change sets of a vault as an `AsyncSequence` (see
/// ``Vault/changes(coalescing:)``). Each iterator watches the file on its
/// own; it ends when the iterating task is cancelled, and throws the first
/// ``VaultError`` a refresh meets.
public struct VaultChanges: AsyncSequence, Sendable {
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
        do throws(VaultError) {
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
    /// its descriptors are closed); it throws the ``VaultError`` of a
    /// refresh that fails (I/O, a file that is gone or no longer opens with
    /// this credential) or of a watch the system refuses.
    public func changes(coalescing: Duration = .milliseconds(50)) -> VaultChanges {
        VaultChanges(vault: self, coalescing: coalescing)
    }
}
