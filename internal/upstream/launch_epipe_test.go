package upstream

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// TestStdioChildGoneBeforeTheFirstWrite: a stdio server that closes its
// stdin before anything is written to it (most often by exiting at once:
// a wrapper script that fails) ended by itself, even though the end of
// its stdout has not been read yet, so that the connection's failure is
// explained by its exit status and stderr ("exited with code 3 before
// answering initialize"), not as the broken pipe the first write got.
// The child here keeps its stdout open a moment after closing its stdin,
// so the order is certain: the write fails first.
func TestStdioChildGoneBeforeTheFirstWrite(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cmd := exec.Command("/bin/sh", "-c", "exec 0<&-; echo 'fatal: gone' >&2; sleep 0.5; exit 3")
	tr := &processTransport{cmd: cmd}
	conn, err := tr.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	stdin := fmt.Sprintf("/proc/%d/fd/0", cmd.Process.Pid)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) { // no event to wait on
		if _, err := os.Readlink(stdin); errors.Is(err, fs.ErrNotExist) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the child did not close its stdin within 10s (%s)", stdin)
		}
	}
	id, err := jsonrpc.MakeID(float64(1))
	if err != nil {
		t.Fatal(err)
	}
	if err := conn.Write(ctx, &jsonrpc.Request{Method: "initialize", ID: id}); err == nil || !strings.Contains(err.Error(), "broken pipe") {
		t.Fatalf("writing to a child that closed its stdin: got %v, want a broken pipe", err)
	}
	if err := conn.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if !tr.conn.endedFirst {
		t.Error("the child closed its stdin before Close asked it to exit, but the connection says Close ended it")
	}
	ps := tr.conn.exitStatus(time.Second)
	if ps == nil || ps.ExitCode() != 3 {
		t.Errorf("exit status: got %v, want exit code 3", ps)
	}
}
