//go:build unix

package cli

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"

	"github.com/switchboard-mcp/switchboard/internal/fault"
)

// checkStateDir refuses a state directory another user owns and takes
// write access away from others on one of the user's own: the directory
// holds the history, the trust records, sealed secrets and the control
// socket, so anyone who may write to it could plant or swap them. A
// directory that does not exist yet is created 0700 where it is needed.
func (a *app) checkStateDir(dir string) error {
	info, err := os.Stat(dir)
	switch {
	case err != nil && os.IsNotExist(err):
		return nil
	case err != nil:
		return fmt.Errorf("the state directory %s: %w", dir, err)
	case !info.IsDir():
		return fault.New(fault.Config, "the state directory %s is not a directory", dir).
			WithSuggestions("give a directory with --state-dir or SWITCHBOARD_STATE_DIR")
	}
	if st, ok := info.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() {
		return fault.New(fault.Config, "the state directory %s belongs to another user (uid %d)", dir, st.Uid).
			WithSuggestions("use a directory of your own with --state-dir or SWITCHBOARD_STATE_DIR")
	}
	if mode := info.Mode().Perm(); mode&0o022 != 0 {
		if err := os.Chmod(dir, mode&^fs.FileMode(0o077)); err != nil {
			return fault.Wrap(fault.Config, err, "the state directory %s is writable by other users (mode %04o) and its mode could not be fixed", dir, mode).
				WithSuggestions(fmt.Sprintf("run: chmod 700 %s", dir))
		}
		fmt.Fprintf(a.stderr, "%s: the state directory %s was writable by other users (mode %04o); its mode is now %04o\n", a.prefix(), dir, mode, mode&^fs.FileMode(0o077))
	}
	return nil
}
