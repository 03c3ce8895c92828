import Foundation
@_spi(Crypto) import QuireCrypto  // SeededRandom: repeatable test data, not for an app

/// What `ReadmeExampleTests` needs that an app does not write, kept apart
/// so that file can import `Quire` alone (an `@_spi` import holds for the
/// file that makes it only): repeatable bytes, and what the README prints.
enum ReadmeExample {
    /// `count` repeatable bytes for `label`, standing for a photo's content.
    static func bytes(_ label: String, count: Int) -> [UInt8] { SeededRandom(label: label).bytes(count) }

    /// The lines the README's blocks `print`, in order: the tests shadow
    /// `print` with ``add(_:)`` so that their lines are the README's.
    final class Printed: @unchecked Sendable {  // guarded by `lock`
        private let lock = NSLock()
        private var lines: [String] = []
        /// Records `items` as `print` would write them (a space between).
        func add(_ items: [Any]) { lock.withLock { lines.append(items.map { "\($0)" }.joined(separator: " ")) } }
        /// What was printed so far.
        var all: [String] { lock.withLock { lines } }
    }
}
