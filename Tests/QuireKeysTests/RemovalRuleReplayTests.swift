import Foundation
@_spi(Format) import QuireKeys
import Testing

/// Rule 6 (`Spec/format.md §8.4`) through the reference evaluator, on the
/// small key graphs of the exhaustive checker
/// (`Conformance/python/check_removal_rule.py`): every graph of the root
/// and up to two more keyrings, every graph of three more that ends with a
/// warning (a tie or a mutual answer), every fifth graph of three more in
/// which a removed member's keyring enrols a key the removal saw, and the
/// graphs of scenarios 14 (eighth review R8-1) and 15 (ninth review R9-1)
/// — 2,364 graphs, built with
/// real, signed keyrings. The checker asserts the removal properties
/// (P1–P7 of its header) on the independent Python reader over every graph
/// of up to four keyrings (88,763); this test asserts that the reference
/// reaches the same outcome — trusted keyrings, `removal_tie` and
/// `removal_mutual` — on each graph it lists, so the properties hold for
/// it there too.
@Suite struct RemovalRuleReplayTests {
    /// One keyring of a listed graph.
    struct Ring {
        let name: String
        let parents: [String]
        let signer: String
        let members: [String: String]
        let removes: [String]
        let reason: String
    }

    /// The listed graphs with the outcome the checker's reader reached.
    static func graphs() throws -> [(rings: [Ring], trusted: Set<String>, tie: Set<String>, mutual: Set<String>)] {
        let path =
            URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
            + "/Conformance/python/removal-rule-graphs.txt"
        let text = try String(contentsOfFile: path, encoding: .utf8)
        func set(_ field: Substring) -> Set<String> {
            Set(field.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty })
        }
        func list(_ field: Substring) -> [String] { field.split(separator: ",").map(String.init) }
        return text.split(separator: "\n").filter { !$0.hasPrefix("#") }.map { line in
            let halves = line.components(separatedBy: " => ")
            let rings = halves[0].split(separator: ";").map { ring in
                let f = ring.split(separator: "/", omittingEmptySubsequences: false)
                let recovery = String(f[4])
                return Ring(
                    name: String(f[0]), parents: list(f[1]), signer: String(f[2]),
                    members: Dictionary(uniqueKeysWithValues: list(f[3]).map { ($0, $0 == recovery ? "recovery" : "device") }),
                    removes: list(f[5]), reason: String(f[6]))
            }
            let outcome = halves[1].split(separator: "|", omittingEmptySubsequences: false)
            return (rings, set(outcome[0]), set(outcome[1]), set(outcome[2]))
        }
    }

    @Test func referenceAgreesWithTheCheckedReaderOnEverySmallGraph() throws {
        let graphs = try Self.graphs()
        #expect(graphs.count == 2364)
        var disagreements: [String] = []
        for (index, graph) in graphs.enumerated() {
            let g = KeyGraphBuilder("replay \(index)")
            for r in graph.rings {
                g.add(r.name, r.parents, signer: r.signer, r.members, removes: r.removes, reason: r.reason)
            }
            let got = try g.outcome()
            if got.trusted != graph.trusted || got.tie != graph.tie || got.mutual != graph.mutual {
                let shown = graph.rings.dropFirst().map { "\($0.name)(\($0.parents.joined(separator: ","))) by \($0.signer)" }
                disagreements.append(
                    "\(shown.joined(separator: "; ")): trusted \(got.trusted.sorted()) tie \(got.tie.sorted()) mutual \(got.mutual.sorted()), "
                        + "expected \(graph.trusted.sorted()) \(graph.tie.sorted()) \(graph.mutual.sorted())")
            }
        }
        #expect(disagreements.isEmpty, "\(disagreements.count) graphs disagree, first: \(disagreements.prefix(3))")
    }
}
