// Command mangen writes a man page for every switchboard command, made
// from the same command tree as --help, into a directory: `make man`
// runs it. Usage: go run ./internal/cli/mangen DIR
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
	"github.com/spf13/pflag"

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
	root := cli.CommandTree()
	if err := doc.GenManTree(root, header, dir); err != nil {
		return fmt.Errorf("writing the man pages to %s: %w", dir, err)
	}
	return flagsAsHelpSays(root, dir)
}

// flagsAsHelpSays rewrites each page's options as --help shows them:
// cobra's man pages print every flag's raw default (--output="",
// --answer-timeout=0s, --json[=false]), which contradicts the default
// the description gives; help prints the flag with its value's name
// (--output format) and a default only when it is not the zero value.
func flagsAsHelpSays(c *cobra.Command, dir string) error {
	if c.IsAvailableCommand() || !c.HasParent() {
		path := filepath.Join(dir, strings.ReplaceAll(c.CommandPath(), " ", "-")+".1")
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		lines := strings.Split(string(data), "\n")
		c.NonInheritedFlags().VisitAll(func(f *pflag.Flag) { rewriteFlag(lines, f) })
		c.InheritedFlags().VisitAll(func(f *pflag.Flag) { rewriteFlag(lines, f) })
		if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
			return err
		}
	}
	for _, s := range c.Commands() {
		if err := flagsAsHelpSays(s, dir); err != nil {
			return err
		}
	}
	return nil
}

// rewriteFlag rewrites f's entry in a page's lines: its heading line
// (\fB--name\fP="..."), and the end of its description, which gets the
// default help shows, if any.
func rewriteFlag(lines []string, f *pflag.Flag) {
	head := regexp.MustCompile(`^(\\fB-` + regexp.QuoteMeta(f.Shorthand) + `\\fP, )?\\fB--` + regexp.QuoteMeta(f.Name) + `\\fP(\[?=.*)$`)
	name, usage := pflag.UnquoteUsage(f)
	for i, l := range lines {
		m := head.FindStringSubmatch(l)
		if m == nil || (m[1] != "") != (f.Shorthand != "") {
			continue
		}
		l = strings.TrimSuffix(l, m[2])
		if name != "" {
			l += ` \fI` + name + `\fP`
		}
		lines[i] = l
		if def := helpDefault(f, usage); def != "" {
			// The description runs to the next blank line.
			j := i + 1
			for j+1 < len(lines) && lines[j+1] != "" {
				j++
			}
			if j < len(lines) {
				lines[j] += " " + def
			}
		}
		return
	}
}

// helpDefault is the "(default ...)" --help writes after f's description,
// or "": pflag's own rendering, so that the two never disagree.
func helpDefault(f *pflag.Flag, usage string) string {
	fs := pflag.NewFlagSet("", pflag.ContinueOnError)
	fs.AddFlag(f)
	line := strings.TrimRight(fs.FlagUsagesWrapped(0), "\n")
	if i := strings.LastIndex(line, usage); i >= 0 {
		return strings.TrimSpace(line[i+len(usage):])
	}
	return ""
}
