#if canImport(Glibc)
    internal import Glibc
#elseif canImport(Musl)
    internal import Musl
#elseif canImport(Darwin)
    internal import Darwin
#endif

/// A value guarded by a `pthread_mutex_t` (not recursive): the state the
/// library shares between threads, such as the guarded-memory arena.
///
/// It stands where `Synchronization.Mutex` would: on Linux a contended
/// `Mutex` is taken in the Swift runtime's uninstrumented slow path (a
/// priority-inheritance futex), so ThreadSanitizer does not see the
/// ordering and reports each access under it as a race. `pthread_mutex_lock`
/// is one ThreadSanitizer intercepts, so the checker sees this lock and
/// still reports any access made without it.
///
/// `@unchecked Sendable`: `value` is read and written only inside
/// ``withLock(_:)``, under the mutex.
package final class Locked<Value>: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private var value: Value

    /// A lock holding `value`.
    package init(_ value: Value) {
        self.value = value
        mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` on the value, holding the lock (not reentrant: `body`
    /// must not take this lock again).
    package func withLock<R, E: Error>(_ body: (inout Value) throws(E) -> R) throws(E) -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
