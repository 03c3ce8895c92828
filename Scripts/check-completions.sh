#!/usr/bin/env bash
# Loads quire's completion scripts into the shells and checks what they
# offer: bash completes commands, subcommands, options and option values;
# zsh and fish (when installed) must at least load them without an error.
#
#   Scripts/check-completions.sh path/to/quire
set -euo pipefail
quire=${1:?usage: Scripts/check-completions.sh path/to/quire}
quire=$(cd "$(dirname "$quire")" && pwd)/$(basename "$quire")
export PATH="$(dirname "$quire"):$PATH"
work=$(mktemp -d "${TMPDIR:-/tmp}/quire-completions.XXXXXX")
trap 'rm -rf "$work"' EXIT

"$quire" completion bash > "$work/quire.bash"
bash -n "$work/quire.bash"
# check WANT WORD… : the completions offered for the command line WORD… (the
# last word being completed) include WANT.
bash_check=$(cat <<'SCRIPT'
source "$1"
complete -p quire | grep -q -- '-F _quire' || { echo "bash: 'complete -p quire' shows no _quire"; exit 1; }
check() {
    local want=$1
    shift
    COMP_WORDS=("$@")
    COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
    COMPREPLY=()
    _quire
    if ! printf '%s\n' "${COMPREPLY[@]}" | grep -qxF -- "$want"; then
        echo "bash: '${COMP_WORDS[*]}' offers '${COMPREPLY[*]}', not '$want'"
        exit 1
    fi
}
check add quire ad
check on-this-day quire on
check status quire keys st
check remove quire device rem
check --date quire add --da
check --limit quire list --li
check -n quire list -
check --all-versions quire show --all
check epub quire export --format ep
check dayone quire import da
check bash quire completion ba
check journals quire help jo
echo "bash: completion loads and offers commands, subcommands, options and values"
SCRIPT
)
bash -c "$bash_check" check "$work/quire.bash"

if command -v zsh >/dev/null; then
    "$quire" completion zsh > "$work/_quire"
    zsh -n "$work/_quire"
    zsh -fc "autoload -U compinit; compinit -u -d $work/zcompdump; source $work/_quire; [[ \${_comps[quire]} == _quire ]]"
    echo "zsh: completion loads"
else
    echo "zsh: not installed, skipped"
fi
if command -v fish >/dev/null; then
    "$quire" completion fish > "$work/quire.fish"
    fish --no-execute "$work/quire.fish"
    HOME=$work fish -c "source $work/quire.fish; complete -C 'quire ad' | string match -q -r '^add\t'"
    echo "fish: completion loads and offers commands"
else
    echo "fish: not installed, skipped"
fi
