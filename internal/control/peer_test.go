package control_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/control"
)

// envPeerClient makes the test binary a control client (see
// runPeerClient): its value is the socket to dial.
const envPeerClient = "SWITCHBOARD_TEST_CONTROL_PEER"

// runPeerClient, in a test binary started with envPeerClient set, asks
// the daemon on that socket to resume, as `switchboard resume` does, and
// exits: a control client in a process of its own, whose pid the daemon
// should see.
func runPeerClient() {
	sock := os.Getenv(envPeerClient)
	if sock == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	c := control.Dial(sock)
	_, err := c.Resume(ctx)
	c.Close()
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, "resuming through the control socket:", err)
		os.Exit(1)
	}
	os.Exit(0)
}
