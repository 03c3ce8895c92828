import Foundation
import Testing

/// The default journal: `$QUIRE_VAULT` and the config file's named
/// journals, so that commands need no path; an explicit path still works.
@Suite struct DefaultJournalTests {
    @Test func quireVaultMakesThePathOptional() throws {
        let box = try Sandbox()
        try box.makeVault()
        let env = ["QUIRE_VAULT": box.path("Journal.quire")]
        let id = try box.quire(["add", "Up betimes.", "--date", "2026-03-01"], env: env)
        #expect(id.status == 0, "\(id)")
        let piped = try box.quire(["add", "-", "--date", "2026-03-02"], stdin: "From standard input.", env: env)
        #expect(piped.status == 0, "\(piped)")
        let list = try box.quire(["list"], env: env)
        #expect(list.stdout.split(separator: "\n").count == 2, "\(list)")
        #expect(list.stdout.contains("Up betimes.") && list.stdout.contains("From standard input."))
        let short = String(id.stdout.prefix(6))
        #expect(try box.quire(["show", short], env: env).stdout.contains("Up betimes."))
        #expect(try box.quire(["edit", short, "Up betimes, and to the office."], env: env).status == 0)
        #expect(try box.quire(["search", "office"], env: env).stdout.contains("Up betimes, and to the office."))
        // A path given still wins over the default.
        try box.makeVault("Other.quire")
        #expect(try box.quire(["add", "Other.quire", "elsewhere"], env: env).status == 0)
        #expect(try box.quire(["list", "Other.quire"], env: env).stdout.contains("elsewhere"))
        #expect(!(try box.quire(["list"], env: env).stdout.contains("elsewhere")))
    }

    @Test func namedJournalsInTheConfigFile() throws {
        let box = try Sandbox()
        try box.makeVault("Diary.quire")
        try box.makeVault("Work.quire")
        let diary = try box.quire(["journals", "add", "diary", "Diary.quire", "--default"])
        #expect(diary.status == 0, "\(diary)")
        #expect(try box.quire(["journals", "add", "work", "Work.quire"]).status == 0)
        let config = try String(contentsOfFile: box.path("config/quire/config.toml"), encoding: .utf8)
        #expect(config == "default = \"diary\"\n[journals]\ndiary = \"~/Diary.quire\"\nwork = \"~/Work.quire\"\n", "\(config)")
        #expect(try box.quire(["add", "In the diary"]).status == 0)
        #expect(try box.quire(["add", "work", "At work"]).status == 0)
        #expect(try box.quire(["list"]).stdout.contains("In the diary"))
        let work = try box.quire(["list", "work"])
        #expect(work.stdout.contains("At work") && !work.stdout.contains("In the diary"), "\(work)")
        let journals = try box.quire(["journals"])
        #expect(journals.stdout == "* diary  \(box.path("Diary.quire"))\n  work  \(box.path("Work.quire"))\n", "\(journals)")
        #expect(try box.quire(["journals", "--names"]).stdout == "diary\nwork\n")
        // QUIRE_VAULT names a journal too, and wins over the config's default.
        #expect(try box.quire(["list"], env: ["QUIRE_VAULT": "work"]).stdout.contains("At work"))
    }

    @Test func withoutADefaultTheErrorSaysHowToSetOne() throws {
        let box = try Sandbox()
        let r = try box.quire(["list"])
        #expect(r.status == 64)
        #expect(r.stderr.hasPrefix("quire: error: 'quire list' needs VAULT; got none (no default journal is set)\nquire: hint: give the vault's path, set QUIRE_VAULT to it, or name a default journal in \(box.path("config/quire/config.toml")) (see 'quire help journals')\n"), "\(r)")
    }

    @Test func aBrokenConfigFileIsNamedWithItsLine() throws {
        let box = try Sandbox()
        try FileManager.default.createDirectory(atPath: box.path("config/quire"), withIntermediateDirectories: true)
        try box.write("config/quire/config.toml", "[journals]\ndiary = ~/Diary.quire\n")
        let r = try box.quire(["list"])
        #expect(r.status == 1)
        #expect(r.stderr.hasPrefix("quire: error: the configuration file \(box.path("config/quire/config.toml")) line 2 gives diary a value that is not a double-quoted string\n"), "\(r)")
        let json = try box.quire(["list", "--json"])
        #expect((try json.json()["error"] as? [String: Any])?["code"] as? String == "config_invalid")
    }
}
