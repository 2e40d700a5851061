package config_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-mcp/switchboard/internal/config"
)

// notebookServers starts every notebook test file: two servers, lines 1-3.
const notebookServers = `servers:
  - {name: weather, command: npx}
  - {name: github, command: npx}
`

func TestNotebookDecode(t *testing.T) {
	src := notebookServers + `notebook:
  images_dir: assets
  concurrency: 4
  max_blocks: 50
  bindings:
    - heading: "## Weather"
      server: weather
      inherit_to_children: true
    - block: "^issues"
      server: github
    - start_line: 10
      end_line: 20
      server: github
`
	cfg, err := config.Parse("switchboard.yaml", []byte(src), config.Options{})
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	want := config.Notebook{
		ImagesDir: "assets", Concurrency: 4, MaxBlocks: 50, Pos: config.Pos{File: "switchboard.yaml", Line: 4, Col: 1},
		Bindings: []config.Binding{
			{Heading: "## Weather", Server: "weather", InheritToChildren: true, Pos: config.Pos{File: "switchboard.yaml", Line: 9, Col: 7}},
			{Block: "issues", Server: "github", Pos: config.Pos{File: "switchboard.yaml", Line: 12, Col: 7}},
			{StartLine: 10, EndLine: 20, Server: "github", Pos: config.Pos{File: "switchboard.yaml", Line: 14, Col: 7}},
		},
	}
	if diff := cmp.Diff(want, cfg.Notebook); diff != "" {
		t.Errorf("notebook (-want +got):\n%s", diff)
	}

	out, err := config.MarshalResolved(cfg)
	if err != nil {
		t.Fatal(err)
	}
	wantShow := `notebook:
  images_dir: assets
  concurrency: 4
  max_blocks: 50
  bindings:
    - heading: "## Weather"
      server: weather
      inherit_to_children: true
    - block: issues
      server: github
    - start_line: 10
      end_line: 20
      server: github
`
	if !strings.Contains(string(out), wantShow) {
		t.Errorf("config show: got\n%s\nwant it to contain\n%s", out, wantShow)
	}
	again, err := config.Parse("shown.yaml", out, config.Options{})
	if err != nil {
		t.Fatalf("parsing config show's output: %v", err)
	}
	if len(again.Notebook.Bindings) != 3 || again.Notebook.Concurrency != 4 {
		t.Errorf("round trip: got %+v", again.Notebook)
	}
}

func TestNotebookDefaults(t *testing.T) {
	cfg, err := config.Parse("switchboard.yaml", []byte(notebookServers), config.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if n := cfg.Notebook; n.EffectiveConcurrency() != config.DefaultNotebookConcurrency || n.EffectiveMaxBlocks() != config.DefaultNotebookMaxBlocks || len(n.Bindings) != 0 {
		t.Errorf("defaults: got %+v", n)
	}
	if n := config.Default().Notebook; n.EffectiveConcurrency() != 1 || n.EffectiveMaxBlocks() != 1000 {
		t.Errorf("Default(): got concurrency %d and max blocks %d, want 1 and 1000", n.EffectiveConcurrency(), n.EffectiveMaxBlocks())
	}
	out, err := config.MarshalResolved(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), "notebook:") {
		t.Errorf("config show writes a default notebook block:\n%s", out)
	}
}

func TestNotebookProblems(t *testing.T) {
	src := notebookServers + `notebook:
  concurrency: 0
  max_blocks: many
  image_dir: x
  bindings:
    - heading: "## A"
      block: b
      server: weather
    - server: weather
    - heading: A
      server: wether
    - start_line: 9
      end_line: 9
      server: github
    - end_line: 9
      server: github
    - heading: "##"
      block: "bad id"
    - heading: A
      server: github
      inherit_to_children: yes please
    - just a string
`
	_, err := config.Parse("nb.yaml", []byte(src), config.Options{})
	var ve *config.ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("Parse: got %v, want a *ValidationError", err)
	}
	var got []string
	for _, p := range ve.Problems {
		got = append(got, p.String())
	}
	want := []string{
		`nb.yaml:5:16: notebook.concurrency: 0 is out of range; use 1 to 64 (the default is 1)`,
		`nb.yaml:6:15: notebook.max_blocks: must be a whole number, not a string`,
		`nb.yaml:7:3: notebook.image_dir: unknown field "image_dir"; did you mean "images_dir"?`,
		`nb.yaml:9:7: notebook.bindings[0]: a binding takes exactly one of heading, block or start_line/end_line; e.g. heading: "## Weather", or block: forecast, or start_line: 10 with end_line: 20 (see docs/documents.md)`,
		`nb.yaml:12:7: notebook.bindings[1]: a binding needs a heading, a block or a line range; e.g. heading: "## Weather", or block: forecast, or start_line: 10 with end_line: 20 (see docs/documents.md)`,
		`nb.yaml:14:15: notebook.bindings[2].server: unknown server "wether"; did you mean "weather"?`,
		`nb.yaml:16:17: notebook.bindings[3].end_line: end_line 9 is not after start_line 9; the range must end after it starts (start_line < end_line)`,
		`nb.yaml:18:7: notebook.bindings[4].start_line: end_line needs start_line; add start_line: with the first line of the range`,
		`nb.yaml:20:16: notebook.bindings[5].heading: is empty; write the heading's text, e.g. heading: "## Weather"`,
		`nb.yaml:21:14: notebook.bindings[5].block: invalid block id "bad id"; use letters, digits, _ and -, as written after ^ on the block, e.g. block: forecast`,
		`nb.yaml:20:7: notebook.bindings[5]: a binding takes exactly one of heading, block or start_line/end_line; e.g. heading: "## Weather", or block: forecast, or start_line: 10 with end_line: 20 (see docs/documents.md)`,
		`nb.yaml:20:7: notebook.bindings[5].server: server is required; add server: with the name of a server under servers:`,
		`nb.yaml:24:28: notebook.bindings[6].inherit_to_children: must be true or false, not a string; write inherit_to_children: true or inherit_to_children: false (true and false are written bare: yes, on and quoted words are strings)`,
		`nb.yaml:25:7: notebook.bindings[7]: must be a mapping, not a string`,
	}
	for _, w := range want {
		found := false
		for _, g := range got {
			if g == w {
				found = true
			}
		}
		if !found {
			t.Errorf("missing problem %q\ngot:\n%s", w, strings.Join(got, "\n"))
		}
	}
	if len(got) != len(want) {
		t.Errorf("got %d problems, want %d:\n%s", len(got), len(want), strings.Join(got, "\n"))
	}
}

func TestParseFrontMatter(t *testing.T) {
	servers := []string{"weather"}
	fm := "title: x\nswitchboard:\n  bindings:\n    - heading: Weather\n      server: weather\n"
	got, err := config.ParseFrontMatter("doc.md", []byte(fm), 2, servers)
	if err != nil {
		t.Fatal(err)
	}
	want := []config.Binding{{Heading: "Weather", Server: "weather", Pos: config.Pos{File: "doc.md", Line: 5, Col: 7}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("bindings (-want +got):\n%s", diff)
	}
	if got, err := config.ParseFrontMatter("doc.md", []byte("title: no bindings\n"), 2, servers); err != nil || got != nil {
		t.Errorf("front matter without switchboard: got %v, %v; want nothing", got, err)
	}
	_, err = config.ParseFrontMatter("doc.md", []byte("switchboard:\n  binding: []\n"), 2, servers)
	if err == nil || !strings.Contains(err.Error(), `doc.md:3:3: switchboard.binding: unknown field "binding"; did you mean "bindings"?`) {
		t.Errorf("typo: got %v, want an unknown-field problem at doc.md:3:3", err)
	}
	_, err = config.ParseFrontMatter("doc.md", []byte("a: [\n"), 2, servers)
	if err == nil || !strings.Contains(err.Error(), "doc.md:") {
		t.Errorf("bad YAML: got %v, want a problem in doc.md", err)
	}
}
