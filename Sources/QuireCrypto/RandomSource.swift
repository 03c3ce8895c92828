internal import CSodium
import Synchronization

/// Where random bytes come from. Production code uses ``SystemRandom``;
/// the test vectors use a seeded source so that generation is repeatable.
@_spi(Crypto) public protocol RandomSource: Sendable {
    /// Fills `buffer` with random bytes.
    func fill(_ buffer: UnsafeMutableRawBufferPointer)
}

extension RandomSource {
    /// `count` random bytes.
    @_spi(Crypto) public func bytes(_ count: Int) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: count)
        out.withUnsafeMutableBytes { fill($0) }
        return out
    }
}

/// The operating system's secure random source (`randombytes_buf`).
@_spi(Crypto) public struct SystemRandom: RandomSource {
    /// The system source (initialises libsodium if needed).
    public init() { Sodium.ensure() }

    /// Fills `buffer` from `randombytes_buf`.
    public func fill(_ buffer: UnsafeMutableRawBufferPointer) {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return }
        randombytes_buf(base, buffer.count)
    }
}

/// A deterministic random stream from a 32-byte seed, for test vectors and
/// seeded property tests. Never use it for real keys.
///
/// Call `n` (0, 1, 2 …) returns `randombytes_buf_deterministic` output keyed
/// by `crypto_kdf_derive_from_key(seed, subkey id n, context "quirerng")`, so
/// the stream depends only on the seed and the sequence of requests.
@_spi(Crypto) public final class SeededRandom: RandomSource {
    private let seed: [UInt8]
    private let counter = Mutex<UInt64>(0)

    /// A stream from `seed`, which must be 32 bytes.
    public init(seed: [UInt8]) {
        precondition(seed.count == 32, "SeededRandom needs a 32-byte seed")
        Sodium.ensure()
        self.seed = seed
    }

    /// A stream whose seed is BLAKE2b-256 of the UTF-8 label, handy for
    /// naming streams after the vector or test that uses them.
    public convenience init(label: String) {
        self.init(seed: BLAKE2b.hash(Array(label.utf8), byteCount: 32))
    }

    /// Fills `buffer` with the next bytes of the stream (one request).
    public func fill(_ buffer: UnsafeMutableRawBufferPointer) {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return }
        let n = counter.withLock { value -> UInt64 in
            defer { value += 1 }
            return value
        }
        var subkey = [UInt8](repeating: 0, count: 32)
        let context: [CChar] = Array("quirerng".utf8CString)
        subkey.withUnsafeMutableBytes { sk in
            seed.withUnsafeBytes { sd in
                _ = crypto_kdf_derive_from_key(
                    sk.baseAddress!.assumingMemoryBound(to: UInt8.self), 32, n, context,
                    sd.baseAddress!.assumingMemoryBound(to: UInt8.self))
            }
        }
        subkey.withUnsafeBytes { sk in
            randombytes_buf_deterministic(base, buffer.count, sk.baseAddress!.assumingMemoryBound(to: UInt8.self))
        }
        wipe(&subkey)
    }
}
