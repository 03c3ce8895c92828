import Foundation
import QuireSystem

/// The pager long output goes through on a terminal: `$PAGER` (run by the
/// shell, as git does), else `less` with `LESS=FRX` when `LESS` is unset
/// (quit at the end of one screen, keep colours, leave the text on the
/// screen). `PAGER` set to an empty string or `cat` turns paging off.
enum Pager {
    /// The command line to run, or nil for no pager.
    static func command() -> String? {
        if let pager = FileSystem.environment("PAGER") {
            let trimmed = pager.trimmingCharacters(in: .whitespaces)
            return trimmed.isEmpty || trimmed == "cat" ? nil : trimmed
        }
        return "less"
    }

    /// Shows `bytes` in the pager and waits for it to end; false when no
    /// pager could be started or found (the caller prints the text itself).
    ///
    /// The pager runs in quire's process group, as the editor does
    /// (``ChildProcess``); quire ignores Ctrl-C meanwhile (the pager's to
    /// handle) and stops writing when the pager quits early.
    static func show(_ bytes: [UInt8]) -> Bool {
        guard let command = command() else { return false }
        if FileSystem.environment("LESS") == nil { setenv("LESS", "FRX", 1) }
        let trap = SignalTrap([.interrupt, .quit])
        defer { trap.restore() }
        let pipe: (read: Int32, write: Int32)
        do { pipe = try ProcessControl.makePipe() } catch { return false }
        let child: ChildProcess
        do {
            child = try ChildProcess.spawn(["/bin/sh", "-c", "exec " + command], standardInput: pipe.read)
        } catch {
            ProcessControl.closeDescriptor(pipe.read)
            ProcessControl.closeDescriptor(pipe.write)
            return false
        }
        ProcessControl.closeDescriptor(pipe.read)
        SignalTrap.ignoring([.brokenPipe]) {
            _ = try? ProcessControl.write(bytes, to: pipe.write)
        }
        ProcessControl.closeDescriptor(pipe.write)
        var exit: ChildExit?
        while exit == nil {
            exit = child.wait(until: trap)
            _ = trap.takeCaught()
        }
        // 126/127: the shell found no such pager; the caller prints instead.
        return exit != .exited(127) && exit != .exited(126)
    }
}
