package config

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// dotenvCases are TestParseDotenv's cases, and FuzzParseDotenv's seeds.
var dotenvCases = []struct {
	name     string
	in       string
	want     map[string]string
	problems []string // "line: message"
}{
	{name: "basic", in: "A=1\nB=two words\n", want: map[string]string{"A": "1", "B": "two words"}},
	{name: "comments and blanks", in: "# c\n\n  # indented\nA=1 # trailing\nB=x#not-a-comment\n", want: map[string]string{"A": "1", "B": "x#not-a-comment"}},
	{name: "export", in: "export A=1\nexport\tB=2\nexporter=3\n", want: map[string]string{"A": "1", "B": "2", "exporter": "3"}},
	{name: "spaces around =", in: "A = 1\n", want: map[string]string{"A": "1"}},
	{name: "single quotes literal", in: `A='${HOME} \n $$'` + "\n", want: map[string]string{"A": `${HOME} \n $$`}},
	{name: "double quote escapes", in: `A="x\ny\tz \"q\" \\ \$HOME \q"` + "\n", want: map[string]string{"A": "x\ny\tz \"q\" \\ $HOME \\q"}},
	{name: "multi-line", in: "A=\"one\ntwo\"\nB=3\n", want: map[string]string{"A": "one\ntwo", "B": "3"}},
	{name: "crlf", in: "A=1\r\nB=\"2\"\r\n", want: map[string]string{"A": "1", "B": "2"}},
	{name: "earlier keys then process env", in: "HOME=/mine\nA=${HOME}/x\nB=${PROCESS_VAR}\nC=${NOPE:-d}\n", want: map[string]string{"HOME": "/mine", "A": "/mine/x", "B": "from-process", "C": "d"}},
	{name: "later wins", in: "A=1\nA=2\n", want: map[string]string{"A": "2"}},
	{name: "empty", in: "A=\nB=''\n", want: map[string]string{"A": "", "B": ""}},
	{
		name: "bad lines", in: "A=1\nnot an assignment\n=x\n9A=1\nB\nC=\"x\" y\nD=${NOPE}\nE='open\n",
		want: map[string]string{"A": "1", "D": ""},
		problems: []string{
			"2: expected KEY=VALUE",
			"3: expected KEY=VALUE",
			"4: expected KEY=VALUE",
			"5: expected KEY=VALUE",
			"6: unexpected text after the closing quote of C",
			"7: variable NOPE is not set (in D)",
			"8: unterminated single-quoted value of E",
		},
	},
}

func TestParseDotenv(t *testing.T) {
	for _, tt := range dotenvCases {
		t.Run(tt.name, func(t *testing.T) {
			lines, probs := parseDotenv(tt.in, LookupTestEnv, "f")
			got := map[string]string{}
			for _, l := range lines {
				got[l.key] = l.value
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("values mismatch (-want +got):\n%s", diff)
			}
			var gotProbs []string
			for _, p := range probs {
				gotProbs = append(gotProbs, strconv.Itoa(p.line)+": "+p.msg)
			}
			if diff := cmp.Diff(tt.problems, gotProbs); diff != "" {
				t.Errorf("problems mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestEnvFileMerge(t *testing.T) {
	dir := t.TempDir()
	WriteFile(t, dir, ".env", "A=from-file\nB=from-file\n")
	p := WriteFile(t, dir, "switchboard.yaml", "servers:\n  - name: a\n    command: npx\n    env_file: .env\n    env: {B: from-env, C: c}\n")
	cfg, err := Load(p, TestOpts)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"A": "from-file", "B": "from-env", "C": "c"}
	if diff := cmp.Diff(want, cfg.Servers[0].Env); diff != "" {
		t.Errorf("env mismatch (-want +got):\n%s", diff)
	}
}

// FuzzParseDotenv checks the env-file parser on any input: it never
// panics; keys are names and positions are lines of the file; a file with
// CRLF line ends reads as the same file with LF; and what it reads, written
// back as a dotenv file (quoted), reads back the same.
func FuzzParseDotenv(f *testing.F) {
	for _, tt := range dotenvCases {
		f.Add(tt.in)
	}
	f.Add("A='a\nb'\nB=\"c\\\nd\"\nexport C = x # y\n")
	f.Add("A=\"${HOME}\\$HOME $$\" \nB='it''s'\n")
	name := regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	f.Fuzz(func(t *testing.T, data string) {
		lines, probs := parseDotenv(data, LookupTestEnv, "f")
		n := strings.Count(strings.ReplaceAll(data, "\r\n", "\n"), "\n") + 1
		last := 0
		for _, l := range lines {
			if !name.MatchString(l.key) {
				t.Fatalf("key %q is not a name", l.key)
			}
			if l.line < 1 || l.line > n || l.line < last {
				t.Fatalf("key %s at line %d of %d (after line %d)", l.key, l.line, n, last)
			}
			last = l.line
		}
		for _, p := range probs {
			if p.line < 1 || p.line > n || p.msg == "" || p.fix == "" && p.err == nil {
				t.Fatalf("problem %+v is not on a line of %d, or says nothing", p, n)
			}
		}

		if !strings.Contains(data, "\r") {
			crlf, crlfProbs := parseDotenv(strings.ReplaceAll(data, "\n", "\r\n"), LookupTestEnv, "f")
			if diff := cmp.Diff(lines, crlf, cmp.AllowUnexported(envLine{})); diff != "" {
				t.Fatalf("CRLF reads differently (-LF +CRLF):\n%s", diff)
			}
			if len(crlfProbs) != len(probs) {
				t.Fatalf("CRLF: %d problems, LF: %d", len(crlfProbs), len(probs))
			}
		}

		if len(probs) > 0 {
			return
		}
		read := map[string]string{}
		for _, l := range lines {
			read[l.key] = l.value
		}
		var b strings.Builder
		for _, k := range sortedKeys(read) {
			b.WriteString(k + "=" + dotenvQuote(read[k]) + "\n")
		}
		again, probs := parseDotenv(b.String(), func(string) (string, bool) { return "", false }, "f")
		if len(probs) > 0 {
			t.Fatalf("written back:\n%s\nproblems: %+v", b.String(), probs)
		}
		back := map[string]string{}
		for _, l := range again {
			back[l.key] = l.value
		}
		if diff := cmp.Diff(read, back); diff != "" {
			t.Fatalf("written back as\n%s\nit reads differently (-first +again):\n%s", b.String(), diff)
		}
	})
}

// dotenvQuote quotes a value for a dotenv file: literally in single quotes
// when it can be, else in double quotes with escapes.
func dotenvQuote(v string) string {
	if !strings.ContainsAny(v, "'\r") {
		return "'" + v + "'"
	}
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, `$`, `\$`, "\n", `\n`, "\r", `\r`, "\t", `\t`)
	return `"` + r.Replace(v) + `"`
}
