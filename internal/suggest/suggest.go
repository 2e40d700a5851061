// Package suggest finds the known names closest to a mistyped one, for the
// "did you mean" part of error messages (unknown servers, tools, prompts,
// commands and flags). Its [Distance] is the repository's one edit
// distance: the configuration decoder measures unknown keys with it too,
// under its own, stricter threshold.
package suggest

import (
	"sort"
	"strings"
)

// Closest returns up to n candidates close to name, closest first: those
// within an edit distance of about a third of the name's length, plus those
// that contain name or are contained in it (case-insensitively). Ties keep
// the candidates' order.
func Closest(name string, candidates []string, n int) []string {
	type scored struct {
		s    string
		d, i int
	}
	lname := strings.ToLower(name)
	limit := max(2, len([]rune(name))/3)
	var out []scored
	seen := map[string]bool{}
	for i, c := range candidates {
		if seen[c] || c == name {
			continue
		}
		seen[c] = true
		lc := strings.ToLower(c)
		d := Distance(lname, lc)
		if d > limit && !(lname != "" && (strings.Contains(lc, lname) || strings.Contains(lname, lc))) {
			continue
		}
		out = append(out, scored{c, d, i})
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].d < out[b].d })
	res := make([]string, 0, min(n, len(out)))
	for _, s := range out {
		if len(res) == n {
			break
		}
		res = append(res, s.s)
	}
	return res
}

// Distance is the edit distance between a and b, by rune: insertions,
// deletions, substitutions and swaps of two adjacent runes ("ulr" for
// "url", the commonest typo) each count one (Damerau–Levenshtein, in its
// optimal string alignment form: no substring is edited twice).
func Distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}
