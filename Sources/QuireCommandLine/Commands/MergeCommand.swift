import Foundation
@_spi(Format) @_spi(Crypto) import Quire
import QuireSystem

/// `quire merge [VAULT] COPY [-o OUT]`.
struct MergeCommand: QuireCommand {
    static let configuration = CommandConfiguration(
        name: "merge", abstract: "merge a copy into the vault (or, with -o, into a new file)",
        discussion: """
            VAULT and COPY must be copies of the same vault. The result holds
            every entry, attachment and key change of either.
            """,
        json: MergeJSON.self, section: .file, unlocks: true)

    @VaultArgument var vault: String
    @Argument(placeholder: "COPY", help: "the other copy (a backup, or a sync tool's conflicted copy)") var copy: String
    @Option(short: "o", placeholder: "OUT", help: "write the merge to OUT (new) and leave VAULT as it is") var output: String?
    @OptionGroup var unlock: UnlockOptions
    @OptionGroup var json: JSONOption

    func run(_ c: CommandContext) throws(CLIFailure) -> ExitCode {
        let a = vault
        let b = copy
        try Unlock.requireVault(a)
        guard FileSystem.exists(b) else {
            throw CLIFailure("no copy at \(b)", hint: "check the path of the second copy", code: "not_found")
        }
        if Paths.isFolder(b) {
            throw CLIFailure(
                "\(b) is a folder, not a vault file", hint: "give the path of the copy's file, such as a sync tool's conflicted copy",
                code: "not_a_vault")
        }
        var target = a
        if let out = output {
            guard !out.isEmpty else { throw c.usage("-o OUT is empty: give the path of the file to write") }
            guard !FileSystem.nameExists(out) else {
                throw CLIFailure("\(out) already exists; nothing was written", hint: "choose a new name for -o")
            }
            try Paths.requireParentFolder(out)
            target = out
        }
        // Without the index cache's frame table: the merge copies the
        // vault's bytes, so it needs the vault scanned whole, and scanned it
        // again after an open from the table.
        let opened = try Unlock.open(a, unlock, out: c.out, writable: false, scansWholeFile: true)
        // -o OUT: the merge is made in a temporary file beside OUT, and OUT
        // appears only when it is complete (never partial on a full disk or a kill).
        var temporary: String?
        if target != a {
            Leftovers.removeStale(besideVault: target, holdingLock: false)
            let temp = Leftovers.temporaryPath(for: target, random: SystemRandom())
            do { try Self.copyWhole(a, to: temp) } catch {
                try? FileSystem.remove(temp)
                throw CLIFailure(
                    "cannot write \(target) (\(error.description)); nothing was written",
                    hint: CLIFailure.hint(for: error) ?? "check the folder exists and can be written")
            }
            temporary = temp
        }
        let progress = ProgressBar("merging \(b) into \(target)")
        progress.start()
        let report: MergeReport
        do {
            // The vault as just opened: the merge scans it again only if it
            // changed meanwhile (or with -o, where it merges into a copy).
            report = try VaultMerge.merge(
                vaultAt: temporary ?? a, copyAt: b, credential: opened.credential, reusing: opened.vault.file,
                scannedKeys: opened.vault.unlocked)
        } catch {
            progress.finish()
            if let temporary { try? FileSystem.remove(temporary) }
            var f = CLIFailure.vault(.sync(error), path: a)
            switch error {
            case .copyUnreadable(_, .notAVault), .copyUnreadable(_, .truncatedHeader), .copyUnreadable(_, .unsupportedVersion):
                f.hint = "\(b) is not a Quire vault: give a copy of \(a) (a backup, or a sync tool's conflicted copy)"
            case .differentVaults:
                f.hint =
                    "\(b) is a different journal (see the vault ids with 'quire info'); to move its entries over, export it and import the export"
            default:
                break
            }
            throw f
        }
        progress.finish()
        if let temporary {
            try Self.publish(temporary, as: target, c.out)
        } else if report.changed {
            Rewrites.sayWhenALinkWasFollowed(a, c.out)
        }
        for left in report.temporariesLeft {
            c.out.warning("\(left), a temporary file of this merge, could not be removed; the next quire write in its folder removes it")
        }
        if report.changed {
            var s =
                "merged \(b) into \(target): \(plural(report.framesAdded, "record")) added in \(plural(report.commitsWritten, "commit"))"
            if report.framesCarriedUnopened > 0 { s += " (\(report.framesCarriedUnopened) carried unopened)" }
            if report.framesResealed > 0 { s += "; \(plural(report.framesResealed, "record")) sealed again under the current key" }
            let asBefore = report.unattestedCommits - report.failedAttestations.count
            if asBefore > 0 {
                s += "; \(plural(asBefore, "commit")) unattested, as in \(b) (no member vouches for them)"
            }
            c.out.line("\(s)")
            if !report.failedAttestations.isEmpty {
                c.out.warning(
                    "\(plural(report.failedAttestations.count, "commit")) carried had an attestation that does not verify (attestation_failed: only someone holding the vault's key can write one); the merged vault holds them unattested. Keep the files they came from to show it, and see 'quire verify' on them and 'quire devices'"
                )
            }
        } else if report.leftOut.isEmpty {
            c.out.line("\(target) already holds everything in \(b); nothing was written")
        } else {
            c.out.line(
                "\(target) already holds everything in \(b) that can be read; nothing was written. \(plural(report.leftOut.count, "record")) of \(b) cannot be taken in (damaged or unverified): delete \(b) if you do not need them, or keep it under another name"
            )
        }
        for e in report.leftOut { c.out.line("  left out of \(b): \(e.description)") }
        for e in report.droppedFromVault { c.out.line("  dropped from \(target): \(e.description)") }
        for f in report.failedAttestations { c.out.line("  attestation failed in \(f.inCopy ? b : a): \(f.issue.description)") }
        c.out.emit(
            MergeJSON(
                vault: target, copy: b, changed: report.changed, recordsAdded: report.framesAdded,
                recordsCarriedUnopened: report.framesCarriedUnopened, recordsResealed: report.framesResealed,
                commitsWritten: report.commitsWritten, unattestedCommits: report.unattestedCommits,
                commonPrefixBytes: report.commonPrefixByteCount,
                leftOut: report.leftOut.map(\.description),
                droppedFromVault: report.droppedFromVault.map(\.description),
                attestationFailed: report.failedAttestations.map {
                    MergeJSON.FailedAttestation(file: $0.inCopy ? b : a, message: $0.issue.description)
                }))
        return .success
    }

    /// Links the finished merge at `temporary` to `target` (never replacing
    /// a file made meanwhile), removes the temporary name and flushes the
    /// folder.
    static func publish(_ temporary: String, as target: String, _ out: Output) throws(CLIFailure) {
        do {
            try FileSystem.link(temporary, to: target)
            // The temporary name is now a second name of OUT; if it cannot be
            // removed (twice), say so: the next write beside it removes it.
            if (try? FileSystem.remove(temporary)) == nil && (try? FileSystem.remove(temporary)) == nil {
                out.warning(
                    "\(temporary), a second name of \(target) used while writing it, could not be removed; the next quire write in its folder removes it"
                )
            }
            try FileSystem.syncDirectory(FileSystem.directory(of: target))
        } catch {
            try? FileSystem.remove(temporary)
            if FileSystem.nameExists(target) && !error.isAlreadyExists {
                throw CLIFailure("\(target) was written, but its folder could not be flushed: \(error)")
            }
            throw CLIFailure(
                "cannot write \(target) (\(error)); nothing was written",
                hint: error.isAlreadyExists ? "something else made \(target) meanwhile; choose a new name for -o" : nil)
        }
    }

    /// Copies the file at `source`, as long as it is when opened, to a new
    /// file `destination` (mode 0600, created exclusively), flushed; in the
    /// kernel where it can (``SystemFile/copy(_:from:at:)``).
    static func copyWhole(_ source: String, to destination: String) throws(SystemError) {
        let input = try SystemFile(path: source, mode: .readOnly)
        let output = try SystemFile(path: destination, mode: .createExclusive(permissions: 0o600))
        try output.copy(try input.size(), from: input, at: 0)
        try output.sync()
    }
}

/// What the rewriting commands (merge, resolve, compact) say about links.
enum Rewrites {
    /// A rewrite through a symbolic link replaces the file it points to and
    /// keeps the link (`Spec/merge.md §3.5`): said, since the file changed
    /// is not the one named.
    static func sayWhenALinkWasFollowed(_ path: String, _ out: Output) {
        guard FileSystem.isSymbolicLink(path) else { return }
        let destination = FileSystem.symbolicLinkDestination(path) ?? FileSystem.resolvingSymbolicLinks(path)
        out.line("\(path) is a symbolic link to \(destination): that file was rewritten and the link kept")
    }
}

/// What `quire merge --json` prints.
struct MergeJSON: JSONShape {
    let vault: String
    let copy: String
    let changed: Bool
    let recordsAdded: Int
    let recordsCarriedUnopened: Int
    /// Records sealed again under the current key: the result holds a rekey
    /// they predate (`Spec/merge.md §3.4`).
    let recordsResealed: Int
    let commitsWritten: Int
    /// Of those, commits written unattested because their source was.
    let unattestedCommits: Int
    let commonPrefixBytes: UInt64
    let leftOut: [String]
    let droppedFromVault: [String]
    /// The carried commits whose attestation failed, written unattested
    /// (`Spec/merge.md §3.6`): the file each is in and the message.
    let attestationFailed: [FailedAttestation]

    /// One of ``attestationFailed``.
    struct FailedAttestation: Encodable {
        let file: String
        let message: String
    }

    static var example: MergeJSON {
        MergeJSON(
            vault: "", copy: "", changed: false, recordsAdded: 0, recordsCarriedUnopened: 0, recordsResealed: 0, commitsWritten: 0,
            unattestedCommits: 0, commonPrefixBytes: 0,
            leftOut: [], droppedFromVault: [], attestationFailed: [FailedAttestation(file: "", message: "")])
    }
}
