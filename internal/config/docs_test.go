package config_test

import (
	"errors"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/config"
)

// TestDocsExamples checks that the complete configuration examples in
// docs/configuration.md parse. Only problems about the reader's own files
// (env files, working folders), VS Code inputs (whose stand-in value is no
// pickString option) and launch.allow (which counts only in a file the
// reader trusts) are tolerated.
func TestDocsExamples(t *testing.T) {
	data, err := os.ReadFile("../../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)(?:([^\n]*)\n)?```(yaml|json|jsonc)\n(.*?)```").FindAllStringSubmatch(string(data), -1)
	top := regexp.MustCompile(`(?m)^(servers:|tools:|\{)`)
	anything := config.Options{LookupEnv: func(string) (string, bool) { return "value", true }}
	n := 0
	for _, b := range blocks {
		src := b[3]
		if !top.MatchString(src) || strings.TrimSpace(b[1]) == config.InvalidExample {
			continue // a fragment, or wrong on purpose
		}
		n++
		_, err := config.Parse("docs/example."+b[2], []byte(src), anything)
		var ve *config.ValidationError
		if err == nil || !errors.As(err, &ve) {
			if err != nil {
				t.Errorf("example %d: %v", n, err)
			}
			continue
		}
		for _, p := range ve.Problems {
			var iv *config.InputUnsetError
			if strings.HasSuffix(p.Field, ".cwd") || strings.Contains(p.Field, ".roots[") || strings.HasSuffix(p.Field, ".env_file") || strings.HasSuffix(p.Field, ".envFile") || errors.As(p.Err, &iv) || strings.Contains(p.Message, "is not one of its options") || strings.Contains(p.Fix, "counts only in a file you trust") {
				continue
			}
			t.Errorf("example %d:\n%s\nproblem: %s", n, src, p)
		}
	}
	t.Logf("checked %d examples", n)
	if n < 5 {
		t.Errorf("found %d complete examples, want at least 5", n)
	}
}
