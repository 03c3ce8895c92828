import Foundation
@_spi(Format) @_spi(Crypto) import Quire
import QuireSystem

/// `quire device …`: enrolling and removing devices.
struct DeviceCommand: QuireCommand {
    static let configuration = CommandConfiguration(
        name: "device", abstract: "the devices that can open a vault: codes, enrolling, removing",
        subcommands: [DeviceCodeCommand.self, DeviceAddCommand.self, DeviceRemoveCommand.self, DeviceListCommand.self], section: .keys)
}

/// `quire device code`: this device's code (made on first use).
struct DeviceCodeCommand: QuireCommand {
    static let configuration = CommandConfiguration(
        name: "device code", abstract: "this device's code, to enroll it in a vault",
        discussion: """
            Prints the code on stdout (and how to use it on stderr), so that
            "$(quire device code)" gives just the code. Makes this device's key
            first when it has none. --new-key makes a new one in its place, for
            a device removed from a vault (it comes back only with a new key):
            the old key is kept beside it (device.key.replaced-MS), and it is
            refused while the old key still opens a vault this device has used.
            """,
        json: DeviceCodeJSON.self)

    @Option(help: "name this device's new key (default: the host name)") var deviceName: DeviceName?
    @Flag(help: "make a new key for this device, to enroll it again where it was removed (the old one is kept aside)")
    var newKey: Bool
    @OptionGroup var output: JSONOption

    func run(_ c: CommandContext) throws(CLIFailure) -> ExitCode {
        var name = deviceName?.name
        if newKey, let old = try setOldKeyAside(c) { name = name ?? old.name }
        let (device, created) = try Unlock.loadOrCreateDevice(named: name)
        c.out.line("\(device.code)")
        if !c.out.json {
            c.out.note(
                "This is the device code of \"\(device.name)\"\(created ? " (its key was made now)" : ""); fingerprint \(device.fingerprint)."
            )
            c.out.note("On a device already enrolled, run: quire device add VAULT CODE --name NAME")
            c.out.note("and check that it shows the same fingerprint.")
        }
        c.out.emit(DeviceCodeJSON(name: device.name, code: device.code, fingerprint: device.fingerprint, created: created))
        return .success
    }
}

extension DeviceCodeCommand {
    /// For `--new-key` (trial 25 F3): sets this device's key aside, kept as
    /// `device.key.replaced-MS`, and returns it; nil when there is none.
    /// Refused while the key still opens, as a current member, a vault this
    /// device remembers: the key store holds one key, and a new one would
    /// shut this device out of them.
    func setOldKeyAside(_ c: CommandContext) throws(CLIFailure) -> DeviceIdentity? {
        let store = try Unlock.store()
        let old: DeviceIdentity?
        do { old = try store.load() } catch {
            throw CLIFailure(error.description, hint: "check QUIRE_HOME; the key file must be mode 0600 and yours", code: error.code)
        }
        guard let old else { return nil }
        var inUse: [String] = []
        for memory in store.rememberedVaults() where FileSystem.exists(memory.path) {
            do {
                let vault = try Vault.open(at: memory.path, credential: .device(old.keyPair), writable: false)
                let member = (try? vault.keyState())?.member(withKey: old.keyPair.publicKey)
                if member != nil && vault.unlocked.unreadableNewerEpoch == nil { inUse.append(memory.path) }
            } catch {
                if case .keys(.wrongDeviceKey) = error.detail { continue }
                inUse.append("\(memory.path) (not checked: \(error.code))")
            }
        }
        let fp = DeviceCode.fingerprint(of: old.keyPair.publicKey)
        if !inUse.isEmpty {
            throw CLIFailure(
                "this device's key (fingerprint \(fp)) still opens \(inUse.joined(separator: ", ")) as an enrolled device; "
                    + "a new key in its place would shut this device out of \(inUse.count == 1 ? "it" : "them")",
                hint: "keep this key, and make the new one in a key store of its own for the vault that removed this device: "
                    + "'QUIRE_HOME=DIR quire device code', then that QUIRE_HOME for that vault",
                code: "device_key_in_use")
        }
        let kept: String
        do { kept = try store.setKeyAside(now: ProcessStats.wallClockMilliseconds()) } catch {
            throw CLIFailure(error.description, hint: "check QUIRE_HOME (\(store.directory))", code: error.code)
        }
        c.out.note("the key before (fingerprint \(fp)) is kept in \(kept), no longer used; delete it once no vault needs it")
        return old
    }
}

/// What `quire device code --json` prints.
struct DeviceCodeJSON: JSONShape {
    let name: String
    let code: String
    let fingerprint: String
    let created: Bool

    static var example: DeviceCodeJSON { DeviceCodeJSON(name: "", code: "", fingerprint: "", created: false) }
}

/// `quire device add [VAULT] CODE --name N`.
struct DeviceAddCommand: QuireCommand {
    static let configuration = CommandConfiguration(
        name: "device add", abstract: "enroll a device from its code",
        discussion: """
            Compare the fingerprint printed here with the one the new device
            shows; on a terminal you are asked to confirm.
            """,
        json: DeviceChangeJSON.self, unlocks: true)

    @VaultArgument var vault: String
    @Argument(placeholder: "CODE", help: "the code 'quire device code' prints on the new device") var code: String
    @Option(help: "the new device's name in this vault (required)") var name: DeviceName?
    @Flag(help: "do not ask to compare fingerprints") var yes: Bool
    @OptionGroup var unlock: UnlockOptions
    @OptionGroup var output: JSONOption

    func run(_ c: CommandContext) throws(CLIFailure) -> ExitCode {
        guard let name = name?.name else { throw c.usage("--name NAME is required: what to call the new device") }
        // Count here: the parser stops counting a code far longer than any code.
        let letters = code.unicodeScalars.filter { $0 != "-" && $0 != " " }.count
        if letters != 56 {
            throw CLIFailure(
                "that device code is not valid: it has \(letters) characters; a device code has 56 (not counting dashes)",
                hint: "copy the whole code 'quire device code' prints on the new device (56 letters and digits; dashes optional)",
                code: "device_code_invalid")
        }
        let publicKey: [UInt8]
        do { publicKey = try DeviceCode.parse(code) } catch { throw .vault(.keys(error), path: vault) }
        let fingerprint = DeviceCode.fingerprint(of: publicKey)
        let opened = try Unlock.open(vault, unlock, out: c.out)
        if let state = try? opened.vault.keyState(), let member = state.member(withKey: publicKey) {
            throw CLIFailure(
                "that device is already enrolled in \(vault), as \"\(member.name)\"",
                hint: "nothing to do: 'quire device list \(vault)' shows the enrolled devices",
                code: "already_enrolled")
        }
        if Prompt.isInteractive && !yes {
            guard try Prompt.confirm("Does the new device show the fingerprint \(fingerprint)?") else {
                throw CLIFailure(
                    "not enrolled: the fingerprints were not confirmed",
                    hint: "check the code was typed right; a different fingerprint means a different device", code: "cancelled")
            }
        }
        if let state = try? opened.vault.keyState(), state.removed.contains(where: { $0.publicKey == publicKey }) {
            // The library refuses it too; the CLI names the way back (trial 25 F3).
            throw CLIFailure(
                "that device key was removed from \(vault) and cannot come back (fingerprint \(fingerprint))",
                hint: "on that device, run 'quire device code --new-key' and enroll the code it prints", code: "operation_refused")
        }
        try Unlock.warnIfDroppingProtection(opened, path: vault, out: c.out)
        do {
            let member = try opened.vault.enrollDevice(code: code, name: name)
            let epoch = try opened.vault.keyState().epoch
            c.out.line("enrolled \"\(member.name)\" (fingerprint \(fingerprint)) in \(vault); it opens the vault with its own key now")
            c.out.emit(DeviceChangeJSON(name: member.name, fingerprint: fingerprint, epoch: epoch))
        } catch { throw .vault(error, path: vault) }
        return .success
    }
}

/// `{"name", "fingerprint", "epoch"}`: what `device add` and `device remove` print.
struct DeviceChangeJSON: JSONShape {
    let name: String
    let fingerprint: String
    let epoch: UInt32

    static var example: DeviceChangeJSON { DeviceChangeJSON(name: "", fingerprint: "", epoch: 1) }
}

/// `quire device remove [VAULT] NAME`.
struct DeviceRemoveCommand: QuireCommand {
    static let configuration = CommandConfiguration(
        name: "device remove", abstract: "remove a device (lost or sold)",
        discussion: """
            New records are sealed under a new epoch it never gets. It can still
            read what it could before until 'quire compact --rekey'.
            """,
        json: DeviceChangeJSON.self, unlocks: true)

    @VaultArgument var vault: String
    @Argument(placeholder: "NAME", help: "the device's name, as 'quire device list' shows it") var name: String
    @Flag(help: "it replaced the recovery key and that was you: keep the replacement (no question)") var replacementMine: Bool
    @Flag(help: "it replaced the recovery key and that was not you (a thief): cut the replacement (no question)")
    var replacementNotMine: Bool
    @Option(
        placeholder: "NAME",
        help: "with the recovery key: a device the removed one enrolled that is yours: keep it (--keep a --keep b for more)")
    var keep: [String]
    @Flag(help: "with the recovery key: remove every device the removed one enrolled too (no question)") var removeEnrolled: Bool
    @Option(
        placeholder: "FP",
        help: "when several devices (current or removed) have that name: the one with this fingerprint, as 'quire device list' shows it")
    var fingerprint: String?
    @OptionGroup var unlock: UnlockOptions
    @OptionGroup var output: JSONOption

    func run(_ c: CommandContext) throws(CLIFailure) -> ExitCode {
        if replacementMine && replacementNotMine {
            throw CLIFailure(
                "--replacement-mine and --replacement-not-mine contradict each other", hint: "give one of them", code: "usage", exit: .usage
            )
        }
        let opened = try Unlock.open(vault, unlock, out: c.out)
        let state: KeyState
        do { state = try opened.vault.keyState() } catch { throw .vault(error, path: vault) }
        let wanted = name.lowercased()
        // With the recovery key, a device already removed is removed again:
        // one that answered its removal from an old copy (the remedy the
        // removal_mutual warning gives, Spec/keys.md §6.3). A name a
        // current and a removed device share (a new phone named as the lost
        // one) is never guessed: trial 26 N1, the honest new phone was
        // removed in the stolen one's place.
        var again: [KeyringMember] = []
        if case .recoveryKey = opened.credential {
            again = state.removed.filter { $0.role == "device" && $0.name.lowercased() == wanted }
        }
        var named = state.devices.filter { $0.name.lowercased() == wanted } + again
        if let fingerprint {
            func letters(_ s: String) -> String { String(s.uppercased().filter { $0.isLetter || $0.isNumber }) }
            named = named.filter { letters(DeviceCode.fingerprint(of: $0.publicKey)) == letters(fingerprint) }
            guard !named.isEmpty else {
                throw CLIFailure(
                    "no device named \"\(name)\" has the fingerprint \(fingerprint)",
                    hint: "'quire device list \(vault)' shows each device's fingerprint", code: "not_found")
            }
        }
        if named.count > 1 {
            let listed = named.map { m in
                "fingerprint \(DeviceCode.fingerprint(of: m.publicKey))"
                    + (state.devices.contains { $0.publicKey == m.publicKey } ? " (enrolled)" : " (removed)")
            }.joined(separator: ", ")
            throw CLIFailure(
                "\(named.count) devices are named \"\(name)\" (\(listed)); quire will not guess which one to remove",
                hint: "add --fingerprint FP with the one to remove", code: "usage", exit: .usage)
        }
        guard let member = named.first else {
            if state.removed.contains(where: { $0.role == "device" && $0.name.lowercased() == wanted }) {
                throw CLIFailure(
                    "\"\(name)\" was already removed from \(vault)",
                    hint: "nothing to do; 'quire compact --rekey \(vault)' also takes away what it could read before",
                    code: "not_found")
            }
            let names = state.devices.map { "\"\($0.name)\"" }.joined(separator: ", ")
            throw CLIFailure(
                "no enrolled device is named \"\(name)\"; the devices are \(names.isEmpty ? "none" : names)",
                hint: "'quire device list \(vault)' shows the enrolled devices' names", code: "not_found")
        }
        if case .device(let pair) = opened.credential, pair.publicKey == member.publicKey {
            throw CLIFailure(
                "this device cannot remove itself from \(vault)",
                hint: "run 'quire device remove \(vault) \"\(name)\"' on another enrolled device, or here with --recovery-key-file FILE",
                code: "operation_refused")
        }
        if case .behindNewerKeyring(_, let madeBy, let wasMember)? = opened.vault.removedFromVault?.detail {
            // Removing who left this device out undoes that change
            // (Spec/keys.md §6): say when that is the wrong remedy. A device
            // the keys before listed was removed or left out on purpose: no
            // later write gives it a key again, only a new enrolment does.
            let remedy =
                wasMember
                ? "if \"\(member.name)\" is trusted, it removed this device on purpose or built on its removal: this device comes back "
                    + "only as a new device ('quire device code --new-key' here, then 'quire device add' on an enrolled device)"
                : "if \"\(member.name)\" is trusted, wait for a device that can open it to write again"
            c.out.warning(
                "this device cannot open a keyring \(madeBy) made (it was removed, or left out); removing \"\(member.name)\" undoes that: "
                    + remedy + "; remove it only if it is hostile, and prefer the recovery key (--recovery-key-file FILE)")
        }
        let owner = try replacementOwner(of: member, opened, c)
        let kept = try keptDevices(removing: member, opened, c)
        try Unlock.warnIfDroppingProtection(opened, path: vault, out: c.out)
        // A removal by the recovery key cuts what the device did that no
        // other member built on; records written under keys it made and
        // that no member adopted go with them (Spec/keys.md §6.3): said.
        var unknownBefore: Int?
        var enrolledKeys = Set<[UInt8]>()
        if case .recoveryKey = opened.credential {
            unknownBefore = try? opened.vault.unreadRecords().notReadableWithThisKey
            enrolledKeys = Set(((try? opened.vault.devicesEnrolled(by: [member.publicKey])) ?? []).map(\.publicKey))
        }
        do {
            let before = KeyOperations.trustedRecoveryReplacements(in: state)
            let removed = try opened.vault.removeDevice(publicKey: member.publicKey, replacement: owner, keepingEnrolled: kept)
            let after = try opened.vault.keyState()
            let epoch = after.epoch
            let kept = Set(KeyOperations.trustedRecoveryReplacements(in: after).map(\.keyringID))
            for cut in before where !kept.contains(cut.keyringID) {
                c.out.warning(
                    "this removal cut the replacement of the recovery key made on \(DateText.local(cut.created)) by \"\(cut.signerName)\": "
                        + "the recovery key before it is the recovery key again, the one it set no longer opens the vault, "
                        + "and what was written under the keys made after it is unreadable")
            }
            let fp = DeviceCode.fingerprint(of: removed.publicKey)
            // Trial 26, minor: a removal again is not a new one.
            let head =
                state.removed.contains { $0.publicKey == removed.publicKey }
                ? "\"\(removed.name)\" (fingerprint \(fp)) was already removed; removed again with the recovery key"
                : "removed \"\(removed.name)\" (fingerprint \(fp))"
            c.out.line("\(head): new records are sealed under epoch \(epoch), which it never gets")
            var staysOut = 0
            for other in state.devices where other.publicKey != removed.publicKey && after.member(withKey: other.publicKey) == nil {
                let fp = DeviceCode.fingerprint(of: other.publicKey)
                if enrolledKeys.contains(other.publicKey) {
                    c.out.line(
                        "removed \"\(other.name)\" (fingerprint \(fp)) with it: only \"\(removed.name)\" or a device it enrolled vouched for it"
                    )
                } else {
                    c.out.line(
                        "removed \"\(other.name)\" (fingerprint \(fp)) with it: \"\(removed.name)\" had removed it, and what it removed stays out"
                    )
                    staysOut += 1
                }
            }
            if case .recoveryKey = opened.credential {
                staysOut += reportStaysRemoved(before: state, after: after, removed: removed, suspects: enrolledKeys, c)
            }
            if staysOut > 0 {
                c.out.line(
                    "to bring back a device that stays removed, if it is yours: on it, run 'quire device code --new-key' (a removed key "
                        + "cannot come back), then 'quire device add \(vault) CODE --name NAME' on an enrolled device or with --recovery-key-file FILE"
                )
            }
            c.out.line("it can still read what it could before until 'quire compact --rekey \(vault)'")
            if case .recoveryKey = opened.credential { reportLockdownChanges(before: state, after: after, removed: removed, c) }
            if let unknownBefore, let now = try? opened.vault.unreadRecords().notReadableWithThisKey, now > unknownBefore {
                c.out.warning(
                    "\(plural(now - unknownBefore, "record")) written under keys \"\(removed.name)\" made, which no other device took on "
                        + "without undoing a removal it made, can no longer be read: they were cut with what it did. "
                        + "A copy of \(vault) from before this removal still holds them")
            }
            c.out.emit(DeviceChangeJSON(name: removed.name, fingerprint: fp, epoch: epoch))
        } catch { throw .vault(error, path: vault) }
        return .success
    }
}

extension DeviceRemoveCommand {
    /// What a removal by the recovery key changed besides the devices it
    /// took (`Spec/keys.md §6.3`, review 20 R20-2): a device a removal by
    /// the removed one (or a device it enrolled) had put out is a member
    /// again when that removal answered its own — the file cannot tell
    /// that from a lost device's removal of a stolen one — and the
    /// passphrases and escrow custodians a suspect's keyring brought in
    /// are dropped. Each is said, with what to do if it is wrong.
    func reportLockdownChanges(before: KeyState, after: KeyState, removed: KeyringMember, _ c: CommandContext) {
        for back in after.devices where before.member(withKey: back.publicKey) == nil {
            c.out.warning(
                "\"\(back.name)\" (fingerprint \(DeviceCode.fingerprint(of: back.publicKey))) is a member again: the removal of it "
                    + "that \"\(removed.name)\" (or a device it enrolled) made after being removed itself counts for nothing; "
                    + "if \"\(back.name)\" is not yours or was lost too, remove it now with the recovery key")
        }
        let passphrasesAfter = Set(after.passphraseKeys)
        let dropped = before.passphraseKeys.filter { !passphrasesAfter.contains($0) }.count
        if dropped > 0 {
            c.out.warning(
                "\(dropped == 1 ? "the passphrase" : "\(dropped) passphrases") no longer \(dropped == 1 ? "opens" : "open") what is written "
                    + "from now on: set by \"\(removed.name)\" or a device it enrolled, or carried only by what they changed; "
                    + "if yours, set it again with 'quire keys passphrase'")
        }
        let escrowAfter = Set(after.escrow.map(\.publicKey))
        for custodian in before.escrow where !escrowAfter.contains(custodian.publicKey) {
            c.out.warning(
                "the escrow key \"\(custodian.label)\" no longer opens what is written from now on: \"\(removed.name)\" or a device "
                    + "it enrolled added or kept it, and that key is retired for good; if it should stay, ask the custodian for a new key")
        }
    }

    /// Trial 25 F3, trial 26 N3: a device `removed` (or a device it
    /// enrolled, `suspects`) had removed before this removal stays removed
    /// (`Spec/keys.md §6.3`, review 18 R18-2: the file cannot tell that from
    /// the user's own removal of a lost device): each is said, on stdout.
    /// Returns how many.
    func reportStaysRemoved(
        before: KeyState, after: KeyState, removed: KeyringMember, suspects: Set<[UInt8]>, _ c: CommandContext
    ) -> Int {
        let byThem = suspects.union([removed.publicKey])
        var count = 0
        for gone in before.removed where gone.role == "device" && gone.publicKey != removed.publicKey {
            guard after.member(withKey: gone.publicKey) == nil else { continue }
            let removers = before.trusted.filter { ring in ring.content?.removed.contains { $0.publicKey == gone.publicKey } == true }
            guard removers.contains(where: { $0.signer.map(byThem.contains) == true }) else { continue }
            c.out.line(
                "\"\(gone.name)\" (fingerprint \(DeviceCode.fingerprint(of: gone.publicKey))) stays removed: \"\(removed.name)\" "
                    + "(or a device it enrolled) removed it, and the file cannot tell that from your own removal of a lost device")
            count += 1
        }
        return count
    }

    /// With the recovery key, which of the devices the target enrolled (or
    /// a device it enrolled did) stay (Spec/keys.md §6.3, *suspects*): the
    /// flags, else the person at the terminal; never a guess. A device
    /// removes only the target, so nothing is asked.
    func keptDevices(removing member: KeyringMember, _ opened: OpenedVault, _ c: CommandContext) throws(CLIFailure) -> Set<[UInt8]> {
        guard case .recoveryKey = opened.credential else {
            if !keep.isEmpty || removeEnrolled {
                throw CLIFailure(
                    "--keep and --remove-enrolled apply only to a removal with the recovery key",
                    hint: "add --recovery-key-file FILE, or leave them out", code: "usage", exit: .usage)
            }
            return []
        }
        if removeEnrolled && !keep.isEmpty {
            throw CLIFailure(
                "--keep and --remove-enrolled contradict each other", hint: "give one of them", code: "usage", exit: .usage)
        }
        let enrolled: [KeyringMember]
        do { enrolled = try opened.vault.devicesEnrolled(by: [member.publicKey]) } catch { throw .vault(error, path: vault) }
        var kept = Set<[UInt8]>()
        let devices: [KeyringMember]
        do { devices = try opened.vault.keyState().devices } catch { throw .vault(error, path: vault) }
        for name in keep {
            // Names are not unique in a key graph a thief wrote to: a
            // puppet named like the user's tablet must not be kept in its
            // place (review 18 R18-7).
            let named = devices.filter { $0.name.lowercased() == name.lowercased() }
            if named.count > 1 {
                let fingerprints = named.map { DeviceCode.fingerprint(of: $0.publicKey) }.joined(separator: ", ")
                throw CLIFailure(
                    "\(named.count) devices are named \"\(name)\" (fingerprints \(fingerprints)); quire will not guess which one to keep",
                    hint: "keep none by name: run it on a terminal to be asked about each, with its fingerprint", code: "usage",
                    exit: .usage)
            }
            guard let device = enrolled.first(where: { $0.name.lowercased() == name.lowercased() }) else {
                let names = enrolled.map { "\"\($0.name)\"" }.joined(separator: ", ")
                throw CLIFailure(
                    "\"\(name)\" is not a device \"\(member.name)\" enrolled; those are \(names.isEmpty ? "none" : names)",
                    hint: "--keep names only devices the removed one enrolled; 'quire device list' shows every device", code: "usage",
                    exit: .usage)
            }
            kept.insert(device.publicKey)
        }
        let undecided = enrolled.filter { !kept.contains($0.publicKey) }
        guard !removeEnrolled, keep.isEmpty, !undecided.isEmpty else { return kept }
        let listed = undecided.map { "\"\($0.name)\" (fingerprint \(DeviceCode.fingerprint(of: $0.publicKey)))" }
            .joined(separator: ", ")
        guard Prompt.isInteractive else {
            throw CLIFailure(
                "\"\(member.name)\" enrolled \(listed); quire will not guess whether that was you or a thief",
                hint: "pass --keep NAME for each that is yours, or --remove-enrolled to remove them all with it, "
                    + "or run it on a terminal to be asked",
                code: "usage", exit: .usage)
        }
        c.out.note("\"\(member.name)\" enrolled \(listed).")
        c.out.note("a device you keep stays; one you do not is removed with it and must make a new device key to come back.")
        for device in undecided {
            let fp = DeviceCode.fingerprint(of: device.publicKey)
            if try Prompt.confirm("Is \"\(device.name)\" (fingerprint \(fp)) yours, to keep?") { kept.insert(device.publicKey) }
        }
        return kept
    }

    /// Whose replacement of the recovery key it was, when the device (or a
    /// device it enrolled) made one (Spec/keys.md §6.3): the flags, else the
    /// person at the terminal; never a guess.
    func replacementOwner(of member: KeyringMember, _ opened: OpenedVault, _ c: CommandContext) throws(CLIFailure)
        -> RecoveryReplacementOwner
    {
        if replacementNotMine { return .notMine }
        if replacementMine { return .mine }
        guard case .device = opened.credential else { return .mine }
        let replacements: [RecoveryKeyReplacement]
        do { replacements = try opened.vault.recoveryReplacements(removing: member.publicKey) } catch { throw .vault(error, path: vault) }
        guard !replacements.isEmpty else { return .mine }
        let made = replacements.map { r in
            "on \(DateText.local(r.created)) by \"\(r.signerName)\""
                + (r.enrolledBy == nil ? "" : " (a device \"\(member.name)\" enrolled)")
        }.joined(separator: ", ")
        guard Prompt.isInteractive else {
            throw CLIFailure(
                "\"\(member.name)\" replaced the recovery key (\(made)); quire will not guess whether that was you",
                hint: "pass --replacement-mine (you replaced it: keep it) or --replacement-not-mine (a thief did: cut it, "
                    + "which brings back the recovery key before it), or run it on a terminal to be asked",
                code: "usage", exit: .usage)
        }
        c.out.note("the recovery key was replaced \(made).")
        c.out.note("if you made that replacement, it stays; if a thief did, this removal cuts it: the recovery key before it")
        c.out.note("comes back, and the devices enrolled and records written after it are lost.")
        return try Prompt.confirm("Was that replacement made by someone else (a thief), not by you?") ? .notMine : .mine
    }
}

/// `quire device list [VAULT]`.
struct DeviceListCommand: QuireCommand {
    static let configuration = CommandConfiguration(
        name: "device list", abstract: "the devices that can open the vault", json: DeviceListJSON.self, unlocks: true)

    @VaultArgument var vault: String
    @OptionGroup var unlock: UnlockOptions
    @OptionGroup var output: JSONOption

    func run(_ c: CommandContext) throws(CLIFailure) -> ExitCode {
        let opened = try Unlock.open(vault, unlock, out: c.out, writable: false)
        let state: KeyState
        do { state = try opened.vault.keyState() } catch { throw .vault(error, path: vault) }
        var thisKey: [UInt8]?
        if case .device(let pair) = opened.credential { thisKey = pair.publicKey }
        for m in state.devices {
            c.out.line(
                "\(DeviceCode.fingerprint(of: m.publicKey))  \(m.name)  added \(DateText.localDay(m.addedMilliseconds))\(m.publicKey == thisKey ? "  (this device)" : "")"
            )
        }
        for m in state.removed where m.role == "device" { c.out.line("\(DeviceCode.fingerprint(of: m.publicKey))  \(m.name)  removed") }
        if state.recoveryMember != nil { c.out.line("and the recovery key") }
        c.out.emit(
            DeviceListJSON(
                devices: state.devices.map {
                    .init(
                        name: $0.name, fingerprint: DeviceCode.fingerprint(of: $0.publicKey), added: DateText.iso($0.addedMilliseconds),
                        thisDevice: $0.publicKey == thisKey)
                },
                removed: state.removed.filter { $0.role == "device" }.map {
                    .init(
                        name: $0.name, fingerprint: DeviceCode.fingerprint(of: $0.publicKey), added: DateText.iso($0.addedMilliseconds),
                        thisDevice: nil
                    )
                }, recoveryKey: state.recoveryMember != nil))
        return .success
    }
}

/// What `quire device list --json` prints.
struct DeviceListJSON: JSONShape {
    struct Device: Encodable {
        let name: String
        let fingerprint: String
        let added: String
        /// Absent for removed devices.
        let thisDevice: Bool?
    }

    let devices: [Device]
    let removed: [Device]
    let recoveryKey: Bool

    static var example: DeviceListJSON {
        DeviceListJSON(
            devices: [Device(name: "", fingerprint: "", added: "", thisDevice: false)],
            removed: [Device(name: "", fingerprint: "", added: "", thisDevice: nil)],
            recoveryKey: true)
    }
}
