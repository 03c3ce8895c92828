import Foundation
import Testing

/// The editor `add` and `edit` open on a terminal: it runs in the
/// terminal's foreground process group, its save names the revision it
/// started from, and no plaintext is left readable when quire is killed.
@Suite struct EditorTests {
    /// Writes an executable Python script `name` into the sandbox.
    func script(_ box: Sandbox, _ name: String, _ body: String) throws -> String {
        try box.write(name, "#!/usr/bin/env python3\nimport os, signal, sys, time\n" + body, mode: 0o700)
        return box.path(name)
    }

    /// Python that finds the `quire` process above the editor (its parent,
    /// or the parent of a shell between them).
    static let findQuire = """
        def quire_pid():
            pid = os.getppid()
            while pid > 1:
                if open("/proc/%d/comm" % pid).read().strip() == "quire":
                    return pid
                pid = int(open("/proc/%d/stat" % pid).read().rsplit(") ", 1)[1].split()[1])
            raise SystemExit("no quire above the editor")

        """

    @Test func theEditorRunsInTheTerminalsForegroundProcessGroup() throws {
        let box = try Sandbox()
        try box.makeVault()
        // An editor that reads the terminal, as vi does; in a background
        // process group that read would stop it (SIGTTIN) forever.
        let editor = try script(box, "tty-editor.py", """
            fd = os.open("/dev/tty", os.O_RDWR)
            foreground = os.tcgetpgrp(fd) == os.getpgrp()
            open("\(box.path("group.txt"))", "w").write("foreground\\n" if foreground else "background\\n")
            if not foreground:
                sys.exit(3)
            os.write(fd, b"Entry: ")
            line = b""
            while not line.endswith(b"\\n"):
                line += os.read(fd, 1)
            open(sys.argv[1], "w").write(line.decode().strip() + "\\n")

            """)
        let r = try box.onTerminal(["add", "Journal.quire", "--date", "2026-03-01"], answers: ["Typed at the terminal"], env: ["EDITOR": editor, "VISUAL": ""])
        #expect(try String(contentsOfFile: box.path("group.txt"), encoding: .utf8) == "foreground\n", "\(r.output)")
        #expect(r.exit == 0, "\(r.output)")
        #expect(try box.quire(["list", "Journal.quire"]).stdout.hasSuffix("  2026-03-01        Typed at the terminal\n"))
    }

    @Test func aSaveFromAStaleEditorBecomesAConflictNotASilentOverwrite() throws {
        let box = try Sandbox()
        try box.makeVault()
        let id = try box.add("First version", ["--date", "2026-03-01"])
        // While the editor is open, another edit lands (another terminal,
        // or a synced copy renamed over the vault).
        let editor = try script(box, "stale-editor.py", """
            import subprocess
            r = subprocess.run(["quire", "edit", "Journal.quire", "\(id)", "Changed meanwhile"], cwd="\(box.dir)")
            if r.returncode != 0:
                sys.exit(4)
            open(sys.argv[1], "w").write("Changed in the editor\\n")

            """)
        let r = try box.onTerminal(["edit", "Journal.quire", id], answers: [], env: ["EDITOR": editor, "VISUAL": ""])
        #expect(r.exit == 0, "\(r.output)")
        let shown = try box.quire(["show", "Journal.quire", id, "--json"]).json()
        #expect(shown["revisions"] as? Int == 3)
        #expect((shown["conflictingRevisions"] as? [String])?.count == 1, "\(shown)")
        // Both versions are kept: the one not shown is a conflicting head.
        let texts = Set([shown["text"] as? String ?? ""])
        #expect(texts.isSubset(of: ["Changed meanwhile", "Changed in the editor"]))
    }

    @Test func closingTheTerminalLeavesNoPlaintextBehind() throws {
        for signal in ["SIGHUP", "SIGTERM"] {
            let box = try Sandbox()
            try box.makeVault()
            let editor = try script(box, "killed-editor.py", Self.findQuire + """
                open(sys.argv[1], "w").write("secret words typed so far\\n")
                open("\(box.path("where.txt"))", "w").write(sys.argv[1])
                os.kill(quire_pid(), signal.\(signal))
                time.sleep(10)

                """)
            let r = try box.onTerminal(["add", "Journal.quire"], answers: [], env: ["EDITOR": editor, "VISUAL": ""])
            let number: Int32 = signal == "SIGHUP" ? 1 : 15
            #expect(r.exit == -number, "\(signal): \(r.output)")
            let temp = try String(contentsOfFile: box.path("where.txt"), encoding: .utf8)
            #expect(!FileManager.default.fileExists(atPath: temp), "\(signal): \(temp) was left")
            #expect(!FileManager.default.fileExists(atPath: (temp as NSString).deletingLastPathComponent), "\(signal)")
            #expect(try box.quire(["list", "Journal.quire"]).stdout == "")
        }
    }

    @Test func aKilledQuireLeavesNothingOthersCanReadAndTheNextRunWipesIt() throws {
        let box = try Sandbox()
        try box.makeVault()
        let editor = try script(box, "kill9-editor.py", Self.findQuire + """
            open(sys.argv[1], "w").write("secret words typed so far\\n")
            open("\(box.path("where.txt"))", "w").write(sys.argv[1])
            folder = os.path.dirname(sys.argv[1])
            modes = [os.stat(folder).st_mode & 0o777, os.stat(sys.argv[1]).st_mode & 0o777]
            open("\(box.path("modes.txt"))", "w").write("%o %o\\n" % tuple(modes))
            os.kill(quire_pid(), signal.SIGKILL)

            """)
        let r = try box.onTerminal(["add", "Journal.quire"], answers: [], env: ["EDITOR": editor, "VISUAL": ""])
        #expect(r.exit == -9, "\(r.output)")
        let temp = try String(contentsOfFile: box.path("where.txt"), encoding: .utf8)
        #expect(try String(contentsOfFile: box.path("modes.txt"), encoding: .utf8) == "700 600\n")
        // Nothing ran after the kill; the folder is this user's alone, in
        // the per-user runtime folder (memory-backed where there is one).
        #expect(temp.hasPrefix(box.path("run") + "/"), "\(temp)")
        // The next run of quire finds the dead session and wipes it.
        #expect(try box.quire(["list", "Journal.quire"]).status == 0)
        #expect(!FileManager.default.fileExists(atPath: temp), "\(temp) was left")
        #expect(!FileManager.default.fileExists(atPath: (temp as NSString).deletingLastPathComponent))
    }

    @Test func anEditorClosedWithoutAChangeWritesNothingAndAnEmptiedOneIsRefused() throws {
        let box = try Sandbox()
        try box.makeVault()
        let id = try box.add("Keep me", ["--date", "2026-03-01"])
        let same = try box.onTerminal(["edit", "Journal.quire", id, "--json"], answers: [], env: ["EDITOR": "true", "VISUAL": ""])
        #expect(same.exit == 0, "\(same.output)")
        #expect(same.output.contains("\"changed\" : false"), "\(same.output)")
        let emptier = try script(box, "emptier.py", "open(sys.argv[1], 'w').write('\\n')\n")
        let emptied = try box.onTerminal(["edit", "Journal.quire", id], answers: [], env: ["EDITOR": emptier, "VISUAL": ""])
        #expect(emptied.exit == 1, "\(emptied.output)")
        #expect(emptied.output.contains("quire: error: the editor left the entry empty; nothing was changed"), "\(emptied.output)")
        let shown = try box.quire(["show", "Journal.quire", id, "--json"]).json()
        #expect(shown["text"] as? String == "Keep me")
        #expect(shown["revisions"] as? Int == 1)
    }
}
