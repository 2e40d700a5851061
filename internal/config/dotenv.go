package config

import (
	"fmt"
	"strings"
)

// envLine is one KEY=VALUE assignment of an env file.
type envLine struct {
	key, value string
	line       int
}

// dotenvProblem is a problem on one line of an env file.
type dotenvProblem struct {
	line     int
	msg, fix string
	err      error
}

// parseDotenv parses an env file: KEY=VALUE lines, an optional "export "
// prefix, # comments, 'single quotes' (literal), "double quotes" (with \n,
// \r, \t, \\, \" and \$ escapes; may span lines) and unquoted values (up
// to a " #" comment, trimmed). ${VAR} references in unquoted and
// double-quoted values are expanded from earlier keys of the file, then
// from lookup. field names the env_file field for UnresolvedVariableError.
func parseDotenv(data string, lookup func(string) (string, bool), field string) ([]envLine, []dotenvProblem) {
	var out []envLine
	var probs []dotenvProblem
	vals := map[string]string{}
	x := &expander{lookup: func(k string) (string, bool) {
		if v, ok := vals[k]; ok {
			return v, true
		}
		return lookup(k)
	}}
	data = strings.ReplaceAll(data, "\r\n", "\n")
	line := 1
	i := 0
	// eol returns the index of the newline ending the line at j, or len(data).
	eol := func(j int) int {
		if k := strings.IndexByte(data[j:], '\n'); k >= 0 {
			return j + k
		}
		return len(data)
	}
	for i < len(data) {
		start := line
		end := eol(i)
		text := strings.TrimLeft(data[i:end], " \t")
		if text == "" || text[0] == '#' {
			i, line = end+1, line+1
			continue
		}
		if rest, ok := strings.CutPrefix(text, "export"); ok && rest != "" && (rest[0] == ' ' || rest[0] == '\t') {
			text = strings.TrimLeft(rest, " \t")
		}
		k := 0
		for k < len(text) && (text[k] == '_' || isAlpha(text[k]) || (k > 0 && text[k] >= '0' && text[k] <= '9')) {
			k++
		}
		key := text[:k]
		after := strings.TrimLeft(text[k:], " \t")
		if key == "" || !strings.HasPrefix(after, "=") {
			probs = append(probs, dotenvProblem{line: start, msg: "expected KEY=VALUE", fix: "write one NAME=value per line (names are letters, digits and _)"})
			i, line = end+1, line+1
			continue
		}
		val := strings.TrimLeft(after[1:], " \t")
		off := end - len(val) // val is a suffix of the line
		var value string
		var expandIt bool
		switch {
		case strings.HasPrefix(val, "'") || strings.HasPrefix(val, `"`):
			q := val[0]
			v, next, nl, ok := quoted(data, off+1, q)
			line += nl
			if !ok {
				probs = append(probs, dotenvProblem{line: start, msg: fmt.Sprintf("unterminated %s value of %s", quoteName(q), key), fix: fmt.Sprintf("close the value with %c", q)})
				return out, probs
			}
			end = eol(next)
			tail := strings.TrimSpace(data[next:end])
			if tail != "" && tail[0] != '#' {
				probs = append(probs, dotenvProblem{line: line, msg: fmt.Sprintf("unexpected text after the closing quote of %s", key), fix: "quote the whole value"})
				i, line = end+1, line+1
				continue
			}
			value, expandIt = v, q == '"'
		default:
			if c := strings.Index(val, " #"); c >= 0 {
				val = val[:c]
			}
			if c := strings.Index(val, "\t#"); c >= 0 {
				val = val[:c]
			}
			value, expandIt = strings.TrimRight(val, " \t\r"), true
		}
		if expandIt {
			v, vps := x.expand(value, field)
			for _, vp := range vps {
				probs = append(probs, dotenvProblem{line: start, msg: vp.msg + " (in " + key + ")", fix: vp.fix, err: vp.err})
			}
			value = v
		}
		vals[key] = value
		out = append(out, envLine{key: key, value: value, line: start})
		i, line = end+1, line+1
	}
	return out, probs
}

// quoted reads a quoted value whose opening quote q is just before j. It
// returns the value (escapes applied for double quotes, \$ kept as $$ so
// that expansion leaves a literal $), the index after the closing quote,
// the newlines crossed, and whether the quote was closed.
func quoted(data string, j int, q byte) (string, int, int, bool) {
	var b strings.Builder
	nl := 0
	for ; j < len(data); j++ {
		ch := data[j]
		switch {
		case ch == q:
			return b.String(), j + 1, nl, true
		case ch == '\n':
			nl++
			b.WriteByte(ch)
		case q == '"' && ch == '\\' && j+1 < len(data):
			j++
			switch data[j] {
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 't':
				b.WriteByte('\t')
			case '\\', '"':
				b.WriteByte(data[j])
			case '$':
				b.WriteString("$$")
			case '\n':
				nl++
				b.WriteString("\\\n")
			default:
				b.WriteByte('\\')
				b.WriteByte(data[j])
			}
		default:
			b.WriteByte(ch)
		}
	}
	return "", j, nl, false
}

func quoteName(q byte) string {
	if q == '\'' {
		return "single-quoted"
	}
	return "double-quoted"
}

func isAlpha(c byte) bool { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') }
