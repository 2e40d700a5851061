package config

import (
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseDotenv(t *testing.T) {
	tests := []struct {
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
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lines, probs := parseDotenv(tt.in, testLookup, "f")
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
	writeFile(t, dir, ".env", "A=from-file\nB=from-file\n")
	p := writeFile(t, dir, "switchboard.yaml", "servers:\n  - name: a\n    command: npx\n    env_file: .env\n    env: {B: from-env, C: c}\n")
	cfg, err := Load(p, testOpts)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"A": "from-file", "B": "from-env", "C": "c"}
	if diff := cmp.Diff(want, cfg.Servers[0].Env); diff != "" {
		t.Errorf("env mismatch (-want +got):\n%s", diff)
	}
}
