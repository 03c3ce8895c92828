import Foundation
import Quire
import QuireSystem

/// `quire merge A B [-o OUT]`.
func mergeCommand(_ c: Context) throws(CLIFailure) -> ExitCode {
    let a = c.operand(0)!, b = c.operand(1)!
    try Unlock.requireVault(a)
    guard FileSystem.exists(b) else { throw CLIFailure("no copy at \(b)", hint: "check the path of the second copy", code: "not_found") }
    if Paths.isFolder(b) { throw CLIFailure("\(b) is a folder, not a vault file", hint: "give the path of the copy's file, such as a sync tool's conflicted copy", code: "not_a_vault") }
    var target = a
    if let out = c.args.value("output") {
        guard !out.isEmpty else { throw c.usage("-o OUT is empty: give the path of the file to write") }
        guard !FileSystem.nameExists(out) else { throw CLIFailure("\(out) already exists; nothing was written", hint: "choose a new name for -o") }
        try Paths.requireParentFolder(out)
        target = out
    }
    let opened = try Unlock.open(a, c.args, out: c.out, writable: false)
    let credential = opened.credential
    if target != a {
        do { try FileManager.default.copyItem(atPath: a, toPath: target) } catch {
            let reason = Paths.describe(error)
            throw CLIFailure("cannot write \(target) (\(reason)); nothing was written", hint: Paths.hint(forMessage: reason) ?? "check the folder exists and can be written")
        }
    }
    let progress = ProgressBar("merging \(b) into \(target)")
    progress.start()
    let report: MergeReport
    do { report = try VaultMerge.merge(vaultAt: target, copyAt: b, credential: credential) } catch {
        progress.finish()
        if target != a { try? FileSystem.remove(target) }
        var f = CLIFailure.vault(.sync(error), path: a)
        if error.code == "not_a_vault" || error.code == "truncated_header" || f.message.contains("not a Quire vault") {
            f.hint = "\(b) is not a Quire vault: give a copy of \(a) (a backup, or a sync tool's conflicted copy)"
        } else if f.hint == nil && f.message.contains("another vault") {
            f.hint = "\(b) is a different journal (see the vault ids with 'quire info'); to move its entries over, export it and import the export"
        }
        throw f
    }
    progress.finish()
    if report.changed {
        var s = "merged \(b) into \(target): \(plural(report.framesAdded, "record")) added in \(plural(report.commitsWritten, "commit"))"
        if report.framesCarriedUnopened > 0 { s += " (\(report.framesCarriedUnopened) carried unopened)" }
        c.out.line(s)
    } else {
        c.out.line("\(target) already holds everything in \(b); nothing was written")
    }
    for e in report.leftOut { c.out.line("  left out of \(b): \(e.description)") }
    for e in report.droppedFromVault { c.out.line("  dropped from \(target): \(e.description)") }
    c.out.emit([
        "vault": target, "copy": b, "changed": report.changed, "recordsAdded": report.framesAdded,
        "recordsCarriedUnopened": report.framesCarriedUnopened, "commitsWritten": report.commitsWritten,
        "commonPrefixBytes": Int(report.commonPrefixByteCount), "leftOut": report.leftOut.map(\.description),
        "droppedFromVault": report.droppedFromVault.map(\.description),
    ])
    return .success
}

/// `quire resolve VAULT`: folds the conflicted copies beside it.
func resolveCommand(_ c: Context) throws(CLIFailure) -> ExitCode {
    let path = c.operand(0)!
    let opened = try Unlock.open(path, c.args, out: c.out)
    let copies: [ConflictCopy]
    do { copies = try opened.vault.conflictCopies() } catch { throw .vault(error, path: path) }
    if copies.isEmpty {
        c.out.line("no conflicted copies of \(path)")
        c.out.emit(["vault": path, "copies": [Any]()])
        return .success
    }
    let progress = ProgressBar("folding \(plural(copies.count, "copy", "copies")) into \(path)")
    progress.start()
    let report: FoldReport
    do { report = try opened.vault.foldConflictCopies() } catch {
        progress.finish()
        throw .vault(error, path: path)
    }
    progress.finish()
    var failed = false
    var rows: [[String: Any]] = []
    for copy in report.copies {
        let name = (copy.copy.path as NSString).lastPathComponent
        let tool = copy.copy.tool?.rawValue ?? "unknown tool"
        if let error = copy.error {
            failed = true
            c.out.line("not folded: \(name) (\(tool)): \(error.description)")
        } else {
            let added = copy.merge?.framesAdded ?? 0
            c.out.line("folded \(name) (\(tool)): \(plural(added, "record")) added; \(foldFate(copy))")
        }
        rows.append([
            "path": copy.copy.path, "tool": copy.copy.tool?.rawValue as Any? ?? NSNull(), "recordsAdded": copy.merge?.framesAdded ?? 0,
            "deleted": copy.deleted, "keptBecause": copy.keptBecause?.rawValue as Any? ?? NSNull(),
            "error": copy.error.map { $0.description as Any } ?? NSNull(),
        ])
    }
    c.out.emit(["vault": path, "copies": rows])
    if failed {
        c.out.failure(CLIFailure("some copies could not be folded; they were left in place", hint: "see the lines above; 'quire merge \(path) COPY' tells more"))
        return .failure
    }
    return .success
}

/// What became of a folded copy, in words: deleted, or kept and why.
func foldFate(_ copy: FoldReport.Copy) -> String {
    switch copy.keptBecause {
    case nil: "the copy was deleted"
    case .nameNotDistinctive?: "the copy was kept: its name is not a sync tool's conflict-copy name, so it may be a backup; delete it yourself if you do not need it"
    case .removeFailed?: "its content is in the vault, but the copy could not be deleted"
    case .notAllTakenIn?, .mergeFailed?: "the copy was kept (it holds records the vault could not take)"
    }
}

/// `quire compact VAULT [--rekey] [--keep-history N] [--drop-unverified]`.
func compactCommand(_ c: Context) throws(CLIFailure) -> ExitCode {
    let path = c.operand(0)!
    var options = CompactionOptions(rekey: c.args.has("rekey"), dropUnverified: c.args.has("drop-unverified"))
    if let n = c.args.value("keep-history") {
        guard let k = Int(n), k >= 0, k <= 1000 else { throw c.usage("--keep-history must be a whole number from 0 to 1000, not '\(n)'") }
        options.keepHistory = k
    }
    let opened = try Unlock.open(path, c.args, out: c.out)
    let progress = ProgressBar("compacting \(path)")
    progress.start()
    let report: CompactionReport
    do { report = try opened.vault.compact(options) } catch {
        progress.finish()
        throw .vault(error, path: path)
    }
    progress.finish()
    c.out.line("compacted \(path): \(formatBytes(report.bytesBefore)) → \(formatBytes(report.bytesAfter)); revisions \(report.revisionsBefore) → \(report.revisionsAfter); attachments kept \(report.attachmentsKept), dropped \(report.attachmentsDropped)")
    for issue in report.dropped { c.out.line("dropped: \(issue)") }
    if let epoch = report.rekeyedEpoch {
        c.out.line("rekeyed: everything is sealed under epoch \(epoch); removed devices and former keys open nothing in this file (older copies elsewhere are unchanged)")
    }
    c.out.emit([
        "bytesBefore": Int(report.bytesBefore), "bytesAfter": Int(report.bytesAfter), "revisionsBefore": report.revisionsBefore,
        "revisionsAfter": report.revisionsAfter, "attachmentsKept": report.attachmentsKept, "attachmentsDropped": report.attachmentsDropped,
        "rekeyedEpoch": report.rekeyedEpoch.map { Int($0) as Any } ?? NSNull(),
        "dropped": report.dropped.map { "\($0)" },
    ])
    return .success
}
