internal import CSodium

/// libsodium's one-time initialisation, run before any primitive.
///
/// Swift initialises globals lazily and exactly once, across threads, so
/// touching ``Sodium/ready`` from every entry point is enough.
enum Sodium {
    static let ready: Bool = {
        guard sodium_init() >= 0 else {
            // sodium_init fails only when the system has no usable random
            // source; nothing in Quire can work safely without one.
            fatalError("libsodium could not initialise: no secure random source")
        }
        return true
    }()

    @inline(__always)
    static func ensure() {
        precondition(ready)
    }
}
