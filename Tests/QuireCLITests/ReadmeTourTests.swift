import Foundation
import Testing

/// The README's CLI tour, run as a new user would: every command line of
/// every `sh` block under "## A tour of the CLI", in order, in one shell
/// (`/bin/sh`: a variable set by one line is there for the next), with the
/// built `quire` first on the PATH, `QUIRE_HOME` and the config in a
/// temporary folder and `photo.jpg` a photo. Each must succeed.
@Suite struct ReadmeTourTests {
    static func tourCommands() throws -> [String] {
        let readme = try String(contentsOfFile: repositoryRoot + "/README.md", encoding: .utf8)
        guard let start = readme.range(of: "\n## A tour of the CLI\n") else { return [] }
        let rest = readme[start.upperBound...]
        let section = rest.range(of: "\n## ").map { rest[..<$0.lowerBound] } ?? rest
        var commands: [String] = []
        var inBlock = false
        for line in section.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("```") {
                inBlock = !inBlock && line == "```sh"
                continue
            }
            let text = line.trimmingCharacters(in: .whitespaces)
            if inBlock && !text.isEmpty && !text.hasPrefix("#") { commands.append(text) }
        }
        return commands
    }

    @Test func theTourHasTheCommandsItPromises() throws {
        let commands = try Self.tourCommands()
        #expect(commands.count >= 20)
        #expect(commands.first?.hasPrefix("quire init ") == true)
        for word in ["init", "journals add", "add", "list", "search", "on-this-day", "stats", "show", "extract", "verify", "info", "device add",
                     "edit", "resolve", "versions", "keys status", "rm", "restore", "export", "completion"] {
            #expect(commands.contains { $0.contains("quire \(word) ") || $0.hasSuffix("quire \(word)") }, "the tour lost 'quire \(word)'")
        }
        // Journal text goes through standard input, not the process list.
        #expect(!commands.contains { $0.hasPrefix("quire add ") && !$0.contains(" - ") })
    }

    /// Runs every command in one shell, each one's output in its own files.
    func runTour(_ box: Sandbox) throws -> [(command: String, result: RunResult)] {
        let commands = try Self.tourCommands()
        try FileManager.default.createDirectory(atPath: box.path(".tour"), withIntermediateDirectories: true)
        var script = "cd \(box.dir)\n"
        for (i, command) in commands.enumerated() {
            script += "{ \(command)\n} >.tour/\(i).out 2>.tour/\(i).err </dev/null; echo $? >.tour/\(i).status\n"
        }
        try box.write("tour.sh", script)
        let run = try box.run("/bin/sh", [box.path("tour.sh")], stdin: nil, env: [:])
        #expect(run.status == 0, "\(run)")
        func read(_ name: String) throws -> String { try String(contentsOfFile: box.path(".tour/" + name), encoding: .utf8) }
        return try commands.enumerated().map { i, command in
            (command, RunResult(status: Int32(try read("\(i).status").trimmingCharacters(in: .newlines)) ?? -1, stdout: try read("\(i).out"), stderr: try read("\(i).err")))
        }
    }

    @Test func followTheReadmeTourFromTopToBottom() throws {
        let box = try Sandbox()
        try FileManager.default.copyItem(atPath: repositoryRoot + "/Tests/Fixtures/photo.jpg", toPath: box.path("photo.jpg"))
        let steps = try runTour(box)
        for (command, r) in steps { #expect(r.status == 0, "\(command)\n\(r)") }
        func output(_ prefix: String) -> RunResult? { steps.first { $0.command.hasPrefix(prefix) }?.result }
        // What a reader of the tour is told they will see.
        let list = try #require(output("quire list"))
        #expect(list.stdout.contains("Up betimes, and to the office.  #work\n"), "\(list)")
        #expect(list.stdout.contains(" 21:00  A walk by the river; the swans were out.  #walk  (mood 4)\n"), "\(list)")
        #expect(list.stdout.contains("        Coffee at the Café de Flore.  (starred)\n"), "\(list)")
        #expect(list.stdout.contains("2026-03-01 08:30  The swans again, and a heron.  #river  (1 photo)\n"), "\(list)")
        #expect(try #require(output("quire list -n 2")).stdout.split(separator: "\n").count == 2)
        let swans = try #require(output("quire search SWANS river")).stdout
        #expect(swans.split(separator: "\n").count == 2 && swans.contains("the swans were out") && swans.contains("and a heron"), "\(swans)")
        #expect(try #require(output("quire search cafe")).stdout.contains("Café de Flore"))
        #expect(try #require(output("quire search '#walk'")).stdout.contains("A walk by the river"))
        #expect(try #require(output("quire list --starred")).stdout.contains("Café de Flore"))
        let today = DateFormatter()
        today.dateFormat = "MM-dd"
        if today.string(from: Date()) != "02-29" {
            #expect(try #require(output("quire on-this-day")).stdout.contains("A year ago today: the first page."))
        }
        #expect(try #require(output("quire stats")).stdout.contains("entries:  5, "))
        #expect(try #require(output("quire show")).stdout.contains("attached: "))
        #expect(try #require(output("quire extract")).stdout.hasPrefix("wrote photo-2.jpg ("))
        #expect(try Data(contentsOf: URL(fileURLWithPath: box.path("photo-2.jpg"))) == Data(contentsOf: URL(fileURLWithPath: box.path("photo.jpg"))))
        #expect(try #require(output("quire verify")).stdout.contains(": intact. "))
        #expect(try #require(output("quire device add")).stdout.contains("enrolled \"Phone\""))
        let waiting = try #require(output("quire list --since"))
        #expect(waiting.stderr.contains("quire: warning: 1 conflicted copy of "), "\(waiting)")
        #expect(try #require(output("quire resolve")).stdout.contains("(syncthing): "))
        let versions = try #require(output("quire versions")).stdout
        #expect(versions.contains("by the device \"Phone\"") && versions.contains("and a rainbow."), "\(versions)")
        #expect(steps.last { $0.command == "quire verify" }?.result.stdout.contains(": intact, 1 entry with conflicting versions. ") == true)
        #expect(try #require(output("quire keys status")).stdout.contains("  - the device \"Phone\""))
        #expect(try #require(output("quire restore")).stdout.hasPrefix("restored "))
        #expect(FileManager.default.fileExists(atPath: box.path("Journal.epub")))
        #expect(FileManager.default.fileExists(atPath: box.path("recovery.txt")))
        let final = try box.quire(["list", "Journal.quire"])
        #expect(final.stdout.split(separator: "\n").count == 6, "\(final)")
        #expect(final.stdout.contains("A line written by mistake."))
    }
}
