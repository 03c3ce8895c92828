import Foundation
@_spi(Format) import Quire
import QuireSystem
import Testing

/// A torn tail is cut only once the file has stayed unchanged (`Spec/format.md §10.3`).
@Suite struct TornTailQuietTests {
    @Test func aTailASyncToolIsStillWritingIsNotCut() throws {
        let c = try TwoCopies("torn")
        // The phone's copy gains an entry: the bytes a sync tool will write
        // in place at the end of the laptop's file, piece by piece.
        try c.onPhone(c.b).add(EntryBody(created: t0 + 20, text: "from the phone"))
        let theirs = bytes(c.b)
        let ours = bytes(c.a)
        #expect(theirs.count > ours.count && Array(theirs[..<ours.count]) == ours)
        let extra = Array(theirs[ours.count...])
        let pieces = 4
        let size = (extra.count + pieces - 1) / pieces
        let firstPieceWritten = DispatchSemaphore(value: 0)
        let path = c.a
        let tool = Thread {
            let f = try! SystemFile(path: path, mode: .readWrite)
            for p in 0..<pieces {
                let start = p * size, end = min(extra.count, start + size)
                try! f.write(Array(extra[start..<end]), at: UInt64(ours.count + start))
                if p == 0 { firstPieceWritten.signal() }
                Thread.sleep(forTimeInterval: 0.3)
            }
        }
        tool.start()
        firstPieceWritten.wait()
        // The laptop writes while the tool is mid-way: its tail looks torn.
        // (The default quiet period, 2 s; the tool pauses 0.3 s between pieces.)
        let laptop = try Vault.open(at: c.a, credential: .device(c.laptop.keyPair), options: WriteOptions(synchronous: false))
        try laptop.add(EntryBody(created: t0 + 21, text: "from the laptop"))
        Thread.sleep(forTimeInterval: 1.5)
        #expect(try texts(c.a, .device(c.laptop.keyPair)) == ["from the laptop", "from the phone", "shared"])
        let check = try c.onLaptop(c.a).verify()
        #expect(check.isIntact, "\(check.issues)")
    }
}
