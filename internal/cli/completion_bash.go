package cli

import (
	"io"

	"github.com/spf13/cobra"
)

// bashCompletionShim stands in for the two functions of the bash-completion
// package that cobra's bash script calls, _get_comp_words_by_ref and
// _filedir, on a machine without the package (minimal installs, macOS's
// bash, containers): there the script failed at every TAB with
// "_get_comp_words_by_ref: command not found". Each is defined only when
// missing, so the package's own versions win wherever it is installed.
// The stand-in splits the line at blanks only (never at = or :, as the
// script asks with -n =:), and does not understand quotes.
const bashCompletionShim = `# Without the bash-completion package, minimal versions of the two of its
# functions this script uses (installing it gives the full ones).
if ! declare -F _get_comp_words_by_ref >/dev/null 2>&1; then
_get_comp_words_by_ref()
{
    local __sb_opt __sb_line __sb_var OPTIND=1
    local -a __sb_words
    while getopts "c:i:n:w:" __sb_opt "$@"; do :; done
    shift $((OPTIND - 1))
    __sb_line=${COMP_LINE:0:COMP_POINT}
    read -ra __sb_words <<<"$__sb_line"
    if [[ -z $__sb_line || $__sb_line == *[[:blank:]] ]]; then
        __sb_words+=("")
    fi
    for __sb_var in "$@"; do
        case $__sb_var in
        cur) cur=${__sb_words[${#__sb_words[@]}-1]} ;;
        prev) prev=${__sb_words[${#__sb_words[@]}-2]-} ;;
        words) words=("${__sb_words[@]}") ;;
        cword) cword=$((${#__sb_words[@]} - 1)) ;;
        esac
    done
}
fi
if ! declare -F _filedir >/dev/null 2>&1; then
_filedir()
{
    local IFS=$'\n' __sb_x
    if [[ ${1-} == -d ]]; then
        COMPREPLY=($(compgen -d -- "$cur"))
    elif [[ -n ${1-} ]]; then
        __sb_x=$(shopt -p extglob)
        shopt -s extglob
        COMPREPLY=($(compgen -d -- "$cur") $(compgen -f -X "!*.@(${1%|})" -- "$cur"))
        eval "$__sb_x"
    else
        COMPREPLY=($(compgen -f -- "$cur"))
    fi
}
fi

`

// writeBashCompletion writes the bash completion script of root: cobra's
// (V2, with descriptions) after bashCompletionShim.
func writeBashCompletion(w io.Writer, root *cobra.Command) error {
	if _, err := io.WriteString(w, bashCompletionShim); err != nil {
		return err
	}
	return root.GenBashCompletionV2(w, true)
}
