package config_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/fault"
)

func TestParseReportsEveryProblem(t *testing.T) {
	for _, tt := range config.BadFiles {
		t.Run(tt.Name, func(t *testing.T) {
			cfg, err := config.Parse(tt.File, []byte(tt.Src), config.TestOpts)
			if err == nil {
				t.Fatalf("Parse succeeded with %d servers, want an error", len(cfg.Servers))
			}
			var ve *config.ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("got error %T, want *ValidationError", err)
			}
			got := strings.Split(strings.ReplaceAll(err.Error(), config.Abs(t, "testdata"), "<testdata>"), "\n")
			if diff := cmp.Diff(tt.Want, got); diff != "" {
				t.Errorf("problems mismatch (-want +got):\n%s", diff)
			}
			if got, want := fault.KindOf(err), fault.Config; got != want {
				t.Errorf("got kind %q, want %q", got, want)
			}
			for _, p := range ve.Problems {
				if p.Err == nil {
					t.Errorf("problem %q has no Err", p)
				}
			}
		})
	}
}

func TestTypedErrors(t *testing.T) {
	src := `servers:
  - name: a
  - name: b
    transport: http
  - name: c
    command: npx
    args: ["${NOPE}"]
  - name: d
    command: python
  - name: e
    command: npx
    urll: https://x
`
	_, err := config.Parse("t.yaml", []byte(src), config.TestOpts)
	if err == nil {
		t.Fatal("Parse succeeded, want an error")
	}
	var missing *config.MissingFieldError
	if !errors.As(err, &missing) {
		t.Fatal("no *MissingFieldError in the error")
	}
	if got, want := *missing, (config.MissingFieldError{Field: "servers.a.command", Transport: config.TransportStdio}); got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
	var unresolved *config.UnresolvedVariableError
	if !errors.As(err, &unresolved) {
		t.Fatal("no *UnresolvedVariableError in the error")
	}
	if got, want := *unresolved, (config.UnresolvedVariableError{Variable: "NOPE", Field: "servers.c.args[0]"}); got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
	var notAllowed *config.CommandNotAllowedError
	if !errors.As(err, &notAllowed) {
		t.Fatal("no *CommandNotAllowedError in the error")
	}
	if got, want := notAllowed.Command, "python"; got != want {
		t.Errorf("got command %q, want %q", got, want)
	}
	if diff := cmp.Diff(config.DefaultAllowedCommands, notAllowed.Allowed); diff != "" {
		t.Errorf("allowed mismatch (-want +got):\n%s", diff)
	}
	var unknown *config.UnknownFieldError
	if !errors.As(err, &unknown) {
		t.Fatal("no *UnknownFieldError in the error")
	}
	if got, want := *unknown, (config.UnknownFieldError{Field: "servers.e.urll", Suggestion: "url"}); got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
	var ve *config.ValidationError
	errors.As(err, &ve)
	var missingCount int
	for _, e := range ve.Unwrap() {
		var m *config.MissingFieldError
		if errors.As(e, &m) {
			missingCount++
		}
	}
	if got, want := missingCount, 2; got != want {
		t.Errorf("got %d missing-field errors, want %d", got, want)
	}
}

func TestProblemString(t *testing.T) {
	tests := []struct {
		p    config.Problem
		want string
	}{
		{config.Problem{Pos: config.Pos{File: "f.yaml", Line: 3, Col: 5}, Field: "servers.github.url", Message: "bad", Fix: "fix it"}, "f.yaml:3:5: servers.github.url: bad; fix it"},
		{config.Problem{Pos: config.Pos{File: "f.yaml"}, Message: "bad"}, "f.yaml: bad"},
		{config.Problem{Field: "--url", Message: "bad"}, "--url: bad"},
		{config.Problem{Pos: config.Pos{Line: 2, Col: 1}, Message: "bad"}, "2:1: bad"},
	}
	for _, tt := range tests {
		if got := tt.p.String(); got != tt.want {
			t.Errorf("got %q, want %q", got, tt.want)
		}
	}
}
