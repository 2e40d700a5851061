// Command testserver runs one of package testserver's modes (see package
// modes) as an MCP server on stdio: SWITCHBOARD_TEST_SERVER names the
// mode. Tests start it, built with the test binary's flags, instead of
// re-running their own test binary: it links only the servers, so a start
// costs a fraction of the CPU (docs/decisions.md, "The test suite's child
// processes").
package main

import (
	"fmt"
	"os"

	"github.com/switchboard-mcp/switchboard/internal/testserver/modes"
)

func main() {
	mode := os.Getenv(modes.EnvMode)
	if mode == "" {
		fmt.Fprintf(os.Stderr, "testserver: set %s to a mode (ok, hang, stateful, …: see package modes)\n", modes.EnvMode)
		os.Exit(2)
	}
	modes.Run(mode)
}
