package cli

import (
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

var updateDocs = flag.Bool("update", false, "rewrite the generated reference in docs/cli.md")

// cliDoc is the command line's documentation page.
const cliDoc = "../../docs/cli.md"

// The generated reference sits between these lines of docs/cli.md.
const (
	referenceBegin = "<!-- reference: generated from the command tree; `go test ./internal/cli -run TestCLIDoc -update` rewrites it -->"
	referenceEnd   = "<!-- end of the generated reference -->"
)

// TestCLIDoc checks docs/cli.md against the command tree: its reference
// section is what the tree generates (so a command or flag added, removed
// or changed without the doc fails), every command heading of the prose
// names a command that exists, and every --flag the page mentions is a
// flag of some command. -update rewrites the reference.
func TestCLIDoc(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(cliDoc)
	if err != nil {
		t.Fatal(err)
	}
	page := string(data)
	begin, end := strings.Index(page, referenceBegin), strings.Index(page, referenceEnd)
	if begin < 0 || end < begin {
		t.Fatalf("docs/cli.md has no generated reference between %q and %q", referenceBegin, referenceEnd)
	}
	root := newRoot(&app{stdout: io.Discard, stderr: io.Discard})
	want := referenceBegin + "\n\n" + strings.TrimRight(reference(root), "\n") + "\n\n" + referenceEnd
	got := page[begin : end+len(referenceEnd)]
	if got != want {
		if *updateDocs {
			page = page[:begin] + want + page[end+len(referenceEnd):]
			if err := os.WriteFile(cliDoc, []byte(page), 0o644); err != nil {
				t.Fatal(err)
			}
		} else {
			t.Errorf("the reference in docs/cli.md is not what the command tree generates; run go test ./internal/cli -run TestCLIDoc -update and commit docs/cli.md\n%s", firstDiff(got, want))
		}
	}

	prose := page[:begin] + page[end+len(referenceEnd):]
	// Every command the prose has a heading for exists.
	for _, m := range regexp.MustCompile("(?m)^###+ `switchboard ([a-z][a-z -]*?)(?: [A-Z\\[.].*)?`").FindAllStringSubmatch(prose, -1) {
		for _, path := range strings.Split(m[1], "|") {
			if c, rest, err := root.Find(strings.Fields(path)); err != nil || len(rest) > 0 || c == root {
				t.Errorf("docs/cli.md documents `switchboard %s`, which is no command", path)
			}
		}
	}
	// Every command has a heading in the prose, or is described under its
	// parent's.
	forEachCommand(root, func(c *cobra.Command) {
		if c == root || c.Hidden || !c.IsAvailableCommand() && c.Name() != "help" {
			return
		}
		if !strings.Contains(prose, "`switchboard "+commandName(c)) && !strings.Contains(prose, "`switchboard "+commandName(c.Parent())) {
			t.Errorf("docs/cli.md has no prose for `switchboard %s`", commandName(c))
		}
	})
	// Every flag the page mentions exists.
	known := map[string]bool{}
	forEachCommand(root, func(c *cobra.Command) {
		c.Flags().VisitAll(func(f *pflag.Flag) { known[f.Name] = true })
		c.PersistentFlags().VisitAll(func(f *pflag.Flag) { known[f.Name] = true })
	})
	mistyped := map[string]bool{"jsn": true} // the example of a suggestion
	for _, m := range regexp.MustCompile("`[^`]*?--([a-z][a-z-]+)").FindAllStringSubmatch(prose, -1) {
		if !known[m[1]] && !mistyped[m[1]] {
			t.Errorf("docs/cli.md mentions --%s, which no command takes", m[1])
		}
	}
}

// firstDiff shows where two texts start to differ.
func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range max(len(g), len(w)) {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			return fmt.Sprintf("line %d of the reference:\n  doc:  %q\n  tree: %q", i+1, gl, wl)
		}
	}
	return ""
}

// reference renders the command tree as Markdown: the global flags, then
// each command's synopsis, summary and flags with their defaults.
func reference(root *cobra.Command) string {
	var b strings.Builder
	b.WriteString("## Reference\n\n")
	b.WriteString("Every command takes the global flags:\n\n")
	flagTable(&b, root.PersistentFlags())
	forEachCommand(root, func(c *cobra.Command) {
		if c.Hidden || !c.IsAvailableCommand() && c.Name() != "help" && c != root {
			return
		}
		heading := commandName(c)
		if c == root {
			heading = "switchboard"
		}
		fmt.Fprintf(&b, "### %s\n\n", heading)
		fmt.Fprintf(&b, "`%s`: %s.\n\n", c.UseLine(), strings.TrimSuffix(c.Short, "."))
		if subs := availableSubcommands(c); len(subs) > 0 {
			fmt.Fprintf(&b, "Subcommands: %s.\n\n", strings.Join(subs, ", "))
		}
		local := pflag.NewFlagSet(c.Name(), pflag.ContinueOnError)
		c.LocalNonPersistentFlags().VisitAll(func(f *pflag.Flag) {
			if f.Name != "help" && !f.Hidden {
				local.AddFlag(f)
			}
		})
		if local.HasFlags() {
			flagTable(&b, local)
		}
	})
	return b.String()
}

// availableSubcommands lists c's subcommands as `name`.
func availableSubcommands(c *cobra.Command) []string {
	var out []string
	for _, s := range c.Commands() {
		if s.IsAvailableCommand() {
			out = append(out, "`"+s.Name()+"`")
		}
	}
	return out
}

// flagTable renders a flag set as a Markdown table.
func flagTable(b *strings.Builder, fs *pflag.FlagSet) {
	b.WriteString("| flag | default | meaning |\n| --- | --- | --- |\n")
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Hidden || f.Name == "help" {
			return
		}
		name, usage := pflag.UnquoteUsage(f)
		flagCol := "--" + f.Name
		if f.Shorthand != "" {
			flagCol = "-" + f.Shorthand + ", " + flagCol
		}
		if name != "" && f.Value.Type() != "bool" {
			flagCol += " " + name
		}
		def := ""
		switch f.Value.Type() {
		case "bool":
			if f.DefValue != "false" {
				def = f.DefValue
			}
		case "string":
			if f.DefValue != "" {
				def = fmt.Sprintf("%q", f.DefValue)
			}
		default:
			if f.DefValue != "" && f.DefValue != "0" && f.DefValue != "0s" {
				def = f.DefValue
			}
		}
		if def != "" {
			def = "`" + def + "`"
		}
		fmt.Fprintf(b, "| `%s` | %s | %s |\n", flagCol, def, mdCell(usage))
	})
	b.WriteString("\n")
}

// mdCell escapes text for a Markdown table cell.
func mdCell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
}
