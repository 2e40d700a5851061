package cli

import (
	"fmt"
	"regexp"
	"runtime/debug"
	"strings"
	"sync"

	"github.com/spf13/cobra"
)

// Version is the version reported when the build info has none (a binary
// built from a work tree without VCS stamping); set it at build time with
// -ldflags "-X github.com/switchboard-mcp/switchboard/internal/cli.Version=v1.2.3".
var Version = "dev"

// buildInfo is what `switchboard version` reports.
type buildInfo struct {
	Version    string `json:"version"`
	Commit     string `json:"commit,omitempty"`
	CommitTime string `json:"commit_time,omitempty"`
	Modified   bool   `json:"modified,omitempty"`
	Go         string `json:"go,omitempty"`
}

// currentBuild reads the running binary's build info.
func currentBuild() buildInfo {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return buildInfo{Version: Version}
	}
	return buildFrom(bi, Version)
}

// pseudoCommit is the commit at the end of a pseudo-version
// (v0.0.0-20260102150405-abcdef123456).
var pseudoCommit = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`-(?:0\.)?\d{14}-([0-9a-f]{12})(?:\+.*)?$`) })

// buildFrom reports bi: the module version that `go install …@vX` or a
// tagged build stamps, else fallback (the -ldflags variable); the VCS
// commit, its time and whether the tree was modified, which `go build`
// in a work tree stamps, or else the commit a pseudo-version names.
func buildFrom(bi *debug.BuildInfo, fallback string) buildInfo {
	out := buildInfo{Version: bi.Main.Version, Go: bi.GoVersion}
	if out.Version == "" || out.Version == "(devel)" {
		out.Version = fallback
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			out.Commit = s.Value
		case "vcs.time":
			out.CommitTime = s.Value
		case "vcs.modified":
			out.Modified = s.Value == "true"
		}
	}
	if out.Commit == "" {
		if m := pseudoCommit().FindStringSubmatch(bi.Main.Version); m != nil {
			out.Commit = m[1]
		}
	}
	return out
}

// String is the one line `switchboard version` prints, e.g.
// "switchboard v1.2.0 (commit 0123456789ab, 2026-01-02T15:04:05Z; go1.26.8)".
func (b buildInfo) String() string {
	var detail []string
	if b.Commit != "" {
		c := "commit " + shortCommit(b.Commit)
		if b.CommitTime != "" {
			c += ", " + b.CommitTime
		}
		if b.Modified {
			c += ", modified"
		}
		detail = append(detail, c)
	}
	if b.Go != "" {
		detail = append(detail, b.Go)
	}
	if len(detail) == 0 {
		return "switchboard " + b.Version
	}
	return fmt.Sprintf("switchboard %s (%s)", b.Version, strings.Join(detail, "; "))
}

// shortCommit shortens a commit hash to 12 characters, as Go's
// pseudo-versions do.
func shortCommit(c string) string {
	if len(c) > 12 {
		return c[:12]
	}
	return c
}

// newVersionCmd is `switchboard version`.
func newVersionCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, commit and Go version of this build",
		Long: `Print the version of this build: the module version (what 'go install
github.com/switchboard-mcp/switchboard/cmd/switchboard@vX' installed, or the version
set with -ldflags), the VCS commit and its time, whether the tree had changes, and the
Go version. --version prints the same.`,
		Example: `  switchboard version
  switchboard version --json`,
		RunE: func(_ *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usagef("version takes no arguments")
			}
			return a.version()
		},
	}
}

// version prints the build's version.
func (a *app) version() error {
	b := currentBuild()
	if a.json {
		return a.printJSON(b)
	}
	fmt.Fprintln(a.stdout, b.String())
	return nil
}
