import Foundation
import Testing

@testable import QuireCommandLine

/// `NaturalDate`: the dates `--date`, `--since` and `--until` take, read
/// relative to a fixed moment (Tuesday 2026-12-01 15:30 UTC).
@Suite struct NaturalDateTests {
    /// 2026-12-01T15:30:00Z, a Tuesday.
    static let now: Int64 = 1_796_139_000_000
    static let utc = TimeZone(identifier: "UTC")!

    func read(_ text: String, zone: TimeZone = utc) -> (String, Bool)? {
        guard let w = NaturalDate.parse(text, now: Self.now, zone: zone) else { return nil }
        let f = ISO8601DateFormatter()
        f.timeZone = zone
        return (f.string(from: Date(timeIntervalSince1970: Double(w.milliseconds) / 1000)), w.isDateOnly)
    }

    @Test func theMomentIsATuesday() {
        #expect(read("now")?.0 == "2026-12-01T15:30:00Z")
    }

    @Test(arguments: [
        ("today", "2026-12-01T00:00:00Z", true),
        ("yesterday", "2026-11-30T00:00:00Z", true),
        ("yesterday 9pm", "2026-11-30T21:00:00Z", false),
        ("yesterday at 9:30pm", "2026-11-30T21:30:00Z", false),
        ("Yesterday 9 PM", "2026-11-30T21:00:00Z", false),
        ("yesterday 21:30", "2026-11-30T21:30:00Z", false),
        ("today noon", "2026-12-01T12:00:00Z", false),
        ("tomorrow", "2026-12-02T00:00:00Z", true),
        ("last monday", "2026-11-30T00:00:00Z", true),
        ("last tuesday", "2026-11-24T00:00:00Z", true),
        ("tuesday", "2026-12-01T00:00:00Z", true),
        ("monday 8am", "2026-11-30T08:00:00Z", false),
        ("3 days ago", "2026-11-28T00:00:00Z", true),
        ("2 weeks ago", "2026-11-17T00:00:00Z", true),
        ("a month ago", "2026-11-01T00:00:00Z", true),
        ("1 year ago", "2025-12-01T00:00:00Z", true),
        ("last week", "2026-11-24T00:00:00Z", true),
        ("2 hours ago", "2026-12-01T13:30:00Z", false),
        ("9pm", "2026-12-01T21:00:00Z", false),
        ("march 1", "2026-03-01T00:00:00Z", true),
        ("1 march 1660", "1660-03-01T00:00:00Z", true),
        ("dec 25", "2025-12-25T00:00:00Z", true),
        ("2026-03-01", "2026-03-01T00:00:00Z", true),
        ("2026-03-01 9pm", "2026-03-01T21:00:00Z", false),
        ("2026-03-01T08:30", "2026-03-01T08:30:00Z", false),
        ("2026-03-01T08:30+01:00", "2026-03-01T07:30:00Z", false),
    ])
    func readsTheForms(text: String, iso: String, dayOnly: Bool) {
        let r = read(text)
        #expect(r?.0 == iso, "\(text)")
        #expect(r?.1 == dayOnly, "\(text)")
    }

    @Test func daysAreInTheGivenZone() {
        let tokyo = TimeZone(identifier: "Asia/Tokyo")!
        // 15:30 UTC is 00:30 on Wednesday in Tokyo: yesterday is Tuesday there.
        #expect(read("yesterday", zone: tokyo)?.0 == "2026-12-01T00:00:00+09:00")
    }

    @Test(arguments: ["", "soon", "2026-02-30", "yesterday 25pm", "13pm", "last blursday", "3 fortnights ago", "march 32", "9", "2026-13-01"])
    func refusesWhatItDoesNotRead(text: String) {
        #expect(NaturalDate.parse(text, now: Self.now, zone: Self.utc) == nil, "\(text)")
    }

    @Test func theEndOfADayIsTheNextMidnight() throws {
        let w = try #require(NaturalDate.parse("yesterday", now: Self.now, zone: Self.utc))
        #expect(w.endOfDayMilliseconds - w.milliseconds == 86_400_000)
        #expect(w.isNatural)
        #expect(try #require(NaturalDate.parse("2026-03-01", now: Self.now, zone: Self.utc)).isNatural == false)
    }
}

/// The command line says how it read a date in words.
@Suite struct DateReadingTests {
    @Test func aDateInWordsIsShownBack() throws {
        let box = try Sandbox()
        try box.makeVault()
        let r = try box.quire(["add", "Journal.quire", "x", "--date", "yesterday 9pm"])
        #expect(r.status == 0)
        #expect(matches(r.stderr, "--date 'yesterday 9pm': [A-Z][a-z]+day [0-9]{4}-[0-9]{2}-[0-9]{2} 21:00 \\((GMT|UTC)\\)\n"), "\(r)")
        let day = try box.quire(["add", "Journal.quire", "y", "--date", "3 days ago", "--json"])
        #expect(matches(day.stderr, "--date '3 days ago': [A-Z][a-z]+day [0-9-]{10} \\(all day\\)\n"), "\(day)")
        #expect(try day.json()["allDay"] as? Bool == true)
        let since = try box.quire(["list", "Journal.quire", "--since", "last week"])
        #expect(matches(since.stderr, "--since 'last week': from [A-Z][a-z]+day [0-9-]{10}\n"), "\(since)")
        #expect(since.stdout.split(separator: "\n").count == 2)
        // ISO dates are not echoed: they say what they mean.
        #expect(try box.quire(["add", "Journal.quire", "z", "--date", "2026-03-01"]).stderr == "")
        let wrong = try box.quire(["add", "Journal.quire", "z", "--date", "someday"])
        #expect(wrong.status == 64)
        #expect(wrong.stderr.hasPrefix("quire: error: --date 'someday' is not a date I read\nquire: hint: write YYYY-MM-DD"), "\(wrong)")
    }
}
