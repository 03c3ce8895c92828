import Foundation
@_spi(Format) import Quire

/// `quire on-this-day [VAULT]`.
struct OnThisDayCommand: QuireCommand {
    static let configuration = CommandConfiguration(
        name: "on-this-day", abstract: "entries written on this day in other years",
        discussion: """
            Entries whose day (in the time zone they were written in) has today's
            month and day, newest year first, under a heading per year. --date
            picks another day ('quire on-this-day --date "march 1"'). 'quire list
            --on-this-day' gives the same entries as plain lines.
            """,
        json: EntryListJSON.self, section: .browse, unlocks: true)

    @VaultArgument var vault: String
    @Option(placeholder: "DAY", help: "the day of the year to look at (default: today)") var date: When?
    @OptionGroup var pager: PagerOption
    @OptionGroup var unlock: UnlockOptions
    @OptionGroup var output: JSONOption

    func run(_ c: CommandContext) throws(CLIFailure) -> ExitCode {
        let day = date?.milliseconds ?? NaturalDate.now
        if let date, date.isNatural { c.out.note("--date '\(date.text)': \(date.reading)") }
        var filter = EntryFilter()
        filter.dayOfYear = EntryFilter.monthDay(day, zoneName: TimeZone.current.identifier)
        let (opened, entries) = try Reading.entries(vault, unlock, out: c.out)
        let found = filter.apply(entries).reversed()
        c.out.usePager(!pager.noPager)
        let thisYear = Int(DateText.localDay(day).prefix(4)) ?? 0
        var lastYear: Int?
        for e in found {
            let year = Int(DateText.day(e.body.createdMilliseconds, zoneName: e.body.timeZoneIdentifier).prefix(4)) ?? 0
            if year != lastYear {
                if lastYear != nil { c.out.line() }
                let ago = thisYear - year
                c.out.line("\(ago == 0 ? "This year" : ago == 1 ? "A year ago" : "\(ago) years ago"), \(year):")
                lastYear = year
            }
            c.out.line("  \(EntryFormat.line(e))")
        }
        if c.out.json {
            c.out.emit(
                EntryListJSON(
                    count: found.count, entries: found.map(EntrySummaryJSON.init),
                    unreadRecords: UnreadRecordsJSON(Reading.records(opened.vault), vault: opened.vault)))
        }
        if found.isEmpty && !c.out.json { c.out.note("no entries were written on \(DateText.localDay(day).dropFirst(5)) in any year") }
        return .success
    }
}
