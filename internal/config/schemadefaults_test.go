package config_test

import (
	"encoding/json"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/config/schema"
	"github.com/switchboard-mcp/switchboard/internal/oauth"
)

// schemaDefault is one key the schema gives a default: its path in the
// file ("servers[].timeout") and the default, as the schema has it.
type schemaDefault struct {
	path  string
	value any
}

// schemaDefaults walks the generated schema and returns every key with a
// default, by path, sorted.
func schemaDefaults(t *testing.T) []schemaDefault {
	t.Helper()
	b, err := schema.Generate("")
	if err != nil {
		t.Fatal(err)
	}
	var root map[string]any
	if err := json.Unmarshal(b, &root); err != nil {
		t.Fatal(err)
	}
	defs, _ := root["$defs"].(map[string]any)
	var out []schemaDefault
	var walk func(node map[string]any, path string, seen map[string]bool)
	walk = func(node map[string]any, path string, seen map[string]bool) {
		if d, ok := node["default"]; ok {
			out = append(out, schemaDefault{path: path, value: d})
		}
		if ref, ok := node["$ref"].(string); ok {
			name := strings.TrimPrefix(ref, "#/$defs/")
			if def, ok := defs[name].(map[string]any); ok && !seen[name] {
				inner := map[string]bool{name: true}
				for k := range seen {
					inner[k] = true
				}
				walk(def, path, inner)
			}
		}
		if props, ok := node["properties"].(map[string]any); ok {
			for k, v := range props {
				if m, ok := v.(map[string]any); ok {
					walk(m, strings.TrimPrefix(path+"."+k, "."), seen)
				}
			}
		}
		if items, ok := node["items"].(map[string]any); ok {
			walk(items, path+"[]", seen)
		}
	}
	walk(root, "", map[string]bool{})
	// A $ref's target may carry the default too (a Duration's own node
	// has none, but a property's sibling keywords do): one entry a path.
	sort.Slice(out, func(i, j int) bool { return out[i].path < out[j].path })
	uniq := out[:0]
	for i, d := range out {
		if i > 0 && d.path == out[i-1].path {
			continue
		}
		uniq = append(uniq, d)
	}
	return uniq
}

// defaultContexts are, for each block a defaulted key lives in, minimal
// files in which the block is valid: the key is added to the block (the
// last element of each list in the path). Several are tried in order, for
// keys that only some shapes of a block take (a server's keys for one
// transport).
var defaultContexts = map[string][]string{
	"": {`{}`},
	// A server's keys that fall back to defaults: have no default of their
	// own; the defaults block here, with values of its own, tells.
	"servers[]": {
		`{"defaults": ` + ownDefaults + `, "servers": [{"name": "s", "command": "npx", "args": ["-y", "pkg"]}]}`,
		`{"defaults": ` + ownDefaults + `, "servers": [{"name": "s", "transport": "http", "url": "https://mcp.example.com/mcp"}]}`,
	},
	"servers[].oauth": {
		`{"servers": [{"name": "s", "transport": "http", "url": "https://mcp.example.com/mcp", "oauth": {}}]}`,
	},
	"gateway.views[]": {
		`{"servers": [{"name": "s", "command": "npx", "args": ["-y", "pkg"]}], "gateway": {"views": [{"name": "v", "servers": ["s"]}]}}`,
	},
	"gateway.oauth": {
		`{"gateway": {"oauth": {"resource": "https://mcp.example.com", "issuer": "https://login.example.com"}}}`,
	},
	// A block that is there turns its feature on; its keys' defaults are
	// those of the block that is there.
	"gateway.oauth.introspection": {
		`{"gateway": {"oauth": {"resource": "https://mcp.example.com", "issuer": "https://login.example.com", "introspection": {"client_id": "gw", "client_secret_env": "GW_SECRET"}}}}`,
	},
	"audit":             {`{"audit": {"file": "-"}}`},
	"telemetry":         {`{"telemetry": {"endpoint": "http://localhost:4318"}}`},
	"telemetry.metrics": {`{"telemetry": {"endpoint": "http://localhost:4318", "metrics": {}}}`},
	"hooks[]": {
		`{"hooks": [{"name": "h", "on": "tool.failed", "actions": [{"type": "command", "command": ["true"]}]}]}`,
	},
	"hooks[].actions[].params[]": {
		`{"servers": [{"name": "s", "command": "npx", "args": ["-y", "pkg"]}], "hooks": [{"name": "h", "on": "tool.failed", "actions": [{"type": "mcp", "server": "s", "tool": "t", "params": [{"param": "p", "value": "x"}]}]}]}`,
	},
	"hooks[].actions[].fields[]": {
		`{"hooks": [{"name": "h", "on": "tool.failed", "actions": [{"type": "event", "event": "x.y", "fields": [{"field": "f", "value": "x"}]}]}]}`,
	},
	"notebook.bindings[]": {
		`{"servers": [{"name": "s", "command": "npx", "args": ["-y", "pkg"]}], "notebook": {"bindings": [{"heading": "## H", "server": "s"}]}}`,
	},
}

// ownDefaults is a defaults block whose every value differs from its
// default.
const ownDefaults = `{"request_timeout": "41s", "connect_timeout": "42s", "max_retries": 4, "discovery_ttl": "43m",
	"health": {"ping_interval": "44s", "ping_timeout": "9s", "max_failures": 5}}`

// contextFor returns the files to try for a key at path: those of its
// nearest block in defaultContexts (a nested object the key reaches, such
// as gateway.oauth.cache, is created on the way).
func contextFor(path string) (block string, files []string) {
	parts := strings.Split(path, ".")
	for i := len(parts) - 1; i >= 0; i-- {
		block = strings.Join(parts[:i], ".")
		if files, ok := defaultContexts[block]; ok {
			return block, files
		}
	}
	return "", nil
}

// withKey returns file with the key at path set to v: it walks path from
// the root, into the last element of each list and creating the objects
// on the way that are not there.
func withKey(t *testing.T, file, path string, v any) []byte {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal([]byte(file), &doc); err != nil {
		t.Fatalf("context %s: %v", file, err)
	}
	parts := strings.Split(path, ".")
	cur := doc
	for _, p := range parts[:len(parts)-1] {
		key, list := strings.CutSuffix(p, "[]")
		next, ok := cur[key]
		if !ok {
			if list {
				t.Fatalf("context %s has no %s list for %s", file, key, path)
			}
			next = map[string]any{}
			cur[key] = next
		}
		if list {
			l := next.([]any)
			next = l[len(l)-1]
		}
		cur = next.(map[string]any)
	}
	cur[parts[len(parts)-1]] = v
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// sameDefault writes the value the Go code uses where a resolved field
// keeps "" or 0 for "the default" (the field's doc says so), so that the
// comparison is of values, not of spellings.
func sameDefault(c *config.Config) {
	for i := range c.Servers {
		s := &c.Servers[i]
		if s.Auth == "" {
			s.Auth = config.AuthShared
		}
		if s.Session == "" {
			s.Session = config.SessionShared
		}
		if s.MaxSessions == 0 {
			s.MaxSessions = config.DefaultMaxUpstreamSessions
		}
		if s.OAuth != nil && s.OAuth.Grant == "" {
			s.OAuth.Grant = string(oauth.GrantAuthorizationCode)
		}
	}
	c.Notebook.Concurrency = c.Notebook.EffectiveConcurrency()
	c.Notebook.MaxBlocks = c.Notebook.EffectiveMaxBlocks()
}

// TestSchemaDefaultsAreTheGoDefaults checks every default the schema
// publishes (editors show it; docs/configuration.md repeats it) against
// the value the Go code uses: a file that writes a key with its schema
// default must resolve to the same configuration as the file without the
// key.
func TestSchemaDefaultsAreTheGoDefaults(t *testing.T) {
	t.Parallel()
	defaults := schemaDefaults(t)
	if len(defaults) < 79 {
		t.Fatalf("found %d keys with a default in the schema, want the 79 or more it has", len(defaults))
	}
	opts := config.Options{
		LookupEnv: func(k string) (string, bool) { return "s3cret", k == "GW_SECRET" },
		UserEnv:   func(string) (string, bool) { return "", false },
		WorkDir:   t.TempDir(),
	}
	ignore := cmp.Options{
		cmpopts.IgnoreFields(config.Config{}, "Warnings"),
		cmpopts.IgnoreTypes(config.Pos{}), // where an entry starts moves with the keys before it
		cmp.Exporter(func(reflect.Type) bool { return true }),
		cmpopts.EquateEmpty(),
	}
	for _, d := range defaults {
		t.Run(d.path, func(t *testing.T) {
			block, files := contextFor(d.path)
			if files == nil {
				t.Fatalf("no context for %s: add its block to defaultContexts", d.path)
			}
			var problems []string
			for _, file := range files {
				without, err := config.Parse("sb.yaml", []byte(file), opts)
				if err != nil {
					t.Fatalf("context for %s (%s) does not load: %v", block, file, err)
				}
				src := withKey(t, file, d.path, d.value)
				with, err := config.Parse("sb.yaml", src, opts)
				if err != nil {
					problems = append(problems, err.Error())
					continue
				}
				sameDefault(without)
				sameDefault(with)
				if diff := cmp.Diff(without, with, ignore); diff != "" {
					t.Errorf("%s: the schema's default %v resolves to another configuration than leaving the key out (-without +with):\n%s",
						d.path, d.value, diff)
				}
				return
			}
			t.Fatalf("%s: %v, the schema's default, is refused in every context: %s", d.path, d.value, strings.Join(problems, "; "))
		})
	}
}
