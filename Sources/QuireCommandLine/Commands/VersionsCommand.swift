import Foundation
@_spi(Format) @_spi(Crypto) import Quire

/// `quire versions [VAULT] ID`: every version of an entry with a conflict.
struct VersionsCommand: QuireCommand {
    static let configuration = CommandConfiguration(
        name: "versions", abstract: "every version of an entry, with its device and time",
        discussion: """
            When two devices (or two quire processes) change an entry apart, both
            versions are kept: the one shown is the newest, and the others wait
            here. Editing the entry ('quire edit ID', or 'quire edit ID --resolve'
            to keep the one shown) makes one version of them again.
            """,
        json: VersionsJSON.self, section: .browse, unlocks: true)

    @VaultArgument var vault: String
    @Argument(help: "the entry's id (4 or more hex digits)") var id: EntryIDPrefix
    @OptionGroup var pager: PagerOption
    @OptionGroup var unlock: UnlockOptions
    @OptionGroup var output: JSONOption

    func run(_ c: CommandContext) throws(CLIFailure) -> ExitCode {
        let (opened, entries) = try Reading.entries(vault, unlock, out: c.out)
        let e = try EntryFormat.resolve(id, in: entries)
        c.out.usePager(!pager.noPager)
        return try Self.show(e, opened: opened, path: vault, c.out)
    }

    /// Prints every head of `e`, the shown one first.
    static func show(_ e: EntrySnapshot, opened: OpenedVault, path: String, _ out: Output) throws(CLIFailure) -> ExitCode {
        let all: [EntryRevision]
        do { all = try opened.vault.revisions(of: e.id) } catch { throw .vault(error, path: path) }
        let heads = [e.revision] + e.conflictingHeads.compactMap { id in all.first { $0.revisionID == id } }
        // A version is named by the member that attested it; an unattested
        // one by no member (Spec/format.md §9.4).
        let attestations: [RevisionID: [UInt8]]
        do { attestations = try opened.vault.attestations(of: e.id) } catch { throw .vault(error, path: path) }
        let names = memberNames(opened.vault)
        out.line("\("entry " + e.id.description, .id)")
        out.line(
            heads.count == 1
                ? "one version (no conflict)" : "\(heads.count) versions: changed apart; editing the entry makes them one again")
        var rows: [VersionsJSON.Version] = []
        for (i, r) in heads.enumerated() {
            let attestor = attestations[r.revisionID]
            let device = attestor.map { names[$0] ?? "an unknown device" } ?? Self.unattested
            let written = Int64(r.clock.milliseconds)
            out.line()
            out.line(
                "\("version \(i + 1) of \(heads.count)", .heading)\(i == 0 ? " (shown)" : ""): revision \(EntryFormat.short(r.revisionID)), written \(DateText.local(written)) by \(device)"
            )
            if r.isDeleted {
                out.line("deleted")
            } else {
                let b = r.body
                out.line(
                    "date:     \(b.isAllDay ? DateText.day(b.createdMilliseconds, zoneName: b.timeZoneIdentifier) + " (all day)" : DateText.local(b.createdMilliseconds))"
                )
                EntryDetails.print(b, out)
                out.line()
                out.line("\(multiline: b.text)")
            }
            rows.append(
                VersionsJSON.Version(
                    revision: r.revisionID.description, device: device, attested: attestor != nil, written: DateText.iso(written),
                    shown: i == 0, deleted: r.isDeleted,
                    created: DateText.iso(r.body.createdMilliseconds, zoneName: r.body.timeZoneIdentifier), text: r.body.text,
                    tags: r.body.tags,
                    mood: r.body.moodRawValue,
                    starred: r.body.isStarred))
        }
        out.emit(VersionsJSON(id: e.id.description, versions: rows))
        return .success
    }

    /// How a version no member attested is named: it was written with a
    /// passphrase, an escrow key or by another program, or its commit did
    /// not verify.
    static let unattested = "no member (unattested)"

    /// Members' public keys → `the device "Laptop"`, from the vault's keys.
    static func memberNames(_ vault: Vault) -> [[UInt8]: String] {
        guard let state = try? vault.keyState() else { return [:] }
        var names: [[UInt8]: String] = [:]
        for m in state.members + state.removed {
            names[m.publicKey] = m.role == "recovery" ? "the recovery key" : "the device \"\(m.name)\""
        }
        return names
    }
}

/// What `quire versions --json` prints.
struct VersionsJSON: JSONShape {
    struct Version: Encodable {
        let revision: String
        /// The member that attested it, or "no member (unattested)".
        let device: String
        /// False when no member attested it (`device` names none).
        let attested: Bool
        let written: String
        let shown: Bool
        let deleted: Bool
        let created: String
        let text: String
        let tags: [String]
        @OrNull var mood: Int64?
        let starred: Bool
    }

    let id: String
    let versions: [Version]

    static var example: VersionsJSON {
        VersionsJSON(
            id: "",
            versions: [
                Version(
                    revision: "", device: "", attested: true, written: "", shown: true, deleted: false, created: "", text: "", tags: [],
                    mood: nil,
                    starred: false)
            ])
    }
}
