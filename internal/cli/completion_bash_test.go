package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestBashCompletionWithoutBashCompletionPackage sources the script of
// switchboard completion bash in a bash that has no bash-completion
// package loaded (--norc: none of its functions are defined) and
// completes a command, a flag's file value filtered by extension, and a
// --flag=value: before the script carried its stand-ins, every TAB said
// "_get_comp_words_by_ref: command not found".
func TestBashCompletionWithoutBashCompletionPackage(t *testing.T) {
	t.Parallel()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatalf("no bash on PATH (%v): install it (apt-get install bash) to run this test", err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	r := runCLI(t, "completion", "bash")
	wantCode(t, r, ExitOK)
	script := filepath.Join(dir, "switchboard.bash")
	// The script runs ${words[0]} __complete …: a switchboard on PATH
	// that is this test binary running Main.
	bin := filepath.Join(dir, "bin")
	files := map[string]string{
		script:                               r.stdout,
		filepath.Join(bin, "switchboard"):    "#!/bin/sh\n" + envRunMain + "=1 exec " + shellQuote(exe) + ` "$@"` + "\n",
		filepath.Join(dir, "work", "a.yaml"): "servers: []\n",
		filepath.Join(dir, "work", "b.txt"):  "not a configuration\n",
	}
	for path, text := range files {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	driver := `source "$1"
if declare -F _init_completion >/dev/null; then echo "bash-completion is loaded: the test proves nothing"; exit 3; fi
complete_line() {
    COMP_LINE=$1 COMP_POINT=${#1}
    read -ra COMP_WORDS <<<"$1"
    [[ $1 == *' ' ]] && COMP_WORDS+=("")
    COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
    COMPREPLY=()
    # compopt works only while bash itself completes: say nothing of it.
    compopt() { :; }
    __start_switchboard switchboard "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
    echo "[$1] ${COMPREPLY[*]}"
}
complete_line "switchboard hist"
complete_line "switchboard servers --config "
complete_line "switchboard servers --config=a"
`
	cmd := exec.Command(bash, "--norc", "--noprofile", "-c", driver, "driver", script)
	cmd.Dir = filepath.Join(dir, "work")
	cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
		"SWITCHBOARD_STATE_DIR="+t.TempDir(), "HOME="+dir, "XDG_CONFIG_HOME="+filepath.Join(dir, "config"))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("bash: %v\n%s", err, out.String())
	}
	got := out.String()
	for _, want := range []string{
		"[switchboard hist] history\n",
		"[switchboard servers --config ] a.yaml\n",
		"[switchboard servers --config=a] a.yaml\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("completion without bash-completion: got\n%s\nwant a line %q", got, want)
		}
	}
	if strings.Contains(got, "not found") {
		t.Errorf("completion without bash-completion failed:\n%s", got)
	}
}
