// Process-wide protections for a program that holds decrypted journal text
// and keys in memory: no core dump may write them to disk.

#if canImport(Glibc)
    internal import Glibc
#elseif canImport(Musl)
    internal import Musl
#elseif canImport(Darwin)
    internal import Darwin
#endif

/// Settings a process that handles secrets applies once, at start.
public enum ProcessHardening {
    /// Turns core dumps off for this process and its children: the core
    /// size limit becomes 0 (soft and hard, `setrlimit(RLIMIT_CORE)`), and on
    /// Linux the process is marked not dumpable (`prctl(PR_SET_DUMPABLE, 0)`),
    /// which also keeps a core-dump handler such as systemd-coredump or apport
    /// from saving its memory, and other processes of the same user from
    /// reading it through `/proc/PID/mem` (ptrace) unless they are privileged.
    ///
    /// - Returns: true when every setting was applied.
    @discardableResult
    public static func disableCoreDumps() -> Bool {
        var limit = rlimit(rlim_cur: 0, rlim_max: 0)
        #if canImport(Glibc)
            var ok = setrlimit(__rlimit_resource_t(RLIMIT_CORE.rawValue), &limit) == 0
        #else
            var ok = setrlimit(RLIMIT_CORE, &limit) == 0
        #endif
        #if os(Linux)
            ok = (prctl(option: prSetDumpable, 0) == 0) && ok
        #endif
        return ok
    }

    /// True when this process may not dump core: its core size limit is 0,
    /// and on Linux it is not dumpable.
    public static var coreDumpsDisabled: Bool {
        var limit = rlimit()
        #if canImport(Glibc)
            guard getrlimit(__rlimit_resource_t(RLIMIT_CORE.rawValue), &limit) == 0 else { return false }
        #else
            guard getrlimit(RLIMIT_CORE, &limit) == 0 else { return false }
        #endif
        guard limit.rlim_cur == 0 && limit.rlim_max == 0 else { return false }
        #if os(Linux)
            return prctl(option: prGetDumpable, 0) == 0
        #else
            return true
        #endif
    }
}

#if os(Linux)
    /// `PR_GET_DUMPABLE` and `PR_SET_DUMPABLE` from `<linux/prctl.h>`.
    private let prGetDumpable: Int32 = 3
    private let prSetDumpable: Int32 = 4

    /// `prctl(2)`, which the Glibc module does not import (its header is not in
    /// the module map): found in the C library at run time; -1 when it is not.
    private func prctl(option: Int32, _ argument: UInt) -> Int32 {
        typealias Prctl = @convention(c) (Int32, UInt, UInt, UInt, UInt) -> Int32
        guard let library = dlopen(nil, RTLD_NOW), let symbol = dlsym(library, "prctl") else { return -1 }
        return unsafeBitCast(symbol, to: Prctl.self)(option, argument, 0, 0, 0)
    }
#endif
