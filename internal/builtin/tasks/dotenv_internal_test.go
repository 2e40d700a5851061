// Internal on purpose: fuzzes the unexported .env parser (parseDotenv) with files no test writes.

package tasks

import (
	"strings"
	"testing"
)

func FuzzParseDotenv(f *testing.F) {
	f.Add("A=1\n# c\nexport B='x y'\nC=\"q\" # c\nD=v #c\n")
	f.Add("=\n'\"\nX=\"unterminated\n")
	f.Fuzz(func(t *testing.T, s string) {
		vals, err := parseDotenv(strings.NewReader(s))
		if err != nil {
			return
		}
		for k := range vals {
			if k != strings.ToUpper(k) || k == "" {
				t.Errorf("key %q is not upper-case and non-empty", k)
			}
		}
	})
}
