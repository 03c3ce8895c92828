import Foundation
@_spi(Format) import Quire

/// `quire compact [VAULT] [--rekey] [--keep-history N] [--drop-unverified]`.
struct CompactCommand: QuireCommand {
    static let configuration = CommandConfiguration(
        name: "compact", abstract: "rewrite without old revisions (--rekey: new keys)",
        discussion: """
            The new file is written beside the vault, checked, and renamed over
            it. Deleted entries can no longer be restored afterwards.
            """,
        json: CompactJSON.self, section: .file, unlocks: true)

    @VaultArgument var vault: String
    @Flag(help: "seal everything again under a new epoch: removed devices and old keys read nothing") var rekey: Bool
    @Option(help: "keep N earlier revisions per entry (default 0)") var keepHistory: HistoryDepth?
    @Flag(
        help:
            "go on when records are damaged or in commits that do not verify: drop them and list them (the way out of a tampered vault)"
    ) var dropUnverified: Bool
    @OptionGroup var unlock: UnlockOptions
    @OptionGroup var output: JSONOption

    func run(_ c: CommandContext) throws(CLIFailure) -> ExitCode {
        var options = CompactionOptions(rekey: rekey, dropUnverified: dropUnverified)
        if let keepHistory { options.keepHistory = keepHistory.value }
        let opened = try Unlock.open(vault, unlock, out: c.out)
        let progress = ProgressBar("compacting \(vault)")
        progress.start()
        let report: CompactionReport
        do { report = try opened.vault.compact(options) } catch {
            progress.finish()
            var failure = CLIFailure.vault(error, path: vault)
            if case .sync(.damaged(let issues)) = error.detail, let cut = Self.cutRefusal(issues, opened.vault, vault, rekey: rekey) {
                (failure.message, failure.hint) = cut
            }
            throw failure
        }
        progress.finish()
        Rewrites.sayWhenALinkWasFollowed(vault, c.out)
        c.out.line(
            "compacted \(vault): \(formatBytes(report.bytesBefore)) → \(formatBytes(report.bytesAfter)); revisions \(report.revisionsBefore) → \(report.revisionsAfter); attachments kept \(report.attachmentsKept), dropped \(report.attachmentsDropped)"
        )
        for issue in report.dropped { c.out.line("dropped: \(issue)") }
        for location in report.droppedUnknownKinds { c.out.line("dropped: \(Self.unknownKindDropped(location))") }
        if let epoch = report.rekeyedEpoch {
            c.out.line(
                "rekeyed: everything is sealed under epoch \(epoch); removed devices and former keys open nothing in this file (older copies elsewhere are unchanged)"
            )
        }
        c.out.emit(
            CompactJSON(
                bytesBefore: report.bytesBefore, bytesAfter: report.bytesAfter, revisionsBefore: report.revisionsBefore,
                revisionsAfter: report.revisionsAfter,
                attachmentsKept: report.attachmentsKept, attachmentsDropped: report.attachmentsDropped, rekeyedEpoch: report.rekeyedEpoch,
                dropped: report.dropped.map { "\($0)" } + report.droppedUnknownKinds.map(Self.unknownKindDropped)))
        return .success
    }

    /// The refusal when every record compaction would drop is one `verify`
    /// says a lockdown cut (``Vault/framesCutByRemoval()``,
    /// ``Vault/framesWrittenUnderCutKeys()``): not damage, so it names them
    /// as cut and gives the flag that drops them (review 36 B3). nil when
    /// any is not.
    static func cutRefusal(_ issues: [FormatError], _ handle: Vault, _ vault: String, rekey: Bool) -> (String, String)? {
        guard !issues.isEmpty else { return nil }
        let cutRings = handle.framesCutByRemoval()
        guard !cutRings.isEmpty else { return nil }
        let cut = cutRings.merging(handle.framesWrittenUnderCutKeys().cut) { a, _ in a }
        let removals = issues.map { $0.location.flatMap { cut[$0.index] } }
        guard removals.allSatisfy({ $0 != nil }), let first = removals.first ?? nil else { return nil }
        let what = issues.count == 1 ? "1 record or commit" : "\(issues.count) records and commits"
        let message =
            "\(vault) holds \(what) cut on purpose by \(first), which 'quire verify' lists as cut, not damage: no member can read "
            + "them and they are never shown, but compaction drops them only when told to; nothing was changed"
        return (message, "compact without them: 'quire compact \(vault)\(rekey ? " --rekey" : "") --drop-unverified'")
    }

    /// How a rekey's dropped record of an unknown kind is listed (`Spec/merge.md §6`).
    static func unknownKindDropped(_ location: FrameLocation) -> String {
        "\(location) is a sealed record of a kind this version does not know that no current member attested; a rekey cannot seal it again"
    }
}

/// What `quire compact --json` prints.
struct CompactJSON: JSONShape {
    let bytesBefore: UInt64
    let bytesAfter: UInt64
    let revisionsBefore: Int
    let revisionsAfter: Int
    let attachmentsKept: Int
    let attachmentsDropped: Int
    /// Null without --rekey.
    @OrNull var rekeyedEpoch: UInt32?
    /// What --drop-unverified dropped, one message each (empty without it).
    let dropped: [String]

    static var example: CompactJSON {
        CompactJSON(
            bytesBefore: 0, bytesAfter: 0, revisionsBefore: 0, revisionsAfter: 0, attachmentsKept: 0, attachmentsDropped: 0,
            rekeyedEpoch: nil, dropped: [])
    }
}
