// The terminal part of the platform shim, for the `quire` command-line tool:
// is a descriptor a terminal, reading a line from /dev/tty with echo off
// (restoring the terminal on Ctrl-C), and writing to standard error.

#if canImport(Glibc)
internal import Glibc
#elseif canImport(Musl)
internal import Musl
#elseif canImport(Darwin)
internal import Darwin
#else
#error("Quire needs a POSIX platform")
#endif

/// The terminal settings to put back if a signal arrives while echo is off.
/// Written only while no handler is installed; read by the handler.
#if canImport(Darwin)
private typealias SignalHandler = sig_t
#elseif canImport(Glibc)
private typealias SignalHandler = __sighandler_t
#else
private typealias SignalHandler = @convention(c) (Int32) -> Void
#endif

nonisolated(unsafe) private var savedTerminal = termios()
nonisolated(unsafe) private var savedTerminalDescriptor: Int32 = -1

/// Restores the saved terminal settings, then lets the signal do what it
/// would have done (the handler is reset to the default and the signal
/// raised again). Only async-signal-safe calls.
private func restoreTerminalAndReraise(_ signalNumber: Int32) {
    if savedTerminalDescriptor >= 0 {
        _ = tcsetattr(savedTerminalDescriptor, TCSAFLUSH, &savedTerminal)
        _ = write(savedTerminalDescriptor, "\n", 1)
    }
    _ = signal(signalNumber, SIG_DFL)
    _ = raise(signalNumber)
}

/// Terminal questions and prompts (`/dev/tty`).
public enum Terminal {
    /// Standard input's descriptor.
    public static let standardInput: Int32 = 0
    /// Standard output's descriptor.
    public static let standardOutput: Int32 = 1
    /// Standard error's descriptor.
    public static let standardError: Int32 = 2

    /// True when `descriptor` refers to a terminal (`isatty(3)`).
    public static func isTerminal(_ descriptor: Int32) -> Bool {
        isatty(descriptor) == 1
    }

    /// Writes `text` (UTF-8) to standard error, unbuffered.
    public static func writeStandardError(_ text: String) {
        var bytes = Array(text.utf8)
        var done = 0
        while done < bytes.count {
            let n = bytes[done...].withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
            if n < 0 { if errno == EINTR { continue }; return }
            done += n
        }
        wipe(&bytes)
    }

    /// Writes `prompt` to `/dev/tty` and reads one line from it, without the
    /// line ending. With `echo` false, the terminal's echo is turned off while
    /// the line is typed and restored afterwards — also when SIGINT, SIGTERM,
    /// SIGHUP or SIGQUIT arrives meanwhile (the settings are restored, then
    /// the signal takes its default action).
    ///
    /// The bytes are returned as typed (UTF-8, at most 4096); the caller
    /// should wipe them when they are a secret.
    ///
    /// - Returns: nil at end of input (Ctrl-D on an empty line).
    /// - Throws: ``SystemError`` when `/dev/tty` cannot be opened (no
    ///   controlling terminal) or its settings cannot be read.
    public static func readLine(prompt: String, echo: Bool) throws(SystemError) -> [UInt8]? {
        let fd = open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY)
        guard fd >= 0 else { throw SystemError(operation: "open", path: "/dev/tty", code: errno) }
        defer { _ = close(fd) }
        var original = termios()
        var restore = false
        var previousHandlers: [(Int32, SignalHandler?)] = []
        var previousMask = sigset_t()
        var restoreMask = false
        if !echo {
            guard tcgetattr(fd, &original) == 0 else { throw SystemError(operation: "tcgetattr", path: "/dev/tty", code: errno) }
            savedTerminal = original
            savedTerminalDescriptor = fd
            // A prompt must stay interruptible even when this process was
            // started with these signals blocked (a parent's threads may block them).
            var interrupting = sigset_t()
            sigemptyset(&interrupting)
            for s in [SIGINT, SIGTERM, SIGHUP, SIGQUIT] {
                sigaddset(&interrupting, s)
                previousHandlers.append((s, signal(s, { restoreTerminalAndReraise($0) })))
            }
            _ = pthread_sigmask(SIG_UNBLOCK, &interrupting, &previousMask)
            restoreMask = true
            var quiet = original
            quiet.c_lflag &= ~tcflag_t(ECHO)
            quiet.c_lflag |= tcflag_t(ICANON)
            guard tcsetattr(fd, TCSAFLUSH, &quiet) == 0 else {
                let code = errno
                for (s, h) in previousHandlers { _ = signal(s, h) }
                _ = pthread_sigmask(SIG_SETMASK, &previousMask, nil)
                savedTerminalDescriptor = -1
                throw SystemError(operation: "tcsetattr", path: "/dev/tty", code: code)
            }
            restore = true
        }
        defer {
            if restore {
                _ = tcsetattr(fd, TCSAFLUSH, &original)
                _ = write(fd, "\n", 1)
                savedTerminalDescriptor = -1
                for (s, h) in previousHandlers { _ = signal(s, h) }
            }
            if restoreMask { _ = pthread_sigmask(SIG_SETMASK, &previousMask, nil) }
        }
        let promptBytes = Array(prompt.utf8)
        _ = promptBytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        var line: [UInt8] = []
        var byte: UInt8 = 0
        while line.count < 4096 {
            let n = read(fd, &byte, 1)
            if n < 0 {
                if errno == EINTR { continue }
                wipe(&line)
                throw SystemError(operation: "read", path: "/dev/tty", code: errno)
            }
            if n == 0 { if line.isEmpty { return nil }; break }
            if byte == 0x0a { break }
            line.append(byte)
        }
        byte = 0
        if line.last == 0x0d { line.removeLast() }
        return line
    }

    /// Overwrites `bytes` with zeros.
    static func wipe(_ bytes: inout [UInt8]) {
        for i in bytes.indices { bytes[i] = 0 }
    }
}
