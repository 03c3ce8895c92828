import Foundation
@_spi(Format) import Quire
import QuireSystem
import Testing
import QuireTestSupport

/// Drives `quire` on a pseudo-terminal as an interactive shell with job
/// control does: the command runs in its own foreground process group; at
/// its first prompt the driver does what it is told (`argv[1]`):
/// - `limits`: prints the command's `Max core file size` line from /proc;
/// - `suspend`: types Ctrl-Z, and when the command has stopped, takes the
///   terminal back and restores echo (as bash does), then `fg`s it.
/// Then it types `argv[2]` and a newline, and prints everything the terminal
/// showed and `EXIT n`.
let jobControlDriver = #"""
    import os, pty, select, signal, sys, termios, time
    action, answer, argv = sys.argv[1], sys.argv[2], sys.argv[3:]
    pid, fd = pty.fork()
    if pid == 0:
        signal.signal(signal.SIGTTOU, signal.SIG_IGN)
        child = os.fork()
        if child == 0:
            os.setpgid(0, 0)
            os.tcsetpgrp(0, os.getpgrp())
            signal.pthread_sigmask(signal.SIG_SETMASK, [])
            for s in (signal.SIGINT, signal.SIGQUIT, signal.SIGTERM, signal.SIGHUP, signal.SIGTSTP, signal.SIGTTIN, signal.SIGTTOU):
                signal.signal(s, signal.SIG_DFL)
            os.execvp(argv[0], argv)
        try: os.setpgid(child, child)
        except OSError: pass
        os.write(1, b"<<pid %d>>" % child)
        _, st = os.waitpid(child, os.WUNTRACED)
        if os.WIFSTOPPED(st):
            os.tcsetpgrp(0, os.getpgrp())
            a = termios.tcgetattr(0); a[3] |= termios.ECHO | termios.ICANON; termios.tcsetattr(0, termios.TCSADRAIN, a)
            os.write(1, b"<<stopped>>")
            time.sleep(0.3)
            os.tcsetpgrp(0, child)
            os.killpg(child, signal.SIGCONT)
            os.write(1, b"<<continued>>")
            _, st = os.waitpid(child, 0)
        os._exit(os.waitstatus_to_exitcode(st) & 0xff)
    out = b""
    def pump(until, seconds):
        global out
        end = time.time() + seconds
        while time.time() < end and not until(out):
            r, _, _ = select.select([fd], [], [], 0.1)
            if r:
                try: data = os.read(fd, 65536)
                except OSError: return
                if not data: return
                out += data
    pump(lambda o: o.rstrip().endswith(b":"), 30)
    child = int(out.split(b"<<pid ")[1].split(b">>")[0])
    if action == "limits":
        for line in open("/proc/%d/limits" % child):
            if line.startswith("Max core file size"): out += b"<<" + line.strip().encode() + b">>"
    if action == "suspend":
        os.write(fd, b"\x1a")
        pump(lambda o: b"<<continued>>" in o, 10)
        time.sleep(0.7)
    os.write(fd, answer.encode() + b"\n")
    pump(lambda o: False, 30)
    _, status = os.waitpid(pid, 0)
    sys.stdout.write(out.decode("utf-8", "replace") + "\nEXIT %d\n" % os.waitstatus_to_exitcode(status))
    """#

extension Sandbox {
    /// Runs `quire args…` under ``jobControlDriver``.
    func underJobControl(_ action: String, answer: String, _ args: [String], env extra: [String: String] = [:]) throws -> (output: String, exit: Int32) {
        var env = environment.merging(extra) { $1 }
        env["PATH"] = (env["PATH"] ?? "") + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin")
        let (status, text) = try python(jobControlDriver, [action, answer, "/usr/bin/env", "-C", dir, binary] + args, env: env)
        #expect(status == 0, "\(text)")
        let exitLine = text.split(separator: "\n").last { $0.hasPrefix("EXIT ") } ?? "EXIT 999"
        return (text, Int32(exitLine.dropFirst(5)) ?? 999)
    }
}

@Suite(.tags(.slow), .skippedByMakeCheck) struct PromptSafetyTests {
    static func recoveryCode(_ box: Sandbox) throws -> String {
        try String(contentsOfFile: box.path("recovery.txt"), encoding: .utf8).trimmingCharacters(in: .newlines)
    }

    @Test func theSecretIsNotEchoedAfterCtrlZAndFg() throws {
        let box = try Sandbox()
        try box.makeVault()
        _ = try box.add("seen after fg")
        let code = try Self.recoveryCode(box)
        let r = try box.underJobControl("suspend", answer: code, ["list", "Journal.quire"], env: ["QUIRE_HOME": box.path("new-device")])
        #expect(r.output.contains("<<stopped>>"), "the command did not stop on Ctrl-Z: \(r.output)")
        #expect(r.exit == 0, "\(r.output)")
        #expect(r.output.contains("seen after fg"), "\(r.output)")
        #expect(!r.output.contains(String(code.prefix(9))), "the recovery key was echoed: \(r.output)")
    }

    @Test func coreDumpsAreOff() throws {
        let box = try Sandbox()
        try box.makeVault()
        let code = try Self.recoveryCode(box)
        let r = try box.underJobControl("limits", answer: code, ["list", "Journal.quire"], env: ["QUIRE_HOME": box.path("new-device")])
        #expect(r.output.contains("<<Max core file size        0                    0                    bytes>>"), "\(r.output)")
        #expect(r.exit == 0, "\(r.output)")
    }
}
