package control

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/fault"
)

// probeTimeout bounds how long Listen and a command wait for a daemon that
// may be on a socket to answer.
const probeTimeout = 2 * time.Second

// Listen listens on the unix socket at path, readable only by this user
// (mode 0600, in a directory created 0700). A socket left by a daemon that
// is gone is removed; a live daemon on it is an error naming its pid.
func Listen(path string) (net.Listener, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("creating the control socket's directory: %w", err)
	}
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode().Type() != fs.ModeSocket {
			return nil, fault.New(fault.Config, "%s exists and is not a socket; not replacing it", path).
				WithSuggestions("remove it, or use another --state-dir")
		}
		if err := refuseLive(path); err != nil {
			return nil, err
		}
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("removing the stale control socket: %w", err)
		}
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("listening on the control socket: %w", err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("restricting the control socket: %w", err)
	}
	return ln, nil
}

// refuseLive returns an error if something answers on the socket at path.
func refuseLive(path string) error {
	conn, err := net.DialTimeout("unix", path, probeTimeout)
	if err != nil {
		return nil // nobody listens: stale
	}
	conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
	defer cancel()
	c := Dial(path)
	defer c.Close()
	who := "another process"
	if st, err := c.Status(ctx); err == nil && st.PID > 0 {
		who = fmt.Sprintf("a switchboard daemon (pid %d)", st.PID)
	}
	return fault.New(fault.Config, "%s is already listening on %s", who, path).
		WithSuggestions("stop it first, or use another --state-dir")
}
