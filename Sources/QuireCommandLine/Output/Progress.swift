import Foundation
import QuireSystem

/// A progress line on stderr, drawn only when stderr is a terminal (never
/// in a pipe or a log file). `update` redraws at most every 100 ms;
/// `finish` clears the line.
final class ProgressBar {
    let label: String
    let enabled: Bool
    private var lastDraw: UInt64 = 0
    private var drawn = false

    /// `label` may hold a path: it is escaped, as everything quire writes
    /// to the terminal is (``TerminalEscape``).
    init(_ label: String) {
        self.label = TerminalEscape.escape(label, keepingLineBreaks: false)
        enabled = Terminal.isTerminal(Terminal.standardError)
    }

    /// Shows the label alone, for work whose size is not known.
    func start() {
        guard enabled else { return }
        Terminal.writeStandardError("\r\u{1b}[K\(label)…")
        drawn = true
    }

    /// Draws `done` of `total` (or a count when the total is unknown).
    func update(done: Int, total: Int?) {
        guard enabled else { return }
        let now = ProcessStats.monotonicNanoseconds()
        guard !drawn || now - lastDraw >= 100_000_000 || done == total else { return }
        lastDraw = now
        drawn = true
        if let total, total > 0 {
            let width = 30
            let filled = min(width, done * width / total)
            let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
            Terminal.writeStandardError("\r\u{1b}[K\(label) [\(bar)] \(done)/\(total)")
        } else {
            Terminal.writeStandardError("\r\u{1b}[K\(label)… \(done)")
        }
    }

    /// Clears the line.
    func finish() {
        guard enabled, drawn else { return }
        Terminal.writeStandardError("\r\u{1b}[K")
        drawn = false
    }
}
