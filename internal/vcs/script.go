package vcs

// The hook scripts are POSIX sh. Each is the marker line, prelude, three
// variables (hook, event, sb) and the hook's body. They use only git, sed,
// dirname and shell builtins. Backticks cannot appear in the raw strings
// below, so the messages quote commands with single quotes.

// prelude follows the marker line of every script.
const prelude = `# Installed by 'switchboard hooks install-git'; running it again rewrites this
# file, so do not edit it. It runs the hook it replaced, if any
# (<hook>.switchboard-chained, same arguments and input, its exit status
# kept), then fires the Switchboard event git.<hook>. SWITCHBOARD_GIT_HOOKS=0
# turns the event off; a chained hook still runs. See docs/git-hooks.md.
`

// common follows the variables in every script.
const common = `chained="$(dirname -- "$0")/$hook.switchboard-chained"

warn() {
	printf 'switchboard: git %s hook: %s\n' "$hook" "$1" >&2
}

# ready succeeds when the event is to be fired.
ready() {
	if [ "${SWITCHBOARD_GIT_HOOKS-}" = 0 ]; then
		return 1
	fi
	if ! command -v "$sb" >/dev/null 2>&1; then
		warn "$sb not found on PATH, so $event was not fired (install switchboard, or set SWITCHBOARD_GIT_HOOKS=0 to turn these hooks off)"
		return 1
	fi
	return 0
}

# fire_post fires the event of a post-* hook; a failure is reported, never
# passed on to git. --quiet prints nothing when all went well, and a line
# per action that did not (exit 1), so only other failures need a word.
fire_post() {
	"$sb" hooks fire --quiet "$event" "$@" </dev/null
	rc=$?
	if [ "$rc" -ne 0 ] && [ "$rc" -ne 1 ]; then
		warn "'$sb hooks fire $event' failed with exit status $rc; git is not affected"
	fi
}

branch=$(git symbolic-ref --quiet --short HEAD 2>/dev/null)
`

// postChained runs the chained hook of a post-* hook.
const postChained = `
status=0
if [ -x "$chained" ]; then
	"$chained" "$@"
	status=$?
fi
ready || exit "$status"
`

// bodies holds each hook's body, after common.
var bodies = map[string]string{
	"post-commit": common + postChained + `
sha=$(git rev-parse --verify --quiet HEAD)
author=$(git log -1 --format='%an <%ae>' 2>/dev/null)
subject=$(git log -1 --format=%s 2>/dev/null)
fire_post "sha=$sha" "subject=$subject" "author=$author" "branch=$branch"
exit "$status"
`,
	"post-checkout": common + postChained + `
case "$3" in
1) branch_checkout=true ;;
*) branch_checkout=false ;;
esac
fire_post "previous=$1" "new=$2" "branch_checkout=$branch_checkout" "branch=$branch"
exit "$status"
`,
	"post-merge": common + postChained + `
case "$1" in
1) squash=true ;;
*) squash=false ;;
esac
sha=$(git rev-parse --verify --quiet HEAD)
fire_post "squash=$squash" "sha=$sha" "branch=$branch"
exit "$status"
`,
	"pre-push": common + `
# git writes one line per ref to push; both hooks need it.
input=$(cat)
if [ -x "$chained" ]; then
	if [ -n "$input" ]; then printf '%s\n' "$input"; fi | "$chained" "$@"
	status=$?
	if [ "$status" -ne 0 ]; then
		exit "$status"
	fi
fi
ready || exit 0

# strip removes credentials from an http(s) URL.
strip() {
	printf '%s' "$1" | sed -E 's#^([Hh][Tt][Tt][Pp][Ss]?://)[^/@]*@#\1#'
}

# esc escapes a string for a JSON string literal (ref names have no
# control characters).
esc() {
	printf '%s' "$1" | sed 's/\\/\\\\/g; s/"/\\"/g'
}

refs=
remote_refs=
while read -r local_ref local_sha remote_ref remote_sha; do
	if [ -z "$local_ref" ]; then
		continue
	fi
	refs="${refs:+$refs,}{\"local_ref\":\"$(esc "$local_ref")\",\"local_sha\":\"$local_sha\",\"remote_ref\":\"$(esc "$remote_ref")\",\"remote_sha\":\"$remote_sha\"}"
	remote_refs="${remote_refs:+$remote_refs }$remote_ref"
done <<EOF
$input
EOF

"$sb" hooks fire --quiet "$event" "remote=$(strip "$1")" "url=$(strip "$2")" "refs=[$refs]" "remote_refs=$remote_refs" "branch=$branch" </dev/null
rc=$?
case $rc in
0 | 1)
	# 1: hooks fire said which actions failed; they do not stop a push.
	exit 0
	;;
3)
	warn "push refused by a Switchboard $event hook"
	exit 1
	;;
*)
	warn "'$sb hooks fire $event' failed with exit status $rc; the push goes ahead"
	exit 0
	;;
esac
`,
}
