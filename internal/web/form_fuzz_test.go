package web

import (
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/switchboard-mcp/switchboard/internal/config"
)

// FuzzParseFields: the hooks page's key=value lines never panic; every key
// read is trimmed and not empty, and a line with no = (or an empty key) is
// an error naming its line.
func FuzzParseFields(f *testing.F) {
	for _, s := range []string{"a=1\n\n b = two words \n", "novalue", "x={\"a\":[1,2]}\ny=\"q\"", "=v", "k=\r\n", "a=1\na=2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := parseFields(s)
		if err != nil {
			if !strings.Contains(err.Error(), "line ") {
				t.Fatalf("error %q does not name the line", err)
			}
			return
		}
		for k := range got {
			if k == "" || k != strings.TrimSpace(k) || strings.Contains(k, "\n") {
				t.Fatalf("key %q read from %q", k, s)
			}
		}
	})
}

// FuzzParseKV: the server form's KEY=VALUE lines never panic; what the
// form shows for an entry (values hidden) reads back as that entry's
// values; a bad line is an error on the field, never a half-read pair.
func FuzzParseKV(f *testing.F) {
	f.Add("A=1\nB=${TOKEN}\n", "A", "secret")
	f.Add("=x\nnovalue\n", "K", "v")
	f.Add("A=********\n", "B", "x")
	f.Add("K=a=b=c\r\n", "K", "")
	f.Fuzz(func(t *testing.T, text, oldKey, oldValue string) {
		old := []config.KeyValue{{Key: oldKey, Value: oldValue}}
		errs := map[string][]string{}
		got := parseKV(text, old, "env", errs)
		for _, kv := range got {
			if kv.Key == "" || kv.Key != strings.TrimSpace(kv.Key) || kv.Value == hiddenValue && !(kv.Key == oldKey && oldValue == hiddenValue) {
				t.Fatalf("pair %+v read from %q (old %q=%q)", kv, text, oldKey, oldValue)
			}
		}
		for _, e := range errs["env"] {
			if !strings.HasPrefix(e, "line ") {
				t.Fatalf("error %q does not name the line", e)
			}
		}
		// The form's own rendering of a valid entry reads back whole.
		key := strings.TrimSpace(oldKey)
		if key == "" || strings.ContainsAny(oldKey, "=\n\r") || strings.ContainsAny(oldValue, "\n\r") || !utf8.ValidString(oldKey+oldValue) {
			return
		}
		entry := []config.KeyValue{{Key: key, Value: oldValue}}
		errs = map[string][]string{}
		back := parseKV(kvText(entry), entry, "env", errs)
		if len(errs) != 0 || !slices.Equal(back, entry) {
			t.Fatalf("kvText(%+v) read back as %+v (errors %v)", entry, back, errs)
		}
	})
}

// FuzzParseSince: the history filter's time never panics; a time it
// accepts, written as RFC 3339, reads back as the same instant.
func FuzzParseSince(f *testing.F) {
	for _, s := range []string{"2026-01-02T15:04", "2026-01-02", "2026-01-02T15:04:05Z", "2026-01-02T15:04:05+02:00", "yesterday", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := parseSince(s)
		if err != nil {
			if !strings.Contains(err.Error(), "is not a time") {
				t.Fatalf("error %q", err)
			}
			return
		}
		back, err := parseSince(got.Format(time.RFC3339Nano))
		if err != nil || !back.Equal(got) {
			t.Fatalf("%q read as %v, which reads back as %v (%v)", s, got, back, err)
		}
	})
}
