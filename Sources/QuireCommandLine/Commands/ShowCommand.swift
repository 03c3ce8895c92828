import Foundation
@_spi(Format) import Quire
import QuireExport

/// `quire show [VAULT] ID`.
struct ShowCommand: QuireCommand {
    static let configuration = CommandConfiguration(
        name: "show", abstract: "one entry in full",
        discussion: """
            An entry with conflicting versions (two devices changed it apart) says
            so; --all-versions prints every version, as 'quire versions ID' does.
            """,
        json: EntryJSON.self, jsonNote: "(With --all-versions: as 'quire versions'.)", section: .browse, unlocks: true)

    @VaultArgument var vault: String
    @Argument(help: "the entry's id (4 or more hex digits)") var id: EntryIDPrefix
    @Flag(help: "every version of an entry with conflicting versions") var allVersions: Bool
    @OptionGroup var pager: PagerOption
    @OptionGroup var unlock: UnlockOptions
    @OptionGroup var output: JSONOption

    func run(_ c: CommandContext) throws(CLIFailure) -> ExitCode {
        let (opened, e) = try Reading.entry(vault, unlock, id, out: c.out)
        c.out.usePager(!pager.noPager)
        if allVersions { return try VersionsCommand.show(e, opened: opened, path: vault, c.out) }
        let b = e.body
        let out = c.out
        out.line("\("entry " + e.id.description, .id)")
        let date =
            b.isAllDay
            ? DateText.day(b.createdMilliseconds, zoneName: b.timeZoneIdentifier) + " (all day)" : DateText.local(b.createdMilliseconds)
        // A zone an importer inferred is said so (Spec/import.md §4).
        let inferred =
            b.extra[text: "inferredTimeZone"].map { $0 == .text("location") ? ", inferred from its location" : ", inferred" } ?? ""
        out.line(
            "date:     \(date)\(b.timeZoneIdentifier.isEmpty ? "" : " (written in ")\(b.timeZoneIdentifier)\(b.timeZoneIdentifier.isEmpty ? "" : inferred + ")")"
        )
        EntryDetails.print(b, out)
        Reading.include(b.attachments)
        let damaged = Reading.damagedAttachments(opened.vault)
        let damagedHere = b.attachments.compactMap { damaged[$0.blob] }
        if !damagedHere.isEmpty {
            out.warning("\(Reading.summary(damagedHere, path: vault)); what is shown leaves them out. Run 'quire verify \(vault)'")
        }
        for ref in b.attachments {
            var size = (try? opened.vault.attachment(ref.blob).byteCount).map(formatBytes) ?? "missing"
            if damaged[ref.blob] != nil { size = "DAMAGED (cannot be read; see 'quire verify') " + size }
            out.line(
                "attached: \(EntryFormat.attachmentID(ref), .id)  \(ref.mediaType)  \(size)\(ref.fileName.isEmpty ? "" : "  ")\(ref.fileName)"
            )
        }
        if e.revisionCount > 1 { out.line("versions: \(e.revisionCount) (revisions kept until 'quire compact')") }
        if !e.conflictingHeads.isEmpty {
            out.line(
                "\("conflict:", .alert) \(plural(e.conflictingHeads.count, "other version")) kept: 'quire versions \(EntryFormat.short(e.id))' shows every version; editing the entry keeps one"
            )
        }
        if !e.isVerified { out.line("verified: no: the commit holding this revision did not verify; see 'quire verify'") }
        let attestationFailed = (try? opened.vault.revisionsWithFailedAttestation())?.contains(e.revision.revisionID) ?? false
        if e.isVerified && !e.isAttested && attestationFailed {
            out.line(
                "attested: no: the attestation of the commit holding this version is damaged (it does not check), so no member vouches for it; see 'quire verify'"
            )
        } else if e.isVerified && !e.isAttested {
            out.line(
                "attested: no: no enrolled device or recovery key vouches for this version (a passphrase, an escrow key or another program wrote it)"
            )
        }
        out.line()
        out.line("\(multiline: b.text)")
        out.emit(EntryJSON(e, vault: opened.vault))
        return .success
    }
}

/// The lines `show` and `versions` print for an entry's fields.
enum EntryDetails {
    static func print(_ b: EntryBody, _ out: Output) {
        if !b.tags.isEmpty { out.line("tags:     \(b.tags.joined(separator: ", "))") }
        if !b.journal.isEmpty { out.line("journal:  \(b.journal)") }
        if let m = b.moodRawValue { out.line("mood:     \(m) of 5") }
        if b.isStarred { out.line("starred:  yes") }
        if let l = b.location {
            let place = EntryDisplay.place(l)  // a location of coordinates only shows them
            if !place.isEmpty { out.line("place:    \(place)") }
        }
        if let w = b.weather, !w.conditions.isEmpty || w.temperatureCelsius != nil {
            let text = [w.conditions, w.temperatureCelsius.map { String(format: "%.0f °C", $0) } ?? ""].filter { !$0.isEmpty }.joined(
                separator: ", ")
            out.line("weather:  \(text)")
        }
    }
}

/// What `quire show --json` prints.
struct EntryJSON: JSONShape {
    struct Place: Encodable {
        let placeName: String
        let locality: String
        let region: String
        let country: String
        let latitude: Double?
        let longitude: Double?
        let altitude: Double?
    }

    struct Weather: Encodable {
        let conditions: String
        @OrNull var temperatureCelsius: Double?
    }

    let id: String
    let created: String
    @OrNull var modified: String?
    let timeZone: String
    /// How an importer chose a zone the entry did not have (`location`,
    /// `import`), or nil (`Spec/import.md §4`).
    @OrNull var timeZoneInferred: String?
    let allDay: Bool
    let text: String
    let tags: [String]
    let journal: String
    @OrNull var mood: Int64?
    let starred: Bool
    let pinned: Bool
    @OrNull var location: Place?
    @OrNull var weather: Weather?
    let attachments: [AttachmentJSON]
    let revisions: Int
    let conflictingRevisions: [String]
    let verified: Bool
    /// True when a member attested the version shown (`Spec/format.md §9.4`).
    let attested: Bool
    /// True when the version's commit carries an attestation that does not
    /// check (damage: `attestation_failed`); `attested` is then false.
    let attestationFailed: Bool
    /// The records the entries shown leave out (``UnreadRecordsJSON``).
    let unreadRecords: UnreadRecordsJSON

    init(_ e: EntrySnapshot, vault: Vault) {
        let b = e.body
        id = e.id.description
        created = DateText.iso(b.createdMilliseconds, zoneName: b.timeZoneIdentifier)
        modified = b.modifiedMilliseconds.map { DateText.iso($0, zoneName: b.timeZoneIdentifier) }
        timeZone = b.timeZoneIdentifier
        if case .text(let how) = b.extra[text: "inferredTimeZone"] { timeZoneInferred = how } else { timeZoneInferred = nil }
        allDay = b.isAllDay
        text = b.text
        tags = b.tags
        journal = b.journal
        mood = b.moodRawValue
        starred = b.isStarred
        pinned = b.isPinned
        location = b.location.map {
            Place(
                placeName: $0.placeName, locality: $0.locality, region: $0.region, country: $0.country, latitude: $0.latitude,
                longitude: $0.longitude, altitude: $0.altitude)
        }
        weather = b.weather.map { Weather(conditions: $0.conditions, temperatureCelsius: $0.temperatureCelsius) }
        attachments = AttachmentJSON.list(b.attachments, vault: vault)
        revisions = e.revisionCount
        conflictingRevisions = e.conflictingHeads.map(\.description)
        verified = e.isVerified
        attested = e.isAttested
        attestationFailed = (try? vault.revisionsWithFailedAttestation())?.contains(e.revision.revisionID) ?? false
        unreadRecords = UnreadRecordsJSON(Reading.records(vault), vault: vault)
    }

    private init() {
        id = ""
        created = ""
        modified = nil
        timeZone = ""
        timeZoneInferred = nil
        allDay = false
        text = ""
        tags = []
        journal = ""
        mood = nil
        starred = false
        pinned = false
        location = Place(placeName: "", locality: "", region: "", country: "", latitude: nil, longitude: nil, altitude: nil)
        weather = Weather(conditions: "", temperatureCelsius: nil)
        attachments = [AttachmentJSON(example: ())]
        revisions = 0
        conflictingRevisions = []
        verified = true
        attested = true
        attestationFailed = false
        unreadRecords = .example
    }

    static var example: EntryJSON { EntryJSON() }
}
