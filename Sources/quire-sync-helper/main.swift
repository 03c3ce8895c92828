// quire-sync-helper: the vault operations `make test-sync` drives between
// two Syncthing instances (Tests/sync/run_syncthing.py). Not the `quire`
// tool: a minimal, scriptable stand-in until that lands. The device key
// store is the one `QUIRE_HOME` names (the test gives each side its own).
//
//   quire-sync-helper code NAME            this device's code (its key is made if needed)
//   quire-sync-helper create VAULT NAME    a new vault with this device and a recovery key
//   quire-sync-helper enroll VAULT CODE NAME
//   quire-sync-helper add VAULT TEXT
//   quire-sync-helper compact VAULT        compact with a rekey (a new epoch; old revisions dropped)
//   quire-sync-helper fold VAULT           fold every conflict copy in; prints what happened
//   quire-sync-helper list VAULT           the entries' texts, sorted, one per line

import Foundation
@_spi(Format) @_spi(Crypto) import Quire
import QuireSystem

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("quire-sync-helper: error: \(message)\n".utf8))
    exit(1)
}

let args = Array(CommandLine.arguments.dropFirst())
guard let command = args.first else { fail("usage: code|create|enroll|add|compact|fold|list …") }
do {
    let store = try FileDeviceKeyStore.standard()
    let now = ProcessStats.wallClockMilliseconds()
    switch (command, args.count) {
    case ("code", 2):
        let (device, _) = try store.loadOrCreate(name: args[1])
        print(device.code)
    case ("create", 3):
        let (device, _) = try store.loadOrCreate(name: args[2])
        _ = try Vault.create(
            at: args[1], setup: VaultSetup(name: "Synced journal", recoveryKey: try RecoveryKey(), device: device))
        print("created \(args[1])")
    case ("enroll", 4):
        try Vault.open(at: args[1], store: store).enrollDevice(code: args[2], name: args[3])
        print("enrolled \(args[3])")
    case ("add", 3):
        let revision = try Vault.open(at: args[1], store: store).add(EntryBody(created: now, text: args[2]))
        print("added \(revision.entryID)")
    case ("compact", 2):
        let report = try Vault.open(at: args[1], store: store).compact(CompactionOptions(rekey: true))
        print("compacted \(args[1]): \(report.bytesBefore) → \(report.bytesAfter) bytes")
    case ("fold", 2):
        let report = try Vault.open(at: args[1], store: store).foldConflictCopies()
        for c in report.copies {
            let name = c.copy.path.split(separator: "/").last.map(String.init) ?? c.copy.path
            if let e = c.error {
                print("\(name): failed: \(e)")
            } else {
                print(
                    "\(name): \(c.copy.tool?.rawValue ?? "unknown tool"), \(c.merge?.framesAdded ?? 0) frames added, \(c.deleted ? "deleted" : "kept")"
                )
            }
        }
        if report.copies.isEmpty { print("no conflict copies") }
    case ("list", 2):
        for e in try Vault.open(at: args[1], store: store, writable: false).entries().map(\.body.text).sorted() { print(e) }
    default:
        fail("usage: code NAME | create VAULT NAME | enroll VAULT CODE NAME | add VAULT TEXT | compact VAULT | fold VAULT | list VAULT")
    }
} catch {
    fail("\(error)")
}
