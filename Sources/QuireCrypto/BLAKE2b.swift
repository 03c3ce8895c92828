internal import CSodium

/// BLAKE2b (RFC 7693) through libsodium's `crypto_generichash`: unkeyed as a
/// checksum or digest, keyed as a MAC.
///
/// Output lengths are 16 to 64 bytes; keys, when given, 16 to 64 bytes.
@_spi(Crypto) public enum BLAKE2b {
    /// Smallest output length libsodium allows, in bytes.
    public static let minimumByteCount = 16
    /// Largest output length, in bytes.
    public static let maximumByteCount = 64

    /// The BLAKE2b digest of `data`, `byteCount` bytes long (16…64).
    public static func hash(_ data: UnsafeRawBufferPointer, byteCount: Int) -> [UInt8] {
        Sodium.ensure()
        precondition((minimumByteCount...maximumByteCount).contains(byteCount))
        var out = [UInt8](repeating: 0, count: byteCount)
        out.withUnsafeMutableBytes { o in
            _ = crypto_generichash(
                o.baseAddress!.assumingMemoryBound(to: UInt8.self), byteCount,
                data.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(data.count), nil, 0)
        }
        return out
    }

    /// The BLAKE2b digest of `data`, written to `out`, whose length is the
    /// digest length (16…64): no heap block (a scan checks every frame
    /// header's 12 bytes so).
    public static func hash(_ data: UnsafeRawBufferPointer, into out: UnsafeMutableRawBufferPointer) {
        Sodium.ensure()
        precondition((minimumByteCount...maximumByteCount).contains(out.count))
        _ = crypto_generichash(
            out.baseAddress!.assumingMemoryBound(to: UInt8.self), out.count,
            data.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(data.count), nil, 0)
    }

    /// The BLAKE2b digest of `data`, `byteCount` bytes long (16…64).
    public static func hash(_ data: [UInt8], byteCount: Int) -> [UInt8] {
        data.withUnsafeBytes { hash($0, byteCount: byteCount) }
    }

    /// The BLAKE2b digest of `first ‖ second`, written to `out`, whose
    /// length is the digest length (16…64). The state lives on the stack
    /// and is wiped: no heap block per hash (a reader hashes every record).
    public static func hash(_ first: UnsafeRawBufferPointer, _ second: UnsafeRawBufferPointer, into out: UnsafeMutableRawBufferPointer) {
        Sodium.ensure()
        precondition((minimumByteCount...maximumByteCount).contains(out.count))
        let stateByteCount = crypto_generichash_statebytes()
        withUnsafeTemporaryAllocation(byteCount: stateByteCount, alignment: 64) { state in
            let s = OpaquePointer(state.baseAddress!)
            _ = crypto_generichash_init(s, nil, 0, out.count)
            if first.count > 0 {
                _ = crypto_generichash_update(s, first.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(first.count))
            }
            if second.count > 0 {
                _ = crypto_generichash_update(s, second.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(second.count))
            }
            _ = crypto_generichash_final(s, out.baseAddress!.assumingMemoryBound(to: UInt8.self), out.count)
            sodium_memzero(state.baseAddress!, stateByteCount)
        }
    }

    /// Keyed BLAKE2b (a MAC) of `data` under `key`, `byteCount` bytes long.
    public static func mac(_ data: [UInt8], key: SymmetricKey, byteCount: Int) -> [UInt8] {
        var hasher = Hasher(byteCount: byteCount, key: key)
        hasher.update(data)
        return hasher.finalize()
    }

    /// An incremental BLAKE2b computation.
    ///
    /// The 384-byte libsodium state lives in a 64-byte-aligned heap block
    /// owned by this value; it is wiped when the value is released.
    public struct Hasher: ~Copyable {
        private let state: UnsafeMutableRawPointer
        private let stateByteCount: Int
        private let byteCount: Int
        private var finished = false

        /// Starts an unkeyed hash with `byteCount` bytes of output (16…64).
        public init(byteCount: Int) {
            Sodium.ensure()
            precondition((minimumByteCount...maximumByteCount).contains(byteCount))
            stateByteCount = crypto_generichash_statebytes()
            state = UnsafeMutableRawPointer.allocate(byteCount: stateByteCount, alignment: 64)
            self.byteCount = byteCount
            _ = crypto_generichash_init(OpaquePointer(state), nil, 0, byteCount)
        }

        /// Starts a keyed hash (MAC) with `byteCount` bytes of output.
        public init(byteCount: Int, key: SymmetricKey) {
            Sodium.ensure()
            precondition((minimumByteCount...maximumByteCount).contains(byteCount))
            stateByteCount = crypto_generichash_statebytes()
            state = UnsafeMutableRawPointer.allocate(byteCount: stateByteCount, alignment: 64)
            self.byteCount = byteCount
            key.withUnsafeBytes { k in
                _ = crypto_generichash_init(
                    OpaquePointer(state), k.baseAddress!.assumingMemoryBound(to: UInt8.self), k.count, byteCount)
            }
        }

        deinit {
            sodium_memzero(state, stateByteCount)
            state.deallocate()
        }

        /// Feeds `data`.
        public mutating func update(_ data: UnsafeRawBufferPointer) {
            precondition(!finished)
            guard data.count > 0 else { return }
            _ = crypto_generichash_update(
                OpaquePointer(state), data.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(data.count))
        }

        /// Feeds `data`.
        public mutating func update(_ data: [UInt8]) {
            data.withUnsafeBytes { update($0) }
        }

        /// Finishes and returns the digest. Call once.
        public mutating func finalize() -> [UInt8] {
            precondition(!finished)
            finished = true
            var out = [UInt8](repeating: 0, count: byteCount)
            out.withUnsafeMutableBytes { o in
                _ = crypto_generichash_final(
                    OpaquePointer(state), o.baseAddress!.assumingMemoryBound(to: UInt8.self), byteCount)
            }
            return out
        }
    }
}
