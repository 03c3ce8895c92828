import Foundation
@_spi(Format) import Quire
import QuireSystem
import Testing

/// A writer that loses a race with a rewrite reopens and retries (issue 15).
@Suite struct RaceRetryTests {
    @Test func concurrentCompactionsNeverFailAnAdd() throws {
        let c = try TwoCopies("racing")
        let path = c.a
        let laptop = c.laptop
        let failures = Locked<[String]>([])
        let added = Locked<Int>(0)
        DispatchQueue.concurrentPerform(iterations: 4) { worker in
            if worker < 2 {
                for _ in 0..<8 {
                    do {
                        let v = try Vault.open(at: path, credential: .device(laptop.keyPair), options: fast)
                        try v.compact()
                    } catch {
                        failures.mutate { $0.append("compact: \(error)") }
                    }
                }
            } else {
                for i in 0..<15 {
                    do {
                        let v = try Vault.open(at: path, credential: .device(laptop.keyPair), options: fast)
                        try v.add(EntryBody(created: t0 + Int64(100 * worker + i), text: "add \(worker)-\(i)"))
                        added.mutate { $0 += 1 }
                    } catch {
                        failures.mutate { $0.append("add: \(error)") }
                    }
                }
            }
        }
        #expect(failures.value == [])
        #expect(added.value == 30)
        #expect(try texts(path, .device(laptop.keyPair)).count == 31)
    }
}
