import Foundation
import Testing
import QuireTestSupport

/// Drives a command through a pseudo-terminal (Python's `pty.fork`): it
/// answers each prompt (output ending in ": " or "] ") with the next answer,
/// sends Ctrl-C instead when the answer is "^C", and prints everything the
/// terminal showed, then `ECHO-ON` or `ECHO-OFF` (the terminal's echo flag
/// after the command ended) and `EXIT n` (a negative n: killed by signal -n).
let ptyDriver = #"""
    import os, pty, select, signal, sys, termios, time
    answers = [a for a in sys.argv[1].split("\x1f") if a] if sys.argv[1] else []
    pid, fd = pty.fork()
    if pid == 0:
        # As a shell starts a command: no blocked signals, default actions.
        signal.pthread_sigmask(signal.SIG_SETMASK, [])
        for s in (signal.SIGINT, signal.SIGQUIT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(s, signal.SIG_DFL)
        os.execvp(sys.argv[2], sys.argv[2:])
    out = b""
    done, status = 0, 0
    deadline = time.time() + 60
    while time.time() < deadline:
        r, _, _ = select.select([fd], [], [], 0.2)
        if r:
            try:
                data = os.read(fd, 65536)
            except OSError:
                break
            if not data:
                break
            out += data
            continue
        if answers and (out.endswith(b": ") or out.endswith(b"] ")):
            a = answers.pop(0)
            os.write(fd, b"\x03" if a == "^C" else a.encode() + b"\n")
            out += b"<<answered>>"
        d, st = os.waitpid(pid, os.WNOHANG)
        if d:
            done, status = d, st
            try:
                while True:
                    r, _, _ = select.select([fd], [], [], 0.2)
                    if not r: break
                    data = os.read(fd, 65536)
                    if not data: break
                    out += data
            except OSError:
                pass
            break
    else:
        os.kill(pid, 9)
    if not done:
        done, status = os.waitpid(pid, 0)
    try:
        echo = termios.tcgetattr(fd)[3] & termios.ECHO
        state = "ECHO-ON" if echo else "ECHO-OFF"
    except termios.error:
        state = "ECHO-UNKNOWN"
    sys.stdout.write(out.decode("utf-8", "replace") + "\n" + state + "\nEXIT %d\n" % os.waitstatus_to_exitcode(status))
    """#

extension Sandbox {
    /// Runs `quire args…` on a pseudo-terminal, answering prompts with `answers`.
    func onTerminal(_ args: [String], answers: [String], env extra: [String: String] = [:]) throws -> (output: String, exit: Int32, echoOn: Bool) {
        var env = environment.merging(extra) { $1 }
        env["PATH"] = (env["PATH"] ?? "") + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin")
        let (status, text) = try python(ptyDriver, [answers.joined(separator: "\u{1f}"), "/usr/bin/env", "-C", dir, binary] + args, env: env)
        #expect(status == 0, "\(text)")
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        let exitLine = lines.last { $0.hasPrefix("EXIT ") } ?? "EXIT 999"
        return (text, Int32(exitLine.dropFirst(5)) ?? 999, text.contains("\nECHO-ON\n"))
    }
}

@Suite(.tags(.slow), .skippedByMakeCheck) struct TerminalTests {
    @Test func passphrasePromptReadsTheTerminalWithEchoOff() throws {
        let box = try Sandbox()
        let secret = "correct horse battery staple"
        let r = try box.onTerminal(["init", "Journal.quire", "--passphrase", "--recovery-key-file", "rk.txt", "--device-name", "Laptop"], answers: [secret, secret])
        #expect(r.exit == 0, "\(r.output)")
        #expect(r.output.contains("New passphrase: "))
        #expect(r.output.contains("Type it again: "))
        #expect(!r.output.contains(secret))
        #expect(r.output.contains("A passphrase can also open it."))
        #expect(r.echoOn)
        // The passphrase opens it on a device with no key.
        try box.write("pass.txt", secret + "\n")
        let opened = try box.quire(["list", "Journal.quire", "--passphrase-file", "pass.txt"], env: ["QUIRE_HOME": box.path("other")])
        #expect(opened.status == 0, "\(opened)")
    }

    @Test func mismatchedPassphrasesChangeNothing() throws {
        let box = try Sandbox()
        let r = try box.onTerminal(["init", "Journal.quire", "--passphrase", "--recovery-key-file", "rk.txt"], answers: ["one thing", "another"])
        #expect(r.exit == 1, "\(r.output)")
        #expect(r.output.contains("quire: error: the two passphrases differ; nothing was changed"))
        #expect(!FileManager.default.fileExists(atPath: box.path("Journal.quire")))
    }

    @Test func ctrlCAtThePromptRestoresTheTerminal() throws {
        let box = try Sandbox()
        let r = try box.onTerminal(["init", "Journal.quire", "--passphrase", "--recovery-key-file", "rk.txt"], answers: ["^C"])
        #expect(r.exit == -2, "\(r.output)")  // killed by SIGINT, as the shell expects
        #expect(r.echoOn, "\(r.output)")
        #expect(!FileManager.default.fileExists(atPath: box.path("Journal.quire")))
    }

    @Test func aNewDeviceIsOfferedTheRecoveryKeyPrompt() throws {
        let box = try Sandbox()
        try box.makeVault()
        _ = try box.add("hello from the laptop")
        let code = try String(contentsOfFile: box.path("recovery.txt"), encoding: .utf8).trimmingCharacters(in: .newlines)
        let r = try box.onTerminal(["list", "Journal.quire"], answers: [code], env: ["QUIRE_HOME": box.path("new-device")])
        #expect(r.exit == 0, "\(r.output)")
        #expect(r.output.contains("This device has no key yet.\r\nType the recovery key or the passphrase: "))
        #expect(r.output.contains("hello from the laptop"))
        #expect(!r.output.contains(code))
    }

    @Test func addWithoutTextOpensTheEditorOnAPrivateTemporaryFile() throws {
        let box = try Sandbox()
        try box.makeVault()
        try box.write("editor.sh", """
            #!/bin/sh
            stat -c '%a' "$(dirname "$1")" "$1" > "\(box.path("modes.txt"))"
            echo "$1" > "\(box.path("where.txt"))"
            printf 'Written in the editor\\nsecond line\\n' > "$1"

            """, mode: 0o700)
        let r = try box.onTerminal(["add", "Journal.quire", "--date", "2026-03-01"], answers: [], env: ["EDITOR": box.path("editor.sh"), "VISUAL": ""])
        #expect(r.exit == 0, "\(r.output)")
        let modes = try String(contentsOfFile: box.path("modes.txt"), encoding: .utf8)
        #expect(modes == "700\n600\n")
        let temp = try String(contentsOfFile: box.path("where.txt"), encoding: .utf8).trimmingCharacters(in: .newlines)
        #expect(!FileManager.default.fileExists(atPath: temp))
        #expect(!FileManager.default.fileExists(atPath: (temp as NSString).deletingLastPathComponent))
        let list = try box.quire(["list", "Journal.quire"])
        #expect(list.stdout.hasSuffix("  2026-03-01        Written in the editor\n"))
    }

    @Test func editOpensTheEditorWithTheTextUnlessOnlyFieldsChange() throws {
        let box = try Sandbox()
        try box.makeVault()
        let id = try box.add("Old text", ["--date", "2026-03-01"])
        // The text arrives with a final line break, so an added line is a line.
        try box.write("append.sh", "#!/bin/sh\nprintf 'and more\\n' >> \"$1\"\n", mode: 0o700)
        let r = try box.onTerminal(["edit", "Journal.quire", id], answers: [], env: ["VISUAL": box.path("append.sh")])
        #expect(r.exit == 0, "\(r.output)")
        #expect(try box.quire(["show", "Journal.quire", id, "--json"]).json()["text"] as? String == "Old text\nand more")
        // Only a field: no editor (this one would fail the command).
        try box.write("fail.sh", "#!/bin/sh\nexit 3\n", mode: 0o700)
        let tags = try box.onTerminal(["edit", "Journal.quire", id, "--tag", "x"], answers: [], env: ["VISUAL": box.path("fail.sh")])
        #expect(tags.exit == 0, "\(tags.output)")
        let failed = try box.onTerminal(["edit", "Journal.quire", id], answers: [], env: ["VISUAL": box.path("fail.sh")])
        #expect(failed.exit == 1)
        #expect(failed.output.contains("quire: error: the editor"))
        let shown = try box.quire(["show", "Journal.quire", id, "--json"]).json()
        #expect(shown["tags"] as? [String] == ["x"])
        #expect(shown["text"] as? String == "Old text\nand more")
    }

    @Test func colourOnlyOnATerminalAndNeverWithNoColor() throws {
        let box = try Sandbox()
        try box.makeVault()
        _ = try box.add("coloured", ["--tag", "t"])
        let plain = try box.onTerminal(["list", "Journal.quire"], answers: [], env: ["NO_COLOR": "1", "TERM": "xterm"])
        #expect(!plain.output.contains("\u{1b}["), "\(plain.output)")
        let colour = try box.onTerminal(["list", "Journal.quire"], answers: [], env: ["NO_COLOR": "", "TERM": "xterm"])
        #expect(colour.output.contains("\u{1b}[33m"), "\(colour.output)")
        let piped = try box.quire(["list", "Journal.quire"], env: ["NO_COLOR": "", "TERM": "xterm"])
        #expect(!piped.stdout.contains("\u{1b}["))
    }

    @Test func progressLineOnlyWhenStderrIsATerminal() throws {
        let box = try Sandbox()
        try box.makeVault()
        _ = try box.add("x")
        let tty = try box.onTerminal(["verify", "Journal.quire"], answers: [])
        #expect(tty.output.contains("verifying Journal.quire…"), "\(tty.output)")
        #expect(tty.output.contains("\r\u{1b}[K"))
        for args in [["verify", "Journal.quire"], ["compact", "Journal.quire"], ["resolve", "Journal.quire"]] {
            let piped = try box.quire(args)
            #expect(piped.status == 0)
            #expect(piped.stderr == "", "\(args)")
            #expect(!piped.stdout.contains("\r"))
        }
    }
}
