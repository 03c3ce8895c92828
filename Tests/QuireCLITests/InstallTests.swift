import Foundation
import Testing

/// Installing like a real tool: the man page renders, the completions
/// load in bash (and zsh and fish when installed), and `make install`'s
/// files land under PREFIX — all written from the command declarations.
@Suite struct InstallTests {
    @Test func theManPageRendersWithoutAWarning() throws {
        let box = try Sandbox()
        let page = try box.quire(["generate-manual"])
        #expect(page.status == 0)
        try box.write("quire.1", page.stdout)
        for locale in ["C.UTF-8", "C"] {
            let man = try box.shell("man ./quire.1", env: ["LC_ALL": locale, "MANWIDTH": "80", "MANPAGER": "cat", "PAGER": "cat"])
            #expect(man.status == 0, "\(locale): \(man)")
            #expect(man.stderr == "", "\(locale): \(man.stderr)")
            #expect(man.stdout.contains("quire add [VAULT] [TEXT | -]"), "\(locale)")
            #expect(man.stdout.contains("EXIT STATUS"))
        }
        // Every command in 'quire help' has its section.
        for name in ["init", "add", "search", "on-this-day", "stats", "versions", "restore", "keys status", "device add", "journals add", "completion"] {
            #expect(page.stdout.contains(".SS \"quire \(name.replacingOccurrences(of: "-", with: "\\-"))"), "\(name)")
        }
    }

    @Test func completionsLoadInTheShells() throws {
        let box = try Sandbox()
        let r = try box.run("/bin/bash", [repositoryRoot + "/Scripts/check-completions.sh", box.binary], stdin: nil, env: [:])
        #expect(r.status == 0, "\(r)")
        #expect(r.stdout.contains("bash: completion loads and offers commands, subcommands, options and values"), "\(r)")
    }

    @Test func makeInstallPutsEverythingUnderThePrefix() throws {
        let box = try Sandbox()
        let prefix = box.path("prefix")
        let r = try box.run("/usr/bin/make", ["-s", "-C", repositoryRoot, "install-files", "PREFIX=\(prefix)", "QUIRE_BIN=\(box.binary)"], stdin: nil, env: [:])
        #expect(r.status == 0, "\(r)")
        for file in ["bin/quire", "libexec/quire/quire-book", "share/man/man1/quire.1", "share/bash-completion/completions/quire", "share/zsh/site-functions/_quire",
                     "share/fish/vendor_completions.d/quire.fish"] {
            #expect(FileManager.default.fileExists(atPath: prefix + "/" + file), "\(file)")
        }
        let version = try box.run(prefix + "/bin/quire", ["--version"], stdin: nil, env: [:])
        #expect(version.stdout == "quire 0.1 (format version 2)\n")
        // The installed quire finds its PDF helper in ../libexec/quire.
        try box.makeVault()
        _ = try box.add("An entry for the book")
        let book = try box.run(prefix + "/bin/quire", ["export", "Journal.quire", "-o", "book.pdf", "--json"], stdin: nil, env: [:])
        #expect(book.status == 0, "\(book)")
        #expect(try book.json()["entries"] as? Int == 1, "\(book)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: box.path("book.pdf"))).prefix(5) == Data("%PDF-".utf8))
    }
}
