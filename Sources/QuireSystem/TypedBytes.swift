// Array's withUnsafeBytes rethrows untyped errors; these keep a closure's
// typed error, so typed-throws code can reach a byte array's storage.

extension Array where Element == UInt8 {
    /// `withUnsafeBytes` that preserves the closure's error type.
    @inline(__always)
    package func withBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        var result: Result<R, E>?
        withUnsafeBytes { raw in result = Result { () throws(E) -> R in try body(raw) } }
        return try result!.get()
    }

    /// `withUnsafeMutableBytes` that preserves the closure's error type.
    @inline(__always)
    package mutating func withMutableBytes<R, E: Error>(_ body: (UnsafeMutableRawBufferPointer) throws(E) -> R) throws(E) -> R {
        var result: Result<R, E>?
        withUnsafeMutableBytes { raw in result = Result { () throws(E) -> R in try body(raw) } }
        return try result!.get()
    }
}
