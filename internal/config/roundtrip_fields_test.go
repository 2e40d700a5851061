package config

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

// isPlain reports whether a field of package schema holds a plain value:
// a number, boolean, duration, size or string (optional), or a list of
// strings — what passes between the two forms by name.
func isPlain(t reflect.Type) bool {
	if t == stringsType {
		return true
	}
	if t.Kind() != reflect.Pointer {
		return false
	}
	switch t.Elem().Kind() {
	case reflect.String, reflect.Bool, reflect.Int, reflect.Int64, reflect.Float64:
		return true
	}
	return false
}

// TestBlocksRoundTripByName checks, by reflection over the schema types,
// that every plain key of each block passes between the file and the
// resolved block by name in both directions with no code of its own:
// each resolved block, all its fields set, is written as config show
// writes it, read back from that text (tree, schema type, readBlock), and
// must come back the same, key by key. A plain key whose resolved block
// has no field of its name fails here unless listed with why; so a key
// added to a block with a field of the same name on both sides needs
// nothing else to be read, shown and read again.
func TestBlocksRoundTripByName(t *testing.T) {
	t.Parallel()
	// byHand are the plain keys with no resolved field of the same name:
	// their resolved form differs (a negation, a unit in the name).
	byHand := map[string][]string{
		"gateway": {"FastPath"},  // DisableFastPath
		"limits":  {"MaxOutput"}, // MaxOutputBytes (a size)
	}
	for _, tc := range []struct {
		name     string
		resolved any // a pointer to a resolved block, filled
		file     func(any) any
	}{
		{"defaults", &Defaults{}, func(v any) any { return shown(Config{Defaults: *v.(*Defaults)}).Defaults }},
		{"health", &Health{}, func(v any) any { return shown(Config{Defaults: Defaults{Health: *v.(*Health)}}).Defaults.Health }},
		{"limits", &Limits{}, func(v any) any { return shown(Config{Limits: *v.(*Limits)}).Limits }},
		{"history", &History{}, func(v any) any { return shown(Config{History: *v.(*History)}).History }},
		{"gateway", &Gateway{}, func(v any) any { return shown(Config{Gateway: *v.(*Gateway)}).Gateway }},
		{"hook_settings", &HookSettings{}, func(v any) any { return shown(Config{Hooks: Hooks{Settings: *v.(*HookSettings)}}).HookSettings }},
		{"notebook", &Notebook{}, func(v any) any { return shown(Config{Notebook: *v.(*Notebook)}).Notebook }},
		{"llm", &LLM{}, func(v any) any { return shown(Config{LLM: *v.(*LLM)}).LLM }},
		{"agent", &Agent{}, func(v any) any { return shown(Config{Agent: *v.(*Agent)}).Agent }},
		{"audit", &Audit{}, func(v any) any { return shown(Config{Audit: *v.(*Audit)}).Audit }},
		{"telemetry", &Telemetry{}, func(v any) any { return shown(Config{Telemetry: *v.(*Telemetry)}).Telemetry }},
		{"telemetry.metrics", &TelemetryMetrics{}, func(v any) any {
			return shown(Config{Telemetry: Telemetry{Metrics: *v.(*TelemetryMetrics)}}).Telemetry.Metrics
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fill(reflect.ValueOf(tc.resolved))
			f := tc.file(tc.resolved)
			w := &yamlWriter{}
			w.block(0, "blk", f)
			ps := &problems{}
			root := parseTree("f.yaml", w.bytes(), ps)
			if root == nil {
				t.Fatalf("config show wrote\n%s\nwhich does not parse: %v", w.bytes(), ps.errs)
			}
			back := reflect.New(reflect.TypeOf(f).Elem())
			if err := decodeValue(instance(root.get("blk").value, nil), back.Interface()); err != nil {
				t.Fatalf("reading back\n%s: %v", w.bytes(), err)
			}
			got := reflect.New(reflect.TypeOf(tc.resolved).Elem())
			r := &resolver{tree: root, ps: ps, x: &expander{lookup: LookupTestEnv}, lookup: LookupTestEnv}
			r.readBlock(got.Interface(), back.Interface(), []any{"blk"})
			if len(ps.errs) > 0 {
				t.Fatalf("reading back\n%s: %v", w.bytes(), ps.errs)
			}
			want := reflect.ValueOf(tc.resolved).Elem()
			ft := reflect.TypeOf(f).Elem()
			for i := range ft.NumField() {
				sf := ft.Field(i)
				if !isPlain(sf.Type) {
					continue // a block or mapping, written and read by hand
				}
				key, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
				wf := want.FieldByName(sf.Name)
				if !wf.IsValid() {
					if !slices.Contains(byHand[tc.name], sf.Name) {
						t.Errorf("%s has no resolved field %s: give %s one of that name and type, and it is read and shown with no code of its own", key, sf.Name, want.Type())
					}
					continue
				}
				if g := got.Elem().FieldByName(sf.Name); !reflect.DeepEqual(g.Interface(), wf.Interface()) {
					t.Errorf("%s: wrote %v, read back %v\n%s", key, wf.Interface(), g.Interface(), w.bytes())
				}
			}
		})
	}
}
