package project

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// The severities of seed 003's impactAnalysis.
const (
	SeverityNone     = "None"
	SeverityMinor    = "Minor"
	SeverityModerate = "Moderate"
	SeverityMajor    = "Major"
)

// ImpactAnalysis is seed 003's impactAnalysis: how risky a change is and
// where a reviewer should look.
type ImpactAnalysis struct {
	Severity             string   `json:"severity"` // None, Minor, Moderate or Major
	AffectedAreas        []string `json:"affectedAreas"`
	SuggestedReviewFocus []string `json:"suggestedReviewFocus"`
}

// Limits on the impact analysis lists.
const (
	maxAffectedAreas = 20
	maxReviewFocus   = 12
)

// fileKind is what a changed file is, for the commit type and the impact.
type fileKind int

const (
	kindCode fileKind = iota
	kindDocs
	kindTest
	kindCI
	kindBuild
	kindChore
)

// commitTypeOf is the conventional commit type of a change touching only
// files of one kind.
var commitTypeOf = map[fileKind]string{
	kindDocs:  "docs",
	kindTest:  "test",
	kindCI:    "ci",
	kindBuild: "build",
	kindChore: "chore",
}

// classifyPath says what kind of file p is, from its path alone.
func classifyPath(p string) fileKind {
	lower := strings.ToLower(p)
	base := path.Base(lower)
	dirs := strings.Split(path.Dir(lower), "/")
	hasDir := func(names ...string) bool {
		for _, d := range dirs {
			if slices.Contains(names, d) {
				return true
			}
		}
		return false
	}
	ext := path.Ext(base)
	switch {
	case strings.HasPrefix(lower, ".github/workflows/") || strings.HasPrefix(lower, ".circleci/") ||
		base == ".gitlab-ci.yml" || base == ".travis.yml" || base == "jenkinsfile" || base == "azure-pipelines.yml" ||
		strings.HasPrefix(lower, ".buildkite/"):
		return kindCI
	case strings.HasSuffix(base, "_test.go") || strings.Contains(base, ".test.") || strings.Contains(base, ".spec.") ||
		(strings.HasPrefix(base, "test_") && ext == ".py") || strings.HasSuffix(base, "_test.py") ||
		hasDir("test", "tests", "testdata", "__tests__", "spec"):
		return kindTest
	case ext == ".md" || ext == ".rst" || ext == ".adoc" || base == "license" || base == "notice" ||
		strings.HasPrefix(base, "readme") || strings.HasPrefix(base, "changelog") || hasDir("docs", "doc", "documentation"):
		return kindDocs
	case base == "makefile" || base == "gnumakefile" || ext == ".mk" || base == "go.mod" || base == "go.sum" ||
		base == "package.json" || base == "package-lock.json" || base == "yarn.lock" || base == "pnpm-lock.yaml" ||
		base == "dockerfile" || strings.HasPrefix(base, "dockerfile.") || base == "cmakelists.txt" ||
		base == "cargo.toml" || base == "cargo.lock" || base == "pyproject.toml" || base == "setup.py" ||
		base == "requirements.txt" || base == "build.gradle" || base == "pom.xml" || base == ".goreleaser.yml" ||
		base == ".goreleaser.yaml" || strings.HasPrefix(lower, "build/") || strings.HasPrefix(lower, "scripts/"):
		return kindBuild
	case base == ".gitignore" || base == ".gitattributes" || base == ".editorconfig" || base == ".dockerignore" ||
		strings.HasPrefix(lower, ".github/") || base == ".golangci.yml" || base == ".golangci.yaml" ||
		base == ".prettierrc" || base == ".eslintrc" || base == ".eslintrc.json":
		return kindChore
	}
	return kindCode
}

// symbolREs find exported (public) declarations in common languages; the
// first group is the name. Compiled on first use, not at start.
var symbolREs = sync.OnceValue(func() []symbolRE {
	return []symbolRE{
		{[]string{".go"}, "func", regexp.MustCompile(`^func\s+(?:\([^)]*\)\s*)?([A-Z]\w*)\s*[\[(]`)},
		{[]string{".go"}, "type", regexp.MustCompile(`^type\s+([A-Z]\w*)\b`)},
		{[]string{".go"}, "type", regexp.MustCompile(`^\t([A-Z]\w*)\s+(?:struct|interface)\b`)},
		{[]string{".go"}, "var", regexp.MustCompile(`^var\s+([A-Z]\w*)\b`)},
		{[]string{".go"}, "const", regexp.MustCompile(`^const\s+([A-Z]\w*)\b`)},
		{[]string{".py"}, "def", regexp.MustCompile(`^def\s+([A-Za-z]\w*)\s*\(`)},
		{[]string{".py"}, "class", regexp.MustCompile(`^class\s+([A-Za-z]\w*)\b`)},
		{[]string{".js", ".jsx", ".ts", ".tsx", ".mjs", ".cjs"}, "export", regexp.MustCompile(`^export\s+(?:default\s+)?(?:async\s+)?(?:function\*?|class|const|let|var|interface|type|enum)\s+([A-Za-z_$][\w$]*)`)},
		{[]string{".rs"}, "pub", regexp.MustCompile(`^\s*pub\s+(?:async\s+)?(?:fn|struct|enum|trait|type|const|static|mod)\s+([A-Za-z_]\w*)`)},
		{[]string{".java", ".kt", ".cs"}, "public", regexp.MustCompile(`^\s*public\s+(?:static\s+)?(?:final\s+)?(?:abstract\s+)?(?:class|interface|enum|record|[\w<>\[\]]+)\s+([A-Za-z_]\w*)\s*[({<]?`)},
	}
})

// symbolRE is one of symbolREs.
type symbolRE struct {
	ext  []string
	kind string
	re   *regexp.Regexp
}

// exportedSymbols returns the exported declarations in lines of a file
// named p, as "func Foo", "type Bar", ...
func exportedSymbols(p string, lines []string) []string {
	ext := strings.ToLower(path.Ext(p))
	var out []string
	for _, line := range lines {
		for _, s := range symbolREs() {
			if !slices.Contains(s.ext, ext) {
				continue
			}
			if m := s.re.FindStringSubmatch(line); m != nil {
				out = append(out, s.kind+" "+m[1])
				break
			}
		}
	}
	return out
}

// analysis is what the rule-based message, the impact and the LLM prompt
// are made from.
type analysis struct {
	Files []*analysedFile
	Type  string // conventional commit type
	Scope string
	// AddedSymbols and RemovedSymbols are exported declarations the change
	// set adds or removes overall (one moved between files is neither).
	AddedSymbols, RemovedSymbols []string
	Added, Removed               int
	CutBytes                     int64
}

// analysedFile is one changed file and what was found in it.
type analysedFile struct {
	*diffFile
	Kind           fileKind
	AddedSymbols   []string
	RemovedSymbols []string
	Whitespace     bool // only whitespace changed
	Summary        string
}

// analyse classifies a change set and infers its type and scope; scope,
// when not "", is used as given.
func analyse(cs *changeSet, scope string) *analysis {
	a := &analysis{CutBytes: cs.CutBytes}
	addedAll := map[string]int{}
	removedAll := map[string]int{}
	for _, f := range cs.Files {
		af := &analysedFile{diffFile: f, Kind: classifyPath(f.Path())}
		added := exportedSymbols(f.Path(), f.AddedLines)
		removed := exportedSymbols(f.Path(), f.RemovedLines)
		af.AddedSymbols = subtractNames(added, removed)
		af.RemovedSymbols = subtractNames(removed, added)
		for _, s := range af.AddedSymbols {
			addedAll[s]++
		}
		for _, s := range af.RemovedSymbols {
			removedAll[s]++
		}
		af.Whitespace = f.Change == ChangeModified && !f.Binary && (f.Added > 0 || f.Removed > 0) &&
			f.Added <= maxKeptLines && f.Removed <= maxKeptLines && sameIgnoringSpace(f.AddedLines, f.RemovedLines)
		a.Added += f.Added
		a.Removed += f.Removed
		a.Files = append(a.Files, af)
	}
	for _, af := range a.Files {
		af.Summary = fileSummary(af)
	}
	for s := range addedAll {
		if removedAll[s] == 0 {
			a.AddedSymbols = append(a.AddedSymbols, s)
		}
	}
	for s := range removedAll {
		if addedAll[s] == 0 {
			a.RemovedSymbols = append(a.RemovedSymbols, s)
		}
	}
	slices.Sort(a.AddedSymbols)
	slices.Sort(a.RemovedSymbols)
	a.Type = inferType(a)
	a.Scope = scope
	if a.Scope == "" {
		a.Scope = inferScope(a)
	}
	return a
}

// subtractNames returns the names in xs that are not in ys, once each, in order.
func subtractNames(xs, ys []string) []string {
	var out []string
	for _, x := range xs {
		if !slices.Contains(ys, x) && !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	return out
}

// sameIgnoringSpace reports whether added and removed lines are the same
// once whitespace is removed: a formatting-only change.
func sameIgnoringSpace(added, removed []string) bool {
	strip := func(lines []string) string {
		var b strings.Builder
		for _, l := range lines {
			for _, r := range l {
				if r != ' ' && r != '\t' && r != '\r' {
					b.WriteRune(r)
				}
			}
		}
		return b.String()
	}
	return strip(added) == strip(removed)
}

// fileSummary describes one file's change in a few words, e.g.
// "+12 -3 lines; adds func Foo".
func fileSummary(f *analysedFile) string {
	var parts []string
	switch {
	case f.Binary:
		parts = append(parts, "binary file")
	case f.Change == ChangeRenamed && f.Added == 0 && f.Removed == 0:
		parts = append(parts, fmt.Sprintf("renamed from %s", f.OldPath))
	case f.Added == 0 && f.Removed == 0 && (f.modeChanged() || f.NewMode == "120000"):
		// Only the mode changed, or a link: said below.
	default:
		parts = append(parts, fmt.Sprintf("+%d -%d lines", f.Added, f.Removed))
	}
	if f.Change == ChangeRenamed && (f.Added > 0 || f.Removed > 0 || f.Binary) {
		parts = append(parts, fmt.Sprintf("renamed from %s", f.OldPath))
	}
	if f.modeChanged() {
		parts = append(parts, fmt.Sprintf("mode %s → %s", f.OldMode, f.NewMode))
	}
	if f.NewMode == "120000" && !f.modeChanged() {
		parts = append(parts, "symbolic link")
	}
	if f.Whitespace {
		parts = append(parts, "whitespace only")
	}
	if len(f.AddedSymbols) > 0 {
		parts = append(parts, "adds "+joinNames(f.AddedSymbols, 3))
	}
	if len(f.RemovedSymbols) > 0 {
		parts = append(parts, "removes "+joinNames(f.RemovedSymbols, 3))
	}
	return strings.Join(parts, "; ")
}

// joinNames joins up to n names, saying how many more there are.
func joinNames(names []string, n int) string {
	if len(names) <= n {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:n], ", "), len(names)-n)
}

// fixWords and perfWords in added lines hint at a fix or a performance
// change.
var (
	fixWordsRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)\b(fix(es|ed)?|bug|crash|panic|regression|off-by-one|nil pointer|race)\b`)
	})
	perfWordsRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)\b(perf(ormance)?|faster|speed ?up|optimi[sz]e[sd]?|prealloc\w*|cache[sd]?|allocations?)\b`)
	})
)

// inferType chooses the conventional commit type.
func inferType(a *analysis) string {
	var code []*analysedFile
	kinds := map[fileKind]int{}
	for _, f := range a.Files {
		kinds[f.Kind]++
		if f.Kind == kindCode {
			code = append(code, f)
		}
	}
	if len(code) == 0 {
		// Only one kind of non-code file decides; a mix is a chore, unless
		// tests or docs accompany build changes.
		if len(kinds) == 1 {
			for k := range kinds {
				return commitTypeOf[k]
			}
		}
		for _, k := range []fileKind{kindCI, kindBuild, kindTest, kindDocs} {
			if kinds[k] > 0 && (k == kindCI || k == kindBuild) {
				return commitTypeOf[k]
			}
		}
		if kinds[kindTest] > 0 {
			return "test"
		}
		return "chore"
	}
	allWhitespace := true
	allMoves := true
	anyAdded := false
	var added, removed int
	var addedText strings.Builder
	for _, f := range code {
		allWhitespace = allWhitespace && f.Whitespace
		allMoves = allMoves && (f.Change == ChangeRenamed || f.Change == ChangeDeleted)
		anyAdded = anyAdded || f.Change == ChangeAdded
		added += f.Added
		removed += f.Removed
		for _, l := range f.AddedLines[:min(len(f.AddedLines), 400)] {
			addedText.WriteString(l)
			addedText.WriteByte('\n')
		}
	}
	switch {
	case allWhitespace:
		return "style"
	case len(a.AddedSymbols) > 0 || anyAdded:
		return "feat"
	case allMoves:
		return "refactor"
	case perfWordsRE().MatchString(addedText.String()):
		return "perf"
	case fixWordsRE().MatchString(addedText.String()) || added+removed <= 20:
		return "fix"
	}
	return "refactor"
}

// commitAreaOf is the area a file belongs to: its directory, or "(root)".
func commitAreaOf(p string) string {
	if d := path.Dir(p); d != "." {
		return d
	}
	return "(root)"
}

// sourceExts are the extensions of source code, which tests are expected
// to accompany.
var sourceExts = map[string]bool{
	".go": true, ".py": true, ".js": true, ".jsx": true, ".ts": true, ".tsx": true, ".mjs": true, ".rs": true,
	".java": true, ".kt": true, ".cs": true, ".c": true, ".h": true, ".cc": true, ".cpp": true, ".hpp": true,
	".rb": true, ".php": true, ".swift": true, ".scala": true, ".ex": true, ".exs": true,
}

// isSource reports whether p is a source code file.
func isSource(p string) bool { return sourceExts[strings.ToLower(path.Ext(p))] }

// scopeNoise are directory names that say nothing as a scope.
var scopeNoise = map[string]bool{
	"internal": true, "pkg": true, "src": true, "lib": true, "cmd": true, "app": true,
	"test": true, "tests": true, "testdata": true, "docs": true, "doc": true, ".": true, "": true,
}

// inferScope names the part of the project the change is in: the last
// meaningful directory the changed files (code first) share, or "".
func inferScope(a *analysis) string {
	var paths []string
	for _, f := range a.Files {
		if f.Kind == kindCode {
			paths = append(paths, f.Path())
		}
	}
	if len(paths) == 0 {
		for _, f := range a.Files {
			paths = append(paths, f.Path())
		}
	}
	if len(paths) == 0 {
		return ""
	}
	common := strings.Split(path.Dir(paths[0]), "/")
	for _, p := range paths[1:] {
		parts := strings.Split(path.Dir(p), "/")
		n := 0
		for n < len(common) && n < len(parts) && common[n] == parts[n] {
			n++
		}
		common = common[:n]
	}
	for i := len(common) - 1; i >= 0; i-- {
		c := strings.ToLower(common[i])
		if !scopeNoise[c] && scopeRE().MatchString(c) {
			return c
		}
	}
	return ""
}

// sensitiveRE matches paths whose changes deserve a security review.
var sensitiveRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)(auth|security|crypto|secret|passw|token|credential|permission|acl|session|login|oauth|jwt|tls|cert|redact|sanitiz|\.env$|\.pem$|\.key$)`)
})

// migrationRE matches database migrations and schemas.
var migrationRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)(^|/)(migrations?|migrate)/|\.sql$|(^|/)schema\.`)
})

// configRE matches configuration files.
var configRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)(^|/)(config|conf|settings)(/|\.)|\.(ya?ml|toml|ini|env)$`)
})

// impactOf estimates the severity of a change set and where to look.
func impactOf(a *analysis) *ImpactAnalysis {
	ia := &ImpactAnalysis{AffectedAreas: []string{}, SuggestedReviewFocus: []string{}}
	areas := map[string]bool{}
	var sensitive, migrations, configs, buildCI, binaries, modes []string
	codeDirs := map[string]bool{}
	testDirs := map[string]bool{}
	allTrivial := true // docs or whitespace only
	for _, f := range a.Files {
		p := f.Path()
		areas[commitAreaOf(p)] = true
		if f.Kind != kindDocs && !f.Whitespace {
			allTrivial = false
		}
		switch {
		case f.Kind == kindCode && isSource(p) && f.Change != ChangeDeleted && !f.Whitespace:
			codeDirs[commitAreaOf(p)] = true
		case f.Kind == kindTest:
			testDirs[commitAreaOf(p)] = true
		case f.Kind == kindBuild || f.Kind == kindCI:
			buildCI = append(buildCI, p)
		}
		if f.Kind != kindDocs && f.Kind != kindTest && sensitiveRE().MatchString(p) {
			sensitive = append(sensitive, p)
		}
		if migrationRE().MatchString(p) {
			migrations = append(migrations, p)
		} else if f.Kind == kindCode && configRE().MatchString(p) {
			configs = append(configs, p)
		}
		if f.Binary {
			binaries = append(binaries, p)
		}
		if f.modeChanged() {
			modes = append(modes, fmt.Sprintf("%s (%s → %s)", p, f.OldMode, f.NewMode))
		}
	}
	for area := range areas {
		ia.AffectedAreas = append(ia.AffectedAreas, area)
	}
	slices.Sort(ia.AffectedAreas)
	if len(ia.AffectedAreas) > maxAffectedAreas {
		n := len(ia.AffectedAreas) - maxAffectedAreas + 1
		ia.AffectedAreas = append(ia.AffectedAreas[:maxAffectedAreas-1], fmt.Sprintf("and %d more", n))
	}

	focus := func(format string, args ...any) {
		if len(ia.SuggestedReviewFocus) < maxReviewFocus {
			ia.SuggestedReviewFocus = append(ia.SuggestedReviewFocus, fmt.Sprintf(format, args...))
		}
	}
	if len(a.RemovedSymbols) > 0 {
		focus("Removed exported API (%s): callers elsewhere may break", joinNames(a.RemovedSymbols, 5))
	}
	for _, f := range a.Files {
		if f.Change == ChangeDeleted && f.Kind == kindCode {
			focus("Deleted %s: check nothing still depends on it", f.Path())
		}
	}
	if len(sensitive) > 0 {
		focus("Security-sensitive code changed: %s", joinNames(sensitive, 5))
	}
	if len(migrations) > 0 {
		focus("Database migration or schema changed: %s (check it is reversible and safe on existing data)", joinNames(migrations, 5))
	}
	if len(configs) > 0 {
		focus("Configuration changed: %s (check defaults and existing deployments)", joinNames(configs, 5))
	}
	if len(buildCI) > 0 {
		focus("Build or CI changed: %s", joinNames(buildCI, 5))
	}
	if len(a.AddedSymbols) > 0 {
		focus("New exported API (%s): check its documentation and tests", joinNames(a.AddedSymbols, 5))
	}
	var untested []string
	for dir := range codeDirs {
		if !testDirs[dir] {
			untested = append(untested, dir)
		}
	}
	slices.Sort(untested)
	if len(untested) > 0 && a.Type != "style" {
		focus("Code changed without test changes in %s", joinNames(untested, 5))
	}
	for _, f := range a.Files {
		if f.Added+f.Removed > 300 {
			focus("Large change in %s (+%d -%d lines)", f.Path(), f.Added, f.Removed)
		}
	}
	if len(binaries) > 0 {
		focus("Binary files changed: %s", joinNames(binaries, 5))
	}
	if len(modes) > 0 {
		focus("File mode changed: %s", joinNames(modes, 5))
	}
	if a.CutBytes > 0 {
		focus("The diff was too large to read whole; %d bytes were not analysed", a.CutBytes)
	}

	lines := a.Added + a.Removed
	switch {
	case allTrivial:
		ia.Severity = SeverityNone
	case len(a.RemovedSymbols) > 0 || len(migrations) > 0 || lines > 1000 || len(a.Files) > 30 ||
		(len(sensitive) > 0 && lines > 200):
		ia.Severity = SeverityMajor
	case len(a.AddedSymbols) > 0 || len(sensitive) > 0 || len(configs) > 0 || len(buildCI) > 0 ||
		lines > 150 || len(a.Files) > 8:
		ia.Severity = SeverityModerate
	default:
		ia.Severity = SeverityMinor
	}
	return ia
}
