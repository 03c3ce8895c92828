import Foundation
@_spi(Format) @_spi(Crypto) import Quire
import QuireSystem

/// `quire verify [VAULT]`: exit 2 when anything was lost or cannot be
/// trusted; exit 1 when the only records not checked are in epochs this
/// key cannot open because it was removed from the vault (not damage).
/// Keyrings a removal signed by the recovery key cut on purpose (a thief's,
/// after a lockdown) are said, as cut, and are not damage (trial 26 N5);
/// so are the records and commits the removed device wrote under the keys
/// they made, where that key proves them, and only there (review 33 F1, F3),
/// and only before the removal in file order (review 36 B1).
struct VerifyCommand: QuireCommand {
    static let configuration = CommandConfiguration(
        name: "verify", abstract: "check every byte; exit 2 when something is lost",
        discussion: """
            Exit 0: intact (warnings allowed); 2: records lost or untrusted,
            each listed with its frame and offset, a file too damaged to
            open, or a file that lacks records this device saw committed (cut
            off or replaced by an older copy: rollback_suspected); 1: nothing damaged, but newer records are not readable with
            this key (a removed device): verify on an enrolled device. After
            'device remove NAME' with the recovery key, the keyrings of the
            removed device (or of one it enrolled) that no one built on,
            before that removal in the file, are listed as cut, not as
            damage: alone, exit 0; so are the records
            and commits under the keys those keyrings made that the key
            proves, in a commit signed by a device a removal with the
            recovery key removed, before that removal in the file. The
            signature shows who committed, not who wrote each record:
            whoever has the removed device's keys decides what is cut, as it
            decides what the file holds. Any other record or commit under
            those keys (a changed one, or one another device wrote) is
            listed as lost (exit 2), and so is one the removed device wrote
            after its removal in the file, said as such: whoever has its
            keys still writes where the vault is stored (a write spliced in
            before the removal, by someone with its keys, reads as cut). Two removals each
            of the other (removal_mutual) that a removal with the recovery
            key has settled are noted once, as settled. It
            also says how many entries have conflicting versions
            ('quire versions ID').
            """,
        json: VerifyJSON.self, section: .file, unlocks: true)

    @VaultArgument var vault: String
    @OptionGroup var unlock: UnlockOptions
    @OptionGroup var output: JSONOption

    func run(_ c: CommandContext) throws(CLIFailure) -> ExitCode {
        let out = c.out
        let opened: OpenedVault
        do { opened = try Unlock.open(vault, unlock, out: out, writable: false, scansWholeFile: true) } catch {
            // A file too damaged to unlock is damage, not a failure to run.
            guard let cause = error.cause, Unlock.isDamage(cause) else { throw error }
            // An empty file is not "damaged: not a vault" (trial 25, F11): say what it is.
            let empty = (try? FileSystem.size(vault)) == 0
            if empty {
                out.line("\(vault): EMPTY. The file is 0 bytes long: no vault is left in it.")
                out.line("If it held a vault, restore it from a copy (a backup, or another device's copy of the vault).")
            } else {
                out.line("\(vault): DAMAGED. \(error.message)")
                out.line("Nothing in it can be opened. Restore it from a copy (a backup, or another device's copy of the vault).")
            }
            out.emit(
                VerifyJSON(
                    intact: false, fileBytes: (try? FileSystem.size(vault)) ?? 0, frames: 0, commits: 0, intactRecords: 0,
                    unreadableWithThisKey: 0, cutByRemoval: 0,
                    conflictingEntries: 0, unattestedCommits: 0, unattestedRecords: 0,
                    issues: [.init(code: error.code, message: error.message, offset: nil, frame: nil, damage: true)])
            )
            out.failure(
                CLIFailure(
                    empty
                        ? "\(vault) is an empty file (0 bytes): there is no vault in it to verify"
                        : "\(vault) is damaged: \(error.message)",
                    hint: "restore it from a backup or another device's copy of the vault",
                    code: error.code, exit: .damage))
            return .damage
        }
        let progress = ProgressBar("verifying \(vault)")
        progress.start()
        let report = opened.vault.verify()
        progress.finish()
        let vaultHandle = opened.vault
        let unreadable = report.issues.filter { vaultHandle.isUnreadableWithThisKey($0) }
        // Cut on purpose by a removal the trusted keyrings record (trial 26
        // N5): said, as such, but not damage. A changed byte never is.
        let cutFrames = opened.vault.framesCutByRemoval()
        // Records and commits only where the cut key proves them (review 33 F1, F3).
        let cutWrites = opened.vault.framesWrittenUnderCutKeys()
        func cutBy(_ issue: VerifyReport.Issue) -> String? {
            guard issue.isDamage, let f = issue.frameIndex, !vaultHandle.isUnreadableWithThisKey(issue) else { return nil }
            if Self.cutCodes.contains(issue.code) { return cutFrames[f] }
            if Self.cutWrittenCodes.contains(issue.code) { return cutWrites.cut[f] }
            return nil
        }
        // Written under a cut key by a removed device after its removal
        // (review 36 B1): still lost, exit 2, and said as such.
        func writtenAfter(_ issue: VerifyReport.Issue) -> String? {
            guard issue.isDamage, let f = issue.frameIndex, Self.cutWrittenCodes.contains(issue.code) else { return nil }
            return cutWrites.afterRemoval[f]
        }
        let cut = report.issues.compactMap { issue in cutBy(issue).map { (issue, $0) } }
        let cutWhat = Self.cutWords(cut.map(\.0))
        let damage = report.issues.filter { $0.isDamage && !vaultHandle.isUnreadableWithThisKey($0) && cutBy($0) == nil }
        let warnings = report.issues.filter { !$0.isDamage }
        // A mutual removal that a removal by the recovery key has settled
        // since (trial 26 N2): said once, as settled, not asked for again.
        let settledMutual = opened.vault.mutualRemovalsSettled()
        func settledBy(_ issue: VerifyReport.Issue) -> String? {
            guard issue.code == "removal_mutual", let f = issue.frameIndex else { return nil }
            return settledMutual[f]
        }
        let conflicts = ((try? opened.vault.entries()) ?? []).filter { !$0.conflictingHeads.isEmpty }.count
        // This device saw more of the vault committed than the file holds
        // (Spec/keys.md §7): what the file ends with is not an unfinished write.
        let rollback = opened.vault.keyWarnings.first { $0.code == "rollback_suspected" }
        let removedText =
            opened.vault.unlocked.behindReason.map {
                "\($0): the records sealed since were made without it"
            } ?? ""
        let counts =
            "\(plural(report.intactRecordCount, "record")) in \(plural(report.commitCount, "commit")), \(formatBytes(report.fileByteCount))."
        let conflictText = conflicts == 0 ? "" : ", \(plural(conflicts, "entry", "entries")) with conflicting versions"
        if rollback != nil, damage.isEmpty {
            out.line(
                "\(vault): RECORDS MISSING: it lacks records this device saw committed (rollback_suspected: see the warning). "
                    + "No other damage: \(counts)")
        } else if damage.isEmpty {
            if unreadable.isEmpty {
                let cutText = cut.isEmpty ? "" : "; \(cutWhat) cut on purpose by a device removal (below)"
                out.line("\(vault): intact\(conflictText)\(cutText). \(counts)")
            } else {
                out.line("\(vault): no damage found in what this key can read\(conflictText). \(counts)")
            }
        } else {
            out.line(
                "\(vault): DAMAGED. \(plural(damage.count, "record")) lost or untrusted; \(plural(report.intactRecordCount, "record")) intact and readable."
            )
        }
        for issue in damage {
            let message = writtenAfter(issue).map { Self.writtenAfterText(removal: $0) } ?? issue.message
            out.line("  lost: \(Self.place(issue)): \(message) [\(issue.code)]")
        }
        let after = damage.filter { writtenAfter($0) != nil }
        if !after.isEmpty {
            out.line(
                "\(Self.cutWords(after)) \(after.count == 1 ? "was" : "were") written under a cut key by a removed device "
                    + "AFTER its removal was in this file: whoever has that device's keys can still write to where this vault "
                    + "is stored. They are never shown. Take that device's access to the storage away (the sync account or "
                    + "share), then drop them: 'quire compact \(vault) --rekey --drop-unverified'.")
        }
        if !cut.isEmpty {
            out.line(
                "\(cutWhat) \(cut.count == 1 ? "was" : "were") cut on purpose by a removal the recovery key signed: "
                    + "not damage, and nothing needs restoring. A record or commit is among them only when the cut key "
                    + "proves that the removed device wrote it; any other under those keys is listed as lost (a copy from "
                    + "before the removal still holds what your devices wrote under those keys):")
            for (issue, removal) in cut { out.line("  cut: \(Self.place(issue)): by \(removal) [\(issue.code)]") }
        }
        if !unreadable.isEmpty {
            out.line("\(plural(unreadable.count, "record is", "records are")) not readable with this key (\(removedText)):")
            for issue in unreadable { out.line("  not readable: \(Self.place(issue)) [\(issue.code)]") }
        }
        var settled: [(removal: String, places: [String])] = []
        for issue in warnings {
            if let removal = settledBy(issue) {
                if let i = settled.firstIndex(where: { $0.removal == removal }) {
                    settled[i].places.append(Self.place(issue))
                } else {
                    settled.append((removal, [Self.place(issue)]))
                }
            } else if rollback != nil && issue.code == "torn_tail" {
                out.line(
                    "  note: \(Self.place(issue)): the bytes after the committed end are not committed in this file, but this device saw "
                        + "more of the vault committed: they are what is left of committed records, not an unfinished write [\(issue.code)]"
                )
            } else {
                out.line("  note: \(Self.place(issue)): \(issue.message) [\(issue.code)]")
            }
        }
        for (removal, places) in settled {
            out.line("  note: \(places.joined(separator: " and ")): \(Self.settledMutualText(by: removal)) [removal_mutual]")
        }
        for leftover in RewriteLeftovers.stale(besideVault: vault) { out.line("  note: \(RewriteLeftovers.describe(leftover))") }
        if report.unattestedCommitCount > 0 {
            out.line(
                "  note: \(plural(report.unattestedCommitCount, "commit")) (\(plural(report.unattestedRecordCount, "record"))) attested "
                    + "by no current member: written with a passphrase or an escrow key, by a removed device or by another program; "
                    + "never shown as a member's, and a member's version of an entry or profile wins over them")
        }
        if conflicts > 0 && damage.isEmpty {
            out.line("Entries with conflicting versions are marked in 'quire list'; 'quire versions ID' shows each version.")
        }
        if damage.contains(where: { writtenAfter($0) == nil }) {
            out.line("Every other record reads as before. Restore the lost ones from another copy: 'quire merge \(vault) COPY'.")
        }
        out.emit(
            VerifyJSON(
                intact: damage.isEmpty && rollback == nil, fileBytes: report.fileByteCount, frames: report.frameCount,
                commits: report.commitCount,
                intactRecords: report.intactRecordCount, unreadableWithThisKey: unreadable.count, cutByRemoval: cut.count,
                conflictingEntries: conflicts, unattestedCommits: report.unattestedCommitCount,
                unattestedRecords: report.unattestedRecordCount,
                issues: (rollback.map { [VerifyJSON.Issue(code: $0.code, message: $0.description, offset: nil, frame: nil, damage: true)] }
                    ?? [])
                    + report.issues.map {
                        .init(
                            code: $0.code,
                            message: settledBy($0).map { Self.settledMutualText(by: $0) }
                                ?? writtenAfter($0).map { Self.writtenAfterText(removal: $0) } ?? $0.message,
                            offset: $0.offset, frame: $0.frameIndex,
                            damage: $0.isDamage && !vaultHandle.isUnreadableWithThisKey($0) && cutBy($0) == nil)
                    }))
        if !damage.isEmpty || rollback != nil { return .damage }
        if !unreadable.isEmpty {
            out.failure(
                CLIFailure(
                    "\(plural(unreadable.count, "record")) could not be checked: not readable with this key (\(removedText))",
                    hint: "verify on a device that can read them, or with --recovery-key-file FILE; nothing here points to damage",
                    code: "removed_from_vault"))
            return .failure
        }
        return .success
    }

    /// The codes of the keyrings a removal by the recovery key cut
    /// (``Vault/framesCutByRemoval()``); records and commits under their
    /// keys have codes of their own (``cutWrittenCodes``).
    static let cutCodes: Set<String> = ["keyring_unauthenticated", "removed_device_slot", "escrow_forbidden"]

    /// The codes of the records and commits a removed device wrote under a
    /// key such a removal cut, said as cut only where that key proves them
    /// (``Vault/framesWrittenUnderCutKeys()``).
    static let cutWrittenCodes: Set<String> = ["unknown_key", "commit_unverifiable"]

    /// What was cut, in words: `2 keyrings, 1 record and 2 commits`, the
    /// kinds there are only.
    static func cutWords(_ issues: [VerifyReport.Issue]) -> String {
        let keyrings = issues.filter { cutCodes.contains($0.code) }.count
        let commits = issues.filter { $0.code == "commit_unverifiable" }.count
        let records = issues.count - keyrings - commits
        let parts = [(keyrings, "keyring"), (records, "record"), (commits, "commit")].filter { $0.0 > 0 }.map { plural($0.0, $0.1) }
        guard let last = parts.last else { return "" }
        return parts.count == 1 ? last : parts.dropLast().joined(separator: ", ") + " and " + last
    }

    /// What a record or commit a removed device wrote under a cut key after
    /// its removal (`removal`, in words) says (review 36 B1).
    static func writtenAfterText(removal: String) -> String {
        "written under a cut key after \(removal), by whoever has the removed device's keys"
    }

    /// What a `removal_mutual` warning says once a removal by the recovery
    /// key (`removal`, in words) has settled it: nothing left to do but,
    /// for a device of one's own that stays removed, a new key.
    static func settledMutualText(by removal: String) -> String {
        "a mutual removal (two devices each removed the other, as when one answers its removal from an old copy), settled by \(removal): "
            + "the devices both removed stay removed; a device of yours among them comes back only with a new key "
            + "('quire device code --new-key' on it, then 'quire device add')"
    }

    static func place(_ issue: VerifyReport.Issue) -> String {
        switch (issue.frameIndex, issue.offset) {
        case (let f?, let o?): "frame \(f) at byte \(o)"
        case (nil, let o?): "byte \(o)"
        case (let f?, nil): "frame \(f)"
        default: "the file"
        }
    }
}

/// What `quire verify --json` prints.
struct VerifyJSON: JSONShape {
    struct Issue: Encodable {
        let code: String
        let message: String
        @OrNull var offset: UInt64?
        @OrNull var frame: Int?
        let damage: Bool
    }

    let intact: Bool
    let fileBytes: UInt64
    let frames: Int
    let commits: Int
    let intactRecords: Int
    let unreadableWithThisKey: Int
    let cutByRemoval: Int
    let conflictingEntries: Int
    let unattestedCommits: Int
    let unattestedRecords: Int
    let issues: [Issue]

    static var example: VerifyJSON {
        VerifyJSON(
            intact: true, fileBytes: 0, frames: 0, commits: 0, intactRecords: 0, unreadableWithThisKey: 0, cutByRemoval: 0,
            conflictingEntries: 0,
            unattestedCommits: 0, unattestedRecords: 0, issues: [Issue(code: "", message: "", offset: nil, frame: nil, damage: false)])
    }
}
