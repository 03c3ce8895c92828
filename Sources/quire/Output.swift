import Foundation
import QuireSystem

/// Where a command's results go: text or JSON on standard output; errors,
/// warnings and progress on standard error.
final class Output: @unchecked Sendable {
    /// `--json` was given: print one JSON document on stdout and nothing else there.
    var json: Bool
    /// Colour on stdout: only on a terminal, and never with `NO_COLOR` set.
    let colourOut: Bool
    /// Colour on stderr: the same rules for stderr.
    let colourErr: Bool
    /// True once a JSON document was printed (an error then adds none).
    private(set) var emitted = false

    init(json: Bool = false) {
        self.json = json
        let noColour = !(FileSystem.environment("NO_COLOR") ?? "").isEmpty
        colourOut = !noColour && Terminal.isTerminal(Terminal.standardOutput) && FileSystem.environment("TERM") != "dumb"
        colourErr = !noColour && Terminal.isTerminal(Terminal.standardError) && FileSystem.environment("TERM") != "dumb"
    }

    /// Prints a line of text on stdout (nothing in JSON mode).
    func line(_ text: String = "") {
        guard !json else { return }
        writeStandardOutput(Data((text + "\n").utf8))
    }

    /// Prints a note on stderr (progress chatter, explanations that are not data).
    func note(_ text: String) {
        Terminal.writeStandardError(text + "\n")
    }

    /// Prints `quire: warning: …` on stderr.
    func warning(_ text: String) {
        Terminal.writeStandardError(paint("quire: warning:", "33", on: colourErr) + " " + text + "\n")
    }

    /// Prints the error and its hint on stderr; in JSON mode also an
    /// `{"error": {...}}` document on stdout.
    func failure(_ f: CLIFailure) {
        var text = paint("quire: error:", "31", on: colourErr) + " " + f.message + "\n"
        if let hint = f.hint { text += paint("quire: hint:", "36", on: colourErr) + " " + hint + "\n" }
        Terminal.writeStandardError(text)
        if json && !emitted {
            var body: [String: Any] = ["code": f.code, "message": f.message, "exitCode": Int(f.exit.rawValue)]
            if let hint = f.hint { body["hint"] = hint }
            emit(["error": body])
        }
    }

    /// Prints `object` as pretty JSON with sorted keys on stdout (JSON mode only).
    func emit(_ object: Any) {
        guard json else { return }
        emitted = true
        writeStandardOutput(Data((Self.encode(object) + "\n").utf8))
    }

    /// `object` as pretty JSON with sorted keys and unescaped slashes.
    static func encode(_ object: Any) -> String {
        guard JSONSerialization.isValidJSONObject(object),
            let data = try? JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
        else { return "{}" }
        return String(decoding: data, as: UTF8.self)
    }

    /// `text` in the ANSI colour `code` when `on`.
    func paint(_ text: String, _ code: String, on: Bool) -> String {
        on ? "\u{1b}[\(code)m\(text)\u{1b}[0m" : text
    }

    /// `text` coloured for stdout (yellow ids, dim dates…) when colour is on.
    func colour(_ text: String, _ code: String) -> String { paint(text, code, on: colourOut) }
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

/// Writes `data` to standard output. When that fails (a full disk, errno
/// 28; a closed pipe), says so on stderr and exits 1 instead of crashing.
func writeStandardOutput(_ data: Data) {
    do { try FileHandle.standardOutput.write(contentsOf: data) } catch {
        let underlying = (error as NSError).userInfo[NSUnderlyingErrorKey] as? NSError
        let full = underlying?.code == 28 || (error as NSError).code == 640
        var text = "quire: error: cannot write to standard output" + (full ? ": the disk is full\n" : ": \(underlying?.localizedDescription ?? "the write failed")\n")
        if full { text += "quire: hint: the disk is full: free some space (or write somewhere else) and run the command again\n" }
        Terminal.writeStandardError(text)
        exit(ExitCode.failure.rawValue)
    }
}
