// quire-bench: measures Quire against the raw primitives it is built on and
// reports (never asserts) the figures. See BENCHMARKS.md.
//
//   quire-bench [--quick] [--only NAME[,NAME…]] [--write PATH]
//
// NAME is one of: overhead, attachment, append, read, keys, sync, flood, commits, import, export, pdf, query, refresh, cache.

import CSodium
import QuireSystem

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Command-line options.
struct Options {
    var quick = false
    var writePath: String?
    var only: Set<String>?

    static let benchmarks = [
        "overhead", "attachment", "append", "read", "keys", "sync", "flood", "commits", "import", "export", "pdf", "query", "refresh",
        "cache", "open",
    ]

    static func parse(_ args: [String]) throws -> Options {
        var o = Options()
        var i = 0
        while i < args.count {
            switch args[i] {
            case "--quick":
                o.quick = true
            case "--write":
                i += 1
                guard i < args.count else { throw BenchError("--write needs a path") }
                o.writePath = args[i]
            case "--only":
                i += 1
                guard i < args.count else { throw BenchError("--only needs a name: \(benchmarks.joined(separator: ", "))") }
                let names = args[i].split(separator: ",").map(String.init)
                for n in names where !benchmarks.contains(n) {
                    throw BenchError("unknown benchmark \(n); choose from \(benchmarks.joined(separator: ", "))")
                }
                o.only = (o.only ?? []).union(names)
            case "--help", "-h":
                print(
                    """
                    usage: quire-bench [--quick] [--only NAME[,NAME…]] [--write PATH]
                      --quick       smaller sizes (a smoke run); every benchmark still runs
                      --only NAME   run only these: \(benchmarks.joined(separator: ", "))
                      --write PATH  also write the report as Markdown to PATH (BENCHMARKS.md)
                    """)
                exit(0)
            default:
                throw BenchError("unknown argument \(args[i]) (try --help)")
            }
            i += 1
        }
        return o
    }

    func runs(_ name: String) -> Bool { only?.contains(name) ?? true }
}

func mainEntry() -> Int32 {
    let args = Array(CommandLine.arguments.dropFirst())
    if args.first == "--import-child" {
        do {
            try ImportBenchmark.childMain(Array(args.dropFirst()))
            return 0
        } catch {
            FileHandleStderr.write("quire-bench import child: \(error)\n")
            return 1
        }
    }
    if args.first == "--pdf-child" { return PDFBenchmark.runChild(Array(args.dropFirst())) }
    if args.first == "--compare-child" { return CompareChild.main(Array(args.dropFirst())) }
    if args.first == "--child" {
        do {
            if try ExportBenchmark.child(Array(args.dropFirst())) { return 0 }
            if try OpenBenchmark.child(Array(args.dropFirst())) { return 0 }
            if try OpenBenchmark.makeSingle(Array(args.dropFirst())) { return 0 }
            try Child.run(Array(args.dropFirst()))
            return 0
        } catch {
            FileHandleStderr.write("quire-bench child: \(error)\n")
            return 1
        }
    }
    let options: Options
    do { options = try Options.parse(args) } catch {
        FileHandleStderr.write("quire-bench: \(error)\n")
        return 2
    }
    guard sodium_init() >= 0 else {
        FileHandleStderr.write("quire-bench: libsodium failed to initialise\n")
        return 1
    }
    let started = now()
    var command = "quire-bench"
    if !args.isEmpty { command += " " + args.joined(separator: " ") }
    var report = Report(machine: MachineInfo.collect(), quick: options.quick, command: command)
    print(
        "quire-bench\(options.quick ? " (quick)" : ""): \(report.machine.cpuModel), nproc \(report.machine.processors), \(report.machine.swiftVersion)"
    )

    let workspace: TempDirectory
    do { workspace = try TempDirectory(prefix: "quire-bench") } catch {
        FileHandleStderr.write("quire-bench: \(error)\n")
        return 1
    }
    defer { workspace.remove() }
    let shared = SharedFixtures(workspace: workspace, quick: options.quick)

    // The attachment benchmark spawns its child processes before the parent
    // grows (a child's getrusage peak includes the parent's peak at spawn
    // time on Linux, see Attachment.swift), so it runs first.
    for name in Options.benchmarks where options.runs(name) {
        print("\nrunning \(name)…")
        do {
            let section: Section
            switch name {
            case "overhead": section = try OverheadBenchmark.run(shared)
            case "attachment": section = try AttachmentBenchmark.run(shared)
            case "append": section = try AppendBenchmark.run(shared)
            case "read": section = try ReadBenchmark.run(shared)
            case "keys": section = try KeyBenchmark.run(shared)
            case "sync": section = try SyncBenchmark.run(shared)
            case "flood": section = try FloodBenchmark.run(shared)
            case "commits": section = try CommitsBenchmark.run(shared)
            case "import": section = try ImportBenchmark.run(shared)
            case "export": section = try ExportBenchmark.run(shared)
            case "pdf": section = try PDFBenchmark.run(shared)
            case "query": section = try QueryBenchmark.run(shared)
            case "refresh": section = try RefreshBenchmark.run(shared)
            case "cache": section = try IndexCacheBenchmark.run(shared)
            case "open": section = try OpenBenchmark.run(shared)
            default: continue
            }
            print(section.text())
            report.sections.append(section)
        } catch {
            FileHandleStderr.write("quire-bench: \(name) failed: \(error)\n")
            return 1
        }
    }
    report.totalSeconds = Double(now() - started) / 1e9
    report.loadAtEnd = loadAverage()
    print("\ntotal \(fmt(report.totalSeconds, 1)) s")
    if let path = options.writePath {
        do {
            if let existing = readTextFile(path, limit: 4 << 20) { report.carried = Report.carriedSections(of: existing) }
            let text = report.markdown() + "\n"
            let temporary = path + ".tmp"
            try? FileSystem.remove(temporary)
            let file = try SystemFile(path: temporary, mode: .createExclusive(permissions: 0o644))
            try file.write(Array(text.utf8), at: 0)
            try FileSystem.rename(temporary, to: path)
            print("wrote \(path)")
        } catch {
            FileHandleStderr.write("quire-bench: writing \(path) failed: \(error)\n")
            return 1
        }
    }
    return 0
}

/// Writes to standard error.
enum FileHandleStderr {
    static func write(_ text: String) {
        var bytes = Array(text.utf8)
        _ = bytes.withUnsafeMutableBytes { Glibc.write(2, $0.baseAddress, $0.count) }
    }
}

exit(mainEntry())
