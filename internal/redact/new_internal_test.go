// Internal on purpose: checks the escaped forms New derives from each secret, which only the Redactor's internals hold.

package redact

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestNew(t *testing.T) {
	r := New([]string{"short", "", "1", "true", "longsecret", "longsecret", "REDACT", "a longer secret", `quo"te<>`})
	want := []string{
		"a%20longer%20secret",
		`quo\"te\u003c\u003e`,
		"a longer secret",
		"a+longer+secret",
		"quo%22te%3C%3E",
		"longsecret",
		`quo\"te<>`,
		`quo"te<>`,
	}
	var got []string
	for _, l := range r.secrets {
		got = append(got, l.s)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("secrets (-want +got):\n%s", diff)
	}
}
