@testable import QuireKeys
import Testing

/// Fifth review F9: rule 6's passes (`Spec/format.md §8.4` "Termination").
@Suite struct RemovalPassBoundTests {
    /// A chain of dependencies in which each pass settles one more keyring
    /// (keyring `i` is primary when `i − 1` was not, `0` always): before,
    /// the reader made up to one pass per relevant keyring, plus one — a
    /// cost that grows with what any signer can append. Now the passes stop
    /// after a constant number, and the last pass takes as primary what
    /// either of the last two left primary.
    @Test func attackRemovalPassesAreBoundedByAConstant() {
        let m = 40
        var all = Bits(count: m)
        for i in 0..<m { all.insert(i) }
        var calls = 0
        let (primary, alternating) = Evaluation.settlePrimary(all, count: m) { p in
            calls += 1
            var next = Bits(count: m)
            next.insert(0)
            for i in 1..<m where !p.contains(i - 1) { next.insert(i) }
            return next
        }
        #expect(Evaluation.removalPassLimit == 4)
        #expect(calls == Evaluation.removalPassLimit + 1, "passes: \(calls)")
        // 0 primary; 1 not (0 is); from 2 on, either of the last two passes.
        #expect(primary.contains(0) && !primary.contains(1) && primary.contains(2) && primary.contains(m - 1))
        // The last two passes differ on keyrings 5 and up (those settled
        // by pass 5 agree): the removals among them are reported.
        #expect(!alternating.contains(4) && alternating.contains(5) && alternating.contains(m - 1))
    }

    /// A fixpoint reached early stops the passes there.
    @Test func passesStopAtAFixpoint() {
        var all = Bits(count: 3)
        for i in 0..<3 { all.insert(i) }
        var calls = 0
        let (primary, alternating) = Evaluation.settlePrimary(all, count: 3) { p in
            calls += 1
            return p
        }
        #expect(calls == 1)
        #expect(primary == all)
        #expect(alternating.elements.isEmpty)
    }
}
