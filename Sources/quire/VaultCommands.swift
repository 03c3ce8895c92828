import Foundation
import Quire
import QuireSystem

/// `quire init VAULT`.
func initCommand(_ c: Context) throws(CLIFailure) -> ExitCode {
    let path = c.operand(0)!
    if c.args.has("escrow-free") && c.args.has("escrow-key") { throw c.usage("--escrow-free and --escrow-key exclude each other") }
    if c.args.has("passphrase") && c.args.has("passphrase-file") { throw c.usage("give --passphrase or --passphrase-file, not both") }
    if FileSystem.nameExists(path) {
        throw CLIFailure("\(path) already exists; nothing was changed", hint: "choose another name, or open the existing vault", code: "already_exists")
    }
    try Paths.requireParentFolder(path, nothing: "no vault was made")
    if let file = c.args.value("recovery-key-file") { try Paths.requireParentFolder(file, nothing: "no vault was made") }
    var escrow: EscrowRecipient?
    if let hex = c.args.value("escrow-key") {
        guard let key = bytes(fromHex: hex), key.count == 32 else { throw c.usage("--escrow-key must be 64 hex digits (an X25519 public key)") }
        escrow = EscrowRecipient(publicKey: key, label: "escrow")
    }
    var passphrase: SecureBytes?
    if let file = c.args.value("passphrase-file") {
        var typed = try Prompt.secretFile(file, what: "passphrase")
        defer { wipe(&typed) }
        guard !typed.isEmpty else { throw CLIFailure("the passphrase file \(file) is empty") }
        passphrase = try Prompt.passphraseBytes(typed)
    } else if c.args.has("passphrase") {
        passphrase = try Prompt.newPassphrase()
    }
    let name = c.args.value("name") ?? ((path as NSString).lastPathComponent as NSString).deletingPathExtension
    let (device, created) = try Unlock.loadOrCreateDevice(named: c.args.value("device-name"))
    let recovery: RecoveryKey
    do { recovery = try RecoveryKey(using: SystemRandom()) } catch { throw CLIFailure("\(error)") }
    // The recovery key file first (new, 0600): if it cannot be written, no vault is made.
    let recoveryFile = c.args.value("recovery-key-file")
    if let recoveryFile {
        do {
            let f = try SystemFile(path: recoveryFile, mode: .createExclusive(permissions: 0o600))
            var code = Array((recovery.code() + "\n").utf8)
            defer { wipe(&code) }
            try f.write(code, at: 0)
            try f.sync()
        } catch {
            if error.isAlreadyExists {
                throw CLIFailure("\(recoveryFile) already exists; nothing was changed", hint: "the recovery key is written only to a new file: choose another name")
            }
            throw CLIFailure("cannot write the recovery key to \(recoveryFile): \(error); nothing was changed")
        }
    }
    var setup = VaultSetup(name: name, recoveryKey: recovery, device: device)
    setup.passphrase = passphrase
    setup.escrow = escrow
    setup.isEscrowFree = c.args.has("escrow-free")
    let vault: Vault
    let store = try Unlock.store()
    do throws(VaultError) {
        vault = try Vault.create(at: path, setup: setup)
        try vault.remember(in: store)
    } catch {
        if let recoveryFile { try? FileSystem.remove(recoveryFile) }
        throw .vault(error, path: path)
    }
    let deviceLine = "This device: \"\(device.name)\", fingerprint \(device.fingerprint)\(created ? " (its key was made now)" : "")."
    c.out.line("Created \(path): the journal \"\(name)\", vault id \(vault.vaultID).")
    c.out.line(deviceLine)
    if setup.isEscrowFree { c.out.line("Escrow-free: no escrow key can ever be added.") }
    if escrow != nil { c.out.line("An escrow key can also decrypt it (standard mode).") }
    if passphrase != nil { c.out.line("A passphrase can also open it.") }
    if let recoveryFile {
        c.out.line("The recovery key was written to \(recoveryFile) (mode 0600). Copy it somewhere safe, away")
        c.out.line("from this device (on paper, or in a password manager), then delete the file.")
    } else if !c.out.json {
        c.out.line()
        c.out.line("Recovery key (shown once; write it down and keep it away from this device):")
        c.out.line()
        c.out.line("    " + recovery.code())
        c.out.line()
        c.out.line("It opens the journal on any device. Without it, losing every enrolled device")
        c.out.line("loses the journal; with it, anyone can read it.")
    }
    c.out.emit([
        "path": path, "vaultID": vault.vaultID.description, "name": name, "escrowFree": setup.isEscrowFree, "passphrase": passphrase != nil,
        "device": ["name": device.name, "fingerprint": device.fingerprint, "created": created],
        "recoveryKey": recoveryFile == nil ? recovery.code() as Any : NSNull(), "recoveryKeyFile": recoveryFile.map { $0 as Any } ?? NSNull(),
    ])
    return .success
}

/// `quire verify VAULT`: exit 2 when anything was lost or cannot be trusted;
/// exit 1 when the only records not checked are in epochs this key cannot
/// open because it was removed from the vault (that is not damage).
func verifyCommand(_ c: Context) throws(CLIFailure) -> ExitCode {
    let path = c.operand(0)!
    let opened: OpenedVault
    do { opened = try Unlock.open(path, c.args, out: c.out, writable: false) } catch {
        // A file too damaged to unlock is damage, not a failure to run.
        guard Unlock.damageCodes.contains(error.code) else { throw error }
        c.out.line("\(path): DAMAGED. \(error.message)")
        c.out.line("Nothing in it can be opened. Restore it from a copy (a backup, or another device's copy of the vault).")
        c.out.emit([
            "intact": false, "fileBytes": Int((try? FileSystem.size(path)) ?? 0), "frames": 0, "commits": 0, "intactRecords": 0,
            "unreadableWithThisKey": 0,
            "issues": [["code": error.code, "message": error.message, "offset": NSNull(), "frame": NSNull(), "damage": true] as [String: Any]],
        ])
        c.out.failure(CLIFailure("\(path) is damaged: \(error.message)", hint: "restore it from a backup or another device's copy of the vault", code: error.code, exit: .damage))
        return .damage
    }
    let progress = ProgressBar("verifying \(path)")
    progress.start()
    let report = opened.vault.verify()
    progress.finish()
    let unlocked = opened.vault.unlocked
    let structure = opened.vault.file.structure
    // Records in epochs newer than this key's, up to the newest intact
    // keyring it cannot open: sealed without it since it was removed.
    func notReadable(_ issue: VerifyReport.Issue) -> Bool {
        guard unlocked.unreadableNewerEpoch != nil, let f = issue.frameIndex, f < structure.frames.count,
            issue.code == "unknown_key" || issue.code == "commit_unverifiable"
        else { return false }
        return unlocked.keys.keys(for: structure.frames[f].header.keyID).isEmpty
    }
    let unreadable = report.issues.filter(notReadable)
    let damage = report.issues.filter { $0.isDamage && !notReadable($0) }
    let warnings = report.issues.filter { !$0.isDamage }
    let removedText = unlocked.behindReason.map { "\($0): the records sealed since were made without it" } ?? ""
    if damage.isEmpty {
        var s = "\(path): no damage found in what this key can read. \(plural(report.intactRecordCount, "record")) in \(plural(report.commitCount, "commit")), \(formatBytes(report.fileByteCount))."
        if unreadable.isEmpty { s = "\(path): intact. \(plural(report.intactRecordCount, "record")) in \(plural(report.commitCount, "commit")), \(formatBytes(report.fileByteCount))." }
        c.out.line(s)
    } else {
        c.out.line("\(path): DAMAGED. \(plural(damage.count, "record")) lost or untrusted; \(plural(report.intactRecordCount, "record")) intact and readable.")
    }
    for issue in damage {
        c.out.line("  lost: \(where_(issue)): \(issue.message) [\(issue.code)]")
    }
    if !unreadable.isEmpty {
        c.out.line("\(plural(unreadable.count, "record is", "records are")) not readable with this key (\(removedText)):")
        for issue in unreadable { c.out.line("  not readable: \(where_(issue)) [\(issue.code)]") }
    }
    for issue in warnings {
        c.out.line("  note: \(where_(issue)): \(issue.message) [\(issue.code)]")
    }
    if !damage.isEmpty {
        c.out.line("Every other record reads as before. Restore the lost ones from another copy: 'quire merge \(path) COPY'.")
    }
    c.out.emit([
        "intact": damage.isEmpty, "fileBytes": Int(report.fileByteCount), "frames": report.frameCount, "commits": report.commitCount,
        "intactRecords": report.intactRecordCount, "unreadableWithThisKey": unreadable.count,
        "issues": report.issues.map { i -> [String: Any] in
            [
                "code": i.code, "message": i.message, "offset": i.offset.map { Int($0) as Any } ?? NSNull(),
                "frame": i.frameIndex.map { $0 as Any } ?? NSNull(), "damage": i.isDamage && !notReadable(i),
            ]
        },
    ])
    if !damage.isEmpty { return .damage }
    if !unreadable.isEmpty {
        c.out.failure(CLIFailure(
            "\(plural(unreadable.count, "record")) could not be checked: not readable with this key (\(removedText))",
            hint: "verify on a device that can read them, or with --recovery-key-file FILE; nothing here points to damage",
            code: "removed_from_vault"))
        return .failure
    }
    return .success
}

private func where_(_ issue: VerifyReport.Issue) -> String {
    switch (issue.frameIndex, issue.offset) {
    case let (f?, o?): "frame \(f) at byte \(o)"
    case let (nil, o?): "byte \(o)"
    case let (f?, nil): "frame \(f)"
    default: "the file"
    }
}

/// `quire info VAULT`: what the file shows without any key.
func infoCommand(_ c: Context) throws(CLIFailure) -> ExitCode {
    let path = c.operand(0)!
    try Unlock.requireVault(path)
    let s: VaultStructure
    do { s = try VaultScanner.scan(path: path) } catch {
        throw CLIFailure("\(path) is not a readable Quire vault: \(error.description)", code: error.code)
    }
    var byKind: [String: Int] = [:]
    var epochs = Set<UInt32>()
    var streams = Set<StreamID>()
    // Keyrings: only committed ones (a torn tail's are not part of the vault),
    // each once (it is stored twice, under the same id: its frame trailer).
    var keyrings: [(id: [UInt8], ring: KeyringRecord)] = []
    for (index, f) in s.frames.enumerated() {
        byKind[f.header.kind.description, default: 0] += 1
        if let chunk = f.chunk { streams.insert(chunk.stream) }
        if index < s.committedFrameCount, f.header.kind == .keyring, !keyrings.contains(where: { $0.id == f.trailer }),
            let body = f.plaintextBody, let ring = try? KeyringRecord(body: body, location: f.location)
        {
            keyrings.append((f.trailer, ring))
            // Epoch numbers are public in keyrings (frame headers carry key ids).
            epochs.insert(ring.epoch)
        }
    }
    let heads = keyringHeads(keyrings)
    // The head with the highest epoch (the last in the file among equals).
    let latest = heads.enumerated().max { a, b in a.element.epoch != b.element.epoch ? a.element.epoch < b.element.epoch : a.offset < b.offset }?.element
    var slots: [String: Int] = [:]
    for slot in latest?.publicPart.slots ?? [] { slots[slot.kind, default: 0] += 1 }
    let passphrases = (latest?.publicPart.slots ?? []).compactMap { slot -> [String: Any]? in
        if case let .passphrase(_, ops, mem, _, _) = slot { return ["opsLimit": Int(ops), "memLimitBytes": Int(mem)] }
        return nil
    }
    let copyDamaged: Bool
    if case .copyDamaged = s.headerDamage { copyDamaged = true } else { copyDamaged = false }
    c.out.line("\(path): Quire vault, format version \(s.header.version)")
    c.out.line("vault id:     \(s.header.vaultID)")
    c.out.line("size:         \(formatBytes(s.fileSize)) (\(s.fileSize) bytes)")
    let kinds = byKind.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ")
    c.out.line("frames:       \(s.frames.count) in \(plural(s.groups.count, "commit"))" + (kinds.isEmpty ? "" : ": " + kinds))
    c.out.line("epochs:       \(epochs.isEmpty ? "none" : epochs.sorted().map(String.init).joined(separator: ", "))")
    c.out.line("attachments:  \(plural(streams.count, "chunk stream")) (sizes to within 64 KiB)")
    if let latest {
        let slotText = slots.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ")
        c.out.line("keyrings:     \(keyrings.count) (each stored twice); the newest, epoch \(latest.epoch), has key slots: \(slotText)")
        if heads.count > 1 {
            c.out.line("key heads:    \(heads.count) concurrent keyrings (copies changed keys apart; the next key change joins them)")
        }
        c.out.line("escrow-free:  \(latest.publicPart.isEscrowFree ? "yes" : "no")")
        for p in passphrases { c.out.line("passphrase:   Argon2id, \(p["opsLimit"]!) passes, \(formatBytes(UInt64(p["memLimitBytes"] as! Int)))") }
    } else {
        c.out.line("keyrings:     none intact")
    }
    if s.tailByteCount > 0 { c.out.line("torn tail:    \(s.tailByteCount) bytes after the last commit (ignored; cut off at the next write)") }
    if !s.damagedRegions.isEmpty { c.out.line("damage:       \(plural(s.damagedRegions.count, "damaged region")); run 'quire verify'") }
    if copyDamaged { c.out.line("header:       one of its two copies is damaged; the other was used") }
    c.out.line("Not visible without a key: text, dates, tags, places, names, attachments' content and types, device names.")
    c.out.emit([
        "path": path, "formatVersion": Int(s.header.version), "vaultID": s.header.vaultID.description, "fileBytes": Int(s.fileSize),
        "frames": s.frames.count, "framesByKind": byKind, "commits": s.groups.count, "epochs": epochs.sorted().map { Int($0) },
        "attachmentStreams": streams.count, "keyrings": keyrings.count, "keyringHeads": heads.count,
        "latestKeyring": latest.map { l -> Any in
            ["epoch": Int(l.epoch), "slots": slots, "escrowFree": l.publicPart.isEscrowFree, "passphrases": passphrases] as [String: Any]
        } ?? NSNull(),
        "tornTailBytes": Int(s.tailByteCount), "damagedRegions": s.damagedRegions.count, "headerCopyDamaged": copyDamaged,
    ])
    return .success
}

/// The keyrings no other keyring in `keyrings` names as a parent (the
/// heads of the keyring chain, `Spec/keys.md §5`), in file order. Read from
/// the public parts only: without a key nothing tells a genuine keyring
/// from an appended one.
func keyringHeads(_ keyrings: [(id: [UInt8], ring: KeyringRecord)]) -> [KeyringRecord] {
    var named = Set<[UInt8]>()
    for k in keyrings { for p in k.ring.publicPart.parents { named.insert(p.bytes) } }
    return keyrings.filter { !named.contains($0.id) }.map(\.ring)
}
