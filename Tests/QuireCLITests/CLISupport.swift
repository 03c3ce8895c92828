import Foundation
import Testing

/// What one run of the `quire` binary did.
struct RunResult: CustomStringConvertible {
    let status: Int32
    let stdout: String
    let stderr: String

    var description: String { "exit \(status)\n--- stdout\n\(stdout)--- stderr\n\(stderr)" }

    /// stdout parsed as a JSON object.
    func json() throws -> [String: Any] {
        let object = try JSONSerialization.jsonObject(with: Data(stdout.utf8))
        guard let dict = object as? [String: Any] else { throw CLITestError.notAnObject(stdout) }
        return dict
    }
}

enum CLITestError: Error {
    case notAnObject(String)
    case noBinary
}

/// The repository root (from this file's path).
let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path

/// The built `quire` binary: `$QUIRE_TEST_BINARY` when set (to run the
/// tests against another build, such as the one before a fix), else beside
/// the test bundle, else in `.build/debug`.
func quireBinary() throws -> String {
    var candidates: [String] = []
    if let chosen = ProcessInfo.processInfo.environment["QUIRE_TEST_BINARY"], !chosen.isEmpty { candidates.append(chosen) }
    if let exe = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
        var dir = (exe as NSString).deletingLastPathComponent
        // Inside an .xctest bundle on Apple platforms: climb out of it.
        while dir.contains(".xctest") { dir = (dir as NSString).deletingLastPathComponent }
        candidates.append(dir + "/quire")
    }
    candidates.append((CommandLine.arguments[0] as NSString).deletingLastPathComponent + "/quire")
    for bundle in Bundle.allBundles where bundle.bundlePath.hasSuffix(".xctest") {
        candidates.append((bundle.bundlePath as NSString).deletingLastPathComponent + "/quire")
    }
    candidates.append(repositoryRoot + "/.build/debug/quire")
    for c in candidates where FileManager.default.isExecutableFile(atPath: c) { return c }
    throw CLITestError.noBinary
}

/// A temporary folder with its own device key store (`QUIRE_HOME`), removed at the end.
final class Sandbox {
    let dir: String
    let binary: String
    /// The environment every run gets: no colour, UTC, a key store inside the sandbox.
    var environment: [String: String]

    init() throws {
        binary = try quireBinary()
        dir = NSTemporaryDirectory() + "quire-cli-test-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: dir + "/run", withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        environment = [
            "PATH": (binary as NSString).deletingLastPathComponent + ":/usr/bin:/bin",
            "HOME": dir, "QUIRE_HOME": dir + "/home", "TZ": "UTC", "NO_COLOR": "1", "LANG": "C.UTF-8",
            "XDG_RUNTIME_DIR": dir + "/run", "XDG_CONFIG_HOME": dir + "/config",
        ]
    }

    deinit { try? FileManager.default.removeItem(atPath: dir) }

    func path(_ name: String) -> String { dir + "/" + name }

    /// Runs `quire args…` in the sandbox, with `stdin` as standard input (empty when nil).
    @discardableResult
    func quire(_ args: [String], stdin: String? = nil, env extra: [String: String] = [:]) throws -> RunResult {
        try run(binary, args, stdin: stdin, env: extra)
    }

    /// Runs `/bin/sh -c line` in the sandbox (the README's commands).
    func shell(_ line: String, env extra: [String: String] = [:]) throws -> RunResult {
        try run("/bin/sh", ["-c", line], stdin: nil, env: extra)
    }

    func run(_ executable: String, _ args: [String], stdin: String?, env extra: [String: String]) throws -> RunResult {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: executable)
        p.arguments = args
        p.currentDirectoryURL = URL(fileURLWithPath: dir)
        p.environment = environment.merging(extra) { $1 }
        let input = Pipe(), out = Pipe(), err = Pipe()
        p.standardInput = input
        p.standardOutput = out
        p.standardError = err
        try p.run()
        if let stdin { input.fileHandleForWriting.write(Data(stdin.utf8)) }
        try input.fileHandleForWriting.close()
        // Read both pipes concurrently so neither fills up.
        nonisolated(unsafe) var errData = Data()
        let group = DispatchGroup()
        group.enter()
        DispatchQueue.global().async {
            errData = err.fileHandleForReading.readDataToEndOfFile()
            group.leave()
        }
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        group.wait()
        p.waitUntilExit()
        return RunResult(status: p.terminationStatus, stdout: String(decoding: outData, as: UTF8.self), stderr: String(decoding: errData, as: UTF8.self))
    }

    /// Makes `Journal.quire` (or `name`) with its recovery key in
    /// `recovery.txt` (or `NAME.recovery.txt`); returns its path.
    @discardableResult
    func makeVault(_ name: String = "Journal.quire") throws -> String {
        let recovery = name == "Journal.quire" ? "recovery.txt" : name + ".recovery.txt"
        let r = try quire(["init", name, "--name", "Test journal", "--device-name", "Laptop", "--recovery-key-file", recovery])
        #expect(r.status == 0, "\(r)")
        return path(name)
    }

    /// Enrolls "Phone" (its own QUIRE_HOME, `phone`) in `Journal.quire`
    /// and returns its environment.
    func enrollPhone() throws -> [String: String] {
        let phone = ["QUIRE_HOME": path("phone")]
        let code = try quire(["device", "code", "--device-name", "Phone"], env: phone)
        #expect(code.status == 0, "\(code)")
        let add = try quire(["device", "add", "Journal.quire", code.stdout.trimmingCharacters(in: .newlines), "--name", "Phone"])
        #expect(add.status == 0, "\(add)")
        return phone
    }

    /// Adds an entry and returns its id.
    func add(_ text: String, _ extra: [String] = [], vault: String = "Journal.quire") throws -> String {
        let r = try quire(["add", vault, text] + extra)
        #expect(r.status == 0, "\(r)")
        return r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    func write(_ name: String, _ text: String, mode: Int = 0o600) throws {
        try Data(text.utf8).write(to: URL(fileURLWithPath: path(name)))
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: path(name))
    }
}

/// Runs `script` (Python 3) with `args`; returns its stdout and exit status.
/// Used to drive `quire` through a pseudo-terminal (`pty.fork`).
func python(_ script: String, _ args: [String], env: [String: String]) throws -> (Int32, String) {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    p.arguments = ["python3", "-c", script] + args
    p.environment = env
    let out = Pipe()
    p.standardOutput = out
    p.standardError = out
    p.standardInput = FileHandle.nullDevice
    try p.run()
    let data = out.fileHandleForReading.readDataToEndOfFile()
    p.waitUntilExit()
    return (p.terminationStatus, String(decoding: data, as: UTF8.self))
}
