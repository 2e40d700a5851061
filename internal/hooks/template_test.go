// Internal on purpose: tests the template and condition parsers (parseTemplate, compileInto, expand, matches) over inputs no hook file of a test would hold.

package hooks

import (
	"encoding/json"
	"errors"
	"path"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-mcp/switchboard/internal/config"
)

var templateCtx = map[string]any{
	"feature":   "003-user-auth",
	"empty":     "",
	"null":      nil,
	"count":     json.Number("3"),
	"ratio":     0.5,
	"ok":        true,
	"arguments": map[string]any{"title": "Fix it", "tags": []any{"a", "b"}},
}

func TestTemplate(t *testing.T) {
	tests := []struct {
		tmpl      string
		want      any // value()
		wantErr   string
		wantFirst string // expand(), when it differs from fmt of want
	}{
		{tmpl: "plain", want: "plain"},
		{tmpl: "{feature}", want: "003-user-auth"},
		{tmpl: "{count}", want: json.Number("3")},
		{tmpl: "{ok}", want: true},
		{tmpl: "{arguments}", want: map[string]any{"title": "Fix it", "tags": []any{"a", "b"}}},
		{tmpl: "{arguments.tags}", want: []any{"a", "b"}},
		{tmpl: "n={count}, r={ratio}, {ok}", want: "n=3, r=0.5, true"},
		{tmpl: "{arguments.title} [{arguments.tags}]", want: `Fix it [["a","b"]]`},
		{tmpl: "{missing|none}", want: "none"},
		{tmpl: "{missing|10}", want: float64(10)},
		{tmpl: `{missing|{"a":1}}`, wantErr: "cannot hold a brace"},
		{tmpl: "{empty|fallback}", want: "fallback"},
		{tmpl: "{null|fallback}", want: "fallback"},
		{tmpl: "x{empty}y", want: "xy"},
		{tmpl: "{{literal}} {feature}", want: "{literal} 003-user-auth"},
		{tmpl: "{missing}", wantErr: `the event has no field "missing"`},
		{tmpl: "a {arguments.nope} b", wantErr: `no field "arguments.nope"`},
	}
	for _, tt := range tests {
		t.Run(tt.tmpl, func(t *testing.T) {
			tm, err := parseTemplate(tt.tmpl)
			if err == nil {
				var v any
				v, err = tm.value(templateCtx)
				if err == nil {
					if diff := cmp.Diff(tt.want, v); diff != "" {
						t.Errorf("value mismatch (-want +got):\n%s", diff)
					}
					s, err := tm.expand(templateCtx)
					if err != nil || s != stringify(tt.want) {
						t.Errorf("expand: got %q, %v, want %q", s, err, stringify(tt.want))
					}
				}
			}
			if tt.wantErr == "" && err != nil {
				t.Fatalf("got error %v", err)
			}
			if tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("got error %v, want one containing %q", err, tt.wantErr)
			}
			var mf *MissingFieldError
			if strings.Contains(tt.wantErr, "no field") && !errors.As(err, &mf) {
				t.Errorf("got %T, want *MissingFieldError", err)
			}
		})
	}
}

func TestConditions(t *testing.T) {
	tests := []struct {
		name string
		cond config.HookCondition
		want bool
	}{
		{"equals", config.HookCondition{Field: "feature", Op: config.CondEquals, Value: "003-user-auth"}, true},
		{"equals number", config.HookCondition{Field: "count", Op: config.CondEquals, Value: "3"}, true},
		{"equals nested", config.HookCondition{Field: "arguments.title", Op: config.CondEquals, Value: "Fix it"}, true},
		{"not equal", config.HookCondition{Field: "feature", Op: config.CondEquals, Value: "004"}, false},
		{"glob", config.HookCondition{Field: "feature", Op: config.CondGlob, Value: "0*-*"}, true},
		{"glob no match", config.HookCondition{Field: "feature", Op: config.CondGlob, Value: "feature/*"}, false},
		{"regex", config.HookCondition{Field: "feature", Op: config.CondRegex, Value: `^\d{3}-`}, true},
		{"missing never holds", config.HookCondition{Field: "nope", Op: config.CondEquals, Value: ""}, false},
		{"empty equals empty", config.HookCondition{Field: "empty", Op: config.CondEquals, Value: ""}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := &hook{}
			h.compileInto(config.Hook{If: []config.HookCondition{tt.cond}})
			if h.problem != "" {
				t.Fatal(h.problem)
			}
			if got := h.matches(templateCtx); got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

// FuzzTemplate: the expander never panics, and a template that parses
// expands to a string in which every literal part appears.
func FuzzTemplate(f *testing.F) {
	for _, s := range []string{"", "{feature}", "{a|b}", "{{x}}", "{arguments.tags}", "x{count}y{missing|z}", "{null|}", "{"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tm, err := parseTemplate(s)
		if err != nil {
			return
		}
		out, err := tm.expand(templateCtx)
		if err != nil {
			var mf *MissingFieldError
			if !errors.As(err, &mf) {
				t.Fatalf("expand(%q): unexpected error %v", s, err)
			}
			return
		}
		for _, p := range tm.parts {
			if p.Field == "" && !strings.Contains(out, p.Literal) {
				t.Fatalf("expand(%q) = %q lost the literal %q", s, out, p.Literal)
			}
		}
		if _, err := tm.value(templateCtx); err != nil {
			t.Fatalf("value(%q): %v after expand succeeded", s, err)
		}
	})
}

// FuzzCondition: the matcher never panics, and agrees with path.Match and
// regexp on the field's text.
func FuzzCondition(f *testing.F) {
	f.Add("feature", "glob", "0*-*")
	f.Add("arguments.title", "regex", "^Fix")
	f.Add("count", "equals", "3")
	f.Add("a..b", "glob", "[")
	f.Fuzz(func(t *testing.T, field, op, value string) {
		switch op {
		case config.CondEquals, config.CondGlob, config.CondRegex:
		default:
			return
		}
		h := &hook{}
		h.compileInto(config.Hook{If: []config.HookCondition{{Field: field, Op: op, Value: value}}})
		if h.problem != "" {
			return
		}
		got := h.matches(templateCtx)
		v, ok := lookupPath(templateCtx, strings.Split(field, "."))
		if !ok {
			if got {
				t.Fatalf("condition on missing field %q held", field)
			}
			return
		}
		s := stringify(v)
		var want bool
		switch op {
		case config.CondEquals:
			want = s == value
		case config.CondGlob:
			want, _ = path.Match(value, s)
		case config.CondRegex:
			want = regexp.MustCompile(value).MatchString(s)
		}
		if got != want {
			t.Fatalf("%s %s %q on %q: got %v, want %v", field, op, value, s, got, want)
		}
	})
}
