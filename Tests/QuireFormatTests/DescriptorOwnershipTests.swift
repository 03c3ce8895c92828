import Foundation
import QuireSystem
import Testing

/// A `SystemFile` owns its descriptor alone: an open that is refused (a
/// directory, a FIFO) closes the descriptor it made once, so it can never
/// close a descriptor number another thread has been given since. Closing it
/// twice made a concurrent merge's `pread` of its temporary file fail with
/// `EBADF` (the CI failure of stop 38) and could as well have sent another
/// thread's writes to a file it never opened.
@Suite struct DescriptorOwnershipTests {
    @Test func aRefusedOpenDoesNotCloseAnotherThreadsDescriptor() throws {
        let dir = TemporaryDirectory()
        let folder = dir.file("folder")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        let regular = dir.file("regular")
        try SystemFile(path: regular, mode: .createExclusive(permissions: 0o600)).write([7], at: 0)
        let stop = Locked(false)
        let failures = Locked<[String]>([])
        let reader = Thread {
            while !stop.withLock({ $0 }) {
                do {
                    let file = try SystemFile(path: regular, mode: .readOnly)
                    for _ in 0..<4 where try file.read(count: 1, at: 0) != [7] {
                        failures.withLock { $0.append("read another file's byte") }
                    }
                } catch {
                    failures.withLock { $0.append("\(error)") }
                    return
                }
            }
        }
        reader.start()
        let deadline = Date().addingTimeInterval(1.5)
        var refused = 0
        while Date() < deadline, failures.withLock({ $0.isEmpty }) {
            do {
                _ = try SystemFile(path: folder, mode: .readOnly)
                Issue.record("a directory opened as a file")
            } catch {
                refused += 1
            }
        }
        stop.withLock { $0 = true }
        while !reader.isFinished { usleep(1_000) }
        #expect(refused > 0)
        #expect(failures.withLock { $0 } == [])
    }
}
