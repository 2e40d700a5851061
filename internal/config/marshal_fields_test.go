package config

import (
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/config/schema"
)

// fill sets every field of v (a pointer) that is a plain value to a
// non-zero one, and every nested struct (through pointers and one-element
// slices) the same way: a resolved block as full as it can be.
func fill(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		fill(v.Elem())
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i))
			}
		}
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fill(v.Index(0))
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		e := reflect.New(v.Type().Elem()).Elem()
		fill(e)
		m.SetMapIndex(reflect.ValueOf("K").Convert(v.Type().Key()), e)
		v.Set(m)
	case reflect.String:
		v.SetString("v1")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int64:
		if v.Type() == durationType {
			v.SetInt(int64(7 * time.Second))
		} else {
			v.SetInt(7)
		}
	case reflect.Float64:
		v.SetFloat(0.5)
	}
}

// shown is c as config show puts it into the file's types.
func shown(c Config) schema.File { return fileOf(&c) }

// unset lists the fields of a struct of package schema that are nil.
func unset(v any) []string {
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Pointer {
		rv = rv.Elem()
	}
	var out []string
	for i := range rv.NumField() {
		f := rv.Field(i)
		switch f.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Map:
			if f.IsNil() {
				out = append(out, rv.Type().Field(i).Name)
			}
		}
	}
	return out
}

// TestShowWritesEveryKey fills each resolved block with values that are
// all set, puts it back into the file's type as config show does, and
// checks, by reflection over the schema types, that every key of the
// block is written: a field added to a block of package schema is written
// by config show as soon as the resolved block has a field of the same
// name (writeFields), and this test fails for one that has neither that
// nor code of its own. Only the keys of another transport, and those
// listed here with why, are not written.
func TestShowWritesEveryKey(t *testing.T) {
	t.Parallel()
	resolved := func(v any) any {
		p := reflect.New(reflect.TypeOf(v))
		fill(p)
		return p.Elem().Interface()
	}
	server := func(tr Transport, docker bool) Server {
		s := resolved(Server{}).(Server)
		s.Transport, s.Session, s.NoIdentityMeta = tr, SessionPerClient, true
		if !docker {
			s.Docker = nil
		}
		return s
	}
	// notWritten are the keys a test value does not reach: alternatives of
	// one another, and keys of other transports. env_file is never written:
	// config show writes the env it was merged into.
	notWritten := func(tr Transport, extra ...string) []string {
		var out []string
		for _, sf := range serverFields {
			if !sf.transports.has(tr) {
				out = append(out, reflect.TypeFor[schema.Server]().FieldByIndex(sf.index).Name)
			}
		}
		if tr == TransportStdio {
			out = append(out, "EnvFile")
		}
		return append(out, extra...)
	}
	for _, tc := range []struct {
		name string
		file any
		want []string // the fields left nil
	}{
		{"defaults", shown(Config{Defaults: resolved(Defaults{}).(Defaults)}).Defaults, nil},
		{"defaults.health", shown(Config{Defaults: resolved(Defaults{}).(Defaults)}).Defaults.Health, nil},
		{"limits", shown(Config{Limits: resolved(Limits{}).(Limits)}).Limits, nil},
		{"gateway", shown(Config{Gateway: resolved(Gateway{}).(Gateway)}).Gateway, nil},
		{"hook_settings", shown(Config{Hooks: resolved(Hooks{}).(Hooks)}).HookSettings, nil},
		{"llm", shown(Config{LLM: resolved(LLM{}).(LLM)}).LLM, nil},
		{"agent", shown(Config{Agent: resolved(Agent{}).(Agent)}).Agent, nil},
		{"audit", shown(Config{Audit: resolved(Audit{}).(Audit)}).Audit, nil},
		{"telemetry", shown(Config{Telemetry: resolved(Telemetry{}).(Telemetry)}).Telemetry, nil},
		{"server oauth", shown(Config{Servers: []Server{{Transport: TransportHTTP, OAuth: ptr(resolved(ServerOAuth{}).(ServerOAuth))}}}).Servers[0].OAuth, nil},
		{"gateway.oauth", shown(Config{Gateway: Gateway{OAuth: ptr(resolved(OAuth{}).(OAuth))}}).Gateway.OAuth, nil},
		{"gateway.oauth.introspection", shown(Config{Gateway: Gateway{OAuth: ptr(resolved(OAuth{}).(OAuth))}}).Gateway.OAuth.Introspection, nil},
		{"gateway.oauth.console", shown(Config{Gateway: Gateway{OAuth: ptr(resolved(OAuth{}).(OAuth))}}).Gateway.OAuth.Console, nil},
		{"stdio server", ptr(shown(Config{Servers: []Server{server(TransportStdio, false)}}).Servers[0]), notWritten(TransportStdio, "Docker")},
		{"docker server", ptr(shown(Config{Servers: []Server{server(TransportStdio, true)}}).Servers[0]), notWritten(TransportStdio, "Command", "Args")},
		{"http server", ptr(shown(Config{Servers: []Server{server(TransportHTTP, false)}}).Servers[0]), notWritten(TransportHTTP)},
		{"sse server", ptr(shown(Config{Servers: []Server{server(TransportSSE, false)}}).Servers[0]), notWritten(TransportSSE)},
		{"websocket server", ptr(shown(Config{Servers: []Server{server(TransportWebSocket, false)}}).Servers[0]), notWritten(TransportWebSocket)},
	} {
		got, want := unset(tc.file), tc.want
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%s: config show leaves out %v, want %v: give the resolved block a field of the same name (or write the key by hand in marshal.go)", tc.name, got, want)
		}
	}
}

// TestWriteFieldsByName checks the by-name passage on a block the code
// base does not have yet: the key is read into, and written back from,
// its resolved field with no code of its own.
func TestWriteFieldsByName(t *testing.T) {
	t.Parallel()
	type fileBlock struct {
		Limit  *int             `json:"limit,omitempty"`
		Wait   *schema.Duration `json:"wait,omitempty"`
		Size   *schema.Size     `json:"size,omitempty"`
		On     *bool            `json:"on,omitempty"`
		Label  *string          `json:"label,omitempty"`
		Tags   []string         `json:"tags,omitempty"`
		Ratio  *float64         `json:"ratio,omitempty"`
		Absent *int             `json:"absent,omitempty"`
	}
	type block struct {
		Limit int
		Wait  time.Duration
		Size  int64
		On    bool
		Label string
		Tags  []string
		Ratio float64
		Other int
	}
	var in fileBlock
	if err := decodeValue(map[string]any{"limit": 3, "wait": "90s", "size": "2KiB", "on": true, "ratio": 0.25}, &in); err != nil {
		t.Fatal(err)
	}
	var b block
	readFields(&b, &in)
	if want := (block{Limit: 3, Wait: 90 * time.Second, Size: 2048, On: true, Ratio: 0.25}); !reflect.DeepEqual(b, want) {
		t.Errorf("read %+v, want %+v", b, want)
	}
	b.Label, b.Tags = "a$b", []string{"x"}
	var out fileBlock
	writeFields(&out, b)
	w := &yamlWriter{}
	w.fields(false, 0, reflect.ValueOf(out))
	if got, want := string(w.bytes()), "limit: 3\nwait: 1m30s\nsize: 2KiB\non: true\nlabel: \"a$$b\"\ntags: [x]\nratio: 0.25\n"; got != want {
		t.Errorf("wrote\n%s\nwant\n%s", got, want)
	}
	if out.Absent != nil {
		t.Errorf("got absent %v, want nil (no resolved field of that name)", out.Absent)
	}
}
