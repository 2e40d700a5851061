// Internal on purpose: tests the comment- and layout-keeping JSONC and TOML document editors (parseJSONDoc, parseTOMLDoc) below Add and Remove.

package clients

import (
	"strings"
	"testing"
)

// TestJSONCEdits: adding and removing one member changes only its bytes,
// in the document's own style (indentation, trailing commas, comments),
// and removing it after adding it gives back the document byte for byte.
func TestJSONCEdits(t *testing.T) {
	t.Parallel()
	add := map[string]any{"url": "http://x/mcp"}
	for _, tc := range []struct {
		name, src, want string
	}{
		{"empty file", "", "{\n  \"s\": {\n    \"sb\": {\n      \"url\": \"http://x/mcp\"\n    }\n  }\n}\n"},
		{"empty object", "{}\n", "{\n  \"s\": {\n    \"sb\": {\n      \"url\": \"http://x/mcp\"\n    }\n  }\n}\n"},
		{"empty servers", "{\"s\": {}}", "{\"s\": {\n  \"sb\": {\n    \"url\": \"http://x/mcp\"\n  }\n}}"},
		{"tabs, trailing comment", "{\n\t\"s\": {\n\t\t\"a\": 1 // keep\n\t}\n}\n",
			"{\n\t\"s\": {\n\t\t\"a\": 1, // keep\n\t\t\"sb\": {\n\t\t\t\"url\": \"http://x/mcp\"\n\t\t}\n\t}\n}\n"},
		{"trailing commas", "{\n  \"s\": {\n    \"a\": 1,\n  },\n}\n",
			"{\n  \"s\": {\n    \"a\": 1,\n    \"sb\": {\n      \"url\": \"http://x/mcp\"\n    },\n  },\n}\n"},
		{"only comments inside", "{\n  \"s\": {\n    // none yet\n  }\n}\n",
			"{\n  \"s\": {\n    // none yet\n    \"sb\": {\n      \"url\": \"http://x/mcp\"\n    }\n  }\n}\n"},
		{"one line", "{\"s\": {\"a\": {\"command\": \"npx\", \"args\": [\"-y\", \"x\"]}}}",
			"{\"s\": {\"a\": {\"command\": \"npx\", \"args\": [\"-y\", \"x\"]}, \"sb\": {\"url\": \"http://x/mcp\"}}}"},
		{"one line, escapes", "{\"s\": {\"a\": {\"args\": [\"a,b\", \"c:\\\"d\\\"\"]}}}",
			"{\"s\": {\"a\": {\"args\": [\"a,b\", \"c:\\\"d\\\"\"]}, \"sb\": {\"url\": \"http://x/mcp\"}}}"},
		{"comment before the key", "// settings\n{\"theme\": \"x\" /* c */}\n",
			"// settings\n{\"theme\": \"x\", /* c */\n\"s\": {\n  \"sb\": {\n    \"url\": \"http://x/mcp\"\n  }\n}}\n"},
	} {
		d, err := parseJSONDoc([]byte(tc.src))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if err := d.set([]string{"s", "sb"}, add); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if string(d.src) != tc.want {
			t.Errorf("%s: got\n%s\nwant\n%s", tc.name, d.src, tc.want)
		}
		got, ok, err := d.get([]string{"s", "sb"})
		if err != nil || !ok || got.(map[string]any)["url"] != "http://x/mcp" {
			t.Errorf("%s: read back %v %v %v", tc.name, got, ok, err)
		}
		if strings.HasPrefix(tc.name, "one line") {
			if _, err := d.remove([]string{"s", "sb"}); err != nil || string(d.src) != tc.src {
				t.Errorf("%s: removed again, got\n%s\nwant the document as it was (%v)\n%s", tc.name, d.src, err, tc.src)
			}
		}
	}

	// Removal of each member of a list gives back the list without it.
	for _, tc := range []struct {
		name, src, member, want string
	}{
		{"middle", "{\"s\": {\n  \"a\": 1,\n  \"sb\": 2,\n  \"c\": 3\n}}", "sb", "{\"s\": {\n  \"a\": 1,\n  \"c\": 3\n}}"},
		{"last", "{\"s\": {\n  \"a\": 1,\n  \"sb\": 2\n}}", "sb", "{\"s\": {\n  \"a\": 1\n}}"},
		{"first", "{\"s\": {\n  \"sb\": 2,\n  \"a\": 1\n}}", "sb", "{\"s\": {\n  \"a\": 1\n}}"},
		{"only", "{\"s\": {\n  \"sb\": 2\n}}", "sb", "{\"s\": {}}"},
		{"last with trailing comma", "{\"s\": {\n  \"a\": 1,\n  \"sb\": 2,\n}}", "sb", "{\"s\": {\n  \"a\": 1,\n}}"},
		{"one line", "{\"s\": {\"a\": 1, \"sb\": 2}}", "sb", "{\"s\": {\"a\": 1}}"},
		{"absent", "{\"s\": {\"a\": 1}}", "sb", "{\"s\": {\"a\": 1}}"},
	} {
		d, err := parseJSONDoc([]byte(tc.src))
		if err != nil {
			t.Fatal(err)
		}
		removed, err := d.remove([]string{"s", tc.member})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if removed != (tc.name != "absent") || string(d.src) != tc.want {
			t.Errorf("%s: removed %v, got\n%s\nwant\n%s", tc.name, removed, d.src, tc.want)
		}
	}
}

// TestTOMLEdits: the entry's tables (with sub-tables) are replaced in
// place or appended, and removed without touching the rest; entries
// written with dotted keys are refused.
func TestTOMLEdits(t *testing.T) {
	t.Parallel()
	src := "model = \"gpt-5\" # the default\n\n[mcp_servers.sb]\ncommand = \"old\"\n\n[mcp_servers.sb.env]\nA = \"1\"\n\n# next\n[profiles.fast]\nmodel = \"m\"\n"
	d, err := parseTOMLDoc([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if err := d.set("mcp_servers", "sb", []tomlField{{"url", "http://x/mcp"}}); err != nil {
		t.Fatal(err)
	}
	want := "model = \"gpt-5\" # the default\n\n[mcp_servers.sb]\nurl = \"http://x/mcp\"\n\n[profiles.fast]\nmodel = \"m\"\n"
	if string(d.src) != want {
		t.Errorf("replace: got\n%s\nwant\n%s", d.src, want)
	}
	if ok, err := d.remove("mcp_servers", "sb"); !ok || err != nil {
		t.Fatal(ok, err)
	}
	if want := "model = \"gpt-5\" # the default\n\n[profiles.fast]\nmodel = \"m\"\n"; string(d.src) != want {
		t.Errorf("remove: got\n%s\nwant\n%s", d.src, want)
	}
	if err := d.set("mcp_servers", "my.gw", []tomlField{{"command", "/bin/sb"}, {"args", []string{"serve", "--stdio"}}}); err != nil {
		t.Fatal(err)
	}
	got, ok, err := d.get("mcp_servers", "my.gw")
	if err != nil || !ok || got["command"] != "/bin/sb" {
		t.Errorf("quoted key: %v %v %v\n%s", got, ok, err, d.src)
	}

	dotted, err := parseTOMLDoc([]byte("mcp_servers.sb.command = \"x\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := dotted.set("mcp_servers", "sb", []tomlField{{"url", "u"}}); err == nil {
		t.Error("an entry in dotted keys was edited")
	}
}

// TestMarshalInline: one line, a space after each colon and comma, none
// added inside strings.
func TestMarshalInline(t *testing.T) {
	t.Parallel()
	got, err := marshalInline(map[string]any{"command": "/opt/sb", "args": []string{"a,b", `c:"d"`, `e\`}})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"args": ["a,b", "c:\"d\"", "e\\"], "command": "/opt/sb"}`; string(got) != want {
		t.Errorf("got %s, want %s", got, want)
	}
}
