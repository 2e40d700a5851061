package config

import (
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-mcp/switchboard/internal/config/schema"
)

// TestServerFieldsMatchSchema keeps the table the client formats map their
// keys onto (serverFields) in step with the schema's server keys.
func TestServerFieldsMatchSchema(t *testing.T) {
	var want []string
	st := reflect.TypeOf(schema.Server{})
	for i := range st.NumField() {
		key, _, _ := strings.Cut(st.Field(i).Tag.Get("json"), ",")
		want = append(want, key)
	}
	var got []string
	for _, f := range serverFields {
		got = append(got, f.name)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("serverFields and schema.Server differ (-schema +serverFields):\n%s", diff)
	}
}
