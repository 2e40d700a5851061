package upstream

import (
	"context"
	"io"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/procgroup"
)

// exitedTransport connects, then returns only once the child's leader has
// exited (the child holds the write end of the exited pipe as fd 3 and
// closes it by exiting), so that the client's first write goes to a child
// that is gone.
type exitedTransport struct {
	*processTransport
	exited, exitedW *os.File
}

func (t *exitedTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	conn, err := t.processTransport.Connect(ctx)
	t.exitedW.Close() // the child has its copy
	if err != nil {
		return nil, err
	}
	if _, err := io.ReadAll(t.exited); err != nil {
		return nil, err
	}
	return conn, nil
}

// TestChildGoneBeforeTheInitializeEndedFirst: a stdio server that exits
// before the initialize request is written fails that write with a broken
// pipe, and the connection closes before its stdout's EOF may have been
// read (here it cannot be: a grandchild holds stdout open). The child
// still counts as having ended by itself, so the handshake's failure says
// how it exited rather than "broken pipe".
func TestChildGoneBeforeTheInitializeEndedFirst(t *testing.T) {
	t.Parallel()
	exitedR, exitedW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer exitedR.Close()
	// The leader closes its stdin, leaves a grandchild holding stdout
	// (and not fd 3), and exits 3.
	cmd := exec.Command("sh", "-c", "exec 0<&-; sleep 60 3>&- & exit 3")
	cmd.ExtraFiles = []*os.File{exitedW}
	cmd.SysProcAttr = procgroup.Attr(true)
	pt := &processTransport{cmd: cmd, noise: io.Discard}
	tr := &exitedTransport{processTransport: pt, exited: exitedR, exitedW: exitedW}

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err = mcp.NewClient(&mcp.Implementation{Name: "c", Version: "v0"}, nil).Connect(ctx, tr, nil)
	if err == nil {
		t.Fatal("the handshake with a child that exited succeeded")
	}
	conn := pt.conn
	_ = conn.Close() // the SDK has closed it already; this waits for nothing
	if conn.out.eof.Load() {
		t.Fatal("the child's stdout ended, which a grandchild was to hold open: the test shows nothing")
	}
	if !conn.endedFirst {
		t.Error("a child whose stdin broke before Close does not count as having ended by itself")
	}
	if ps := conn.exitStatus(time.Second); ps == nil || describeExit(ps) != "exited with code 3" {
		t.Errorf("exit status %v, want exited with code 3", ps)
	}
}
