import Foundation
@_spi(Format) public import Quire

/// The language books are printed in: the words around the entries
/// (contents, entry counts, mood) and the way dates are written
/// (`Spec/export-json.md §5`). HTML, EPUB and the PDF book use it.
///
/// The locale is the export's option, else the journal profile's
/// `settings["locale"]` (a BCP 47 or ICU identifier such as `zh-Hans`,
/// `ru`, `en_GB`), else the system's. Month and weekday names and the order
/// of a date's parts come from the locale's CLDR data through Foundation;
/// the calendar arithmetic stays Quire's own proleptic Gregorian
/// (``LocalTime``), so Pepys's 1660 is never shifted by a Julian switch.
/// The few words of the book's own are in English, Russian, Chinese,
/// Japanese, German, French and Spanish; other languages get English words
/// with their own dates.
public struct BookLocale: Sendable, Equatable {
    /// The profile setting holding a journal's locale identifier.
    public static let settingKey = "locale"

    /// The identifier the locale was made from.
    public let identifier: String
    /// The language code (`en`, `zh`, `ru`…).
    public let language: String
    let longDatePattern: [PatternPiece]
    let datePattern: [PatternPiece]
    let dateTimePattern: [PatternPiece]
    let timePattern: [PatternPiece]
    let monthYearPattern: [PatternPiece]
    let months: [String]
    let standaloneMonths: [String]
    let shortMonths: [String]
    let weekdays: [String]
    let standaloneWeekdays: [String]
    let groupingSeparator: String
    let words: Words

    /// The locale `identifier` (an unknown one falls back to CLDR's root data).
    public init(identifier: String) {
        self.identifier = identifier
        let locale = Locale(identifier: identifier)
        let code = locale.language.languageCode?.identifier ?? "en"
        language = code
        func pattern(_ template: String, _ fallback: String) -> [PatternPiece] {
            PatternPiece.parse(DateFormatter.dateFormat(fromTemplate: template, options: 0, locale: locale) ?? fallback)
        }
        longDatePattern = pattern("EEEEdMMMMy", "EEEE d MMMM y")
        datePattern = pattern("dMMMMy", "d MMMM y")
        dateTimePattern = pattern("dMMMMyHm", "d MMMM y, HH:mm")
        timePattern = pattern("Hm", "HH:mm")
        monthYearPattern = pattern("LLLLy", "LLLL y")
        let f = DateFormatter()
        f.locale = locale
        months = f.monthSymbols
        standaloneMonths = f.standaloneMonthSymbols
        shortMonths = f.shortMonthSymbols
        weekdays = f.weekdaySymbols
        standaloneWeekdays = f.standaloneWeekdaySymbols
        let n = NumberFormatter()
        n.locale = locale
        n.numberStyle = .decimal
        groupingSeparator = n.groupingSeparator ?? ","
        words = Words.table[code] ?? Words.table["en"]!
    }

    /// The locale for a book of `vault`: `option` when given, else the
    /// profile's `settings["locale"]`, else the system's.
    public static func forVault(_ vault: Vault, option: String?) -> BookLocale {
        if let option, !option.isEmpty { return BookLocale(identifier: option) }
        if let profile = try? vault.profile(), case .text(let id)? = profile.settings[text: settingKey], !id.isEmpty {
            return BookLocale(identifier: id)
        }
        return BookLocale(identifier: Locale.current.identifier)
    }

    // MARK: Dates

    /// The weekday, day, month and year (`Wednesday 21 November 1923`,
    /// `1923年11月21日 星期三`, `среда, 21 ноября 1923 г.`).
    /// A heading, so its first letter is a capital (`Вторник, 1 июня 1852 г.`).
    public func longDate(_ t: LocalTime) -> String { heading(format(longDatePattern, t)) }
    /// The day, month and year (`21 November 1923`).
    public func date(_ t: LocalTime) -> String { format(datePattern, t) }
    /// The day, month, year and time of day, as a heading.
    public func dateTime(_ t: LocalTime) -> String { heading(format(dateTimePattern, t)) }
    /// The time of day (`22:00`).
    public func time(_ t: LocalTime) -> String { format(timePattern, t) }
    /// The month and year as a title (`November 1923`, `1923年11月`, `ноябрь 1923 г.`).
    public func monthAndYear(year: Int, month: Int) -> String {
        heading(format(monthYearPattern, LocalTime(year: year, month: month, day: 1)))
    }
    /// The month's name as a title (`November`, `十一月`, `Июнь`).
    public func monthName(_ month: Int) -> String { heading(standaloneMonths[(month - 1) % 12]) }

    /// `text` with its first letter in capitals, by the locale's rules (CLDR
    /// writes Russian months and weekdays in lower case).
    func heading(_ text: String) -> String {
        guard let first = text.first else { return text }
        return String(first).uppercased(with: Locale(identifier: identifier)) + text.dropFirst()
    }

    /// `n` with the locale's grouping (`3,413`, `3 413`).
    public func number(_ n: Int) -> String {
        let digits = String(abs(n))
        var out = n < 0 ? "-" : ""
        for (i, c) in digits.enumerated() {
            if i > 0, (digits.count - i) % 3 == 0 { out += groupingSeparator }
            out.append(c)
        }
        return out
    }

    // MARK: Words

    /// The contents page's title.
    public var contents: String { words.contents }
    /// What an empty book says.
    public var noEntries: String { words.noEntries }
    /// `3,413 entries`, with the language's plural.
    public func entryCount(_ n: Int) -> String { words.entries(n, number(n)) }
    /// `mood 4/5`.
    public func mood(_ value: Int64) -> String { "\(words.mood) \(value)/5" }
    /// The note after a time zone the importer inferred (`(inferred)`).
    public var inferred: String { words.inferred }
    /// The text of a link to another entry written as a bare address
    /// (`<quire-entry://…>`), which has no text of its own.
    public var linkedEntry: String { words.linkedEntry }
    /// `Attachment not shown: voice.m4a (audio/mp4)`.
    public func attachmentNotShown(_ what: String) -> String { words.attachmentNotShown + what }

    func format(_ pattern: [PatternPiece], _ t: LocalTime) -> String {
        var out = ""
        for piece in pattern {
            switch piece {
            case .literal(let s): out += s
            case .field(let c, let n):
                switch c {
                case "y", "u": out += n == 2 ? pad(abs(t.year) % 100, 2) : pad(t.year, n)
                case "M", "L":
                    if n >= 4 {
                        out += c == "L" ? standaloneMonths[t.month - 1] : months[t.month - 1]
                    } else if n == 3 {
                        out += shortMonths[t.month - 1]
                    } else {
                        out += pad(t.month, n)
                    }
                case "d": out += pad(t.day, n)
                case "E": out += weekdays[t.weekday]
                case "c": out += standaloneWeekdays[t.weekday]
                case "H": out += pad(t.hour, n)
                case "h": out += pad((t.hour + 11) % 12 + 1, n)
                case "a": out += t.hour < 12 ? "AM" : "PM"
                case "m": out += pad(t.minute, n)
                case "s": out += pad(t.second, n)
                default: break
                }
            }
        }
        return out
    }

    /// A piece of a CLDR date pattern: quoted or other literal text, or a
    /// field letter repeated `count` times.
    enum PatternPiece: Sendable, Equatable {
        case literal(String)
        case field(Character, Int)

        static func parse(_ pattern: String) -> [PatternPiece] {
            var out: [PatternPiece] = []
            let chars = Array(pattern)
            var i = 0
            func literal(_ s: String) {
                if case .literal(let previous)? = out.last { out[out.count - 1] = .literal(previous + s) } else { out.append(.literal(s)) }
            }
            while i < chars.count {
                let c = chars[i]
                if c == "'" {
                    if i + 1 < chars.count, chars[i + 1] == "'" {
                        literal("'")
                        i += 2
                        continue
                    }
                    var j = i + 1
                    var s = ""
                    while j < chars.count {
                        if chars[j] == "'" {
                            if j + 1 < chars.count, chars[j + 1] == "'" {
                                s.append("'")
                                j += 2
                                continue
                            }
                            break
                        }
                        s.append(chars[j])
                        j += 1
                    }
                    literal(s)
                    i = j + 1
                } else if c.isASCII, c.isLetter {
                    var n = 1
                    while i + n < chars.count, chars[i + n] == c { n += 1 }
                    out.append(.field(c, n))
                    i += n
                } else {
                    literal(String(c))
                    i += 1
                }
            }
            return out
        }
    }

    /// The book's own words in one language.
    struct Words: Sendable, Equatable {
        let contents: String
        let noEntries: String
        let mood: String
        let inferred: String
        let attachmentNotShown: String
        let linkedEntry: String
        /// The entry count for n, given n already written with grouping.
        let plural: Plural
        enum Plural: Sendable, Equatable {
            /// One form for 1, another for the rest.
            case oneOther(String, String)
            /// Russian-style one / few / many.
            case slavic(String, String, String)
            /// One form for every number.
            case invariant(String)
        }

        func entries(_ n: Int, _ written: String) -> String {
            switch plural {
            case .oneOther(let one, let other): return "\(written) \(n == 1 ? one : other)"
            case .slavic(let one, let few, let many):
                let m10 = abs(n) % 10
                let m100 = abs(n) % 100
                let word = m10 == 1 && m100 != 11 ? one : (2...4).contains(m10) && !(12...14).contains(m100) ? few : many
                return "\(written) \(word)"
            case .invariant(let word): return "\(written) \(word)"
            }
        }

        static let table: [String: Words] = [
            "en": Words(
                contents: "Contents", noEntries: "No entries.", mood: "mood", inferred: "(inferred)",
                attachmentNotShown: "Attachment not shown: ", linkedEntry: "linked entry", plural: .oneOther("entry", "entries")),
            "ru": Words(
                contents: "Содержание", noEntries: "Записей нет.", mood: "настроение", inferred: "(предположительно)",
                attachmentNotShown: "Вложение не показано: ", linkedEntry: "связанная запись",
                plural: .slavic("запись", "записи", "записей")),
            "zh": Words(
                contents: "目录", noEntries: "没有日记。", mood: "心情", inferred: "（推定）",
                attachmentNotShown: "未显示的附件：", linkedEntry: "相关日记", plural: .invariant("篇")),
            "ja": Words(
                contents: "目次", noEntries: "記録はありません。", mood: "気分", inferred: "（推定）",
                attachmentNotShown: "表示されない添付ファイル：", linkedEntry: "関連する記録", plural: .invariant("件")),
            "de": Words(
                contents: "Inhalt", noEntries: "Keine Einträge.", mood: "Stimmung", inferred: "(vermutet)",
                attachmentNotShown: "Anhang nicht angezeigt: ", linkedEntry: "verknüpfter Eintrag", plural: .oneOther("Eintrag", "Einträge")
            ),
            "fr": Words(
                contents: "Table des matières", noEntries: "Aucune entrée.", mood: "humeur", inferred: "(supposé)",
                attachmentNotShown: "Pièce jointe non affichée : ", linkedEntry: "entrée liée", plural: .oneOther("entrée", "entrées")),
            "es": Words(
                contents: "Índice", noEntries: "No hay entradas.", mood: "ánimo", inferred: "(supuesto)",
                attachmentNotShown: "Adjunto no mostrado: ", linkedEntry: "entrada enlazada", plural: .oneOther("entrada", "entradas")),
        ]
    }
}
