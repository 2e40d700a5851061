package config

import (
	"regexp"
	"sync"
)

// lazyRegexp returns expr compiled on first use rather than when the
// program starts: most processes that link this package (a CLI command, a
// test's child server) never check the kind of value a pattern is for, and
// a package-level regexp.MustCompile made each of them pay for all of them.
func lazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}
