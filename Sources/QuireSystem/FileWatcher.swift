// Watching a file for changes: inotify on Linux, a dispatch source (kqueue)
// on Apple platforms. Part of the platform shim: the only place that makes
// these calls.

public import Dispatch

#if canImport(Glibc)
    internal import Glibc
#elseif canImport(Musl)
    internal import Musl
#elseif canImport(Darwin)
    internal import Darwin
#endif

/// Watches one file, and the folder that holds it, and calls a handler on a
/// queue when the file may have changed: written or extended in place,
/// created, deleted, or replaced by a rename (as sync tools and
/// compactions do). Events are not interpreted: the handler looks at the
/// file itself. Bursts are delivered as they come; coalescing is the
/// caller's (``VaultObserver`` in Quire).
///
/// Linux watches the folder with inotify (events for the file's name:
/// modify, close after write, attributes, create, delete, moved to or
/// from), which keeps working across replacements. Apple platforms watch
/// the folder and the file with dispatch sources (kqueue `EVFILT_VNODE`),
/// opening the file again when it was replaced.
///
/// Thread-safe. ``cancel()`` (or the last reference going away) stops the
/// watch and closes its descriptors; no handler runs after ``cancel()``
/// returns on the watcher's queue.
///
/// It is `@unchecked Sendable` because its mutable state (the dispatch
/// sources and, on Apple platforms, the file's source) is touched only on
/// its serial queue or under its lock, which the compiler cannot check.
public final class FileWatcher: @unchecked Sendable {
    /// The watched file's path.
    public let path: String
    let queue: DispatchQueue
    let handler: @Sendable () -> Void
    /// True when events about other names in the folder are delivered too.
    let includesSiblings: Bool
    let lock = RecursiveLock()
    var cancelled = false
    var sources: [any DispatchSourceProtocol] = []
    #if canImport(Darwin)
        var fileSource: (any DispatchSourceFileSystemObject)?
    #endif

    /// Starts watching `path` (whose folder must exist; the file need not).
    ///
    /// - Parameters:
    ///   - queue: a serial queue the handler runs on.
    ///   - includingSiblings: also call the handler for events about other
    ///     names in the folder (a sync tool's conflict copy appearing beside
    ///     the file); default false.
    ///   - handler: called after each batch of events about the file.
    /// - Throws: ``SystemError`` when the system refuses the watch (no
    ///   such folder, too many watches: `inotify_add_watch`, `open`).
    public init(path: String, queue: DispatchQueue, includingSiblings: Bool = false, handler: @escaping @Sendable () -> Void)
        throws(SystemError)
    {
        self.path = path
        self.queue = queue
        self.handler = handler
        includesSiblings = includingSiblings
        try start()
    }

    deinit { cancel() }

    /// True until ``cancel()``.
    public var isWatching: Bool { lock.withLock { !cancelled } }

    /// Stops watching and closes the descriptors (asynchronously, on the
    /// watcher's queue, once no handler runs). Calling it again does nothing.
    public func cancel() {
        let toCancel: [any DispatchSourceProtocol] = lock.withLock {
            guard !cancelled else { return [] }
            cancelled = true
            var all = sources
            #if canImport(Darwin)
                if let f = fileSource { all.append(f) }
                fileSource = nil
            #endif
            sources = []
            return all
        }
        for s in toCancel { s.cancel() }
    }

    /// The folder of `path` and the file's name in it.
    static func split(_ path: String) -> (folder: String, name: String) {
        guard let slash = path.lastIndex(of: "/") else { return (".", path) }
        let folder = String(path[..<slash])
        return (folder.isEmpty ? "/" : folder, String(path[path.index(after: slash)...]))
    }

    /// Delivers one batch of events, unless cancelled.
    func fire() {
        guard isWatching else { return }
        handler()
    }

    #if canImport(Glibc) || canImport(Musl)
        private func start() throws(SystemError) {
            let (folder, name) = Self.split(path)
            let fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
            guard fd >= 0 else { throw SystemError(operation: "inotify_init1", path: path, code: errno) }
            let mask = UInt32(IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO)
            guard inotify_add_watch(fd, folder, mask) >= 0 else {
                let code = errno
                close(fd)
                throw SystemError(operation: "inotify_add_watch", path: folder, code: code)
            }
            let source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
            let watched: String? = includesSiblings ? nil : name
            source.setEventHandler { [weak self] in
                if Self.drain(fd, name: watched) { self?.fire() }
            }
            source.setCancelHandler { close(fd) }
            sources = [source]
            source.resume()
        }

        /// Reads every pending inotify event from `fd`; true when one is about
        /// the file `name` (any name when nil), or the queue overflowed, so one
        /// may have been.
        private static func drain(_ fd: Int32, name: String?) -> Bool {
            let header = MemoryLayout<inotify_event>.size
            var buffer = [UInt8](repeating: 0, count: 64 * 1024)
            var relevant = false
            while true {
                let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                guard n > 0 else { break }
                var at = 0
                while at + header <= n {
                    let (mask, length) = buffer.withUnsafeBytes { raw -> (UInt32, Int) in
                        let e = raw.loadUnaligned(fromByteOffset: at, as: inotify_event.self)
                        return (e.mask, Int(e.len))
                    }
                    if mask & UInt32(IN_Q_OVERFLOW) != 0 {
                        relevant = true
                    } else if name == nil {
                        relevant = true
                    } else if let name, length > 0, at + header + length <= n {
                        let bytes = buffer[(at + header)..<(at + header + length)]
                        let nameBytes = bytes.prefix { $0 != 0 }
                        if nameBytes.elementsEqual(name.utf8) { relevant = true }
                    }
                    at += header + length
                }
            }
            return relevant
        }
    #elseif canImport(Darwin)
        private func start() throws(SystemError) {
            let (folder, _) = Self.split(path)
            let fd = open(folder, O_EVTONLY | O_CLOEXEC)
            guard fd >= 0 else { throw SystemError(operation: "open", path: folder, code: errno) }
            let source = DispatchSource.makeFileSystemObjectSource(
                fileDescriptor: fd, eventMask: [.write, .link, .rename, .delete], queue: queue)
            source.setEventHandler { [weak self] in
                // An entry was added, removed or renamed in the folder: the
                // file may have been replaced; watch whatever is at the path now.
                self?.watchFile()
                self?.fire()
            }
            source.setCancelHandler { close(fd) }
            sources = [source]
            source.resume()
            watchFile()
        }

        /// Watches the file now at the path (again), if there is one.
        private func watchFile() {
            lock.withLock {
                guard !cancelled else { return }
                fileSource?.cancel()
                fileSource = nil
                let fd = open(path, O_EVTONLY | O_CLOEXEC)
                guard fd >= 0 else { return }
                let source = DispatchSource.makeFileSystemObjectSource(
                    fileDescriptor: fd, eventMask: [.write, .extend, .attrib, .delete, .rename, .revoke], queue: queue)
                source.setEventHandler { [weak self, weak source] in
                    guard let self else { return }
                    if let source, !source.data.isDisjoint(with: [.delete, .rename, .revoke]) { self.watchFile() }
                    self.fire()
                }
                source.setCancelHandler { close(fd) }
                fileSource = source
                source.resume()
            }
        }
    #endif
}
