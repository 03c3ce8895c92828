// Helpers for quire-bench: timing, statistics, number formatting, temporary
// directories, whole-file hashing, child processes and machine information.
// Nothing here asserts anything about time; it only measures and reports.

import CSodium
import CZstd
@_spi(Crypto) import QuireCrypto
import QuireSystem

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A failure of the benchmark harness itself (not a measurement).
struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

// MARK: - Time

/// Monotonic nanoseconds (``ProcessStats/monotonicNanoseconds()``).
@inline(__always)
func now() -> UInt64 { ProcessStats.monotonicNanoseconds() }

/// CPU time this thread has used, in nanoseconds (CLOCK_THREAD_CPUTIME_ID).
/// A secondary measure: less sensitive than wall time to other processes
/// competing for the CPU.
func threadCPUNanoseconds() -> UInt64 {
    var spec = timespec()
    _ = clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spec)
    return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
}

/// Runs `body` and returns its result and the elapsed nanoseconds.
@inline(__always)
func timed<R>(_ body: () throws -> R) rethrows -> (R, UInt64) {
    let start = now()
    let r = try body()
    return (r, now() - start)
}

/// Summary statistics of a list of nanosecond samples.
struct Samples {
    private(set) var values: [UInt64] = []

    mutating func add(_ ns: UInt64) { values.append(ns) }

    var count: Int { values.count }
    var sorted: [UInt64] { values.sorted() }
    var median: Double {
        let s = sorted
        guard !s.isEmpty else { return .nan }
        if s.count % 2 == 1 { return Double(s[s.count / 2]) }
        return (Double(s[s.count / 2 - 1]) + Double(s[s.count / 2])) / 2
    }
    var mean: Double {
        guard !values.isEmpty else { return .nan }
        return Double(values.reduce(0, +)) / Double(values.count)
    }
    func percentile(_ p: Double) -> Double {
        let s = sorted
        guard !s.isEmpty else { return .nan }
        let i = min(s.count - 1, max(0, Int((p * Double(s.count - 1)).rounded())))
        return Double(s[i])
    }
    var minimum: Double { values.min().map(Double.init) ?? .nan }
}

// MARK: - Formatting (no Foundation, so child processes stay small)

/// `x` with `decimals` digits after the point.
func fmt(_ x: Double, _ decimals: Int = 1) -> String {
    guard x.isFinite else { return "n/a" }
    var scale = 1.0
    for _ in 0..<decimals { scale *= 10 }
    let scaled = (abs(x) * scale).rounded()
    guard scaled < 9.0e18 else { return "\(x)" }
    let n = UInt64(scaled)
    let m = UInt64(scale)
    let whole = n / m
    var text = grouped(whole)
    if decimals > 0 {
        var frac = String(n % m)
        while frac.count < decimals { frac = "0" + frac }
        text += "." + frac
    }
    return (x < 0 && n != 0 ? "-" : "") + text
}

/// An integer with thousands separators: `100,000`.
func grouped<T: BinaryInteger>(_ value: T) -> String {
    let digits = String(value.magnitude)
    var out = ""
    for (i, c) in digits.enumerated() {
        if i > 0 && (digits.count - i) % 3 == 0 { out.append(",") }
        out.append(c)
    }
    return (value < 0 ? "-" : "") + out
}

/// Bytes in MB (10⁶) with one decimal.
func megabytes(_ bytes: UInt64) -> String { fmt(Double(bytes) / 1e6, 1) }
/// Bytes in MiB (2²⁰) with one decimal.
func mebibytes(_ bytes: UInt64) -> String { fmt(Double(bytes) / 1_048_576, 1) }
/// Throughput in MB/s (10⁶ bytes per second).
func throughput(bytes: UInt64, ns: Double) -> Double { Double(bytes) / (ns / 1e9) / 1e6 }
/// A ratio with two decimals and a trailing ×.
func ratio(_ x: Double) -> String { fmt(x, 2) + "×" }

/// A human size such as `1 GiB` or `64 MiB`.
func sizeName(_ bytes: Int) -> String {
    if bytes >= 1 << 30 && bytes % (1 << 30) == 0 { return "\(bytes >> 30) GiB" }
    if bytes >= 1 << 20 && bytes % (1 << 20) == 0 { return "\(bytes >> 20) MiB" }
    return "\(grouped(bytes)) bytes"
}

// MARK: - Files

/// A private directory under /tmp, removed (with its files) by ``remove()``.
final class TempDirectory {
    let path: String
    private var removed = false

    init(prefix: String) throws {
        var template = Array("/tmp/\(prefix)-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        guard made != nil else { throw BenchError("mkdtemp failed (errno \(errno))") }
        path = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    func file(_ name: String) -> String { path + "/" + name }

    /// Removes every file in the directory, then the directory.
    func remove() {
        guard !removed else { return }
        removed = true
        if let names = try? FileSystem.listDirectory(path) {
            for name in names { try? FileSystem.remove(file(name)) }
        }
        _ = rmdir(path)
    }

    deinit { remove() }
}

/// The size of the file at `path`.
func fileSize(_ path: String) throws -> UInt64 { try FileSystem.size(path) }

/// BLAKE2b-256 of the first `count` bytes of the file at `path`, read in 1 MiB pieces.
func hashPrefix(of path: String, count: UInt64) throws -> [UInt8] {
    let file = try SystemFile(path: path, mode: .readOnly)
    var hasher = BLAKE2b.Hasher(byteCount: 32)
    var buffer = [UInt8](repeating: 0, count: 1 << 20)
    var offset: UInt64 = 0
    while offset < count {
        let want = Int(min(UInt64(buffer.count), count - offset))
        let n = try buffer.withUnsafeMutableBytes { raw in
            try file.read(into: UnsafeMutableRawBufferPointer(rebasing: raw[0..<want]), at: offset)
        }
        guard n == want else { throw BenchError("\(path) is shorter than \(count) bytes") }
        buffer.withUnsafeBytes { hasher.update(UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
        offset += UInt64(n)
    }
    return hasher.finalize()
}

/// The whole file at `path` in memory.
func readWholeFile(_ path: String) throws -> [UInt8] {
    let file = try SystemFile(path: path, mode: .readOnly)
    let size = try file.size()
    var bytes = [UInt8](repeating: 0, count: Int(size))
    let n = try bytes.withUnsafeMutableBytes { try file.read(into: $0, at: 0) }
    guard n == Int(size) else { throw BenchError("short read of \(path)") }
    return bytes
}

/// The text of a small (possibly /proc) file, or nil. /proc files report a
/// size of 0, so this reads sequentially until the end.
func readTextFile(_ path: String, limit: Int = 1 << 20) -> String? {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var buffer = [UInt8](repeating: 0, count: limit)
    var total = 0
    while total < limit {
        let n = buffer.withUnsafeMutableBytes { raw in read(fd, raw.baseAddress! + total, limit - total) }
        if n < 0 && errno == EINTR { continue }
        if n <= 0 { break }
        total += n
    }
    return String(decoding: buffer[0..<total], as: UTF8.self)
}

/// The value of `VmHWM` (the peak resident set of this process's current
/// address space) from /proc/self/status, in bytes, or nil.
func vmHighWaterMark() -> UInt64? {
    guard let text = readTextFile("/proc/self/status") else { return nil }
    for line in text.split(separator: "\n") where line.hasPrefix("VmHWM:") {
        let digits = line.filter { $0.isNumber }
        if let kib = UInt64(digits) { return kib * 1024 }
    }
    return nil
}

// MARK: - Child processes

/// This executable's path.
func selfExecutablePath() -> String {
    var buffer = [CChar](repeating: 0, count: 4096)
    let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
    if n > 0 { return String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self) }
    return CommandLine.arguments[0]
}

/// Runs `path` with `arguments` (argv[0] included) and returns its exit
/// status and everything it wrote to standard output. Standard error is
/// inherited.
func runProcess(_ path: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
    var fds: [Int32] = [0, 0]
    guard pipe(&fds) == 0 else { throw BenchError("pipe failed (errno \(errno))") }
    let readEnd = fds[0]
    let writeEnd = fds[1]

    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_adddup2(&actions, writeEnd, 1)
    posix_spawn_file_actions_addclose(&actions, readEnd)
    posix_spawn_file_actions_addclose(&actions, writeEnd)

    let argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
    defer { for p in argv { free(p) } }
    var envStrings: [String] = []
    for name in ["PATH", "HOME", "LANG", "TMPDIR"] {
        if let value = FileSystem.environment(name) { envStrings.append("\(name)=\(value)") }
    }
    let envp: [UnsafeMutablePointer<CChar>?] = envStrings.map { strdup($0) } + [nil]
    defer { for p in envp { free(p) } }

    var pid: pid_t = 0
    let rc = posix_spawn(&pid, path, &actions, nil, argv, envp)
    close(writeEnd)
    guard rc == 0 else {
        close(readEnd)
        throw BenchError("posix_spawn \(path) failed (error \(rc))")
    }
    var output: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65536)
    while true {
        let n = chunk.withUnsafeMutableBytes { read(readEnd, $0.baseAddress, $0.count) }
        if n < 0 && errno == EINTR { continue }
        if n <= 0 { break }
        output += chunk[0..<n]
    }
    close(readEnd)
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    let exitCode: Int32 = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
    return (exitCode, String(decoding: output, as: UTF8.self))
}

/// Runs this benchmark binary again with `arguments` (a hidden `--child`
/// mode) and parses its `key=value` lines.
func runChild(_ arguments: [String]) throws -> [String: String] {
    let exe = selfExecutablePath()
    let (status, output) = try runProcess(exe, [exe, "--child"] + arguments)
    guard status == 0 else { throw BenchError("child \(arguments.first ?? "") exited with status \(status): \(output)") }
    var values: [String: String] = [:]
    for line in output.split(separator: "\n") {
        guard let eq = line.firstIndex(of: "=") else { continue }
        values[String(line[..<eq])] = String(line[line.index(after: eq)...])
    }
    return values
}

extension Dictionary where Key == String, Value == String {
    func number(_ key: String) throws -> UInt64 {
        guard let text = self[key], let n = UInt64(text) else { throw BenchError("child output lacks \(key)") }
        return n
    }
}

// MARK: - Machine

/// What the report says about the machine and the build.
struct MachineInfo {
    var processors = 0
    var cpuModel = "unknown"
    var memory = "unknown"
    var kernel = "unknown"
    var swiftVersion = "unknown"
    var sodiumVersion = ""
    var zstdVersion = ""
    var tmpFilesystem = "unknown"
    var date = ""
    var loadAtStart = ""

    static func collect() -> MachineInfo {
        var m = MachineInfo()
        m.processors = Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))
        if let cpu = readTextFile("/proc/cpuinfo") {
            for line in cpu.split(separator: "\n") where line.hasPrefix("model name") {
                if let colon = line.firstIndex(of: ":") {
                    m.cpuModel = line[line.index(after: colon)...].trimmingSpaces()
                }
                break
            }
        }
        if let info = readTextFile("/proc/meminfo") {
            for line in info.split(separator: "\n") where line.hasPrefix("MemTotal:") {
                if let kib = UInt64(line.filter { $0.isNumber }) { m.memory = fmt(Double(kib) / 1_048_576, 1) + " GiB" }
            }
        }
        var names = utsname()
        if uname(&names) == 0 {
            let sys = withUnsafeBytes(of: names.sysname) { String(decoding: $0.prefix(while: { $0 != 0 }), as: UTF8.self) }
            let rel = withUnsafeBytes(of: names.release) { String(decoding: $0.prefix(while: { $0 != 0 }), as: UTF8.self) }
            let machine = withUnsafeBytes(of: names.machine) { String(decoding: $0.prefix(while: { $0 != 0 }), as: UTF8.self) }
            m.kernel = "\(sys) \(rel) \(machine)"
        }
        if let result = try? runProcess("/bin/sh", ["sh", "-c", "swift --version 2>/dev/null | head -n 1"]),
            result.status == 0
        {
            let line = result.output.trimmingSpaces()
            if !line.isEmpty { m.swiftVersion = line }
        }
        if m.swiftVersion == "unknown" {
            #if compiler(>=6.3)
                m.swiftVersion = "compiled with Swift 6.3 or later"
            #else
                m.swiftVersion = "compiled with Swift before 6.3"
            #endif
        }
        m.sodiumVersion = String(cString: sodium_version_string())
        m.zstdVersion = String(cString: ZSTD_versionString())
        if let mounts = readTextFile("/proc/mounts") {
            var best = ""
            for line in mounts.split(separator: "\n") {
                let parts = line.split(separator: " ")
                guard parts.count >= 3 else { continue }
                let point = String(parts[1])
                let matches = point == "/" || "/tmp" == point || "/tmp".hasPrefix(point + "/")
                if matches && point.count >= best.count {
                    best = point
                    m.tmpFilesystem = "\(parts[2]) (mounted at \(point), device \(parts[0]))"
                }
            }
        }
        m.loadAtStart = loadAverage()
        var t = time(nil)
        var parts = tm()
        gmtime_r(&t, &parts)
        var buffer = [CChar](repeating: 0, count: 64)
        let n = strftime(&buffer, buffer.count, "%Y-%m-%d %H:%M UTC", &parts)
        m.date = String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return m
    }
}

/// The 1, 5 and 15 minute load averages from /proc/loadavg.
func loadAverage() -> String {
    guard let text = readTextFile("/proc/loadavg") else { return "unknown" }
    return text.split(separator: " ").prefix(3).joined(separator: " ")
}

extension StringProtocol {
    func trimmingSpaces() -> String {
        var s = Substring(self)
        while let f = s.first, f == " " || f == "\t" || f == "\n" { s.removeFirst() }
        while let l = s.last, l == " " || l == "\t" || l == "\n" { s.removeLast() }
        return String(s)
    }
}
