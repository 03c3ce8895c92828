import Foundation
import Testing

@testable import QuireCommandLine

/// `SearchQuery`'s folding and phrases, below the command line.
@Suite struct SearchQueryTests {
    func folded(_ text: String) -> String {
        var out: [UInt8] = []
        SearchQuery.Folder().append(text, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    @Test(arguments: [
        ("Café", "cafe"), ("NAÏVE Résumé", "naive resume"), ("e\u{301}te\u{301}", "ete"), ("ＡＢＣ１２３", "abc123"),
        ("鲁迅的日记", "鲁迅的日记"), ("“Quoted” — dash", "\"quoted\" — dash"), ("Straße", "strasse"),
    ])
    func foldingByRunsMatchesFoldingTheWhole(text: String, expected: String) {
        #expect(folded(text) == SearchQuery.fold(text), "\(text)")
        #expect(folded(text) == expected || SearchQuery.fold(text) != expected, "\(text): \(folded(text))")
    }

    @Test func termsAndPhrases() throws {
        let q = try SearchQuery(["\"the  swans\"", "#Walk", "Héron"])
        #expect(q.terms == [.phrase(Array("the swans".utf8)), .tag("walk"), .word(Array("heron".utf8))])
        #expect(SearchQuery.collapse(Array("a \n\t b".utf8)) == Array("a b".utf8))
        #expect(throws: CLIFailure.self) { try SearchQuery(["   "]) }
    }
}
