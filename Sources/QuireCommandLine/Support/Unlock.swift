import Foundation
@_spi(Crypto) @_spi(Format) import Quire
import QuireSystem
import Synchronization

/// A vault opened for a command, and what opened it.
struct OpenedVault {
    let vault: Vault
    let credential: Credential
    /// Set when the recovery key opened it (escrow-free uses it as proof).
    let recoveryKey: RecoveryKey?
    /// In words: `this device ("Laptop")`, `the recovery key`, `the passphrase`.
    let openedWith: String
}

/// This device's key store and the unlocking order: `--recovery-key-file`
/// when given (the person chose it: a removal of a stolen device must be
/// the recovery key's, not this device's, trial 25 F1); else this device's
/// key; else `--passphrase-file`; else, on a terminal, a prompt for the
/// recovery key or the passphrase.
enum Unlock {
    /// The device key store (`$QUIRE_HOME`, else `$XDG_DATA_HOME/quire`, else `~/.local/share/quire`).
    static func store() throws(CLIFailure) -> FileDeviceKeyStore {
        do { return try FileDeviceKeyStore.standard() } catch {
            throw CLIFailure(
                error.description, hint: "set QUIRE_HOME to the folder that holds (or should hold) this device's key", code: error.code)
        }
    }

    /// This device's key, made now (named `name`, else the host name) when there is none.
    static func loadOrCreateDevice(named name: String?) throws(CLIFailure) -> (DeviceIdentity, created: Bool) {
        let s = try store()
        let chosen = name ?? defaultDeviceName()
        do {
            return try s.loadOrCreate(name: chosen, now: ProcessStats.wallClockMilliseconds(), using: SystemRandom())
        } catch {
            var hint = "check QUIRE_HOME (\(s.directory)): it must be a folder only this user can read and write"
            if error.code == "invalid_argument" { hint = "device names are 1–64 printable characters: pass --device-name NAME" }
            throw CLIFailure(error.description, hint: hint, code: error.code)
        }
    }

    /// The host name without its domain, or `"This device"`.
    static func defaultDeviceName() -> String {
        let host = ProcessInfo.processInfo.hostName.split(separator: ".").first.map(String.init) ?? ""
        let cleaned = String(host.unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7f }.prefix(64).map(Character.init))
        return cleaned.isEmpty ? "This device" : cleaned
    }

    /// Checks that `path` names an existing file.
    static func requireVault(_ path: String) throws(CLIFailure) {
        if Paths.isFolder(path) {
            throw CLIFailure(
                "\(path) is a folder, not a vault file",
                hint:
                    "give the path of the vault file itself, such as \(path == "." ? "" : path.hasSuffix("/") ? path : path + "/")Journal.quire",
                code: "not_a_vault")
        }
        guard FileSystem.exists(path) else {
            throw CLIFailure("no vault at \(path)", hint: "check the path, or create a vault with 'quire init \(path)'", code: "not_found")
        }
    }

    /// Opens the vault at `path` with the first credential that works, and
    /// warns (stderr) about key changes and conflicted copies waiting
    /// beside it (unless `mentionCopies` is false: `resolve` folds them).
    /// `retainsEntryBodies: false` opens it for work over the whole journal
    /// (import, export) whose memory must not grow with its text.
    /// `scansWholeFile` opens it without the index cache's frame table
    /// (`verify`, which checks every byte: it would scan it again).
    static func open(
        _ path: String, _ options: UnlockOptions, out: Output, writable: Bool = true, mentionCopies: Bool = true,
        retainsEntryBodies: Bool = true, scansWholeFile: Bool = false
    ) throws(CLIFailure) -> OpenedVault {
        let opened = try unlock(
            path, options, out: out, writable: writable, retainsEntryBodies: retainsEntryBodies, scansWholeFile: scansWholeFile)
        if mentionCopies { warnAboutConflictCopies(opened.vault, path: path, out: out) }
        return opened
    }

    /// Says when a sync tool left conflicted copies of the vault beside it.
    static func warnAboutConflictCopies(_ vault: Vault, path: String, out: Output) {
        let copies = vault.waitingConflictCopies()
        guard !copies.isEmpty else { return }
        let names = copies.prefix(3).map { Paths.lastComponent(of: $0) }.joined(separator: ", ") + (copies.count > 3 ? ", …" : "")
        out.warning(
            "\(plural(copies.count, "conflicted copy", "conflicted copies")) of \(path) \(copies.count == 1 ? "is" : "are") waiting beside it (\(names)): run 'quire resolve \(path)' to fold \(copies.count == 1 ? "it" : "them") in"
        )
    }

    static func unlock(
        _ path: String, _ options: UnlockOptions, out: Output, writable: Bool, retainsEntryBodies: Bool = true, scansWholeFile: Bool = false
    ) throws(CLIFailure) -> OpenedVault {
        try requireVault(path)
        let s = try store()
        var deviceName: String?
        let identity: DeviceIdentity?
        do { identity = try s.load() } catch {
            throw CLIFailure(error.description, hint: "check QUIRE_HOME; the key file must be mode 0600 and yours", code: error.code)
        }
        if let identity, options.recoveryKeyFile == nil {
            deviceName = identity.name
            do {
                let vault = try Vault.open(
                    at: path, store: commandStore(s), writable: writable, retainsEntryBodies: retainsEntryBodies,
                    usesFrameTable: !scansWholeFile)
                warn(vault, out: out)
                return OpenedVault(
                    vault: vault, credential: .device(identity.keyPair), recoveryKey: nil, openedWith: "this device (\"\(identity.name)\")")
            } catch {
                guard case .keys(.wrongDeviceKey) = error else { throw .vault(error, path: path) }
            }
        }
        if let file = options.recoveryKeyFile?.path {
            var bytes = try Prompt.secretFile(file, what: "recovery key")
            defer { wipe(&bytes) }
            return try openWithRecoveryCode(bytes, path: path, writable: writable, retainsEntryBodies: retainsEntryBodies, out: out)
        }
        if let file = options.passphraseFile?.path {
            var bytes = try Prompt.secretFile(file, what: "passphrase")
            defer { wipe(&bytes) }
            guard !bytes.isEmpty else {
                throw CLIFailure(
                    "the passphrase file \(file) is empty",
                    hint: "write the passphrase in it (one line), or unlock with --recovery-key-file FILE")
            }
            return try openWithPassphrase(bytes, path: path, writable: writable, retainsEntryBodies: retainsEntryBodies, out: out)
        }
        if Prompt.isInteractive {
            let shownPath = TerminalEscape.escape(path, keepingLineBreaks: false)
            let who =
                deviceName.map {
                    "This device (\"\(TerminalEscape.escape($0, keepingLineBreaks: false))\") is not enrolled in \(shownPath)."
                } ?? "This device has no key yet."
            var typed = try Prompt.secret("\(who)\nType the recovery key or the passphrase: ")
            defer { wipe(&typed) }
            // 56 letters and digits may be a recovery key or a passphrase:
            // try the recovery key when it parses as one, then the passphrase.
            // The typed bytes never become a String (it could not be wiped).
            let shapedLikeACode = looksLikeRecoveryCode(typed)
            if shapedLikeACode, let key = try? RecoveryKey(codeBytes: typed) {
                do {
                    return try openWithRecoveryKey(key, path: path, writable: writable, retainsEntryBodies: retainsEntryBodies, out: out)
                } catch {
                    guard error.code == "wrong_recovery_key" else { throw error }
                }
            }
            do {
                return try openWithPassphrase(typed, path: path, writable: writable, retainsEntryBodies: retainsEntryBodies, out: out)
            } catch {
                guard shapedLikeACode, error.code == "wrong_passphrase" else { throw error }
                // Never quote what was typed: it is one secret or the other.
                throw CLIFailure(
                    "what was typed opens \(path) neither as its recovery key nor as its passphrase",
                    hint:
                        "check it and try again: a recovery key is 56 letters and digits in groups of 4 (dashes and spaces optional); a passphrase is compared exactly, including case",
                    code: "wrong_passphrase")
            }
        }
        if deviceName == nil {
            throw CLIFailure(
                "this device has no key, so it cannot open \(path)",
                hint:
                    "unlock with --recovery-key-file FILE or --passphrase-file FILE, or enroll this device: 'quire device code' here, then 'quire device add \(path) CODE --name NAME' on an enrolled device",
                code: "no_device_key")
        }
        throw CLIFailure.vault(.keys(.wrongDeviceKey), path: path)
    }

    /// True when `error` means the file is damaged (not a wrong key, not a missing file).
    static func isDamage(_ error: QuireError) -> Bool {
        switch error.detail {
        case .keys(.noKeyring), .keys(.keyringUnauthenticated), .keys(.malformedKeyring): true
        case .format(.headerDamaged), .format(.headerCopiesDiffer), .format(.truncatedHeader), .format(.frameDamaged),
            .format(.malformedFrame),
            .format(.commitMismatch):
            true
        case .keys(.format(let e)): isDamage(.format(e))
        case .damagedHeader: true
        default: false
        }
    }

    /// True when `typed` is 56 ASCII letters and digits, not counting
    /// dashes and spaces. Reads the bytes in place, copying none.
    static func looksLikeRecoveryCode(_ typed: [UInt8]) -> Bool {
        var letters = 0
        for b in typed where b != UInt8(ascii: "-") && b != UInt8(ascii: " ") {
            let alphanumeric =
                (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(b) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(b)
                || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(b)
            guard alphanumeric else { return false }
            letters += 1
        }
        return letters == 56
    }

    /// Opens with a recovery code given as bytes (the caller wipes them).
    static func openWithRecoveryCode(_ code: [UInt8], path: String, writable: Bool, retainsEntryBodies: Bool = true, out: Output)
        throws(CLIFailure) -> OpenedVault
    {
        let key: RecoveryKey
        do { key = try RecoveryKey(codeBytes: code) } catch {
            // The library names the offending character; a secret's characters are never printed.
            throw CLIFailure(
                "the recovery key is not valid: it has a wrong length, a character a recovery key never has, or a checksum that does not match (none of its characters is shown)",
                hint:
                    "a recovery key is 56 letters and digits in groups of 4; dashes and spaces are optional; copy it without other characters (such as a non-breaking space)",
                code: error.code)
        }
        return try openWithRecoveryKey(key, path: path, writable: writable, retainsEntryBodies: retainsEntryBodies, out: out)
    }

    static func openWithRecoveryKey(_ key: RecoveryKey, path: String, writable: Bool, retainsEntryBodies: Bool = true, out: Output)
        throws(CLIFailure) -> OpenedVault
    {
        do {
            let vault = try Vault.open(at: path, credential: .recoveryKey(key), writable: writable, retainsEntryBodies: retainsEntryBodies)
            warn(vault, out: out)
            return OpenedVault(vault: vault, credential: .recoveryKey(key), recoveryKey: key, openedWith: "the recovery key")
        } catch {
            throw .vault(error, path: path)
        }
    }

    static func openWithPassphrase(_ typed: [UInt8], path: String, writable: Bool, retainsEntryBodies: Bool = true, out: Output)
        throws(CLIFailure) -> OpenedVault
    {
        let secret = try Prompt.passphraseBytes(typed)
        do {
            let vault = try Vault.open(
                at: path, credential: .passphrase(secret), writable: writable, retainsEntryBodies: retainsEntryBodies)
            warn(vault, out: out)
            return OpenedVault(vault: vault, credential: .passphrase(secret), recoveryKey: nil, openedWith: "the passphrase")
        } catch {
            throw .vault(error, path: path)
        }
    }

    static func warn(_ vault: Vault, out: Output) {
        warnIfKeyMemoryIsNotLocked(out: out)
        for w in vault.keyWarnings { out.warning(w.description) }
        printedWarnings.withLock { $0.append((vault, Set(vault.keyWarnings.map(\.description)))) }
    }

    /// Says once per command when the system refused to lock the guarded
    /// memory that holds keys (`mlock`, such as with RLIMIT_MEMLOCK at 0).
    /// Warns, before a key change the recovery key signs, of what its
    /// keyring drops of a newer version's protection: the `critical` names,
    /// `required` slot kinds and member key types this version does not
    /// know (Spec/keys.md §6, "Refusals for what a writer does not know";
    /// twelfth review R12-1). Nothing for a device, which refuses instead.
    static func warnIfDroppingProtection(_ opened: OpenedVault, path: String, out: Output) throws(CLIFailure) {
        let dropped: [String]
        do { dropped = try opened.vault.droppedProtections() } catch { throw .vault(error, path: path) }
        guard !dropped.isEmpty else { return }
        out.warning(
            "the vault lists protection of a newer version of Quire that this version does not know: \(dropped.joined(separator: ", ")); "
                + "the recovery key's keyring drops it, so that nothing a stolen device listed can block the change; "
                + "if a newer version of Quire made it, that version can add it again")
    }

    static func warnIfKeyMemoryIsNotLocked(out: Output) {
        guard GuardedMemory.lockWasRefused, !lockRefusalSaid.exchange(true, ordering: .relaxed) else { return }
        out.warning("the system refused to lock key memory (RLIMIT_MEMLOCK); keys may be swapped to disk")
    }

    static let lockRefusalSaid = Atomic<Bool>(false)

    /// The vaults this command opened, with the warnings already printed.
    static let printedWarnings = Mutex<[(Vault, Set<String>)]>([])

    /// Prints the warnings raised after opening (during a write, such as
    /// `device_memory_not_saved` when this device could not remember a key
    /// change): every warning reaches the user. Called when a command ends.
    /// The stores this command's vaults were opened with (one per store
    /// folder): their device memory is written when the command ends.
    static let commandStores = Mutex<[CommandDeviceKeyStore]>([])

    /// The store to open vaults with in this command, over `base`.
    static func commandStore(_ base: FileDeviceKeyStore) -> CommandDeviceKeyStore {
        commandStores.withLock { stores in
            if let held = stores.first(where: { $0.base.directory == base.directory }) { return held }
            let made = CommandDeviceKeyStore(base: base)
            stores.append(made)
            return made
        }
    }

    /// Writes the device memory this command's vaults asked to remember,
    /// once each, after all their commits (``CommandDeviceKeyStore``); a
    /// failure is a warning, as when a vault writes it itself.
    static func saveDeviceMemory(out: Output) {
        for store in commandStores.withLock({ $0 }) {
            for (path, error) in store.flush() {
                out.warning(KeyError.deviceMemoryNotSaved(reason: "\(path): \(error.description)").description)
            }
        }
    }

    static func warnAboutWhatHappenedSinceOpening(out: Output) {
        warnIfKeyMemoryIsNotLocked(out: out)
        let pending = printedWarnings.withLock { list -> [String] in
            var lines: [String] = []
            for i in list.indices {
                for w in list[i].0.keyWarnings where !list[i].1.contains(w.description) {
                    lines.append(w.description)
                    list[i].1.insert(w.description)
                }
            }
            return lines
        }
        for line in pending { out.warning(line) }
    }
}
