import Foundation

/// `quire completion SHELL`: a completion script.
struct CompletionCommand: QuireCommand {
    static let configuration = CommandConfiguration(
        name: "completion", abstract: "print shell completions (bash, zsh or fish)",
        discussion: """
            bash: source <(quire completion bash), or put the output in
            ~/.local/share/bash-completion/completions/quire.
            zsh: put the output in a folder on $fpath as _quire.
            fish: quire completion fish > ~/.config/fish/completions/quire.fish.
            'make install' puts all three in place.
            """,
        section: .setup)

    @Argument(help: "bash, zsh or fish") var shell: Shell

    func run(_ c: CommandContext) throws(CLIFailure) -> ExitCode {
        c.out.line("\(multiline: String(CompletionScript.script(for: shell).dropLast()))")
        return .success
    }
}

/// `quire generate-manual`: the man page, `quire.1` (hidden; `make man`).
struct ManualCommand: QuireCommand {
    static let configuration = CommandConfiguration(name: "generate-manual", abstract: "print the man page (roff)", isHidden: true)

    func run(_ c: CommandContext) throws(CLIFailure) -> ExitCode {
        c.out.line("\(multiline: String(ManualPage.render().dropLast()))")
        return .success
    }
}
