package config

import (
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// scribble changes every value reachable from v (through pointers,
// slices, maps and struct fields) in place.
func scribble(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			scribble(v.Elem())
		}
	case reflect.Interface:
		if !v.IsNil() {
			e := reflect.New(v.Elem().Type()).Elem()
			e.Set(v.Elem())
			scribble(e)
			v.Set(e)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Field(i).CanSet() {
				scribble(v.Field(i))
			}
		}
	case reflect.Slice:
		for i := range v.Len() {
			scribble(v.Index(i))
		}
	case reflect.Map:
		for it := v.MapRange(); it.Next(); {
			e := reflect.New(v.Type().Elem()).Elem()
			e.Set(it.Value())
			scribble(e)
			v.SetMapIndex(it.Key(), e)
		}
	case reflect.String:
		v.SetString(v.String() + "!")
	case reflect.Bool:
		v.SetBool(!v.Bool())
	case reflect.Int, reflect.Int64:
		v.SetInt(v.Int() + 1)
	case reflect.Float64:
		v.SetFloat(v.Float() + 1)
	}
}

// TestRedactedSharesNothing fills every field of a configuration, by
// reflection, takes its redacted copy and changes everything the copy
// reaches: the original must not change. A field added to any resolved
// type is covered without code of its own (deepCopy); the copies by hand
// this replaced shared a server's roots, a hook's parameters and the
// agent's lists with the original.
func TestRedactedSharesNothing(t *testing.T) {
	t.Parallel()
	full := func() *Config {
		c := &Config{}
		fill(reflect.ValueOf(c))
		c.Hooks.List[0].Actions[0].Params[0].Literal = map[string]any{"k": []any{"v"}}
		c.Servers[0].Env["API_TOKEN"] = "secret"
		return c
	}
	c, want := full(), full()
	red := c.Redacted()
	scribble(reflect.ValueOf(red))
	if diff := cmp.Diff(want, c); diff != "" {
		t.Errorf("changing the redacted copy changed the original (-want +got):\n%s", diff)
	}
	if got := red.Servers[0].Env["API_TOKEN"]; got != Redaction+"!" {
		t.Errorf("redacted env API_TOKEN = %q, want the redaction (then scribbled)", got)
	}
}

// TestSameBlockSeesEveryField changes each field of a block, one at a
// time, by reflection: the block is then no longer its default (config
// show writes it) nor equal to the one before (a reload rebuilds what it
// configures), whatever field was added; its Pos alone changes nothing.
func TestSameBlockSeesEveryField(t *testing.T) {
	t.Parallel()
	check := func(name string, base any, same func(a, b any) bool) {
		v := reflect.ValueOf(base)
		for i := range v.NumField() {
			changed := reflect.New(v.Type()).Elem()
			changed.Set(v)
			f := changed.Field(i)
			fill(f.Addr())
			want := v.Type().Field(i).Name == "Pos"
			if got := same(changed.Interface(), base); got != want {
				t.Errorf("%s with %s changed: same = %v, want %v", name, v.Type().Field(i).Name, got, want)
			}
		}
	}
	check("gateway", DefaultGateway(), func(a, _ any) bool { return a.(Gateway).isDefault() })
	check("agent", DefaultAgent(), func(a, _ any) bool { return a.(Agent).isDefault() })
	check("telemetry", Telemetry{}, func(a, b any) bool { return a.(Telemetry).Equal(b.(Telemetry)) })
	check("telemetry (default)", Telemetry{}, func(a, _ any) bool { return a.(Telemetry).isDefault() })
	check("audit", defaultAudit(), func(a, b any) bool { return a.(Audit).Equal(b.(Audit)) })
}
