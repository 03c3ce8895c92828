import Foundation
import Testing

@testable import QuireCommandLine

/// `EntryFormat.title`: the first non-empty line, cut to a limit.
@Suite struct EntryFormatTests {
    @Test(arguments: [
        ("Up betimes.", 60, "Up betimes."),
        ("\n\n  \t\n  Second line is first  \nthird", 60, "Second line is first"),
        ("Windows\r\nline endings", 60, "Windows"),
        ("\r\n\r\nAfter blank CRLF lines", 60, "After blank CRLF lines"),
        ("exactly ten", 11, "exactly ten"),
        ("one character more", 17, "one character mo…"),
        ("Café au lait, 日本語のテキスト", 10, "Café au l…"),
        ("👩‍👩‍👧 family", 3, "👩‍👩‍👧 …"),
        ("", 60, ""),
        ("   \n\t\n", 60, ""),
    ])
    func firstLine(text: String, limit: Int, title: String) {
        #expect(EntryFormat.title(text, limit: limit) == title)
    }

    @Test func aLongParagraphIsCut() {
        let paragraph = String(repeating: "word ", count: 1000)
        let t = EntryFormat.title(paragraph)
        #expect(t.count == 60)
        #expect(t.hasSuffix("…"))
    }
}
