// The terminal's size, for deciding whether output needs a pager.

#if canImport(Glibc)
    internal import Glibc
#elseif canImport(Musl)
    internal import Musl
#elseif canImport(Darwin)
    internal import Darwin
#else
    #error("Quire needs a POSIX platform")
#endif

/// The size of the terminal window.
public enum TerminalSize {
    /// Rows and columns of the terminal on `descriptor` (`TIOCGWINSZ`), or
    /// nil when it is not a terminal or reports no size.
    public static func of(_ descriptor: Int32) -> (rows: Int, columns: Int)? {
        var size = winsize()
        guard ioctl(descriptor, UInt(TIOCGWINSZ), &size) == 0, size.ws_row > 0 else { return nil }
        return (Int(size.ws_row), Int(size.ws_col))
    }
}
