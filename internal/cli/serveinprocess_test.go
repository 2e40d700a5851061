package cli

import (
	"context"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/control"
)

// serveInProcess runs `switchboard serve --config cfg` in the test's
// process on a free port and returns once the daemon answers on its
// control socket. When the test ends, serve is stopped and must exit 0;
// if the test failed, serve's output is logged.
func serveInProcess(t *testing.T, cfg string) {
	t.Helper()
	serveInProcessArgs(t, "serve", "--config", cfg, "--listen", "127.0.0.1:0")
}

// serveInProcessArgs is serveInProcess running the command line args (a
// serve that reads gateway.listen from its file, without --listen).
func serveInProcessArgs(t *testing.T, args ...string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var out, errb syncBuffer
	done := make(chan int, 1)
	go func() { done <- mainIn(t, ctx, &out, &errb, args...) }()
	t.Cleanup(func() {
		cancel()
		if code := <-done; code != ExitOK {
			t.Errorf("serve exit code: got %d, want 0\n%s", code, errb.String())
		}
		if t.Failed() {
			t.Logf("serve's output:\n%s%s", out.String(), errb.String())
		}
	})
	sock := control.SocketPath(getenvOf(t, "SWITCHBOARD_STATE_DIR"))
	eventuallyCLI(t, 20*time.Second, "serve to answer on its control socket", func() bool {
		select {
		case code := <-done:
			done <- code
			t.Fatalf("serve exited with %d before answering:\n%s%s", code, out.String(), errb.String())
		default:
		}
		c := control.Dial(sock)
		defer c.Close()
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_, err := c.Status(ctx)
		return err == nil
	})
}
