package catalog

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strconv"
	"strings"
)

// maxNameLen is the longest exposed name. Exposed names match
// ^[a-zA-Z0-9_-]{1,64}$, the tool-name rule of the strictest MCP clients.
const maxNameLen = 64

// nameSep joins server and tool in an exposed name.
const nameSep = "__"

// hashLen is the number of hex digits of the key's hash in a shortened or
// disambiguated name.
const hashLen = 8

// Key identifies a tool (or prompt) by its server and its name there.
type Key struct {
	Server, Name string
}

// compare orders keys by server, then name, byte by byte.
func (k Key) compare(o Key) int {
	return cmp.Or(strings.Compare(k.Server, o.Server), strings.Compare(k.Name, o.Name))
}

// Collision is a set of keys whose exposed names came out the same.
type Collision struct {
	// Name is the exposed name they share; exactly one of them keeps it.
	Name string
	// Keys are the colliding keys, in byte order.
	Keys []Key
}

// ExposedName returns the name under which a server's tool is offered to
// clients: server + "__" + tool, with every character outside [A-Za-z0-9_-]
// replaced by '_'. A name longer than 64 bytes is cut and ends in '_' and 8
// hex digits of a hash of the raw server and tool, so it stays distinct and
// the same from run to run. The result always matches
// ^[a-zA-Z0-9_-]{1,64}$, even for empty or non-UTF-8 input.
//
// Distinct keys can share an exposed name ("a.b" and "a_b"); [AssignNames]
// settles that.
func ExposedName(server, tool string) string {
	name, _ := plainName(Key{server, tool})
	return name
}

// plainName returns k's exposed name and whether it is k's raw server + "__"
// + tool, untouched.
func plainName(k Key) (string, bool) {
	s := sanitizeName(k.Server) + nameSep + sanitizeName(k.Name)
	if len(s) > maxNameLen {
		return hashedName(s, k, hashLen), false
	}
	return s, s == k.Server+nameSep+k.Name
}

// sanitizeName replaces each rune outside [A-Za-z0-9_-] with '_'. Each byte of
// invalid UTF-8 counts as one rune.
func sanitizeName(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case 'a' <= r && r <= 'z', 'A' <= r && r <= 'Z', '0' <= r && r <= '9', r == '_', r == '-':
			return r
		}
		return '_'
	}, s)
}

// hashedName returns the sanitized name s cut so that '_' and the first n
// hex digits of k's hash fit within maxNameLen, followed by them. n is at
// most 2*sha256.Size-1.
func hashedName(s string, k Key, n int) string {
	sum := sha256.Sum256([]byte(k.Server + "\x00" + k.Name))
	h := hex.EncodeToString(sum[:])[:n]
	keep := min(len(s), maxNameLen-1-n)
	return s[:keep] + "_" + h
}

// AssignNames gives every key a distinct exposed name and reports the keys
// whose [ExposedName]s collided. The result depends only on the set of keys:
// not on their order, nor on duplicates.
//
// A key whose exposed name no other key shares gets its ExposedName. In a
// collision, one key keeps the name: the one whose server + "__" + tool needed
// no change at all, or, if none or several did, the smallest of those (or of
// all) in byte order. Each other key gets its name with '_' and 8 hex digits
// of a hash of its raw server and tool appended (cut to fit 64 bytes). In
// the unlikely case that this name is taken too, more hex digits are used,
// and past that a counter.
//
// Collisions are sorted by Name. Only keys that share an ExposedName are
// reported; a disambiguated name meeting another key's name is settled
// silently by the step above.
func AssignNames(keys []Key) (map[Key]string, []Collision) {
	uniq := slices.Clone(keys)
	slices.SortFunc(uniq, Key.compare)
	uniq = slices.Compact(uniq)

	type group struct {
		name   string
		keys   []Key // in byte order
		winner int   // index into keys of the one that keeps name
		clean  bool  // whether the winner's name is its raw name
	}
	groups := map[string]*group{}
	var order []*group // by first key, hence deterministic
	for _, k := range uniq {
		name, clean := plainName(k)
		g := groups[name]
		if g == nil {
			g = &group{name: name, clean: clean}
			groups[name] = g
			order = append(order, g)
		} else if clean && !g.clean {
			// Keys arrive in byte order: the first clean one wins.
			g.winner, g.clean = len(g.keys), true
		}
		g.keys = append(g.keys, k)
	}

	names := make(map[Key]string, len(uniq))
	taken := make(map[string]bool, len(uniq))
	// Winners first, so that a disambiguated name never takes a name a key
	// has by right.
	for _, g := range order {
		names[g.keys[g.winner]] = g.name
		taken[g.name] = true
	}
	var collisions []Collision
	for _, g := range order {
		if len(g.keys) < 2 {
			continue
		}
		collisions = append(collisions, Collision{Name: g.name, Keys: g.keys})
		for i, k := range g.keys {
			if i == g.winner {
				continue
			}
			name := disambiguate(k, taken)
			names[k] = name
			taken[name] = true
		}
	}
	slices.SortFunc(collisions, func(a, b Collision) int { return strings.Compare(a.Name, b.Name) })
	return names, collisions
}

// disambiguate returns a name for k, which lost a collision, that is not
// taken.
func disambiguate(k Key, taken map[string]bool) string {
	s := sanitizeName(k.Server) + nameSep + sanitizeName(k.Name)
	for _, n := range []int{hashLen, 16, 24, 32, 48, 2*sha256.Size - 1} {
		if name := hashedName(s, k, n); !taken[name] {
			return name
		}
	}
	base := hashedName(s, k, hashLen)
	for i := 2; ; i++ {
		suffix := "_" + strconv.Itoa(i)
		if name := base[:min(len(base), maxNameLen-len(suffix))] + suffix; !taken[name] {
			return name
		}
	}
}

// SplitExposed splits an exposed name at its first "__" into server and
// tool. It reverses [ExposedName] only when neither part needed changing and
// the server name holds no "__"; to resolve a name a client sent, look it up
// in the catalog's map from exposed names instead.
func SplitExposed(name string) (server, tool string, ok bool) {
	server, tool, ok = strings.Cut(name, nameSep)
	if !ok {
		return "", "", false
	}
	return server, tool, true
}
