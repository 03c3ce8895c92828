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
/// The settings while the secret is typed (echo off), put back after a stop.
nonisolated(unsafe) private var quietTerminal = termios()
/// The prompt, written again when the process is continued after a stop.
nonisolated(unsafe) private var savedPrompt: UnsafeMutableBufferPointer<UInt8>?

/// Ctrl-Z (SIGTSTP) or a background read or write (SIGTTIN, SIGTTOU) while
/// echo is off, as `readpassphrase(3)` handles them: the terminal settings
/// are put back (echo on) before the process stops, so the shell and the
/// user get their terminal as it was; when the process is continued (`fg`),
/// echo is turned off again and the prompt shown again before anything else
/// is typed. Only async-signal-safe calls.
private func restoreTerminalAndStop(_ signalNumber: Int32) {
    let savedErrno = errno
    let fd = savedTerminalDescriptor
    if fd >= 0 { _ = tcsetattr(fd, TCSAFLUSH, &savedTerminal) }
    _ = signal(signalNumber, SIG_DFL)
    var only = sigset_t()
    sigemptyset(&only)
    sigaddset(&only, signalNumber)
    _ = pthread_sigmask(SIG_UNBLOCK, &only, nil)
    _ = raise(signalNumber)
    // Continued: hide the typing again, then handle the next stop the same way.
    _ = pthread_sigmask(SIG_BLOCK, &only, nil)
    if fd >= 0 {
        _ = tcsetattr(fd, TCSAFLUSH, &quietTerminal)
        if let p = savedPrompt { _ = write(fd, p.baseAddress, p.count) }
    }
    _ = signal(signalNumber, { restoreTerminalAndStop($0) })
    errno = savedErrno
}

/// SIGCONT without a stop this process saw (SIGSTOP, which cannot be
/// caught): the shell may have reset the terminal meanwhile, so echo is
/// turned off again.
private func hideTypingAgain(_ signalNumber: Int32) {
    let savedErrno = errno
    if savedTerminalDescriptor >= 0 { _ = tcsetattr(savedTerminalDescriptor, TCSANOW, &quietTerminal) }
    errno = savedErrno
}

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
            if n < 0 {
                if errno == EINTR { continue }
                return
            }
            done += n
        }
        wipe(&bytes)
    }

    /// Writes `prompt` to `/dev/tty` and reads one line from it, without the
    /// line ending. With `echo` false, the terminal's echo is turned off while
    /// the line is typed and restored afterwards — also when SIGINT, SIGTERM,
    /// SIGHUP or SIGQUIT arrives meanwhile (the settings are restored, then
    /// the signal takes its default action), and around a stop: on Ctrl-Z
    /// (SIGTSTP, SIGTTIN, SIGTTOU) the settings are restored before the
    /// process stops and echo is turned off again when it continues (SIGCONT),
    /// as `readpassphrase(3)` does.
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
            var quiet = original
            quiet.c_lflag &= ~tcflag_t(ECHO)
            quiet.c_lflag |= tcflag_t(ICANON)
            quietTerminal = quiet
            let promptCopy = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: max(1, prompt.utf8.count))
            _ = promptCopy.initialize(from: prompt.utf8)
            savedPrompt = UnsafeMutableBufferPointer(rebasing: promptCopy[0..<prompt.utf8.count])
            savedTerminalDescriptor = fd
            // A prompt must stay interruptible even when this process was
            // started with these signals blocked (a parent's threads may block them).
            var interrupting = sigset_t()
            sigemptyset(&interrupting)
            for s in [SIGINT, SIGTERM, SIGHUP, SIGQUIT] {
                sigaddset(&interrupting, s)
                previousHandlers.append((s, signal(s, { restoreTerminalAndReraise($0) })))
            }
            for s in [SIGTSTP, SIGTTIN, SIGTTOU] {
                sigaddset(&interrupting, s)
                previousHandlers.append((s, signal(s, { restoreTerminalAndStop($0) })))
            }
            sigaddset(&interrupting, SIGCONT)
            previousHandlers.append((SIGCONT, signal(SIGCONT, { hideTypingAgain($0) })))
            _ = pthread_sigmask(SIG_UNBLOCK, &interrupting, &previousMask)
            restoreMask = true
            guard tcsetattr(fd, TCSAFLUSH, &quiet) == 0 else {
                let code = errno
                for (s, h) in previousHandlers { _ = signal(s, h) }
                _ = pthread_sigmask(SIG_SETMASK, &previousMask, nil)
                savedTerminalDescriptor = -1
                savedPrompt = nil
                promptCopy.deallocate()
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
                if let p = savedPrompt {
                    savedPrompt = nil
                    p.baseAddress?.deallocate()
                }
            }
            if restoreMask { _ = pthread_sigmask(SIG_SETMASK, &previousMask, nil) }
        }
        let promptBytes = Array(prompt.utf8)
        _ = promptBytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        // Reserved at its limit: a growing line would leave freed copies of
        // a typed secret behind, unwiped.
        var line: [UInt8] = []
        line.reserveCapacity(4096)
        var byte: UInt8 = 0
        while line.count < 4096 {
            let n = read(fd, &byte, 1)
            if n < 0 {
                if errno == EINTR { continue }
                wipe(&line)
                throw SystemError(operation: "read", path: "/dev/tty", code: errno)
            }
            if n == 0 {
                if line.isEmpty { return nil }
                break
            }
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
