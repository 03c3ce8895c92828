#if canImport(Glibc)
    internal import Glibc
#elseif canImport(Musl)
    internal import Musl
#elseif canImport(Darwin)
    internal import Darwin
#endif

/// A recursive mutex (`pthread_mutex_t`, `PTHREAD_MUTEX_RECURSIVE`): the
/// thread that holds it may take it again. Vault handles use it so that one
/// handle shared between threads is safe; nested calls on the same thread
/// (a commit that loads the index) do not deadlock.
public final class RecursiveLock: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    /// A new, unlocked lock.
    public init() {
        mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        var attributes = pthread_mutexattr_t()
        pthread_mutexattr_init(&attributes)
        pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_RECURSIVE))
        pthread_mutex_init(mutex, &attributes)
        pthread_mutexattr_destroy(&attributes)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` holding the lock.
    @inlinable
    public func withLock<R, E: Error>(_ body: () throws(E) -> R) throws(E) -> R {
        lock()
        defer { unlock() }
        return try body()
    }

    @usableFromInline func lock() { pthread_mutex_lock(mutex) }
    @usableFromInline func unlock() { pthread_mutex_unlock(mutex) }
}
