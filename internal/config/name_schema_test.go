package config_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/config/schema"
)

// TestNamePatternsSchemaAndValidatorAgree: servers[].name and
// hooks[].name have their form in the schema (so an editor flags a bad
// one as it is typed), and the schema alone and `config validate` accept
// and refuse the same names, each refused name once, with the words the
// validator always gave.
func TestNamePatternsSchemaAndValidatorAgree(t *testing.T) {
	t.Parallel()
	long := func(n int) string { return strings.Repeat("a", n) }
	for _, c := range []struct {
		kind, name string
		ok         bool
	}{
		{"server", "github", true},
		{"server", "my_server-2", true},
		{"server", "-leading-dash", true},
		{"server", long(config.MaxServerNameLen), true},
		{"server", long(config.MaxServerNameLen + 1), false},
		{"server", "my server", false},
		{"server", "dotted.name", false},
		{"server", "ünïcode", false},
		{"server", "", false},
		{"hook", "notify-on-commit", true},
		{"hook", "v1.2_release", true},
		{"hook", long(config.MaxHookNameLen), true},
		{"hook", long(config.MaxHookNameLen + 1), false},
		{"hook", "-leading-dash", false},
		{"hook", ".hidden", false},
		{"hook", "with space", false},
		{"hook", "", false},
	} {
		t.Run(c.kind+"/"+c.name, func(t *testing.T) {
			var doc map[string]any
			var src, field string
			switch c.kind {
			case "server":
				doc = map[string]any{"servers": []any{map[string]any{"name": c.name, "command": "npx"}}}
				src = fmt.Sprintf("servers:\n  - name: %q\n    command: npx\n", c.name)
				field = "servers[0].name"
			case "hook":
				doc = map[string]any{"hooks": []any{map[string]any{"name": c.name, "on": "tool.after", "actions": []any{map[string]any{"type": "event", "event": "review.requested"}}}}}
				src = fmt.Sprintf("servers: []\nhooks:\n  - name: %q\n    on: tool.after\n    actions:\n      - {type: event, event: review.requested}\n", c.name)
				field = "hooks[0].name"
			}
			vs, err := schema.Validate(doc)
			if err != nil {
				t.Fatal(err)
			}
			var atName int
			for _, v := range vs {
				if strings.Join(v.Path, "/") == strings.NewReplacer("[", "/", "]", "", ".", "/").Replace(field) {
					atName++
				} else {
					t.Errorf("schema: an unexpected violation %+v", v)
				}
			}
			if schemaOK := atName == 0; schemaOK != c.ok {
				t.Errorf("schema: got accepted %v (%+v), want %v", schemaOK, vs, c.ok)
			}

			_, err = config.Parse("sb.yaml", []byte(src), config.TestOpts)
			var ve *config.ValidationError
			if err != nil && !errors.As(err, &ve) {
				t.Fatalf("config validate: %v", err)
			}
			var named []string
			if ve != nil {
				for _, p := range ve.Problems {
					if p.Field == field {
						named = append(named, p.String())
					} else if c.ok || c.name != "" {
						t.Errorf("config validate: an unexpected problem %s", p)
					}
				}
			}
			if validOK := len(named) == 0; validOK != c.ok {
				t.Errorf("config validate: got accepted %v (%q), want %v", validOK, named, c.ok)
			}
			if !c.ok && len(named) != 1 {
				t.Errorf("config validate: %s reported %d times, want once: %q", field, len(named), named)
			}
		})
	}
}
