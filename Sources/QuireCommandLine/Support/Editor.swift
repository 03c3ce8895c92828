import Foundation
@_spi(Format) import Quire
import QuireSystem

/// Text for `add` and `edit`: the TEXT operand, standard input (`-`), or
/// `$VISUAL` / `$EDITOR` on a temporary file.
enum EntryText {
    /// Standard input, as UTF-8.
    static func standardInput() throws(CLIFailure) -> String {
        let data = FileHandle.standardInput.readDataToEndOfFile()
        guard let text = String(data: data, encoding: .utf8) else {
            throw CLIFailure("standard input is not UTF-8 text", code: "usage", exit: .usage)
        }
        return text
    }

    /// Opens `$VISUAL` or `$EDITOR` (else `vi`) on a 0600 file holding
    /// `initial` in a private session folder (``EditorSession``); returns
    /// what was saved, without trailing line breaks and spaces, or nil when
    /// the editor left it empty (a cancel, as in `git commit`).
    ///
    /// The editor runs as a shell runs a foreground command: in quire's
    /// process group (the terminal's foreground group), its terminal as
    /// standard input and output, signals at their defaults. Meanwhile quire
    /// waits as a shell does: Ctrl-C and Ctrl-\\ are the editor's; when
    /// SIGHUP (the terminal closed) or SIGTERM arrives, quire ends the
    /// editor, wipes the session folder and dies of the same signal. Every
    /// file in the folder (an editor's swap and backup files too) is
    /// overwritten with zeros and removed whatever happens; after a SIGKILL
    /// the next run of quire does it (``EditorScratch/sweep()``).
    static func compose(initial: String) throws(CLIFailure) -> String? {
        let env = ProcessInfo.processInfo.environment
        let editor = [env["VISUAL"], env["EDITOR"]].compactMap { $0 }.first { !$0.isEmpty } ?? "vi"
        let trap = SignalTrap([.hangup, .terminate, .interrupt, .quit])
        defer { trap.restore() }
        // A final line break, so that a line added at the end starts a line.
        var seed = Array(initial.utf8)
        defer { wipe(&seed) }
        if let last = seed.last, last != 0x0a { seed.append(0x0a) }
        let session = try EditorSession(initial: seed)
        defer { session.end() }
        func dieIfAskedTo(_ child: ChildProcess?) {
            guard let signal = trap.takeCaught() else { return }
            if signal == .hangup || signal == .terminate {
                child?.end(with: signal)
                session.end()
                trap.restore()
                SignalTrap.die(of: signal.rawValue)
            }
        }
        let child: ChildProcess
        do {
            child = try ChildProcess.spawn(
                ["/bin/sh", "-c", "exec " + editor + " \"$1\"", "quire-editor", session.path], terminalPath: "/dev/tty")
        } catch {
            throw CLIFailure("cannot start the editor '\(editor)': \(error)", hint: "set VISUAL or EDITOR to an editor on your PATH")
        }
        var exit: ChildExit?
        while exit == nil {
            exit = child.wait(until: trap)
            dieIfAskedTo(child)
        }
        switch exit! {
        case .exited(0):
            break
        case .exited(let status):
            throw CLIFailure("the editor '\(editor)' exited with status \(status); nothing was saved", code: "cancelled")
        case .killed(let signal):
            session.end()
            if signal == ProcessSignal.interrupt.rawValue || signal == ProcessSignal.quit.rawValue {
                trap.restore()
                SignalTrap.die(of: signal)
            }
            throw CLIFailure("the editor '\(editor)' was ended by signal \(signal); nothing was saved", code: "cancelled")
        }
        var bytes = try session.read()
        defer { wipe(&bytes) }
        session.end()
        dieIfAskedTo(nil)
        let text = String(decoding: bytes, as: UTF8.self)
        var end = text.endIndex
        while end > text.startIndex, let c = text[text.index(before: end)...].first, c.isWhitespace { end = text.index(before: end) }
        let trimmed = String(text[..<end])
        return trimmed.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty ? nil : trimmed
    }

    /// The text for `add`/`edit`: the TEXT operand (`-`: standard input);
    /// without it, nil when `optional` (other fields are being changed),
    /// else the editor with `initial` when standard input is a terminal,
    /// else a usage error. `done` names what an emptied editor leaves
    /// undone ("added", "changed").
    static func from(_ operand: String?, initial: String, optional: Bool, done: String, command: String) throws(CLIFailure) -> String? {
        if let operand { return operand == "-" ? try standardInput() : operand }
        if optional { return nil }
        if Prompt.isInteractive {
            guard let text = try compose(initial: initial) else {
                throw CLIFailure("the editor left the entry empty; nothing was \(done)", code: "empty_entry")
            }
            return text
        }
        throw CLIFailure.usage(
            "no TEXT: give the text, or '-' to read it from standard input (the editor opens only on a terminal)", command: command)
    }
}
