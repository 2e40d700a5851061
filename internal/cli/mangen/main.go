// Command mangen writes a man page for every switchboard command, made
// from the same command tree as --help, into a directory: `make man`
// runs it. Usage: go run ./internal/cli/mangen DIR
package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra/doc"

	"github.com/switchboard-mcp/switchboard/internal/cli"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: mangen DIR")
		os.Exit(2)
	}
	if err := generate(os.Args[1]); err != nil {
		fmt.Fprintf(os.Stderr, "mangen: %v\n", err)
		os.Exit(1)
	}
}

// generate writes switchboard.1 and switchboard-COMMAND.1 for every
// command into dir, creating it.
func generate(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", dir, err)
	}
	// No Title: each page's is its command's (SWITCHBOARD-CALL), as
	// git-commit(1)'s is GIT-COMMIT; one fixed title would head every
	// page SWITCHBOARD(1).
	header := &doc.GenManHeader{Section: "1", Source: "Switchboard", Manual: "Switchboard Manual"}
	if err := doc.GenManTree(cli.CommandTree(), header, dir); err != nil {
		return fmt.Errorf("writing the man pages to %s: %w", dir, err)
	}
	return nil
}
