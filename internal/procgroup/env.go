package procgroup

import (
	"maps"
	"os"
	"slices"
	"strings"
)

// BaseEnv names the variables of Switchboard's environment that every
// child gets: what a program needs to be found and to run, and nothing
// that may be secret. A stdio server gets these; a hook command gets a few
// more.
var BaseEnv = []string{"PATH", "HOME", "LANG", "TMPDIR"}

// Env is the environment a child starts with, sorted: the variables of
// Switchboard's environment that base names (the whole of it when
// inherit), then each of layers in order, each winning over what comes
// before. Switchboard's own environment — a daemon's tokens, keys and
// passwords — reaches a child only through inherit or a layer.
func Env(base []string, inherit bool, layers ...map[string]string) []string {
	env := map[string]string{}
	if inherit {
		for _, kv := range os.Environ() {
			if k, v, ok := strings.Cut(kv, "="); ok {
				env[k] = v
			}
		}
	} else {
		for _, k := range base {
			if v, ok := os.LookupEnv(k); ok {
				env[k] = v
			}
		}
	}
	for _, l := range layers {
		maps.Copy(env, l)
	}
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	slices.Sort(out)
	return out
}
