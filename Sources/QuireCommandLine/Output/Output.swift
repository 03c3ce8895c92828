import Foundation
import QuireSystem

/// Where a command's results go: text or JSON on standard output; errors,
/// warnings and notes on standard error (`Spec/cli-json.md §2`).
///
/// Text for standard output is ``ShownText``: on a terminal its values are
/// escaped and may be coloured, and a long result goes through the pager
/// when the command asked for one (``usePager(_:)``). Everything written to
/// standard error is escaped, terminal or not, so that a name holding a
/// line break cannot forge a line such as `quire: error: …`.
final class Output {
    /// `--json`: one JSON document on stdout and nothing else there.
    var json: Bool
    /// Standard output is a terminal: values are escaped.
    let stdoutIsTerminal: Bool
    /// Colour on stdout: a terminal, `NO_COLOR` unset or empty, `TERM` not `dumb`.
    let colourOut: Bool
    /// The same rules for stderr.
    let colourErr: Bool
    /// True once a JSON document was printed (an error then adds none).
    private(set) var emitted = false
    private var buffer: [UInt8] = []
    private var paging = false

    init(json: Bool = false) {
        self.json = json
        let noColour = !(FileSystem.environment("NO_COLOR") ?? "").isEmpty || FileSystem.environment("TERM") == "dumb"
        stdoutIsTerminal = Terminal.isTerminal(Terminal.standardOutput)
        colourOut = !noColour && stdoutIsTerminal
        colourErr = !noColour && Terminal.isTerminal(Terminal.standardError)
    }

    /// Sends what follows through the pager when it is longer than the
    /// terminal: only on a terminal, never with `--json` or when `enabled`
    /// is false (`--no-pager`).
    func usePager(_ enabled: Bool) {
        paging = enabled && stdoutIsTerminal && !json && Pager.command() != nil
    }

    /// Prints a line on stdout (nothing in JSON mode).
    func line(_ text: ShownText = "") {
        guard !json else { return }
        text.render(into: &buffer, escaping: stdoutIsTerminal, colour: colourOut)
        buffer.append(0x0a)
        if !paging && buffer.count >= 64 * 1024 { flush() }
    }

    /// Prints a note on stderr: an explanation that is not data.
    func note(_ text: String) {
        writeStandardError(TerminalEscape.escape(text, keepingLineBreaks: false) + "\n")
    }

    /// Prints `quire: warning: …` on stderr.
    func warning(_ text: String) {
        writeStandardError(paint("quire: warning:", "33") + " " + TerminalEscape.escape(text, keepingLineBreaks: false) + "\n")
    }

    /// Prints the error and its hint on stderr; in JSON mode also an
    /// `{"error": {…}}` document on stdout.
    func failure(_ f: CLIFailure) {
        var text = paint("quire: error:", "31") + " " + TerminalEscape.escape(f.message, keepingLineBreaks: false) + "\n"
        if let hint = f.hint { text += paint("quire: hint:", "36") + " " + TerminalEscape.escape(hint, keepingLineBreaks: false) + "\n" }
        writeStandardError(text)
        if json && !emitted {
            emit(ErrorJSON(error: .init(code: f.code, message: f.message, hint: f.hint, exitCode: Int(f.exit.rawValue))))
        }
    }

    /// Prints `value` as pretty JSON with sorted keys on stdout (JSON mode only).
    func emit(_ value: some Encodable) {
        guard json else { return }
        emitted = true
        buffer.append(contentsOf: Self.encodedBytes(value))
        buffer.append(0x0a)
        flush()
    }

    /// `value` as pretty JSON with sorted keys and unescaped slashes.
    static func encode(_ value: some Encodable) -> String {
        String(decoding: encodedBytes(value), as: UTF8.self)
    }

    /// The UTF-8 of ``encode(_:)``: written by the value itself when it is
    /// ``PrettyJSONWritable`` (the same bytes), else by JSONEncoder.
    static func encodedBytes(_ value: some Encodable) -> [UInt8] {
        if let writable = value as? any PrettyJSONWritable { return PrettyJSON.encode(writable) }
        return encodedByJSONEncoder(value)
    }

    /// `value` encoded by JSONEncoder (pretty, sorted keys, slashes unescaped).
    static func encodedByJSONEncoder(_ value: some Encodable) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(value) else { return Array("{}".utf8) }
        return Array(data)
    }

    /// Writes what is buffered: through the pager when paging and it is
    /// longer than the terminal, else straight to stdout.
    func finish() {
        if paging {
            paging = false
            let lines = buffer.reduce(0) { $0 + ($1 == 0x0a ? 1 : 0) }
            let rows = TerminalSize.of(Terminal.standardOutput)?.rows ?? 24
            if lines >= rows, Pager.show(buffer) {
                buffer = []
                return
            }
        }
        flush()
    }

    /// Writes the buffer to stdout. When that fails on a full disk, says so
    /// and exits 1; when the reader went away (`quire list | head`), exits
    /// quietly by SIGPIPE, as other tools do.
    private func flush() {
        guard !buffer.isEmpty else { return }
        let bytes = buffer
        buffer = []
        let failure = SignalTrap.ignoring([.brokenPipe]) { () -> SystemError? in
            do throws(SystemError) {
                try ProcessControl.write(bytes, to: Terminal.standardOutput)
                return nil
            } catch {
                return error
            }
        }
        if let error = failure {
            if ProcessControl.isBrokenPipe(error) { SignalTrap.die(of: ProcessSignal.brokenPipe.rawValue) }
            var text = "quire: error: cannot write to standard output: "
            text += ProcessControl.isDiskFull(error) ? "the disk is full\n" : "\(error)\n"
            if ProcessControl.isDiskFull(error) {
                text += "quire: hint: the disk is full: free some space (or write somewhere else) and run the command again\n"
            }
            Terminal.writeStandardError(text)
            exit(ExitCode.failure.rawValue)
        }
    }

    private func writeStandardError(_ text: String) {
        if !paging { flush() }
        Terminal.writeStandardError(text)
    }

    private func paint(_ text: String, _ code: String) -> String {
        colourErr ? "\u{1b}[\(code)m\(text)\u{1b}[0m" : text
    }
}

/// `{"error": {"code", "message", "hint", "exitCode"}}` (`Spec/cli-json.md §3.1`).
struct ErrorJSON: Encodable {
    struct Body: Encodable {
        let code: String
        let message: String
        /// Absent when there is none.
        let hint: String?
        let exitCode: Int
    }

    let error: Body
}

/// A byte count for people: `512 bytes`, `1.2 KiB`, `3.4 MiB`.
func formatBytes(_ n: UInt64) -> String {
    if n < 1024 { return "\(n) byte\(n == 1 ? "" : "s")" }
    let units = ["KiB", "MiB", "GiB", "TiB"]
    var value = Double(n) / 1024
    var unit = 0
    while value >= 1024 && unit < units.count - 1 {
        value /= 1024
        unit += 1
    }
    return String(format: "%.1f %@", value, units[unit])
}

/// `n thing` or `n things`.
func plural(_ n: Int, _ thing: String, _ things: String? = nil) -> String {
    "\(n) \(n == 1 ? thing : (things ?? thing + "s"))"
}
