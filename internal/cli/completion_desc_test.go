package cli

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestCompletionDescriptionsHaveNoBackquotes: the flag descriptions every
// shell's completion shows (bash, zsh, fish and PowerShell all read them
// from __complete) are plain text, without the backquotes pflag uses to
// name a value in --help; --help keeps them as value names.
func TestCompletionDescriptionsHaveNoBackquotes(t *testing.T) {
	t.Parallel()
	var seen int
	for _, line := range [][]string{{"--"}, {"call", "--"}, {"auth", "logout", "x", "--"}, {"history", "--"}, {"serve", "--"}} {
		r := runCLI(t, append([]string{cobra.ShellCompRequestCmd}, line...)...)
		wantCode(t, r, ExitOK)
		for _, l := range strings.Split(r.stdout, "\n") {
			name, desc, ok := strings.Cut(l, "\t")
			if !ok {
				continue
			}
			seen++
			if strings.Contains(desc, "`") {
				t.Errorf("__complete %s: %s has the description %q, with pflag's backquotes", strings.Join(line, " "), name, desc)
			}
		}
	}
	if seen < 10 {
		t.Fatalf("only %d flags with descriptions were completed; the check proves nothing", seen)
	}
	r := runCLI(t, "serve", "--help")
	wantContains(t, "serve --help", r.stdout, "--log-level level")
}
