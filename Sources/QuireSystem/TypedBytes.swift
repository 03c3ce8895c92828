// Array's withUnsafeBytes rethrows untyped errors; these keep a closure's
// typed error, so typed-throws code can reach a byte array's storage.
// `withUnsafeBufferPointer` has typed throws, so no Result is needed; they
// are inlinable so the hot paths pay no generic dispatch.

extension Array where Element == UInt8 {
    /// `withUnsafeBytes` that preserves the closure's error type.
    @inlinable @inline(__always)
    package func withBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try withUnsafeBufferPointer { (buffer: UnsafeBufferPointer<UInt8>) throws(E) -> R in
            try body(UnsafeRawBufferPointer(buffer))
        }
    }

    /// `withUnsafeMutableBytes` that preserves the closure's error type.
    @inlinable @inline(__always)
    package mutating func withMutableBytes<R, E: Error>(_ body: (UnsafeMutableRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try withUnsafeMutableBufferPointer { (buffer: inout UnsafeMutableBufferPointer<UInt8>) throws(E) -> R in
            try body(UnsafeMutableRawBufferPointer(buffer))
        }
    }
}
