import Dispatch
import Synchronization
import Testing

import QuireCrypto

/// Keys made and freed on many threads at once share the guarded arena's
/// cells. Run under ThreadSanitizer (`swift test --sanitize=thread`), the
/// arena's former `Synchronization.Mutex` was reported as racing (its
/// contended lock is invisible to the checker on Linux); the pthread lock
/// is not. In any run, no cell is handed out twice.
@Suite struct GuardedArenaTests {
    @Test func keysOnManyThreadsGetDistinctCellsAndKeepTheirBytes() throws {
        let threads = 8, rounds = 4000
        let failures = Failures()
        DispatchQueue.concurrentPerform(iterations: threads) { t in
            for r in 0..<rounds {
                var bytes = [UInt8](repeating: UInt8(truncatingIfNeeded: t &* 31 &+ r), count: 32)
                let expected = bytes
                guard let key = try? SecureBytes(consuming: &bytes) else {
                    failures.add()
                    continue
                }
                if key.copyBytes() != expected { failures.add() }
            }
        }
        #expect(failures.count == 0)
    }

    /// Counts failures from many threads.
    final class Failures: Sendable {
        private let counter = Atomic<Int>(0)
        func add() { counter.add(1, ordering: .relaxed) }
        var count: Int { counter.load(ordering: .relaxed) }
    }
}
