// Internal on purpose: tests the literal matcher (newLiteral) that String uses for configured secrets.

package redact

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestLiteral compares literal.each with a naive search, on texts where the
// needle's rare byte is rare and where it is everywhere (which makes each
// fall back to strings.Index).
func TestLiteral(t *testing.T) {
	rnd := rand.New(rand.NewPCG(3, 5))
	for range 2000 {
		alphabet := "abcz"[:1+rnd.IntN(4)]
		randText := func(n int) string {
			b := make([]byte, n)
			for i := range b {
				b[i] = alphabet[rnd.IntN(len(alphabet))]
			}
			return string(b)
		}
		needle := randText(1 + rnd.IntN(6))
		text := randText(rnd.IntN(5000))
		var want []int
		for i := 0; i+len(needle) <= len(text); i++ {
			if strings.HasPrefix(text[i:], needle) {
				want = append(want, i)
			}
		}
		var got []int
		newLiteral(needle).each(text, func(i int) { got = append(got, i) })
		if !slices.Equal(got, want) {
			t.Fatalf("each(%q) in %q = %v, want %v", needle, text, got, want)
		}
	}
}
