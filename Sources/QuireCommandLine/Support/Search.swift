import Foundation
@_spi(Format) import Quire

/// What `quire search` looks for, and how an entry matches: every term
/// must be found (in any order) in the entry's searchable text.
///
/// - a word matches anywhere in the text, the tags, the journal's name,
///   the place, the weather and the attachments' file names, case- and
///   diacritic-insensitively (`cafe` finds `Café`, `ETE` finds `été`), full-
///   and half-width alike;
/// - `"a phrase"` (quoted inside the query) matches those words in that
///   order, whatever space separates them;
/// - `#tag` matches an entry with that tag (or `#tag` in its text).
///
/// Matching is per character over normalised text, not per word, so text
/// without spaces between words (Chinese, Japanese) is found by any run
/// of its characters: `日记` finds `鲁迅日记`. This is the one place search
/// is decided; the library's index only narrows which entries are read
/// (``foldedTerms``), each then matched here.
struct SearchQuery: Sendable {
    enum Term: Sendable, Equatable {
        case word([UInt8])
        case phrase([UInt8])
        case tag(String)
    }

    let terms: [Term]

    /// Reads `words` (the QUERY operands, joined by spaces).
    ///
    /// - Throws: ``CLIFailure`` (exit 64) for a query with no terms or an unclosed quote.
    init(_ words: [String]) throws(CLIFailure) {
        let text = words.joined(separator: " ")
        var terms: [Term] = []
        var current = ""
        var inQuote = false
        func flush() {
            let t = current.trimmingCharacters(in: .whitespaces)
            current = ""
            guard !t.isEmpty else { return }
            if t.hasPrefix("#") && t.count > 1 {
                terms.append(.tag(Self.fold(String(t.dropFirst()))))
            } else {
                terms.append(.word(Array(Self.fold(t).utf8)))
            }
        }
        for c in text {
            if c == "\"" || c == "“" || c == "”" {
                if inQuote {
                    let phrase = Self.collapse(Self.fold(current))
                    if !phrase.isEmpty { terms.append(.phrase(Array(phrase.utf8))) }
                    current = ""
                } else {
                    flush()
                }
                inQuote.toggle()
            } else if !inQuote && c.isWhitespace {
                flush()
            } else {
                current.append(c)
            }
        }
        if inQuote {
            throw CLIFailure(
                "the query has an opening quote without its closing one", hint: "close the phrase: '\"the swans\" river'", code: "usage",
                exit: .usage)
        }
        flush()
        guard !terms.isEmpty else {
            throw CLIFailure("the query is empty", hint: "give words to look for: quire search river swans", code: "usage", exit: .usage)
        }
        self.terms = terms
    }

    /// Every term's folded text (a tag's without `#`): each entry that
    /// matches holds each of them in its folded searchable text, which is
    /// what lets the library narrow a search by its index
    /// (`Vault.cachedLiveEntries(mayContain:)`).
    var foldedTerms: [String] {
        terms.map { term in
            switch term {
            case .word(let w): String(decoding: w, as: UTF8.self)
            case .phrase(let p): String(decoding: p, as: UTF8.self)
            case .tag(let t): t
            }
        }
    }

    /// True when `e` holds every term.
    func matches(_ e: EntrySnapshot) -> Bool {
        let b = e.body
        var haystack: [UInt8] = []
        haystack.reserveCapacity(b.text.utf8.count + 64)
        for part in [b.text, b.journal] + b.tags + b.attachments.map(\.fileName) {
            folder.append(part, to: &haystack)
            haystack.append(0x0a)
        }
        if let l = b.location {
            for part in [l.placeName, l.locality, l.region, l.country] {
                folder.append(part, to: &haystack)
                haystack.append(0x0a)
            }
        }
        if let w = b.weather { folder.append(w.conditions, to: &haystack) }
        var collapsed: [UInt8]?
        for term in terms {
            switch term {
            case .word(let w):
                guard Self.contains(haystack, w) else { return false }
            case .phrase(let p):
                if collapsed == nil { collapsed = Self.collapse(haystack) }
                guard Self.contains(collapsed!, p) else { return false }
            case .tag(let t):
                // Bytes, as words match: Swift's `==` would also take a
                // canonically equivalent tag (U+F900 for U+8C48), which
                // the index, comparing bytes, does not name.
                guard b.tags.contains(where: { Self.fold($0).utf8.elementsEqual(t.utf8) }) || Self.contains(haystack, Array(("#" + t).utf8))
                else { return false }
            }
        }
        return true
    }

    /// Folds text into bytes: ASCII letters lowered in place, every run of
    /// other characters folded by Foundation (case, diacritics, width) and
    /// remembered by its bytes, since the same few runs (é, ’, —) recur in
    /// a journal. By its bytes, not as a `Substring`: Swift takes two
    /// canonically equivalent runs (U+F900 and U+8C48, `ガ` and `カ` +
    /// U+3099) for one key, while Foundation folds them to different bytes,
    /// so an entry's fold would depend on which entries were folded first.
    // @unchecked Sendable: each search makes its own Folder and uses it on one thread at a time;
    // it is passed to the matcher's closure, which the compiler cannot see runs serially.
    final class Folder: @unchecked Sendable {
        private var runs: [[UInt8]: [UInt8]] = [:]

        func append(_ text: String, to out: inout [UInt8]) {
            let bytes = text.utf8
            var i = bytes.startIndex
            while i < bytes.endIndex {
                let byte = bytes[i]
                if byte < 0x80 {
                    out.append(byte >= 0x41 && byte <= 0x5a ? byte + 0x20 : byte)
                    i = bytes.index(after: i)
                    continue
                }
                let end = bytes[i...].firstIndex { $0 < 0x80 } ?? bytes.endIndex
                var start = i
                // A combining mark after an ASCII letter (e + U+0301) folds
                // with its letter: take the letter back into the run.
                if start > bytes.startIndex, !out.isEmpty, let mark = text.unicodeScalars[i...].first,
                    [.nonspacingMark, .spacingMark, .enclosingMark].contains(mark.properties.generalCategory)
                {
                    start = bytes.index(before: start)
                    out.removeLast()
                }
                let run = Array(bytes[start..<end])
                if let folded = runs[run] {
                    out += folded
                } else {
                    let folded = Array(SearchQuery.fold(String(text[start..<end])).utf8)
                    if runs.count < 10_000 { runs[run] = folded }
                    out += folded
                }
                i = end
            }
        }
    }

    private let folder = Folder()

    /// `text` without case, diacritics or width differences. ASCII text
    /// (most of an English journal) takes a fast path.
    static func fold(_ text: String) -> String {
        if text.utf8.allSatisfy({ $0 < 0x80 }) {
            return String(decoding: text.utf8.map { $0 >= 0x41 && $0 <= 0x5a ? $0 + 0x20 : $0 }, as: UTF8.self)
        }
        return text.folding(options: [.caseInsensitive, .diacriticInsensitive, .widthInsensitive], locale: nil).lowercased()
    }

    /// Runs of white space as one space.
    static func collapse(_ text: String) -> String {
        String(decoding: collapse(Array(text.utf8)), as: UTF8.self).trimmingCharacters(in: .whitespaces)
    }

    /// Runs of ASCII white space (space, tab, line breaks) as one space.
    static func collapse(_ bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var inSpace = false
        for b in bytes {
            if b == 0x20 || (0x09...0x0d).contains(b) {
                if !inSpace { out.append(0x20) }
                inSpace = true
            } else {
                out.append(b)
                inSpace = false
            }
        }
        return out
    }

    /// True when `needle` occurs in `haystack` (bytes of UTF-8).
    static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard let first = needle.first else { return true }
        guard haystack.count >= needle.count else { return false }
        let last = haystack.count - needle.count
        var i = 0
        while i <= last {
            if haystack[i] == first {
                var j = 1
                while j < needle.count && haystack[i + j] == needle[j] { j += 1 }
                if j == needle.count { return true }
            }
            i += 1
        }
        return false
    }
}
