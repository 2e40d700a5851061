package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/switchboard-mcp/switchboard/internal/cli"
)

// TestGenerate checks that every command gets a man page with its
// synopsis, flags and examples, headed by its own name.
func TestGenerate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "man")
	if err := generate(dir); err != nil {
		t.Fatal(err)
	}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if !c.IsAvailableCommand() && c.HasParent() {
			return
		}
		name := strings.ReplaceAll(c.CommandPath(), " ", "-") + ".1"
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Errorf("no man page for %s: %v", c.CommandPath(), err)
			return
		}
		page := string(data)
		title := strings.ToUpper(strings.ReplaceAll(c.CommandPath(), " ", "-")) // SWITCHBOARD-CALL
		for _, want := range []string{".TH \"" + title + "\" \"1\"", "SYNOPSIS", "EXAMPLE"} {
			if !strings.Contains(page, want) {
				t.Errorf("%s does not contain %q", name, want)
			}
		}
		if c.HasAvailableLocalFlags() && !strings.Contains(page, "OPTIONS") {
			t.Errorf("%s lists no options", name)
		}
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(cli.CommandTree())
}

// TestFlagsAsHelpSays checks that the pages show each flag as --help does:
// with its value's name and only the default help gives, never cobra's raw
// --output="" or --answer-timeout=0s that contradicts the description.
func TestFlagsAsHelpSays(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "man")
	if err := generate(dir); err != nil {
		t.Fatal(err)
	}
	pages, err := filepath.Glob(filepath.Join(dir, "*.1"))
	if err != nil || len(pages) == 0 {
		t.Fatalf("no pages: %v", err)
	}
	raw := regexp.MustCompile(`(?m)^\\fB-.*\\fP\[?=`)
	for _, p := range pages {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if m := raw.FindString(string(data)); m != "" {
			t.Errorf("%s shows a raw default: %s", filepath.Base(p), m)
		}
	}
	data, err := os.ReadFile(filepath.Join(dir, "switchboard-call.1"))
	if err != nil {
		t.Fatal(err)
	}
	page := string(data)
	for _, want := range []string{
		"\\fB--output\\fP \\fIformat\\fP\n\toutput \\fBformat\\fR: table (for a person), json or yaml (default table)\n",
		"\\fB--answer-timeout\\fP \\fIduration\\fP\n\thow long each question on the terminal waits for an answer before it is declined, e.g. 2m (default: the call's timeout)\n",
		"or accept-defaults (default \"ask\")\n",
		"\\fB-h\\fP, \\fB--help\\fP\n",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("switchboard-call.1 does not contain %q", want)
		}
	}
}
