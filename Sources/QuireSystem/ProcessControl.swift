// Child processes started as a shell starts a foreground command (the
// editor, the pager), and signals caught the way a shell waiting for one
// handles them. Part of the platform shim: every call here is POSIX.

import Synchronization

#if canImport(Glibc)
    internal import Glibc
#elseif canImport(Musl)
    internal import Musl
#elseif canImport(Darwin)
    internal import Darwin
#else
    #error("Quire needs a POSIX platform")
#endif

/// The signals quire handles itself. The raw values are the POSIX numbers,
/// which are the same on Linux and Apple platforms.
public enum ProcessSignal: Int32, Sendable, CaseIterable {
    /// `SIGHUP`: the terminal was closed.
    case hangup = 1
    /// `SIGINT`: Ctrl-C.
    case interrupt = 2
    /// `SIGQUIT`: Ctrl-\.
    case quit = 3
    /// `SIGKILL`: cannot be caught; only sent.
    case kill = 9
    /// `SIGPIPE`: the reader of a pipe went away.
    case brokenPipe = 13
    /// `SIGTERM`: asked to end.
    case terminate = 15
}

/// How a child process ended.
public enum ChildExit: Sendable, Equatable {
    /// It exited with this status (0 is success).
    case exited(Int32)
    /// A signal ended it (its number).
    case killed(Int32)
}

/// Signals caught while they are trapped: one bit per signal number.
private let caughtSignals = Atomic<UInt32>(0)

/// The handler: records the signal and returns. Only an atomic store, so it
/// is async-signal-safe; the interrupted `waitpid` returns `EINTR` (the
/// handler is installed without `SA_RESTART`) and the waiting code acts.
private func recordSignal(_ number: Int32) {
    guard number > 0 && number < 32 else { return }
    caughtSignals.bitwiseOr(UInt32(1) << UInt32(number), ordering: .sequentiallyConsistent)
}

/// A set of signals caught instead of taking their default action, until
/// ``restore()``. While a trap is installed, a trapped signal only sets a
/// flag; the code that waits (``ChildProcess/wait(until:)``) decides what to
/// do, in ordinary context (wiping a file, ending a child, then dying of the
/// same signal with ``SignalTrap/die(of:)``).
// @unchecked Sendable: `previous` is set when the trap is installed and read by restore(), both
// on the thread that owns the trap; the signal handler only sets an atomic flag.
public final class SignalTrap: @unchecked Sendable {
    private var previous: [(Int32, sigaction)] = []
    private let signals: [ProcessSignal]

    /// Installs the trap for `signals` (`sigaction` without `SA_RESTART`) and
    /// makes sure they are not blocked.
    public init(_ signals: [ProcessSignal]) {
        self.signals = signals
        var unblock = sigset_t()
        sigemptyset(&unblock)
        for s in signals where s != .kill {
            var action = sigaction()
            #if canImport(Darwin)
                action.__sigaction_u.__sa_handler = { recordSignal($0) }
            #else
                action.__sigaction_handler.sa_handler = { recordSignal($0) }
            #endif
            sigemptyset(&action.sa_mask)
            action.sa_flags = 0
            var old = sigaction()
            if sigaction(s.rawValue, &action, &old) == 0 { previous.append((s.rawValue, old)) }
            sigaddset(&unblock, s.rawValue)
        }
        _ = pthread_sigmask(SIG_UNBLOCK, &unblock, nil)
    }

    /// The first trapped signal caught since the last call, cleared; nil when
    /// none was.
    public func takeCaught() -> ProcessSignal? {
        for s in signals {
            let bit = UInt32(1) << UInt32(s.rawValue)
            let before = caughtSignals.bitwiseAnd(~bit, ordering: .sequentiallyConsistent).oldValue
            if before & bit != 0 { return s }
        }
        return nil
    }

    /// True when one of the trapped signals was caught and not yet taken by
    /// ``takeCaught()`` (an atomic load: safe to ask at every step of long
    /// work).
    package var hasCaught: Bool {
        let mask = signals.reduce(UInt32(0)) { $0 | (UInt32(1) << UInt32($1.rawValue)) }
        return caughtSignals.load(ordering: .sequentiallyConsistent) & mask != 0
    }

    /// Puts back the actions the signals had before the trap.
    public func restore() {
        for (number, old) in previous.reversed() {
            var action = old
            _ = sigaction(number, &action, nil)
        }
        previous = []
    }

    deinit { restore() }

    /// Ends this process by `signal`'s default action, as if it had never
    /// been caught, so that the parent (a shell) sees how it ended. Returns
    /// only for a signal whose default action is to be ignored.
    public static func die(of signal: Int32) {
        _ = resetToDefault(signal)
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, signal)
        _ = pthread_sigmask(SIG_UNBLOCK, &set, nil)
        _ = raise(signal)
    }

    /// Runs `body` with `signals` ignored (for example ``ProcessSignal/brokenPipe``
    /// while writing to a pager that may quit early, which then shows as
    /// `EPIPE`), restoring their actions afterwards.
    public static func ignoring<T>(_ signals: [ProcessSignal], _ body: () throws -> T) rethrows -> T {
        var saved: [(Int32, sigaction)] = []
        for s in signals where s != .kill {
            var action = sigaction()
            #if canImport(Darwin)
                action.__sigaction_u.__sa_handler = SIG_IGN
            #else
                action.__sigaction_handler.sa_handler = SIG_IGN
            #endif
            sigemptyset(&action.sa_mask)
            var old = sigaction()
            if sigaction(s.rawValue, &action, &old) == 0 { saved.append((s.rawValue, old)) }
        }
        defer {
            for (number, old) in saved.reversed() {
                var action = old
                _ = sigaction(number, &action, nil)
            }
        }
        return try body()
    }
}

/// `write(2)`, under a name the static method does not shadow.
private func systemWrite(_ fd: Int32, _ buffer: UnsafeRawPointer?, _ count: Int) -> Int {
    write(fd, buffer, count)
}

/// Resets `signal` to its default action.
private func resetToDefault(_ number: Int32) -> Int32 {
    var action = sigaction()
    #if canImport(Darwin)
        action.__sigaction_u.__sa_handler = SIG_DFL
    #else
        action.__sigaction_handler.sa_handler = SIG_DFL
    #endif
    sigemptyset(&action.sa_mask)
    return sigaction(number, &action, nil)
}

/// A child process started in this process's own process group, so that it
/// shares the terminal's foreground group when quire has it: an editor or a
/// pager can read the terminal and is stopped and continued with quire
/// (Ctrl-Z, `fg`). Its signal actions are reset to their defaults and its
/// signal mask is empty, as a shell leaves them for a command it starts.
// @unchecked Sendable: `finished` is written only by the wait methods, which the one thread that
// started the child calls; nothing else writes it.
public final class ChildProcess: @unchecked Sendable {
    /// The child's process id.
    public let processID: Int32
    private var finished: ChildExit?

    private init(processID: Int32) { self.processID = processID }

    /// Starts `arguments[0]` (searched on `PATH`) with `arguments` as its
    /// argument vector and this process's environment.
    ///
    /// - Parameters:
    ///   - standardInput: a descriptor to give the child as its standard
    ///     input, or nil to share this process's.
    ///   - terminalPath: when set (`/dev/tty`), the child's standard input,
    ///     output and error are that file instead (`standardInput` still wins
    ///     for input), so that an editor talks to the terminal even when
    ///     quire's own output is a pipe.
    /// - Throws: ``SystemError`` from `posix_spawnp(3)` (for example
    ///   `ENOENT` when the program is not found) or from opening `terminalPath`.
    public static func spawn(_ arguments: [String], standardInput: Int32? = nil, terminalPath: String? = nil) throws(SystemError)
        -> ChildProcess
    {
        precondition(!arguments.isEmpty, "spawn needs a program")
        #if canImport(Darwin)
            var actions: posix_spawn_file_actions_t? = nil
            var attributes: posix_spawnattr_t? = nil
        #else
            var actions = posix_spawn_file_actions_t()
            var attributes = posix_spawnattr_t()
        #endif
        posix_spawn_file_actions_init(&actions)
        posix_spawnattr_init(&attributes)
        defer {
            posix_spawn_file_actions_destroy(&actions)
            posix_spawnattr_destroy(&attributes)
        }
        var terminal: Int32 = -1
        if let terminalPath {
            terminal = open(terminalPath, O_RDWR | O_CLOEXEC | O_NOCTTY)
            guard terminal >= 0 else { throw SystemError(operation: "open", path: terminalPath, code: errno) }
            posix_spawn_file_actions_adddup2(&actions, terminal, 0)
            posix_spawn_file_actions_adddup2(&actions, terminal, 1)
            posix_spawn_file_actions_adddup2(&actions, terminal, 2)
        }
        defer { if terminal >= 0 { _ = close(terminal) } }
        if let standardInput { posix_spawn_file_actions_adddup2(&actions, standardInput, 0) }
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for s: Int32 in [SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGPIPE, SIGTSTP, SIGTTIN, SIGTTOU, SIGCHLD] { sigaddset(&defaults, s) }
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) }
        argv.append(nil)
        defer { for p in argv { free(p) } }
        var pid: pid_t = 0
        let result = posix_spawnp(&pid, arguments[0], &actions, &attributes, argv, environ)
        guard result == 0 else { throw SystemError(operation: "posix_spawnp", path: arguments[0], code: result) }
        return ChildProcess(processID: pid)
    }

    /// Waits for the child to end. Returns nil as soon as `trap` has caught a
    /// signal (the caller asks ``SignalTrap/takeCaught()`` which, and may call
    /// `wait` again); without a trap, waits until the end.
    public func wait(until trap: SignalTrap? = nil) -> ChildExit? {
        if let finished { return finished }
        while true {
            var status: Int32 = 0
            let r = waitpid(processID, &status, 0)
            if r == processID {
                finished = Self.decode(status)
                return finished
            }
            if r == -1 && errno == EINTR {
                if trap != nil { return nil }
                continue
            }
            // ECHILD: reaped elsewhere; report a failure rather than hang.
            finished = .exited(127)
            return finished
        }
    }

    /// Waits up to `seconds` for the child to end; nil when it still runs.
    public func wait(timeoutSeconds seconds: Double) -> ChildExit? {
        if let finished { return finished }
        let deadline = ProcessStats.monotonicNanoseconds() + UInt64(max(0, seconds) * 1e9)
        while true {
            var status: Int32 = 0
            let r = waitpid(processID, &status, WNOHANG)
            if r == processID {
                finished = Self.decode(status)
                return finished
            }
            if r == -1 && errno != EINTR {
                finished = .exited(127)
                return finished
            }
            if ProcessStats.monotonicNanoseconds() >= deadline { return nil }
            _ = usleep(20_000)
        }
    }

    /// Sends `signal` to the child (nothing once it has been waited for).
    public func send(_ signal: ProcessSignal) {
        guard finished == nil else { return }
        _ = kill(processID, signal.rawValue)
    }

    /// Asks the child to end with `signal`, waits up to `graceSeconds`, then
    /// kills it; returns how it ended.
    @discardableResult
    public func end(with signal: ProcessSignal, graceSeconds: Double = 2) -> ChildExit {
        send(signal)
        if let done = wait(timeoutSeconds: graceSeconds) { return done }
        send(.kill)
        return wait() ?? .killed(ProcessSignal.kill.rawValue)
    }

    /// `waitpid`'s status word: the exit status, or the signal that ended it.
    static func decode(_ status: Int32) -> ChildExit {
        let low = status & 0x7f
        if low == 0 { return .exited((status >> 8) & 0xff) }
        return .killed(low)
    }
}

/// Processes and pipes.
public enum ProcessControl {
    /// True while process `processID` exists (`kill(pid, 0)`; a process of
    /// another user counts as existing).
    public static func isAlive(_ processID: Int32) -> Bool {
        kill(processID, 0) == 0 || errno == EPERM
    }

    /// A new pipe: the descriptors to read and to write (close-on-exec).
    ///
    /// - Throws: ``SystemError`` from `pipe(2)`.
    public static func makePipe() throws(SystemError) -> (read: Int32, write: Int32) {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw SystemError(operation: "pipe", path: "", code: errno) }
        _ = fcntl(fds[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(fds[1], F_SETFD, FD_CLOEXEC)
        return (fds[0], fds[1])
    }

    /// Writes all of `bytes` to `descriptor`, retrying after interruptions.
    ///
    /// - Throws: ``SystemError`` from `write(2)`: `EPIPE` when the reader
    ///   went away (with SIGPIPE ignored), `ENOSPC` on a full disk.
    public static func write(_ bytes: [UInt8], to descriptor: Int32) throws(SystemError) {
        var done = 0
        while done < bytes.count {
            let n = bytes[done...].withUnsafeBytes { systemWrite(descriptor, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw SystemError(operation: "write", path: "", code: errno)
            }
            done += n
        }
    }

    /// True for `EPIPE`: the reader of a pipe went away.
    public static func isBrokenPipe(_ error: SystemError) -> Bool { error.code == EPIPE }

    /// True for `ENOSPC`: no space left on the device.
    public static func isDiskFull(_ error: SystemError) -> Bool { error.code == ENOSPC }

    /// True for `EACCES`, `EPERM` or `EROFS`: not allowed to write there.
    public static func isNotPermitted(_ error: SystemError) -> Bool { error.code == EACCES || error.code == EPERM || error.code == EROFS }

    /// Closes `descriptor`.
    public static func closeDescriptor(_ descriptor: Int32) {
        _ = close(descriptor)
    }

    /// The path of this process's program file, symbolic links resolved by
    /// the system (`/proc/self/exe` on Linux, `_NSGetExecutablePath` on Apple
    /// platforms); nil when the system does not say.
    public static func executablePath() -> String? {
        var buffer = [CChar](repeating: 0, count: 4096)
        #if canImport(Darwin)
            var size = UInt32(buffer.count)
            guard _NSGetExecutablePath(&buffer, &size) == 0 else { return nil }
            return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        #else
            let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
            guard n > 0 else { return nil }
            return String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        #endif
    }

    /// True when `path` names a file this process may execute (`access(2)`, `X_OK`).
    public static func isExecutable(_ path: String) -> Bool {
        access(path, X_OK) == 0 && FileSystem.isRegularFile(path)
    }

    /// Replaces this process with the program at `path` (`execv(3)`), run
    /// with `arguments` (its `argv`, the program's name first) and this
    /// process's environment, descriptors and terminal. Returns only by
    /// throwing.
    ///
    /// - Throws: ``SystemError`` from `execv(3)`, such as `ENOENT` or `EACCES`.
    public static func replaceProcess(with path: String, arguments: [String]) throws(SystemError) -> Never {
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) }
        argv.append(nil)
        _ = execv(path, argv)
        let code = errno
        for p in argv { free(p) }
        throw SystemError(operation: "execv", path: path, code: code)
    }
}
