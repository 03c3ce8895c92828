// Shared helpers for the fuzz targets. No Foundation: files go through
// QuireSystem, the rest through Glibc.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import QuireSystem

/// The per-process scratch file a target writes each input to before opening
/// it as a vault: `/tmp/quire-fuzz-<pid>.quire`, overwritten on every run and
/// removed when the process exits normally.
public enum Scratch {
    /// The scratch file's path.
    public static let path: String = {
        atexit { _ = unlink("/tmp/quire-fuzz-\(getpid()).quire") }
        return "/tmp/quire-fuzz-\(FileSystem.processID).quire"
    }()

    /// Replaces the scratch file with `bytes` and returns its path.
    ///
    /// Failing to write it is an environment problem (a full /tmp), not a
    /// finding, but it stops the run loudly rather than fuzzing nothing.
    public static func write(_ bytes: UnsafeRawBufferPointer) -> String {
        let path = Self.path
        do {
            if FileSystem.exists(path) { try FileSystem.remove(path) }
            let file = try SystemFile(path: path, mode: .createExclusive(permissions: 0o600))
            try file.write(bytes, at: 0)
            // Closed when `file` is released, here.
        } catch {
            fatalError("fuzz harness: cannot write the scratch file: \(error)")
        }
        return path
    }

    /// Replaces the scratch file with `bytes` and returns its path.
    public static func write(_ bytes: [UInt8]) -> String {
        bytes.withUnsafeBytes { write($0) }
    }
}

/// Folds values into a global so that reading a field cannot be optimized
/// away, and hashing a value reads every stored part of it.
public enum Sink {
    nonisolated(unsafe) private static var accumulator = 0

    /// Reads `value` completely (through its hash).
    @inline(never)
    public static func touch(_ value: some Hashable) {
        accumulator &+= value.hashValue
    }

    /// The accumulated value (printed nowhere; exists for the optimizer).
    public static var value: Int { accumulator }
}

/// A tiny deterministic generator for the custom mutators' choices, seeded
/// by libFuzzer's per-call seed.
public struct MutatorRandom {
    private var state: UInt64

    /// A generator seeded with `seed`.
    public init(seed: UInt32) { state = UInt64(seed) &* 0x9E37_79B9_7F4A_7C15 | 1 }

    /// A value in `0..<bound` (`bound` > 0).
    public mutating func next(_ bound: Int) -> Int {
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        return Int(state % UInt64(bound))
    }
}
