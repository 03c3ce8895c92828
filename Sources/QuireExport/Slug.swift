import Foundation

/// File-name slugs from an entry's first words (`Spec/export-json.md §3.1`).
public enum Slug {
    /// Up to 6 words, at most 48 characters.
    public static let maxWords = 6
    /// The longest slug, in characters.
    public static let maxLength = 48

    /// The slug of `text`: its first words, lowercased, folded to ASCII
    /// (diacritics removed, Cyrillic and Greek transliterated, `æ` → `ae`…),
    /// words of ASCII letters and digits joined by `-`; `entry` when no
    /// word is left (for example Chinese text).
    public static func make(_ text: String) -> String {
        let head = String(text.prefix(400))
        let folded = head.lowercased().folding(options: [.diacriticInsensitive], locale: nil)
        var words: [String] = []
        var current = ""
        func endWord() {
            if !current.isEmpty {
                words.append(current)
                current = ""
            }
        }
        outer: for ch in folded.unicodeScalars {
            let mapped: String
            if ch.isASCII {
                mapped = String(ch)
            } else if let t = transliteration[ch] {
                mapped = t
            } else {
                mapped = " "
            }
            for c in mapped.unicodeScalars {
                if ("a"..."z").contains(c) || ("0"..."9").contains(c) {
                    current.unicodeScalars.append(c)
                } else if c == "'" || c == "’" {
                    continue
                } else {
                    endWord()
                    if words.count >= maxWords { break outer }
                }
            }
        }
        endWord()
        var slug = ""
        for w in words.prefix(maxWords) {
            let next = slug.isEmpty ? w : slug + "-" + w
            if next.count > maxLength {
                if slug.isEmpty { slug = String(w.prefix(maxLength)) }
                break
            }
            slug = next
        }
        return slug.isEmpty ? "entry" : slug
    }

    static let transliteration: [Unicode.Scalar: String] = {
        var t: [Unicode.Scalar: String] = [
            "’": "", "ʼ": "", "æ": "ae", "œ": "oe", "ß": "ss", "ø": "o", "ł": "l", "đ": "d", "ð": "d", "þ": "th", "ı": "i", "ŀ": "l",
        ]
        let cyrillic: [(String, String)] = [
            ("а", "a"), ("б", "b"), ("в", "v"), ("г", "g"), ("д", "d"), ("е", "e"), ("ё", "e"), ("ж", "zh"), ("з", "z"),
            ("и", "i"), ("й", "i"), ("к", "k"), ("л", "l"), ("м", "m"), ("н", "n"), ("о", "o"), ("п", "p"), ("р", "r"),
            ("с", "s"), ("т", "t"), ("у", "u"), ("ф", "f"), ("х", "kh"), ("ц", "ts"), ("ч", "ch"), ("ш", "sh"),
            ("щ", "shch"), ("ъ", ""), ("ы", "y"), ("ь", ""), ("э", "e"), ("ю", "iu"), ("я", "ia"), ("і", "i"), ("ѣ", "e"),
            ("ѳ", "f"), ("ѵ", "i"), ("є", "ie"), ("ї", "i"), ("ґ", "g"), ("ў", "u"),
        ]
        let greek: [(String, String)] = [
            ("α", "a"), ("β", "b"), ("γ", "g"), ("δ", "d"), ("ε", "e"), ("ζ", "z"), ("η", "e"), ("θ", "th"), ("ι", "i"),
            ("κ", "k"), ("λ", "l"), ("μ", "m"), ("ν", "n"), ("ξ", "x"), ("ο", "o"), ("π", "p"), ("ρ", "r"), ("σ", "s"),
            ("ς", "s"), ("τ", "t"), ("υ", "y"), ("φ", "ph"), ("χ", "ch"), ("ψ", "ps"), ("ω", "o"),
        ]
        for (k, v) in cyrillic + greek { t[k.unicodeScalars.first!] = v }
        return t
    }()
}
