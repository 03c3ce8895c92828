import Foundation
import Quire
import QuireSystem

private func readerObject(_ r: PrivacyStatement.Reader) -> [String: Any] {
    let kind: String
    switch r.kind {
    case .device: kind = "device"
    case .recovery: kind = "recovery"
    case .passphrase: kind = "passphrase"
    case .escrow: kind = "escrow"
    }
    return ["kind": kind, "name": r.name, "thisDevice": r.isThisDevice, "retiredAt": r.retiredAt.map { DateText.iso($0) as Any } ?? NSNull(), "phrase": r.phrase]
}

/// `quire keys status VAULT`: the privacy statement.
func keysStatusCommand(_ c: Context) throws(CLIFailure) -> ExitCode {
    let path = c.operand(0)!
    let opened = try Unlock.open(path, c.args, out: c.out, writable: false)
    let statement: PrivacyStatement
    do { statement = try opened.vault.privacyStatement() } catch { throw .vault(error, path: path) }
    c.out.line(statement.text.hasSuffix("\n") ? String(statement.text.dropLast()) : statement.text)
    c.out.emit([
        "vaultName": statement.vaultName, "vaultID": statement.vaultID.description, "escrowFree": statement.isEscrowFree,
        "escrowFreeSince": statement.escrowFreeSince.map { DateText.iso($0) as Any } ?? NSNull(),
        "epoch": Int(statement.currentEpoch), "since": DateText.iso(statement.currentSince),
        "readers": statement.currentReaders.map(readerObject),
        "olderRecords": statement.groups.map { g -> [String: Any] in
            [
                "epochs": (g.epochs.lowerBound...g.epochs.upperBound).map { Int($0) }, "from": DateText.iso(g.from),
                "until": g.until.map { DateText.iso($0) as Any } ?? NSNull(), "entryRevisions": g.entryRevisions,
                "attachments": g.attachments, "alsoReadableBy": g.extraReaders.map(readerObject),
            ]
        },
        "notes": statement.notes, "text": statement.text,
    ])
    return .success
}

/// `quire keys rotate VAULT`.
func keysRotateCommand(_ c: Context) throws(CLIFailure) -> ExitCode {
    let path = c.operand(0)!
    let opened = try Unlock.open(path, c.args, out: c.out)
    do {
        try opened.vault.rotateKeys()
        let epoch = try opened.vault.keyState().epoch
        c.out.line("rotated: new records are sealed under epoch \(epoch), for the same devices and keys")
        c.out.emit(["epoch": Int(epoch)])
    } catch { throw .vault(error, path: path) }
    return .success
}

/// `quire keys escrow-free VAULT`.
func keysEscrowFreeCommand(_ c: Context) throws(CLIFailure) -> ExitCode {
    let path = c.operand(0)!
    let opened = try Unlock.open(path, c.args, out: c.out)
    let state: KeyState
    do { state = try opened.vault.keyState() } catch { throw .vault(error, path: path) }
    if state.isEscrowFree {
        c.out.line("\(path) is already escrow-free")
        c.out.emit(["epoch": Int(state.epoch), "escrowFree": true, "changed": false])
        return .success
    }
    // The recovery key as proof that the user holds a way back in.
    var proof = opened.recoveryKey
    if proof == nil, let file = c.args.value("recovery-key-file") {
        var bytes = try Prompt.secretFile(file, what: "recovery key")
        defer { wipe(&bytes) }
        do { proof = try RecoveryKey(code: String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)) } catch {
            throw CLIFailure.vault(.keys(error), path: path)
        }
    }
    let epoch: UInt32
    do {
        try opened.vault.changeKeys(.enableEscrowFree(recoveryProof: proof))
        epoch = try opened.vault.keyState().epoch
    } catch {
        var f = CLIFailure.vault(error, path: path)
        if case .keys(.operationRefused) = error {
            f.hint = "pass --recovery-key-file FILE to show you hold the recovery key, or enroll a second device first"
        }
        throw f
    }
    c.out.line("escrow-free from epoch \(epoch): no escrow key can be added, now or later")
    c.out.line("'quire keys status \(path)' says which older records a former escrow key can still read; 'quire compact --rekey' ends that")
    c.out.emit(["epoch": Int(epoch), "escrowFree": true, "changed": true])
    return .success
}

/// `quire keys passphrase VAULT [--remove | --new-passphrase-file F]`.
func keysPassphraseCommand(_ c: Context) throws(CLIFailure) -> ExitCode {
    let path = c.operand(0)!
    if c.args.has("remove") && c.args.has("new-passphrase-file") { throw c.usage("--remove and --new-passphrase-file exclude each other") }
    try Unlock.requireVault(path)
    var new: SecureBytes?
    if let file = c.args.value("new-passphrase-file") {
        var typed = try Prompt.secretFile(file, what: "passphrase")
        defer { wipe(&typed) }
        guard !typed.isEmpty else { throw CLIFailure("the passphrase file \(file) is empty") }
        new = try Prompt.passphraseBytes(typed)
    }
    let opened = try Unlock.open(path, c.args, out: c.out)
    if !c.args.has("remove") && new == nil { new = try Prompt.newPassphrase() }
    do {
        let had = try !opened.vault.keyState().passphrases.isEmpty
        if c.args.has("remove") && !had {
            c.out.line("\(path) has no passphrase")
            c.out.emit(["epoch": Int(try opened.vault.keyState().epoch), "passphrase": false, "changed": false])
            return .success
        }
        try opened.vault.setPassphrase(new)
        let epoch = try opened.vault.keyState().epoch
        c.out.line(new == nil ? "passphrase removed (epoch \(epoch))" : had ? "passphrase changed (epoch \(epoch))" : "passphrase set (epoch \(epoch))")
        c.out.emit(["epoch": Int(epoch), "passphrase": new != nil, "changed": true])
    } catch { throw .vault(error, path: path) }
    return .success
}

/// `quire device code`: prints this device's code (made on first use).
func deviceCodeCommand(_ c: Context) throws(CLIFailure) -> ExitCode {
    let (device, created) = try Unlock.loadOrCreateDevice(named: c.args.value("device-name"))
    c.out.line(device.code)
    if !c.out.json {
        c.out.note("This is the device code of \"\(device.name)\"\(created ? " (its key was made now)" : ""); fingerprint \(device.fingerprint).")
        c.out.note("On a device already enrolled, run: quire device add VAULT CODE --name NAME")
        c.out.note("and check that it shows the same fingerprint.")
    }
    c.out.emit(["name": device.name, "code": device.code, "fingerprint": device.fingerprint, "created": created])
    return .success
}

/// `quire device add VAULT CODE --name N`.
func deviceAddCommand(_ c: Context) throws(CLIFailure) -> ExitCode {
    let path = c.operand(0)!, code = c.operand(1)!
    guard let name = c.args.value("name") else { throw c.usage("--name NAME is required: what to call the new device") }
    guard !name.trimmingCharacters(in: .whitespaces).isEmpty else { throw c.usage("--name is empty: give the new device a name (1–64 characters)") }
    // Count here: the parser stops counting a code far longer than any code.
    let letters = code.unicodeScalars.filter { $0 != "-" && $0 != " " }.count
    if letters != 56 {
        throw CLIFailure(
            "that device code is not valid: it has \(letters) characters; a device code has 56 (not counting dashes)",
            hint: "copy the whole code 'quire device code' prints on the new device (56 letters and digits; dashes optional)",
            code: "device_code_invalid")
    }
    let fingerprint: String
    do { fingerprint = try DeviceCode.fingerprint(ofCode: code) } catch { throw .vault(.keys(error)) }
    let opened = try Unlock.open(path, c.args, out: c.out)
    if Prompt.isInteractive && !c.args.has("yes") {
        guard try Prompt.confirm("Does the new device show the fingerprint \(fingerprint)?") else {
            throw CLIFailure("not enrolled: the fingerprints were not confirmed", hint: "check the code was typed right; a different fingerprint means a different device", code: "cancelled")
        }
    }
    do {
        let member = try opened.vault.enrollDevice(code: code, name: name)
        let epoch = try opened.vault.keyState().epoch
        c.out.line("enrolled \"\(member.name)\" (fingerprint \(fingerprint)) in \(path); it opens the vault with its own key now")
        c.out.emit(["name": member.name, "fingerprint": fingerprint, "epoch": Int(epoch)])
    } catch {
        var f = CLIFailure.vault(error, path: path)
        if f.hint == nil && f.message.contains("already enrolled") {
            f.hint = "nothing to do: 'quire device list \(path)' shows the enrolled devices"
        } else if f.hint == nil && f.message.contains("device name") {
            f.hint = "device names are 1–64 printable characters"
        }
        throw f
    }
    return .success
}

/// `quire device remove VAULT NAME`.
func deviceRemoveCommand(_ c: Context) throws(CLIFailure) -> ExitCode {
    let path = c.operand(0)!, name = c.operand(1)!
    let opened = try Unlock.open(path, c.args, out: c.out)
    do {
        let member = try opened.vault.removeDevice(named: name)
        let epoch = try opened.vault.keyState().epoch
        let fp = DeviceCode.fingerprint(of: member.publicKey)
        c.out.line("removed \"\(member.name)\" (fingerprint \(fp)): new records are sealed under epoch \(epoch), which it never gets")
        c.out.line("it can still read what it could before until 'quire compact --rekey \(path)'")
        c.out.emit(["name": member.name, "fingerprint": fp, "epoch": Int(epoch)])
    } catch {
        var f = CLIFailure.vault(error, path: path)
        if f.hint == nil && f.message.contains("cannot remove itself") {
            f.hint = "run 'quire device remove \(path) \"\(name)\"' on another enrolled device, or here with --recovery-key-file FILE"
        } else if f.hint == nil, let state = try? opened.vault.keyState(),
            state.removed.contains(where: { $0.role == "device" && $0.name.lowercased() == name.lowercased() })
        {
            f.message = "\"\(name)\" was already removed from \(path)"
            f.hint = "nothing to do; 'quire compact --rekey \(path)' also takes away what it could read before"
        } else if f.hint == nil {
            f.hint = "'quire device list \(path)' shows the enrolled devices' names"
        }
        throw f
    }
    return .success
}

/// `quire device list VAULT`.
func deviceListCommand(_ c: Context) throws(CLIFailure) -> ExitCode {
    let path = c.operand(0)!
    let opened = try Unlock.open(path, c.args, out: c.out, writable: false)
    let state: KeyState
    do { state = try opened.vault.keyState() } catch { throw .vault(error, path: path) }
    var thisKey: [UInt8]?
    if case .device(let pair) = opened.credential { thisKey = pair.publicKey }
    for m in state.devices {
        let mark = m.publicKey == thisKey ? "  (this device)" : ""
        c.out.line("\(DeviceCode.fingerprint(of: m.publicKey))  \(m.name)  added \(DateText.localDay(m.added))\(mark)")
    }
    for m in state.removed where m.role == "device" {
        c.out.line("\(DeviceCode.fingerprint(of: m.publicKey))  \(m.name)  removed")
    }
    if state.recoveryMember != nil { c.out.line("and the recovery key") }
    c.out.emit([
        "devices": state.devices.map { m -> [String: Any] in
            ["name": m.name, "fingerprint": DeviceCode.fingerprint(of: m.publicKey), "added": DateText.iso(m.added), "thisDevice": m.publicKey == thisKey]
        },
        "removed": state.removed.filter { $0.role == "device" }.map { m -> [String: Any] in
            ["name": m.name, "fingerprint": DeviceCode.fingerprint(of: m.publicKey), "added": DateText.iso(m.added)]
        },
        "recoveryKey": state.recoveryMember != nil,
    ])
    return .success
}
