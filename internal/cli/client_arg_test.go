package cli

import "testing"

// TestClientConnectUnknownClientIsAUsageError: an unknown client is a
// mistake in the command line, exit 2 with the closest name, as an
// unknown command or --output value is; it was exit 1, as if connecting
// had failed.
func TestClientConnectUnknownClientIsAUsageError(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"client", "connect", "notepad"}, `switchboard client connect: unknown client "notepad"; want one of claude-desktop,`},
		{[]string{"client", "connect", "curser"}, `unknown client "curser"; did you mean "cursor"?`},
		{[]string{"client", "disconnect", "vscdoe"}, `unknown client "vscdoe"; did you mean "vscode"?`},
	} {
		r := runCLI(t, tc.args...)
		wantCode(t, r, ExitUsage)
		wantContains(t, tc.args[1]+" "+tc.args[2], r.stderr, tc.want)
	}
}
