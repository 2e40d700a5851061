// Internal on purpose: tests the name mapping (sanitizeName, hashedName, disambiguate) over inputs no real server list would produce at once.

package catalog

import (
	"crypto/sha256"
	"encoding/hex"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var exposedNameRE = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// nameHashHex is the test's own statement of the hash in exposed names.
func nameHashHex(server, tool string, n int) string {
	sum := sha256.Sum256([]byte(server + "\x00" + tool))
	return hex.EncodeToString(sum[:])[:n]
}

func TestExposedName(t *testing.T) {
	tests := []struct {
		name         string
		server, tool string
		want         string
	}{
		{"plain", "github", "create_issue", "github__create_issue"},
		{"hyphens and digits kept", "my-server2", "get-Thing9", "my-server2__get-Thing9"},
		{"dots slashes spaces", "my.server", "files/read all", "my_server__files_read_all"},
		{"unicode by rune", "café", "ñame✓", "caf____ame_"},
		{"emoji is one rune", "s", "🔥", "s___"},
		{"invalid UTF-8 byte by byte", "s\xff\xfe", "t", "s____t"},
		{"empty tool", "srv", "", "srv__"},
		{"empty server and tool", "", "", "__"},
		{"exactly 64", "s", strings.Repeat("t", 61), "s__" + strings.Repeat("t", 61)},
		{"65 is shortened", "s", strings.Repeat("t", 62), "s__" + strings.Repeat("t", 52) + "_" + nameHashHex("s", strings.Repeat("t", 62), 8)},
		// Pinned: a change here renames tools for every client.
		{"stable across runs", "github", strings.Repeat("t", 60), "github__" + strings.Repeat("t", 47) + "_4d01e9b3"},
		{"very long server", strings.Repeat("s", 100), "read", strings.Repeat("s", 55) + "_4b4a2d20"},
		{"long and replaced", strings.Repeat("é", 40), strings.Repeat(".", 40), strings.Repeat("_", 55) + "_" + nameHashHex(strings.Repeat("é", 40), strings.Repeat(".", 40), 8)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ExposedName(tt.server, tt.tool)
			if got != tt.want {
				t.Errorf("ExposedName(%q, %q): got %q, want %q", tt.server, tt.tool, got, tt.want)
			}
			if !exposedNameRE.MatchString(got) {
				t.Errorf("ExposedName(%q, %q) = %q does not match %s", tt.server, tt.tool, got, exposedNameRE)
			}
		})
	}
}

func TestExposedNameLongDistinct(t *testing.T) {
	// Same first 55 bytes, different tails: the hashes keep them apart.
	prefix := strings.Repeat("x", 70)
	a, b := ExposedName("srv", prefix+"a"), ExposedName("srv", prefix+"b")
	if a == b {
		t.Errorf("ExposedName of two long tools sharing a prefix: both %q, want distinct", a)
	}
	if len(a) != 64 || len(b) != 64 {
		t.Errorf("lengths: got %d and %d, want 64", len(a), len(b))
	}
}

func TestAssignNames(t *testing.T) {
	hashed := func(server, tool string) string {
		return ExposedName(server, tool) + "_" + nameHashHex(server, tool, 8)
	}
	tests := []struct {
		name           string
		keys           []Key
		want           map[Key]string
		wantCollisions []Collision
	}{
		{
			name: "no collision",
			keys: []Key{{"b", "y"}, {"a.x", "z"}, {"a", "x"}},
			want: map[Key]string{{"a", "x"}: "a__x", {"a.x", "z"}: "a_x__z", {"b", "y"}: "b__y"},
		},
		{
			name: "untouched key keeps the name",
			keys: []Key{{"a.b", "c"}, {"a_b", "c"}},
			want: map[Key]string{{"a_b", "c"}: "a_b__c", {"a.b", "c"}: "a_b__c_8b745bb4"},
			wantCollisions: []Collision{
				{Name: "a_b__c", Keys: []Key{{"a.b", "c"}, {"a_b", "c"}}},
			},
		},
		{
			name: "all replaced: smallest key keeps the name",
			keys: []Key{{"a.b", "c"}, {"a b", "c"}, {"a/b", "c"}},
			want: map[Key]string{
				{"a b", "c"}: "a_b__c",
				{"a.b", "c"}: hashed("a.b", "c"),
				{"a/b", "c"}: hashed("a/b", "c"),
			},
			wantCollisions: []Collision{
				{Name: "a_b__c", Keys: []Key{{"a b", "c"}, {"a.b", "c"}, {"a/b", "c"}}},
			},
		},
		{
			name: "two untouched: smallest keeps the name",
			keys: []Key{{"a__b", "c"}, {"a", "b__c"}},
			want: map[Key]string{{"a", "b__c"}: "a__b__c", {"a__b", "c"}: hashed("a__b", "c")},
			wantCollisions: []Collision{
				{Name: "a__b__c", Keys: []Key{{"a", "b__c"}, {"a__b", "c"}}},
			},
		},
		{
			name: "untouched key beats a smaller one",
			keys: []Key{{"a b", "c"}, {"a_b", "c"}},
			want: map[Key]string{{"a_b", "c"}: "a_b__c", {"a b", "c"}: hashed("a b", "c")},
			wantCollisions: []Collision{
				{Name: "a_b__c", Keys: []Key{{"a b", "c"}, {"a_b", "c"}}},
			},
		},
		{
			name: "duplicates are one key",
			keys: []Key{{"a", "x"}, {"a", "x"}, {"a", "x"}},
			want: map[Key]string{{"a", "x"}: "a__x"},
		},
		{
			name: "collision groups sorted by name",
			keys: []Key{{"z.z", "t"}, {"z_z", "t"}, {"a.a", "t"}, {"a_a", "t"}, {"m", "t"}},
			want: map[Key]string{
				{"a_a", "t"}: "a_a__t", {"a.a", "t"}: hashed("a.a", "t"),
				{"z_z", "t"}: "z_z__t", {"z.z", "t"}: hashed("z.z", "t"),
				{"m", "t"}: "m__t",
			},
			wantCollisions: []Collision{
				{Name: "a_a__t", Keys: []Key{{"a.a", "t"}, {"a_a", "t"}}},
				{Name: "z_z__t", Keys: []Key{{"z.z", "t"}, {"z_z", "t"}}},
			},
		},
		{
			// The loser's hashed name is another key's own name: it takes
			// more hex digits instead.
			name: "hashed name taken",
			keys: []Key{{"a.b", "c"}, {"a_b", "c"}, {"a_b", "c_8b745bb4"}},
			want: map[Key]string{
				{"a_b", "c"}:          "a_b__c",
				{"a_b", "c_8b745bb4"}: "a_b__c_8b745bb4",
				{"a.b", "c"}:          "a_b__c_" + nameHashHex("a.b", "c", 16),
			},
			wantCollisions: []Collision{
				{Name: "a_b__c", Keys: []Key{{"a.b", "c"}, {"a_b", "c"}}},
			},
		},
		{
			name: "long names collide on sanitizing",
			keys: []Key{{"srv", strings.Repeat("x", 70) + ".y"}, {"srv", strings.Repeat("x", 70) + "_y"}},
			want: map[Key]string{
				{"srv", strings.Repeat("x", 70) + ".y"}: ExposedName("srv", strings.Repeat("x", 70)+".y"),
				{"srv", strings.Repeat("x", 70) + "_y"}: ExposedName("srv", strings.Repeat("x", 70)+"_y"),
			},
		},
		{
			name: "empty input",
			keys: nil,
			want: map[Key]string{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, collisions := AssignNames(tt.keys)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("names (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantCollisions, collisions); diff != "" {
				t.Errorf("collisions (-want +got):\n%s", diff)
			}
			checkAssignedNames(t, tt.keys, got, collisions)
		})
	}
}

func TestAssignNamesOrderIndependent(t *testing.T) {
	var keys []Key
	for _, server := range []string{"git.hub", "git_hub", "git hub", "fs", "f.s", "ünï", "___", strings.Repeat("long", 20)} {
		for _, tool := range []string{"read", "re.ad", "re_ad", "", "write/all", strings.Repeat("t", 50)} {
			keys = append(keys, Key{server, tool})
		}
	}
	wantNames, wantCollisions := AssignNames(keys)
	if len(wantCollisions) == 0 {
		t.Fatal("the fixture has no collisions; it should")
	}
	checkAssignedNames(t, keys, wantNames, wantCollisions)

	r := rand.New(rand.NewPCG(1, 2))
	for i := range 100 {
		shuffled := slices.Clone(keys)
		// Add a few duplicates too.
		for range r.IntN(5) {
			shuffled = append(shuffled, keys[r.IntN(len(keys))])
		}
		r.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		names, collisions := AssignNames(shuffled)
		if diff := cmp.Diff(wantNames, names); diff != "" {
			t.Fatalf("shuffle %d: names (-want +got):\n%s", i, diff)
		}
		if diff := cmp.Diff(wantCollisions, collisions); diff != "" {
			t.Fatalf("shuffle %d: collisions (-want +got):\n%s", i, diff)
		}
	}
}

func TestDisambiguateExhausted(t *testing.T) {
	k := Key{"a.b", "c"}
	s := "a_b__c"
	taken := map[string]bool{}
	for _, n := range []int{8, 16, 24, 32, 48, 63} {
		taken[hashedName(s, k, n)] = true
	}
	base := "a_b__c_" + nameHashHex("a.b", "c", 8)
	if got, want := disambiguate(k, taken), base+"_2"; got != want {
		t.Errorf("disambiguate with every hash taken: got %q, want %q", got, want)
	}
	taken[base+"_2"] = true
	if got, want := disambiguate(k, taken), base+"_3"; got != want {
		t.Errorf("disambiguate with _2 taken: got %q, want %q", got, want)
	}

	long := Key{strings.Repeat("s", 100), "t"}
	ls := sanitizeName(long.Server) + "__t"
	taken = map[string]bool{}
	for _, n := range []int{8, 16, 24, 32, 48, 63} {
		name := hashedName(ls, long, n)
		if !exposedNameRE.MatchString(name) {
			t.Errorf("hashedName with %d digits: %q is not valid", n, name)
		}
		taken[name] = true
	}
	got := disambiguate(long, taken)
	if !exposedNameRE.MatchString(got) || taken[got] {
		t.Errorf("disambiguate of a long key: got %q, want a valid, free name", got)
	}
}

func TestSplitExposed(t *testing.T) {
	tests := []struct {
		name               string
		wantServer, wantTl string
		wantOK             bool
	}{
		{"github__create_issue", "github", "create_issue", true},
		{"a__b__c", "a", "b__c", true},
		{"srv__", "srv", "", true},
		{"no_separator", "", "", false},
	}
	for _, tt := range tests {
		server, tool, ok := SplitExposed(tt.name)
		if server != tt.wantServer || tool != tt.wantTl || ok != tt.wantOK {
			t.Errorf("SplitExposed(%q): got %q, %q, %v; want %q, %q, %v", tt.name, server, tool, ok, tt.wantServer, tt.wantTl, tt.wantOK)
		}
	}
	// It reverses ExposedName for names that needed no change.
	if s, tl, _ := SplitExposed(ExposedName("github", "create_issue")); s != "github" || tl != "create_issue" {
		t.Errorf("SplitExposed(ExposedName(github, create_issue)): got %q, %q", s, tl)
	}
}

// checkAssignedNames checks the invariants of AssignNames's result for keys.
func checkAssignedNames(t *testing.T, keys []Key, names map[Key]string, collisions []Collision) {
	t.Helper()
	uniq := map[Key]bool{}
	for _, k := range keys {
		uniq[k] = true
		if _, ok := names[k]; !ok {
			t.Errorf("key %q has no name", k)
		}
	}
	if len(names) != len(uniq) {
		t.Errorf("names: got %d, want %d (one per distinct key)", len(names), len(uniq))
	}
	owner := map[string]Key{}
	for k, name := range names {
		if !exposedNameRE.MatchString(name) {
			t.Errorf("name %q for %q does not match %s", name, k, exposedNameRE)
		}
		if other, dup := owner[name]; dup {
			t.Errorf("name %q given to both %q and %q", name, other, k)
		}
		owner[name] = k
	}

	inCollision := map[Key]bool{}
	if !slices.IsSortedFunc(collisions, func(a, b Collision) int { return strings.Compare(a.Name, b.Name) }) {
		t.Errorf("collisions not sorted by name: %v", collisions)
	}
	for _, c := range collisions {
		if len(c.Keys) < 2 {
			t.Errorf("collision %q has %d keys, want at least 2", c.Name, len(c.Keys))
		}
		if !slices.IsSortedFunc(c.Keys, Key.compare) {
			t.Errorf("collision %q keys not in byte order: %q", c.Name, c.Keys)
		}
		keeps := 0
		for _, k := range c.Keys {
			inCollision[k] = true
			if got := ExposedName(k.Server, k.Name); got != c.Name {
				t.Errorf("collision %q lists %q, whose exposed name is %q", c.Name, k, got)
			}
			if names[k] == c.Name {
				keeps++
			}
		}
		if keeps != 1 {
			t.Errorf("collision %q: %d keys keep the name, want 1", c.Name, keeps)
		}
	}
	for k := range uniq {
		if !inCollision[k] {
			if got, want := names[k], ExposedName(k.Server, k.Name); got != want {
				t.Errorf("non-colliding key %q: got %q, want its exposed name %q", k, got, want)
			}
		}
	}
}

func FuzzExposedName(f *testing.F) {
	for _, seed := range [][2]string{
		{"github", "create_issue"}, {"my.server", "files/read all"}, {"café", "ñame✓"},
		{"s\xff\xfe", "t"}, {"", ""}, {"s", strings.Repeat("t", 61)}, {"s", strings.Repeat("t", 62)},
		{strings.Repeat("é", 40), strings.Repeat(".", 40)},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, server, tool string) {
		got := ExposedName(server, tool)
		if !exposedNameRE.MatchString(got) {
			t.Fatalf("ExposedName(%q, %q) = %q does not match %s", server, tool, got, exposedNameRE)
		}
		if again := ExposedName(server, tool); again != got {
			t.Fatalf("ExposedName(%q, %q): got %q, then %q", server, tool, got, again)
		}
		raw := server + "__" + tool
		if exposedNameRE.MatchString(raw) && got != raw {
			t.Fatalf("ExposedName(%q, %q) = %q, want the valid raw name %q", server, tool, got, raw)
		}
	})
}

// fuzzNameKeys turns fuzz input into keys: one "server\ttool" a line, each
// followed by its sanitized twin so that collisions are common.
func fuzzNameKeys(data string) []Key {
	var keys []Key
	for line := range strings.SplitSeq(data, "\n") {
		server, tool, _ := strings.Cut(line, "\t")
		keys = append(keys, Key{server, tool}, Key{sanitizeName(server), sanitizeName(tool)})
	}
	return keys
}

func FuzzAssignNames(f *testing.F) {
	f.Add("a.b\tc\na_b\tc\na\tb__c\na__b\tc")
	f.Add("git hub\tread\ngit.hub\tre.ad\n\t\n\t")
	f.Add("a_b\tc_8b745bb4\na.b\tc")
	f.Add(strings.Repeat("x", 70) + "\t.y\n" + strings.Repeat("x", 70) + "\t_y")
	f.Add("ünï\t🔥\n\xff\t\xfe")
	f.Fuzz(func(t *testing.T, data string) {
		keys := fuzzNameKeys(data)
		names, collisions := AssignNames(keys)
		checkAssignedNames(t, keys, names, collisions)

		reversed := slices.Clone(keys)
		slices.Reverse(reversed)
		names2, collisions2 := AssignNames(reversed)
		if diff := cmp.Diff(names, names2); diff != "" {
			t.Fatalf("names depend on input order (-forward +reversed):\n%s", diff)
		}
		if diff := cmp.Diff(collisions, collisions2); diff != "" {
			t.Fatalf("collisions depend on input order (-forward +reversed):\n%s", diff)
		}
	})
}
