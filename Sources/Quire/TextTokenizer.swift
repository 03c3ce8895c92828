import Foundation

/// Splits text into the terms the search index holds, the same way for
/// entries and for queries:
///
/// - a *word* is a run of letters, digits and combining marks (Latin,
///   Cyrillic, Greek…), folded: lowercase, without diacritics, full-width
///   forms as their plain ones (`Café` → `cafe`, `ЁЛКА` → `елка`); `й`
///   stays `й`, a letter of its own in Russian;
/// - Han, Kana and Hangul, written without spaces between words, form
///   *CJK runs*, reported one character at a time with its position in
///   the run, from which the index makes unigrams and bigrams.
///
/// Characters that extend the one before them (combining marks, a
/// zero-width non-joiner, emoji modifiers, tag characters) are part of
/// the word and folded away. Everything else (spaces, punctuation,
/// symbols) separates. Folding is
/// Foundation's (`folding(options: [.caseInsensitive,
/// .diacriticInsensitive, .widthInsensitive])`) applied per character and
/// remembered, since a journal uses few distinct non-ASCII characters.
struct TextTokenizer: Sendable {
    /// A non-ASCII scalar's folded UTF-8 and whether it belongs in a word.
    private struct Fold: Sendable {
        let bytes: [UInt8]
        let inWord: Bool
    }

    private var folds: [UInt32: Fold] = [:]
    private var word: [UInt8] = []

    /// Calls `onWord` with each folded word (UTF-8) and `onCJK` with each
    /// character of a CJK run (UTF-8, and its index in the run), in order.
    mutating func scan(_ text: String, onWord: (_ word: [UInt8]) -> Void, onCJK: (_ character: [UInt8], _ index: Int) -> Void) {
        var text = text
        text.withUTF8 { utf8 in scan(utf8, onWord: onWord, onCJK: onCJK) }
    }

    /// ``scan(_:onWord:onCJK:)`` over valid UTF-8 (a `String`'s), decoded
    /// here: ASCII, most of an English or a Russian journal's separators,
    /// takes the short path.
    private mutating func scan(
        _ utf8: UnsafeBufferPointer<UInt8>, onWord: (_ word: [UInt8]) -> Void, onCJK: (_ character: [UInt8], _ index: Int) -> Void
    ) {
        word.removeAll(keepingCapacity: true)
        var runIndex = 0
        var scratch: [UInt8] = []
        var i = 0
        let n = utf8.count
        while i < n {
            let b = utf8[i]
            if b < 0x80 {
                i += 1
                runIndex = 0
                if (b >= 0x61 && b <= 0x7a) || (b >= 0x30 && b <= 0x39) {
                    word.append(b)
                } else if b >= 0x41 && b <= 0x5a {
                    word.append(b + 0x20)
                } else if !word.isEmpty {
                    onWord(word)
                    word.removeAll(keepingCapacity: true)
                }
                continue
            }
            let length = b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : 2
            guard i + length <= n else { break }  // cannot happen in a String
            var v = UInt32(b & (length == 4 ? 0x07 : length == 3 ? 0x0F : 0x1F))
            for k in 1..<length { v = v << 6 | UInt32(utf8[i + k] & 0x3F) }
            let start = i
            i += length
            if Self.isCJK(v) {
                if !word.isEmpty {
                    onWord(word)
                    word.removeAll(keepingCapacity: true)
                }
                scratch.removeAll(keepingCapacity: true)
                if (0xFF66...0xFF9F).contains(v), let scalar = Unicode.Scalar(v) {
                    scratch += fold(scalar).bytes  // half-width Katakana
                } else {
                    scratch += UnsafeBufferPointer(rebasing: utf8[start..<i])
                }
                onCJK(scratch, runIndex)
                runIndex += 1
                continue
            }
            runIndex = 0
            guard let scalar = Unicode.Scalar(v) else { continue }
            let f = fold(scalar)
            if f.inWord {
                word += f.bytes
            } else if !word.isEmpty {
                onWord(word)
                word.removeAll(keepingCapacity: true)
            }
        }
        if !word.isEmpty {
            onWord(word)
            word.removeAll(keepingCapacity: true)
        }
    }

    /// The maximal runs of `folded` (text folded as Foundation folds it:
    /// `folding(options: [.caseInsensitive, .diacriticInsensitive,
    /// .widthInsensitive])`, lowercased) made only of characters the
    /// tokenizer keeps in a word exactly as they are: ASCII `a`–`z` and
    /// `0`–`9`, and other letters and digits that are their own fold — not
    /// CJK, not a combining mark, not `й` (Foundation folds it to `и`, the
    /// tokenizer keeps it) and not `ι` (Foundation's fold of a combining
    /// ypogegrammeni, which the tokenizer drops). UTF-8.
    ///
    /// Where such folded text is held in a document's folded text, each
    /// run lies inside one of the document's words: what
    /// ``SearchIndex/documents(containing:)`` relies on.
    static func substringSegments(of folded: String) -> [[UInt8]] {
        var out: [[UInt8]] = []
        var run: [UInt8] = []
        for scalar in folded.unicodeScalars {
            if keepsAsItIs(scalar) {
                appendUTF8(scalar.value, to: &run)
            } else if !run.isEmpty {
                out.append(run)
                run.removeAll()
            }
        }
        if !run.isEmpty { out.append(run) }
        return out
    }

    /// The characters of `folded` (folded as for
    /// ``substringSegments(of:)``) that the index holds as CJK unigrams of
    /// every document whose folded text holds `folded`: its CJK characters
    /// that Foundation's folding and the tokenizer both keep as they are
    /// and that are the fold of no other character the tokenizer does not
    /// read as them (``narrowsAsUnigram(_:)``). UTF-8, each once, in order.
    ///
    /// The tokenizer reports every CJK character of a text as a unigram,
    /// whatever stands before or after it (Latin letters, combining marks,
    /// joiners, variation selectors), so where such a character is in a
    /// document's folded text, it is in its unigrams: what
    /// ``SearchIndex/documents(containing:characters:)`` relies on.
    static func unigramCharacters(of folded: String) -> [[UInt8]] {
        var out: [[UInt8]] = []
        var seen = Set<UInt32>()
        for scalar in folded.unicodeScalars where narrowsAsUnigram(scalar) && seen.insert(scalar.value).inserted {
            var bytes: [UInt8] = []
            appendUTF8(scalar.value, to: &bytes)
            out.append(bytes)
        }
        return out
    }

    /// True for a CJK character that, wherever it is in a text's folded
    /// form, is one of the text's CJK unigrams (``unigramCharacters(of:)``):
    /// a letter or number of a CJK run (Han with 々〆〇, Kana, Hangul
    /// syllables and compatibility jamo, compatibility ideographs) that
    /// Foundation folds to itself. Left out: half-width Katakana (a
    /// folded text holds its full-width form, or keeps ﾞ and ﾟ after a
    /// Katakana, where the tokenizer drops them); the voiced sound marks
    /// (Foundation makes U+3099 of a lone ﾞ and drops it after a Latin
    /// letter) and other marks; the conjoining jamo U+1100–U+11FF
    /// (Foundation's fold of the half-width Hangul letters, which the
    /// tokenizer keeps in words); and symbols and punctuation, such as ・,
    /// the fold of the half-width ･ that the tokenizer reads as a
    /// separator. `SearchNarrowingTests` checks every code point.
    static func narrowsAsUnigram(_ scalar: Unicode.Scalar) -> Bool {
        let v = scalar.value
        guard isCJK(v), !(0xFF66...0xFF9F).contains(v), !(0x1100...0x11FF).contains(v) else { return false }
        let p = scalar.properties
        guard p.isAlphabetic, !p.isGraphemeExtend else { return false }
        let alone = String(Character(scalar))
        return alone.folding(options: [.caseInsensitive, .diacriticInsensitive, .widthInsensitive], locale: nil).lowercased() == alone
    }

    /// True for a character a word holds unchanged (``substringSegments(of:)``).
    private static func keepsAsItIs(_ scalar: Unicode.Scalar) -> Bool {
        let v = scalar.value
        if v < 0x80 { return (0x61...0x7A).contains(v) || (0x30...0x39).contains(v) }
        if isCJK(v) || v == 0x439 || v == 0x3B9 { return false }
        let fold = makeFold(scalar)
        guard fold.inWord, !fold.bytes.isEmpty else { return false }
        var own: [UInt8] = []
        appendUTF8(v, to: &own)
        return fold.bytes == own
    }

    /// Han (with 々〆〇), Hiragana, Katakana (full and half width) and Hangul.
    static func isCJK(_ v: UInt32) -> Bool {
        switch v {
        case 0x3005...0x3007, 0x3040...0x30FF, 0x31F0...0x31FF, 0x3400...0x4DBF, 0x4E00...0x9FFF, 0xAC00...0xD7AF, 0x1100...0x11FF,
            0x3130...0x318F, 0xF900...0xFAFF, 0xFF66...0xFF9F, 0x20000...0x3FFFF:
            return true
        default:
            return false
        }
    }

    private mutating func fold(_ scalar: Unicode.Scalar) -> Fold {
        if let known = folds[scalar.value] { return known }
        let made = Self.makeFold(scalar)
        if folds.count < 65_536 { folds[scalar.value] = made }
        return made
    }

    private static func makeFold(_ scalar: Unicode.Scalar) -> Fold {
        let p = scalar.properties
        // A diacritic, or another character that extends the one before it
        // (a zero-width non-joiner, an emoji skin tone, a tag character):
        // part of the word, folded away, as Foundation's folding drops it
        // after a letter.
        if p.isGraphemeExtend || p.isEmojiModifier { return Fold(bytes: [], inWord: true) }
        switch p.generalCategory {
        case .nonspacingMark, .spacingMark, .enclosingMark:
            return Fold(bytes: [], inWord: true)  // a diacritic: part of the word, folded away
        case .decimalNumber, .letterNumber, .otherNumber:
            break
        default:
            guard p.isAlphabetic else { return Fold(bytes: [], inWord: false) }
        }
        // й and Й are letters of their own in Russian, not и with a breve.
        if scalar.value == 0x439 || scalar.value == 0x419 { return Fold(bytes: [0xD0, 0xB9], inWord: true) }
        let folded = String(Character(scalar)).folding(options: [.caseInsensitive, .diacriticInsensitive, .widthInsensitive], locale: nil)
            .lowercased()
        var bytes: [UInt8] = []
        for s in folded.unicodeScalars {
            switch s.properties.generalCategory {
            case .nonspacingMark, .spacingMark, .enclosingMark: continue
            default: appendUTF8(s.value, to: &bytes)
            }
        }
        return Fold(bytes: bytes, inWord: true)
    }

    /// Appends the UTF-8 encoding of scalar value `v`.
    static func appendUTF8(_ v: UInt32, to out: inout [UInt8]) {
        switch v {
        case 0..<0x80:
            out.append(UInt8(v))
        case 0x80..<0x800:
            out.append(UInt8(0xC0 | (v >> 6)))
            out.append(UInt8(0x80 | (v & 0x3F)))
        case 0x800..<0x10000:
            out.append(UInt8(0xE0 | (v >> 12)))
            out.append(UInt8(0x80 | ((v >> 6) & 0x3F)))
            out.append(UInt8(0x80 | (v & 0x3F)))
        default:
            out.append(UInt8(0xF0 | (v >> 18)))
            out.append(UInt8(0x80 | ((v >> 12) & 0x3F)))
            out.append(UInt8(0x80 | ((v >> 6) & 0x3F)))
            out.append(UInt8(0x80 | (v & 0x3F)))
        }
    }
}
