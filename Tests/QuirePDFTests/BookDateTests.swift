@_spi(Format) import Quire
import QuireExport
import Testing
@testable import QuirePDF

/// Dates in the book: the entry's own zone (the export's one offset rule),
/// the proleptic Gregorian calendar, the book's locale.
@Suite struct BookDateTests {
    @Test func datesInTheEntrysOwnZoneAndLocale() {
        let en = BookLocale(identifier: "en_GB")
        let d = LocalTime(milliseconds: instant("1660-01-11", offset: 0), offsetSeconds: 0)
        #expect(en.longDate(d) == "Sunday, 11 January 1660" && en.time(d) == "22:00")
        // 06:00 on 5 February in Shanghai is still 4 February in UTC.
        let ms = instant("2024-02-05", hour: 6, offset: 28_800)
        #expect(en.longDate(LocalTime(milliseconds: ms, offsetSeconds: 0)) == "Sunday, 4 February 2024")
        #expect(en.longDate(LocalTime(milliseconds: ms, offsetSeconds: 28_800)) == "Monday, 5 February 2024")
        #expect(en.date(LocalTime(milliseconds: -1, offsetSeconds: 0)) == "31 December 1969")
        #expect(en.longDate(LocalTime(milliseconds: 951_782_400_000, offsetSeconds: 0)) == "Tuesday, 29 February 2000")
        #expect(pdfMetadataDate(milliseconds: 1_700_000_000_000) == "2023-11-14T22:13:00Z")
    }

    @Test func chineseAndRussianBooks() {
        let zh = BookLocale(identifier: "zh-Hans"), ru = BookLocale(identifier: "ru")
        let lu = LocalTime(milliseconds: instant("1923-11-21", offset: 28_800), offsetSeconds: 28_800)
        #expect(zh.longDate(lu) == "1923年11月21日 星期三")
        #expect(zh.monthAndYear(year: 1923, month: 11) == "1923年11月" && zh.monthName(11) == "十一月")
        #expect(zh.contents == "目录" && zh.entryCount(7461) == "7,461 篇")
        let leo = LocalTime(milliseconds: instant("1852-06-01", offset: 9017), offsetSeconds: 9017)
        #expect(ru.longDate(leo) == "Вторник, 1 июня 1852\u{202F}г.")
        #expect(ru.monthAndYear(year: 1852, month: 6) == "Июнь 1852\u{202F}г." && ru.monthName(6) == "Июнь")
        #expect([1, 2, 5, 11, 21, 22, 112].map(ru.entryCount) == ["1 запись", "2 записи", "5 записей", "11 записей", "21 запись", "22 записи", "112 записей"])
        #expect(ru.contents == "Содержание" && ru.mood(4) == "настроение 4/5")
    }

    /// The book places an entry in time by the export's one rule (LocalTime.offset(of:)).
    @Test func offsetFromZoneNameWhenNotRecorded() {
        let ms = instant("2024-07-01", hour: 12, offset: 0)
        #expect(LocalTime(of: EntryBody(created: ms, timeZone: "Europe/Moscow")).hour == 15)
        #expect(LocalTime(of: EntryBody(created: ms, timeZone: "Europe/Moscow", utcOffsetSeconds: -3600)).hour == 11)
        #expect(LocalTime(of: EntryBody(created: ms, timeZone: "Not/AZone")).hour == 12)
    }
}
