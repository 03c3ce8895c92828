import Dispatch
@_spi(Format) import QuireFormat
import Synchronization

/// A serial executor over a `DispatchQueue` of its own: what a vault's
/// `async` calls run on, so that blocking file and crypto work never
/// occupies a thread of Swift's cooperative pool (which has only as many
/// threads as cores) nor the caller's actor.
///
/// Checked `Sendable`: its one stored property is a `DispatchQueue`.
final class VaultExecutor: SerialExecutor {
    let queue: DispatchQueue

    /// An executor on a new serial queue named `label`.
    init(label: String) {
        queue = DispatchQueue(label: label, qos: .userInitiated)
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedSerialExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }

    func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }
}

/// Runs one vault's blocking work, one call at a time, on the vault's own
/// ``VaultExecutor``. The work runs in the calling task (so `Task.isCancelled`
/// and task-local values reach the record loops inside it: see
/// ``OperationCancellation``), on the executor's thread.
actor VaultWorker {
    private let executor: VaultExecutor

    /// A worker on a new serial queue named `label`.
    init(label: String) {
        executor = VaultExecutor(label: label)
    }

    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    /// Runs `work` on the worker's queue; throws `.cancelled` (`cancelled`)
    /// without starting it when the task is already cancelled, and in place
    /// of whatever `work` threw when it was cancelled while running.
    func run<T: Sendable>(_ work: @Sendable () throws(QuireError) -> T) throws(QuireError) -> T {
        if OperationCancellation.isRequested { throw .cancelled }
        do {
            return try work()
        } catch {
            // A cancellation surfaces wrapped at whatever layer met it
            // (a FormatError inside a SyncError inside a QuireError…): say
            // it as itself.
            if OperationCancellation.isRequested { throw .cancelled }
            throw error
        }
    }

    /// ``run(_:)`` for work that throws another error type `E`; `cancelled`
    /// makes the `E` that says the operation was cancelled.
    func run<T: Sendable, E: Error>(
        _ work: @Sendable () throws(E) -> T, cancelled: @Sendable () -> E
    ) throws(E) -> T {
        if OperationCancellation.isRequested { throw cancelled() }
        do {
            return try work()
        } catch {
            if OperationCancellation.isRequested { throw cancelled() }
            throw error
        }
    }
}

/// What a ``Vault`` keeps for Swift concurrency and observation: the worker
/// its `async` calls run on, and the listeners told of this handle's own
/// writes (``VaultObserver``).
///
/// Checked `Sendable`: the worker is an actor and the listeners sit in a
/// `Mutex`.
final class VaultConcurrency: Sendable {
    /// The serial worker of this handle's `async` calls.
    let worker = VaultWorker(label: "quire.vault")
    private let listeners = Mutex<[Int: @Sendable (VaultChangeSet, VaultEvent.Origin) -> Void]>([:])
    private let nextListener = Atomic<Int>(0)

    /// True when a listener wants this handle's own writes (a commit then
    /// computes its change set; a key change, fold, merge or compaction
    /// refreshes before and after it).
    var hasListeners: Bool { listeners.withLock { !$0.isEmpty } }

    /// Adds `listener`; returns the token ``removeListener(_:)`` takes.
    func addListener(_ listener: @escaping @Sendable (VaultChangeSet, VaultEvent.Origin) -> Void) -> Int {
        let token = nextListener.add(1, ordering: .relaxed).newValue
        listeners.withLock { $0[token] = listener }
        return token
    }

    /// Removes the listener of `token`.
    func removeListener(_ token: Int) {
        _ = listeners.withLock { $0.removeValue(forKey: token) }
    }

    /// Tells every listener about a write of this handle (`.thisHandle`),
    /// or about other writers' changes read just before one
    /// (`.otherWriter`, which ``Vault/refresh()`` gave the streams already).
    /// Called under the vault's lock, so that listeners see writes in order.
    func tell(_ changes: VaultChangeSet, origin: VaultEvent.Origin) {
        guard !changes.isEmpty else { return }
        let all = listeners.withLock { Array($0.values) }
        for l in all { l(changes, origin) }
    }

    /// The streams of ``Vault/events(coalescing:)`` on this handle and the
    /// one watch they share (`nil` while no stream lives).
    private struct Subscribers {
        var streams: [Int: AsyncStream<VaultEvent>.Continuation] = [:]
        var watch: VaultObserver?
    }
    private let subscribers = Mutex(Subscribers())

    /// A new stream of `vault`'s events. The first stream starts the shared
    /// watch (with its `coalescing`); later ones join it and are told the
    /// conflict copies waiting now. The last stream to end stops the watch.
    func subscribe(_ vault: Vault, coalescing: Duration) -> AsyncStream<VaultEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: VaultEvent.self)
        let token = nextListener.add(1, ordering: .relaxed).newValue
        let joined = subscribers.withLock { s in
            s.streams[token] = continuation
            return s.watch != nil
        }
        continuation.onTermination = { [weak self] _ in self?.unsubscribe(token) }
        if joined {
            let copies = vault.copiesToAnnounce() ?? []
            if !copies.isEmpty { continuation.yield(.conflictCopiesAppeared(copies)) }
            return stream
        }
        // Made outside the lock: making a watch reads the vault, and a
        // commit holding the vault's lock may be broadcasting now.
        let made: VaultObserver
        do throws(QuireError) {
            made = try VaultObserver(vault: vault, coalescing: coalescing, shared: true) { [weak self] event in
                self?.broadcast(event)
            }
        } catch {
            unsubscribe(token)
            continuation.yield(.refreshFailed(error))
            continuation.finish()
            return stream
        }
        let extra: VaultObserver? = subscribers.withLock { s in
            // Every stream may have ended meanwhile, or another may have
            // started a watch first: then this one is not kept.
            guard s.watch == nil, !s.streams.isEmpty else { return made }
            s.watch = made
            return nil
        }
        extra?.cancel()
        return stream
    }

    /// Ends the stream of `token`; the last one stops the shared watch.
    private func unsubscribe(_ token: Int) {
        let stopped: VaultObserver? = subscribers.withLock { s in
            s.streams.removeValue(forKey: token)
            guard s.streams.isEmpty else { return nil }
            defer { s.watch = nil }
            return s.watch
        }
        stopped?.cancel()
    }

    /// Gives `event` to every ``Vault/events(coalescing:)`` stream of this
    /// handle (a refresh's changes are broadcast by the refresh itself,
    /// whoever called it).
    func broadcast(_ event: VaultEvent) {
        let all = subscribers.withLock { Array($0.streams.values) }
        for continuation in all { continuation.yield(event) }
    }
}
