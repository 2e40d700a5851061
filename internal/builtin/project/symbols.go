package project

import (
	"regexp"
	"strings"
	"sync"
)

// symbolPattern finds definitions in lines that contain one of its
// keywords (a cheap filter before the regular expression).
type symbolPattern struct {
	keywords []string
	re       *regexp.Regexp
}

// symbolPatterns maps a file extension to the patterns of its language.
// Compiled on first use, not at start: most runs never index a project.
var symbolPatterns = sync.OnceValue(func() map[string][]symbolPattern {
	goSymbols := []symbolPattern{
		{[]string{"func"}, regexp.MustCompile(`^\s*func\s+(?:\([^)]*\)\s*)?([A-Za-z_]\w*)`)},
		{[]string{"type"}, regexp.MustCompile(`^\s*(?:type\s+)?([A-Za-z_]\w*)\s+(?:struct|interface)\b|^\s*type\s+([A-Za-z_]\w*)`)},
		{[]string{"const", "var"}, regexp.MustCompile(`^(?:const|var)\s+([A-Za-z_]\w*)`)},
	}
	pySymbols := []symbolPattern{
		{[]string{"def", "class"}, regexp.MustCompile(`^\s*(?:async\s+)?(?:def|class)\s+([A-Za-z_]\w*)`)},
	}
	jsSymbols := []symbolPattern{
		{[]string{"function"}, regexp.MustCompile(`\bfunction\s*\*?\s*([A-Za-z_$][\w$]*)`)},
		{[]string{"class", "interface", "enum", "type"}, regexp.MustCompile(`^\s*(?:export\s+)?(?:default\s+)?(?:abstract\s+)?(?:class|interface|enum|type)\s+([A-Za-z_$][\w$]*)`)},
		{[]string{"=>", "function"}, regexp.MustCompile(`^\s*(?:export\s+)?(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*=\s*(?:async\s*)?(?:function|\([^)]*\)\s*=>|[A-Za-z_$][\w$]*\s*=>)`)},
		{[]string{"("}, regexp.MustCompile(`^\s+(?:async\s+|static\s+|public\s+|private\s+|protected\s+)*([A-Za-z_$][\w$]*)\s*\([^)]*\)\s*\{\s*$`)},
	}
	rustSymbols := []symbolPattern{
		{[]string{"fn", "struct", "enum", "trait", "type"}, regexp.MustCompile(`^\s*(?:pub(?:\([^)]*\))?\s+)?(?:async\s+)?(?:fn|struct|enum|trait|type)\s+([A-Za-z_]\w*)`)},
	}
	javaSymbols := []symbolPattern{
		{[]string{"class", "interface", "enum", "record", "struct"}, regexp.MustCompile(`\b(?:class|interface|enum|record|struct|object)\s+([A-Za-z_]\w*)`)},
		{[]string{"("}, regexp.MustCompile(`^\s*(?:(?:public|private|protected|static|final|abstract|override|virtual|async|internal|synchronized)\s+)+[\w<>\[\],\s]*?\b([A-Za-z_]\w*)\s*\(`)},
		{[]string{"fun"}, regexp.MustCompile(`\bfun\s+(?:<[^>]*>\s*)?(?:[\w.]+\.)?([A-Za-z_]\w*)`)},
	}
	rubySymbols := []symbolPattern{
		{[]string{"def", "class", "module"}, regexp.MustCompile(`^\s*(?:def\s+(?:self\.)?([A-Za-z_]\w*[?!=]?)|(?:class|module)\s+([A-Z]\w*))`)},
	}
	cSymbols := []symbolPattern{
		{[]string{"("}, regexp.MustCompile(`^[A-Za-z_][\w\s\*&:<>,]*?\b([A-Za-z_]\w*)\s*\([^;]*$`)},
		{[]string{"struct", "class", "enum", "union"}, regexp.MustCompile(`^\s*(?:typedef\s+)?(?:struct|class|enum|union)\s+([A-Za-z_]\w*)`)},
		{[]string{"#define"}, regexp.MustCompile(`^\s*#\s*define\s+([A-Za-z_]\w*)`)},
	}
	shSymbols := []symbolPattern{
		{[]string{"("}, regexp.MustCompile(`^\s*(?:function\s+)?([A-Za-z_][\w-]*)\s*\(\)`)},
	}
	return map[string][]symbolPattern{
		".go": goSymbols,
		".py": pySymbols, ".pyi": pySymbols,
		".js": jsSymbols, ".jsx": jsSymbols, ".mjs": jsSymbols, ".cjs": jsSymbols, ".ts": jsSymbols, ".tsx": jsSymbols,
		".rs":   rustSymbols,
		".java": javaSymbols, ".kt": javaSymbols, ".kts": javaSymbols, ".cs": javaSymbols, ".scala": javaSymbols, ".swift": javaSymbols,
		".rb": rubySymbols,
		".c":  cSymbols, ".h": cSymbols, ".cc": cSymbols, ".cpp": cSymbols, ".hpp": cSymbols, ".cxx": cSymbols,
		".sh": shSymbols, ".bash": shSymbols,
	}
})

// findSymbols returns the definitions in lines, for a file with extension
// ext. It is deliberately simple: regular expressions over lines, not a
// parser.
func findSymbols(ext string, lines []string) []symbol {
	pats := symbolPatterns()[strings.ToLower(ext)]
	if pats == nil {
		return nil
	}
	var out []symbol
	for i, l := range lines {
		if len(l) > 500 {
			continue
		}
		for _, p := range pats {
			if !containsAny(l, p.keywords) {
				continue
			}
			m := p.re.FindStringSubmatch(l)
			if m == nil {
				continue
			}
			for _, name := range m[1:] {
				if name != "" && !isKeyword(name) {
					// A copy, so that the file's text is not kept alive.
					out = append(out, symbol{name: strings.Clone(name), line: i + 1})
					break
				}
			}
			break
		}
	}
	return out
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// isKeyword rejects control-flow words that method patterns can catch.
func isKeyword(s string) bool {
	switch s {
	case "if", "for", "while", "switch", "catch", "return", "else", "do", "new", "sizeof", "func", "function":
		return true
	}
	return false
}
